//! Reproducing the throughput paper's Tables 3, 6 and 7 (Marfoq et al.
//! 2020): STAR, MST, delta-MBST and RING cycle times on the paper's
//! underlays, iNaturalist workload, 1 Gbit/s core, 10 Gbit/s access, with
//! s = 1, 5, 10 local steps. Published values live in
//! `experiments/throughput-tables/published.csv`.
//!
//! Settings follow the notes' "Reproduction facts": the paper path model,
//! the STAR centre at the first silo of the file, core capacity 1 Gbit/s.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Serialize;

use crate::access::AccessLinks;
use crate::connectivity::{Connectivity, ConnectivityOptions};
use crate::delay::DelayModel;
use crate::overlay::build::{build_overlay, BuildOptions, CenterPolicy, OverlayKind};
use crate::timing::cycle_time;
use crate::underlay::{LoadOptions, Underlay};
use crate::workload::Workload;

/// The published numbers (CSV, `#` comments).
pub const PUBLISHED_CSV: &str = include_str!("../experiments/throughput-tables/published.csv");

/// One published cycle time and ours.
#[derive(Debug, Clone, Serialize)]
pub struct ReproRow {
    /// Paper table (3, 6, 7).
    pub table: u32,
    /// Local steps s.
    pub local_steps: u32,
    /// Underlay file stem.
    pub underlay: String,
    /// Overlay name.
    pub overlay: String,
    /// Published cycle time, ms.
    pub published_ms: f64,
    /// Ours, ms.
    pub ours_ms: f64,
    /// (ours - published) / published.
    pub relative_error: f64,
}

/// Our cycle times (ms) by (underlay, s) and overlay name, ring-opt included.
pub type Computed = BTreeMap<(String, u32), BTreeMap<String, f64>>;

/// A published entry.
#[derive(Debug, Clone)]
struct Published {
    table: u32,
    local_steps: u32,
    underlay: String,
    overlay: String,
    value: f64,
}

fn parse_published() -> Vec<Published> {
    PUBLISHED_CSV
        .lines()
        .filter(|l| !l.starts_with('#') && !l.starts_with("table") && !l.trim().is_empty())
        .filter_map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            Some(Published {
                table: f.first()?.parse().ok()?,
                local_steps: f.get(1)?.parse().ok()?,
                underlay: f.get(2)?.to_string(),
                overlay: f.get(3)?.to_string(),
                value: f.get(4)?.parse().ok()?,
            })
        })
        .collect()
}

/// The paper's delay model for `underlay` with `s` local steps.
pub fn paper_model(underlay: &Underlay, local_steps: u32) -> DelayModel {
    let conn = Connectivity::new(
        underlay,
        &ConnectivityOptions {
            core_capacity_bps: Some(1e9),
            ..ConnectivityOptions::default()
        },
    );
    let access = AccessLinks::uniform(underlay.node_count(), 10e9);
    let workload = Workload::preset("inaturalist", local_steps).expect("preset");
    DelayModel::new(conn, access, workload)
}

/// Computes every published entry on the underlays in `dir`
/// (`../shared/underlays/paper`).
pub fn throughput_tables(
    dir: &Path,
) -> Result<(Vec<ReproRow>, Computed), Box<dyn std::error::Error>> {
    let published = parse_published();
    let mut cache = Computed::new();
    let options = BuildOptions {
        center: CenterPolicy::First,
        ..BuildOptions::default()
    };
    let mut rows = Vec::new();
    for p in published {
        let key = (p.underlay.clone(), p.local_steps);
        if !cache.contains_key(&key) {
            let u = Underlay::load(
                &dir.join(format!("{}.gml", p.underlay)),
                &LoadOptions::default(),
            )?;
            let model = paper_model(&u, p.local_steps);
            let mut times = BTreeMap::new();
            for kind in [
                OverlayKind::Star,
                OverlayKind::Mst,
                OverlayKind::DeltaMbst,
                OverlayKind::Ring,
                OverlayKind::RingOpt,
            ] {
                let o = build_overlay(kind, &u, &model, &options)?;
                times.insert(
                    kind.name().to_string(),
                    cycle_time(&o, &model)?.cycle_time_ms,
                );
            }
            cache.insert(key.clone(), times);
        }
        let ours = cache[&key][&p.overlay];
        rows.push(ReproRow {
            table: p.table,
            local_steps: p.local_steps,
            underlay: p.underlay,
            overlay: p.overlay,
            published_ms: p.value,
            ours_ms: ours,
            relative_error: (ours - p.value) / p.value,
        });
    }
    Ok((rows, cache))
}
