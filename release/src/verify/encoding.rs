//! Base64 as protobuf JSON writes it (standard alphabet, padded).

use base64ct::{Base64, Encoding};

/// Decode standard padded base64; the error says what was wrong.
pub(crate) fn b64(s: &str) -> Result<Vec<u8>, String> {
    Base64::decode_vec(s.trim()).map_err(|e| format!("invalid base64: {e}"))
}

/// Encode as standard padded base64.
pub(crate) fn b64_encode(bytes: &[u8]) -> String {
    Base64::encode_string(bytes)
}
