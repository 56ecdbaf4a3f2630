//! The design experiment's figures (issue 24 item 6): every candidate of
//! every cell with the figures the rounds predictor reads, computed by
//! the current code without training (no libtorch): `features.csv`, which
//! the analysis (`cargo run --example design`) joins with the measured
//! runs of `runs.csv` (`design-train`).
//!
//! ```text
//! cargo run --release --example design-features -- \
//!     [--out DIR] [--underlays gaia,amazon_us,...] [--seeds 0,1,2] [--access 10G,100M] \
//!     [--data fashion-mnist/iid,...] [--rounds 300]
//! ```
//!
//! Writes `DIR/features.csv` (replacing it): the cells in the order
//! `design-train` trains them (seed, data setting, underlay, access), the
//! rows of a cell in the design's order; `--rounds` is the round budget
//! written in every row (the training runs'). Deterministic: the same
//! arguments give the same bytes, so `scripts/check-experiments.sh`
//! regenerates a subset (seed 0 on gaia, AWS North America and Geant)
//! and compares it with the committed rows. About 5.5 min for every cell on 2 cores.
//!
//! Also writes `DIR/flow.csv`: every candidate's mean round on the flow
//! network (transfers share access and core links max-min fairly), from a
//! replay of [`FLOW_ROUNDS`] rounds, for the analysis's section on link
//! sharing (the candidates' times elsewhere are eq. (3)'s max-plus cycle
//! times, in which no core link is shared).

#[path = "cells.rs"]
mod cells;

use std::io::Write as _;
use std::time::Instant;

use anyhow::Result;
use serde::Serialize;

use cells::{cell_key, load_underlays, parse_args, row, setup_cell, Cell};
use fedtopo::design::search::{Candidate, CandidateOverlay};
use fedtopo::evaluate::EvaluatedOverlay;
use fedtopo::net::underlay::Underlay;
use fedtopo::network::NetworkKind;
use fedtopo::replay::{replay_with_progress, ReplayOptions};

/// Rounds of each candidate's flow replay (`design --network flow`'s
/// default).
const FLOW_ROUNDS: u64 = fedtopo::design::search::DEFAULT_REPLAY_ROUNDS;

/// One row of `flow.csv`.
#[derive(Serialize)]
struct FlowRow<'a> {
    underlay: &'a str,
    access: &'a str,
    data: &'a str,
    seed: u64,
    candidate: &'a str,
    /// Mean round of a [`FLOW_ROUNDS`]-round replay on the flow network, ms.
    flow_round_ms: f64,
}

/// Candidate `c`'s mean round on the flow network, ms.
fn flow_round_ms(underlay: &Underlay, cell: &Cell, c: &Candidate) -> Result<f64> {
    let mut net = NetworkKind::Flow.build(&cell.model);
    let options = ReplayOptions {
        rounds: FLOW_ROUNDS,
        ..ReplayOptions::default()
    };
    let r = match &c.overlay {
        CandidateOverlay::Kind(kind) => EvaluatedOverlay::build(
            *kind,
            underlay,
            &cell.model,
            &cell.build,
        )?
        .replay(&cell.model, net.as_mut(), &options, None, &mut |_| {})?,
        CandidateOverlay::Static { overlay, .. } => {
            replay_with_progress(overlay, &cell.model, net.as_mut(), &options, &mut |_| {})?
        }
    };
    Ok(r.mean_round_ms())
}

fn main() -> Result<()> {
    let a = parse_args("features.rs")?;
    let underlays = load_underlays(&a.underlays)?;
    std::fs::create_dir_all(&a.out)?;
    let path = a.out.join("features.csv");
    let mut w = csv::Writer::from_path(&path)?;
    let mut flow = csv::Writer::from_path(a.out.join("flow.csv"))?;
    let started = Instant::now();
    for &seed in &a.seeds {
        for setting in &a.data {
            for (u, underlay) in &underlays {
                for access in &a.access {
                    let t0 = Instant::now();
                    let cell = setup_cell(underlay, access, setting, seed)?;
                    for c in &cell.search.candidates {
                        w.serialize(row(u, access, setting, seed, &cell, c, a.rounds))?;
                        flow.serialize(FlowRow {
                            underlay: u,
                            access,
                            data: &setting.name,
                            seed,
                            candidate: &c.name,
                            flow_round_ms: flow_round_ms(underlay, &cell, c)?,
                        })?;
                    }
                    eprintln!(
                        "{}: {} candidates, {:.0} s (total {:.0} s)",
                        cell_key(u, access, &setting.name, seed),
                        cell.search.candidates.len(),
                        t0.elapsed().as_secs_f64(),
                        started.elapsed().as_secs_f64()
                    );
                    std::io::stderr().flush().ok();
                }
            }
        }
    }
    w.flush()?;
    flow.flush()?;
    Ok(())
}
