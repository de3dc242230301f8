//! A finished run's artifacts into the CWL output object: each declared output a File
//! (`location`, `basename`, `checksum` as `sha1$…`, `size`, and `format` / `contents` where
//! the tool asks), copied into the runner's output directory.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};
use sha1::{Digest, Sha1};

use crate::tool::CwlTool;
use crate::{CwlError, CwlType};

/// Most bytes `loadContents` reads (the CWL limit; more is an error).
pub const LOAD_CONTENTS_LIMIT: u64 = 64 * 1024;

/// One file a run produced for an artifact: its id and where it is now.
#[derive(Debug, Clone)]
pub struct Produced {
    pub artifact: String,
    /// Relative path as the run recorded it (kept below `outdir`).
    pub rel: String,
    pub path: PathBuf,
}

/// Build the output object, copying each file into `outdir` (where `location` points).
pub fn output_object(
    tool: &CwlTool,
    produced: &[Produced],
    outdir: &Path,
) -> Result<Value, CwlError> {
    let fail = |message: String| CwlError::Job {
        path: outdir.to_path_buf(),
        message,
    };
    let mut out = Map::new();
    for o in &tool.outputs {
        let mut files: Vec<&Produced> = produced
            .iter()
            .filter(|p| p.artifact == o.artifact)
            .collect();
        files.sort_by(|a, b| a.rel.cmp(&b.rel));
        let mut objects = Vec::new();
        for p in files {
            let dest = outdir.join(&p.rel);
            if let Some(parent) = dest.parent() {
                fs_err::create_dir_all(parent).map_err(|e| fail(e.to_string()))?;
            }
            fs_err::copy(&p.path, &dest).map_err(|e| fail(e.to_string()))?;
            objects.push(file_object(&dest, o.format.as_deref(), o.load_contents).map_err(fail)?);
        }
        let value = match &o.ty {
            CwlType::Array(_) => Value::Array(objects),
            _ => match objects.len() {
                0 if o.optional => Value::Null,
                0 => {
                    return Err(fail(format!(
                        "output `{}`: the run produced no file for it",
                        o.cwl_id
                    )));
                }
                1 => objects.remove(0),
                n => {
                    return Err(fail(format!(
                        "output `{}` is one File but its glob matched {n} files",
                        o.cwl_id
                    )));
                }
            },
        };
        out.insert(o.cwl_id.clone(), value);
    }
    Ok(Value::Object(out))
}

/// A CWL File object for the file at `path`.
pub fn file_object(
    path: &Path,
    format: Option<&str>,
    load_contents: bool,
) -> Result<Value, String> {
    let bytes = fs_err::read(path).map_err(|e| e.to_string())?;
    let abs = std::path::absolute(path).map_err(|e| e.to_string())?;
    let basename = abs
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let location = format!(
        "file://{}",
        percent_encoding::utf8_percent_encode(&abs.display().to_string(), LOCATION)
    );
    let mut f = json!({
        "class": "File",
        "location": location,
        "path": abs.display().to_string(),
        "basename": basename,
        "checksum": format!("sha1${}", hex(&Sha1::digest(&bytes))),
        "size": bytes.len(),
    });
    if let Some(fmt) = format {
        f["format"] = json!(fmt);
    }
    if load_contents {
        if bytes.len() as u64 > LOAD_CONTENTS_LIMIT {
            return Err(format!(
                "{basename}: loadContents reads at most {LOAD_CONTENTS_LIMIT} bytes"
            ));
        }
        f["contents"] = json!(String::from_utf8_lossy(&bytes));
    }
    Ok(f)
}

/// What a `file://` location escapes: controls, space, `#`, `%`, `?` (so `item #1.txt`
/// round-trips as cwltest decodes it).
const LOCATION: &percent_encoding::AsciiSet = &percent_encoding::CONTROLS
    .add(b' ')
    .add(b'#')
    .add(b'%')
    .add(b'?');

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_object_has_the_sha1_cwltest_recomputes() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("item #1.txt");
        fs_err::write(&p, "Hello\n").unwrap();
        let f = file_object(&p, Some("http://edamontology.org/format_2330"), true).unwrap();
        // `printf 'Hello\n' | sha1sum`
        assert_eq!(
            f["checksum"],
            "sha1$1d229271928d3f9e2bb0375bd6ce5db6c6d348d9"
        );
        assert_eq!(f["size"], 6);
        assert_eq!(f["basename"], "item #1.txt");
        assert!(
            f["location"]
                .as_str()
                .unwrap()
                .ends_with("/item%20%231.txt")
        );
        assert_eq!(f["contents"], "Hello\n");
    }
}
