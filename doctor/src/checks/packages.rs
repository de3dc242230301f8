//! `runtime.interpreter` and `runtime.packages`: the recorded interpreter runs, satisfies the
//! adapter's requirement, and has every pin installed at exactly its version, with every file
//! its distribution recorded (pip's RECORD: present, same size) — the same test the
//! installer's `repair` applies before it reuses a runtime.

use scimcp_core::RuntimeKind;

use crate::check::CheckResult;
use crate::context::Context;

pub fn interpreter(ctx: &Context, id: &str, adapter: &str) -> CheckResult {
    let manifest = match ctx.manifest(adapter) {
        Ok(m) => m,
        Err(e) => return CheckResult::skipped(id, e.to_string()),
    };
    if manifest.runtime.kind != RuntimeKind::Python {
        return CheckResult::ok(id, "the adapter runs an executable: no interpreter needed");
    }
    let runtime = match ctx.runtime(id, adapter) {
        Ok(r) => r,
        Err(result) => return *result,
    };
    let fix = |r: CheckResult| r.remedy("scimcp-setup repair").fixable();
    if !runtime.interpreter.is_file() {
        return fix(CheckResult::fail(
            id,
            format!(
                "the recorded interpreter {} does not exist",
                runtime.interpreter.display()
            ),
        ));
    }
    let probe = match ctx.probe(adapter, runtime) {
        Ok(p) => p,
        Err(e) => return fix(CheckResult::fail(id, e.to_string())),
    };
    let requirement = manifest.runtime.python.as_deref().unwrap_or(">=3");
    let satisfied = match (
        semver::VersionReq::parse(requirement),
        semver::Version::parse(&probe.python),
    ) {
        (Ok(req), Ok(v)) => req.matches(&v),
        _ => false,
    };
    if !satisfied {
        return fix(CheckResult::fail(
            id,
            format!(
                "Python {} at {} does not satisfy the adapter's {requirement}",
                probe.python,
                runtime.interpreter.display()
            ),
        ));
    }
    if probe.python != runtime.python_version {
        return fix(CheckResult::warn(
            id,
            format!(
                "Python {} at {} satisfies {requirement}, but setup recorded {}: the base \
                 interpreter changed underneath the runtime",
                probe.python,
                runtime.interpreter.display(),
                runtime.python_version
            ),
        ));
    }
    CheckResult::ok(
        id,
        format!(
            "Python {} at {} satisfies {requirement}",
            probe.python,
            runtime.interpreter.display()
        ),
    )
}

pub fn pins(ctx: &Context, id: &str, adapter: &str) -> CheckResult {
    let manifest = match ctx.manifest(adapter) {
        Ok(m) => m,
        Err(e) => return CheckResult::skipped(id, e.to_string()),
    };
    if manifest.runtime.kind != RuntimeKind::Python {
        return CheckResult::ok(id, "the adapter runs an executable: no packages pinned");
    }
    let runtime = match ctx.runtime(id, adapter) {
        Ok(r) => r,
        Err(result) => return *result,
    };
    let probe = match ctx.probe(adapter, runtime) {
        Ok(p) => p,
        Err(_) => {
            return CheckResult::skipped(
                id,
                "the interpreter does not run (see runtime.interpreter)",
            );
        }
    };
    let pins = scimcp_core::pins::applicable(&manifest.runtime.requirements);
    let mut mismatches = Vec::new();
    for pin in &pins {
        let (name, want) = (pin.name.as_str(), pin.version.as_str());
        match probe.versions.get(name).cloned().flatten() {
            Some(got) if got == want => {}
            Some(got) => mismatches.push(format!("{name} {got} (pinned {want})")),
            None => mismatches.push(format!("{name} missing (pinned {want})")),
        }
    }
    let total = pins.len();
    let mut recorded = runtime.requirements.clone();
    let mut wanted = manifest.runtime.requirements.clone();
    recorded.sort();
    wanted.sort();
    let names: Vec<String> = pins.iter().map(|p| p.name.clone()).collect();
    let files = scimcp_setup_model::runtime_files::check_files(&runtime.dir, &names);
    let result = if !mismatches.is_empty() {
        CheckResult::fail(
            id,
            format!(
                "{} of {total} pins differ: {}",
                mismatches.len(),
                mismatches.join(", ")
            ),
        )
    } else if recorded != wanted {
        CheckResult::fail(
            id,
            "the runtime was provisioned for other pins than the active version declares",
        )
    } else if !files.problems.is_empty() {
        let n = files.problems.len();
        let shown: Vec<String> = files
            .problems
            .iter()
            .take(3)
            .map(|p| p.to_string())
            .collect();
        CheckResult::fail(
            id,
            format!(
                "{n} installed file{} of the pinned packages {} missing or changed since setup: {}{}",
                if n == 1 { "" } else { "s" },
                if n == 1 { "is" } else { "are" },
                shown.join(", "),
                if n > 3 { ", …" } else { "" }
            ),
        )
        .details(
            files
                .problems
                .iter()
                .take(50)
                .map(ToString::to_string)
                .collect(),
        )
    } else {
        CheckResult::ok(
            id,
            format!(
                "all {total} pinned packages are installed at their exact versions, their {} \
                 recorded files present",
                files.files
            ),
        )
    };
    result.remedy("scimcp-setup repair").fixable()
}
