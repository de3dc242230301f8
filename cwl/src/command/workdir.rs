//! InitialWorkDirRequirement's `listing`, evaluated into what the server lays out in the
//! output directory before the run (CWL v1.2 `InitialWorkDirRequirement`, `Dirent`).

use serde_json::Value;

use super::{Builder, command_error};
use crate::CwlError;

/// One thing to put in the output directory before the tool starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WorkdirEntry {
    /// A file written with these contents.
    Text {
        name: String,
        contents: String,
        writable: bool,
    },
    /// A staged file (`source` is its path) under `name`.
    File {
        name: String,
        source: String,
        writable: bool,
    },
    /// A directory: a staged one (`source`), or one made here with `listing` inside.
    Directory {
        name: String,
        source: Option<String>,
        listing: Vec<WorkdirEntry>,
        writable: bool,
    },
}

pub(super) fn entries(b: &Builder) -> Result<Vec<WorkdirEntry>, CwlError> {
    let Some(req) = b.requirement("InitialWorkDirRequirement") else {
        return Ok(Vec::new());
    };
    let field = "InitialWorkDirRequirement.listing";
    let listing = match req.get("listing") {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::String(s)) => match b.eval(field, &Value::String(s.clone()), &Value::Null)? {
            Value::Array(items) => items,
            Value::Null => Vec::new(),
            other => vec![other],
        },
        Some(Value::Array(items)) => items.clone(),
        Some(other) => {
            return Err(command_error(
                field.into(),
                format!("must be a list or an expression, not {other}"),
            ));
        }
    };
    let mut out = Vec::new();
    for (i, item) in listing.iter().enumerate() {
        let f = format!("{field}[{i}]");
        match item {
            Value::Object(o) if o.contains_key("entry") => dirent(b, &f, item, &mut out)?,
            Value::String(_) => {
                let v = b.eval(&f, item, &Value::Null)?;
                objects(&f, &v, None, false, &mut out)?;
            }
            other => objects(&f, other, None, false, &mut out)?,
        }
    }
    // The same file listed twice (say, on its own and as another's secondary file) is one
    // entry; two different things under one name stay an error.
    let mut unique: Vec<WorkdirEntry> = Vec::with_capacity(out.len());
    for e in out {
        if !unique.contains(&e) {
            unique.push(e);
        }
    }
    check_names(&unique)?;
    Ok(unique)
}

/// Where each staged source an entry places lands, as a path below `outdir` (CWL's
/// `runtime.outdir`): the job's File and Directory objects at those sources are given these
/// paths before the command line is built, so `$(inputs.f.path)` names the copy the tool
/// sees in its working directory (CWL v1.2 InitialWorkDirRequirement; cwltool does the same).
pub(super) fn placed(entries: &[WorkdirEntry], outdir: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for e in entries {
        placed_one(e, outdir, &mut out);
    }
    out
}

fn placed_one(e: &WorkdirEntry, parent: &str, out: &mut Vec<(String, String)>) {
    let at = |name: &str| {
        if name.starts_with("{work_dir}/") {
            name.to_string()
        } else {
            format!("{parent}/{name}")
        }
    };
    match e {
        WorkdirEntry::Text { .. } => {}
        WorkdirEntry::File { name, source, .. } => out.push((source.clone(), at(name))),
        WorkdirEntry::Directory {
            name,
            source,
            listing,
            ..
        } => {
            let here = at(name);
            if let Some(source) = source {
                out.push((source.clone(), here.clone()));
            }
            for child in listing {
                placed_one(child, &here, out);
            }
        }
    }
}

/// `job` with every File and Directory whose `path` is a placed source moved to its place.
pub(super) fn relocate_placed(job: &mut Value, placed: &[(String, String)]) {
    if is_file_like(job) {
        let to = job
            .get("path")
            .and_then(Value::as_str)
            .and_then(|p| placed.iter().find(|(from, _)| from == p))
            .map(|(_, to)| to.clone());
        let moved = to.is_some();
        if let Some(to) = to {
            crate::inputs::relocate(job, std::path::Path::new(&to));
        }
        // Secondary files are placed on their own, and so may be the entries of a Directory
        // that stays (a relocated one's listing follows it).
        let keys: &[&str] = if moved {
            &["secondaryFiles"]
        } else {
            &["secondaryFiles", "listing"]
        };
        for key in keys {
            if let Some(Value::Array(items)) = job.get_mut(*key) {
                for item in items {
                    relocate_placed(item, placed);
                }
            }
        }
        return;
    }
    match job {
        Value::Object(o) => {
            for v in o.values_mut() {
                relocate_placed(v, placed);
            }
        }
        Value::Array(items) => {
            for v in items {
                relocate_placed(v, placed);
            }
        }
        _ => {}
    }
}

/// A `Dirent`: `entry` (text, or an expression giving a File/Directory, an array of them,
/// null, or any other JSON to write serialized) under `entryname`.
fn dirent(
    b: &Builder,
    field: &str,
    d: &Value,
    out: &mut Vec<WorkdirEntry>,
) -> Result<(), CwlError> {
    let writable = d.get("writable").and_then(Value::as_bool).unwrap_or(false);
    let name = match d.get("entryname") {
        None | Some(Value::Null) => None,
        Some(n) => match b.eval(&format!("{field}.entryname"), n, &Value::Null)? {
            Value::String(s) => Some(s),
            Value::Null => None,
            other => {
                return Err(command_error(
                    format!("{field}.entryname"),
                    format!("must be a string, not {other}"),
                ));
            }
        },
    };
    let entry = d.get("entry").unwrap_or(&Value::Null);
    let is_expression = entry.as_str().is_some_and(crate::expr::has_expression);
    let v = eval_keeping_whitespace(b, &format!("{field}.entry"), entry)?;
    match &v {
        Value::Null => Ok(()),
        Value::String(s) => {
            let name = name.ok_or_else(|| {
                command_error(
                    format!("{field}.entryname"),
                    "a text entry needs an `entryname`",
                )
            })?;
            out.push(WorkdirEntry::Text {
                name: entry_name(field, &name)?,
                contents: s.clone(),
                writable,
            });
            Ok(())
        }
        _ if is_file_like(&v) || is_file_array(&v) => objects(field, &v, name, writable, out),
        _ if is_expression => {
            // Other JSON from an expression is written serialized (CWL v1.2 Dirent.entry).
            let name = name.ok_or_else(|| {
                command_error(
                    format!("{field}.entryname"),
                    "a JSON entry needs an `entryname`",
                )
            })?;
            out.push(WorkdirEntry::Text {
                name: entry_name(field, &name)?,
                // Serialized as parameter references interpolate values (Python's
                // json.dumps, as the iwd-jsondump tests' checksums expect).
                contents: crate::expr::to_text(&v),
                writable,
            });
            Ok(())
        }
        other => Err(command_error(
            format!("{field}.entry"),
            format!("must be a string or an expression, not {other}"),
        )),
    }
}

/// `entry` is file contents, so the whitespace around it stays (the evaluator trims a field
/// before looking for a lone expression, as cwltool does elsewhere; for Dirent it does not:
/// iwd-jsondump1-nl expects the JSON and its trailing newline).
fn eval_keeping_whitespace(b: &Builder, field: &str, entry: &Value) -> Result<Value, CwlError> {
    let Some(text) = entry.as_str() else {
        return b.eval(field, entry, &Value::Null);
    };
    let core = text.trim();
    let v = b.eval(field, &Value::String(core.to_string()), &Value::Null)?;
    if core.len() == text.len() {
        return Ok(v);
    }
    let start = text.len() - text.trim_start().len();
    let (lead, trail) = (&text[..start], &text[start + core.len()..]);
    Ok(Value::String(format!(
        "{lead}{}{trail}",
        crate::expr::to_text(&v)
    )))
}

fn is_file_like(v: &Value) -> bool {
    matches!(
        v.get("class").and_then(Value::as_str),
        Some("File" | "Directory")
    )
}

fn is_file_array(v: &Value) -> bool {
    v.as_array().is_some_and(|a| {
        a.iter()
            .all(|x| x.is_null() || is_file_like(x) || is_file_array(x))
    })
}

/// File/Directory objects (arrays flattened, nulls skipped) as entries; `name` renames a
/// single object.
fn objects(
    field: &str,
    v: &Value,
    name: Option<String>,
    writable: bool,
    out: &mut Vec<WorkdirEntry>,
) -> Result<(), CwlError> {
    match v {
        Value::Null => Ok(()),
        Value::Array(items) => {
            if name.is_some() && items.len() != 1 {
                return Err(command_error(
                    format!("{field}.entryname"),
                    "an `entryname` with an array of several files or directories",
                ));
            }
            for item in items {
                objects(field, item, name.clone(), writable, out)?;
            }
            Ok(())
        }
        Value::Object(_) if is_file_like(v) => object_entries(field, v, name, writable, out),
        other => Err(command_error(
            field.to_string(),
            format!("must give File or Directory objects (or a Dirent), not {other}"),
        )),
    }
}

/// A File or Directory as its entry, then a File's `secondaryFiles` beside it under their
/// own names (a renamed primary keeps its secondaries in its directory, as cwltool stages
/// them; a tool that reads `x.bam` expects `x.bam.bai` next to it).
fn object_entries(
    field: &str,
    v: &Value,
    name: Option<String>,
    writable: bool,
    out: &mut Vec<WorkdirEntry>,
) -> Result<(), CwlError> {
    let entry = object_entry(field, v, name, writable)?;
    let dir = match &entry {
        WorkdirEntry::File { name, .. } | WorkdirEntry::Text { name, .. } => {
            name.rsplit_once('/').map(|(dir, _)| dir.to_string())
        }
        WorkdirEntry::Directory { .. } => None,
    };
    let is_file = matches!(entry, WorkdirEntry::File { .. } | WorkdirEntry::Text { .. });
    out.push(entry);
    if !is_file {
        return Ok(());
    }
    for sf in v
        .get("secondaryFiles")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|sf| is_file_like(sf))
    {
        let name = match (&dir, own_name(sf)) {
            (Some(dir), Some(own)) => Some(format!("{dir}/{own}")),
            _ => None,
        };
        object_entries(&format!("{field}.secondaryFiles"), sf, name, writable, out)?;
    }
    Ok(())
}

fn object_path(v: &Value) -> Option<String> {
    v.get("path")
        .and_then(Value::as_str)
        .map(str::to_string)
        .or_else(|| {
            v.get("location")
                .and_then(Value::as_str)
                .filter(|l| l.starts_with("file://") || l.starts_with('/'))
                .map(|l| {
                    crate::values::location_path(l, std::path::Path::new("/"))
                        .display()
                        .to_string()
                })
        })
}

/// The object's `basename`, else the last part of its path.
fn own_name(v: &Value) -> Option<String> {
    v.get("basename")
        .and_then(Value::as_str)
        .map(str::to_string)
        .or_else(|| {
            object_path(v)
                .as_deref()
                .and_then(|p| std::path::Path::new(p).file_name())
                .map(|n| n.to_string_lossy().into_owned())
        })
}

fn object_entry(
    field: &str,
    v: &Value,
    name: Option<String>,
    writable: bool,
) -> Result<WorkdirEntry, CwlError> {
    let path = object_path(v);
    let name = name.or_else(|| own_name(v)).ok_or_else(|| {
        command_error(field.to_string(), format!("an object without a name: {v}"))
    })?;
    let name = entry_name(field, &name)?;
    let class = v.get("class").and_then(Value::as_str);
    if class == Some("File") {
        return match (path, v.get("contents").and_then(Value::as_str)) {
            (Some(source), _) => Ok(WorkdirEntry::File {
                name,
                source,
                writable,
            }),
            (None, Some(contents)) => Ok(WorkdirEntry::Text {
                name,
                contents: contents.to_string(),
                writable,
            }),
            (None, None) => Err(command_error(
                field.to_string(),
                format!("a File with neither a path nor contents: {v}"),
            )),
        };
    }
    let mut listing = Vec::new();
    if path.is_none() {
        for item in v
            .get("listing")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            object_entries(field, item, None, writable, &mut listing)?;
        }
    }
    Ok(WorkdirEntry::Directory {
        name,
        source: path,
        listing,
        writable,
    })
}

/// An entry name stays inside the output directory (an absolute `entryname` is a container
/// mount point, which needs DockerRequirement).
fn entry_name(field: &str, name: &str) -> Result<String, CwlError> {
    let trimmed = name.trim_end_matches('/');
    let p = std::path::Path::new(trimmed);
    if p.is_absolute() {
        return Err(CwlError::Unsupported {
            path: Default::default(),
            line: None,
            field: format!("{field}.entryname"),
            message: format!(
                "`{name}` is an absolute path (a container mount point); scimcp runs without containers"
            ),
        });
    }
    if trimmed.is_empty()
        || p.components().any(|c| {
            !matches!(
                c,
                std::path::Component::Normal(_) | std::path::Component::CurDir
            )
        })
    {
        return Err(command_error(
            format!("{field}.entryname"),
            format!("`{name}` is not a name inside the output directory"),
        ));
    }
    Ok(trimmed.to_string())
}

fn check_names(entries: &[WorkdirEntry]) -> Result<(), CwlError> {
    let mut seen = std::collections::BTreeSet::new();
    for e in entries {
        let name = match e {
            WorkdirEntry::Text { name, .. }
            | WorkdirEntry::File { name, .. }
            | WorkdirEntry::Directory { name, .. } => name,
        };
        if !seen.insert(name.clone()) {
            return Err(command_error(
                "InitialWorkDirRequirement.listing".into(),
                format!("two entries are named `{name}`"),
            ));
        }
    }
    Ok(())
}
