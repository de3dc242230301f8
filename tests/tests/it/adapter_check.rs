//! `scimcp adapter check` reports every structural problem of a manifest in one run, each
//! with its file, line, column, field and hint, as a maintainer needs to fix them all at once.

use serde_json::Value;

const THREE_MISTAKES: &str = r#"schema_version = 1
name = "demo"
version = "0.2.0"
summary = "A demo adapter."

[runtime]
kind = "executable"
executable = "demo"
launch = "--fast"

[[workflow]]
id = "fit"
summary = "Fit."
parameters = "fit.json"
argv = ["{dataset}"]
datasets = ["a", "b"]

[[workflow.artifact]]
id = "out"
path = "out.txt"
media_type = "text/plain"
base = "stdout_stream"
"#;

fn check(manifest: &std::path::Path, json: bool) -> std::process::Output {
    let mut cmd = std::process::Command::new(scimcp_e2e::sibling_binary("scimcp").unwrap());
    cmd.args(["adapter", "check"]).arg(manifest);
    if json {
        cmd.arg("--json");
    }
    cmd.env("SCIMCP_LOG", "warn").output().unwrap()
}

#[test]
fn adapter_check_reports_three_structural_mistakes_in_one_run() {
    let dir = tempfile::tempdir().unwrap();
    fs_err::write(dir.path().join("fit.json"), r#"{"type": "object"}"#).unwrap();
    let manifest = dir.path().join("demo.toml");
    fs_err::write(&manifest, THREE_MISTAKES).unwrap();

    let out = check(&manifest, true);
    assert_eq!(out.status.code(), Some(1));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["valid"], false);
    let errors = report["errors"].as_array().unwrap();
    let placed: Vec<(String, u64, u64)> = errors
        .iter()
        .map(|e| {
            (
                e["field"].as_str().unwrap().to_string(),
                e["line"].as_u64().unwrap(),
                e["column"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        placed,
        [
            ("runtime.launch".to_string(), 9, 10),
            ("workflow[0].datasets".to_string(), 16, 1),
            ("workflow[0].artifact[0].base".to_string(), 22, 8),
        ],
        "{report:#}"
    );
    assert!(errors.iter().all(|e| {
        e["file"].as_str().is_some_and(|f| f.ends_with("demo.toml"))
            && e["hint"]
                .as_str()
                .is_some_and(|h| h.contains("adapter-manifest.md"))
    }));

    // The human form says the same, with the count.
    let out = check(&manifest, false);
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stderr);
    assert!(
        text.contains("demo.toml:9:10: runtime.launch: invalid type"),
        "{text}"
    );
    assert!(
        text.contains("demo.toml:16:1: workflow[0].datasets: unknown field `datasets`"),
        "{text}"
    );
    assert!(
        text.contains(
            "demo.toml:22:8: workflow[0].artifact[0].base: unknown variant `stdout_stream`"
        ),
        "{text}"
    );
    assert!(text.contains("error: 3 problem(s)"), "{text}");
    assert!(out.stdout.is_empty(), "nothing on stdout in the human form");
}
