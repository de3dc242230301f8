//! The one error envelope every tool returns: a machine-readable code, the offending field,
//! the allowed values where they are few, and the next action, with bounded text.

use rmcp::model::{CallToolResult, ContentBlock};
use schemars::JsonSchema;
use serde::Serialize;

/// Longest message text an error carries (model-facing text stays bounded).
const MAX_MESSAGE_CHARS: usize = 1000;
/// Most issues listed in one envelope.
const MAX_ISSUES: usize = 20;
/// Most allowed values listed.
const MAX_ALLOWED: usize = 32;

/// Machine-readable error codes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    /// The arguments do not match the tool's input schema.
    InvalidRequest,
    /// The workflow is not declared by the adapter.
    UnknownWorkflow,
    /// The parameters do not match the workflow's schema.
    InvalidParameters,
    /// The dataset reference names no readable file.
    DatasetNotFound,
    /// The dataset resolves outside the allowed roots.
    DatasetOutsideRoots,
    /// The dataset is not a regular file (directory, FIFO, device, hard link).
    DatasetNotRegular,
    /// The dataset is larger than the adapter allows.
    DatasetTooLarge,
    /// The dataset's bytes changed since they were validated.
    DatasetChanged,
    /// The dataset is not a readable CSV table.
    DatasetUnreadable,
    /// The request is valid but the environment cannot run it yet.
    NotReady,
    /// The validation id does not match the request.
    StaleValidation,
    /// No run has this id.
    UnknownRun,
    /// Too many runs are queued or running.
    TooManyRuns,
    /// The scientific runtime is missing or broken.
    RuntimeUnavailable,
    /// The answer would exceed the response ceiling; page or narrow the request.
    ResponseTooLarge,
    /// This server acts only on a confirmed preview (`confirm: true` with its id).
    ConfirmationRequired,
    /// Something failed inside the server; the message says what.
    Internal,
}

/// One problem with one field.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize, JsonSchema)]
pub struct Issue {
    /// Dotted path of the offending field, e.g. `parameters.seed`.
    pub field: String,
    pub message: String,
    /// Accepted values, when they are few.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub allowed: Vec<String>,
}

/// The error envelope.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct ToolError {
    pub code: ErrorCode,
    pub message: String,
    /// The offending field or path, when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
    /// Accepted values, when they are few.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub allowed: Vec<String>,
    /// What the caller should do next.
    pub next_action: String,
    /// Every problem found, when there are several.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub issues: Vec<Issue>,
    /// Issues left out of `issues` to keep the envelope bounded.
    #[serde(skip_serializing_if = "is_zero")]
    pub issues_omitted: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

fn bounded(text: String) -> String {
    if text.chars().count() <= MAX_MESSAGE_CHARS {
        return text;
    }
    let mut cut: String = text.chars().take(MAX_MESSAGE_CHARS - 1).collect();
    cut.push('…');
    cut
}

impl ToolError {
    pub fn new(
        code: ErrorCode,
        message: impl Into<String>,
        next_action: impl Into<String>,
    ) -> Self {
        ToolError {
            code,
            message: bounded(message.into()),
            field: None,
            allowed: Vec::new(),
            next_action: bounded(next_action.into()),
            issues: Vec::new(),
            issues_omitted: 0,
        }
    }

    pub fn field(mut self, field: impl Into<String>) -> Self {
        self.field = Some(field.into());
        self
    }

    pub fn allowed<I, S>(mut self, values: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.allowed = values
            .into_iter()
            .take(MAX_ALLOWED)
            .map(Into::into)
            .collect();
        self
    }

    pub fn issues(mut self, mut issues: Vec<Issue>) -> Self {
        if issues.len() > MAX_ISSUES {
            self.issues_omitted = issues.len() - MAX_ISSUES;
            issues.truncate(MAX_ISSUES);
        }
        for issue in &mut issues {
            issue.message = bounded(std::mem::take(&mut issue.message));
            issue.allowed.truncate(MAX_ALLOWED);
        }
        self.issues = issues;
        self
    }

    pub fn internal(message: impl Into<String>) -> Self {
        ToolError::new(
            ErrorCode::Internal,
            message,
            "retry once; if it fails again, run scimcp-doctor and report the server's stderr log",
        )
    }

    /// The tool result carrying this envelope (`isError: true`), with a one-line summary
    /// for the model and the envelope as structured content.
    pub fn into_result(self) -> CallToolResult {
        let mut summary = format!("error [{:?}]: {}", self.code, self.message);
        if let Some(field) = &self.field {
            summary.push_str(&format!(" (field: {field})"));
        }
        summary.push_str(&format!(" Next: {}", self.next_action));
        let structured = serde_json::json!({ "error": self });
        let mut result = CallToolResult::error(vec![
            ContentBlock::text(summary),
            ContentBlock::text(structured.to_string()),
        ]);
        result.structured_content = Some(structured);
        result
    }
}

impl std::fmt::Display for ToolError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?}: {}", self.code, self.message)
    }
}

/// Strictly deserialize tool arguments into `T`, turning the first problem into an envelope
/// that names the field (unknown fields, wrong types and missing fields alike).
pub fn parse_args<T: serde::de::DeserializeOwned>(
    tool: &str,
    args: Option<serde_json::Map<String, serde_json::Value>>,
) -> Result<T, ToolError> {
    let value = serde_json::Value::Object(args.unwrap_or_default());
    serde_path_to_error::deserialize::<_, T>(value).map_err(|e| {
        let path = e.path().to_string();
        let message = e.inner().to_string();
        let (field, allowed) = field_from_serde(&path, &message);
        ToolError::new(
            ErrorCode::InvalidRequest,
            format!("invalid arguments for {tool}: {message}"),
            format!(
                "fix `{field}` and call {tool} again; the tool's input schema lists every field"
            ),
        )
        .field(field)
        .allowed(allowed)
    })
}

/// The field a serde error is about: serde names unknown and missing fields only in the
/// message, so pull the name out of it and append it to the path.
fn field_from_serde(path: &str, message: &str) -> (String, Vec<String>) {
    let base = if path == "." { "" } else { path };
    let join = |name: &str| {
        // serde_path_to_error already ends the path with an unknown field's name.
        if base == name || base.ends_with(&format!(".{name}")) {
            base.to_string()
        } else if base.is_empty() {
            name.to_string()
        } else {
            format!("{base}.{name}")
        }
    };
    let quoted = |s: &str| -> Vec<String> {
        s.split('`')
            .enumerate()
            .filter(|(i, _)| i % 2 == 1)
            .map(|(_, s)| s.to_string())
            .collect()
    };
    if let Some(rest) = message.strip_prefix("unknown field ") {
        let names = quoted(rest);
        if let Some((name, allowed)) = names.split_first() {
            return (join(name), allowed.to_vec());
        }
    }
    if let Some(rest) = message.strip_prefix("missing field ")
        && let Some(name) = quoted(rest).first()
    {
        return (join(name), Vec::new());
    }
    if let Some(rest) = message.strip_prefix("unknown variant ") {
        let names = quoted(rest);
        if let Some((_, allowed)) = names.split_first() {
            return (
                if base.is_empty() {
                    "(root)".into()
                } else {
                    base.into()
                },
                allowed.to_vec(),
            );
        }
    }
    (
        if base.is_empty() {
            "(root)".into()
        } else {
            base.into()
        },
        Vec::new(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Args {
        run_id: String,
        #[serde(default)]
        wait_s: Option<u32>,
    }

    fn args(v: serde_json::Value) -> Option<serde_json::Map<String, serde_json::Value>> {
        v.as_object().cloned()
    }

    #[test]
    fn unknown_field_is_named_with_allowed() {
        let e = parse_args::<Args>("t", args(serde_json::json!({"run_id": "r", "colour": 1})))
            .unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidRequest);
        assert_eq!(e.field.as_deref(), Some("colour"));
        assert_eq!(e.allowed, vec!["run_id", "wait_s"]);
    }

    #[test]
    fn wrong_type_and_missing_are_named() {
        let e = parse_args::<Args>("t", args(serde_json::json!({"run_id": "r", "wait_s": "x"})))
            .unwrap_err();
        assert_eq!(e.field.as_deref(), Some("wait_s"));
        let e = parse_args::<Args>("t", args(serde_json::json!({}))).unwrap_err();
        assert_eq!(e.field.as_deref(), Some("run_id"));
        assert!(e.message.contains("missing field"), "{}", e.message);
    }
}
