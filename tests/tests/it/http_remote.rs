//! A remote server: `scimcp serve --transport http` bound to every address of this machine
//! (`0.0.0.0`) and reached through one of its non-loopback addresses — a network interface,
//! never the network beyond it. Bearer tokens made with `scimcp token add`, TLS with the test
//! certificate, and a real MCP client (rmcp's Streamable HTTP client) that initializes, lists
//! the tools and runs a refsci analysis through plan-then-confirm to the end. Refusals: no
//! token, a wrong or revoked token (401, no detail), another token's session, a foreign
//! `Origin` or `Host` (403), too many requests (429), and every unsafe start-up setting.

use std::time::Duration;

use hyper::Method;
use rmcp::ServiceExt as _;
use scimcp_e2e::http_client::{self, HttpTarget, POST_HEADERS, initialize_body, raw};
use scimcp_e2e::http_server::{HttpServer, TestRoot, non_loopback_ipv4, socket};
use serde_json::{Value, json};

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

fn this_machine() -> std::net::Ipv4Addr {
    non_loopback_ipv4().expect(
        "this machine has no non-loopback IPv4 address; the test needs one network interface \
         (it never uses the network beyond it)",
    )
}

fn analysis() -> Value {
    json!({"workflow": "regression", "dataset": "data/diabetes.csv", "parameters": {"target": "target"}})
}

fn with(mut base: Value, extra: Value) -> Value {
    for (k, v) in extra.as_object().unwrap() {
        base[k] = v.clone();
    }
    base
}

fn bearer(secret: &str) -> String {
    format!("Bearer {secret}")
}

#[test]
fn a_token_holder_runs_an_analysis_on_a_network_address_over_tls() {
    let root = TestRoot::new().unwrap();
    let alice = root.add_token("alice").unwrap();
    let bob = root.add_token("bob").unwrap();
    let (cert, key, ca) = root.tls_files().unwrap();
    let server = HttpServer::start(
        &root,
        &[
            "--listen",
            "0.0.0.0:0",
            "--tls-cert",
            cert.to_str().unwrap(),
            "--tls-key",
            key.to_str().unwrap(),
            "--allowed-host",
            "scimcp.test",
        ],
        &[],
    )
    .unwrap();
    assert_eq!(server.scheme, "https", "{}", server.log());
    let log = server.log();
    assert!(log.contains("plan-then-confirm: required"), "{log}");
    assert!(
        !log.contains(&alice) && !log.contains(&bob),
        "a secret reached the log"
    );
    let ip = this_machine();
    let target = HttpTarget {
        connect: socket(ip, server.port),
        authority: format!("scimcp.test:{}", server.port),
        tls: Some(http_client::tls_trusting(&ca).unwrap()),
    };
    runtime().block_on(async {
        // Load balancers: no token, no detail.
        let health = raw(&target, Method::GET, "/health", &[], "").await.unwrap();
        assert_eq!(health.status, 200, "{health:?}");
        let health: Value = serde_json::from_str(&health.body).unwrap();
        assert_eq!(health["status"], "ok");
        assert!(health["version"].is_string());

        // No token, a wrong token, a malformed header: 401 and nothing else.
        let wrong =
            bearer("scimcp_0000000000000000000000000000000000000000000000000000000000000000");
        for auth in [
            None,
            Some(wrong.as_str()),
            Some("Basic YWxpY2U6eA=="),
            Some("Bearer "),
        ] {
            let mut headers = POST_HEADERS.to_vec();
            if let Some(auth) = auth {
                headers.push(("authorization", auth));
            }
            let r = raw(&target, Method::POST, "/mcp", &headers, &initialize_body())
                .await
                .unwrap();
            assert_eq!(r.status, 401, "{auth:?}: {r:?}");
            assert_eq!(r.body, "Unauthorized\n", "{auth:?}");
            assert_eq!(r.headers["www-authenticate"], "Bearer realm=\"scimcp\"");
            assert!(r.headers.get("mcp-session-id").is_none());
        }

        // A valid token from a web page of another origin, or naming another host: 403.
        let alice_auth = bearer(&alice);
        let mut foreign = POST_HEADERS.to_vec();
        foreign.push(("authorization", &alice_auth));
        foreign.push(("origin", "https://attacker.example"));
        let r = raw(&target, Method::POST, "/mcp", &foreign, &initialize_body())
            .await
            .unwrap();
        assert_eq!(r.status, 403, "{r:?}");
        let rebound = HttpTarget {
            authority: format!("attacker.example:{}", server.port),
            ..target.clone()
        };
        let mut headers = POST_HEADERS.to_vec();
        headers.push(("authorization", &alice_auth));
        // (TLS names the certificate's host; the Host header is what is checked.)
        let request = rebound_request(&rebound, &headers);
        let r = target.send(request).await.unwrap();
        assert_eq!(r.status(), 403);

        // The real MCP client with alice's token.
        let client =
            ().serve(http_client::transport(&target, Some(&alice), &[]))
                .await
                .expect("initialize over TLS with a token");
        let info = client.peer_info().unwrap();
        assert_eq!(info.server_info.as_ref().unwrap().name, "scimcp");
        assert!(
            info.instructions
                .as_deref()
                .unwrap_or("")
                .contains("confirm: true"),
            "the instructions must ask for the person's go-ahead"
        );
        let tools = client.list_all_tools().await.unwrap();
        let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
        assert_eq!(names, scimcp_server::TOOL_NAMES);

        // Plan-then-confirm is the default on a network address: nothing without confirm.
        let preview = http_client::ok(&client, "start_analysis", analysis()).await;
        assert_eq!(preview["started"], false, "{preview:#}");
        assert_eq!(preview["preview"]["confirmation_required"], true);
        assert_eq!(preview["preview"]["started_by"], "alice");
        assert!(root.run_dirs().is_empty(), "a preview created a run");
        let refused = http_client::err(
            &client,
            "start_analysis",
            with(analysis(), json!({"confirm": true})),
        )
        .await;
        assert_eq!(refused["code"], "confirmation_required", "{refused:#}");
        assert!(root.run_dirs().is_empty());
        let started = http_client::ok(
            &client,
            "start_analysis",
            with(
                analysis(),
                json!({"confirm": true, "validation_id": preview["validation_id"]}),
            ),
        )
        .await;
        assert_eq!(started["started"], true, "{started:#}");
        assert_eq!(started["plan_sha256"], preview["plan_sha256"]);
        let run_id = started["run_id"].as_str().unwrap().to_string();
        let result = http_client::ok(
            &client,
            "get_run_result",
            json!({"run_id": run_id, "wait_s": 180}),
        )
        .await;
        assert_eq!(result["state"], "succeeded", "{result:#}");
        assert_eq!(result["result"]["plan_sha256"], preview["plan_sha256"]);
        let recorded: Value = serde_json::from_slice(
            &fs_err::read(root.runs_dir().join(&run_id).join("request.json")).unwrap(),
        )
        .unwrap();
        assert_eq!(recorded["started_by"], "alice", "{recorded:#}");
        assert_eq!(recorded["confirmed"], true);

        // A session belongs to the token that opened it.
        let mut alice_headers = POST_HEADERS.to_vec();
        alice_headers.push(("authorization", &alice_auth));
        let opened = raw(
            &target,
            Method::POST,
            "/mcp",
            &alice_headers,
            &initialize_body(),
        )
        .await
        .unwrap();
        assert_eq!(opened.status, 200, "{opened:?}");
        let session = opened.headers["mcp-session-id"]
            .to_str()
            .unwrap()
            .to_string();
        let bob_auth = bearer(&bob);
        let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}).to_string();
        let mut stolen = POST_HEADERS.to_vec();
        stolen.push(("authorization", &bob_auth));
        stolen.push(("mcp-session-id", &session));
        let r = raw(&target, Method::POST, "/mcp", &stolen, &list)
            .await
            .unwrap();
        assert_eq!(r.status, 403, "{r:?}");

        // Bob works until his token is revoked; then 401 at once, without a restart, and
        // alice's client goes on.
        let mut bob_headers = POST_HEADERS.to_vec();
        bob_headers.push(("authorization", &bob_auth));
        let r = raw(
            &target,
            Method::POST,
            "/mcp",
            &bob_headers,
            &initialize_body(),
        )
        .await
        .unwrap();
        assert_eq!(r.status, 200, "{r:?}");
        root.revoke_token("bob").unwrap();
        let r = raw(
            &target,
            Method::POST,
            "/mcp",
            &bob_headers,
            &initialize_body(),
        )
        .await
        .unwrap();
        assert_eq!(r.status, 401, "{r:?}");
        assert_eq!(r.body, "Unauthorized\n");
        let runs = http_client::ok(&client, "list_runs", json!({})).await;
        assert_eq!(runs["runs"]["total"], 1, "{runs:#}");
        client.cancel().await.unwrap();
    });
    let log = server.log();
    assert!(
        !log.contains(&alice) && !log.contains(&bob),
        "a secret reached the log"
    );
    assert!(log.contains("refused a request from"), "{log}");
}

/// A request whose `Host` names `rebound`'s authority.
fn rebound_request(
    rebound: &HttpTarget,
    headers: &[(&str, &str)],
) -> hyper::Request<http_body_util::Full<hyper::body::Bytes>> {
    let mut builder = rebound.request(Method::POST, "/mcp");
    for (k, v) in headers {
        builder = builder.header(*k, *v);
    }
    builder
        .body(http_body_util::Full::new(initialize_body().into()))
        .unwrap()
}

/// Behind a TLS-terminating proxy (`--allow-plain-http`), with the `SCIMCP_TOKEN` token:
/// the loopback address of a network-bound server needs the token too, and each token is
/// held to its request rate and to its requests in flight (429 with `Retry-After`).
#[test]
fn behind_a_proxy_the_env_token_works_within_its_limits() {
    let root = TestRoot::new().unwrap();
    let secret = "lab-proxy-secret-0123456789abcdefghijklmnop";
    let server = HttpServer::start(
        &root,
        &[
            "--listen",
            "0.0.0.0:0",
            "--allow-plain-http",
            "--token-rate",
            "2",
            "--token-concurrency",
            "2",
        ],
        &[("SCIMCP_TOKEN", secret)],
    )
    .unwrap();
    let target = HttpTarget {
        connect: socket(this_machine(), server.port),
        authority: format!("{}:{}", this_machine(), server.port),
        tls: None,
    };
    let local = HttpTarget {
        connect: socket(std::net::Ipv4Addr::LOCALHOST, server.port),
        authority: format!("127.0.0.1:{}", server.port),
        tls: None,
    };
    let auth = bearer(secret);
    let mut headers = POST_HEADERS.to_vec();
    headers.push(("authorization", &auth));
    runtime().block_on(async {
        // On a network-bound server, the loopback address needs the token as well.
        let r = raw(
            &local,
            Method::POST,
            "/mcp",
            POST_HEADERS,
            &initialize_body(),
        )
        .await
        .unwrap();
        assert_eq!(r.status, 401, "{r:?}");

        let opened = raw(&target, Method::POST, "/mcp", &headers, &initialize_body())
            .await
            .unwrap();
        assert_eq!(opened.status, 200, "{opened:?}");
        let session = opened.headers["mcp-session-id"]
            .to_str()
            .unwrap()
            .to_string();
        let initialized =
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string();
        let mut in_session = headers.clone();
        in_session.push(("mcp-session-id", &session));
        let r = raw(&target, Method::POST, "/mcp", &in_session, &initialized)
            .await
            .unwrap();
        assert_eq!(r.status, 202, "{r:?}");

        // Two streams held open use the token's two slots; a third request waits its turn.
        let mut streams = Vec::new();
        for _ in 0..2 {
            let mut builder = target
                .request(Method::GET, "/mcp")
                .header("accept", "text/event-stream")
                .header("authorization", &auth)
                .header("mcp-session-id", &session);
            builder = builder.header("mcp-protocol-version", "2025-06-18");
            let response = target
                .send(
                    builder
                        .body(http_body_util::Full::new(Default::default()))
                        .unwrap(),
                )
                .await
                .unwrap();
            streams.push(response);
        }
        let statuses: Vec<u16> = streams.iter().map(|s| s.status().as_u16()).collect();
        let third = raw(&target, Method::POST, "/mcp", &headers, &initialize_body())
            .await
            .unwrap();
        assert_eq!(third.status, 429, "{statuses:?} {third:?}");
        assert_eq!(third.headers["retry-after"], "1");
        assert!(third.body.contains("in flight"), "{third:?}");
        drop(streams);

        // Rate: 2 a second with bursts of 10. Far more than that at once: some 429s, each
        // with a Retry-After of at least a second.
        let mut refused = 0;
        for _ in 0..20 {
            let r = raw(&target, Method::POST, "/mcp", &headers, &initialize_body())
                .await
                .unwrap();
            match r.status {
                200 => {}
                429 => {
                    refused += 1;
                    let after: u64 = r.headers["retry-after"].to_str().unwrap().parse().unwrap();
                    assert!(after >= 1, "{r:?}");
                }
                other => panic!("unexpected {other}: {r:?}"),
            }
        }
        assert!(
            refused >= 5,
            "only {refused} of 20 requests over the rate were refused"
        );
        // After a pause, the token works again: a real client, recorded as `env`.
        tokio::time::sleep(Duration::from_secs(3)).await;
        let client = ().serve(http_client::transport(&target, Some(secret), &[])).await.unwrap();
        let v = http_client::ok(&client, "validate_analysis", analysis()).await;
        assert_eq!(v["ready"], true, "{v:#}");
        client.cancel().await.unwrap();
    });
}

/// Every unsafe or broken setting stops the server before it opens any state, saying what
/// to do; stdout stays empty.
#[test]
fn unsafe_settings_are_refused_before_anything_starts() {
    let root = TestRoot::new().unwrap();
    let run = |args: &[&str], env: &[(&str, &str)]| {
        let mut command = std::process::Command::new(scimcp_e2e::sibling_binary("scimcp").unwrap());
        command
            .args(["serve", "--transport", "http"])
            .args(args)
            .env("SCIMCP_HOME", &root.home)
            .env_remove("SCIMCP_TOKEN")
            .current_dir(&root.cwd)
            .stdin(std::process::Stdio::null());
        for (k, v) in env {
            command.env(k, v);
        }
        let out = command.output().unwrap();
        assert_eq!(out.status.code(), Some(1), "{args:?}: {out:?}");
        assert!(out.stdout.is_empty(), "{args:?}: stdout must stay empty");
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let e = run(&["--listen", "0.0.0.0:0"], &[]);
    assert!(
        e.contains("--tls-cert") && e.contains("--allow-plain-http"),
        "{e}"
    );
    let e = run(&["--listen", "0.0.0.0:0", "--allow-plain-http"], &[]);
    assert!(
        e.contains("scimcp token add") && e.contains("SCIMCP_TOKEN"),
        "{e}"
    );
    let e = run(&["--listen", "127.0.0.1:0", "--require-token"], &[]);
    assert!(e.contains("scimcp token add"), "{e}");
    let e = run(
        &["--listen", "0.0.0.0:0", "--allow-plain-http"],
        &[("SCIMCP_TOKEN", "short")],
    );
    assert!(e.contains("at least 32"), "{e}");
    let missing = root.path("missing.pem");
    let e = run(
        &[
            "--listen",
            "0.0.0.0:0",
            "--tls-cert",
            missing.to_str().unwrap(),
            "--tls-key",
            missing.to_str().unwrap(),
        ],
        &[],
    );
    assert!(e.contains("missing.pem"), "{e}");
    root.add_token("alice").unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let file = root.home.join("tokens.toml");
        fs_err::set_permissions(&file, std::fs::Permissions::from_mode(0o666)).unwrap();
        let e = run(&["--listen", "0.0.0.0:0", "--allow-plain-http"], &[]);
        assert!(e.contains("chmod 600"), "{e}");
        fs_err::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
    }
    // Nothing was opened: no runs directory.
    assert!(!root.runs_dir().exists());
}

/// `scimcp token`: add prints the secret once (stdout only), the file keeps only hashes
/// (0600), list shows names and fingerprints, revoke removes, bad names are refused.
#[test]
fn token_commands_keep_hashes_only() {
    let root = TestRoot::new().unwrap();
    let secret = root.add_token("alice").unwrap();
    assert!(
        secret.starts_with("scimcp_") && secret.len() == 71,
        "{secret}"
    );
    let file = root.home.join("tokens.toml");
    let text = fs_err::read_to_string(&file).unwrap();
    assert!(
        !text.contains(&secret["scimcp_".len()..]),
        "the secret was stored"
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = fs_err::metadata(&file).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
    }
    let list = root.scimcp(&["token", "list", "--json"]).unwrap();
    assert!(list.status.success());
    let list: Value = serde_json::from_slice(&list.stdout).unwrap();
    assert_eq!(list["tokens"][0]["name"], "alice");
    assert!(!list.to_string().contains(&secret));
    let again = root.scimcp(&["token", "add", "alice"]).unwrap();
    assert_eq!(again.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&again.stderr).contains("already exists"));
    let bad = root.scimcp(&["token", "add", "loopback"]).unwrap();
    assert_eq!(bad.status.code(), Some(1));
    root.revoke_token("alice").unwrap();
    let gone = root.scimcp(&["token", "revoke", "alice"]).unwrap();
    assert_eq!(gone.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&gone.stderr).contains("no token named"));
}
