//! What compiling a plan can fail with: a template of the workflow that does not render for
//! this request. The compiler (`plan_compile.rs`), the argv assembly (`plan_argv.rs`) and the
//! steps (`plan_steps.rs`) all return it; this file imports none of them.

/// Why a workflow's templates do not render into a plan for this request.
#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    /// A template that does not parse (the manifest's load check parses each one first).
    #[error("{0}")]
    Template(String),
    #[error("the run has no dataset")]
    NoDataset,
    #[error(
        "the template {template:?} names several inputs with several files; one argument can repeat for one list only"
    )]
    SeveralLists { template: String },
    #[error("parameter '{name}' has no value")]
    NoValue { name: String },
    #[error("parameter '{name}' = {key:?} has no entry in its map")]
    NoMapEntry { name: String, key: String },
    #[error("the dataset's columns are not known")]
    ColumnsUnknown,
    #[error("the dataset has no column '{column}'")]
    NoColumn { column: String },
    #[error("column {column} of '{name}' is not among {sources}")]
    NotAmong {
        column: String,
        name: String,
        sources: String,
    },
    #[error("input file {path} cannot be JSON: {source}")]
    Json {
        path: String,
        #[source]
        source: serde_json::Error,
    },
    #[error("input file {path} cannot be TOML: {source}")]
    Toml {
        path: String,
        #[source]
        source: toml::ser::Error,
    },
}

impl PlanError {
    /// A template's parse error, with its text as the manifest check words it.
    pub(crate) fn template(e: impl std::fmt::Display) -> PlanError {
        PlanError::Template(e.to_string())
    }
}

impl From<PlanError> for crate::envelope::ToolError {
    /// An internal error (validation checked the request against the schema first, so a
    /// template that still does not render is the server's or the manifest's fault), with the
    /// parameter it names as the field.
    fn from(e: PlanError) -> Self {
        let field = match &e {
            PlanError::NoValue { name }
            | PlanError::NoMapEntry { name, .. }
            | PlanError::NotAmong { name, .. } => Some(format!("parameters.{name}")),
            PlanError::NoDataset | PlanError::ColumnsUnknown | PlanError::NoColumn { .. } => {
                Some("dataset".to_string())
            }
            _ => None,
        };
        let error = crate::envelope::ToolError::internal(format!("cannot compile the plan: {e}"));
        match field {
            Some(field) => error.field(field),
            None => error,
        }
    }
}
