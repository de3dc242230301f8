//! CWL File and Directory objects for paths on disk, and the check that every path an output
//! names stays inside the output directory or an input (CWL v1.2 `CommandOutputBinding.glob`:
//! "It is an error if a symlink in the output directory (or any symlink in a chain of links)
//! refers to any file or directory that is not under an input or output directory").

use std::io::Read;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};
use sha1::{Digest, Sha1};

/// Most bytes `loadContents` reads (the CWL limit; more is an error).
pub const LOAD_CONTENTS_LIMIT: u64 = 64 * 1024;

/// How much of a Directory's contents its object lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Listing {
    None,
    Shallow,
    Deep,
}

impl Listing {
    /// A CWL `loadListing` value.
    pub(super) fn parse(v: &Value) -> Option<Listing> {
        match v.as_str()? {
            "no_listing" => Some(Listing::None),
            "shallow_listing" => Some(Listing::Shallow),
            "deep_listing" => Some(Listing::Deep),
            _ => None,
        }
    }
}

/// Where output paths may lead: the output directory and every File/Directory of the job,
/// each canonical (so a symlink chain is judged by where it ends).
#[derive(Debug)]
pub(super) struct Roots {
    outdir: PathBuf,
    inputs: Vec<PathBuf>,
}

impl Roots {
    pub(super) fn new(outdir: &Path, job: &Value) -> Result<Roots, String> {
        let outdir = fs_err::canonicalize(outdir).map_err(|e| e.to_string())?;
        let mut inputs = Vec::new();
        input_paths(job, &mut inputs);
        // An input that is gone cannot be a symlink's target either: leave it out.
        let inputs = inputs
            .into_iter()
            .filter_map(|p| fs_err::canonicalize(p).ok())
            .collect();
        Ok(Roots { outdir, inputs })
    }

    /// `Ok` when `path` (after every symlink) is the output directory, inside it, or an input
    /// (a file of the job, or inside a directory of the job).
    pub(super) fn check(&self, path: &Path) -> Result<(), String> {
        let real = fs_err::canonicalize(path).map_err(|_| {
            format!(
                "`{}` does not exist or is a broken symlink: outputs must be files or \
                 directories the tool wrote in its output directory",
                path.display()
            )
        })?;
        if real.starts_with(&self.outdir) || self.inputs.iter().any(|i| real.starts_with(i)) {
            return Ok(());
        }
        Err(format!(
            "`{}` leads to `{}`, outside the output directory and every input: a CWL output \
             must stay inside the output directory (copy the file there instead of linking it)",
            path.display(),
            real.display()
        ))
    }
}

/// The `path` (else `location`) of every File and Directory in a job value, secondary files
/// and listings included.
fn input_paths(v: &Value, out: &mut Vec<PathBuf>) {
    match v {
        Value::Array(items) => items.iter().for_each(|i| input_paths(i, out)),
        Value::Object(o) => {
            let class = o.get("class").and_then(Value::as_str);
            if matches!(class, Some("File" | "Directory")) {
                let path = o
                    .get("path")
                    .and_then(Value::as_str)
                    .map(PathBuf::from)
                    .or_else(|| {
                        o.get("location")
                            .and_then(Value::as_str)
                            .and_then(|l| l.strip_prefix("file://"))
                            .map(decode)
                    });
                if let Some(p) = path {
                    out.push(p);
                }
            }
            o.values().for_each(|i| input_paths(i, out));
        }
        _ => {}
    }
}

/// A percent-encoded path (the part of a `file://` URI after the scheme, or a relative IRI).
pub(super) fn decode(s: &str) -> PathBuf {
    PathBuf::from(
        percent_encoding::percent_decode_str(s)
            .decode_utf8_lossy()
            .into_owned(),
    )
}

/// What a `file://` location escapes: controls, space, `#`, `%`, `?` (so `item #1.txt`
/// round-trips as cwltest decodes it).
const LOCATION: &percent_encoding::AsciiSet = &percent_encoding::CONTROLS
    .add(b' ')
    .add(b'#')
    .add(b'%')
    .add(b'?');

/// The `file://` URI of an absolute path.
pub(super) fn location(path: &Path) -> String {
    format!(
        "file://{}",
        percent_encoding::utf8_percent_encode(&path.to_string_lossy(), LOCATION)
    )
}

/// `basename` split as CWL (and Python's `os.path.splitext`) does: leading dots belong to the
/// root, so `.bashrc` has no extension and `a.tar.gz` has `.gz`.
pub(super) fn split_name(basename: &str) -> (String, String) {
    let lead = basename.len() - basename.trim_start_matches('.').len();
    match basename[lead..].rfind('.') {
        Some(i) => (
            basename[..lead + i].to_string(),
            basename[lead + i..].to_string(),
        ),
        None => (basename.to_string(), String::new()),
    }
}

/// The fields every File and Directory object shares, for the absolute `path`.
fn common(class: &str, path: &Path, basename: &str) -> Map<String, Value> {
    let dirname = path
        .parent()
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut m = Map::new();
    m.insert("class".into(), json!(class));
    m.insert("location".into(), json!(location(path)));
    m.insert("path".into(), json!(path.to_string_lossy()));
    m.insert("basename".into(), json!(basename));
    m.insert("dirname".into(), json!(dirname));
    m
}

fn basename(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// A File object for `path` without reading it: `location`, `path`, `basename`, `dirname`,
/// `nameroot`, `nameext`.
pub(super) fn file_names(path: &Path) -> Map<String, Value> {
    let name = basename(path);
    let mut m = common("File", path, &name);
    let (root, ext) = split_name(&name);
    m.insert("nameroot".into(), json!(root));
    m.insert("nameext".into(), json!(ext));
    m
}

/// [`file_names`] plus `checksum` (`sha1$…`, as cwltest recomputes it) and `size`.
pub(super) fn file_object(path: &Path) -> Result<Map<String, Value>, String> {
    let mut m = file_names(path);
    let (checksum, size) = checksum(path)?;
    m.insert("checksum".into(), json!(checksum));
    m.insert("size".into(), json!(size));
    Ok(m)
}

/// `sha1$<hex>` and the size of the file at `path`, read in pieces (outputs may be large).
pub(super) fn checksum(path: &Path) -> Result<(String, u64), String> {
    let mut f = fs_err::File::open(path).map_err(|e| e.to_string())?;
    let mut hasher = Sha1::new();
    let mut buf = vec![0u8; 1 << 16];
    let mut size = 0u64;
    loop {
        let n = f.read(&mut buf).map_err(|e| e.to_string())?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
        size += n as u64;
    }
    let hex: String = hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    Ok((format!("sha1${hex}"), size))
}

/// The text of a file for `loadContents`: at most [`LOAD_CONTENTS_LIMIT`] bytes of UTF-8.
pub(super) fn contents(path: &Path) -> Result<String, String> {
    let size = fs_err::metadata(path).map_err(|e| e.to_string())?.len();
    if size > LOAD_CONTENTS_LIMIT {
        return Err(format!(
            "`{}` is {size} bytes, but loadContents reads at most {LOAD_CONTENTS_LIMIT} \
             (64 KiB); write the value to cwl.output.json instead, which has no limit",
            path.display()
        ));
    }
    let bytes = fs_err::read(path).map_err(|e| e.to_string())?;
    String::from_utf8(bytes).map_err(|_| {
        format!(
            "`{}` is not UTF-8 text, which loadContents requires",
            path.display()
        )
    })
}

/// A Directory object for `path`, listing its entries (sorted by name) as `listing` says;
/// every entry is checked against `roots`.
pub(super) fn dir_object(
    path: &Path,
    listing: Listing,
    roots: &Roots,
) -> Result<Map<String, Value>, String> {
    let mut m = common("Directory", path, &basename(path));
    if listing != Listing::None {
        let inner = if listing == Listing::Deep {
            Listing::Deep
        } else {
            Listing::None
        };
        m.insert("listing".into(), Value::Array(list(path, inner, roots)?));
    }
    Ok(m)
}

/// The entries of the directory at `path` as File/Directory objects, sorted by name.
pub(super) fn list(path: &Path, inner: Listing, roots: &Roots) -> Result<Vec<Value>, String> {
    let mut names: Vec<PathBuf> = fs_err::read_dir(path)
        .map_err(|e| e.to_string())?
        .map(|e| e.map(|e| e.path()).map_err(|e| e.to_string()))
        .collect::<Result<_, _>>()?;
    names.sort();
    let mut out = Vec::with_capacity(names.len());
    for p in names {
        out.push(Value::Object(object(&p, inner, roots)?));
    }
    Ok(out)
}

/// A File or Directory object for `path`, whichever it is (after symlinks, once checked).
pub(super) fn object(
    path: &Path,
    listing: Listing,
    roots: &Roots,
) -> Result<Map<String, Value>, String> {
    roots.check(path)?;
    if path.is_dir() {
        dir_object(path, listing, roots)
    } else {
        file_object(path)
    }
}
