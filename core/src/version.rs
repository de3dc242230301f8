//! The suite's version identity: one version for every crate and binary in the workspace.

/// The version every scimcp crate and binary carries (the workspace version).
pub const SUITE_VERSION: &str = env!("CARGO_PKG_VERSION");

/// The name clients see for the server, and the key scimcp writes into client configs.
pub const SUITE_NAME: &str = "scimcp";

/// The suite version parsed as semver; the workspace version is always valid semver.
pub fn suite_semver() -> semver::Version {
    semver::Version::parse(SUITE_VERSION).expect("workspace version is valid semver")
}
