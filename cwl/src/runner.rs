//! What `scimcp cwl-run` needs around the engine: a CWL job as the MCP request for the
//! tool's adapter (every File and Directory location made absolute against the job file, and
//! the directories the server must be allowed to read), and the output object the run wrote
//! with its files copied into the runner's output directory.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

use crate::CwlError;
use crate::engine::{CwlEngine, WORKFLOW_ID};
use crate::values::location_path;

/// The request, and the directories its files are in (`serve --data-dir` for each).
#[derive(Debug, Clone)]
pub struct Request {
    pub request: Value,
    pub data_dirs: Vec<PathBuf>,
}

/// The MCP request for `job` (values relative to `job_dir`).
pub fn request(engine: &CwlEngine, job: &Map<String, Value>, job_dir: &Path) -> Request {
    let mut dirs = BTreeSet::new();
    // Defaults name files beside the tool.
    dirs.insert(engine.dir.clone());
    // A job's own `$namespaces` expand its `format` prefixes (the server sees full IRIs).
    let mut namespaces = engine.namespaces.clone();
    if let Some(Value::Object(ns)) = job.get("$namespaces") {
        for (k, v) in ns {
            if let Some(iri) = v.as_str() {
                namespaces.insert(k.clone(), iri.to_string());
            }
        }
    }
    let mut fix = Absolute {
        base: job_dir,
        namespaces: &namespaces,
        dirs: &mut dirs,
    };
    let job: Map<String, Value> = job
        .iter()
        .filter(|(k, _)| !k.starts_with('$'))
        .map(|(k, v)| (k.clone(), fix.value(v)))
        .collect();
    let mut parameters = engine.names.params(&job);
    if let Some(reqs) = job.get(crate::job_requirements::JOB_FIELD) {
        parameters.insert(crate::job_requirements::PARAM.into(), reqs.clone());
    }
    Request {
        request: json!({
            "workflow": WORKFLOW_ID,
            "parameters": parameters,
        }),
        data_dirs: dirs.into_iter().collect(),
    }
}

/// Makes each File/Directory `location`/`path` absolute (the server resolves a relative
/// one against its own start directory, which is not the job's) and each `format` a full
/// IRI, noting the directories the files are in.
struct Absolute<'a> {
    base: &'a Path,
    namespaces: &'a std::collections::BTreeMap<String, String>,
    dirs: &'a mut BTreeSet<PathBuf>,
}

impl Absolute<'_> {
    fn value(&mut self, v: &Value) -> Value {
        match v {
            Value::Array(items) => Value::Array(items.iter().map(|i| self.value(i)).collect()),
            Value::Object(o) => {
                let fs_object = matches!(
                    o.get("class").and_then(Value::as_str),
                    Some("File" | "Directory")
                );
                let mut out = Map::new();
                for (k, val) in o {
                    let new = match (k.as_str(), val) {
                        ("location" | "path", Value::String(s)) if fs_object => {
                            let p = location_path(s, self.base);
                            if let Some(parent) = p.parent() {
                                self.dirs.insert(parent.to_path_buf());
                            }
                            Value::String(p.display().to_string())
                        }
                        ("format", Value::String(f)) if fs_object => Value::String(self.iri(f)),
                        _ => self.value(val),
                    };
                    out.insert(k.clone(), new);
                }
                Value::Object(out)
            }
            other => other.clone(),
        }
    }

    fn iri(&self, format: &str) -> String {
        match format
            .split_once(':')
            .and_then(|(prefix, rest)| Some((self.namespaces.get(prefix)?, rest)))
        {
            Some((iri, rest)) => format!("{iri}{rest}"),
            None => format.to_string(),
        }
    }
}

/// The run's output object (`outputs`, as the engine wrote it in `work_dir`) with every
/// File and Directory copied into `outdir` (below it as below the working directory; files
/// from elsewhere, such as an input passed through, by their basename) and its `location`
/// and `path` pointing at the copy.
pub fn output_object(outputs: &Value, work_dir: &Path, outdir: &Path) -> Result<Value, CwlError> {
    relocate(outputs, work_dir, outdir)
}

fn fail(outdir: &Path, e: impl std::fmt::Display) -> CwlError {
    CwlError::Job {
        path: outdir.to_path_buf(),
        message: format!("cannot copy an output into the output directory: {e}"),
    }
}

fn relocate(v: &Value, work: &Path, outdir: &Path) -> Result<Value, CwlError> {
    match v {
        Value::Array(items) => items
            .iter()
            .map(|i| relocate(i, work, outdir))
            .collect::<Result<Vec<_>, _>>()
            .map(Value::Array),
        Value::Object(o) => {
            let class = o.get("class").and_then(Value::as_str);
            let mut out = Map::new();
            for (k, val) in o {
                out.insert(k.clone(), relocate(val, work, outdir)?);
            }
            if let Some(class @ ("File" | "Directory")) = class
                && let Some(src) = o.get("path").and_then(Value::as_str).map(PathBuf::from)
            {
                let rel = match src.strip_prefix(work) {
                    Ok(r) => r.to_path_buf(),
                    Err(_) => PathBuf::from(
                        o.get("basename")
                            .and_then(Value::as_str)
                            .unwrap_or("output"),
                    ),
                };
                let dest = outdir.join(&rel);
                if let Some(parent) = dest.parent() {
                    fs_err::create_dir_all(parent).map_err(|e| fail(outdir, e))?;
                }
                if class == "File" {
                    if !dest.exists() {
                        fs_err::copy(&src, &dest).map_err(|e| fail(outdir, e))?;
                    }
                } else {
                    copy_dir(&src, &dest).map_err(|e| fail(outdir, e))?;
                }
                // Derived fields a reader computes from `basename`: cwl-runners print only
                // the File's own (cwltool does too).
                for derived in ["dirname", "nameroot", "nameext"] {
                    out.remove(derived);
                }
                out.insert("path".into(), json!(dest.display().to_string()));
                out.insert("location".into(), json!(crate::inputs::file_uri(&dest)));
            }
            Ok(Value::Object(out))
        }
        other => Ok(other.clone()),
    }
}

fn copy_dir(from: &Path, to: &Path) -> std::io::Result<()> {
    fs_err::create_dir_all(to)?;
    for entry in fs_err::read_dir(from)? {
        let entry = entry?;
        let meta = fs_err::symlink_metadata(entry.path())?;
        let dest = to.join(entry.file_name());
        if meta.is_dir() {
            copy_dir(&entry.path(), &dest)?;
        } else if meta.is_file() && !dest.exists() {
            fs_err::copy(entry.path(), &dest)?;
        }
    }
    Ok(())
}
