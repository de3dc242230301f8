//! Datasets: resolving references to files inside the allowed roots, the adapter's
//! built-in datasets, and CSV inspection.
//!
//! Every check that can refuse a path (`..`, escapes through symlinks, hard links, non-regular
//! files, size) runs on metadata before a single byte of the file is read.

use std::path::{Component, Path, PathBuf};
use std::time::Duration;

use schemars::JsonSchema;
use scimcp_core::Adapter;
use scimcp_core::manifest::{DatasetsSpec, Template};
use serde::Serialize;
use tokio::sync::OnceCell;

use crate::envelope::{ErrorCode, ToolError};
use crate::runtime::ScientificRuntime;

/// Prefix of references to the adapter's built-in datasets, e.g. `builtin:iris`.
pub const BUILTIN_PREFIX: &str = "builtin:";
/// How long materializing the built-in datasets may take.
const EXPORT_TIMEOUT: Duration = Duration::from_secs(300);
/// Longest cell text shown in samples.
const MAX_CELL_CHARS: usize = 120;
/// Longest column name reported.
const MAX_NAME_CHARS: usize = 256;
/// Most files listed per root.
const MAX_LISTED: usize = 1000;

/// Where a dataset comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DatasetSource {
    Builtin,
    File,
}

/// A dataset reference resolved to a checked file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct ResolvedDataset {
    /// The reference as the client gave it.
    pub reference: String,
    pub source: DatasetSource,
    /// Canonical absolute path.
    pub path: PathBuf,
    pub file_name: String,
    pub size_bytes: u64,
    pub sha256: String,
}

/// One entry of `list_datasets`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct DatasetEntry {
    /// Pass this as `dataset` to the other tools.
    pub reference: String,
    pub source: DatasetSource,
    pub file_name: String,
    pub size_bytes: u64,
}

/// The datasets a server may read.
#[derive(Debug)]
pub struct DatasetCatalog {
    start_dir: PathBuf,
    data_dirs: Vec<PathBuf>,
    max_bytes: u64,
    builtin_spec: Option<DatasetsSpec>,
    builtin_dir: PathBuf,
    builtin: OnceCell<Result<PathBuf, String>>,
}

impl DatasetCatalog {
    /// `start_dir` and `data_dirs` must be canonical; built-ins materialize under
    /// `datasets_root/<adapter>-<hash prefix>`.
    pub fn new(
        adapter: &Adapter,
        start_dir: PathBuf,
        data_dirs: Vec<PathBuf>,
        datasets_root: &Path,
    ) -> Self {
        DatasetCatalog {
            start_dir,
            data_dirs,
            max_bytes: adapter.manifest.effective_limits().max_dataset_bytes,
            builtin_spec: adapter.manifest.datasets.clone(),
            builtin_dir: datasets_root.join(format!(
                "{}-{}",
                adapter.manifest.name,
                &adapter.sha256[..12]
            )),
            builtin: OnceCell::new(),
        }
    }

    /// The directories datasets may come from (built-ins last).
    pub fn roots(&self) -> Vec<PathBuf> {
        let mut roots = vec![self.start_dir.clone()];
        roots.extend(self.data_dirs.iter().cloned());
        if self.builtin_spec.is_some() {
            roots.push(self.builtin_dir.clone());
        }
        roots
    }

    /// Resolve a reference (`builtin:<id>` or a path) to a checked, hashed file.
    pub async fn resolve(
        &self,
        reference: &str,
        runtime: &ScientificRuntime,
    ) -> Result<ResolvedDataset, ToolError> {
        let (path, source) = if let Some(id) = reference.strip_prefix(BUILTIN_PREFIX) {
            (
                self.builtin_path(id, runtime).await?,
                DatasetSource::Builtin,
            )
        } else {
            (self.confined_path(reference)?, DatasetSource::File)
        };
        let max = self.max_bytes;
        let reference = reference.to_string();
        tokio::task::spawn_blocking(move || check_and_hash(reference, source, path, max))
            .await
            .map_err(|e| ToolError::internal(format!("dataset check panicked: {e}")))?
    }

    fn confined_path(&self, reference: &str) -> Result<PathBuf, ToolError> {
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
                "give the path without '..', relative to the server's start directory or absolute inside an allowed root",
            )));
        }
        let joined = if given.is_absolute() {
            given.to_path_buf()
        } else {
            self.start_dir.join(given)
        };
        let canonical = fs_err::canonicalize(&joined).map_err(|_| {
            dataset_field(ToolError::new(
                ErrorCode::DatasetNotFound,
                format!("no dataset at '{reference}'"),
                "call list_datasets to see the datasets the server can read",
            ))
        })?;
        let inside = self.roots().iter().any(|root| canonical.starts_with(root));
        if !inside {
            return Err(dataset_field(
                ToolError::new(
                    ErrorCode::DatasetOutsideRoots,
                    format!("dataset '{reference}' resolves outside the allowed directories (symbolic links are followed before this check)"),
                    "copy the file into an allowed directory or start the server with --data-dir for its directory",
                )
                .allowed(self.roots().iter().map(|r| r.display().to_string())),
            ));
        }
        Ok(canonical)
    }

    async fn builtin_path(
        &self,
        id: &str,
        runtime: &ScientificRuntime,
    ) -> Result<PathBuf, ToolError> {
        let valid_id = !id.is_empty()
            && id
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
        let dir = self.builtin_dir(runtime).await?;
        let path = dir.join(format!("{id}.csv"));
        if valid_id && path.is_file() {
            return Ok(path);
        }
        let known = list_csv(&dir)
            .into_iter()
            .map(|(name, _)| format!("{BUILTIN_PREFIX}{}", name.trim_end_matches(".csv")));
        Err(ToolError::new(
            ErrorCode::DatasetNotFound,
            format!("the adapter has no built-in dataset '{id}'"),
            "use one of the allowed references",
        )
        .field("dataset")
        .allowed(known))
    }

    /// The directory holding the built-in datasets, exporting them on first use.
    async fn builtin_dir(&self, runtime: &ScientificRuntime) -> Result<PathBuf, ToolError> {
        let Some(spec) = &self.builtin_spec else {
            return Err(ToolError::new(
                ErrorCode::DatasetNotFound,
                "this adapter declares no built-in datasets",
                "pass the path of a CSV file instead",
            )
            .field("dataset"));
        };
        let result = self
            .builtin
            .get_or_init(|| materialize(spec, &self.builtin_dir, runtime))
            .await;
        result.clone().map_err(|problem| {
            ToolError::new(
                ErrorCode::RuntimeUnavailable,
                format!("cannot prepare the built-in datasets: {problem}"),
                "check the scientific runtime with get_environment, or pass the path of a CSV file",
            )
        })
    }

    /// Built-in datasets (when the runtime can export them) and the CSV files at the top of
    /// each allowed directory, sorted by reference.
    pub async fn list(&self, runtime: &ScientificRuntime) -> (Vec<DatasetEntry>, Vec<String>) {
        let mut entries = Vec::new();
        let mut notes = Vec::new();
        if self.builtin_spec.is_some() {
            match self.builtin_dir(runtime).await {
                Ok(dir) => {
                    entries.extend(list_csv(&dir).into_iter().map(|(name, size)| DatasetEntry {
                        reference: format!("{BUILTIN_PREFIX}{}", name.trim_end_matches(".csv")),
                        source: DatasetSource::Builtin,
                        file_name: name,
                        size_bytes: size,
                    }))
                }
                Err(e) => notes.push(e.message),
            }
        }
        let mut roots = vec![self.start_dir.clone()];
        roots.extend(self.data_dirs.iter().cloned());
        for root in roots {
            for (name, size) in list_csv(&root) {
                let path = root.join(&name);
                let reference = match path.strip_prefix(&self.start_dir) {
                    Ok(rel) => rel.to_string_lossy().into_owned(),
                    Err(_) => path.to_string_lossy().into_owned(),
                };
                entries.push(DatasetEntry {
                    reference,
                    source: DatasetSource::File,
                    file_name: name,
                    size_bytes: size,
                });
            }
        }
        entries.sort_by(|a, b| a.reference.cmp(&b.reference));
        entries.dedup_by(|a, b| a.reference == b.reference);
        (entries, notes)
    }
}

/// Regular `*.csv` files directly in `dir` (no symlinks), with sizes, sorted by name.
fn list_csv(dir: &Path) -> Vec<(String, u64)> {
    let Ok(read) = fs_err::read_dir(dir) else {
        return Vec::new();
    };
    let mut out: Vec<(String, u64)> = read
        .filter_map(Result::ok)
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let meta = e.metadata().ok()?;
            (meta.is_file() && name.to_ascii_lowercase().ends_with(".csv"))
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
    path: PathBuf,
    max_bytes: u64,
) -> Result<ResolvedDataset, ToolError> {
    let meta = fs_err::metadata(&path).map_err(|_| {
        ToolError::new(
            ErrorCode::DatasetNotFound,
            format!("no dataset at '{reference}'"),
            "call list_datasets",
        )
        .field("dataset")
    })?;
    if !meta.is_file() {
        return Err(ToolError::new(
            ErrorCode::DatasetNotRegular,
            format!("dataset '{reference}' is not a regular file (a directory, FIFO or device cannot be analysed)"),
            "pass the path of a CSV file",
        )
        .field("dataset"));
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if meta.nlink() > 1 {
            return Err(ToolError::new(
                ErrorCode::DatasetNotRegular,
                format!("dataset '{reference}' has {} hard links; a hard-linked file cannot be proven to stay inside the allowed directories", meta.nlink()),
                "copy the file (cp makes an independent copy) and pass the copy",
            )
            .field("dataset"));
        }
    }
    if meta.len() > max_bytes {
        return Err(ToolError::new(
            ErrorCode::DatasetTooLarge,
            format!("dataset '{reference}' is {} bytes, above this adapter's limit of {max_bytes} bytes", meta.len()),
            "use a smaller extract of the data",
        )
        .field("dataset"));
    }
    let (sha256, size_bytes) = scimcp_core::hash::sha256_file(&path).map_err(|e| {
        ToolError::new(
            ErrorCode::DatasetNotFound,
            format!("cannot read dataset '{reference}': {e}"),
            "check the file's permissions",
        )
        .field("dataset")
    })?;
    let file_name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "dataset.csv".into());
    Ok(ResolvedDataset {
        reference,
        source,
        path,
        file_name,
        size_bytes,
        sha256,
    })
}

/// Run the adapter's export command into a scratch directory, then rename it into place,
/// so a half-written export is never used and two servers racing both end up consistent.
async fn materialize(
    spec: &DatasetsSpec,
    dir: &Path,
    runtime: &ScientificRuntime,
) -> Result<PathBuf, String> {
    if dir.is_dir() {
        return Ok(dir.to_path_buf());
    }
    let (program, launch) = runtime.command_prefix().map_err(|e| e.message)?;
    let parent = dir.parent().ok_or("datasets directory has no parent")?;
    scimcp_core::fs::create_private_dir(parent).map_err(|e| e.to_string())?;
    let scratch = parent.join(format!(".export-{}", uuid::Uuid::new_v4().simple()));
    scimcp_core::fs::create_private_dir(&scratch).map_err(|e| e.to_string())?;
    let scratch_text = scratch.to_string_lossy().into_owned();
    let mut args: Vec<String> = launch.to_vec();
    for arg in &spec.export {
        let t = Template::parse(arg).map_err(|e| e.to_string())?;
        args.push(t.render(|_| Ok::<_, String>(scratch_text.clone()))?);
    }
    let cmd = crate::runs::child::isolated_std_command(program, &args, &scratch, runtime.env());
    let step =
        scimcp_process::Step::new("the built-in dataset export", cmd).timeout(EXPORT_TIMEOUT);
    let outcome = tokio::task::spawn_blocking(move || scimcp_process::run(step))
        .await
        .map_err(|e| e.to_string())
        .and_then(|r| {
            r.and_then(scimcp_process::Captured::check)
                .map_err(|e| e.to_string())
        });
    if let Err(e) = outcome {
        let _ = fs_err::remove_dir_all(&scratch);
        return Err(e);
    }
    let cleanup = |scratch: &Path| {
        let _ = fs_err::remove_dir_all(scratch);
    };
    match fs_err::rename(&scratch, dir) {
        Ok(()) => Ok(dir.to_path_buf()),
        Err(_) if dir.is_dir() => {
            cleanup(&scratch);
            Ok(dir.to_path_buf())
        }
        Err(e) => {
            cleanup(&scratch);
            Err(e.to_string())
        }
    }
}

/// The inferred type of a CSV column.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ColumnType {
    Integer,
    Number,
    Boolean,
    String,
    /// Every cell is empty.
    Empty,
}

/// One column of an inspected table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct ColumnInfo {
    pub name: String,
    pub inferred_type: ColumnType,
    /// Empty cells.
    pub missing: u64,
}

/// What `inspect_dataset` reports.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Inspection {
    pub dataset: ResolvedDataset,
    pub row_count: u64,
    pub column_count: usize,
    pub columns: Vec<ColumnInfo>,
    /// The first rows, each cell cut to 120 characters.
    pub sample_rows: Vec<Vec<String>>,
}

/// Read the whole CSV once: header, per-column types and missing counts, rows, samples.
pub fn inspect_csv(dataset: ResolvedDataset, sample_rows: usize) -> Result<Inspection, ToolError> {
    let unreadable = |msg: String| {
        ToolError::new(
            ErrorCode::DatasetUnreadable,
            msg,
            "pass a comma-separated UTF-8 file with a header row",
        )
        .field("dataset")
    };
    let file = fs_err::File::open(&dataset.path)
        .map_err(|e| unreadable(format!("cannot open dataset: {e}")))?;
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(true)
        .from_reader(file);
    let headers = reader
        .headers()
        .map_err(|e| {
            unreadable(format!(
                "dataset '{}' has no readable header row: {e}",
                dataset.reference
            ))
        })?
        .clone();
    if headers.is_empty() {
        return Err(unreadable(format!(
            "dataset '{}' is empty",
            dataset.reference
        )));
    }
    let mut kinds: Vec<Option<ColumnType>> = vec![None; headers.len()];
    let mut missing = vec![0u64; headers.len()];
    let mut rows = 0u64;
    let mut samples = Vec::new();
    let mut record = csv::StringRecord::new();
    loop {
        match reader.read_record(&mut record) {
            Ok(false) => break,
            Ok(true) => {}
            Err(e) => {
                let line = e.position().map(|p| p.line()).unwrap_or(rows + 2);
                return Err(unreadable(format!(
                    "dataset '{}' is not valid CSV at line {line}: {e}",
                    dataset.reference
                )));
            }
        }
        rows += 1;
        for (i, cell) in record.iter().enumerate() {
            let cell = cell.trim();
            if cell.is_empty() {
                missing[i] += 1;
                continue;
            }
            kinds[i] = Some(widen(kinds[i], classify(cell)));
        }
        if samples.len() < sample_rows {
            samples.push(
                record
                    .iter()
                    .map(|c| c.chars().take(MAX_CELL_CHARS).collect())
                    .collect(),
            );
        }
    }
    let columns = headers
        .iter()
        .zip(kinds)
        .zip(missing)
        .map(|((name, kind), missing)| ColumnInfo {
            name: name.chars().take(MAX_NAME_CHARS).collect(),
            inferred_type: kind.unwrap_or(ColumnType::Empty),
            missing,
        })
        .collect();
    Ok(Inspection {
        row_count: rows,
        column_count: headers.len(),
        columns,
        sample_rows: samples,
        dataset,
    })
}

fn classify(cell: &str) -> ColumnType {
    if cell.parse::<i64>().is_ok() {
        ColumnType::Integer
    } else if cell.parse::<f64>().is_ok() {
        ColumnType::Number
    } else if cell.eq_ignore_ascii_case("true") || cell.eq_ignore_ascii_case("false") {
        ColumnType::Boolean
    } else {
        ColumnType::String
    }
}

fn widen(current: Option<ColumnType>, next: ColumnType) -> ColumnType {
    use ColumnType::*;
    match (current, next) {
        (None, n) => n,
        (Some(c), n) if c == n => c,
        (Some(Integer), Number) | (Some(Number), Integer) => Number,
        _ => String,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resolved(path: PathBuf) -> ResolvedDataset {
        ResolvedDataset {
            reference: "t.csv".into(),
            source: DatasetSource::File,
            path,
            file_name: "t.csv".into(),
            size_bytes: 0,
            sha256: String::new(),
        }
    }

    #[test]
    fn inspect_infers_types_and_counts() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.csv");
        fs_err::write(&path, "a,b,c,d\n1,2.5,x,true\n2,,y,false\n3,4,,TRUE\n").unwrap();
        let i = inspect_csv(resolved(path), 2).unwrap();
        assert_eq!(i.row_count, 3);
        let types: Vec<_> = i.columns.iter().map(|c| c.inferred_type).collect();
        assert_eq!(
            types,
            vec![
                ColumnType::Integer,
                ColumnType::Number,
                ColumnType::String,
                ColumnType::Boolean
            ]
        );
        assert_eq!(i.columns[1].missing, 1);
        assert_eq!(i.sample_rows.len(), 2);
    }

    #[test]
    fn ragged_csv_is_unreadable_with_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.csv");
        fs_err::write(&path, "a,b\n1,2\n3\n").unwrap();
        let e = inspect_csv(resolved(path), 0).unwrap_err();
        assert_eq!(e.code, ErrorCode::DatasetUnreadable);
        assert!(e.message.contains("line 3"), "{}", e.message);
    }
}
