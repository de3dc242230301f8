//! SSE priming events only for the protocol versions that define them.
//!
//! rmcp starts every SSE answer with a priming event (`id: 0`, `retry: 3000`, `data: ` with
//! nothing after it, SEP-1699) so a client can resume the stream. Protocol 2025-11-25 defines
//! it; clients of earlier versions may treat every event's data as a JSON-RPC message, and
//! some do (Gemini CLI: `SyntaxError: Unexpected end of JSON input`, then the connection is
//! dropped). rmcp's `sse_retry` is one setting for every session, so the transport filters
//! the answer instead: for a client below [`PRIMING_SINCE`] every event whose data is empty
//! is left out (the official TypeScript, Python and Kotlin servers do the same).

use std::pin::Pin;
use std::task::{Context, Poll};

use hyper::body::{Body, Bytes, Frame};

/// The first protocol version whose clients expect priming events.
pub const PRIMING_SINCE: &str = "2025-11-25";

/// The version a request without `MCP-Protocol-Version` speaks (the transport's rule).
const ASSUMED_VERSION: &str = "2025-03-26";

/// The protocol version of a request: the `protocolVersion` an `initialize` asks for, else
/// the `MCP-Protocol-Version` header, else the version the transport assumes.
pub fn request_version(headers: &hyper::HeaderMap, body: &[u8]) -> String {
    if let Ok(message) = serde_json::from_slice::<serde_json::Value>(body)
        && message["method"] == "initialize"
        && let Some(version) = message["params"]["protocolVersion"].as_str()
    {
        return version.to_string();
    }
    headers
        .get("mcp-protocol-version")
        .and_then(|v| v.to_str().ok())
        .map_or_else(|| ASSUMED_VERSION.to_string(), |v| v.trim().to_string())
}

/// Whether a client on `version` is sent priming events. Versions are dates (`YYYY-MM-DD`),
/// which order as text; anything else is treated as an old client.
pub fn wants_priming(version: &str) -> bool {
    let is_date = version.len() == 10
        && version.bytes().enumerate().all(|(i, b)| {
            if i == 4 || i == 7 {
                b == b'-'
            } else {
                b.is_ascii_digit()
            }
        });
    is_date && version >= PRIMING_SINCE
}

/// An SSE body without the events whose data is empty (priming events and bare retry hints);
/// comments (keep-alives) and every JSON-RPC message pass unchanged.
pub struct WithoutEmptyEvents<B> {
    inner: B,
    pending: Vec<u8>,
    ended: bool,
}

impl<B> WithoutEmptyEvents<B> {
    pub fn new(inner: B) -> WithoutEmptyEvents<B> {
        WithoutEmptyEvents {
            inner,
            pending: Vec::new(),
            ended: false,
        }
    }
}

/// The length of the first complete event in `buf` (through its blank line), if any.
fn event_end(buf: &[u8]) -> Option<usize> {
    let mut line_start = 0;
    let mut i = 0;
    while i < buf.len() {
        let end = match buf[i] {
            b'\n' => i + 1,
            // A CR at the end of the buffer may be the first half of a CRLF.
            b'\r' if i + 1 == buf.len() => return None,
            b'\r' if buf[i + 1] == b'\n' => i + 2,
            b'\r' => i + 1,
            _ => {
                i += 1;
                continue;
            }
        };
        if i == line_start {
            return Some(end);
        }
        line_start = end;
        i = end;
    }
    None
}

/// True for an event a client would dispatch with empty data.
fn is_empty_event(event: &[u8]) -> bool {
    let text = String::from_utf8_lossy(event);
    let mut has_data = false;
    let mut data = String::new();
    for line in text.lines() {
        let (field, value) = match line.split_once(':') {
            Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
            None => (line, ""),
        };
        if field == "data" {
            has_data = true;
            data.push_str(value);
        }
    }
    has_data && data.trim().is_empty()
}

impl<B> Body for WithoutEmptyEvents<B>
where
    B: Body<Data = Bytes> + Unpin,
{
    type Data = Bytes;
    type Error = B::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, B::Error>>> {
        let this = self.get_mut();
        loop {
            if let Some(end) = event_end(&this.pending) {
                let event: Vec<u8> = this.pending.drain(..end).collect();
                if is_empty_event(&event) {
                    continue;
                }
                return Poll::Ready(Some(Ok(Frame::data(Bytes::from(event)))));
            }
            if this.ended {
                if this.pending.is_empty() || is_empty_event(&this.pending) {
                    this.pending.clear();
                    return Poll::Ready(None);
                }
                let rest = std::mem::take(&mut this.pending);
                return Poll::Ready(Some(Ok(Frame::data(Bytes::from(rest)))));
            }
            match Pin::new(&mut this.inner).poll_frame(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(None) => this.ended = true,
                Poll::Ready(Some(Err(e))) => return Poll::Ready(Some(Err(e))),
                Poll::Ready(Some(Ok(frame))) => match frame.into_data() {
                    Ok(data) => this.pending.extend_from_slice(&data),
                    Err(other) => return Poll::Ready(Some(Ok(other))),
                },
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A body of the given chunks, one frame each.
    struct Chunks(std::collections::VecDeque<Bytes>);

    impl Body for Chunks {
        type Data = Bytes;
        type Error = std::convert::Infallible;

        fn poll_frame(
            self: Pin<&mut Self>,
            _: &mut Context<'_>,
        ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
            Poll::Ready(self.get_mut().0.pop_front().map(|b| Ok(Frame::data(b))))
        }
    }

    fn filtered(chunks: &[&str]) -> String {
        let chunks = chunks.iter().map(|c| Bytes::from(c.to_string())).collect();
        let mut body = WithoutEmptyEvents::new(Chunks(chunks));
        let mut cx = Context::from_waker(std::task::Waker::noop());
        let mut out = Vec::new();
        loop {
            match Pin::new(&mut body).poll_frame(&mut cx) {
                Poll::Ready(Some(Ok(frame))) => out.extend_from_slice(&frame.into_data().unwrap()),
                Poll::Ready(None) => break,
                Poll::Ready(Some(Err(e))) => match e {},
                Poll::Pending => panic!("a body of ready chunks is never pending"),
            }
        }
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn priming_events_are_dropped_and_messages_kept_however_the_stream_is_cut() {
        let stream = "data: \nid: 0\nretry: 3000\n\n:\n\n\
                      data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\nid: 1\n\n\
                      retry: 3000\ndata:\n\n";
        let expected = ":\n\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\nid: 1\n\n";
        assert_eq!(filtered(&[stream]), expected);
        // Cut at every byte, CRLF lines too.
        let chunks: Vec<String> = stream.chars().map(String::from).collect();
        let refs: Vec<&str> = chunks.iter().map(String::as_str).collect();
        assert_eq!(filtered(&refs), expected);
        let crlf = stream.replace('\n', "\r\n");
        let chunks: Vec<String> = crlf.chars().map(String::from).collect();
        let refs: Vec<&str> = chunks.iter().map(String::as_str).collect();
        assert_eq!(filtered(&refs), expected.replace('\n', "\r\n"));
    }

    #[test]
    fn versions_decide() {
        assert!(!wants_priming("2025-06-18"));
        assert!(!wants_priming("2025-03-26"));
        assert!(wants_priming("2025-11-25"));
        assert!(wants_priming("2026-07-28"));
        assert!(!wants_priming("latest"));
        assert!(!wants_priming("2099-1-1"));
        let mut headers = hyper::HeaderMap::new();
        assert_eq!(request_version(&headers, b"{}"), ASSUMED_VERSION);
        headers.insert("mcp-protocol-version", "2025-11-25".parse().unwrap());
        assert_eq!(request_version(&headers, b"not json"), "2025-11-25");
        let init = br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}"#;
        assert_eq!(request_version(&headers, init), "2025-06-18");
    }
}
