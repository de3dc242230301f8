//! Just enough DER to write the fake CA's certificates by hand: x509-cert's builder hides the
//! to-be-signed bytes the embedded SCT must be computed over, so the test builds them itself.

use x509_cert::der::oid::ObjectIdentifier;

pub fn tlv(tag: u8, content: &[u8]) -> Vec<u8> {
    let mut out = vec![tag];
    let len = content.len();
    if len < 0x80 {
        out.push(len as u8);
    } else {
        let bytes: Vec<u8> = len
            .to_be_bytes()
            .into_iter()
            .skip_while(|b| *b == 0)
            .collect();
        out.push(0x80 | bytes.len() as u8);
        out.extend(bytes);
    }
    out.extend_from_slice(content);
    out
}

pub fn seq(parts: &[Vec<u8>]) -> Vec<u8> {
    tlv(0x30, &parts.concat())
}

pub fn set(parts: &[Vec<u8>]) -> Vec<u8> {
    tlv(0x31, &parts.concat())
}

pub fn oid(dotted: &str) -> Vec<u8> {
    tlv(0x06, ObjectIdentifier::new_unwrap(dotted).as_bytes())
}

pub fn integer(value: u64) -> Vec<u8> {
    let mut bytes: Vec<u8> = value
        .to_be_bytes()
        .into_iter()
        .skip_while(|b| *b == 0)
        .collect();
    if bytes.first().is_none_or(|b| b & 0x80 != 0) {
        bytes.insert(0, 0);
    }
    tlv(0x02, &bytes)
}

pub fn boolean(value: bool) -> Vec<u8> {
    tlv(0x01, &[if value { 0xff } else { 0 }])
}

pub fn utf8(s: &str) -> Vec<u8> {
    tlv(0x0c, s.as_bytes())
}

pub fn octets(bytes: &[u8]) -> Vec<u8> {
    tlv(0x04, bytes)
}

/// A BIT STRING with no unused bits.
pub fn bits(bytes: &[u8]) -> Vec<u8> {
    let mut content = vec![0];
    content.extend_from_slice(bytes);
    tlv(0x03, &content)
}

pub fn utc_time(t: jiff::Timestamp) -> Vec<u8> {
    tlv(0x17, t.strftime("%y%m%d%H%M%SZ").to_string().as_bytes())
}

/// `[n] EXPLICIT`.
pub fn explicit(n: u8, inner: &[u8]) -> Vec<u8> {
    tlv(0xa0 | n, inner)
}

/// A distinguished name with one common name.
pub fn name(common_name: &str) -> Vec<u8> {
    seq(&[set(&[seq(&[oid("2.5.4.3"), utf8(common_name)])])])
}

pub fn extension(id: &str, critical: bool, value: &[u8]) -> Vec<u8> {
    let mut parts = vec![oid(id)];
    if critical {
        parts.push(boolean(true));
    }
    parts.push(octets(value));
    seq(&parts)
}

/// `ecdsa-with-SHA256`.
pub fn ecdsa_sha256() -> Vec<u8> {
    seq(&[oid("1.2.840.10045.4.3.2")])
}
