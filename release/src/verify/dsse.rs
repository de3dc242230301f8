//! DSSE envelopes (<https://github.com/secure-systems-lab/dsse>) carrying in-toto statements:
//! the signature covers the pre-authentication encoding, and the artifact is bound through a
//! subject digest of the statement.

use serde::Deserialize;

use super::bundle::Envelope;
use super::error::VerifyError;

const IN_TOTO_PAYLOAD_TYPE: &str = "application/vnd.in-toto+json";
const STATEMENT_TYPES: [&str; 2] = [
    "https://in-toto.io/Statement/v0.1",
    "https://in-toto.io/Statement/v1",
];

/// `PAE(type, body) = "DSSEv1" SP LEN(type) SP type SP LEN(body) SP body`.
pub(crate) fn pae(payload_type: &str, payload: &[u8]) -> Vec<u8> {
    let mut out = format!(
        "DSSEv1 {} {payload_type} {} ",
        payload_type.len(),
        payload.len()
    )
    .into_bytes();
    out.extend_from_slice(payload);
    out
}

#[derive(Deserialize)]
struct Statement {
    #[serde(rename = "_type")]
    statement_type: String,
    #[serde(default)]
    subject: Vec<Subject>,
}

#[derive(Deserialize)]
struct Subject {
    #[serde(default)]
    name: String,
    #[serde(default)]
    digest: std::collections::BTreeMap<String, String>,
}

/// Check that the envelope is an in-toto statement with a subject whose sha256 is the
/// artifact's.
pub(crate) fn check_subject(env: &Envelope, artifact_sha256: &[u8; 32]) -> Result<(), VerifyError> {
    if env.payload_type != IN_TOTO_PAYLOAD_TYPE {
        return Err(VerifyError::Dsse(format!(
            "payload type {:?} is not an in-toto statement ({IN_TOTO_PAYLOAD_TYPE})",
            env.payload_type
        )));
    }
    let statement: Statement = serde_json::from_slice(&env.payload)
        .map_err(|e| VerifyError::Dsse(format!("the payload is not an in-toto statement: {e}")))?;
    if !STATEMENT_TYPES.contains(&statement.statement_type.as_str()) {
        return Err(VerifyError::Dsse(format!(
            "unsupported statement type {:?}",
            statement.statement_type
        )));
    }
    let want = hex::encode(artifact_sha256);
    if statement.subject.iter().any(|s| {
        s.digest
            .get("sha256")
            .is_some_and(|d| d.eq_ignore_ascii_case(&want))
    }) {
        return Ok(());
    }
    let names: Vec<&str> = statement.subject.iter().map(|s| s.name.as_str()).collect();
    Err(VerifyError::Dsse(format!(
        "no subject of the statement ({names:?}) has the artifact's sha256 {want}"
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pae_matches_the_spec_example() {
        assert_eq!(
            pae("http://example.com/HelloWorld", b"hello world"),
            b"DSSEv1 29 http://example.com/HelloWorld 11 hello world".to_vec()
        );
    }
}
