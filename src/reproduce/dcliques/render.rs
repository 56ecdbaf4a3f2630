//! Reports of the D-Cliques reproduction ([`crate::reproduce::dcliques`]):
//! `experiments/dcliques/{results.md, edges.csv, skew.csv}` and, with the
//! `train` feature, the convergence files.

use crate::report::table::Table;
use crate::reproduce::dcliques::{SkewStats, TableRow};

/// Markdown table of [`crate::reproduce::dcliques::edge_table`] rows.
pub fn render_edge_table(rows: &[TableRow]) -> String {
    let f = |v: Option<f64>| v.map_or("-".to_string(), |x| format!("{x}"));
    let mut t = Table::new([
        "n",
        "topology",
        "edges",
        "edges/node (ours)",
        "edges/node (paper)",
        "msgs/node, paper's count (ours)",
        "msgs/node (paper)",
        "msgs/node, real flow (ours)",
    ]);
    for r in rows {
        let c = &r.counts;
        t.row([
            c.nodes.to_string(),
            c.topology.clone(),
            c.edges.to_string(),
            format!("{:.2}", c.edges_per_node),
            f(r.published_edges_per_node),
            format!("{:.2}", c.paper_messages_per_node),
            f(r.published_messages_per_node),
            format!("{:.2}", c.real_messages_per_node),
        ]);
    }
    t.to_markdown()
}

/// CSV of [`crate::reproduce::dcliques::edge_table`] rows (empty published
/// cells when not given).
pub fn edge_table_csv(rows: &[TableRow]) -> String {
    let f = |v: Option<f64>| v.map_or(String::new(), |x| format!("{x}"));
    let mut t = Table::new([
        "nodes",
        "topology",
        "edges",
        "intra_edges",
        "edges_per_node",
        "max_degree",
        "paper_messages_per_node",
        "real_messages_per_node",
        "published_edges_per_node",
        "published_messages_per_node",
    ]);
    for r in rows {
        let c = &r.counts;
        t.row([
            c.nodes.to_string(),
            c.topology.clone(),
            c.edges.to_string(),
            c.intra_edges.to_string(),
            c.edges_per_node.to_string(),
            c.max_degree.to_string(),
            c.paper_messages_per_node.to_string(),
            c.real_messages_per_node.to_string(),
            f(r.published_edges_per_node),
            f(r.published_messages_per_node),
        ]);
    }
    t.to_csv()
}

/// CSV of [`crate::reproduce::dcliques::skew_stats`].
pub fn skew_stats_csv(stats: &[SkewStats]) -> String {
    let mut t = Table::new(["steps", "mean", "min", "max", "below_0_1"]);
    for st in stats {
        t.row([
            st.steps.to_string(),
            st.mean.to_string(),
            st.min.to_string(),
            st.max.to_string(),
            st.below_0_1.to_string(),
        ]);
    }
    t.to_csv()
}

/// Markdown table of [`crate::reproduce::dcliques::skew_stats`].
pub fn render_skew_table(stats: &[SkewStats]) -> String {
    let mut t = Table::new([
        "Greedy Swap steps K",
        "mean avg skew",
        "min",
        "max",
        "share < 0.1",
    ]);
    for st in stats {
        t.row([
            st.steps.to_string(),
            format!("{:.3}", st.mean),
            format!("{:.3}", st.min),
            format!("{:.3}", st.max),
            format!("{:.2}", st.below_0_1),
        ]);
    }
    t.to_markdown()
}

/// `results.md` of `fedtopo reproduce dcliques-table`: the edge/message
/// table (partition and topology seed `seed`) and the skew table
/// (`experiments` seeds from `seed`).
pub fn results_markdown(
    rows: &[TableRow],
    skew: &[SkewStats],
    seed: u64,
    experiments: u64,
) -> String {
    format!(
        "## Edges and messages per node (M = 10, Greedy Swap K = 1000, MNIST shards, seed {})\n\n{}\n\
         ## Average clique skew, n = 100, M = 10, {} experiments (seeds {}..)\n\n{}",
        seed,
        render_edge_table(rows),
        experiments,
        seed,
        render_skew_table(skew)
    )
}

/// The files of `fedtopo reproduce dcliques-convergence` (feature `train`).
#[cfg(feature = "train")]
pub mod convergence {
    use super::Table;
    use crate::report::plot::{line_plot, Axes, Series};
    use crate::reproduce::dcliques::convergence::{Run, Setup};

    /// `convergence.csv`: one row per run and evaluation (`round` is the
    /// round number).
    pub fn csv(runs: &[Run]) -> String {
        let mut t = Table::new([
            "topology",
            "edges",
            "mean_clique_skew",
            "round",
            "test_acc_mean",
            "test_acc_min",
            "test_acc_max",
            "train_loss_mean",
            "consensus_distance",
        ]);
        for r in runs {
            for rec in &r.records {
                t.row([
                    r.name.clone(),
                    r.edges.to_string(),
                    format!("{:.6}", r.mean_clique_skew),
                    (rec.wall_clock_ms as u64).to_string(),
                    format!("{:.6}", rec.test_acc.mean),
                    format!("{:.6}", rec.test_acc.min),
                    format!("{:.6}", rec.test_acc.max),
                    format!("{:.6}", rec.train_loss.mean),
                    format!("{:.6e}", rec.consensus_distance),
                ]);
            }
        }
        t.to_csv()
    }

    /// `convergence.md`: the set-up, then one row per run (accuracy at
    /// rounds 5, 10, 20, final, first round within 95 % of the best final
    /// mean).
    pub fn markdown(setup: &Setup, runs: &[Run]) -> String {
        let head = format!(
            "Setup: {} nodes, Gaussian mixture ({} classes, dim {}, spread {}), partition {}, \
             logistic regression, lr {}, batch {}, momentum {}, {} rounds, seed {}, Metropolis-Hastings weights.\n\n",
            setup.nodes, setup.classes, setup.dim, setup.spread, setup.partition, setup.lr,
            setup.batch_size, setup.momentum, setup.rounds, setup.seed
        );
        let best = runs
            .iter()
            .filter_map(|r| r.records.last())
            .map(|l| l.test_acc.mean)
            .fold(0.0, f64::max);
        let mut t = Table::new([
            "topology",
            "edges",
            "mean clique skew",
            "test acc mean (min) @5",
            "@10",
            "@20",
            "final mean",
            "final min",
            "final max",
            "first round with mean >= 0.95 x best final mean",
        ]);
        for r in runs {
            let Some(last) = r.records.last() else {
                continue;
            };
            let reach = r
                .records
                .iter()
                .find(|x| x.test_acc.mean >= 0.95 * best)
                .map_or("-".to_string(), |x| format!("{}", x.wall_clock_ms as u64));
            let at = |round: u64| {
                r.records
                    .iter()
                    .find(|x| x.wall_clock_ms as u64 == round)
                    .map_or("-".to_string(), |x| {
                        format!("{:.4} ({:.4})", x.test_acc.mean, x.test_acc.min)
                    })
            };
            t.row([
                r.name.clone(),
                r.edges.to_string(),
                format!("{:.3}", r.mean_clique_skew),
                at(5),
                at(10),
                at(20),
                format!("{:.4}", last.test_acc.mean),
                format!("{:.4}", last.test_acc.min),
                format!("{:.4}", last.test_acc.max),
                reach,
            ]);
        }
        head + &t.to_markdown()
    }

    /// `convergence.svg`: mean test accuracy over nodes against rounds.
    pub fn svg(runs: &[Run]) -> Result<String, String> {
        let series: Vec<Series> = runs
            .iter()
            .map(|r| Series {
                name: r.name.clone(),
                points: r
                    .records
                    .iter()
                    .map(|x| (x.wall_clock_ms, x.test_acc.mean))
                    .collect(),
            })
            .collect();
        line_plot(
            "D-Cliques convergence (mean test accuracy over nodes)",
            &Axes {
                x_label: "round".into(),
                y_label: "test accuracy".into(),
                ..Axes::default()
            },
            &series,
        )
    }
}
