//! The Multigraph topology (\[Do23\]) on \[Marfoq20\]'s network, as in
//! \[Do23\] Table 3 (core 1 Gbit/s, access 10 Gbit/s, `s = 1`; FEMNIST,
//! iNaturalist, Sentiment140 on Gaia, AWS North America, Geant, Exodus,
//! Ebone), timed three ways on the same schedule:
//!
//! * their figure, an average over a fixed number of rounds of a per-round
//!   cycle mean ([`crate::timing::multigraph`]);
//! * the exact max-plus rate of the period, with weak edges idle or with
//!   transfers running in the background
//!   ([`crate::overlay::families::multigraph::WeakEdges`],
//!   [`crate::timing::schedule::periodic_rate`]);
//! * an event replay on a network model (`flow`: max-min fair sharing of
//!   the access and core links).
//!
//! `experiments/multigraph` (`cargo run --release --example multigraph`)
//! writes the table; `tests/multigraph.rs` checks it.

use std::fmt;

use serde::Serialize;

use crate::graph::{Overlay, OverlaySchedule};
use crate::net::access::AccessLinks;
use crate::net::connectivity::{Connectivity, ConnectivityOptions};
use crate::net::delay::DelayModel;
use crate::net::underlay::Underlay;
use crate::net::workload::Workload;
use crate::network::NetworkKind;
use crate::overlay::families::multigraph::{Multigraph, WeakEdges, T_MAX};
use crate::replay::{replay, ReplayError, ReplayOptions, Straggler};
use crate::timing::multigraph::{published_estimate, published_rounds};
use crate::timing::schedule::periodic_rate;
use crate::timing::{cycle_time, TimingError};

/// \[Do23\]'s networks, by file stem under the shared `underlays/paper/`.
pub const NETWORKS: [&str; 5] = ["gaia", "amazon_us", "geantdistance", "exodus", "ebone"];

/// \[Do23\]'s workloads (fedtopo's `--workload` presets, \[Marfoq20\] Table 2).
pub const WORKLOADS: [&str; 3] = ["femnist", "inaturalist", "sent140"];

/// \[Do23\] Table 3 (the image `misc/table_3.png` of their repository):
/// `(workload, network, RING ms, Multigraph on RING ms)`.
pub const PUBLISHED: [(&str, &str, f64, f64); 15] = [
    ("femnist", "gaia", 57.2, 15.7),
    ("femnist", "amazon_us", 20.3, 13.6),
    ("femnist", "geantdistance", 27.7, 12.0),
    ("femnist", "exodus", 24.7, 12.1),
    ("femnist", "ebone", 18.5, 12.7),
    ("inaturalist", "gaia", 118.1, 68.6),
    ("inaturalist", "amazon_us", 81.3, 81.3),
    ("inaturalist", "geantdistance", 109.0, 68.1),
    ("inaturalist", "exodus", 103.9, 62.6),
    ("inaturalist", "ebone", 95.3, 64.9),
    ("sent140", "gaia", 76.8, 31.0),
    ("sent140", "amazon_us", 40.0, 35.8),
    ("sent140", "geantdistance", 54.9, 30.3),
    ("sent140", "exodus", 50.6, 28.0),
    ("sent140", "ebone", 43.9, 29.1),
];

/// The published `(RING, Multigraph)` cycle times of a cell, ms.
pub fn published(workload: &str, network: &str) -> Option<(f64, f64)> {
    PUBLISHED
        .iter()
        .find(|p| p.0 == workload && p.1 == network)
        .map(|p| (p.2, p.3))
}

/// \[Marfoq20\]'s network (paper path model, 1 Gbit/s core, 10 Gbit/s access,
/// `s = 1`) with workload preset `workload`; `None` for an unknown preset.
pub fn model(underlay: &Underlay, workload: &str) -> Option<DelayModel> {
    let conn = Connectivity::new(
        underlay,
        &ConnectivityOptions {
            core_capacity_bps: Some(1e9),
            ..ConnectivityOptions::default()
        },
    );
    let access = AccessLinks::uniform(underlay.node_count(), 10e9);
    Some(DelayModel::new(
        conn,
        access,
        Workload::preset(workload, 1)?,
    ))
}

/// Why a row could not be computed.
#[derive(Debug, thiserror::Error)]
pub enum MultigraphReproError {
    /// A cycle time failed.
    #[error(transparent)]
    Timing(#[from] TimingError),
    /// A replay failed.
    #[error(transparent)]
    Replay(#[from] ReplayError),
    /// A line of the rings file.
    #[error("rings file, line {line}: {message}")]
    RingsFile {
        /// Line number, from 1.
        line: usize,
        /// What is wrong.
        message: String,
    },
}

/// One base overlay of one cell, timed every way.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MultigraphTiming {
    /// Silos.
    pub silos: usize,
    /// Exact max-plus cycle time of the base overlay, ms.
    pub base_ms: f64,
    /// Period of the parsed states, rounds.
    pub period: u64,
    /// Arcs of the base with more than one edge.
    pub slow_arcs: usize,
    /// Share of silo-rounds in which a silo is isolated.
    pub isolated_share: f64,
    /// Rounds their figure averages over.
    pub their_rounds: u64,
    /// Their figure ([`crate::timing::multigraph`]), ms.
    pub their_method_ms: f64,
    /// Exact max-plus rate, weak edges idle, ms.
    pub exact_idle_ms: f64,
    /// Exact max-plus rate, background transfers on weak edges, ms.
    pub exact_background_ms: f64,
    /// Replay of the base overlay itself: mean round time, ms.
    pub replay_base_ms: Option<f64>,
    /// Replay on the same network, weak edges idle: mean round time, ms.
    pub replay_idle_ms: Option<f64>,
    /// Replay, background transfers: mean round time, ms.
    pub replay_background_ms: Option<f64>,
}

/// Times the multigraph of `base` (`t_max` = 5) on `model`: their figure
/// over `their_rounds` rounds, the exact rates, and when `replay_with` is
/// given a replay of that many rounds on that network model.
///
/// # Errors
/// A cycle time or replay fails (e.g. a base that is not strongly
/// connected).
pub fn time_multigraph(
    base: &Overlay,
    model: &DelayModel,
    their_rounds: u64,
    replay_with: Option<(NetworkKind, u64)>,
) -> Result<MultigraphTiming, MultigraphReproError> {
    let m = Multigraph::new(base, model, T_MAX);
    let period = m.period();
    let n = m.silo_count();
    let isolated: usize = (0..period).map(|k| m.isolated(k).len()).sum();
    let theirs = published_estimate(&m.base, &m.multiplicity, model, their_rounds)?;
    let idle = m.schedule(&base.name, WeakEdges::Idle);
    let background = m.schedule(&base.name, WeakEdges::Background);
    let replayed = |s: &dyn OverlaySchedule| -> Result<Option<f64>, MultigraphReproError> {
        let Some((kind, rounds)) = replay_with else {
            return Ok(None);
        };
        let mut net = kind.build(model);
        let options = ReplayOptions {
            rounds,
            straggler: Straggler::None,
            seed: 0,
            ..ReplayOptions::default()
        };
        Ok(Some(
            replay(s, model, net.as_mut(), &options)?.mean_round_ms(),
        ))
    };
    Ok(MultigraphTiming {
        silos: n,
        base_ms: cycle_time(base, model)?.cycle_time_ms,
        period,
        slow_arcs: m.multiplicity.iter().filter(|&&x| x > 1).count(),
        isolated_share: isolated as f64 / (n as u64 * period) as f64,
        their_rounds,
        their_method_ms: theirs.mean_ms,
        exact_idle_ms: periodic_rate(&idle, model, period)?,
        exact_background_ms: periodic_rate(&background, model, period)?,
        replay_base_ms: replayed(base)?,
        replay_idle_ms: replayed(&idle)?,
        replay_background_ms: replayed(&background)?,
    })
}

/// The rounds \[Do23\] averages over for `workload` (1600 when it is not
/// one of theirs).
pub fn their_rounds(workload: &str) -> u64 {
    published_rounds(workload).unwrap_or(1600)
}

/// A RING tour produced by \[Do23\]'s published code for one cell.
#[derive(Debug, Clone, PartialEq)]
pub struct TheirRing {
    /// Workload.
    pub workload: String,
    /// Network (file stem).
    pub network: String,
    /// Silo indices (GML node order) in tour order.
    pub tour: Vec<usize>,
    /// Edges their code gave arc `tour[i] -> tour[i+1]` (last: back to
    /// `tour[0]`).
    pub multiplicity: Vec<u32>,
}

impl TheirRing {
    /// The directed ring of the tour on `n` silos.
    pub fn overlay(&self, n: usize) -> Overlay {
        Overlay::directed_ring("their-ring", n, &self.tour)
    }

    /// Their multiplicities in the ring's sorted arc order.
    pub fn sorted_multiplicity(&self) -> Vec<u32> {
        let k = self.tour.len();
        let mut arcs: Vec<((usize, usize), u32)> = (0..k)
            .map(|i| ((self.tour[i], self.tour[(i + 1) % k]), self.multiplicity[i]))
            .collect();
        arcs.sort();
        arcs.into_iter().map(|(_, m)| m).collect()
    }
}

impl fmt::Display for TheirRing {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} on {}", self.workload, self.network)
    }
}

/// Parses the rings file: a header line, then `workload,network,tour,
/// multiplicity` with the tour and the multiplicities space-separated.
///
/// # Errors
/// [`MultigraphReproError::RingsFile`] with the line and what is wrong.
pub fn parse_their_rings(text: &str) -> Result<Vec<TheirRing>, MultigraphReproError> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate().skip(1) {
        let bad = |message: String| MultigraphReproError::RingsFile {
            line: i + 1,
            message,
        };
        if line.trim().is_empty() {
            continue;
        }
        let f: Vec<&str> = line.split(',').collect();
        if f.len() != 4 {
            return Err(bad(format!("expected 4 fields, got {}", f.len())));
        }
        let numbers = |s: &str, what: &str| -> Result<Vec<u64>, MultigraphReproError> {
            s.split_whitespace()
                .map(|x| {
                    x.parse::<u64>()
                        .map_err(|_| bad(format!("{what}: `{x}` is not a whole number")))
                })
                .collect()
        };
        let tour: Vec<usize> = numbers(f[2], "tour")?
            .into_iter()
            .map(|x| x as usize)
            .collect();
        let multiplicity: Vec<u32> = numbers(f[3], "multiplicity")?
            .into_iter()
            .map(|x| x.min(u64::from(u32::MAX)) as u32)
            .collect();
        if tour.len() < 2 || multiplicity.len() != tour.len() {
            return Err(bad(format!(
                "a tour of at least 2 silos with one multiplicity per arc: {} silos, {} multiplicities",
                tour.len(),
                multiplicity.len()
            )));
        }
        let mut seen = tour.clone();
        seen.sort_unstable();
        seen.dedup();
        if seen.len() != tour.len() || seen.last().is_some_and(|&x| x >= tour.len()) {
            return Err(bad("the tour is not a permutation of 0..n".into()));
        }
        out.push(TheirRing {
            workload: f[0].trim().to_string(),
            network: f[1].trim().to_string(),
            tour,
            multiplicity,
        });
    }
    Ok(out)
}
