//! A workflow's `options`: optional parameters passed as flags, one per parameter of its
//! schema, a switch only for a boolean.

use std::collections::BTreeSet;

use super::checker::{Checker, Seg};
use super::parameters::schema_params;
use crate::manifest::types::{OptionFormat, Workflow};

/// Each option names a parameter of the schema (once), a command-line flag, and a format
/// that fits the parameter.
pub(super) fn check_options(c: &mut Checker<'_>, i: usize, wf: &Workflow) {
    let (props, _) = schema_params(&wf.parameters_schema);
    let mut seen = BTreeSet::new();
    for (j, opt) in wf.options.iter().enumerate() {
        let at = |k| {
            [
                Seg::Key("workflow"),
                Seg::Index(i),
                Seg::Key("options"),
                Seg::Index(j),
                Seg::Key(k),
            ]
        };
        if !props.contains(&opt.param) {
            c.error(
                &at("param"),
                format!(
                    "option parameter '{}' is not a property of {}",
                    opt.param, wf.parameters
                ),
                Some(format!(
                    "declare it in the schema or use one of: {}",
                    props.iter().cloned().collect::<Vec<_>>().join(", ")
                )),
            );
        } else if !seen.insert(opt.param.clone()) {
            c.error(
                &at("param"),
                format!("parameter '{}' has two options", opt.param),
                None,
            );
        }
        if !opt.flag.starts_with('-')
            || opt.flag.len() < 2
            || opt.flag.contains(char::is_whitespace)
        {
            c.error(
                &at("flag"),
                format!("'{}' is not a command-line flag", opt.flag),
                Some("flags start with '-' and contain no spaces".into()),
            );
        }
        if opt.format == OptionFormat::Switch {
            let ty = wf
                .parameters_schema
                .pointer(&format!("/properties/{}/type", opt.param));
            if ty != Some(&serde_json::Value::String("boolean".into())) {
                c.error(&at("format"), format!("a switch needs a boolean parameter; '{}' is not declared \"type\": \"boolean\"", opt.param), None);
            }
        }
    }
}
