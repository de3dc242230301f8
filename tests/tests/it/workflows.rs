//! The release and CI workflows keep their gates: a later edit cannot silently remove one.
//! Reads `.github/workflows/*.yml` as data and asserts the structural rules that matter.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

fn workflows() -> BTreeMap<String, Value> {
    let dir = scimcp_e2e::workspace_root().join(".github/workflows");
    let mut out = BTreeMap::new();
    for entry in fs_err::read_dir(&dir).unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.ends_with(".yml") {
            let text = fs_err::read_to_string(entry.path()).unwrap();
            let value: Value =
                serde_norway::from_str(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
            out.insert(name, value);
        }
    }
    out
}

fn jobs(wf: &Value) -> BTreeMap<String, Value> {
    wf["jobs"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

fn needs(job: &Value) -> Vec<String> {
    match &job["needs"] {
        Value::String(s) => vec![s.clone()],
        Value::Array(a) => a
            .iter()
            .filter_map(|v| v.as_str().map(String::from))
            .collect(),
        _ => Vec::new(),
    }
}

/// Every job `job` waits for, directly or not.
fn transitive_needs(all: &BTreeMap<String, Value>, job: &str) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    let mut stack = vec![job.to_string()];
    while let Some(j) = stack.pop() {
        for n in needs(&all[&j]) {
            if seen.insert(n.clone()) {
                stack.push(n);
            }
        }
    }
    seen
}

const RELEASE_FILES: &[&str] = &[
    "release.yml",
    "release-gate.yml",
    "parity.yml",
    "bundle-sign.yml",
    "verify-signed-install.yml",
];

#[test]
fn publication_waits_for_every_gate() {
    let all = workflows();
    let release = jobs(&all["release.yml"]);
    let before_announce = transitive_needs(&release, "announce");
    for gate in [
        "custom-release-gate",
        "custom-parity",
        "custom-bundle-sign",
        "host",
    ] {
        assert!(
            before_announce.contains(gate),
            "announce (the GitHub Release) must wait for {gate}: {before_announce:?}"
        );
    }
    let host_if = release["host"]["if"].as_str().unwrap();
    assert!(
        host_if.contains("needs.custom-bundle-sign.result == 'success'"),
        "{host_if}"
    );
    assert!(
        host_if.contains("needs.build-local-artifacts.result == 'success'"),
        "{host_if}"
    );
    assert!(
        release["announce"]["if"]
            .as_str()
            .unwrap()
            .contains("needs.host.result == 'success'")
    );
    // The release is created in announce only (github-release = "announce").
    let host_steps = serde_json::to_string(&release["host"]["steps"]).unwrap();
    assert!(!host_steps.contains("gh release create"));
    // Binaries are built only after the preflight and the parity gate passed.
    let build = needs(&release["build-local-artifacts"]);
    assert!(
        build.contains(&"custom-release-gate".into()) && build.contains(&"custom-parity".into()),
        "{build:?}"
    );
    // The signed install on three OSes runs inside bundle-sign, after signing.
    let sign = jobs(&all["bundle-sign.yml"]);
    assert_eq!(
        needs(&sign["verify-signed-install"]),
        vec!["bundle-sign".to_string()]
    );
    assert!(
        sign["verify-signed-install"]["uses"]
            .as_str()
            .unwrap()
            .ends_with("verify-signed-install.yml")
    );
    // What `scimcp-setup upgrade` looks for on the release: each bundle with its signature,
    // uploaded as `artifacts-*` so dist's announce job attaches them to the GitHub release.
    let upload = sign["bundle-sign"]["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| {
            s["uses"]
                .as_str()
                .is_some_and(|u| u.starts_with("actions/upload-artifact@"))
        })
        .expect("bundle-sign uploads its bundles");
    assert!(
        upload["with"]["name"]
            .as_str()
            .unwrap()
            .starts_with("artifacts-")
    );
    let paths = upload["with"]["path"].as_str().unwrap();
    for pattern in ["*.zip", "*.sigstore.json", "RELEASE.json"] {
        assert!(paths.contains(pattern), "{pattern} not uploaded: {paths}");
    }
    // After publication, the published release is installed from GitHub on three OSes.
    let smoke = &release["custom-post-release-smoke"];
    assert!(needs(smoke).contains(&"announce".to_string()), "{smoke:#}");
    let published = jobs(&all["post-release-smoke.yml"]);
    let oses = serde_json::to_string(&published["smoke"]["strategy"]["matrix"]["os"]).unwrap();
    for os in ["ubuntu", "macos", "windows"] {
        assert!(oses.contains(os), "{oses}");
    }
    let install = jobs(&all["verify-signed-install.yml"]);
    let oses = serde_json::to_string(&install["install"]["strategy"]["matrix"]["os"]).unwrap();
    for os in ["ubuntu", "macos", "windows"] {
        assert!(oses.contains(os), "{oses}");
    }
}

#[test]
fn only_signing_and_attestation_jobs_get_an_oidc_token() {
    let allowed: BTreeSet<(&str, &str)> = [
        ("release.yml", "build-local-artifacts"),
        ("release.yml", "custom-bundle-sign"),
        ("bundle-sign.yml", "bundle-sign"),
    ]
    .into_iter()
    .collect();
    for (file, wf) in workflows() {
        assert_ne!(
            wf["permissions"]["id-token"], "write",
            "{file}: id-token at the top level"
        );
        for (name, job) in jobs(&wf) {
            if job["permissions"]["id-token"] == "write" {
                assert!(
                    allowed.contains(&(file.as_str(), name.as_str())),
                    "{file}: job {name} may not request an OIDC token"
                );
            }
        }
    }
}

#[test]
fn hygiene_rules_hold_in_every_workflow() {
    for (file, wf) in workflows() {
        let text = fs_err::read_to_string(
            scimcp_e2e::workspace_root()
                .join(".github/workflows")
                .join(&file),
        )
        .unwrap();
        assert!(
            !text.contains("pull_request_target"),
            "{file}: pull_request_target is banned"
        );
        assert!(
            !text.contains("allow-unsigned") && !text.contains("--unsigned"),
            "{file}: no unsigned override, ever"
        );
        if file != "release.yml" {
            // release.yml is dist's, byte for byte (see .github/zizmor.yml for what dist sets).
            assert_eq!(
                wf["permissions"],
                serde_json::json!({}),
                "{file}: top-level permissions must be {{}}"
            );
            for (name, job) in jobs(&wf) {
                assert!(
                    job.get("permissions").is_some(),
                    "{file}: job {name} must declare its permissions"
                );
            }
        }
        for line in text.lines() {
            let line = line.trim().trim_start_matches("- ");
            if let Some(uses) = line.strip_prefix("uses:") {
                let uses = uses.split('#').next().unwrap_or_default().trim();
                let local = uses.starts_with("./") || uses.starts_with("$/");
                let pinned = uses.split_once('@').is_some_and(|(_, r)| {
                    r.len() == 40 && r.chars().all(|c| c.is_ascii_hexdigit())
                });
                assert!(
                    local || pinned,
                    "{file}: `{uses}` must be pinned to a commit SHA"
                );
            }
        }
        if RELEASE_FILES.contains(&file.as_str()) {
            assert!(
                !text.contains("actions/cache")
                    && !text.contains("rust-cache")
                    && !text.contains("cache:"),
                "{file}: caches are off in release jobs"
            );
        }
    }
}

#[test]
fn parity_runs_on_the_tag() {
    let all = workflows();
    let release = &all["release.yml"];
    assert!(
        release["on"]["push"]["tags"].is_array(),
        "the release workflow runs on tags"
    );
    assert!(jobs(release).contains_key("custom-parity"));
    let parity = jobs(&all["parity.yml"]);
    let job = &parity["parity"];
    assert!(job["if"].as_str().unwrap().contains("refs/tags/"));
    let steps = serde_json::to_string(&job["steps"]).unwrap();
    assert!(
        steps.contains("scimcp-parity check")
            && steps.contains("--shard")
            && !steps.contains("--quick"),
        "{steps}"
    );
    // The same snapshots gate the tag on every OS a bundle is built for.
    let oses: Vec<&str> = job["strategy"]["matrix"]["os"]
        .as_array()
        .expect("parity runs on an OS matrix")
        .iter()
        .filter_map(|v| v.as_str())
        .collect();
    for os in ["ubuntu", "macos", "windows"] {
        assert!(oses.iter().any(|o| o.starts_with(os)), "{os} in {oses:?}");
    }
    assert_eq!(job["runs-on"], "${{ matrix.os }}");
    let gate =
        serde_json::to_string(&jobs(&all["release-gate.yml"])["preflight"]["steps"]).unwrap();
    assert!(
        gate.contains("scimcp-release preflight") && !gate.contains("--quick"),
        "the tag gate is the full preflight"
    );
}
