//! Sweeping temporary files a killed `scimcp-setup` left behind.
//!
//! Every durable write stages its bytes in a `.<name>.<random>.tmp` file beside the target
//! (and `current` is switched through `.current.<pid>.tmp`); a process killed between the
//! staging and the rename leaves that file. In the directories only `scimcp-setup` writes —
//! the data root (`state.json`, `current`), `backups/`, `clients/` and each runtime — such a
//! file can only belong to a dead writer once the setup lock is held, because every writer
//! there holds that lock. So every mutating command, right after it takes the lock, removes
//! them all (the scratch directory `.tmp/` is emptied as a whole by `install` and `upgrade`).
//! Client configuration directories belong to the clients: there only the temporary files
//! of the very file being written are removed, just before it is written
//! ([`crate::register`]).

use std::path::PathBuf;

use crate::layout::Layout;

/// Whether `name` is a temporary file name scimcp's writers use.
pub fn is_temp_name(name: &str) -> bool {
    name.starts_with('.') && name.ends_with(".tmp") && name.len() > ".tmp".len() + 1
}

/// Remove every stale temporary file in the installer's own directories; returns what was
/// removed. Call only with the setup lock held.
pub fn stale_temps(layout: &Layout) -> Vec<PathBuf> {
    let mut dirs = vec![
        layout.root.clone(),
        layout.backups_dir(),
        layout.clients_dir(),
    ];
    if let Ok(entries) = fs_err::read_dir(layout.runtimes_dir()) {
        dirs.extend(entries.flatten().map(|e| e.path()).filter(|p| p.is_dir()));
    }
    let mut removed = Vec::new();
    for dir in dirs {
        let Ok(entries) = fs_err::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if is_temp_name(&name)
                && (kind.is_file() || kind.is_symlink())
                && fs_err::remove_file(entry.path()).is_ok()
            {
                removed.push(entry.path());
            }
        }
    }
    removed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_temp_names_in_owned_directories_go() {
        let dir = tempfile::tempdir().unwrap();
        let layout = Layout::new(dir.path(), crate::host::Platform::Linux);
        let backups = layout.backups_dir();
        fs_err::create_dir_all(&backups).unwrap();
        fs_err::write(backups.join(".20260101-cursor-mcp.json.Ab3dE9.tmp"), "x").unwrap();
        fs_err::write(backups.join("20260101-cursor-mcp.json"), "keep").unwrap();
        fs_err::write(dir.path().join(".state.json.x1y2z3.tmp"), "x").unwrap();
        fs_err::write(dir.path().join("state.json"), "{}").unwrap();
        fs_err::create_dir_all(dir.path().join("runs/.r.tmp")).unwrap();
        let removed = stale_temps(&layout);
        assert_eq!(removed.len(), 2, "{removed:?}");
        assert!(backups.join("20260101-cursor-mcp.json").is_file());
        assert!(dir.path().join("state.json").is_file());
        assert!(
            dir.path().join("runs/.r.tmp").is_dir(),
            "runs/ is the server's"
        );
    }
}
