//! Helpers shared by the integration tests that need a Sigstore instance.

#![allow(dead_code)]

pub mod der;
pub mod fake_sigstore;
