//! Calibration to a measured run: from a log of what a real (or simulated)
//! training run did — when each silo computed, when each model left and
//! arrived — fit the terms of \[Marfoq20\] eq. (3) that the run exercised
//! (per-silo compute time and access capacities, per-pair latency and core
//! capacity), and say how well the fitted model explains the run.
//!
//! # The log
//! A CSV, one span per row (`fedtopo simulate --log FILE` writes one):
//!
//! ```text
//! kind,round,from,to,start_ms,end_ms,bits
//! compute,0,Seattle,,0,25.4,
//! transfer,0,Seattle,Hayward,25.4,1290.2,44961717
//! ```
//!
//! `compute` rows: silo `from` computed round `round` (its `s` local steps)
//! from `start_ms` to `end_ms`. `transfer` rows: a model of round `round`
//! left `from` at `start_ms` and had fully arrived at `to` at `end_ms`;
//! `bits` is its size (empty: the workload's model size). Silos are named
//! by their labels (`ROUTER` or `ROUTER#k`).
//!
//! # The fit
//! * Compute: `Tc(i)` = the median of silo `i`'s compute spans over `s`.
//! * Latency of a pair `(i,j)`: with messages of at least two sizes, the
//!   least-squares line `T = l + bits * r` through its transfers gives
//!   `l(i,j)`; with one size the latency is not identifiable from the log
//!   and the underlay's `l(i,j)` is kept (said per pair).
//! * Capacities: every transfer's per-bit time `p = (T - l) / bits` is
//!   eq. (3)'s `max(outdeg(i)/Cup(i), indeg(j)/Cdn(j), 1/A(i,j))`, with the
//!   degrees of its round in the log. The fitted `Cup(i)` is the smallest
//!   capacity consistent with every transfer from `i` (`max outdeg/p`),
//!   likewise `Cdn(j)`; it is *identified* when some transfer is explained
//!   by it alone, otherwise a lower bound (the link never limited the run).
//!   A pair most of whose transfers neither access link explains (by more
//!   than [`UNEXPLAINED`]) gets a core capacity `A(i,j) = 1 / median p`
//!   over those transfers.
//!
//! # The error
//! Each compute span against `s * Tc(i)`, each transfer against the fitted
//! eq. (3) time, and each round end of the log against the one predicted
//! from the measured start of the round and the measured send times
//! (`max(t_i(k) + s*Tc(i), max over the models into i: sent + T)`):
//! relative errors, mean and largest.

pub mod links;

use crate::net::placement::silo_label;
use std::collections::BTreeMap;

use serde::Serialize;

use crate::csv_file::{reader, record_error, Columns, CsvFileError};
use crate::net::delay::DelayModel;
use crate::replay::RoundTrace;
use crate::units::{Bits, BitsPerSec, Ms};

/// A transfer slower than its access links explain by more than this
/// (relative) is left to the pair's core (module docs).
pub const UNEXPLAINED: f64 = 0.05;

/// Most spans a log may hold.
pub const MAX_LOG_SPANS: usize = 2_000_000;

/// One span of a measured run (module docs), ms.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Span {
    /// True for a transfer, false for a computation.
    pub transfer: bool,
    /// The round.
    pub round: u64,
    /// The computing silo, or the sender.
    pub from: usize,
    /// The receiver (the computing silo for a computation).
    pub to: usize,
    /// Start, ms.
    pub start_ms: Ms,
    /// End, ms.
    pub end_ms: Ms,
    /// Model size, bit (transfers).
    pub bits: Bits,
}

/// A measured run (module docs).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunLog {
    /// Silos.
    pub silos: usize,
    /// Every span, in file order.
    pub spans: Vec<Span>,
}

/// Why a log could not be fitted.
#[derive(Debug, thiserror::Error)]
pub enum CalibrateError {
    /// The log file.
    #[error(transparent)]
    File(#[from] CsvFileError),
    /// Nothing to fit.
    #[error("{0}")]
    Empty(String),
}

impl RunLog {
    /// Parses log `text` (`source` names it in errors) over silos named
    /// `labels`; transfers without `bits` carry `default_bits`.
    ///
    /// # Errors
    /// [`CsvFileError::Record`] with the line for an unknown column, kind
    /// or silo, a bad number, an end before its start, or more than
    /// [`MAX_LOG_SPANS`] spans.
    pub fn parse(
        text: &str,
        source: &str,
        labels: &[String],
        default_bits: Bits,
    ) -> Result<RunLog, CsvFileError> {
        let err = |line: u64, message: String| record_error(source, line, message);
        let mut rd = reader(text);
        let headers = rd.headers().map_err(|e| err(1, e.to_string()))?.clone();
        const KNOWN: [&str; 7] = ["kind", "round", "from", "to", "start_ms", "end_ms", "bits"];
        let cols = Columns::accepted(&headers, &KNOWN).map_err(|m| err(1, m))?;
        let need = |name: &str| {
            cols.position(name)
                .ok_or_else(|| err(1, format!("missing column `{name}` (expected {KNOWN:?})")))
        };
        let (ck, cr, cf, ct, cs, ce) = (
            need("kind")?,
            need("round")?,
            need("from")?,
            need("to")?,
            need("start_ms")?,
            need("end_ms")?,
        );
        let cb = cols.position("bits");
        let index: BTreeMap<&str, usize> = labels
            .iter()
            .enumerate()
            .map(|(i, l)| (l.as_str(), i))
            .collect();
        let mut spans = Vec::new();
        for rec in rd.records() {
            let rec = rec.map_err(|e| err(e.position().map_or(0, |p| p.line()), e.to_string()))?;
            let line = rec.position().map_or(0, |p| p.line());
            if spans.len() >= MAX_LOG_SPANS {
                return Err(err(line, format!("more than {MAX_LOG_SPANS} spans")));
            }
            let cell = |c: usize| rec.get(c).unwrap_or("");
            let silo = |c: usize, what: &str| -> Result<usize, CsvFileError> {
                index.get(cell(c)).copied().ok_or_else(|| {
                    err(
                        line,
                        format!("{what} `{}` is not a silo of this network", cell(c)),
                    )
                })
            };
            let ms = |c: usize, what: &str| -> Result<Ms, CsvFileError> {
                cell(c)
                    .parse::<f64>()
                    .ok()
                    .filter(|x| x.is_finite() && *x >= 0.0)
                    .ok_or_else(|| {
                        err(
                            line,
                            format!("{what} `{}`: expected a time >= 0, ms", cell(c)),
                        )
                    })
            };
            let transfer = match cell(ck) {
                "compute" => false,
                "transfer" => true,
                k => {
                    return Err(err(
                        line,
                        format!("kind `{k}`: expected `compute` or `transfer`"),
                    ))
                }
            };
            let round = cell(cr).parse::<u64>().map_err(|_| {
                err(
                    line,
                    format!("round `{}`: expected a whole number", cell(cr)),
                )
            })?;
            let from = silo(cf, "from")?;
            let to = if transfer { silo(ct, "to")? } else { from };
            let (start_ms, end_ms) = (ms(cs, "start_ms")?, ms(ce, "end_ms")?);
            if end_ms < start_ms {
                return Err(err(
                    line,
                    format!("end_ms {end_ms} is before start_ms {start_ms}"),
                ));
            }
            let bits = match cb.map(cell).filter(|b| !b.is_empty()) {
                None => default_bits,
                Some(b) => b
                    .parse::<f64>()
                    .ok()
                    .filter(|x| x.is_finite() && *x > 0.0)
                    .ok_or_else(|| err(line, format!("bits `{b}`: expected a size > 0, bit")))?,
            };
            spans.push(Span {
                transfer,
                round,
                from,
                to,
                start_ms,
                end_ms,
                bits,
            });
        }
        Ok(RunLog {
            silos: labels.len(),
            spans,
        })
    }

    /// The log of a replay traced over all its rounds
    /// ([`crate::replay::ReplayOptions::trace`]): compute spans from each
    /// round's start, every delivered transfer, all of size `bits`.
    pub fn from_trace(trace: &RoundTrace, starts: &[Vec<Ms>], bits: Bits) -> RunLog {
        let mut spans = Vec::new();
        let silos = starts.first().map_or(0, Vec::len);
        for (r, ends) in trace.compute_end.iter().enumerate() {
            let k = trace.first + r as u64;
            for (i, &end) in ends.iter().enumerate() {
                let start = starts.get(k as usize).and_then(|s| s.get(i)).copied();
                if let (Some(start), true) = (start, end.is_finite()) {
                    spans.push(Span {
                        transfer: false,
                        round: k,
                        from: i,
                        to: i,
                        start_ms: start,
                        end_ms: end,
                        bits: 0.0,
                    });
                }
            }
        }
        for t in trace
            .transfers
            .iter()
            .filter(|t| t.delivered_ms.is_finite())
        {
            spans.push(Span {
                transfer: true,
                round: t.round,
                from: t.from,
                to: t.to,
                start_ms: t.sent_ms,
                end_ms: t.delivered_ms,
                bits,
            });
        }
        RunLog { silos, spans }
    }

    /// The log as CSV (module docs), silos by `labels`.
    pub fn to_csv(&self, labels: &[String]) -> String {
        let label = |i: usize| silo_label(labels, i);
        let mut out = String::from("kind,round,from,to,start_ms,end_ms,bits\n");
        for s in &self.spans {
            if s.transfer {
                out += &format!(
                    "transfer,{},{},{},{:.6},{:.6},{}\n",
                    s.round,
                    label(s.from),
                    label(s.to),
                    s.start_ms,
                    s.end_ms,
                    s.bits
                );
            } else {
                out += &format!(
                    "compute,{},{},,{:.6},{:.6},\n",
                    s.round,
                    label(s.from),
                    s.start_ms,
                    s.end_ms
                );
            }
        }
        out
    }
}

/// A fitted access link.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct FittedCapacity {
    /// Capacity, bit/s.
    pub bps: BitsPerSec,
    /// True when some transfer is explained by this link alone; false: a
    /// lower bound (it never limited the run).
    pub identified: bool,
}

/// A fitted silo.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FittedSilo {
    /// Local-step time `Tc(i)`, ms (None: never computed in the log).
    pub compute_ms: Option<Ms>,
    /// Uplink (None: sent nothing).
    pub up: Option<FittedCapacity>,
    /// Downlink (None: received nothing).
    pub down: Option<FittedCapacity>,
}

/// A fitted ordered pair of silos.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FittedPair {
    /// Sender.
    pub from: usize,
    /// Receiver.
    pub to: usize,
    /// Transfers measured.
    pub transfers: usize,
    /// One-way latency `l(i,j)`, ms.
    pub latency_ms: Ms,
    /// True when fitted from messages of several sizes; false: the
    /// underlay's (one size: not identifiable from the log).
    pub latency_fitted: bool,
    /// Core capacity `A(i,j)` when neither access link explains the pair's
    /// transfers, bit/s.
    pub core_bps: Option<BitsPerSec>,
    /// The fastest rate a transfer of the pair reached, bit/s: a lower
    /// bound on `A(i,j)` (eq. (3) never lets a transfer beat its core).
    pub max_rate_bps: BitsPerSec,
}

/// Relative errors of the fitted model against the log.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct FitError {
    /// Spans compared.
    pub count: usize,
    /// Mean relative error.
    pub mean: f64,
    /// Largest relative error.
    pub max: f64,
}

impl FitError {
    fn of(errors: &[f64]) -> FitError {
        FitError {
            count: errors.len(),
            mean: if errors.is_empty() {
                0.0
            } else {
                errors.iter().sum::<f64>() / errors.len() as f64
            },
            max: errors.iter().copied().fold(0.0, f64::max),
        }
    }
}

/// The fitted model and its errors (module docs).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Fit {
    /// Per silo.
    pub silos: Vec<FittedSilo>,
    /// Per measured pair, sorted.
    pub pairs: Vec<FittedPair>,
    /// Compute spans against `s * Tc(i)`.
    pub compute_error: FitError,
    /// Transfers against eq. (3) with the fitted terms.
    pub transfer_error: FitError,
    /// Round ends against the one-step prediction (of the round's length).
    pub round_error: FitError,
}

fn median(mut v: Vec<f64>) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let m = v.len() / 2;
    Some(if v.len() % 2 == 1 {
        v[m]
    } else {
        0.5 * (v[m - 1] + v[m])
    })
}

/// Relative error of `got` against `want` (absolute below 1e-9 ms).
fn rel(got: f64, want: f64) -> f64 {
    (got - want).abs() / want.abs().max(1e-9)
}

/// Fits `log` (module docs); `model` gives the local steps per round and
/// the latencies kept where the log cannot tell them.
///
/// # Errors
/// [`CalibrateError::Empty`] for a log with no span, or with silos other
/// than the model's.
pub fn fit(log: &RunLog, model: &DelayModel) -> Result<Fit, CalibrateError> {
    let n = model.silo_count();
    if log.silos != n {
        return Err(CalibrateError::Empty(format!(
            "the log is over {} silos, the network has {n}",
            log.silos
        )));
    }
    if log.spans.is_empty() {
        return Err(CalibrateError::Empty("the log has no span".into()));
    }
    let steps = f64::from(model.workload.local_steps.max(1));
    // Compute.
    let mut spans: Vec<Vec<f64>> = vec![Vec::new(); n];
    for s in log.spans.iter().filter(|s| !s.transfer) {
        spans[s.from].push(s.end_ms - s.start_ms);
    }
    let compute: Vec<Option<Ms>> = spans
        .iter()
        .map(|v| median(v.clone()).map(|m| m / steps))
        .collect();
    // Degrees of each round, from the log.
    let mut out_deg: BTreeMap<(u64, usize), f64> = BTreeMap::new();
    let mut in_deg: BTreeMap<(u64, usize), f64> = BTreeMap::new();
    let transfers: Vec<&Span> = log.spans.iter().filter(|s| s.transfer).collect();
    for t in &transfers {
        *out_deg.entry((t.round, t.from)).or_default() += 1.0;
        *in_deg.entry((t.round, t.to)).or_default() += 1.0;
    }
    // Latency per pair.
    let mut by_pair: BTreeMap<(usize, usize), Vec<&Span>> = BTreeMap::new();
    for t in &transfers {
        by_pair.entry((t.from, t.to)).or_default().push(t);
    }
    let mut latency: BTreeMap<(usize, usize), (Ms, bool)> = BTreeMap::new();
    for (&(i, j), ts) in &by_pair {
        let sizes = ts
            .iter()
            .map(|t| t.bits)
            .fold((f64::MAX, 0.0f64), |(a, b), x| (a.min(x), b.max(x)));
        let fitted = if sizes.1 > sizes.0 * (1.0 + 1e-9) {
            // Least squares T = l + bits * r.
            let m = ts.len() as f64;
            let (sx, sy) = ts.iter().fold((0.0, 0.0), |(a, b), t| {
                (a + t.bits, b + (t.end_ms - t.start_ms))
            });
            let (mx, my) = (sx / m, sy / m);
            let (sxy, sxx) = ts.iter().fold((0.0, 0.0), |(a, b), t| {
                let dx = t.bits - mx;
                (a + dx * (t.end_ms - t.start_ms - my), b + dx * dx)
            });
            let r = sxy / sxx;
            Some((my - r * mx).max(0.0))
        } else {
            None
        };
        latency.insert(
            (i, j),
            match fitted {
                Some(l) => (l, true),
                None => (model.connectivity.latency_ms(i, j), false),
            },
        );
    }
    // Per-bit times p and the access links' tightest capacities.
    let per_bit = |t: &Span| -> Ms {
        let l = latency.get(&(t.from, t.to)).map_or(0.0, |x| x.0);
        ((t.end_ms - t.start_ms - l) / t.bits).max(f64::MIN_POSITIVE)
    };
    let deg =
        |m: &BTreeMap<(u64, usize), f64>, k: u64, i: usize| m.get(&(k, i)).copied().unwrap_or(1.0);
    // bits per ms.
    let mut up = vec![0.0f64; n];
    let mut down = vec![0.0f64; n];
    for t in &transfers {
        let p = per_bit(t);
        up[t.from] = up[t.from].max(deg(&out_deg, t.round, t.from) / p);
        down[t.to] = down[t.to].max(deg(&in_deg, t.round, t.to) / p);
    }
    // Eq. (3)'s access terms of transfer `t`: `(outdeg/Cup, indeg/Cdn)`, ms per bit.
    let access = |t: &Span| -> (Ms, Ms) {
        (
            deg(&out_deg, t.round, t.from) / up[t.from],
            deg(&in_deg, t.round, t.to) / down[t.to],
        )
    };
    let predicted_per_bit = |t: &Span, core: Option<f64>| -> Ms {
        let (a, b) = access(t);
        a.max(b).max(core.map_or(0.0, |c| 1.0 / c))
    };
    let mut up_identified = vec![false; n];
    let mut down_identified = vec![false; n];
    let mut pairs = Vec::new();
    let mut core: BTreeMap<(usize, usize), f64> = BTreeMap::new();
    for (&(i, j), ts) in &by_pair {
        let mut unexplained = Vec::new();
        for t in ts {
            let p = per_bit(t);
            let (a, b) = access(t);
            let tight = |x: f64| x >= p * (1.0 - 1e-9);
            if tight(a) && !tight(b) {
                up_identified[i] = true;
            }
            if tight(b) && !tight(a) {
                down_identified[j] = true;
            }
            if a.max(b) < p * (1.0 - UNEXPLAINED) {
                unexplained.push(p);
            }
        }
        // A pair most of whose transfers neither access link explains
        // (within UNEXPLAINED) has its core as the bottleneck.
        let most = unexplained.len() * 2 > ts.len();
        let c = median(unexplained).filter(|_| most).map(|p| 1.0 / p);
        if let Some(c) = c {
            core.insert((i, j), c);
        }
        let (l, fitted) = latency[&(i, j)];
        let max_rate = ts.iter().map(|t| 1.0 / per_bit(t)).fold(0.0, f64::max);
        pairs.push(FittedPair {
            max_rate_bps: max_rate * 1e3,
            from: i,
            to: j,
            transfers: ts.len(),
            latency_ms: l,
            latency_fitted: fitted,
            core_bps: c.map(|c| c * 1e3),
        });
    }
    let silos: Vec<FittedSilo> = (0..n)
        .map(|i| FittedSilo {
            compute_ms: compute[i],
            up: (up[i] > 0.0).then(|| FittedCapacity {
                bps: up[i] * 1e3,
                identified: up_identified[i],
            }),
            down: (down[i] > 0.0).then(|| FittedCapacity {
                bps: down[i] * 1e3,
                identified: down_identified[i],
            }),
        })
        .collect();
    // Errors.
    let compute_errors: Vec<f64> = log
        .spans
        .iter()
        .filter(|s| !s.transfer)
        .filter_map(|s| compute[s.from].map(|c| rel(c * steps, s.end_ms - s.start_ms)))
        .collect();
    let fitted_time = |t: &Span| -> Ms {
        let l = latency.get(&(t.from, t.to)).map_or(0.0, |x| x.0);
        l + t.bits * predicted_per_bit(t, core.get(&(t.from, t.to)).copied())
    };
    let transfer_errors: Vec<f64> = transfers
        .iter()
        .map(|t| rel(fitted_time(t), t.end_ms - t.start_ms))
        .collect();
    // One-step round ends: silo i's round k starts with its compute span.
    let mut start: BTreeMap<(u64, usize), Ms> = BTreeMap::new();
    for s in log.spans.iter().filter(|s| !s.transfer) {
        start.insert((s.round, s.from), s.start_ms);
    }
    let mut predicted: BTreeMap<(u64, usize), Ms> = BTreeMap::new();
    for (&(k, i), &t0) in &start {
        if let Some(c) = compute[i] {
            predicted.insert((k, i), t0 + c * steps);
        }
    }
    for t in &transfers {
        let at = t.start_ms + fitted_time(t);
        let e = predicted.entry((t.round, t.to)).or_insert(at);
        *e = e.max(at);
    }
    let round_errors: Vec<f64> = predicted
        .iter()
        .filter_map(|(&(k, i), &p)| {
            let t0 = *start.get(&(k, i))?;
            let t1 = *start.get(&(k + 1, i))?;
            (t1 > t0).then(|| (p - t1).abs() / (t1 - t0))
        })
        .collect();
    Ok(Fit {
        silos,
        pairs,
        compute_error: FitError::of(&compute_errors),
        transfer_error: FitError::of(&transfer_errors),
        round_error: FitError::of(&round_errors),
    })
}

impl Fit {
    /// The fitted silos as a `--silos-csv` file (`silo,compute_ms,up,down`;
    /// empty cells where the log told nothing).
    pub fn silos_csv(&self, labels: &[String]) -> String {
        let mut out = String::from("silo,compute_ms,up,down\n");
        for (i, s) in self.silos.iter().enumerate() {
            let label = silo_label(labels, i);
            let cap =
                |c: Option<FittedCapacity>| c.map_or(String::new(), |c| format!("{:.6e}", c.bps));
            out += &format!(
                "{label},{},{},{}\n",
                s.compute_ms.map_or(String::new(), |c| format!("{c:.6}")),
                cap(s.up),
                cap(s.down)
            );
        }
        out
    }

    /// The fitted pairs as a one-way latency matrix and a bandwidth
    /// matrix (`fedtopo ... MATRIX.csv --matrix-values one-way
    /// --bandwidth-matrix FILE`): measured pairs only (others empty, for
    /// `--matrix-gaps`); a pair without a core bottleneck gets `inf`.
    pub fn matrices_csv(&self, labels: &[String]) -> (String, String) {
        let n = labels.len();
        let mut lat = vec![vec![String::new(); n]; n];
        let mut bw = vec![vec![String::new(); n]; n];
        for p in &self.pairs {
            if p.from < n && p.to < n {
                lat[p.from][p.to] = format!("{:.6}", p.latency_ms);
                bw[p.from][p.to] = p.core_bps.map_or("inf".into(), |c| format!("{c:.6e}"));
            }
        }
        let write = |m: &[Vec<String>]| {
            let mut s = String::from("Source");
            for l in labels {
                s += &format!(",{l}");
            }
            s.push('\n');
            for (i, row) in m.iter().enumerate() {
                s += &labels[i];
                for c in row {
                    s += &format!(",{c}");
                }
                s.push('\n');
            }
            s
        };
        (write(&lat), write(&bw))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::scenario::{load_underlay, NetworkSpec};
    use crate::net::underlay::LoadOptions;

    /// Messages of two sizes tell the latency from the bandwidth; one size
    /// keeps the underlay's latency and says so.
    #[test]
    fn two_sizes_identify_the_latency() {
        let u = load_underlay(Some("aws-north-america"), &LoadOptions::default()).unwrap();
        let m = NetworkSpec::default().delay_model(&u);
        let span = |round, from, to, bits: f64, t: f64| Span {
            transfer: true,
            round,
            from,
            to,
            start_ms: 100.0 * round as f64,
            end_ms: 100.0 * round as f64 + t,
            bits,
        };
        let mut spans = Vec::new();
        for k in 0..6 {
            let bits = if k % 2 == 0 { 1e6 } else { 3e6 };
            // 7 ms of latency, 1e-5 ms per bit (100 Mbit/s).
            spans.push(span(k, 0, 1, bits, 7.0 + bits * 1e-5));
            spans.push(span(k, 2, 3, 1e6, 20.0));
        }
        let log = RunLog { silos: 22, spans };
        let f = fit(&log, &m).unwrap();
        let p01 = f.pairs.iter().find(|p| (p.from, p.to) == (0, 1)).unwrap();
        assert!(p01.latency_fitted);
        assert!((p01.latency_ms - 7.0).abs() < 1e-9, "{p01:?}");
        let up0 = f.silos[0].up.unwrap();
        assert!((up0.bps - 1e8).abs() < 1e-3 * 1e8, "{up0:?}");
        let p23 = f.pairs.iter().find(|p| (p.from, p.to) == (2, 3)).unwrap();
        assert!(!p23.latency_fitted);
        assert_eq!(p23.latency_ms, m.connectivity.latency_ms(2, 3));
        assert!(f.transfer_error.max < 1e-9, "{:?}", f.transfer_error);
        assert!(matches!(
            fit(
                &RunLog {
                    silos: 3,
                    spans: Vec::new()
                },
                &m
            ),
            Err(CalibrateError::Empty(_))
        ));
    }
}
