//! Reproductions of published results, one module per paper: each runs the
//! library on the paper's set-up and returns rows of ours next to the
//! published values, which are constants of that module. Tables, Markdown
//! and CSV are written by [`crate::report`]; `fedtopo reproduce` and
//! `fedtopo tornado` only parse arguments and call these.
//!
//! * [`throughput`]: the network of \[Marfoq20\] (Tables 3, 6, 7 of
//!   STAR, MST, delta-MBST and RING are the experiment file
//!   `experiments/throughput-tables/experiment.toml`).
//! * [`matcha`]: the MATCHA and MATCHA+ columns of those tables.
//! * [`dcliques`]: D-Cliques (\[Bellet21\]): edges and messages per
//!   node, Greedy Swap skew.
//! * [`tornado`]: TornadoAggregate (\[Lee21\]): Table 3, the Table 4
//!   programs timed and trained.
//! * [`init_gain`]: the scaling exponents of `||pi||` (\[BadieModiri24\],
//!   Fig. 5).
//! * [`multigraph`]: the Multigraph topology (\[Do23\] Table 3), their
//!   timing next to the exact max-plus rate and the replay.

pub mod dcliques;
pub mod init_gain;
pub mod matcha;
pub mod multigraph;
pub mod throughput;
pub mod tornado;

pub use throughput::paper_model;

/// The eight underlays of \[Marfoq20\] (Table 2, in its order), by the file
/// stem they have under `underlays/paper/` of the shared data.
pub const PAPER_UNDERLAYS: [&str; 8] = [
    "gaia",
    "amazon_us",
    "geantdistance",
    "exodus",
    "ebone",
    "telstra",
    "tiscali",
    "sprint",
];
