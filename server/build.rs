//! Two things the release binary is made with, neither of which may ever fail a build:
//!
//! - The tool catalog (`src/tools/catalog.json`, kept pretty-printed for review) is embedded
//!   compact, exactly as serde_json writes it, so a stdio server answers `tools/list` with
//!   those bytes as they are (tools/listing.rs) instead of parsing and re-serializing 115 KB
//!   at every start.
//! - Release builds on x86-64 Linux place the functions the server runs at start next to
//!   each other (the list in `startup-order.txt`, written by `scripts/startup-order.sh`). The
//!   kernel maps 64 KiB of a binary around every page a process touches, so start-up code
//!   spread over the whole text keeps most of it resident; packed, the start touches about a
//!   megabyte and a half. Only the toolchain's own lld takes the flag, so any other linker
//!   gets nothing.

use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    let dir = PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    compact_catalog(&dir.join("src/tools/catalog.json"));
    startup_order(&dir.join("startup-order.txt"));
}

/// `catalog.json` without the whitespace between its tokens, into `OUT_DIR`.
// A build script has no fs_err (it would be one more build dependency); each panic names its
// path itself.
#[allow(clippy::disallowed_methods)]
fn compact_catalog(source: &Path) {
    println!("cargo:rerun-if-changed={}", source.display());
    let text = std::fs::read_to_string(source)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", source.display()));
    let out =
        PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets it")).join("catalog.min.json");
    std::fs::write(&out, compact(&text))
        .unwrap_or_else(|e| panic!("cannot write {}: {e}", out.display()));
}

/// JSON text with every whitespace byte outside strings removed: what `serde_json::to_string`
/// writes for the value `serde_json::to_string_pretty` wrote as `text` (the two differ only
/// there; a test in tools/mod.rs holds it). Hand-written because a build dependency on
/// serde_json would compile it a second time for the build host.
fn compact(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let (mut in_string, mut escaped) = (false, false);
    for c in text.chars() {
        if in_string {
            out.push(c);
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => in_string = false,
                _ => {}
            }
        } else if c == '"' {
            in_string = true;
            out.push(c);
        } else if !matches!(c, ' ' | '\n' | '\r' | '\t') {
            out.push(c);
        }
    }
    out
}

fn startup_order(order: &Path) {
    println!("cargo:rerun-if-changed={}", order.display());
    println!("cargo:rerun-if-env-changed=SCIMCP_NO_STARTUP_ORDER");
    if env::var_os("SCIMCP_NO_STARTUP_ORDER").is_some() || !linked_by_rust_lld() {
        return;
    }
    let Some(path) = order.to_str().filter(|p| !p.contains(',')) else {
        return; // `-Wl,` splits at commas
    };
    if order.is_file() {
        // Names the binary no longer has (a renamed function, a dependency's new version)
        // are skipped: a stale list only packs less.
        println!("cargo:rustc-link-arg-bin=scimcp=-Wl,--symbol-ordering-file={path}");
        println!("cargo:rustc-link-arg-bin=scimcp=-Wl,--no-warn-symbol-ordering");
    }
}

/// Since Rust 1.90 the x86_64-unknown-linux-gnu target links with the lld it ships, unless
/// the build names a linker of its own (a `linker` setting, or linker flags in RUSTFLAGS).
fn linked_by_rust_lld() -> bool {
    let var = |k: &str| env::var(k).unwrap_or_default();
    if var("TARGET") != "x86_64-unknown-linux-gnu" || var("PROFILE") != "release" {
        return false;
    }
    if env::var_os("RUSTC_LINKER").is_some() || var("CARGO_ENCODED_RUSTFLAGS").contains("link") {
        return false;
    }
    let rustc = env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let Ok(out) = Command::new(rustc).arg("-vV").output() else {
        return false;
    };
    let version = String::from_utf8_lossy(&out.stdout);
    let minor = version
        .lines()
        .find_map(|l| l.strip_prefix("release: 1."))
        .and_then(|rest| rest.split('.').next()?.parse::<u32>().ok());
    minor.is_some_and(|m| m >= 90)
}
