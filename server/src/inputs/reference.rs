//! What a request's `inputs` say: each input's value (one reference or a list), and each
//! reference's shape (a path, a path with its SHA-256, or an earlier run's artifact), read
//! with a message naming the shapes there are.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// One file reference of a request's `inputs`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum InputRef {
    /// The path of a file (or, for a directory input, a directory) inside an allowed
    /// directory, absolute or relative to the server's start directory.
    Path(String),
    /// A path, refused unless its bytes hash to `sha256`.
    Hashed(HashedPath),
    /// An artifact of an earlier run, refused unless its file still hashes to the value the
    /// run's result recorded.
    Run(RunArtifact),
}

/// `{ "path": …, "sha256": … }`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HashedPath {
    pub path: String,
    /// Hex SHA-256 the file must have.
    pub sha256: String,
}

/// `{ "run_id": "run-…", "artifact": "<artifact id>" }`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunArtifact {
    /// The run id start_analysis returned for the earlier run.
    pub run_id: String,
    /// The id of one of its declared artifacts (get_run_result lists them).
    pub artifact: String,
}

/// The value of one input: a reference, or a list of them (for `kind = "files"`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum InputValue {
    One(InputRef),
    Many(Vec<InputRef>),
}

// Read by hand, not `untagged`: serde reads a struct from a sequence too, so `["a", "b"]`
// would pass for `{path: "a", sha256: "b"}`; and a wrong shape deserves a message saying
// which shapes there are.
impl<'de> Deserialize<'de> for InputRef {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let value = serde_json::Value::deserialize(d)?;
        let shapes = "an input reference is a path string, {\"path\", \"sha256\"} or {\"run_id\", \"artifact\"}";
        match value {
            serde_json::Value::String(path) => Ok(InputRef::Path(path)),
            serde_json::Value::Object(map) if map.contains_key("run_id") => {
                serde_json::from_value(serde_json::Value::Object(map))
                    .map(InputRef::Run)
                    .map_err(|e| D::Error::custom(format!("{e}; {shapes}")))
            }
            serde_json::Value::Object(map) if map.contains_key("path") => {
                serde_json::from_value(serde_json::Value::Object(map))
                    .map(InputRef::Hashed)
                    .map_err(|e| D::Error::custom(format!("{e}; {shapes}")))
            }
            other => Err(D::Error::custom(format!("{shapes}, not {other}"))),
        }
    }
}

impl<'de> Deserialize<'de> for InputValue {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        match serde_json::Value::deserialize(d)? {
            serde_json::Value::Array(items) => items
                .into_iter()
                .map(|v| serde_json::from_value(v).map_err(D::Error::custom))
                .collect::<Result<_, _>>()
                .map(InputValue::Many),
            one => serde_json::from_value(one)
                .map(InputValue::One)
                .map_err(D::Error::custom),
        }
    }
}

impl InputValue {
    pub fn refs(&self) -> Vec<&InputRef> {
        match self {
            InputValue::One(r) => vec![r],
            InputValue::Many(rs) => rs.iter().collect(),
        }
    }
}

/// A request's `inputs`, by input id.
pub type RequestInputs = BTreeMap<String, InputValue>;

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn references_read_by_shape_and_a_list_is_never_a_hashed_path() {
        let v: InputValue = serde_json::from_value(json!(["a.fa", "b.fa"])).unwrap();
        assert_eq!(
            v,
            InputValue::Many(vec![
                InputRef::Path("a.fa".into()),
                InputRef::Path("b.fa".into())
            ])
        );
        let v: InputValue =
            serde_json::from_value(json!({"path": "a.fa", "sha256": "ab"})).unwrap();
        assert!(matches!(v, InputValue::One(InputRef::Hashed(_))));
        let v: InputValue =
            serde_json::from_value(json!({"run_id": "run-1", "artifact": "db"})).unwrap();
        assert!(matches!(v, InputValue::One(InputRef::Run(_))));
        for bad in [
            json!(7),
            json!({"path": "a.fa"}),
            json!({"run_id": "run-1", "artifact": "db", "extra": 1}),
            json!({"file": "a.fa"}),
        ] {
            let e = serde_json::from_value::<InputValue>(bad.clone()).unwrap_err();
            assert!(
                e.to_string()
                    .contains("an input reference is a path string"),
                "{bad}: {e}"
            );
        }
    }
}
