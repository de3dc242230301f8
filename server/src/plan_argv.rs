//! Assembling an argv: each template element rendered, the options placed where the
//! manifest says, and `map` elements that chose "no argument" left out.
//!
//! Options go where the argv has the element `{options}`, else after the argv (as they
//! always did, so plans of manifests without the marker keep their hash). Some CLIs need
//! their input last (MAFFT reads its options, then one input file), which a fixed "after"
//! cannot express.

use scimcp_core::hash::canonical_json;
use scimcp_core::manifest::{OptionFormat, OptionSpec, Template};
use serde_json::Value;

use crate::plan::value_text;
use crate::plan_error::PlanError;

/// The arguments the workflow's (or a step's) options give for `params`, in declared order.
pub(crate) fn options(
    specs: &[OptionSpec],
    params: &serde_json::Map<String, Value>,
) -> Vec<String> {
    let mut args = Vec::new();
    for opt in specs {
        let Some(value) = params.get(&opt.param).filter(|v| !v.is_null()) else {
            continue;
        };
        match opt.format {
            OptionFormat::Switch => {
                if value.as_bool() == Some(true) {
                    args.push(opt.flag.clone());
                }
            }
            OptionFormat::Value => {
                args.push(opt.flag.clone());
                args.push(value_text(value));
            }
            OptionFormat::Json => {
                args.push(opt.flag.clone());
                args.push(canonical_json(value));
            }
        }
    }
    args
}

/// `argv` rendered element by element through `expand`, with `options` at the `{options}`
/// element (after everything when there is none). An element that is one placeholder whose
/// last filter is `map` and that renders empty is no argument; every other empty rendering
/// stays an empty argument.
pub(crate) fn assemble(
    argv: &[String],
    options: Vec<String>,
    mut expand: impl FnMut(&str) -> Result<Vec<String>, PlanError>,
) -> Result<Vec<String>, PlanError> {
    let mut options = Some(options);
    let mut args = Vec::new();
    for arg in argv {
        let t = Template::parse(arg).map_err(PlanError::template)?;
        if t.is_options_marker() {
            // The load check allows one marker; a second places nothing.
            args.extend(options.take().unwrap_or_default());
            continue;
        }
        let rendered = expand(arg)?;
        if t.omitted_when_empty() && rendered.iter().all(String::is_empty) {
            continue;
        }
        args.extend(rendered);
    }
    args.extend(options.unwrap_or_default());
    Ok(args)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn spec(param: &str, flag: &str, format: OptionFormat) -> OptionSpec {
        serde_json::from_value(json!({"param": param, "flag": flag, "format": format})).unwrap()
    }

    /// Renders `{name}` as the name in capitals, `{quiet|map:…}` through a fixed answer.
    fn expand(arg: &str) -> Result<Vec<String>, PlanError> {
        Ok(vec![match arg {
            "{verbose|map:true=--verbose,false=}" => String::new(),
            "{extra}" => String::new(),
            other => other.trim_matches(['{', '}']).to_uppercase(),
        }])
    }

    fn argv(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn options_go_after_the_argv_without_a_marker() {
        let out = assemble(&argv(&["{a}", "{b}"]), argv(&["--x", "1"]), expand).unwrap();
        assert_eq!(out, ["A", "B", "--x", "1"]);
    }

    #[test]
    fn options_go_at_the_marker() {
        let out = assemble(&argv(&["{options}", "{input}"]), argv(&["--auto"]), expand).unwrap();
        assert_eq!(out, ["--auto", "INPUT"]);
        let out = assemble(&argv(&["{a}", "{options}", "{b}"]), argv(&["-q"]), expand).unwrap();
        assert_eq!(out, ["A", "-q", "B"]);
        // No options given: the marker leaves nothing behind, not an empty argument.
        let out = assemble(&argv(&["{options}", "{b}"]), Vec::new(), expand).unwrap();
        assert_eq!(out, ["B"]);
    }

    #[test]
    fn an_empty_map_entry_is_no_argument_but_an_empty_value_is_one() {
        let out = assemble(
            &argv(&["{verbose|map:true=--verbose,false=}", "{extra}", "{b}"]),
            Vec::new(),
            expand,
        )
        .unwrap();
        assert_eq!(out, ["", "B"], "only the map element is dropped");
    }

    /// A MAFFT-style workflow compiled into a plan: options first, the input last, and a
    /// `map` switch that renders nothing when off.
    #[test]
    fn a_plan_places_the_options_where_the_manifest_says() {
        let dir = tempfile::tempdir().unwrap();
        fs_err::write(
            dir.path().join("align.json"),
            r#"{"type": "object", "additionalProperties": false,
                "properties": {"auto": {"type": "boolean"}, "threads": {"type": "integer"},
                               "quiet": {"type": "boolean", "default": false}}}"#,
        )
        .unwrap();
        let manifest = |argv: &str| {
            format!(
                r#"schema_version = 1
name = "aligner"
version = "0.1.0"
summary = "Aligns sequences."

[runtime]
kind = "executable"
executable = "mafft"

[[workflow]]
id = "align"
summary = "Align."
parameters = "align.json"
argv = {argv}
options = [{{ param = "auto", flag = "--auto", format = "switch" }}, {{ param = "threads", flag = "--thread" }}]
"#
            )
        };
        let plan_for = |argv: &str, params: Value| {
            let path = dir.path().join("aligner.toml");
            fs_err::write(&path, manifest(argv)).unwrap();
            let adapter = scimcp_core::manifest::load_file(&path).unwrap();
            let dataset = crate::datasets::ResolvedDataset {
                reference: "seqs.fasta".into(),
                source: crate::datasets::DatasetSource::File,
                path: dir.path().join("seqs.fasta"),
                file_name: "seqs.fasta".into(),
                size_bytes: 0,
                sha256: "0".repeat(64),
                root: dir.path().to_path_buf(),
                relative: "seqs.fasta".into(),
            };
            let workflow = adapter.workflow("align").unwrap();
            crate::plan_compile::compile(
                &adapter,
                workflow,
                params.as_object().unwrap(),
                Some(&dataset),
                &[],
                None,
                "mafft",
                &[],
                Default::default(),
            )
            .unwrap()
        };
        let params = json!({"auto": true, "threads": 2, "quiet": false});
        let placed = plan_for(
            r#"["{options}", "{quiet|map:true=--quiet,false=}", "{dataset}"]"#,
            params.clone(),
        );
        assert_eq!(
            placed.args,
            ["--auto", "--thread", "2", "inputs/seqs.fasta"]
        );
        let quiet = plan_for(
            r#"["{options}", "{quiet|map:true=--quiet,false=}", "{dataset}"]"#,
            json!({"quiet": true}),
        );
        assert_eq!(quiet.args, ["--quiet", "inputs/seqs.fasta"]);
        // Without the marker the options follow the argv, as they always did.
        let after = plan_for(r#"["{dataset}"]"#, params);
        assert_eq!(after.args, ["inputs/seqs.fasta", "--auto", "--thread", "2"]);
        assert_ne!(placed.sha256(), after.sha256());
    }

    #[test]
    fn option_formats_render_as_before() {
        let specs = [
            spec("fast", "--fast", OptionFormat::Switch),
            spec("slow", "--slow", OptionFormat::Switch),
            spec("n", "--n", OptionFormat::Value),
            spec("cfg", "--cfg", OptionFormat::Json),
            spec("absent", "--absent", OptionFormat::Value),
        ];
        let params = json!({"fast": true, "slow": false, "n": 3, "cfg": {"b": 1, "a": [2]}})
            .as_object()
            .unwrap()
            .clone();
        assert_eq!(
            options(&specs, &params),
            ["--fast", "--n", "3", "--cfg", r#"{"a":[2],"b":1}"#]
        );
    }
}
