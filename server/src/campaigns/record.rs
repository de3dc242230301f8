//! What `campaign.json` holds (the campaign, its items, what resuming an item needs) and the
//! limits every part of a campaign checks against: the shared piece the scheduler, the grid
//! and the views read, importing none of them.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::validate::Validation;

/// Most items one campaign may have.
pub const MAX_ITEMS: usize = 1000;
/// Version of `campaign.json`.
pub const SCHEMA_VERSION: u32 = 1;

/// `campaign.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CampaignRecord {
    pub schema_version: u32,
    pub campaign_id: String,
    pub adapter: String,
    pub workflow: String,
    /// `local` or `slurm`.
    pub executor: String,
    pub max_concurrent: u32,
    /// The summary table's columns, `artifact.key`.
    pub columns: Vec<String>,
    pub created_at: String,
    pub started_by: String,
    /// The Slurm job array running the items.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub array_job_id: Option<String>,
    #[serde(default)]
    pub cancelled: bool,
    /// The adapter the items were validated against: a server resuming the campaign
    /// refuses to start its items under another one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub adapter_sha256: Option<String>,
    pub items: Vec<ItemRecord>,
}

/// One item of `campaign.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ItemRecord {
    pub index: usize,
    pub dataset: String,
    pub parameters: Map<String, Value>,
    pub validation_id: String,
    /// The run the item became, once it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
    /// Why the item never became a run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_error: Option<String>,
    /// What a restarted server needs to start the item as it was approved. Shared: every
    /// status page copies the record, and the requests are most of its size.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "shared_resume"
    )]
    pub resume: Option<Arc<ItemResume>>,
}

/// An item's request and the hashes its validation had, kept until it becomes a run: a
/// server resuming the campaign validates the item again and starts it only when nothing
/// changed, else names what did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ItemResume {
    /// What the item's run records as its request.
    pub request: Value,
    pub request_sha256: String,
    pub dataset_sha256: String,
    pub plan_sha256: String,
}

/// `Option<Arc<ItemResume>>` as the plain `Option<ItemResume>` it is on disk (serde's own
/// `Arc` support is a crate feature the workspace does not turn on for one field).
mod shared_resume {
    use std::sync::Arc;

    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    use super::ItemResume;

    pub fn serialize<S: Serializer>(
        value: &Option<Arc<ItemResume>>,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        value.as_deref().serialize(serializer)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Option<Arc<ItemResume>>, D::Error> {
        Ok(Option::<ItemResume>::deserialize(deserializer)?.map(Arc::new))
    }
}

/// The dataset hash a validation pinned (empty for a workflow without a dataset): what
/// [`ItemResume::dataset_sha256`] records and a resuming server compares.
pub(super) fn dataset_sha256(v: &Validation) -> String {
    v.dataset
        .as_ref()
        .map(|d| d.sha256.clone())
        .unwrap_or_default()
}

/// `camp-` and 16 lower-case hex digits; anything else never touches the file system.
pub fn is_campaign_id(id: &str) -> bool {
    id.strip_prefix("camp-").is_some_and(|hex| {
        hex.len() == 16 && hex.chars().all(|c| matches!(c, '0'..='9' | 'a'..='f'))
    })
}
