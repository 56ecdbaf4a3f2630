//! What the design experiment's two programs share (`design-train`, which
//! trains, and `design-features`, which needs no libtorch): the
//! candidate kinds, the data settings, the command line, one cell's
//! design search and the rows they write.

use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use serde::Serialize;

use fedtopo::design::search::{
    design_search, Candidate, DesignOptions, DesignSearch, RoundsPredictor, DEFAULT_CANDIDATES,
};
use fedtopo::design::MAX_AUGMENT_SILOS;
use fedtopo::net::delay::DelayModel;
use fedtopo::net::scenario::NetworkSpec;
use fedtopo::net::underlay::{LoadOptions, Underlay};
use fedtopo::overlay::build::{parse_overlay_list, BuildOptions, OverlayKind};
use fedtopo::train::data::load::{load_dataset, with_data_labels};
use fedtopo::train::data::FederatedData;

/// `fedtopo design`'s default candidate kinds (one list, the library's).
pub const KINDS: &str = DEFAULT_CANDIDATES;

/// A data setting: dataset, partition, target test accuracy.
#[derive(Debug, Clone)]
pub struct DataSetting {
    /// Short name in the results (`fashion-mnist/iid`).
    pub name: String,
    pub dataset: String,
    pub partition: String,
    pub target: f64,
}

/// The data settings: Fashion-MNIST iid and 2-shard label skew, and
/// LEAF's Synthetic nearly iid (0, 0) and heterogeneous (1, 1). Targets:
/// what most candidates reach within the budget on Geant (pilot runs,
/// README).
pub fn data_setting(name: &str) -> Result<DataSetting> {
    let (dataset, partition, target) = match name {
        "fashion-mnist/iid" => ("fashion-mnist", "iid", 0.75),
        "fashion-mnist/shards" => ("fashion-mnist", "shards:2", 0.60),
        "synthetic/iid" => ("synthetic:0,0", "iid", 0.70),
        "synthetic/skew" => ("synthetic:1,1", "iid", 0.55),
        // Held out (not in the default list, not in the fit): kinds of
        // data the shipped predictor has not seen.
        "fashion-mnist/dirichlet" => ("fashion-mnist", "dirichlet:0.3", 0.65),
        "synthetic/mid" => ("synthetic:0.5,0.5", "iid", 0.60),
        o => bail!(
            "--data `{o}`: expected fashion-mnist/iid, fashion-mnist/shards, synthetic/iid, \
             synthetic/skew, or the held-out fashion-mnist/dirichlet, synthetic/mid"
        ),
    };
    Ok(DataSetting {
        name: name.into(),
        dataset: dataset.into(),
        partition: partition.into(),
        target,
    })
}

/// The command line both programs read (`--rounds` and `--eval-samples`
/// matter only to training; `--rounds` is also every row's round budget).
pub struct Args {
    pub out: PathBuf,
    pub underlays: Vec<String>,
    pub seeds: Vec<u64>,
    pub access: Vec<String>,
    pub data: Vec<DataSetting>,
    pub rounds: u64,
    pub eval_samples: usize,
}

fn list(v: &str) -> Vec<String> {
    v.split(',').map(|s| s.trim().to_string()).collect()
}

/// Parses the command line (`program` names the doc comment to read).
pub fn parse_args(program: &str) -> Result<Args> {
    let here = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut a = Args {
        out: here.join("experiments/design"),
        underlays: list("gaia,amazon_us,geantdistance,exodus,ebone"),
        seeds: vec![0, 1, 2],
        access: list("10G,100M"),
        data: Vec::new(),
        rounds: 300,
        eval_samples: 500,
    };
    let mut data = list("fashion-mnist/iid,fashion-mnist/shards,synthetic/iid,synthetic/skew");
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let v = it.next().with_context(|| format!("{flag} needs a value"))?;
        let whole = |v: &str| -> Result<u64> {
            v.parse()
                .with_context(|| format!("{flag} `{v}`: expected a whole number >= 0"))
        };
        match flag.as_str() {
            "--out" => a.out = PathBuf::from(v),
            "--underlays" => a.underlays = list(&v),
            "--seeds" => a.seeds = list(&v).iter().map(|s| whole(s)).collect::<Result<_>>()?,
            "--access" => a.access = list(&v),
            "--data" => data = list(&v),
            "--rounds" => a.rounds = whole(&v)?.clamp(1, 100_000),
            "--eval-samples" => a.eval_samples = whole(&v)?.clamp(10, 1_000_000) as usize,
            other => bail!("unknown argument `{other}` (see the doc comment of {program})"),
        }
    }
    a.data = data
        .iter()
        .map(|d| data_setting(d))
        .collect::<Result<_>>()?;
    Ok(a)
}

/// The paper underlays `names`, loaded from `underlays/paper/`.
pub fn load_underlays(names: &[String]) -> Result<Vec<(String, Underlay)>> {
    let here = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    names
        .iter()
        .map(|u| {
            let path = here.join("underlays/paper").join(format!("{u}.gml"));
            let underlay = Underlay::load(&path, &LoadOptions::default())
                .with_context(|| format!("loading {}", path.display()))?;
            Ok((u.clone(), underlay))
        })
        .collect()
}

/// One cell's network, data, build options and design search.
pub struct Cell {
    pub model: DelayModel,
    // The data and build options are read by design-train (training),
    // not by design-features.
    #[allow(dead_code)]
    pub data: FederatedData,
    /// The data's label heterogeneity.
    pub label_heterogeneity: f64,
    /// Share of the data's gradient heterogeneity its label counts explain.
    pub label_share: f64,
    #[allow(dead_code)]
    pub build: BuildOptions,
    pub search: DesignSearch,
}

/// Sets up the cell (`underlay` at `access`, `setting`, `seed`): the
/// network, the data split, the CLI's build options (centre `fastest`)
/// with this seed and D-Cliques on the data's labels, and `fedtopo
/// design`'s search with the candidates' figures on this data's labels.
pub fn setup_cell(
    underlay: &Underlay,
    access: &str,
    setting: &DataSetting,
    seed: u64,
) -> Result<Cell> {
    let kinds: Vec<OverlayKind> = parse_overlay_list(KINDS)?;
    let spec = NetworkSpec::from_knobs(|k| (k == "access").then_some(access))?;
    let model = spec.build(underlay)?;
    let n = model.silo_count();
    let data = load_dataset(&setting.dataset, &setting.partition, n, None, seed, None)?;
    let seed_text = seed.to_string();
    let mut build = BuildOptions::from_knobs(
        |k| (k == "seed").then_some(seed_text.as_str()),
        underlay,
        model.connectivity.placement(),
    )?;
    build.dcliques = with_data_labels(build.dcliques, &data);
    let options = DesignOptions {
        kinds,
        augmented: n <= MAX_AUGMENT_SILOS,
        skip_unbuildable: true,
        ..DesignOptions::default()
    };
    // The data's label share is computed once, by the predictor (the
    // row's `label_share` is the predictor's own input).
    let predictor = RoundsPredictor::fitted_for(&data);
    let search = design_search(underlay, &model, &build, &options, &predictor)?;
    Ok(Cell {
        model,
        label_heterogeneity: data.label_heterogeneity(),
        label_share: predictor.label_share,
        data,
        build,
        search,
    })
}

/// `underlay|access|data|seed`.
pub fn cell_key(u: &str, access: &str, data: &str, seed: u64) -> String {
    format!("{u}|{access}|{data}|{seed}")
}

/// One row of `runs.csv` (or `features.csv`): a candidate of a cell, its
/// figures and its measured outcome.
#[derive(Debug, Serialize)]
pub struct Row {
    pub underlay: String,
    pub silos: usize,
    pub access: String,
    pub data: String,
    pub dataset: String,
    pub partition: String,
    pub seed: u64,
    pub target: f64,
    pub candidate: String,
    pub same_as: String,
    pub weights: String,
    pub arcs: usize,
    pub cycle_time_ms: f64,
    pub spectral_gap: f64,
    pub mixing_time: f64,
    pub exact_rounds: Option<usize>,
    pub effective_neighbours: f64,
    pub time_varying: bool,
    pub label_heterogeneity: f64,
    pub mixed_heterogeneity: f64,
    pub stationary_imbalance: f64,
    pub label_share: f64,
    /// Whether a round's consensus matrix is not symmetric (since stop 45).
    pub asymmetric: bool,
    pub eval_every: u64,
    pub rounds_budget: u64,
    pub reached: bool,
    pub rounds_to_target: Option<u64>,
    pub time_to_target_ms: Option<f64>,
    pub final_test_acc: f64,
    /// The run whose rounds this row reuses (same consensus matrices under
    /// another access capacity), empty when trained here.
    pub trained_as: String,
}

/// The row of candidate `c` of the cell before any measurement.
pub fn row(
    u: &str,
    access: &str,
    setting: &DataSetting,
    seed: u64,
    cell: &Cell,
    c: &Candidate,
    rounds: u64,
) -> Row {
    Row {
        underlay: u.to_string(),
        silos: cell.model.silo_count(),
        access: access.to_string(),
        data: setting.name.clone(),
        dataset: setting.dataset.clone(),
        partition: setting.partition.clone(),
        seed,
        target: setting.target,
        candidate: c.name.clone(),
        same_as: c.same_as.join("; "),
        weights: c.weights.clone(),
        arcs: c.arcs,
        cycle_time_ms: c.cycle_time_ms,
        spectral_gap: c.spectral_gap,
        mixing_time: c.mixing_time,
        exact_rounds: c.exact_rounds,
        effective_neighbours: c.effective_neighbours,
        time_varying: c.time_varying,
        label_heterogeneity: cell.label_heterogeneity,
        mixed_heterogeneity: c.mixed_heterogeneity,
        stationary_imbalance: c.stationary_imbalance,
        label_share: cell.label_share,
        asymmetric: c.asymmetric,
        eval_every: 1,
        rounds_budget: rounds,
        reached: false,
        rounds_to_target: None,
        time_to_target_ms: None,
        final_test_acc: f64::NAN,
        trained_as: String::new(),
    }
}
