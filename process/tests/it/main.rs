//! scimcp-process's integration tests, one binary (nextest still runs each test in its own
//! process; filter a group with `-E 'test(/^module::/)'`).

mod sandbox;
mod sandbox_seatbelt;
