//! `scimcp token add|revoke|list`: the bearer tokens of a server on a network address.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use scimcp_core::exit;
use scimcp_core::failure::Failure;

use crate::auth::{self, TokenEntry};
use crate::cli::{TokenArgs, TokenCommand};

pub(crate) fn run(args: TokenArgs) -> ExitCode {
    let mut stdout = std::io::stdout().lock();
    let mut stderr = std::io::stderr().lock();
    let file = match args.token_file.clone().map(Ok).unwrap_or_else(default_file) {
        Ok(file) => file,
        Err(e) => return fail(e.as_ref(), args.json),
    };
    let outcome = match &args.command {
        TokenCommand::Add { name } => auth::add_token(&file, name).map(|(entry, secret)| {
            if args.json {
                let report = serde_json::json!({
                    "schema_version": 1,
                    "name": entry.name,
                    "secret": secret,
                    "fingerprint": entry.fingerprint(),
                    "token_file": file,
                });
                let _ = writeln!(stdout, "{report:#}");
            } else {
                // The secret alone on stdout, so `scimcp token add alice > alice.token` works.
                let _ = writeln!(stdout, "{secret}");
            }
            let _ = writeln!(
                stderr,
                "added token {:?} (fingerprint {}) to {}.\nThis is the only time its secret is shown: give it to {}'s MCP client, which sends it as `Authorization: Bearer <secret>`. Revoke it with `scimcp token revoke {}`.",
                entry.name,
                entry.fingerprint(),
                file.display(),
                entry.name,
                entry.name,
            );
        }),
        TokenCommand::Revoke { name } => auth::revoke_token(&file, name).map(|entry| {
            if args.json {
                let report = serde_json::json!({
                    "schema_version": 1,
                    "revoked": entry.name,
                    "fingerprint": entry.fingerprint(),
                    "token_file": file,
                });
                let _ = writeln!(stdout, "{report:#}");
            }
            let _ = writeln!(
                stderr,
                "revoked token {:?} (fingerprint {}); a running server refuses it from its next request",
                entry.name,
                entry.fingerprint()
            );
        }),
        TokenCommand::List => auth::read_token_file(&file).map(|tokens| {
            list(&mut stdout, &tokens, &file, args.json);
            if tokens.is_empty() && !args.json {
                let _ = writeln!(
                    stderr,
                    "no tokens in {}; add one with `scimcp token add NAME`",
                    file.display()
                );
            }
        }),
    };
    match outcome {
        Ok(()) => exit::code(exit::SUCCESS),
        Err(e) => fail(&e, args.json),
    }
}

/// The token file could not be read or changed: a failure its user can act on (exit 1).
fn fail(e: &(dyn std::error::Error + 'static), json: bool) -> ExitCode {
    Failure::new(e).print(json);
    exit::code(exit::FAILURE)
}

fn default_file() -> anyhow::Result<PathBuf> {
    Ok(auth::default_token_file(&scimcp_core::dirs::data_root()?))
}

fn list(out: &mut impl Write, tokens: &[TokenEntry], file: &std::path::Path, json: bool) {
    if json {
        let report = serde_json::json!({
            "schema_version": 1,
            "token_file": file,
            "tokens": tokens.iter().map(|t| serde_json::json!({
                "name": t.name,
                "created_at": t.created_at,
                "fingerprint": t.fingerprint(),
            })).collect::<Vec<_>>(),
        });
        let _ = writeln!(out, "{report:#}");
        return;
    }
    for t in tokens {
        let _ = writeln!(out, "{}\t{}\t{}", t.name, t.created_at, t.fingerprint());
    }
}
