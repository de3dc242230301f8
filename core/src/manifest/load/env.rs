//! An `env` table (`[runtime.env]`, a workflow's `env`): which variables and values a
//! manifest may set.

use std::collections::BTreeMap;

use super::checker::{Checker, Seg};
use crate::manifest::template::{ABSOLUTE_RUN_VALUES, Template};

/// Every variable of an `env` table: a portable name the suite does not own, a bounded
/// value. The error sits on the table and names the variable (its key is data, not a field).
pub(super) fn check_env(c: &mut Checker<'_>, at: &[Seg], env: &BTreeMap<String, String>) {
    for (name, value) in env {
        match Template::parse(value) {
            Err(e) => c.error(at, format!("the value of {name}: {e}"), None),
            Ok(t) => {
                for p in t.placeholder_parts() {
                    if !ABSOLUTE_RUN_VALUES.contains(&p.name.as_str()) || !p.filters.is_empty() {
                        c.error(
                            at,
                            format!(
                                "the value of {name} uses {{{}}}; environment values may use only {{work_dir}} and {{state_dir}}",
                                p.name
                            ),
                            Some("e.g. HOME = \"{work_dir}/home\"; parameters never reach the environment".into()),
                        );
                    }
                }
            }
        }
        if let Some(problem) = crate::run_env::manifest_env_problem(name, value) {
            c.error(
                at,
                problem,
                Some("env sets fixed variables for the CLI, e.g. OMP_NUM_THREADS = \"1\" or TERM = \"dumb\"".into()),
            );
        }
    }
}
