//! The shapes of what a manifest names: adapter names, ids (unique where they must be),
//! relative paths that stay inside their base, exact requirement pins.

use std::collections::BTreeSet;

use super::checker::{Checker, Seg};

pub(super) fn is_adapter_name(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some('a'..='z'))
        && chars.all(|c| matches!(c, 'a'..='z' | '0'..='9' | '-'))
        && s.len() <= 64
}

pub(super) fn is_id(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some('a'..='z'))
        && chars.all(|c| matches!(c, 'a'..='z' | '0'..='9' | '_'))
        && s.len() <= 64
}

/// An id a manifest gives one of its parts (`what`: workflow, artifact, input, …): it must be
/// an id and the first of its name among `seen`; `scope` ends the duplicate's message (e.g.
/// " in this workflow") and `duplicate_hint` says what the duplicate would break.
pub(super) fn check_id<'a>(
    c: &mut Checker<'_>,
    at: &[Seg],
    what: &str,
    id: &'a str,
    seen: &mut BTreeSet<&'a str>,
    scope: &str,
    duplicate_hint: Option<&str>,
) {
    if !is_id(id) {
        c.error(
            at,
            format!("'{id}' is not a valid {what} id"),
            Some("use lower-case letters, digits and '_', starting with a letter".into()),
        );
    } else if !seen.insert(id) {
        c.error(
            at,
            format!("{what} id '{id}' is declared twice{scope}"),
            duplicate_hint.map(str::to_string),
        );
    }
}

/// A relative path that stays inside its base: no root, no `..`, no empty segments.
pub(super) fn is_safe_relative(p: &str) -> bool {
    !p.is_empty()
        && !p.starts_with(['/', '\\'])
        && !p.contains(':')
        && p.split(['/', '\\'])
            .all(|seg| !seg.is_empty() && seg != "..")
}

/// `name==version` with a PEP 508-style name and no other operators.
pub(super) fn is_exact_pin(req: &str) -> bool {
    crate::pins::Pin::parse(req).is_some()
}
