//! The published time simulator (\[Marfoq20\] Appendix F, Algorithm 3).
//!
//! \[Marfoq20\] Algorithm 3, line by line (`j -> i` is an overlay arc, `N_i^-` the
//! in-neighbours of `i`, `N_j^+` the out-neighbours of `j`):
//!
//! * lines 1-3, `t_i(0) = 0`: the replay's initial round-start times
//!   ([`crate::replay`]).
//! * line 5, `t_i(k) = max_{j in N_i^-} ( t_j(k-1) + l(j,i) +
//!   M / min(Cup(j)/|N_j^+|, Cdn(i)/|N_i^-|, A(j,i)) )`: the term inside the
//!   max is the arrival of `j`'s model at `i`, [`PaperNetwork::path_ms`];
//!   the max over in-neighbours is the replay waiting for every model.
//! * line 6, `t_i(k) += s*Tc(i)`: the replay computes at the *start* of a
//!   round, so its round-start times are \[Marfoq20\] Algorithm 3's times minus
//!   `s*Tc(i)` (the same sequence shifted by one computation).
//! * the **extra download term** (in the published code, not in the
//!   algorithm's text of \[Marfoq20\] App. F): arrivals at `i` are taken
//!   in time order (ties: event order) and each occupies `i`'s downlink for
//!   `M/Cdn(i)` ms, so the `m`-th arrival `a_m` is delivered at
//!   `f_m = max(f_{m-1}, a_m) + M/Cdn(i)` ([`PaperNetwork`]'s `on_timer`,
//!   `downlink_free`). `t_i(k)` then uses `f_m` instead of `a_m` in line 5.
//!
//! Checked against a hand-computed case with a queued and an idle download
//! in `replay::tests::paper_model_hand_computed_queue_and_idle_downlink`.

use super::{NetworkModel, Slab, Timers, Transfer};
use crate::net::delay::DelayModel;
use crate::net::dynamics::send_ms;
use crate::units::{transfer_ms, BitsPerSec, Ms};

const AT_RECEIVER: u64 = 1 << 63;

/// \[Marfoq20\] Algorithm 3 with serialised downloads.
#[derive(Debug)]
pub struct PaperNetwork<'a> {
    delay: &'a DelayModel,
    in_flight: Slab<Transfer>,
    /// Time each silo's downlink becomes free, ms.
    downlink_free: Vec<Ms>,
}

impl<'a> PaperNetwork<'a> {
    /// The model on `delay`.
    pub fn new(delay: &'a DelayModel) -> Self {
        PaperNetwork {
            delay,
            in_flight: Slab::default(),
            downlink_free: vec![0.0; delay.silo_count()],
        }
    }

    /// \[Marfoq20\] Algorithm 3, line 5 (the term inside the max, without `t_j(k-1)`):
    /// time from send to arrival at the receiver,
    /// `l(j,i) + M / min(Cup(j)/outdeg(j), Cdn(i)/indeg(i), A(j,i))`, ms.
    pub fn path_ms(&self, t: &Transfer) -> Ms {
        let d = self.delay;
        let (j, i) = (t.from, t.to);
        let rate = (d.access.up[j] / t.out_deg as f64)
            .min(d.access.down[i] / t.in_deg as f64)
            .min(d.connectivity.bandwidth_bps(j, i));
        d.connectivity.latency_ms(j, i) + transfer_ms(t.bits, rate)
    }

    /// [`Self::path_ms`] for `t` sent at `now` (ms) under the model's
    /// dynamics ([`crate::net::dynamics`]): the path rate `min(Cup(j)/outdeg,
    /// Cdn(i)/indeg, A(j,i))` integrated from `now`, latency (with the
    /// silos' extra latency) at `now`.
    fn traced_path_ms(&self, t: &Transfer, now: Ms) -> Ms {
        let m = self.delay;
        let Some(d) = &m.dynamics else {
            return self.path_ms(t);
        };
        let (j, i) = (t.from, t.to);
        let (out, inn) = (t.out_deg as f64, t.in_deg as f64);
        let conn = &m.connectivity;
        let route = super::maxplus::route_if_traced(d, m, j, i);
        let a0 = conn.bandwidth_bps(j, i);
        let rate = |s: Ms| -> (BitsPerSec, Option<Ms>) {
            let (a, na) = match &route {
                Some((links, routers)) => d
                    .path_bandwidth_at(conn, links, routers, s)
                    .unwrap_or((a0, None)),
                None => (a0, None),
            };
            let r = (d.up_at(j, s, m.access.up[j]) / out)
                .min(d.down_at(i, s, m.access.down[i]) / inn)
                .min(a);
            let next = [
                na,
                d.next_access_change(j, true, s),
                d.next_access_change(i, false, s),
            ]
            .into_iter()
            .flatten()
            .min_by(f64::total_cmp);
            (r, next)
        };
        let mut latency = conn.latency_ms(j, i) + d.latency_at(j, now) + d.latency_at(i, now);
        if let Some((links, _)) = &route {
            latency += d.route_latency_at(links, now);
        }
        latency + send_ms(now, t.bits, 1.0, &rate)
    }

    /// Time to download `bits` at silo `i` from `begin` (ms), ms.
    fn download_ms(&self, i: usize, bits: f64, begin: Ms) -> Ms {
        let m = self.delay;
        match &m.dynamics {
            None => transfer_ms(bits, m.access.down[i]),
            Some(d) => {
                let base = m.access.down[i];
                let rate = |s: Ms| (d.down_at(i, s, base), d.next_access_change(i, false, s));
                send_ms(begin, bits, 1.0, &rate)
            }
        }
    }
}

impl NetworkModel for PaperNetwork<'_> {
    fn name(&self) -> &'static str {
        if self.delay.dynamics.is_some() {
            "paper+traces"
        } else {
            "paper"
        }
    }

    fn start(&mut self, t: Transfer, timers: &mut dyn Timers, _delivered: &mut Vec<Transfer>) {
        let now = timers.now();
        let at = now + self.traced_path_ms(&t, now);
        let slot = self.in_flight.insert(t);
        // Infinite: a silo down for good, never delivered.
        if at.is_finite() {
            timers.set(at, slot as u64 | AT_RECEIVER);
        }
    }

    fn on_timer(&mut self, token: u64, timers: &mut dyn Timers, delivered: &mut Vec<Transfer>) {
        let slot = (token & !AT_RECEIVER) as usize;
        if token & AT_RECEIVER != 0 {
            // Extra download term: f_m = max(f_{m-1}, a_m) + M/Cdn(i).
            let t = *self.in_flight.get(slot);
            let begin = self.downlink_free[t.to].max(timers.now());
            let end = begin + self.download_ms(t.to, t.bits, begin);
            self.downlink_free[t.to] = end;
            if end.is_finite() {
                timers.set(end, slot as u64);
            }
        } else {
            // Delivered at f_m: the receiver's line-5 max uses this time.
            delivered.push(self.in_flight.remove(slot));
        }
    }
}
