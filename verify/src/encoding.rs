//! Base64 as protobuf JSON writes it (standard alphabet, padded), and PEM as Sigstore
//! clients write it.

use base64ct::{Base64, Encoding};

/// Why text is not the base64 or the PEM block it should be.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EncodingError {
    #[error("invalid base64: {0}")]
    Base64(base64ct::Error),
    #[error("not PEM: no BEGIN line")]
    NoBeginLine,
    /// The block's END line (`-----END LABEL-----`) was not found.
    #[error("not PEM: no `{0}` line")]
    NoEndLine(String),
}

/// Decode standard padded base64. ASCII whitespace is skipped, as the other Sigstore
/// clients' JSON readers do: line-wrapped base64 (`base64` without `-w0`) is common in
/// hand-made bundles.
pub(crate) fn b64(s: &str) -> Result<Vec<u8>, EncodingError> {
    let compact: String;
    let s = if s.bytes().any(|b| b.is_ascii_whitespace()) {
        compact = s.chars().filter(|c| !c.is_ascii_whitespace()).collect();
        &compact
    } else {
        s
    };
    Base64::decode_vec(s).map_err(EncodingError::Base64)
}

/// Encode as standard padded base64.
pub(crate) fn b64_encode(bytes: &[u8]) -> String {
    Base64::encode_string(bytes)
}

/// Decode one PEM block: `(label, DER)`.
///
/// Lenient by design, unlike pem-rfc7468's strict RFC 7468 parser: Rekor stores PEM written
/// by many clients, some with one unwrapped base64 line, and refusing those would refuse
/// valid log entries. The label and the base64 are still checked.
pub fn pem_decode(text: &str) -> Result<(String, Vec<u8>), EncodingError> {
    let mut lines = text.trim().lines().map(str::trim);
    let begin = lines.next().unwrap_or_default();
    let label = begin
        .strip_prefix("-----BEGIN ")
        .and_then(|l| l.strip_suffix("-----"))
        .ok_or(EncodingError::NoBeginLine)?;
    let end = format!("-----END {label}-----");
    let mut body = String::new();
    for line in lines.by_ref() {
        if line == end {
            return b64(&body).map(|der| (label.to_owned(), der));
        }
        body.push_str(line);
    }
    Err(EncodingError::NoEndLine(end))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pem_accepts_wrapped_and_unwrapped_bodies() {
        let wrapped = "-----BEGIN X-----\nAAEC\nAwQ=\n-----END X-----\n";
        let flat = "-----BEGIN X-----\nAAECAwQ=\n-----END X-----";
        assert_eq!(
            pem_decode(wrapped).unwrap(),
            ("X".to_owned(), vec![0, 1, 2, 3, 4])
        );
        assert_eq!(
            pem_decode(flat).unwrap(),
            ("X".to_owned(), vec![0, 1, 2, 3, 4])
        );
        assert!(pem_decode("-----BEGIN X-----\nAAEC\n-----END Y-----").is_err());
    }

    #[test]
    fn base64_skips_line_breaks() {
        assert_eq!(b64("AAEC\nAwQ=").unwrap(), vec![0, 1, 2, 3, 4]);
        assert!(b64("AAEC!").is_err());
    }
}
