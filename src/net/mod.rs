//! The network wing: everything that describes the real network a
//! federation runs on, bottom up (each module imports only from the ones
//! before it; checked by `scripts/module-graph.py --check`).
//!
//! * [`underlay`]: GML (and node-link, matrix) readers and the
//!   [`underlay::Underlay`] they build.
//! * [`builtin`]: the built-in underlays.
//! * [`placement`]: which router each silo is attached to (default: one per router).
//! * [`access`]: silo access links (bit/s).
//! * [`silos`]: heterogeneous silos from a CSV (per-silo compute time, access).
//! * [`links`]: measured core links from a CSV (latency, capacity).
//! * [`connectivity`]: routes and the `paper` / `bottleneck` path models.
//! * [`workload`]: model size (bit), compute time (ms), local steps.
//! * [`dynamics`]: bandwidth, latency and silo availability over time (trace
//!   files, seeded generators), used by every network model of the replay.
//! * [`delay`]: \[Marfoq20\] eq. (3), the delay of an overlay arc (ms), in one place.
//! * [`description`]: the network as reports show it (per-silo values,
//!   measured links, the model's name and knobs).
//! * [`scenario`]: the front door: load an underlay; [`scenario::NetworkSpec`]
//!   parses every network knob (CLI and experiment files) into a delay model.

pub mod access;
pub mod builtin;
pub mod connectivity;
pub mod delay;
pub mod description;
pub mod dynamics;
pub mod links;
pub mod placement;
pub mod scenario;
pub mod silos;
pub mod underlay;
pub mod workload;
