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
            err.contains("built without the `train` feature: see README (section \"Training on the simulated network (feature `train`)\""),
            "{args:?}: {err}"
        );
        assert!(!err.contains("tornado"), "{args:?}: {err}");
    }
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    assert!(
        readme.contains("\n## Training on the simulated network (feature `train`)\n"),
        "the section the message names exists"
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
            assert!(!o.status.success(), "{command} --overlays `{list}` succeeded");
            assert!(err.contains("--overlays"), "{command} `{list}`: {err}");
            assert!(o.stdout.is_empty(), "{command} `{list}` printed a table");
        }
    }
}
