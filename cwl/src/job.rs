//! A CWL job object (the input values, YAML or JSON) read from its file; [`crate::runner`]
//! turns it into the MCP request for the tool's adapter.

use std::path::Path;

use serde_json::{Map, Value};

use crate::CwlError;
pub use crate::values::location_path;

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
