//! The 2025-11-25 tasks layer (tasks/wire.rs) on HTTP: the request body is rewritten before
//! rmcp reads it, and the answers the layer watches for (`initialize`, `tools/list`) are
//! rewritten in the response, whether rmcp sent JSON or an SSE stream. Only those answers
//! are read whole here; each is one response on a stream that ends with it.

use http_body_util::{BodyExt, Full};
use hyper::Response;
use hyper::body::Bytes;
use serde_json::Value;

use super::body::HttpBody;
use crate::tasks::wire::Wire;

/// The request body rmcp reads.
pub fn inbound(wire: Option<&Wire>, body: Bytes) -> Bytes {
    let Some(wire) = wire else {
        return body;
    };
    match serde_json::from_slice::<Value>(&body)
        .ok()
        .and_then(|message| wire.inbound(&message))
    {
        Some(rewritten) => Bytes::from(rewritten.to_string()),
        None => body,
    }
}

/// The response the client reads.
pub async fn outbound(wire: Option<&Wire>, response: Response<HttpBody>) -> Response<HttpBody> {
    let Some(wire) = wire.filter(|w| w.watching()) else {
        return response;
    };
    let (mut parts, body) = response.into_parts();
    let Ok(collected) = body.collect().await;
    let bytes = collected.to_bytes();
    let is_sse = parts
        .headers
        .get(hyper::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.trim_start().starts_with("text/event-stream"));
    let rewritten = if is_sse {
        rewrite_sse(wire, &bytes)
    } else {
        serde_json::from_slice::<Value>(&bytes)
            .ok()
            .and_then(|message| wire.outbound(&message))
            .map(|m| m.to_string().into_bytes())
    };
    let bytes = rewritten.map(Bytes::from).unwrap_or(bytes);
    parts.headers.remove(hyper::header::CONTENT_LENGTH);
    Response::from_parts(parts, Full::new(bytes).boxed())
}

/// Each SSE `data:` line that holds a message the layer rewrites, replaced; `None` when
/// none changed.
fn rewrite_sse(wire: &Wire, bytes: &[u8]) -> Option<Vec<u8>> {
    let text = std::str::from_utf8(bytes).ok()?;
    let mut changed = false;
    let mut out = String::with_capacity(text.len() + 256);
    for line in text.split_inclusive('\n') {
        let rewritten = line
            .strip_prefix("data:")
            .and_then(|data| serde_json::from_str::<Value>(data.trim()).ok())
            .and_then(|message| wire.outbound(&message));
        match rewritten {
            Some(message) => {
                changed = true;
                out.push_str("data: ");
                out.push_str(&message.to_string());
                out.push('\n');
            }
            None => out.push_str(line),
        }
    }
    changed.then(|| out.into_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_sse_answer_to_a_2025_11_25_initialize_gains_the_tasks_capability() {
        let wire = Wire::for_request("2025-11-25").unwrap();
        let body = inbound(
            Some(&wire),
            Bytes::from(
                json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {}})
                    .to_string(),
            ),
        );
        assert!(body.starts_with(b"{"));
        let answer = json!({"jsonrpc": "2.0", "id": 0, "result": {
            "protocolVersion": "2025-11-25", "capabilities": {}}});
        let sse = format!("id: 0\nretry: 3000\ndata: \n\ndata: {answer}\nid: 1\n\n");
        let out = String::from_utf8(rewrite_sse(&wire, sse.as_bytes()).unwrap()).unwrap();
        assert!(
            out.starts_with("id: 0\nretry: 3000\ndata: \n\ndata: {"),
            "{out}"
        );
        assert!(out.ends_with("\nid: 1\n\n"), "{out}");
        let data = out.lines().nth(4).unwrap().strip_prefix("data: ").unwrap();
        let message: Value = serde_json::from_str(data).unwrap();
        assert_eq!(
            message["result"]["capabilities"]["tasks"]["list"],
            json!({})
        );
    }
}
