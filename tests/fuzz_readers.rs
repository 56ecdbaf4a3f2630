//! Fuzzing every reader of a user file (issue 25, "Measures"): arbitrary
//! bytes and structured mutations of a valid file never panic and never
//! hang; each reader returns `Ok` or a clean error, and what it accepts
//! keeps its invariants (finite, positive capacities; stochastic weights;
//! axis values listed once; plot files inside the output directory).
//!
//! Readers: GML underlays, overlay files (GML, node-link JSON, per-round
//! JSON and CSV, CSV edge lists), per-silo access, silo and link CSVs,
//! network-dynamics traces (`--trace`),
//! experiment TOML (through the library, `PROPTEST_CASES` cases each), and
//! the `design --calibrate` summary CSV (a reader of the binary: through
//! the binary, [`CALIBRATION_CASES`] cases whatever `PROPTEST_CASES` says,
//! each case being a process of ~0.1 s).
//!
//! Every case runs on a worker thread with a deadline ([`DEADLINE`]): a
//! reader that loops fails the test with its input instead of hanging CI.
//!
//! `cargo test --test fuzz_readers` runs proptest's default 256 cases per
//! property; CI runs `PROPTEST_CASES=20000` (see .ci/run for the time).

use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use proptest::prelude::*;

use fedtopo::calibrate::RunLog;
use fedtopo::experiment::spec::{output_path_parts, ExperimentSpec};
use fedtopo::net::access::{AccessLinks, DEFAULT_ACCESS_BPS};
use fedtopo::net::links::LinkOverrides;
use fedtopo::net::placement::SiloPlacement;
use fedtopo::net::silos::SiloOverrides;
use fedtopo::net::underlay::{LoadOptions, Underlay};
use fedtopo::overlay::file::{self, FileOverlay, SiloNames};

/// Longest one reader call may take (they take microseconds to
/// milliseconds; the margin is for a loaded CI machine).
const DEADLINE: Duration = Duration::from_secs(20);

/// Cases of the calibration CSV property (each runs the binary).
const CALIBRATION_CASES: u32 = 64;

/// The built-in aws-gaia underlay (11 routers), loaded once.
fn gaia() -> Arc<Underlay> {
    static U: OnceLock<Arc<Underlay>> = OnceLock::new();
    U.get_or_init(|| {
        Arc::new(
            fedtopo::net::scenario::load_underlay(Some("aws-gaia"), &LoadOptions::default())
                .expect("built-in underlay"),
        )
    })
    .clone()
}

fn labels() -> Vec<String> {
    gaia().routers.iter().map(|r| r.label.clone()).collect()
}

/// Runs `work` on a thread; fails (naming `input`) when it panics or
/// outlives [`DEADLINE`].
fn bounded<T: Send + 'static>(input: &str, work: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(work());
    });
    match rx.recv_timeout(DEADLINE) {
        Ok(v) => v,
        Err(mpsc::RecvTimeoutError::Timeout) => {
            panic!("a reader still runs after {DEADLINE:?} on input {input:?}")
        }
        Err(mpsc::RecvTimeoutError::Disconnected) => {
            panic!("a reader panicked on input {input:?}")
        }
    }
}

/// A scratch file path for this thread (overlay files are read by path:
/// the format comes from the extension).
fn scratch(ext: &str) -> PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    let dir = DIR.get_or_init(|| {
        let d = std::env::temp_dir().join(format!("fedtopo-fuzz-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        d
    });
    let thread = format!("{:?}", std::thread::current().id())
        .chars()
        .filter(char::is_ascii_digit)
        .collect::<String>();
    dir.join(format!("t{thread}.{ext}"))
}

// ---- Seeds: one valid file per reader ----

fn ring_arcs() -> Vec<(String, String)> {
    let l = labels();
    (0..l.len())
        .map(|i| (l[i].clone(), l[(i + 1) % l.len()].clone()))
        .collect()
}

fn seed_overlay_csv() -> String {
    let mut s = String::from("# undirected\nsrc,dst,weight\n");
    for (a, b) in ring_arcs() {
        s += &format!("{a},{b},0.25\n");
    }
    s
}

fn seed_per_round_csv() -> String {
    let mut s = String::from("round,src,dst\n");
    for (k, (a, b)) in ring_arcs().into_iter().enumerate() {
        s += &format!("{},{a},{b}\n{},{b},{a}\n", k % 2, (k + 1) % 2);
    }
    s
}

fn seed_node_link_json() -> String {
    let nodes: Vec<String> = labels()
        .iter()
        .map(|l| format!("{{\"id\": \"{l}\"}}"))
        .collect();
    let links: Vec<String> = ring_arcs()
        .iter()
        .map(|(a, b)| format!("{{\"source\": \"{a}\", \"target\": \"{b}\", \"weight\": 0.5}}"))
        .collect();
    format!(
        "{{\"directed\": true, \"multigraph\": false, \"graph\": {{}}, \"nodes\": [{}], \"links\": [{}]}}",
        nodes.join(", "),
        links.join(", ")
    )
}

fn seed_per_round_json() -> String {
    let arcs: Vec<String> = ring_arcs()
        .iter()
        .map(|(a, b)| format!("[\"{a}\", \"{b}\"]"))
        .collect();
    let (one, two) = arcs.split_at(arcs.len() / 2);
    format!(
        "{{\"periodic\": true, \"rounds\": [[{}], [{}], [{}]]}}",
        one.join(", "),
        two.join(", "),
        arcs.join(", ")
    )
}

fn seed_overlay_gml() -> String {
    let mut s = String::from("graph [\n  directed 1\n");
    for (i, l) in labels().iter().enumerate() {
        s += &format!("  node [ id {i} label \"{l}\" ]\n");
    }
    let n = labels().len();
    for i in 0..n {
        s += &format!("  edge [ source {i} target {} weight 0.5 ]\n", (i + 1) % n);
    }
    s + "]\n"
}

fn seed_access_csv() -> String {
    let l = labels();
    format!(
        "silo,up,down\n{},100M,1G\n# c\n3,1G,inf\n{},10G,2.5G\n",
        l[5], l[7]
    )
}

fn seed_silos_csv() -> String {
    let l = labels();
    format!(
        "silo,compute_ms,up,down,data\n{},30.5,1G,500M,1200\n{},12,,,300\n",
        l[1], l[2]
    )
}

fn seed_links_csv() -> String {
    let u = gaia();
    let mut s = String::from("a,b,latency_ms,capacity\n");
    for l in u.links.iter().take(3) {
        s += &format!(
            "{},{},6.2,40G\n",
            u.routers[l.a].label, u.routers[l.b].label
        );
    }
    s
}

fn seed_trace_csv() -> String {
    let u = gaia();
    let l = labels();
    let (a, b) = (
        &u.routers[u.links[0].a].label,
        &u.routers[u.links[0].b].label,
    );
    format!(
        "time_s,target,value\n0,up:{},500M\n1.5,access:{},2G\n2,latency:{},3\n\
         3,avail:{},down\n4,avail:{},up\n5,link:{a}|{b},1G\n6,link_latency:{a}|{b},2.5\n",
        l[1], l[2], l[3], l[4], l[4]
    )
}

fn seed_run_log() -> String {
    let l = labels();
    format!(
        "kind,round,from,to,start_ms,end_ms,bits\ncompute,0,{a},,0,25.4,\n\
         transfer,0,{a},{b},25.4,90.5,44961717\ncompute,1,{b},,90.5,100,\n",
        a = l[1],
        b = l[2]
    )
}

const SEED_EXPERIMENT: &str = r#"name = "fuzz"
description = "seed"
kind = "simulate"
published = "published.csv"
metric = "steady_round_ms"
table = ["silos", "cycle_time_ms"]
aggregate = "seed"

[grid]
underlay = ["aws-gaia", "shared:paper/gaia.gml"]
overlay = ["star", "ring", "matcha:budget=0.5"]
access = ["1G", "10G"]
network = ["maxplus", "flow"]
rounds = [40]
seed = [0, 1]
access_csv = ["a.csv"]

[[plot]]
file = "figs/p.svg"
x = "access"
y = "cycle_time_ms"
series = "overlay,network"
filter = { network = "flow" }

[[ratio]]
column = "over_ring"
of = "cycle_time_ms"
baseline = { overlay = "ring" }
"#;

const SEED_CALIBRATION: &str = "overlay,rounds_to_target,time_to_target_ms,ms_per_round\n\
ring,12,1500,125\nmst,20,1800,90\nfile:out/ring-opt.gml,9,1000,111\n";

// ---- Mutations ----

/// One edit of a text.
#[derive(Debug, Clone)]
enum Edit {
    /// Delete `len` bytes at relative position `at` (0..1).
    Delete(f64, usize),
    /// Insert a token at relative position `at`.
    Insert(f64, String),
    /// Repeat the line at relative position `at`.
    DuplicateLine(f64),
    /// Swap two lines.
    SwapLines(f64, f64),
    /// Replace the `k`-th number of the text by a token.
    ReplaceNumber(usize, String),
    /// Cut the text at relative position `at`.
    Truncate(f64),
}

/// Tokens that readers give meaning to, extremes and junk.
fn token(words: &'static [&'static str]) -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(words).prop_map(str::to_string),
        prop::sample::select(
            &[
                ",",
                "\n",
                "\"",
                "[",
                "]",
                "{",
                "}",
                ":",
                "#",
                " ",
                "\r\n",
                "\u{feff}",
                "é",
                "\0",
                "NaN",
                "nan",
                "inf",
                "-inf",
                "-1",
                "0",
                "-0",
                "1e308",
                "1e-308",
                "1e999",
                "18446744073709551616",
                "9223372036854775807",
                "4294967296",
                "1e12",
                "0.5",
                "10G",
                "1e-300bps",
                "true",
                "null",
                "[]",
                "{}",
                "..",
                "/",
                "/etc/passwd",
            ][..]
        )
        .prop_map(str::to_string),
        any::<f64>().prop_map(|v| format!("{v:e}")),
        any::<i64>().prop_map(|v| v.to_string()),
        "[a-zA-Z_#]{1,8}",
    ]
}

fn edits(words: &'static [&'static str]) -> impl Strategy<Value = Vec<Edit>> {
    let edit = prop_oneof![
        (0.0..1.0f64, 1usize..20).prop_map(|(a, n)| Edit::Delete(a, n)),
        (0.0..1.0f64, token(words)).prop_map(|(a, t)| Edit::Insert(a, t)),
        (0.0..1.0f64).prop_map(Edit::DuplicateLine),
        (0.0..1.0f64, 0.0..1.0f64).prop_map(|(a, b)| Edit::SwapLines(a, b)),
        (0usize..40, token(words)).prop_map(|(k, t)| Edit::ReplaceNumber(k, t)),
        (0.0..1.0f64).prop_map(Edit::Truncate),
    ];
    prop::collection::vec(edit, 1..6)
}

/// The byte index at relative position `at` of `s`, on a char boundary.
fn index(s: &str, at: f64) -> usize {
    let mut i = ((s.len() as f64) * at) as usize;
    i = i.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn apply(seed: &str, edits: &[Edit]) -> String {
    let mut s = seed.to_string();
    for e in edits {
        match e {
            Edit::Delete(at, n) => {
                let a = index(&s, *at);
                let mut b = (a + n).min(s.len());
                while !s.is_char_boundary(b) {
                    b += 1;
                }
                s.replace_range(a..b, "");
            }
            Edit::Insert(at, t) => {
                let a = index(&s, *at);
                s.insert_str(a, t);
            }
            Edit::DuplicateLine(at) => {
                let mut lines: Vec<&str> = s.split('\n').collect();
                let k = ((lines.len() as f64) * at) as usize % lines.len();
                lines.insert(k, lines[k]);
                s = lines.join("\n");
            }
            Edit::SwapLines(a, b) => {
                let mut lines: Vec<String> = s.split('\n').map(str::to_string).collect();
                let n = lines.len();
                let (i, j) = (((n as f64) * a) as usize % n, ((n as f64) * b) as usize % n);
                lines.swap(i, j);
                s = lines.join("\n");
            }
            Edit::ReplaceNumber(k, t) => {
                let spans = number_spans(&s);
                if !spans.is_empty() {
                    let (a, b) = spans[k % spans.len()];
                    s.replace_range(a..b, t);
                }
            }
            Edit::Truncate(at) => {
                let a = index(&s, *at);
                s.truncate(a);
            }
        }
    }
    s
}

/// Byte ranges of the runs of digits (with `.`, `e`, `-`) of `s`.
fn number_spans(s: &str) -> Vec<(usize, usize)> {
    let b = s.as_bytes();
    let mut spans = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i].is_ascii_digit() {
            let start = i;
            while i < b.len() && (b[i].is_ascii_digit() || matches!(b[i], b'.' | b'e' | b'-')) {
                i += 1;
            }
            spans.push((start, i));
        } else {
            i += 1;
        }
    }
    spans
}

// ---- Readers and what an `Ok` must hold ----

fn read_gml_underlay(text: String) {
    let shown = text.clone();
    bounded(&shown, move || {
        if let Ok(u) = Underlay::from_gml_str(&text, "fuzz.gml", &LoadOptions::default()) {
            for l in &u.links {
                assert!(l.a < u.node_count() && l.b < u.node_count());
            }
        }
    });
}

/// Reads `bytes` as an overlay file with extension `ext` (`""`: sniffed).
fn read_overlay(bytes: Vec<u8>, ext: &'static str) {
    let shown = String::from_utf8_lossy(&bytes).into_owned();
    bounded(&shown, move || {
        let path = scratch(if ext.is_empty() { "overlay" } else { ext });
        std::fs::write(&path, &bytes).unwrap();
        let u = gaia();
        let names = SiloNames {
            labels: labels(),
            underlay: &u,
            routers: (0..u.node_count()).collect(),
        };
        let n = u.node_count();
        // One file per case (a fresh thread each): removed once read, so
        // 20,000 cases leave nothing behind in the temp directory.
        let read = file::read(&path, &names);
        let _ = std::fs::remove_file(&path);
        match read {
            Ok(FileOverlay::Static { overlay, weights }) => {
                assert!(overlay.arcs().iter().all(|&(i, j)| i < n && j < n));
                if let Some(w) = &weights {
                    check_stochastic(w);
                }
            }
            Ok(FileOverlay::Periodic { weights, .. }) => {
                for w in weights.iter().flatten() {
                    check_stochastic(w);
                }
            }
            Err(e) => {
                assert!(e.to_string().starts_with(path.to_str().unwrap()), "{e}");
            }
        }
    });
}

fn check_stochastic(m: &fedtopo::mixing::ConsensusMatrix) {
    for r in m.rows() {
        assert!(r.iter().all(|x| x.is_finite() && *x >= 0.0), "{r:?}");
        assert!((r.iter().sum::<f64>() - 1.0).abs() < 1e-9, "{r:?}");
    }
}

fn read_access(text: String) {
    let shown = text.clone();
    bounded(&shown, move || {
        let u = gaia();
        let mut a = AccessLinks::uniform(u.node_count(), DEFAULT_ACCESS_BPS);
        match a.apply_csv_str(&text, "a.csv", &u) {
            Ok(_) => {
                for c in a.up.iter().chain(&a.down) {
                    assert!(*c >= 1.0 && !c.is_nan(), "capacity {c}");
                }
            }
            Err(e) => assert!(e.to_string().starts_with("a.csv:"), "{e}"),
        }
    });
}

fn read_silos(text: String) {
    let shown = text.clone();
    bounded(&shown, move || {
        let u = gaia();
        let p = SiloPlacement::per_router(2, u.node_count()).unwrap();
        match SiloOverrides::parse(&text, "s.csv", &u, &p) {
            Ok(o) => {
                for c in o.compute_ms.iter().flatten() {
                    assert!(c.is_finite() && *c >= 0.0, "compute {c}");
                }
                for c in o.up.iter().chain(&o.down).flatten() {
                    assert!(*c >= 1.0 && !c.is_nan(), "capacity {c}");
                }
                let _ = o.data_sizes(&p.labels(&u));
            }
            Err(e) => assert!(e.to_string().starts_with("s.csv:"), "{e}"),
        }
    });
}

fn read_links(text: String) {
    let shown = text.clone();
    bounded(&shown, move || {
        let u = gaia();
        match LinkOverrides::parse(&text, "l.csv", &u) {
            Ok(o) => {
                for (l, lat, cap) in &o.links {
                    assert!(*l < u.links.len());
                    assert!(lat.is_none_or(|x| x.is_finite() && x >= 0.0));
                    assert!(cap.is_none_or(|c| c >= 1.0));
                }
            }
            Err(e) => assert!(e.to_string().starts_with("l.csv:"), "{e}"),
        }
    });
}

fn read_trace(text: String) {
    let shown = text.clone();
    bounded(&shown, move || {
        let u = gaia();
        let p = SiloPlacement::one_per_router(u.node_count());
        match fedtopo::net::dynamics::read::parse(&text, "t.csv", &u, &p) {
            Ok(d) => {
                let n = p.silo_count();
                assert_eq!((d.up.len(), d.avail.len()), (n, n));
                for s in d.up.iter().chain(&d.down).flatten() {
                    assert!(s.values().iter().all(|c| c.is_finite() && *c >= 1.0));
                    assert!(s.times().windows(2).all(|w| w[0] < w[1]));
                }
                for s in d.avail.iter().flatten() {
                    assert!(s.values().iter().all(|v| *v == 0.0 || *v == 1.0));
                }
                for (l, s) in &d.links {
                    assert!(*l < u.links.len());
                    assert!(s.times().iter().all(|t| t.is_finite() && *t >= 0.0));
                }
            }
            Err(e) => assert!(e.to_string().starts_with("t.csv:"), "{e}"),
        }
    });
}

fn read_run_log(text: String) {
    let shown = text.clone();
    bounded(&shown, move || {
        match RunLog::parse(&text, "r.csv", &labels(), 1e6) {
            Ok(log) => {
                for s in &log.spans {
                    assert!(s.start_ms.is_finite() && s.end_ms >= s.start_ms, "{s:?}");
                    assert!(s.from < log.silos && s.to < log.silos);
                    assert!(!s.transfer || (s.bits.is_finite() && s.bits > 0.0), "{s:?}");
                }
            }
            Err(e) => assert!(e.to_string().starts_with("r.csv:"), "{e}"),
        }
    });
}

fn read_experiment(text: String) {
    let shown = text.clone();
    bounded(&shown, move || {
        if let Ok(spec) = ExperimentSpec::parse(&text, "e.toml") {
            for (axis, values) in spec.grid.axes() {
                assert!(!values.is_empty(), "{axis}");
                for (i, v) in values.iter().enumerate() {
                    assert!(!values[..i].contains(v), "{axis}: `{v}` twice");
                }
            }
            for plot in &spec.plots {
                assert!(output_path_parts(&plot.file).is_ok(), "{}", plot.file);
            }
        }
    });
}

const CSV_WORDS: &[&str] = &[
    "silo",
    "up",
    "down",
    "capacity",
    "compute_ms",
    "data",
    "a",
    "b",
    "latency_ms",
    "src",
    "dst",
    "source",
    "target",
    "weight",
    "round",
    "# undirected",
    "# directed",
    "Tokyo",
    "Seoul",
    "Virginia",
    "Oregon",
    "Tokyo#1",
    "1",
    "3",
    "UP",
    "Silo",
    "time_s",
    "value",
    "up:",
    "avail:",
    "link:",
    "link_latency:",
    "|",
    ":",
    "-1",
    "1e300",
    "inf",
    "NaN",
];
const JSON_WORDS: &[&str] = &[
    "\"directed\"",
    "\"Directed\"",
    "\"links\"",
    "\"edges\"",
    "\"nodes\"",
    "\"rounds\"",
    "\"periodic\"",
    "\"graph\"",
    "\"center\"",
    "\"weight\"",
    "\"Weight\"",
    "\"source\"",
    "\"target\"",
    "\"id\"",
    "\"label\"",
    "\"Tokyo\"",
    ": true",
    ": false",
    ": null",
    ", ",
    "[[",
    "]]",
    "{\"id\": 1}",
];
const GML_WORDS: &[&str] = &[
    "graph [",
    "node [",
    "edge [",
    "]",
    "directed 1",
    "directed 0",
    "Directed 1",
    "id",
    "label",
    "source",
    "target",
    "weight",
    "Weight",
    "center 0",
    "multigraph 1",
    "\"Tokyo\"",
    "distance",
    "LinkSpeedRaw",
    "Latitude",
    "Longitude",
    "&#34;",
    "&amp;",
];
const TOML_WORDS: &[&str] = &[
    "[grid]",
    "[[plot]]",
    "[[ratio]]",
    "kind = \"compare\"",
    "kind = \"train\"",
    "overlay = [\"ring\", \"ring\"]",
    "file = \"../x.svg\"",
    "file = \"/tmp/x.svg\"",
    "file = \"results.csv\"",
    "column = \"overlay\"",
    "seed = [0, 0]",
    "network",
    "underlay",
    "= [",
    "]",
    "\"",
    "'''",
    "= { }",
    "aggregate = \"nope\"",
    "default_length_km = nan",
    "rounds = [-1]",
    "local_steps = [0]",
];

proptest! {
    #[test]
    fn gml_underlay_bytes(bytes in prop::collection::vec(any::<u8>(), 0..400)) {
        read_gml_underlay(String::from_utf8_lossy(&bytes).into_owned());
    }

    #[test]
    fn gml_underlay_mutations(e in edits(GML_WORDS)) {
        let seed = fedtopo::net::builtin::builtin_underlay("aws-gaia").unwrap();
        read_gml_underlay(apply(seed, &e));
    }

    #[test]
    fn overlay_file_bytes(
        bytes in prop::collection::vec(any::<u8>(), 0..400),
        ext in prop::sample::select(&["gml", "json", "csv", "txt", ""][..]),
    ) {
        read_overlay(bytes, ext);
    }

    #[test]
    fn overlay_csv_mutations(e in edits(CSV_WORDS), per_round in any::<bool>()) {
        let seed = if per_round { seed_per_round_csv() } else { seed_overlay_csv() };
        read_overlay(apply(&seed, &e).into_bytes(), "csv");
    }

    #[test]
    fn overlay_json_mutations(e in edits(JSON_WORDS), per_round in any::<bool>()) {
        let seed = if per_round { seed_per_round_json() } else { seed_node_link_json() };
        read_overlay(apply(&seed, &e).into_bytes(), "json");
    }

    #[test]
    fn overlay_gml_mutations(e in edits(GML_WORDS), sniffed in any::<bool>()) {
        read_overlay(apply(&seed_overlay_gml(), &e).into_bytes(), if sniffed { "" } else { "gml" });
    }

    #[test]
    fn access_csv_bytes(bytes in prop::collection::vec(any::<u8>(), 0..300)) {
        read_access(String::from_utf8_lossy(&bytes).into_owned());
    }

    #[test]
    fn access_csv_mutations(e in edits(CSV_WORDS)) {
        read_access(apply(&seed_access_csv(), &e));
    }

    #[test]
    fn silos_csv_bytes(bytes in prop::collection::vec(any::<u8>(), 0..300)) {
        read_silos(String::from_utf8_lossy(&bytes).into_owned());
    }

    #[test]
    fn silos_csv_mutations(e in edits(CSV_WORDS)) {
        read_silos(apply(&seed_silos_csv(), &e));
    }

    #[test]
    fn links_csv_bytes(bytes in prop::collection::vec(any::<u8>(), 0..300)) {
        read_links(String::from_utf8_lossy(&bytes).into_owned());
    }

    #[test]
    fn links_csv_mutations(e in edits(CSV_WORDS)) {
        read_links(apply(&seed_links_csv(), &e));
    }

    #[test]
    fn trace_csv_bytes(bytes in prop::collection::vec(any::<u8>(), 0..300)) {
        read_trace(String::from_utf8_lossy(&bytes).into_owned());
    }

    #[test]
    fn trace_csv_mutations(e in edits(CSV_WORDS)) {
        read_trace(apply(&seed_trace_csv(), &e));
    }

    #[test]
    fn run_log_bytes(bytes in prop::collection::vec(any::<u8>(), 0..300)) {
        read_run_log(String::from_utf8_lossy(&bytes).into_owned());
    }

    #[test]
    fn run_log_mutations(e in edits(CSV_WORDS)) {
        read_run_log(apply(&seed_run_log(), &e));
    }

    #[test]
    fn experiment_toml_bytes(bytes in prop::collection::vec(any::<u8>(), 0..400)) {
        read_experiment(String::from_utf8_lossy(&bytes).into_owned());
    }

    #[test]
    fn experiment_toml_mutations(e in edits(TOML_WORDS)) {
        read_experiment(apply(SEED_EXPERIMENT, &e));
    }
}

/// The seeds themselves are read (so the mutations start from files that
/// reach the readers' deepest paths).
#[test]
fn seeds_are_valid() {
    let u = gaia();
    let p = SiloPlacement::per_router(2, u.node_count()).unwrap();
    let mut a = AccessLinks::uniform(u.node_count(), DEFAULT_ACCESS_BPS);
    a.apply_csv_str(&seed_access_csv(), "a.csv", &u).unwrap();
    SiloOverrides::parse(&seed_silos_csv(), "s.csv", &u, &p).unwrap();
    LinkOverrides::parse(&seed_links_csv(), "l.csv", &u).unwrap();
    assert_eq!(
        RunLog::parse(&seed_run_log(), "r.csv", &labels(), 1e6)
            .unwrap()
            .spans
            .len(),
        3
    );
    ExperimentSpec::parse(SEED_EXPERIMENT, "e.toml").unwrap();
    let names = SiloNames {
        labels: labels(),
        underlay: &u,
        routers: (0..u.node_count()).collect(),
    };
    for (text, ext) in [
        (seed_overlay_csv(), "csv"),
        (seed_per_round_csv(), "csv"),
        (seed_node_link_json(), "json"),
        (seed_per_round_json(), "json"),
        (seed_overlay_gml(), "gml"),
    ] {
        let path = scratch(ext);
        std::fs::write(&path, &text).unwrap();
        file::read(&path, &names).unwrap_or_else(|e| panic!("{text}: {e}"));
    }
    let dir = calibration_dir();
    std::fs::write(dir.join("cal.csv"), SEED_CALIBRATION).unwrap();
    let (code, err) = calibrate(&dir.join("cal.csv"));
    assert_eq!(code, 0, "{err}");
}

fn calibration_dir() -> PathBuf {
    let d = std::env::temp_dir().join(format!("fedtopo-fuzz-cal-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// `fedtopo design aws-gaia --overlays ring,mst --calibrate FILE`, killed
/// after [`DEADLINE`]: `(exit code, stderr)`.
fn calibrate(file: &Path) -> (i32, String) {
    use std::io::Read;
    use std::process::{Command, Stdio};
    let mut child = Command::new(env!("CARGO_BIN_EXE_fedtopo"))
        .args([
            "design",
            "aws-gaia",
            "--overlays",
            "ring,mst",
            "--calibrate",
        ])
        .arg(file)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("binary starts");
    let start = std::time::Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait") {
            break s;
        }
        if start.elapsed() > DEADLINE {
            let _ = child.kill();
            let _ = child.wait();
            panic!("design --calibrate still runs after {DEADLINE:?}");
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let mut err = String::new();
    if let Some(mut s) = child.stderr.take() {
        let _ = s.read_to_string(&mut err);
    }
    (status.code().unwrap_or(-1), err)
}

/// The calibration CSV is read by the binary: exit 0 or a clean refusal
/// (2), never a panic (101) or a signal. A runner of its own, so that
/// `PROPTEST_CASES` (which overrides a `proptest!` block's case count)
/// does not make it start 20,000 processes.
#[test]
fn calibration_csv_mutations() {
    use proptest::test_runner::{Config, TestRunner};
    let mut runner = TestRunner::new(Config {
        cases: CALIBRATION_CASES,
        failure_persistence: None,
        ..Config::default()
    });
    let strategy = (
        edits(CSV_WORDS),
        prop::option::of(prop::collection::vec(any::<u8>(), 0..200)),
    );
    let dir = calibration_dir();
    runner
        .run(&strategy, |(e, bytes)| {
            let text = match bytes {
                Some(b) => b,
                None => apply(SEED_CALIBRATION, &e).into_bytes(),
            };
            let path = dir.join("fuzz.csv");
            std::fs::write(&path, &text).unwrap();
            let (code, err) = calibrate(&path);
            prop_assert!(
                code == 0 || code == 2,
                "exit {} on {:?}: {}",
                code,
                String::from_utf8_lossy(&text),
                err
            );
            prop_assert!(!err.contains("panicked"), "{}", err);
            Ok(())
        })
        .unwrap_or_else(|e| panic!("{e}"));
}
