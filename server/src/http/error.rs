//! Why the HTTP transport does not start: a `--listen`, TLS, token or allow-list setting it
//! refuses (each message says what to change), or an address it cannot bind.

use std::net::SocketAddr;
use std::path::PathBuf;

use super::tls::TlsError;
use crate::auth::TokenError;

/// A refused HTTP setting, or a listener that could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum HttpError {
    #[error(
        "--listen {listen:?} is not an address and port such as 127.0.0.1:8765, \
         localhost:8765, [::1]:8765 or (with tokens) 0.0.0.0:8765"
    )]
    Listen {
        listen: String,
        #[source]
        source: std::net::AddrParseError,
    },
    #[error(transparent)]
    Tls(#[from] TlsError),
    #[error("--tls-cert needs --tls-key (the certificate's private key)")]
    CertWithoutKey,
    #[error("--tls-key needs --tls-cert (the server's certificate chain)")]
    KeyWithoutCert,
    #[error(
        "--listen {addr} is a network address: bearer tokens would cross the network in \
         clear text. Give the server a certificate with --tls-cert FILE --tls-key FILE, \
         or, when a TLS-terminating reverse proxy forwards to it, add --allow-plain-http \
         (docs/REMOTE.md shows both)"
    )]
    PlainOnNetwork { addr: SocketAddr },
    /// The token file is required and cannot be trusted or read.
    #[error(transparent)]
    Tokens(#[from] TokenError),
    #[error(
        "{why}, and no token is configured (none in {} and no {env}). Create one per \
         person with `scimcp token add NAME` (it prints the secret once; that person's \
         MCP client sends it as `Authorization: Bearer SECRET`), or set {env}; then start \
         the server again",
        token_file.display()
    )]
    NoToken {
        /// Why a token is required: a network address, or `--require-token`.
        why: String,
        token_file: PathBuf,
        env: &'static str,
    },
    #[error(
        "--allowed-host {host:?} is not a host name: give the name clients use, e.g. \
         --allowed-host analysis.lab.example (or NAME:PORT to allow one port only)"
    )]
    BadHost { host: String },
    #[error(
        "--allowed-origin {origin:?} is not an origin: give the scheme, host and \
         port of the web page, e.g. https://notebook.lab.example:443"
    )]
    BadOrigin { origin: String },
    #[error("cannot listen on {addr}")]
    Bind {
        addr: SocketAddr,
        #[source]
        source: std::io::Error,
    },
    #[error("reading the bound address")]
    BoundAddress(#[source] std::io::Error),
}
