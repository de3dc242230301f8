//! Why a file's content could not be described: the readers' [`ContentError`] and the
//! [`KindError`] that adds the format it was read as.

/// What went wrong reading a file as its format.
#[derive(Debug, thiserror::Error)]
pub enum ContentError {
    /// The bytes could not be read.
    #[error("{0}")]
    Read(#[from] std::io::Error),
    /// The content is not what its format says: what is wrong and where, in the format's
    /// own terms (a line, a record, a byte offset).
    #[error("{0}")]
    Malformed(String),
}

impl ContentError {
    pub fn malformed(what: impl Into<String>) -> Self {
        ContentError::Malformed(what.into())
    }
}

/// Why a file could not be described: what is wrong, where, in its own terms.
#[derive(Debug, thiserror::Error)]
#[error("{error}")]
pub struct KindError {
    /// The format it was read as (`fasta`, `pdbqt`, `fits`, …).
    pub format: &'static str,
    pub error: ContentError,
}
