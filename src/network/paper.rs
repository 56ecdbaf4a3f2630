//! The published time simulator (Marfoq et al. 2020, Appendix F, Algorithm 3).
//!
//! A transfer `j -> i` reaches the receiver after
//! `l(j,i) + M / min(Cup(j)/outdeg(j), Cdn(i)/indeg(i), A(j,i))` ms (line 5).
//! The published code then serialises downloads at the receiver: arrivals
//! are taken in time order (ties: in the order they arrived, i.e. event
//! order) and each occupies the receiver's downlink for `M/Cdn(i)` ms, so a
//! message is delivered at `f_m = max(f_{m-1}, a_m) + M/Cdn(i)`.
//!
//! Algorithm 3 adds `s*Tc(i)` after the maximum (`t_i(k)` is the end of
//! silo `i`'s computation); the replay computes at the start of a round, so
//! its round-start times are Algorithm 3's times minus `s*Tc(i)`.

use super::{NetworkModel, Slab, Timers, Transfer};
use crate::delay::DelayModel;
use crate::units::{transfer_ms, Ms};

const AT_RECEIVER: u64 = 1 << 63;

/// Algorithm 3 with serialised downloads.
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

    /// Algorithm 3, line 5: time from send to arrival at the receiver, ms.
    pub fn path_ms(&self, t: &Transfer) -> Ms {
        let d = self.delay;
        let (j, i) = (t.from, t.to);
        let rate = (d.access.up[j] / t.out_deg as f64)
            .min(d.access.down[i] / t.in_deg as f64)
            .min(d.connectivity.bandwidth_bps(j, i));
        d.connectivity.latency_ms(j, i) + transfer_ms(t.bits, rate)
    }
}

impl NetworkModel for PaperNetwork<'_> {
    fn name(&self) -> &'static str {
        "paper"
    }

    fn start(&mut self, t: Transfer, timers: &mut dyn Timers, _delivered: &mut Vec<Transfer>) {
        let at = timers.now() + self.path_ms(&t);
        let slot = self.in_flight.insert(t);
        timers.set(at, slot as u64 | AT_RECEIVER);
    }

    fn on_timer(&mut self, token: u64, timers: &mut dyn Timers, delivered: &mut Vec<Transfer>) {
        let slot = (token & !AT_RECEIVER) as usize;
        if token & AT_RECEIVER != 0 {
            let t = *self.in_flight.get(slot);
            let begin = self.downlink_free[t.to].max(timers.now());
            let end = begin + transfer_ms(t.bits, self.delay.access.down[t.to]);
            self.downlink_free[t.to] = end;
            timers.set(end, slot as u64);
        } else {
            delivered.push(self.in_flight.remove(slot));
        }
    }
}
