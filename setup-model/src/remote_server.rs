//! A remote scimcp server — `scimcp serve --transport http` on a lab's analysis machine — as
//! `scimcp-setup install --remote URL` registers it: its validated URL, the name of its entry
//! in every client, and where the clients read the bearer token from.
//!
//! The token never passes through scimcp-setup. Each client file holds a reference to an
//! environment variable (`${SCIMCP_TOKEN}`, `${env:SCIMCP_TOKEN}`, Codex's
//! `bearer_token_env_var`, …) or, in VS Code, a password prompt; the scientist sets the
//! variable. A URL is refused when it would put a secret into every client file (a user name
//! or password, a query string or fragment) or send the token in clear text across a network
//! (`http://` to anything but this computer).
//!
//! Entry names: `scimcp-remote-<host>` by default, or `--name`. A local adapter's entry is
//! `scimcp-<adapter>`, so an adapter called `remote-<host>` would share the default name;
//! [`check_name`] refuses a remote name that is any installed or shipped adapter's entry, and
//! installing an adapter refuses a name a remote holds, so the two never meet in a file.

use std::net::{Ipv4Addr, Ipv6Addr};

use scimcp_core::install_state::{InstallState, LEGACY_ENTRY_NAME, RemoteRecord, entry_name};

/// The environment variable the clients read the token from unless `--token-env` names
/// another; the same one `scimcp serve` reads a token from on the server.
pub const DEFAULT_TOKEN_ENV: &str = "SCIMCP_TOKEN";

/// The prefix of a remote entry's default name.
pub const NAME_PREFIX: &str = "scimcp-remote-";

/// The path scimcp serves MCP at; added to a URL given without a path.
pub const MCP_PATH: &str = "/mcp";

/// Why a remote server's URL, name or token variable was refused. Nothing was changed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RemoteServerError {
    #[error("--remote {given:?} is not a server address")]
    NotUrl { given: String },
    #[error("--remote {shown}: the scheme {scheme}:// is not one scimcp serves")]
    Scheme { shown: String, scheme: String },
    #[error("--remote {shown}: http:// would send your token unencrypted across the network")]
    PlainHttp { shown: String },
    #[error(
        "--remote {shown}: the address carries a user name or password (before `@`), which \
         would be written into every client's configuration file"
    )]
    Credentials { shown: String },
    #[error(
        "--remote {shown}: the address has a query string or fragment (`?…`, `#…`), which would \
         be written into every client's configuration file and which scimcp's endpoint does not \
         take"
    )]
    Query { shown: String },
    #[error("--remote {shown}: {what}")]
    Malformed { shown: String, what: String },
    #[error(
        "--remote {shown}: {what}, which would be written into every client's configuration \
         file (a token belongs in an environment variable, not in the address)"
    )]
    Secret { shown: String, what: &'static str },
    #[error(
        "--token-env: what you gave is not an environment variable name (letters, digits and \
         `_`, not starting with a digit, at most 64 characters); it is not repeated here in \
         case it is a secret"
    )]
    TokenEnv,
    #[error(
        "--token-env takes the NAME of the environment variable that holds your token, not the \
         token itself (what you gave looks like a token; it is not repeated here)"
    )]
    TokenGiven,
    #[error("--name {given:?} is not an entry name (1 to 64 letters, digits, `-` and `_`)")]
    Name { given: String },
    #[error(
        "--name: what you gave looks like a token, which would be written into every client's \
         configuration file (it is not repeated here)"
    )]
    NameSecret,
    #[error("the entry name {name} is {holder}")]
    NameTaken { name: String, holder: String },
    #[error("{name} is already registered for {recorded}")]
    NameInUse {
        name: String,
        recorded: String,
        url: String,
    },
    #[error(
        "{name} was recorded by an older scimcp with an address or token variable that carries \
         a secret; it is not written again"
    )]
    RecordedSecret { name: String },
    #[error("no remote server {given:?} is registered here")]
    NotRegistered { given: String },
}

impl scimcp_core::failure::Hint for RemoteServerError {
    fn hint(&self) -> Option<std::borrow::Cow<'_, str>> {
        use RemoteServerError as E;
        Some(match self {
            E::Secret { .. } => format!(
                "give the plain endpoint, like https://lab-server:8443/mcp, and the token \
                 through an environment variable (--token-env NAME, default {DEFAULT_TOKEN_ENV})"
            )
            .into(),
            E::NotUrl { .. } | E::Malformed { .. } => {
                "give the server's MCP endpoint, like https://lab-server:8443/mcp".into()
            }
            E::Scheme { .. } => "use https:// (or http:// for a server on this computer)".into(),
            E::PlainHttp { .. } => "use https:// (the server needs `scimcp serve --tls-cert … \
                --tls-key …` or a reverse proxy with TLS, see docs/REMOTE.md); http:// is \
                accepted only for this computer (localhost, 127.0.0.1, [::1])"
                .into(),
            E::Credentials { .. } => format!(
                "give the address without it, and the token through an environment variable \
                 (--token-env NAME, default {DEFAULT_TOKEN_ENV})"
            )
            .into(),
            E::Query { .. } => "give https://HOST:PORT/mcp, and the token through an \
                environment variable (--token-env NAME)"
                .into(),
            E::TokenEnv => format!("e.g. --token-env {DEFAULT_TOKEN_ENV}").into(),
            E::TokenGiven => format!(
                "set it with `export {DEFAULT_TOKEN_ENV}=<token>` and pass --token-env \
                 {DEFAULT_TOKEN_ENV}, or leave --token-env out"
            )
            .into(),
            E::Name { .. } | E::NameSecret => "e.g. --name scimcp-remote-lab".into(),
            E::NameTaken { .. } => "choose another with --name NAME (remote entries and \
                adapters' `scimcp-<adapter>` entries must never share a name)"
                .into(),
            E::NameInUse { name, url, .. } => format!(
                "pass --name NAME to register {url} beside it, or `scimcp-setup uninstall \
                 --remote {name}` first to replace it"
            )
            .into(),
            E::NotRegistered { .. } => "`scimcp-setup status` lists them (by name and URL)".into(),
            E::RecordedSecret { name } => format!(
                "`scimcp-setup uninstall --remote {name}` removes its entries and the backups \
                 that hold the secret; then register the plain address, with the token in an \
                 environment variable (--token-env NAME)"
            )
            .into(),
        })
    }
}

/// A validated remote server address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteUrl {
    /// `https` (true) or `http` (false).
    pub https: bool,
    /// The host in lower case; an IPv6 address without its brackets.
    pub host: String,
    pub port: Option<u16>,
    /// The path, starting with `/`.
    pub path: String,
    /// Whether [`MCP_PATH`] was added to an address given without a path.
    pub path_added: bool,
}

impl std::fmt::Display for RemoteUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let scheme = if self.https { "https" } else { "http" };
        write!(f, "{scheme}://{}", self.authority())?;
        f.write_str(&self.path)
    }
}

impl RemoteUrl {
    /// Parse and check `text` (see the module documentation for what is refused). No
    /// error repeats a secret: what they show of the address is [`redact`]ed.
    pub fn parse(text: &str) -> Result<RemoteUrl, RemoteServerError> {
        let given = text.trim();
        let not_url = || RemoteServerError::NotUrl {
            given: redact(given),
        };
        if given.is_empty() || given.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Err(not_url());
        }
        // Clients parse a `\` as `/` (WHATWG URLs), so `https://lab\@evil/` or
        // `https:/\/…` would not mean to them what it seems to mean here.
        if given.contains('\\') {
            return Err(RemoteServerError::Malformed {
                shown: redact(given),
                what: "the address has a backslash".into(),
            });
        }
        let (scheme, rest) = given.split_once("://").ok_or_else(not_url)?;
        let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
        let (authority, tail) = rest.split_at(end);
        let path_end = tail.find(['?', '#']).unwrap_or(tail.len());
        let (path, extra) = tail.split_at(path_end);
        // What messages may show: never a user name, password, query or secret-looking part.
        let shown = redact(&format!(
            "{scheme}://{}{path}",
            authority.rsplit('@').next().unwrap_or_default()
        ));
        let https = match scheme.to_ascii_lowercase().as_str() {
            "https" => true,
            "http" => false,
            _ => {
                return Err(RemoteServerError::Scheme {
                    shown,
                    scheme: redact(scheme),
                });
            }
        };
        if authority.contains('@') {
            return Err(RemoteServerError::Credentials { shown });
        }
        if !extra.is_empty() {
            return Err(RemoteServerError::Query { shown });
        }
        let secret = |what: &'static str| RemoteServerError::Secret {
            shown: shown.clone(),
            what,
        };
        if path.contains('%') || authority.contains('%') {
            return Err(secret(
                "the address is percent-encoded (`%…`), which can hide a query or a token",
            ));
        }
        if path.contains(';') {
            return Err(secret("the path has a `;` parameter"));
        }
        if path.contains(['=', '&']) {
            return Err(secret("the path has a `key=value` part"));
        }
        if looks_secret(path) || looks_secret(authority) {
            return Err(secret(
                "a part of the address looks like a token (a long run of random letters and \
                 digits)",
            ));
        }
        let malformed = |what: String| RemoteServerError::Malformed {
            shown: shown.clone(),
            what,
        };
        let (host, port) = split_host_port(authority).map_err(&malformed)?;
        let (path, path_added) = match path {
            "" | "/" => (MCP_PATH.to_string(), true),
            p => {
                if let Some(bad) = p.chars().find(|c| !path_char(*c)) {
                    return Err(malformed(format!("the path has the character {bad:?}")));
                }
                (p.to_string(), false)
            }
        };
        let url = RemoteUrl {
            https,
            host,
            port,
            path,
            path_added,
        };
        if !url.https && !url.is_loopback() {
            return Err(RemoteServerError::PlainHttp {
                shown: url.to_string(),
            });
        }
        Ok(url)
    }

    /// `host[:port]`, an IPv6 address in brackets.
    pub fn authority(&self) -> String {
        let host = if self.host.contains(':') {
            format!("[{}]", self.host)
        } else {
            self.host.clone()
        };
        match self.port {
            Some(p) => format!("{host}:{p}"),
            None => host,
        }
    }

    /// Whether the host is this computer (`localhost`, 127.0.0.0/8, `::1`).
    pub fn is_loopback(&self) -> bool {
        self.host == "localhost"
            || self
                .host
                .parse::<Ipv4Addr>()
                .is_ok_and(|ip| ip.is_loopback())
            || self
                .host
                .parse::<Ipv6Addr>()
                .is_ok_and(|ip| ip.is_loopback())
    }
}

/// `host` and `port` of an authority (`lab:8443`, `[::1]:8765`, `10.0.0.12`).
fn split_host_port(authority: &str) -> Result<(String, Option<u16>), String> {
    let (host, port) = if let Some(rest) = authority.strip_prefix('[') {
        let (inside, after) = rest
            .split_once(']')
            .ok_or("the IPv6 address has no closing `]`")?;
        inside
            .parse::<Ipv6Addr>()
            .map_err(|_| format!("[{}] is not an IPv6 address", redact(inside)))?;
        let port = match after {
            "" => None,
            p => Some(p.strip_prefix(':').ok_or("junk after the IPv6 address")?),
        };
        (inside.to_ascii_lowercase(), port)
    } else {
        match authority.split_once(':') {
            Some((h, p)) => (h.to_ascii_lowercase(), Some(p)),
            None => (authority.to_ascii_lowercase(), None),
        }
    };
    if host.is_empty() {
        return Err("there is no host name".into());
    }
    if !host.contains(':') {
        let label_ok = |l: &str| {
            !l.is_empty()
                && l.len() <= 63
                && l.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
                && !l.starts_with('-')
                && !l.ends_with('-')
        };
        if host.len() > 253 || !host.trim_end_matches('.').split('.').all(label_ok) {
            return Err(format!(
                "{:?} is not a host name (letters, digits, `-` and `.`; a name with other \
                 letters must be given in its xn-- form)",
                redact(&host)
            ));
        }
    }
    let port =
        match port {
            None => None,
            Some(p) => Some(p.parse::<u16>().ok().filter(|p| *p > 0).ok_or_else(|| {
                format!("the port {:?} is not a number from 1 to 65535", redact(p))
            })?),
        };
    Ok((host, port))
}

/// A path character that needs no quoting anywhere the URL is written (RFC 3986 `pchar` and
/// `/`, without the sub-delimiters a client might treat specially).
fn path_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || "/-._~%:@".contains(c)
}

/// `text` as messages may show it: anything between `://` and `@` (a user name, a
/// password) left out, cut before the first character that can start a query, a parameter
/// or an escape (`?`, `#`, `;`, `%`, `\\`, `=`, `&`, whitespace), and every run that
/// [`looks_secret`] replaced by `…`.
pub fn redact(text: &str) -> String {
    let cut = text
        .find(|c: char| "?#;%\\=&".contains(c) || c.is_whitespace() || c.is_control())
        .unwrap_or(text.len());
    let mut shown = text[..cut].to_string();
    if let (Some(s), Some(at)) = (shown.find("://"), shown.rfind('@'))
        && at > s
    {
        shown = format!("{}://…@{}", &shown[..s], &shown[at + 1..]);
    }
    let mut out = String::new();
    let mut run = String::new();
    let flush = |run: &mut String, out: &mut String| {
        if looks_secret(run) {
            out.push('…');
        } else {
            out.push_str(run);
        }
        run.clear();
    };
    for c in shown.chars() {
        if secret_char(c) {
            run.push(c);
        } else {
            flush(&mut run, &mut out);
            out.push(c);
        }
    }
    flush(&mut run, &mut out);
    if cut < text.len() {
        out.push('…');
    }
    out
}

/// A character of the alphabets tokens are written in (hexadecimal, base64, base64url).
fn secret_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || "_-+".contains(c)
}

/// Whether `text` holds what looks like a token rather than a word of an address or a
/// variable name: a run of 32 or more letters and digits with a digit in it, or of 32 or more
/// hexadecimal digits (`openssl rand -hex 32`, scimcp's own `scimcp_<64 hex>`), or a run of 32 or more base64url characters
/// mixing digits, capitals and small letters with few separators (a word-built name like
/// `SCIMCP_TOKEN_OF_THE_LAB_IN_ROOM_2` or `analysis-machine-of-room-2` is neither).
pub fn looks_secret(text: &str) -> bool {
    let alnum_run = text.split(|c: char| !c.is_ascii_alphanumeric()).any(|run| {
        run.len() >= 32
            && (run.chars().any(|c| c.is_ascii_digit())
                || run.chars().all(|c| c.is_ascii_hexdigit()))
    });
    let mixed_run = text.split(|c: char| !secret_char(c)).any(|run| {
        let separators = run.chars().filter(|c| "_-+".contains(*c)).count();
        run.len() >= 32
            && separators * 8 <= run.len()
            && run.chars().any(|c| c.is_ascii_digit())
            && run.chars().any(|c| c.is_ascii_uppercase())
            && run.chars().any(|c| c.is_ascii_lowercase())
    });
    alnum_run || mixed_run
}

/// A remote server as its entries are written: name, URL and the token variable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteServer {
    /// The entry's name in every client.
    pub name: String,
    /// The validated URL (see [`RemoteUrl`]).
    pub url: String,
    /// The environment variable holding the token; `None` for a server that takes none.
    pub token_env: Option<String>,
}

impl RemoteServer {
    /// The server a receipt records under `name`.
    pub fn from_record(name: &str, record: &RemoteRecord) -> RemoteServer {
        RemoteServer {
            name: name.to_string(),
            url: record.url.clone(),
            token_env: record.token_env.clone(),
        }
    }

    /// The URL as reports show it: [`redact`]ed when today's checks would refuse it (a
    /// secret an older scimcp recorded).
    pub fn shown_url(&self) -> String {
        match RemoteUrl::parse(&self.url) {
            Ok(_) => self.url.clone(),
            Err(_) => redact(&self.url),
        }
    }

    /// The record of a new registration (no clients yet).
    pub fn record(&self) -> RemoteRecord {
        RemoteRecord {
            url: self.url.clone(),
            token_env: self.token_env.clone(),
            clients: Default::default(),
        }
    }

    /// `Bearer <reference>` where `reference` renders the token variable's name the way a
    /// client interpolates it; `None` without a token.
    pub fn bearer(&self, reference: impl Fn(&str) -> String) -> Option<String> {
        self.token_env
            .as_deref()
            .map(|var| format!("Bearer {}", reference(var)))
    }
}

/// The default entry name for `url`: `scimcp-remote-<host>`, the host's dots and colons as `-`.
pub fn default_name(url: &RemoteUrl) -> String {
    let mut host = String::new();
    for c in url.host.chars() {
        if c.is_ascii_alphanumeric() {
            host.push(c);
        } else if !host.ends_with('-') {
            host.push('-');
        }
    }
    let host = host.trim_matches('-');
    let mut name = format!("{NAME_PREFIX}{host}");
    name.truncate(64);
    name
}

/// Check a `--token-env` value.
pub fn check_token_env(name: &str) -> Result<(), RemoteServerError> {
    // `scimcp token add` prints `scimcp_` and 64 hexadecimal digits, and `openssl rand -hex
    // 32` 64 of them; both can be valid variable names: passed here by mistake they would
    // be written into every file.
    if looks_secret(name) {
        return Err(RemoteServerError::TokenGiven);
    }
    let valid = !name.is_empty()
        && name.len() <= 64
        && !name.starts_with(|c: char| c.is_ascii_digit())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if valid {
        Ok(())
    } else {
        Err(RemoteServerError::TokenEnv)
    }
}

/// Check that `name` is a valid entry name that no adapter's entry uses: the installed ones,
/// the shipped ones and the legacy `scimcp`.
pub fn check_name(name: &str, state: &InstallState) -> Result<(), RemoteServerError> {
    if looks_secret(name) {
        return Err(RemoteServerError::NameSecret);
    }
    let valid = !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if !valid {
        return Err(RemoteServerError::Name {
            given: name.to_string(),
        });
    }
    let taken = |holder: String| RemoteServerError::NameTaken {
        name: name.to_string(),
        holder,
    };
    if name == LEGACY_ENTRY_NAME {
        return Err(taken("the entry older scimcp versions wrote".into()));
    }
    for adapter in state.adapters.keys() {
        if entry_name(adapter) == name {
            return Err(taken(format!(
                "the entry of the installed adapter {adapter}"
            )));
        }
    }
    for adapter in scimcp_core::manifest::embedded_names() {
        if entry_name(adapter) == name {
            return Err(taken(format!(
                "the entry of the adapter {adapter}, which ships with scimcp"
            )));
        }
    }
    Ok(())
}

/// The recorded remote `given` names: by entry name, or by URL (as given or as validated).
pub fn find_recorded<'a>(
    state: &'a InstallState,
    given: &str,
) -> Option<(&'a String, &'a RemoteRecord)> {
    if let Some(found) = state.remotes.get_key_value(given) {
        return Some(found);
    }
    let url = RemoteUrl::parse(given).ok().map(|u| u.to_string());
    state
        .remotes
        .iter()
        .find(|(_, r)| r.url == given || url.as_deref() == Some(r.url.as_str()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<String, RemoteServerError> {
        RemoteUrl::parse(text).map(|u| u.to_string())
    }

    #[test]
    fn accepts_https_anywhere_and_http_only_on_loopback() {
        assert_eq!(
            parse("https://lab-server:8443/mcp").unwrap(),
            "https://lab-server:8443/mcp"
        );
        assert_eq!(
            parse("HTTPS://Analysis.Lab.Example/scimcp/mcp").unwrap(),
            "https://analysis.lab.example/scimcp/mcp"
        );
        assert_eq!(
            parse("http://127.0.0.1:8765/mcp").unwrap(),
            "http://127.0.0.1:8765/mcp"
        );
        assert_eq!(
            parse("http://localhost:8765").unwrap(),
            "http://localhost:8765/mcp"
        );
        assert_eq!(parse("http://[::1]:9/").unwrap(), "http://[::1]:9/mcp");
        assert!(RemoteUrl::parse("https://lab:1").unwrap().path_added);
        assert!(matches!(
            parse("http://lab-server:8765/mcp"),
            Err(RemoteServerError::PlainHttp { .. })
        ));
        assert!(matches!(
            parse("http://10.0.0.12:8765/mcp"),
            Err(RemoteServerError::PlainHttp { .. })
        ));
    }

    #[test]
    fn refuses_credentials_and_queries_without_repeating_them() {
        for url in [
            "https://alice:s3cret@lab:8443/mcp",
            "https://s3cret@lab/mcp",
        ] {
            let e = RemoteUrl::parse(url).unwrap_err();
            assert!(matches!(e, RemoteServerError::Credentials { .. }), "{e}");
            assert!(!e.to_string().contains("s3cret"), "{e}");
        }
        let e = RemoteUrl::parse("https://lab/mcp?token=s3cret").unwrap_err();
        assert!(matches!(e, RemoteServerError::Query { .. }), "{e}");
        assert!(!e.to_string().contains("s3cret"), "{e}");
        let e = RemoteUrl::parse("lab:8443?token=s3cret").unwrap_err();
        assert!(!e.to_string().contains("s3cret"), "{e}");
        assert!(matches!(
            parse("https://lab/mcp#x"),
            Err(RemoteServerError::Query { .. })
        ));
    }

    /// Every form a secret was seen hiding in (issue 26): refused, and no message repeats it.
    #[test]
    fn refuses_secrets_in_the_address_without_repeating_them() {
        let hex = "0123456789abcdef".repeat(4);
        let b64 = "Zm9vYmFyQmF6cXV4MTIzNDU2Nzg5MGFiY2RlZmdoaWprbA";
        let forms = [
            format!("https://lab.example/mcp/scimcp_{hex}"),
            format!("https://lab.example/mcp/{hex}"),
            format!("https://lab.example/{b64}/mcp"),
            format!("https://lab.example/mcp%3Ftoken%3D{hex}"),
            format!("https://lab.example/mcp;token={hex}"),
            format!("https://lab.example/mcp/token={hex}"),
            format!("https://lab.example/mcp token={hex}"),
            format!("https://lab.example/mcp\ttoken={hex}"),
            format!("https://lab.example\\@{hex}/mcp"),
            format!("https://{hex}\\@lab.example/mcp"),
            format!("https:/\\/lab.example/mcp/{hex}"),
            format!("https://lab.example/mcp?token={hex}"),
            format!("https://user:{hex}@lab.example/mcp"),
            format!("https://{hex}.lab.example/mcp"),
            format!("https://lab.example:{hex}/mcp"),
            format!("lab.example/mcp?token={hex}"),
            format!("https://lab.example/%6D%63%70/{hex}"),
        ];
        for url in &forms {
            let e = RemoteUrl::parse(url).expect_err(url);
            let shown = format!(
                "{e} {}",
                scimcp_core::failure::Hint::hint(&e).unwrap_or_default()
            );
            for secret in [hex.as_str(), b64, &hex[..16]] {
                assert!(!shown.contains(secret), "{url}: {shown}");
            }
            assert!(!redact(url).contains(&hex[..16]), "{url}: {}", redact(url));
        }
        // Ordinary addresses stay accepted, long word-built paths included.
        for ok in [
            "https://lab.example/analysis-machine-of-the-lab-in-room-2/mcp",
            "https://lab.example/My-Lab-Server-Path-2024-Production/mcp",
            "https://[2001:db8::1]:8443/mcp",
        ] {
            assert!(RemoteUrl::parse(ok).is_ok(), "{ok}");
        }
    }

    #[test]
    fn a_token_given_as_its_variable_is_refused_without_repeating_it() {
        let hex = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08";
        for given in [
            hex.to_string(),
            format!("x{hex}"),
            format!("scimcp_{hex}"),
            "Zm9vYmFyQmF6cXV4MTIzNDU2Nzg5MGFiY2RlZmdo+/=".to_string(),
        ] {
            let e = check_token_env(&given).unwrap_err();
            assert!(!e.to_string().contains(&hex[..12]), "{e}");
            assert!(!e.to_string().contains("Zm9vYmFy"), "{e}");
        }
        assert_eq!(
            check_token_env(&format!("x{hex}")),
            Err(RemoteServerError::TokenGiven)
        );
        assert_eq!(
            check_name(&format!("scimcp-remote-{hex}"), &InstallState::new()),
            Err(RemoteServerError::NameSecret)
        );
    }

    #[test]
    fn refuses_what_is_not_an_address() {
        for bad in [
            "",
            "lab-server:8443",
            "ftp://lab/mcp",
            "https://",
            "https://lab:0/mcp",
            "https://lab:99999/mcp",
            "https://lab:x/mcp",
            "https://la b/mcp",
            "https://lab_server/mcp",
            "https://[::1/mcp",
            "https://lab/m\"cp",
        ] {
            assert!(RemoteUrl::parse(bad).is_err(), "{bad:?} was accepted");
        }
    }

    #[test]
    fn names_entries_after_the_host() {
        let name = |u: &str| default_name(&RemoteUrl::parse(u).unwrap());
        assert_eq!(
            name("https://lab-server:8443/mcp"),
            "scimcp-remote-lab-server"
        );
        assert_eq!(
            name("https://analysis.lab.example/mcp"),
            "scimcp-remote-analysis-lab-example"
        );
        assert_eq!(name("http://127.0.0.1:8765/mcp"), "scimcp-remote-127-0-0-1");
        assert_eq!(name("http://[::1]:8765/mcp"), "scimcp-remote-1");
    }

    #[test]
    fn checks_names_and_token_variables() {
        let mut state = InstallState::new();
        state.adapters.insert(
            "remote-lab".into(),
            scimcp_core::install_state::AdapterRecord {
                source: scimcp_core::install_state::AdapterSource::Shipped,
                server: None,
                clients: Default::default(),
                packages: Default::default(),
            },
        );
        assert!(check_name("scimcp-remote-x", &state).is_ok());
        assert!(matches!(
            check_name("scimcp-remote-lab", &state),
            Err(RemoteServerError::NameTaken { .. })
        ));
        assert!(matches!(
            check_name("scimcp-refsci", &state),
            Err(RemoteServerError::NameTaken { .. })
        ));
        assert!(check_name("scimcp", &state).is_err());
        assert!(check_name("a b", &state).is_err());
        assert!(check_name("", &state).is_err());
        assert!(check_token_env("SCIMCP_TOKEN").is_ok());
        assert!(check_token_env("lab_token_2").is_ok());
        assert!(check_token_env("SCIMCP_TOKEN_OF_THE_ANALYSIS_MACHINE_IN_ROOM_2").is_ok());
        assert!(check_token_env("2TOKEN").is_err());
        assert!(check_token_env("MY-TOKEN").is_err());
        let secret = format!("scimcp_{}", "ab".repeat(32));
        assert_eq!(check_token_env(&secret), Err(RemoteServerError::TokenGiven));
    }
}
