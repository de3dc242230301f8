//! `[limits]`: a manifest may tighten the suite's limits, never loosen them.

use super::checker::{Checker, Seg};
use crate::limits::Limits;
use crate::manifest::types::Manifest;

pub(super) fn check_limits(c: &mut Checker<'_>, m: &Manifest) {
    let effective = m.effective_limits();
    let ceilings = Limits::DEFAULT.entries();
    for ((name, value), (_, ceiling)) in effective.entries().into_iter().zip(ceilings) {
        let key: &'static str = name;
        if value == 0 {
            c.error(
                &[Seg::Key("limits"), Seg::Key(key)],
                format!("{name} must be at least 1"),
                None,
            );
        } else if value > ceiling {
            c.error(
                &[Seg::Key("limits"), Seg::Key(key)],
                format!("{name} = {value} exceeds the suite ceiling {ceiling}"),
                Some("a manifest may tighten a limit, never loosen it".into()),
            );
        }
    }
    if effective.max_concurrent_runs > effective.max_pending_runs {
        c.error(
            &[Seg::Key("limits"), Seg::Key("max_concurrent_runs")],
            "max_concurrent_runs cannot exceed max_pending_runs",
            None,
        );
    }
}
