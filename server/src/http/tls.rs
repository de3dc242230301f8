//! TLS for the HTTP transport (`--tls-cert FILE --tls-key FILE`): rustls with the ring
//! provider (the one ureq already brings into the workspace), TLS 1.2 and 1.3, HTTP/1.1.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use tokio_rustls::rustls;
use tokio_rustls::rustls::pki_types::pem::PemObject;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer};

/// Why `--tls-cert`/`--tls-key` give no TLS configuration: each says which file and what it
/// must hold.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    #[error("--tls-cert: cannot read the certificate")]
    ReadCert(#[source] std::io::Error),
    #[error(
        "--tls-cert {}: not a PEM certificate chain ({detail}); give the server's certificate, then any intermediates, as `-----BEGIN CERTIFICATE-----` blocks",
        cert.display()
    )]
    NotPemCert { cert: PathBuf, detail: String },
    #[error(
        "--tls-cert {}: no `-----BEGIN CERTIFICATE-----` block found; give the server's certificate in PEM",
        cert.display()
    )]
    NoCert { cert: PathBuf },
    #[error("--tls-key: cannot read the private key")]
    ReadKey(#[source] std::io::Error),
    #[error(
        "--tls-key {}: no PEM private key found ({detail}); give the certificate's key as a `-----BEGIN PRIVATE KEY-----` (or RSA/EC PRIVATE KEY) block",
        key.display()
    )]
    NoKey { key: PathBuf, detail: String },
    #[error("setting up TLS")]
    Setup(#[source] rustls::Error),
    #[error(
        "--tls-cert {} / --tls-key {}: {detail}; check that the key belongs to the certificate",
        cert.display(),
        key.display()
    )]
    Mismatch {
        cert: PathBuf,
        key: PathBuf,
        detail: String,
    },
}

/// A TLS server configuration from a PEM certificate chain (the server's certificate first,
/// then any intermediates) and its PEM private key (PKCS#8, PKCS#1 or SEC1).
pub fn server_config(cert: &Path, key: &Path) -> Result<Arc<rustls::ServerConfig>, TlsError> {
    let cert_pem = fs_err::read(cert).map_err(TlsError::ReadCert)?;
    let certs = CertificateDer::pem_slice_iter(&cert_pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| TlsError::NotPemCert {
            cert: cert.to_path_buf(),
            detail: e.to_string(),
        })?;
    if certs.is_empty() {
        return Err(TlsError::NoCert {
            cert: cert.to_path_buf(),
        });
    }
    let key_pem = fs_err::read(key).map_err(TlsError::ReadKey)?;
    let private = PrivateKeyDer::from_pem_slice(&key_pem).map_err(|e| TlsError::NoKey {
        key: key.to_path_buf(),
        detail: e.to_string(),
    })?;
    warn_if_key_is_readable(key);
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(TlsError::Setup)?
        .with_no_client_auth()
        .with_single_cert(certs, private)
        .map_err(|e| TlsError::Mismatch {
            cert: cert.to_path_buf(),
            key: key.to_path_buf(),
            detail: e.to_string(),
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
