//! Which loader an `--adapter` value goes to: a `.cwl` path to the CWL front end
//! (scimcp-cwl, whose engine builds each run's command), anything else to the manifest loader
//! (an embedded name or a TOML file). Both give the same validated [`Adapter`], so nothing
//! after loading knows which it was.

use scimcp_core::manifest::{Adapter, ManifestErrors};

/// The `--adapter` value and what the operator allows a CWL tool.
#[derive(Debug, Clone, Copy)]
pub(crate) struct AdapterChoice<'a> {
    pub name: &'a str,
    /// `--cwl-allow-shell`: serve ShellCommandRequirement tools through `/bin/sh -c`.
    pub cwl_allow_shell: bool,
    /// `--cwl-no-container`: serve DockerRequirement tools from PATH, said in every plan.
    pub cwl_no_container: bool,
}

impl<'a> From<&'a str> for AdapterChoice<'a> {
    fn from(name: &'a str) -> Self {
        AdapterChoice {
            name,
            cwl_allow_shell: false,
            cwl_no_container: false,
        }
    }
}

/// Load the adapter `choice` names, by its extension.
pub(crate) fn resolve(choice: AdapterChoice<'_>) -> Result<Adapter, ManifestErrors> {
    if scimcp_cwl::is_cwl_path(choice.name) {
        let options = scimcp_cwl::EngineOptions {
            allow_shell: choice.cwl_allow_shell,
            no_container: choice.cwl_no_container,
        };
        return scimcp_cwl::engine::load_engine(std::path::Path::new(choice.name), options)
            .map(|(adapter, _)| adapter)
            .map_err(|e| e.into_manifest_errors());
    }
    scimcp_core::manifest::resolve(choice.name)
}
