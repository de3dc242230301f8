//! A real scientific CLI not written for scimcp, through the real `scimcp serve` in its
//! default sandbox mode (#29): Debian's `samtools` sorting a SAM file, with a test-only
//! manifest (tests/fixtures/samtools/samtools.toml). The sandboxed run's output is byte for
//! byte what the same `samtools` writes when started directly, by coordinate and by read
//! name; where this kernel enforces the sandbox, the run's record says the file system and
//! TCP were enforced, so the output came from a confined CLI. samtools needs no grant beyond
//! the defaults (it writes its temporary files beside its output): `adapter check --json`
//! shows the workflow granted nothing extra.
//!
//! Needs `samtools` on PATH (scripts/science-clis.sh; Debian: `apt-get install samtools`).
//! Without it the tests print why and pass, unless `SCIMCP_REQUIRE_SCIENCE_CLIS=1`.

use std::path::{Path, PathBuf};
use std::process::Command;

use scimcp_client::McpSession;
use serde_json::{Value, json};

fn have_samtools() -> bool {
    let path = std::env::var_os("PATH").unwrap_or_default();
    if std::env::split_paths(&path).any(|d| d.join("samtools").is_file()) {
        return true;
    }
    assert!(
        std::env::var_os("SCIMCP_REQUIRE_SCIENCE_CLIS").is_none(),
        "SCIMCP_REQUIRE_SCIENCE_CLIS is set but samtools is not on PATH: scripts/science-clis.sh"
    );
    #[allow(clippy::print_stderr)]
    {
        eprintln!("SKIPPED: samtools not on PATH (Debian: apt-get install samtools)");
    }
    false
}

fn fixture() -> PathBuf {
    scimcp_e2e::workspace_root().join("tests/fixtures/samtools")
}

/// A server on the samtools manifest, default sandbox mode, in a fake home; the client's SAM
/// file in its data folder.
struct Server {
    root: tempfile::TempDir,
    sam: PathBuf,
    session: McpSession,
}

impl Server {
    async fn start() -> Server {
        let root = tempfile::tempdir().unwrap();
        let home = root.path().join("home");
        let cwd = root.path().join("project");
        let data = cwd.join("data");
        fs_err::create_dir_all(&home).unwrap();
        fs_err::create_dir_all(&data).unwrap();
        let sam = data.join("unsorted.sam");
        fs_err::copy(fixture().join("examples/unsorted.sam"), &sam).unwrap();
        let session = McpSession::spawn(
            &scimcp_e2e::sibling_binary("scimcp").unwrap(),
            &[
                "serve".to_string(),
                "--adapter".into(),
                fixture().join("samtools.toml").display().to_string(),
            ],
            &[
                ("HOME".to_string(), home.display().to_string()),
                (
                    "SCIMCP_HOME".to_string(),
                    root.path().join("data-root").display().to_string(),
                ),
                ("SCIMCP_LOG".to_string(), "warn".to_string()),
            ],
            &cwd,
        )
        .await
        .unwrap();
        Server { root, sam, session }
    }

    /// The sandboxed run's `sorted.sam` and its result.
    async fn sort(&self, by_name: bool) -> (Vec<u8>, Value) {
        let request = json!({
            "workflow": "sort",
            "inputs": {"alignments": self.sam.display().to_string()},
            "parameters": {"by_name": by_name},
        });
        let (_, result) = scimcp_e2e::harness::run_on(
            &self.session,
            request,
            std::time::Duration::from_secs(120),
        )
        .await;
        assert_eq!(result["state"], "succeeded", "{result:#}");
        let out = Path::new(result["output_dir"].as_str().unwrap()).join("sorted.sam");
        (fs_err::read(out).unwrap(), result)
    }

    /// The same samtools started directly, unsandboxed, on the same file.
    fn direct(&self, by_name: bool) -> Vec<u8> {
        let out = self.root.path().join(format!("direct-{by_name}.sam"));
        let mut cmd = Command::new("samtools");
        cmd.args(["sort", "--no-PG", "-O", "sam"]);
        if by_name {
            cmd.arg("-n");
        }
        let status = cmd.arg("-o").arg(&out).arg(&self.sam).status().unwrap();
        assert!(status.success(), "direct samtools sort: {status}");
        fs_err::read(out).unwrap()
    }
}

fn state_of(record: &Value, protection: &str) -> String {
    record["protections"]
        .as_array()
        .unwrap_or_else(|| panic!("no protections in {record:#}"))
        .iter()
        .find(|p| p["protection"] == protection)
        .and_then(|p| p["state"].as_str())
        .unwrap_or_else(|| panic!("no {protection} in {record:#}"))
        .to_string()
}

#[tokio::test]
async fn samtools_sorts_inside_the_default_sandbox_exactly_as_it_does_directly() {
    if !have_samtools() {
        return;
    }
    let s = Server::start().await;
    let env = scimcp_e2e::harness::ok_on(&s.session, "get_environment", json!({})).await;
    assert_eq!(env["sandbox"]["mode"], "best_effort", "{env:#}");
    let support = &env["sandbox"]["support"];
    for by_name in [false, true] {
        let (sandboxed, result) = s.sort(by_name).await;
        let direct = s.direct(by_name);
        assert_eq!(
            String::from_utf8_lossy(&sandboxed),
            String::from_utf8_lossy(&direct),
            "by_name {by_name}: the sandboxed output differs from the direct CLI's"
        );
        assert!(
            String::from_utf8_lossy(&sandboxed).contains(if by_name {
                "SO:queryname"
            } else {
                "SO:coordinate"
            }),
            "{}",
            String::from_utf8_lossy(&sandboxed)
        );
        // Where the kernel enforces them, the run was confined by them.
        for protection in ["file_system", "tcp", "no_new_privileges"] {
            if state_of(support, protection) == "enforced" {
                assert_eq!(
                    state_of(&result["sandbox"], protection),
                    "enforced",
                    "{protection}: {result:#}"
                );
            }
        }
    }
}

#[test]
fn adapter_check_shows_samtools_needs_no_grant_beyond_the_defaults() {
    let out = Command::new(scimcp_e2e::sibling_binary("scimcp").unwrap())
        .args(["adapter", "check", "--json"])
        .arg(fixture().join("samtools.toml"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        report["sandbox"]["sort"],
        json!({"network": false, "shared_memory": false}),
        "{report:#}"
    );
}
