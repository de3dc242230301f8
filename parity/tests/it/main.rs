//! The parity gate's integration tests, one binary.
//!
//! Each module was once its own test binary; one binary links once, and nextest still runs
//! every test in its own process (filter a group with `-E 'test(/^module::/)'`).

mod gate;
