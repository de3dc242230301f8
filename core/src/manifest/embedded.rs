//! The adapters compiled into every binary: the suite ships them, so `--adapter refsci`
//! works with no file on disk.

/// One embedded adapter: its manifest and every file the manifest references, by the
/// relative path the manifest uses.
#[derive(Debug)]
pub struct EmbeddedAdapter {
    pub name: &'static str,
    pub manifest_path: &'static str,
    pub files: &'static [(&'static str, &'static str)],
}

macro_rules! adapter_file {
    ($rel:literal) => {
        ($rel, include_str!(concat!("../../../adapters/", $rel)))
    };
}

/// Every adapter that ships with the suite.
pub static EMBEDDED_ADAPTERS: &[EmbeddedAdapter] = &[
    EmbeddedAdapter {
        name: "refsci",
        manifest_path: "refsci.toml",
        files: &[
            adapter_file!("refsci.toml"),
            adapter_file!("refsci/schemas/regression.json"),
            adapter_file!("refsci/schemas/regression_interactive.json"),
            adapter_file!("refsci/schemas/classification.json"),
            adapter_file!("refsci/schemas/clustering.json"),
            adapter_file!("refsci/schemas/decomposition.json"),
            adapter_file!("refsci/schemas/anomaly.json"),
            adapter_file!("refsci/schemas/forecast.json"),
            adapter_file!("refsci/schemas/forecast_evaluate.json"),
        ],
    },
    EmbeddedAdapter {
        name: "geochemistrypi",
        manifest_path: "geochemistrypi.toml",
        files: &[
            adapter_file!("geochemistrypi.toml"),
            adapter_file!("geochemistrypi/schemas/anomaly_isolation_forest.json"),
            adapter_file!("geochemistrypi/schemas/regression_random_forest.json"),
            adapter_file!("geochemistrypi/schemas/classification_random_forest.json"),
            adapter_file!("geochemistrypi/schemas/clustering_kmeans.json"),
        ],
    },
    EmbeddedAdapter {
        name: "vina",
        manifest_path: "vina.toml",
        files: &[
            adapter_file!("vina.toml"),
            adapter_file!("vina/schemas/dock.json"),
        ],
    },
    EmbeddedAdapter {
        name: "mafft",
        manifest_path: "mafft.toml",
        files: &[
            adapter_file!("mafft.toml"),
            adapter_file!("mafft/schemas/align.json"),
        ],
    },
];

/// Names of the embedded adapters.
pub fn embedded_names() -> Vec<&'static str> {
    EMBEDDED_ADAPTERS.iter().map(|a| a.name).collect()
}
