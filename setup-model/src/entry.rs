//! The value scimcp writes for its server, in an ordered form every format renders the same
//! way (keys in the order the client documents them, not sorted).

use serde_json::Value as Json;

/// An entry value with ordered object keys.
#[derive(Debug, Clone, PartialEq)]
pub enum Entry {
    Str(String),
    Bool(bool),
    Int(i64),
    List(Vec<Entry>),
    Map(Vec<(String, Entry)>),
}

impl Entry {
    /// An ordered map from `(key, value)` pairs.
    pub fn map<const N: usize>(pairs: [(&str, Entry); N]) -> Entry {
        Entry::Map(pairs.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
    }

    pub fn str(s: impl Into<String>) -> Entry {
        Entry::Str(s.into())
    }

    pub fn strs<I: IntoIterator<Item = S>, S: Into<String>>(items: I) -> Entry {
        Entry::List(items.into_iter().map(|s| Entry::Str(s.into())).collect())
    }

    /// The JSON value (for comparisons and the receipt; key order is not significant there).
    pub fn to_json(&self) -> Json {
        match self {
            Entry::Str(s) => Json::String(s.clone()),
            Entry::Bool(b) => Json::Bool(*b),
            Entry::Int(i) => Json::from(*i),
            Entry::List(items) => Json::Array(items.iter().map(Entry::to_json).collect()),
            Entry::Map(pairs) => Json::Object(
                pairs
                    .iter()
                    .map(|(k, v)| (k.clone(), v.to_json()))
                    .collect(),
            ),
        }
    }

    /// The value as the JSONC editor's input (ordered).
    pub fn to_cst(&self) -> jsonc_parser::cst::CstInputValue {
        use jsonc_parser::cst::CstInputValue as C;
        match self {
            Entry::Str(s) => C::String(s.clone()),
            Entry::Bool(b) => C::Bool(*b),
            Entry::Int(i) => C::Number(i.to_string()),
            Entry::List(items) => C::Array(items.iter().map(Entry::to_cst).collect()),
            Entry::Map(pairs) => {
                C::Object(pairs.iter().map(|(k, v)| (k.clone(), v.to_cst())).collect())
            }
        }
    }
}
