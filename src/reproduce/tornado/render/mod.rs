//! Reports of `fedtopo tornado` ([`crate::reproduce::tornado`]): terminal
//! tables and CSV files.
//!
//! * [`clustering`]: Table 3, ours vs published.
//! * [`time`]: the programs timed on a network; `nodes.csv`, `links.csv`.
//! * [`learn`]: training outcomes for one or several seeds; `curves.csv`,
//!   `summary.csv`.

pub mod clustering;
pub mod learn;
pub mod time;

pub use clustering::clustering_table;
