//! A minimal DER walker for the structures whose exact bytes are signed.
//!
//! Written by hand on purpose: an RFC 3161 token signs the DER of its `signedAttrs` SET and a
//! Certificate Transparency SCT signs the precertificate TBS with one extension removed, so
//! both need the original bytes, not a decode-and-re-encode. The `cms` crate is only a
//! release candidate for the `der` 0.8 generation and re-sorts SET OF while decoding, which
//! would change signed bytes; x509-cert keeps TBS fields private. The walker reads
//! definite-length, single-byte-tag TLVs only, which is all these structures use.

use std::fmt;

/// Universal and context tags used by the callers.
pub(crate) mod tag {
    pub(crate) const INTEGER: u8 = 0x02;
    pub(crate) const OCTET_STRING: u8 = 0x04;
    pub(crate) const OID: u8 = 0x06;
    pub(crate) const GENERALIZED_TIME: u8 = 0x18;
    pub(crate) const SEQUENCE: u8 = 0x30;
    pub(crate) const SET: u8 = 0x31;
    /// `[0]` constructed (EXPLICIT or IMPLICIT constructed).
    pub(crate) const CONTEXT_0: u8 = 0xa0;
    /// `[3]` constructed: the extensions of a TBSCertificate.
    pub(crate) const CONTEXT_3: u8 = 0xa3;
    /// `[0]` primitive: a SubjectKeyIdentifier signer identifier in CMS.
    pub(crate) const CONTEXT_0_PRIMITIVE: u8 = 0x80;
}

/// A structural DER error; the message says what was expected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct DerError(pub(crate) &'static str);

impl fmt::Display for DerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "malformed DER: {}", self.0)
    }
}

impl std::error::Error for DerError {}

/// One tag-length-value element, borrowing from the input.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Tlv<'a> {
    pub(crate) tag: u8,
    pub(crate) content: &'a [u8],
    /// The whole element, header included.
    pub(crate) raw: &'a [u8],
}

impl<'a> Tlv<'a> {
    /// The element's content, if its tag is `expected`.
    pub(crate) fn expect(&self, expected: u8, what: &'static str) -> Result<&'a [u8], DerError> {
        if self.tag == expected {
            Ok(self.content)
        } else {
            Err(DerError(what))
        }
    }

    /// The children of a constructed element.
    pub(crate) fn children(&self) -> Result<Vec<Tlv<'a>>, DerError> {
        read_all(self.content)
    }
}

/// Read one element from the front of `input`; returns it and the rest.
pub(crate) fn read(input: &[u8]) -> Result<(Tlv<'_>, &[u8]), DerError> {
    let (&tag, rest) = input
        .split_first()
        .ok_or(DerError("unexpected end of input"))?;
    if tag & 0x1f == 0x1f {
        return Err(DerError("multi-byte tags are not used by these structures"));
    }
    let (&first, rest) = rest.split_first().ok_or(DerError("missing length"))?;
    let (len, header) = match first {
        l if l < 0x80 => (usize::from(l), 2),
        0x80 => return Err(DerError("indefinite length is not DER")),
        l => {
            let n = usize::from(l & 0x7f);
            if n > 4 || rest.len() < n {
                return Err(DerError("length out of range"));
            }
            let len = rest[..n]
                .iter()
                .fold(0usize, |acc, b| (acc << 8) | usize::from(*b));
            (len, 2 + n)
        }
    };
    let end = header
        .checked_add(len)
        .filter(|end| *end <= input.len())
        .ok_or(DerError("element longer than its input"))?;
    Ok((
        Tlv {
            tag,
            content: &input[header..end],
            raw: &input[..end],
        },
        &input[end..],
    ))
}

/// Read every element of `input`.
pub(crate) fn read_all(mut input: &[u8]) -> Result<Vec<Tlv<'_>>, DerError> {
    let mut out = Vec::new();
    while !input.is_empty() {
        let (tlv, rest) = read(input)?;
        out.push(tlv);
        input = rest;
    }
    Ok(out)
}

/// Read exactly one element spanning all of `input`.
pub(crate) fn read_single(input: &[u8]) -> Result<Tlv<'_>, DerError> {
    let (tlv, rest) = read(input)?;
    if rest.is_empty() {
        Ok(tlv)
    } else {
        Err(DerError("trailing bytes after the element"))
    }
}

/// Encode one element with a definite DER length.
pub(crate) fn encode(tag: u8, content: &[u8]) -> Vec<u8> {
    let len = content.len();
    let mut out = Vec::with_capacity(len + 6);
    out.push(tag);
    if len < 0x80 {
        out.push(len as u8);
    } else {
        let bytes = len.to_be_bytes();
        let skip = bytes.iter().take_while(|b| **b == 0).count();
        out.push(0x80 | (bytes.len() - skip) as u8);
        out.extend_from_slice(&bytes[skip..]);
    }
    out.extend_from_slice(content);
    out
}

/// The content of an INTEGER without its sign-padding zero, for comparing serial numbers.
pub(crate) fn unsigned_integer(content: &[u8]) -> &[u8] {
    match content {
        [0, rest @ ..] if !rest.is_empty() => rest,
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_short_and_long_lengths() {
        for len in [0usize, 1, 127, 128, 255, 256, 70_000] {
            let content = vec![7u8; len];
            let der = encode(tag::OCTET_STRING, &content);
            let tlv = read_single(&der).unwrap();
            assert_eq!(tlv.tag, tag::OCTET_STRING);
            assert_eq!(tlv.content, &content[..]);
            assert_eq!(tlv.raw, &der[..]);
        }
    }

    #[test]
    fn refuses_truncated_and_indefinite() {
        assert!(read(&[0x30, 0x05, 1, 2]).is_err());
        assert!(read(&[0x30, 0x80, 0, 0]).is_err());
        assert!(read(&[]).is_err());
        assert!(read_single(&[0x05, 0x00, 0x00]).is_err());
    }
}
