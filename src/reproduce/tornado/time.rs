//! The Table 4 programs (\[Lee21\]) timed on a network: wall-clock
//! per step, messages and bytes per node and per core link
//! (`fedtopo tornado time`).

use super::TornadoError;
use crate::net::delay::DelayModel;
use crate::network::NetworkKind;
use crate::program::grouping::LabelCounts;
use crate::program::sim::{simulate, SimResult};
use crate::program::{Architecture, Inter, Intra, Method};

/// Options of [`time_methods`].
#[derive(Debug, Clone, PartialEq)]
pub struct TimeOptions {
    /// Steps `T` to simulate (Table 4's global period is 100).
    pub steps: u64,
    /// `|G|` for every grouped method instead of Table 4's (capped at the
    /// node count).
    pub groups: Option<usize>,
    /// Seed of the groupings and rings.
    pub seed: u64,
}

/// One method's program timed on the network.
#[derive(Debug, Clone)]
pub struct MethodTiming {
    /// Method.
    pub method: Method,
    /// Its architecture (Table 4).
    pub architecture: Architecture,
    /// `|G|` asked for when it exceeded the node count (and was capped).
    pub capped_groups: Option<usize>,
    /// Groups of the built program.
    pub groups: usize,
    /// Chains `C` of its ring operation, if any.
    pub chains: Option<usize>,
    /// Node-steps of computation over all steps.
    pub computing: usize,
    /// The event-engine run: step ends and counters.
    pub result: SimResult,
}

/// Builds every method's program on `labels` (server `server`) and runs it
/// for `opts.steps` steps on `delay` through a `network` model; `links`
/// is the underlay's core link count (for the counters).
pub fn time_methods(
    methods: &[Method],
    labels: &LabelCounts,
    delay: &DelayModel,
    network: NetworkKind,
    links: usize,
    server: usize,
    opts: &TimeOptions,
) -> Result<Vec<MethodTiming>, TornadoError> {
    let n = labels.len();
    let mut out = Vec::new();
    for &m in methods {
        let mut p = m.defaults();
        if let Some(g) = opts.groups {
            p.groups = g;
        }
        let capped_groups = (p.groups > n).then_some(p.groups);
        p.groups = p.groups.min(n);
        let spec = p
            .build(labels, server, opts.seed)
            .map_err(|source| TornadoError::Build { method: m, source })?;
        let program = spec.program(opts.steps);
        let mut net = network.build(delay);
        let result = simulate(&program, delay, net.as_mut(), links)
            .map_err(|source| TornadoError::Timing { method: m, source })?;
        let chains = match spec.intra {
            Intra::Ring { chains } => Some(chains),
            _ => match spec.inter {
                Inter::Ring { chains } => Some(chains),
                _ => None,
            },
        };
        out.push(MethodTiming {
            method: m,
            architecture: p.architecture,
            capped_groups,
            groups: spec.groups.len(),
            chains,
            computing: program.steps.iter().map(|s| s.active.len()).sum(),
            result,
        });
    }
    Ok(out)
}
