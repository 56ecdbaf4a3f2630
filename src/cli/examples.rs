//! The "Examples:" section at the end of every `--help` page, one constant
//! per command. Each example runs from the repository root as written
//! (built-in underlays; `run`, `merge` and `reproduce matcha-tables` read
//! the paper's underlays shipped in `underlays/paper/`; `train` needs the
//! `train` feature); files go under `/tmp`.
//! `tests/cli_friction.rs` runs the cheap ones, so they cannot rot.

/// `fedtopo` (top level).
pub const FEDTOPO: &str = "\
Examples:
  fedtopo compare aws-gaia --overlays all
  fedtopo simulate --overlays ring,star --rounds 50
  fedtopo underlay list";

/// `fedtopo compare`.
pub const COMPARE: &str = "\
Examples:
  fedtopo compare                                   # aws-north-america, five overlays
  fedtopo compare aws-gaia --overlays all --access 1G --format csv --report /tmp/fedtopo-report   # + report.html
  fedtopo compare aws-gaia --overlays ring,matcha --center fastest --export-dir /tmp/fedtopo-overlays";

/// `fedtopo draw`.
pub const DRAW: &str = "\
Examples:
  fedtopo draw -o /tmp/fedtopo-underlay.svg         # aws-north-america: links, routers, silos
  fedtopo draw --overlay ring-opt -o /tmp/fedtopo-ring-opt.svg
  fedtopo draw aws-gaia --overlay matcha --matcha-rounds 200 -o /tmp/fedtopo-matcha.svg";

/// `fedtopo mixing`.
pub const MIXING: &str = "\
Examples:
  fedtopo mixing                                    # aws-north-america, six overlays
  fedtopo mixing aws-gaia --overlays mst,ring-opt,exp --gamma 0.9
  fedtopo mixing --overlays delta-mbst --format json";

/// `fedtopo augment`.
pub const AUGMENT: &str = "\
Examples:
  fedtopo augment                                   # ring-opt on aws-north-america
  fedtopo augment aws-gaia --from delta-mbst --tolerance 0.05 --out /tmp/fedtopo-augment
  fedtopo augment --from ring-opt --front-steps 10 --format csv";

/// `fedtopo design`.
pub const DESIGN: &str = "\
Examples:
  fedtopo design                                    # every family on aws-north-america
  fedtopo design aws-gaia --base-rounds 40 --out /tmp/fedtopo-design
  fedtopo design --overlays ring-opt,mst,base:k=1 --format csv";

/// `fedtopo overlay`.
pub const OVERLAY: &str = "\
Examples:
  fedtopo overlay ring aws-gaia                     # GML on stdout
  fedtopo overlay delta-mbst --format json -o /tmp/fedtopo-mbst.json
  fedtopo overlay dcliques-ring --nodes 100 --format dot";

/// `fedtopo underlay`.
pub const UNDERLAY: &str = "\
Examples:
  fedtopo underlay list
  fedtopo underlay info aws-gaia
  fedtopo underlay info aws-north-america --format json";

/// `fedtopo underlay list`.
pub const UNDERLAY_LIST: &str = "\
Examples:
  fedtopo underlay list
  fedtopo underlay info aws-gaia                    # then look at one";

/// `fedtopo underlay info`.
pub const UNDERLAY_INFO: &str = "\
Examples:
  fedtopo underlay info                             # the default, aws-north-america
  fedtopo underlay info aws-gaia --format csv";

/// `fedtopo run`.
pub const RUN: &str = "\
Examples:
  fedtopo run experiments/fig3-access-sweep/experiment.toml --out /tmp/fedtopo-fig3
  fedtopo run experiments/fig3-access-sweep/experiment.toml --shard 0/2 --out /tmp/fedtopo-shard0
  fedtopo run experiments/fig3-access-sweep/experiment.toml --out /tmp/fedtopo-fig3 --force --threads 2";

/// `fedtopo merge`.
pub const MERGE: &str = "\
Examples:
  fedtopo run experiments/fig3-access-sweep/experiment.toml --shard 0/2 --out /tmp/fedtopo-s0
  fedtopo run experiments/fig3-access-sweep/experiment.toml --shard 1/2 --out /tmp/fedtopo-s1
  fedtopo merge experiments/fig3-access-sweep/experiment.toml --from /tmp/fedtopo-s0 --from /tmp/fedtopo-s1 --out /tmp/fedtopo-merged";

/// `fedtopo train`.
#[cfg(feature = "train")]
pub const TRAIN: &str = "\
Examples:
  fedtopo train --overlays star,ring --rounds 50 --out /tmp/fedtopo-train
  fedtopo train aws-gaia --overlays ring,matcha --partition one-class --target-acc 0.8 --out /tmp/fedtopo-train2";

/// `fedtopo reproduce`.
pub const REPRODUCE: &str = "\
Examples:
  fedtopo reproduce dcliques-table --experiments 10 --out /tmp/fedtopo-dcliques
  fedtopo reproduce init-gain-exponents --sizes 128,256 --seeds 2 --out /tmp/fedtopo-init-gain
  fedtopo reproduce matcha-tables --seeds 2 --matcha-rounds 200 --out /tmp/fedtopo-matcha";

/// `fedtopo reproduce matcha-tables`.
pub const MATCHA_TABLES: &str = "\
Examples:
  fedtopo reproduce matcha-tables --seeds 2 --matcha-rounds 200 --out /tmp/fedtopo-matcha
  fedtopo reproduce matcha-tables                   # rewrites experiments/matcha (minutes)";

/// `fedtopo reproduce init-gain-exponents`.
pub const INIT_GAIN_EXPONENTS: &str = "\
Examples:
  fedtopo reproduce init-gain-exponents --sizes 128,256,512 --seeds 3 --out /tmp/fedtopo-init-gain
  fedtopo reproduce init-gain-exponents             # rewrites experiments/init-gain (~40 s)";

/// `fedtopo reproduce dcliques-table`.
pub const DCLIQUES_TABLE: &str = "\
Examples:
  fedtopo reproduce dcliques-table --experiments 10 --out /tmp/fedtopo-dcliques
  fedtopo reproduce dcliques-table                  # rewrites experiments/dcliques";

/// `fedtopo reproduce dcliques-convergence`.
#[cfg(feature = "train")]
pub const DCLIQUES_CONVERGENCE: &str = "\
Examples:
  fedtopo reproduce dcliques-convergence --rounds 50 --out /tmp/fedtopo-dcliques
  fedtopo reproduce dcliques-convergence --topologies dcliques-full+ca,fully-connected --partition one-class --out /tmp/fedtopo-dc";

/// `fedtopo simulate`.
pub const SIMULATE: &str = "\
Examples:
  fedtopo simulate --overlays ring,star --rounds 50
  fedtopo simulate aws-gaia --overlays ring,matcha --network flow --rounds 20 --format csv
  fedtopo simulate --overlays star,ring-opt --rounds 20 --report /tmp/fedtopo-sim-report   # timelines, maps";

/// `fedtopo trace`.
pub const TRACE: &str = "\
Examples:
  fedtopo trace churn aws-gaia --mean-up-s 600 --mean-down-s 60 --duration-s 3600 --seed 1 -o /tmp/churn.csv
  fedtopo simulate aws-gaia --overlays ring,star --rounds 20 --trace /tmp/churn.csv
  fedtopo trace diurnal aws-gaia --base 1G --depth 0.6 --period-s 10 --step-s 0.5 --duration-s 60 --seed 2 -o /tmp/diurnal.csv";

/// `fedtopo trace churn`.
pub const TRACE_CHURN: &str = "\
Examples:
  fedtopo trace churn aws-gaia --mean-up-s 600 --mean-down-s 60 --duration-s 3600 --seed 1 -o /tmp/churn.csv
  fedtopo trace churn --silos 40 --mean-up-s 5 --mean-down-s 1 --duration-s 120 -o /tmp/churn40.csv";

/// `fedtopo trace diurnal`.
pub const TRACE_DIURNAL: &str = "\
Examples:
  fedtopo trace diurnal aws-gaia --base 1G --depth 0.6 --period-s 10 --step-s 0.5 --duration-s 60 --seed 2 -o /tmp/diurnal.csv
  fedtopo simulate aws-gaia --overlays ring --rounds 50 --access 1G --network flow --trace /tmp/diurnal.csv";

/// `fedtopo calibrate`.
pub const CALIBRATE: &str = "\
Examples:
  fedtopo simulate --overlays mst --rounds 30 --access 100M --network flow --log /tmp/run.csv
  fedtopo calibrate --log /tmp/run.csv --access 100M --out /tmp/fitted   # silos.csv, latency.csv, bandwidth.csv";

/// `fedtopo tornado`.
pub const TORNADO: &str = "\
Examples:
  fedtopo tornado time aws-gaia
  fedtopo tornado clustering --seeds 5
  fedtopo tornado learn aws-gaia --methods fedavg,tornado";

/// `fedtopo tornado time`.
pub const TORNADO_TIME: &str = "\
Examples:
  fedtopo tornado time                              # every [Lee21] program on aws-north-america
  fedtopo tornado time aws-gaia --methods fedavg,tornado --format csv --out /tmp/fedtopo-tornado";

/// `fedtopo tornado clustering`.
pub const TORNADO_CLUSTERING: &str = "\
Examples:
  fedtopo tornado clustering --seeds 5
  fedtopo tornado clustering --nodes 50 --groups 5 --format csv";

/// `fedtopo tornado learn`.
pub const TORNADO_LEARN: &str = "\
Examples:
  fedtopo tornado learn --methods fedavg,tornado
  fedtopo tornado learn aws-gaia --methods fedavg,hierfavg --target 0.7 --out /tmp/fedtopo-learn";
