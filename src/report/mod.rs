//! Reports: comparing overlays on one network, as a terminal table, CSV or JSON.

mod compare;
mod format;
mod output_format;
pub mod plot;

pub use compare::{compare_overlays, CompareRow, Comparison, ScheduleStats};
pub use format::{render_csv, render_json, render_table, OutputFormat};
pub use output_format::UnknownFormat;
pub mod replay;
