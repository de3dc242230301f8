//! Values both the tool's command line and a job read: a File's location as a path, and a
//! number as CWL prints it. Below `tool` and `job`, which both need them, so neither imports
//! the other for them.

use std::path::{Path, PathBuf};

use serde_json::Value;

/// A CWL `location` or `path` as a local path: `file://` URIs decoded (`%23` is `#`),
/// relative ones against `base`.
pub fn location_path(loc: &str, base: &Path) -> PathBuf {
    let raw = match loc.strip_prefix("file://") {
        Some(rest) => percent_encoding::percent_decode_str(rest)
            .decode_utf8_lossy()
            .into_owned(),
        None => loc.to_string(),
    };
    let p = PathBuf::from(raw);
    if p.is_absolute() { p } else { base.join(p) }
}

/// A number as CWL prints it on a command line: a whole float (`1.23e5` read as 123000.0)
/// becomes the integer, so the template renders `123000`, not `123000.0`; other values as
/// they are (small floats already render in plain decimal).
pub fn plain_number(v: &Value) -> Value {
    match v.as_f64() {
        Some(f) if v.is_f64() && f.fract() == 0.0 && f.abs() < 9.0e15 => Value::from(f as i64),
        _ => v.clone(),
    }
}
