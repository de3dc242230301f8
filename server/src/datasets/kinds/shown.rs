//! Text a file supplied, made safe to show in an answer.

/// No control or bidi characters (tabs become spaces), at most `max` chars.
pub fn shown(text: &str, max: usize) -> String {
    scimcp_core::manifest::safe_text(&text.replace('\t', " "))
        .chars()
        .take(max)
        .collect()
}
