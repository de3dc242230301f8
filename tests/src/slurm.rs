//! The real single-node Slurm cluster of `scripts/slurm-cluster.sh`, as the Slurm executor's
//! tests see it: whether it is up, a server configuration for it, and direct `squeue` reads
//! that check what the server says against what Slurm says.

use std::path::{Path, PathBuf};

/// True when `sbatch` is on PATH and the controller answers. When it is not, the test should
/// return after this printed why, unless `SCIMCP_REQUIRE_SLURM=1` (set by `.ci/run`), which
/// makes a missing cluster a failure.
pub fn cluster_up() -> bool {
    let answered = std::process::Command::new("sinfo")
        .args(["-h", "-o", "%t"])
        .output()
        .map(|o| o.status.success() && !o.stdout.is_empty());
    let why = match answered {
        Ok(true) => return true,
        Ok(false) => "the Slurm controller does not answer (sinfo failed)",
        Err(_) => "sbatch/sinfo are not on PATH",
    };
    assert!(
        std::env::var_os("SCIMCP_REQUIRE_SLURM").is_none(),
        "SCIMCP_REQUIRE_SLURM is set but {why}: run `eval \"$(scripts/slurm-cluster.sh start)\"`"
    );
    #[allow(clippy::print_stderr)]
    {
        eprintln!(
            "SKIPPED: {why}; `eval \"$(scripts/slurm-cluster.sh start)\"` starts a single-node cluster"
        );
    }
    false
}

/// Write the server's `--slurm-config` into `dir` (fast polling for tests; the partition of
/// `SCIMCP_SLURM_PARTITION` when set) and return the `serve` arguments that use it.
pub fn serve_args(dir: &Path) -> Vec<String> {
    fs_err::create_dir_all(dir).expect("config dir");
    let mut config = String::from("poll_interval_s = 0.5\ncommand_timeout_s = 30\n");
    if let Ok(p) = std::env::var("SCIMCP_SLURM_PARTITION") {
        config.push_str(&format!("partition = {}\n", toml::Value::String(p)));
    }
    let path: PathBuf = dir.join("slurm.toml");
    fs_err::write(&path, config).expect("write slurm.toml");
    vec![
        "--executor".into(),
        "slurm".into(),
        "--slurm-config".into(),
        path.display().to_string(),
    ]
}

/// `squeue` with these arguments; its stdout.
pub fn squeue(args: &[&str]) -> String {
    let out = std::process::Command::new("squeue")
        .args(args)
        .output()
        .expect("squeue runs");
    String::from_utf8_lossy(&out.stdout).into_owned()
}
