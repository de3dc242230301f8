//! What a campaign looks like now, read from its runs: each item's state, the counts, the
//! campaign's state, and the summary table of the declared metrics.

use std::collections::HashMap;
use std::sync::{LazyLock, Mutex};

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

use super::record::CampaignRecord;
use crate::paging::Page;
use crate::runs::RunManager;
use crate::runs::state::RunState;

/// Largest table cell shown inline; larger values are replaced by their size and hash.
const MAX_CELL_BYTES: usize = 512;
/// Longest `error` text of a row.
const MAX_ERROR_CHARS: usize = 300;

/// An item's state: its run's, or `waiting` before it became one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ItemState {
    /// Not started yet: the campaign holds it back to keep within its bound.
    Waiting,
    Queued,
    Running,
    Succeeded,
    PartialFailure,
    Failed,
    Cancelled,
}

impl ItemState {
    pub fn is_terminal(self) -> bool {
        !matches!(
            self,
            ItemState::Waiting | ItemState::Queued | ItemState::Running
        )
    }

    fn of(state: RunState) -> ItemState {
        match state {
            RunState::Queued => ItemState::Queued,
            RunState::Running => ItemState::Running,
            RunState::Succeeded => ItemState::Succeeded,
            RunState::PartialFailure => ItemState::PartialFailure,
            RunState::Failed => ItemState::Failed,
            RunState::Cancelled => ItemState::Cancelled,
        }
    }
}

/// One item as `get_campaign_status` shows it.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct ItemStatus {
    pub index: usize,
    pub dataset: String,
    pub parameters: serde_json::Map<String, Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
    pub state: ItemState,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// Items per state.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, JsonSchema)]
pub struct CampaignCounts {
    pub total: usize,
    pub waiting: usize,
    pub queued: usize,
    pub running: usize,
    pub succeeded: usize,
    pub partial_failure: usize,
    pub failed: usize,
    pub cancelled: usize,
}

/// Where a campaign is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CampaignState {
    /// Some items have not ended.
    Running,
    /// Cancelled; some items are still ending.
    Cancelling,
    /// Every item succeeded.
    Succeeded,
    /// Every item ended, some without succeeding.
    CompletedWithFailures,
    /// Cancelled, and every item ended.
    Cancelled,
}

impl CampaignState {
    pub fn is_terminal(self) -> bool {
        !matches!(self, CampaignState::Running | CampaignState::Cancelling)
    }
}

/// Campaigns whose views are remembered (the most recently viewed ones).
const REMEMBERED_CAMPAIGNS: usize = 16;

/// What earlier views of one campaign found that cannot change, so that a page of a large
/// campaign costs its own items rather than a file read per item and a hash of all of them.
#[derive(Debug, Default)]
struct Seen {
    /// (state, reason, message) of the items' runs that had ended, by run id: a terminal
    /// state is final.
    ended: HashMap<String, (ItemState, Option<String>, Option<String>)>,
    /// The last whole item list and its `sequence_sha256`.
    sequence: Option<(Vec<ItemStatus>, String)>,
    /// When it was last used (a count of views), to forget the least recent campaign.
    used: u64,
}

#[derive(Debug, Default)]
struct Memory {
    campaigns: HashMap<String, Seen>,
    views: u64,
}

static MEMORY: LazyLock<Mutex<Memory>> = LazyLock::new(Mutex::default);

/// Run `f` on what is remembered of `campaign_id` (forgetting the least recently viewed
/// campaign when too many are).
fn with_seen<R>(campaign_id: &str, f: impl FnOnce(&mut Seen) -> R) -> R {
    let mut memory = MEMORY
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    memory.views += 1;
    let now = memory.views;
    if !memory.campaigns.contains_key(campaign_id)
        && memory.campaigns.len() >= REMEMBERED_CAMPAIGNS
        && let Some(oldest) = memory
            .campaigns
            .iter()
            .min_by_key(|(_, seen)| seen.used)
            .map(|(id, _)| id.clone())
    {
        memory.campaigns.remove(&oldest);
    }
    let seen = memory.campaigns.entry(campaign_id.to_string()).or_default();
    seen.used = now;
    f(seen)
}

/// The page of `items` (the whole list of `campaign_id`'s items) from `offset`: as
/// [`Page::of`], with the whole list's hash taken again only when an item changed since
/// the campaign's last page.
pub fn items_page(
    campaign_id: &str,
    items: &[ItemStatus],
    offset: usize,
    limit: usize,
) -> Page<ItemStatus> {
    let limit = limit.max(1);
    let start = offset.min(items.len());
    let end = start.saturating_add(limit).min(items.len());
    let shown = items[start..end].to_vec();
    let known = with_seen(campaign_id, |seen| {
        seen.sequence
            .as_ref()
            .filter(|(last, _)| last.as_slice() == items)
            .map(|(_, sha)| sha.clone())
    });
    let sequence_sha256 = known.unwrap_or_else(|| {
        let sha = scimcp_core::hash::canonical_sha256_of(&items);
        with_seen(campaign_id, |seen| {
            seen.sequence = Some((items.to_vec(), sha.clone()));
        });
        sha
    });
    Page {
        offset: start,
        limit,
        total: items.len(),
        next_offset: (end < items.len()).then_some(end),
        truncated: shown.len() < items.len(),
        page_sha256: scimcp_core::hash::canonical_sha256_of(&shown),
        sequence_sha256,
        items: shown,
    }
}

/// Each item's state, from its run (an ended run's status is read once per campaign).
pub fn item_statuses(record: &CampaignRecord, runs: &RunManager) -> Vec<ItemStatus> {
    // Taken out while the runs are read (no lock held over file reads); a view of the same
    // campaign meanwhile reads the files, and both are merged back.
    let ended = with_seen(&record.campaign_id, |seen| std::mem::take(&mut seen.ended));
    let mut newly_ended = Vec::new();
    let items = record
        .items
        .iter()
        .map(|item| {
            let base = ItemStatus {
                index: item.index,
                dataset: item.dataset.clone(),
                parameters: item.parameters.clone(),
                run_id: item.run_id.clone(),
                state: ItemState::Waiting,
                reason: None,
                message: None,
            };
            let known = item.run_id.as_ref().and_then(|id| ended.get(id));
            match (&item.run_id, &item.start_error) {
                (Some(_), _) if let Some((state, reason, message)) = known => ItemStatus {
                    state: *state,
                    reason: reason.clone(),
                    message: message.clone(),
                    ..base
                },
                (Some(run_id), _) => match runs.status(run_id) {
                    Ok(s) => {
                        let state = ItemState::of(s.state);
                        if state.is_terminal() {
                            newly_ended.push((
                                run_id.clone(),
                                (state, s.reason.clone(), s.message.clone()),
                            ));
                        }
                        ItemStatus {
                            state,
                            reason: s.reason,
                            message: s.message,
                            ..base
                        }
                    }
                    Err(e) => ItemStatus {
                        state: ItemState::Failed,
                        reason: Some("internal".into()),
                        message: Some(e.message),
                        ..base
                    },
                },
                (None, Some(why)) => ItemStatus {
                    state: ItemState::Failed,
                    reason: Some("not_started".into()),
                    message: Some(why.clone()),
                    ..base
                },
                (None, None) if record.cancelled => ItemStatus {
                    state: ItemState::Cancelled,
                    reason: Some("not_started".into()),
                    message: Some("the campaign was cancelled before this item started".into()),
                    ..base
                },
                (None, None) => base,
            }
        })
        .collect();
    with_seen(&record.campaign_id, |seen| {
        seen.ended.extend(ended);
        seen.ended.extend(newly_ended);
    });
    items
}

pub fn counts(items: &[ItemStatus]) -> CampaignCounts {
    let mut c = CampaignCounts {
        total: items.len(),
        ..CampaignCounts::default()
    };
    for i in items {
        *match i.state {
            ItemState::Waiting => &mut c.waiting,
            ItemState::Queued => &mut c.queued,
            ItemState::Running => &mut c.running,
            ItemState::Succeeded => &mut c.succeeded,
            ItemState::PartialFailure => &mut c.partial_failure,
            ItemState::Failed => &mut c.failed,
            ItemState::Cancelled => &mut c.cancelled,
        } += 1;
    }
    c
}

pub fn state(record: &CampaignRecord, c: &CampaignCounts) -> CampaignState {
    let open = c.waiting + c.queued + c.running > 0;
    match (open, record.cancelled) {
        (true, false) => CampaignState::Running,
        (true, true) => CampaignState::Cancelling,
        (false, true) => CampaignState::Cancelled,
        (false, false) if c.succeeded == c.total => CampaignState::Succeeded,
        (false, false) => CampaignState::CompletedWithFailures,
    }
}

/// One row of the summary table: an item's run and its metrics, in column order (`null`
/// where the run reported none).
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Row {
    pub index: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
    pub state: ItemState,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Why an item did not succeed: the run's message and the last line of the CLI's
    /// stderr.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The columns' values in column order, each as the run reported it (`null` where it
    /// reported none; a value larger than 512 bytes becomes `{omitted, bytes, sha256}`).
    #[schemars(with = "Vec<Cell>")]
    pub values: Vec<Value>,
}

/// The schema of one table cell or varied value: any JSON value, spelled one type per
/// `anyOf` branch (a bare "anything" schema is refused by clients whose dialect needs a type
/// everywhere), a list's items being cells again.
pub(crate) struct Cell;

impl JsonSchema for Cell {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Cell".into()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let cell = generator.subschema_for::<Cell>();
        schemars::json_schema!({
            "description": "Any JSON value.",
            "anyOf": [
                {"type": "number"},
                {"type": "string"},
                {"type": "boolean"},
                {"type": "null"},
                {"type": "object", "additionalProperties": true},
                {"type": "array", "items": cell}
            ]
        })
    }
}

/// Count, minimum, maximum and mean of a numeric column over the items that reported it.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ColumnSummary {
    pub column: String,
    pub count: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mean: Option<f64>,
}

/// The summary table: every row (to page) and the column summaries.
#[derive(Debug, Clone)]
pub struct Table {
    pub rows: Vec<Row>,
    pub summary: Vec<ColumnSummary>,
}

fn bounded(v: Value) -> Value {
    let text = serde_json::to_string(&v).unwrap_or_default();
    if text.len() <= MAX_CELL_BYTES {
        return v;
    }
    serde_json::json!({"omitted": true, "bytes": text.len(), "sha256": scimcp_core::hash::sha256_hex(text.as_bytes())})
}

fn error_of(status: &ItemStatus, stderr_tail: Option<&str>) -> Option<String> {
    if status.state == ItemState::Succeeded || !status.state.is_terminal() {
        return None;
    }
    let last_line = stderr_tail
        .and_then(|t| t.lines().rev().find(|l| !l.trim().is_empty()))
        .map(str::trim);
    let text = match (status.message.as_deref(), last_line) {
        (Some(m), Some(l)) => format!("{m}: {l}"),
        (Some(m), None) => m.to_string(),
        (None, Some(l)) => l.to_string(),
        (None, None) => return None,
    };
    Some(if text.chars().count() > MAX_ERROR_CHARS {
        let mut cut: String = text.chars().take(MAX_ERROR_CHARS - 1).collect();
        cut.push('…');
        cut
    } else {
        text
    })
}

/// The table: one row per item with the values of `columns` its run reported.
pub fn table(record: &CampaignRecord, items: &[ItemStatus], runs: &RunManager) -> Table {
    let rows: Vec<Row> = items
        .iter()
        .map(|item| {
            let result = item
                .run_id
                .as_deref()
                .filter(|_| item.state.is_terminal())
                .and_then(|id| runs.result(id).ok().flatten())
                .map(|(r, _)| r);
            let values = record
                .columns
                .iter()
                .map(|column| {
                    let (artifact, key) = column.split_once('.').unwrap_or((column, ""));
                    result
                        .as_ref()
                        .and_then(|r| r.reported.get(artifact))
                        .and_then(|values| values.get(key))
                        .cloned()
                        .map_or(Value::Null, bounded)
                })
                .collect();
            Row {
                index: item.index,
                run_id: item.run_id.clone(),
                state: item.state,
                reason: item.reason.clone(),
                error: error_of(item, result.as_ref().and_then(|r| r.stderr_tail.as_deref())),
                values,
            }
        })
        .collect();
    let summary = record
        .columns
        .iter()
        .enumerate()
        .map(|(c, column)| {
            let numbers: Vec<f64> = rows.iter().filter_map(|r| r.values[c].as_f64()).collect();
            let count = numbers.len();
            ColumnSummary {
                column: column.clone(),
                count,
                min: numbers.iter().copied().reduce(f64::min),
                max: numbers.iter().copied().reduce(f64::max),
                mean: (count > 0).then(|| numbers.iter().sum::<f64>() / count as f64),
            }
        })
        .collect();
    Table { rows, summary }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(index: usize, state: ItemState) -> ItemStatus {
        ItemStatus {
            index,
            dataset: "data.csv".into(),
            parameters: serde_json::Map::from_iter([("seed".to_string(), Value::from(index))]),
            run_id: Some(format!("run-{index:016x}")),
            state,
            reason: None,
            message: None,
        }
    }

    /// A remembered hash is the one `Page::of` computes, and a changed item is hashed again.
    #[test]
    fn a_page_is_the_plain_page_and_follows_a_changed_item() {
        let id = "camp-00000000000000aa";
        let mut items: Vec<ItemStatus> = (0..120).map(|i| item(i, ItemState::Running)).collect();
        let first = items_page(id, &items, 50, 50);
        assert_eq!(first, Page::of(&items, 50, 50));
        assert_eq!(items_page(id, &items, 100, 50), Page::of(&items, 100, 50));
        items[7].state = ItemState::Succeeded;
        let changed = items_page(id, &items, 50, 50);
        assert_eq!(changed, Page::of(&items, 50, 50));
        assert_ne!(changed.sequence_sha256, first.sequence_sha256);
        // Pages of other campaigns (more than are remembered) do not mix with this one's.
        for n in 0..2 * REMEMBERED_CAMPAIGNS {
            let other = format!("camp-{n:016x}");
            let theirs: Vec<ItemStatus> = (0..3).map(|i| item(i, ItemState::Queued)).collect();
            assert_eq!(items_page(&other, &theirs, 0, 2), Page::of(&theirs, 0, 2));
        }
        assert_eq!(items_page(id, &items, 0, 50), Page::of(&items, 0, 50));
    }

    #[test]
    fn a_rows_schema_accepts_every_value_a_run_can_report() {
        let schema = serde_json::to_value(schemars::schema_for!(Row)).unwrap();
        let validator = jsonschema::validator_for(&schema).unwrap();
        let row = serde_json::json!({
            "index": 0,
            "state": "succeeded",
            "values": [0.93, "ridge", true, null, {"omitted": true, "bytes": 600, "sha256": "ab"},
                       ["setosa", "versicolor"], [[1, 2], [3.5]]]
        });
        assert!(validator.is_valid(&row), "{schema:#}");
        let cells = &schema["$defs"]["Cell"]["anyOf"];
        assert_eq!(cells.as_array().unwrap().len(), 6, "{schema:#}");
    }
}
