//! Datasets: resolving references to files inside the allowed roots ([`roots`]), the
//! adapter's built-in datasets, and CSV inspection.
//!
//! A dataset is opened once, below its root, without following links, and read only through
//! that handle ([`open`]); every check that can refuse it (`..`, links, secrets, hard links,
//! non-regular files, size) runs before a byte of content is read.

mod export;
mod inspect;
pub mod kinds;
mod listing;
pub(crate) mod open;
mod resolved;
pub mod roots;

use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

pub use inspect::{ColumnInfo, ColumnType, SheetInfo, inspect};
pub use resolved::{DatasetSource, ResolvedDataset};

use schemars::JsonSchema;
use scimcp_core::Adapter;
use serde::Serialize;
use tokio::sync::OnceCell;

use crate::envelope::{ErrorCode, ToolError};
use crate::runtime::ScientificRuntime;
use export::ExportError;

/// Prefix of references to the adapter's built-in datasets, e.g. `builtin:iris`.
pub const BUILTIN_PREFIX: &str = "builtin:";
/// Most files listed per root.
const MAX_LISTED: usize = 1000;

/// One entry of `list_datasets`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct DatasetEntry {
    /// Pass this as `dataset` to the other tools.
    pub reference: String,
    pub source: DatasetSource,
    pub file_name: String,
    pub size_bytes: u64,
    /// `table`, `sequences`, `structure`, `fits` or `file` (by extension; inspect_dataset
    /// looks inside).
    pub kind: kinds::FileKind,
    /// The named workflow inputs (`<workflow>.<input>`) whose formats include this file's.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub accepted_by: Vec<String>,
}

/// The datasets a server may read.
#[derive(Debug)]
pub struct DatasetCatalog {
    /// The allowed directories (canonical): the operator's, then the start directory when
    /// it is an ordinary project directory. Relative references resolve against the first.
    file_roots: Vec<PathBuf>,
    /// Why the start directory is not a root, when it is not.
    start_not_root: Option<String>,
    /// Built-ins export to `<datasets_root>/<adapter>-<hash prefix>`, named when first asked
    /// for (the adapter's hash is computed off the start's critical path).
    datasets_root: PathBuf,
    adapter: Arc<Adapter>,
    builtin: OnceCell<Result<PathBuf, Arc<ExportError>>>,
}

impl DatasetCatalog {
    /// `start_dir` and `data_dirs` must be canonical; built-ins materialize under
    /// `datasets_root/<adapter>-<hash prefix>`.
    pub fn new(
        adapter: &Arc<Adapter>,
        start_dir: PathBuf,
        data_dirs: Vec<PathBuf>,
        datasets_root: &Path,
    ) -> Self {
        let start_not_root = roots::implicit_root_problem(&start_dir, roots::home().as_deref());
        let mut file_roots = Vec::new();
        if start_not_root.is_none() {
            file_roots.push(start_dir.clone());
        }
        for d in data_dirs {
            if !file_roots.contains(&d) {
                file_roots.push(d);
            }
        }
        DatasetCatalog {
            file_roots,
            start_not_root,
            datasets_root: datasets_root.to_path_buf(),
            adapter: Arc::clone(adapter),
            builtin: OnceCell::new(),
        }
    }

    /// Where the built-in datasets are exported to.
    fn builtin_home(&self) -> PathBuf {
        self.datasets_root.join(format!(
            "{}-{}",
            self.adapter.manifest.name,
            &self.adapter.sha256()[..12]
        ))
    }

    /// Why the start directory is not a data root, when it is not (said once at start-up).
    pub fn start_dir_note(&self) -> Option<String> {
        self.start_not_root.as_ref().map(|why| {
            format!(
                "the start directory is not used as a data directory: {why}; datasets come from --data-dir directories{}",
                if self.adapter.manifest.datasets.is_some() { " and the built-in datasets" } else { "" }
            )
        })
    }

    /// The directories datasets may come from (built-ins last).
    pub fn roots(&self) -> Vec<PathBuf> {
        let mut roots = self.file_roots.clone();
        if self.adapter.manifest.datasets.is_some() {
            roots.push(self.builtin_home());
        }
        roots
    }

    /// The runs directory beside the datasets' (`<data root>/runs`), whose published
    /// results name the artifacts a request may take as inputs.
    pub(crate) fn runs_dir(&self) -> PathBuf {
        self.datasets_root
            .parent()
            .map_or_else(|| self.datasets_root.join("runs"), |p| p.join("runs"))
    }

    /// The largest dataset this adapter accepts.
    pub fn max_bytes(&self) -> u64 {
        self.adapter.manifest.effective_limits().max_dataset_bytes
    }

    /// Resolve a reference (`builtin:<id>` or a path) to a checked, hashed file.
    pub async fn resolve(
        &self,
        reference: &str,
        runtime: &ScientificRuntime,
    ) -> Result<ResolvedDataset, ToolError> {
        let (root, relative, source) = if let Some(id) = reference.strip_prefix(BUILTIN_PREFIX) {
            let (root, relative) = self.builtin_path(id, runtime).await?;
            (root, relative, DatasetSource::Builtin)
        } else {
            let (root, relative) = self.confined(reference)?;
            (root, relative, DatasetSource::File)
        };
        let max = self.max_bytes();
        let reference = reference.to_string();
        tokio::task::spawn_blocking(move || check_and_hash(reference, source, root, relative, max))
            .await
            .map_err(|e| ToolError::internal(format!("dataset check panicked: {e}")))?
    }

    /// Split a path reference into an allowed directory and the plain path below it,
    /// refusing `..`, paths outside every root and secret-bearing places. Nothing is opened.
    pub(crate) fn confined(&self, reference: &str) -> Result<(PathBuf, PathBuf), ToolError> {
        let dataset_field = |e: ToolError| e.field("dataset");
        if reference.trim().is_empty() {
            return Err(dataset_field(ToolError::new(
                ErrorCode::DatasetNotFound,
                "the dataset reference is empty",
                "call list_datasets and pass one of its references",
            )));
        }
        let given = Path::new(reference);
        if given.components().any(|c| c == Component::ParentDir) {
            return Err(dataset_field(ToolError::new(
                ErrorCode::DatasetOutsideRoots,
                format!(
                    "dataset path '{reference}' contains '..'; paths may not climb out of a directory"
                ),
                "give the path without '..', relative to the first allowed directory or absolute inside one",
            )));
        }
        let outside = || {
            dataset_field(
                ToolError::new(
                    ErrorCode::DatasetOutsideRoots,
                    format!("dataset '{reference}' is not inside an allowed directory"),
                    "copy the file into an allowed directory, or start the server with --data-dir for its directory",
                )
                .allowed(self.roots().iter().map(|r| r.display().to_string())),
            )
        };
        let (root, relative) = if given.is_absolute() {
            self.file_roots
                .iter()
                .find_map(|root| {
                    given
                        .strip_prefix(root)
                        .ok()
                        .map(|rel| (root.clone(), rel.to_path_buf()))
                })
                .ok_or_else(outside)?
        } else {
            let root = self.file_roots.first().ok_or_else(outside)?;
            (root.clone(), given.to_path_buf())
        };
        if let Some(secret) = roots::secret_component(&root.join(&relative)) {
            return Err(dataset_field(ToolError::new(
                ErrorCode::DatasetOutsideRoots,
                format!(
                    "dataset '{reference}' lies in {secret}, a place that holds secrets; scimcp never reads there"
                ),
                "pass a data file from an ordinary data directory",
            )));
        }
        Ok((root, relative))
    }

    async fn builtin_path(
        &self,
        id: &str,
        runtime: &ScientificRuntime,
    ) -> Result<(PathBuf, PathBuf), ToolError> {
        let (dir, entries) = self.builtins(runtime).await?;
        if let Some(b) = entries.iter().find(|b| b.id == id) {
            return Ok((dir, PathBuf::from(&b.file_name)));
        }
        Err(ToolError::new(
            ErrorCode::DatasetNotFound,
            format!("the adapter has no built-in dataset '{id}'"),
            "use one of the allowed references",
        )
        .field("dataset")
        .allowed(entries.iter().map(|b| format!("{BUILTIN_PREFIX}{}", b.id))))
    }

    /// The directory the export command wrote the built-in datasets into, exporting them on
    /// first use.
    async fn builtin_dir(&self, runtime: &ScientificRuntime) -> Result<PathBuf, ToolError> {
        let Some(spec) = &self.adapter.manifest.datasets else {
            return Err(ToolError::new(
                ErrorCode::DatasetNotFound,
                "this adapter declares no built-in datasets",
                "pass the path of a data file instead",
            )
            .field("dataset"));
        };
        let result = self
            .builtin
            .get_or_init(|| async {
                export::materialize(spec, &self.builtin_home(), runtime)
                    .await
                    .map_err(Arc::new)
            })
            .await;
        result.clone().map_err(|problem| {
            ToolError::new(
                ErrorCode::RuntimeUnavailable,
                format!("cannot prepare the built-in datasets: {problem}"),
                "check the scientific runtime with get_environment, or pass the path of a data file",
            )
        })
    }

    /// The built-in datasets: their directory and each one's id, file and size.
    async fn builtins(
        &self,
        runtime: &ScientificRuntime,
    ) -> Result<(PathBuf, Vec<Builtin>), ToolError> {
        let Some(spec) = &self.adapter.manifest.datasets else {
            return Err(ToolError::new(
                ErrorCode::DatasetNotFound,
                "this adapter declares no built-in datasets",
                "pass the path of a data file instead",
            )
            .field("dataset"));
        };
        let dir = match &spec.package_dir {
            Some(rel) => {
                let probe = runtime.probe().await?;
                let package = probe.package.as_ref().and_then(|p| p.path.clone()).ok_or_else(|| {
                    ToolError::new(
                        ErrorCode::RuntimeUnavailable,
                        "the runtime's package is not installed, so its built-in datasets cannot be found",
                        "check the scientific runtime with get_environment",
                    )
                })?;
                fs_err::canonicalize(Path::new(&package).join(rel)).map_err(|e| {
                    ToolError::new(
                        ErrorCode::RuntimeUnavailable,
                        format!("the package's dataset directory {rel} is missing: {e}"),
                        "repair the scientific runtime (scimcp-setup repair)",
                    )
                })?
            }
            None => self.builtin_dir(runtime).await?,
        };
        let files = list_data_files(&dir);
        let entries = if spec.files.is_empty() {
            files
                .into_iter()
                .map(|(name, size)| Builtin {
                    id: builtin_id(&name),
                    file_name: name,
                    size,
                })
                .collect()
        } else {
            spec.files
                .iter()
                .filter_map(|(id, name)| {
                    let size = files.iter().find(|(n, _)| n == name)?.1;
                    Some(Builtin {
                        id: id.clone(),
                        file_name: name.clone(),
                        size,
                    })
                })
                .collect()
        };
        Ok((dir, entries))
    }

    /// Built-in datasets (when the runtime can export them) and the files at the top of each
    /// allowed directory that some workflow accepts (tables when one reads a dataset, the
    /// formats of the named inputs), sorted by reference.
    pub async fn list(&self, runtime: &ScientificRuntime) -> (Vec<DatasetEntry>, Vec<String>) {
        let mut entries = Vec::new();
        let mut notes = Vec::new();
        if self.adapter.manifest.datasets.is_some() {
            match self.builtins(runtime).await {
                Ok((_, builtins)) => entries.extend(builtins.into_iter().map(|b| DatasetEntry {
                    reference: format!("{BUILTIN_PREFIX}{}", b.id),
                    source: DatasetSource::Builtin,
                    kind: kinds::by_name(&b.file_name).map_or(kinds::FileKind::File, |f| f.kind),
                    file_name: b.file_name,
                    size_bytes: b.size,
                    accepted_by: Vec::new(),
                })),
                Err(e) => notes.push(e.message),
            }
        }
        let acceptance = listing::Acceptance::of(&self.adapter);
        for (i, root) in self.file_roots.iter().enumerate() {
            for listing::Listed {
                name,
                size,
                kind,
                accepted_by,
            } in acceptance.files_in(root, MAX_LISTED)
            {
                if roots::secret_component(&root.join(&name)).is_some() {
                    continue;
                }
                // Relative references resolve against the first root.
                let reference = if i == 0 {
                    name.clone()
                } else {
                    root.join(&name).to_string_lossy().into_owned()
                };
                entries.push(DatasetEntry {
                    reference,
                    source: DatasetSource::File,
                    file_name: name,
                    size_bytes: size,
                    kind,
                    accepted_by,
                });
            }
        }
        entries.sort_by(|a, b| a.reference.cmp(&b.reference));
        entries.dedup_by(|a, b| a.reference == b.reference);
        (entries, notes)
    }
}

/// A built-in dataset.
#[derive(Debug, Clone)]
struct Builtin {
    id: String,
    file_name: String,
    size: u64,
}

/// The id of a built-in data file: its stem in lower case, other characters as `_`.
fn builtin_id(file_name: &str) -> String {
    let stem = file_name.rsplit_once('.').map_or(file_name, |(s, _)| s);
    stem.chars()
        .map(|c| {
            let c = c.to_ascii_lowercase();
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// File extensions read as tables: CSV/TSV and spreadsheets.
pub const DATA_EXTENSIONS: &[&str] = &["csv", "tsv", "xlsx", "xlsm", "xls", "ods"];

/// Regular data files directly in `dir` (no symlinks), with sizes, sorted by name.
fn list_data_files(dir: &Path) -> Vec<(String, u64)> {
    let Ok(read) = fs_err::read_dir(dir) else {
        return Vec::new();
    };
    let mut out: Vec<(String, u64)> = read
        .filter_map(Result::ok)
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let meta = e.metadata().ok()?;
            let ext = name.rsplit_once('.')?.1.to_ascii_lowercase();
            (meta.is_file() && DATA_EXTENSIONS.contains(&ext.as_str()))
                .then_some((name, meta.len()))
        })
        .collect();
    out.sort();
    out.truncate(MAX_LISTED);
    out
}

fn check_and_hash(
    reference: String,
    source: DatasetSource,
    root: PathBuf,
    relative: PathBuf,
    max_bytes: u64,
) -> Result<ResolvedDataset, ToolError> {
    let file_name = relative
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "dataset.csv".into());
    // The name is written into the run's plan (and may be an answer on the CLI's stdin):
    // a control character in it would change the shape of what the CLI receives.
    if file_name.chars().any(char::is_control) {
        return Err(ToolError::new(
            ErrorCode::DatasetNotRegular,
            format!(
                "dataset '{}' has a control character (a line break, a tab, NUL…) in its file name",
                reference.escape_debug()
            ),
            "rename the file without control characters",
        )
        .field("dataset"));
    }
    // The plan names run paths symbolically and the server substitutes them when the run
    // starts: a file named after one would have its name replaced too.
    if let Some(token) = scimcp_core::manifest::ABSOLUTE_RUN_VALUES
        .iter()
        .map(|v| format!("{{{v}}}"))
        .find(|t| file_name.contains(t.as_str()))
    {
        return Err(ToolError::new(
            ErrorCode::DatasetNotRegular,
            format!(
                "dataset '{}' has {token} in its file name, text the server replaces with a run path",
                reference.escape_debug()
            ),
            "rename the file",
        )
        .field("dataset"));
    }
    let mut opened = open::open_confined(&root, &relative, &reference, max_bytes)?;
    let (sha256, size_bytes) = opened.sha256(&reference, max_bytes)?;
    Ok(ResolvedDataset {
        path: root.join(&relative),
        reference,
        source,
        file_name,
        size_bytes,
        sha256,
        root,
        relative,
    })
}
