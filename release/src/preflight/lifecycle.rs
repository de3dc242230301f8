//! The lifecycle smoke: placeholder until the installer and doctor land in this branch.

use std::path::Path;

pub(super) fn run(_bin_dir: &Path, _work: &Path, _python: Option<&Path>) -> Result<String, String> {
    Err("the lifecycle smoke needs scimcp-setup and scimcp-doctor, which are not implemented in this build yet".into())
}
