//! RFC 3161 tokens: parsing never panics, and no input is accepted as a public-good TSA's
//! timestamp over a signature nobody timestamped (forging one would need the TSA's key).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    assert!(
        !scimcp_verify::fuzzing::timestamp(data, b"scimcp fuzz: never timestamped"),
        "a fuzzed RFC 3161 token was accepted"
    );
});
