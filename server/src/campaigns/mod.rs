//! Campaigns: one workflow over many items (datasets × parameter sets), every item validated
//! before anything runs, run with a concurrency bound, continuing past failing items.
//!
//! Each item is an ordinary run (its own run directory, plan, states, artifacts and
//! `result.json`); the campaign adds only `<data root>/campaigns/<adapter>/<campaign_id>/
//! campaign.json`, which names the items and the run each became. On the local executor a
//! scheduler feeds the run queue, keeping at most the bound of the campaign's runs queued or
//! running; on Slurm every item is submitted at once as one job array whose throttle is the
//! bound (`--array=0-N%bound`). States, counts and the summary table are read from the runs
//! themselves, so they stay true across server restarts.
//!
//! The server scheduling a campaign holds its `owner.lock`; a server that starts finds the
//! campaigns nobody owns any more and resumes them (see [`resume`]).

mod grid;
mod owner;
mod record;
pub mod request;
pub mod resume;
mod view;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use scimcp_core::fs::{create_private_dir, write_json_atomic};
use serde_json::Value;
use tokio::sync::watch;

use crate::envelope::{ErrorCode, ToolError};
use crate::runs::RunManager;
use crate::runtime::RuntimeProbe;
use crate::validate::Validation;

pub use grid::expand;
pub use record::{
    CampaignRecord, ItemRecord, ItemResume, MAX_ITEMS, SCHEMA_VERSION, is_campaign_id,
};
pub use view::{
    CampaignCounts, CampaignState, ColumnSummary, ItemState, ItemStatus, Row, counts,
    item_statuses, items_page, state as view_state, table,
};

/// How often the local scheduler looks for a free place.
const SCHEDULER_TICK: Duration = Duration::from_millis(200);

/// An item still to start: its place in the campaign, its validation and its run's request.
pub(crate) struct Pending {
    pub index: usize,
    pub validation: Validation,
    pub request: Value,
}

fn unknown_campaign(id: &str) -> ToolError {
    ToolError::new(
        ErrorCode::UnknownRun,
        format!("no campaign '{id}'"),
        "pass the campaign_id start_campaign returned",
    )
    .field("campaign_id")
}

/// A campaign this server is scheduling.
#[derive(Debug)]
struct LiveCampaign {
    record: Mutex<CampaignRecord>,
    cancel: watch::Sender<bool>,
    /// Held while this server may still start items; released once none is left.
    owner: Mutex<Option<fs_err::File>>,
}

/// The campaigns of one adapter.
#[derive(Debug)]
pub struct CampaignManager {
    root: PathBuf,
    live: Mutex<HashMap<String, Arc<LiveCampaign>>>,
}

/// What starting a campaign needs: the validated items, in order, with what each run
/// records as its request.
pub struct Prepared {
    pub record: CampaignRecord,
    pub validations: Vec<Validation>,
    pub requests: Vec<Value>,
}

impl CampaignManager {
    /// The campaigns kept under `root`, created with the first campaign: a server that never
    /// runs one writes nothing there.
    pub fn open(root: PathBuf) -> std::io::Result<CampaignManager> {
        Ok(CampaignManager {
            root,
            live: Mutex::new(HashMap::new()),
        })
    }

    fn dir(&self, id: &str) -> PathBuf {
        self.root.join(id)
    }

    /// A new campaign id.
    pub fn new_id() -> String {
        format!("camp-{}", &uuid::Uuid::new_v4().simple().to_string()[..16])
    }

    /// The campaign's record: this server's copy when it schedules it, else the file.
    pub fn record(&self, id: &str) -> Result<CampaignRecord, ToolError> {
        if !is_campaign_id(id) {
            return Err(unknown_campaign(id));
        }
        if let Some(live) = self.live.lock().expect("campaigns lock").get(id) {
            return Ok(live.record.lock().expect("record lock").clone());
        }
        let bytes =
            fs_err::read(self.dir(id).join("campaign.json")).map_err(|_| unknown_campaign(id))?;
        serde_json::from_slice(&bytes).map_err(|e| {
            ToolError::internal(format!("campaign {id} has an unreadable record: {e}"))
        })
    }

    fn save(&self, record: &CampaignRecord) {
        let path = self.dir(&record.campaign_id).join("campaign.json");
        if let Err(e) = write_json_atomic(&path, record) {
            tracing::error!(
                campaign_id = record.campaign_id,
                "cannot record the campaign: {e}"
            );
        }
    }

    /// Record the campaign and start it in the background.
    pub fn start(
        self: &Arc<Self>,
        runs: &Arc<RunManager>,
        prepared: Prepared,
        runtime: Option<RuntimeProbe>,
    ) -> Result<CampaignRecord, ToolError> {
        let Prepared {
            mut record,
            validations,
            requests,
        } = prepared;
        let dir = self.dir(&record.campaign_id);
        // Every level private, as the runs directory is: campaigns/, campaigns/<adapter>/, the
        // campaign's own directory.
        self.root
            .parent()
            .into_iter()
            .chain([self.root.as_path(), dir.as_path()])
            .try_for_each(create_private_dir)
            .map_err(|e| ToolError::internal(format!("cannot create {}: {e}", dir.display())))?;
        let owner = owner::try_own(&dir)
            .map_err(|e| ToolError::internal(format!("cannot lock {}: {e}", dir.display())))?
            .ok_or_else(|| {
                ToolError::internal(format!("the new campaign {} is locked", dir.display()))
            })?;
        record.adapter_sha256 = validations.first().map(|v| v.adapter_sha256.clone());
        for (item, (v, request)) in record
            .items
            .iter_mut()
            .zip(validations.iter().zip(&requests))
        {
            item.resume = Some(Arc::new(ItemResume {
                request: request.clone(),
                request_sha256: v.request_sha256.clone(),
                dataset_sha256: record::dataset_sha256(v),
                plan_sha256: v.plan_sha256.clone(),
            }));
        }
        let pending = validations
            .into_iter()
            .zip(requests)
            .enumerate()
            .map(|(index, (validation, request))| Pending {
                index,
                validation,
                request,
            })
            .collect();
        self.save(&record);
        let array = runs.executor().slurm().is_some();
        self.schedule(runs, record.clone(), owner, pending, runtime, array);
        Ok(record)
    }

    /// Schedule `pending` of the recorded campaign in the background, holding its owner
    /// lock: as one Slurm job array (`array`), else through the run queue.
    fn schedule(
        self: &Arc<Self>,
        runs: &Arc<RunManager>,
        record: CampaignRecord,
        owner: fs_err::File,
        pending: Vec<Pending>,
        runtime: Option<RuntimeProbe>,
        array: bool,
    ) {
        let live = Arc::new(LiveCampaign {
            record: Mutex::new(record.clone()),
            cancel: watch::channel(false).0,
            owner: Mutex::new(Some(owner)),
        });
        self.live
            .lock()
            .expect("campaigns lock")
            .insert(record.campaign_id.clone(), Arc::clone(&live));
        let manager = Arc::clone(self);
        let runs = Arc::clone(runs);
        match runs.executor().slurm().filter(|_| array) {
            None => {
                tokio::spawn(manager.schedule_locally(runs, live, Arc::new(pending), runtime));
            }
            Some(exec) => {
                let exec = Arc::clone(exec);
                tokio::spawn(async move {
                    manager
                        .submit_array(&runs, &exec, live, pending, runtime)
                        .await;
                });
            }
        }
    }

    fn update(&self, live: &LiveCampaign, change: impl FnOnce(&mut CampaignRecord)) {
        let snapshot = {
            let mut record = live.record.lock().expect("record lock");
            change(&mut record);
            record.clone()
        };
        self.save(&snapshot);
    }

    /// The local executor: start items in order through the run queue, keeping at most
    /// `max_concurrent` of them queued or running, until every item has run or the campaign
    /// is cancelled.
    async fn schedule_locally(
        self: Arc<Self>,
        runs: Arc<RunManager>,
        live: Arc<LiveCampaign>,
        items: Arc<Vec<Pending>>,
        runtime: Option<RuntimeProbe>,
    ) {
        let mut cancel = live.cancel.subscribe();
        let mut next = 0;
        loop {
            // A stopping server starts nothing more: its runs end as interrupted, and the
            // items left waiting are the next server's to resume.
            if *cancel.borrow() || runs.is_stopping() {
                break;
            }
            // Reading the items' statuses, creating runs and recording the campaign are
            // blocking work (a flush per change): off the async workers, so a large campaign
            // never holds up other tool calls.
            let (manager, runs, live, items, runtime) = (
                Arc::clone(&self),
                Arc::clone(&runs),
                Arc::clone(&live),
                Arc::clone(&items),
                runtime.clone(),
            );
            let tick = tokio::task::spawn_blocking(move || {
                manager.start_ready(&runs, &live, &items, next, runtime)
            })
            .await;
            let finished = match tick {
                Ok((advanced, finished)) => {
                    next = advanced;
                    finished
                }
                Err(e) => {
                    tracing::error!("the campaign's scheduler panicked: {e}");
                    true
                }
            };
            if finished {
                break;
            }
            tokio::select! {
                _ = tokio::time::sleep(SCHEDULER_TICK) => {}
                _ = cancel.changed() => {}
            }
        }
        self.release(&live);
    }

    /// This server starts nothing more of the campaign: another server may take it over.
    fn release(&self, live: &LiveCampaign) {
        live.owner.lock().expect("owner lock").take();
    }

    /// One scheduler tick: start items from `next` while fewer than the bound are active.
    /// Returns the next item to start and whether the campaign has nothing left to do.
    fn start_ready(
        &self,
        runs: &Arc<RunManager>,
        live: &LiveCampaign,
        items: &[Pending],
        mut next: usize,
        runtime: Option<RuntimeProbe>,
    ) -> (usize, bool) {
        let bound = live.record.lock().expect("record lock").max_concurrent as usize;
        let started: Vec<String> = live
            .record
            .lock()
            .expect("record lock")
            .items
            .iter()
            .filter_map(|i| i.run_id.clone())
            .collect();
        let mut active = started
            .iter()
            .filter(|id| runs.status(id).is_ok_and(|s| !s.state.is_terminal()))
            .count();
        while active < bound && next < items.len() && !runs.is_stopping() {
            let Pending {
                index,
                validation,
                request,
            } = &items[next];
            match runs.start(validation, request, runtime.clone()) {
                Ok(status) => {
                    self.update(live, |r| {
                        r.items[*index].run_id = Some(status.run_id);
                        r.items[*index].resume = None;
                    });
                    active += 1;
                    next += 1;
                }
                // Other runs hold the places: try again at the next tick.
                Err(e) if e.code == ErrorCode::TooManyRuns => break,
                Err(e) => {
                    self.update(live, |r| {
                        r.items[*index].start_error = Some(e.message);
                        r.items[*index].resume = None;
                    });
                    next += 1;
                }
            }
        }
        (next, next >= items.len() && active == 0)
    }

    /// Slurm: create every item's run, prepare them, and submit them as one job array.
    async fn submit_array(
        self: Arc<Self>,
        runs: &Arc<RunManager>,
        exec: &Arc<crate::runs::slurm::SlurmExecutor>,
        live: Arc<LiveCampaign>,
        items: Vec<Pending>,
        runtime: Option<RuntimeProbe>,
    ) {
        let (campaign_id, bound) = {
            let r = live.record.lock().expect("record lock");
            (r.campaign_id.clone(), r.max_concurrent)
        };
        // Creating every item's run and recording each in the campaign are blocking work
        // (flushes per item): off the async workers.
        let created = {
            let (manager, runs, live) = (Arc::clone(&self), Arc::clone(runs), Arc::clone(&live));
            tokio::task::spawn_blocking(move || {
                let mut pending = Vec::new();
                for item in &items {
                    let i = item.index;
                    match runs.create_unqueued(&item.validation, &item.request) {
                        Ok(run) => {
                            let run_id = run.run_id.clone();
                            manager.update(&live, |r| {
                                r.items[i].run_id = Some(run_id);
                                r.items[i].resume = None;
                            });
                            pending.push(run);
                        }
                        Err(e) => manager.update(&live, |r| {
                            r.items[i].start_error = Some(e.message);
                            r.items[i].resume = None;
                        }),
                    }
                }
                pending
            })
            .await
        };
        let pending = match created {
            Ok(pending) => pending,
            Err(e) => {
                tracing::error!(campaign_id, "creating the campaign's runs panicked: {e}");
                self.release(&live);
                return;
            }
        };
        let cancel = live.cancel.subscribe();
        let dir = self.dir(&campaign_id);
        match runs
            .submit_array(exec, pending, bound, &dir, &campaign_id, cancel, runtime)
            .await
        {
            Some(array) => {
                let manager = Arc::clone(&self);
                let recording = Arc::clone(&live);
                let recorded = tokio::task::spawn_blocking(move || {
                    manager.update(&recording, |r| r.array_job_id = Some(array))
                })
                .await;
                if let Err(e) = recorded {
                    tracing::error!(campaign_id, "recording the job array panicked: {e}");
                }
            }
            None => tracing::warn!(campaign_id, "the campaign's job array was not submitted"),
        }
        // Every item is a run now: the runs carry on (and are re-attached) on their own.
        self.release(&live);
    }

    /// Cancel: items not started never will; every queued or running item's run is
    /// cancelled (on Slurm, `scancel` of its array task). Waits up to `wait` for them to end.
    pub async fn cancel(
        &self,
        runs: &RunManager,
        id: &str,
        wait: Duration,
    ) -> Result<(CampaignRecord, bool), ToolError> {
        let record = self.record(id)?;
        let live = self.live.lock().expect("campaigns lock").get(id).cloned();
        if record.cancelled {
            return Ok((record, false));
        }
        if item_statuses(&record, runs)
            .iter()
            .all(|s| s.state.is_terminal())
        {
            return Ok((record, false));
        }
        match &live {
            Some(live) => {
                live.cancel.send_replace(true);
                self.update(live, |r| r.cancelled = true);
            }
            None => {
                let mut r = record.clone();
                r.cancelled = true;
                self.save(&r);
            }
        }
        // The scheduler starts nothing more once it has seen the flag.
        tokio::time::sleep(SCHEDULER_TICK * 2).await;
        let record = self.record(id)?;
        let statuses = item_statuses(&record, runs);
        let active: Vec<String> = statuses
            .iter()
            .filter(|s| matches!(s.state, ItemState::Queued | ItemState::Running))
            .filter_map(|s| s.run_id.clone())
            .collect();
        for run_id in &active {
            runs.request_cancel(run_id);
        }
        let deadline = tokio::time::Instant::now() + wait;
        for run_id in &active {
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            let _ = runs.wait_terminal(run_id, left).await;
        }
        Ok((self.record(id)?, true))
    }
}
