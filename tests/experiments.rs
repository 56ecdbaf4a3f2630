//! Experiment files: thread-count independence, sharding + merge, resume,
//! and clear errors.

mod common;

use common::fedtopo;
use std::path::{Path, PathBuf};
use std::process::Output;

const SPEC: &str = r#"
name = "test-sweep"
kind = "compare"
[grid]
underlay = ["aws-gaia", "aws-north-america"]
overlay = ["star", "mst", "delta-mbst", "ring", "ring-opt"]
access = ["100M", "1G", "10G"]
center_access = ["same", "10G"]
local_steps = [1, 5]
[[plot]]
file = "sweep.svg"
x = "access"
y = "cycle_time_ms"
series = "overlay"
log_x = true
filter = { underlay = "aws-gaia", center_access = "same", local_steps = "1" }
"#;

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("fedtopo-exp-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn read(dir: &Path, f: &str) -> Vec<u8> {
    std::fs::read(dir.join(f)).unwrap_or_else(|e| panic!("{}: {e}", dir.join(f).display()))
}

/// `fedtopo run SPEC --out OUT --threads N`, which must succeed.
fn run_with_threads(spec: &str, out: &Path, threads: usize) {
    ok(&fedtopo(&[
        "run",
        spec,
        "--out",
        out.to_str().unwrap(),
        "--threads",
        &threads.to_string(),
    ]));
}

/// `DIR/results.csv`: its header and rows.
fn results(dir: &Path) -> (csv::StringRecord, Vec<csv::StringRecord>) {
    let mut rdr = csv::Reader::from_path(dir.join("results.csv")).unwrap();
    let header = rdr.headers().unwrap().clone();
    (header, rdr.records().map(Result::unwrap).collect())
}

/// Writes `text` as `NAME.toml` in a fresh directory and runs it into a
/// fresh output directory with `threads` workers; returns the spec's path,
/// the output directory and its `results.csv` (header, rows).
fn run_spec(
    name: &str,
    text: &str,
    threads: usize,
) -> (PathBuf, PathBuf, csv::StringRecord, Vec<csv::StringRecord>) {
    let spec = tmp(name).join(format!("{name}.toml"));
    std::fs::write(&spec, text).unwrap();
    let out = tmp(&format!("{name}-out"));
    run_with_threads(spec.to_str().unwrap(), &out, threads);
    let (header, rows) = results(&out);
    (spec, out, header, rows)
}

/// Position of column `name` in `header`.
fn column(header: &csv::StringRecord, name: &str) -> usize {
    header
        .iter()
        .position(|h| h == name)
        .unwrap_or_else(|| panic!("no column `{name}` in {header:?}"))
}

fn ok(o: &Output) {
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

#[test]
fn threads_shards_and_merge_give_identical_bytes() {
    let base = tmp("base");
    let spec = base.join("sweep.toml");
    std::fs::write(&spec, SPEC).unwrap();
    let s = spec.to_str().unwrap();
    let one = tmp("one");
    let two = tmp("two");
    run_with_threads(s, &one, 1);
    run_with_threads(s, &two, 2);
    for f in ["results.csv", "results.md", "sweep.svg"] {
        assert_eq!(
            read(&one, f),
            read(&two, f),
            "{f} differs with thread count"
        );
    }
    // 120 jobs: 2 underlays x 3 access x 2 centre access x 2 steps x 5 overlays.
    let csv = String::from_utf8(read(&one, "results.csv")).unwrap();
    assert_eq!(csv.lines().count(), 121);

    let (a, b, c) = (tmp("shard0"), tmp("shard1"), tmp("shard2"));
    for (i, d) in [&a, &b, &c].iter().enumerate() {
        let shard = format!("{i}/3");
        ok(&fedtopo(&[
            "run",
            s,
            "--out",
            d.to_str().unwrap(),
            "--shard",
            &shard,
        ]));
        assert!(!d.join("results.csv").exists(), "a shard does not assemble");
    }
    // Merging only two shards reports what is missing.
    let partial = tmp("partial");
    let o = fedtopo(&[
        "merge",
        s,
        "--from",
        a.to_str().unwrap(),
        "--from",
        b.to_str().unwrap(),
        "--out",
        partial.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("40 of 120 jobs have no result"));
    let merged = tmp("merged");
    ok(&fedtopo(&[
        "merge",
        s,
        "--from",
        a.to_str().unwrap(),
        "--from",
        b.to_str().unwrap(),
        "--from",
        c.to_str().unwrap(),
        "--out",
        merged.to_str().unwrap(),
    ]));
    for f in ["results.csv", "results.md", "sweep.svg"] {
        assert_eq!(read(&one, f), read(&merged, f), "{f} differs after merge");
    }
    // The stored job results too, byte for byte: merge copies them (parsing
    // a stored float and printing it again can move its last digit).
    let stored = job_files(&one);
    // 120 results and `experiment.fingerprint`.
    assert_eq!(stored.len(), 121);
    assert!(stored.contains(&"experiment.fingerprint".to_string()));
    assert_eq!(stored, job_files(&merged), "merged jobs/ holds other files");
    for f in &stored {
        let f = format!("jobs/{f}");
        assert_eq!(read(&one, &f), read(&merged, &f), "{f} differs after merge");
    }
}

/// Names of the files under `DIR/jobs` (the job results and the
/// experiment's fingerprint), sorted.
fn job_files(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir.join("jobs"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn resume_skips_finished_jobs() {
    let base = tmp("resume");
    let spec = base.join("sweep.toml");
    std::fs::write(&spec, SPEC).unwrap();
    let s = spec.to_str().unwrap();
    ok(&fedtopo(&["run", s, "--shard", "0/2"]));
    let o = fedtopo(&["run", s]);
    ok(&o);
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    assert!(
        err.contains("120 job(s) selected, 60 computed, 60 already done"),
        "{err}"
    );
    let o = fedtopo(&["run", s]);
    assert!(String::from_utf8_lossy(&o.stderr).contains("0 computed, 120 already done"));
    // No temporary files are left behind.
    let leftovers = std::fs::read_dir(base.join("jobs"))
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .contains(".tmp-")
        })
        .count();
    assert_eq!(leftovers, 0);
    // A result stamped by other code is stale: recomputed, and said so.
    let results_before = read(&base, "results.csv");
    let job = std::fs::read_dir(base.join("jobs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|x| x == "json"))
        .unwrap();
    let stored = std::fs::read_to_string(&job).unwrap();
    let envelope: serde_json::Value = serde_json::from_str(&stored).unwrap();
    let (key, row, _source): (String, serde_json::Value, String) =
        serde_json::from_value(envelope["result"].clone()).unwrap();
    std::fs::write(
        &job,
        serde_json::to_string(&(key, row, "0123456789abcdef")).unwrap(),
    )
    .unwrap();
    let o = fedtopo(&["run", s]);
    ok(&o);
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    assert!(err.contains("1 computed, 119 already done"), "{err}");
    assert!(
        err.contains("1 stored result(s) were computed by other code"),
        "{err}"
    );
    assert_eq!(read(&base, "results.csv"), results_before);
    // A value edited by hand no longer matches the stored hash: detected,
    // named on stderr and recomputed; results.csv is what it was.
    let stored = std::fs::read_to_string(&job).unwrap();
    let at = stored.find("\"cycle_time_ms\",").expect("a cycle time");
    let digit = at + stored[at..].find(|c: char| c.is_ascii_digit()).unwrap();
    let mut edited = stored.clone().into_bytes();
    edited[digit] = if edited[digit] == b'9' {
        b'1'
    } else {
        edited[digit] + 1
    };
    std::fs::write(&job, &edited).unwrap();
    let o = fedtopo(&["run", s]);
    ok(&o);
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    assert!(err.contains("1 computed, 119 already done"), "{err}");
    assert!(
        err.contains("edited outside fedtopo") && err.contains("recomputed"),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(&job).unwrap(), stored);
    assert_eq!(read(&base, "results.csv"), results_before);
    // A file that is not UTF-8 is recomputed like a truncated one.
    std::fs::write(&job, b"{\"fnv1a64\": \"\xff\xfe\"}").unwrap();
    let o = fedtopo(&["run", s]);
    ok(&o);
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    assert!(
        err.contains("not UTF-8") && err.contains("recomputed"),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(&job).unwrap(), stored);
    // Truncated: the same.
    std::fs::write(&job, &stored.as_bytes()[..stored.len() / 2]).unwrap();
    let o = fedtopo(&["run", s]);
    ok(&o);
    assert!(String::from_utf8_lossy(&o.stderr).contains("1 computed, 119 already done"));
    assert_eq!(read(&base, "results.csv"), results_before);
}

/// Two experiments run into one output directory: the second is refused
/// (its results.csv would replace the first's); the same experiment with
/// its file edited resumes, with a note.
#[test]
fn another_experiment_into_the_same_out_is_refused() {
    let base = tmp("two-experiments");
    let first = base.join("first.toml");
    let small = SPEC.replace("access = [\"100M\", \"1G\", \"10G\"]", "access = [\"1G\"]");
    std::fs::write(&first, &small).unwrap();
    let out = tmp("two-experiments-out");
    let o = out.to_str().unwrap();
    ok(&fedtopo(&["run", first.to_str().unwrap(), "--out", o]));
    let results = read(&out, "results.csv");
    let second = base.join("second.toml");
    std::fs::write(&second, small.replace("test-sweep", "other-sweep")).unwrap();
    let r = fedtopo(&["run", second.to_str().unwrap(), "--out", o]);
    assert_eq!(r.status.code(), Some(2));
    let err = String::from_utf8_lossy(&r.stderr).to_string();
    assert!(
        err.contains("holds the results of experiment `test-sweep`")
            && err.contains("not of `other-sweep`"),
        "{err}"
    );
    assert_eq!(read(&out, "results.csv"), results);
    // merge into it, or from it, is refused the same way.
    let r = fedtopo(&["merge", second.to_str().unwrap(), "--from", o]);
    assert_eq!(r.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&r.stderr).contains("holds the results of experiment"));
    // The same experiment, edited (one more access value): resumes.
    std::fs::write(
        &first,
        SPEC.replace("[\"100M\", \"1G\", \"10G\"]", "[\"1G\", \"10G\"]"),
    )
    .unwrap();
    let r = fedtopo(&["run", first.to_str().unwrap(), "--out", o]);
    ok(&r);
    let err = String::from_utf8_lossy(&r.stderr).to_string();
    assert!(err.contains("the experiment file changed"), "{err}");
    assert!(
        err.contains("80 job(s) selected, 40 computed, 40 already done"),
        "{err}"
    );
}

#[test]
fn bad_experiment_files_are_clear_errors() {
    let base = tmp("bad");
    let spec = base.join("bad.toml");
    std::fs::write(
        &spec,
        "name = \"x\"\nkind = \"compare\"\n[grid]\nunderlay = [\"aws-gaia\"]\naccess = [10]\n",
    )
    .unwrap();
    let o = fedtopo(&["run", spec.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    assert!(err.contains("bad.toml:5:"), "{err}");
    std::fs::write(&spec, "name = \"x\"\nkind = \"compare\"\n[grid]\nunderlay = [\"aws-gaia\"]\naccess = [\"fast\"]\n").unwrap();
    let o = fedtopo(&["run", spec.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("`fast`"));
    let o = fedtopo(&["run", spec.to_str().unwrap(), "--shard", "3/3"]);
    assert_eq!(o.status.code(), Some(2));
}

const SIMULATE: &str = r#"
name = "sim-sweep"
kind = "simulate"
[grid]
underlay = ["aws-north-america"]
overlay = ["star", "mst", "ring", "matcha"]
access = ["1G"]
network = ["maxplus", "flow"]
rounds = [40]
"#;

/// `kind = "simulate"`: the maxplus replay of a tree converges to the
/// max-plus cycle time, MATCHA (per-round) rows have no static cycle time,
/// and the output does not depend on the thread count.
#[test]
fn simulate_kind_replays_every_point() {
    let base = tmp("sim");
    let spec = base.join("sim.toml");
    std::fs::write(&spec, SIMULATE).unwrap();
    let s = spec.to_str().unwrap();
    let (one, two) = (tmp("sim-one"), tmp("sim-two"));
    run_with_threads(s, &one, 1);
    run_with_threads(s, &two, 2);
    assert_eq!(read(&one, "results.csv"), read(&two, "results.csv"));
    let (header, records) = results(&one);
    let col = |name: &str| column(&header, name);
    assert_eq!(records.len(), 8);
    for rec in &records {
        let r: Vec<&str> = rec.iter().collect();
        let (overlay, network) = (r[col("overlay")], r[col("network")]);
        let tau = r[col("cycle_time_ms")];
        if overlay == "matcha" {
            assert_eq!(tau, "", "MATCHA has no static cycle time");
            assert!(r[col("steady_round_ms")].parse::<f64>().unwrap() > 0.0);
            continue;
        }
        let ratio: f64 = r[col("steady_over_cycle_time")].parse().unwrap();
        if network == "maxplus" && overlay != "ring" {
            assert!((ratio - 1.0).abs() < 1e-9, "{overlay}: {ratio}");
        }
        assert!(ratio > 0.5 && ratio < 5.0, "{overlay}/{network}: {ratio}");
    }
}

#[test]
fn kind_specific_axes_are_rejected_elsewhere() {
    let base = tmp("badaxis");
    let spec = base.join("bad.toml");
    std::fs::write(
        &spec,
        "name='x'\nkind='compare'\n[grid]\nunderlay=['aws-gaia']\nnetwork=['flow']\n",
    )
    .unwrap();
    let o = fedtopo(&["run", spec.to_str().unwrap()]);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("`network` applies only to kind = simulate"),
        "{err}"
    );
}

const TRAIN: &str = r#"
name = "train-sweep"
kind = "train"
[grid]
underlay = ["aws-gaia"]
overlay = ["star", "ring"]
access = ["1G"]
rounds = [6]
eval_every = [2]
target = ["loss:5"]
[[plot]]
file = "curves.svg"
per_round = true
x = "wall_clock_ms"
y = "train_loss_mean"
series = "overlay"
"#;

/// `kind = "train"`: every grid point trains through the library session;
/// results (and the per-round curves) do not depend on the thread count.
#[cfg(feature = "train")]
#[test]
fn train_kind_is_deterministic_across_threads() {
    let base = tmp("train");
    let spec = base.join("train.toml");
    std::fs::write(&spec, TRAIN).unwrap();
    let s = spec.to_str().unwrap();
    let (one, two) = (tmp("train-one"), tmp("train-two"));
    run_with_threads(s, &one, 1);
    run_with_threads(s, &two, 2);
    for f in ["results.csv", "results.md", "curves.svg"] {
        assert_eq!(
            read(&one, f),
            read(&two, f),
            "{f} differs with thread count"
        );
    }
    let (header, records) = results(&one);
    let col = |name: &str| column(&header, name);
    for rec in records {
        // Loss 5 is above the initial loss: reached at the first evaluation.
        assert_eq!(&rec[col("rounds_to_target")], "0", "{rec:?}");
        assert!(rec[col("ms_per_round")].parse::<f64>().unwrap() > 0.0);
    }
}

/// A train experiment without `target` (or with `none`) has no
/// time-to-target columns: its default metric is the final test accuracy
/// and its default table leaves the target columns out.
#[test]
fn train_experiment_without_a_target_has_no_target_columns() {
    use fedtopo::experiment::spec::ExperimentSpec;
    let without = TRAIN.replace("target = [\"loss:5\"]\n", "");
    let none = TRAIN.replace("loss:5", "none");
    for text in [&without, &none] {
        let spec = ExperimentSpec::parse(text, "train.toml").unwrap();
        assert_eq!(spec.metric(), "final_test_acc");
        let table = spec.table_columns();
        assert!(table.contains(&"ms_per_round".to_string()), "{table:?}");
        assert!(!table.iter().any(|c| c.contains("to_target")), "{table:?}");
    }
    let with = ExperimentSpec::parse(TRAIN, "train.toml").unwrap();
    assert_eq!(with.metric(), "time_to_target_ms");
    assert!(with
        .table_columns()
        .contains(&"rounds_to_target".to_string()));
}

/// Run for real: no target, no target columns in results.csv.
#[cfg(feature = "train")]
#[test]
fn train_run_without_a_target_writes_no_target_columns() {
    let base = tmp("train-notarget");
    let spec = base.join("train.toml");
    std::fs::write(&spec, TRAIN.replace("target = [\"loss:5\"]\n", "")).unwrap();
    let out = tmp("train-notarget-out");
    run_with_threads(spec.to_str().unwrap(), &out, 2);
    let (header, records) = results(&out);
    assert!(
        !header.iter().any(|c| c.contains("to_target")),
        "{header:?}"
    );
    assert!(header.iter().any(|c| c == "final_test_acc"), "{header:?}");
    assert_eq!(records.len(), 2);
}

#[cfg(not(feature = "train"))]
#[test]
fn train_kind_without_the_feature_is_a_clear_error() {
    let base = tmp("train-nofeature");
    let spec = base.join("train.toml");
    std::fs::write(&spec, TRAIN).unwrap();
    let o = fedtopo(&[
        "run",
        spec.to_str().unwrap(),
        "--out",
        base.to_str().unwrap(),
    ]);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("needs fedtopo built with `--features train`"),
        "{err}"
    );
}

const RATIOS: &str = r#"
name = "ratio-sweep"
kind = "compare"
metric = "over_star"
table = ["cycle_time_ms", "over_star"]
[grid]
underlay = ["aws-north-america"]
overlay = ["star", "ring", "matcha:base=delta-mbst,budget=0.2", "matcha+:budget=1"]
access = ["100M", "10G"]
[[ratio]]
column = "over_star"
of = "cycle_time_ms"
baseline = { overlay = "star" }
[[plot]]
file = "budget.svg"
x = "matcha_budget"
y = "over_star"
series = "matcha_base"
"#;

/// `[[ratio]]` divides each row by the baseline row with the same other
/// axes; a published CSV with a `published` column is joined on the metric;
/// MATCHA variants carry their base and budget as columns.
#[test]
fn ratio_columns_divide_by_the_baseline_row() {
    let base = tmp("ratio");
    let spec = base.join("ratio.toml");
    std::fs::write(&spec, RATIOS).unwrap();
    std::fs::write(
        base.join("pub.csv"),
        "access,overlay,published\n10G,ring,0.5\n100M,\"matcha:base=delta-mbst,budget=0.2\",2\n",
    )
    .unwrap();
    let text = RATIOS.replace(
        "kind = \"compare\"",
        "kind = \"compare\"\npublished = \"pub.csv\"",
    );
    std::fs::write(&spec, text).unwrap();
    let out = tmp("ratio-out");
    run_with_threads(spec.to_str().unwrap(), &out, 2);
    let (header, rows) = results(&out);
    let col = |name: &str| column(&header, name);
    assert_eq!(rows.len(), 8);
    let find = |overlay: &str, access: &str| {
        rows.iter()
            .find(|r| &r[col("overlay")] == overlay && &r[col("access")] == access)
            .unwrap_or_else(|| panic!("{overlay} {access}"))
    };
    let num = |r: &csv::StringRecord, c: &str| r[col(c)].parse::<f64>().unwrap();
    for access in ["100M", "10G"] {
        let star = num(find("star", access), "cycle_time_ms");
        for overlay in [
            "star",
            "ring",
            "matcha:base=delta-mbst,budget=0.2",
            "matcha+:budget=1",
        ] {
            let r = find(overlay, access);
            let want = num(r, "cycle_time_ms") / star;
            assert!((num(r, "over_star") - want).abs() < 1e-12, "{overlay}");
        }
        let m = find("matcha:base=delta-mbst,budget=0.2", access);
        assert_eq!(&m[col("matcha_base")], "delta-mbst");
        assert_eq!(num(m, "matcha_budget"), 0.2);
        assert!(num(m, "matcha_maxplus_ms") <= num(m, "cycle_time_ms") + 1e-9);
        assert_eq!(&find("ring", access)[col("matcha_budget")], "");
    }
    let r = find("ring", "10G");
    assert_eq!(num(r, "published"), 0.5);
    let rel = (num(r, "over_star") - 0.5) / 0.5;
    assert!((num(r, "relative_error") - rel).abs() < 1e-12);
    assert_eq!(&find("ring", "100M")[col("published")], "");
    assert!(out.join("budget.svg").exists());
    let md = String::from_utf8(read(&out, "results.md")).unwrap();
    assert!(md.contains("published over_star"), "{md}");

    // A baseline that is not in the grid is refused before anything runs.
    let bad = RATIOS.replace("overlay = \"star\" }", "overlay = \"mst\" }");
    std::fs::write(&spec, bad).unwrap();
    let o = fedtopo(&[
        "run",
        spec.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("baseline overlay = `mst` is not in the grid"),
        "{err}"
    );
    let bad = RATIOS.replace("baseline = { overlay", "baseline = { topology");
    std::fs::write(&spec, bad).unwrap();
    let o = fedtopo(&[
        "run",
        spec.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(String::from_utf8_lossy(&o.stderr).contains("`topology` is not a grid axis"));
}

const CLIQUES: &str = r#"
name = "cliques"
kind = "simulate"
[grid]
underlay = ["aws-north-america"]
overlay = ["dcliques-full", "dcliques-full+ca"]
access = ["1G"]
network = ["maxplus"]
rounds = [60]
"#;

/// D-Cliques with Clique Averaging is timed as two communication phases per
/// round in experiment files too: its cycle time is the two-phase one
/// (longer than D-SGD's on the same cliques) and the max-plus replay's
/// steady round equals it.
#[test]
fn clique_averaging_rows_use_the_two_phase_round() {
    let (spec, out, header, rows) = run_spec("cliques", CLIQUES, 1);
    let col = |name: &str| column(&header, name);
    let num = |r: &csv::StringRecord, c: &str| r[col(c)].parse::<f64>().unwrap();
    assert_eq!(rows.len(), 2);
    let (dsgd, ca) = (&rows[0], &rows[1]);
    assert_eq!(&ca[col("overlay")], "dcliques-full+ca");
    assert!(num(ca, "cycle_time_ms") > 1.5 * num(dsgd, "cycle_time_ms"));
    for r in [dsgd, ca] {
        let ratio = num(r, "steady_over_cycle_time");
        assert!(
            (ratio - 1.0).abs() < 1e-9,
            "{}: {ratio}",
            &r[col("overlay")]
        );
    }
    // Stragglers are refused for the two-phase replay, with the reason.
    std::fs::write(
        &spec,
        CLIQUES.replace(
            "rounds = [60]",
            "rounds = [60]\nstraggler = [\"lognormal:0.5\"]",
        ),
    )
    .unwrap();
    let o = fedtopo(&[
        "run",
        spec.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("not supported for Clique Averaging"));
}

const SEEDS: &str = r#"
name = "seeds"
kind = "simulate"
aggregate = "seed"
[grid]
underlay = ["aws-north-america"]
overlay = ["star", "ring"]
access = ["1G"]
rounds = [30]
straggler = ["lognormal:0.5"]
seed = [0, 1, 2]
"#;

/// `aggregate = "seed"`: rows that differ only in the seed are summarised
/// (mean, min, max, count) in `summary.csv` and `results.md`.
#[test]
fn aggregate_summarises_over_seeds() {
    let (spec, out, header, rows) = run_spec("seeds", SEEDS, 2);
    let col = |name: &str| column(&header, name);
    let mut rdr = csv::Reader::from_path(out.join("summary.csv")).unwrap();
    let sh = rdr.headers().unwrap().clone();
    let summary: Vec<csv::StringRecord> = rdr.records().map(Result::unwrap).collect();
    assert_eq!(summary.len(), 2);
    assert!(!sh.iter().any(|h| h == "seed"), "{sh:?}");
    for g in &summary {
        let overlay = &g[column(&sh, "overlay")];
        let v: Vec<f64> = rows
            .iter()
            .filter(|r| &r[col("overlay")] == overlay)
            .map(|r| r[col("steady_round_ms")].parse().unwrap())
            .collect();
        assert_eq!(v.len(), 3);
        let num = |c: &str| g[column(&sh, c)].parse::<f64>().unwrap();
        let mean = v.iter().sum::<f64>() / 3.0;
        assert!((num("steady_round_ms_mean") - mean).abs() < 1e-9 * mean);
        assert_eq!(
            num("steady_round_ms_min"),
            v.iter().copied().fold(f64::INFINITY, f64::min)
        );
        assert_eq!(
            num("steady_round_ms_max"),
            v.iter().copied().fold(0.0, f64::max)
        );
        assert_eq!(num("steady_round_ms_n"), 3.0);
        // Lognormal stragglers with different seeds give different rounds.
        assert!(num("steady_round_ms_max") > num("steady_round_ms_min"));
    }
    let md = String::from_utf8(read(&out, "results.md")).unwrap();
    assert!(md.contains("## Over `seed`: mean (min..max)"), "{md}");

    std::fs::write(
        &spec,
        SEEDS.replace("aggregate = \"seed\"", "aggregate = \"seeds\""),
    )
    .unwrap();
    let o = fedtopo(&[
        "run",
        spec.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("aggregate = `seeds` is not a grid axis"));
}

const PROGRAMS: &str = r#"
name = "programs"
kind = "program"
[grid]
underlay = ["aws-north-america"]
overlay = ["fedavg", "tornadoes", "ifca"]
rounds = [300]
seed = [3]
"#;

/// `kind = "program"` runs the same code path as `fedtopo tornado learn`
/// (reference learner): same accuracy, bytes and wall-clock per method.
#[test]
fn program_kind_matches_tornado_learn() {
    let (spec, out, header, rows) = run_spec("programs", PROGRAMS, 2);
    let col = |name: &str| column(&header, name);
    let cli = tmp("programs-cli");
    ok(&fedtopo(&[
        "tornado",
        "learn",
        "aws-north-america",
        "--steps",
        "300",
        "--methods",
        "fedavg,tornadoes,ifca",
        "--separation",
        "0.3",
        "--target",
        "0.45",
        "--seed",
        "3",
        "--network",
        "maxplus",
        "--out",
        cli.to_str().unwrap(),
    ]));
    let mut rdr = csv::Reader::from_path(cli.join("summary.csv")).unwrap();
    let ch = rdr.headers().unwrap().clone();
    let theirs: Vec<csv::StringRecord> = rdr.records().map(Result::unwrap).collect();
    assert_eq!(rows.len(), 3);
    assert_eq!(theirs.len(), 3);
    for (ours, cli) in rows.iter().zip(&theirs) {
        assert_eq!(&ours[col("overlay")], &cli[column(&ch, "method")]);
        let o = |c: &str| ours[col(c)].parse::<f64>().unwrap();
        let t = |c: &str| cli[column(&ch, c)].parse::<f64>().unwrap();
        // The CLI prints 4 decimals for accuracy and GB, 3 for seconds.
        assert!((o("final_accuracy") - t("final_acc")).abs() < 1e-4);
        assert!((o("total_gb") - t("gb_total")).abs() < 1e-4);
        assert!((o("total_ms") / 1000.0 - t("s_total")).abs() < 1e-3);
    }
    // Methods are checked like overlays: a bad name says what is expected.
    std::fs::write(&spec, PROGRAMS.replace("\"ifca\"", "\"fedsgd\"")).unwrap();
    let o = fedtopo(&[
        "run",
        spec.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("fedsgd"));
}

/// The network knobs are one parser for the CLI and experiment files: a grid
/// with `model_bits`, `compute_ms`, `silos` / `placement_seed` and an
/// `access_csv` (relative to the experiment file) gives the cycle times of
/// `fedtopo compare` with the same options, and those axes become columns.
#[test]
fn network_knobs_are_experiment_axes_with_the_cli_values() {
    let dir = tmp("knobs-csv");
    let csv = dir.join("silos.csv");
    std::fs::write(&csv, "silo,up,down\nSeattle,1G,2G\nMiami,500M,500M\n").unwrap();
    let silos = dir.join("compute.csv");
    std::fs::write(
        &silos,
        "silo,compute_ms,capacity\nDenver,40,\nDallas#0,,300M\n",
    )
    .unwrap();
    let text = r#"
name = "knobs"
kind = "compare"
[grid]
underlay = ["aws-north-america"]
overlay = ["star", "ring", "mst"]
access = ["1G"]
core_capacity = ["file", "2G"]
model_bits = ["5MB"]
compute_ms = ["7.5"]
silos = [30]
placement_seed = [4]
access_csv = ["silos.csv"]
silos_csv = ["compute.csv"]
"#;
    let spec = dir.join("knobs.toml");
    std::fs::write(&spec, text).unwrap();
    let out = tmp("knobs-out");
    run_with_threads(spec.to_str().unwrap(), &out, 1);
    let (header, rows) = results(&out);
    let col = |name: &str| column(&header, name);
    assert_eq!(rows.len(), 6);
    for knob in [
        "model_bits",
        "compute_ms",
        "silos",
        "placement_seed",
        "access_csv",
    ] {
        let _ = col(knob);
    }
    for r in &rows {
        assert_eq!(
            &r[col("silos")],
            "30",
            "30 silos placed, not one per router"
        );
    }
    for core in ["file", "2G"] {
        let o = fedtopo(&[
            "compare",
            "aws-north-america",
            "--overlays",
            "star,ring,mst",
            // Experiment files centre STAR by load (the paper's choice).
            "--center",
            "load",
            "--access",
            "1G",
            "--core-capacity",
            core,
            "--model-bits",
            "5MB",
            "--compute-ms",
            "7.5",
            "--silos",
            "30",
            "--placement-seed",
            "4",
            "--access-csv",
            csv.to_str().unwrap(),
            "--silos-csv",
            silos.to_str().unwrap(),
            "--format",
            "json",
        ]);
        ok(&o);
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        for cli in v["rows"].as_array().unwrap() {
            let name = cli["overlay"].as_str().unwrap();
            let row = rows
                .iter()
                .find(|r| &r[col("overlay")] == name && &r[col("core_capacity")] == core)
                .unwrap();
            let ours: f64 = row[col("cycle_time_ms")].parse().unwrap();
            let theirs = cli["cycle_time_ms"].as_f64().unwrap();
            assert!(
                (ours - theirs).abs() <= 1e-12 * theirs,
                "{name} core {core}: experiment {ours} vs CLI {theirs}"
            );
        }
    }
    // Bad knob values name the knob in both front ends.
    std::fs::write(&spec, text.replace("[\"5MB\"]", "[\"5 parsecs\"]")).unwrap();
    let o = fedtopo(&[
        "run",
        spec.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(!o.status.success());
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("model_bits `5 parsecs`: expected"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let o = fedtopo(&["compare", "--model-bits", "5 parsecs"]);
    assert!(String::from_utf8_lossy(&o.stderr).contains("--model-bits `5 parsecs`: expected"));
}

/// `failures` is an axis of simulate (and train) experiments, as the CLI's
/// `--failures`: same replay, same numbers; other kinds refuse it; files
/// without it keep their columns.
#[test]
fn failures_axis_replays_like_the_cli() {
    let text = r#"
name = "fail"
kind = "simulate"
[grid]
underlay = ["aws-gaia"]
overlay = ["ring", "complete"]
access = ["1G"]
rounds = [40]
seed = [3]
failures = ["node:0.7", "link:0.5"]
"#;
    let (spec, _out, header, rows) = run_spec("failures", text, 1);
    let col = |name: &str| column(&header, name);
    assert_eq!(rows.len(), 4);
    for r in &rows {
        let o = fedtopo(&[
            "simulate",
            "aws-gaia",
            "--overlays",
            &r[col("overlay")],
            "--access",
            "1G",
            "--rounds",
            "40",
            "--seed",
            "3",
            "--failures",
            &r[col("failures")],
            "--format",
            "csv",
        ]);
        ok(&o);
        let mut rdr = csv::Reader::from_reader(&o.stdout[..]);
        let h = rdr.headers().unwrap().clone();
        let cli = rdr.records().next().unwrap().unwrap();
        let pos = h.iter().position(|c| c == "steady_round_ms").unwrap();
        assert_eq!(&cli[pos], &r[col("steady_round_ms")], "{:?}", r);
    }
    // A failure model changes the rounds (they are not the failure-free ones).
    let steady = |i: usize| rows[i][col("steady_round_ms")].parse::<f64>().unwrap();
    assert_ne!(steady(0), steady(1));
    // compare has no failures axis.
    std::fs::write(
        &spec,
        text.replace("kind = \"simulate\"", "kind = \"compare\"")
            .replace("rounds = [40]\nseed = [3]\n", ""),
    )
    .unwrap();
    let o = fedtopo(&["run", spec.to_str().unwrap()]);
    assert!(!o.status.success());
    assert!(
        String::from_utf8_lossy(&o.stderr)
            .contains("`failures` applies only to kind = simulate or train"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// `breakdown = [true]` adds where the time goes to simulate rows, the
/// same numbers as `simulate --breakdown`; `false` leaves the cells empty;
/// anything else is refused.
#[test]
fn breakdown_axis_adds_the_time_breakdown() {
    let text = r#"
name = "bd"
kind = "simulate"
[grid]
underlay = ["aws-north-america"]
overlay = ["mst"]
access = ["100M"]
rounds = [20]
breakdown = [true, false]
"#;
    let (spec, _out, header, rows) = run_spec("breakdown", text, 1);
    let col = |name: &str| column(&header, name);
    assert_eq!(rows.len(), 2);
    let on = rows
        .iter()
        .find(|r| &r[col("breakdown")] == "true")
        .unwrap();
    let off = rows
        .iter()
        .find(|r| &r[col("breakdown")] == "false")
        .unwrap();
    assert_eq!(&off[col("wait_ms_mean")], "");
    let o = fedtopo(&[
        "simulate",
        "--overlays",
        "mst",
        "--access",
        "100M",
        "--rounds",
        "20",
        "--format",
        "json",
        "--breakdown",
        "/dev/null",
    ]);
    ok(&o);
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let b = &doc["breakdown"][0];
    for (c, k) in [
        ("compute_ms_mean", "compute_ms"),
        ("transfer_ms_mean", "transfer_ms"),
        ("wait_ms_mean", "wait_ms"),
        ("critical_transfer_share", "critical_transfer_share"),
    ] {
        let got: f64 = on[col(c)].parse().unwrap();
        let want = b[k].as_f64().unwrap();
        assert!(
            (got - want).abs() <= 1e-9 * want.abs().max(1.0),
            "{c}: {got} vs {want}"
        );
    }
    std::fs::write(&spec, text.replace("[true, false]", "[\"yes\"]")).unwrap();
    let o = fedtopo(&["run", spec.to_str().unwrap()]);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("breakdown `yes`: expected true or false"),
        "{err}"
    );
}

/// `shared:REL` underlays resolve without `FEDTOPO_SHARED` from the
/// experiment file's location (a `shared/underlays` beside one of its
/// ancestors), so a copied or installed binary runs a repository's
/// experiment files; a missing one names FEDTOPO_SHARED in its error.
#[test]
fn shared_paths_resolve_from_the_experiment_location() {
    let root = tmp("shared-root");
    let under = root.join("shared/underlays/mine");
    std::fs::create_dir_all(&under).unwrap();
    let gml = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("underlays/aws-gaia.gml"),
    )
    .unwrap();
    std::fs::write(under.join("only-here.gml"), gml).unwrap();
    let exp = root.join("repo/experiments/x");
    std::fs::create_dir_all(&exp).unwrap();
    let spec = exp.join("experiment.toml");
    let text = "name = \"s\"\nkind = \"compare\"\n[grid]\nunderlay = [\"shared:mine/only-here.gml\"]\noverlay = [\"ring\"]\n";
    std::fs::write(&spec, text).unwrap();
    let run = || {
        std::process::Command::new(env!("CARGO_BIN_EXE_fedtopo"))
            .args([
                "run",
                spec.to_str().unwrap(),
                "--out",
                root.join("out").to_str().unwrap(),
            ])
            .env_remove("FEDTOPO_SHARED")
            .output()
            .unwrap()
    };
    ok(&run());
    let (_, rows) = results(&root.join("out"));
    assert_eq!(rows.len(), 1);
    std::fs::write(&spec, text.replace("only-here", "not-there")).unwrap();
    let o = run();
    assert!(!o.status.success());
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("FEDTOPO_SHARED"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// Grid validation covers file overlays: a missing file is reported with
/// the other problems before any job runs.
#[test]
fn missing_overlay_files_are_grid_problems() {
    let text = r#"
name = "files"
kind = "compare"
[grid]
underlay = ["aws-gaia"]
overlay = ["ring", "file:nowhere.gml"]
access = ["1G", "fast"]
"#;
    let dir = tmp("files-missing");
    let spec = dir.join("files.toml");
    std::fs::write(&spec, text).unwrap();
    let o = fedtopo(&[
        "run",
        spec.to_str().unwrap(),
        "--out",
        dir.join("out").to_str().unwrap(),
    ]);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("overlay `file:nowhere.gml`"), "{err}");
    assert!(err.contains("access `fast`"), "{err}");
    assert!(!dir.join("out/results.csv").exists());
}

/// `breakdown = [true]` on train rows: where the training run's time went,
/// the same summary as a simulate row of the same overlay and rounds (the
/// trainer's clock is the replay).
#[cfg(feature = "train")]
#[test]
fn breakdown_axis_on_train_rows() {
    let text = r#"
name = "bd-train"
kind = "train"
[grid]
underlay = ["aws-gaia"]
overlay = ["ring"]
access = ["100M"]
rounds = [6]
eval_every = [2]
network = ["maxplus"]
breakdown = [true, false]
"#;
    let (_spec, _out, header, rows) = run_spec("breakdown-train", text, 1);
    let col = |name: &str| column(&header, name);
    let on = rows
        .iter()
        .find(|r| &r[col("breakdown")] == "true")
        .unwrap();
    let off = rows
        .iter()
        .find(|r| &r[col("breakdown")] == "false")
        .unwrap();
    assert_eq!(&off[col("wait_ms_mean")], "");
    let sim = r#"
name = "bd-sim"
kind = "simulate"
[grid]
underlay = ["aws-gaia"]
overlay = ["ring"]
access = ["100M"]
rounds = [6]
network = ["maxplus"]
breakdown = [true]
"#;
    let (_s, _o, sh, srows) = run_spec("breakdown-sim", sim, 1);
    for c in [
        "compute_ms_mean",
        "transfer_ms_mean",
        "wait_ms_mean",
        "critical_compute_share",
        "critical_transfer_share",
    ] {
        assert!(!on[col(c)].is_empty(), "{c}");
        assert_eq!(on[col(c)], srows[0][column(&sh, c)], "{c}");
    }
}

/// `protocol` on train rows: `sync` and the asynchronous protocols side by
/// side, the asynchronous row the same run as `fedtopo train --protocol`;
/// a bad value is refused before any job runs.
#[cfg(feature = "train")]
#[test]
fn protocol_axis_on_train_rows() {
    let text = r#"
name = "protocol"
kind = "train"
[grid]
underlay = ["aws-gaia"]
overlay = ["star"]
protocol = ["sync", "fedbuff:2"]
access = ["1G"]
center = ["first"]
core_capacity = ["file"]
network = ["flow"]
rounds = [6]
eval_every = [2]
"#;
    let (spec, out, header, rows) = run_spec("protocol", text, 1);
    let col = |name: &str| column(&header, name);
    assert_eq!(rows.len(), 2);
    let fb = rows
        .iter()
        .find(|r| &r[col("protocol")] == "fedbuff:2")
        .unwrap();
    let sync = rows.iter().find(|r| &r[col("protocol")] == "sync").unwrap();
    assert_ne!(
        fb[col("final_wall_clock_ms")],
        sync[col("final_wall_clock_ms")]
    );
    // The CLI's run of the same point.
    let cli = out.join("cli");
    let o = fedtopo(&[
        "train",
        "aws-gaia",
        "--overlays",
        "star",
        "--protocol",
        "fedbuff:2",
        "--access",
        "1G",
        "--network",
        "flow",
        "--rounds",
        "6",
        "--eval-every",
        "2",
        "--center",
        "first",
        "--core-capacity",
        "file",
        "--quiet",
        "--out",
        cli.to_str().unwrap(),
    ]);
    ok(&o);
    let text_out = String::from_utf8_lossy(&o.stdout).to_string();
    let cli_ms: f64 = text_out
        .lines()
        .nth(1)
        .unwrap()
        .split(',')
        .nth(2)
        .unwrap()
        .parse()
        .unwrap();
    let exp_ms: f64 = fb[col("final_wall_clock_ms")].parse().unwrap();
    assert!((cli_ms - exp_ms).abs() < 1e-3, "{cli_ms} vs {exp_ms}");
    std::fs::write(&spec, text.replace("\"fedbuff:2\"", "\"fedbuff:0\"")).unwrap();
    let o = fedtopo(&["run", spec.to_str().unwrap()]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("fedbuff:K"));
}
