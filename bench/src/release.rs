//! Throughput of the release-side work: artifact hashing against `sha256sum` on the same
//! 1 GiB file, bundle builds, and offline Sigstore verification against sigstore-python's
//! CLI on the same bundle and trusted root.

use std::path::Path;
use std::process::Command;
use std::time::Instant;

use anyhow::{Context as _, ensure};
use serde::Serialize;
use serde_json::json;

use crate::fixture::{Fixture, write_random_file};
use crate::stats::{Summary, ms};

/// Artifact hashing against `sha256sum`.
#[derive(Debug, Serialize)]
pub struct Hashing {
    pub file_bytes: u64,
    pub rounds: usize,
    /// `scimcp_core::hash::sha256_file` (what runs and bundles use), in-process.
    pub scimcp_ms: Summary,
    /// `sha256sum FILE` (GNU coreutils), the process's wall time.
    pub sha256sum_ms: Summary,
    pub scimcp_mib_s: f64,
    pub sha256sum_mib_s: f64,
    /// scimcp throughput / sha256sum throughput (medians).
    pub ratio: f64,
    pub sha256sum_version: String,
}

/// 1 GiB of incompressible bytes, hashed `rounds` times by each, alternating; the file is
/// read once first so both hash from the page cache.
pub fn hashing(fx: &Fixture, rounds: usize) -> anyhow::Result<Hashing> {
    const BYTES: u64 = 1 << 30;
    let file = fx.dir("hashing")?.join("1GiB.bin");
    write_random_file(&file, BYTES)?;
    let (expected, _) = scimcp_core::hash::sha256_file(&file)?;
    let ours = || -> anyhow::Result<f64> {
        let t0 = Instant::now();
        let (h, n) = scimcp_core::hash::sha256_file(&file)?;
        let t = ms(t0.elapsed());
        ensure!(h == expected && n == BYTES, "hash changed");
        Ok(t)
    };
    let theirs = || -> anyhow::Result<f64> {
        let t0 = Instant::now();
        let out = Command::new("sha256sum").arg(&file).output()?;
        let t = ms(t0.elapsed());
        ensure!(out.status.success(), "sha256sum failed");
        ensure!(
            String::from_utf8_lossy(&out.stdout).starts_with(&expected),
            "sha256sum disagrees"
        );
        Ok(t)
    };
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for round in 0..rounds {
        eprint!("\r  hashing {}/{rounds}", round + 1);
        if round % 2 == 0 {
            a.push(ours()?);
            b.push(theirs()?);
        } else {
            b.push(theirs()?);
            a.push(ours()?);
        }
    }
    eprintln!();
    fs_err::remove_file(&file)?;
    let (a, b) = (Summary::of(&a), Summary::of(&b));
    let mib = BYTES as f64 / (1024.0 * 1024.0);
    let version = Command::new("sha256sum")
        .arg("--version")
        .output()
        .map(|o| {
            String::from_utf8_lossy(&o.stdout)
                .lines()
                .next()
                .unwrap_or_default()
                .to_string()
        })
        .unwrap_or_default();
    Ok(Hashing {
        file_bytes: BYTES,
        rounds,
        scimcp_mib_s: mib / (a.median / 1000.0),
        sha256sum_mib_s: mib / (b.median / 1000.0),
        ratio: b.median / a.median,
        scimcp_ms: a,
        sha256sum_ms: b,
        sha256sum_version: version,
    })
}

/// Bundle builds.
#[derive(Debug, Serialize)]
pub struct Bundle {
    pub rounds: usize,
    pub ms: Summary,
    /// The five binaries and the included files, uncompressed.
    pub input_bytes: u64,
    pub zip_bytes: u64,
    /// Input MiB per second (median).
    pub mib_s: f64,
}

/// `scimcp-release bundle --bin-dir target/release` for this machine's target.
pub fn bundle(fx: &Fixture, rounds: usize) -> anyhow::Result<Bundle> {
    let out = fx.dir("bundles")?;
    let mut times = Vec::new();
    let mut zip_bytes = 0;
    for round in 0..rounds {
        eprint!("\r  bundle {}/{rounds}", round + 1);
        let dir = out.join(round.to_string());
        let t0 = Instant::now();
        let status = Command::new(fx.exe("scimcp-release"))
            .args(["bundle", "--bin-dir"])
            .arg(&fx.bin)
            .arg("--repo")
            .arg(&fx.repo)
            .arg("--out")
            .arg(&dir)
            .output()?;
        times.push(ms(t0.elapsed()));
        ensure!(
            status.status.success(),
            "scimcp-release bundle failed: {}",
            String::from_utf8_lossy(&status.stderr)
        );
        zip_bytes = fs_err::read_dir(&dir)?
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().ends_with(".zip"))
            .map(|e| e.metadata().map(|m| m.len()).unwrap_or(0))
            .sum();
    }
    eprintln!();
    let binaries: u64 = [
        "scimcp",
        "scimcp-setup",
        "scimcp-doctor",
        "scimcp-release",
        "scimcp-parity",
    ]
    .iter()
    .map(|b| fs_err::metadata(fx.exe(b)).map(|m| m.len()))
    .sum::<Result<u64, _>>()?;
    let included = dir_bytes(&fx.repo.join("adapters"))?
        + dir_bytes(&fx.repo.join("refsci/src/refsci"))?
        + fs_err::metadata(fx.repo.join("LICENSE"))?.len();
    let s = Summary::of(&times);
    let input = binaries + included;
    Ok(Bundle {
        rounds,
        mib_s: input as f64 / (1024.0 * 1024.0) / (s.median / 1000.0),
        ms: s,
        input_bytes: input,
        zip_bytes,
    })
}

fn dir_bytes(dir: &Path) -> anyhow::Result<u64> {
    let mut total = 0;
    for entry in fs_err::read_dir(dir)?.flatten() {
        let meta = entry.metadata()?;
        total += if meta.is_dir() {
            dir_bytes(&entry.path())?
        } else {
            meta.len()
        };
    }
    Ok(total)
}

/// Offline verification, CLI against CLI.
#[derive(Debug, Serialize)]
pub struct Verify {
    pub bundle: String,
    pub rounds: usize,
    /// `scimcp-release verify-bundle`, the process's wall time.
    pub scimcp_ms: Summary,
    /// `sigstore verify identity --offline`, the process's wall time.
    pub sigstore_python_ms: Summary,
    /// sigstore-python median / scimcp median.
    pub speedup: f64,
    pub sigstore_python_version: String,
}

const IDENTITY: &str = "https://github.com/sigstore-conformance/extremely-dangerous-public-oidc-beacon/.github/workflows/extremely-dangerous-oidc-beacon.yml@refs/heads/main";
const ISSUER: &str = "https://token.actions.githubusercontent.com";

/// The conformance suite's `happy-path-v0.3` bundle (Rekor v1: chain, SCT, SET, inclusion
/// proof, checkpoint) against the production trusted root, offline, by both CLIs.
pub fn verify(fx: &Fixture, rounds: usize) -> anyhow::Result<Verify> {
    let data = fx.repo.join("release/tests/data/conformance");
    let bundle = data.join("happy-path-v0.3/bundle.sigstore.json");
    let artifact = data.join("a.txt");
    let root = fx.repo.join("verify/data/production-trusted_root.json");
    // sigstore-python takes the trusted root inside a client trust configuration.
    let trust = fx.dir("verify")?.join("trust_config.json");
    let trusted_root: serde_json::Value = serde_json::from_slice(&fs_err::read(&root)?)?;
    let signing: serde_json::Value = serde_json::from_slice(&fs_err::read(
        fx.repo
            .join("release/data/sigstore/production-signing_config.v0.2.json"),
    )?)?;
    fs_err::write(
        &trust,
        serde_json::to_vec(&json!({
            "mediaType": "application/vnd.dev.sigstore.clienttrustconfig.v0.1+json",
            "trustedRoot": trusted_root,
            "signingConfig": signing,
        }))?,
    )?;
    let sigstore = fx
        .peer_python
        .parent()
        .context("venv has no bin")?
        .join("sigstore");
    let ours = || -> anyhow::Result<f64> {
        let t0 = Instant::now();
        let out = Command::new(fx.exe("scimcp-release"))
            .arg("verify-bundle")
            .arg("--bundle")
            .arg(&bundle)
            .args(["--certificate-identity", IDENTITY])
            .args(["--certificate-oidc-issuer", ISSUER])
            .arg("--trusted-root")
            .arg(&root)
            .arg(&artifact)
            .output()?;
        let t = ms(t0.elapsed());
        ensure!(
            out.status.success(),
            "scimcp-release verify-bundle failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        Ok(t)
    };
    let theirs = || -> anyhow::Result<f64> {
        let t0 = Instant::now();
        let out = Command::new(&sigstore)
            .arg("--trust-config")
            .arg(&trust)
            .args(["verify", "identity", "--offline", "--bundle"])
            .arg(&bundle)
            .args(["--cert-identity", IDENTITY])
            .args(["--cert-oidc-issuer", ISSUER])
            .arg(&artifact)
            .output()?;
        let t = ms(t0.elapsed());
        ensure!(
            out.status.success(),
            "sigstore verify failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        Ok(t)
    };
    ours()?;
    theirs()?;
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for round in 0..rounds {
        eprint!("\r  verify {}/{rounds}", round + 1);
        if round % 2 == 0 {
            a.push(ours()?);
            b.push(theirs()?);
        } else {
            b.push(theirs()?);
            a.push(ours()?);
        }
    }
    eprintln!();
    let version = Command::new(&sigstore)
        .arg("--version")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default();
    let (a, b) = (Summary::of(&a), Summary::of(&b));
    Ok(Verify {
        bundle: "happy-path-v0.3 (sigstore-conformance)".into(),
        rounds,
        speedup: b.median / a.median,
        scimcp_ms: a,
        sigstore_python_ms: b,
        sigstore_python_version: version,
    })
}
