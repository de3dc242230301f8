//! One module per subcommand; each returns `anyhow::Result` and `finish` turns it into an
//! exit code with the error chain on stderr.

use std::process::ExitCode;

pub(crate) mod keygen;
pub(crate) mod sign;
pub(crate) mod verify;

/// Exit 0 on success; otherwise print `error: …` with its causes and exit 1 (a refusal or a
/// user/environment problem; argument errors exit 2 through clap).
#[allow(clippy::print_stderr)]
pub(crate) fn finish(result: anyhow::Result<()>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("error: {err}");
            for cause in err.chain().skip(1) {
                eprintln!("  caused by: {cause}");
            }
            ExitCode::FAILURE
        }
    }
}
