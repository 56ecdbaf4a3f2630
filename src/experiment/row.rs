//! One job's result: a row of named [`Cell`]s. [`Cell`] is also the type of
//! an experiment file's grid values (text or a number, kept as written).

use serde::{Deserialize, Serialize};

use crate::units::parse_bandwidth;

/// One value: a result row's cell, or a grid value of an experiment file
/// (text or a number, kept as written).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Cell {
    /// A whole number (a count).
    Int(i64),
    /// A number with a fraction, e.g. a measurement (written with Rust's
    /// shortest round-trip format).
    Float(f64),
    /// Text (axis values as written, labels).
    Text(String),
}

/// A grid value as written: a whole number, a number, text, or a TOML
/// boolean (kept as the text `true` / `false`).
impl<'de> Deserialize<'de> for Cell {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Cell {
            Int(i64),
            Float(f64),
            Text(String),
            Bool(bool),
        }
        Ok(match Cell::deserialize(d)? {
            Cell::Int(v) => Self::Int(v),
            Cell::Float(v) => Self::Float(v),
            Cell::Text(v) => Self::Text(v),
            Cell::Bool(v) => Self::Text(v.to_string()),
        })
    }
}

impl std::fmt::Display for Cell {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Cell::Int(v) => write!(f, "{v}"),
            Cell::Float(v) => write!(f, "{v}"),
            Cell::Text(v) => f.write_str(v),
        }
    }
}

impl From<&str> for Cell {
    fn from(v: &str) -> Self {
        Cell::Text(v.to_string())
    }
}
impl From<String> for Cell {
    fn from(v: String) -> Self {
        Cell::Text(v)
    }
}
impl From<f64> for Cell {
    fn from(v: f64) -> Self {
        Cell::Float(v)
    }
}
impl From<usize> for Cell {
    fn from(v: usize) -> Self {
        Cell::Int(i64::try_from(v).unwrap_or(i64::MAX))
    }
}
impl From<u64> for Cell {
    fn from(v: u64) -> Self {
        Cell::Int(i64::try_from(v).unwrap_or(i64::MAX))
    }
}

/// The result of one job: named columns in a fixed order (the same for
/// every job of an experiment kind), stored as JSON and joined into
/// `results.csv`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ResultRow {
    /// `(column, value)` in output order.
    pub cells: Vec<(String, Cell)>,
}

impl ResultRow {
    /// Appends column `name`.
    pub fn push(&mut self, name: &str, value: impl Into<Cell>) -> &mut Self {
        self.cells.push((name.to_string(), value.into()));
        self
    }

    /// A column's value.
    pub fn cell(&self, name: &str) -> Option<&Cell> {
        self.cells.iter().find(|(c, _)| c == name).map(|(_, v)| v)
    }

    /// A column's value as text (`None` for unknown columns).
    pub fn column(&self, name: &str) -> Option<String> {
        self.cell(name).map(Cell::to_string)
    }

    /// A numeric column's value.
    pub fn number(&self, name: &str) -> Option<f64> {
        match self.cell(name)? {
            Cell::Int(v) => Some(*v as f64),
            Cell::Float(v) => Some(*v),
            Cell::Text(t) => numeric(t),
        }
    }

    /// Column names, in order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.cells.iter().map(|(c, _)| c.as_str())
    }
}

/// A numeric value of a column: a number, or a bandwidth such as `10G`.
pub(crate) fn numeric(text: &str) -> Option<f64> {
    text.parse::<f64>()
        .ok()
        .or_else(|| parse_bandwidth(text).ok())
}
