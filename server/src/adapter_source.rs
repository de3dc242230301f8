//! Which loader an `--adapter` value goes to: a `.cwl` path to the CWL front end
//! (scimcp-cwl), anything else to the manifest loader (an embedded name or a TOML file). Both
//! give the same validated [`Adapter`], so nothing after loading knows which it was.

use scimcp_core::manifest::{Adapter, ManifestErrors};

/// Load the adapter `name_or_path` names, by its extension.
pub(crate) fn resolve(name_or_path: &str) -> Result<Adapter, ManifestErrors> {
    if scimcp_cwl::is_cwl_path(name_or_path) {
        return scimcp_cwl::load(
            std::path::Path::new(name_or_path),
            scimcp_cwl::LoadOptions::default(),
        )
        .map(|tool| tool.adapter)
        .map_err(|e| e.into_manifest_errors());
    }
    scimcp_core::manifest::resolve(name_or_path)
}
