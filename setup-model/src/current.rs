//! The `current` pointer: which version is active.
//!
//! On Unix it is a relative symlink `current -> versions/<semver>`, switched atomically by
//! creating the new link under a temporary name and renaming it over the old one (rename
//! replaces a symlink in one step), then flushing the directory. On Windows, where symlinks
//! need privileges, it is a pointer file holding `versions\<semver>`, replaced with an atomic
//! write, and the stable launcher directory `<root>\bin` is refreshed from that version.

use std::path::Path;

use semver::Version;

use crate::host::Platform;
use crate::layout::Layout;

/// The active version, if `current` exists and names one.
pub fn read(layout: &Layout) -> Option<Version> {
    let current = layout.current();
    let target = match fs_err::symlink_metadata(&current) {
        Ok(meta) if meta.file_type().is_symlink() => fs_err::read_link(&current).ok()?,
        Ok(meta) if meta.is_file() => {
            let bytes = scimcp_core::fs::read_regular(&current, 4096).ok()??;
            String::from_utf8(bytes).ok()?.trim().into()
        }
        _ => return None,
    };
    let name = target.file_name()?.to_string_lossy().into_owned();
    let name = name.rsplit(['\\', '/']).next().unwrap_or(&name).to_string();
    Version::parse(&name).ok()
}

/// Whether `current` resolves to a version with its server binary in place.
pub fn is_healthy(layout: &Layout, version: &Version) -> bool {
    read(layout).as_ref() == Some(version)
        && layout.stable_server_binary().is_file()
        && layout
            .version_dir(version)
            .join("bin")
            .join(format!("scimcp{}", layout.platform.exe_suffix()))
            .is_file()
}

/// Point `current` at `version`, atomically.
pub fn switch(layout: &Layout, version: &Version) -> std::io::Result<()> {
    let rel = Path::new("versions").join(version.to_string());
    match layout.platform {
        Platform::Windows => {
            let text = format!("{}\n", rel.display());
            scimcp_core::fs::write_atomic(
                &layout.current(),
                text.as_bytes(),
                scimcp_core::fs::Privacy::KeepExisting,
            )
            .map_err(std::io::Error::other)?;
            refresh_launchers(layout, version)
        }
        _ => switch_symlink(layout, &rel),
    }
}

#[cfg(unix)]
fn switch_symlink(layout: &Layout, rel: &Path) -> std::io::Result<()> {
    let tmp = layout
        .root
        .join(format!(".current.{}.tmp", std::process::id()));
    let _ = fs_err::remove_file(&tmp);
    fs_err::os::unix::fs::symlink(rel, &tmp)?;
    let current = layout.current();
    // A real directory (never written by scimcp) cannot be replaced by rename.
    if fs_err::symlink_metadata(&current).is_ok_and(|m| m.is_dir()) {
        fs_err::remove_dir_all(&current)?;
    }
    fs_err::rename(&tmp, &current)?;
    scimcp_core::fs::sync_dir(&layout.root)
}

#[cfg(not(unix))]
fn switch_symlink(_layout: &Layout, _rel: &Path) -> std::io::Result<()> {
    Err(std::io::Error::other("symlinks are only used on Unix"))
}

/// Windows: copy the version's binaries into `<root>\bin`. A running `scimcp.exe` cannot be
/// overwritten but can be renamed, so the old file is moved aside first.
fn refresh_launchers(layout: &Layout, version: &Version) -> std::io::Result<()> {
    let from = layout.version_dir(version).join("bin");
    let to = layout.launcher_dir();
    fs_err::create_dir_all(&to)?;
    for entry in fs_err::read_dir(&from)? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        let staged = to.join(format!(".{}.new", entry.file_name().to_string_lossy()));
        fs_err::copy(entry.path(), &staged)?;
        if target.exists() {
            let aside = to.join(format!(
                ".{}.{}.old",
                entry.file_name().to_string_lossy(),
                std::process::id()
            ));
            fs_err::rename(&target, &aside)?;
            let _ = fs_err::remove_file(&aside);
        }
        fs_err::rename(&staged, &target)?;
    }
    Ok(())
}
