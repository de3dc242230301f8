//! The `x-scimcp-column` rule of a parameter: which dataset columns it may name.

use super::checker::Problem;
use crate::manifest::types::COLUMN_KEYWORD;

/// An `x-scimcp-column` rule: an object of known keys, on a string or a list of strings (the
/// server reads the value as column names; on anything else the rule would silently never
/// apply).
pub(super) fn column_rule_problems(
    name: &str,
    prop: &serde_json::Value,
    rule: &serde_json::Value,
) -> Vec<Problem> {
    let at = format!("/properties/{name}/{COLUMN_KEYWORD}");
    let mut out = Vec::new();
    let Some(rule) = rule.as_object() else {
        out.push((
            at,
            format!(
                "{COLUMN_KEYWORD} must be an object, e.g. {{\"numeric\": true, \"complete\": true}}"
            ),
            None,
        ));
        return out;
    };
    for (key, value) in rule {
        let fits = match key.as_str() {
            "numeric" | "complete" => value.is_boolean(),
            "max_distinct" => value.as_u64().is_some_and(|n| n >= 1),
            _ => {
                out.push((
                    format!("{at}/{key}"),
                    format!("unknown column rule '{key}'"),
                    Some("the rules are numeric (boolean), complete (boolean) and max_distinct (a count of at least 1)".into()),
                ));
                continue;
            }
        };
        if !fits {
            let wants = if key == "max_distinct" {
                "an integer of at least 1"
            } else {
                "true or false"
            };
            out.push((
                format!("{at}/{key}"),
                format!("column rule '{key}' must be {wants}, not {value}"),
                None,
            ));
        }
    }
    let ty = |v: &serde_json::Value| v.get("type").and_then(|t| t.as_str()).map(str::to_string);
    let names_columns = match ty(prop).as_deref() {
        Some("string") => true,
        Some("array") => prop
            .get("items")
            .and_then(ty)
            .is_some_and(|t| t == "string"),
        _ => false,
    };
    if !names_columns {
        out.push((
            at,
            format!("parameter '{name}' is marked as dataset columns but is not a string or a list of strings"),
            Some("column parameters hold column names: \"type\": \"string\", or \"type\": \"array\" with string items".into()),
        ));
    }
    out
}
