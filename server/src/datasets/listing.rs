//! Which files `list_datasets` shows: tables when some workflow reads a dataset, and every
//! file whose format (extension or media type) some `[[workflow.input]]` accepts, each with
//! its kind and the inputs that accept it.

use std::path::Path;

use scimcp_core::Adapter;
use scimcp_core::manifest::InputSpec;

use super::kinds::{self, FileKind};

/// What the adapter's workflows accept.
#[derive(Debug)]
pub struct Acceptance<'a> {
    /// Some workflow reads a table (`{dataset}`, column features, or no named inputs).
    tables: bool,
    /// `(workflow id, input)` for every named input.
    inputs: Vec<(&'a str, &'a InputSpec)>,
}

/// One listed file: name, size, kind, and the `workflow.input` ids that accept it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listed {
    pub name: String,
    pub size: u64,
    pub kind: FileKind,
    pub accepted_by: Vec<String>,
}

impl<'a> Acceptance<'a> {
    pub fn of(adapter: &'a Adapter) -> Acceptance<'a> {
        let workflows = &adapter.manifest.workflows;
        Acceptance {
            tables: workflows.iter().any(crate::workflow_reads::takes_dataset),
            inputs: workflows
                .iter()
                .flat_map(|w| w.inputs.iter().map(move |i| (w.id.as_str(), i)))
                .collect(),
        }
    }

    /// The kind of `name` and who accepts it, or `None` when nothing does.
    pub fn accepts(&self, name: &str) -> Option<(FileKind, Vec<String>)> {
        let format = kinds::by_name(name);
        let kind = format.map_or(FileKind::File, |f| f.kind);
        let media = kinds::media_types(name);
        let accepted_by: Vec<String> = self
            .inputs
            .iter()
            .filter(|(_, input)| {
                input.accepts(name, None) || media.iter().any(|m| input.accepts(name, Some(m)))
            })
            .map(|(workflow, input)| format!("{workflow}.{}", input.id))
            .collect();
        (!accepted_by.is_empty() || (self.tables && kind == FileKind::Table))
            .then_some((kind, accepted_by))
    }

    /// The accepted regular files directly in `dir` (no links followed), sorted by name, at
    /// most `max`.
    pub fn files_in(&self, dir: &Path, max: usize) -> Vec<Listed> {
        let Ok(read) = fs_err::read_dir(dir) else {
            return Vec::new();
        };
        let mut out: Vec<Listed> = read
            .filter_map(Result::ok)
            .filter_map(|e| {
                let name = e.file_name().to_string_lossy().into_owned();
                // `DirEntry::metadata` does not follow a link: a link is not a file here.
                let meta = e.metadata().ok()?;
                if !meta.is_file() {
                    return None;
                }
                let (kind, accepted_by) = self.accepts(&name)?;
                Some(Listed {
                    name,
                    size: meta.len(),
                    kind,
                    accepted_by,
                })
            })
            .collect();
        out.sort_by(|a, b| a.name.cmp(&b.name));
        out.truncate(max);
        out
    }
}
