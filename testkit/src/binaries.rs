//! The workspace's built binaries, located next to the running test and refused when older
//! than the sources they are built from.

use std::path::{Path, PathBuf};

/// The workspace root (this crate lives in `testkit/`).
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("testkit/ has a parent")
        .to_path_buf()
}

/// The sources cargo built `exe` from, as its dep-info file (`<name>.d` beside it) lists
/// them: exactly the files compiled in, so a test-only module (`#[cfg(test)]`) or another
/// crate's change never calls a fresh binary stale, and a new module is never missed.
fn sources_of(exe: &Path) -> Result<Vec<PathBuf>, String> {
    let dep_info = exe.with_extension("d");
    let text = fs_err::read_to_string(&dep_info).map_err(|e| {
        format!(
            "cannot read {}: {e}: run `cargo build --workspace --bins`",
            dep_info.display()
        )
    })?;
    // `target: dep dep ...` on the first line; a space inside a path is written `\ `.
    let deps = text
        .lines()
        .next()
        .and_then(|line| line.split_once(": "))
        .map(|(_, deps)| deps)
        .unwrap_or_default();
    let mut sources = Vec::new();
    let mut current = String::new();
    let mut chars = deps.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&' ') => current.push(chars.next().unwrap_or(' ')),
            ' ' => {
                if !current.is_empty() {
                    sources.push(PathBuf::from(std::mem::take(&mut current)));
                }
            }
            c => current.push(c),
        }
    }
    if !current.is_empty() {
        sources.push(PathBuf::from(current));
    }
    Ok(sources)
}

/// A workspace binary built next to the running test (`target/<profile>/<name>`).
///
/// Panics, saying what to run, when it is missing or older than any source it is built
/// from (see [`try_binary`]).
pub fn binary(name: &str) -> PathBuf {
    try_binary(name).unwrap_or_else(|e| panic!("{e}"))
}

/// [`binary`], with the problem as a message: `cargo test` does not rebuild another
/// package's binaries, so a stale one would otherwise be tested silently.
pub fn try_binary(name: &str) -> Result<PathBuf, String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot find the running test: {e}"))?;
    let mut dir = exe.parent().map(Path::to_path_buf).unwrap_or_default();
    // Test executables live in target/<profile>/deps.
    if dir.ends_with("deps") {
        dir.pop();
    }
    let path = dir.join(format!("{name}{}", std::env::consts::EXE_SUFFIX));
    let built = fs_err::metadata(&path)
        .and_then(|m| m.modified())
        .map_err(|_| {
            format!(
                "{} is not built: run `cargo build --workspace --bins` first",
                path.display()
            )
        })?;
    for source in sources_of(&path)? {
        let changed = fs_err::metadata(&source).and_then(|m| m.modified());
        if changed.is_ok_and(|t| t > built) {
            return Err(format!(
                "{} is older than {}: run `cargo build --workspace --bins` (scripts/test.sh does) before the tests",
                path.display(),
                source.display()
            ));
        }
    }
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dep_info_lists_sources_with_escaped_spaces() {
        let dir = tempfile::tempdir().unwrap();
        let exe = dir.path().join("tool");
        fs_err::write(
            exe.with_extension("d"),
            format!(
                "{}: /src/a.rs /src/with\\ space.rs /src/b.rs\n\n/src/a.rs:\n",
                exe.display()
            ),
        )
        .unwrap();
        assert_eq!(
            sources_of(&exe).unwrap(),
            [
                PathBuf::from("/src/a.rs"),
                PathBuf::from("/src/with space.rs"),
                PathBuf::from("/src/b.rs")
            ]
        );
        assert!(sources_of(&dir.path().join("missing")).is_err());
    }
}
