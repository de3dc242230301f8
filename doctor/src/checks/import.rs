//! `runtime.import`: the adapter's complete scientific import path imports in the runtime,
//! within a time limit; a failure names the module and the error it raised.

use std::collections::BTreeMap;

use crate::check::CheckResult;
use crate::context::Context;

/// Imports each module on its own, so one failure does not hide the next, and prints one
/// JSON line `{module: null | "ErrorType: message"}` last (a module may print on import).
const IMPORT_SCRIPT: &str = r#"
import importlib, json, sys
res = {}
for m in sys.argv[1:]:
    try:
        importlib.import_module(m)
        res[m] = None
    except BaseException as e:
        res[m] = ("%s: %s" % (type(e).__name__, e)).strip()
sys.stdout.write("\n" + json.dumps(res) + "\n")
"#;

pub fn check(ctx: &Context, id: &str, adapter: &str) -> CheckResult {
    let manifest = match ctx.manifest(adapter) {
        Ok(m) => m,
        Err(e) => return CheckResult::skipped(id, e.to_string()),
    };
    let modules = &manifest.runtime.import_check;
    if modules.is_empty() {
        return CheckResult::ok(id, "the adapter declares no import check");
    }
    let runtime = match ctx.runtime(id, adapter) {
        Ok(r) => r,
        Err(result) => return *result,
    };
    if !runtime.interpreter.is_file() {
        return CheckResult::skipped(id, "the interpreter is missing (see runtime.interpreter)");
    }
    let limit = ctx.options.import_timeout;
    let mut cmd = scimcp_process::python_command(&runtime.interpreter);
    cmd.args(["-c", IMPORT_SCRIPT]).args(modules);
    let fix = |r: CheckResult| r.remedy("scimcp-setup repair").fixable();
    let out = match scimcp_process::run(
        scimcp_process::Step::new("the import check", cmd).timeout(limit),
    ) {
        Ok(out) => out,
        Err(e) => {
            return fix(CheckResult::fail(
                id,
                format!("cannot run {}: {e}", runtime.interpreter.display()),
            ));
        }
    };
    if out.timed_out {
        return fix(CheckResult::fail(
            id,
            format!(
                "importing {} did not finish within {} s",
                modules.join(", "),
                limit.as_secs()
            ),
        ));
    }
    let answer: Option<BTreeMap<String, Option<String>>> = out
        .stdout
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .and_then(|l| serde_json::from_str(l).ok());
    let Some(answer) = answer.filter(|_| out.success()) else {
        // The interpreter died on an import (a crashing native extension): its stderr is
        // the only evidence.
        return fix(CheckResult::fail(
            id,
            format!(
                "the interpreter exited ({}) while importing {}",
                out.code
                    .map_or_else(|| "killed by a signal".to_string(), |c| format!("code {c}")),
                modules.join(", ")
            ),
        )
        .details(out.stderr_tail(8)));
    };
    let failed: Vec<(String, String)> = modules
        .iter()
        .filter_map(|m| match answer.get(m) {
            Some(None) => None,
            Some(Some(err)) => Some((m.clone(), err.clone())),
            None => Some((m.clone(), "not attempted".to_string())),
        })
        .collect();
    let secs = out.took.as_secs_f64();
    match failed.first() {
        // Every run of the adapter pays this import: a heavy one is worth knowing about, and
        // one close to the limit will soon fail.
        None if out.took > limit / 2 => CheckResult::warn(
            id,
            format!(
                "{} import in {secs:.1} s, more than half the {} s limit (every run pays this)",
                modules.join(", "),
                limit.as_secs()
            ),
        )
        .remedy(format!(
            "scimcp-doctor --import-timeout {} if the disk is just slow; a second run is faster \
             once the files are cached",
            limit.as_secs() * 2
        )),
        None => CheckResult::ok(id, format!("{} import in {secs:.1} s", modules.join(", "))),
        Some((module, error)) => {
            let details = if failed.len() > 1 {
                failed.iter().map(|(m, e)| format!("{m}: {e}")).collect()
            } else {
                Vec::new()
            };
            fix(CheckResult::fail(id, format!("`import {module}` fails: {error}")).details(details))
        }
    }
}
