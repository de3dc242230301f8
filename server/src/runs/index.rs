//! The run index: one line per run (id, creation time, state, workflow, adapter, campaign,
//! who started it, end time) kept beside the run directories, so that start-up reads only
//! the runs that are not terminal and `list_runs` pages without reading every `status.json`.
//!
//! The run directories stay the truth; the index is a cache of them that is never trusted
//! over them:
//! - a state in the index may lag `status.json` (a record is written before its index line),
//!   but never leads it, and states only move forward: an indexed terminal state is final,
//!   an indexed non-terminal one is read again from `status.json` before it is used;
//! - an entry whose directory is gone is dropped when it is met;
//! - a directory the index does not know is found because the runs directory's own
//!   fingerprint (modification time and link count, changed by every directory created or
//!   removed in it) differs from the one the last index line recorded, which makes the next
//!   open or listing compare the directory's names with the index (names only; only unknown
//!   runs are read);
//! - a missing, damaged (unparsable line, truncated tail, wrong version, wrong count) index is
//!   rebuilt from the run directories, reading each `status.json` and `request.json` once,
//!   as a listing did before the index existed.
//!
//! Layout of `<runs>/.index/` (a name that is never a run id, so no scan takes it for a run):
//! `snapshot.jsonl` — a header line (version, generation, fingerprint, the non-terminal
//! entries, how many terminal lines follow) and then one terminal entry per line, replaced
//! atomically (temporary file, fsync, rename, fsync of the directory); `journal-<generation>.jsonl`
//! — the changes since that snapshot, one JSON line each, appended with one `write` and
//! flushed with `fdatasync`. Start-up reads the header and the journal only; the terminal
//! entries load in the background (and on the first listing that needs them).
//!
//! Writers that create or delete run directories hold the runs directory's `.start.lock`
//! while they append (so the recorded fingerprint is the one their change produced), and so
//! does compaction; state changes append without it, and a change line lost to a compaction
//! running at that moment only leaves a lagging state, which is read again.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::io::{BufRead, Read, Seek, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};

use super::record::{RunSummary, is_run_id, read_json};
use super::state::{RunState, RunStatus};

/// Version of the index's files; any other version is rebuilt.
pub const INDEX_VERSION: u32 = 1;

/// The index's directory inside the runs directory.
pub const INDEX_DIR: &str = ".index";

const SNAPSHOT: &str = "snapshot.jsonl";

/// Journal lines after which the journal is folded into a new snapshot (plus a quarter of
/// the runs, so a long history is not rewritten for every few runs).
const COMPACT_AFTER_LINES: usize = 2_000;

/// How long after opening the terminal entries start loading in the background: a client's
/// handshake (answered in about 10 ms) never shares the CPU with the load, and a listing
/// sooner than this loads them itself.
const PREFETCH_AFTER: std::time::Duration = std::time::Duration::from_millis(50);

/// Test-only: milliseconds to sleep in the middle of every index write (after half of a
/// journal line is written, and between a snapshot's temporary file and its rename), so an
/// end-to-end test can kill the server while the index is being written.
pub const SLOW_WRITES_ENV: &str = "SCIMCP_TEST_SLOW_INDEX_MS";

/// Why the index could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum IndexError {
    #[error("cannot {action} the run index {}: {source}", path.display())]
    Io {
        action: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot replace the run index snapshot: {0}")]
    Write(#[from] scimcp_core::fs::WriteError),
    #[error("cannot lock the runs directory for the index: {0}")]
    Lock(String),
}

fn io(action: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> IndexError {
    let path = path.to_path_buf();
    move |source| IndexError::Io {
        action,
        path,
        source,
    }
}

/// Why an index file was set aside and rebuilt (for the log line that says so).
#[derive(Debug, thiserror::Error)]
enum Damage {
    #[error("it is missing")]
    Missing,
    #[error("line {line} of {file} is not an index record ({why})")]
    BadLine {
        file: &'static str,
        line: usize,
        why: String,
    },
    #[error("{file} ends in the middle of a line")]
    TruncatedTail { file: &'static str },
    #[error("it has version {found}, this server reads version {INDEX_VERSION}")]
    Version { found: u32 },
    #[error("the snapshot says {expected} runs follow its header but holds {found}")]
    Count { expected: usize, found: usize },
    #[error("{0}")]
    Io(String),
}

/// One indexed run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    pub run_id: String,
    pub created_at: String,
    pub state: RunState,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended_at: Option<String>,
    pub workflow: String,
    pub adapter: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub campaign_id: Option<String>,
    /// A token's name, `loopback` or `stdio` (absent for runs from before it was recorded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_by: Option<String>,
}

impl Entry {
    /// The entry of a run from its status and its request (who started it, for which
    /// campaign).
    pub fn of(status: &RunStatus, request: Option<&serde_json::Value>) -> Entry {
        let text = |key: &str| {
            request
                .and_then(|r| r.get(key))
                .and_then(|v| v.as_str())
                .map(str::to_string)
        };
        Entry {
            run_id: status.run_id.clone(),
            created_at: status.created_at.clone(),
            state: status.state,
            reason: status.reason.clone(),
            ended_at: status.ended_at.clone(),
            workflow: status.workflow.clone(),
            adapter: status.adapter.clone(),
            campaign_id: text("campaign_id"),
            started_by: text("started_by"),
        }
    }

    /// This entry with the state of a newer status of the same run.
    fn with_status(&self, status: &RunStatus) -> Entry {
        Entry {
            state: status.state,
            reason: status.reason.clone(),
            ended_at: status.ended_at.clone(),
            ..self.clone()
        }
    }

    pub fn summary(&self) -> RunSummary {
        RunSummary {
            run_id: self.run_id.clone(),
            state: self.state,
            reason: self.reason.clone(),
            workflow: self.workflow.clone(),
            adapter: self.adapter.clone(),
            created_at: self.created_at.clone(),
            ended_at: self.ended_at.clone(),
        }
    }

    /// Newest first, then by run id: the listing order.
    fn key(&self) -> Key {
        (-created_ns(&self.created_at), self.run_id.clone())
    }
}

/// Listing position: (minus the creation time in nanoseconds, run id), ascending = newest
/// first.
type Key = (i128, String);

/// Nanoseconds since the epoch of an RFC 3339 time; a time that does not parse sorts as
/// the oldest (it can only come from a hand-edited record).
fn created_ns(at: &str) -> i128 {
    at.parse::<jiff::Timestamp>()
        .map_or(i128::MIN / 2, |t| t.as_nanosecond())
}

/// What the runs directory's own metadata says about its entries: any directory created,
/// renamed or removed in it changes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Fingerprint {
    secs: i64,
    nanos: u32,
    /// Subdirectories + 2 on most Unix file systems, and the directory's size (which grows
    /// with its entries on most file systems): they tell apart two changes within one tick
    /// of the modification-time clock.
    links: u64,
    #[serde(default)]
    size: u64,
}

fn fingerprint(root: &Path) -> Option<Fingerprint> {
    let meta = fs_err::metadata(root).ok()?;
    let since = meta
        .modified()
        .ok()?
        .duration_since(std::time::UNIX_EPOCH)
        .ok()?;
    #[cfg(unix)]
    let links = std::os::unix::fs::MetadataExt::nlink(&meta);
    #[cfg(not(unix))]
    let links = 0;
    Some(Fingerprint {
        secs: i64::try_from(since.as_secs()).unwrap_or(i64::MAX),
        nanos: since.subsec_nanos(),
        links,
        size: meta.len(),
    })
}

/// One journal line.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Line {
    v: u32,
    #[serde(flatten)]
    op: Op,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
enum Op {
    /// A run is new or changed state; `fp` when the writer created its directory.
    Put {
        entry: Entry,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        fp: Option<Fingerprint>,
    },
    /// A run's directory was deleted.
    Forget {
        run_id: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        fp: Option<Fingerprint>,
    },
    /// The index matches the runs directory's names as of this fingerprint.
    Seal { fp: Fingerprint },
    /// This journal was folded into the snapshot of `generation`: read that instead.
    Moved { generation: u64 },
}

/// The snapshot's first line.
#[derive(Debug, Serialize, Deserialize)]
struct Header {
    version: u32,
    generation: u64,
    #[serde(default)]
    fp: Option<Fingerprint>,
    /// The runs that were not terminal (few: they are all in the header, so start-up needs
    /// nothing else from the snapshot).
    unsettled: Vec<Entry>,
    /// Terminal entries, one per line after the header.
    settled: usize,
}

/// Every indexed run, once loaded.
#[derive(Debug, Default)]
struct Full {
    by_id: HashMap<String, Entry>,
    order: BTreeSet<Key>,
}

impl Full {
    fn put(&mut self, entry: Entry) {
        let key = entry.key();
        if let Some(old) = self.by_id.insert(entry.run_id.clone(), entry) {
            let old_key = old.key();
            if old_key != key {
                self.order.remove(&old_key);
            }
        }
        self.order.insert(key);
    }

    fn remove(&mut self, run_id: &str) {
        if let Some(old) = self.by_id.remove(run_id) {
            self.order.remove(&old.key());
        }
    }
}

/// The in-memory index of one runs directory.
#[derive(Debug)]
struct State {
    root: PathBuf,
    generation: u64,
    journal: fs_err::File,
    /// Bytes of the journal applied so far.
    offset: u64,
    /// Lines of the journal applied so far (a compaction is due when they are many).
    journal_lines: usize,
    /// The fingerprint the last line recorded.
    known: Option<Fingerprint>,
    /// Indexed non-terminal runs (always known; start-up needs only these).
    unsettled: HashMap<String, Entry>,
    /// Every run, once the snapshot's body is loaded.
    full: Option<Full>,
    /// Runs the journal recorded terminal before `full` was loaded (states only move
    /// forward, and without `full` this is how a late line is told to be late).
    ended: HashSet<String>,
    /// The snapshot's terminal entries not yet loaded into `full`.
    ops: Vec<Op>,
    /// Changes since opening: tells a cached sequence hash it is stale.
    version: u64,
    /// The last filter's matches (see [`Matches`]).
    matches: Option<Matches>,
    /// Set when the journal said it moved to a newer snapshot, or a line was unreadable.
    reload: bool,
}

/// A shared handle on the index of one runs directory.
#[derive(Debug, Clone)]
pub struct Index {
    state: Arc<Mutex<State>>,
}

fn index_dir(root: &Path) -> PathBuf {
    root.join(INDEX_DIR)
}

fn journal_path(root: &Path, generation: u64) -> PathBuf {
    index_dir(root).join(format!("journal-{generation}.jsonl"))
}

fn slow_writes() -> Option<std::time::Duration> {
    let ms: u64 = std::env::var(SLOW_WRITES_ENV).ok()?.parse().ok()?;
    Some(std::time::Duration::from_millis(ms))
}

fn open_journal(path: &Path) -> Result<fs_err::File, IndexError> {
    fs_err::OpenOptions::new()
        .create(true)
        .append(true)
        .read(true)
        .open(path)
        .map_err(|e| IndexError::Io {
            action: "open",
            path: path.to_path_buf(),
            source: e,
        })
}

/// Append `lines` to `journal` in one write and flush them (`sync`: with `fdatasync`).
fn append(journal: &mut fs_err::File, lines: &[Line], sync: bool) -> Result<(), IndexError> {
    let mut bytes = Vec::new();
    for line in lines {
        serde_json::to_writer(&mut bytes, line).expect("index lines serialize");
        bytes.push(b'\n');
    }
    let path = journal.path().to_path_buf();
    if let Some(pause) = slow_writes() {
        // Two writes with a pause between: a kill in the pause leaves half a line.
        let half = bytes.len() / 2;
        journal
            .write_all(&bytes[..half])
            .map_err(io("append to", &path))?;
        journal.file().sync_data().map_err(io("flush", &path))?;
        std::thread::sleep(pause);
        journal
            .write_all(&bytes[half..])
            .map_err(io("append to", &path))?;
    } else {
        journal.write_all(&bytes).map_err(io("append to", &path))?;
    }
    if sync {
        journal.file().sync_data().map_err(io("flush", &path))?;
    }
    Ok(())
}

/// Read a run directory's entry from its records; `None` when it has no readable status.
fn read_entry(dir: &Path) -> Option<Entry> {
    let status = read_json::<RunStatus>(&dir.join("status.json")).ok()?;
    // Only the two fields the index keeps; a request too large to be one is left out.
    #[derive(Deserialize)]
    struct Who {
        #[serde(default)]
        started_by: Option<String>,
        #[serde(default)]
        campaign_id: Option<String>,
    }
    let who = read_json::<Who>(&dir.join("request.json")).ok();
    let mut entry = Entry::of(&status, None);
    if let Some(who) = who {
        entry.started_by = who.started_by;
        entry.campaign_id = who.campaign_id;
    }
    Some(entry)
}

/// Runs below which a rebuild reads them on its own thread.
const PARALLEL_FROM: usize = 512;

/// The entries of the runs `names` under `root`, read on several threads: a history's
/// first index build reads two small files per run, mostly waiting on the disk (100,000
/// runs took minutes one at a time), so more readers than cores help.
fn read_entries(root: &Path, names: Vec<String>) -> Vec<Entry> {
    if names.len() < PARALLEL_FROM {
        return names
            .iter()
            .filter_map(|n| read_entry(&root.join(n)))
            .collect();
    }
    let threads = std::thread::available_parallelism()
        .map_or(4, |n| n.get() * 4)
        .clamp(4, 32);
    let chunk = names.len().div_ceil(threads);
    std::thread::scope(|scope| {
        let readers: Vec<_> = names
            .chunks(chunk)
            .map(|part| {
                scope.spawn(move || {
                    part.iter()
                        .filter_map(|n| read_entry(&root.join(n)))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        readers
            .into_iter()
            .flat_map(|r| {
                r.join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
            })
            .collect()
    })
}

/// The run directory names under `root`.
fn run_names(root: &Path) -> Result<HashSet<String>, IndexError> {
    let entries = fs_err::read_dir(root).map_err(|e| IndexError::Io {
        action: "list",
        path: root.to_path_buf(),
        source: e,
    })?;
    Ok(entries
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| is_run_id(n))
        .collect())
}

/// Parse one line of `file`; `Err` says why it is damaged.
fn parse_line<T: serde::de::DeserializeOwned>(
    text: &str,
    file: &'static str,
    line: usize,
) -> Result<T, Damage> {
    serde_json::from_str(text).map_err(|e| Damage::BadLine {
        file,
        line,
        why: e.to_string(),
    })
}

fn check_version(v: u32) -> Result<(), Damage> {
    if v == INDEX_VERSION {
        Ok(())
    } else {
        Err(Damage::Version { found: v })
    }
}

/// The snapshot's header (reading nothing more of the file).
fn read_header(root: &Path) -> Result<Header, Damage> {
    let path = index_dir(root).join(SNAPSHOT);
    let file = match fs_err::File::open(&path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(Damage::Missing),
        Err(e) => return Err(Damage::Io(e.to_string())),
    };
    let mut first = String::new();
    std::io::BufReader::new(file)
        .read_line(&mut first)
        .map_err(|e| Damage::Io(e.to_string()))?;
    if !first.ends_with('\n') {
        return Err(Damage::TruncatedTail { file: SNAPSHOT });
    }
    // The version alone first: a header of another version may have other fields.
    #[derive(Deserialize)]
    struct Versioned {
        version: u32,
    }
    check_version(parse_line::<Versioned>(&first, SNAPSHOT, 1)?.version)?;
    parse_line(&first, SNAPSHOT, 1)
}

/// The snapshot's terminal entries, checked against its header's generation and count.
fn read_body(root: &Path, generation: u64) -> Result<(Header, Vec<Entry>), Damage> {
    let path = index_dir(root).join(SNAPSHOT);
    let text = fs_err::read_to_string(&path).map_err(|e| Damage::Io(e.to_string()))?;
    if !text.ends_with('\n') {
        return Err(Damage::TruncatedTail { file: SNAPSHOT });
    }
    let mut lines = text.lines();
    let header: Header = parse_line(lines.next().unwrap_or_default(), SNAPSHOT, 1)?;
    check_version(header.version)?;
    if header.generation != generation {
        return Err(Damage::Io(
            "the snapshot was replaced while it was read".into(),
        ));
    }
    let body = lines
        .enumerate()
        .map(|(i, l)| parse_line::<Entry>(l, SNAPSHOT, i + 2))
        .collect::<Result<Vec<_>, _>>()?;
    if body.len() != header.settled {
        return Err(Damage::Count {
            expected: header.settled,
            found: body.len(),
        });
    }
    Ok((header, body))
}

/// Parse journal bytes into lines; `Err` on any damage. Returns the lines and how many
/// bytes they took.
fn parse_journal(bytes: &[u8]) -> Result<Vec<Line>, Damage> {
    let text = std::str::from_utf8(bytes).map_err(|e| Damage::BadLine {
        file: "the journal",
        line: 0,
        why: e.to_string(),
    })?;
    if !text.is_empty() && !text.ends_with('\n') {
        return Err(Damage::TruncatedTail {
            file: "the journal",
        });
    }
    let mut out = Vec::new();
    for (i, l) in text.lines().enumerate() {
        let line: Line = parse_line(l, "the journal", i + 1)?;
        check_version(line.v)?;
        out.push(line);
    }
    Ok(out)
}

impl State {
    fn apply(&mut self, op: Op) {
        self.version += 1;
        match &op {
            Op::Put { entry, fp } => {
                // States only move forward: a late line never undoes a terminal state.
                let settled_already = match &self.full {
                    Some(full) => full
                        .by_id
                        .get(&entry.run_id)
                        .is_some_and(|e| e.state.is_terminal()),
                    None => self.ended.contains(&entry.run_id),
                };
                if entry.state.is_terminal() && self.full.is_none() {
                    self.ended.insert(entry.run_id.clone());
                }
                if !settled_already {
                    if entry.state.is_terminal() {
                        self.unsettled.remove(&entry.run_id);
                    } else {
                        self.unsettled.insert(entry.run_id.clone(), entry.clone());
                    }
                    if let Some(full) = &mut self.full {
                        full.put(entry.clone());
                    }
                }
                if fp.is_some() {
                    self.known = *fp;
                }
            }
            Op::Forget { run_id, fp } => {
                self.unsettled.remove(run_id);
                if let Some(full) = &mut self.full {
                    full.remove(run_id);
                }
                if fp.is_some() {
                    self.known = *fp;
                }
            }
            Op::Seal { fp } => self.known = Some(*fp),
            Op::Moved { .. } => {
                self.reload = true;
                return;
            }
        }
        if self.full.is_none() {
            self.ops.push(op);
        }
    }

    /// Apply what other writers appended since the last read.
    fn catch_up(&mut self) -> Result<(), Damage> {
        let len = self
            .journal
            .file()
            .metadata()
            .map_err(|e| Damage::Io(e.to_string()))?
            .len();
        if len <= self.offset {
            return Ok(());
        }
        let mut bytes = Vec::new();
        self.journal
            .file()
            .seek(std::io::SeekFrom::Start(self.offset))
            .map_err(|e| Damage::Io(e.to_string()))?;
        self.journal
            .file()
            .take(len - self.offset)
            .read_to_end(&mut bytes)
            .map_err(|e| Damage::Io(e.to_string()))?;
        // A line another writer is still writing: take only whole lines now.
        let whole = bytes.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
        let lines = parse_journal(&bytes[..whole])?;
        self.offset += whole as u64;
        self.journal_lines += lines.len();
        for line in lines {
            self.apply(line.op);
        }
        Ok(())
    }

    fn write(&mut self, ops: Vec<Op>, sync: bool) -> Result<(), IndexError> {
        let lines: Vec<Line> = ops
            .into_iter()
            .map(|op| Line {
                v: INDEX_VERSION,
                op,
            })
            .collect();
        append(&mut self.journal, &lines, sync)?;
        if self.catch_up().is_err() {
            self.reload = true;
        }
        Ok(())
    }

    /// Load the snapshot's terminal entries (once).
    fn ensure_full(&mut self) -> Result<(), Damage> {
        if self.full.is_some() {
            return Ok(());
        }
        let full = read_full(&self.root, self.generation)?;
        self.install(full);
        Ok(())
    }

    /// Take the snapshot's entries as the full index and replay the journal over them, in
    /// order.
    fn install(&mut self, full: Full) {
        let ops = std::mem::take(&mut self.ops);
        self.full = Some(full);
        for op in ops {
            self.apply(op);
        }
    }
}

/// Every entry of the snapshot of `generation` (its terminal body and its header's
/// non-terminal ones), before the journal is replayed over them.
fn read_full(root: &Path, generation: u64) -> Result<Full, Damage> {
    let (header, body) = read_body(root, generation)?;
    let mut full = Full::default();
    for entry in body.into_iter().chain(header.unsettled) {
        full.put(entry);
    }
    Ok(full)
}

/// Take the runs directory's start lock for an index change that must not interleave with
/// a start's `mkdir`.
fn lock(root: &Path) -> Result<fs_err::File, IndexError> {
    super::start_lock::start_lock(root, super::start_lock::START_LOCK_TIMEOUT)
        .map_err(|e| IndexError::Lock(e.message))
}

/// Read the index from disk (header and journal only); `Err` when it must be rebuilt.
fn load(root: &Path) -> Result<State, Damage> {
    let header = read_header(root)?;
    let path = journal_path(root, header.generation);
    let mut journal = open_journal(&path).map_err(|e| Damage::Io(e.to_string()))?;
    let mut bytes = Vec::new();
    journal
        .read_to_end(&mut bytes)
        .map_err(|e| Damage::Io(e.to_string()))?;
    let lines = parse_journal(&bytes)?;
    let mut state = State {
        root: root.to_path_buf(),
        generation: header.generation,
        journal,
        offset: bytes.len() as u64,
        journal_lines: lines.len(),
        known: header.fp,
        unsettled: header
            .unsettled
            .into_iter()
            .map(|e| (e.run_id.clone(), e))
            .collect(),
        full: None,
        ended: HashSet::new(),
        ops: Vec::new(),
        version: 0,
        matches: None,
        reload: false,
    };
    for line in lines {
        state.apply(line.op);
    }
    if state.reload {
        return Err(Damage::Io(
            "the journal was folded into a newer snapshot while it was read".into(),
        ));
    }
    Ok(state)
}

/// Write a snapshot of `entries` as generation `generation` with an empty journal; the
/// caller holds the start lock.
fn write_snapshot(
    root: &Path,
    generation: u64,
    fp: Option<Fingerprint>,
    entries: &mut dyn Iterator<Item = &Entry>,
) -> Result<(), IndexError> {
    let mut unsettled = Vec::new();
    let mut body = Vec::new();
    let mut settled = 0;
    for entry in entries {
        if entry.state.is_terminal() {
            serde_json::to_writer(&mut body, entry).expect("entries serialize");
            body.push(b'\n');
            settled += 1;
        } else {
            unsettled.push(entry.clone());
        }
    }
    let header = Header {
        version: INDEX_VERSION,
        generation,
        fp,
        unsettled,
        settled,
    };
    let mut bytes = serde_json::to_vec(&header).expect("the header serializes");
    bytes.push(b'\n');
    bytes.extend_from_slice(&body);
    // The new journal exists (empty) before the snapshot names it.
    let journal = journal_path(root, generation);
    fs_err::OpenOptions::new()
        .create(true)
        .truncate(true)
        .write(true)
        .open(&journal)
        .map_err(|e| IndexError::Io {
            action: "create",
            path: journal.clone(),
            source: e,
        })?;
    scimcp_core::fs::write_atomic_then(
        &index_dir(root).join(SNAPSHOT),
        &bytes,
        scimcp_core::fs::Privacy::Private,
        || {
            if let Some(pause) = slow_writes() {
                std::thread::sleep(pause);
            }
        },
    )?;
    Ok(())
}

/// Remove journals of generations before `generation` (left by a compaction or rebuild
/// that was killed before it removed them).
fn remove_old_journals(root: &Path, generation: u64) {
    let Ok(entries) = fs_err::read_dir(index_dir(root)) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let old = name
            .strip_prefix("journal-")
            .and_then(|n| n.strip_suffix(".jsonl"))
            .and_then(|n| n.parse::<u64>().ok())
            .is_some_and(|g| g < generation);
        if old {
            let _ = fs_err::remove_file(entry.path());
        }
    }
}

/// Rebuild the index from the run directories (the caller holds the start lock).
fn rebuild(root: &Path, why: &Damage) -> Result<State, IndexError> {
    if matches!(why, Damage::Missing) {
        tracing::info!(runs = %root.display(), "building the run index from the run directories");
    } else {
        tracing::warn!(
            runs = %root.display(),
            "rebuilding the run index from the run directories: {why}"
        );
    }
    let previous = read_header(root).map_or(0, |h| h.generation);
    let generation = previous.max(max_journal_generation(root)) + 1;
    let fp = fingerprint(root);
    let mut full = Full::default();
    for entry in read_entries(root, run_names(root)?.into_iter().collect()) {
        full.put(entry);
    }
    write_snapshot(root, generation, fp, &mut full.by_id.values())?;
    remove_old_journals(root, generation);
    let path = journal_path(root, generation);
    let journal = open_journal(&path)?;
    let unsettled = full
        .by_id
        .values()
        .filter(|e| !e.state.is_terminal())
        .map(|e| (e.run_id.clone(), e.clone()))
        .collect();
    Ok(State {
        root: root.to_path_buf(),
        generation,
        journal,
        offset: 0,
        journal_lines: 0,
        known: fp,
        unsettled,
        full: Some(full),
        ended: HashSet::new(),
        ops: Vec::new(),
        version: 0,
        matches: None,
        reload: false,
    })
}

fn max_journal_generation(root: &Path) -> u64 {
    fs_err::read_dir(index_dir(root))
        .map(|entries| {
            entries
                .flatten()
                .filter_map(|e| {
                    e.file_name()
                        .to_string_lossy()
                        .strip_prefix("journal-")
                        .and_then(|n| n.strip_suffix(".jsonl"))
                        .and_then(|n| n.parse::<u64>().ok())
                })
                .max()
                .unwrap_or(0)
        })
        .unwrap_or(0)
}

/// Open the index, rebuilding it when it is missing or damaged, and reconciling it with
/// the runs directory's names when the directory changed behind it. The caller holds the
/// start lock.
fn open_locked(root: &Path) -> Result<State, IndexError> {
    scimcp_core::fs::create_private_dir(&index_dir(root)).map_err(io("create", root))?;
    let mut state = match load(root) {
        Ok(state) => state,
        Err(why) => {
            if !matches!(why, Damage::Missing) || root_has_runs(root) {
                return rebuild(root, &why);
            }
            // A new runs directory: an empty index, without a warning.
            rebuild_quietly(root)?
        }
    };
    if fingerprint(root) != state.known
        && let Err(why) = reconcile(&mut state)
    {
        return rebuild(root, &why);
    }
    Ok(state)
}

fn root_has_runs(root: &Path) -> bool {
    fs_err::read_dir(root).is_ok_and(|mut entries| {
        entries.any(|e| e.is_ok_and(|e| is_run_id(&e.file_name().to_string_lossy())))
    })
}

fn rebuild_quietly(root: &Path) -> Result<State, IndexError> {
    let generation = max_journal_generation(root) + 1;
    let fp = fingerprint(root);
    write_snapshot(root, generation, fp, &mut std::iter::empty())?;
    remove_old_journals(root, generation);
    Ok(State {
        root: root.to_path_buf(),
        generation,
        journal: open_journal(&journal_path(root, generation))?,
        offset: 0,
        journal_lines: 0,
        known: fp,
        unsettled: HashMap::new(),
        full: Some(Full::default()),
        ended: HashSet::new(),
        ops: Vec::new(),
        version: 0,
        matches: None,
        reload: false,
    })
}

/// Make the index hold exactly the runs directory's runs: names it lacks are read, entries
/// whose directory is gone are dropped, and a seal records the fingerprint. The caller
/// holds the start lock.
fn reconcile(state: &mut State) -> Result<(), Damage> {
    state.ensure_full()?;
    let fp = fingerprint(&state.root);
    let names = run_names(&state.root).map_err(|e| Damage::Io(e.to_string()))?;
    let full = state.full.as_ref().expect("loaded above");
    let mut ops: Vec<Op> = full
        .by_id
        .keys()
        .filter(|id| !names.contains(*id))
        .map(|id| Op::Forget {
            run_id: id.clone(),
            fp: None,
        })
        .collect();
    let unknown = names
        .iter()
        .filter(|n| !full.by_id.contains_key(*n))
        .cloned()
        .collect();
    for entry in read_entries(&state.root, unknown) {
        ops.push(Op::Put { entry, fp: None });
    }
    if !ops.is_empty() {
        tracing::info!(
            runs = %state.root.display(),
            changes = ops.len(),
            "the run index caught up with run directories added or removed behind it"
        );
    }
    if let Some(fp) = fp {
        ops.push(Op::Seal { fp });
    }
    state
        .write(ops, true)
        .map_err(|e| Damage::Io(e.to_string()))
}

/// What a listing asks for.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Filter {
    pub states: Vec<RunState>,
    pub workflow: Option<String>,
    pub adapter: Option<String>,
    pub campaign_id: Option<String>,
    pub started_by: Option<String>,
    /// Nanoseconds since the epoch, exclusive bounds.
    pub created_after: Option<i128>,
    pub created_before: Option<i128>,
}

impl Filter {
    fn is_empty(&self) -> bool {
        *self == Filter::default()
    }

    /// `created` is the entry's creation time in nanoseconds.
    fn matches(&self, e: &Entry, created: i128) -> bool {
        (self.states.is_empty() || self.states.contains(&e.state))
            && self.workflow.as_ref().is_none_or(|w| *w == e.workflow)
            && self.adapter.as_ref().is_none_or(|a| *a == e.adapter)
            && self
                .campaign_id
                .as_ref()
                .is_none_or(|c| e.campaign_id.as_ref() == Some(c))
            && self
                .started_by
                .as_ref()
                .is_none_or(|s| e.started_by.as_ref() == Some(s))
            && self.created_after.is_none_or(|t| created > t)
            && self.created_before.is_none_or(|t| created < t)
    }
}

/// Where a page starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Start {
    Offset(usize),
    /// After this run (creation time in nanoseconds, run id): a cursor a previous page
    /// gave. Runs created since do not move it.
    After(i128, String),
}

/// One page of the listing.
#[derive(Debug)]
pub struct Listed {
    pub items: Vec<RunSummary>,
    /// Matching runs before the page.
    pub offset: usize,
    /// Matching runs in all.
    pub total: usize,
    /// The position of the page's last run (creation time in nanoseconds, run id), when
    /// more follow.
    pub next: Option<(i128, String)>,
    /// SHA-256 of the canonical JSON of every matching run's line.
    pub sequence_sha256: String,
}

/// The background load runs at the lowest CPU priority: on a busy machine (two cores shared
/// with builds) it must never delay the answers of the handshake it overlaps; a listing that
/// needs the entries before it is done loads them itself.
#[cfg(target_os = "linux")]
fn lower_priority() {
    // On Linux a thread id names that one thread for setpriority; elsewhere the call would
    // lower the whole server, so it is left out there.
    let _ = rustix::process::setpriority_process(Some(rustix::thread::gettid()), 19);
}

#[cfg(not(target_os = "linux"))]
fn lower_priority() {}

impl Index {
    /// Open the index of `root` (rebuilding or reconciling it as the module says).
    pub fn open(root: &Path) -> Result<Index, IndexError> {
        let _lock = lock(root)?;
        let state = open_locked(root)?;
        remove_old_journals(root, state.generation);
        // A reconcile that met many runs (a history written behind the index) leaves them
        // all in the journal, which every later start would read and parse in full: fold it
        // into the snapshot, whose terminal body start-up skips.
        let due = state.journal_lines > COMPACT_AFTER_LINES + state.runs() / 4;
        let index = Index {
            state: Arc::new(Mutex::new(state)),
        };
        if due {
            index.compact_in_background();
        }
        Ok(index)
    }

    /// Load the terminal entries in the background, so the first listing need not.
    pub fn prefetch(&self) {
        let index = self.clone();
        let _ = std::thread::Builder::new()
            .name("run-index-load".into())
            .spawn(move || {
                lower_priority();
                // Past the client's handshake: `initialize` and `tools/list` need none of it.
                std::thread::sleep(PREFETCH_AFTER);
                // Read and parse without the lock: a start-up step that needs the index
                // (recovery, the batch jobs' check) must not wait for the whole history.
                let (root, generation) = {
                    let state = index.state.lock().expect("index lock");
                    if state.full.is_some() {
                        return;
                    }
                    (state.root.clone(), state.generation)
                };
                let loaded = read_full(&root, generation);
                let mut state = index.state.lock().expect("index lock");
                // A listing loaded it meanwhile, or the index moved to another snapshot
                // (whose own entries a later access loads).
                if state.full.is_some() || state.generation != generation || state.reload {
                    return;
                }
                match loaded {
                    Ok(full) => state.install(full),
                    Err(_) => state.reload = true,
                }
            });
    }

    /// The runs the index says are not terminal (their state is to be read again).
    pub fn unsettled(&self) -> Vec<Entry> {
        let mut state = self.state.lock().expect("index lock");
        if state.catch_up().is_err() {
            state.reload = true;
        }
        state.unsettled.values().cloned().collect()
    }

    /// Record a new run whose directory was just created; the caller holds the start lock
    /// (so the fingerprint recorded is the one this run's `mkdir` made).
    pub fn created(&self, status: &RunStatus, request: &serde_json::Value) {
        let entry = Entry::of(status, Some(request));
        let mut state = self.state.lock().expect("index lock");
        // A compaction by another server moved the journal: follow it first, or this
        // line would go to a journal nobody reads.
        if state.catch_up().is_err() || state.reload {
            match open_locked(&state.root.clone()) {
                Ok(fresh) => *state = fresh,
                Err(e) => tracing::warn!("cannot re-read the run index: {e}"),
            }
        }
        let fp = fingerprint(&state.root);
        if let Err(e) = state.write(vec![Op::Put { entry, fp }], true) {
            // The run stands without its line: the directory change is found by the next
            // listing's fingerprint check.
            tracing::warn!(run_id = status.run_id, "cannot index the new run: {e}");
        }
        let due = state.journal_lines > COMPACT_AFTER_LINES + state.runs() / 4;
        drop(state);
        if due {
            self.compact_in_background();
        }
    }

    /// Record a run's new state (after its `status.json` was written).
    pub fn changed(&self, status: &RunStatus) {
        let mut state = self.state.lock().expect("index lock");
        if state.catch_up().is_err() {
            state.reload = true;
        }
        let known = state
            .unsettled
            .get(&status.run_id)
            .cloned()
            .or_else(|| state.full.as_ref()?.by_id.get(&status.run_id).cloned());
        let entry = match known {
            Some(e) => e.with_status(status),
            None => read_entry(&state.root.join(&status.run_id))
                .map_or_else(|| Entry::of(status, None), |e| e.with_status(status)),
        };
        // Only a terminal state is flushed: a lost `running` line reads `queued`, which is
        // read again from status.json all the same.
        if let Err(e) = state.write(
            vec![Op::Put { entry, fp: None }],
            status.state.is_terminal(),
        ) {
            tracing::warn!(run_id = status.run_id, "cannot index the run's state: {e}");
        }
    }

    /// Record that a run's directory is gone, met without the start lock (recovery).
    pub(super) fn dropped(&self, run_id: &str) {
        let mut state = self.state.lock().expect("index lock");
        let _ = state.write(
            vec![Op::Forget {
                run_id: run_id.to_string(),
                fp: None,
            }],
            false,
        );
    }

    fn compact_in_background(&self) {
        let index = self.clone();
        let _ = std::thread::Builder::new()
            .name("run-index-compact".into())
            .spawn(move || {
                if let Err(e) = index.compact() {
                    tracing::warn!("cannot compact the run index: {e}");
                }
            });
    }

    /// Fold the journal into a new snapshot now.
    pub fn compact(&self) -> Result<(), IndexError> {
        let root = self.state.lock().expect("index lock").root.clone();
        let _lock = lock(&root)?;
        let mut state = self.state.lock().expect("index lock");
        let damaged = state.catch_up().err().or_else(|| state.ensure_full().err());
        if state.reload || damaged.is_some() {
            let why = damaged.unwrap_or(Damage::Io("the journal moved".into()));
            *state = open_locked_after(&root, &why)?;
            return Ok(());
        }
        let generation = state.generation + 1;
        let fp = state.known;
        let full = state.full.as_ref().expect("loaded above");
        write_snapshot(&root, generation, fp, &mut full.by_id.values())?;
        // Tell other servers reading the old journal where the index went.
        let _ = state.write(vec![Op::Moved { generation }], true);
        let old = journal_path(&root, state.generation);
        state.journal = open_journal(&journal_path(&root, generation))?;
        state.generation = generation;
        state.offset = 0;
        state.journal_lines = 0;
        state.reload = false;
        let _ = fs_err::remove_file(old);
        Ok(())
    }

    /// Bring the in-memory index up to date with the disk: other writers' lines, a newer
    /// snapshot, and run directories created or removed behind it; then read again the
    /// runs it holds as not terminal (`live`: the statuses of the runs this server
    /// executes, which need no reading).
    fn fresh(
        &self,
        live: &HashMap<String, RunStatus>,
    ) -> Result<std::sync::MutexGuard<'_, State>, IndexError> {
        let current = {
            let mut state = self.state.lock().expect("index lock");
            let ok = state.catch_up().is_ok() && state.ensure_full().is_ok();
            (ok && !state.reload && fingerprint(&state.root) == state.known).then_some(state)
        };
        let mut state = match current {
            Some(state) => state,
            None => {
                let root = self.state.lock().expect("index lock").root.clone();
                // Start lock before the index lock, the order a start takes them in.
                let _lock = lock(&root)?;
                let mut state = self.state.lock().expect("index lock");
                let damaged = state.catch_up().err();
                if state.reload || damaged.is_some() {
                    let why = damaged.unwrap_or(Damage::Io("the journal moved".into()));
                    *state = open_locked_after(&root, &why)?;
                }
                if let Err(why) = state.ensure_full() {
                    *state = rebuild(&root, &why)?;
                }
                if fingerprint(&root) != state.known
                    && let Err(why) = reconcile(&mut state)
                {
                    *state = rebuild(&root, &why)?;
                }
                state
            }
        };
        let mut fixes = Vec::new();
        for entry in state.unsettled.values() {
            let dir = state.root.join(&entry.run_id);
            let status = match live.get(&entry.run_id) {
                Some(s) => Some(s.clone()),
                None => read_json::<RunStatus>(&dir.join("status.json")).ok(),
            };
            match status {
                Some(s) if s.state != entry.state || s.ended_at != entry.ended_at => {
                    fixes.push(Op::Put {
                        entry: entry.with_status(&s),
                        fp: None,
                    });
                }
                Some(_) => {}
                None if !dir.exists() => fixes.push(Op::Forget {
                    run_id: entry.run_id.clone(),
                    fp: None,
                }),
                None => {}
            }
        }
        if !fixes.is_empty() {
            state.write(fixes, false)?;
        }
        Ok(state)
    }

    /// A page of runs, newest first.
    pub fn list(
        &self,
        filter: &Filter,
        start: &Start,
        limit: usize,
        live: &HashMap<String, RunStatus>,
    ) -> Result<Listed, IndexError> {
        let mut state = self.fresh(live)?;
        loop {
            let listed = page(&mut state, filter, start, limit);
            // An entry whose directory is gone is dropped, never listed.
            let gone: Vec<Op> = listed
                .items
                .iter()
                .filter(|s| !state.root.join(&s.run_id).is_dir())
                .map(|s| Op::Forget {
                    run_id: s.run_id.clone(),
                    fp: None,
                })
                .collect();
            if gone.is_empty() {
                return Ok(listed);
            }
            state.write(gone, false)?;
        }
    }

    /// Every run's line, newest first.
    pub fn summaries(
        &self,
        live: &HashMap<String, RunStatus>,
    ) -> Result<Vec<RunSummary>, IndexError> {
        let state = self.fresh(live)?;
        Ok(state.ordered().map(|(_, e)| e.summary()).collect())
    }

    /// Every indexed run (for a prune choosing what to delete), newest first.
    pub fn all(&self) -> Result<Vec<Entry>, IndexError> {
        let state = self.fresh(&HashMap::new())?;
        Ok(state.ordered().map(|(_, e)| e.clone()).collect())
    }

    /// Record that run directories were deleted, and check the index against the runs
    /// directory's names. The caller need not hold the start lock.
    pub fn forget(&self, run_ids: &[&str]) -> Result<(), IndexError> {
        let root = self.state.lock().expect("index lock").root.clone();
        let _lock = lock(&root)?;
        let mut state = self.state.lock().expect("index lock");
        let _ = state.catch_up();
        let ops = run_ids
            .iter()
            .filter(|id| !root.join(id).exists())
            .map(|id| Op::Forget {
                run_id: (*id).to_string(),
                fp: None,
            })
            .collect();
        state.write(ops, true)?;
        if let Err(why) = reconcile(&mut state) {
            *state = rebuild(&root, &why)?;
        }
        Ok(())
    }
}

/// After a damaged journal or a moved one: open again from disk (rebuilding if need be).
fn open_locked_after(root: &Path, why: &Damage) -> Result<State, IndexError> {
    tracing::info!(runs = %root.display(), "re-reading the run index: {why}");
    open_locked(root)
}

impl State {
    fn runs(&self) -> usize {
        self.full
            .as_ref()
            .map_or(self.unsettled.len(), |f| f.by_id.len())
    }

    /// Every entry with its creation time, newest first (the caller loaded them).
    fn ordered(&self) -> impl Iterator<Item = (i128, &Entry)> {
        let full = self.full.as_ref().expect("fresh loads every entry");
        full.order
            .iter()
            .filter_map(|(ns, id)| full.by_id.get(id).map(|e| (-ns, e)))
    }
}

/// The runs one filter matched at one version of the index, kept for the next page (and the
/// next identical call): a repeated or paged filtered listing does not pass over the
/// history again.
#[derive(Debug)]
struct Matches {
    version: u64,
    filter: String,
    /// Their keys in listing order; `None` for the empty filter (every run: the index's own
    /// order).
    keys: Option<Vec<Key>>,
    sha256: String,
}

/// The page of `state`'s entries matching `filter`.
fn page(state: &mut State, filter: &Filter, start: &Start, limit: usize) -> Listed {
    use std::ops::Bound::{Excluded, Unbounded};
    let limit = limit.max(1);
    let filter_key = format!("{filter:?}");
    let hit = state
        .matches
        .as_ref()
        .is_some_and(|m| m.version == state.version && m.filter == filter_key);
    if !hit {
        let mut keys = Vec::new();
        let mut all = Vec::new();
        for (ns, e) in state.ordered().filter(|(ns, e)| filter.matches(e, *ns)) {
            all.push(e.summary());
            if !filter.is_empty() {
                keys.push((-ns, e.run_id.clone()));
            }
        }
        state.matches = Some(Matches {
            version: state.version,
            filter: filter_key,
            keys: (!filter.is_empty()).then_some(keys),
            sha256: scimcp_core::hash::canonical_sha256_of(&all),
        });
    }
    let state = &*state;
    let matches = state.matches.as_ref().expect("computed above");
    let full = state.full.as_ref().expect("fresh loads every entry");
    let cursor = match start {
        Start::Offset(_) => None,
        Start::After(at, id) => Some((-*at, id.clone())),
    };
    let (offset, total, keys): (usize, usize, Vec<&Key>) = match (&matches.keys, cursor) {
        (Some(keys), None) => {
            let offset = match start {
                Start::Offset(n) => (*n).min(keys.len()),
                Start::After(..) => 0,
            };
            (
                offset,
                keys.len(),
                keys[offset..].iter().take(limit).collect(),
            )
        }
        (Some(keys), Some(c)) => {
            let offset = keys.partition_point(|k| *k <= c);
            (
                offset,
                keys.len(),
                keys[offset..].iter().take(limit).collect(),
            )
        }
        (None, None) => {
            let total = full.order.len();
            let offset = match start {
                Start::Offset(n) => (*n).min(total),
                Start::After(..) => 0,
            };
            let keys = full.order.iter().skip(offset).take(limit).collect();
            (offset, total, keys)
        }
        (None, Some(c)) => {
            let offset = full.order.range(..=c.clone()).count();
            let keys = full
                .order
                .range((Excluded(c), Unbounded))
                .take(limit)
                .collect();
            (offset, full.order.len(), keys)
        }
    };
    let items: Vec<RunSummary> = keys
        .iter()
        .filter_map(|(_, id)| full.by_id.get(id).map(Entry::summary))
        .collect();
    let next = if offset + keys.len() < total {
        keys.last().map(|(ns, id)| (-*ns, id.clone()))
    } else {
        None
    };
    Listed {
        items,
        offset,
        total,
        next,
        sequence_sha256: matches.sha256.clone(),
    }
}

/// Record that `run_ids`' directories under `root` were deleted (for `scimcp runs prune`):
/// call it after the directories are gone. Idempotent; safe with servers running.
pub fn forget_many(root: &Path, run_ids: &[&str]) -> Result<(), IndexError> {
    Index::open(root)?.forget(run_ids)
}

/// [`forget_many`] for one run.
#[allow(
    dead_code,
    reason = "the one-run form of forget_many, which runs prune calls"
)]
pub fn forget(root: &Path, run_id: &str) -> Result<(), IndexError> {
    forget_many(root, &[run_id])
}

/// Every indexed run of `root`, newest first (rebuilt from the directories first when the
/// index is missing or damaged). A non-terminal state may lag its `status.json`.
#[allow(
    dead_code,
    reason = "for a prune choosing runs by state and age; the tests use it"
)]
pub fn entries(root: &Path) -> Result<Vec<Entry>, IndexError> {
    Index::open(root)?.all()
}

#[cfg(test)]
#[path = "index_tests.rs"]
mod tests;
