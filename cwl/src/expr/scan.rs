//! Splitting a CWL string field into literal text and `$(…)` / `${…}` expressions (CWL v1.2
//! concepts.md "Parameter references" and "Expressions"). The nesting rules follow the
//! reference runner's scanner: inside `$(` only parentheses nest, inside `${` only braces, and
//! a quoted string (with `\` escapes) hides either; escapes outside expressions are `\$(`,
//! `\${` (a literal `$(` / `${`) and `\\` (one backslash); any other backslash stays as is.

/// One piece of a scanned string field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Segment {
    /// Literal text, escapes already resolved.
    Text(String),
    /// The inside of `$(…)` (without the parentheses).
    Paren(String),
    /// The inside of `${…}` (without the braces): a JavaScript function body.
    Brace(String),
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum State {
    Paren,
    Brace,
    Single,
    Double,
}

/// The segments of `text`, or a message naming where an expression is left open.
pub fn parse_refs(text: &str) -> Result<Vec<Segment>, String> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut lit = String::new();
    let mut i = 0;
    let mut lit_start = 0;
    while i < b.len() {
        match b[i] {
            b'\\' => {
                lit.push_str(&text[lit_start..i]);
                let rest = &text[i + 1..];
                if rest.starts_with("$(") || rest.starts_with("${") {
                    lit.push_str(&rest[..2]);
                    i += 3;
                } else if rest.starts_with('\\') {
                    lit.push('\\');
                    i += 2;
                } else {
                    // Any other escape is kept whole (backslash and the next character).
                    let next = rest.chars().next().map_or(0, char::len_utf8);
                    lit.push_str(&text[i..i + 1 + next]);
                    i += 1 + next;
                }
                lit_start = i;
            }
            b'$' if matches!(b.get(i + 1), Some(b'(' | b'{')) => {
                lit.push_str(&text[lit_start..i]);
                let end = closing(b, i + 1).ok_or_else(|| {
                    let kind = if b[i + 1] == b'(' { "$(" } else { "${" };
                    let at = text[..i].chars().count();
                    format!("the `{kind}` at character {at} is never closed")
                })?;
                if !lit.is_empty() {
                    out.push(Segment::Text(std::mem::take(&mut lit)));
                }
                let inner = text[i + 2..end].to_owned();
                out.push(if b[i + 1] == b'(' {
                    Segment::Paren(inner)
                } else {
                    Segment::Brace(inner)
                });
                i = end + 1;
                lit_start = i;
            }
            _ => i += 1,
        }
    }
    lit.push_str(&text[lit_start..]);
    if !lit.is_empty() {
        out.push(Segment::Text(lit));
    }
    Ok(out)
}

/// The index of the `)` or `}` that closes the opener at `open`.
fn closing(b: &[u8], open: usize) -> Option<usize> {
    let mut stack = vec![if b[open] == b'(' {
        State::Paren
    } else {
        State::Brace
    }];
    let mut i = open + 1;
    while i < b.len() {
        let top = *stack.last()?;
        let c = b[i];
        match top {
            State::Single | State::Double => {
                if c == b'\\' {
                    i += 1;
                } else if (c == b'\'' && top == State::Single)
                    || (c == b'"' && top == State::Double)
                {
                    stack.pop();
                }
            }
            State::Paren | State::Brace => match c {
                b'\'' => stack.push(State::Single),
                b'"' => stack.push(State::Double),
                b'\\' => i += 1,
                b'(' if top == State::Paren => stack.push(State::Paren),
                b'{' if top == State::Brace => stack.push(State::Brace),
                b')' if top == State::Paren => {
                    stack.pop();
                }
                b'}' if top == State::Brace => {
                    stack.pop();
                }
                _ => {}
            },
        }
        if stack.is_empty() {
            return Some(i);
        }
        i += 1;
    }
    None
}

/// True when `text` holds an unescaped `$(` or `${` (whether or not it is closed).
pub fn has_expression(text: &str) -> bool {
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            b'$' if matches!(b.get(i + 1), Some(b'(' | b'{')) => return true,
            _ => i += 1,
        }
    }
    false
}
