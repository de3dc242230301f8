//! `[[workflow]]`: at least one; each one's id, summary and schema path, then each of its
//! parts in turn (artifacts, inputs, outputs, env, success, progress, resources, input
//! files).

use std::collections::BTreeSet;

use super::artifacts::check_artifacts;
use super::checker::{Checker, Seg};
use super::env::check_env;
use super::input_files::check_input_files;
use super::names::{check_id, is_safe_relative};
use super::resources::check_resources;
use super::{inputs, outputs};
use crate::manifest::types::{Manifest, SuccessSpec};

pub(super) fn check_workflows(c: &mut Checker<'_>, m: &Manifest) {
    if m.workflows.is_empty() {
        c.error(
            &[Seg::Key("workflow")],
            "the manifest declares no workflow",
            Some("add at least one [[workflow]] table".into()),
        );
    }
    let mut seen = BTreeSet::new();
    for (i, wf) in m.workflows.iter().enumerate() {
        let at = |k| [Seg::Key("workflow"), Seg::Index(i), Seg::Key(k)];
        check_id(c, &at("id"), "workflow", &wf.id, &mut seen, "", None);
        if wf.summary.trim().is_empty() || wf.summary.len() > 500 {
            c.error(&at("summary"), "summary must be 1 to 500 characters", None);
        }
        if !is_safe_relative(&wf.parameters) {
            c.error(
                &at("parameters"),
                format!(
                    "'{}' must be a relative path inside the manifest's directory",
                    wf.parameters
                ),
                None,
            );
        }
        check_artifacts(c, i, wf, m.effective_limits());
        inputs::check_inputs(c, i, wf);
        outputs::check_outputs(c, i, wf);
        check_env(
            c,
            &[Seg::Key("workflow"), Seg::Index(i), Seg::Key("env")],
            &wf.env,
        );
        if let Some(success) = &wf.success {
            check_success(c, i, success);
        }
        if let Some(progress) = &wf.progress
            && !c.embedded
            && let Err(problem) = progress.compile()
        {
            c.error(
                &[
                    Seg::Key("workflow"),
                    Seg::Index(i),
                    Seg::Key("progress"),
                    Seg::Key("pattern"),
                ],
                problem.to_string(),
                Some(
                    "e.g. pattern = '^epoch (?P<done>\\d+)/(?P<total>\\d+)' or '^stage: (?P<message>.+)$'"
                        .into(),
                ),
            );
        }
        if let Some(resources) = &wf.resources {
            check_resources(c, i, resources, m.effective_limits());
        }
        check_input_files(c, i, wf);
    }
}

/// `[workflow.success]`: a file inside the working directory and JSON pointers.
fn check_success(c: &mut Checker<'_>, i: usize, success: &SuccessSpec) {
    let at = |k| {
        [
            Seg::Key("workflow"),
            Seg::Index(i),
            Seg::Key("success"),
            Seg::Key(k),
        ]
    };
    if !is_safe_relative(&success.json) {
        c.error(
            &at("json"),
            format!(
                "'{}' must be a relative path inside the working directory",
                success.json
            ),
            None,
        );
    }
    for pointer in std::iter::once(&success.pointer).chain(&success.message) {
        if !pointer.starts_with('/') {
            c.error(
                &at("pointer"),
                format!("'{pointer}' is not a JSON pointer"),
                Some("JSON pointers start with '/', e.g. \"/status\" or \"/error/message\"".into()),
            );
        }
    }
}
