//! Overlay graphs: who sends its model to whom in a communication round.
//!
//! The floor below timing and the builders: an [`Overlay`] is a digraph over
//! silos (a strong spanning sub-digraph of the connectivity graph,
//! \[Marfoq20\] Sec. 2) with the [`Protocol`] its rounds run; undirected
//! overlays hold both arcs of every edge. Overlays that change every round
//! (MATCHA, random failures) implement [`OverlaySchedule`]; a static overlay
//! is a schedule that returns itself. [`failures`] wraps any schedule with
//! random node or link failures.
//!
//! Nothing here knows delays or networks: [`crate::timing`] times these
//! graphs, [`crate::overlay`] builds them, [`crate::replay`] replays them.

pub mod failures;

use std::borrow::Cow;

use serde::Serialize;

/// How the silos of an overlay exchange models in a round.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Protocol {
    /// Decentralized: every silo sends to its out-neighbours, then averages
    /// what it received (paper eq. 2).
    Gossip,
    /// Server-client: the orchestrator `center` gathers all models,
    /// aggregates and broadcasts (two phases per round).
    ServerClient {
        /// Silo hosting the orchestrator.
        center: usize,
    },
}

/// Arcs (every end `< n`) sorted and without duplicates: a two-pass counting
/// sort (by head, then stably by tail; `O(arcs + n)`) for many arcs, as in
/// MATCHA's rounds at scale (half a million arcs per round at 1,000
/// silos), else `sort_unstable`. Both give the same sorted set the
/// `BTreeSet` of the past gave.
fn sorted_unique_arcs(n: usize, mut arcs: Vec<(usize, usize)>) -> Vec<(usize, usize)> {
    if arcs.len() < 4096 || arcs.len() < n {
        arcs.sort_unstable();
        arcs.dedup();
        return arcs;
    }
    let by = |arcs: &[(usize, usize)], key: fn(&(usize, usize)) -> usize| {
        let mut start = vec![0usize; n + 1];
        for a in arcs {
            start[key(a) + 1] += 1;
        }
        for i in 0..n {
            start[i + 1] += start[i];
        }
        let mut out = vec![(0, 0); arcs.len()];
        for a in arcs {
            let slot = &mut start[key(a)];
            out[*slot] = *a;
            *slot += 1;
        }
        out
    };
    let mut sorted = by(&by(&arcs, |a| a.1), |a| a.0);
    sorted.dedup();
    sorted
}

/// A digraph over silos `0..n`, with a name and a protocol.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Overlay {
    /// Name shown in reports ("ring", "mst", ...).
    pub name: String,
    /// How rounds are run on it.
    pub protocol: Protocol,
    n: usize,
    /// Arcs `(from, to)`, sorted, without duplicates or self-loops.
    arcs: Vec<(usize, usize)>,
    out_deg: Vec<usize>,
    in_deg: Vec<usize>,
}

impl Overlay {
    /// An overlay with the given arcs; duplicates and self-loops are dropped.
    ///
    /// # Panics
    /// If an arc names a silo `>= n` (overlay builders never do).
    pub fn from_arcs(name: &str, n: usize, arcs: impl IntoIterator<Item = (usize, usize)>) -> Self {
        let arcs: Vec<(usize, usize)> = arcs.into_iter().filter(|(a, b)| a != b).collect();
        for &(a, b) in &arcs {
            assert!(a < n && b < n, "arc ({a},{b}) outside 0..{n}");
        }
        let arcs = sorted_unique_arcs(n, arcs);
        let mut out_deg = vec![0; n];
        let mut in_deg = vec![0; n];
        for &(a, b) in &arcs {
            out_deg[a] += 1;
            in_deg[b] += 1;
        }
        Overlay {
            name: name.to_string(),
            protocol: Protocol::Gossip,
            n,
            arcs,
            out_deg,
            in_deg,
        }
    }

    /// An undirected overlay: both arcs of every edge.
    pub fn from_edges(name: &str, n: usize, edges: &[(usize, usize)]) -> Self {
        Self::from_arcs(name, n, edges.iter().flat_map(|&(a, b)| [(a, b), (b, a)]))
    }

    /// The directed ring `tour[0] -> tour[1] -> ... -> tour[0]`.
    pub fn directed_ring(name: &str, n: usize, tour: &[usize]) -> Self {
        let k = tour.len();
        Self::from_arcs(name, n, (0..k).map(|i| (tour[i], tour[(i + 1) % k])))
    }

    /// Number of silos.
    pub fn silo_count(&self) -> usize {
        self.n
    }

    /// Arcs `(from, to)`, sorted.
    pub fn arcs(&self) -> &[(usize, usize)] {
        &self.arcs
    }

    /// Number of arcs.
    pub fn arc_count(&self) -> usize {
        self.arcs.len()
    }

    /// Out-degree of silo `i`.
    pub fn out_degree(&self, i: usize) -> usize {
        self.out_deg[i]
    }

    /// In-degree of silo `i`.
    pub fn in_degree(&self, i: usize) -> usize {
        self.in_deg[i]
    }

    /// Largest in- or out-degree.
    pub fn max_degree(&self) -> usize {
        self.out_deg
            .iter()
            .chain(&self.in_deg)
            .copied()
            .max()
            .unwrap_or(0)
    }

    /// True when every arc has its reverse.
    pub fn is_undirected(&self) -> bool {
        self.arcs
            .iter()
            .all(|&(a, b)| self.arcs.binary_search(&(b, a)).is_ok())
    }

    /// Undirected edges `(a, b)` with `a < b` (for undirected overlays).
    pub fn edges(&self) -> Vec<(usize, usize)> {
        self.arcs.iter().copied().filter(|(a, b)| a < b).collect()
    }

    /// In-neighbours of every silo.
    pub fn in_neighbours(&self) -> Vec<Vec<usize>> {
        let mut v = vec![Vec::new(); self.n];
        for &(a, b) in &self.arcs {
            v[b].push(a);
        }
        v
    }

    /// Out-neighbours of every silo.
    pub fn out_neighbours(&self) -> Vec<Vec<usize>> {
        let mut v = vec![Vec::new(); self.n];
        for &(a, b) in &self.arcs {
            v[a].push(b);
        }
        v
    }
}

/// A sequence of overlays, one per round (round `k = 0, 1, ...`).
///
/// The seam for overlays that change every round (MATCHA) and for the event
/// engine and trainer, which consume overlays round by round.
pub trait OverlaySchedule {
    /// Number of silos (the same in every round).
    fn silo_count(&self) -> usize;
    /// The overlay of round `k`.
    fn round(&self, k: u64) -> Cow<'_, Overlay>;
    /// True when every round has the same overlay.
    fn is_static(&self) -> bool;
    /// Rounds by which the model carried by arc `from -> to` of round `k`
    /// is older than round `k` (the arc must be one of round `k`'s): 0, the
    /// default, when the receiver waits for the model its in-neighbour
    /// computes in round `k`; `L > 0` when the transfer left the sender
    /// as it finished computing round `k - L` (round 0 when `k < L`) and ran
    /// in the background meanwhile (the weak edges of Multigraph,
    /// \[Do23\], [`crate::overlay::families::multigraph`]). The max-plus
    /// recurrence then reads `t_i(k+1) >= t_j(k - L) + d(j, i)`.
    fn arc_lag(&self, _k: u64, _from: usize, _to: usize) -> u64 {
        0
    }
    /// The largest [`Self::arc_lag`] of any round (0: no lagged arc).
    fn max_lag(&self) -> u64 {
        0
    }
    /// Calls `f(from, to, out_degree(from), in_degree(to))` for every arc of
    /// round `k`, in an unspecified order (the default: [`Self::round`]'s
    /// arcs, sorted). A schedule may do it without building the overlay
    /// (MATCHA: from its active matchings); for order-free uses (maxima).
    fn for_each_round_arc(&self, k: u64, f: &mut dyn FnMut(usize, usize, usize, usize)) {
        let o = self.round(k);
        for &(a, b) in o.arcs() {
            f(a, b, o.out_degree(a), o.in_degree(b));
        }
    }
}

impl OverlaySchedule for Overlay {
    fn silo_count(&self) -> usize {
        self.n
    }
    fn round(&self, _k: u64) -> Cow<'_, Overlay> {
        Cow::Borrowed(self)
    }
    fn is_static(&self) -> bool {
        true
    }
}

/// A borrowed schedule is a schedule (so wrappers take a schedule they do
/// not own).
impl<S: OverlaySchedule + ?Sized> OverlaySchedule for &S {
    fn silo_count(&self) -> usize {
        (**self).silo_count()
    }
    fn round(&self, k: u64) -> Cow<'_, Overlay> {
        (**self).round(k)
    }
    fn is_static(&self) -> bool {
        (**self).is_static()
    }
    fn arc_lag(&self, k: u64, from: usize, to: usize) -> u64 {
        (**self).arc_lag(k, from, to)
    }
    fn max_lag(&self) -> u64 {
        (**self).max_lag()
    }
    fn for_each_round_arc(&self, k: u64, f: &mut dyn FnMut(usize, usize, usize, usize)) {
        (**self).for_each_round_arc(k, f)
    }
}

/// A schedule that repeats a fixed list of overlays: round `k` is overlay
/// `k mod period` (a time-varying topology read from a per-round file, or
/// the sampled rounds of MATCHA \[Wang19\] replayed periodically).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PeriodicSchedule {
    /// Name shown in reports.
    pub name: String,
    n: usize,
    rounds: Vec<Overlay>,
    /// The rounds are a sample of a random schedule (MATCHA's rounds
    /// exported): timed as the random schedule is ([`Self::is_sampled`]).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    sampled: bool,
    /// `lags[r][a]`: the [`OverlaySchedule::arc_lag`] of arc `a` (in sorted
    /// order) of round `r`; `None` when no arc is lagged.
    lags: Option<Vec<Vec<u64>>>,
}

impl PeriodicSchedule {
    /// The schedule repeating `rounds` (at least one overlay, all on `n`
    /// silos); `None` when `rounds` is empty or an overlay has another size.
    pub fn new(name: &str, n: usize, rounds: Vec<Overlay>) -> Option<Self> {
        if rounds.is_empty() || rounds.iter().any(|o| o.silo_count() != n) {
            return None;
        }
        Some(PeriodicSchedule {
            name: name.to_string(),
            n,
            rounds,
            sampled: false,
            lags: None,
        })
    }

    /// The same schedule, marked as a sample of a random schedule (or not).
    pub fn with_sampled(mut self, sampled: bool) -> Self {
        self.sampled = sampled;
        self
    }

    /// True when the rounds are a sample of a random schedule (a MATCHA
    /// export, `"timing": "sampled"`): its cycle time is then the paper's
    /// round estimate over the rounds and its max-plus rate theirs played
    /// once, as for the random schedule itself
    /// ([`crate::evaluate::EvaluatedOverlay::cycle_time`]); otherwise the
    /// exact max-plus rate of the periodic repetition.
    pub fn is_sampled(&self) -> bool {
        self.sampled
    }

    /// This schedule with lagged arcs: `lags[r][a]` is the
    /// [`OverlaySchedule::arc_lag`] of the `a`-th arc (sorted order,
    /// [`Overlay::arcs`]) of round `r`. `None` when `lags` does not have one
    /// entry per round and per arc. All zeros is the schedule itself.
    pub fn with_lags(mut self, lags: Vec<Vec<u64>>) -> Option<Self> {
        if lags.len() != self.rounds.len()
            || lags
                .iter()
                .zip(&self.rounds)
                .any(|(l, o)| l.len() != o.arc_count())
        {
            return None;
        }
        self.lags = lags
            .iter()
            .any(|l| l.iter().any(|&x| x > 0))
            .then_some(lags);
        Some(self)
    }

    /// Number of rounds before the schedule repeats.
    pub fn period(&self) -> usize {
        self.rounds.len()
    }

    /// The overlays of one period, in round order.
    pub fn rounds(&self) -> &[Overlay] {
        &self.rounds
    }
}

impl OverlaySchedule for PeriodicSchedule {
    fn silo_count(&self) -> usize {
        self.n
    }
    fn round(&self, k: u64) -> Cow<'_, Overlay> {
        Cow::Borrowed(&self.rounds[(k % self.rounds.len() as u64) as usize])
    }
    fn is_static(&self) -> bool {
        self.lags.is_none()
            && self
                .rounds
                .iter()
                .all(|o| o.arcs() == self.rounds[0].arcs())
    }
    fn arc_lag(&self, k: u64, from: usize, to: usize) -> u64 {
        let Some(lags) = &self.lags else {
            return 0;
        };
        let r = (k % self.rounds.len() as u64) as usize;
        self.rounds[r]
            .arcs()
            .binary_search(&(from, to))
            .map_or(0, |a| lags[r][a])
    }
    fn max_lag(&self) -> u64 {
        self.lags
            .iter()
            .flatten()
            .flatten()
            .copied()
            .max()
            .unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn degrees_and_shapes() {
        let r = Overlay::directed_ring("r", 4, &[0, 2, 1, 3]);
        assert_eq!(r.arc_count(), 4);
        assert_eq!(r.max_degree(), 1);
        assert!(!r.is_undirected());
        let t = Overlay::from_edges("t", 3, &[(0, 1), (1, 2)]);
        assert!(t.is_undirected());
        assert_eq!(t.out_degree(1), 2);
        assert_eq!(t.edges(), vec![(0, 1), (1, 2)]);
        let d = Overlay::from_arcs("d", 3, [(0, 1), (0, 1), (2, 2)]);
        assert_eq!(d.arc_count(), 1);
    }

    #[test]
    fn counting_sort_equals_btree_set() {
        use rand::{Rng, SeedableRng};
        use std::collections::BTreeSet;
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        for (n, len) in [
            (5, 5000),
            (100, 5000),
            (3000, 4096),
            (50, 100),
            (7000, 6000),
        ] {
            let arcs: Vec<(usize, usize)> = (0..len)
                .map(|_| (rng.gen_range(0..n), rng.gen_range(0..n)))
                .collect();
            let want: Vec<_> = arcs
                .iter()
                .copied()
                .filter(|(a, b)| a != b)
                .collect::<BTreeSet<_>>()
                .into_iter()
                .collect();
            let o = Overlay::from_arcs("x", n, arcs.iter().copied());
            assert_eq!(o.arcs(), &want[..], "n {n}, {len} arcs");
        }
    }
}
