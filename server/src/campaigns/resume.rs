//! Campaigns a stopped server left unfinished, taken up by the next server that starts.
//!
//! A campaign is abandoned when it is not cancelled, some of its items never became runs,
//! and nobody holds its `owner.lock` (the OS releases the lock of a dead process). Items that
//! had become runs are reported as their runs are (a run its server's stop interrupted reads
//! `failed`, reason `interrupted`); they are not run again, since that would spend the
//! resources twice without anybody asking.
//!
//! A local campaign's waiting items are validated again, exactly as `start_campaign` did, and
//! each starts only when its validation is the one approved (same adapter, dataset bytes,
//! resolved request and plan); an item whose validation changed ends with a `start_error`
//! naming what changed and what to do. On Slurm every item becomes a run before the job array
//! is submitted, and submitted array tasks are re-attached run by run; an item the stopped
//! server had not yet turned into a run ends with a `start_error`, since the array it belongs
//! to can no longer take it.

use std::sync::Arc;

use serde_json::Value;

use super::record::{CampaignRecord, ItemRecord, dataset_sha256, is_campaign_id};
use super::{CampaignManager, Pending, owner};
use crate::context::ServerContext;
use crate::request::AnalysisRequest;
use crate::validate::Validation;

/// Keys the campaign adds to an item's run request beyond the analysis itself.
const CAMPAIGN_KEYS: [&str; 4] = ["started_by", "confirmed", "campaign_id", "campaign_item"];

/// Why a waiting item was not resumed: recorded as its `start_error`, each saying what to
/// do next.
#[derive(Debug, thiserror::Error)]
enum NotResumed {
    #[error(
        "the server stopped before this item became a run of the campaign's job array, \
         which cannot take it any more; start a campaign for this item again"
    )]
    ArrayGone,
    #[error(
        "not started after the server restarted: the recorded request cannot be read ({0}); \
         start a campaign for this item again"
    )]
    UnreadableRequest(#[source] serde_json::Error),
    #[error(
        "not started after the server restarted: the item no longer validates: {message} ({next_action}); \
         fix it, then start a campaign for this item again"
    )]
    Invalid {
        message: String,
        next_action: String,
    },
    /// What differs between the item as approved and its validation now.
    #[error(
        "not started after the server restarted: {0}; the item was approved for what it was \
         then, so check that this change is intended and start a campaign for this item again"
    )]
    Changed(String),
}

/// Resume, in the background, every campaign of this adapter a stopped server left.
pub fn spawn(ctx: &Arc<ServerContext>) {
    let ctx = Arc::clone(ctx);
    tokio::spawn(async move {
        let n = resume_all(&ctx).await;
        if n > 0 {
            tracing::info!("resumed {n} campaign(s) left unfinished by a stopped server");
        }
    });
}

/// Resume every abandoned campaign; returns how many were taken up.
pub async fn resume_all(ctx: &Arc<ServerContext>) -> usize {
    let manager = Arc::clone(&ctx.campaigns);
    let abandoned = tokio::task::spawn_blocking(move || manager.abandoned())
        .await
        .unwrap_or_default();
    let n = abandoned.len();
    for (record, lock) in abandoned {
        resume_one(ctx, record, lock).await;
    }
    n
}

fn is_waiting(item: &ItemRecord) -> bool {
    item.run_id.is_none() && item.start_error.is_none()
}

/// `<campaigns>/.closed`: ids of campaigns found with nothing left to start (cancelled, or
/// every item a run or a start error), one a line. Being closed only ever goes one way, so a
/// listed campaign is never read again at start-up; a lost or damaged line (anything that is
/// not a campaign id) only means that campaign is read once more.
const CLOSED: &str = ".closed";

fn closed_campaigns(root: &std::path::Path) -> std::collections::HashSet<String> {
    fs_err::read_to_string(root.join(CLOSED))
        .map(|text| {
            text.lines()
                .filter(|l| is_campaign_id(l))
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

fn remember_closed(root: &std::path::Path, ids: &[String]) {
    use std::io::Write;
    if ids.is_empty() {
        return;
    }
    // A leading newline ends a line a killed writer left torn (empty lines are skipped).
    let text: String = std::iter::once("\n".to_string())
        .chain(ids.iter().map(|id| format!("{id}\n")))
        .collect();
    let written = fs_err::OpenOptions::new()
        .create(true)
        .append(true)
        .open(root.join(CLOSED))
        .and_then(|mut f| f.write_all(text.as_bytes()));
    if let Err(e) = written {
        tracing::debug!("cannot remember closed campaigns: {e}");
    }
}

impl CampaignManager {
    /// The campaigns with waiting items that nobody owns, each with its owner lock now held
    /// by this server. Campaigns already known closed are not read.
    fn abandoned(&self) -> Vec<(CampaignRecord, fs_err::File)> {
        let Ok(entries) = fs_err::read_dir(&self.root) else {
            return Vec::new();
        };
        let closed = closed_campaigns(&self.root);
        let mut newly_closed = Vec::new();
        let mut out = Vec::new();
        for entry in entries.flatten() {
            let id = entry.file_name().to_string_lossy().into_owned();
            if !is_campaign_id(&id)
                || closed.contains(&id)
                || self.live.lock().expect("campaigns lock").contains_key(&id)
            {
                continue;
            }
            let open = |r: &CampaignRecord| !r.cancelled && r.items.iter().any(is_waiting);
            match self.record(&id) {
                Ok(r) if open(&r) => {}
                Ok(_) => {
                    newly_closed.push(id);
                    continue;
                }
                Err(_) => continue,
            }
            let dir = self.dir(&id);
            match owner::try_own(&dir) {
                // Read again under the lock: the owner may have moved on before it let go.
                Ok(Some(lock)) => match self.record(&id) {
                    Ok(record) if open(&record) => out.push((record, lock)),
                    _ => {}
                },
                Ok(None) => {
                    tracing::debug!(
                        campaign_id = id,
                        "campaign scheduled by another live server"
                    )
                }
                Err(e) => {
                    tracing::warn!(campaign_id = id, "cannot lock {}: {e}", dir.display())
                }
            }
        }
        remember_closed(&self.root, &newly_closed);
        out
    }
}

/// Take up one abandoned campaign whose owner lock this server holds.
async fn resume_one(ctx: &Arc<ServerContext>, mut record: CampaignRecord, lock: fs_err::File) {
    let campaign_id = record.campaign_id.clone();
    let waiting: Vec<usize> = record
        .items
        .iter()
        .filter(|i| is_waiting(i))
        .map(|i| i.index)
        .collect();
    let mut pending = Vec::new();
    for index in waiting {
        let item = &record.items[index];
        let outcome = if record.executor == "slurm" {
            Err(NotResumed::ArrayGone)
        } else {
            revalidate(ctx, &record, item).await
        };
        match outcome {
            Ok((validation, request)) => pending.push(Pending {
                index,
                validation,
                request,
            }),
            Err(why) => {
                tracing::warn!(campaign_id, item = index, "not resumed: {why}");
                let item = &mut record.items[index];
                item.start_error = Some(why.to_string());
                item.resume = None;
            }
        }
    }
    tracing::info!(
        campaign_id,
        items = pending.len(),
        "resuming a campaign left unfinished by a stopped server"
    );
    if pending.is_empty() {
        let manager = Arc::clone(&ctx.campaigns);
        let _ = tokio::task::spawn_blocking(move || {
            manager.save(&record);
            drop(lock);
        })
        .await;
        return;
    }
    let probe = ctx.runtime.probe().await.ok();
    let manager = Arc::clone(&ctx.campaigns);
    let runs = Arc::clone(&ctx.runs);
    let saved = record.clone();
    let _ = tokio::task::spawn_blocking({
        let manager = Arc::clone(&manager);
        move || manager.save(&saved)
    })
    .await;
    manager.schedule(&runs, record, lock, pending, probe, false);
}

/// Validate a waiting item again; its validation and run request when it is still exactly
/// the one approved, else what changed and what to do.
async fn revalidate(
    ctx: &ServerContext,
    record: &CampaignRecord,
    item: &ItemRecord,
) -> Result<(Validation, Value), NotResumed> {
    let request = match &item.resume {
        Some(resume) => resume.request.clone(),
        // A record written before items kept their request: the same request rebuilt.
        None => serde_json::json!({
            "workflow": record.workflow,
            "dataset": item.dataset,
            "parameters": item.parameters,
            "started_by": record.started_by,
            "campaign_id": record.campaign_id,
            "campaign_item": item.index,
        }),
    };
    let mut analysis = request.clone();
    if let Some(obj) = analysis.as_object_mut() {
        for key in CAMPAIGN_KEYS {
            obj.remove(key);
        }
    }
    let analysis: AnalysisRequest =
        serde_json::from_value(analysis).map_err(NotResumed::UnreadableRequest)?;
    let v = crate::validate::validate(
        &ctx.adapter,
        &ctx.validators,
        &ctx.datasets,
        &ctx.runtime,
        &analysis,
    )
    .await
    .map_err(|e| NotResumed::Invalid {
        message: e.message,
        next_action: e.next_action,
    })?;
    if v.validation_id == item.validation_id {
        return Ok((v, request));
    }
    Err(NotResumed::Changed(what_changed(record, item, &v)))
}

/// What differs between the item as it was validated and its validation now.
fn what_changed(record: &CampaignRecord, item: &ItemRecord, now: &Validation) -> String {
    let short = |h: &str| h.chars().take(12).collect::<String>();
    if let Some(then) = &record.adapter_sha256
        && *then != now.adapter_sha256
    {
        return format!(
            "the adapter changed since the campaign was validated (sha256 {}… then, {}… now)",
            short(then),
            short(&now.adapter_sha256)
        );
    }
    let Some(resume) = &item.resume else {
        return "the item's validation changed (the adapter, the dataset's bytes or the plan)"
            .into();
    };
    let dataset_now = dataset_sha256(now);
    if resume.dataset_sha256 != dataset_now {
        format!(
            "dataset '{}' changed since the campaign was validated (sha256 {}… then, {}… now)",
            // Read through serde: the same for a required and an optional dataset.
            serde_json::to_value(&item.dataset)
                .ok()
                .and_then(|d| d.as_str().map(String::from))
                .unwrap_or_default(),
            short(&resume.dataset_sha256),
            short(&dataset_now)
        )
    } else if resume.request_sha256 != now.request_sha256 {
        "the item's request resolves differently now (an input file's bytes or a parameter's \
         default changed)"
            .into()
    } else if resume.plan_sha256 != now.plan_sha256 {
        "the item's plan changed (the runtime or the command line the adapter builds)".into()
    } else {
        "the item's validation changed".into()
    }
}

#[cfg(test)]
mod tests {
    use super::super::record::{CampaignRecord, ItemRecord};
    use super::super::{CampaignManager, owner};
    use super::{CLOSED, closed_campaigns};

    fn record(id: &str, cancelled: bool, started: &[bool]) -> CampaignRecord {
        CampaignRecord {
            schema_version: super::super::record::SCHEMA_VERSION,
            campaign_id: id.into(),
            adapter: "refsci".into(),
            workflow: "regression".into(),
            executor: "local".into(),
            max_concurrent: 1,
            columns: Vec::new(),
            created_at: "2026-01-01T00:00:00Z".into(),
            started_by: "stdio".into(),
            array_job_id: None,
            cancelled,
            adapter_sha256: None,
            items: started
                .iter()
                .enumerate()
                .map(|(index, started)| ItemRecord {
                    index,
                    dataset: serde_json::from_value(serde_json::json!("data/x.csv")).unwrap(),
                    parameters: serde_json::Map::new(),
                    validation_id: "val-0".into(),
                    run_id: started.then(|| "run-0000000000000000".into()),
                    start_error: None,
                    resume: None,
                })
                .collect(),
        }
    }

    fn id(n: u8) -> String {
        format!("camp-{:016x}", n)
    }

    #[test]
    fn only_open_campaigns_nobody_owns_are_taken_up() {
        let root = tempfile::tempdir().unwrap();
        let manager = CampaignManager::open(root.path().to_path_buf()).unwrap();
        let write = |r: &CampaignRecord| {
            let dir = root.path().join(&r.campaign_id);
            fs_err::create_dir_all(&dir).unwrap();
            fs_err::write(dir.join("campaign.json"), serde_json::to_vec(r).unwrap()).unwrap();
        };
        write(&record(&id(1), false, &[true, false, false]));
        write(&record(&id(2), true, &[true, false]));
        write(&record(&id(3), false, &[true, true]));
        write(&record(&id(4), false, &[false]));
        // Not a campaign id: never read.
        fs_err::create_dir_all(root.path().join("camp-NOT")).unwrap();
        // Campaign 4 is scheduled by a live server elsewhere.
        let elsewhere = owner::try_own(&root.path().join(id(4))).unwrap().unwrap();

        let taken = manager.abandoned();
        let ids: Vec<&str> = taken.iter().map(|(r, _)| r.campaign_id.as_str()).collect();
        assert_eq!(ids, [id(1)], "open, not cancelled, not owned");
        // This server holds the lock now: another starting server leaves it alone.
        assert!(owner::try_own(&root.path().join(id(1))).unwrap().is_none());
        drop(taken);
        drop(elsewhere);
        let mut again: Vec<String> = manager
            .abandoned()
            .into_iter()
            .map(|(r, _)| r.campaign_id)
            .collect();
        again.sort();
        assert_eq!(
            again,
            [id(1), id(4)],
            "locks of owners that went away are free"
        );
    }

    /// A closed campaign (cancelled, or every item started) is read once, then remembered;
    /// a damaged line of the memory only means a campaign is read again.
    #[test]
    fn closed_campaigns_are_read_once() {
        let root = tempfile::tempdir().unwrap();
        let manager = CampaignManager::open(root.path().to_path_buf()).unwrap();
        let write = |r: &CampaignRecord| {
            let dir = root.path().join(&r.campaign_id);
            fs_err::create_dir_all(&dir).unwrap();
            fs_err::write(dir.join("campaign.json"), serde_json::to_vec(r).unwrap()).unwrap();
        };
        write(&record(&id(1), false, &[true, false]));
        write(&record(&id(2), true, &[true, false]));
        write(&record(&id(3), false, &[true, true]));
        drop(manager.abandoned());
        let mut closed: Vec<String> = closed_campaigns(root.path()).into_iter().collect();
        closed.sort();
        assert_eq!(closed, [id(2), id(3)]);
        // Unreadable now, but known closed: not read, not taken up.
        fs_err::write(root.path().join(id(3)).join("campaign.json"), b"{garbage").unwrap();
        // A torn last line is no campaign id: campaign 2 is read again, and stays closed.
        let memory = root.path().join(CLOSED);
        fs_err::write(&memory, format!("{}\ncamp-00", id(3))).unwrap();
        let taken: Vec<String> = manager
            .abandoned()
            .into_iter()
            .map(|(r, _)| r.campaign_id)
            .collect();
        assert_eq!(taken, [id(1)]);
        assert!(closed_campaigns(root.path()).contains(&id(2)));
    }
}
