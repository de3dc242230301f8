//! CWL parameter references (`$(inputs.x)`, `$(inputs.f.path)`, `$(runtime.outdir)`) into
//! manifest templates (`{x}`, `{input.f}`, `{work_dir}`). Only references with a fixed meaning
//! in the plan are translated; anything else (JavaScript, `self`, file name parts) is refused
//! by the caller with the field it is in.

use std::collections::BTreeMap;

/// What a CWL input id stands for in templates.
#[derive(Debug, Clone)]
pub(crate) enum Target {
    /// A parameter of the schema, usable only when it always has a value.
    Param { name: String, always: bool },
    /// A named file input (`{input.<id>}`).
    Input { id: String },
}

/// Why a string could not become a template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RefProblem(pub String);

/// Translate `text` into one template. Literal braces are doubled, as templates want.
pub(crate) fn translate(
    text: &str,
    inputs: &BTreeMap<String, Target>,
) -> Result<String, RefProblem> {
    let mut out = String::new();
    let mut rest = text;
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix("\\$(") {
            out.push_str("$(");
            rest = after;
            continue;
        }
        if let Some(after) = rest.strip_prefix("\\${") {
            out.push_str("${{");
            rest = after;
            continue;
        }
        if rest.starts_with("${") {
            return Err(RefProblem(
                "a JavaScript function body `${…}` (InlineJavascriptRequirement) is not supported yet"
                    .into(),
            ));
        }
        if let Some(after) = rest.strip_prefix("$(") {
            let end = after
                .find(')')
                .ok_or_else(|| RefProblem(format!("an unterminated reference in {text:?}")))?;
            let expr = &after[..end];
            out.push_str(&reference(expr, inputs)?);
            rest = &after[end + 1..];
            continue;
        }
        let c = rest.chars().next().expect("not empty");
        match c {
            '{' => out.push_str("{{"),
            '}' => out.push_str("}}"),
            c => out.push(c),
        }
        rest = &rest[c.len_utf8()..];
    }
    Ok(out)
}

/// True when `text` holds a reference or an expression (so it is not a literal).
pub(crate) fn has_reference(text: &str) -> bool {
    let unescaped = text.replace("\\$(", "").replace("\\${", "");
    unescaped.contains("$(") || unescaped.contains("${")
}

/// The segments of a parameter reference: `inputs.a['b'][0]` → `inputs`, `a`, `b`, `0`.
fn segments(expr: &str) -> Option<Vec<String>> {
    let mut segs = Vec::new();
    let mut rest = expr.trim();
    let first_end = rest.find(['.', '[']).unwrap_or(rest.len());
    segs.push(rest[..first_end].to_string());
    rest = &rest[first_end..];
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix('.') {
            let end = after.find(['.', '[']).unwrap_or(after.len());
            let name = &after[..end];
            if name.is_empty() || !name.chars().all(|c| c.is_alphanumeric() || c == '_') {
                return None;
            }
            segs.push(name.to_string());
            rest = &after[end..];
        } else if let Some(after) = rest.strip_prefix('[') {
            let end = after.find(']')?;
            let inner = after[..end].trim();
            let unquoted = inner
                .strip_prefix('\'')
                .and_then(|s| s.strip_suffix('\''))
                .or_else(|| inner.strip_prefix('"').and_then(|s| s.strip_suffix('"')))
                .unwrap_or(inner);
            segs.push(unquoted.to_string());
            rest = &after[end + 1..];
        } else {
            return None;
        }
    }
    segs.iter()
        .all(|s| !s.is_empty() && s.chars().all(|c| c.is_alphanumeric() || "_-.".contains(c)))
        .then_some(segs)
}

fn reference(expr: &str, inputs: &BTreeMap<String, Target>) -> Result<String, RefProblem> {
    let segs = segments(expr).ok_or_else(|| {
        RefProblem(format!(
            "`$({expr})` is not a parameter reference; JavaScript expressions \
             (InlineJavascriptRequirement) are not supported yet"
        ))
    })?;
    let segs: Vec<&str> = segs.iter().map(String::as_str).collect();
    match segs.as_slice() {
        ["runtime", "outdir"] => Ok("{work_dir}".into()),
        ["runtime", "tmpdir"] => Ok("{work_dir}/tmp".into()),
        ["inputs", name, more @ ..] => {
            let target = inputs
                .get(*name)
                .ok_or_else(|| RefProblem(format!("`$({expr})` names no input `{name}`")))?;
            match (target, more) {
                (Target::Param { name: p, always }, []) => {
                    if *always {
                        Ok(format!("{{{p}}}"))
                    } else {
                        Err(RefProblem(format!(
                            "`$({expr})` refers to an optional input with no default; \
                             its absence cannot be planned yet"
                        )))
                    }
                }
                (Target::Input { id }, ["path"]) => Ok(format!("{{input.{id}}}")),
                _ => Err(RefProblem(format!(
                    "`$({expr})` is not supported yet (only inputs.<name> of a value and \
                     inputs.<name>.path of a File or Directory)"
                ))),
            }
        }
        _ => Err(RefProblem(format!(
            "`$({expr})` is not supported yet (only inputs.…, runtime.outdir and runtime.tmpdir)"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inputs() -> BTreeMap<String, Target> {
        BTreeMap::from([
            (
                "n".to_string(),
                Target::Param {
                    name: "n".into(),
                    always: true,
                },
            ),
            (
                "opt".to_string(),
                Target::Param {
                    name: "opt".into(),
                    always: false,
                },
            ),
            ("f".to_string(), Target::Input { id: "f".into() }),
        ])
    }

    #[test]
    fn references_become_placeholders_and_braces_are_doubled() {
        let i = inputs();
        assert_eq!(translate("-n$(inputs.n)", &i).unwrap(), "-n{n}");
        assert_eq!(translate("$(inputs['f'].path)", &i).unwrap(), "{input.f}");
        assert_eq!(
            translate("$(runtime.outdir)/x", &i).unwrap(),
            "{work_dir}/x"
        );
        assert_eq!(translate("{a} \\$(x)", &i).unwrap(), "{{a}} $(x)");
    }

    #[test]
    fn what_cannot_be_planned_is_refused() {
        let i = inputs();
        assert!(translate("$(inputs.opt)", &i).is_err());
        assert!(translate("$(inputs.f.basename)", &i).is_err());
        assert!(translate("$(1 + 2)", &i).is_err());
        assert!(translate("${ return 1; }", &i).is_err());
        assert!(translate("$(inputs.nope)", &i).is_err());
        assert!(has_reference("a $(inputs.n)") && !has_reference("a \\$(x)"));
    }
}
