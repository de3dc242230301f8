//! CWL parameter types, as far as this front end maps them.

use serde_json::Value;

/// A CWL type with its optionality split off (`File?`, `["null", "File"]`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CwlType {
    Boolean,
    Int,
    Long,
    Float,
    Double,
    String,
    File,
    Directory,
    /// Symbols without their document prefix.
    Enum(Vec<String>),
    Array(Box<CwlType>),
    /// The `stdout` / `stderr` output shortcuts.
    Stdout,
    Stderr,
}

/// Why a type could not be mapped: the text to put in a refusal.
pub(crate) type TypeProblem = String;

impl CwlType {
    /// Parse a CWL type; the flag says whether `null` is allowed.
    pub(crate) fn parse(v: &Value) -> Result<(CwlType, bool), TypeProblem> {
        match v {
            Value::String(s) => Self::parse_name(s),
            Value::Array(items) => {
                let nullable = items.iter().any(|i| i == "null");
                let rest: Vec<&Value> = items.iter().filter(|i| *i != "null").collect();
                match rest.as_slice() {
                    [one] => {
                        let (t, n) = Self::parse(one)?;
                        Ok((t, n || nullable))
                    }
                    [] => Err("a type that is only null".into()),
                    _ => Err(format!(
                        "a union of several types ({}) is not supported yet",
                        rest.iter()
                            .map(|v| v.to_string())
                            .collect::<Vec<_>>()
                            .join(", ")
                    )),
                }
            }
            Value::Object(o) => match o.get("type").and_then(Value::as_str) {
                Some("array") => {
                    let items = o.get("items").ok_or("an array type without `items`")?;
                    let (t, n) = Self::parse(items)?;
                    if n {
                        return Err("arrays whose items may be null are not supported yet".into());
                    }
                    if o.contains_key("inputBinding") {
                        return Err(
                            "an `inputBinding` inside an array type is not supported yet".into(),
                        );
                    }
                    Ok((CwlType::Array(Box::new(t)), false))
                }
                Some("enum") => {
                    let symbols = o
                        .get("symbols")
                        .and_then(Value::as_array)
                        .ok_or("an enum type without `symbols`")?;
                    let symbols = symbols
                        .iter()
                        .map(|s| {
                            s.as_str()
                                .map(|s| s.rsplit(['/', '#']).next().unwrap_or(s).to_string())
                                .ok_or("an enum symbol that is not text")
                        })
                        .collect::<Result<Vec<_>, _>>()?;
                    Ok((CwlType::Enum(symbols), false))
                }
                Some("record") => Err("record types are not supported yet".into()),
                _ => Err(format!("the type {v} is not supported")),
            },
            _ => Err(format!("the type {v} is not supported")),
        }
    }

    fn parse_name(s: &str) -> Result<(CwlType, bool), TypeProblem> {
        if let Some(inner) = s.strip_suffix('?') {
            let (t, _) = Self::parse_name(inner)?;
            return Ok((t, true));
        }
        if let Some(inner) = s.strip_suffix("[]") {
            let (t, n) = Self::parse_name(inner)?;
            if n {
                return Err("arrays whose items may be null are not supported yet".into());
            }
            return Ok((CwlType::Array(Box::new(t)), false));
        }
        Ok((
            match s {
                "boolean" => CwlType::Boolean,
                "int" => CwlType::Int,
                "long" => CwlType::Long,
                "float" => CwlType::Float,
                "double" => CwlType::Double,
                "string" => CwlType::String,
                "File" => CwlType::File,
                "Directory" => CwlType::Directory,
                "stdout" => CwlType::Stdout,
                "stderr" => CwlType::Stderr,
                "Any" => return Err("`Any` inputs are not supported yet".into()),
                "null" => return Err("a type that is only null".into()),
                other => {
                    return Err(format!(
                        "the type `{other}` (a named or imported schema) is not supported yet"
                    ));
                }
            },
            false,
        ))
    }

    /// The JSON Schema of a scalar or an array of scalars (not for File/Directory).
    pub(crate) fn json_schema(&self) -> Option<Value> {
        Some(match self {
            CwlType::Boolean => serde_json::json!({"type": "boolean"}),
            CwlType::Int | CwlType::Long => serde_json::json!({"type": "integer"}),
            CwlType::Float | CwlType::Double => serde_json::json!({"type": "number"}),
            CwlType::String => serde_json::json!({"type": "string"}),
            CwlType::Enum(symbols) => serde_json::json!({"type": "string", "enum": symbols}),
            CwlType::Array(inner) => {
                serde_json::json!({"type": "array", "items": inner.json_schema()?})
            }
            _ => return None,
        })
    }

    pub(crate) fn is_file_like(&self) -> bool {
        match self {
            CwlType::File | CwlType::Directory => true,
            CwlType::Array(inner) => inner.is_file_like(),
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn shorthands_and_unions() {
        assert_eq!(
            CwlType::parse(&json!("File?")).unwrap(),
            (CwlType::File, true)
        );
        assert_eq!(
            CwlType::parse(&json!("string[]")).unwrap(),
            (CwlType::Array(Box::new(CwlType::String)), false)
        );
        assert_eq!(
            CwlType::parse(&json!(["null", "int"])).unwrap(),
            (CwlType::Int, true)
        );
        assert_eq!(
            CwlType::parse(&json!({"type": "enum", "symbols": ["#t/x/a", "b"]})).unwrap(),
            (CwlType::Enum(vec!["a".into(), "b".into()]), false)
        );
        assert!(CwlType::parse(&json!(["int", "string"])).is_err());
        assert!(CwlType::parse(&json!({"type": "record", "fields": []})).is_err());
    }
}
