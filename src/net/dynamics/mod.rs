//! Network dynamics: bandwidth, latency and silo availability that change
//! over time, as piecewise-constant series read from a trace file
//! ([`read`]) or generated with a seed ([`generate`]).
//!
//! A trace sets, per target, the value that holds from a time until the
//! next change; before a target's first change its static value (the
//! scenario's: `--access`, `--silos-csv`, the underlay's links) applies.
//! Targets ([`read`] has the file format):
//!
//! * `up:SILO`, `down:SILO`, `access:SILO` (both): a silo's access
//!   capacity `Cup(i)`, `Cdn(i)`, bit/s.
//! * `latency:SILO`: extra one-way latency of a silo's access link, ms,
//!   added to every transfer the silo sends or receives.
//! * `link:A|B`: the capacity of the core link between routers `A` and
//!   `B` (both directions), bit/s.
//! * `link_latency:A|B`: extra one-way latency of that core link, ms,
//!   added to every route that crosses it (routes stay those of the
//!   static network: a latency change does not re-route).
//! * `avail:SILO`: the silo is `up` or `down`. A silo that is down neither
//!   computes (its local steps pause and resume when it is back up) nor
//!   sends nor receives (its access capacities are 0 while it is down;
//!   bits already propagating still arrive). What synchronous rounds do
//!   about it is the [`AvailabilityPolicy`]: wait for it (the default),
//!   skip it, or time out ([`crate::replay::churn`] has the rules).
//!
//! How the network models use a trace:
//!
//! * `maxplus`: \[Marfoq20\] eq. (3) with every rate integrated over time:
//!   a transfer sent at `t` ends at `t + l(i,j)(t) + max(T_up, T_dn, T_A)`
//!   where `T_up` is the time to push `outdeg(i) * M` bits through
//!   `Cup(i)(.)` from `t` ([`series::send_ms`]), likewise `T_dn` and `T_A`.
//!   Latency is taken **at send time**. A change mid-transfer is exact.
//! * `paper`: \[Marfoq20\] Algorithm 3 with the path rate
//!   `min(Cup/outdeg, Cdn/indeg, A)` integrated from the send time, and the
//!   serialised download integrated over `Cdn(.)`; latency at send time.
//! * `flow`: capacities change at their change times and the max-min rates
//!   are re-shared at every change (a timer per change instant while flows
//!   are active); the latency of a flow is taken when its last bit leaves.
//!
//! With a trace the max-plus cycle time and recurrence no longer describe
//! the run: replays and clocks run event by event, and reports name the
//! model `maxplus+traces` (or `paper+traces`, `flow+traces`).

pub mod generate;
pub mod read;
pub mod series;

use crate::net::connectivity::{Connectivity, PathModel};
use crate::units::{BitsPerSec, Ms};
pub use read::{TraceTarget, MAX_TRACE_ROWS};
pub use series::{send_ms, Series};

/// What a synchronous round does about a silo that is down (the rules in
/// [`crate::replay::churn`]).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum AvailabilityPolicy {
    /// Rounds wait until every silo they need is back up.
    #[default]
    Wait,
    /// A failure detector: a silo does not wait for an in-neighbour that is
    /// down (nor send to one); the round's averaging weights are
    /// re-normalised over the models it has, and the missing silo, once
    /// back up, rejoins from its neighbours' model.
    Skip,
    /// No failure detector: a silo waits at most this long (ms) after its
    /// local steps for the round's models, then averages the ones it has
    /// (re-normalised); late models are dropped. A silo that was down when
    /// it was given up on rejoins from its neighbours' model.
    Timeout(Ms),
}

impl AvailabilityPolicy {
    /// What the `availability` knob accepts.
    pub const EXPECTED: &'static str =
        "wait, skip, or timeout:MS (a time out in ms > 0 such as timeout:500)";

    /// Parses `wait`, `skip` or `timeout:MS`.
    pub fn parse(text: &str) -> Option<AvailabilityPolicy> {
        let t = text.trim();
        match t {
            "wait" => Some(AvailabilityPolicy::Wait),
            "skip" => Some(AvailabilityPolicy::Skip),
            _ => {
                let ms = t.strip_prefix("timeout:")?.trim();
                let ms = ms.strip_suffix("ms").unwrap_or(ms).trim();
                let ms: Ms = ms.parse().ok()?;
                (ms.is_finite() && ms > 0.0 && ms <= 1e12)
                    .then_some(AvailabilityPolicy::Timeout(ms))
            }
        }
    }

    /// What a network model's name gets under this policy: nothing under
    /// `wait`, else `+skip`, `+timeout:500`.
    pub fn name_suffix(&self) -> String {
        match self {
            AvailabilityPolicy::Wait => String::new(),
            p => format!("+{}", p.name()),
        }
    }

    /// The knob's text: `wait`, `skip`, `timeout:500`.
    pub fn name(&self) -> String {
        match self {
            AvailabilityPolicy::Wait => "wait".into(),
            AvailabilityPolicy::Skip => "skip".into(),
            AvailabilityPolicy::Timeout(ms) => format!("timeout:{ms}"),
        }
    }
}

/// The resolved dynamics of a scenario: series by silo index and core
/// link index.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Dynamics {
    /// Where the trace came from (a file name), for reports.
    pub source: String,
    /// `Cup(i)` series, bit/s.
    pub up: Vec<Option<Series>>,
    /// `Cdn(i)` series, bit/s.
    pub down: Vec<Option<Series>>,
    /// Extra access latency of silo `i`, ms.
    pub latency: Vec<Option<Series>>,
    /// Availability of silo `i`: 1 up, 0 down.
    pub avail: Vec<Option<Series>>,
    /// Capacity series of core links, by underlay link index, bit/s.
    pub links: Vec<(usize, Series)>,
    /// Extra latency series of core links, by underlay link index, ms.
    pub link_latency: Vec<(usize, Series)>,
    /// What a round does about a silo that is down.
    pub policy: AvailabilityPolicy,
}

impl Dynamics {
    /// Empty dynamics for `n` silos.
    pub fn new(n: usize, source: &str) -> Dynamics {
        Dynamics {
            source: source.to_string(),
            up: vec![None; n],
            down: vec![None; n],
            latency: vec![None; n],
            avail: vec![None; n],
            links: Vec::new(),
            link_latency: Vec::new(),
            policy: AvailabilityPolicy::Wait,
        }
    }

    /// Number of value changes over every target.
    pub fn changes(&self) -> usize {
        let silo = |v: &[Option<Series>]| v.iter().flatten().map(Series::len).sum::<usize>();
        silo(&self.up)
            + silo(&self.down)
            + silo(&self.latency)
            + silo(&self.avail)
            + self.links.iter().map(|(_, s)| s.len()).sum::<usize>()
            + self
                .link_latency
                .iter()
                .map(|(_, s)| s.len())
                .sum::<usize>()
    }

    /// The name of network model `model` (`maxplus`, `flow`, ...)
    /// following these dynamics: `flow+traces`, `flow+traces+skip`.
    pub fn model_name(&self, model: &str) -> String {
        format!("{model}+traces{}", self.policy.name_suffix())
    }

    /// A one-line description for reports.
    pub fn describe(&self) -> String {
        let count = |v: &[Option<Series>]| v.iter().flatten().count();
        format!(
            "{}: {} changes (silos traced: uplink {}, downlink {}, latency {}, availability {}; \
             core links: capacity {}, latency {}); event replay with traces (the max-plus cycle \
             time does not apply)",
            self.source,
            self.changes(),
            count(&self.up),
            count(&self.down),
            count(&self.latency),
            count(&self.avail),
            self.links.len(),
            self.link_latency.len()
        )
    }

    /// Is silo `i` up at `t` (ms)?
    #[inline]
    pub fn is_up(&self, i: usize, t: Ms) -> bool {
        self.avail[i].as_ref().is_none_or(|s| s.at(t, 1.0) > 0.0)
    }

    /// `Cup(i)` at `t` (ms), 0 while the silo is down; `base` is the static
    /// capacity.
    #[inline]
    pub fn up_at(&self, i: usize, t: Ms, base: BitsPerSec) -> BitsPerSec {
        if !self.is_up(i, t) {
            return 0.0;
        }
        self.up[i].as_ref().map_or(base, |s| s.at(t, base))
    }

    /// `Cdn(i)` at `t` (ms), 0 while the silo is down.
    #[inline]
    pub fn down_at(&self, i: usize, t: Ms, base: BitsPerSec) -> BitsPerSec {
        if !self.is_up(i, t) {
            return 0.0;
        }
        self.down[i].as_ref().map_or(base, |s| s.at(t, base))
    }

    /// Extra access latency of silo `i` at `t`, ms (0 without a series).
    #[inline]
    pub fn latency_at(&self, i: usize, t: Ms) -> Ms {
        self.latency[i].as_ref().map_or(0.0, |s| s.at(t, 0.0))
    }

    /// The next change after `t` of silo `i`'s access (capacity `up` or
    /// `down` side, or availability), ms.
    pub fn next_access_change(&self, i: usize, up: bool, t: Ms) -> Option<Ms> {
        let cap = if up { &self.up[i] } else { &self.down[i] };
        earliest([cap, &self.avail[i]].into_iter().flatten(), t)
    }

    /// The first silo the trace leaves down for good, with the time it
    /// went down (ms).
    pub fn down_for_good(&self) -> Option<(usize, Ms)> {
        self.avail.iter().enumerate().find_map(|(i, s)| {
            let s = s.as_ref()?;
            (s.values().last() == Some(&0.0)).then(|| (i, *s.times().last().unwrap_or(&0.0)))
        })
    }

    /// True when a core link's capacity or latency is traced (routes are
    /// then needed to time a transfer).
    pub fn traces_links(&self) -> bool {
        !self.links.is_empty() || !self.link_latency.is_empty()
    }

    /// Extra latency of the core links of `route` at `t`, ms (0 without
    /// link latency traces).
    pub fn route_latency_at(&self, route: &[usize], t: Ms) -> Ms {
        let mut extra = 0.0;
        for (l, s) in &self.link_latency {
            if route.contains(l) {
                extra += s.at(t, 0.0);
            }
        }
        extra
    }

    /// Capacity series of core link `l`, if traced.
    pub fn link(&self, l: usize) -> Option<&Series> {
        self.links.iter().find(|(k, _)| *k == l).map(|(_, s)| s)
    }

    /// Every change time of every target, ms, sorted and without repeats.
    pub fn change_times(&self) -> Vec<Ms> {
        let mut t: Vec<Ms> = [&self.up, &self.down, &self.latency, &self.avail]
            .into_iter()
            .flat_map(|v| v.iter().flatten())
            .chain(self.links.iter().map(|(_, s)| s))
            .chain(self.link_latency.iter().map(|(_, s)| s))
            .flat_map(|s| s.times().iter().copied())
            .collect();
        t.sort_by(f64::total_cmp);
        t.dedup();
        t
    }

    /// When silo `i`, starting `work` ms of computation at `start`, has
    /// computed for `work` ms of up time (its computation pauses while it
    /// is down), ms; infinite when it never comes back up.
    pub fn compute_end(&self, i: usize, start: Ms, work: Ms) -> Ms {
        let Some(s) = &self.avail[i] else {
            return start + work;
        };
        let (mut t, mut left) = (start, work.max(0.0));
        loop {
            let next = s.next_after(t);
            if s.at(t, 1.0) > 0.0 {
                match next {
                    Some(n) if t + left > n => left -= n - t,
                    _ => return t + left,
                }
            }
            match next {
                Some(n) => t = n,
                None => return f64::INFINITY,
            }
        }
    }

    /// Available bandwidth `A(i,j)` at `t`, bit/s, when a traced core link
    /// is on the route (the path model's rule over the links' capacities at
    /// `t`: `paper` the smallest over the hops, `bottleneck` the smallest),
    /// with the next change of those links; `None` when no traced link is
    /// on the route.
    pub fn path_bandwidth_at(
        &self,
        conn: &Connectivity,
        route: &[usize],
        routers: &[usize],
        t: Ms,
    ) -> Option<(BitsPerSec, Option<Ms>)> {
        if self.links.is_empty() || !route.iter().any(|&l| self.link(l).is_some()) {
            return None;
        }
        let mut min = f64::INFINITY;
        let mut next: Option<Ms> = None;
        for (k, &l) in route.iter().enumerate() {
            let base = conn.link_capacity_towards(l, routers[k], routers[k + 1]);
            let c = match self.link(l) {
                Some(s) => {
                    if let Some(n) = s.next_after(t) {
                        next = Some(next.map_or(n, |m: Ms| m.min(n)));
                    }
                    s.at(t, base)
                }
                None => base,
            };
            min = min.min(c);
        }
        let a = match conn.options().model {
            PathModel::Paper => min / route.len() as f64,
            PathModel::Bottleneck => min,
        };
        Some((a, next))
    }
}

/// The earliest change after `t` of `series`, ms.
fn earliest<'s>(series: impl Iterator<Item = &'s Series>, t: Ms) -> Option<Ms> {
    series
        .filter_map(|s| s.next_after(t))
        .min_by(f64::total_cmp)
}
