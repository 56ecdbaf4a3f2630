//! `fedtopo tornado learn`: training outcomes of every program, one seed
//! (a row per method) or several (mean ± std per method and the orderings
//! per seed), and the `curves.csv` / `summary.csv` files.

use crate::net::delay::DelayModel;
use crate::net::underlay::Underlay;
use crate::network::NetworkKind;
use crate::program::outcome::{ordering, RunSummary, SeedStats, Spread};
use crate::program::Method;
use crate::report::table::Table;
use crate::reproduce::tornado::learn::LearnRun;
use crate::units::{gigabytes, Bits, BITS_PER_GB};

/// The network a run was timed on, for [`heading`].
#[derive(Clone, Copy)]
pub struct TimedOn<'a> {
    /// Underlay.
    pub underlay: &'a Underlay,
    /// Its delay model.
    pub delay: &'a DelayModel,
    /// Global aggregator.
    pub server: usize,
    /// Network model.
    pub network: NetworkKind,
}

/// The line above the table. `timed`: the network, if timed; otherwise
/// `real_model_bits` is the trained model's size when it sets `M` (else the
/// 7850 x 32 bit default is named).
pub fn heading(
    timed: Option<TimedOn<'_>>,
    nodes: usize,
    steps: u64,
    partition: &str,
    seeds: &[u64],
    real_model_bits: Option<Bits>,
) -> String {
    let seed_text = if seeds.len() == 1 {
        format!("seed {}", seeds[0])
    } else {
        format!(
            "seeds {}",
            seeds
                .iter()
                .map(u64::to_string)
                .collect::<Vec<_>>()
                .join(",")
        )
    };
    match (timed, real_model_bits) {
        (Some(t), _) => format!(
            "{}: {nodes} silos, server {} ({}), {} network, {steps} steps, M = {} bit, Tc = {} ms, partition {partition}, {seed_text}",
            t.underlay.name,
            t.server,
            t.underlay.routers[t.server].label,
            t.network,
            t.delay.workload.model_bits,
            t.delay.workload.compute_ms
        ),
        (None, Some(bits)) => format!(
            "{nodes} nodes (no timing; GB at M = {bits} bit), {steps} steps, partition {partition}, {seed_text}"
        ),
        (None, None) => format!(
            "{nodes} nodes (no timing; GB at M = 7850 x 32 bit), {steps} steps, partition {partition}, {seed_text}"
        ),
    }
}

fn secs(ms: Option<f64>, digits: usize) -> String {
    ms.map_or("-".into(), |w| format!("{:.d$}", w / 1e3, d = digits))
}

/// The header of a learn table: `lead` columns, then the bytes and
/// wall-clock to target and in total, and the final train loss `with_loss`.
fn learn_header(lead: impl IntoIterator<Item = String>, with_loss: bool) -> Vec<String> {
    let mut h: Vec<String> = lead.into_iter().collect();
    h.extend(
        [
            "GB to target",
            "wall-clock to target (s)",
            "GB total",
            "wall-clock total (s)",
        ]
        .map(String::from),
    );
    if with_loss {
        h.push("final train loss".into());
    }
    h
}

/// One seed: a row per run (final and best accuracy, steps / GB /
/// wall-clock to `target`, totals; the final train loss `with_loss`).
pub fn single_seed_table(runs: &[LearnRun], target: f64, with_loss: bool) -> Table {
    let mut table = Table::new(learn_header(
        [
            "method".to_string(),
            "final acc".into(),
            "best acc".into(),
            format!("steps to {:.0}%", 100.0 * target),
        ],
        with_loss,
    ));
    for r in runs {
        let s = &r.summary;
        let mut row = vec![
            r.method.name().to_string(),
            format!("{:.3}", s.final_accuracy),
            format!("{:.3}", s.best_accuracy),
            s.hit.map_or("not reached".into(), |h| h.step.to_string()),
            s.hit
                .map_or("-".into(), |h| format!("{:.2}", gigabytes(h.bits))),
            s.hit.map_or("-".into(), |h| secs(h.wall_clock_ms, 1)),
            format!("{:.2}", gigabytes(s.total_bits)),
            secs(s.total_ms, 1),
        ];
        if with_loss {
            row.push(s.final_train_loss.map_or("-".into(), |l| format!("{l:.3}")));
        }
        table.row(row);
    }
    table
}

/// Several seeds: a table with a row per method (mean ± sample std, range,
/// seeds that reached `target`, to-target statistics over those) and the
/// footer lines (what the statistics are, the ordering by mean final
/// accuracy and the ordering under every seed).
pub fn multi_seed_rows(
    runs: &[LearnRun],
    methods: &[Method],
    seeds: &[u64],
    target: f64,
    with_loss: bool,
) -> (Table, String) {
    let mut table = Table::new(learn_header(
        [
            "method".to_string(),
            "final acc (mean ± std)".into(),
            "final acc min..max".into(),
            format!("reached {:.0}%", 100.0 * target),
            "steps to target".into(),
        ],
        with_loss,
    ));
    let mut means = Vec::new();
    for &m in methods {
        let summaries: Vec<RunSummary> = runs
            .iter()
            .filter(|r| r.method == m)
            .map(|r| r.summary)
            .collect();
        let Some(st) = SeedStats::of(&summaries) else {
            continue;
        };
        means.push((m.name().to_string(), st.final_accuracy.mean));
        let opt = |s: Option<Spread>, digits: usize, scale: f64| {
            s.map_or("-".to_string(), |s| s.mean_std(digits, scale))
        };
        let total = |f: &dyn Fn(&RunSummary) -> Option<f64>, digits: usize, scale: f64| {
            let v: Vec<f64> = summaries.iter().filter_map(f).collect();
            opt(Spread::of(&v), digits, scale)
        };
        let mut row = vec![
            m.name().to_string(),
            st.final_accuracy.mean_std(3, 1.0),
            st.final_accuracy.range(3, 1.0),
            format!("{}/{}", st.reached, st.runs),
            opt(st.steps, 0, 1.0),
            opt(st.bits, 2, BITS_PER_GB),
            opt(st.ms, 1, 1e3),
            total(&|s| Some(s.total_bits), 2, BITS_PER_GB),
            total(&|s| s.total_ms, 1, 1e3),
        ];
        if with_loss {
            row.push(total(&|s| s.final_train_loss, 3, 1.0));
        }
        table.row(row);
    }
    let mut out = format!(
        "mean ± sample std over seeds; steps / GB / wall-clock to target over the seeds that reached it\nordering by mean final accuracy: {}",
        ordering(&means)
    );
    for &s in seeds {
        let items: Vec<(String, f64)> = runs
            .iter()
            .filter(|r| r.seed == s)
            .map(|r| (r.method.name().to_string(), r.summary.final_accuracy))
            .collect();
        out.push_str(&format!("\nseed {s}: {}", ordering(&items)));
    }
    (table, out)
}

/// `curves.csv`: `method,seed,step,accuracy,train_loss,gb_sent,wall_clock_s`
/// (empty train loss / wall-clock when not measured).
pub fn curves_csv(runs: &[LearnRun]) -> String {
    let mut t = Table::new([
        "method",
        "seed",
        "step",
        "accuracy",
        "train_loss",
        "gb_sent",
        "wall_clock_s",
    ]);
    for r in runs {
        for e in &r.records {
            t.row([
                r.method.to_string(),
                r.seed.to_string(),
                e.step.to_string(),
                format!("{:.4}", e.accuracy),
                e.train_loss.map_or(String::new(), |l| format!("{l:.4}")),
                format!("{:.4}", gigabytes(e.bits)),
                e.wall_clock_ms
                    .map_or(String::new(), |w| format!("{:.3}", w / 1e3)),
            ]);
        }
    }
    t.to_csv()
}

/// `summary.csv`: one row per method and seed.
pub fn summary_csv(runs: &[LearnRun]) -> String {
    let mut t = Table::new([
        "method",
        "seed",
        "final_acc",
        "best_acc",
        "final_train_loss",
        "steps_to_target",
        "gb_to_target",
        "s_to_target",
        "gb_total",
        "s_total",
    ]);
    let opt = |x: Option<String>| x.unwrap_or_default();
    for r in runs {
        let s = &r.summary;
        t.row([
            r.method.to_string(),
            r.seed.to_string(),
            format!("{:.4}", s.final_accuracy),
            format!("{:.4}", s.best_accuracy),
            opt(s.final_train_loss.map(|l| format!("{l:.4}"))),
            opt(s.hit.map(|h| h.step.to_string())),
            opt(s.hit.map(|h| format!("{:.4}", gigabytes(h.bits)))),
            opt(s
                .hit
                .and_then(|h| h.wall_clock_ms)
                .map(|w| format!("{:.3}", w / 1e3))),
            format!("{:.4}", gigabytes(s.total_bits)),
            opt(s.total_ms.map(|w| format!("{:.3}", w / 1e3))),
        ]);
    }
    t.to_csv()
}

/// The learner line of a torch run (feature `train`).
#[cfg(feature = "train")]
pub fn torch_description(
    s: &crate::reproduce::tornado::torch::TorchLearner,
    lr: f64,
    batch: usize,
    eval_every: u64,
) -> String {
    use crate::train::optim::OptimizerKind;
    let optimizer = match s.config.optimizer {
        OptimizerKind::Sgd { momentum: 0.0 } => "sgd".to_string(),
        OptimizerKind::Sgd { momentum } => format!("sgd, momentum {momentum}"),
        OptimizerKind::Adam { .. } => "adam".to_string(),
    };
    format!(
        "learner: torch {} ({optimizer}) on {}, lr {lr}, batch {batch}, eval every {eval_every} steps",
        s.config.model.name(),
        if s.mnist.is_some() {
            "MNIST split by the label counts"
        } else {
            "the label-skewed Gaussian data of the reference learner"
        }
    )
}
