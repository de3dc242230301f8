//! Which programs a CWL tool may start, decided at load so that each is resolved on PATH and
//! hashed when the server starts, like any adapter's. Usually one: baseCommand's first word,
//! or a literal first argument. A tool whose first argument is JavaScript that builds the
//! whole command (`baseCommand: []`, `${ return ["echo", …] }`) may start any program its
//! expression names: the string literals of that expression that are a program on PATH
//! here. The engine then refuses, at validation, a command whose argv\[0\] is not one of
//! them, so a run never starts a program the server did not resolve and hash.

use serde_json::Value;

use crate::CwlError;
use crate::doc::Doc;

/// Shells and launchers: named by an expression they would run a line or a program the
/// server never hashed, so they are candidates only where the operator allowed shells.
const LAUNCHERS: &[&str] = &[
    "sh", "bash", "dash", "ash", "zsh", "ksh", "mksh", "csh", "tcsh", "fish", "busybox", "env",
    "xargs", "nohup", "sudo", "timeout", "nice",
];

/// The programs a tool's commands may start: the first is the manifest's runtime program,
/// the others are declared beside it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Programs {
    pub first: String,
    pub others: Vec<String>,
}

impl Programs {
    pub(crate) fn contains(&self, name: &str) -> bool {
        self.first == name || self.others.iter().any(|o| o == name)
    }
}

/// argv\[0\] of the tool, or the programs its first argument's expression may choose (with
/// `InlineJavascriptRequirement`); refused, naming the field and line, when neither holds.
pub(crate) fn of_tool(
    tool: &Value,
    doc: &Doc,
    inline_js: bool,
    allow_shell: bool,
) -> Result<Programs, CwlError> {
    if let Some(first) = tool
        .get("baseCommand")
        .and_then(Value::as_array)
        .and_then(|a| a.first())
        .and_then(Value::as_str)
    {
        if first.starts_with('-') {
            // `baseCommand: ["-c", …]` hands options to a container image's entrypoint.
            return Err(doc.unsupported(
                "baseCommand",
                "baseCommand",
                format!(
                    "the command starts with the option `{first}`, not a program: the tool relies on its container image's entrypoint, which does not run without the container; name the program first in baseCommand"
                ),
            ));
        }
        return Ok(Programs {
            first: first.to_string(),
            others: Vec::new(),
        });
    }
    let text = first_argument(tool);
    if let Some(t) = text.filter(|t| !crate::expr::has_expression(t) && !t.is_empty()) {
        return Ok(Programs {
            first: t.to_string(),
            others: Vec::new(),
        });
    }
    let fix = "name the program in baseCommand (or a literal first argument) so the server can resolve and hash it before a request; a tool whose command is a shell line declares ShellCommandRequirement and runs on a server started with --cwl-allow-shell";
    let Some(expr) = text.filter(|_| inline_js) else {
        return Err(doc.unsupported(
            "baseCommand",
            "baseCommand",
            format!("the program is not fixed: {fix}"),
        ));
    };
    let path = std::env::var_os("PATH");
    let mut found: Vec<String> = Vec::new();
    for literal in string_literals(expr) {
        let plausible = !literal.is_empty()
            && !literal.contains(char::is_whitespace)
            && !literal.starts_with('-')
            && (allow_shell || !LAUNCHERS.contains(&literal.as_str()));
        if plausible
            && !found.contains(&literal)
            && scimcp_core::program_identity::find_executable(&literal, &[], path.clone()).is_some()
        {
            found.push(literal);
        }
    }
    if found.is_empty() {
        return Err(doc.unsupported(
            "arguments",
            "arguments",
            format!(
                "the program is chosen by the first argument's expression, and none of its string literals is a program on this PATH{}: {fix}",
                if allow_shell {
                    ""
                } else {
                    " (shells and launchers such as env count only with --cwl-allow-shell)"
                }
            ),
        ));
    }
    let first = found.remove(0);
    Ok(Programs {
        first,
        others: found,
    })
}

/// The text of the argument CWL puts first (sorted by position, 0 when absent), when it is
/// a string or a `valueFrom` without a prefix.
fn first_argument(tool: &Value) -> Option<&str> {
    let args = tool.get("arguments").and_then(Value::as_array)?;
    let mut keyed: Vec<(i64, usize, &Value)> = args
        .iter()
        .enumerate()
        .map(|(i, v)| {
            let pos = v.get("position").and_then(Value::as_i64).unwrap_or(0);
            (pos, i, v)
        })
        .collect();
    keyed.sort_by_key(|(p, i, _)| (*p, *i));
    match keyed.first().map(|(_, _, v)| *v) {
        Some(Value::String(s)) => Some(s.as_str()),
        Some(Value::Object(o)) if o.get("prefix").is_none() => {
            o.get("valueFrom").and_then(Value::as_str)
        }
        _ => None,
    }
}

/// The JavaScript string literals (`'…'`, `"…"`) of `text`, with simple escapes resolved;
/// comments are skipped so a quote in one does not start a literal.
fn string_literals(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '/' if chars.peek() == Some(&'/') => {
                for n in chars.by_ref() {
                    if n == '\n' {
                        break;
                    }
                }
            }
            '/' if chars.peek() == Some(&'*') => {
                chars.next();
                let mut star = false;
                for n in chars.by_ref() {
                    if star && n == '/' {
                        break;
                    }
                    star = n == '*';
                }
            }
            '\'' | '"' => {
                let mut s = String::new();
                while let Some(n) = chars.next() {
                    match n {
                        '\\' => {
                            if let Some(e) = chars.next() {
                                s.push(e);
                            }
                        }
                        q if q == c => break,
                        other => s.push(other),
                    }
                }
                out.push(s);
            }
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_command_that_starts_with_an_option_is_refused_naming_the_entrypoint() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("tool.cwl");
        fs_err::write(
            &path,
            "cwlVersion: v1.2\nclass: CommandLineTool\ninputs: []\noutputs: []\nbaseCommand: [\"-c\", \"echo moo\"]\n",
        )
        .unwrap();
        let doc = crate::doc::read(&path).unwrap();
        let tool = crate::norm::load(&path).unwrap();
        let e = of_tool(&tool, &doc, false, false).unwrap_err();
        assert!(
            e.is_unsupported()
                && e.to_string().contains("entrypoint")
                && e.to_string().contains("baseCommand"),
            "{e}"
        );
    }

    #[test]
    fn string_literals_of_an_expression() {
        assert_eq!(
            string_literals(
                r#"${ var c = ["echo"]; c.push('it\'s'); /* "no" */ // 'nor'
return c; }"#
            ),
            vec!["echo".to_string(), "it's".to_string()]
        );
    }
}
