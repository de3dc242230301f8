use crate::manifest::{ManifestErrors, load_file};

const SCHEMA: &str = r#"{"$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object", "additionalProperties": false, "properties": {}}"#;

/// A manifest whose one workflow ends with `workflow_tail` (and has a top-level argv).
fn manifest(workflow_tail: &str) -> String {
    stepped(&format!("argv = [\"{{dataset}}\"]\n{workflow_tail}"))
}

/// A manifest whose one workflow ends with `workflow_tail` (its steps, if any).
fn stepped(workflow_tail: &str) -> String {
    format!(
        r#"schema_version = 1
name = "demo"
version = "0.1.0"
summary = "A demo."

[runtime]
kind = "executable"
executable = "cat"

[[workflow]]
id = "show"
summary = "Show."
parameters = "s.json"
{workflow_tail}
"#
    )
}

fn load(tail: &str) -> Result<crate::manifest::Adapter, ManifestErrors> {
    let dir = tempfile::tempdir().unwrap();
    fs_err::write(dir.path().join("s.json"), SCHEMA).unwrap();
    let path = dir.path().join("demo.toml");
    fs_err::write(&path, manifest(tail)).unwrap();
    load_file(&path)
}

fn errors(tail: &str) -> String {
    let e = load(tail).expect_err("must be refused");
    e.0.iter()
        .map(|e| format!("{}: {}", e.field, e.message))
        .collect::<Vec<_>>()
        .join("\n")
}

const STREAMS: &str = r#"
[[workflow.artifact]]
id = "out"
base = "stdout"
path = "out.tsv"
media_type = "text/tab-separated-values"

[[workflow.artifact]]
id = "scores"
path = "scores.json"
media_type = "application/json"
"#;

#[test]
fn stream_artifacts_metrics_and_requires_load() {
    let a = load(&format!(
        "{STREAMS}
[[workflow.metric]]
id = \"best\"
from = \"stdout\"
pattern = '^best (?P<value>\\S+)$'

[[workflow.metric]]
id = \"score\"
from = \"out\"
column = \"score\"
all = true

[[workflow.metric]]
id = \"r2\"
from = \"scores\"
pointer = \"/r2\"

[[workflow.metric]]
id = \"pair\"
from = \"stderr\"
pattern = '(?P<a>\\d+)/(?P<b>\\d+)'

[[workflow.require]]
metric = \"best\"
lt = 0.0
message = \"no favourable pose\"

[[workflow.require]]
from = \"stderr\"
absent = 'WARNING'
"
    ))
    .unwrap();
    let wf = &a.manifest.workflows[0];
    assert_eq!(wf.metrics.len(), 4);
    assert_eq!(wf.requires.len(), 2);
    let canonical = a.canonical_json();
    assert!(canonical.contains(r#""base":"stdout""#), "{canonical}");
    assert!(!canonical.contains("allow_empty"), "{canonical}");
}

/// The adapters written before these keys keep their canonical form, so their manifest,
/// request and plan hashes stay what their parity evidence recorded.
#[test]
fn adapters_without_the_keys_keep_their_canonical_form() {
    for name in ["refsci", "geochemistrypi"] {
        let a = crate::manifest::load_embedded(name).unwrap().unwrap();
        let canonical: serde_json::Value = serde_json::from_str(a.canonical_json()).unwrap();
        for wf in canonical["workflow"].as_array().unwrap() {
            assert!(
                wf.get("metric").is_none() && wf.get("require").is_none(),
                "{name}"
            );
            for artifact in wf["artifact"].as_array().unwrap() {
                for key in ["step", "allow_empty"] {
                    assert!(artifact.get(key).is_none(), "{name}: {artifact}");
                }
                assert!(
                    !matches!(artifact["base"].as_str(), Some("stdout" | "stderr")),
                    "{name}: {artifact}"
                );
            }
        }
    }
}

#[test]
fn bad_stream_artifacts_are_refused() {
    let e = errors(
        r#"
[[workflow.artifact]]
id = "a"
base = "stdout"
path = "sub/a.txt"
media_type = "text/plain"
step = "x"

[[workflow.artifact]]
id = "b"
base = "stdout"
path = "*.txt"
media_type = "text/plain"

[[workflow.artifact]]
id = "c"
path = "c.txt"
media_type = "text/plain"
step = "x"
"#,
    );
    assert!(
        e.contains("artifact[0].path: 'sub/a.txt' must be a plain file name"),
        "{e}"
    );
    assert!(
        e.contains("artifact[0].step: step names a step, but this workflow has no"),
        "{e}"
    );
    assert!(
        e.contains("artifact[1].path: '*.txt' must be a plain file name"),
        "{e}"
    );
    assert!(
        e.contains("artifact[1].base: the stdout stream is already the artifact 'a'"),
        "{e}"
    );
    assert!(
        e.contains("artifact[2].step: step applies only to base"),
        "{e}"
    );
}

#[test]
fn a_stream_artifact_names_a_declared_step_once() {
    let text = stepped(
        r#"
[[workflow.step]]
id = "one"
argv = ["{dataset}"]

[[workflow.step]]
id = "two"
argv = ["{dataset}"]

[[workflow.artifact]]
id = "a"
base = "stdout"
path = "a.txt"
media_type = "text/plain"
step = "one"

[[workflow.artifact]]
id = "b"
base = "stdout"
path = "b.txt"
media_type = "text/plain"

[[workflow.artifact]]
id = "c"
base = "stdout"
path = "c.txt"
media_type = "text/plain"
step = "two"

[[workflow.artifact]]
id = "d"
base = "stderr"
path = "d.txt"
media_type = "text/plain"
step = "three"
"#,
    );
    let dir = tempfile::tempdir().unwrap();
    fs_err::write(dir.path().join("s.json"), SCHEMA).unwrap();
    let path = dir.path().join("demo.toml");
    fs_err::write(&path, text).unwrap();
    let e = load_file(&path).expect_err("must be refused");
    let e: Vec<String> =
        e.0.iter()
            .map(|e| format!("{}: {}", e.field, e.message))
            .collect();
    let e = e.join("\n");
    // `b` is the last step's stdout, as `c` says explicitly.
    assert!(
        e.contains("artifact[2].base: the stdout stream of step 'two' is already the artifact 'b'"),
        "{e}"
    );
    assert!(
        e.contains("artifact[3].step: step 'three' is not declared in this workflow"),
        "{e}"
    );
    assert!(!e.contains("artifact[0]"), "{e}");
}

#[test]
fn stream_copy_may_not_shadow_a_cli_file() {
    let e = errors(
        r#"
[[workflow.artifact]]
id = "a"
base = "stderr"
path = "a.txt"
media_type = "text/plain"

[[workflow.artifact]]
id = "b"
path = "a.txt"
media_type = "text/plain"
"#,
    );
    assert!(e.contains("output/a.txt is also the artifact 'b'"), "{e}");
}

#[test]
fn bad_metrics_are_refused_each_with_its_reason() {
    let e = errors(&format!(
        "{STREAMS}
[[workflow.metric]]
id = \"a\"
from = \"nowhere\"
pattern = '(?P<value>x)'

[[workflow.metric]]
id = \"b\"
from = \"stdout\"
pattern = '(x'

[[workflow.metric]]
id = \"c\"
from = \"stdout\"
pattern = 'x(\\d)'

[[workflow.metric]]
id = \"d\"
from = \"stdout\"
column = \"x\"

[[workflow.metric]]
id = \"e\"
from = \"out\"
pointer = \"/x\"
all = true

[[workflow.metric]]
id = \"f\"
from = \"scores\"

[[workflow.metric]]
id = \"g\"
from = \"scores\"
pattern = '(?P<value>x)'
pointer = \"/x\"

[[workflow.metric]]
id = \"h\"
from = \"scores\"
pointer = \"x\"
"
    ));
    for want in [
        "metric[0].from: 'nowhere' is neither stdout, stderr nor an artifact of this workflow (artifacts: out, scores)",
        "metric[1].pattern: invalid regular expression",
        "metric[2].pattern: the pattern has no named group",
        "metric[3].column: column applies only to a CSV/TSV artifact; 'stdout' is not one",
        "metric[4].pointer: pointer applies only to a JSON artifact; 'out' is not one",
        "metric[4].all: all applies to pattern and column",
        "metric[5].id: metric 'f' says neither pattern, column nor pointer",
        "metric[6].id: metric 'g' gives more than one of pattern, column, pointer",
        "metric[7].pointer: 'x' is not a JSON pointer",
    ] {
        assert!(e.contains(want), "missing {want:?} in\n{e}");
    }
}

#[test]
fn bad_requires_are_refused_each_with_its_reason() {
    let e = errors(
        r#"
[[workflow.metric]]
id = "v"
from = "stdout"
pattern = '(?P<value>\d+)'

[[workflow.metric]]
id = "pair"
from = "stdout"
pattern = '(?P<a>\d+)/(?P<b>\d+)'

[[workflow.require]]
metric = "missing"
lt = 1.0

[[workflow.require]]
metric = "v"
lt = 1.0
gt = 0.0

[[workflow.require]]
metric = "v"

[[workflow.require]]
metric = "v"
absent = "x"

[[workflow.require]]
from = "stdout"
ge = 1.0

[[workflow.require]]
metric = "v"
from = "stdout"
eq = 1.0

[[workflow.require]]
from = "stderr"
present = "(x"

[[workflow.require]]
metric = "pair"
eq = 1.0

[[workflow.require]]
metric = "v"
le = nan
message = ""
"#,
    );
    for want in [
        "require[0].metric: metric 'missing' is not declared in this workflow",
        "require[1].metric: the requirement has several comparisons (lt, gt)",
        "require[2].metric: the requirement has no comparison",
        "require[3].absent: absent searches a whole text: use from, not metric",
        "require[4].ge: ge compares a metric's value: use metric, not from",
        "require[5].metric: a requirement names either a metric or a from",
        "require[6].present: invalid regular expression",
        "require[7].metric: metric 'pair' yields an object of named groups",
        "require[8].le: NaN is not a finite number",
        "require[8].message: message must be 1 to 500 characters",
    ] {
        assert!(e.contains(want), "missing {want:?} in\n{e}");
    }
}
