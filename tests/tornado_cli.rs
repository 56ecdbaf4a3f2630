//! End-to-end runs of `fedtopo tornado`.

use std::process::{Command, Output};

fn fedtopo(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_fedtopo"))
        .args(args)
        .output()
        .expect("binary runs")
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).expect("utf-8")
}

#[test]
fn time_lists_every_method_deterministically() {
    let args = [
        "tornado",
        "time",
        "--steps",
        "200",
        "--network",
        "flow",
        "--seed",
        "3",
    ];
    let a = fedtopo(&args);
    assert!(a.status.success(), "{}", String::from_utf8_lossy(&a.stderr));
    let out = stdout(&a);
    for m in [
        "fedavg",
        "hierfavg",
        "astraea",
        "mm-psgd",
        "tornado",
        "tornadoes",
        "ifca",
        "semicyclic",
        "tornado-rings",
    ] {
        assert!(out.contains(m), "{m} missing:\n{out}");
    }
    assert_eq!(out, stdout(&fedtopo(&args)));
}

#[test]
fn clustering_and_learn_run() {
    let o = fedtopo(&["tornado", "clustering", "--seeds", "3"]);
    assert!(o.status.success());
    assert!(stdout(&o).contains("MNIST"));
    let o = fedtopo(&[
        "tornado",
        "learn",
        "--nodes",
        "20",
        "--steps",
        "200",
        "--methods",
        "fedavg,tornadoes",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(stdout(&o).contains("tornadoes"));
}

#[test]
fn bad_input_is_refused_clearly() {
    let o = fedtopo(&["tornado", "time", "--methods", "fedsgd"]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("unknown method `fedsgd`"));
    let o = fedtopo(&["tornado", "time", "--steps", "0"]);
    assert!(!o.status.success());
    let o = fedtopo(&["tornado", "learn", "--nodes", "1"]);
    assert!(!o.status.success());
}
