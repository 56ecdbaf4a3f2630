//! The round protocol under churn ([`crate::replay::churn`] has the
//! rules): the event handlers that replace the `Wait` protocol's when an
//! availability policy other than `Wait` is set.

use super::{ComputeDone, RoundProtocol};
use crate::net::dynamics::AvailabilityPolicy;
use crate::network::Transfer;
use crate::replay::churn::{self, Join, RoundParticipation, JOIN};
use crate::replay::harness::Link;
use crate::units::Ms;

impl RoundProtocol<'_> {
    /// The lowest round of a silo that is not away.
    pub(super) fn lowest_present_round(&self) -> u64 {
        (0..self.round.len())
            .filter(|&i| !self.churn.as_ref().is_some_and(|c| c.is_away(i)))
            .map(|i| self.round[i])
            .min()
            .unwrap_or(0)
    }

    /// Schedules every silo's first availability change after time 0.
    pub(super) fn schedule_availability(&mut self, link: &mut Link<'_, ComputeDone>) {
        let Some(d) = self.delay.dynamics.as_ref() else {
            return;
        };
        for (i, s) in d.avail.iter().enumerate() {
            if let Some(t) = s.as_ref().and_then(|s| s.next_after(0.0)) {
                link.schedule_at(t, churn::encode(churn::AVAIL, i, 0));
            }
        }
    }

    fn is_up(&self, i: usize, t: Ms) -> bool {
        self.delay.dynamics.as_ref().is_none_or(|d| d.is_up(i, t))
    }

    fn policy(&self) -> AvailabilityPolicy {
        self.churn
            .as_ref()
            .map_or(AvailabilityPolicy::Wait, |c| c.policy)
    }

    /// Round `k`'s participation row, if kept.
    fn row_mut(&mut self, k: u64) -> Option<&mut RoundParticipation> {
        let at = k.checked_sub(self.first)? as usize;
        self.churn.as_mut()?.rows.get_mut(at)
    }

    /// Round `k`'s participation, once every silo has started round `k+1`.
    pub(crate) fn participation(&self, k: u64) -> Option<&RoundParticipation> {
        if k.checked_add(1)? >= self.rounds_started() {
            return None;
        }
        let at = k.checked_sub(self.first)? as usize;
        self.churn.as_ref()?.rows.get(at)
    }

    pub(super) fn churn_event(&mut self, e: ComputeDone, link: &mut Link<'_, ComputeDone>) {
        let (kind, i, gen) = churn::decode(e);
        let Some(c) = self.churn.as_mut() else {
            return;
        };
        match kind {
            churn::COMPUTE if c.gen[i] == gen => self.computed(i, link),
            churn::TIMEOUT if c.gen[i] == gen && self.compute_done[i] => {
                c.timed_out[i] = true;
                c.recheck.push(i);
            }
            churn::AVAIL => self.availability_changed(i, link),
            _ => {}
        }
        self.run_rechecks(link);
    }

    /// Silo `i` finished its local steps of its round.
    fn computed(&mut self, i: usize, link: &mut Link<'_, ComputeDone>) {
        self.compute_done[i] = true;
        let k = self.round[i];
        let now = link.now();
        if let Some(r) = self.row_mut(k) {
            r.computed[i] = true;
        }
        if let Some(b) = self.breakdown.as_mut() {
            b.computed_round(i, k, now);
        }
        let waits = self.star_center.is_none_or(|c| c == i);
        if let (AvailabilityPolicy::Timeout(ms), true) = (self.policy(), waits) {
            let gen = self.churn.as_ref().map_or(0, |c| c.gen[i]);
            link.schedule_in(ms, churn::encode(churn::TIMEOUT, i, gen));
        }
        match self.star_center {
            Some(c) if c != i => {
                // Clients always send to the centre (never skipped).
                let inc = self.in_degree_now(c, k, now);
                self.send(i, c, k, 1, inc, link);
            }
            Some(_) => self.push_recheck(i),
            None => {
                let targets = std::mem::take(&mut self.info_mut(k).out[i]);
                let to: Vec<bool> = targets.iter().map(|&j| self.receives(j, k, now)).collect();
                let out_deg = to.iter().filter(|&&x| x).count();
                for (&j, &sends) in targets.iter().zip(&to) {
                    if sends {
                        let in_j = self.in_degree_now(j, k, now);
                        self.send(i, j, k, out_deg, in_j, link);
                    } else {
                        self.skip_send(i, j, k);
                    }
                }
                self.info_mut(k).out[i] = targets;
                self.push_recheck(i);
            }
        }
    }

    fn push_recheck(&mut self, i: usize) {
        if let Some(c) = self.churn.as_mut() {
            c.recheck.push(i);
        }
    }

    /// The in-neighbours expected to send silo `j` their round-`k` model
    /// now (the in-degree of eq. (3)'s download term): those not absent
    /// from round `k` and, under `skip`, up.
    fn in_degree_now(&mut self, j: usize, k: u64, now: Ms) -> usize {
        let inn = std::mem::take(&mut self.info_mut(k).inn[j]);
        let d = inn.iter().filter(|&&u| self.receives(u, k, now)).count();
        self.info_mut(k).inn[j] = inn;
        d.max(1)
    }

    /// Does silo `j` get round-`k` models sent to it now? Not when it is
    /// absent from round `k`, nor (`skip`) when it is down.
    fn receives(&self, j: usize, k: u64, now: Ms) -> bool {
        let Some(c) = self.churn.as_ref() else {
            return true;
        };
        if c.absent_from(j, k) {
            return false;
        }
        c.policy != AvailabilityPolicy::Skip || self.is_up(j, now)
    }

    /// `from` does not send its round-`k` model to `to`: `to` then does not
    /// wait for it.
    fn skip_send(&mut self, from: usize, to: usize, k: u64) {
        let round_to = self.round[to];
        let Some(c) = self.churn.as_mut() else {
            return;
        };
        c.stats.sends_skipped += 1;
        if !c.absent_from(to, k) {
            c.record(to, round_to, k, from, false);
        }
    }

    pub(super) fn churn_delivered(&mut self, t: Transfer, link: &mut Link<'_, ComputeDone>) {
        let now = link.now();
        if t.round & JOIN != 0 {
            self.join_model_arrived(t.from, t.to, t.round & !JOIN, link);
        } else {
            match self.star_center {
                Some(c) if t.to != c => self.broadcast_arrived(c, t.to, t.round, now, link),
                _ => {
                    let round_to = self.round[t.to];
                    if let Some(c) = self.churn.as_mut() {
                        if c.record(t.to, round_to, t.round, t.from, true) {
                            c.recheck.push(t.to);
                        }
                    }
                }
            }
        }
        self.run_rechecks(link);
    }

    /// The centre's round-`m` broadcast reached client `to`.
    fn broadcast_arrived(
        &mut self,
        c: usize,
        to: usize,
        m: u64,
        now: Ms,
        link: &mut Link<'_, ComputeDone>,
    ) {
        let Some(ch) = self.churn.as_mut() else {
            return;
        };
        let join = ch.joining[to].as_ref().map(|j| j.round);
        if join == Some(m + 1) {
            self.complete_join(to, vec![c], now, link);
        } else if let Some(join) = join.filter(|&j| j <= m) {
            // A newer broadcast overtook the one the client waited for
            // (held up while it was down): it rejoins at round `m + 1`,
            // absent from rounds `join..=m` too.
            let a = ch.absent[to].map_or(join, |(a, _)| a);
            ch.absent[to] = Some((a, m + 1));
            if let Some(x) = ch.joining[to].as_mut() {
                x.round = m + 1;
            }
            self.round[to] = m + 1;
            let last = self.first + self.starts.len() as u64;
            for k in join.max(self.first)..=m.min(last.saturating_sub(1)) {
                self.reach((k - self.first) as usize);
            }
            self.complete_join(to, vec![c], now, link);
        } else if join.is_none() && !ch.is_away(to) && self.round[to] <= m {
            // A newer broadcast than the client's round (an older one is
            // still on its way to it, held up while it was down): the
            // client takes the newest model and starts the rounds it
            // missed now (absent from them).
            for k in self.round[to] + 1..=m {
                self.start_round(to, k, now, link);
            }
            if let Some(r) = self.row_mut(m) {
                r.joined[to] = Some(vec![c]);
            }
            self.start_round(to, m + 1, now, link);
        } else {
            ch.stats.models_dropped += 1;
        }
    }

    fn run_rechecks(&mut self, link: &mut Link<'_, ComputeDone>) {
        while let Some(i) = self.churn.as_mut().and_then(|c| c.recheck.pop()) {
            match self.star_center {
                Some(c) if c == i => self.aggregate(c, link),
                Some(_) => {}
                None => {
                    let joined = self.churn.as_mut().and_then(|c| {
                        let x = c.joining[i].as_mut()?;
                        x.pending.is_empty().then(|| std::mem::take(&mut x.got))
                    });
                    match joined {
                        // Every sender of a rejoin went away: it starts
                        // from the models that did arrive.
                        Some(got) => self.complete_join(i, got, link.now(), link),
                        None => self.advance(i, link),
                    }
                }
            }
        }
    }

    /// Can silo `i` end its round `k` now? `Some(down)` when every
    /// in-neighbour's model is in or excused, `down` the in-neighbours
    /// excused because they are down (they become absent).
    fn ready(&mut self, i: usize, k: u64, now: Ms) -> Option<(Vec<usize>, u64)> {
        let inn = std::mem::take(&mut self.info_mut(k).inn[i]);
        let mut down = Vec::new();
        let mut missed = 0;
        let mut ok = true;
        if let Some(c) = self.churn.as_ref() {
            for &u in &inn {
                if c.has(i, u) || c.excused(i, u, k) {
                    continue;
                }
                let is_down = !self.is_up(u, now);
                if (c.policy == AvailabilityPolicy::Skip && is_down) || c.timed_out[i] {
                    missed += 1;
                    if is_down {
                        down.push(u);
                    }
                    continue;
                }
                ok = false;
                break;
            }
        }
        self.info_mut(k).inn[i] = inn;
        ok.then_some((down, missed))
    }

    /// Takes silo `i`'s round-`k` models: records the ones it averages and
    /// those it missed, and makes the `down` ones absent.
    fn take_models(&mut self, i: usize, k: u64, (down, missed): (Vec<usize>, u64)) {
        let Some(c) = self.churn.as_mut() else {
            return;
        };
        let front = c.got[i].pop_front().unwrap_or_default();
        let used: Vec<usize> = front
            .iter()
            .filter(|&&(_, real)| real)
            .map(|&(s, _)| s)
            .collect();
        c.stats.models_missed += missed;
        if let Some(r) = self.row_mut(k) {
            r.used[i] = Some(used);
        }
        // A silo behind round `k` and down is absent from its round on; one
        // ahead of it is not behind.
        for u in down {
            if self.round[u] > k {
                continue;
            }
            self.make_absent(u);
        }
    }

    /// Gossip silo `i` ends its round when it can.
    fn advance(&mut self, i: usize, link: &mut Link<'_, ComputeDone>) {
        let k = self.round[i];
        if k >= self.rounds || !self.compute_done[i] {
            return;
        }
        let now = link.now();
        let Some(ready) = self.ready(i, k, now) else {
            return;
        };
        self.take_models(i, k, ready);
        self.start_round(i, k + 1, now, link);
    }

    /// The STAR centre aggregates when it can and broadcasts to the
    /// clients that take part in the next round.
    fn aggregate(&mut self, c: usize, link: &mut Link<'_, ComputeDone>) {
        let k = self.round[c];
        if k >= self.rounds || !self.compute_done[c] {
            return;
        }
        let now = link.now();
        let Some(ready) = self.ready(c, k, now) else {
            return;
        };
        self.take_models(c, k, ready);
        let targets = std::mem::take(&mut self.info_mut(k).out[c]);
        let to: Vec<bool> = targets
            .iter()
            .map(|&j| {
                let joins = self
                    .churn
                    .as_ref()
                    .is_some_and(|ch| ch.joining[j].as_ref().is_some_and(|x| x.round == k + 1));
                joins || self.receives(j, k + 1, now)
            })
            .collect();
        let out_c = to.iter().filter(|&&x| x).count();
        let mut missed = Vec::new();
        for (&j, &sends) in targets.iter().zip(&to) {
            if sends {
                self.send(c, j, k, out_c, 1, link);
            } else {
                if let Some(ch) = self.churn.as_mut() {
                    ch.stats.sends_skipped += 1;
                }
                missed.push(j);
            }
        }
        self.info_mut(k).out[c] = targets;
        // A client down at the broadcast misses the next round.
        for j in missed {
            self.make_absent(j);
        }
        self.start_round(c, k + 1, now, link);
    }

    /// Silo `u` becomes absent from its current round on (or, rejoining,
    /// goes away again).
    fn make_absent(&mut self, u: usize) {
        let n = self.round.len();
        let lowest = self.lowest_present_round();
        let last = self.first + self.starts.len() as u64;
        let round_u = self.round[u];
        let Some(c) = self.churn.as_mut() else {
            return;
        };
        let counts_from = match c.absent[u] {
            Some((_, u64::MAX)) => return,
            Some((a, until)) if c.joining[u].is_some() => {
                c.absent[u] = Some((a, u64::MAX));
                c.joining[u] = None;
                until
            }
            _ => {
                c.close_absence(u, lowest);
                c.absent[u] = Some((round_u, u64::MAX));
                c.away.push(u);
                round_u + 1
            }
        };
        c.gen[u] = c.gen[u].wrapping_add(1);
        c.got[u].clear();
        c.timed_out[u] = false;
        c.stats.absences += 1;
        self.compute_done[u] = false;
        for k in counts_from.max(self.first)..last {
            self.reach((k - self.first) as usize);
        }
        // Rejoining silos no longer wait for `u`'s model; every waiting
        // silo may now go on without it.
        let mut done = Vec::new();
        if let Some(c) = self.churn.as_mut() {
            for (j, join) in c.joining.iter_mut().enumerate() {
                if let Some(x) = join.as_mut() {
                    if let Some(p) = x.pending.iter().position(|&s| s == u) {
                        x.pending.swap_remove(p);
                        if x.pending.is_empty() {
                            done.push(j);
                        }
                    }
                }
            }
            c.recheck.extend(0..n);
            // Rejoins left without a pending sender complete in the
            // rechecks (`run_rechecks`).
            c.recheck.extend(done);
        }
    }

    fn availability_changed(&mut self, i: usize, link: &mut Link<'_, ComputeDone>) {
        let now = link.now();
        if let Some(t) = self
            .delay
            .dynamics
            .as_ref()
            .and_then(|d| d.avail[i].as_ref())
            .and_then(|s| s.next_after(now))
        {
            link.schedule_at(t, churn::encode(churn::AVAIL, i, 0));
        }
        let up = self.is_up(i, now);
        let Some(c) = self.churn.as_mut() else {
            return;
        };
        if !up {
            if c.policy == AvailabilityPolicy::Skip {
                c.recheck.extend(0..self.round.len());
            }
            return;
        }
        if c.is_away(i) {
            self.rejoin(i, now, link);
        }
    }

    /// Silo `i`, absent, is back up: it fetches its neighbours' model
    /// (module docs of [`crate::replay::churn`]).
    fn rejoin(&mut self, i: usize, now: Ms, link: &mut Link<'_, ComputeDone>) {
        let n = self.round.len();
        if let Some(c) = self.star_center {
            let join = self.round[c] + 1;
            if join <= self.rounds {
                self.request_join(i, join, Vec::new());
            }
            return;
        }
        // In-neighbours that are up, present, and would send to `i` in
        // their current round.
        let mut senders: Vec<usize> = Vec::new();
        let mut best = 0;
        for v in 0..n {
            if v == i || !self.is_up(v, now) {
                continue;
            }
            let present = self.churn.as_ref().is_some_and(|c| c.is_present(v));
            if !present || !self.info(self.round[v]).out[v].contains(&i) {
                continue;
            }
            let r = self.round[v];
            if senders.is_empty() || r > best {
                senders.clear();
                best = r;
            }
            if r == best {
                senders.push(v);
            }
        }
        if senders.is_empty() {
            // Nobody to fetch from: the round after the most advanced
            // silo present, from its own model.
            let top = (0..n)
                .filter(|&v| v != i && self.churn.as_ref().is_some_and(|c| c.is_present(v)))
                .map(|v| self.round[v])
                .max()
                .unwrap_or(self.round[i]);
            let join = top.max(self.round[i]) + 1;
            if join <= self.rounds {
                self.request_join(i, join, Vec::new());
                self.complete_join(i, Vec::new(), now, link);
            }
            return;
        }
        // Never before the round after the one it left.
        let left = self
            .churn
            .as_ref()
            .and_then(|c| c.absent[i])
            .map_or(self.round[i], |(a, _)| a);
        let join = (best + 1).max(left + 1);
        if join > self.rounds {
            return;
        }
        for &v in &senders {
            if let Some(c) = self.churn.as_mut() {
                c.wants[v].push(i);
            }
        }
        self.request_join(i, join, senders);
    }

    /// Silo `i` will start round `join` once the models of `pending` are in
    /// (STAR: at the centre's broadcast). Rounds from `join` on count it
    /// again; in-neighbours that already sent round `join` without it are
    /// not waited for.
    fn request_join(&mut self, i: usize, join: u64, pending: Vec<usize>) {
        let first = self.first;
        let rows = self.starts.len() as u64;
        for k in join.max(first)..first + rows {
            self.reached[(k - first) as usize] -= 1;
        }
        // Silos that passed rounds from `join` on while `i` was away sent it
        // none of those models: `i` does not wait for them (nor for the
        // round such a silo is in if it has computed it). Every silo, not
        // only round `join`'s in-neighbours: a schedule's overlays change.
        let ahead: Vec<(usize, u64)> = (0..self.round.len())
            .filter(|&v| v != i && self.star_center.is_none())
            .map(|v| (v, self.round[v] + u64::from(self.compute_done[v])))
            .filter(|&(_, r)| r > join)
            .collect();
        self.round[i] = join;
        self.compute_done[i] = false;
        let Some(c) = self.churn.as_mut() else {
            return;
        };
        let a = c.absent[i].map_or(join, |(a, _)| a);
        c.absent[i] = Some((a, join));
        c.gen[i] = c.gen[i].wrapping_add(1);
        c.timed_out[i] = false;
        c.got[i].clear();
        c.excused[i] = ahead;
        c.joining[i] = Some(Join {
            round: join,
            pending,
            got: Vec::new(),
        });
    }

    /// Silo `v` starts round `k`: it sends the model it starts with to the
    /// silos rejoining at round `k` from it.
    pub(super) fn send_join_models(&mut self, v: usize, k: u64, link: &mut Link<'_, ComputeDone>) {
        let Some(c) = self.churn.as_mut() else {
            return;
        };
        if c.wants[v].is_empty() {
            return;
        }
        let wants = std::mem::take(&mut c.wants[v]);
        let mut keep = Vec::new();
        for j in wants {
            match c.joining[j].as_ref() {
                Some(x) if x.round == k && x.pending.contains(&v) => {
                    let in_deg = x.pending.len() + x.got.len();
                    self.transfers += 1;
                    link.send(Transfer {
                        from: v,
                        to: j,
                        round: k | JOIN,
                        bits: self.delay.workload.model_bits,
                        out_deg: 1,
                        in_deg,
                    });
                }
                Some(x) if x.round > k => keep.push(j),
                _ => {}
            }
        }
        if let Some(c) = self.churn.as_mut() {
            c.wants[v] = keep;
        }
    }

    fn join_model_arrived(
        &mut self,
        from: usize,
        to: usize,
        k: u64,
        link: &mut Link<'_, ComputeDone>,
    ) {
        let now = link.now();
        let Some(c) = self.churn.as_mut() else {
            return;
        };
        let Some(x) = c.joining[to].as_mut().filter(|x| x.round == k) else {
            c.stats.models_dropped += 1;
            return;
        };
        if let Some(p) = x.pending.iter().position(|&s| s == from) {
            x.pending.swap_remove(p);
            x.got.push(from);
        }
        if x.pending.is_empty() {
            let got = std::mem::take(&mut x.got);
            self.complete_join(to, got, now, link);
        }
    }

    /// Silo `i` starts the round it rejoins at, from the mean of `from`'s
    /// models (its own when empty).
    fn complete_join(
        &mut self,
        i: usize,
        mut from: Vec<usize>,
        now: Ms,
        link: &mut Link<'_, ComputeDone>,
    ) {
        let Some(c) = self.churn.as_mut() else {
            return;
        };
        let Some(x) = c.joining[i].take() else {
            return;
        };
        c.away.retain(|&j| j != i);
        c.stats.rejoins += 1;
        from.sort_unstable();
        if let Some(r) = self.row_mut(x.round - 1) {
            r.joined[i] = Some(from);
        }
        self.start_round(i, x.round, now, link);
    }
}
