//! The preflight's steps: their ids, in run order, and their titles. Below the rest of
//! `preflight`, so the run and its errors (which list the ids) share them.

/// Every step id, in run order.
pub const STEPS: &[&str] = &[
    "checkout",
    "tag",
    "versions",
    "lint",
    "tests",
    "bundle",
    "signature",
    "lifecycle",
    "parity",
];

/// The step's title in the report and the progress lines.
pub(super) fn title(id: &str) -> &'static str {
    match id {
        "checkout" => "clean checkout",
        "tag" => "annotated tag at HEAD",
        "versions" => "crate, adapter and changelog versions",
        "lint" => "cargo fmt and clippy -D warnings",
        "tests" => "the test suite",
        "bundle" => "bundles reproducible and clean",
        "signature" => "sign, verify, tamper check",
        "lifecycle" => "install, doctor, repair, upgrade, rollback, uninstall",
        "parity" => "the parity gate",
        _ => "",
    }
}
