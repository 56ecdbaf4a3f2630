//! Guard rails of the CLI (issue 26 item 6, issue 25 item 8): tables fit
//! the terminal, a bare bandwidth below 1 kbit/s warns, `overlay` does not
//! flood a terminal, `failures` names its probability, long work is
//! bounded. A terminal is simulated with util-linux `script` (a pseudo
//! terminal) when it is installed; the decisions themselves are unit-tested
//! in `report::table`, `cli::overlay` and `progress::line`.

mod common;

use std::process::{Command, Output};

use common::fedtopo;

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Runs `fedtopo args` on a pseudo terminal (stdout and stderr both go to
/// it; `COLUMNS=100`): the captured text, or `None` without `script`.
fn on_terminal(args: &str) -> Option<(bool, String)> {
    let probe = Command::new("script").arg("--version").output();
    if probe.map_or(true, |o| !o.status.success()) {
        eprintln!("skipping the terminal case: util-linux `script` not found");
        return None;
    }
    let cmd = format!("{} {args}", env!("CARGO_BIN_EXE_fedtopo"));
    let o = Command::new("script")
        .args(["-qec", &cmd, "/dev/null"])
        .env("COLUMNS", "100")
        .env_remove("LINES")
        .output()
        .expect("script runs");
    Some((o.status.success(), stdout(&o).replace('\r', "")))
}

fn widest(text: &str) -> usize {
    text.lines().map(|l| l.chars().count()).max().unwrap_or(0)
}

#[test]
fn tables_fit_a_100_column_terminal_and_stay_whole_in_a_pipe() {
    // A pipe keeps the full table (143 columns): files and scripts get
    // every character.
    let piped = fedtopo(&["compare"]);
    assert!(piped.status.success(), "{}", stderr(&piped));
    assert!(widest(&stdout(&piped)) > 100, "{}", stdout(&piped));
    assert!(!stdout(&piped).contains('…'));
    let Some((ok, text)) = on_terminal("compare") else {
        return;
    };
    assert!(ok, "{text}");
    let table: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with(['│', '┌', '└', '╞']))
        .collect();
    assert_eq!(table.len(), 9, "{text}");
    assert!(table.iter().all(|l| l.chars().count() <= 100), "{text}");
    assert!(text.contains("Miami -> Jacksonv…"), "{text}");
    assert!(text.contains("--wide prints it whole"), "{text}");
    // The numbers are whole.
    for cell in ["265.5", "11.941", "3.34x"] {
        assert!(text.contains(cell), "{cell}: {text}");
    }
    let (ok, wide) = on_terminal("compare --wide").expect("script ran above");
    assert!(ok && widest(&wide) > 100 && !wide.contains('…'), "{wide}");
    // Wider tables too: mixing's nine columns.
    let (ok, mixing) = on_terminal("mixing --overlays star,mst,ring").expect("script");
    assert!(ok, "{mixing}");
    let rows: Vec<&str> = mixing.lines().filter(|l| l.starts_with('│')).collect();
    assert!(rows.iter().all(|l| l.chars().count() <= 100), "{mixing}");
}

#[test]
fn overlay_refuses_more_than_a_screenful_on_a_terminal() {
    let Some((ok, text)) = on_terminal("overlay ring") else {
        return;
    };
    assert!(!ok, "{text}");
    assert!(
        text.contains("not printing") && text.contains("-o FILE") && text.contains("-o -"),
        "{text}"
    );
    assert!(!text.contains("graph ["), "{text}");
    let (ok, forced) = on_terminal("overlay ring -o -").expect("script ran above");
    assert!(ok && forced.contains("graph ["), "{forced}");
    // A pipe gets it all, as before.
    let piped = fedtopo(&["overlay", "ring"]);
    assert!(piped.status.success() && stdout(&piped).starts_with("graph ["));
}

#[test]
fn a_bare_bandwidth_below_1_kbit_warns() {
    let o = fedtopo(&["compare", "--overlays", "ring", "--access", "10"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("warning: --access `10` is 10 bit/s") && err.contains("did you mean 10G"),
        "{err}"
    );
    let o = fedtopo(&[
        "compare",
        "--overlays",
        "ring",
        "--core-capacity",
        "100",
        "--default-core-capacity",
        "5",
    ]);
    let err = stderr(&o);
    assert!(err.contains("warning: --core-capacity `100`"), "{err}");
    assert!(
        err.contains("warning: --default-core-capacity `5`"),
        "{err}"
    );
    for quiet in ["10G", "10bps", "1000"] {
        let o = fedtopo(&["compare", "--overlays", "ring", "--access", quiet]);
        assert!(!stderr(&o).contains("warning"), "{quiet}: {}", stderr(&o));
    }
}

#[test]
fn failures_name_the_probability_and_the_legacy_spelling_warns() {
    let run = |f: &str| {
        fedtopo(&[
            "simulate",
            "--overlays",
            "ring",
            "--rounds",
            "20",
            "--failures",
            f,
            "--format",
            "csv",
        ])
    };
    let down = run("node-down:0.1");
    let up = run("node-up:0.9");
    let legacy = run("node:0.9");
    for o in [&down, &up, &legacy] {
        assert!(o.status.success(), "{}", stderr(o));
    }
    // Same failures, named as written.
    let strip = |o: &Output| {
        stdout(o)
            .replace("node-down:0.1", "F")
            .replace("node-up:0.9", "F")
    };
    assert_eq!(strip(&down), strip(&up));
    assert!(
        stdout(&down).contains("ring/node-down:0.1"),
        "{}",
        stdout(&down)
    );
    assert!(!stderr(&down).contains("warning") && !stderr(&up).contains("warning"));
    let err = stderr(&legacy);
    assert!(
        err.contains(
            "warning: --failures `node:0.9` reads 0.9 as the probability that a node is UP"
        ),
        "{err}"
    );
    let bad = run("node-down:1");
    assert!(!bad.status.success());
    assert!(stderr(&bad).contains("[0, 1)"), "{}", stderr(&bad));
}

#[test]
fn long_work_is_bounded() {
    // augment: the work grows as silos^5; refused above 200 unless forced.
    let o = fedtopo(&["augment", "aws-gaia", "--silos", "201"]);
    assert!(!o.status.success());
    let err = stderr(&o);
    assert!(
        err.contains("bound of 200 silos") && err.contains("--force"),
        "{err}"
    );
    // mixing: fastest-mixing weights beyond the work bound are skipped with
    // a note naming the iterations that fit.
    let o = fedtopo(&["mixing", "aws-gaia", "--silos", "400", "--overlays", "mst"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("skipped: too large"), "{}", stdout(&o));
    assert!(
        stderr(&o).contains("--iterations 843 or fewer run within it"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn grids_above_100000_points_are_refused_unless_allowed() {
    let dir = std::env::temp_dir().join(format!("fedtopo-grid-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let toml = dir.join("experiment.toml");
    let steps: Vec<String> = (1..=1001).map(|i| i.to_string()).collect();
    let access: Vec<String> = (1..=100).map(|i| format!("\"{i}G\"")).collect();
    std::fs::write(
        &toml,
        format!(
            "name = \"big\"\nkind = \"compare\"\n[grid]\nunderlay = [\"aws-gaia\"]\noverlay = [\"ring\"]\naccess = [{}]\nlocal_steps = [{}]\n",
            access.join(","),
            steps.join(",")
        ),
    )
    .unwrap();
    let o = fedtopo(&["run", toml.to_str().unwrap()]);
    assert!(!o.status.success());
    let err = stderr(&o);
    assert!(
        err.contains("the grid has 100100 points (100 access x 1001 local_steps)")
            && err.contains("--allow-large-grid"),
        "{err}"
    );
    // Allowed: one shard of one job, to keep the test short.
    let out = dir.join("out");
    let o = fedtopo(&[
        "run",
        toml.to_str().unwrap(),
        "--allow-large-grid",
        "--shard",
        "0/1000000",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn experiment_files_get_the_same_warnings() {
    let dir = std::env::temp_dir().join(format!("fedtopo-warn-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let toml = dir.join("experiment.toml");
    std::fs::write(
        &toml,
        "name = \"w\"\nkind = \"simulate\"\n[grid]\nunderlay = [\"aws-gaia\"]\noverlay = [\"ring\"]\n\
         access = [\"10\", \"10G\"]\nrounds = [5]\nfailures = [\"node:0.9\", \"node-down:0.1\"]\n",
    )
    .unwrap();
    let out = dir.join("out");
    let o = fedtopo(&[
        "run",
        toml.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("note: access = `10` is 10 bit/s"), "{err}");
    assert!(!err.contains("`10G`"), "{err}");
    assert!(
        err.contains("note: failures = `node:0.9` reads 0.9"),
        "{err}"
    );
    assert!(!err.contains("`node-down:0.1` reads"), "{err}");
    // The explicit spellings mean what they say: node:0.9 (up) and
    // node-down:0.1 give the same times.
    let csv = std::fs::read_to_string(out.join("results.csv")).unwrap();
    let rows: Vec<&str> = csv.lines().filter(|l| l.contains(",10G,")).collect();
    assert_eq!(rows.len(), 2, "{csv}");
    let strip = |l: &str| l.replace("node:0.9", "F").replace("node-down:0.1", "F");
    assert_eq!(strip(rows[0]), strip(rows[1]), "{csv}");
    std::fs::remove_dir_all(&dir).ok();
}
