//! Why a preflight step failed, or why the preflight could not start: each variant names what
//! failed and where, and its [`Hint`] says what to do next. A step's error becomes that
//! step's `detail` (and `hint`) in the report; [`PreflightError::UnknownStep`] stops the run
//! before any step.

use std::borrow::Cow;
use std::path::PathBuf;

use scimcp_core::failure::Hint;

use super::steps::STEPS;

/// One step failed (the step's verdict, or a tool it needed that could not run).
#[derive(Debug, thiserror::Error)]
pub enum StepError {
    /// A program the step needs (git, cargo, npx, a suite binary) could not be started;
    /// `what` is the step that runs it, `program` the executable.
    #[error("cannot run {what}")]
    Spawn {
        what: String,
        program: String,
        #[source]
        source: std::io::Error,
    },
    /// A command the step runs exited unsuccessfully (`status`: `exit status 1`,
    /// `signal 9`); `tail` is the end of its output.
    #[error("{what} failed ({status}):\n{tail}")]
    Command {
        what: String,
        status: String,
        tail: String,
    },
    /// A command ran past its time limit (`crate::child`) and was stopped with every
    /// process it started; `tail` is the end of what it printed.
    #[error(
        "{what} took longer than {} s and was stopped, with every process it started:\n{tail}",
        limit.as_secs_f64()
    )]
    TimedOut {
        what: String,
        limit: std::time::Duration,
        tail: String,
    },
    /// `scimcp-process` refused to run a command for another reason than a failed start.
    #[error(transparent)]
    Process(scimcp_process::ProcessError),
    #[error("git {args}: {stderr}")]
    Git { args: String, stderr: String },
    #[error("the checkout is not clean ({count} entries, e.g. {first})")]
    DirtyCheckout { count: usize, first: String },
    #[error("there is no tag {tag}")]
    NoTag { tag: String },
    #[error("{tag} is a lightweight tag ({kind}); releases need an annotated tag")]
    LightweightTag { tag: String, kind: String },
    #[error("{tag} points at {target}, not at HEAD {head}")]
    TagNotAtHead {
        tag: String,
        target: String,
        head: String,
    },
    #[error("cargo metadata printed something that is not its JSON")]
    Metadata(#[source] serde_json::Error),
    /// Every version rule that does not hold, each saying what to change.
    #[error("{}", problems.join("; "))]
    Versions { problems: Vec<String> },
    /// Reading or writing a file or directory; `fs_err` names the path in the source.
    #[error("cannot {action}")]
    Io {
        action: &'static str,
        #[source]
        source: std::io::Error,
    },
    /// A step that works on the bundles found none.
    #[error("no bundle zip in {dir}")]
    NoBundle { dir: PathBuf },
    #[error("building the bundles into {out} failed")]
    Bundle {
        out: PathBuf,
        #[source]
        source: crate::bundle::BundleError,
    },
    #[error("{file} differs between two builds of the same commit: the bundle is not reproducible")]
    NotReproducible { file: String },
    #[error("the two builds' RELEASE.json differ")]
    ReleaseIndexDiffers,
    #[error("signing with a fresh key pair failed")]
    Sign(#[source] crate::sign::SignError),
    #[error("the fresh public key does not load")]
    Key(#[source] crate::verify::KeyError),
    #[error("the embedded trusted root does not load")]
    TrustedRoot(#[source] crate::verify::TrustRootError),
    #[error("{file} was refused by the bundle just signed for it")]
    Refused {
        file: PathBuf,
        #[source]
        source: crate::verify::VerifyError,
    },
    #[error("a flipped byte in {file} was NOT refused")]
    TamperAccepted { file: PathBuf },
    #[error("{zip} cannot be read as a bundle: {message}")]
    BundleZip { zip: PathBuf, message: String },
    /// An installed doctor reported a failing check after install.
    #[error("the doctor found failures after install: {report}")]
    Doctor { report: String },
    #[error("{path} changed during the lifecycle")]
    MarkerChanged { path: PathBuf },
    #[error("{path} was deleted during the lifecycle")]
    MarkerDeleted { path: PathBuf },
}

impl StepError {
    /// The [`StepError::Io`] for `action`, to use with `map_err`.
    pub(crate) fn io(action: &'static str) -> impl FnOnce(std::io::Error) -> StepError {
        move |source| StepError::Io { action, source }
    }

    /// The message, its causes and the hint, as one line for the report's `detail`.
    pub(crate) fn detail(&self) -> String {
        let failure = scimcp_core::failure::Failure::new(self);
        std::iter::once(failure.message)
            .chain(failure.causes)
            .collect::<Vec<_>>()
            .join(": ")
    }
}

impl Hint for StepError {
    fn hint(&self) -> Option<Cow<'_, str>> {
        use StepError as E;
        let version = |tag: &str| tag.trim_start_matches('v').to_owned();
        Some(match self {
            E::Spawn { program, .. } => {
                format!("install {program} or put it on PATH, then run the preflight again").into()
            }
            E::Command { .. } => "the lines above are the end of its output; run the same \
                command in the repository to see all of it"
                .into(),
            E::TimedOut { .. } => "it hung, or is far slower than on any runner we know: run \
                the same command in the repository to see where it stops"
                .into(),
            E::Git { .. } => "run the preflight inside a git checkout (--repo DIR)".into(),
            E::DirtyCheckout { .. } => "commit or remove them, then run the preflight again".into(),
            E::NoTag { tag } => format!(
                "create it with: git tag -a {tag} -m \"scimcp {}\"",
                version(tag)
            )
            .into(),
            E::LightweightTag { tag, .. } => format!(
                "git tag -d {tag} && git tag -a {tag} -m \"scimcp {}\"",
                version(tag)
            )
            .into(),
            E::TagNotAtHead { .. } => "tag the commit you release (or check it out)".into(),
            E::Versions { .. } => "each problem says what to change; then run `scimcp-release \
                preflight --only versions` again"
                .into(),
            E::NoBundle { .. } => "the bundle step must run first: drop it from --skip, or add \
                it to --only"
                .into(),
            E::Bundle { .. } => "run `scimcp-release bundle` alone to see the whole error".into(),
            E::NotReproducible { .. } | E::ReleaseIndexDiffers => "something in the bundle \
                depends on the time or the machine; diff the two builds in the kept work \
                directory"
                .into(),
            E::TamperAccepted { .. } | E::Refused { .. } => {
                "the verifier is broken: do not release; see verify/ and its tests".into()
            }
            E::Doctor { .. } => {
                "run the installed scimcp-doctor in the kept work directory to see each remedy"
                    .into()
            }
            E::MarkerChanged { .. } | E::MarkerDeleted { .. } => {
                "an install step touched runs/: it must never; find it before releasing".into()
            }
            E::Metadata(_)
            | E::Process(_)
            | E::Io { .. }
            | E::Sign(_)
            | E::Key(_)
            | E::TrustedRoot(_)
            | E::BundleZip { .. } => return None,
        })
    }
}

/// Why the preflight could not run: an unknown step (an argument error, so the preflight
/// exits [`scimcp_core::exit::ERROR`] (2), as clap does for the arguments it checks itself),
/// or its work directory, progress or report could not be written (exit 1).
#[derive(Debug, thiserror::Error)]
pub enum PreflightError {
    #[error("unknown preflight step '{id}'")]
    UnknownStep { id: String },
    #[error("cannot create the preflight's work directory in {}", dir.display())]
    WorkDir {
        dir: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot write the preflight's progress")]
    Progress(#[from] std::io::Error),
    /// `fs_err` names the file or directory in the source.
    #[error("cannot write the preflight report")]
    Report(#[source] std::io::Error),
    #[error("cannot write the preflight report")]
    ReportFile(#[source] scimcp_core::fs::WriteError),
}

impl PreflightError {
    /// The exit status this error means ([`scimcp_core::exit`]).
    pub fn exit_status(&self) -> u8 {
        match self {
            PreflightError::UnknownStep { .. } => scimcp_core::exit::ERROR,
            _ => scimcp_core::exit::FAILURE,
        }
    }
}

impl Hint for PreflightError {
    fn hint(&self) -> Option<Cow<'_, str>> {
        match self {
            PreflightError::UnknownStep { .. } => {
                Some(format!("--only and --skip take these steps: {}", STEPS.join(", ")).into())
            }
            PreflightError::WorkDir { .. } => {
                Some("set TMPDIR to a writable directory with free space".into())
            }
            PreflightError::Report(_) | PreflightError::ReportFile(_) => {
                Some("pass --report-dir DIR, a directory you can write".into())
            }
            PreflightError::Progress(_) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_step_error_keeps_what_failed_and_what_to_do_apart() {
        let e = StepError::NoTag {
            tag: "v1.2.3".into(),
        };
        assert_eq!(e.detail(), "there is no tag v1.2.3");
        assert_eq!(
            e.hint().as_deref(),
            Some("create it with: git tag -a v1.2.3 -m \"scimcp 1.2.3\"")
        );
        let e = StepError::Spawn {
            what: "git".into(),
            program: "git".into(),
            source: std::io::Error::new(std::io::ErrorKind::NotFound, "No such file or directory"),
        };
        assert_eq!(e.detail(), "cannot run git: No such file or directory");
        assert!(e.hint().unwrap().contains("put it on PATH"));
    }
}
