//! The throughput paper's network (\[Marfoq20\] Sec. 4 and App. G.1, as its
//! Table 3 values were produced): the `paper` path model, 1 Gbit/s core
//! links, 10 Gbit/s access links, iNaturalist workload.
//!
//! \[Marfoq20\] Tables 3, 6 and 7 themselves are the experiment file
//! `experiments/throughput-tables/experiment.toml` (`fedtopo run`), checked
//! by `tests/paper_tables.rs`; MATCHA's extra columns are
//! [`super::matcha`], \[Marfoq20\] Table 10 the experiment file
//! `experiments/table10-matcha-budget/experiment.toml`.

use crate::net::access::AccessLinks;
use crate::net::connectivity::{Connectivity, ConnectivityOptions};
use crate::net::delay::DelayModel;
use crate::net::underlay::Underlay;
use crate::net::workload::Workload;

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
