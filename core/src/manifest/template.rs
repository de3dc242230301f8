//! Templates: literal text with `{name}` placeholders (`{{` and `}}` escape braces), each
//! placeholder optionally followed by filters: `{name|filter|filter:argument}`. There is never
//! a shell: an argument template renders to exactly one argument.
//!
//! Filters turn a validated, typed value into the text a real CLI expects:
//!
//! | filter | gives |
//! |---|---|
//! | `text` | the value as text (a number `0.1` → `"0.1"`): in a structured template, a string |
//! | `json` | the value as compact canonical JSON text |
//! | `map:a=1,b=2` | the text the value maps to (`true=1,false=2` for a menu's answer) |
//! | `count` | the number of items of a list |
//! | `positions` | the 1-based positions of the named dataset columns in file order, `"8; 9; 12"` |
//! | `positions:p,q` | the same for the columns of this value and of parameters `p`, `q` together |
//! | `positions_in:p,q` | their 1-based positions among the columns named by parameters `p`, `q` taken together in file order (a CLI that numbers a selected subset) |
//!
//! Besides parameters, templates may use the run values ([`RUN_VALUES`]), the run's copy of
//! a named file input (`{input.<id>}`) and, in structured input files, `{null}` for a JSON
//! `null`.
//!
//! Two rules are about whole argv elements only: an element that is exactly `{options}`
//! ([`OPTIONS`]) is where the workflow's `options` go (without one, after the argv); and an
//! element that is exactly one placeholder whose last filter is `map`, mapping the value to
//! empty text (`{verbose|map:true=--verbose,false=}`), renders no argument at all. Any other
//! template that renders empty is an empty argument, as before.

use std::fmt;

/// Values the server fills in itself, beside the workflow's parameters.
///
/// `dataset` and `output_dir` are paths relative to the run's working directory;
/// `work_dir` and `state_dir` are absolute (the working directory, and the adapter's
/// persistent state directory), substituted when the run starts so the plan and its hash
/// stay the same on every machine.
pub const RUN_VALUES: &[&str] = &["dataset", "output_dir", "work_dir", "state_dir"];

/// Run values that stand for absolute, machine-specific paths: they stay symbolic in plans.
pub const ABSOLUTE_RUN_VALUES: &[&str] = &["work_dir", "state_dir"];

/// The placeholder that renders JSON `null` in a structured input file.
pub const NULL: &str = "null";

/// The argv element `{options}`: where the workflow's `options` are placed.
pub const OPTIONS: &str = "options";

/// A parsed template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Template {
    pub parts: Vec<TemplatePart>,
}

/// A piece of a [`Template`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TemplatePart {
    Literal(String),
    Placeholder(Placeholder),
}

/// `{name|filter…}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Placeholder {
    pub name: String,
    pub filters: Vec<Filter>,
}

/// A conversion applied to a placeholder's value, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Filter {
    Text,
    Json,
    Count,
    Map(Vec<(String, String)>),
    /// Positions of this value's columns, with those of the named parameters.
    Positions(Vec<String>),
    PositionsIn(Vec<String>),
}

impl Filter {
    /// Does this filter read the dataset's columns?
    pub fn needs_columns(&self) -> bool {
        matches!(self, Filter::Positions(_) | Filter::PositionsIn(_))
    }
}

impl Placeholder {
    /// The named file input this placeholder renders (`{input.ligand}` → `ligand`).
    pub fn input_id(&self) -> Option<&str> {
        super::inputs::input_placeholder_id(&self.name)
    }

    /// Parameters this placeholder reads: its own name and any `positions_in` sources.
    pub fn parameters(&self) -> impl Iterator<Item = &str> {
        std::iter::once(self.name.as_str()).chain(self.filters.iter().flat_map(|f| match f {
            Filter::PositionsIn(names) | Filter::Positions(names) => {
                names.iter().map(String::as_str).collect::<Vec<_>>()
            }
            _ => Vec::new(),
        }))
    }

    /// True when the rendered value is text whatever the parameter's type.
    pub fn yields_text(&self) -> bool {
        !self.filters.is_empty()
    }
}

/// Why a template does not parse.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TemplateError(pub String);

impl fmt::Display for TemplateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

fn parse_placeholder(inner: &str) -> Result<Placeholder, TemplateError> {
    let mut pieces = inner.split('|');
    let name = pieces.next().unwrap_or_default().to_string();
    let valid = match super::inputs::input_placeholder_id(&name) {
        Some(id) => is_placeholder_name(id),
        None => is_placeholder_name(&name),
    };
    if !valid {
        return Err(TemplateError(format!(
            "placeholder {{{inner}}} does not start with a valid name: use lower-case letters, digits and _ (or input.<id> for a named file input)"
        )));
    }
    let mut filters = Vec::new();
    for piece in pieces {
        let (kind, arg) = match piece.split_once(':') {
            Some((k, a)) => (k, Some(a)),
            None => (piece, None),
        };
        let filter = match (kind, arg) {
            ("text", None) => Filter::Text,
            ("json", None) => Filter::Json,
            ("count", None) => Filter::Count,
            ("positions", None) => Filter::Positions(Vec::new()),
            ("positions", Some(names)) => {
                let names: Vec<String> = names.split(',').map(|n| n.trim().to_string()).collect();
                if names.iter().any(|n| !is_placeholder_name(n)) {
                    return Err(TemplateError(format!(
                        "in {{{inner}}}: positions takes parameter names separated by commas"
                    )));
                }
                Filter::Positions(names)
            }
            ("map", Some(pairs)) => {
                let mut map = Vec::new();
                for pair in pairs.split(',') {
                    let Some((k, v)) = pair.split_once('=') else {
                        return Err(TemplateError(format!(
                            "in {{{inner}}}: map entries are key=value, separated by commas (got {pair:?})"
                        )));
                    };
                    map.push((k.trim().to_string(), v.trim().to_string()));
                }
                Filter::Map(map)
            }
            ("positions_in", Some(names)) => {
                let names: Vec<String> = names.split(',').map(|n| n.trim().to_string()).collect();
                if names.iter().any(|n| !is_placeholder_name(n)) {
                    return Err(TemplateError(format!(
                        "in {{{inner}}}: positions_in takes parameter names separated by commas"
                    )));
                }
                Filter::PositionsIn(names)
            }
            _ => {
                return Err(TemplateError(format!(
                    "in {{{inner}}}: unknown filter {piece:?}; filters are text, json, count, map:k=v,…, positions, positions_in:p,…"
                )));
            }
        };
        filters.push(filter);
    }
    Ok(Placeholder { name, filters })
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
                    let mut inner = String::new();
                    let mut closed = false;
                    for (_, c) in chars.by_ref() {
                        if c == '}' {
                            closed = true;
                            break;
                        }
                        inner.push(c);
                    }
                    if !closed {
                        return Err(TemplateError(format!(
                            "unclosed placeholder starting at character {i} (write {{{{ for a literal brace)"
                        )));
                    }
                    let placeholder = parse_placeholder(&inner)?;
                    if !literal.is_empty() {
                        parts.push(TemplatePart::Literal(std::mem::take(&mut literal)));
                    }
                    parts.push(TemplatePart::Placeholder(placeholder));
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
        self.placeholder_parts().map(|p| p.name.as_str())
    }

    /// The placeholders, in order.
    pub fn placeholder_parts(&self) -> impl Iterator<Item = &Placeholder> {
        self.parts.iter().filter_map(|p| match p {
            TemplatePart::Placeholder(p) => Some(p),
            TemplatePart::Literal(_) => None,
        })
    }

    /// The template is exactly one placeholder (which then keeps its value's type in a
    /// structured template, unless a filter makes it text).
    pub fn sole_placeholder(&self) -> Option<&Placeholder> {
        match self.parts.as_slice() {
            [TemplatePart::Placeholder(p)] => Some(p),
            _ => None,
        }
    }

    /// Is this the whole-element `{options}` marker?
    pub fn is_options_marker(&self) -> bool {
        self.sole_placeholder()
            .is_some_and(|p| p.name == OPTIONS && p.filters.is_empty())
    }

    /// Does this argv element render no argument when it renders empty? Only a template
    /// that is one placeholder whose last filter is `map`: there the empty text is the
    /// manifest's explicit "nothing" for that value, never an accident of the data.
    pub fn omitted_when_empty(&self) -> bool {
        self.sole_placeholder()
            .and_then(|p| p.filters.last())
            .is_some_and(|f| matches!(f, Filter::Map(_)))
    }

    /// Render with `lookup` giving each placeholder's text.
    pub fn render<E>(
        &self,
        mut lookup: impl FnMut(&Placeholder) -> Result<String, E>,
    ) -> Result<String, E> {
        let mut out = String::new();
        for part in &self.parts {
            match part {
                TemplatePart::Literal(s) => out.push_str(s),
                TemplatePart::Placeholder(p) => out.push_str(&lookup(p)?),
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
        assert_eq!(t.parts.len(), 3);
        let rendered: Result<String, ()> = t.render(|p| Ok(format!("<{}>", p.name)));
        assert_eq!(rendered.unwrap(), "--x=<dataset>:{lit}");
    }

    #[test]
    fn options_marker_and_empty_map_elements_are_whole_elements_only() {
        assert!(Template::parse("{options}").unwrap().is_options_marker());
        assert!(!Template::parse("-{options}").unwrap().is_options_marker());
        assert!(
            !Template::parse("{options|text}")
                .unwrap()
                .is_options_marker()
        );
        assert!(
            Template::parse("{verbose|map:true=--verbose,false=}")
                .unwrap()
                .omitted_when_empty()
        );
        // Literal text around it, or a filter after the map: an empty result is an argument.
        assert!(
            !Template::parse("-v{verbose|map:true=1,false=}")
                .unwrap()
                .omitted_when_empty()
        );
        assert!(
            !Template::parse("{n|map:1=,2=x|text}")
                .unwrap()
                .omitted_when_empty()
        );
        assert!(!Template::parse("{name}").unwrap().omitted_when_empty());
        let t = Template::parse("{verbose|map:true=--verbose,false=}").unwrap();
        assert_eq!(
            t.sole_placeholder().unwrap().filters,
            vec![Filter::Map(vec![
                ("true".into(), "--verbose".into()),
                ("false".into(), String::new())
            ])]
        );
    }

    #[test]
    fn parses_filters() {
        let t = Template::parse("{bootstrap|map:true=1,false=2}").unwrap();
        let p = t.sole_placeholder().unwrap();
        assert_eq!(p.name, "bootstrap");
        assert_eq!(
            p.filters,
            vec![Filter::Map(vec![
                ("true".into(), "1".into()),
                ("false".into(), "2".into())
            ])]
        );
        let t = Template::parse("{target|positions_in:features,target}").unwrap();
        let p = t.sole_placeholder().unwrap();
        assert_eq!(
            p.parameters().collect::<Vec<_>>(),
            ["target", "features", "target"]
        );
        assert!(
            Template::parse("{n|text}")
                .unwrap()
                .sole_placeholder()
                .unwrap()
                .yields_text()
        );
    }

    #[test]
    fn parses_input_placeholders() {
        let t = Template::parse("--ligand={input.ligand}").unwrap();
        let p = t.placeholder_parts().next().unwrap();
        assert_eq!(p.name, "input.ligand");
        assert_eq!(p.input_id(), Some("ligand"));
        assert!(Template::parse("{input.}").is_err());
        assert!(Template::parse("{input.Bad}").is_err());
        assert!(Template::parse("{other.x}").is_err());
    }

    #[test]
    fn rejects_bad_templates() {
        assert!(Template::parse("{unclosed").is_err());
        assert!(Template::parse("{Bad-Name}").is_err());
        assert!(Template::parse("a}b").is_err());
        assert!(Template::parse("{x|frobnicate}").is_err());
        assert!(Template::parse("{x|map:a}").is_err());
        assert!(Template::parse("{x|positions_in:Bad}").is_err());
    }
}
