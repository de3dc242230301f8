//! A finished run's images and the 2026-07-28 cache hints, through the real binary over
//! loopback Streamable HTTP with rmcp's client: a refsci forecast's `get_run_result` carries
//! the plot as MCP image content whose bytes hash to the artifact's recorded SHA-256 (also in
//! the waiting form), a result with more images than one answer attaches names what it left
//! out and links it, and `tools/list` and `server/discover` carry a real `ttlMs` and
//! `cacheScope`.

use std::time::{Duration, Instant};

use base64ct::{Base64, Encoding as _};
use rmcp::model::{CacheScope, CallToolResult, ContentBlock, ProtocolVersion, RequestMetaObject};
use rmcp::service::{ClientLifecycleMode, ClientServiceExt as _};
use rmcp::{RoleClient, ServiceExt as _};
use scimcp_e2e::http_client::{self, HttpTarget};
use scimcp_e2e::http_server::{HttpServer, TestRoot};
use serde_json::{Value, json};

fn loopback(server: &HttpServer) -> HttpTarget {
    HttpTarget {
        connect: std::net::SocketAddr::from(([127, 0, 0, 1], server.port)),
        authority: format!("127.0.0.1:{}", server.port),
        tls: None,
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

/// The image blocks of an answer: (decoded bytes, mime type).
fn images(result: &CallToolResult) -> Vec<(Vec<u8>, String)> {
    result
        .content
        .iter()
        .filter_map(ContentBlock::as_image)
        .map(|i| {
            (
                Base64::decode_vec(&i.data).expect("image data is base64"),
                i.mime_type.clone(),
            )
        })
        .collect()
}

/// `get_run_result` with `wait_s` until the run has ended; the whole last answer.
async fn wait_result(
    client: &rmcp::Peer<RoleClient>,
    run_id: &str,
    wait_s: u32,
    within: Duration,
) -> CallToolResult {
    let deadline = Instant::now() + within;
    loop {
        let answer = http_client::call_tool(
            client,
            "get_run_result",
            json!({"run_id": run_id, "wait_s": wait_s}),
        )
        .await
        .unwrap();
        assert_eq!(answer.is_error, Some(false), "{answer:#?}");
        if answer.structured_content.as_ref().unwrap()["terminal"] == true {
            return answer;
        }
        assert!(
            Instant::now() < deadline,
            "run {run_id} did not end in {within:?}"
        );
        if wait_s == 0 {
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
    }
}

#[test]
fn a_forecast_result_carries_its_plot_as_image_content() {
    let root = TestRoot::new().unwrap();
    let server = HttpServer::start(&root, &["--listen", "127.0.0.1:0"], &[]).unwrap();
    let target = loopback(&server);
    runtime().block_on(async {
        let client = ().serve(http_client::transport(&target, None, &[])).await.unwrap();
        let started = http_client::ok(
            &client,
            "start_analysis",
            json!({"workflow": "forecast", "dataset": "builtin:airline",
                   "parameters": {"time_column": "period", "value_column": "passengers",
                                  "horizon": 12, "estimator": "NaiveForecaster",
                                  "params": {"sp": 12}}}),
        )
        .await;
        let run_id = started["run_id"].as_str().unwrap().to_string();
        // The waiting form: each call waits up to 30 s for the run to end.
        let answer = wait_result(&client, &run_id, 30, Duration::from_secs(600)).await;
        let structured = answer.structured_content.clone().unwrap();
        let result = &structured["result"];
        assert_eq!(result["state"], "succeeded", "{structured:#}");
        // The JSON answer is unchanged: its text block is the structured content.
        let first: Value =
            serde_json::from_str(&answer.content[0].as_text().unwrap().text).unwrap();
        assert_eq!(first, structured);
        let plot = result["artifacts"]["items"]
            .as_array()
            .unwrap()
            .iter()
            .find(|a| a["path"] == "plot.png")
            .expect("a plot artifact")
            .clone();
        let shown = images(&answer);
        assert_eq!(
            shown.len(),
            1,
            "one image (the plot): {:#?}",
            answer.content
        );
        let (bytes, mime) = &shown[0];
        assert_eq!(mime, "image/png");
        assert_eq!(bytes.len() as u64, plot["size_bytes"].as_u64().unwrap());
        assert_eq!(
            scimcp_core::hash::sha256_hex(bytes),
            plot["sha256"].as_str().unwrap(),
            "the image content is the recorded artifact, byte for byte"
        );
        let note = &answer.content[1].as_text().unwrap().text;
        assert!(
            note.contains(&format!(
                "Images of run {run_id}: 1 attached below (plot.png)"
            )),
            "{note}"
        );

        // The same from a call that does not wait, and none with a `not_modified` answer.
        let again = wait_result(&client, &run_id, 0, Duration::from_secs(10)).await;
        assert_eq!(images(&again), shown);
        let sha = again.structured_content.as_ref().unwrap()["result_sha256"].clone();
        let unchanged = http_client::call_tool(
            &client,
            "get_run_result",
            json!({"run_id": run_id, "wait_s": 0, "if_result_sha256": sha}),
        )
        .await
        .unwrap();
        assert_eq!(
            unchanged.structured_content.as_ref().unwrap()["not_modified"],
            true
        );
        assert!(images(&unchanged).is_empty());
        assert_eq!(unchanged.content.len(), 1);
        client.cancel().await.unwrap();
    });
}

/// A finished run with more images than one answer attaches: the first 8 are attached, the
/// rest linked to their artifact resources, and the text says what was left out and why. The
/// run is one the server itself ran (a forecast), its output directory then given extra PNG
/// files and its result.json re-recorded with them, as a CLI writing many diagrams leaves it.
#[test]
fn more_images_than_one_answer_holds_are_linked_and_named() {
    let root = TestRoot::new().unwrap();
    let server = HttpServer::start(&root, &["--listen", "127.0.0.1:0"], &[]).unwrap();
    let target = loopback(&server);
    runtime().block_on(async {
        let client = ().serve(http_client::transport(&target, None, &[])).await.unwrap();
        let started = http_client::ok(
            &client,
            "start_analysis",
            json!({"workflow": "forecast", "dataset": "builtin:airline",
                   "parameters": {"time_column": "period", "value_column": "passengers",
                                  "horizon": 6, "estimator": "NaiveForecaster",
                                  "params": {"sp": 12}}}),
        )
        .await;
        let run_id = started["run_id"].as_str().unwrap().to_string();
        let answer = wait_result(&client, &run_id, 30, Duration::from_secs(600)).await;
        assert_eq!(
            answer.structured_content.as_ref().unwrap()["result"]["state"],
            "succeeded"
        );
        let plot = &images(&answer)[0].0;
        // Twelve more diagrams (the plot's bytes with a distinct tail, so each is a real PNG
        // prefix with its own hash), recorded in result.json as undeclared files.
        let run_dir = root.runs_dir().join(&run_id);
        let result_path = run_dir.join("result.json");
        let mut result: Value =
            serde_json::from_str(&fs_err::read_to_string(&result_path).unwrap()).unwrap();
        let output = std::path::PathBuf::from(result["output_dir"].as_str().unwrap());
        for i in 0..12 {
            let mut bytes = plot.clone();
            bytes.extend_from_slice(format!("diagram {i}").as_bytes());
            let path = format!("diagram_{i:02}.png");
            fs_err::write(output.join(&path), &bytes).unwrap();
            result["artifacts"].as_array_mut().unwrap().push(json!({
                "path": path, "media_type": "image/png", "size_bytes": bytes.len(),
                "sha256": scimcp_core::hash::sha256_hex(&bytes)}));
        }
        fs_err::write(&result_path, serde_json::to_vec_pretty(&result).unwrap()).unwrap();

        let answer = wait_result(&client, &run_id, 0, Duration::from_secs(10)).await;
        let shown = images(&answer);
        assert_eq!(shown.len(), 8, "at most 8 images per answer");
        // The declared plot comes first.
        assert_eq!(&shown[0].0, plot);
        let links: Vec<_> = answer
            .content
            .iter()
            .filter_map(|c| match c {
                ContentBlock::ResourceLink(r) => Some(r.clone()),
                _ => None,
            })
            .collect();
        assert_eq!(links.len(), 5, "13 images, 8 attached, 5 linked");
        for link in &links {
            assert!(
                link.uri
                    .starts_with(&format!("scimcp://runs/{run_id}/artifacts/diagram_")),
                "{link:?}"
            );
            assert_eq!(link.mime_type.as_deref(), Some("image/png"));
        }
        let note = &answer.content[1].as_text().unwrap().text;
        assert!(note.contains("8 attached below"), "{note}");
        assert!(
            note.contains("over the 8 images one answer attaches"),
            "{note}"
        );
        // A linked image is a readable resource of the run.
        let read = client
            .read_resource(rmcp::model::ReadResourceRequestParams::new(
                links[0].uri.clone(),
            ))
            .await
            .unwrap();
        assert!(!read.contents.is_empty());
        client.cancel().await.unwrap();
    });
}

/// A 2026-07-28 client (`server/discover`, no session) reads real cache hints: one hour,
/// public, on both `tools/list` and `server/discover`.
#[test]
fn tools_list_and_discover_are_cacheable_for_an_hour() {
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
        let tools = client.list_tools(None).await.unwrap();
        assert_eq!(tools.tools.len(), scimcp_server::TOOL_NAMES.len());
        assert_eq!(tools.ttl_ms, Some(3_600_000));
        assert_eq!(tools.cache_scope, Some(CacheScope::Public));
        let discovered = client
            .discover(RequestMetaObject::with_client_context(
                ProtocolVersion::V_2026_07_28,
                rmcp::model::Implementation::new("scimcp-e2e", "1"),
                Default::default(),
            ))
            .await
            .unwrap();
        assert_eq!(discovered.ttl_ms, 3_600_000);
        assert_eq!(discovered.cache_scope, CacheScope::Public);
        assert!(
            discovered
                .instructions
                .as_deref()
                .is_some_and(|i| i.contains("get_run_result")),
            "{discovered:?}"
        );
        assert!(discovered.capabilities.tools.is_some());
        assert!(
            discovered
                .supported_versions
                .contains(&ProtocolVersion::V_2026_07_28)
        );
        client.cancel().await.unwrap();
    });
}
