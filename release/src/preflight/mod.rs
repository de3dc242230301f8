//! `scimcp-release preflight`: every gate a tag needs, run locally in a temporary work
//! directory, never touching the real home or client configurations.
//!
//! Steps, in order (each can be chosen with `--only` or dropped with `--skip`):
//! `checkout` (nothing uncommitted), `tag` (annotated, at HEAD), `versions` (crates,
//! adapters, changelog), `lint` (fmt, clippy `-D warnings`), `tests`, `bundle` (built twice,
//! byte-identical, contents and manifest checked), `signature` (key-pair sign, verify, and a
//! tampered copy refused), `lifecycle` (install from the bundle into a fake home whose path
//! has spaces and non-ASCII letters, doctor, repair, upgrade, rollback, uninstall, run data
//! unchanged), `parity` (the parity gate). The run stops at the first failure and keeps the
//! work directory for diagnosis. `--quick` runs the parity gate's quick shard and says the
//! report is not release evidence; so does any skipped step.
//!
//! Every program a step runs goes through `crate::child` (a time limit per kind, its own
//! process group, bounded output) and `command.rs` turns how it ended into the step's
//! [`StepError`], naming the step.

mod command;
mod error;
mod git;
mod lifecycle;
mod report;
mod steps;
mod versions;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

pub use error::{PreflightError, StepError};
pub use report::{Report, Status, StepReport};
pub use steps::STEPS;

use steps::title;

use scimcp_core::failure::Hint as _;

use crate::child;

/// A failed command's error shows this many of its last output lines.
const TAIL: usize = command::TAIL_LINES;

/// What to run, on what.
#[derive(Debug, Clone)]
pub struct PreflightOptions {
    pub repo: PathBuf,
    /// The release tag (default `v<workspace version>`).
    pub tag: Option<String>,
    pub quick: bool,
    pub only: Vec<String>,
    pub skip: Vec<String>,
    /// Where the suite's binaries are (default: next to this executable).
    pub bin_dir: PathBuf,
    /// The development Python for parity and the lifecycle's runtime.
    pub python: Option<PathBuf>,
    /// `ADAPTER=PATH` interpreters of adapters' runtimes, passed to the parity gate.
    pub adapter_python: Vec<String>,
    /// Where preflight.json and preflight.md go (default: <repo>/target/preflight).
    pub report_dir: Option<PathBuf>,
    pub keep_workdir: bool,
}

/// Run the preflight; returns the report (also written to disk).
pub fn run(
    opts: &PreflightOptions,
    out: &mut dyn std::io::Write,
) -> Result<Report, PreflightError> {
    for id in opts.only.iter().chain(&opts.skip) {
        if !STEPS.contains(&id.as_str()) {
            return Err(PreflightError::UnknownStep { id: id.clone() });
        }
    }
    let version = scimcp_core::version::SUITE_VERSION.to_string();
    let tag = opts.tag.clone().unwrap_or_else(|| format!("v{version}"));
    let work = tempfile::Builder::new()
        .prefix("scimcp-preflight-")
        .tempdir()
        .map_err(|source| PreflightError::WorkDir {
            dir: std::env::temp_dir(),
            source,
        })?;
    let work_dir = work.path().to_path_buf();
    let commit = git::git(&opts.repo, &["rev-parse", "HEAD"]).unwrap_or_else(|_| "unknown".into());
    let mut report = Report {
        schema_version: report::REPORT_SCHEMA_VERSION,
        version: version.clone(),
        tag: Some(tag.clone()),
        commit,
        quick: opts.quick,
        release_evidence: !opts.quick,
        passed: true,
        work_dir: work_dir.display().to_string(),
        steps: Vec::new(),
    };
    writeln!(
        out,
        "preflight for scimcp {version} ({tag}) in {}",
        work_dir.display()
    )?;
    let ctx = Ctx {
        opts,
        version: &version,
        tag: &tag,
        work: &work_dir,
    };
    for &id in STEPS {
        let wanted = (opts.only.is_empty() || opts.only.iter().any(|s| s == id))
            && !opts.skip.iter().any(|s| s == id);
        if !wanted {
            report.release_evidence = false;
            report.steps.push(StepReport {
                id: id.into(),
                title: title(id).into(),
                status: Status::Skipped,
                duration_ms: 0,
                detail: "not selected".into(),
                hint: None,
            });
            continue;
        }
        let t0 = Instant::now();
        write!(out, "  {id:<10} {} … ", title(id))?;
        out.flush()?;
        let result = ctx.step(id);
        let ms = u64::try_from(t0.elapsed().as_millis()).unwrap_or(u64::MAX);
        let (status, detail, hint) = match result {
            Ok(detail) => (Status::Passed, detail, None),
            Err(e) => (Status::Failed, e.detail(), e.hint().map(String::from)),
        };
        writeln!(
            out,
            "{} ({:.1} s)",
            if status == Status::Passed {
                "ok"
            } else {
                "FAILED"
            },
            ms as f64 / 1000.0
        )?;
        if status == Status::Failed {
            writeln!(out, "    {detail}")?;
            if let Some(hint) = &hint {
                writeln!(out, "    hint: {hint}")?;
            }
        }
        report.steps.push(StepReport {
            id: id.into(),
            title: title(id).into(),
            status,
            duration_ms: ms,
            detail,
            hint,
        });
        if status == Status::Failed {
            report.passed = false;
            break;
        }
    }
    if opts.quick {
        writeln!(
            out,
            "note: --quick skipped the slow parity shards; this report is not release evidence"
        )?;
    }
    // The work directory is removed on success, so the report defaults to <repo>/target.
    let report_dir = opts
        .report_dir
        .clone()
        .unwrap_or_else(|| opts.repo.join("target").join("preflight"));
    fs_err::create_dir_all(&report_dir).map_err(PreflightError::Report)?;
    scimcp_core::fs::write_json_atomic(&report_dir.join("preflight.json"), &report)
        .map_err(PreflightError::ReportFile)?;
    fs_err::write(report_dir.join("preflight.md"), report.markdown())
        .map_err(PreflightError::Report)?;
    writeln!(
        out,
        "report: {} and preflight.md",
        report_dir.join("preflight.json").display()
    )?;
    if !report.passed || opts.keep_workdir {
        let kept = work.keep();
        writeln!(out, "work directory kept for diagnosis: {}", kept.display())?;
    }
    Ok(report)
}

struct Ctx<'a> {
    opts: &'a PreflightOptions,
    version: &'a str,
    tag: &'a str,
    work: &'a Path,
}

impl Ctx<'_> {
    fn step(&self, id: &str) -> Result<String, StepError> {
        let repo = &self.opts.repo;
        match id {
            "checkout" => git::clean_checkout(repo),
            "tag" => git::tag_at_head(repo, self.tag),
            "versions" => versions::check(repo, self.version),
            "lint" => {
                let mut fmt = Command::new("cargo");
                fmt.args(["fmt", "--all", "--", "--check"])
                    .current_dir(repo);
                command::run("cargo fmt --check", fmt, child::CARGO_FMT, TAIL)?;
                let mut clippy = Command::new("cargo");
                clippy
                    .args([
                        "clippy",
                        "--workspace",
                        "--all-targets",
                        "--",
                        "-D",
                        "warnings",
                    ])
                    .current_dir(repo);
                command::run("cargo clippy", clippy, child::CARGO_BUILD, TAIL)?;
                Ok("formatted; clippy clean with -D warnings".into())
            }
            "tests" => {
                let mut probe = Command::new("cargo");
                probe.args(["nextest", "--version"]);
                let nextest = child::run("cargo nextest --version", probe, child::PROBE)
                    .is_ok_and(|c| c.success());
                let mut cmd = Command::new("cargo");
                if nextest {
                    cmd.args(["nextest", "run", "--workspace"]);
                } else {
                    cmd.args(["test", "--workspace"]);
                }
                cmd.current_dir(repo);
                command::run("the test suite", cmd, child::CARGO_BUILD, TAIL)?;
                Ok("every test passed".into())
            }
            "bundle" => self.bundles(),
            "signature" => self.signature(),
            "lifecycle" => lifecycle::run(
                &self.opts.bin_dir,
                &self.work.join("bundles-a"),
                self.work,
                self.python().as_deref(),
            ),
            "parity" => self.parity(),
            _ => unreachable!("run() refuses unknown steps"),
        }
    }

    fn python(&self) -> Option<PathBuf> {
        self.opts
            .python
            .clone()
            .or_else(|| std::env::var_os("SCIMCP_PYTHON").map(PathBuf::from))
            .or_else(|| {
                [".venv/bin/python", ".venv/Scripts/python.exe"]
                    .iter()
                    .map(|p| self.opts.repo.join(p))
                    .find(|p| p.is_file())
            })
    }

    fn bundle_into(&self, out: &Path) -> Result<crate::bundle::ReleaseIndex, StepError> {
        let failed = |source| StepError::Bundle {
            out: out.to_path_buf(),
            source,
        };
        let opts = crate::bundle::BundleOptions {
            repo_root: self.opts.repo.clone(),
            binaries: crate::bundle::BinarySource::Dir(self.opts.bin_dir.clone()),
            targets: vec![crate::bundle::host_target()],
            out_dir: out.to_path_buf(),
            epoch: crate::bundle::source_date_epoch(&self.opts.repo).map_err(failed)?,
            git_commit: crate::bundle::git_commit(&self.opts.repo),
            tag: Some(self.tag.to_string()),
        };
        crate::bundle::build(&opts).map_err(failed)
    }

    fn bundles(&self) -> Result<String, StepError> {
        let (a, b) = (self.work.join("bundles-a"), self.work.join("bundles-b"));
        let first = self.bundle_into(&a)?;
        let second = self.bundle_into(&b)?;
        for rec in &first.bundles {
            let read = |dir: &Path| {
                fs_err::read(dir.join(&rec.file)).map_err(StepError::io("read a built bundle"))
            };
            if read(&a)? != read(&b)? {
                return Err(StepError::NotReproducible {
                    file: rec.file.clone(),
                });
            }
        }
        if first != second {
            return Err(StepError::ReleaseIndexDiffers);
        }
        let mcpb_dir = self.work.join("mcpb");
        let manifest = crate::bundle::write_manifest(&mcpb_dir, &crate::bundle::host_target())
            .map_err(|source| StepError::Bundle {
                out: mcpb_dir.clone(),
                source,
            })?;
        let mut probe = Command::new("npx");
        probe.arg("--version");
        let npx = child::run("npx --version", probe, child::PROBE).is_ok_and(|c| c.success());
        let mcpb = if npx {
            let mut validate = Command::new("npx");
            validate
                .args(["--yes", "@anthropic-ai/mcpb@2.1.2", "validate"])
                .arg(&manifest);
            command::run("mcpb validate", validate, child::MCPB_VALIDATE, TAIL)?;
            "mcpb validate accepts manifest.json"
        } else {
            "mcpb validate skipped: npx not available"
        };
        Ok(format!(
            "{} bundle(s) byte-identical across two builds ({}); allowlist clean; {mcpb}",
            first.bundles.len(),
            first
                .bundles
                .iter()
                .map(|b| format!("{} sha256 {}", b.file, &b.sha256[..12]))
                .collect::<Vec<_>>()
                .join(", ")
        ))
    }

    fn signature(&self) -> Result<String, StepError> {
        use crate::verify::{ArtifactInput, Policy, TrustedKey, TrustedRoot, verify_bundle};
        let dir = self.work.join("bundles-a");
        let zip = fs_err::read_dir(&dir)
            .map_err(|_| StepError::NoBundle { dir: dir.clone() })?
            .flatten()
            .map(|e| e.path())
            .find(|p| p.extension().is_some_and(|e| e == "zip"));
        let files: Vec<PathBuf> = zip
            .into_iter()
            .chain([dir.join("RELEASE.json")])
            .filter(|p| p.is_file())
            .collect();
        if files.is_empty() {
            return Err(StepError::NoBundle { dir });
        }
        let key = crate::sign::generate_key();
        let public = crate::sign::public_key_pem(&key).map_err(StepError::Sign)?;
        let policy = Policy::Key(TrustedKey::from_pem(&public).map_err(StepError::Key)?);
        let root = TrustedRoot::production().map_err(StepError::TrustedRoot)?;
        for file in &files {
            let bytes = fs_err::read(file).map_err(StepError::io("read a file to sign"))?;
            let bundle = crate::sign::sign_bundle(&key, &bytes).map_err(StepError::Sign)?;
            verify_bundle(
                ArtifactInput::Bytes(&bytes),
                bundle.as_bytes(),
                &policy,
                &root,
            )
            .map_err(|source| StepError::Refused {
                file: file.clone(),
                source,
            })?;
            let mut tampered = bytes.clone();
            let middle = tampered.len() / 2;
            tampered[middle] ^= 0x01;
            if verify_bundle(
                ArtifactInput::Bytes(&tampered),
                bundle.as_bytes(),
                &policy,
                &root,
            )
            .is_ok()
            {
                return Err(StepError::TamperAccepted { file: file.clone() });
            }
        }
        Ok(format!(
            "{} file(s) signed and verified with a fresh key pair; a flipped byte was refused in each",
            files.len()
        ))
    }

    fn parity(&self) -> Result<String, StepError> {
        let parity = self
            .opts
            .bin_dir
            .join(format!("scimcp-parity{}", std::env::consts::EXE_SUFFIX));
        let mut cmd = Command::new(&parity);
        cmd.arg("check").current_dir(&self.opts.repo);
        if self.opts.quick {
            cmd.arg("--quick");
        }
        cmd.arg("--json").arg(self.work.join("parity.json"));
        cmd.arg("--scimcp").arg(
            self.opts
                .bin_dir
                .join(format!("scimcp{}", std::env::consts::EXE_SUFFIX)),
        );
        if let Some(py) = self.python() {
            cmd.arg("--python").arg(py);
        }
        for pair in &self.opts.adapter_python {
            cmd.arg("--adapter-python").arg(pair);
        }
        command::run("scimcp-parity check", cmd, child::PARITY, TAIL)?;
        Ok(if self.opts.quick {
            "the quick parity shard passed (not release evidence)".into()
        } else {
            "every parity scenario passed".into()
        })
    }
}
