//! DSSE envelopes (<https://github.com/secure-systems-lab/dsse>) carrying in-toto statements:
//! the signature covers the pre-authentication encoding, and the artifact is bound through a
//! subject digest of the statement.

use serde::Deserialize;

use super::artifact::Digests;
use super::bundle::Envelope;
use super::error::VerifyError;
use super::keys::HashAlg;

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

/// Check that the envelope is an in-toto statement with a subject that names the artifact.
///
/// A subject names it when every digest it records under a hash function this verifier knows
/// (and can compute, when only a digest of the artifact was given) equals the artifact's, and
/// there is at least one such digest. npm names tarballs by `sha512` only, SLSA generators by
/// `sha256`; a subject that carries both must match under both. Other digest kinds
/// (`gitCommit`, …) say nothing about the artifact and are skipped.
pub(crate) fn check_subject(env: &Envelope, artifact: &Digests<'_>) -> Result<(), VerifyError> {
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
    let mut compared: Vec<String> = Vec::new();
    for subject in &statement.subject {
        let mut all_equal = None;
        for (name, recorded) in &subject.digest {
            let Some(alg) = HashAlg::from_lower_name(name) else {
                continue;
            };
            let Some(actual) = artifact.get(alg) else {
                continue;
            };
            let equal = hex::decode(recorded).is_ok_and(|r| r == actual);
            all_equal = Some(all_equal.unwrap_or(true) && equal);
            let mine = format!("{name} {}", hex::encode(actual));
            if !compared.contains(&mine) {
                compared.push(mine);
            }
        }
        if all_equal == Some(true) {
            return Ok(());
        }
    }
    let names: Vec<&str> = statement.subject.iter().map(|s| s.name.as_str()).collect();
    if compared.is_empty() {
        return Err(VerifyError::Dsse(match artifact.given_name() {
            Some(given) => format!(
                "no subject of the statement ({names:?}) records a {given} digest, the only \
                 digest of the artifact that was given; pass the file"
            ),
            None => format!(
                "no subject of the statement ({names:?}) records a sha256, sha384 or sha512 \
                 digest"
            ),
        }));
    }
    Err(VerifyError::Dsse(format!(
        "no subject of the statement ({names:?}) has the artifact's digest ({})",
        compared.join(", ")
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
