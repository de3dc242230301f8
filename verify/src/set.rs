//! Signed entry timestamps (Rekor v1 inclusion promises): the log's signature over the
//! canonical JSON of the entry's body, integrated time, log ID and index. A verified SET makes
//! the integrated time a source of signed time.

use super::encoding::b64_encode;
use super::error::VerifyError;
use super::keys::PublicKey;

/// The payload a SET signs. Canonical JSON (RFC 8785) of four fields reduces to this fixed
/// layout: keys in byte order, no spaces, integers, and strings (base64, hex) that never
/// need escaping.
pub(crate) fn payload(body: &[u8], integrated_time: i64, log_id: &[u8], log_index: u64) -> String {
    format!(
        "{{\"body\":\"{}\",\"integratedTime\":{integrated_time},\"logID\":\"{}\",\"logIndex\":{log_index}}}",
        b64_encode(body),
        hex::encode(log_id)
    )
}

pub(crate) fn verify(
    key: &PublicKey,
    signature: &[u8],
    body: &[u8],
    integrated_time: i64,
    log_id: &[u8],
    log_index: u64,
) -> Result<(), VerifyError> {
    let message = payload(body, integrated_time, log_id, log_index);
    key.verify(message.as_bytes(), signature)
        .map_err(|e| VerifyError::SignedEntryTimestamp(format!("{e} (log key)")))
}
