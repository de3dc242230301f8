//! The workspace's built binaries, located next to the running test and refused when older
//! than the sources they are built from.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// The workspace root (this crate lives in `testkit/`).
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("testkit/ has a parent")
        .to_path_buf()
}

/// The sources each binary is built from (its crate and the workspace crates it links, as
/// docs/architecture.md's table lists them): cargo does not relink `scimcp` when, say,
/// parity/src changes, so comparing a binary with every crate would call a fresh one stale.
fn sources_of(name: &str) -> &'static [&'static str] {
    match name {
        "scimcp-fixture-cli" => &["tests/src/bin/scimcp-fixture-cli.rs"],
        "scimcp" => &[
            "core/src",
            "process/src",
            "slurm/src",
            "server/src",
            "adapters",
        ],
        "scimcp-setup" => &[
            "core/src",
            "process/src",
            "verify/src",
            "installer/src",
            "adapters",
        ],
        "scimcp-doctor" => &[
            "core/src",
            "process/src",
            "slurm/src",
            "verify/src",
            "installer/src",
            "client/src",
            "doctor/src",
            "adapters",
        ],
        "scimcp-parity" => &[
            "core/src",
            "process/src",
            "client/src",
            "parity/src",
            "adapters",
        ],
        "scimcp-release" => &["core/src", "verify/src", "release/src", "adapters"],
        _ => &[
            "core/src",
            "process/src",
            "slurm/src",
            "verify/src",
            "client/src",
            "server/src",
            "installer/src",
            "doctor/src",
            "release/src",
            "parity/src",
            "adapters",
        ],
    }
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
    let root = workspace_root();
    for source in sources_of(name) {
        if let Some((_, newer)) = newest_file(&root.join(source)).filter(|(t, _)| *t > built) {
            return Err(format!(
                "{} is older than {}: run `cargo build --workspace --bins` (scripts/test.sh does) before the tests",
                path.display(),
                newer.display()
            ));
        }
    }
    Ok(path)
}

fn newest_file(path: &Path) -> Option<(SystemTime, PathBuf)> {
    let meta = fs_err::metadata(path).ok()?;
    if !meta.is_dir() {
        return meta.modified().ok().map(|t| (t, path.to_path_buf()));
    }
    let mut newest: Option<(SystemTime, PathBuf)> = None;
    for entry in fs_err::read_dir(path).ok()?.flatten() {
        if let Some(c) = newest_file(&entry.path())
            && newest.as_ref().is_none_or(|n| c.0 > n.0)
        {
            newest = Some(c);
        }
    }
    newest
}
