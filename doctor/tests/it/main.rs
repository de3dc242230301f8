//! The doctor's integration tests, one binary: a real installation broken on purpose, and
//! the human report.
//!
//! Each module was once its own test binary; one binary links once, and nextest still runs
//! every test in its own process (filter a group with `-E 'test(/^module::/)'`).

mod common;

mod human_report;
mod real_installation;
