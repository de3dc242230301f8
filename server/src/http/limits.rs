//! Per-token limits of the HTTP transport: requests in flight at once, and a request rate
//! (a token bucket). A request over either is answered 429 with `Retry-After` before its
//! body is read, so one person's runaway client cannot crowd out the others.
//!
//! A request counts as in flight until its whole answer has been sent: a streamed answer (an
//! SSE stream, a `get_run_result` that waits) holds its slot while it streams.

use std::collections::HashMap;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use hyper::body::{Body, Frame, SizeHint};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// The bounds every token gets.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TokenLimits {
    /// Sustained requests per second.
    pub requests_per_s: f64,
    /// Requests that may come at once after a quiet spell (the bucket's size).
    pub burst: f64,
    /// Requests (answers still streaming included) in flight at once.
    pub max_in_flight: usize,
}

impl TokenLimits {
    /// 10 requests a second, bursts of 50, 16 in flight: far above what an MCP client sends
    /// (a handful of requests per tool call), far below what would starve a 2-core server.
    pub const DEFAULT: TokenLimits = TokenLimits {
        requests_per_s: 10.0,
        burst: 50.0,
        max_in_flight: 16,
    };
}

/// Why a request was not admitted.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Refusal {
    /// Over the rate: try again after this long.
    Rate { retry_after: Duration },
    /// Too many requests of this token in flight.
    InFlight,
}

#[derive(Debug)]
struct TokenState {
    bucket: f64,
    refilled: Instant,
    in_flight: Arc<Semaphore>,
}

/// The limits of every token seen so far (a handful of names: the map stays small).
#[derive(Debug)]
pub struct Limiter {
    limits: TokenLimits,
    tokens: Mutex<HashMap<String, TokenState>>,
}

impl Limiter {
    pub fn new(limits: TokenLimits) -> Limiter {
        Limiter {
            limits,
            tokens: Mutex::new(HashMap::new()),
        }
    }

    /// Admit one request of token `name`: a permit held until its answer is sent, or why not.
    pub fn admit(&self, name: &str) -> Result<OwnedSemaphorePermit, Refusal> {
        self.admit_at(name, Instant::now())
    }

    fn admit_at(&self, name: &str, now: Instant) -> Result<OwnedSemaphorePermit, Refusal> {
        let limits = self.limits;
        let mut tokens = self.tokens.lock().expect("limiter lock");
        let state = tokens
            .entry(name.to_string())
            .or_insert_with(|| TokenState {
                bucket: limits.burst,
                refilled: now,
                in_flight: Arc::new(Semaphore::new(limits.max_in_flight)),
            });
        let elapsed = now.saturating_duration_since(state.refilled).as_secs_f64();
        state.bucket = (state.bucket + elapsed * limits.requests_per_s).min(limits.burst);
        state.refilled = now;
        // A request refused for concurrency does not spend a rate token.
        let permit = Arc::clone(&state.in_flight)
            .try_acquire_owned()
            .map_err(|_| Refusal::InFlight)?;
        if state.bucket < 1.0 {
            let wait = (1.0 - state.bucket) / limits.requests_per_s;
            return Err(Refusal::Rate {
                retry_after: Duration::from_secs_f64(wait),
            });
        }
        state.bucket -= 1.0;
        Ok(permit)
    }
}

/// A response body that holds its request's permit until the body is finished or dropped.
pub struct Held<B> {
    inner: B,
    _permit: Option<OwnedSemaphorePermit>,
}

impl<B> Held<B> {
    pub fn new(inner: B, permit: Option<OwnedSemaphorePermit>) -> Held<B> {
        Held {
            inner,
            _permit: permit,
        }
    }
}

impl<B: Body + Unpin> Body for Held<B> {
    type Data = B::Data;
    type Error = B::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        Pin::new(&mut self.get_mut().inner).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rate_is_a_token_bucket_per_token() {
        let limiter = Limiter::new(TokenLimits {
            requests_per_s: 2.0,
            burst: 3.0,
            max_in_flight: 100,
        });
        let t0 = Instant::now();
        for _ in 0..3 {
            drop(limiter.admit_at("alice", t0).unwrap());
        }
        let Err(Refusal::Rate { retry_after }) = limiter.admit_at("alice", t0) else {
            panic!("a fourth request at once must be refused");
        };
        assert!(
            (retry_after.as_secs_f64() - 0.5).abs() < 0.01,
            "{retry_after:?}"
        );
        // Another token has its own bucket.
        drop(limiter.admit_at("bob", t0).unwrap());
        // Half a second later one more request is allowed, and only one.
        let t1 = t0 + Duration::from_millis(500);
        drop(limiter.admit_at("alice", t1).unwrap());
        assert!(limiter.admit_at("alice", t1).is_err());
    }

    #[test]
    fn requests_in_flight_are_bounded_until_their_answers_end() {
        let limiter = Limiter::new(TokenLimits {
            requests_per_s: 1000.0,
            burst: 1000.0,
            max_in_flight: 2,
        });
        let a = limiter.admit("alice").unwrap();
        let _b = limiter.admit("alice").unwrap();
        assert_eq!(limiter.admit("alice").unwrap_err(), Refusal::InFlight);
        drop(a);
        drop(limiter.admit("alice").unwrap());
    }
}
