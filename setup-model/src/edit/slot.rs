//! Where an edited entry sits in a client's file (its own file so that the format editors
//! and the dispatch in `mod.rs` share it without importing each other).

/// Where the entry sits: the keys of the containing object, then the entry's own key.
#[derive(Debug, Clone, Copy)]
pub struct Slot<'a> {
    pub container: &'a [&'a str],
    pub name: &'a str,
}
