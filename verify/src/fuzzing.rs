//! Entry points into the hand-written parsers for the `fuzz/` crate (feature `fuzzing`).
//!
//! Not an API: the parsers stay private, and these functions only run them on arbitrary bytes
//! and report what a fuzz target must check. Each returns what was accepted, so a target can
//! assert that no mutated input is ever accepted as something a signature did not cover.

use std::sync::LazyLock;

use x509_cert::Certificate;
use x509_cert::der::Decode;

use crate::{asn1, sct, timestamp, trust_root::TrustedRoot};

/// Parsed once: a fuzz target runs millions of inputs against it.
static ROOT: LazyLock<TrustedRoot> =
    LazyLock::new(|| TrustedRoot::production().expect("the embedded trusted root parses"));

/// Walk `data` as DER, descending into every constructed element (depth-bounded, so a
/// nesting bomb cannot exhaust the stack). Returns how many elements were read.
pub fn asn1(data: &[u8]) -> usize {
    fn walk(input: &[u8], depth: usize) -> usize {
        let Ok(elements) = asn1::read_all(input) else {
            return 0;
        };
        let mut count = elements.len();
        for element in elements {
            // The content is the tail of the element, after a header of 2 to 6 bytes.
            assert!(element.raw.ends_with(element.content));
            assert!((2..=6).contains(&(element.raw.len() - element.content.len())));
            if element.tag & 0x20 != 0 && depth < 64 {
                count += walk(element.content, depth + 1);
            }
        }
        count
    }
    walk(data, 0)
}

/// Verify `token` as an RFC 3161 timestamp over `signature` against the public-good trusted
/// root; `true` if it was accepted.
pub fn timestamp(token: &[u8], signature: &[u8]) -> bool {
    timestamp::verify(token, signature, &ROOT).is_ok()
}

/// Read `der` as a certificate and verify its embedded SCTs against the public-good CT logs,
/// with the current Fulcio intermediate as issuer. Returns the signed precertificate TBS when
/// an SCT verified, so a target can check that only the seed's signed bytes are accepted. Also
/// runs the SCT list parser on the raw bytes.
pub fn sct(der: &[u8]) -> Option<Vec<u8>> {
    let _ = sct::parse_list(der);
    let _ = sct::precert_tbs(der);
    let cert = Certificate::from_der(der).ok()?;
    let issuer = ROOT.certificate_authorities.last()?.chain.first()?;
    sct::verify(&cert, der, issuer, &ROOT).ok()?;
    sct::precert_tbs(der).ok()
}

/// The parts of a bundle that a signature, a log or the policy binds: what was signed, the
/// signing certificate, and each log entry (its index and time only where a SET signs them).
/// Parts nothing binds (the media type's spelling, a DSSE key id, the certificates an RFC 3161
/// token carries along) are left out, so a target can tell "the same signed bundle, spelled
/// differently" from "a mutated bundle that was accepted". `None` if it does not parse.
pub fn bundle_signed_content(bundle_json: &[u8]) -> Option<String> {
    let bundle = crate::bundle::Bundle::parse(bundle_json).ok()?;
    let material = match &bundle.material {
        crate::bundle::Material::Certificate { der, .. } => hex::encode(der),
        crate::bundle::Material::PublicKey => "public key".to_owned(),
    };
    let entries: Vec<String> = bundle
        .tlog_entries
        .iter()
        .map(|e| {
            let signed = e
                .signed_entry_timestamp
                .as_ref()
                .map(|set| (set, e.integrated_time, e.log_index));
            format!(
                "{} {} {} {} {:?} {:?}",
                hex::encode(&e.log_id),
                e.kind,
                e.version,
                hex::encode(&e.body),
                signed,
                e.inclusion_proof
            )
        })
        .collect();
    Some(format!("{:?}\n{material}\n{entries:?}", bundle.content))
}
