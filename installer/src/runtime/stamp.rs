//! The import stamp: proof that not one file of a runtime changed since its import check last
//! passed, so a no-op `install` re-run need not import the scientific modules again (for
//! refsci, scikit-learn and pandas: about 0.8 s, most of what such a re-run cost).
//!
//! The stamp is the SHA-256 of every entry under the runtime directory (path, kind, size,
//! modification and status-change times, inode; a link's target), of the interpreter the
//! venv resolves to, and of the modules the check imports. A user cannot set a file's
//! status-change time, so no edit, reinstall, copy or `touch` keeps the stamp. What it cannot
//! see is outside the runtime (the base interpreter's standard library, system libraries):
//! that is why only `install` trusts it, while `repair`, `upgrade` and the doctor's
//! `runtime.import` always import for real.

use std::path::Path;

/// The file holding the stamp of the last import check that passed, in the runtime's root.
pub const STAMP: &str = ".scimcp-import-stamp";

/// The stamp of the runtime in `dir` whose interpreter is `python`, for the check that
/// imports `imports`; `None` when any entry cannot be read (then the check runs).
pub fn compute(dir: &Path, python: &Path, imports: &[String], skip: &[&str]) -> Option<String> {
    let mut lines = vec![format!("imports {}", imports.join(","))];
    let base = fs_err::canonicalize(python).ok()?;
    lines.push(format!(
        "interpreter {} {}",
        base.display(),
        describe(&fs_err::metadata(&base).ok()?)
    ));
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let mut entries: Vec<_> = fs_err::read_dir(&d).ok()?.collect::<Result<_, _>>().ok()?;
        entries.sort_by_key(|e| e.file_name());
        for entry in entries {
            let path = entry.path();
            let rel = path.strip_prefix(dir).ok()?.to_string_lossy().into_owned();
            if d == dir && skip.iter().any(|s| entry.file_name() == **s) {
                continue;
            }
            let meta = fs_err::symlink_metadata(&path).ok()?;
            let kind = meta.file_type();
            if kind.is_dir() {
                // A directory's own times change whenever an entry is added or removed,
                // which its entries' lines already show.
                lines.push(format!("d {rel}"));
                stack.push(path);
            } else if kind.is_symlink() {
                let target = fs_err::read_link(&path).ok()?;
                lines.push(format!("l {rel} -> {}", target.display()));
            } else {
                lines.push(format!("f {rel} {}", describe(&meta)));
            }
        }
    }
    Some(scimcp_core::hash::sha256_hex(lines.join("\n").as_bytes()))
}

/// Size, times and identity of one file, as text.
fn describe(meta: &std::fs::Metadata) -> String {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        format!(
            "{} {}.{} {}.{} {}:{}",
            meta.len(),
            meta.mtime(),
            meta.mtime_nsec(),
            meta.ctime(),
            meta.ctime_nsec(),
            meta.dev(),
            meta.ino()
        )
    }
    #[cfg(not(unix))]
    {
        let nanos = |t: std::io::Result<std::time::SystemTime>| {
            t.ok()
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_nanos())
        };
        format!(
            "{} {} {}",
            meta.len(),
            nanos(meta.modified()),
            nanos(meta.created())
        )
    }
}

/// The stamp recorded in `dir`, if any.
pub fn recorded(dir: &Path) -> Option<String> {
    let bytes = scimcp_core::fs::read_regular(&dir.join(STAMP), scimcp_core::fs::CONFIG_READ_LIMIT)
        .ok()??;
    String::from_utf8(bytes).ok().map(|s| s.trim().to_string())
}

/// Forget the recorded stamp (before a check runs: a check that fails leaves none).
pub fn clear(dir: &Path) {
    let _ = fs_err::remove_file(dir.join(STAMP));
}

/// Record `stamp` after a check passed. Best effort: without it the next re-run imports again.
pub fn record(dir: &Path, stamp: &str) {
    let _ = scimcp_core::fs::write_atomic(
        &dir.join(STAMP),
        format!("{stamp}\n").as_bytes(),
        scimcp_core::fs::Privacy::Private,
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn any_change_to_a_file_of_the_runtime_changes_the_stamp() {
        let dir = tempfile::tempdir().unwrap();
        let runtime = dir.path().join("rt");
        let site = runtime.join("lib/site-packages/pkg");
        fs_err::create_dir_all(&site).unwrap();
        let python = dir.path().join("python3");
        fs_err::write(&python, "interpreter").unwrap();
        fs_err::write(site.join("mod.py"), "x = 1\n").unwrap();
        let imports = vec!["pkg".to_string()];
        let stamp = || compute(&runtime, &python, &imports, &[STAMP]).unwrap();
        let first = stamp();
        assert_eq!(stamp(), first, "the same tree, the same stamp");
        // Recording the stamp in the runtime itself does not change it.
        record(&runtime, &first);
        assert_eq!(recorded(&runtime).as_deref(), Some(first.as_str()));
        assert_eq!(stamp(), first);
        // The same size, another byte: the status-change time moves.
        std::thread::sleep(std::time::Duration::from_millis(20));
        fs_err::write(site.join("mod.py"), "x = 2\n").unwrap();
        let edited = stamp();
        assert_ne!(edited, first, "an edit of the same size");
        fs_err::write(site.join("new.py"), "").unwrap();
        assert_ne!(stamp(), edited, "an added file");
        assert_ne!(
            compute(&runtime, &python, &["pkg".into(), "other".into()], &[STAMP]).unwrap(),
            stamp(),
            "other modules to import"
        );
        clear(&runtime);
        assert_eq!(recorded(&runtime), None);
    }
}
