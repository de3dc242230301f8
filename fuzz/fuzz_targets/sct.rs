//! Certificates and their embedded SCT lists: parsing never panics, and an SCT is only ever
//! accepted over the precertificate the CT log signed, the seed's. The corpus therefore starts
//! from that one genuine certificate: another genuine one would rightly verify too.
#![no_main]

use std::sync::LazyLock;

use base64ct::{Base64, Encoding};

/// The signing certificate of a public-good bundle (the seed), as DER.
static SEED: LazyLock<Vec<u8>> = LazyLock::new(|| {
    let bundle: serde_json::Value = serde_json::from_slice(include_bytes!(
        "../../release/tests/data/conformance/happy-path-v0.3/bundle.sigstore.json"
    ))
    .unwrap();
    let raw = bundle["verificationMaterial"]["certificate"]["rawBytes"]
        .as_str()
        .unwrap();
    Base64::decode_vec(raw).unwrap()
});

static SEED_TBS: LazyLock<Vec<u8>> = LazyLock::new(|| {
    scimcp_verify::fuzzing::sct(&SEED).expect("the seed certificate's SCT verifies")
});

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if let Some(signed) = scimcp_verify::fuzzing::sct(data) {
        assert_eq!(signed, *SEED_TBS, "an SCT was accepted over other bytes");
    }
});
