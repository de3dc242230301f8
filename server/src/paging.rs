//! Bounded responses: pages over long sequences and the byte ceilings every tool answer
//! stays under. Truncation is always explicit: a page says how many items exist, where the
//! next page starts, and carries the hash of the page and of the whole sequence, so a client
//! can tell it saw everything, and that nothing changed between pages.

use schemars::JsonSchema;
use scimcp_core::hash::canonical_sha256_of;
use serde::{Deserialize, Serialize};

/// Ceiling of a whole tool response (structured content plus its text copy) in the
/// default, compact view.
pub const COMPACT_CEILING: usize = 64 * 1024;
/// Ceiling of a whole tool response in the `detail = "full"` view.
pub const FULL_CEILING: usize = 1024 * 1024;

/// How much a response may carry.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Detail {
    /// Short views, pages of at most 100 items, 64 KiB per response.
    #[default]
    Compact,
    /// Long views, larger pages, 1 MiB per response.
    Full,
}

impl Detail {
    /// The byte ceiling of a response in this view.
    pub fn ceiling(self) -> usize {
        match self {
            Detail::Compact => COMPACT_CEILING,
            Detail::Full => FULL_CEILING,
        }
    }

    /// The largest page in this view for items of the given kind.
    pub fn max_page(self, compact: usize, full: usize) -> usize {
        match self {
            Detail::Compact => compact,
            Detail::Full => full,
        }
    }
}

/// One page of a longer sequence.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Page<T> {
    pub items: Vec<T>,
    /// Index of the first item of this page in the whole sequence.
    pub offset: usize,
    /// The page size in effect (after clamping the requested limit).
    pub limit: usize,
    /// Items in the whole sequence.
    pub total: usize,
    /// Where the next page starts; absent on the last page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_offset: Option<usize>,
    /// True when this page is not the whole sequence.
    pub truncated: bool,
    /// SHA-256 of the canonical JSON of `items`.
    pub page_sha256: String,
    /// SHA-256 of the canonical JSON of the whole sequence.
    pub sequence_sha256: String,
}

impl<T: Serialize + Clone> Page<T> {
    /// The page of `all` starting at `offset` with at most `limit` (≥ 1) items.
    pub fn of(all: &[T], offset: usize, limit: usize) -> Page<T> {
        let limit = limit.max(1);
        let start = offset.min(all.len());
        let end = start.saturating_add(limit).min(all.len());
        let items = all[start..end].to_vec();
        Page {
            offset: start,
            limit,
            total: all.len(),
            next_offset: (end < all.len()).then_some(end),
            truncated: items.len() < all.len(),
            page_sha256: canonical_sha256_of(&items),
            sequence_sha256: canonical_sha256_of(&all),
            items,
        }
    }
}

/// `value` of argument `field` when it lies in `min..=max`; otherwise a refusal that names
/// the field and the range (a silently clamped value would answer another question than the
/// one asked). `why_max` says where the maximum comes from.
pub fn in_range(
    field: &str,
    value: usize,
    min: usize,
    max: usize,
    why_max: &str,
) -> Result<usize, crate::envelope::ToolError> {
    if (min..=max).contains(&value) {
        return Ok(value);
    }
    Err(crate::envelope::ToolError::new(
        crate::envelope::ErrorCode::InvalidParameters,
        format!("{field} = {value} is outside {min}..={max} ({why_max})"),
        format!("pass {field} between {min} and {max}"),
    )
    .field(field))
}

/// The largest page for `detail`, explained for [`in_range`].
pub fn page_limit(
    field: &str,
    requested: Option<usize>,
    default: usize,
    detail: Detail,
    compact: usize,
    full: usize,
) -> Result<usize, crate::envelope::ToolError> {
    let why = match detail {
        Detail::Compact => {
            format!("at most {compact} per page in the compact view; detail \"full\" allows {full}")
        }
        Detail::Full => format!("at most {full} per page"),
    };
    in_range(
        field,
        requested.unwrap_or(default),
        1,
        detail.max_page(compact, full),
        &why,
    )
}

/// The longest one call may wait for runs to end (`wait_s` of `get_run_result` and
/// `get_campaign_result`): clients time a call out, so longer waits are several calls.
pub const MAX_WAIT_S: u32 = 300;

/// The default wait of a client whose deadline for one call is unknown: below the shortest
/// deadline of a client that cannot be configured (Claude Desktop's, about 60 s).
pub const SAFE_WAIT_S: u32 = 45;

/// What a wait leaves of a client's deadline: the answer must be on its way before the
/// client gives up (and the model gets an error instead of "call again").
const DEADLINE_MARGIN_S: u32 = 15;

/// Clients' own deadlines for one tool call, by a part of the name they declare in
/// `initialize` (`clientInfo.name`, compared in lower case), as measured or documented
/// (the project notes on real clients, `shared/notes/real-clients.md` beside the repository): `None` is a deadline known to be above
/// [`MAX_WAIT_S`]. A client not listed gets [`SAFE_WAIT_S`].
pub const KNOWN_CLIENT_DEADLINES: &[(&str, Option<u32>)] = &[
    // Claude Desktop: about 60 s whatever its settings (the TypeScript SDK's default).
    ("claude-ai", Some(60)),
    ("claude desktop", Some(60)),
    // Claude Code: a 300 s wait's answer arrived (far above 300 s).
    ("claude-code", None),
    // Gemini CLI and Qwen Code (a fork of it): 600 s.
    ("gemini", Some(600)),
    ("qwen", Some(600)),
    // Codex CLI: 300 s by default, so a 300 s wait loses the race.
    ("codex", Some(300)),
];

/// The deadline one call of this client must end within, and where it was learned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClientDeadline {
    /// `serve --client-timeout-s N`: what the installer wrote into the client's entry.
    Flag(u64),
    /// From the client's declared name and [`KNOWN_CLIENT_DEADLINES`].
    Known { name: String, seconds: Option<u32> },
    /// No flag, and a name that is not listed (or none).
    Unknown,
}

impl ClientDeadline {
    /// The deadline of a call: the flag wins, then the declared name.
    pub fn of(flag: Option<u64>, client_name: Option<&str>) -> ClientDeadline {
        if let Some(n) = flag {
            return ClientDeadline::Flag(n);
        }
        let Some(name) = client_name else {
            return ClientDeadline::Unknown;
        };
        let lower = name.to_lowercase();
        KNOWN_CLIENT_DEADLINES
            .iter()
            .find(|(part, _)| lower.contains(part))
            .map_or(ClientDeadline::Unknown, |(_, seconds)| {
                ClientDeadline::Known {
                    name: name.to_string(),
                    seconds: *seconds,
                }
            })
    }

    /// The longest a call may wait for this client: [`MAX_WAIT_S`], or less to end
    /// [`DEADLINE_MARGIN_S`] before a known deadline (half of a very short one).
    /// `None` when the deadline is unknown.
    fn longest(&self) -> Option<u32> {
        let seconds = match self {
            ClientDeadline::Flag(n) => Some(u32::try_from(*n).unwrap_or(u32::MAX)),
            ClientDeadline::Known { seconds, .. } => *seconds,
            ClientDeadline::Unknown => return None,
        };
        Some(match seconds {
            None => MAX_WAIT_S,
            Some(s) if s >= 2 * DEADLINE_MARGIN_S => (s - DEADLINE_MARGIN_S).min(MAX_WAIT_S),
            Some(s) => (s / 2).min(MAX_WAIT_S),
        })
    }

    /// Where the limit comes from, for the answer's words.
    fn source(&self) -> String {
        match self {
            ClientDeadline::Flag(n) => format!("--client-timeout-s {n}"),
            ClientDeadline::Known {
                name,
                seconds: Some(s),
            } => format!("{name}'s deadline of about {s} s"),
            ClientDeadline::Known {
                name,
                seconds: None,
            } => format!("{name}'s deadline, above {MAX_WAIT_S} s"),
            ClientDeadline::Unknown => "an unknown client".to_string(),
        }
    }
}

/// How long one waiting call waits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Wait {
    pub seconds: u32,
    /// True when an explicit `wait_s` was lowered to end before the client's deadline.
    pub clamped: bool,
    /// Why this long, in a few words (e.g. "45 s, the default for an unknown client").
    pub why: String,
}

impl Wait {
    pub fn duration(&self) -> std::time::Duration {
        std::time::Duration::from_secs(self.seconds.into())
    }

    /// When to call again after a pending answer: at once after a real wait (the next call
    /// waits again), after a pause when the caller asked not to wait.
    pub fn retry_after_s(&self) -> u32 {
        if self.seconds == 0 { 5 } else { 0 }
    }
}

/// The wait of one call: `asked` (`wait_s`, refused above [`MAX_WAIT_S`]) lowered below a
/// known client deadline, or, when not given, the longest wait that deadline allows
/// ([`SAFE_WAIT_S`] for an unknown client).
pub fn wait_for(
    asked: Option<u32>,
    deadline: &ClientDeadline,
) -> Result<Wait, crate::envelope::ToolError> {
    if let Some(asked) = asked {
        in_range(
            "wait_s",
            asked as usize,
            0,
            MAX_WAIT_S as usize,
            "a call waits at most 300 s; call again to wait longer",
        )?;
    }
    let longest = deadline.longest();
    Ok(match (asked, longest) {
        (Some(a), Some(l)) if a > l => Wait {
            seconds: l,
            clamped: true,
            why: format!(
                "{l} s: wait_s {a} was lowered to end before {}",
                deadline.source()
            ),
        },
        (Some(a), _) => Wait {
            seconds: a,
            clamped: false,
            why: format!("{a} s as asked"),
        },
        (None, Some(l)) => Wait {
            seconds: l,
            clamped: false,
            why: format!("{l} s, the default under {}", deadline.source()),
        },
        (None, None) => Wait {
            seconds: SAFE_WAIT_S,
            clamped: false,
            why: format!("{SAFE_WAIT_S} s, the default for a client whose deadline is unknown"),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_cover_every_item_once() {
        let all: Vec<u32> = (0..2001).collect();
        let mut seen = Vec::new();
        let mut offset = Some(0);
        let mut hashes = std::collections::BTreeSet::new();
        while let Some(o) = offset {
            let p = Page::of(&all, o, 100);
            seen.extend(p.items.iter().copied());
            hashes.insert(p.sequence_sha256.clone());
            assert!(p.truncated);
            offset = p.next_offset;
        }
        assert_eq!(seen, all);
        assert_eq!(
            hashes.len(),
            1,
            "the sequence hash is the same on every page"
        );
        let whole = Page::of(&all[..5], 0, 100);
        assert!(!whole.truncated && whole.next_offset.is_none());
        let past = Page::of(&all, 5000, 10);
        assert!(past.items.is_empty() && past.next_offset.is_none());
    }

    #[test]
    fn the_default_wait_follows_the_client_timeout_flag() {
        let flag = |n| ClientDeadline::of(Some(n), Some("codex-mcp-client"));
        // The installer's 600 s: the server's longest wait.
        assert_eq!(wait_for(None, &flag(600)).unwrap().seconds, MAX_WAIT_S);
        // Codex's own 300 s: the answer must come before it.
        assert_eq!(wait_for(None, &flag(300)).unwrap().seconds, 285);
        assert_eq!(wait_for(None, &flag(60)).unwrap().seconds, 45);
        assert_eq!(wait_for(None, &flag(10)).unwrap().seconds, 5);
        // An explicit wait above it is lowered, and says so.
        let w = wait_for(Some(300), &flag(120)).unwrap();
        assert_eq!((w.seconds, w.clamped), (105, true));
        assert!(w.why.contains("--client-timeout-s 120"), "{}", w.why);
        let w = wait_for(Some(30), &flag(120)).unwrap();
        assert_eq!((w.seconds, w.clamped), (30, false));
        // Above the server's own limit: refused, naming the range.
        assert!(wait_for(Some(301), &flag(600)).is_err());
    }

    #[test]
    fn the_default_wait_follows_the_declared_client() {
        let of = |name| wait_for(None, &ClientDeadline::of(None, Some(name))).unwrap();
        assert_eq!(of("claude-ai").seconds, 45, "Claude Desktop: about 60 s");
        assert_eq!(of("claude-code").seconds, MAX_WAIT_S);
        assert_eq!(of("gemini-cli-mcp-client").seconds, MAX_WAIT_S);
        assert_eq!(of("Codex").seconds, 285);
        // Unknown, or no name: the safe default, below every known unconfigurable deadline.
        assert_eq!(of("some-new-client").seconds, SAFE_WAIT_S);
        let unknown = wait_for(None, &ClientDeadline::Unknown).unwrap();
        assert_eq!(unknown.seconds, SAFE_WAIT_S);
        const { assert!(SAFE_WAIT_S <= 45) };
        // An unknown client asking for more gets it (its deadline is its own to know).
        assert_eq!(
            wait_for(Some(200), &ClientDeadline::Unknown)
                .unwrap()
                .seconds,
            200
        );
        // A known short deadline clamps an explicit wait.
        let w = wait_for(Some(300), &ClientDeadline::of(None, Some("claude-ai"))).unwrap();
        assert_eq!((w.seconds, w.clamped), (45, true));
        // The flag wins over the name.
        let w = wait_for(None, &ClientDeadline::of(Some(600), Some("claude-ai"))).unwrap();
        assert_eq!(w.seconds, MAX_WAIT_S);
        assert_eq!(
            wait_for(Some(0), &ClientDeadline::Unknown)
                .unwrap()
                .retry_after_s(),
            5
        );
        assert_eq!(unknown.retry_after_s(), 0);
    }
}
