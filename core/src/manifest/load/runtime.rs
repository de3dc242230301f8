//! `[runtime]`: the kind and what it needs, exact pins, import checks, env and native
//! requirements.

use std::collections::BTreeSet;

use super::checker::{Checker, Seg};
use super::env::check_env;
use super::names::{is_exact_pin, is_safe_relative};
use crate::manifest::types::{Manifest, RuntimeKind};

pub(super) fn check_runtime(c: &mut Checker<'_>, m: &Manifest) {
    let rt = &m.runtime;
    let at = |k| [Seg::Key("runtime"), Seg::Key(k)];
    match rt.kind {
        RuntimeKind::Python => {
            match &rt.python {
                None => c.error(
                    &at("kind"),
                    "a python runtime needs a `python` interpreter requirement",
                    Some("add e.g. python = \">=3.10, <3.14\"".into()),
                ),
                Some(req) => {
                    if semver::VersionReq::parse(req).is_err() {
                        c.error(
                            &at("python"),
                            format!("'{req}' is not a version requirement"),
                            Some(
                                "write comparators separated by commas, e.g. \">=3.10, <3.14\""
                                    .into(),
                            ),
                        );
                    }
                }
            }
            if rt.package.is_none() {
                c.error(
                    &at("kind"),
                    "a python runtime needs `package`, the distribution that forms the runtime identity",
                    None,
                );
            }
            if rt.launch.is_empty() {
                c.error(
                    &at("launch"),
                    "a python runtime needs launch arguments, e.g. [\"-m\", \"tool\"]",
                    None,
                );
            }
            if rt.executable.is_some() {
                c.error(
                    &at("executable"),
                    "`executable` applies only to kind = \"executable\"",
                    None,
                );
            }
        }
        RuntimeKind::Executable => {
            if rt.executable.as_deref().is_none_or(str::is_empty) {
                c.error(
                    &at("kind"),
                    "an executable runtime needs `executable`, the program to run",
                    None,
                );
            }
        }
    }
    if let Some(src) = &rt.package_source
        && !is_safe_relative(src)
    {
        c.error(
            &at("package_source"),
            format!("'{src}' must be a relative path inside the bundle"),
            Some("give the source tree's path relative to the bundle root, e.g. \"refsci\"".into()),
        );
    }
    let mut names = BTreeSet::new();
    for (i, req) in rt.requirements.iter().enumerate() {
        let path = [Seg::Key("runtime"), Seg::Key("requirements"), Seg::Index(i)];
        if !is_exact_pin(req) {
            c.error(
                &path,
                format!("'{req}' is not an exact pin"),
                Some("pin every requirement exactly, e.g. \"scikit-learn==1.5.2\"; a platform-only requirement takes a marker on sys_platform, platform_system or os_name, e.g. \"pywin32==306; sys_platform == 'win32'\"".into()),
            );
        } else if let Some(pin) = crate::pins::Pin::parse(req)
            && pin.marker.is_none()
        {
            // A name may appear once per platform marker, but only once without one.
            let name = pin.name.to_ascii_lowercase().replace(['_', '.'], "-");
            if !names.insert(name.clone()) {
                c.error(&path, format!("'{name}' is pinned twice"), None);
            }
        }
    }
    for (i, module) in rt.import_check.iter().enumerate() {
        let ok = !module.is_empty()
            && module.split('.').all(|part| {
                let mut ch = part.chars();
                matches!(ch.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
                    && ch.all(|c| c.is_ascii_alphanumeric() || c == '_')
            });
        if !ok {
            c.error(
                &[Seg::Key("runtime"), Seg::Key("import_check"), Seg::Index(i)],
                format!("'{module}' is not a Python module name"),
                None,
            );
        }
    }
    check_env(c, &[Seg::Key("runtime"), Seg::Key("env")], &rt.env);
    for (i, native) in rt.native.iter().enumerate() {
        for p in &native.platforms {
            if !matches!(p.as_str(), "linux" | "macos" | "windows") {
                c.error(
                    &[
                        Seg::Key("runtime"),
                        Seg::Key("native"),
                        Seg::Index(i),
                        Seg::Key("platforms"),
                    ],
                    format!("unknown platform '{p}'"),
                    Some("use linux, macos or windows".into()),
                );
            }
        }
    }
}
