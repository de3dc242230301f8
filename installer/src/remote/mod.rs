//! Releases over the network: finding scimcp releases on GitHub ([`github`]) and downloading a
//! bundle with its Sigstore signature ([`download`]) into a private temporary directory.
//!
//! Nothing here trusts what it downloads, and nothing here writes under the data root: the
//! caller verifies the signature ([`crate::signature`]) before anything is unpacked, exactly
//! as for a bundle the user copied by hand. Transport security is still required (HTTPS, or
//! plain HTTP to this computer only: [`url`]), so a network attacker cannot even choose which signed
//! release is offered.

pub mod download;
mod error;
pub mod github;
mod url;

pub use download::{download_bundle, download_bundle_url};
pub use error::RemoteError;
pub use github::{GitHubSource, RemoteBundle};
pub use url::is_url;
