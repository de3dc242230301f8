//! `[datasets]`: where the built-in datasets come from and which files they are.

use super::checker::{Checker, Seg};
use super::names::is_safe_relative;
use crate::manifest::template::Template;
use crate::manifest::types::{DatasetsSpec, Manifest};

/// `[datasets]`: an export command or a directory of the runtime's package, not both.
pub(super) fn check_datasets(c: &mut Checker<'_>, m: &Manifest, ds: &DatasetsSpec) {
    match (ds.export.is_empty(), &ds.package_dir) {
        (true, None) => c.error(
            &[Seg::Key("datasets")],
            "[datasets] must say where the built-in datasets come from",
            Some("either export = [\"datasets\", \"export\", \"{output_dir}\"] (a command that writes them) or package_dir = \"data\" (files inside the runtime's package)".into()),
        ),
        (false, Some(_)) => c.error(
            &[Seg::Key("datasets"), Seg::Key("package_dir")],
            "give either export or package_dir, not both",
            None,
        ),
        (true, Some(dir)) => {
            if !is_safe_relative(dir) {
                c.error(
                    &[Seg::Key("datasets"), Seg::Key("package_dir")],
                    format!("'{dir}' must be a relative path inside the package's directory"),
                    None,
                );
            }
            if m.runtime.package.is_none() {
                c.error(
                    &[Seg::Key("datasets"), Seg::Key("package_dir")],
                    "package_dir needs [runtime] package, whose directory it is relative to",
                    None,
                );
            }
        }
        (false, None) => {}
    }
    for (id, file) in &ds.files {
        let ok_id = !id.is_empty()
            && id
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-');
        if !ok_id || !is_safe_relative(file) || file.contains('/') {
            c.error(
                &[Seg::Key("datasets"), Seg::Key("files")],
                format!("built-in dataset {id:?} = {file:?}: ids are [a-z0-9_-], files are names in package_dir"),
                None,
            );
        }
    }
    if !ds.files.is_empty() && ds.package_dir.is_none() {
        c.error(
            &[Seg::Key("datasets"), Seg::Key("files")],
            "files names data files of package_dir; with export, the command decides the files",
            None,
        );
    }
    for (i, arg) in ds.export.iter().enumerate() {
        let path = [Seg::Key("datasets"), Seg::Key("export"), Seg::Index(i)];
        match Template::parse(arg) {
            Err(e) => c.error(&path, e.to_string(), None),
            Ok(t) => {
                for p in t.placeholders() {
                    if p != "output_dir" {
                        c.error(
                            &path,
                            format!("placeholder {{{p}}} is not available here"),
                            Some("the dataset export command may use only {output_dir}".into()),
                        );
                    }
                }
            }
        }
    }
}
