//! A CWL job object (the input values, YAML or JSON) into the MCP request for the tool's
//! adapter: scalars become `parameters`, Files and Directories named `inputs` (paths), and
//! File literals (`contents`) files written into a staging directory first.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

use crate::tool::{CwlTool, InputBinding, WORKFLOW_ID};
pub use crate::values::{location_path, plain_number};
use crate::{CwlError, CwlType};

/// The request, and the directories its files are in (the server must be allowed to read
/// them: `serve --data-dir`).
#[derive(Debug, Clone)]
pub struct Request {
    pub request: Value,
    pub data_dirs: Vec<PathBuf>,
}

/// Read a job file (or none: every input from its default).
pub fn read_job(path: Option<&Path>) -> Result<Map<String, Value>, CwlError> {
    let Some(path) = path else {
        return Ok(Map::new());
    };
    let text = fs_err::read_to_string(path).map_err(|source| CwlError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    match crate::doc::parse_yaml(&text) {
        Ok(Value::Object(m)) => Ok(m),
        Ok(Value::Null) => Ok(Map::new()),
        Ok(_) => Err(CwlError::Job {
            path: path.to_path_buf(),
            message: "a job must be a mapping of input ids to values".into(),
        }),
        Err((line, message)) => Err(CwlError::Syntax {
            path: path.to_path_buf(),
            line,
            message,
        }),
    }
}

/// Build the request for `job` (read from `job_path`; values relative to `job_dir`); File
/// literals are written below `staging`.
pub fn request(
    tool: &CwlTool,
    job: &Map<String, Value>,
    job_path: &Path,
    job_dir: &Path,
    staging: &Path,
) -> Result<Request, CwlError> {
    let err = |message: String| CwlError::Job {
        path: job_path.to_path_buf(),
        message,
    };
    let mut parameters = Map::new();
    let mut inputs = Map::new();
    let mut dirs = BTreeSet::new();
    let mut literals = 0usize;
    for m in &tool.inputs {
        let given = job.get(&m.cwl_id).filter(|v| !v.is_null());
        match &m.binding {
            InputBinding::Param(name) => {
                if let Some(v) = given {
                    parameters.insert(name.clone(), plain_number(v));
                } else if m.default.is_none() && !m.optional {
                    return Err(err(format!(
                        "input `{}` has no value and no default",
                        m.cwl_id
                    )));
                }
            }
            InputBinding::Input(id) => {
                let (value, base) = match (given, &m.default) {
                    (Some(v), _) => (v.clone(), job_dir.to_path_buf()),
                    // Defaults were made absolute when the tool was read.
                    (None, Some(d)) => (d.clone(), tool.dir.clone()),
                    (None, None) if m.optional => continue,
                    (None, None) => {
                        return Err(err(format!(
                            "input `{}` has no value and no default",
                            m.cwl_id
                        )));
                    }
                };
                let mut one = |v: &Value| -> Result<Value, CwlError> {
                    let path = file_path(v, &base, staging, &mut literals)
                        .map_err(|m2| err(format!("input `{}`: {m2}", m.cwl_id)))?;
                    if let Some(parent) = path.parent() {
                        dirs.insert(parent.to_path_buf());
                    }
                    Ok(Value::String(path.display().to_string()))
                };
                let reference = match (&m.ty, &value) {
                    (CwlType::Array(_), Value::Array(items)) => {
                        Value::Array(items.iter().map(&mut one).collect::<Result<_, _>>()?)
                    }
                    (CwlType::Array(_), _) => {
                        return Err(err(format!("input `{}` must be a list of Files", m.cwl_id)));
                    }
                    _ => one(&value)?,
                };
                inputs.insert(id.clone(), reference);
            }
        }
    }
    let mut request = json!({"workflow": WORKFLOW_ID, "parameters": parameters});
    if !inputs.is_empty() {
        request["inputs"] = Value::Object(inputs);
    }
    Ok(Request {
        request,
        data_dirs: dirs.into_iter().collect(),
    })
}

/// The local path of a File or Directory value, writing a literal into `staging`.
fn file_path(
    v: &Value,
    base: &Path,
    staging: &Path,
    literals: &mut usize,
) -> Result<PathBuf, String> {
    let o = v
        .as_object()
        .ok_or("a File or Directory must be an object with `class`")?;
    if let Some(loc) = o
        .get("path")
        .or_else(|| o.get("location"))
        .and_then(Value::as_str)
    {
        return Ok(location_path(loc, base));
    }
    if o.get("class") == Some(&json!("Directory")) {
        return Err("a Directory literal (listing without a location) is not supported yet".into());
    }
    let contents = o
        .get("contents")
        .and_then(Value::as_str)
        .ok_or("a File needs a location, a path or contents")?;
    *literals += 1;
    let dir = staging.join(format!("literal-{literals}"));
    fs_err::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let name = o
        .get("basename")
        .and_then(Value::as_str)
        .filter(|n| !n.contains('/') && !n.is_empty() && *n != "..")
        .unwrap_or("literal.txt");
    let path = dir.join(name);
    fs_err::write(&path, contents).map_err(|e| e.to_string())?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locations_decode_and_resolve() {
        let base = Path::new("/data/jobs");
        assert_eq!(
            location_path("a.txt", base),
            PathBuf::from("/data/jobs/a.txt")
        );
        assert_eq!(
            location_path("file:///x/item%20%231.txt", base),
            PathBuf::from("/x/item #1.txt")
        );
        assert_eq!(location_path("/abs", base), PathBuf::from("/abs"));
    }

    #[test]
    fn whole_floats_print_as_integers() {
        assert_eq!(plain_number(&json!(123000.0)), json!(123000));
        assert_eq!(plain_number(&json!(0.00001)), json!(0.00001));
        assert_eq!(plain_number(&json!("x")), json!("x"));
    }
}
