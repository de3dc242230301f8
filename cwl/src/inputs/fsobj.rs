//! File and Directory objects: resolving `location`/`path`, the derived fields, literals
//! written under `staging`, `loadContents`, listings, and moving an object to a new path.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Read;
use std::path::{Component, Path, PathBuf};

use serde_json::{Map, Value};

use super::{input_error, pointer_token};
use crate::CwlError;

/// The most a `loadContents` reads (CWL: "64 KiB or smaller"; more is a fatal error).
pub const MAX_CONTENTS: u64 = 64 * 1024;

/// The most entries the listings of one job may hold: a deep listing of a large tree (or
/// of `/`) would otherwise take the server's memory; real inputs hold far fewer.
pub const MAX_LISTING: usize = 100_000;

/// How deep a deep listing goes: symlinked directories are followed (the tool sees them as
/// directories), so a link to an ancestor would otherwise recurse without end.
const MAX_LISTING_DEPTH: usize = 64;

/// `loadListing`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Listing {
    No,
    Shallow,
    Deep,
}

impl Listing {
    pub fn parse(s: &str) -> Option<Listing> {
        match s {
            "no_listing" => Some(Listing::No),
            "shallow_listing" => Some(Listing::Shallow),
            "deep_listing" => Some(Listing::Deep),
            _ => None,
        }
    }
}

/// What `location` escapes: everything but letters, digits, `-._~` and `/` (what Python's
/// `urllib.parse.quote` leaves, so `item #1.txt` is `item%20%231.txt` as cwltool writes it).
const LOCATION: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~')
    .remove(b'/');

/// The `file://` URI of an absolute path.
pub fn file_uri(path: &Path) -> String {
    let text = path.to_string_lossy();
    format!(
        "file://{}",
        percent_encoding::utf8_percent_encode(&text, LOCATION)
    )
}

/// Where literals go and how much has been listed; one per [`super::fill`].
pub(super) struct Fs<'a> {
    staging: &'a Path,
    namespaces: &'a BTreeMap<String, String>,
    listed: usize,
}

impl<'a> Fs<'a> {
    pub fn new(staging: &'a Path, namespaces: &'a BTreeMap<String, String>) -> Self {
        Fs {
            staging,
            namespaces,
            listed: 0,
        }
    }

    pub fn namespaces(&self) -> &BTreeMap<String, String> {
        self.namespaces
    }

    /// A File object completed: from its `location` (or `path`) relative to `base`, or, for
    /// a literal, written under `staging`. Given `basename`, `format`, `checksum` and
    /// `secondaryFiles` are kept (the last completed too).
    pub fn file(
        &mut self,
        o: &Map<String, Value>,
        base: &Path,
        load_contents: bool,
        at: &str,
    ) -> Result<Value, CwlError> {
        let basename = given_basename(o, at)?;
        let path = match source(o, base, at)? {
            Some(p) => p,
            None => {
                let Some(contents) = o.get("contents").and_then(Value::as_str) else {
                    return Err(input_error(
                        at,
                        "a File needs a `location`, a `path` or `contents` (a file literal)",
                    ));
                };
                let dir = self.literal_dir(at)?;
                let path = dir.join(basename.unwrap_or("literal"));
                write(&path, contents.as_bytes(), at)?;
                path
            }
        };
        let meta = fs_err::metadata(&path).map_err(|e| missing(at, "File", &path, &e))?;
        if meta.is_dir() {
            return Err(input_error(
                at,
                format!(
                    "{} is a directory; give it as {{class: Directory}} or name a file",
                    path.display()
                ),
            ));
        }
        let mut out = o.clone();
        set_paths(&mut out, &path, basename);
        out.insert("size".into(), Value::from(meta.len()));
        if load_contents {
            out.insert("contents".into(), Value::String(load(&path, &meta, at)?));
        }
        if let Some(f) = o.get("format").and_then(Value::as_str) {
            out.insert("format".into(), Value::String(expand(f, self.namespaces)));
        }
        if let Some(given) = o.get("secondaryFiles").filter(|v| !v.is_null()) {
            let Value::Array(items) = given else {
                return Err(input_error(
                    at,
                    "`secondaryFiles` must be a list of Files and Directories",
                ));
            };
            let mut done = Vec::with_capacity(items.len());
            for (i, item) in items.iter().enumerate() {
                let at = format!("{at}.secondaryFiles[{i}]");
                done.push(self.entry(item, base, Listing::No, &at)?);
            }
            out.insert("secondaryFiles".into(), Value::Array(done));
        }
        Ok(Value::Object(out))
    }

    /// A File or Directory object, by its `class`.
    pub fn entry(
        &mut self,
        v: &Value,
        base: &Path,
        listing: Listing,
        at: &str,
    ) -> Result<Value, CwlError> {
        match v.as_object() {
            Some(o) if class_of(o) == Some("File") => self.file(o, base, false, at),
            Some(o) if class_of(o) == Some("Directory") => self.directory(o, base, listing, at),
            _ => Err(input_error(
                at,
                format!("expected a File or Directory object (with `class`), got {v}"),
            )),
        }
    }

    /// A Directory object completed: from its `location` (or `path`), with a `listing` per
    /// `listing` unless the job gave one; or, for a literal (a `listing` and no location),
    /// created under `staging` with its literal entries written in it.
    pub fn directory(
        &mut self,
        o: &Map<String, Value>,
        base: &Path,
        listing: Listing,
        at: &str,
    ) -> Result<Value, CwlError> {
        let basename = given_basename(o, at)?;
        let given_listing = o.get("listing").filter(|v| !v.is_null());
        let mut out = o.clone();
        match source(o, base, at)? {
            Some(path) => {
                let meta =
                    fs_err::metadata(&path).map_err(|e| missing(at, "Directory", &path, &e))?;
                if !meta.is_dir() {
                    return Err(input_error(
                        at,
                        format!(
                            "{} is not a directory; give it as {{class: File}} or name a directory",
                            path.display()
                        ),
                    ));
                }
                set_paths(&mut out, &path, basename);
                match given_listing {
                    Some(entries) => {
                        // The job's own listing stands (its entries are what the tool is
                        // promised); each is completed like any File or Directory.
                        let entries = self.entries(entries, base, listing, None, at)?;
                        out.insert("listing".into(), Value::Array(entries));
                    }
                    None if listing != Listing::No => {
                        let deep = listing == Listing::Deep;
                        let entries = self.read_listing(&path, deep, 0, at)?;
                        out.insert("listing".into(), Value::Array(entries));
                    }
                    None => {
                        out.remove("listing");
                    }
                }
            }
            None => {
                let Some(entries) = given_listing else {
                    return Err(input_error(
                        at,
                        "a Directory needs a `location`, a `path` or a `listing` (a directory literal)",
                    ));
                };
                let dir = self.literal_dir(at)?.join(basename.unwrap_or("directory"));
                create_dir(&dir, at)?;
                let entries = self.entries(entries, base, listing, Some(&dir), at)?;
                set_paths(&mut out, &dir, basename);
                out.insert("listing".into(), Value::Array(entries));
            }
        }
        Ok(Value::Object(out))
    }

    /// A Directory's given `listing`, each entry completed. Inside a literal (`into`), each
    /// literal entry (a File's `contents`, a Directory's own `listing`) is written into it;
    /// entries naming an existing path stay where they are, to be staged into it (see
    /// [`super::files`]).
    fn entries(
        &mut self,
        entries: &Value,
        base: &Path,
        listing: Listing,
        into: Option<&Path>,
        at: &str,
    ) -> Result<Vec<Value>, CwlError> {
        let Value::Array(items) = entries else {
            return Err(input_error(
                at,
                "`listing` must be a list of Files and Directories",
            ));
        };
        let mut names = BTreeSet::new();
        let mut out = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            let at = format!("{at}.listing[{i}]");
            let Some(o) = item.as_object() else {
                return Err(input_error(
                    &at,
                    format!("expected a File or Directory object, got {item}"),
                ));
            };
            let done = match into {
                Some(dir) if source(o, base, &at)?.is_none() => {
                    let name = given_basename(o, &at)?.ok_or_else(|| {
                        input_error(
                            &at,
                            "an entry of a Directory literal written here needs a `basename`",
                        )
                    })?;
                    let target = dir.join(name);
                    match class_of(o) {
                        Some("File") => {
                            let contents =
                                o.get("contents").and_then(Value::as_str).ok_or_else(|| {
                                    input_error(
                                        &at,
                                        "a File needs a `location`, a `path` or `contents`",
                                    )
                                })?;
                            write(&target, contents.as_bytes(), &at)?;
                            let mut placed = o.clone();
                            placed.insert(
                                "path".into(),
                                Value::String(target.to_string_lossy().into_owned()),
                            );
                            self.file(&placed, base, false, &at)?
                        }
                        Some("Directory") => {
                            let sub =
                                o.get("listing").filter(|v| !v.is_null()).ok_or_else(|| {
                                    input_error(
                                        &at,
                                        "a Directory needs a `location`, a `path` or a `listing`",
                                    )
                                })?;
                            create_dir(&target, &at)?;
                            let listed = self.entries(sub, base, listing, Some(&target), &at)?;
                            let mut placed = o.clone();
                            set_paths(&mut placed, &target, Some(name));
                            placed.insert("listing".into(), Value::Array(listed));
                            Value::Object(placed)
                        }
                        _ => {
                            return Err(input_error(
                                &at,
                                format!(
                                    "expected a File or Directory object (with `class`), got {item}"
                                ),
                            ));
                        }
                    }
                }
                _ => self.entry(item, base, listing, &at)?,
            };
            let name = done
                .get("basename")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string();
            if !names.insert(name.clone()) {
                return Err(input_error(
                    &at,
                    format!("the listing names `{name}` twice; every entry needs its own basename"),
                ));
            }
            out.push(done);
        }
        Ok(out)
    }

    /// The entries of the directory at `path`, sorted by name; subdirectories listed too
    /// when `deep`.
    fn read_listing(
        &mut self,
        path: &Path,
        deep: bool,
        depth: usize,
        at: &str,
    ) -> Result<Vec<Value>, CwlError> {
        if depth > MAX_LISTING_DEPTH {
            return Err(input_error(
                at,
                format!(
                    "the Directory nests deeper than {MAX_LISTING_DEPTH} levels at {} (a symlink to a directory above it?); use `loadListing: shallow_listing`",
                    path.display()
                ),
            ));
        }
        let read_err = |e: std::io::Error| {
            input_error(
                at,
                format!("cannot list the Directory {}: {e}", path.display()),
            )
        };
        let mut names = Vec::new();
        for entry in fs_err::read_dir(path).map_err(read_err)? {
            names.push(entry.map_err(read_err)?.file_name());
        }
        names.sort();
        self.listed += names.len();
        if self.listed > MAX_LISTING {
            return Err(input_error(
                at,
                format!(
                    "the Directory listings hold more than {MAX_LISTING} entries; use `loadListing: no_listing` (or shallow_listing) for large directories"
                ),
            ));
        }
        let mut out = Vec::with_capacity(names.len());
        for name in names {
            let child = path.join(&name);
            // A dangling symlink is nothing the tool could open: left out, as `ls -L` would.
            let Ok(meta) = fs_err::metadata(&child) else {
                continue;
            };
            let mut o = Map::new();
            if meta.is_dir() {
                o.insert("class".into(), Value::String("Directory".into()));
                set_paths(&mut o, &child, None);
                if deep {
                    let sub = self.read_listing(&child, true, depth + 1, at)?;
                    o.insert("listing".into(), Value::Array(sub));
                }
            } else {
                o.insert("class".into(), Value::String("File".into()));
                set_paths(&mut o, &child, None);
                o.insert("size".into(), Value::from(meta.len()));
            }
            out.push(Value::Object(o));
        }
        Ok(out)
    }

    /// A new directory of its own under `staging` for one literal, so literals with the
    /// same basename never collide.
    fn literal_dir(&self, at: &str) -> Result<PathBuf, CwlError> {
        for n in 1.. {
            let dir = self.staging.join(format!("cwl-literal-{n}"));
            match fs_err::create_dir_all(self.staging).and_then(|()| fs_err::create_dir(&dir)) {
                Ok(()) => return Ok(dir),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => {
                    return Err(input_error(
                        at,
                        format!("cannot write the literal under the staging directory: {e}"),
                    ));
                }
            }
        }
        Err(input_error(
            at,
            "no free name for a literal under the staging directory",
        ))
    }
}

/// A File or Directory the job names that cannot be looked at.
fn missing(at: &str, class: &str, path: &Path, e: &std::io::Error) -> CwlError {
    let why = match e.kind() {
        std::io::ErrorKind::NotFound => "does not exist".to_string(),
        std::io::ErrorKind::PermissionDenied => "cannot be read (permission denied)".to_string(),
        _ => format!("cannot be read: {e}"),
    };
    input_error(
        at,
        format!(
            "the {class} {} {why}; check its `location` or `path` (relative ones are read from the job's directory, a default's from the tool's)",
            path.display()
        ),
    )
}

fn class_of(o: &Map<String, Value>) -> Option<&str> {
    o.get("class").and_then(Value::as_str)
}

/// The `basename` the job gave, checked: a name, not a path.
fn given_basename<'o>(o: &'o Map<String, Value>, at: &str) -> Result<Option<&'o str>, CwlError> {
    match o.get("basename") {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if !s.is_empty() && !s.contains('/') && s != "." && s != ".." => {
            Ok(Some(s))
        }
        Some(other) => Err(input_error(
            at,
            format!("`basename` must be a file name without `/`, not {other}"),
        )),
    }
}

/// The local path a File/Directory names: `location` (a `file://` URI or a reference
/// relative to `base`, percent-decoded: `item%20%231.txt` is `item #1.txt`), else `path` (a
/// plain path, relative to `base`); `None` for a literal.
fn source(o: &Map<String, Value>, base: &Path, at: &str) -> Result<Option<PathBuf>, CwlError> {
    if let Some(loc) = o.get("location").and_then(Value::as_str) {
        let decoded = |s: &str| {
            percent_encoding::percent_decode_str(s)
                .decode_utf8_lossy()
                .into_owned()
        };
        let path = if let Some(rest) = loc.strip_prefix("file://") {
            // `file:///x` has an empty host; `file://localhost/x` names this host too.
            let rest = rest.strip_prefix("localhost").unwrap_or(rest);
            if !rest.starts_with('/') {
                return Err(input_error(
                    at,
                    format!("`{loc}` names another host; only local files (file:///…) are read"),
                ));
            }
            PathBuf::from(decoded(rest))
        } else if has_scheme(loc) {
            return Err(input_error(
                at,
                format!(
                    "`{loc}`: only file:// locations and local paths are read; download it first"
                ),
            ));
        } else {
            base.join(decoded(loc))
        };
        return Ok(Some(clean(&path)));
    }
    if let Some(p) = o.get("path").and_then(Value::as_str) {
        return Ok(Some(clean(&base.join(p))));
    }
    Ok(None)
}

/// `scheme://…` (RFC 3986 scheme letters); `A:Gln2Cys` is a relative name, not a scheme.
fn has_scheme(loc: &str) -> bool {
    let Some((scheme, rest)) = loc.split_once("://") else {
        return false;
    };
    rest.len() + scheme.len() + 3 == loc.len()
        && scheme
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic())
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
}

/// `.` and `..` taken out by the name alone (the path's own file name is what the tool is
/// shown, so symlinks are not resolved).
fn clean(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    out.push("..");
                }
            }
            other => out.push(other),
        }
    }
    out
}

/// `path`, `location`, `basename` (the given one, else the path's file name) and, for a
/// File, `dirname`, `nameroot` and `nameext`.
fn set_paths(o: &mut Map<String, Value>, path: &Path, basename: Option<&str>) {
    let name = match basename {
        Some(b) => b.to_string(),
        None => path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
    };
    o.insert(
        "path".into(),
        Value::String(path.to_string_lossy().into_owned()),
    );
    o.insert("location".into(), Value::String(file_uri(path)));
    if class_of(o) == Some("File") {
        let dirname = path
            .parent()
            .map(|p| p.to_string_lossy().into_owned())
            .unwrap_or_default();
        let (root, ext) = split_ext(&name);
        o.insert("dirname".into(), Value::String(dirname));
        o.insert("nameroot".into(), Value::String(root.to_string()));
        o.insert("nameext".into(), Value::String(ext.to_string()));
    }
    o.insert("basename".into(), Value::String(name));
}

/// `nameroot`, `nameext`: the last `.` and what follows, leading dots not counted
/// (`.cshrc` has no extension), as CWL defines them.
pub fn split_ext(name: &str) -> (&str, &str) {
    let lead = name.len() - name.trim_start_matches('.').len();
    match name[lead..].rfind('.') {
        Some(i) => name.split_at(lead + i),
        None => (name, ""),
    }
}

/// A prefixed IRI (`edam:format_2330`) expanded with `$namespaces`; others as they are.
pub fn expand(iri: &str, namespaces: &BTreeMap<String, String>) -> String {
    match iri.split_once(':') {
        Some((prefix, rest)) if !rest.starts_with("//") => match namespaces.get(prefix) {
            Some(ns) => format!("{ns}{rest}"),
            None => iri.to_string(),
        },
        _ => iri.to_string(),
    }
}

/// `loadContents`: the whole file as text, refused over 64 KiB (and for what is not a
/// regular file: a FIFO would block). Invalid UTF-8 is replaced rather than refused, so a
/// stray byte does not stop a run; CWL only promises text files here.
fn load(path: &Path, meta: &std::fs::Metadata, at: &str) -> Result<String, CwlError> {
    if !meta.is_file() {
        return Err(input_error(
            at,
            format!("loadContents: {} is not a regular file", path.display()),
        ));
    }
    let over = || {
        input_error(
            at,
            format!(
                "loadContents over 64 KiB: {} is larger than {MAX_CONTENTS} bytes (CWL reads at most 64 KiB into `contents`)",
                path.display()
            ),
        )
    };
    if meta.len() > MAX_CONTENTS {
        return Err(over());
    }
    let mut bytes = Vec::new();
    fs_err::File::open(path)
        .and_then(|f| f.take(MAX_CONTENTS + 1).read_to_end(&mut bytes))
        .map_err(|e| input_error(at, format!("loadContents: {e}")))?;
    if bytes.len() as u64 > MAX_CONTENTS {
        return Err(over());
    }
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

fn write(path: &Path, bytes: &[u8], at: &str) -> Result<(), CwlError> {
    if fs_err::symlink_metadata(path).is_ok() {
        return Err(input_error(
            at,
            format!(
                "{} is written twice; every entry needs its own basename",
                path.display()
            ),
        ));
    }
    fs_err::write(path, bytes)
        .map_err(|e| input_error(at, format!("cannot write the literal: {e}")))
}

fn create_dir(path: &Path, at: &str) -> Result<(), CwlError> {
    fs_err::create_dir(path)
        .map_err(|e| input_error(at, format!("cannot create the Directory literal: {e}")))
}

/// See [`super::relocate`].
pub fn relocate(obj: &mut Value, new_path: &Path) {
    let Some(o) = obj.as_object_mut() else {
        return;
    };
    set_paths(o, new_path, None);
    if let Some(Value::Array(entries)) = o.get_mut("listing") {
        for entry in entries {
            let Some(name) = entry.get("basename").and_then(Value::as_str) else {
                continue;
            };
            let child = new_path.join(name);
            relocate(entry, &child);
        }
    }
}

/// See [`super::files`]: pre-order, `inside` the path of the Directory whose listing this
/// is (entries there are staged with it).
pub fn collect_files(
    v: &Value,
    ptr: &str,
    inside: Option<&Path>,
    out: &mut Vec<(String, PathBuf)>,
) {
    match v {
        Value::Object(o) if matches!(class_of(o), Some("File" | "Directory")) => {
            let Some(path) = o.get("path").and_then(Value::as_str).map(PathBuf::from) else {
                return;
            };
            if !inside.is_some_and(|d| path.starts_with(d)) {
                out.push((ptr.to_string(), path.clone()));
            }
            if let Some(Value::Array(sfs)) = o.get("secondaryFiles") {
                for (i, sf) in sfs.iter().enumerate() {
                    collect_files(sf, &format!("{ptr}/secondaryFiles/{i}"), None, out);
                }
            }
            if let Some(Value::Array(entries)) = o.get("listing") {
                for (i, e) in entries.iter().enumerate() {
                    collect_files(e, &format!("{ptr}/listing/{i}"), Some(&path), out);
                }
            }
        }
        Value::Object(o) => {
            for (k, item) in o {
                collect_files(item, &format!("{ptr}{}", pointer_token(k)), None, out);
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                collect_files(item, &format!("{ptr}/{i}"), None, out);
            }
        }
        _ => {}
    }
}
