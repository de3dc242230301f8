//! Honest placeholders for subcommands a later milestone delivers: they say so and fail.

use std::process::ExitCode;

/// Print that `binary subcommand` is not implemented yet (and which milestone brings it),
/// and return exit code 2.
#[allow(clippy::print_stderr)]
pub fn not_implemented(binary: &str, subcommand: &str, milestone: &str) -> ExitCode {
    eprintln!(
        "error: `{binary} {subcommand}` is not implemented yet ({milestone}); \
         see the README's status section for what works today"
    );
    ExitCode::from(2)
}
