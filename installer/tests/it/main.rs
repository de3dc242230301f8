//! The installer's integration tests, one binary: the real `scimcp-setup` in fake homes,
//! against real Pythons and runtimes, hostile files, faults and signed releases.
//!
//! Each module was once its own test binary; one binary links once, and nextest still runs
//! every test in its own process (filter a group with `-E 'test(/^module::/)'`).

mod common;

mod adapters;
mod cli;
mod data_dirs;
mod fake_homes;
mod faults;
mod github_releases;
mod heavy;
mod hostile;
mod interpreters;
mod issue26;
mod one_command;
mod real_python;
mod real_runtime;
mod remote;
mod restore;
mod runtime_provisioning;
mod signatures;
mod step_timeouts;
