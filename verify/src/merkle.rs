//! Merkle tree inclusion proofs (RFC 6962 §2.1.1, verification as in RFC 9162 §2.1.3.2).

use sha2::{Digest, Sha256};

/// The hash of a log leaf: SHA-256 over `0x00 || entry`.
pub(crate) fn leaf_hash(entry: &[u8]) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update([0u8]);
    h.update(entry);
    h.finalize().into()
}

fn node_hash(left: &[u8], right: &[u8]) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update([1u8]);
    h.update(left);
    h.update(right);
    h.finalize().into()
}

/// Why an inclusion proof leads nowhere, before any hash is compared.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum ProofError {
    #[error("leaf index {index} is outside a tree of size {size}")]
    IndexOutsideTree { index: u64, size: u64 },
    #[error("a proof hash has {0} bytes, not 32")]
    HashLength(usize),
    #[error("the proof has more hashes than the tree has levels")]
    TooManyHashes,
    #[error("the proof has fewer hashes than the tree has levels")]
    TooFewHashes,
}

/// The root hash that `proof` leads to from leaf `index` of a tree of `size` leaves.
pub(crate) fn root_from_inclusion_proof(
    index: u64,
    size: u64,
    leaf: [u8; 32],
    proof: &[Vec<u8>],
) -> Result<[u8; 32], ProofError> {
    if index >= size {
        return Err(ProofError::IndexOutsideTree { index, size });
    }
    let mut fn_ = index;
    let mut sn = size - 1;
    let mut r = leaf;
    for p in proof {
        if p.len() != 32 {
            return Err(ProofError::HashLength(p.len()));
        }
        if sn == 0 {
            return Err(ProofError::TooManyHashes);
        }
        if fn_ & 1 == 1 || fn_ == sn {
            r = node_hash(p, &r);
            if fn_ & 1 == 0 {
                while fn_ & 1 == 0 && fn_ != 0 {
                    fn_ >>= 1;
                    sn >>= 1;
                }
            }
        } else {
            r = node_hash(&r, p);
        }
        fn_ >>= 1;
        sn >>= 1;
    }
    if sn != 0 {
        return Err(ProofError::TooFewHashes);
    }
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Root of a tree built the RFC 6962 way, for checking proofs against.
    fn mth(leaves: &[[u8; 32]]) -> [u8; 32] {
        match leaves.len() {
            1 => leaves[0],
            n => {
                let k = n.next_power_of_two() / 2;
                node_hash(&mth(&leaves[..k]), &mth(&leaves[k..]))
            }
        }
    }

    fn path(m: usize, leaves: &[[u8; 32]]) -> Vec<Vec<u8>> {
        let n = leaves.len();
        if n == 1 {
            return vec![];
        }
        let k = n.next_power_of_two() / 2;
        if m < k {
            let mut p = path(m, &leaves[..k]);
            p.push(mth(&leaves[k..]).to_vec());
            p
        } else {
            let mut p = path(m - k, &leaves[k..]);
            p.push(mth(&leaves[..k]).to_vec());
            p
        }
    }

    #[test]
    fn proofs_for_every_leaf_of_small_trees() {
        for size in 1..=17usize {
            let leaves: Vec<[u8; 32]> = (0..size).map(|i| leaf_hash(&[i as u8])).collect();
            let root = mth(&leaves);
            for (i, leaf) in leaves.iter().enumerate() {
                let proof = path(i, &leaves);
                let got = root_from_inclusion_proof(i as u64, size as u64, *leaf, &proof).unwrap();
                assert_eq!(got, root, "size {size} index {i}");
                if !proof.is_empty() {
                    let mut bad = proof.clone();
                    bad[0][0] ^= 1;
                    assert_ne!(
                        root_from_inclusion_proof(i as u64, size as u64, *leaf, &bad).unwrap(),
                        root
                    );
                }
            }
        }
    }

    #[test]
    fn wrong_length_proofs_are_refused() {
        let leaf = leaf_hash(b"x");
        assert!(root_from_inclusion_proof(0, 2, leaf, &[]).is_err());
        assert!(root_from_inclusion_proof(0, 1, leaf, &[vec![0; 32]]).is_err());
        assert!(root_from_inclusion_proof(2, 2, leaf, &[vec![0; 32]]).is_err());
    }
}
