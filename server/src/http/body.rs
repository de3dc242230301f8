//! The body type of every response the HTTP server writes, in a file of its own so the
//! request layers beside `http.rs` (wire.rs) can name it without importing `http.rs`.

use std::convert::Infallible;

use http_body_util::combinators::BoxBody;
use hyper::body::Bytes;

/// A response body: rmcp's streams, our JSON and plain-text answers alike.
pub(super) type HttpBody = BoxBody<Bytes, Infallible>;
