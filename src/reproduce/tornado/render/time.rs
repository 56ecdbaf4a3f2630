//! `fedtopo tornado time`: the programs timed on a network, as a terminal
//! table and per-node / per-link CSV.

use crate::net::delay::DelayModel;
use crate::net::underlay::Underlay;
use crate::network::NetworkKind;
use crate::report::table::Table;
use crate::reproduce::tornado::time::MethodTiming;
use crate::units::gigabytes;

/// The line above the table: underlay, silos, server, network, steps,
/// model size and compute time.
pub fn heading(
    underlay: &Underlay,
    delay: &DelayModel,
    server: usize,
    network: NetworkKind,
    steps: u64,
) -> String {
    format!(
        "{}: {} silos, server {} ({}), {} network, {} steps, M = {} bit, Tc = {} ms",
        underlay.name,
        delay.silo_count(),
        server,
        underlay.routers[server].label,
        network,
        steps,
        delay.workload.model_bits,
        delay.workload.compute_ms
    )
}

/// One row per method: architecture, groups, chains, computing per step,
/// messages, GB sent (all, at the server, on the busiest core link),
/// wall-clock and ms per step.
pub fn table(rows: &[MethodTiming], server: usize, steps: u64) -> Table {
    let mut t = Table::new([
        "method",
        "architecture",
        "|G|",
        "C",
        "computing/step",
        "messages",
        "GB sent",
        "server GB in+out",
        "busiest link GB",
        "wall-clock (s)",
        "ms/step",
    ]);
    for r in rows {
        let c = &r.result.counters;
        let busiest = c.link_bits.iter().copied().fold(0.0, f64::max);
        t.row([
            r.method.name().to_string(),
            r.architecture.name().to_string(),
            r.groups.to_string(),
            r.chains.map_or("-".into(), |c| c.to_string()),
            format!("{:.1}", r.computing as f64 / steps as f64),
            c.messages().to_string(),
            format!("{:.2}", gigabytes(c.bits())),
            format!(
                "{:.2}",
                gigabytes(c.sent_bits[server] + c.recv_bits[server])
            ),
            format!("{:.2}", gigabytes(busiest)),
            format!("{:.2}", r.result.makespan_ms() / 1e3),
            format!("{:.1}", r.result.ms_per_step()),
        ]);
    }
    t
}

/// `nodes.csv`: messages and bits sent and received per method and silo
/// (silo `i` is router `i` of `underlay`).
pub fn nodes_csv(rows: &[MethodTiming], underlay: &Underlay) -> String {
    let mut t = Table::new([
        "method",
        "silo",
        "label",
        "sent_msgs",
        "recv_msgs",
        "sent_bits",
        "recv_bits",
    ]);
    for r in rows {
        let c = &r.result.counters;
        for i in 0..c.sent_msgs.len() {
            t.row([
                r.method.to_string(),
                i.to_string(),
                underlay.routers[i].label.clone(),
                c.sent_msgs[i].to_string(),
                c.recv_msgs[i].to_string(),
                c.sent_bits[i].to_string(),
                c.recv_bits[i].to_string(),
            ]);
        }
    }
    t.to_csv()
}

/// `links.csv`: messages and bits per method and core link of `underlay`.
pub fn links_csv(rows: &[MethodTiming], underlay: &Underlay) -> String {
    let mut t = Table::new(["method", "link", "a", "b", "msgs", "bits"]);
    for r in rows {
        let c = &r.result.counters;
        for (l, link) in underlay.links.iter().enumerate() {
            t.row([
                r.method.to_string(),
                l.to_string(),
                underlay.routers[link.a].label.clone(),
                underlay.routers[link.b].label.clone(),
                c.link_msgs[l].to_string(),
                c.link_bits[l].to_string(),
            ]);
        }
    }
    t.to_csv()
}
