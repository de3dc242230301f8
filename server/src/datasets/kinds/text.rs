//! Any other file: whether it is text and, when it is, its line count and first lines.

use std::io::{BufRead, Read};

use schemars::JsonSchema;
use serde::Serialize;

use super::error::ContentError;
use super::shown::shown;
/// Bytes read to tell text from binary and to show the first lines.
const HEAD_BYTES: u64 = 64 * 1024;
/// Lines shown, and their longest length in characters.
const SHOWN_LINES: usize = 10;
const MAX_LINE_CHARS: usize = 200;

/// What a file that is neither a table nor a known scientific format holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct FileFacts {
    /// UTF-8 text without NUL bytes (judged on the first 64 KiB).
    pub is_text: bool,
    /// Text: its lines.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lines: Option<u64>,
    /// Text: the first 10 lines, each cut to 200 characters, control and bidirectional
    /// characters removed.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub first_lines: Vec<String>,
    /// A VOTable: its tables, the first table's fields and rows.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub votable: Option<super::votable::VotableFacts>,
}

/// Is this (a file's first bytes) text? UTF-8 (a character cut at the end is fine), no NUL.
pub fn looks_like_text(head: &[u8]) -> bool {
    if head.contains(&0) {
        return false;
    }
    match std::str::from_utf8(head) {
        Ok(_) => true,
        Err(e) => e.error_len().is_none() && head.len() - e.valid_up_to() < 4,
    }
}

pub fn describe(reader: &mut impl BufRead) -> Result<FileFacts, ContentError> {
    let mut head = Vec::new();
    reader.by_ref().take(HEAD_BYTES).read_to_end(&mut head)?;
    if !looks_like_text(&head) {
        return Ok(FileFacts {
            is_text: false,
            lines: None,
            first_lines: Vec::new(),
            votable: None,
        });
    }
    let text = String::from_utf8_lossy(&head);
    let first_lines = text
        .lines()
        .take(SHOWN_LINES)
        .map(|l| shown(l, MAX_LINE_CHARS))
        .collect();
    let mut newlines = bytecount(&head);
    let mut last = head.last().copied();
    loop {
        let buf = reader.fill_buf()?;
        if buf.is_empty() {
            break;
        }
        newlines += bytecount(buf);
        last = buf.last().copied();
        let n = buf.len();
        reader.consume(n);
    }
    // A last line without a line break is a line too.
    let lines = newlines + u64::from(last.is_some_and(|b| b != b'\n'));
    Ok(FileFacts {
        is_text: true,
        lines: Some(lines),
        first_lines,
        votable: None,
    })
}

fn bytecount(buf: &[u8]) -> u64 {
    buf.iter().filter(|b| **b == b'\n').count() as u64
}
