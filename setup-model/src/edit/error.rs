//! Why a file could not be edited, and where in it (its own file so that the format editors
//! and the dispatch in `mod.rs` share it without importing each other).

/// Why a file could not be edited.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EditError {
    /// The file does not parse.
    #[error("line {line}, column {column}: {message}")]
    Syntax {
        line: usize,
        column: usize,
        message: String,
    },
    /// It parses, but something on the way to the entry is not what the client documents
    /// (e.g. `mcpServers` is a list), or the edit could not be made without touching more
    /// than the entry.
    #[error("{0}")]
    Shape(String),
    /// A key appears twice where scimcp's entry lives (the top-level object, or an object
    /// on the way to the entry): clients disagree on which of the two counts.
    #[error(
        "line {line}, column {column}: the key \"{key}\" appears a second time (first on line \
         {first_line}); clients disagree on which of the two counts (most read the last, some \
         the first), so an entry added to either may never be seen. Merge the two into one"
    )]
    Duplicate {
        key: String,
        line: usize,
        column: usize,
        first_line: usize,
    },
}

/// 1-based line and column (in characters) of byte `offset` in `text`.
pub(crate) fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, column)
}
