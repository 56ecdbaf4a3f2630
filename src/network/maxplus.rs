//! The max-plus network: every transfer takes the communication delay of
//! \[Marfoq20\] eq. (3), [`DelayModel::comm_ms`]:
//! `l(i,j) + max(outdeg(i) M/Cup(i), indeg(j) M/Cdn(j), M/A(i,j))` (ms),
//! whatever else is in flight. With it, the round replay equals the max-plus
//! recurrence `t_j(k+1) = max_i (t_i(k) + d_o(i,j))` (\[Marfoq20\] eq. 4).

use super::{NetworkModel, Slab, Timers, Transfer};
use crate::net::delay::DelayModel;
use crate::net::dynamics::{send_ms, Dynamics};
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

    /// Communication part of \[Marfoq20\] eq. (3) for `t`,
    /// ms (`d_o(i,j) - s*Tc(i)` at `t.bits`): [`DelayModel::comm_ms`].
    pub fn comm_ms(&self, t: &Transfer) -> Ms {
        self.delay
            .comm_ms(t.from, t.to, t.out_deg, t.in_deg, t.bits)
    }

    /// The communication time of `t` sent at `now` (ms) under the
    /// dynamics `d` ([`crate::net::dynamics`]): eq. (3) with every rate
    /// integrated from `now`, `l(i,j) + lat_i(now) + lat_j(now) + max(T_up,
    /// T_dn, T_A)`, ms (infinite when a silo stays down). Without a change
    /// during the transfer this is [`Self::comm_ms`] to the last bit.
    pub fn traced_comm_ms(&self, d: &Dynamics, t: &Transfer, now: Ms) -> Ms {
        let m = self.delay;
        let (i, j, bits) = (t.from, t.to, t.bits);
        let (up0, dn0) = (m.access.up[i], m.access.down[j]);
        let up = |s: Ms| (d.up_at(i, s, up0), d.next_access_change(i, true, s));
        let dn = |s: Ms| (d.down_at(j, s, dn0), d.next_access_change(j, false, s));
        let t_up = send_ms(now, bits, t.out_deg as f64, &up);
        let t_dn = send_ms(now, bits, t.in_deg as f64, &dn);
        let conn = &m.connectivity;
        let route = route_if_traced(d, m, i, j);
        let t_a = match &route {
            Some((links, routers)) => {
                let a0 = conn.bandwidth_bps(i, j);
                let a = |s: Ms| {
                    d.path_bandwidth_at(conn, links, routers, s)
                        .unwrap_or((a0, None))
                };
                send_ms(now, bits, 1.0, &a)
            }
            None => transfer_ms(bits, conn.bandwidth_bps(i, j)),
        };
        let mut latency = conn.latency_ms(i, j) + d.latency_at(i, now) + d.latency_at(j, now);
        if let Some((links, _)) = &route {
            latency += d.route_latency_at(links, now);
        }
        latency + t_up.max(t_dn).max(t_a)
    }
}

/// The route `i -> j` (core links and routers) when a traced core link
/// (capacity or latency) is on it, for [`Dynamics::path_bandwidth_at`] and
/// [`Dynamics::route_latency_at`].
pub(crate) fn route_if_traced(
    d: &Dynamics,
    m: &DelayModel,
    i: usize,
    j: usize,
) -> Option<(Vec<usize>, Vec<usize>)> {
    if !d.traces_links() {
        return None;
    }
    let conn = &m.connectivity;
    let links = conn.route(i, j);
    links
        .iter()
        .any(|&l| d.link(l).is_some() || d.link_latency.iter().any(|(k, _)| *k == l))
        .then(|| (links, conn.route_routers(i, j)))
}

impl NetworkModel for MaxPlusNetwork<'_> {
    fn name(&self) -> &'static str {
        if self.delay.dynamics.is_some() {
            "maxplus+traces"
        } else {
            "maxplus"
        }
    }

    fn start(&mut self, t: Transfer, timers: &mut dyn Timers, _delivered: &mut Vec<Transfer>) {
        let now = timers.now();
        let at = match &self.delay.dynamics {
            None => now + self.comm_ms(&t),
            Some(d) => now + self.traced_comm_ms(d, &t, now),
        };
        let slot = self.in_flight.insert(t);
        // A silo down for good: never delivered (the replay reports the
        // silos left waiting).
        if at.is_finite() {
            timers.set(at, slot as u64);
        }
    }

    fn on_timer(&mut self, token: u64, _timers: &mut dyn Timers, delivered: &mut Vec<Transfer>) {
        delivered.push(self.in_flight.remove(token as usize));
    }
}
