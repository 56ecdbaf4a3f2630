//! The max-plus network: every transfer takes the communication delay of
//! \[Marfoq20\] eq. (3), [`DelayModel::comm_ms`]:
//! `l(i,j) + max(outdeg(i) M/Cup(i), indeg(j) M/Cdn(j), M/A(i,j))` (ms),
//! whatever else is in flight. With it, the round replay equals the max-plus
//! recurrence `t_j(k+1) = max_i (t_i(k) + d_o(i,j))` (\[Marfoq20\] eq. 4).

use super::{NetworkModel, Slab, Timers, Transfer};
use crate::delay::DelayModel;
use crate::units::Ms;

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

    /// Communication part of \[Marfoq20\] eq. (3) for `t`,
    /// ms (`d_o(i,j) - s*Tc(i)` at `t.bits`): [`DelayModel::comm_ms`].
    pub fn comm_ms(&self, t: &Transfer) -> Ms {
        self.delay
            .comm_ms(t.from, t.to, t.out_deg, t.in_deg, t.bits)
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
