//! How every scimcp binary reports the error that stopped it: `error: <message>`, one
//! `  caused by: …` line per further cause, and `  hint: …` when the error knows what to do
//! next; with `--json`, the same three facts as one JSON object on stdout, where the
//! command's JSON result would have gone.
//!
//! Hints are kept out of messages: a message says what went wrong and where, a [`Hint`] says
//! what to do about it, so the JSON form can carry them apart and the text stays readable
//! without colour. The exit status that goes with a failure is chosen from
//! [`crate::exit`].

use std::borrow::Cow;
use std::error::Error;
use std::io::Write;

use serde::Serialize;

/// Version of the `--json` failure object; fields may be added within a version.
pub const FAILURE_SCHEMA_VERSION: u32 = 1;

/// What to do next about an error, kept apart from its message.
pub trait Hint {
    /// The next step for the person who saw this error, if there is a useful one.
    fn hint(&self) -> Option<Cow<'_, str>>;
}

/// A hint attached to an error by the code that knows the next step, for errors that travel
/// as `anyhow::Error`: its message and causes are those of `error`, and [`Failure::new`]
/// finds the hint anywhere in the chain.
#[derive(Debug)]
pub struct Hinted {
    error: Box<dyn Error + Send + Sync + 'static>,
    hint: String,
}

impl Hinted {
    pub fn new(
        error: impl Into<Box<dyn Error + Send + Sync + 'static>>,
        hint: impl Into<String>,
    ) -> Self {
        Self {
            error: error.into(),
            hint: hint.into(),
        }
    }
}

impl std::fmt::Display for Hinted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.error.fmt(f)
    }
}

impl Error for Hinted {
    fn source(&self) -> Option<&(dyn Error + 'static)> {
        self.error.source()
    }
}

impl Hint for Hinted {
    fn hint(&self) -> Option<Cow<'_, str>> {
        Some(Cow::Borrowed(&self.hint))
    }
}

/// One error, ready to print: message, the causes not already in the message, and a hint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    pub message: String,
    pub causes: Vec<String>,
    pub hint: Option<String>,
}

impl Failure {
    /// The message and causes of `error`; the hint of the first [`Hinted`] in its chain.
    ///
    /// A cause is left out when a message before it already contains it (an error that
    /// writes `cannot read {path}: {source}` and also returns that source), so no line is
    /// printed twice.
    pub fn new(error: &(dyn Error + 'static)) -> Self {
        let message = error.to_string();
        let mut shown = vec![message.clone()];
        let mut causes = Vec::new();
        let mut hint = known_hint(error);
        let mut next = error.source();
        while let Some(e) = next {
            hint = hint.or_else(|| known_hint(e));
            let text = e.to_string();
            if !text.is_empty() && !shown.iter().any(|s| s.contains(&text)) {
                causes.push(text.clone());
            }
            shown.push(text);
            next = e.source();
        }
        Self {
            message,
            causes,
            hint,
        }
    }

    /// [`Failure::new`], with the hint `error` gives through [`Hint`] (which wins).
    pub fn with_hint_of<E: Error + Hint + 'static>(error: &E) -> Self {
        let failure = Self::new(error);
        match error.hint() {
            Some(hint) => failure.hint(hint),
            None => failure,
        }
    }

    /// Replace the hint.
    pub fn hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    /// The text form: `error:`, `  caused by:` lines, then `  hint:`.
    pub fn to_text(&self) -> String {
        let mut text = format!("error: {}\n", self.message);
        for cause in &self.causes {
            text.push_str(&format!("  caused by: {cause}\n"));
        }
        if let Some(hint) = &self.hint {
            text.push_str(&format!("  hint: {hint}\n"));
        }
        text
    }

    /// The JSON form, pretty-printed: `{"schema_version": 1, "message", "causes", "hint"}`
    /// (`hint` is `null` when there is none).
    pub fn to_json(&self) -> String {
        #[derive(Serialize)]
        struct Json<'a> {
            schema_version: u32,
            message: &'a str,
            causes: &'a [String],
            hint: Option<&'a str>,
        }
        let json = Json {
            schema_version: FAILURE_SCHEMA_VERSION,
            message: &self.message,
            causes: &self.causes,
            hint: self.hint.as_deref(),
        };
        serde_json::to_string_pretty(&json).unwrap_or_default()
    }

    /// Print the text form on stderr, or with `json` the JSON form on stdout (where a
    /// `--json` command's result goes, so a script reads one place either way).
    pub fn print(&self, json: bool) {
        if json {
            let mut out = std::io::stdout().lock();
            let _ = writeln!(out, "{}", self.to_json());
            let _ = out.flush();
        } else {
            let _ = std::io::stderr()
                .lock()
                .write_all(self.to_text().as_bytes());
        }
    }
}

impl Hint for crate::dirs::NoHome {
    fn hint(&self) -> Option<std::borrow::Cow<'_, str>> {
        Some(format!("set {} to a writable directory", crate::dirs::HOME_ENV).into())
    }
}

/// The hint of an error whose type this crate knows, found by downcasting, for chains that
/// travel as `anyhow::Error` (where the [`Hint`] trait object is out of reach).
fn known_hint(error: &(dyn Error + 'static)) -> Option<String> {
    if let Some(h) = error.downcast_ref::<Hinted>() {
        return Some(h.hint.clone());
    }
    let hint = error
        .downcast_ref::<crate::dirs::NoHome>()
        .and_then(Hint::hint)?;
    Some(hint.into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    enum Inner {
        #[error("disk full")]
        Full,
    }

    #[derive(Debug, thiserror::Error)]
    enum Outer {
        /// Embeds its source in the message: the cause must not be printed again.
        #[error("cannot write /tmp/x: {0}")]
        Embeds(#[source] Inner),
        /// Names only what failed: the cause goes on its own line.
        #[error("cannot write /tmp/y")]
        Separate(#[source] Inner),
    }

    impl Hint for Outer {
        fn hint(&self) -> Option<Cow<'_, str>> {
            match self {
                Outer::Embeds(_) => None,
                Outer::Separate(_) => Some("free some space, then run it again".into()),
            }
        }
    }

    #[test]
    fn a_cause_embedded_in_the_message_is_printed_once() {
        let f = Failure::with_hint_of(&Outer::Embeds(Inner::Full));
        assert_eq!(f.to_text(), "error: cannot write /tmp/x: disk full\n");
    }

    #[test]
    fn causes_then_hint() {
        let f = Failure::with_hint_of(&Outer::Separate(Inner::Full));
        assert_eq!(
            f.to_text(),
            "error: cannot write /tmp/y\n  caused by: disk full\n  hint: free some space, then run it again\n"
        );
    }

    #[test]
    fn json_carries_message_causes_and_hint_apart() {
        let f = Failure::with_hint_of(&Outer::Separate(Inner::Full));
        insta::assert_snapshot!(f.to_json(), @r#"
        {
          "schema_version": 1,
          "message": "cannot write /tmp/y",
          "causes": [
            "disk full"
          ],
          "hint": "free some space, then run it again"
        }
        "#);
        let none: serde_json::Value =
            serde_json::from_str(&Failure::with_hint_of(&Outer::Embeds(Inner::Full)).to_json())
                .expect("json");
        assert_eq!(none["hint"], serde_json::Value::Null);
        assert_eq!(none["causes"], serde_json::json!([]));
    }

    #[test]
    fn a_hinted_error_anywhere_in_the_chain_gives_the_hint() {
        #[derive(Debug, thiserror::Error)]
        #[error("preflight could not start")]
        struct Top(#[source] Hinted);
        let top = Top(Hinted::new(Outer::Separate(Inner::Full), "look at /tmp"));
        let f = Failure::new(&top);
        assert_eq!(
            f.to_text(),
            "error: preflight could not start\n  caused by: cannot write /tmp/y\n  caused by: disk full\n  hint: look at /tmp\n"
        );
    }
}
