//! The checks of a remote server (`scimcp-setup install --remote URL`, or `scimcp-doctor
//! --remote NAME|URL`):
//!
//! - `client.<id>`, once per client the server is registered in: the file holds the entry
//!   exactly as scimcp writes it for that client (the URL, the token's reference);
//! - `server.handshake`: a real MCP `initialize`, `tools/list` and `get_capabilities` over
//!   Streamable HTTP, with the token from the environment variable the registration names —
//!   the variable the clients read. Every way it can fail (the variable unset, the host
//!   unknown or unreachable, the certificate untrusted, for another name or expired, the
//!   token refused, the host not allowed) is its own finding with its own remedy. The SSE
//!   answers are read as a strict client reads them (Gemini CLI): an event whose data is not
//!   JSON fails the check.

use std::time::Instant;

use scimcp_setup_model::clients::{Client, ClientContext};
use scimcp_setup_model::remote_server::{RemoteServer, RemoteUrl};

use crate::check::{CheckResult, shell_quote};
use crate::context::{Context, RemoteTarget};
use scimcp_client::http::{Endpoint, Failure, Session, Tls};

/// `client.<id>` for a remote server's entry.
pub fn client(
    ctx: &Context,
    id: &str,
    target: &RemoteTarget,
    client: &'static dyn Client,
) -> CheckResult {
    let Some(name) = &target.name else {
        return CheckResult::skipped(id, "not registered here");
    };
    let cx = ClientContext {
        host: &ctx.host,
        layout: &ctx.layout,
        project: None,
    };
    let server = RemoteServer {
        name: name.clone(),
        url: target.url.clone(),
        token_env: target.token_env.clone(),
    };
    let status = scimcp_setup_model::register::remote_status(cx, &server, client);
    let repair = format!(
        "scimcp-setup repair --remote {} --client {}",
        shell_quote(name),
        client.id()
    );
    let place = status
        .path
        .as_ref()
        .map_or_else(|| client.name().to_string(), |p| p.display().to_string());
    if let Some(problem) = &status.problem {
        return CheckResult::fail(id, format!("{place}: {problem}"))
            .remedy(repair)
            .fixable();
    }
    if status.method == "manual" || status.method == "project" {
        return CheckResult::skipped(
            id,
            format!("{} takes this server only by hand", client.name()),
        );
    }
    if !status.registered {
        return CheckResult::fail(
            id,
            format!("{place} has no `{name}` entry, but scimcp registered it there"),
        )
        .remedy(repair)
        .fixable();
    }
    let token = match &target.token_env {
        Some(var) => format!("token from ${var}"),
        None => "no token".into(),
    };
    CheckResult::ok(
        id,
        format!("{place} has `{name}` for {} ({token})", target.url),
    )
}

/// `server.handshake` over Streamable HTTP.
pub fn handshake(ctx: &Context, id: &str, target: &RemoteTarget) -> CheckResult {
    let url = &target.url;
    let parsed = RemoteUrl::parse(url).ok();
    let host = parsed
        .as_ref()
        .map_or_else(|| url.clone(), |u| u.host.clone());
    let authority = parsed
        .as_ref()
        .map_or_else(|| url.clone(), RemoteUrl::authority);
    let token = match &target.token_env {
        Some(var) => match ctx.host.var(var).map(|t| t.trim().to_string()) {
            Some(t) if !t.is_empty() => Some(t),
            _ => {
                return CheckResult::fail(
                    id,
                    format!(
                        "the environment variable {var} is not set here, so no token can be \
                         sent to {url} (your clients read it from there too)"
                    ),
                )
                .remedy(format!(
                    "set {var} to your token — the secret `scimcp token add NAME` printed on \
                     the server (e.g. `export {var}=<token>`) — then run scimcp-doctor again"
                ));
            }
        },
        None => None,
    };
    let ca = match &ctx.options.ca_cert {
        None => None,
        Some(path) => {
            // Either failure is only shown, in the finding below.
            let read = fs_err::read(path)
                .map_err(|e| e.to_string())
                .and_then(|pem| scimcp_client::http::certificates(&pem).map_err(|e| e.to_string()));
            match read {
                Ok(certs) => Some(certs),
                Err(e) => {
                    return CheckResult::fail(id, format!("--ca-cert {}: {e}", path.display()))
                        .remedy(
                            "give --ca-cert the PEM file of the certificate authority that signed \
                         the server's certificate (`-----BEGIN CERTIFICATE-----`)",
                        );
                }
            }
        }
    };
    let limit = ctx.options.handshake_timeout;
    let endpoint = Endpoint {
        url: url.clone(),
        token,
        ca,
        timeout: limit,
        loopback: parsed.as_ref().is_some_and(RemoteUrl::is_loopback),
    };
    let start = Instant::now();
    let outcome = (|| {
        let (mut session, info) = Session::open(endpoint)?;
        let result = (|| {
            let names = session.list_tools()?;
            if !names.iter().any(|n| n == "get_capabilities") {
                return Err(Failure::Other(format!(
                    "tools/list has no get_capabilities (it lists {}): this is not a scimcp \
                     server",
                    names.join(", ")
                )));
            }
            session.call("get_capabilities", serde_json::json!({}))?;
            Ok(names.len())
        })();
        session.close();
        result.map(|n| (info, n))
    })();
    let took = start.elapsed().as_millis();
    let via = match &target.token_env {
        Some(var) => format!("token from ${var}"),
        None => "no token".into(),
    };
    match outcome {
        Ok((info, tools)) => CheckResult::ok(
            id,
            format!(
                "{} {} at {url} ({via}): initialize, tools/list ({tools} tools) and \
                 get_capabilities in {took} ms",
                info.name, info.version
            ),
        ),
        Err(failure) => {
            let (finding, remedy) = explain(&failure, target, &host, &authority, limit.as_secs());
            CheckResult::fail(id, format!("{url}: {finding}"))
                .remedy(remedy)
                .details(vec![format!("{failure} (after {took} ms)")])
        }
    }
}

/// The finding and the remedy for a failed handshake.
fn explain(
    failure: &Failure,
    target: &RemoteTarget,
    host: &str,
    authority: &str,
    limit_s: u64,
) -> (String, String) {
    let register = |flags: &str| match &target.name {
        Some(name) => format!(
            "scimcp-setup uninstall --remote {name}, then scimcp-setup install --remote URL {flags}"
        ),
        None => format!("scimcp-setup install --remote URL {flags}"),
    };
    match failure {
        Failure::Refused(_) => (
            format!("nothing accepts connections at {authority}"),
            format!(
                "make sure the server runs on {host} (`scimcp serve --transport http --listen \
                 ADDRESS:PORT …`) and that no firewall blocks the port; check the address with \
                 the server's administrator"
            ),
        ),
        Failure::UnknownHost => (
            format!("the host name {host} does not resolve"),
            format!(
                "check the spelling of {host}; a lab's internal name may need the lab's network \
                 or its VPN"
            ),
        ),
        Failure::TimedOut(_) => (
            format!("no answer from {authority} within {limit_s} s"),
            format!(
                "check that this computer reaches {host} (the lab's network or VPN, a firewall); \
                 for a slow link raise --handshake-timeout"
            ),
        ),
        Failure::Tls(Tls::UnknownIssuer, _) => (
            "the server's TLS certificate is not signed by an authority this computer trusts"
                .into(),
            "if the lab has its own certificate authority, run scimcp-doctor --ca-cert \
             LAB-CA.pem, and make your clients trust it too (Node-based clients such as Claude \
             Code: NODE_EXTRA_CA_CERTS=LAB-CA.pem; or the system's certificate store); \
             otherwise the server needs a certificate from a public authority"
                .into(),
        ),
        Failure::Tls(Tls::WrongName, _) => (
            format!("the server's TLS certificate is not valid for the name {host}"),
            format!(
                "use the name the certificate was issued for in the URL (`scimcp-setup install \
                 --remote https://THAT-NAME:PORT/mcp`), or have the certificate reissued to \
                 include {host}"
            ),
        ),
        Failure::Tls(Tls::Expired, _) => (
            "the server's TLS certificate has expired (or is not valid yet)".into(),
            "the server's administrator renews the certificate (`scimcp serve --tls-cert …`); \
             also check this computer's clock"
                .into(),
        ),
        Failure::Tls(Tls::Plaintext, _) => (
            format!("{authority} does not speak TLS"),
            "the server serves plain HTTP there: start it with --tls-cert/--tls-key or behind a \
             TLS proxy (docs/REMOTE.md); http:// URLs are accepted only for this computer"
                .into(),
        ),
        Failure::Tls(Tls::Other, _) => (
            "the TLS handshake failed".into(),
            "check the server's TLS set-up (`scimcp serve --tls-cert … --tls-key …`, or the \
             proxy in front of it)"
                .into(),
        ),
        Failure::Status { status: 401, .. } => match &target.token_env {
            Some(var) => (
                format!("the server refused the token in ${var} (401: unknown or revoked)"),
                format!(
                    "ask the server's administrator for a token (`scimcp token add YOUR-NAME` \
                     on the server; `scimcp token list` shows the valid names) and set {var} \
                     to it"
                ),
            ),
            None => (
                "the server requires a token (401) and this registration sends none".into(),
                register("--token-env SCIMCP_TOKEN (without --no-token), and set SCIMCP_TOKEN"),
            ),
        },
        Failure::Status { status: 403, .. } => (
            format!("the server refused the request (403): it does not accept the name {host}"),
            format!(
                "the server's administrator adds `--allowed-host {host}` to `scimcp serve` (or \
                 you use a name it allows)"
            ),
        ),
        Failure::Status { status: 404, .. } => (
            "nothing serves MCP at this path (404)".into(),
            "check the URL's path: scimcp serves /mcp (behind a proxy, the path the proxy \
             forwards to /mcp)"
                .into(),
        ),
        Failure::Status {
            status: 429,
            retry_after,
            ..
        } => (
            format!(
                "the server is limiting this token's requests (429{})",
                retry_after
                    .as_ref()
                    .map_or_else(String::new, |s| format!(", retry after {s} s"))
            ),
            "wait, then run scimcp-doctor again; the limits are `scimcp serve --token-rate` and \
             `--token-concurrency`"
                .into(),
        ),
        Failure::Status { status, .. } => (
            format!("the server answered HTTP {status}"),
            "look at the server's log (`scimcp serve` writes one line per refused request)".into(),
        ),
        Failure::NotJsonEvent { during, data } => (
            if data.is_empty() {
                format!(
                    "the server's answer to {during} starts with an empty SSE event (a priming \
                     event) although this client speaks protocol 2025-06-18; clients that parse \
                     every event as JSON, such as Gemini CLI, fail on it and show no tool"
                )
            } else {
                format!(
                    "the server's answer to {during} has an SSE event whose data is not JSON; \
                     clients that parse every event as JSON, such as Gemini CLI, fail on it"
                )
            },
            "update scimcp on the server (`scimcp --version`): current versions send priming \
             events only to clients on protocol 2025-11-25 or later; if a proxy sits in front \
             of it, make sure the proxy passes the event stream unchanged"
                .into(),
        ),
        Failure::Rpc { during, .. } => (
            format!("{during} failed on the server"),
            "look at the server's log; client and server may be versions that do not fit \
             (`scimcp --version` on both)"
                .into(),
        ),
        Failure::Other(_) => (
            "the server did not complete the MCP handshake".into(),
            format!(
                "check that the URL is a scimcp server: `curl {}` answers {{\"status\":\"ok\",…}}",
                health_url(&target.url)
            ),
        ),
    }
}

/// The server's `/health` beside its `/mcp`.
fn health_url(url: &str) -> String {
    match url.strip_suffix("/mcp") {
        Some(base) => format!("{base}/health"),
        None => url.to_string(),
    }
}
