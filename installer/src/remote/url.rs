//! Which addresses a release may come from: HTTPS, or plain HTTP to this computer only.

use super::error::RemoteError;

/// Refuse anything but HTTPS, except plain HTTP to this computer (a local mirror or a test
/// server). Parsed by hand: only the scheme and the host are needed, and no URL crate is
/// otherwise built for the installer.
pub fn check_url(url: &str) -> Result<(), RemoteError> {
    let insecure = || RemoteError::Insecure {
        url: url.to_owned(),
    };
    if url
        .get(..8)
        .is_some_and(|s| s.eq_ignore_ascii_case("https://"))
    {
        return Ok(());
    }
    let rest = url
        .get(..7)
        .filter(|s| s.eq_ignore_ascii_case("http://"))
        .map(|_| &url[7..])
        .ok_or_else(insecure)?;
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    if authority.contains('@') {
        return Err(insecure());
    }
    let host = if let Some(bracketed) = authority.strip_prefix('[') {
        bracketed.split(']').next().unwrap_or_default()
    } else {
        authority.split(':').next().unwrap_or_default()
    };
    match host.to_ascii_lowercase().as_str() {
        "localhost" | "127.0.0.1" | "::1" => Ok(()),
        _ => Err(insecure()),
    }
}

/// Whether `--from` names an address rather than a local path.
pub fn is_url(text: &str) -> bool {
    let lower = text.get(..8).unwrap_or(text).to_ascii_lowercase();
    lower.starts_with("https://") || lower.starts_with("http://")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_https_or_loopback_http() {
        for ok in [
            "https://api.github.com",
            "HTTPS://example.org/x.zip",
            "http://127.0.0.1:8080/repos",
            "http://localhost/x",
            "http://[::1]:9/x",
        ] {
            assert!(check_url(ok).is_ok(), "{ok}");
        }
        for bad in [
            "http://example.org/x.zip",
            "http://127.0.0.1.evil.org/x",
            "http://localhost@evil.org/x",
            "ftp://127.0.0.1/x",
            "file:///tmp/x.zip",
            "127.0.0.1/x",
        ] {
            assert!(
                matches!(check_url(bad), Err(RemoteError::Insecure { .. })),
                "{bad}"
            );
        }
    }

    #[test]
    fn urls_are_told_from_paths() {
        assert!(is_url("https://x/y.zip"));
        assert!(is_url("HTTP://127.0.0.1/y.zip"));
        assert!(!is_url("scimcp-1.0.0.zip"));
        assert!(!is_url("./https:/x"));
    }
}
