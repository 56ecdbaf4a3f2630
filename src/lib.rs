//! # fedtopo
//!
//! A network and timing simulator for federated and decentralized learning:
//! which communication topology trains fastest, in wall-clock time, on a
//! real network?
//!
//! The pipeline, one module per stage, each floor importing only from the
//! floors before it (checked in CI by `scripts/module-graph.py --check`):
//!
//! ```text
//!  underlay ─> connectivity ─> delay ─> overlay ─> timing / replay ─> evaluate ─> train ─> report
//!  (routers,   (routes, l(i,j)  (eq. 3  (who sends  (max-plus cycle   (one value  (DPASGD  (tables,
//!   links,      ms, A(i,j)       arc     to whom)    time; event      per built   on the   CSV, JSON,
//!   silos)      bit/s)           delay)              replay)          overlay)    clock)   SVG, GML)
//! ```
//!
//! Foundations:
//! * [`units`]: ms, bit, bit/s and their parsers.
//! * [`engine`]: the discrete-event core (time-ordered queue, cancellation).
//! * [`maxplus`]: Karp and Howard maximum cycle mean, the max-plus recurrence.
//! * [`csv_file`]: bounded reading of input CSVs, one error type with file:line.
//! * [`input_file`]: bounded reading of input files (regular files only, size caps).
//! * [`progress`]: progress of long work: tasks the library counts, the
//!   timer-driven reporter the CLI installs on stderr.
//! * [`cite`]: the citation keys (`\[Marfoq20\]`, `\[Wang19\]`,
//!   `\[Bellet21\]`, `\[Lee21\]`, `\[BadieModiri24\]`, ...) every equation
//!   or algorithm reference in these docs names.
//!
//! The network ([`net`], one wing): [`net::underlay`] (GML reader,
//! [`net::underlay::Underlay`]), [`net::builtin`], [`net::placement`],
//! [`net::access`], [`net::silos`], [`net::links`], [`net::connectivity`],
//! [`net::workload`], [`net::dynamics`], [`net::delay`] (\[Marfoq20\]
//! eq. 3) and [`net::scenario`] (the front door: [`net::scenario::NetworkSpec`]
//! parses every network knob into a delay model). Then:
//! * [`network`]: network models of the event replay (maxplus, paper, flow).
//!
//! Overlays and their timing:
//! * [`graph`]: overlay graph types ([`graph::Overlay`], [`graph::Protocol`],
//!   [`graph::OverlaySchedule`]) and random failures.
//! * [`timing`]: max-plus cycle time of an overlay, of a per-round schedule,
//!   of two-phase (clique averaging) rounds.
//! * [`mixing`]: consensus: the one mixing-matrix type
//!   ([`mixing::ConsensusMatrix`]), the consensus rules, how they mix (SLEM,
//!   spectral gap, effective number of neighbours), fastest-mixing weights
//!   (\[Boyd04\]).
//! * [`overlay`]: the builders (STAR, MST, delta-MBST, RING, ring-opt,
//!   complete, random, D-Cliques, MATCHA), build-by-name, export.
//! * [`replay`]: the one protocol harness over engine and network; round
//!   replay, two-phase replay, the round stepper and round clocks; where
//!   each round's time goes ([`replay::breakdown`]).
//! * [`calibrate`]: the network model fitted to a measured run's log
//!   (compute, access links, pair latencies and cores) and its error.
//! * [`evaluate`]: [`evaluate::EvaluatedOverlay`], any overlay kind built,
//!   timed, replayed, clocked and exported through one value; the compare
//!   use case ([`evaluate::compare`]).
//!
//! Training and studies:
//! * [`train`]: DPASGD training coupled to the simulator (models need the
//!   `train` feature).
//! * [`program`]: round programs of hierarchical / ring-based FL
//!   (TornadoAggregate and \[Lee21\] Table 4): grouping, event timing, learners.
//! * [`design`]: overlay design: arc augmentation and its Pareto front, the
//!   design search (candidates, rounds predictor), calibration, verification.
//! * [`experiment`]: declarative experiment files, parallel and sharded sweeps.
//! * [`report`]: generic rendering: tables (one writer), the compare table,
//!   replay reports, SVG plots, maps, HTML pages.
//! * [`reproduce`]: the papers' tables, ours vs published, one module per paper.
//!
//! Units: time in ms, sizes in bit, bandwidth in bit/s, lengths in km.
//!
//! To use the library, start from [`prelude`] (`use fedtopo::prelude::*;`)
//! and `examples/library.rs`; the entry points with runnable examples are
//! [`net::underlay::Underlay`], [`net::scenario::NetworkSpec`],
//! [`evaluate::EvaluatedOverlay`], [`replay::replay`],
//! [`replay::clock::EngineClock`] and [`experiment::run_jobs`]. The manual
//! (the command line, file formats, measured numbers) is `docs/` in the
//! repository; `docs/architecture.md` lists every module.

#![warn(missing_docs)]

pub mod calibrate;
pub mod cite;
pub mod csv_file;
pub mod design;
pub mod engine;
pub mod evaluate;
pub mod experiment;
pub mod graph;
pub mod input_file;
pub mod maxplus;
pub mod mixing;
pub mod net;
pub mod network;
pub mod overlay;
pub mod program;
pub mod progress;
pub mod replay;
pub mod report;
pub mod reproduce;
pub mod timing;
pub mod train;
pub mod units;

/// The types of the pipeline in one import (`use fedtopo::prelude::*;`):
/// load an underlay, turn it into a delay model, build and time overlays,
/// replay them and clock training rounds. See `examples/library.rs`.
pub mod prelude {
    pub use crate::evaluate::EvaluatedOverlay;
    pub use crate::graph::{Overlay, OverlaySchedule};
    pub use crate::net::delay::DelayModel;
    pub use crate::net::scenario::{load_underlay, NetworkSpec};
    pub use crate::net::underlay::{LoadOptions, Underlay};
    pub use crate::network::NetworkKind;
    pub use crate::overlay::build::{BuildOptions, OverlayKind};
    pub use crate::replay::clock::{EngineClock, RoundClock};
    pub use crate::replay::{replay, ReplayOptions, ReplayResult, SiloRound};
}
