//! One module per subcommand.

pub(crate) mod adapter;
pub(crate) mod serve;
pub(crate) mod token;
