//! Test-only: a gate the run's dataset copy waits at, so a test can hold a copy in
//! progress for as long as it likes and check that other tool calls are answered
//! meanwhile — an ordering, not a timing, so the test cannot flake on a busy machine.
//!
//! A gate is keyed by the dataset's path, so tests running side by side in one process
//! never hold each other's copies.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, channel};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

/// How long a held copy waits before giving up on the test. Not a measurement: it only
/// keeps a runtime blocked by a held copy from hanging the test run forever, and a copy
/// that had to give up fails the test ([`Gate::expired`]).
const DEADLOCK_BREAKER: Duration = Duration::from_secs(60);

struct Waiting {
    reached: Sender<()>,
    release: Receiver<()>,
    expired: Arc<Mutex<bool>>,
}

fn gates() -> &'static Mutex<HashMap<PathBuf, Waiting>> {
    static GATES: OnceLock<Mutex<HashMap<PathBuf, Waiting>>> = OnceLock::new();
    GATES.get_or_init(Mutex::default)
}

/// The test's side of a gate.
pub struct Gate {
    reached: Mutex<Receiver<()>>,
    release: Sender<()>,
    expired: Arc<Mutex<bool>>,
}

impl Gate {
    /// Hold the next copy of `dataset` (its absolute path, as validation resolved it).
    pub fn hold(dataset: &Path) -> Gate {
        let (reached_tx, reached_rx) = channel();
        let (release_tx, release_rx) = channel();
        let expired = Arc::new(Mutex::new(false));
        gates().lock().expect("gates lock").insert(
            dataset.to_path_buf(),
            Waiting {
                reached: reached_tx,
                release: release_rx,
                expired: Arc::clone(&expired),
            },
        );
        Gate {
            reached: Mutex::new(reached_rx),
            release: release_tx,
            expired,
        }
    }

    /// Block until the copy has reached the gate (call it off the async runtime).
    pub fn wait_reached(&self) {
        self.reached
            .lock()
            .expect("gate lock")
            .recv_timeout(DEADLOCK_BREAKER)
            .expect("the run's dataset copy never reached the gate");
    }

    /// Let the copy go on.
    pub fn release(&self) {
        let _ = self.release.send(());
    }

    /// True when the copy stopped waiting on its own: nothing released it in time.
    pub fn expired(&self) -> bool {
        *self.expired.lock().expect("gate lock")
    }
}

/// Called by the run's preparation just before it copies `dataset`: waits while a test
/// holds a gate for that path.
pub(super) fn wait(dataset: &Path) {
    let Some(waiting) = gates().lock().expect("gates lock").remove(dataset) else {
        return;
    };
    let _ = waiting.reached.send(());
    if let Err(RecvTimeoutError::Timeout) = waiting.release.recv_timeout(DEADLOCK_BREAKER) {
        *waiting.expired.lock().expect("gate lock") = true;
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write as _;

    use rmcp::model::CallToolResult;
    use serde_json::{Map, Value, json};

    use super::*;
    use crate::context::{ConfirmMode, ServerContext, ServerSettings};
    use crate::tools::{Call, dispatch};

    /// Rows of the test's dataset (a few MiB: the gate, not the size, holds the copy).
    const ROWS: usize = 200_000;

    fn args(value: Value) -> Option<Map<String, Value>> {
        value.as_object().cloned()
    }

    fn structured(tool: &str, result: Option<CallToolResult>) -> Value {
        let result = result.unwrap_or_else(|| panic!("no tool named {tool}"));
        let content = result.structured_content.clone().unwrap_or_default();
        assert_eq!(result.is_error, Some(false), "{tool} failed: {content}");
        content
    }

    /// A manifest whose CLI is the shell: it writes one file and exits.
    fn adapter(dir: &Path) -> PathBuf {
        fs_err::create_dir_all(dir).unwrap();
        let schema = json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "additionalProperties": false,
            "properties": {}
        });
        fs_err::write(dir.join("touch.json"), schema.to_string()).unwrap();
        let manifest = r#"schema_version = 1
name = "gate-test"
version = "0.1.0"
summary = "A shell that writes one file: the CLI of the off-workers test."

[runtime]
kind = "executable"
executable = "/bin/sh"

[[workflow]]
id = "touch"
summary = "Write done.txt into the output directory."
parameters = "touch.json"
argv = ["-c", "echo ok > \"$2/done.txt\"", "cli", "{dataset}", "{output_dir}"]

[[workflow.artifact]]
id = "done"
path = "done.txt"
media_type = "text/plain"
"#;
        let path = dir.join("gate-test.toml");
        fs_err::write(&path, manifest).unwrap();
        path
    }

    /// The run's copy of its dataset is held at the gate, on a thread of the blocking
    /// pool; meanwhile `get_run_status`, `list_runs` and `get_capabilities` must be
    /// answered. The runtime has a single thread, the one this test runs on: had the copy
    /// been made on it, no other call could be answered until the copy gave up waiting,
    /// and the gate would say it expired.
    #[cfg(unix)]
    #[tokio::test(flavor = "current_thread")]
    async fn other_calls_are_answered_while_a_run_copies_its_dataset() {
        let root = tempfile::tempdir().unwrap();
        let start = root.path().join("start");
        fs_err::create_dir_all(&start).unwrap();
        let dataset = start.join("big.csv");
        {
            let mut f = std::io::BufWriter::new(fs_err::File::create(&dataset).unwrap());
            writeln!(f, "a,b,c").unwrap();
            for i in 0..ROWS {
                writeln!(f, "{i},{},{}", i * 7 % 1000, i % 13).unwrap();
            }
        }
        let manifest = adapter(&root.path().join("adapter"));
        let settings = ServerSettings {
            adapter: scimcp_core::manifest::resolve(&manifest.display().to_string()).unwrap(),
            python: None,
            start_dir: fs_err::canonicalize(&start).unwrap(),
            data_dirs: Vec::new(),
            data_root: root.path().join("home"),
            run_env: Default::default(),
            confirm: ConfirmMode::Optional,
            executor: crate::runs::executor::Executor::Local,
            client_timeout_s: None,
        };
        let ctx = ServerContext::open(settings).await.unwrap();
        let call = Call::stdio();
        let gate = Arc::new(Gate::hold(&fs_err::canonicalize(&dataset).unwrap()));

        let started = structured(
            "start_analysis",
            dispatch(
                &ctx,
                &call,
                "start_analysis",
                args(json!({"workflow": "touch", "dataset": "big.csv", "parameters": {}})),
            )
            .await,
        );
        let run_id = started["run_id"].as_str().unwrap().to_string();
        // Waiting for the copy to reach the gate is itself blocking: off this thread.
        let waiting = Arc::clone(&gate);
        tokio::task::spawn_blocking(move || waiting.wait_reached())
            .await
            .unwrap();

        // The copy is in progress and held. Other calls are answered all the same.
        let status = structured(
            "get_run_status",
            dispatch(
                &ctx,
                &call,
                "get_run_status",
                args(json!({"run_id": run_id})),
            )
            .await,
        );
        assert_eq!(status["state"], "queued", "{status}");
        let listed = structured(
            "list_runs",
            dispatch(&ctx, &call, "list_runs", args(json!({}))).await,
        );
        assert_eq!(listed["runs"]["items"][0]["run_id"], run_id.as_str());
        structured(
            "get_capabilities",
            dispatch(&ctx, &call, "get_capabilities", args(json!({}))).await,
        );
        assert!(
            !gate.expired(),
            "the copy gave up waiting: it ran on the async runtime's thread and held up \
             every other call"
        );

        gate.release();
        let result = structured(
            "get_run_result",
            dispatch(
                &ctx,
                &call,
                "get_run_result",
                args(json!({"run_id": run_id, "wait_s": 60})),
            )
            .await,
        );
        assert_eq!(result["state"], "succeeded", "{result}");
        assert!(!gate.expired());
    }
}
