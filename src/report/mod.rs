//! Reports: comparing overlays on one network, as a terminal table, CSV or
//! JSON; replay and reproduction reports. Every hand-made table goes
//! through [`table::Table`] (terminal, Markdown, CSV via the `csv` crate).

pub mod breakdown;
mod compare;
pub mod dcliques;
mod format;
pub mod gantt;
pub mod html;
pub mod init_gain;
pub mod map;
pub mod matcha;
pub mod mixing;
pub mod network;
mod output_format;
pub mod plot;
pub mod progress;
pub mod replay;
pub mod svg;
pub mod table;
pub mod tornado;
pub mod train_curves;
pub mod underlay_info;

pub use compare::{compare_overlays, CompareRow, Comparison, ScheduleStats};
pub use format::{comparison_table, render_csv, render_json, render_table, OutputFormat};
pub use output_format::UnknownFormat;
