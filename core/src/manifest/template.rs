//! Argument templates: literal text with `{name}` placeholders (`{{` and `}}` escape braces).
//! There is never a shell: a template renders to exactly one argument.

use std::fmt;

/// Values the server fills in itself, beside the workflow's parameters.
pub const RUN_VALUES: &[&str] = &["dataset", "output_dir"];

/// A parsed template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Template {
    pub parts: Vec<TemplatePart>,
}

/// A piece of a [`Template`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TemplatePart {
    Literal(String),
    Placeholder(String),
}

/// Why a template does not parse.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TemplateError(pub String);

impl fmt::Display for TemplateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl Template {
    /// Parse `text`; placeholder names are `[a-z_][a-z0-9_]*`.
    pub fn parse(text: &str) -> Result<Template, TemplateError> {
        let mut parts = Vec::new();
        let mut literal = String::new();
        let mut chars = text.char_indices().peekable();
        while let Some((i, c)) = chars.next() {
            match c {
                '{' if chars.peek().map(|(_, c)| *c) == Some('{') => {
                    chars.next();
                    literal.push('{');
                }
                '}' if chars.peek().map(|(_, c)| *c) == Some('}') => {
                    chars.next();
                    literal.push('}');
                }
                '{' => {
                    let mut name = String::new();
                    let mut closed = false;
                    for (_, c) in chars.by_ref() {
                        if c == '}' {
                            closed = true;
                            break;
                        }
                        name.push(c);
                    }
                    if !closed {
                        return Err(TemplateError(format!(
                            "unclosed placeholder starting at character {i} (write {{{{ for a literal brace)"
                        )));
                    }
                    if !is_placeholder_name(&name) {
                        return Err(TemplateError(format!(
                            "placeholder {{{name}}} is not a valid name: use lower-case letters, digits and _"
                        )));
                    }
                    if !literal.is_empty() {
                        parts.push(TemplatePart::Literal(std::mem::take(&mut literal)));
                    }
                    parts.push(TemplatePart::Placeholder(name));
                }
                '}' => {
                    return Err(TemplateError(format!(
                        "unmatched '}}' at character {i} (write }}}} for a literal brace)"
                    )));
                }
                c => literal.push(c),
            }
        }
        if !literal.is_empty() {
            parts.push(TemplatePart::Literal(literal));
        }
        Ok(Template { parts })
    }

    /// The placeholder names, in order.
    pub fn placeholders(&self) -> impl Iterator<Item = &str> {
        self.parts.iter().filter_map(|p| match p {
            TemplatePart::Placeholder(n) => Some(n.as_str()),
            TemplatePart::Literal(_) => None,
        })
    }

    /// Render with `lookup` giving each placeholder's text.
    pub fn render<E>(
        &self,
        mut lookup: impl FnMut(&str) -> Result<String, E>,
    ) -> Result<String, E> {
        let mut out = String::new();
        for part in &self.parts {
            match part {
                TemplatePart::Literal(s) => out.push_str(s),
                TemplatePart::Placeholder(n) => out.push_str(&lookup(n)?),
            }
        }
        Ok(out)
    }
}

/// `[a-z_][a-z0-9_]*`, at most 64 characters.
pub fn is_placeholder_name(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some('a'..='z' | '_'))
        && chars.all(|c| matches!(c, 'a'..='z' | '0'..='9' | '_'))
        && name.len() <= 64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_placeholders_and_escapes() {
        let t = Template::parse("--x={dataset}:{{lit}}").unwrap();
        assert_eq!(
            t.parts,
            vec![
                TemplatePart::Literal("--x=".into()),
                TemplatePart::Placeholder("dataset".into()),
                TemplatePart::Literal(":{lit}".into()),
            ]
        );
        let rendered: Result<String, ()> = t.render(|n| Ok(format!("<{n}>")));
        assert_eq!(rendered.unwrap(), "--x=<dataset>:{lit}");
    }

    #[test]
    fn rejects_bad_templates() {
        assert!(Template::parse("{unclosed").is_err());
        assert!(Template::parse("{Bad-Name}").is_err());
        assert!(Template::parse("a}b").is_err());
    }
}
