//! Reading a CWL document: YAML (JSON is YAML) into a JSON value, and finding the line a
//! field is on for messages (serde_norway's values carry no positions).

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::CwlError;

/// A parsed document and its text, for line lookups.
#[derive(Debug, Clone)]
pub(crate) struct Doc {
    pub path: PathBuf,
    pub text: String,
    pub root: Value,
}

/// The largest CWL document read: real tool descriptions are a few KiB.
const MAX_DOC_BYTES: u64 = 4 * 1024 * 1024;

pub(crate) fn read(path: &Path) -> Result<Doc, CwlError> {
    let read_err = |source| CwlError::Read {
        path: path.to_path_buf(),
        source,
    };
    let meta = fs_err::metadata(path).map_err(read_err)?;
    if !meta.is_file() || meta.len() > MAX_DOC_BYTES {
        return Err(read_err(std::io::Error::other(format!(
            "not a regular file of at most {MAX_DOC_BYTES} bytes"
        ))));
    }
    let text = fs_err::read_to_string(path).map_err(read_err)?;
    let root = parse_yaml(&text).map_err(|(line, message)| CwlError::Syntax {
        path: path.to_path_buf(),
        line,
        message,
    })?;
    Ok(Doc {
        path: path.to_path_buf(),
        text,
        root,
    })
}

/// YAML text into JSON; the error's line (1-based) when the parser gives one.
pub(crate) fn parse_yaml(text: &str) -> Result<Value, (Option<usize>, String)> {
    let yaml: serde_norway::Value = serde_norway::from_str(text)
        .map_err(|e| (e.location().map(|l| l.line()), e.to_string()))?;
    to_json(yaml).map_err(|m| (None, m))
}

fn to_json(v: serde_norway::Value) -> Result<Value, String> {
    use serde_norway::Value as Y;
    Ok(match v {
        Y::Null => Value::Null,
        Y::Bool(b) => Value::Bool(b),
        Y::Number(n) => {
            if let Some(i) = n.as_i64() {
                Value::from(i)
            } else if let Some(u) = n.as_u64() {
                Value::from(u)
            } else {
                let f = n.as_f64().unwrap_or(f64::NAN);
                serde_json::Number::from_f64(f)
                    .map(Value::Number)
                    .ok_or_else(|| format!("the number {f} has no JSON form"))?
            }
        }
        Y::String(s) => Value::String(s),
        Y::Sequence(items) => {
            Value::Array(items.into_iter().map(to_json).collect::<Result<_, _>>()?)
        }
        Y::Mapping(map) => {
            let mut out = serde_json::Map::new();
            for (k, v) in map {
                let key = match k {
                    Y::String(s) => s,
                    Y::Number(n) => n.to_string(),
                    Y::Bool(b) => b.to_string(),
                    other => return Err(format!("a mapping key is not text: {other:?}")),
                };
                out.insert(key, to_json(v)?);
            }
            Value::Object(out)
        }
        Y::Tagged(t) => to_json(t.value)?,
    })
}

impl Doc {
    /// The first line (1-based) whose text holds `needle` as a key or a value: good enough to
    /// point a reader at a field, as serde_norway keeps no spans.
    pub(crate) fn line_of(&self, needle: &str) -> Option<usize> {
        if needle.is_empty() {
            return None;
        }
        self.text
            .lines()
            .position(|l| {
                let t = l.trim_start().trim_start_matches("- ");
                t.starts_with(&format!("{needle}:"))
                    || t.starts_with(&format!("\"{needle}\""))
                    || t.contains(&format!("id: {needle}"))
                    || t.contains(&format!("class: {needle}"))
            })
            .or_else(|| self.text.lines().position(|l| l.contains(needle)))
            .map(|i| i + 1)
    }

    pub(crate) fn unsupported(
        &self,
        field: &str,
        near: &str,
        message: impl Into<String>,
    ) -> CwlError {
        CwlError::Unsupported {
            path: self.path.clone(),
            line: self.line_of(near),
            field: field.to_string(),
            message: message.into(),
        }
    }

    pub(crate) fn invalid(&self, field: &str, near: &str, message: impl Into<String>) -> CwlError {
        CwlError::Invalid {
            path: self.path.clone(),
            line: self.line_of(near),
            field: field.to_string(),
            message: message.into(),
        }
    }
}
