//! The workspace's crate graph is the one docs/architecture.md declares: every workspace
//! crate's dependencies on other workspace crates (normal and build: "depends on"; dev:
//! "tests use") are read from `cargo metadata` and compared with the table, so an edge
//! cannot appear (or linger in the docs) without someone deciding it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;

type Edges = BTreeMap<String, (BTreeSet<String>, BTreeSet<String>)>;

fn workspace_root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap()
}

/// `crate → (depends on, tests use)` from `cargo metadata`.
fn actual() -> Edges {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ])
        .current_dir(workspace_root())
        .output()
        .expect("run cargo metadata");
    assert!(
        out.status.success(),
        "cargo metadata failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let meta: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut edges = Edges::new();
    for package in meta["packages"].as_array().unwrap() {
        let mut normal = BTreeSet::new();
        let mut dev = BTreeSet::new();
        for dep in package["dependencies"].as_array().unwrap() {
            if dep["path"].is_null() {
                continue;
            }
            let name = dep["name"].as_str().unwrap().to_string();
            match dep["kind"].as_str() {
                Some("dev") => dev.insert(name),
                _ => normal.insert(name),
            };
        }
        dev.retain(|d| !normal.contains(d));
        edges.insert(package["name"].as_str().unwrap().to_string(), (normal, dev));
    }
    edges
}

/// The backticked `scimcp-…` names in one table cell.
fn names(cell: &str) -> BTreeSet<String> {
    cell.split('`')
        .skip(1)
        .step_by(2)
        .filter(|n| n.starts_with("scimcp-"))
        .map(String::from)
        .collect()
}

/// The same from docs/architecture.md's crate table.
fn declared() -> Edges {
    let path = workspace_root().join("docs/architecture.md");
    let text = fs_err::read_to_string(&path).unwrap();
    let mut edges = Edges::new();
    for line in text.lines().filter(|l| l.starts_with("| `scimcp-")) {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        // "", crate, job, depends on, tests use, why, ""
        assert!(
            cells.len() >= 6,
            "{}: a crate row needs five columns: {line}",
            path.display()
        );
        let name = names(cells[1]).into_iter().next().unwrap();
        edges.insert(name, (names(cells[3]), names(cells[4])));
    }
    edges
}

#[test]
fn every_workspace_edge_is_declared_in_docs_architecture() {
    let actual = actual();
    let declared = declared();
    let mut problems = Vec::new();
    for (krate, (normal, dev)) in &actual {
        let Some((want_normal, want_dev)) = declared.get(krate) else {
            problems.push(format!("{krate} has no row in the crate table"));
            continue;
        };
        for (kind, have, want) in [
            ("depends on", normal, want_normal),
            ("tests use", dev, want_dev),
        ] {
            for extra in have.difference(want) {
                problems.push(format!(
                    "{krate} → {extra} is not declared (add it to '{kind}' with the reason, or drop the dependency)"
                ));
            }
            for gone in want.difference(have) {
                problems.push(format!(
                    "{krate} → {gone} is declared under '{kind}' but no longer exists (remove it from the table)"
                ));
            }
        }
    }
    for krate in declared.keys().filter(|k| !actual.contains_key(*k)) {
        problems.push(format!(
            "the table has a row for {krate}, which is not a workspace crate"
        ));
    }
    assert!(
        problems.is_empty(),
        "docs/architecture.md's crate table and the workspace disagree:\n  {}",
        problems.join("\n  ")
    );
}

/// Every package `krate` links (normal and build dependencies, transitively, on this
/// platform), by name, from `cargo tree`.
fn linked_by(krate: &str) -> BTreeSet<String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .args([
            "tree",
            "--offline",
            "-p",
            krate,
            "-e",
            "normal,build",
            "--prefix",
            "none",
        ])
        .current_dir(workspace_root())
        .output()
        .expect("run cargo tree");
    assert!(
        out.status.success(),
        "cargo tree failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .skip(1)
        .filter_map(|l| l.split_whitespace().next())
        .map(String::from)
        .collect()
}

/// The doctor reads what the installer writes through `scimcp-setup-model` and runs the
/// installed `scimcp-setup repair` for `--fix`: it never links the installer, nor the
/// download and terminal-progress crates only the installer needs.
#[test]
fn the_doctor_does_not_link_the_installer() {
    let linked = linked_by("scimcp-doctor");
    assert!(linked.contains("scimcp-setup-model"), "{linked:?}");
    for banned in ["scimcp-installer", "self_update", "indicatif"] {
        assert!(
            !linked.contains(banned),
            "scimcp-doctor links {banned} (directly or through another crate)"
        );
    }
}

/// The release tool runs git, cargo, npx and the suite's binaries through `scimcp-process`
/// (time limits, process groups, bounded output), and never links the server or the
/// installer it drives only through their binaries.
#[test]
fn the_release_tool_runs_its_children_through_scimcp_process() {
    let linked = linked_by("scimcp-release");
    assert!(linked.contains("scimcp-process"), "{linked:?}");
    for banned in ["scimcp-server", "scimcp-installer"] {
        assert!(
            !linked.contains(banned),
            "scimcp-release links {banned} (directly or through another crate)"
        );
    }
}

/// The MCP client starts its `scimcp serve` child through `scimcp-process` (own group, ended
/// whole), not through rmcp's child transport.
#[test]
fn the_client_starts_its_server_through_scimcp_process() {
    let linked = linked_by("scimcp-client");
    assert!(linked.contains("scimcp-process"), "{linked:?}");
}

#[test]
fn the_table_reader_sees_what_is_written() {
    assert_eq!(
        names("`scimcp-core`, `scimcp-process` and `rmcp`"),
        ["scimcp-core", "scimcp-process"].map(String::from).into()
    );
    assert!(names("—").is_empty());
}

/// What is wrong with a crate root's public surface: a public module (everything in it
/// would be reachable from outside), or a `pub use` without a `///` line above it saying
/// which outside user it is for.
fn surface_problems(lib_rs: &str) -> Vec<String> {
    let lines: Vec<&str> = lib_rs.lines().map(str::trim_start).collect();
    let mut problems = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let n = i + 1;
        if line.starts_with("pub mod ") {
            problems.push(format!(
                "line {n}: `{line}` makes a whole module public; make it `mod` and name what an outside user needs in the `pub use` block"
            ));
        }
        // The doc line sits above the item's attributes, if it has any.
        let documented = lines[..i]
            .iter()
            .rev()
            .find(|l| !l.starts_with("#["))
            .is_some_and(|l| l.starts_with("///"));
        if line.starts_with("pub use ") && !documented {
            problems.push(format!(
                "line {n}: `{line}` has no `///` line saying which outside user it is for"
            ));
        }
    }
    problems
}

/// The server's modules are private: its surface only grows by a named, documented
/// re-export in server/src/lib.rs (what `scimcp-bench` and these tests use).
#[test]
fn the_server_exports_named_items_not_modules() {
    let path = workspace_root().join("server/src/lib.rs");
    let text = fs_err::read_to_string(&path).unwrap();
    let problems = surface_problems(&text);
    assert!(
        problems.is_empty(),
        "{}:\n  {}",
        path.display(),
        problems.join("\n  ")
    );
    assert!(
        text.contains("pub use "),
        "{}: no `pub use` block (did the surface move?)",
        path.display()
    );
}

#[test]
fn the_surface_reader_sees_what_is_written() {
    assert_eq!(
        surface_problems(
            "mod a;\npub(crate) mod b;\n/// For the bench.\n#[cfg(unix)]\npub use a::X;\n"
        ),
        Vec::<String>::new()
    );
    let problems = surface_problems("pub mod a;\npub use a::X;\n");
    assert_eq!(problems.len(), 2, "{problems:?}");
    assert!(
        problems[0].starts_with("line 1: `pub mod a;`"),
        "{problems:?}"
    );
    assert!(
        problems[1].starts_with("line 2: `pub use a::X;`"),
        "{problems:?}"
    );
}
