//! Checkpoints: the log's signed tree head in the signed-note format
//! (<https://github.com/C2SP/C2SP/blob/main/signed-note.md>, tlog-checkpoint).
//!
//! ```text
//! <origin>\n<tree size>\n<base64 root hash>\n[extension lines\n]
//! \n
//! — <name> <base64(4-byte key hint || signature)>\n   (one or more)
//! ```
//!
//! Only the log's own signature is checked: its line must name the log's host and carry the
//! log's key hint (the first 4 bytes of its log ID). Witness cosignatures and other lines
//! with unknown keys are ignored, wherever they appear.

use super::encoding::b64;
use super::error::VerifyError;
use super::trust_root::LogKey;

/// A parsed checkpoint.
#[derive(Debug, Clone)]
pub(crate) struct Checkpoint {
    pub(crate) origin: String,
    pub(crate) tree_size: u64,
    pub(crate) root_hash: Vec<u8>,
    /// The signed text: every body line including its newline.
    body: String,
    signatures: Vec<NoteSignature>,
}

#[derive(Debug, Clone)]
struct NoteSignature {
    name: String,
    key_hint: [u8; 4],
    signature: Vec<u8>,
}

fn bad(m: impl Into<String>) -> VerifyError {
    VerifyError::Checkpoint(m.into())
}

impl Checkpoint {
    pub(crate) fn parse(envelope: &str) -> Result<Self, VerifyError> {
        let split = envelope
            .find("\n\n")
            .ok_or_else(|| bad("no blank line between the note body and its signatures"))?;
        let body = &envelope[..=split];
        let sigs = &envelope[split + 2..];
        let mut lines = body.lines();
        let origin = lines.next().unwrap_or_default();
        if origin.is_empty() {
            return Err(bad("the origin line is empty"));
        }
        let size_line = lines.next().ok_or_else(|| bad("no tree size line"))?;
        let tree_size = size_line
            .parse::<u64>()
            .map_err(|_| bad(format!("the tree size line {size_line:?} is not a number")))?;
        let root_line = lines.next().ok_or_else(|| bad("no root hash line"))?;
        let root_hash = b64(root_line).map_err(|e| bad(format!("root hash: {e}")))?;
        if root_hash.len() != 32 {
            return Err(bad(format!(
                "the root hash has {} bytes, not 32",
                root_hash.len()
            )));
        }
        if !sigs.ends_with('\n') {
            return Err(bad("the signature block does not end with a newline"));
        }
        let mut signatures = Vec::new();
        for line in sigs.lines() {
            let rest = line
                .strip_prefix("\u{2014} ")
                .ok_or_else(|| bad(format!("{line:?} is not a signature line")))?;
            let (name, sig) = rest
                .rsplit_once(' ')
                .ok_or_else(|| bad(format!("{line:?} has no signature")))?;
            let raw = b64(sig).map_err(|e| bad(format!("signature of {name}: {e}")))?;
            if name.is_empty() || raw.len() < 5 {
                return Err(bad(format!("{line:?} is not a valid signature line")));
            }
            signatures.push(NoteSignature {
                name: name.to_owned(),
                key_hint: [raw[0], raw[1], raw[2], raw[3]],
                signature: raw[4..].to_vec(),
            });
        }
        if signatures.is_empty() {
            return Err(bad("the note carries no signature"));
        }
        Ok(Checkpoint {
            origin: origin.to_owned(),
            tree_size,
            root_hash,
            body: body.to_owned(),
            signatures,
        })
    }

    /// Verify the log's signature on this checkpoint.
    pub(crate) fn verify(&self, log: &LogKey) -> Result<(), VerifyError> {
        let host = log.host();
        // Rekor v1 origins are "<host> - <tree id>", Rekor v2 (tiles) origins are the host.
        if self.origin != host && !self.origin.starts_with(&format!("{host} - ")) {
            return Err(bad(format!(
                "origin {:?} is not the log {host}",
                self.origin
            )));
        }
        let key = log
            .key
            .as_ref()
            .map_err(|e| bad(format!("the log key of {host} is unusable: {e}")))?;
        let hint = log.log_id.get(..4).unwrap_or_default();
        let mut candidates = self
            .signatures
            .iter()
            .filter(|s| s.name == host && s.key_hint == hint)
            .peekable();
        if candidates.peek().is_none() {
            return Err(bad(format!(
                "no signature line from {host} with key hint {}",
                hex::encode(hint)
            )));
        }
        if candidates.any(|s| key.verify(self.body.as_bytes(), &s.signature).is_ok()) {
            Ok(())
        } else {
            Err(bad(format!(
                "the signature from {host} does not verify with the log's key"
            )))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_body_and_skips_nothing() {
        let cp = Checkpoint::parse(
            "example.org\n2\nAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n\n\u{2014} example.org AAAAAAAA\n",
        )
        .unwrap();
        assert_eq!(cp.origin, "example.org");
        assert_eq!(cp.tree_size, 2);
        assert_eq!(cp.signatures.len(), 1);
    }

    #[test]
    fn refuses_missing_parts() {
        assert!(Checkpoint::parse("example.org\n2\n\n\u{2014} a AAAAAAAA\n").is_err());
        assert!(
            Checkpoint::parse("example.org\n2\nAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n\n")
                .is_err()
        );
    }
}
