//! The manifest's top-level keys: `schema_version`, `name`, `version`, `summary`.

use super::checker::{Checker, Seg};
use super::names::is_adapter_name;
use crate::manifest::types::Manifest;

/// The only manifest schema version this suite reads.
pub const SCHEMA_VERSION: u32 = 1;

pub(super) fn check_top_level(c: &mut Checker<'_>, m: &Manifest) {
    if m.schema_version != SCHEMA_VERSION {
        c.error(
            &[Seg::Key("schema_version")],
            format!(
                "schema_version {} is not supported (this suite reads {SCHEMA_VERSION})",
                m.schema_version
            ),
            Some("upgrade scimcp or write the manifest for schema_version = 1".into()),
        );
    }
    if !is_adapter_name(&m.name) {
        c.error(
            &[Seg::Key("name")],
            format!("'{}' is not a valid adapter name", m.name),
            Some("use lower-case letters, digits and '-', starting with a letter".into()),
        );
    }
    if semver::Version::parse(&m.version).is_err() {
        c.error(
            &[Seg::Key("version")],
            format!("'{}' is not a semantic version", m.version),
            Some("write MAJOR.MINOR.PATCH, e.g. \"0.1.0\"".into()),
        );
    }
    if m.summary.trim().is_empty() || m.summary.len() > 500 {
        c.error(
            &[Seg::Key("summary")],
            "summary must be 1 to 500 characters",
            None,
        );
    }
}
