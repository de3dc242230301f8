//! TLS for the HTTP transport (`--tls-cert FILE --tls-key FILE`): rustls with the ring
//! provider (the one ureq already brings into the workspace), TLS 1.2 and 1.3, HTTP/1.1.

use std::path::Path;
use std::sync::Arc;

use anyhow::Context as _;
use tokio_rustls::rustls;
use tokio_rustls::rustls::pki_types::pem::PemObject;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer};

/// A TLS server configuration from a PEM certificate chain (the server's certificate first,
/// then any intermediates) and its PEM private key (PKCS#8, PKCS#1 or SEC1).
pub fn server_config(cert: &Path, key: &Path) -> anyhow::Result<Arc<rustls::ServerConfig>> {
    let cert_pem = fs_err::read(cert).context("--tls-cert: cannot read the certificate")?;
    let certs = CertificateDer::pem_slice_iter(&cert_pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| {
            anyhow::anyhow!(
                "--tls-cert {}: not a PEM certificate chain ({e}); give the server's certificate, then any intermediates, as `-----BEGIN CERTIFICATE-----` blocks",
                cert.display()
            )
        })?;
    if certs.is_empty() {
        anyhow::bail!(
            "--tls-cert {}: no `-----BEGIN CERTIFICATE-----` block found; give the server's certificate in PEM",
            cert.display()
        );
    }
    let key_pem = fs_err::read(key).context("--tls-key: cannot read the private key")?;
    let private = PrivateKeyDer::from_pem_slice(&key_pem).map_err(|e| {
        anyhow::anyhow!(
            "--tls-key {}: no PEM private key found ({e}); give the certificate's key as a `-----BEGIN PRIVATE KEY-----` (or RSA/EC PRIVATE KEY) block",
            key.display()
        )
    })?;
    warn_if_key_is_readable(key);
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .context("setting up TLS")?
        .with_no_client_auth()
        .with_single_cert(certs, private)
        .map_err(|e| {
            anyhow::anyhow!(
                "--tls-cert {} / --tls-key {}: {e}; check that the key belongs to the certificate",
                cert.display(),
                key.display()
            )
        })?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}

#[cfg(unix)]
fn warn_if_key_is_readable(key: &Path) {
    use std::os::unix::fs::PermissionsExt;
    if let Ok(meta) = fs_err::metadata(key)
        && meta.permissions().mode() & 0o077 != 0
    {
        tracing::warn!(
            "the TLS key {} is readable by other users; run `chmod 600 {}`",
            key.display(),
            key.display()
        );
    }
}

#[cfg(not(unix))]
fn warn_if_key_is_readable(_key: &Path) {}
