//! Filling and checking a CWL job (CWL v1.2 Process.yml: `File`, `Directory`,
//! `secondaryFiles`, `loadContents`, `loadListing`, `format`): the inputs object the command
//! line and the expressions see.
//!
//! [`fill`] works in two passes. The first applies defaults, checks every value against its
//! type and completes each File and Directory from the file system (writing literals under
//! `staging`). The second, which needs the whole inputs object because `secondaryFiles` and
//! `format` may be expressions over `inputs`, finds secondary files and checks formats.
//!
//! Reading before confining: `fill` reads the file system at the paths the job names (their
//! metadata, at most 64 KiB of a regular file for `loadContents`, directory listings of at most
//! [`MAX_LISTING`] entries) *before* the server confines them, so that it can say what is
//! wrong with a job. It never copies or follows a job's path into `staging`: the server must
//! confine every path [`files`] returns before anything of the filled job is used or shown.

mod check;
mod fsobj;
mod secondary;
#[cfg(test)]
mod tests;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::CwlError;
use crate::expr::Expressions;

pub use fsobj::{MAX_LISTING, file_uri};

/// The job as the engine sees it: defaults applied (a default File's location relative to
/// the tool file), every value checked against its CWL type (records, arrays, enums, unions —
/// the first member that fits —, `Any`: an `Any` with no value and no default is an error),
/// ints accepted for floats (and kept ints), File and Directory objects completed (`location`
/// a `file://` URI, `path`, `basename`, `dirname`, `nameroot`, `nameext`, `size`, `contents`
/// where `loadContents` (at most 64 KiB, more is an error), a Directory's `listing` per
/// `loadListing` / `LoadListingRequirement` (default `no_listing`, `deep_listing` for v1.0
/// documents, as v1.0 behaved), `secondaryFiles` found by their patterns and expressions,
/// `format` expanded with `namespaces` and checked against the input's), and File and
/// Directory literals (`contents` / `listing` without a location) written under `staging`.
///
/// Values the job gives are relative to `job_base` (the job file's directory); defaults to
/// `tool_dir`. A default is only looked at when it is used, so a default naming a file that
/// does not exist does not matter when the job gives the value (CWL's
/// `default_path_notfound_warning`). Inputs the tool does not declare are left out.
pub fn fill(
    tool: &Value,
    job: &Map<String, Value>,
    job_base: &Path,
    tool_dir: &Path,
    staging: &Path,
    namespaces: &BTreeMap<String, String>,
    exprs: &Expressions,
) -> Result<Value, CwlError> {
    let mut filler = check::Filler::new(tool, staging, namespaces);
    let mut out = Map::new();
    let empty = Vec::new();
    let params = tool
        .get("inputs")
        .and_then(Value::as_array)
        .unwrap_or(&empty);
    for param in params {
        let Some(id) = param.get("id").and_then(Value::as_str) else {
            continue;
        };
        let ty = param.get("type").unwrap_or(&Value::Null);
        let given = job.get(id).filter(|v| !v.is_null());
        let default = param.get("default").filter(|v| !v.is_null());
        let (value, base) = match (given, default) {
            (Some(v), _) => (v, job_base),
            (None, Some(d)) => (d, tool_dir),
            (None, None) => (&Value::Null, job_base),
        };
        let opts = check::Opts::of(param, filler.default_listing);
        let filled = filler.value(ty, value, base, opts, id, &pointer_token(id))?;
        out.insert(id.to_string(), filled);
    }
    let mut job = Value::Object(out);
    let check::Filler {
        mut fs, deferred, ..
    } = filler;
    secondary::resolve(&mut job, deferred, &mut fs, tool, exprs)?;
    Ok(job)
}

/// Every File and Directory in a filled job, as (JSON pointer, path), parents before what
/// they hold. The server stages (confines, copies, hashes) each one and calls [`relocate`] on
/// the object at its pointer before `build`.
///
/// Where each must land is fixed for two kinds of entry (see [`staged_parent`], which says
/// it from the job as relocated so far):
/// - a pointer ending in `/secondaryFiles/N`: in the same directory as the primary File at
///   the pointer before it, under its own `basename` (CWL requires it: a tool finds `x.bai`
///   next to `x.bam`). Every secondary file is listed, even one next to its primary already.
/// - a pointer ending in `/listing/N`: inside the Directory before it, under its `basename`.
///   Only entries whose path is not inside that Directory's path are listed: those of a
///   Directory literal that name an existing File or Directory (fill wrote the literal's own
///   `contents` under `staging` but never copies a job's path). Entries of an ordinary
///   Directory are copied with it.
///
/// The rest (top-level values, array items, record fields) may be staged anywhere, under
/// their `basename` (which may differ from the source's file name when the job gave one).
pub fn files(job: &Value) -> Vec<(String, PathBuf)> {
    let mut out = Vec::new();
    fsobj::collect_files(job, "", None, &mut out);
    out
}

/// The directory the File or Directory at `pointer` (one of [`files`]) must be staged into,
/// read from `job` as relocated so far, or `None` when the server may choose: for a
/// secondary file the directory of its primary's `path`, for a listing entry its
/// Directory's `path`.
pub fn staged_parent(job: &Value, pointer: &str) -> Option<PathBuf> {
    let (parent, _index) = pointer.rsplit_once('/')?;
    if let Some(primary) = parent.strip_suffix("/secondaryFiles") {
        let path = job.pointer(primary)?.get("path")?.as_str()?;
        return Path::new(path).parent().map(Path::to_path_buf);
    }
    if let Some(dir) = parent.strip_suffix("/listing") {
        let path = job.pointer(dir)?.get("path")?.as_str()?;
        return Some(PathBuf::from(path));
    }
    None
}

/// A File/Directory object re-completed for a new path (after staging): `path`, `location`,
/// `basename`, `dirname`, `nameroot`, `nameext` follow `new_path`; a Directory's `listing`
/// entries move below it (under their `basename`). Its `secondaryFiles` are left alone: each
/// has its own pointer in [`files`] and is relocated on its own.
pub fn relocate(obj: &mut Value, new_path: &Path) {
    fsobj::relocate(obj, new_path);
}

/// A JSON-pointer token (RFC 6901) for a key.
fn pointer_token(key: &str) -> String {
    format!("/{}", key.replace('~', "~0").replace('/', "~1"))
}

fn input_error(at: &str, message: impl Into<String>) -> CwlError {
    CwlError::Input {
        input: at.to_string(),
        message: message.into(),
    }
}
