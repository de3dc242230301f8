//! `outputBinding.glob`: POSIX glob(3) pathname matching inside the output directory, one
//! path component at a time (as Python's `glob`, which cwltool uses, does): `*`, `?` and
//! `[…]` never cross a `/`, and they match a name starting with `.` only when the pattern
//! component starts with `.` too.

use std::path::{Component, Path, PathBuf};

/// The paths below `outdir` that `pattern` matches, sorted. `pattern` is relative to
/// `outdir`, or absolute with `prefixes` (the output directory as the tool saw it, and as it
/// is here) in front; it may not lead outside (`/etc/passwd`, `../x`).
pub(super) fn matches(
    outdir: &Path,
    prefixes: &[&str],
    pattern: &str,
) -> Result<Vec<PathBuf>, String> {
    let rel = strip_outdir(pattern, prefixes);
    if rel.starts_with('/') {
        return Err(format!(
            "glob `{pattern}` is outside the output directory: a glob must be relative to it \
             or start with $(runtime.outdir)"
        ));
    }
    let mut parts: Vec<&str> = Vec::new();
    for c in Path::new(rel).components() {
        match c {
            Component::Normal(s) => parts.push(s.to_str().unwrap_or_default()),
            Component::CurDir => {}
            Component::ParentDir => {
                if parts.pop().is_none() {
                    return Err(format!(
                        "glob `{pattern}` leads outside the output directory"
                    ));
                }
            }
            Component::RootDir | Component::Prefix(_) => {
                return Err(format!("glob `{pattern}` is outside the output directory"));
            }
        }
    }
    let mut found = vec![outdir.to_path_buf()];
    for part in parts {
        let mut next = Vec::new();
        if !is_magic(part) {
            for dir in &found {
                let p = dir.join(unescape(part));
                // A literal name matches what is there, a dangling symlink too (which the
                // caller then refuses by name).
                if fs_err::symlink_metadata(&p).is_ok() {
                    next.push(p);
                }
            }
        } else {
            let matcher = globset::GlobBuilder::new(part)
                .literal_separator(true)
                .backslash_escape(true)
                .build()
                .map_err(|e| format!("glob `{pattern}` is not a valid pattern: {e}"))?
                .compile_matcher();
            let hidden_ok = part.starts_with('.');
            for dir in &found {
                if !dir.is_dir() {
                    continue;
                }
                let mut names: Vec<_> = fs_err::read_dir(dir)
                    .map_err(|e| e.to_string())?
                    .filter_map(|e| e.ok().map(|e| e.file_name()))
                    .collect();
                names.sort();
                for name in names {
                    let text = name.to_string_lossy();
                    if (hidden_ok || !text.starts_with('.')) && matcher.is_match(&*text) {
                        next.push(dir.join(&name));
                    }
                }
            }
        }
        found = next;
    }
    found.sort();
    Ok(found)
}

/// `pattern` without a leading output directory path (`$(runtime.outdir)/x` → `x`, the
/// directory itself → `.`).
fn strip_outdir<'p>(pattern: &'p str, prefixes: &[&str]) -> &'p str {
    for prefix in prefixes {
        let prefix = prefix.trim_end_matches('/');
        if prefix.is_empty() {
            continue;
        }
        if pattern == prefix {
            return ".";
        }
        if let Some(rest) = pattern.strip_prefix(prefix)
            && let Some(rest) = rest.strip_prefix('/')
        {
            return if rest.is_empty() { "." } else { rest };
        }
    }
    pattern
}

/// True when a component has glob syntax (else it names one entry).
fn is_magic(part: &str) -> bool {
    part.contains(['*', '?', '['])
}

/// A literal component with its backslash escapes removed.
fn unescape(part: &str) -> String {
    let mut out = String::with_capacity(part.len());
    let mut chars = part.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            if let Some(n) = chars.next() {
                out.push(n);
            }
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn touch(dir: &Path, names: &[&str]) {
        for n in names {
            let p = dir.join(n);
            fs_err::create_dir_all(p.parent().unwrap()).unwrap();
            fs_err::write(p, "").unwrap();
        }
    }

    fn rel(dir: &Path, v: Vec<PathBuf>) -> Vec<String> {
        v.into_iter()
            .map(|p| p.strip_prefix(dir).unwrap().to_string_lossy().into_owned())
            .collect()
    }

    #[test]
    fn stars_stay_in_one_component_and_skip_hidden_names() {
        let d = tempfile::tempdir().unwrap();
        touch(d.path(), &["b.txt", "a.txt", ".h.txt", "sub/c.txt"]);
        let got = matches(d.path(), &[], "*.txt").unwrap();
        assert_eq!(rel(d.path(), got), ["a.txt", "b.txt"]);
        let got = matches(d.path(), &[], "*/*.txt").unwrap();
        assert_eq!(rel(d.path(), got), ["sub/c.txt"]);
        let got = matches(d.path(), &[], ".*").unwrap();
        assert_eq!(rel(d.path(), got), [".h.txt"]);
    }

    #[test]
    fn brackets_literal_names_and_the_outdir_prefix() {
        let d = tempfile::tempdir().unwrap();
        touch(d.path(), &["a_dir/x", "b_dir/x", "d_dir/x", "A:B"]);
        let got = matches(d.path(), &[], "[a,b,c]_dir").unwrap();
        assert_eq!(rel(d.path(), got), ["a_dir", "b_dir"]);
        let got = matches(d.path(), &[], "A:B").unwrap();
        assert_eq!(rel(d.path(), got), ["A:B"]);
        let got = matches(d.path(), &["/out"], "/out/a_dir/x").unwrap();
        assert_eq!(rel(d.path(), got), ["a_dir/x"]);
        assert_eq!(matches(d.path(), &["/out/"], "/out").unwrap(), [d.path()]);
        assert_eq!(matches(d.path(), &[], ".").unwrap(), [d.path()]);
        assert!(matches(d.path(), &[], "missing").unwrap().is_empty());
    }

    #[test]
    fn globs_leaving_the_output_directory_are_errors() {
        let d = tempfile::tempdir().unwrap();
        let e = matches(d.path(), &["/out"], "/etc/passwd").unwrap_err();
        assert!(e.contains("outside the output directory"), "{e}");
        assert!(matches(d.path(), &[], "../x").is_err());
        assert!(matches(d.path(), &[], "a/../../x").is_err());
    }
}
