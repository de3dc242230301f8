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
/// `get_campaign_result`, and its default): clients time a call out, so longer waits are
/// several calls.
pub const MAX_WAIT_S: u32 = 300;

/// `wait_s`'s default: as long as one call may wait.
pub fn default_wait_s() -> u32 {
    MAX_WAIT_S
}

/// A `wait_s` argument checked against [`MAX_WAIT_S`], as the time to wait.
pub fn wait(wait_s: u32) -> Result<std::time::Duration, crate::envelope::ToolError> {
    let s = in_range(
        "wait_s",
        wait_s as usize,
        0,
        MAX_WAIT_S as usize,
        "a call waits at most 300 s; call again to wait longer",
    )?;
    Ok(std::time::Duration::from_secs(s as u64))
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
}
