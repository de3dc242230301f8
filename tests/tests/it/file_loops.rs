//! No two files inside a crate import each other, directly or around a loop: every crate's
//! `src/**/*.rs` is read, its `use crate::…`, `use super::…`, `use self::…` trees, its
//! inline `crate::…`/`super::…` paths and its relative `use child::…` are resolved to the
//! file that holds the module (module → file), and the file graph must have no cycle, as
//! crate_edges.rs holds the crate graph to the docs.
//!
//! A parent's `mod child;` declaration is not an edge (it is how the tree is built, not an
//! import), and test code (`tests.rs` files, `#[cfg(test)] mod … {}` blocks) is left out.
//! `main.rs` beside a `lib.rs` is a crate of its own and is left out too. A path that stops
//! at the crate root (`crate::Name`, the root's re-exports) is not an edge to `lib.rs`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn workspace_root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap()
}

/// Loops not yet broken (#28 item 6), each as the files of one strongly connected set
/// (relative to the workspace root). This list only shrinks: a loop whose files are not all
/// inside one entry fails the test, and so does an entry whose loop is gone (delete it; an
/// entry that merely lost files may be trimmed). Break one by moving the piece both files
/// need down into a file that imports neither.
const KNOWN_LOOPS: &[&[&str]] = &[
];

fn rs_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs_err::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rs_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The module path a file holds (`src/a/b.rs` and `src/a/b/mod.rs` → `a::b`).
fn module_of(src: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src).unwrap();
    let mut parts: Vec<String> = rel
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    let last = parts.pop().unwrap();
    let stem = last.trim_end_matches(".rs");
    if !(stem == "mod" || (parts.is_empty() && (stem == "lib" || stem == "main"))) {
        parts.push(stem.to_string());
    }
    parts
}

/// The source without comments, string literals and `#[cfg(test)]` modules.
fn code_of(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i..].starts_with(b"//") {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if b[i..].starts_with(b"/*") {
            let mut depth = 0;
            while i < b.len() {
                if b[i..].starts_with(b"/*") {
                    depth += 1;
                    i += 2;
                } else if b[i..].starts_with(b"*/") {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
        } else if b[i] == b'"' {
            i += 1;
            while i < b.len() && b[i] != b'"' {
                if b[i] == b'\\' {
                    i += 1;
                }
                i += 1;
            }
            i += 1;
            out.push_str("\"\"");
        } else {
            let c = text[i..].chars().next().unwrap();
            out.push(c);
            i += c.len_utf8();
        }
    }
    // Drop `#[cfg(test)]` items that are brace-delimited modules.
    let mut code = out;
    while let Some(at) = code.find("#[cfg(test)]") {
        let rest = &code[at + "#[cfg(test)]".len()..];
        let trimmed = rest.trim_start();
        let is_mod = trimmed.starts_with("mod ") || trimmed.starts_with("pub(crate) mod ");
        let end = match (is_mod, rest.find(['{', ';'])) {
            (true, Some(open)) if rest.as_bytes()[open] == b'{' => {
                let mut depth = 0;
                let mut end = rest.len();
                for (k, ch) in rest[open..].char_indices() {
                    match ch {
                        '{' => depth += 1,
                        '}' => {
                            depth -= 1;
                            if depth == 0 {
                                end = open + k + 1;
                                break;
                            }
                        }
                        _ => {}
                    }
                }
                end
            }
            (_, Some(semi)) if rest.as_bytes()[semi] == b';' => semi + 1,
            _ => 0,
        };
        code.replace_range(at..at + "#[cfg(test)]".len() + end, " ");
    }
    code
}

/// `a::{b, c::{d, e}}` → `a::b`, `a::c::d`, `a::c::e`.
fn expand(tree: &str, prefix: &str, out: &mut Vec<String>) {
    let tree = tree.trim();
    if let Some(open) = tree.find('{') {
        let head = format!("{prefix}{}", &tree[..open]);
        let inner = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
        let mut depth = 0;
        let mut start = 0;
        for (k, ch) in inner.char_indices() {
            match ch {
                '{' => depth += 1,
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    expand(&inner[start..k], &head, out);
                    start = k + 1;
                }
                _ => {}
            }
        }
        expand(&inner[start..], &head, out);
    } else if !tree.is_empty() {
        out.push(format!("{prefix}{tree}"));
    }
}

/// Every path the code names that may lead into the crate.
fn paths_in(code: &str) -> Vec<String> {
    let mut paths = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find("use ") {
        let before = rest[..at].chars().last();
        let after = &rest[at + 4..];
        if before.is_none_or(|c| !(c.is_alphanumeric() || c == '_'))
            && let Some(end) = after.find(';')
        {
            expand(&after[..end], "", &mut paths);
        }
        rest = after;
    }
    // Inline `crate::a::b` / `super::a` / `self::a` paths anywhere in the code.
    let b = code.as_bytes();
    for head in ["crate::", "super::", "self::"] {
        let mut from = 0;
        while let Some(k) = code[from..].find(head) {
            let at = from + k;
            from = at + head.len();
            if at > 0
                && (b[at - 1].is_ascii_alphanumeric() || b[at - 1] == b'_' || b[at - 1] == b':')
            {
                continue;
            }
            let mut end = at;
            while end < b.len()
                && (b[end].is_ascii_alphanumeric() || b[end] == b'_' || b[end] == b':')
            {
                end += 1;
            }
            paths.push(code[at..end].to_string());
        }
    }
    paths
        .into_iter()
        .map(|p| p.split_whitespace().collect::<Vec<_>>().join(""))
        .map(|p| p.split(" as ").next().unwrap().to_string())
        .collect()
}

/// The file a path from `here` leads to, if it leads into this crate.
fn resolve(
    path: &str,
    here: &[String],
    modules: &BTreeMap<Vec<String>, PathBuf>,
) -> Option<PathBuf> {
    let segs: Vec<&str> = path
        .split("::")
        .map(|s| s.split("as").next().unwrap().trim())
        .filter(|s| !s.is_empty())
        .collect();
    let mut module: Vec<String>;
    let mut i = 0;
    match segs.first()? {
        &"crate" => {
            module = Vec::new();
            i = 1;
        }
        &"self" | &"super" => {
            module = here.to_vec();
            while i < segs.len() && (segs[i] == "self" || segs[i] == "super") {
                if segs[i] == "super" {
                    module.pop()?;
                }
                i += 1;
            }
        }
        first => {
            // A relative `use child::…` of a module declared here.
            let mut child = here.to_vec();
            child.push(first.to_string());
            if !modules.contains_key(&child) {
                return None;
            }
            module = here.to_vec();
        }
    }
    // A path that stops at the crate root (`crate::Name`) names a re-export of the root's
    // facade, not a file below: no edge.
    let mut best = if module.is_empty() {
        None
    } else {
        modules.get(&module).cloned()
    };
    for seg in &segs[i..] {
        module.push(seg.to_string());
        match modules.get(&module) {
            Some(f) => best = Some(f.clone()),
            None => break,
        }
    }
    best
}

/// The strongly connected sets of more than one file (Tarjan).
fn loops(graph: &BTreeMap<PathBuf, BTreeSet<PathBuf>>) -> Vec<BTreeSet<PathBuf>> {
    struct T<'a> {
        g: &'a BTreeMap<PathBuf, BTreeSet<PathBuf>>,
        index: BTreeMap<&'a PathBuf, (usize, usize)>,
        stack: Vec<&'a PathBuf>,
        on: BTreeSet<&'a PathBuf>,
        next: usize,
        out: Vec<BTreeSet<PathBuf>>,
    }
    fn visit<'a>(t: &mut T<'a>, v: &'a PathBuf) {
        t.index.insert(v, (t.next, t.next));
        t.next += 1;
        t.stack.push(v);
        t.on.insert(v);
        for w in t.g.get(v).into_iter().flatten() {
            if !t.index.contains_key(w) {
                visit(t, w);
                let low = t.index[w].1.min(t.index[v].1);
                t.index.get_mut(v).unwrap().1 = low;
            } else if t.on.contains(w) {
                let low = t.index[w].0.min(t.index[v].1);
                t.index.get_mut(v).unwrap().1 = low;
            }
        }
        if t.index[v].0 == t.index[v].1 {
            let mut set = BTreeSet::new();
            loop {
                let w = t.stack.pop().unwrap();
                t.on.remove(w);
                set.insert(w.clone());
                if w == v {
                    break;
                }
            }
            if set.len() > 1 {
                t.out.push(set);
            }
        }
    }
    let mut t = T {
        g: graph,
        index: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        next: 0,
        out: Vec::new(),
    };
    for v in graph.keys() {
        if !t.index.contains_key(v) {
            visit(&mut t, v);
        }
    }
    t.out
}

/// Every workspace crate's file graph, keyed by file relative to the root.
fn file_graph() -> BTreeMap<PathBuf, BTreeSet<PathBuf>> {
    let root = workspace_root();
    let mut graph = BTreeMap::new();
    let mut crates = Vec::new();
    for entry in fs_err::read_dir(root).unwrap() {
        let dir = entry.unwrap().path();
        if dir.join("Cargo.toml").is_file() && dir.join("src").is_dir() {
            crates.push(dir);
        }
    }
    for dir in crates {
        let src = dir.join("src");
        let mut files = Vec::new();
        rs_files(&src, &mut files);
        let has_lib = src.join("lib.rs").is_file();
        files.retain(|f| {
            let name = f.file_name().unwrap().to_string_lossy();
            let in_src = f.strip_prefix(&src).unwrap();
            let test_code = name == "tests.rs"
                || name.ends_with("_tests.rs")
                || in_src.components().any(|c| c.as_os_str() == "tests");
            let other_root =
                (has_lib && in_src == Path::new("main.rs")) || in_src.starts_with("bin");
            !(test_code || other_root)
        });
        let modules: BTreeMap<Vec<String>, PathBuf> = files
            .iter()
            .map(|f| (module_of(&src, f), f.clone()))
            .collect();
        for file in &files {
            let here = module_of(&src, file);
            let code = code_of(&fs_err::read_to_string(file).unwrap());
            let mut to = BTreeSet::new();
            for path in paths_in(&code) {
                if let Some(target) = resolve(&path, &here, &modules)
                    && &target != file
                {
                    to.insert(target.strip_prefix(root).unwrap().to_path_buf());
                }
            }
            graph.insert(file.strip_prefix(root).unwrap().to_path_buf(), to);
        }
    }
    graph
}

#[test]
fn no_file_imports_a_file_that_imports_it() {
    let graph = file_graph();
    assert!(
        graph.keys().any(|f| f.starts_with("core/src")),
        "no crate sources found"
    );
    let known: Vec<BTreeSet<PathBuf>> = KNOWN_LOOPS
        .iter()
        .map(|l| l.iter().map(PathBuf::from).collect())
        .collect();
    let found: Vec<BTreeSet<PathBuf>> = loops(&graph);
    let show = |set: &BTreeSet<PathBuf>| {
        let names: Vec<String> = set.iter().map(|p| p.display().to_string()).collect();
        let edges: Vec<String> = set
            .iter()
            .flat_map(|a| {
                graph[a]
                    .iter()
                    .filter(|b| set.contains(*b))
                    .map(move |b| format!("    {} → {}", a.display(), b.display()))
            })
            .collect();
        format!("  {}\n{}", names.join(", "), edges.join("\n"))
    };
    let new: Vec<String> = found
        .iter()
        .filter(|f| !known.iter().any(|k| f.is_subset(k)))
        .map(show)
        .collect();
    let gone: Vec<String> = known
        .iter()
        // An entry naming a file not (yet) in the tree — another change in flight — is
        // not judged stale.
        .filter(|k| k.iter().all(|f| graph.contains_key(f)))
        .filter(|k| !found.iter().any(|f| f.is_subset(k)))
        .map(|k| {
            let names: Vec<String> = k.iter().map(|p| p.display().to_string()).collect();
            format!("  {}", names.join(", "))
        })
        .collect();
    assert!(
        new.is_empty() && gone.is_empty(),
        "import loops between files inside a crate:\n{}\n\nlisted in KNOWN_LOOPS but no longer found (delete them):\n{}",
        new.join("\n"),
        gone.join("\n")
    );
}
