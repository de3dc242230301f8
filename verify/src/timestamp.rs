//! RFC 3161 timestamps: a timestamp authority of the trusted root signed that the bundle's
//! signature existed at `genTime`. That time is a source of verified signing time.
//!
//! The token is CMS SignedData (RFC 5652) over a TSTInfo. Checks, in order: the response
//! status, the content type, the message imprint (a hash of the bundle's signature bytes),
//! the signer's `contentType` and `messageDigest` attributes, the signature over the DER of
//! the signed attributes by the leaf of a trusted TSA chain, that chain's signatures and
//! validity at `genTime`, the leaf's timeStamping EKU, and the authority's trust-root window.
//! Certificates embedded in the token are never trusted: the signer must be a trust-root TSA.
//! Parsing uses the DER walker in `asn1` (see there for why not the `cms` crate).

use jiff::Timestamp;
use x509_cert::Certificate;
use x509_cert::der::Encode;
use x509_cert::der::oid::ObjectIdentifier;
use x509_cert::ext::pkix::{ExtendedKeyUsage, SubjectKeyIdentifier};

use super::asn1::{self, Tlv, tag};
use super::certificate::{self, CertError, ID_KP_TIME_STAMPING};
use super::error::VerifyError;
use super::keys::{HashAlg, SignatureError, SignatureScheme};
use super::trust_root::{Authority, TrustedRoot};

const ID_SIGNED_DATA: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.113549.1.7.2");
const ID_CT_TST_INFO: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.113549.1.9.16.1.4");
const ID_CONTENT_TYPE: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.113549.1.9.3");
const ID_MESSAGE_DIGEST: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.113549.1.9.4");

fn bad(m: impl Into<String>) -> VerifyError {
    VerifyError::Timestamp(m.into())
}

fn der(e: asn1::DerError) -> VerifyError {
    bad(e.to_string())
}

fn oid(tlv: &Tlv<'_>) -> Result<ObjectIdentifier, VerifyError> {
    let content = tlv.expect(tag::OID, "expected an OID").map_err(der)?;
    ObjectIdentifier::from_bytes(content).map_err(|e| bad(format!("invalid OID: {e}")))
}

/// The OID of an AlgorithmIdentifier SEQUENCE.
fn algorithm(tlv: &Tlv<'_>) -> Result<ObjectIdentifier, VerifyError> {
    tlv.expect(tag::SEQUENCE, "expected an AlgorithmIdentifier")
        .map_err(der)?;
    let fields = tlv.children().map_err(der)?;
    oid(fields
        .first()
        .ok_or_else(|| bad("empty AlgorithmIdentifier"))?)
}

fn digest_alg(tlv: &Tlv<'_>) -> Result<HashAlg, VerifyError> {
    let id = algorithm(tlv)?;
    HashAlg::from_digest_oid(&id).ok_or_else(|| bad(format!("unsupported digest algorithm {id}")))
}

/// `YYYYMMDDHHMMSS[.fff]Z` to a timestamp. Parsed by hand because der's GeneralizedTime
/// refuses the fractional seconds some TSAs emit.
fn generalized_time(content: &[u8]) -> Result<Timestamp, VerifyError> {
    let s = std::str::from_utf8(content).map_err(|_| bad("genTime is not ASCII"))?;
    let invalid = || bad(format!("genTime {s:?} is not a UTC GeneralizedTime"));
    let digits = s.strip_suffix('Z').ok_or_else(invalid)?;
    let (whole, fraction) = digits.split_once('.').unwrap_or((digits, ""));
    if whole.len() != 14
        || !whole.bytes().all(|b| b.is_ascii_digit())
        || !fraction.bytes().all(|b| b.is_ascii_digit())
    {
        return Err(invalid());
    }
    let frac = if fraction.is_empty() {
        String::new()
    } else {
        format!(".{fraction}")
    };
    format!(
        "{}-{}-{}T{}:{}:{}{frac}Z",
        &whole[0..4],
        &whole[4..6],
        &whole[6..8],
        &whole[8..10],
        &whole[10..12],
        &whole[12..14]
    )
    .parse()
    .map_err(|_| invalid())
}

/// The parts of a timestamp token that verification needs.
struct Token<'a> {
    tst_info: &'a [u8],
    imprint_alg: HashAlg,
    imprint: &'a [u8],
    gen_time: Timestamp,
    signer: SignerInfo<'a>,
}

struct SignerInfo<'a> {
    sid: Tlv<'a>,
    digest_alg: HashAlg,
    /// The `[0] IMPLICIT` signed attributes as they appear in the token.
    signed_attrs: Tlv<'a>,
    signature_alg: ObjectIdentifier,
    signature: &'a [u8],
}

fn parse(bytes: &[u8]) -> Result<Token<'_>, VerifyError> {
    let outer = asn1::read_single(bytes).map_err(der)?;
    outer
        .expect(tag::SEQUENCE, "the timestamp is not a SEQUENCE")
        .map_err(der)?;
    let fields = outer.children().map_err(der)?;
    // A TimeStampResp starts with PKIStatusInfo (a SEQUENCE); a bare token (ContentInfo)
    // starts with its content-type OID. Bundles carry either.
    let content_info = match fields.first() {
        Some(status) if status.tag == tag::SEQUENCE => {
            let code = status
                .children()
                .map_err(der)?
                .first()
                .map(|t| t.expect(tag::INTEGER, "status is not an INTEGER"))
                .transpose()
                .map_err(der)?
                .ok_or_else(|| bad("empty PKIStatusInfo"))?;
            // granted (0) or grantedWithMods (1)
            if code != [0] && code != [1] {
                return Err(bad(format!(
                    "the TSA refused the request (status {})",
                    hex::encode(code)
                )));
            }
            let token = fields
                .get(1)
                .ok_or_else(|| bad("the response carries no token"))?;
            token.children().map_err(der)?
        }
        _ => fields,
    };
    let [content_type, content] = content_info.as_slice() else {
        return Err(bad("the token is not a ContentInfo"));
    };
    if oid(content_type)? != ID_SIGNED_DATA {
        return Err(bad("the token is not CMS SignedData"));
    }
    let signed_data = asn1::read_single(
        content
            .expect(tag::CONTEXT_0, "SignedData is not in [0]")
            .map_err(der)?,
    )
    .map_err(der)?;
    let sd = signed_data.children().map_err(der)?;
    // version, digestAlgorithms, encapContentInfo, [0] certificates?, [1] crls?, signerInfos
    let encap = sd.get(2).ok_or_else(|| bad("SignedData is truncated"))?;
    let signer_infos = sd.last().ok_or_else(|| bad("SignedData is truncated"))?;
    let encap_fields = encap.children().map_err(der)?;
    let [econtent_type, econtent] = encap_fields.as_slice() else {
        return Err(bad("the token has no encapsulated content"));
    };
    if oid(econtent_type)? != ID_CT_TST_INFO {
        return Err(bad("the signed content is not a TSTInfo"));
    }
    let octets = asn1::read_single(
        econtent
            .expect(tag::CONTEXT_0, "eContent is not in [0]")
            .map_err(der)?,
    )
    .map_err(der)?;
    let tst_info = octets
        .expect(tag::OCTET_STRING, "eContent is not an OCTET STRING")
        .map_err(der)?;

    // TSTInfo: version, policy, messageImprint, serialNumber, genTime, ...
    let tst = asn1::read_single(tst_info)
        .map_err(der)?
        .children()
        .map_err(der)?;
    let imprint = tst.get(2).ok_or_else(|| bad("TSTInfo is truncated"))?;
    let imprint_fields = imprint.children().map_err(der)?;
    let [imprint_alg, hashed] = imprint_fields.as_slice() else {
        return Err(bad("malformed messageImprint"));
    };
    let gen_time = tst
        .get(4)
        .ok_or_else(|| bad("TSTInfo is truncated"))?
        .expect(tag::GENERALIZED_TIME, "genTime is not a GeneralizedTime")
        .map_err(der)?;

    let infos = signer_infos
        .expect(tag::SET, "signerInfos is not a SET")
        .map(asn1::read_all)
        .map_err(der)?
        .map_err(der)?;
    let [info] = infos.as_slice() else {
        return Err(bad(format!(
            "the token must have exactly one signer, it has {}",
            infos.len()
        )));
    };
    let si = info.children().map_err(der)?;
    // version, sid, digestAlgorithm, [0] signedAttrs, signatureAlgorithm, signature, [1]?
    let (Some(sid), Some(dalg), Some(attrs), Some(salg), Some(sig)) =
        (si.get(1), si.get(2), si.get(3), si.get(4), si.get(5))
    else {
        return Err(bad("SignerInfo is truncated"));
    };
    if attrs.tag != tag::CONTEXT_0 {
        return Err(bad("the signer has no signed attributes"));
    }
    Ok(Token {
        tst_info,
        imprint_alg: digest_alg(imprint_alg)?,
        imprint: hashed
            .expect(tag::OCTET_STRING, "hashedMessage is not an OCTET STRING")
            .map_err(der)?,
        gen_time: generalized_time(gen_time)?,
        signer: SignerInfo {
            sid: *sid,
            digest_alg: digest_alg(dalg)?,
            signed_attrs: *attrs,
            signature_alg: algorithm(salg)?,
            signature: sig
                .expect(tag::OCTET_STRING, "signature is not an OCTET STRING")
                .map_err(der)?,
        },
    })
}

/// Check `contentType` and `messageDigest` in the signed attributes.
fn check_attributes(token: &Token<'_>) -> Result<(), VerifyError> {
    let mut content_type_ok = false;
    let mut digest_ok = false;
    for attr in token.signer.signed_attrs.children().map_err(der)? {
        let fields = attr.children().map_err(der)?;
        let [attr_type, values] = fields.as_slice() else {
            return Err(bad("malformed signed attribute"));
        };
        let values = values.children().map_err(der)?;
        let [value] = values.as_slice() else {
            continue;
        };
        match oid(attr_type)? {
            ID_CONTENT_TYPE => content_type_ok = oid(value)? == ID_CT_TST_INFO,
            ID_MESSAGE_DIGEST => {
                let expected = token.signer.digest_alg.digest(token.tst_info);
                digest_ok = value
                    .expect(tag::OCTET_STRING, "messageDigest is not an OCTET STRING")
                    .map_err(der)?
                    == expected.as_slice();
            }
            _ => {}
        }
    }
    if !content_type_ok {
        return Err(bad(
            "the signed contentType attribute is missing or not TSTInfo",
        ));
    }
    if !digest_ok {
        return Err(bad(
            "the signed messageDigest attribute does not match the TSTInfo",
        ));
    }
    Ok(())
}

/// Whether the token's signer identifier names `cert`.
fn sid_matches(sid: &Tlv<'_>, cert: &Certificate) -> bool {
    let tbs = cert.tbs_certificate();
    match sid.tag {
        tag::SEQUENCE => {
            let Ok(fields) = sid.children() else {
                return false;
            };
            let [issuer, serial] = fields.as_slice() else {
                return false;
            };
            let Ok(cert_issuer) = tbs.issuer().to_der() else {
                return false;
            };
            issuer.raw == cert_issuer.as_slice()
                && serial.tag == tag::INTEGER
                && asn1::unsigned_integer(serial.content)
                    == asn1::unsigned_integer(tbs.serial_number().as_bytes())
        }
        tag::CONTEXT_0_PRIMITIVE => matches!(
            tbs.get_extension::<SubjectKeyIdentifier>(),
            Ok(Some((_, ski))) if ski.0.as_bytes() == sid.content
        ),
        _ => false,
    }
}

/// Why one timestamp authority of the trusted root did not vouch for a token.
#[derive(Debug, thiserror::Error)]
enum AuthorityError {
    /// The TSA certificate's key or chain.
    #[error(transparent)]
    Certificate(#[from] CertError),
    #[error("the TSA signature does not verify: {0}")]
    Signature(SignatureError),
    #[error("the TSA certificate lacks the timeStamping extended key usage")]
    NoTimeStampingUsage,
    #[error("the TSA certificate is valid from {not_before} to {not_after}, not at {at}")]
    NotValid {
        not_before: Timestamp,
        not_after: Timestamp,
        at: Timestamp,
    },
}

fn verify_with_authority(token: &Token<'_>, authority: &Authority) -> Result<(), AuthorityError> {
    let leaf = &authority.chain[0];
    let at = token.gen_time;
    // The signature covers the DER of the attributes as a SET OF (RFC 5652 §5.4): the same
    // bytes with the universal SET tag in place of the [0] IMPLICIT tag.
    let signed = asn1::encode(tag::SET, token.signer.signed_attrs.content);
    let scheme = SignatureScheme::from_oid(&token.signer.signature_alg).unwrap_or(
        // id-ecPublicKey and rsaEncryption name only the key; the digest algorithm names the hash.
        SignatureScheme::Ecdsa(token.signer.digest_alg),
    );
    let key = certificate::public_key(leaf)?;
    let scheme = match (scheme, &key) {
        (SignatureScheme::Ecdsa(h), super::keys::PublicKey::Rsa(_)) => SignatureScheme::RsaPkcs1(h),
        (s, _) => s,
    };
    key.verify_scheme(scheme, &signed, token.signer.signature)
        .map_err(AuthorityError::Signature)?;
    match leaf.tbs_certificate().get_extension::<ExtendedKeyUsage>() {
        Ok(Some((_, eku))) if eku.0.contains(&ID_KP_TIME_STAMPING) => {}
        _ => return Err(AuthorityError::NoTimeStampingUsage),
    }
    let (not_before, not_after) = certificate::validity(leaf);
    if at < not_before || at > not_after {
        return Err(AuthorityError::NotValid {
            not_before,
            not_after,
            at,
        });
    }
    let rest = Authority {
        uri: authority.uri.clone(),
        chain: authority.chain[1..].to_vec(),
        window: authority.window,
    };
    Ok(certificate::verify_against(leaf, &rest, at)?)
}

/// Verify one RFC 3161 timestamp over `signature` (the bundle's signature bytes) and return
/// its verified time.
pub(crate) fn verify(
    bytes: &[u8],
    signature: &[u8],
    root: &TrustedRoot,
) -> Result<Timestamp, VerifyError> {
    let token = parse(bytes)?;
    if token.imprint_alg.digest(signature) != token.imprint {
        return Err(bad(
            "the message imprint is not a hash of this bundle's signature",
        ));
    }
    check_attributes(&token)?;
    let mut reasons = Vec::new();
    for authority in &root.timestamp_authorities {
        if !sid_matches(&token.signer.sid, &authority.chain[0]) {
            continue;
        }
        match verify_with_authority(&token, authority) {
            Ok(()) => return Ok(token.gen_time),
            Err(reason) => reasons.push(format!("{}: {reason}", authority.uri)),
        }
    }
    if reasons.is_empty() {
        return Err(bad(
            "signed by a timestamp authority that is not in the trusted root",
        ));
    }
    Err(bad(reasons.join("; ")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generalized_time_with_and_without_fraction() {
        assert_eq!(
            generalized_time(b"20250612120220Z").unwrap().to_string(),
            "2025-06-12T12:02:20Z"
        );
        assert_eq!(
            generalized_time(b"20250612120220.123Z")
                .unwrap()
                .to_string(),
            "2025-06-12T12:02:20.123Z"
        );
        assert!(generalized_time(b"20250612120220+0100").is_err());
    }
}
