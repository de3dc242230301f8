//! `[[workflow.artifact]]`: ids, paths or globs inside the output directory, counts and
//! media types.

use std::collections::BTreeSet;

use super::checker::{Checker, Seg};
use super::names::{check_id, is_safe_relative};
use crate::limits::Limits;
use crate::manifest::types::Workflow;

pub(super) fn check_artifacts(c: &mut Checker<'_>, i: usize, wf: &Workflow, limits: Limits) {
    let mut ids = BTreeSet::new();
    if wf.artifacts.len() > limits.max_artifacts as usize {
        c.error(
            &[Seg::Key("workflow"), Seg::Index(i), Seg::Key("artifact")],
            format!(
                "{} artifacts declared, more than max_artifacts = {}",
                wf.artifacts.len(),
                limits.max_artifacts
            ),
            None,
        );
    }
    for (j, a) in wf.artifacts.iter().enumerate() {
        let at = |k| {
            [
                Seg::Key("workflow"),
                Seg::Index(i),
                Seg::Key("artifact"),
                Seg::Index(j),
                Seg::Key(k),
            ]
        };
        check_id(c, &at("id"), "artifact", &a.id, &mut ids, "", None);
        if !is_safe_relative(&a.path) {
            c.error(
                &at("path"),
                format!(
                    "'{}' must be a relative path inside the output directory",
                    a.path
                ),
                None,
            );
        } else if a.is_glob() {
            if let Err(e) = globset::GlobBuilder::new(&a.path)
                .literal_separator(true)
                .build()
            {
                c.error(&at("path"), format!("invalid glob: {e}"), None);
            }
        } else if a.min_count.is_some() || a.max_count.is_some() {
            c.error(
                &at("min_count"),
                "min_count and max_count apply only to glob paths",
                None,
            );
        }
        if let (Some(min), Some(max)) = (a.min_count, a.max_count)
            && min > max
        {
            c.error(
                &at("max_count"),
                format!("max_count {max} is below min_count {min}"),
                None,
            );
        }
        if !a.media_type.contains('/') {
            c.error(
                &at("media_type"),
                format!("'{}' is not a media type", a.media_type),
                Some("e.g. \"application/json\" or \"text/csv\"".into()),
            );
        }
        if !a.json_keys.is_empty() && !a.media_type.contains("json") {
            c.error(
                &at("json_keys"),
                "json_keys apply only to JSON artifacts",
                None,
            );
        }
    }
}
