//! Hostile files of issue 25, items 3, 4, 5 and 9, with the real binary:
//! every case must give a clean refusal (exit 2, an `error:` line naming
//! the file, the column or key and what is accepted) within [`LIMIT`],
//! never a hang, a panic or a result silently wrong.
//!
//! * No unknown name is ignored (item 3): CSV columns, JSON keys, experiment
//!   `published` CSVs, `[[ratio]]` names, repeated axis values.
//! * Outputs stay where the user said (item 4): plot files inside `--out`,
//!   results files not overwritten; stdout write errors (a full disk, a
//!   closed pipe, stdout closed at start).
//! * Only regular files are read (item 5): a FIFO given as any input is
//!   refused at once (unix).
//!
//! Run-store integrity (item 9) is in tests/experiments.rs
//! (`resume_skips_finished_jobs`, `another_experiment_into_the_same_out_is_refused`)
//! plus the FIFO job file here.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Longest a refusal may take.
const LIMIT: Duration = Duration::from_secs(20);

/// Runs `cmd`, killing it after [`LIMIT`]: `(exit code, stdout, stderr)`
/// (code -1: killed by a signal); a run that outlives the limit fails.
fn finish(mut cmd: Command, shown: &str) -> (i32, String, String) {
    let mut child = cmd
        .stdin(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("binary starts");
    let start = Instant::now();
    // Drain stderr on a thread so a chatty child never blocks on the pipe.
    let mut stderr = child.stderr.take().expect("stderr piped");
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stderr.read_to_string(&mut s);
        s
    });
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if start.elapsed() > LIMIT {
            let _ = child.kill();
            let _ = child.wait();
            panic!("`{shown}` still runs after {LIMIT:?}: it hangs");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut out = String::new();
    if let Some(mut s) = child.stdout.take() {
        let _ = s.read_to_string(&mut out);
    }
    let err = reader.join().unwrap_or_default();
    (status.code().unwrap_or(-1), out, err)
}

fn fedtopo_in(dir: &Path, args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_fedtopo"));
    c.args(args).current_dir(dir).stdout(Stdio::piped());
    c
}

/// `fedtopo ARGS` in `dir` must exit with 2 and an `error:` (with the
/// problems listed under it) holding every one of `expect`.
fn refused_in(dir: &Path, args: &[&str], expect: &[&str]) {
    let shown = format!("fedtopo {}", args.join(" "));
    let (code, _, err) = finish(fedtopo_in(dir, args), &shown);
    let shown = format!("`{shown}`: exit {code}\n{err}");
    assert!(code != 101 && code != 134 && code != -1, "crashed: {shown}");
    assert_eq!(code, 2, "{shown}");
    // The error: its line, and the problems listed under it (an
    // experiment grid's).
    let at = err
        .find("error: ")
        .unwrap_or_else(|| panic!("no error line: {shown}"));
    let error = &err[at..];
    for e in expect {
        assert!(error.contains(e), "expected `{e}` in the error: {shown}");
    }
}

/// `fedtopo ARGS` in `dir` must succeed; its stdout.
fn works_in(dir: &Path, args: &[&str]) -> String {
    let shown = format!("fedtopo {}", args.join(" "));
    let (code, out, err) = finish(fedtopo_in(dir, args), &shown);
    assert_eq!(code, 0, "`{shown}`: {err}");
    out
}

/// A fresh scratch directory for `name`.
fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("fedtopo-files-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// An experiment file over aws-gaia: `extra` TOML after the grid.
fn experiment(dir: &Path, name: &str, grid: &str, extra: &str) -> String {
    let text = format!(
        "name = \"{name}\"\nkind = \"compare\"\n{extra}\n[grid]\nunderlay = [\"aws-gaia\"]\n{grid}\n"
    );
    let file = format!("{name}.toml");
    std::fs::write(dir.join(&file), text).unwrap();
    file
}

// ---- Item 3: no unknown name is ignored ----

#[test]
fn csv_columns_unknown_repeated_or_ambiguous_are_refused() {
    let dir = tmp("csv");
    let w = |f: &str, t: &str| std::fs::write(dir.join(f), t).unwrap();
    w("up-cap.csv", "silo,up,capacity\nTokyo,1G,2G\n");
    w("dwn.csv", "silo,up,dwn\nTokyo,1G,2G\n");
    w("twice.csv", "silo,capacity,Capacity\nTokyo,1G,2G\n");
    w("silos.csv", "silo,compute_ms,compute\nTokyo,1,2\n");
    w("links.csv", "a,b,latency_ms,latency_ms\n0,1,2,3\n");
    for (opt, file, expect) in [
        (
            "--access-csv",
            "up-cap.csv",
            &[
                "up-cap.csv:1:",
                "`capacity` (both directions) or `up` and `down`, not both",
            ][..],
        ),
        (
            "--access-csv",
            "dwn.csv",
            &[
                "dwn.csv:1:",
                "unknown column `dwn` (column 3)",
                "`silo`, `up`, `down` or `capacity`",
            ],
        ),
        (
            "--access-csv",
            "twice.csv",
            &[
                "twice.csv:1:",
                "`Capacity` is named twice (columns 2 and 3)",
            ],
        ),
        (
            "--silos-csv",
            "silos.csv",
            &["silos.csv:1:", "unknown column `compute`", "`compute_ms`"],
        ),
        (
            "--links-csv",
            "links.csv",
            &["links.csv:1:", "`latency_ms` is named twice"],
        ),
    ] {
        refused_in(&dir, &["compare", "aws-gaia", opt, file], expect);
    }
    // The accepted forms still work.
    w("ok.csv", "silo,up,down\nTokyo,1G,2G\n");
    works_in(&dir, &["compare", "aws-gaia", "--access-csv", "ok.csv"]);
}

#[test]
fn overlay_files_refuse_unknown_keys_and_ambiguity() {
    let dir = tmp("overlay");
    let json = works_in(&dir, &["overlay", "ring", "aws-gaia", "--format", "json"]);
    let doc: serde_json::Value = serde_json::from_str(&json).unwrap();
    let write = |name: &str, v: &serde_json::Value| {
        std::fs::write(dir.join(name), serde_json::to_string(v).unwrap()).unwrap();
        format!("file:{name}")
    };
    let plain = write("ring.json", &doc);
    works_in(&dir, &["compare", "aws-gaia", "--overlays", &plain]);
    let mut d = doc.clone();
    let directed = d.as_object_mut().unwrap().remove("directed").unwrap();
    d["Directed"] = directed;
    let f = write("directed.json", &d);
    refused_in(
        &dir,
        &["compare", "aws-gaia", "--overlays", &f],
        &[
            "directed.json",
            "unknown key `Directed`",
            "`directed`, `multigraph`",
        ],
    );
    let mut d = doc.clone();
    d["edges"] = d["links"].clone();
    let f = write("both.json", &d);
    refused_in(
        &dir,
        &["compare", "aws-gaia", "--overlays", &f],
        &["both.json", "both `links` and `edges`", "ambiguous"],
    );
    let mut d = doc.clone();
    d["links"][0]["Weight"] = serde_json::json!(0.5);
    let f = write("weight.json", &d);
    refused_in(
        &dir,
        &["compare", "aws-gaia", "--overlays", &f],
        &[
            "weight.json",
            "links[0]: key `Weight` is not read",
            "`weight`",
        ],
    );
    // CSV: a third column is weights only under a `weight` header.
    let labels: Vec<String> = doc["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["id"].as_str().unwrap().to_string())
        .collect();
    let rows: String = (0..labels.len())
        .map(|i| format!("{},{},7\n", labels[i], labels[(i + 1) % labels.len()]))
        .collect();
    for (name, head, expect) in [
        (
            "latency.csv",
            "src,dst,latency\n",
            &["latency.csv:1", "unknown column `latency` (column 3)"][..],
        ),
        (
            "bare.csv",
            "",
            &[
                "bare.csv:1",
                "third column is read as consensus weights only under a header",
            ],
        ),
        (
            "dup.csv",
            "src,src,weight\n",
            &["dup.csv:1", "`src` is named twice"],
        ),
    ] {
        std::fs::write(dir.join(name), format!("{head}{rows}")).unwrap();
        refused_in(
            &dir,
            &["compare", "aws-gaia", "--overlays", &format!("file:{name}")],
            expect,
        );
    }
    std::fs::write(dir.join("weighted.csv"), format!("src,dst,weight\n{rows}")).unwrap();
    works_in(
        &dir,
        &["compare", "aws-gaia", "--overlays", "file:weighted.csv"],
    );
}

#[test]
fn experiment_names_are_checked() {
    let dir = tmp("names");
    let pubfile = |name: &str, text: &str| std::fs::write(dir.join(name), text).unwrap();
    pubfile("misspelled.csv", "overlai,published_ms\nring,100\n");
    pubfile("twice.csv", "overlay,published_ms\nring,100\nring,120\n");
    pubfile("both.csv", "overlay,published_ms,published\nring,100,1\n");
    pubfile("none.csv", "published_ms\n100\n");
    let grid = "overlay = [\"star\", \"ring\"]";
    for (name, expect) in [
        (
            "misspelled",
            &[
                "misspelled.csv:1:",
                "unknown column `overlai`",
                "`published_ms`, `published`, `underlay`, `overlay`",
            ][..],
        ),
        (
            "twice",
            &["twice.csv:3:", "the same overlay = `ring` as line 2"],
        ),
        ("both", &["both.csv:1:", "ambiguous"]),
        ("none", &["none.csv:1:", "no column to join on"]),
    ] {
        let f = experiment(&dir, name, grid, &format!("published = \"{name}.csv\""));
        let out = dir.join(format!("{name}-out"));
        refused_in(&dir, &["run", &f, "--out", out.to_str().unwrap()], expect);
    }
    // A published CSV that joins on an axis works.
    pubfile("good.csv", "# a comment\noverlay,published_ms\nring,100\n");
    let f = experiment(&dir, "good", grid, "published = \"good.csv\"");
    works_in(&dir, &["run", &f, "--out", "good-out"]);
    let results = std::fs::read_to_string(dir.join("good-out/results.csv")).unwrap();
    assert!(results
        .lines()
        .next()
        .unwrap()
        .ends_with("published_ms,relative_error"));
    // [[ratio]] columns may not take an axis', another ratio's or a
    // result column's name.
    for (name, column, expect) in [
        (
            "ratio-axis",
            "overlay",
            "ratio column `overlay` is already a grid axis",
        ),
        (
            "ratio-result",
            "cycle_time_ms",
            "ratio column `cycle_time_ms` is already a result column",
        ),
    ] {
        let ratio = format!(
            "[[ratio]]\ncolumn = \"{column}\"\nof = \"cycle_time_ms\"\nbaseline = {{ overlay = \"ring\" }}"
        );
        let f = experiment(&dir, name, &format!("{grid}\n{ratio}"), "");
        refused_in(
            &dir,
            &["run", &f, "--out", &format!("{name}-out")],
            &[expect],
        );
    }
    let ratio =
        "[[ratio]]\ncolumn = \"x\"\nof = \"cycle_time_ms\"\nbaseline = { overlay = \"ring\" }";
    let f = experiment(
        &dir,
        "ratio-twice",
        &format!("{grid}\n{ratio}\n{ratio}"),
        "",
    );
    refused_in(
        &dir,
        &["run", &f],
        &["ratio column `x` is already another ratio's column"],
    );
    // A value listed twice on an axis.
    let f = experiment(
        &dir,
        "dup-axis",
        "overlay = [\"ring\", \"star\", \"ring\"]",
        "",
    );
    refused_in(
        &dir,
        &["run", &f],
        &["grid axis `overlay` lists `ring` twice (values 1 and 3)"],
    );
}

// ---- Item 4: outputs stay where the user said ----

#[test]
fn plot_files_stay_inside_out_and_spare_the_results() {
    let dir = tmp("plots");
    let outside = dir.join("outside.svg");
    let plot = |file: &str| {
        format!(
            "overlay = [\"star\", \"ring\"]\naccess = [\"1G\", \"10G\"]\n[[plot]]\nfile = {file:?}\nx = \"access\"\ny = \"cycle_time_ms\"\nseries = \"overlay\""
        )
    };
    let abs = outside.to_str().unwrap().to_string();
    for (name, file, expect) in [
        ("absolute", abs.as_str(), "is an absolute path"),
        ("parent", "../outside.svg", "contains `..`"),
        ("sneaky", "a/../../outside.svg", "contains `..`"),
        (
            "results",
            "results.csv",
            "would overwrite the results file results.csv",
        ),
        (
            "results-case",
            "./Results.MD",
            "would overwrite the results file results.md",
        ),
        ("store", "jobs/x.svg", "is in jobs/"),
    ] {
        let f = experiment(&dir, name, &plot(file), "");
        refused_in(
            &dir,
            &["run", &f, "--out", &format!("{name}-out")],
            &[&format!("{name}.toml"), expect],
        );
        assert!(!outside.exists(), "{name}: wrote outside --out");
        assert!(
            !dir.join(format!("{name}-out/results.csv")).exists(),
            "{name}: refused only after running"
        );
    }
    // Two plots into one file.
    let two = format!(
        "{}\n[[plot]]\nfile = \"p.svg\"\nx = \"access\"\ny = \"rounds_per_s\"\nseries = \"overlay\"",
        plot("p.svg")
    );
    let f = experiment(&dir, "two-plots", &two, "");
    refused_in(&dir, &["run", &f], &["would overwrite plot `p.svg`"]);
    // A sub-folder is fine; a symbolic link out of --out is refused.
    let f = experiment(&dir, "sub", &plot("figs/p.svg"), "");
    works_in(&dir, &["run", &f, "--out", "sub-out"]);
    assert!(dir.join("sub-out/figs/p.svg").is_file());
    #[cfg(unix)]
    {
        std::fs::create_dir_all(dir.join("link-out")).unwrap();
        std::fs::create_dir_all(dir.join("elsewhere")).unwrap();
        std::os::unix::fs::symlink(dir.join("elsewhere"), dir.join("link-out/figs")).unwrap();
        let f = experiment(&dir, "link", &plot("figs/p.svg"), "");
        refused_in(
            &dir,
            &["run", &f, "--out", "link-out"],
            &["output file `figs/p.svg`", "outside the output directory"],
        );
        assert!(!dir.join("elsewhere/p.svg").exists());
    }
}

#[cfg(target_os = "linux")]
#[test]
fn stdout_write_errors_are_reported() {
    let dir = tmp("stdout");
    // A full disk: an error line, exit 2 (was a panic, exit 101).
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_fedtopo"));
    cmd.args(["compare", "aws-gaia"]).stdout(
        std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap(),
    );
    let (code, _, err) = finish(cmd, "fedtopo compare aws-gaia > /dev/full");
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("error: cannot write to stdout: No space left on device"),
        "{err}"
    );
    // Stdout closed at start (`>&-`): an error, exit 2 (was exit 0 with
    // the output lost).
    let mut cmd = Command::new("sh");
    cmd.args([
        "-c",
        "exec \"$0\" compare aws-gaia >&-",
        env!("CARGO_BIN_EXE_fedtopo"),
    ])
    .current_dir(&dir);
    let (code, _, err) = finish(cmd, "fedtopo compare aws-gaia >&-");
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("error: cannot write to stdout") && err.contains("closed"),
        "{err}"
    );
    // `>/dev/null` is not a closed stdout.
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_fedtopo"));
    cmd.args(["compare", "aws-gaia"]).stdout(Stdio::null());
    let (code, _, err) = finish(cmd, "fedtopo compare aws-gaia > /dev/null");
    assert_eq!(code, 0, "{err}");
    // A pipe whose reader has gone: quiet, exit 141 (128 + SIGPIPE).
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_fedtopo"));
    cmd.args(["compare", "aws-gaia"]).stdout(writer);
    let (code, _, err) = finish(cmd, "fedtopo compare aws-gaia | (closed)");
    assert_eq!(code, 141, "{err}");
    assert!(!err.contains("error") && !err.contains("panicked"), "{err}");
    // Every stdout path, not only compare's: help pages, the underlay
    // listing, an overlay export, a mixing table.
    for args in [
        &["--help"][..],
        &["compare", "--help"],
        &["underlay", "list"],
        &["overlay", "ring", "aws-gaia"],
        &["mixing", "aws-gaia", "--overlays", "ring"],
    ] {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_fedtopo"));
        cmd.args(args).stdout(
            std::fs::OpenOptions::new()
                .write(true)
                .open("/dev/full")
                .unwrap(),
        );
        let (code, _, err) = finish(cmd, &format!("fedtopo {} > /dev/full", args.join(" ")));
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(err.contains("cannot write to stdout"), "{args:?}: {err}");
    }
}

// ---- Item 5: only regular files are read ----

/// A FIFO at `dir/name` (nobody ever writes to it: reading it would block
/// forever).
#[cfg(unix)]
fn fifo(dir: &Path, name: &str) -> PathBuf {
    let p = dir.join(name);
    let ok = Command::new("mkfifo")
        .arg(&p)
        .status()
        .expect("mkfifo runs");
    assert!(ok.success(), "mkfifo {}", p.display());
    p
}

#[cfg(unix)]
#[test]
fn fifos_are_refused_at_once_wherever_an_input_is_read() {
    let dir = tmp("fifo");
    for name in [
        "u.gml", "o.gml", "o.json", "o.csv", "o", "a.csv", "s.csv", "l.csv", "e.toml", "c.csv",
        "p.csv",
    ] {
        fifo(&dir, name);
    }
    let expect = "not a regular file";
    for args in [
        &["underlay", "info", "u.gml"][..],
        &["compare", "u.gml"],
        &["compare", "aws-gaia", "--overlays", "file:o.gml"],
        &["compare", "aws-gaia", "--overlays", "file:o.json"],
        &["compare", "aws-gaia", "--overlays", "file:o.csv"],
        &["mixing", "aws-gaia", "--overlays", "file:o"],
        &["compare", "aws-gaia", "--access-csv", "a.csv"],
        &["compare", "aws-gaia", "--silos-csv", "s.csv"],
        &["compare", "aws-gaia", "--links-csv", "l.csv"],
        &["run", "e.toml"],
        &["design", "aws-gaia", "--calibrate", "c.csv"],
    ] {
        let file = args
            .iter()
            .map(|a| a.trim_start_matches("file:"))
            .find(|a| dir.join(a).exists())
            .unwrap();
        refused_in(&dir, args, &[file, expect]);
    }
    // In an experiment: a published CSV, a CSV axis, an overlay file.
    let f = experiment(&dir, "pub", "overlay = [\"ring\"]", "published = \"p.csv\"");
    refused_in(&dir, &["run", &f, "--out", "pub-out"], &["p.csv", expect]);
    let f = experiment(&dir, "axis", "access_csv = [\"a.csv\"]", "");
    refused_in(&dir, &["run", &f, "--out", "axis-out"], &["a.csv", expect]);
    let f = experiment(&dir, "file", "overlay = [\"file:o.json\"]", "");
    refused_in(&dir, &["run", &f, "--out", "file-out"], &["o.json", expect]);
    // A job file of a run store replaced by a FIFO.
    let f = experiment(&dir, "store", "overlay = [\"star\", \"ring\"]", "");
    works_in(&dir, &["run", &f, "--out", "store-out"]);
    let job = std::fs::read_dir(dir.join("store-out/jobs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "json"))
        .expect("a job file");
    std::fs::remove_file(&job).unwrap();
    let name = job.file_name().unwrap().to_string_lossy().into_owned();
    fifo(job.parent().unwrap(), &name);
    refused_in(&dir, &["run", &f, "--out", "store-out"], &[&name, expect]);
    refused_in(
        &dir,
        &["merge", &f, "--from", "store-out", "--out", "merged"],
        &[&name, expect],
    );
}
