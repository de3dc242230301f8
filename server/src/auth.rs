//! Bearer tokens for the HTTP transport: who may call a server that listens on a network.
//!
//! Tokens come from a token file (`<data root>/tokens.toml`, or `--token-file`) and from the
//! `SCIMCP_TOKEN` variable. The file holds one entry per person or client — a name and the
//! SHA-256 of its secret — never the secret itself: `scimcp token add NAME` prints a new
//! secret once, `scimcp token revoke NAME` removes the entry, `scimcp token list` shows the
//! names. A running server notices a changed file at the next request (it compares the
//! file's identity, size and modification time on every check), so a revocation takes
//! effect without a restart.
//!
//! Checking a presented token hashes it first and then compares the digest with every
//! known digest in constant time ([`subtle`]), without stopping at the first match: neither
//! the secret's bytes nor its length nor the position of a matching entry shape the timing.
//! (The secrets are 256 random bits, so a plain SHA-256 is the right hash: there is nothing
//! to stretch, unlike a password.)

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};
use subtle::ConstantTimeEq;

/// The variable holding one extra token, named [`ENV_TOKEN_NAME`].
pub const TOKEN_ENV: &str = "SCIMCP_TOKEN";
/// The name runs record for the `SCIMCP_TOKEN` token.
pub const ENV_TOKEN_NAME: &str = "env";
/// The token file's name inside the data root.
pub const TOKEN_FILE_NAME: &str = "tokens.toml";
/// Fewest characters a `SCIMCP_TOKEN` may have (the generated secrets have 71).
pub const MIN_SECRET_CHARS: usize = 32;
/// Prefix of generated secrets, so a leaked one is recognisable (and searchable) as ours.
const SECRET_PREFIX: &str = "scimcp_";
/// Names that mean something else in a run's `started_by`.
const RESERVED_NAMES: &[&str] = &[ENV_TOKEN_NAME, "stdio", "loopback"];
/// Version of the token file's layout.
const TOKEN_FILE_SCHEMA: u32 = 1;
/// The most bytes read from a token file (an entry takes about 150).
const TOKEN_FILE_LIMIT: u64 = 1024 * 1024;

/// Who made a request, as a run records it in `started_by`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Caller {
    /// The client that started this server over stdio.
    Stdio,
    /// A client on this computer, over loopback HTTP without a token.
    Loopback,
    /// A client that presented the token with this name.
    Token(String),
}

impl Caller {
    /// The name recorded for this caller: `stdio`, `loopback` or the token's name.
    pub fn name(&self) -> &str {
        match self {
            Caller::Stdio => "stdio",
            Caller::Loopback => "loopback",
            Caller::Token(name) => name,
        }
    }
}

/// What can go wrong with the token file or a token.
#[derive(Debug, thiserror::Error)]
pub enum TokenError {
    #[error("cannot read the token file {path}: {source}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "the token file {path} is {what}, not a regular file, so scimcp has not read it\nhint: remove it, then add tokens again with `scimcp token add NAME` (which creates the file)"
    )]
    NotRegular { path: PathBuf, what: &'static str },
    #[error(
        "the token file {path} is not valid: {message}\nhint: fix or remove the file, then add tokens again with `scimcp token add NAME`"
    )]
    Invalid { path: PathBuf, message: String },
    #[error(
        "the token file {path} may be changed by other users (mode {mode:o}), so anyone on this computer could add a token\nhint: run `chmod 600 {}` and make sure you own it", path.display()
    )]
    Unsafe { path: PathBuf, mode: u32 },
    #[error("cannot write the token file {path}: {message}")]
    Write { path: PathBuf, message: String },
    #[error(
        "{name:?} is not a usable token name: {why}\nhint: use 1-64 letters, digits, '.', '_' or '-' (e.g. a person's name: alice, lab-laptop)"
    )]
    BadName { name: String, why: String },
    #[error(
        "a token named {name:?} already exists in {path}\nhint: pick another name, or `scimcp token revoke {name}` first"
    )]
    Exists { name: String, path: PathBuf },
    #[error("no token named {name:?} in {path} (known: {known})")]
    Unknown {
        name: String,
        path: PathBuf,
        known: String,
    },
    #[error(
        "{TOKEN_ENV} has {chars} characters; a token must have at least {MIN_SECRET_CHARS} random characters\nhint: use a secret from `scimcp token add NAME`, or e.g. `openssl rand -hex 32`"
    )]
    WeakEnvToken { chars: usize },
    #[error("cannot generate a random secret: {0}")]
    Random(String),
}

/// One line of the token file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TokenEntry {
    pub name: String,
    /// SHA-256 (hex) of the secret.
    pub sha256: String,
    pub created_at: String,
}

impl TokenEntry {
    /// The first 8 hex digits of the digest: enough to tell entries apart, useless to an
    /// attacker.
    pub fn fingerprint(&self) -> &str {
        &self.sha256[..8.min(self.sha256.len())]
    }
}

#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct TokenFileDoc {
    #[serde(default = "schema_default")]
    schema_version: u32,
    #[serde(default, rename = "token")]
    tokens: Vec<TokenEntry>,
}

fn schema_default() -> u32 {
    TOKEN_FILE_SCHEMA
}

const FILE_HEADER: &str = "\
# scimcp access tokens for `scimcp serve --transport http`: one [[token]] per person or
# client. Only the SHA-256 of each secret is stored here; the secret was shown once, by
# `scimcp token add NAME`. Revoke one with `scimcp token revoke NAME` (a running server
# notices at the next request). Keep this file private (mode 0600).
";

/// The default token file of a data root.
pub fn default_token_file(data_root: &Path) -> PathBuf {
    data_root.join(TOKEN_FILE_NAME)
}

/// Check a token name: 1-64 of `[A-Za-z0-9._-]`, starting with a letter or digit, and not
/// one of the names runs use for other callers.
pub fn check_name(name: &str) -> Result<(), TokenError> {
    let bad = |why: &str| TokenError::BadName {
        name: name.to_string(),
        why: why.to_string(),
    };
    if name.is_empty() || name.len() > 64 {
        return Err(bad("it must have 1 to 64 characters"));
    }
    if !name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
    {
        return Err(bad("it may hold only letters, digits, '.', '_' and '-'"));
    }
    if !name.starts_with(|c: char| c.is_ascii_alphanumeric()) {
        return Err(bad("it must start with a letter or a digit"));
    }
    if RESERVED_NAMES.contains(&name) {
        return Err(bad("runs use this name for other callers"));
    }
    Ok(())
}

fn digest(secret: &str) -> [u8; 32] {
    use sha2::{Digest, Sha256};
    Sha256::digest(secret.as_bytes()).into()
}

fn digest_of_hex(hex_digest: &str) -> Option<[u8; 32]> {
    let bytes = hex::decode(hex_digest).ok()?;
    bytes.try_into().ok()
}

/// Read and check the token file; a missing file holds no tokens.
pub fn read_token_file(path: &Path) -> Result<Vec<TokenEntry>, TokenError> {
    match read_private(path)? {
        Some(text) => parse_token_file(path, &text),
        None => Ok(Vec::new()),
    }
}

/// The token file's text, `None` when nothing is there. What is there is checked before a
/// byte is read: a regular file (a FIFO would block the reader, and with it every request,
/// `/health` too; a link to `/dev/zero` would be read until memory runs out), owned by this
/// user or root and writable by no one else; then at most [`TOKEN_FILE_LIMIT`] bytes.
fn read_private(path: &Path) -> Result<Option<String>, TokenError> {
    use std::io::Read as _;
    let read_err = |source: std::io::Error| TokenError::Read {
        path: path.to_path_buf(),
        source,
    };
    let not_regular = |meta: &std::fs::Metadata| TokenError::NotRegular {
        path: path.to_path_buf(),
        what: scimcp_core::fs::kind_of(meta.file_type()),
    };
    // Look before opening: opening a device may itself do something, and a FIFO may block.
    match fs_err::metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(read_err(e)),
        Ok(meta) if !meta.is_file() => return Err(not_regular(&meta)),
        Ok(_) => {}
    }
    let mut options = fs_err::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use fs_err::os::unix::fs::OpenOptionsExt as _;
        use nix::fcntl::OFlag;
        // Never blocks, even if a FIFO replaced the file since the look above (reads of a
        // regular file ignore the flag).
        options.custom_flags((OFlag::O_NONBLOCK | OFlag::O_NOCTTY).bits());
    }
    let file = match options.open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(read_err(e)),
    };
    // What was opened, checked through the handle itself.
    let meta = file.metadata().map_err(read_err)?;
    if !meta.is_file() {
        return Err(not_regular(&meta));
    }
    check_file_safety(path, &meta)?;
    let mut bytes = Vec::new();
    file.take(TOKEN_FILE_LIMIT + 1)
        .read_to_end(&mut bytes)
        .map_err(read_err)?;
    let invalid = |message: String| TokenError::Invalid {
        path: path.to_path_buf(),
        message,
    };
    if bytes.len() as u64 > TOKEN_FILE_LIMIT {
        return Err(invalid(format!(
            "it is larger than {} (a token file holds a few hundred bytes per token)",
            scimcp_core::fs::size_text(TOKEN_FILE_LIMIT)
        )));
    }
    String::from_utf8(bytes)
        .map(Some)
        .map_err(|_| invalid("it is not UTF-8 text".into()))
}

fn parse_token_file(path: &Path, text: &str) -> Result<Vec<TokenEntry>, TokenError> {
    let invalid = |message: String| TokenError::Invalid {
        path: path.to_path_buf(),
        message,
    };
    let doc: TokenFileDoc = toml::from_str(text).map_err(|e| invalid(e.to_string()))?;
    if doc.schema_version != TOKEN_FILE_SCHEMA {
        return Err(invalid(format!(
            "schema_version {} is not {TOKEN_FILE_SCHEMA} (written by another scimcp version?)",
            doc.schema_version
        )));
    }
    let mut seen = std::collections::BTreeSet::new();
    for entry in &doc.tokens {
        check_name(&entry.name).map_err(|e| invalid(e.to_string()))?;
        if digest_of_hex(&entry.sha256).is_none() {
            return Err(invalid(format!(
                "token {:?}: sha256 is not 64 hex digits",
                entry.name
            )));
        }
        if !seen.insert(entry.name.as_str()) {
            return Err(invalid(format!("token {:?} is listed twice", entry.name)));
        }
    }
    Ok(doc.tokens)
}

#[cfg(unix)]
fn check_file_safety(path: &Path, meta: &std::fs::Metadata) -> Result<(), TokenError> {
    use std::os::unix::fs::MetadataExt;
    let mode = meta.mode() & 0o7777;
    let me = nix::unistd::geteuid().as_raw();
    if mode & 0o022 != 0 || (meta.uid() != me && meta.uid() != 0) {
        return Err(TokenError::Unsafe {
            path: path.to_path_buf(),
            mode,
        });
    }
    Ok(())
}

#[cfg(not(unix))]
fn check_file_safety(_path: &Path, _meta: &std::fs::Metadata) -> Result<(), TokenError> {
    Ok(())
}

/// Holds the token file's lock while changing it, so two `scimcp token` commands cannot
/// lose each other's change.
fn lock_token_file(path: &Path) -> Result<fs_err::File, TokenError> {
    let write_err = |e: &dyn std::fmt::Display| TokenError::Write {
        path: path.to_path_buf(),
        message: e.to_string(),
    };
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty())
        && !parent.exists()
    {
        scimcp_core::fs::create_private_dir(parent).map_err(|e| write_err(&e))?;
    }
    let mut lock_path = path.as_os_str().to_owned();
    lock_path.push(".lock");
    let file = fs_err::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(PathBuf::from(&lock_path))
        .map_err(|e| write_err(&e))?;
    match scimcp_core::lock::lock_exclusive(&file, TOKEN_LOCK_TIMEOUT, || {}) {
        Ok(()) => Ok(file),
        Err(scimcp_core::lock::LockWait::TimedOut(waited)) => Err(write_err(&format!(
            "its lock {} has been held for {} s by another `scimcp token` command; let it \
             finish and try again (end it if it hangs)",
            Path::new(&lock_path).display(),
            waited.as_secs()
        ))),
        Err(scimcp_core::lock::LockWait::Io(e)) => Err(write_err(&e)),
    }
}

/// A token command holds the lock for one read and one write: waiting longer than this
/// means the holder hangs.
const TOKEN_LOCK_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);

fn write_token_file(path: &Path, tokens: &[TokenEntry]) -> Result<(), TokenError> {
    let doc = TokenFileDoc {
        schema_version: TOKEN_FILE_SCHEMA,
        tokens: tokens.to_vec(),
    };
    let body = toml::to_string(&doc).map_err(|e| TokenError::Write {
        path: path.to_path_buf(),
        message: e.to_string(),
    })?;
    let text = format!("{FILE_HEADER}\n{body}");
    scimcp_core::fs::write_atomic(path, text.as_bytes(), scimcp_core::fs::Privacy::Private).map_err(
        |e| TokenError::Write {
            path: path.to_path_buf(),
            message: e.to_string(),
        },
    )
}

/// A new random secret: the prefix and 32 random bytes in hex.
fn new_secret() -> Result<String, TokenError> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| TokenError::Random(e.to_string()))?;
    Ok(format!("{SECRET_PREFIX}{}", hex::encode(bytes)))
}

/// Add a token named `name` to the file at `path` (created 0600 if missing) and return its
/// secret, which is stored nowhere.
pub fn add_token(path: &Path, name: &str) -> Result<(TokenEntry, String), TokenError> {
    check_name(name)?;
    let _lock = lock_token_file(path)?;
    let mut tokens = read_token_file(path)?;
    if tokens.iter().any(|t| t.name == name) {
        return Err(TokenError::Exists {
            name: name.to_string(),
            path: path.to_path_buf(),
        });
    }
    let secret = new_secret()?;
    let entry = TokenEntry {
        name: name.to_string(),
        sha256: hex::encode(digest(&secret)),
        created_at: jiff::Timestamp::now().to_string(),
    };
    tokens.push(entry.clone());
    write_token_file(path, &tokens)?;
    Ok((entry, secret))
}

/// Remove the token named `name` from the file at `path`.
pub fn revoke_token(path: &Path, name: &str) -> Result<TokenEntry, TokenError> {
    let _lock = lock_token_file(path)?;
    let mut tokens = read_token_file(path)?;
    let Some(at) = tokens.iter().position(|t| t.name == name) else {
        let known = if tokens.is_empty() {
            "none".to_string()
        } else {
            tokens
                .iter()
                .map(|t| t.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        };
        return Err(TokenError::Unknown {
            name: name.to_string(),
            path: path.to_path_buf(),
            known,
        });
    };
    let removed = tokens.remove(at);
    write_token_file(path, &tokens)?;
    Ok(removed)
}

/// What identifies one version of the token file: a rewrite (atomic rename) changes the
/// inode, an edit in place the size or the modification time.
#[derive(Debug, Clone, PartialEq, Eq)]
struct FileStamp {
    modified: Option<std::time::SystemTime>,
    len: u64,
    #[cfg(unix)]
    inode: (u64, u64),
}

fn stamp(path: &Path) -> Option<FileStamp> {
    let meta = fs_err::metadata(path).ok()?;
    Some(FileStamp {
        modified: meta.modified().ok(),
        len: meta.len(),
        #[cfg(unix)]
        inode: {
            use std::os::unix::fs::MetadataExt;
            (meta.dev(), meta.ino())
        },
    })
}

#[derive(Debug)]
struct FileCache {
    stamp: Option<FileStamp>,
    entries: Vec<(String, [u8; 32])>,
}

/// The tokens a server accepts: the token file's (re-read whenever it changes) and
/// `SCIMCP_TOKEN`'s.
#[derive(Debug)]
pub struct Tokens {
    file: PathBuf,
    env: Option<[u8; 32]>,
    cache: Mutex<FileCache>,
}

impl Tokens {
    /// Load the token file (errors are fatal: a server must not start on a file it cannot
    /// trust) and the `SCIMCP_TOKEN` value, if any.
    pub fn open(file: PathBuf, env_secret: Option<&str>) -> Result<Tokens, TokenError> {
        let env = match env_secret.map(str::trim).filter(|s| !s.is_empty()) {
            Some(secret) if secret.chars().count() < MIN_SECRET_CHARS => {
                return Err(TokenError::WeakEnvToken {
                    chars: secret.chars().count(),
                });
            }
            Some(secret) => Some(digest(secret)),
            None => None,
        };
        let stamp_now = stamp(&file);
        let entries = entries_of(read_token_file(&file)?);
        Ok(Tokens {
            file,
            env,
            cache: Mutex::new(FileCache {
                stamp: stamp_now,
                entries,
            }),
        })
    }

    /// The token file this server reads.
    pub fn file(&self) -> &Path {
        &self.file
    }

    /// The names of the tokens accepted now (the file's, then `env`).
    pub fn names(&self) -> Vec<String> {
        self.refresh();
        let mut names: Vec<String> = self
            .cache
            .lock()
            .expect("token cache lock")
            .entries
            .iter()
            .map(|(n, _)| n.clone())
            .collect();
        if self.env.is_some() {
            names.push(ENV_TOKEN_NAME.to_string());
        }
        names
    }

    /// True when no token at all is accepted.
    pub fn is_empty(&self) -> bool {
        self.names().is_empty()
    }

    /// Re-read the file when it changed since the last read. A file that became unreadable
    /// or invalid accepts no token until it is fixed (fail closed), and says so in the log.
    fn refresh(&self) {
        let now = stamp(&self.file);
        let mut cache = self.cache.lock().expect("token cache lock");
        if cache.stamp == now {
            return;
        }
        cache.entries = match read_token_file(&self.file) {
            Ok(entries) => entries_of(entries),
            Err(e) => {
                tracing::error!("{e}; no token from this file is accepted until it is fixed");
                Vec::new()
            }
        };
        cache.stamp = now;
    }

    /// The name of the token `presented` is, if any.
    pub fn check(&self, presented: &str) -> Option<String> {
        self.refresh();
        let presented = digest(presented);
        let cache = self.cache.lock().expect("token cache lock");
        let mut found: Option<&str> = None;
        // Every entry is compared, whatever matched before.
        for (name, known) in &cache.entries {
            let equal: bool = known.ct_eq(&presented).into();
            if equal && found.is_none() {
                found = Some(name);
            }
        }
        if let Some(env) = &self.env {
            let equal: bool = env.ct_eq(&presented).into();
            if equal && found.is_none() {
                found = Some(ENV_TOKEN_NAME);
            }
        }
        found.map(str::to_string)
    }
}

fn entries_of(entries: Vec<TokenEntry>) -> Vec<(String, [u8; 32])> {
    entries
        .into_iter()
        .filter_map(|e| digest_of_hex(&e.sha256).map(|d| (e.name, d)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_checked() {
        for ok in ["alice", "lab-laptop", "a.b_c", "7"] {
            check_name(ok).unwrap();
        }
        for bad in [
            "",
            "-x",
            "env",
            "stdio",
            "loopback",
            "a b",
            "é",
            &"x".repeat(65),
        ] {
            assert!(check_name(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn add_check_revoke_without_restart() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub").join(TOKEN_FILE_NAME);
        let (alice, secret_a) = add_token(&path, "alice").unwrap();
        assert!(secret_a.starts_with(SECRET_PREFIX) && secret_a.len() == 71);
        assert_eq!(alice.sha256, hex::encode(digest(&secret_a)));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = fs_err::metadata(&path).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o600);
        }
        // The secret is stored nowhere.
        let text = fs_err::read_to_string(&path).unwrap();
        assert!(!text.contains(&secret_a[SECRET_PREFIX.len()..]));
        assert!(matches!(
            add_token(&path, "alice"),
            Err(TokenError::Exists { .. })
        ));
        let tokens = Tokens::open(path.clone(), None).unwrap();
        assert_eq!(tokens.check(&secret_a).as_deref(), Some("alice"));
        assert_eq!(tokens.check("scimcp_wrong"), None);
        let (_, secret_b) = add_token(&path, "bob").unwrap();
        assert_eq!(tokens.check(&secret_b).as_deref(), Some("bob"));
        revoke_token(&path, "alice").unwrap();
        assert_eq!(tokens.check(&secret_a), None);
        assert_eq!(tokens.check(&secret_b).as_deref(), Some("bob"));
        assert!(matches!(
            revoke_token(&path, "alice"),
            Err(TokenError::Unknown { .. })
        ));
    }

    #[test]
    fn env_tokens_must_be_long_and_are_named_env() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(TOKEN_FILE_NAME);
        assert!(matches!(
            Tokens::open(path.clone(), Some("short")),
            Err(TokenError::WeakEnvToken { chars: 5 })
        ));
        let secret = "0123456789abcdef0123456789abcdef";
        let tokens = Tokens::open(path, Some(secret)).unwrap();
        assert_eq!(tokens.check(secret).as_deref(), Some(ENV_TOKEN_NAME));
        assert_eq!(tokens.names(), vec![ENV_TOKEN_NAME.to_string()]);
    }

    #[test]
    fn a_broken_file_fails_closed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(TOKEN_FILE_NAME);
        let (_, secret) = add_token(&path, "alice").unwrap();
        let tokens = Tokens::open(path.clone(), None).unwrap();
        assert!(tokens.check(&secret).is_some());
        scimcp_core::fs::write_atomic(
            &path,
            b"[[token]]\nname = 3\n",
            scimcp_core::fs::Privacy::Private,
        )
        .unwrap();
        assert_eq!(tokens.check(&secret), None);
        assert!(matches!(
            Tokens::open(path, None),
            Err(TokenError::Invalid { .. })
        ));
    }

    /// Run `f` on another thread; panics if it has not returned within 10 s (a blocked read).
    #[cfg(unix)]
    fn within_10_s<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(f());
        });
        rx.recv_timeout(std::time::Duration::from_secs(10))
            .expect("reading the token file blocked")
    }

    #[cfg(unix)]
    #[test]
    fn a_fifo_or_a_link_to_dev_zero_is_refused_without_reading_and_requests_go_on() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(TOKEN_FILE_NAME);
        nix::unistd::mkfifo(&path, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
        let fifo = path.clone();
        let err = within_10_s(move || Tokens::open(fifo, None).unwrap_err());
        assert!(
            matches!(err, TokenError::NotRegular { what, .. } if what.contains("FIFO")),
            "{err}"
        );
        let fifo = path.clone();
        let err = within_10_s(move || add_token(&fifo, "alice").unwrap_err());
        assert!(matches!(err, TokenError::NotRegular { .. }), "{err}");

        // A running server whose file is replaced by a FIFO, then by a link to /dev/zero:
        // every check answers at once (no token accepted: fail closed).
        fs_err::remove_file(&path).unwrap();
        let (_, secret) = add_token(&path, "alice").unwrap();
        let tokens = std::sync::Arc::new(Tokens::open(path.clone(), None).unwrap());
        assert!(tokens.check(&secret).is_some());
        fs_err::remove_file(&path).unwrap();
        nix::unistd::mkfifo(&path, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
        let (t, s) = (std::sync::Arc::clone(&tokens), secret.clone());
        assert_eq!(within_10_s(move || t.check(&s)), None);
        fs_err::remove_file(&path).unwrap();
        fs_err::os::unix::fs::symlink("/dev/zero", &path).unwrap();
        let (t, s) = (std::sync::Arc::clone(&tokens), secret.clone());
        assert_eq!(within_10_s(move || t.check(&s)), None);
        let zero = path.clone();
        let err = within_10_s(move || read_token_file(&zero).unwrap_err());
        assert!(
            matches!(err, TokenError::NotRegular { what, .. } if what.contains("character device")),
            "{err}"
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_file_others_may_write_is_refused() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(TOKEN_FILE_NAME);
        add_token(&path, "alice").unwrap();
        fs_err::set_permissions(&path, std::fs::Permissions::from_mode(0o666)).unwrap();
        let err = Tokens::open(path, None).unwrap_err();
        assert!(err.to_string().contains("chmod 600"), "{err}");
    }
}
