//! The friction a new user meets (issue 15 item 7): messages for missing
//! features, empty overlay lists, OS errors printed once, examples on every
//! help page, progress lines off a terminal.

mod common;

use common::fedtopo;
use std::process::Output;

fn stderr(o: &Output) -> String {
    String::from_utf8(o.stderr.clone()).expect("utf-8")
}

#[cfg(not(feature = "train"))]
#[test]
fn train_commands_without_the_feature_say_how_to_get_it() {
    let calls: [&[&str]; 5] = [
        &["train"],
        &["train", "--overlays", "ring", "--rounds", "3"],
        &["train", "--help"],
        &["reproduce", "dcliques-convergence"],
        &["reproduce", "dcliques-convergence", "--out", "x", "extra"],
    ];
    for args in calls {
        let o = fedtopo(args);
        let err = stderr(&o);
        assert!(!o.status.success(), "{args:?} succeeded");
        assert!(
            err.contains("built without the `train` feature: see docs/train.md (\"Training on the simulated network (feature `train`)\""),
            "{args:?}: {err}"
        );
        assert!(!err.contains("tornado"), "{args:?}: {err}");
    }
    let page =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/train.md")).unwrap();
    assert!(
        page.starts_with("# Training on the simulated network (feature `train`)\n"),
        "the page the message names exists, with that title"
    );
}

#[test]
fn the_os_error_is_printed_once() {
    let dir = std::env::temp_dir().join(format!("fedtopo-friction-{}", std::process::id()));
    let missing = dir.join("nope");
    let m = |ext: &str| missing.with_extension(ext).to_string_lossy().into_owned();
    let (gml, csv, toml) = (m("gml"), m("csv"), m("toml"));
    let overlay = format!("file:{gml}");
    let out = format!("{}/sub", m("d"));
    let calls: Vec<Vec<&str>> = vec![
        vec!["underlay", "info", &gml],
        vec!["compare", "--silos-csv", &csv],
        vec!["compare", "--access-csv", &csv],
        vec!["compare", "--links-csv", &csv],
        vec!["run", &toml],
        vec!["compare", "--overlays", &overlay],
        vec!["overlay", &overlay],
        vec!["compare", "--export-dir", &out],
    ];
    // --export-dir: a directory under a missing one is created, so make the
    // parent a file.
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(m("d"), "a file").unwrap();
    for args in calls {
        let o = fedtopo(&args);
        let err = stderr(&o);
        assert!(!o.status.success(), "{args:?} succeeded");
        let line = err.lines().find(|l| l.starts_with("error:")).unwrap_or("");
        let os = ["No such file or directory", "Not a directory"]
            .iter()
            .map(|t| line.matches(t).count())
            .sum::<usize>();
        assert_eq!(os, 1, "{args:?}: {err}");
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn empty_overlay_lists_are_an_error_naming_the_option() {
    for command in ["compare", "simulate"] {
        for list in ["", "ring,,star", "ring,"] {
            let o = fedtopo(&[command, "aws-gaia", "--overlays", list]);
            let err = stderr(&o);
            assert!(
                !o.status.success(),
                "{command} --overlays `{list}` succeeded"
            );
            assert!(err.contains("--overlays"), "{command} `{list}`: {err}");
            assert!(o.stdout.is_empty(), "{command} `{list}` printed a table");
        }
    }
}

/// Runs `fedtopo` with the progress interval `interval_ms` (stderr is a
/// pipe here, so progress comes as lines).
fn with_interval(args: &[&str], interval_ms: &str) -> Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_fedtopo"))
        .args(args)
        .env("FEDTOPO_PROGRESS_INTERVAL_MS", interval_ms)
        .output()
        .expect("binary runs")
}

#[test]
fn simulate_prints_progress_lines_off_a_terminal_and_never_on_stdout() {
    let args = [
        "simulate",
        "aws-gaia",
        "--rounds",
        "4",
        "--overlays",
        "ring,star",
    ];
    let every = with_interval(&args, "0");
    let never = with_interval(&args, "3600000");
    assert!(every.status.success(), "{}", stderr(&every));
    assert_eq!(every.stdout, never.stdout, "progress must not touch stdout");
    let lines: Vec<String> = stderr(&every)
        .lines()
        .filter(|l| l.starts_with("simulate: "))
        .map(str::to_string)
        .collect();
    assert!(lines.len() >= 8, "{lines:#?}");
    assert!(
        lines[0].starts_with("simulate: 1/8 rounds done (ring), "),
        "{lines:#?}"
    );
    assert!(
        lines.iter().all(|l| l.contains(" s elapsed, eta ")),
        "{lines:#?}"
    );
    assert!(lines
        .last()
        .unwrap()
        .starts_with("simulate: 8/8 rounds done (star)"));
    assert!(
        !stderr(&never).contains("rounds done"),
        "{}",
        stderr(&never)
    );
}

#[test]
fn run_prints_progress_lines_off_a_terminal() {
    let dir = std::env::temp_dir().join(format!("fedtopo-progress-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let toml = dir.join("experiment.toml");
    std::fs::write(
        &toml,
        "name = \"p\"\nkind = \"compare\"\n[grid]\nunderlay = [\"aws-gaia\"]\noverlay = [\"ring\", \"star\", \"mst\"]\n",
    )
    .unwrap();
    let o = with_interval(&["run", toml.to_str().unwrap()], "0");
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    for i in 1..=3 {
        assert!(err.contains(&format!("run p: {i}/3 jobs done, ")), "{err}");
    }
    assert!(!String::from_utf8_lossy(&o.stdout).contains("jobs done"));
    std::fs::remove_dir_all(&dir).ok();
}

/// Every help page: (command path, page text), the top level first, found
/// by reading the `Commands:` section of each page (`help` left out).
fn help_pages() -> Vec<(Vec<String>, String)> {
    let mut pages = Vec::new();
    let mut todo: Vec<Vec<String>> = vec![Vec::new()];
    while let Some(path) = todo.pop() {
        let mut args: Vec<&str> = path.iter().map(String::as_str).collect();
        args.push("--help");
        let o = fedtopo(&args);
        assert!(o.status.success(), "{args:?}: {}", stderr(&o));
        let page = String::from_utf8(o.stdout).expect("utf-8");
        let mut in_commands = false;
        for line in page.lines() {
            if line == "Commands:" {
                in_commands = true;
            } else if in_commands && line.starts_with("  ") {
                let name = line.split_whitespace().next().unwrap_or("");
                if name != "help" && !line.starts_with("   ") {
                    let mut sub = path.clone();
                    sub.push(name.to_string());
                    todo.push(sub);
                }
            } else if in_commands && !line.starts_with(' ') {
                in_commands = false;
            }
        }
        pages.push((path, page));
    }
    pages
}

/// The example command lines of a help page (after `Examples:`, comments cut).
fn examples(page: &str) -> Vec<Vec<String>> {
    let Some((_, tail)) = page.split_once("\nExamples:\n") else {
        return Vec::new();
    };
    tail.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let command = l.split(" # ").next().unwrap_or(l);
            command.split_whitespace().map(str::to_string).collect()
        })
        .collect()
}

#[test]
fn every_help_page_ends_with_examples() {
    let pages = help_pages();
    assert!(pages.len() >= 16, "{} pages", pages.len());
    for (path, page) in &pages {
        assert!(
            page.contains("\nExamples:\n"),
            "`fedtopo {}` has no examples:\n{page}",
            path.join(" ")
        );
        let (_, tail) = page.split_once("\nExamples:\n").unwrap();
        let lines: Vec<&str> = tail.lines().filter(|l| !l.trim().is_empty()).collect();
        assert!(
            (2..=3).contains(&lines.len()),
            "`fedtopo {}`: {} examples",
            path.join(" "),
            lines.len()
        );
        for l in lines {
            assert!(
                l.starts_with("  fedtopo "),
                "`fedtopo {}`: `{l}` is not an example (examples must end the page)",
                path.join(" ")
            );
        }
    }
}

/// The examples run as written from the repository root (files they write go
/// to a scratch directory instead of /tmp), with nothing outside the
/// repository: the paper's underlays are the copies in `underlays/paper/`,
/// so `FEDTOPO_SHARED` is removed from their environment. Left out: the ones
/// that rewrite committed outputs (`# rewrites ...`).
#[test]
fn help_examples_run() {
    let scratch = std::env::temp_dir().join(format!("fedtopo-examples-{}", std::process::id()));
    std::fs::create_dir_all(&scratch).unwrap();
    let scratch_prefix = format!("{}/", scratch.display());
    let mut seen = std::collections::BTreeSet::new();
    let mut ran = 0;
    for (_, page) in help_pages() {
        let (_, tail) = page.split_once("\nExamples:\n").unwrap_or(("", ""));
        for (line, args) in tail.lines().zip(examples(&page)) {
            if line.contains("# rewrites") || !seen.insert(args.clone()) {
                continue;
            }
            assert_eq!(args[0], "fedtopo", "{line}");
            let args: Vec<String> = args[1..]
                .iter()
                .map(|a| a.replace("/tmp/", &scratch_prefix))
                .collect();
            let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_fedtopo"));
            cmd.args(&args)
                .current_dir(env!("CARGO_MANIFEST_DIR"))
                .env_remove("FEDTOPO_SHARED");
            let o = cmd.output().expect("binary runs");
            assert!(
                o.status.success(),
                "`{}` failed:\n{}",
                line.trim(),
                stderr(&o)
            );
            ran += 1;
        }
    }
    assert!(ran >= 20, "only {ran} examples ran");
    std::fs::remove_dir_all(&scratch).ok();
}
