//! clap value parsers for the library's named choices (network model, path
//! model, output format): the library owns the names (`FromStr`, `Display`,
//! `ALL`), clap only lists them in the help and rejects anything else.

use std::str::FromStr;

use clap::builder::{PossibleValuesParser, TypedValueParser};

/// A parser accepting the `name` of each value in `all` (listed in the help as
/// `[possible values: ...]`) and returning the value `FromStr` gives for it.
pub fn choice<T, const N: usize>(
    all: [T; N],
    name: fn(T) -> &'static str,
) -> impl TypedValueParser<Value = T> + 'static
where
    T: FromStr + Clone + Send + Sync + 'static,
    T::Err: std::error::Error + Send + Sync + 'static,
{
    PossibleValuesParser::new(all.map(name)).try_map(|s| s.parse::<T>())
}
