//! Benchmark: offline verification of one Sigstore bundle, median over N runs.
//!
//! `cargo run --release -p scimcp-release --example bench_verify -- [RUNS]`
//!
//! Each run is the whole library call a `verify` does per file (bundle parse, trusted-root
//! lookups, chain, SCT, signature, log entry, proof, checkpoint, SET/timestamp), with the
//! trusted root parsed once outside the timed loop as the CLI does. Prints a Markdown table.

// A benchmark reports on stdout by design.
#![allow(clippy::print_stdout)]

use std::path::Path;
use std::time::{Duration, Instant};

use scimcp_release::verify::{ArtifactInput, Policy, TrustedRoot, verify_bundle};

const IDENTITY: &str = "https://github.com/sigstore-conformance/extremely-dangerous-public-oidc-beacon/.github/workflows/extremely-dangerous-oidc-beacon.yml@refs/heads/main";
const ISSUER: &str = "https://token.actions.githubusercontent.com";

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() - 1) as f64 * p).round() as usize;
    sorted[i]
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let runs: usize = std::env::args()
        .nth(1)
        .map(|s| s.parse())
        .transpose()?
        .unwrap_or(500);
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/conformance");
    let artifact = fs_err::read(data.join("a.txt"))?;
    let policy = Policy::Identity {
        identity: IDENTITY.into(),
        issuer: ISSUER.into(),
    };
    println!("| bundle | what it exercises | runs | median | p10 | p90 |");
    println!("| --- | --- | ---: | ---: | ---: | ---: |");
    for (case, what) in [
        (
            "happy-path-v0.3",
            "Rekor v1 hashedrekord: chain, SCT, SET, inclusion proof, checkpoint (ECDSA)",
        ),
        (
            "rekor2-happy-path",
            "Rekor v2 hashedrekord: chain, SCT, RFC 3161 timestamp, proof, checkpoint (Ed25519)",
        ),
    ] {
        let dir = data.join(case);
        let bundle = fs_err::read(dir.join("bundle.sigstore.json"))?;
        let root_path = dir.join("trusted_root.json");
        let root = if root_path.exists() {
            TrustedRoot::from_json(&fs_err::read(root_path)?)?
        } else {
            TrustedRoot::production()?
        };
        // Warm-up, and a check that the benchmark measures a success.
        verify_bundle(ArtifactInput::Bytes(&artifact), &bundle, &policy, &root)?;
        let mut times = Vec::with_capacity(runs);
        for _ in 0..runs {
            let start = Instant::now();
            let verified = verify_bundle(ArtifactInput::Bytes(&artifact), &bundle, &policy, &root)?;
            times.push(start.elapsed());
            std::hint::black_box(verified);
        }
        times.sort();
        let ms = |d: Duration| format!("{:.2} ms", d.as_secs_f64() * 1e3);
        println!(
            "| `{case}` | {what} | {runs} | {} | {} | {} |",
            ms(percentile(&times, 0.5)),
            ms(percentile(&times, 0.1)),
            ms(percentile(&times, 0.9)),
        );
    }
    Ok(())
}
