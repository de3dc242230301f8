//! Why a CWL document could not become an adapter, or a job a request.

use std::path::PathBuf;

use scimcp_core::manifest::ManifestErrors;

/// Everything the front end refuses, each naming where.
#[derive(Debug, thiserror::Error)]
pub enum CwlError {
    #[error("{}: cannot read it: {source}", path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    /// A job value that does not fit the tool's inputs: a wrong type, a missing File, a
    /// required secondary file not found, a format the input does not accept.
    #[error("input `{input}`: {message}")]
    Input { input: String, message: String },
    #[error("{}{}: not a valid CWL document: {message}", path.display(), line_suffix(*line))]
    Syntax {
        path: PathBuf,
        line: Option<usize>,
        message: String,
    },
    /// A field this runner does not implement (cwl-run exits 33 for it).
    #[error("{}{}: `{field}` is not supported by scimcp: {message}", path.display(), line_suffix(*line))]
    Unsupported {
        path: PathBuf,
        line: Option<usize>,
        field: String,
        message: String,
    },
    /// A field whose value is wrong by the CWL specification.
    #[error("{}{}: `{field}`: {message}", path.display(), line_suffix(*line))]
    Invalid {
        path: PathBuf,
        line: Option<usize>,
        field: String,
        message: String,
    },
    /// The generated manifest failed core's checks.
    #[error("{}: the adapter generated from it is not valid: {errors}", path.display())]
    Manifest {
        path: PathBuf,
        errors: ManifestErrors,
    },
    #[error("job {}: {message}", path.display())]
    Job { path: PathBuf, message: String },
    /// A finished run whose output directory does not give the output object the tool
    /// declares (a missing or mistyped output, a glob or symlink leaving the directory).
    #[error("output `{output}`: {message}")]
    Output { output: String, message: String },
    /// A job whose command line cannot be built (an expression giving the wrong kind of
    /// value, a stream or work-dir name leaving the output directory).
    #[error("the command line cannot be built: `{field}`: {message}")]
    Command { field: String, message: String },
}

impl CwlError {
    /// True for the refusals a `cwl-runner` reports as "unsupported feature".
    pub fn is_unsupported(&self) -> bool {
        matches!(self, CwlError::Unsupported { .. })
    }
}

fn line_suffix(line: Option<usize>) -> String {
    line.map(|l| format!(":{l}")).unwrap_or_default()
}

impl CwlError {
    /// The same problems as manifest errors (file, line, field, message, hint), for the
    /// callers that report every adapter problem one way (`adapter check`, `serve`).
    pub fn into_manifest_errors(self) -> ManifestErrors {
        use scimcp_core::manifest::ManifestError;
        let one =
            |file: PathBuf, line: Option<usize>, field: String, message: String, hint: &str| {
                ManifestErrors(vec![ManifestError {
                    file,
                    line,
                    column: None,
                    field,
                    message,
                    hint: Some(hint.to_string()),
                }])
            };
        match self {
            CwlError::Manifest { errors, .. } => errors,
            CwlError::Unsupported {
                path,
                line,
                field,
                message,
            } => one(
                path,
                line,
                field,
                format!("not supported by scimcp: {message}"),
                "see docs/CWL.md for the CWL v1.2 CommandLineTool features scimcp serves",
            ),
            CwlError::Invalid {
                path,
                line,
                field,
                message,
            } => one(
                path,
                line,
                field,
                message,
                "fix the CWL document (CWL v1.2 CommandLineTool)",
            ),
            CwlError::Syntax {
                path,
                line,
                message,
            } => one(
                path,
                line,
                String::new(),
                format!("not valid YAML/JSON: {message}"),
                "fix the syntax at this line",
            ),
            other => {
                let text = other.to_string();
                one(
                    PathBuf::new(),
                    None,
                    String::new(),
                    text,
                    "check the path of the CWL document",
                )
            }
        }
    }
}
