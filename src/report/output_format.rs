//! Names of the [`OutputFormat`]s: parsing and printing (`table`, `csv`,
//! `json`), so the CLI and any other front end share one spelling.

use std::fmt;
use std::str::FromStr;

use super::OutputFormat;

impl OutputFormat {
    /// Every format, in the order they are listed to users.
    pub const ALL: [OutputFormat; 3] = [OutputFormat::Table, OutputFormat::Csv, OutputFormat::Json];

    /// The format's name (`table`, `csv`, `json`), as parsed by [`str::parse`].
    pub fn name(self) -> &'static str {
        match self {
            OutputFormat::Table => "table",
            OutputFormat::Csv => "csv",
            OutputFormat::Json => "json",
        }
    }
}

impl fmt::Display for OutputFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An unknown output format name.
#[derive(Debug, Clone, thiserror::Error, PartialEq)]
#[error("unknown output format `{0}`; expected table, csv or json")]
pub struct UnknownFormat(pub String);

impl FromStr for OutputFormat {
    type Err = UnknownFormat;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        OutputFormat::ALL
            .into_iter()
            .find(|f| f.name() == s)
            .ok_or_else(|| UnknownFormat(s.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_unknown_lists_choices() {
        for f in OutputFormat::ALL {
            assert_eq!(f.to_string().parse::<OutputFormat>(), Ok(f));
        }
        let err = "xml".parse::<OutputFormat>().unwrap_err().to_string();
        assert!(err.contains("table, csv or json"), "{err}");
    }
}
