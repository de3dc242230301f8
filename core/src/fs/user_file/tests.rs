use std::os::unix::fs::{MetadataExt, PermissionsExt};

use super::*;

#[test]
fn a_link_is_written_through_and_stays_a_link() {
    let dir = tempfile::tempdir().unwrap();
    let dotfiles = dir.path().join("dotfiles");
    fs_err::create_dir_all(&dotfiles).unwrap();
    let real = dotfiles.join("mcp.json");
    fs_err::write(&real, b"old").unwrap();
    fs_err::set_permissions(&real, std::fs::Permissions::from_mode(0o640)).unwrap();
    let link = dir.path().join("config.json");
    fs_err::os::unix::fs::symlink("dotfiles/mcp.json", &link).unwrap();
    let plan = plan_replace(&link).unwrap();
    assert!(plan.through_link());
    assert_eq!(plan.target, fs_err::canonicalize(&real).unwrap());
    plan.write(b"new", || {}).unwrap();
    assert!(
        fs_err::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(fs_err::read(&real).unwrap(), b"new");
    assert_eq!(fs_err::metadata(&real).unwrap().mode() & 0o777, 0o640);
    let left: Vec<_> = fs_err::read_dir(&dotfiles).unwrap().flatten().collect();
    assert_eq!(left.len(), 1, "no temp file left");
}

#[test]
fn read_only_files_and_dangling_links_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("ro.json");
    fs_err::write(&file, b"{}").unwrap();
    fs_err::set_permissions(&file, std::fs::Permissions::from_mode(0o444)).unwrap();
    let err = plan_replace(&file).unwrap_err();
    assert!(matches!(err, WriteError::ReadOnly { .. }), "{err}");
    let dangling = dir.path().join("dangling.json");
    fs_err::os::unix::fs::symlink("nowhere.json", &dangling).unwrap();
    let err = plan_replace(&dangling).unwrap_err();
    assert!(matches!(err, WriteError::DanglingLink { .. }), "{err}");
    let new = plan_replace(&dir.path().join("new.json")).unwrap();
    new.write(b"{}", || {}).unwrap();
    let mode = fs_err::metadata(dir.path().join("new.json"))
        .unwrap()
        .mode();
    assert_eq!(mode & 0o777, 0o644);
}

#[test]
fn another_users_file_keeps_its_owner() {
    let dir = tempfile::tempdir().unwrap();
    if fs_err::metadata(dir.path()).unwrap().uid() != 0 {
        return; // only root can give a file away
    }
    let file = dir.path().join("theirs.json");
    fs_err::write(&file, b"{}").unwrap();
    std::os::unix::fs::chown(&file, Some(1234), Some(2345)).unwrap();
    plan_replace(&file)
        .unwrap()
        .write(b"{\"a\":1}", || {})
        .unwrap();
    let meta = fs_err::metadata(&file).unwrap();
    assert_eq!((meta.uid(), meta.gid()), (1234, 2345));
}
