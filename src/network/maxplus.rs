//! The max-plus network: every transfer takes the \[Marfoq20\] eq. (3) communication
//! delay `l(i,j) + max(outdeg(i) M/Cup(i), indeg(j) M/Cdn(j), M/A(i,j))` (ms),
//! whatever else is in flight. With it, the round replay equals the max-plus
//! recurrence `t_j(k+1) = max_i (t_i(k) + d_o(i,j))` (\[Marfoq20\] eq. 4).

use super::{NetworkModel, Slab, Timers, Transfer};
use crate::delay::DelayModel;
use crate::units::{transfer_ms, Ms};

/// \[Marfoq20\] Eq. (3) arc delays, no interference between transfers.
#[derive(Debug)]
pub struct MaxPlusNetwork<'a> {
    delay: &'a DelayModel,
    in_flight: Slab<Transfer>,
}

impl<'a> MaxPlusNetwork<'a> {
    /// The model on `delay`.
    pub fn new(delay: &'a DelayModel) -> Self {
        MaxPlusNetwork {
            delay,
            in_flight: Slab::default(),
        }
    }

    /// Communication part of \[Marfoq20\] eq. (3) for `t`, ms (`d_o(i,j) - s*Tc(i)`).
    pub fn comm_ms(&self, t: &Transfer) -> Ms {
        let d = self.delay;
        let (i, j) = (t.from, t.to);
        let transfer = (t.out_deg as f64 * transfer_ms(t.bits, d.access.up[i]))
            .max(t.in_deg as f64 * transfer_ms(t.bits, d.access.down[j]))
            .max(transfer_ms(t.bits, d.connectivity.bandwidth_bps(i, j)));
        d.connectivity.latency_ms(i, j) + transfer
    }
}

impl NetworkModel for MaxPlusNetwork<'_> {
    fn name(&self) -> &'static str {
        "maxplus"
    }

    fn start(&mut self, t: Transfer, timers: &mut dyn Timers, _delivered: &mut Vec<Transfer>) {
        let at = timers.now() + self.comm_ms(&t);
        let slot = self.in_flight.insert(t);
        timers.set(at, slot as u64);
    }

    fn on_timer(&mut self, token: u64, _timers: &mut dyn Timers, delivered: &mut Vec<Transfer>) {
        delivered.push(self.in_flight.remove(token as usize));
    }
}
