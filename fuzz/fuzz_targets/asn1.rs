//! The DER walker never panics, and every element it returns is its header plus its content.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    scimcp_verify::fuzzing::asn1(data);
});
