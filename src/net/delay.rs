//! The delay of one overlay arc, \[Marfoq20\] eq. (3), in one place.
//!
//! ```text
//! d_o(i,j) = s*Tc(i) + l(i,j) + max( outdeg(i)*M/Cup(i), indeg(j)*M/Cdn(j), M/A(i,j) )
//! ```
//!
//! `s` local steps of `Tc(i)` ms, route latency `l` (ms), model size `M`
//! (bit), access capacities `Cup`, `Cdn` and route bandwidth `A` (bit/s).
//! The max-plus cycle time and the event engine both take their delays from
//! a [`DelayModel`], so they agree by construction.

use rayon::prelude::*;
use thiserror::Error;

use crate::net::access::AccessLinks;
use crate::net::connectivity::Connectivity;
use crate::net::dynamics::Dynamics;
use crate::net::silos::DataSizes;
use crate::net::workload::Workload;
use crate::units::{transfer_ms, Bits, Ms};

/// A delay of \[Marfoq20\] eq. (3) that is not finite: a capacity, size,
/// compute time or length that escaped the checks where it entered.
#[derive(Debug, Clone, PartialEq, Error)]
#[error("eq. (3) delay of arc {i} -> {j} is {value} ms, not finite: check the capacities (at least 1 bit/s), the model size (at most 1e18 bit), the compute time (at most 1e12 ms) and the link lengths")]
pub struct NonFiniteDelay {
    /// Sending silo.
    pub i: usize,
    /// Receiving silo.
    pub j: usize,
    /// The delay found (infinite or NaN), ms.
    pub value: Ms,
}

/// Everything needed to time an overlay on a network: connectivity graph,
/// access links and workload (with optional per-silo compute times).
#[derive(Debug, Clone)]
pub struct DelayModel {
    /// The connectivity graph (routes, `l`, `A`).
    pub connectivity: Connectivity,
    /// Access links (`Cup`, `Cdn`).
    pub access: AccessLinks,
    /// Model size, local step time and local steps.
    pub workload: Workload,
    /// Per-silo `Tc(i)` in ms, overriding `workload.compute_ms` when present.
    pub compute_ms: Option<Vec<Ms>>,
    /// Training examples per silo from the silo file's `data` column
    /// ([`crate::net::silos`]); not part of eq. (3): carried for `train` (data
    /// partition, data-size-weighted consensus) and for reports.
    pub data_sizes: Option<DataSizes>,
    /// Bandwidth, latency and availability that change over time
    /// ([`crate::net::dynamics`]); `None`: the static network of eq. (3).
    pub dynamics: Option<std::sync::Arc<Dynamics>>,
}

impl DelayModel {
    /// A 64-bit digest of everything that sets this model's delays: the
    /// workload, every silo's compute time and access capacities, and the
    /// eq. (3) delay of every ordered silo pair at degree 1 (latency and
    /// available core bandwidth). Equal models give equal digests; a change
    /// of any of them changes it (up to hash collisions). FNV-1a over the
    /// values' bits, O(n^2).
    pub fn fingerprint(&self) -> u64 {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        let mut eat = |x: f64| {
            for b in x.to_bits().to_le_bytes() {
                h ^= u64::from(b);
                h = h.wrapping_mul(0x0000_0100_0000_01b3);
            }
        };
        let n = self.silo_count();
        eat(self.workload.model_bits);
        eat(f64::from(self.workload.local_steps));
        for i in 0..n {
            eat(self.compute_round_ms(i));
            eat(self.access.up[i]);
            eat(self.access.down[i]);
        }
        for i in 0..n {
            for j in (0..n).filter(|&j| j != i) {
                eat(self.arc_delay(i, j, 1, 1));
            }
        }
        if let Some(d) = &self.dynamics {
            // Every change of every target (static models digest as before).
            for (k, v) in [&d.up, &d.down, &d.latency, &d.avail]
                .into_iter()
                .enumerate()
            {
                for (i, s) in v.iter().enumerate() {
                    for (t, x) in s.iter().flat_map(|s| s.times().iter().zip(s.values())) {
                        eat((k * n + i) as f64);
                        eat(*t);
                        eat(*x);
                    }
                }
            }
            // Core links: capacity series tagged -1, latency series -2.
            let tagged = d.links.iter().map(|x| (-1.0, x));
            for (tag, (l, s)) in tagged.chain(d.link_latency.iter().map(|x| (-2.0, x))) {
                for (t, x) in s.times().iter().zip(s.values()) {
                    eat(tag);
                    eat(*l as f64);
                    eat(*t);
                    eat(*x);
                }
            }
            // The availability policy (`wait` digests as before).
            match d.policy {
                crate::net::dynamics::AvailabilityPolicy::Wait => {}
                crate::net::dynamics::AvailabilityPolicy::Skip => eat(-3.0),
                crate::net::dynamics::AvailabilityPolicy::Timeout(ms) => {
                    eat(-4.0);
                    eat(ms);
                }
            }
        }
        h
    }

    /// A model with the same `Tc` on every silo.
    pub fn new(connectivity: Connectivity, access: AccessLinks, workload: Workload) -> Self {
        assert_eq!(
            connectivity.silo_count(),
            access.len(),
            "one access link per silo"
        );
        DelayModel {
            connectivity,
            access,
            workload,
            compute_ms: None,
            data_sizes: None,
            dynamics: None,
        }
    }

    /// When silo `i`, starting `work_ms` of computation at `start` (ms),
    /// finishes it, ms: `start + work_ms`, or later when the dynamics take
    /// the silo down meanwhile (its computation pauses while it is down;
    /// infinite when it never comes back, [`Dynamics::compute_end`]).
    #[inline]
    pub fn compute_end_ms(&self, i: usize, start: Ms, work_ms: Ms) -> Ms {
        match &self.dynamics {
            None => start + work_ms,
            Some(d) => d.compute_end(i, start, work_ms),
        }
    }

    /// Number of silos.
    pub fn silo_count(&self) -> usize {
        self.connectivity.silo_count()
    }

    /// `s * Tc(i)`: local computation of silo `i` in one round, ms.
    pub fn compute_round_ms(&self, i: usize) -> Ms {
        let tc = self
            .compute_ms
            .as_ref()
            .map_or(self.workload.compute_ms, |v| v[i]);
        self.workload.local_steps as f64 * tc
    }

    /// Upload time of one model over silo `i`'s uplink, `M/Cup(i)`, ms.
    pub fn up_ms(&self, i: usize) -> Ms {
        transfer_ms(self.workload.model_bits, self.access.up[i])
    }

    /// Download time of one model over silo `i`'s downlink, `M/Cdn(i)`, ms.
    pub fn down_ms(&self, i: usize) -> Ms {
        transfer_ms(self.workload.model_bits, self.access.down[i])
    }

    /// Transfer time of one model over the route `i -> j`, `M/A(i,j)`, ms.
    pub fn core_ms(&self, i: usize, j: usize) -> Ms {
        transfer_ms(
            self.workload.model_bits,
            self.connectivity.bandwidth_bps(i, j),
        )
    }

    /// Communication part of \[Marfoq20\] eq. (3) for a
    /// message of `bits` bit on arc `i -> j` of an overlay (or protocol
    /// phase) in which `i` sends to `out_deg_i` silos and `j` receives from
    /// `in_deg_j` silos, ms:
    ///
    /// ```text
    /// l(i,j) + max( outdeg(i)*bits/Cup(i), indeg(j)*bits/Cdn(j), bits/A(i,j) )
    /// ```
    ///
    /// With [`Self::arc_delay`] (the max-plus graphs of [`crate::timing`]),
    /// the one code home of eq. (3): both evaluate the same private
    /// expression; the max-plus network model
    /// ([`crate::network::MaxPlusNetwork`]) takes its delays from here.
    #[inline]
    pub fn comm_ms(&self, i: usize, j: usize, out_deg_i: usize, in_deg_j: usize, bits: Bits) -> Ms {
        // 0 + x == x exactly: this is `l + max(...)` to the last bit.
        self.eq3_ms(0.0, i, j, out_deg_i, in_deg_j, bits)
    }

    /// \[Marfoq20\] eq. (3): delay of arc `i -> j` of an
    /// overlay in which `i` sends to `out_deg_i` silos and `j` receives from
    /// `in_deg_j` silos, ms: `s*Tc(i)` ([`Self::compute_round_ms`]) plus the
    /// communication part ([`Self::comm_ms`]) for one model of
    /// `workload.model_bits` bit.
    pub fn arc_delay(&self, i: usize, j: usize, out_deg_i: usize, in_deg_j: usize) -> Ms {
        let bits = self.workload.model_bits;
        self.eq3_ms(self.compute_round_ms(i), i, j, out_deg_i, in_deg_j, bits)
    }

    /// `lead_ms + l(i,j) + max( outdeg(i)*bits/Cup(i), indeg(j)*bits/Cdn(j),
    /// bits/A(i,j) )`, ms, summed left to right (eq. (3) with `lead_ms =
    /// s*Tc(i)`, its communication part with `lead_ms = 0`). One expression,
    /// so that [`Self::arc_delay`] and [`Self::comm_ms`] keep the exact
    /// floating-point values they always had (adding `s*Tc(i)` last instead
    /// would move results by an ulp and flip ties in overlay builders).
    #[inline]
    fn eq3_ms(
        &self,
        lead_ms: Ms,
        i: usize,
        j: usize,
        out_deg_i: usize,
        in_deg_j: usize,
        bits: Bits,
    ) -> Ms {
        let transfer = (out_deg_i as f64 * transfer_ms(bits, self.access.up[i]))
            .max(in_deg_j as f64 * transfer_ms(bits, self.access.down[j]))
            .max(transfer_ms(bits, self.connectivity.bandwidth_bps(i, j)));
        lead_ms + self.connectivity.latency_ms(i, j) + transfer
    }

    /// Checks that every delay of \[Marfoq20\] eq. (3) is finite, at the
    /// largest degrees (`N - 1` out of `i` and into `j`), so every overlay's
    /// delays are: overlay builders call it before building their matrices.
    ///
    /// # Errors
    /// [`NonFiniteDelay`] naming the first arc whose delay is not finite.
    ///
    /// O(N^2), rows checked in parallel; the arc named is the first in
    /// row-major order all the same.
    pub fn check_finite(&self) -> Result<(), NonFiniteDelay> {
        let n = self.silo_count();
        let deg = n.saturating_sub(1).max(1);
        match (0..n).into_par_iter().find_map_first(|i| {
            (0..n).filter(|&j| j != i).find_map(|j| {
                let value = self.arc_delay(i, j, deg, deg);
                (!value.is_finite()).then_some(NonFiniteDelay { i, j, value })
            })
        }) {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// \[Marfoq20\] Eq. (3) without access limits ("edge-capacitated"):
    /// `s*Tc(i) + l(i,j) + M/A(i,j)`, ms. Used for MST (\[Marfoq20\] Prop. 3.1) and RING.
    pub fn edge_capacitated_delay(&self, i: usize, j: usize) -> Ms {
        self.compute_round_ms(i) + self.connectivity.latency_ms(i, j) + self.core_ms(i, j)
    }
}

#[cfg(test)]
mod tests {
    use crate::net::scenario::{load_underlay, NetworkSpec};
    use crate::net::underlay::LoadOptions;

    /// The digest changes with every network option that changes delays
    /// and not otherwise.
    #[test]
    fn fingerprint_follows_the_delays() {
        let u = load_underlay(Some("aws-gaia"), &LoadOptions::default())
            .unwrap_or_else(|e| panic!("{e}"));
        let of = |knobs: &[(&str, &str)]| {
            let spec = NetworkSpec::from_knobs(|k| {
                knobs.iter().find(|(key, _)| *key == k).map(|(_, v)| *v)
            })
            .unwrap_or_else(|e| panic!("{e}"));
            spec.build(&u)
                .unwrap_or_else(|e| panic!("{e}"))
                .fingerprint()
        };
        let base = of(&[("access", "100M")]);
        assert_eq!(base, of(&[("access", "100M")]));
        assert_ne!(base, of(&[("access", "10G")]));
        assert_ne!(base, of(&[("access", "100M"), ("core_capacity", "10M")]));
        // A core capacity above the access bottleneck changes no delay.
        assert_eq!(base, of(&[("access", "100M"), ("core_capacity", "2G")]));
        assert_ne!(base, of(&[("access", "100M"), ("compute_ms", "7")]));
        assert_ne!(base, of(&[("access", "100M"), ("model_bits", "5MB")]));
    }
}
