//! Whole bundles through `verify_bundle`: parsing never panics, and an input is only accepted
//! if its signed content is one of the seeds' (a mutation of an unbound part, such as JSON
//! whitespace or the media type's spelling, may still verify; a mutation of a signed or
//! log-bound part must not).
#![no_main]

use std::sync::LazyLock;

use scimcp_verify::{ArtifactInput, Policy, TrustedRoot, fuzzing, verify_bundle};

const ARTIFACT: &[u8] = include_bytes!("../../release/tests/data/conformance/a.txt");
const SEEDS: [&[u8]; 4] = [
    include_bytes!("../../release/tests/data/conformance/happy-path-v0.1/bundle.sigstore.json"),
    include_bytes!("../../release/tests/data/conformance/happy-path-v0.2/bundle.sigstore.json"),
    include_bytes!("../../release/tests/data/conformance/happy-path-v0.3/bundle.sigstore.json"),
    include_bytes!(
        "../../release/tests/data/conformance/happy-path-intoto-in-dsse-v3/bundle.sigstore.json"
    ),
];

static ROOT: LazyLock<TrustedRoot> = LazyLock::new(|| TrustedRoot::production().unwrap());
static POLICY: LazyLock<Policy> = LazyLock::new(|| {
    Policy::Identity {
    identity: "https://github.com/sigstore-conformance/extremely-dangerous-public-oidc-beacon/.github/workflows/extremely-dangerous-oidc-beacon.yml@refs/heads/main".into(),
    issuer: "https://token.actions.githubusercontent.com".into(),
}
});
static SIGNED: LazyLock<Vec<String>> = LazyLock::new(|| {
    SEEDS
        .iter()
        .map(|s| fuzzing::bundle_signed_content(s).unwrap())
        .collect()
});

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if verify_bundle(ArtifactInput::Bytes(ARTIFACT), data, &POLICY, &ROOT).is_ok() {
        let signed = fuzzing::bundle_signed_content(data).unwrap();
        assert!(SIGNED.contains(&signed), "a mutated bundle was accepted");
    }
});
