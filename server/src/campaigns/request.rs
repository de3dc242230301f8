//! Arguments of the campaign tools. Every one is strict: unknown fields are refused with the
//! field named.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::paging::Detail;

/// One item: a dataset and/or named inputs, and the workflow's parameters for it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CampaignItem {
    /// Dataset reference, as for validate_analysis (for workflows that read a table).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dataset: Option<String>,
    /// Named file inputs, as for validate_analysis.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub inputs: crate::inputs::RequestInputs,
    /// The workflow's parameters for this item.
    #[serde(default)]
    pub parameters: Map<String, Value>,
}

/// Items as a grid: every dataset × every combination of the inputs × every parameter set ×
/// every combination of the varied values, in that order (input ids and varied names
/// sorted; the last one changes fastest).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CampaignGrid {
    /// Dataset references (for workflows that read a table; empty for one that does not).
    #[serde(default)]
    pub datasets: Vec<String>,
    /// Named inputs and the references each takes, e.g. `{"ligand": ["a.pdbqt",
    /// "b.pdbqt"], "receptor": ["r.pdbqt"]}` (a list of one fixes an input).
    #[serde(default)]
    pub inputs: std::collections::BTreeMap<String, Vec<crate::inputs::InputValue>>,
    /// Parameter sets (e.g. one per model with its options); default: one empty set.
    #[serde(default)]
    pub parameter_sets: Vec<Map<String, Value>>,
    /// Parameters and the values each takes, e.g. `{"seed": [0, 1, 2]}`.
    #[serde(default)]
    #[schemars(with = "std::collections::BTreeMap<String, Vec<super::view::Cell>>")]
    pub vary: std::collections::BTreeMap<String, Vec<Value>>,
    /// Parameters every item gets.
    #[serde(default)]
    pub fixed: Map<String, Value>,
}

/// `start_campaign` arguments.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StartCampaignRequest {
    /// Workflow id, as listed by get_capabilities; every item runs it.
    pub workflow: String,
    /// The items, each a dataset and parameters. Give `items` or `grid`, not both.
    #[serde(default)]
    pub items: Option<Vec<CampaignItem>>,
    /// The items as a grid to expand.
    #[serde(default)]
    pub grid: Option<CampaignGrid>,
    /// Items running at once, at most: locally at most max_pending_runs (the run queue runs
    /// at most max_concurrent_runs of all runs), on Slurm the job array's throttle.
    pub max_concurrent: u32,
    /// Columns of the summary table, `artifact.key` among the workflow's declared
    /// `json_keys`, or `<from>.<id>` of its metrics (default: every key of the first
    /// artifact that declares some, else every single-valued metric).
    #[serde(default)]
    pub metrics: Option<Vec<String>>,
    /// The `preview_id` of the preview the person approved; required with `confirm: true`
    /// where the server requires confirmation.
    #[serde(default)]
    pub preview_id: Option<String>,
    /// `true` starts the campaign; `false` (or, where the server requires confirmation,
    /// leaving it out) validates every item and starts nothing.
    #[serde(default)]
    pub confirm: Option<bool>,
}

/// Arguments naming one campaign, with a page of its items.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CampaignStatusRequest {
    /// The id start_campaign returned (`camp-` and 16 hex digits).
    pub campaign_id: String,
    /// First item of the page.
    #[serde(default)]
    pub offset: usize,
    /// Items per page (default 50; at most 100 compact, 1000 full).
    #[serde(default)]
    pub limit: Option<usize>,
    #[serde(default)]
    pub detail: Detail,
}

/// `get_campaign_result` arguments.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CampaignResultRequest {
    /// The id start_campaign returned.
    pub campaign_id: String,
    /// Seconds to wait for every item to end before answering (0-300).
    /// Default: the longest wait that ends before this client gives up on one call (from
    /// `serve --client-timeout-s`, or the deadline known for the client's declared name,
    /// else 45 s); a larger `wait_s` is lowered below that deadline.
    #[serde(default)]
    #[schemars(range(min = 0, max = 300))]
    pub wait_s: Option<u32>,
    /// First row of the page of the table.
    #[serde(default)]
    pub offset: usize,
    /// Rows per page (default 50; at most 100 compact, 1000 full).
    #[serde(default)]
    pub limit: Option<usize>,
    #[serde(default)]
    pub detail: Detail,
}

/// `cancel_campaign` arguments.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CancelCampaignRequest {
    /// The id start_campaign returned.
    pub campaign_id: String,
    /// `true` cancels: items not started never start, running ones are cancelled. `false`
    /// (or, where the server requires confirmation, leaving it out) changes nothing.
    #[serde(default)]
    pub confirm: Option<bool>,
}
