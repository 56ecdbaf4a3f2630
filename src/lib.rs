//! # fedtopo
//!
//! A network and timing simulator for federated and decentralized learning:
//! which communication topology trains fastest, in wall-clock time, on a
//! real network?
//!
//! The pipeline, one module per stage:
//!
//! ```text
//!  GML file ──> underlay ──> connectivity ──> overlay ──> timing ──> report
//!  (routers,    (routes,      (who sends     (max-plus cycle   (tables,
//!   links,       l(i,j) ms,    to whom)        time, \[Marfoq20\] eq. 3)      CSV, JSON,
//!   silos)       A(i,j) bit/s)                                   GML/DOT)
//! ```
//!
//! * [`underlay`]: GML reader and the [`underlay::Underlay`] it builds.
//! * [`access`]: silo access links (bit/s).
//! * [`connectivity`]: routes and the `paper` / `bottleneck` path models.
//! * [`placement`]: which router each silo is attached to (default: one per router).
//! * [`workload`]: model size (bit), compute time (ms), local steps.
//! * [`delay`]: \[Marfoq20\] eq. (3), the delay of an overlay arc (ms).
//! * [`overlay`]: STAR, MST, delta-MBST, RING, ring-opt, complete, MATCHA schedules; export.
//! * [`maxplus`]: Karp and Howard maximum cycle mean, the recurrence.
//! * [`timing`]: the cycle time of an overlay on a network.
//! * [`scenario`]: the usual way to assemble all of the above.
//! * [`report`]: comparison tables as text, CSV and JSON; SVG plots.
//! * [`program`]: round programs of hierarchical / ring-based FL (TornadoAggregate
//!   and \[Lee21\] Table 4), grouping, timing in the event engine.
//! * [`experiment`]: declarative experiment files, parallel and sharded sweeps.
//! * [`reproduce`]: the papers' tables, ours vs published, one module per paper.
//! * [`train`]: DPASGD training coupled to the simulator (models need the
//!   `train` feature).
//!
//! * [`cite`]: the citation keys (`\[Marfoq20\]`, `\[Wang19\]`, `\[Bellet21\]`,
//!   `\[Lee21\]`, `\[BadieModiri24\]`, ...) every equation or algorithm
//!   reference in these docs names.
//!
//! Units: time in ms, sizes in bit, bandwidth in bit/s, lengths in km.

#![warn(missing_docs)]

pub mod access;
pub mod builtin;
pub mod cite;
pub mod connectivity;
pub mod delay;
pub mod engine;
pub mod evaluate;
pub mod experiment;
pub mod graph;
pub mod maxplus;
pub mod network;
pub mod overlay;
pub mod placement;
pub mod program;
pub mod replay;
pub mod report;
pub mod reproduce;
pub mod scenario;
pub mod timing;
pub mod train;
pub mod underlay;
pub mod units;
pub mod workload;
