//! Manifest errors that name the file, the line and column, and the field, and say what
//! to do.

use std::fmt;
use std::path::PathBuf;

/// One problem in a manifest or one of its schema files.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ManifestError {
    /// The file the problem is in (the manifest or a schema it references).
    pub file: PathBuf,
    /// 1-based line, when the problem can be placed.
    pub line: Option<usize>,
    /// 1-based column, when the problem can be placed.
    pub column: Option<usize>,
    /// Dotted path of the offending field, e.g. `workflow[0].argv[3]`.
    pub field: String,
    pub message: String,
    /// What to do about it.
    pub hint: Option<String>,
}

impl fmt::Display for ManifestError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file.display())?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
            if let Some(col) = self.column {
                write!(f, ":{col}")?;
            }
        }
        if self.field.is_empty() {
            write!(f, ": {}", self.message)?;
        } else {
            write!(f, ": {}: {}", self.field, self.message)?;
        }
        if let Some(hint) = &self.hint {
            write!(f, "\n  hint: {hint}")?;
        }
        Ok(())
    }
}

/// Every problem found in one manifest (never empty).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ManifestErrors(pub Vec<ManifestError>);

impl fmt::Display for ManifestErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, e) in self.0.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{e}")?;
        }
        Ok(())
    }
}

impl std::error::Error for ManifestErrors {}

impl ManifestErrors {
    /// The first error (there is always one).
    pub fn first(&self) -> &ManifestError {
        &self.0[0]
    }

    /// For a single error with a hint: its message without the hint, and the hint, so a
    /// printer that shows hints on their own line ([`crate::failure`]) does not show it twice.
    pub fn split_hint(&self) -> Option<(String, &str)> {
        let [one] = self.0.as_slice() else {
            return None;
        };
        let hint = one.hint.as_deref()?;
        let bare = ManifestError {
            hint: None,
            ..one.clone()
        };
        Some((bare.to_string(), hint))
    }
}

/// 1-based line and column of byte `offset` in `text`.
pub(crate) fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(text.len());
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let col = before.rfind('\n').map_or(before.chars().count(), |nl| {
        before[nl + 1..].chars().count()
    }) + 1;
    (line, col)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_col_counts_from_one() {
        let text = "a = 1\nbé = 2\n";
        assert_eq!(line_col(text, 0), (1, 1));
        assert_eq!(line_col(text, 6), (2, 1));
        assert_eq!(line_col(text, text.find('=').unwrap()), (1, 3));
        let second_eq = text.rfind('=').unwrap();
        assert_eq!(line_col(text, second_eq), (2, 4));
    }
}
