//! [`AllReduceClock`]: round end times of all-reduce rounds (ring or mesh)
//! from their recurrences ([`crate::timing::allreduce`]).

use super::{ClockError, RoundClock};
use crate::graph::Overlay;
use crate::timing::allreduce::AllReduce;
use crate::units::Ms;

/// Wall-clock times of all-reduce rounds (ring or mesh): each round is
/// [`AllReduce::end_times`] of the previous round's end times (the chunk
/// recurrences of [`crate::timing::allreduce`] and
/// [`crate::timing::mesh_allreduce`], \[Marfoq20\] eq. (3) per chunk).
/// The round's overlay only checks the size: the schedule is fixed.
#[derive(Debug, Clone)]
pub struct AllReduceClock {
    round: AllReduce,
    t: Vec<Ms>,
    next: u64,
}

impl AllReduceClock {
    /// A clock for `round`, silos at 0 ms.
    pub fn new(round: AllReduce) -> Self {
        AllReduceClock {
            t: vec![0.0; round.silo_count()],
            round,
            next: 0,
        }
    }
}

impl RoundClock for AllReduceClock {
    fn round_end_times(&mut self, k: u64, overlay: &Overlay) -> Result<Vec<Ms>, ClockError> {
        super::check_round(k, self.next, overlay, self.t.len())?;
        self.t = self.round.end_times(&self.t);
        self.next += 1;
        Ok(self.t.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::scenario::{load_underlay, NetworkSpec};
    use crate::net::underlay::LoadOptions;
    use crate::overlay::algo::RingSearch;
    use crate::overlay::ring::ring_opt_tour;
    use crate::timing::allreduce::AllReduceSchedule;

    #[test]
    fn rounds_advance_at_the_cycle_time_and_in_order() {
        let u = load_underlay(None, &LoadOptions::default()).unwrap();
        let m = NetworkSpec::default().delay_model(&u);
        let tour = ring_opt_tour(&m, &RingSearch::default());
        let r = AllReduce::new(&m, &AllReduceSchedule::Ring(tour.clone())).unwrap();
        let tau = r.cycle_time("x").unwrap().cycle_time_ms;
        let ring = Overlay::directed_ring("r", m.silo_count(), &tour);
        let mut c = AllReduceClock::new(r);
        let mut last = 0.0;
        let k = 400;
        for i in 0..k {
            let t = c.round_end_times(i, &ring).unwrap();
            let max = t.iter().copied().fold(0.0, f64::max);
            assert!(max >= last);
            last = max;
        }
        assert!((last / k as f64 - tau).abs() <= 0.02 * tau, "{last} {tau}");
        assert!(matches!(
            c.round_end_times(k + 1, &ring),
            Err(ClockError::OutOfOrder { .. })
        ));
        let small = Overlay::directed_ring("s", 2, &[0, 1]);
        assert!(c.round_end_times(k, &small).is_err());
    }
}
