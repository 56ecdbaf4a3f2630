//! Generic rendering: the compare table (terminal, CSV, JSON), replay
//! reports, underlay info, SVG plots, maps, round timelines and HTML pages.
//! What is computed lives with its use case (the comparison in
//! [`crate::evaluate::compare`], the papers' tables in [`crate::reproduce`]
//! with their renderers). Every hand-made table goes
//! through [`table::Table`] (terminal, Markdown, CSV via the `csv` crate).

pub mod breakdown;
mod format;
pub mod gantt;
pub mod html;
pub mod map;
mod output_format;
pub mod plot;
pub mod replay;
pub mod svg;
pub mod table;
pub mod train_curves;
pub mod underlay_info;

pub use format::{comparison_table, render_csv, render_json, render_table, OutputFormat};
pub use output_format::UnknownFormat;
