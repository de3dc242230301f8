//! `[workflow.sandbox]`: the paths a workflow's CLI is granted beyond the sandbox's defaults.

use std::path::{Component, Path};

use super::checker::{Checker, Seg};
use crate::manifest::types::Manifest;

/// Every workflow's declared grants: each path absolute or `~/…`, without `..`, and not the
/// whole file system or the whole home (that would be no sandbox at all).
pub(super) fn check_sandboxes(c: &mut Checker<'_>, m: &Manifest) {
    for (i, wf) in m.workflows.iter().enumerate() {
        let Some(sandbox) = &wf.sandbox else {
            continue;
        };
        for (key, paths) in [
            ("read_only", &sandbox.read_only),
            ("read_write", &sandbox.read_write),
        ] {
            for (j, path) in paths.iter().enumerate() {
                if let Some(problem) = grant_problem(path) {
                    c.error(
                        &[
                            Seg::Key("workflow"),
                            Seg::Index(i),
                            Seg::Key("sandbox"),
                            Seg::Key(key),
                            Seg::Index(j),
                        ],
                        format!("'{path}' {problem}"),
                        Some(
                            "grant the narrowest path the CLI needs, absolute or under the home, \
                             e.g. \"~/.cache/tool\" or \"/opt/tool/share\""
                                .into(),
                        ),
                    );
                }
            }
        }
    }
}

/// Why `path` cannot be granted, or `None` when it can.
fn grant_problem(path: &str) -> Option<&'static str> {
    // `~/x` is relative to the home the run sees; the rest of the path is checked the same.
    let rest = match path.strip_prefix("~/") {
        Some(rest) => rest,
        None if path.starts_with('~') => {
            return Some("must be absolute or start with ~/ (another user's home is not granted)");
        }
        None if !path.starts_with('/') && !Path::new(path).is_absolute() => {
            return Some("must be absolute or start with ~/");
        }
        None => path,
    };
    let components = Path::new(rest).components();
    if components.clone().any(|c| c == Component::ParentDir) {
        return Some("must not contain '..'");
    }
    if !components
        .into_iter()
        .any(|c| matches!(c, Component::Normal(_)))
    {
        return Some("grants the whole file system or the whole home");
    }
    None
}
