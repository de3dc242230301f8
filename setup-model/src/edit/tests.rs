//! Editor behaviour on real-looking files: only the entry changes, comments and unrelated
//! keys survive byte for byte, and a file that does not parse is refused with a position.

use super::{EditError, Format, Slot};
use crate::entry::Entry;

fn entry() -> Entry {
    Entry::map([
        ("command", Entry::str("/opt/Données/current/bin/scimcp")),
        ("args", Entry::strs(["serve", "--adapter", "refsci"])),
    ])
}

const MCP: Slot<'static> = Slot {
    container: &["mcpServers"],
    name: "scimcp",
};

/// Set, check the entry reads back, remove, and get the original bytes again.
fn round_trip(format: Format, slot: Slot<'_>, original: &str) -> String {
    let set = format.set(original, slot, &entry()).unwrap();
    assert_eq!(format.read(&set, slot).unwrap(), Some(entry().to_json()));
    assert_eq!(
        format.set(&set, slot, &entry()).unwrap(),
        set,
        "setting twice is a no-op"
    );
    let (removed, _) = format.remove(&set, slot).unwrap();
    assert_eq!(removed, original, "removing restores the original bytes");
    set
}

#[test]
fn jsonc_keeps_comments_trailing_commas_and_other_servers() {
    let original = "{\n  // user comment\n  \"mcpServers\": {\n    /* theirs */\n    \"other\": { \"command\": \"x\" },\n  },\n  \"globalShortcut\": \"Ctrl+Space\"\n}\n";
    let set = round_trip(Format::Json, MCP, original);
    assert!(
        set.contains("// user comment") && set.contains("/* theirs */"),
        "{set}"
    );
    assert!(set.contains("\"globalShortcut\": \"Ctrl+Space\""));
}

#[test]
fn json_empty_and_missing_container_get_created() {
    let set = Format::Json.set("", MCP, &entry()).unwrap();
    assert!(set.ends_with("}\n"), "{set}");
    assert_eq!(
        Format::Json.read(&set, MCP).unwrap(),
        Some(entry().to_json())
    );
    let (_, empty) = Format::Json.remove(&set, MCP).unwrap();
    assert!(empty, "only the empty container is left");
    let set = Format::Json.set("{\"theme\": 1}", MCP, &entry()).unwrap();
    assert!(set.contains("\"theme\": 1"));
    let (left, empty) = Format::Json.remove(&set, MCP).unwrap();
    assert!(!empty, "{left}");
}

#[test]
fn json_errors_name_line_and_column() {
    let err = Format::Json
        .set("{\n  \"mcpServers\": {\n    \"a\": 1,\n", MCP, &entry())
        .unwrap_err();
    // The unterminated object that starts on line 2.
    assert!(
        matches!(
            err,
            EditError::Syntax {
                line: 2,
                column: 17,
                ..
            }
        ),
        "{err:?}"
    );
    let err = Format::Json
        .set("{\"mcpServers\": []}", MCP, &entry())
        .unwrap_err();
    assert!(matches!(err, EditError::Shape(_)), "{err:?}");
    let err = Format::Json.set("[1, 2]", MCP, &entry()).unwrap_err();
    assert!(matches!(err, EditError::Shape(_)), "{err:?}");
}

#[test]
fn toml_keeps_comments_and_tables() {
    let slot = Slot {
        container: &["mcp_servers"],
        name: "scimcp",
    };
    let original = "# Codex settings\nmodel = \"o3\" # inline\n\n[mcp_servers.other]\ncommand = \"x\"\n\n[profiles.fast]\nmodel = \"mini\"\n";
    let set = round_trip(Format::Toml, slot, original);
    assert!(set.contains("[mcp_servers.scimcp]"), "{set}");
    let inline = "mcp_servers = { other = { command = \"x\" } }\n";
    let set = Format::Toml.set(inline, slot, &entry()).unwrap();
    assert_eq!(
        Format::Toml.read(&set, slot).unwrap(),
        Some(entry().to_json())
    );
    let err = Format::Toml.set("model = \n", slot, &entry()).unwrap_err();
    assert!(
        matches!(
            err,
            EditError::Syntax {
                line: 1,
                column: 9,
                ..
            }
        ),
        "{err:?}"
    );
    let windows = Entry::map([("command", Entry::str(r"C:\Users\Jürgen\scimcp.exe"))]);
    let set = Format::Toml.set("", slot, &windows).unwrap();
    assert_eq!(
        Format::Toml.read(&set, slot).unwrap(),
        Some(windows.to_json())
    );
}

#[test]
fn yaml_edits_one_child_and_keeps_everything_else() {
    let slot = Slot {
        container: &["extensions"],
        name: "scimcp",
    };
    let original = "# Goose\nGOOSE_PROVIDER: openai # provider\nextensions:\n  developer:\n    enabled: true\n    args:\n    - a\n\n  # my notes\n  memory:\n    enabled: false\n# tail comment\nGOOSE_MODEL: gpt-4o\n";
    let set = round_trip(Format::Yaml, slot, original);
    assert!(set.contains("# my notes") && set.contains("# tail comment"));
    // An existing entry is replaced where it stands.
    let stale = original.replace(
        "  developer:",
        "  scimcp:\n    cmd: old\n    args: [x]\n  developer:",
    );
    let fixed = Format::Yaml.set(&stale, slot, &entry()).unwrap();
    assert_eq!(
        Format::Yaml.read(&fixed, slot).unwrap(),
        Some(entry().to_json())
    );
    assert!(!fixed.contains("cmd: old"));
    assert!(fixed.find("scimcp:").unwrap() < fixed.find("developer:").unwrap());
    // No container yet, or an empty flow mapping.
    let set = Format::Yaml
        .set("GOOSE_MODEL: x\n", slot, &entry())
        .unwrap();
    assert!(
        set.starts_with("GOOSE_MODEL: x\nextensions:\n  scimcp:\n"),
        "{set}"
    );
    let (left, empty) = Format::Yaml.remove(&set, slot).unwrap();
    assert_eq!(
        left, "GOOSE_MODEL: x\nextensions: {}\n",
        "an empty mapping stays, as in JSON"
    );
    assert!(!empty);
    let set = Format::Yaml
        .set("extensions: {}\n", slot, &entry())
        .unwrap();
    assert_eq!(
        Format::Yaml.read(&set, slot).unwrap(),
        Some(entry().to_json())
    );
    let (left, empty) = Format::Yaml.remove(&set, slot).unwrap();
    assert_eq!(left, "extensions: {}\n");
    assert!(empty);
    // CRLF files stay CRLF.
    let crlf = original.replace('\n', "\r\n");
    let set = round_trip(Format::Yaml, slot, &crlf);
    assert!(
        !set.replace("\r\n", "").contains('\n'),
        "only CRLF line ends"
    );
}

#[test]
fn yaml_refuses_what_it_cannot_edit_safely() {
    let slot = Slot {
        container: &["extensions"],
        name: "scimcp",
    };
    for text in [
        "extensions: {developer: {enabled: true}}\n",
        "\"extensions\" : {}\n",
        "extensions:\n  - a\n",
    ] {
        let err = Format::Yaml.set(text, slot, &entry()).unwrap_err();
        assert!(matches!(err, EditError::Shape(_)), "{text:?}: {err:?}");
    }
    let err = Format::Yaml
        .set("extensions:\n  a: [1, 2\nb: 3\n", slot, &entry())
        .unwrap_err();
    assert!(matches!(err, EditError::Syntax { .. }), "{err:?}");
}

#[test]
fn owned_yaml_is_the_whole_document() {
    let doc = Entry::map([
        ("name", Entry::str("scimcp")),
        (
            "mcpServers",
            Entry::List(vec![Entry::map([
                ("name", Entry::str("scimcp")),
                ("args", Entry::strs(["serve"])),
            ])]),
        ),
    ]);
    let slot = Slot {
        container: &[],
        name: "scimcp",
    };
    let text = Format::OwnedYaml.set("", slot, &doc).unwrap();
    assert_eq!(
        text,
        "name: \"scimcp\"\nmcpServers:\n  - name: \"scimcp\"\n    args:\n      - \"serve\"\n"
    );
    assert_eq!(
        Format::OwnedYaml.read(&text, slot).unwrap(),
        Some(doc.to_json())
    );
}

#[test]
fn json_follows_the_files_own_style() {
    // An empty one-line container, tab indentation and CRLF line ends are all kept.
    let original = "{\r\n\t\"mcpServers\": {},\r\n\t\"x\": 1\r\n}\r\n";
    let set = Format::Json.set(original, MCP, &entry()).unwrap();
    assert_eq!(
        set,
        "{\r\n\t\"mcpServers\": {\r\n\t\t\"scimcp\": {\r\n\t\t\t\"command\": \"/opt/Données/current/bin/scimcp\",\r\n\t\t\t\"args\": [\"serve\", \"--adapter\", \"refsci\"]\r\n\t\t}\r\n\t},\r\n\t\"x\": 1\r\n}\r\n"
    );
}

#[test]
fn a_byte_order_mark_is_accepted_and_kept_in_every_format() {
    let cases: [(Format, &[&str], &str); 3] = [
        (Format::Json, &["mcpServers"], "{\n  \"theme\": 1\n}\n"),
        (Format::Toml, &["mcp_servers"], "model = \"o3\"\n"),
        (Format::Yaml, &["extensions"], "GOOSE_MODEL: x\n"),
    ];
    for (format, container, body) in cases {
        let slot = Slot {
            container,
            name: "scimcp",
        };
        let original = format!("\u{feff}{body}");
        let set = format.set(&original, slot, &entry()).unwrap();
        assert!(set.starts_with('\u{feff}'), "{format:?}: {set:?}");
        assert_eq!(set.matches('\u{feff}').count(), 1);
        assert_eq!(format.read(&set, slot).unwrap(), Some(entry().to_json()));
        format.check(&set).unwrap();
        let (removed, _) = format.remove(&set, slot).unwrap();
        let removed = format.remove_empty(&removed, container).unwrap();
        assert_eq!(removed, original, "{format:?}");
    }
}

#[test]
fn duplicate_keys_on_the_way_to_the_entry_are_refused_with_their_position() {
    let top = "{\n  \"mcpServers\": {},\n  \"x\": 1,\n  \"mcpServers\": {\"a\": {}}\n}\n";
    let err = Format::Json.set(top, MCP, &entry()).unwrap_err();
    assert_eq!(
        err,
        EditError::Duplicate {
            key: "mcpServers".into(),
            line: 4,
            column: 3,
            first_line: 2
        }
    );
    let inner = "{\"mcpServers\": {\n  \"a\": {},\n  \"a\": {}\n}}";
    let err = Format::Json.read(inner, MCP).unwrap_err();
    assert!(
        matches!(&err, EditError::Duplicate { key, line: 3, .. } if key == "mcpServers.a"),
        "{err:?}"
    );
    // Elsewhere in the file a repeated key is not scimcp's business.
    let elsewhere = "{\"other\": {\"a\": 1, \"a\": 2}, \"mcpServers\": {}}";
    Format::Json.set(elsewhere, MCP, &entry()).unwrap();
    // TOML forbids them itself; YAML mappings too.
    let toml = Slot {
        container: &["mcp_servers"],
        name: "scimcp",
    };
    let err = Format::Toml
        .set(
            "[mcp_servers]\na = 1\n[mcp_servers]\nb = 2\n",
            toml,
            &entry(),
        )
        .unwrap_err();
    assert!(matches!(err, EditError::Syntax { line: 3, .. }), "{err:?}");
    let yaml = Slot {
        container: &["extensions"],
        name: "scimcp",
    };
    let err = Format::Yaml
        .set("extensions: {}\nx: 1\nextensions: {}\n", yaml, &entry())
        .unwrap_err();
    assert!(matches!(err, EditError::Syntax { .. }), "{err:?}");
}

#[test]
fn a_created_container_is_removed_again_exactly() {
    for (original, container) in [
        (
            "{\n  // mine\n  \"theme\": \"dark\"\n}\n",
            "context_servers",
        ),
        ("{\n\t\"a\": [1, 2],\n\t\"b\": {}\n}", "servers"),
        ("{}\n", "mcpServers"),
    ] {
        let slot = Slot {
            container: &[container],
            name: "scimcp",
        };
        let set = Format::Json.set(original, slot, &entry()).unwrap();
        let (removed, _) = Format::Json.remove(&set, slot).unwrap();
        let back = Format::Json.remove_empty(&removed, &[container]).unwrap();
        assert_eq!(back, original, "{set}\n---\n{removed}");
    }
    // (A one-line root object becomes multi-line when the entry is added; uninstall puts the
    // pristine bytes back when nothing else changed, see `register`.)
    // An object that still holds something, or a comment, stays.
    let keep = "{\"servers\": {\n  // mine\n}}";
    assert_eq!(Format::Json.remove_empty(keep, &["servers"]).unwrap(), keep);
}
