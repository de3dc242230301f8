//! `[workflow.progress]`: how to read a CLI's own progress lines ("epoch 3/10", "fitting
//! model …") from what it prints, so a client waiting on a run hears more than "running".
//!
//! The pattern is a regular expression (Rust `regex` syntax: linear time, so a hostile or
//! careless pattern cannot stall the server on a long log) with up to three named groups:
//! `done` and `total` (numbers) and `message` (text). Only the newest matching line counts.

use std::collections::HashMap;
use std::sync::{LazyLock, Mutex};

use regex::Regex;
use serde::{Deserialize, Serialize};

/// The group names a pattern may use.
pub const PROGRESS_GROUPS: [&str; 3] = ["done", "total", "message"];

/// A line that long or longer is not a progress line (a flood of bytes without a newline).
const MAX_LINE: usize = 4096;

/// Which stream the CLI prints its progress on.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum ProgressStream {
    #[default]
    Stdout,
    Stderr,
}

/// `[workflow.progress]` as written in a manifest.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ProgressSpec {
    pub pattern: String,
    #[serde(default)]
    pub stream: ProgressStream,
}

impl ProgressSpec {
    /// The compiled pattern, or what is wrong with it (a syntax error, an unknown group
    /// name, no `done` or `message` group, `total` without `done`).
    ///
    /// A pattern compiles once per process: a manifest's workflows usually share one, and
    /// the loader's check and the server's progress reads ask again. Compiling was the largest
    /// single cost of a server's start (a Unicode `.+` builds a DFA over every code point),
    /// and a cloned `Regex` shares the compiled program.
    pub fn compile(&self) -> Result<Regex, ProgressPatternError> {
        static COMPILED: LazyLock<Mutex<HashMap<String, Regex>>> = LazyLock::new(Default::default);
        let cached = COMPILED
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .get(&self.pattern)
            .cloned();
        if let Some(re) = cached {
            return Ok(re);
        }
        let re = Self::compile_uncached(&self.pattern)?;
        let mut compiled = COMPILED
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        // A process checking many manifests (the doctor, tests) keeps a bounded cache.
        if compiled.len() >= 64 {
            compiled.clear();
        }
        compiled.insert(self.pattern.clone(), re.clone());
        Ok(re)
    }

    fn compile_uncached(pattern: &str) -> Result<Regex, ProgressPatternError> {
        let re = regex::RegexBuilder::new(pattern)
            .size_limit(1 << 20)
            .build()
            .map_err(ProgressPatternError::DoesNotCompile)?;
        let names: Vec<&str> = re.capture_names().flatten().collect();
        if let Some(bad) = names.iter().find(|n| !PROGRESS_GROUPS.contains(n)) {
            return Err(ProgressPatternError::UnknownGroup((*bad).to_string()));
        }
        let has = |g: &str| names.contains(&g);
        if !has("done") && !has("message") {
            return Err(ProgressPatternError::SaysNothing);
        }
        if has("total") && !has("done") {
            return Err(ProgressPatternError::TotalWithoutDone);
        }
        Ok(re)
    }
}

/// What is wrong with a `[workflow.progress]` pattern (the loader places it on the
/// pattern's field; the regex error is part of the message, not a separate cause).
#[derive(Debug, Clone, thiserror::Error)]
pub enum ProgressPatternError {
    #[error("the pattern does not compile: {0}")]
    DoesNotCompile(regex::Error),
    #[error("unknown group '{0}': a progress pattern's named groups are done, total and message")]
    UnknownGroup(String),
    #[error(
        "the pattern has neither a 'done' nor a 'message' group, so a matching line says nothing"
    )]
    SaysNothing,
    #[error("a 'total' group needs a 'done' group")]
    TotalWithoutDone,
}

/// True for what must never reach a progress message: control characters, the
/// bidirectional embeddings, overrides and isolates (U+202A–U+202E, U+2066–U+2069), the
/// direction marks (U+200E, U+200F, U+061C) and the line and paragraph separators (U+2028,
/// U+2029). A CLI's output is not trusted text: a right-to-left override makes a client show
/// a message reversed, a separator starts a line the CLI did not print.
pub fn is_unsafe_in_text(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{202A}'..='\u{202E}'
                | '\u{2066}'..='\u{2069}'
                | '\u{200E}'
                | '\u{200F}'
                | '\u{061C}'
                | '\u{2028}'
                | '\u{2029}'
        )
}

/// `text` without what [`is_unsafe_in_text`] names.
pub fn safe_text(text: &str) -> String {
    text.chars().filter(|c| !is_unsafe_in_text(*c)).collect()
}

/// What the newest progress line said.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CliProgress {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub done: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

impl CliProgress {
    /// The newest line of `text` the pattern matches with something to say. Lines end at
    /// `\n` or `\r` (progress bars redraw with `\r`); a partial last line is still read.
    pub fn latest(re: &Regex, text: &str) -> Option<CliProgress> {
        text.split(['\n', '\r'])
            .rev()
            .filter(|line| !line.is_empty() && line.len() < MAX_LINE)
            .find_map(|line| CliProgress::of_line(re, line))
    }

    fn of_line(re: &Regex, line: &str) -> Option<CliProgress> {
        let caps = re.captures(line)?;
        let number = |g: &str| {
            caps.name(g)
                .and_then(|m| m.as_str().trim().parse::<f64>().ok())
                .filter(|v| v.is_finite() && *v >= 0.0)
        };
        let message = caps
            .name("message")
            .map(|m| {
                m.as_str()
                    .chars()
                    .filter(|c| !is_unsafe_in_text(*c))
                    .take(200)
                    .collect::<String>()
                    .trim()
                    .to_string()
            })
            .filter(|m| !m.is_empty());
        let done = number("done");
        // A total below what is done is the CLI's own confusion; it is dropped, not shown.
        let total = number("total").filter(|t| done.is_some_and(|d| *t >= d));
        (done.is_some() || message.is_some()).then_some(CliProgress {
            done,
            total,
            message,
        })
    }

    /// One short phrase: "3/10 (30%) epoch done", "fitting the model", "3 done".
    pub fn describe(&self) -> String {
        let amount = match (self.done, self.total) {
            (Some(d), Some(t)) if t > 0.0 => {
                Some(format!("{}/{} ({:.0}%)", num(d), num(t), 100.0 * d / t))
            }
            (Some(d), _) => Some(num(d)),
            _ => None,
        };
        match (amount, &self.message) {
            (Some(a), Some(m)) => format!("{a} {m}"),
            (Some(a), None) => a,
            (None, Some(m)) => m.clone(),
            (None, None) => String::new(),
        }
    }
}

fn num(v: f64) -> String {
    if v.fract() == 0.0 && v < 1e15 {
        format!("{}", v as u64)
    } else {
        format!("{v}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(pattern: &str) -> ProgressSpec {
        ProgressSpec {
            pattern: pattern.into(),
            stream: ProgressStream::Stdout,
        }
    }

    #[test]
    fn patterns_are_checked() {
        assert!(
            spec(r"^epoch (?P<done>\d+)/(?P<total>\d+)")
                .compile()
                .is_ok()
        );
        assert!(spec(r"^stage: (?P<message>.+)$").compile().is_ok());
        let e = spec(r"(?P<done>\d+").compile().unwrap_err().to_string();
        assert!(e.contains("does not compile"), "{e}");
        let e = spec(r"(?P<step>\d+)").compile().unwrap_err().to_string();
        assert!(e.contains("unknown group 'step'"), "{e}");
        let e = spec(r"epoch \d+").compile().unwrap_err().to_string();
        assert!(e.contains("neither"), "{e}");
        let e = spec(r"(?P<total>\d+) (?P<message>.*)")
            .compile()
            .unwrap_err()
            .to_string();
        assert!(e.contains("needs a 'done'"), "{e}");
    }

    #[test]
    fn the_newest_matching_line_wins() {
        let re = spec(r"^epoch (?P<done>\d+)/(?P<total>\d+)(?: loss=(?P<message>\S+))?")
            .compile()
            .unwrap();
        let log = "loading\nepoch 1/10 loss=0.9\nepoch 2/10 loss=0.5\nwarning: slow\n";
        let p = CliProgress::latest(&re, log).unwrap();
        assert_eq!(p.done, Some(2.0));
        assert_eq!(p.total, Some(10.0));
        assert_eq!(p.message.as_deref(), Some("0.5"));
        assert_eq!(p.describe(), "2/10 (20%) 0.5");
        // Progress bars redraw with carriage returns; a partial last line counts.
        let bar = "epoch 3/10\repoch 4/10\repoch 5/1";
        assert_eq!(CliProgress::latest(&re, bar).unwrap().done, Some(5.0));
        assert_eq!(CliProgress::latest(&re, bar).unwrap().total, None);
        assert!(CliProgress::latest(&re, "nothing here\n").is_none());
        assert!(CliProgress::latest(&re, "").is_none());
    }

    #[test]
    fn odd_numbers_and_long_lines_say_nothing_wrong() {
        let re = spec(r"(?P<done>\S+) of (?P<total>\S+)").compile().unwrap();
        assert!(CliProgress::latest(&re, "NaN of 10").is_none());
        assert!(CliProgress::latest(&re, "-1 of 10").is_none());
        let p = CliProgress::latest(&re, "7 of 3").unwrap();
        assert_eq!((p.done, p.total), (Some(7.0), None));
        assert_eq!(p.describe(), "7");
        let long = format!("1 of 2{}", " ".repeat(MAX_LINE));
        assert!(CliProgress::latest(&re, &long).is_none());
        let re = spec(r"^(?P<message>.*)$").compile().unwrap();
        let p = CliProgress::latest(&re, &"x".repeat(1000)).unwrap();
        assert_eq!(p.message.unwrap().len(), 200);
    }

    #[test]
    fn bidirectional_controls_and_separators_never_reach_a_message() {
        let re = spec(r"^stage: (?P<message>.*)$").compile().unwrap();
        let hostile = "stage: fit\u{202E}txt.exe\u{202C} a\u{2028}b\u{2029}c\u{200E}\u{200F}\u{061C}\u{2066}d\u{2069}\u{202A}\u{202B}\u{202D}\u{2067}\u{2068}\u{7}e";
        let p = CliProgress::latest(&re, hostile).unwrap();
        assert_eq!(p.message.as_deref(), Some("fittxt.exe abcde"));
        // Other non-ASCII text stays as printed.
        assert_eq!(safe_text("épaisseur α→β 日本"), "épaisseur α→β 日本");
        for c in [
            '\u{202A}', '\u{202E}', '\u{2066}', '\u{2069}', '\u{2028}', '\u{2029}',
        ] {
            assert!(is_unsafe_in_text(c), "{c:?}");
        }
        assert!(!is_unsafe_in_text('\u{2070}'));
    }
}
