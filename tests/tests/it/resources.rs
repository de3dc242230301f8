//! Resources, subscriptions and progress, through the real binary over loopback Streamable
//! HTTP with a real MCP client (rmcp's): the adapter manifest and workflow schemas listed
//! and read; a subscriber to a running run's result told when it ends; progress
//! notifications while `get_run_result` waits; a cancelled wait that leaves the run running;
//! and a run with hundreds of artifacts listed page by page, each exactly once.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, ClientRequest, PaginatedRequestParams,
    ProgressNotificationParam, ReadResourceRequestParams, ResourceContents,
    ResourceUpdatedNotificationParam, SubscribeRequestParams,
};
use rmcp::service::{NotificationContext, PeerRequestOptions};
use rmcp::{ClientHandler, RoleClient, ServiceExt as _};
use scimcp_e2e::http_client::{self, HttpTarget};
use scimcp_e2e::http_server::{HttpServer, TestRoot};
use serde_json::{Value, json};

/// A client that keeps every progress and resource-update notification it receives.
#[derive(Clone, Default)]
struct Recorder {
    progress: Arc<Mutex<Vec<ProgressNotificationParam>>>,
    updated: Arc<Mutex<Vec<String>>>,
}

impl ClientHandler for Recorder {
    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.progress.lock().unwrap().push(params);
    }

    async fn on_resource_updated(
        &self,
        params: ResourceUpdatedNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.updated.lock().unwrap().push(params.uri);
    }
}

fn loopback(server: &HttpServer) -> HttpTarget {
    HttpTarget {
        connect: std::net::SocketAddr::from(([127, 0, 0, 1], server.port)),
        authority: format!("127.0.0.1:{}", server.port),
        tls: None,
    }
}

fn text(contents: &ResourceContents) -> (&str, Option<&str>) {
    match contents {
        ResourceContents::TextResourceContents {
            text, mime_type, ..
        } => (text.as_str(), mime_type.as_deref()),
        other => panic!("not text: {other:?}"),
    }
}

async fn read(
    client: &rmcp::Peer<RoleClient>,
    uri: &str,
) -> Result<rmcp::model::ReadResourceResult, rmcp::ServiceError> {
    client
        .read_resource(ReadResourceRequestParams::new(uri))
        .await
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

#[allow(deprecated)] // resources/subscribe: what clients of the 2025 protocol versions send
#[test]
fn resources_are_read_and_a_subscriber_hears_when_its_run_ends_with_progress_meanwhile() {
    let root = TestRoot::new().unwrap();
    let server = HttpServer::start(&root, &["--listen", "127.0.0.1:0"], &[]).unwrap();
    let target = loopback(&server);
    runtime().block_on(async {
        let recorder = Recorder::default();
        let client = recorder
            .clone()
            .serve(http_client::transport(&target, None, &[]))
            .await
            .unwrap();
        let caps = &client.peer_info().unwrap().capabilities;
        assert_eq!(
            caps.resources.as_ref().and_then(|r| r.subscribe),
            Some(true),
            "{caps:?}"
        );

        // The adapter's resources: the manifest (its hash is the adapter hash) and schemas.
        let listed = client.list_all_resources().await.unwrap();
        let uris: Vec<&str> = listed.iter().map(|r| r.uri.as_str()).collect();
        let capabilities = http_client::ok(&client, "get_capabilities", json!({})).await;
        let workflows = capabilities["workflows"].as_array().unwrap();
        // The manifest, a schema per workflow and the run viewer (an MCP App).
        assert_eq!(uris.len(), 1 + workflows.len() + 1, "{uris:?}");
        assert_eq!(uris[0], "scimcp://adapter/manifest");
        assert!(uris.contains(&"ui://scimcp/run-viewer"), "{uris:?}");
        let manifest = read(&client, "scimcp://adapter/manifest").await.unwrap();
        let (manifest_text, mime) = text(&manifest.contents[0]);
        assert_eq!(mime, Some("application/json"));
        assert_eq!(
            scimcp_core::hash::sha256_hex(manifest_text.as_bytes()),
            capabilities["adapter"]["sha256"].as_str().unwrap()
        );
        let schema = read(&client, "scimcp://adapter/workflows/regression/schema")
            .await
            .unwrap();
        let schema: Value = serde_json::from_str(text(&schema.contents[0]).0).unwrap();
        assert!(schema["properties"]["target"].is_object(), "{schema:#}");
        let templates = client.list_all_resource_templates().await.unwrap();
        assert_eq!(templates.len(), 4);

        // Resources this server does not have: -32002, naming the URI forms.
        for uri in [
            "test://static-text",
            "scimcp://runs/run-0000000000000000/result",
            "scimcp://adapter/workflows/nope/schema",
        ] {
            let e = read(&client, uri).await.unwrap_err().to_string();
            assert!(
                e.contains("-32002") || e.contains("not found") || e.contains("no "),
                "{uri}: {e}"
            );
        }
        let refused = client
            .subscribe(SubscribeRequestParams::new("test://watched-resource"))
            .await;
        assert!(refused.is_err());

        // A run that takes a few seconds; subscribe to its result before it ends.
        let started = http_client::ok(
            &client,
            "start_analysis",
            json!({"workflow": "regression", "dataset": "data/diabetes.csv",
                   "parameters": {"target": "target", "sleep_s": 5}}),
        )
        .await;
        let run_id = started["run_id"].as_str().unwrap().to_string();
        let result_uri = format!("scimcp://runs/{run_id}/result");
        client
            .subscribe(SubscribeRequestParams::new(result_uri.clone()))
            .await
            .unwrap();
        let early = read(&client, &result_uri).await.unwrap_err().to_string();
        assert!(early.contains("has not ended"), "{early}");

        // Waiting with progress: notifications while the call waits, then the result.
        let waited = Instant::now();
        let result = http_client::ok(
            &client,
            "get_run_result",
            json!({"run_id": run_id, "wait_s": 120}),
        )
        .await;
        assert_eq!(result["state"], "succeeded", "{result:#}");
        let progress = recorder.progress.lock().unwrap().clone();
        assert!(
            progress.len() >= 2,
            "{} progress notifications in {:?}",
            progress.len(),
            waited.elapsed()
        );
        assert!(
            progress.windows(2).all(|w| w[1].progress > w[0].progress),
            "progress must only grow: {progress:?}"
        );
        let messages: Vec<String> = progress.iter().filter_map(|p| p.message.clone()).collect();
        assert!(
            messages
                .iter()
                .any(|m| m.contains(&run_id)
                    && (m.contains("is running") || m.contains("is queued"))),
            "{messages:?}"
        );
        assert!(
            messages.last().unwrap().contains("ended: succeeded"),
            "{messages:?}"
        );
        // refsci's manifest declares its stage lines as progress: the newest one is relayed.
        assert!(
            messages
                .last()
                .unwrap()
                .contains("the CLI reports: wrote metrics.json, model.json"),
            "{messages:?}"
        );

        // The subscriber is told.
        let deadline = Instant::now() + Duration::from_secs(15);
        while !recorder.updated.lock().unwrap().contains(&result_uri) {
            assert!(
                Instant::now() < deadline,
                "no notifications/resources/updated"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }

        // The result and its artifacts, byte for byte.
        let run_dir = root.runs_dir().join(&run_id);
        let published = read(&client, &result_uri).await.unwrap();
        let on_disk = fs_err::read_to_string(run_dir.join("result.json")).unwrap();
        assert_eq!(text(&published.contents[0]).0, on_disk);
        let metrics_uri = format!("scimcp://runs/{run_id}/artifacts/metrics.json");
        let metrics = read(&client, &metrics_uri).await.unwrap();
        assert_eq!(
            text(&metrics.contents[0]),
            (
                fs_err::read_to_string(run_dir.join("work/output/metrics.json"))
                    .unwrap()
                    .as_str(),
                Some("application/json")
            )
        );
        let listed = client.list_all_resources().await.unwrap();
        let uris: Vec<&str> = listed.iter().map(|r| r.uri.as_str()).collect();
        assert!(uris.contains(&result_uri.as_str()), "{uris:?}");
        assert!(uris.contains(&metrics_uri.as_str()), "{uris:?}");
        let artifact_count = result["result"]["artifacts"]["total"].as_u64().unwrap() as usize;
        assert_eq!(uris.len(), 1 + workflows.len() + 1 + 1 + artifact_count);
        client.cancel().await.unwrap();
    });
}

#[test]
fn cancelling_a_waiting_call_ends_the_wait_not_the_run() {
    let root = TestRoot::new().unwrap();
    let server = HttpServer::start(&root, &["--listen", "127.0.0.1:0"], &[]).unwrap();
    let target = loopback(&server);
    runtime().block_on(async {
        let recorder = Recorder::default();
        let client = recorder
            .clone()
            .serve(http_client::transport(&target, None, &[]))
            .await
            .unwrap();
        let started = http_client::ok(
            &client,
            "start_analysis",
            json!({"workflow": "regression", "dataset": "data/diabetes.csv",
                   "parameters": {"target": "target", "sleep_s": 8}}),
        )
        .await;
        let run_id = started["run_id"].as_str().unwrap().to_string();
        let arguments = json!({"run_id": run_id, "wait_s": 120});
        let handle = client
            .send_cancellable_request(
                ClientRequest::CallToolRequest(CallToolRequest::new(
                    CallToolRequestParams::new("get_run_result")
                        .with_arguments(arguments.as_object().unwrap().clone()),
                )),
                PeerRequestOptions::no_options(),
            )
            .await
            .unwrap();
        // Once the wait has reported progress, the client gives up on it.
        let deadline = Instant::now() + Duration::from_secs(30);
        while recorder.progress.lock().unwrap().is_empty() {
            assert!(Instant::now() < deadline, "no progress while waiting");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let cancelled_at = Instant::now();
        handle
            .cancel(Some("the person moved on".into()))
            .await
            .unwrap();
        // The server ends the wait: its progress stops…
        tokio::time::sleep(Duration::from_secs(3)).await;
        let count = recorder.progress.lock().unwrap().len();
        tokio::time::sleep(Duration::from_secs(3)).await;
        assert_eq!(
            recorder.progress.lock().unwrap().len(),
            count,
            "the cancelled wait kept reporting"
        );
        // …and the run goes on to the end.
        let status = http_client::ok(&client, "get_run_status", json!({"run_id": run_id})).await;
        assert!(
            status["state"] == "running" || status["state"] == "succeeded",
            "{status:#} ({:?} after the cancellation)",
            cancelled_at.elapsed()
        );
        let result = http_client::ok(
            &client,
            "get_run_result",
            json!({"run_id": run_id, "wait_s": 120}),
        )
        .await;
        assert_eq!(result["state"], "succeeded", "{result:#}");
        client.cancel().await.unwrap();
    });
}

#[test]
fn hundreds_of_artifacts_are_listed_in_pages_each_once() {
    let root = TestRoot::new().unwrap();
    let manifest =
        scimcp_e2e::harness::fixture_adapter(&root.path("fixture adapter"), "max_artifacts = 512")
            .unwrap();
    let server = HttpServer::start(
        &root,
        &[
            "--listen",
            "127.0.0.1:0",
            "--adapter",
            manifest.to_str().unwrap(),
        ],
        &[],
    )
    .unwrap();
    let target = loopback(&server);
    runtime().block_on(async {
        let client = ().serve(http_client::transport(&target, None, &[])).await.unwrap();
        let started = http_client::ok(
            &client,
            "start_analysis",
            json!({"workflow": "misbehave", "dataset": "data/diabetes.csv",
                   "parameters": {"files": 250}}),
        )
        .await;
        let run_id = started["run_id"].as_str().unwrap();
        let result = http_client::ok(
            &client,
            "get_run_result",
            json!({"run_id": run_id, "wait_s": 120}),
        )
        .await;
        assert_eq!(result["state"], "succeeded", "{result:#}");
        let artifacts = result["result"]["artifacts"]["total"].as_u64().unwrap() as usize;
        assert!(artifacts > 250, "{artifacts}");

        let mut seen = std::collections::BTreeSet::new();
        let mut cursor: Option<String> = None;
        let mut pages = 0;
        loop {
            let params = cursor
                .take()
                .map(|c| PaginatedRequestParams::default().with_cursor(Some(c)));
            let page = client.list_resources(params).await.unwrap();
            pages += 1;
            assert!(page.resources.len() <= 100, "{}", page.resources.len());
            for r in &page.resources {
                assert!(seen.insert(r.uri.clone()), "{} listed twice", r.uri);
            }
            match page.next_cursor {
                Some(next) => cursor = Some(next),
                None => break,
            }
        }
        // The manifest, one schema, the run viewer, the result and every artifact.
        assert_eq!(seen.len(), 1 + 1 + 1 + 1 + artifacts);
        assert_eq!(pages, seen.len().div_ceil(100));
        let bad = client
            .list_resources(Some(
                PaginatedRequestParams::default().with_cursor(Some("garbage".into())),
            ))
            .await;
        assert!(bad.is_err());
        let one = format!("scimcp://runs/{run_id}/artifacts/file_0042.txt");
        let read = read(&client, &one).await.unwrap();
        assert_eq!(text(&read.contents[0]), ("42", Some("text/plain")));
        client.cancel().await.unwrap();
    });
}

/// A client of protocol 2026-07-28 (`server/discover`, no session) follows a run's result
/// with `subscriptions/listen`; URIs the server does not have are left out of the
/// acknowledgment.
#[test]
fn a_2026_client_listens_for_its_run_to_end() {
    use rmcp::model::{ProtocolVersion, ServerNotification, SubscriptionFilter};
    use rmcp::service::{ClientLifecycleMode, ClientServiceExt as _};
    let root = TestRoot::new().unwrap();
    let server = HttpServer::start(&root, &["--listen", "127.0.0.1:0"], &[]).unwrap();
    let target = loopback(&server);
    runtime().block_on(async {
        let client = ()
            .serve_with_lifecycle(
                http_client::transport(&target, None, &[]),
                ClientLifecycleMode::Discover {
                    preferred_versions: vec![ProtocolVersion::V_2026_07_28],
                },
            )
            .await
            .unwrap();
        let started = http_client::ok(
            &client,
            "start_analysis",
            json!({"workflow": "regression", "dataset": "data/diabetes.csv",
                   "parameters": {"target": "target", "sleep_s": 3}}),
        )
        .await;
        let run_id = started["run_id"].as_str().unwrap().to_string();
        let result_uri = format!("scimcp://runs/{run_id}/result");
        let mut subscription = client
            .listen(
                SubscriptionFilter::builder()
                    .resource_subscription(result_uri.clone())
                    .resource_subscription("test://watched-resource")
                    .build(),
            )
            .await
            .unwrap();
        assert_eq!(
            subscription.acknowledged().resource_subscriptions,
            Some(vec![result_uri.clone()])
        );
        let next = tokio::time::timeout(Duration::from_secs(120), subscription.next())
            .await
            .expect("no notification within 120 s")
            .unwrap();
        match next {
            Some(ServerNotification::ResourceUpdatedNotification(n)) => {
                assert_eq!(n.params.uri, result_uri);
            }
            other => panic!("{other:?}"),
        }
        let status = http_client::ok(&client, "get_run_status", json!({"run_id": run_id})).await;
        assert_eq!(status["state"], "succeeded", "{status:#}");
        drop(subscription);
        client.cancel().await.unwrap();
    });
}
