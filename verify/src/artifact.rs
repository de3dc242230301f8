//! The artifact a bundle is checked against, and its digests under the hash functions the
//! bundle names: a message digest, a log entry's hash, or an in-toto subject's digest may each
//! use SHA-256, SHA-384 or SHA-512.

use std::cell::OnceCell;

use crate::keys::HashAlg;

/// The artifact a bundle is checked against: its bytes, or only one digest of it (the
/// conformance protocol's `sha256:<hex>`, npm's `sha512` integrity of a tarball).
///
/// With the bytes every check can run. With a digest only, checks that need another hash
/// function are refused as unsupported rather than skipped.
#[derive(Debug, Clone, Copy)]
pub enum ArtifactInput<'a> {
    Bytes(&'a [u8]),
    Sha256([u8; 32]),
    Sha384([u8; 48]),
    Sha512([u8; 64]),
}

impl ArtifactInput<'_> {
    /// The hash function of a digest-only input.
    fn given(&self) -> Option<(HashAlg, &[u8])> {
        match self {
            ArtifactInput::Bytes(_) => None,
            ArtifactInput::Sha256(d) => Some((HashAlg::Sha256, d)),
            ArtifactInput::Sha384(d) => Some((HashAlg::Sha384, d)),
            ArtifactInput::Sha512(d) => Some((HashAlg::Sha512, d)),
        }
    }
}

/// The artifact's digests, each computed at most once and only when a check asks for it: a
/// release zip is large, and most bundles need a single hash of it.
pub(crate) struct Digests<'a> {
    input: ArtifactInput<'a>,
    computed: [OnceCell<Vec<u8>>; 3],
}

impl<'a> Digests<'a> {
    pub(crate) fn new(input: ArtifactInput<'a>) -> Self {
        Digests {
            input,
            computed: Default::default(),
        }
    }

    pub(crate) fn input(&self) -> ArtifactInput<'a> {
        self.input
    }

    /// The artifact's digest under `alg`, or `None` when only a digest under another hash
    /// function was given.
    pub(crate) fn get(&self, alg: HashAlg) -> Option<&[u8]> {
        match self.input {
            ArtifactInput::Bytes(bytes) => {
                let slot = match alg {
                    HashAlg::Sha256 => &self.computed[0],
                    HashAlg::Sha384 => &self.computed[1],
                    HashAlg::Sha512 => &self.computed[2],
                };
                Some(slot.get_or_init(|| alg.digest(bytes)))
            }
            _ => self
                .input
                .given()
                .and_then(|(given, digest)| (given == alg).then_some(digest)),
        }
    }

    /// The hash function of the digest that was given instead of the artifact, for messages.
    pub(crate) fn given_name(&self) -> Option<&'static str> {
        self.input.given().map(|(alg, _)| alg.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_digest_only_input_answers_for_its_own_hash_alone() {
        let sha256 = HashAlg::Sha256.digest(b"a");
        let digests = Digests::new(ArtifactInput::Sha256(sha256.clone().try_into().unwrap()));
        assert_eq!(digests.get(HashAlg::Sha256), Some(sha256.as_slice()));
        assert_eq!(digests.get(HashAlg::Sha512), None);
        let bytes = Digests::new(ArtifactInput::Bytes(b"a"));
        assert_eq!(bytes.get(HashAlg::Sha256), Some(sha256.as_slice()));
        assert_eq!(
            bytes.get(HashAlg::Sha512),
            Some(HashAlg::Sha512.digest(b"a").as_slice())
        );
    }
}
