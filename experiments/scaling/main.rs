//! Scaling experiment: wall-clock time (and peak resident memory) of every
//! pipeline stage against the number of silos N, on seeded random geometric
//! underlays. Writes `results.csv` and `scaling.svg` (log-log) to `--out`.
//!
//! ```text
//! cargo run --release --example scaling -- [--out DIR] [--sizes 100,200,...]
//!     [--stages underlay,star,...] [--cap-s 120] [--kill-s 900] [--rounds 100]
//!     [--routers same|K] [--degree D] [--ring-full-scan] [--plot-only]
//! ```
//!
//! Every (stage, N) runs in a child process (this binary with `--child`), so
//! that its peak memory (`VmHWM`) is its own and a runaway stage can be
//! killed (`--kill-s`). A stage that took more than `--cap-s` seconds at
//! some N is not run at larger N (`status = skipped` in the CSV).
//!
//! Underlay at N silos: `random_geometric(R, side, 400 km, 1 Gbit/s, seed 1)`
//! with `R = N` routers (`--routers same`, one silo per router) or `R = K`
//! routers, side `4000 km * sqrt(R / 300)` (the `flow_rgg` bench's density:
//! ~9 links per router at every size; with `--degree D`, links within the
//! radius giving mean degree `D` instead, issue 28's generator at `D = 4`), silos spread by
//! `SiloPlacement::spread(N, R, 1)`, 1 Gbit/s access, default workload.
//! Stages (each timed alone; its inputs are built before the clock starts):
//!
//! * `underlay`: underlay generation, placement, connectivity and delay model;
//! * `compare`: `compare --overlays star,mst,ring,ring-opt` past the setup
//!   (STAR centre `fastest`, one shared tour, every cycle time);
//! * `star`, `mst`, `ring`, `delta-mbst`: `build_overlay` of that kind;
//! * `ring-opt`: the eq. (3) ring delay matrix and the local search
//!   (`improve_directed_ring`, default options) from a nearest-neighbour tour
//!   (so that it does not depend on the RING's Christofides time);
//! * `cycle-time`: max-plus cycle time (`timing::cycle_time`) of the
//!   3-out-neighbour circulant `i -> i+1, i+2, i+5`;
//! * `flow-replay`: flow-model replay (max-min fair sharing) of the directed
//!   ring in plain silo order, `--rounds` rounds (the worst case: every
//!   route long and shared).

use std::io::{BufRead, BufReader, Read};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use fedtopo::evaluate::compare::compare_overlays;
use fedtopo::graph::Overlay;
use fedtopo::net::delay::DelayModel;
use fedtopo::net::placement::SiloPlacement;
use fedtopo::net::scenario::NetworkSpec;
use fedtopo::net::underlay::synthetic::{radius_for_degree, random_geometric};
use fedtopo::net::underlay::Underlay;
use fedtopo::network::FlowNetwork;
use fedtopo::overlay::algo::{directed_ring_cost, improve_directed_ring, RingSearch};
use fedtopo::overlay::build::{build_overlay, BuildOptions, OverlayKind};
use fedtopo::overlay::ring::ring_delays;
use fedtopo::replay::{replay, ReplayOptions};
use fedtopo::report::plot::{line_plot, Axes, Series};

const STAGES: [&str; 9] = [
    "underlay",
    "compare",
    "star",
    "mst",
    "ring",
    "ring-opt",
    "delta-mbst",
    "cycle-time",
    "flow-replay",
];
const SIZES: [usize; 7] = [100, 200, 500, 1000, 2000, 5000, 10000];

struct Args {
    out: PathBuf,
    sizes: Vec<usize>,
    stages: Vec<String>,
    cap_s: f64,
    kill_s: f64,
    rounds: u64,
    routers: Option<usize>,
    /// Links between routers closer than the radius giving this mean
    /// degree (`radius_for_degree`) instead of within 400 km.
    degree: Option<f64>,
    /// `ring-opt` by the historical full scan at every size.
    full_scan: bool,
    /// Only redraw `scaling.svg` from `results.csv`.
    plot_only: bool,
    child: Option<(String, usize)>,
}

fn parse_args() -> Result<Args> {
    let mut a = Args {
        out: PathBuf::from("experiments/scaling"),
        sizes: SIZES.to_vec(),
        stages: STAGES.iter().map(|s| s.to_string()).collect(),
        cap_s: 120.0,
        kill_s: 900.0,
        rounds: 100,
        routers: None,
        degree: None,
        full_scan: false,
        plot_only: false,
        child: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut val = || it.next().with_context(|| format!("{flag} needs a value"));
        match flag.as_str() {
            "--out" => a.out = PathBuf::from(val()?),
            "--sizes" => {
                a.sizes = val()?
                    .split(',')
                    .map(|s| {
                        s.parse()
                            .with_context(|| format!("--sizes: bad size {s:?}"))
                    })
                    .collect::<Result<_>>()?
            }
            "--stages" => {
                a.stages = val()?.split(',').map(str::to_string).collect();
                if let Some(s) = a.stages.iter().find(|s| !STAGES.contains(&s.as_str())) {
                    bail!(
                        "--stages: unknown stage {s:?} (known: {})",
                        STAGES.join(",")
                    );
                }
            }
            "--cap-s" => a.cap_s = val()?.parse().context("--cap-s: seconds")?,
            "--kill-s" => a.kill_s = val()?.parse().context("--kill-s: seconds")?,
            "--rounds" => a.rounds = val()?.parse().context("--rounds: a count")?,
            "--routers" => {
                let v = val()?;
                a.routers = if v == "same" {
                    None
                } else {
                    Some(v.parse().context("--routers: `same` or a count")?)
                }
            }
            "--degree" => {
                let d: f64 = val()?.parse().context("--degree: a mean degree")?;
                if !(d.is_finite() && d > 0.0) {
                    bail!("--degree: a positive mean degree, got {d}");
                }
                a.degree = Some(d);
            }
            "--ring-full-scan" => a.full_scan = true,
            "--plot-only" => a.plot_only = true,
            "--child" => {
                let stage = val()?;
                let n = val()?.parse().context("--child STAGE N")?;
                a.child = Some((stage, n));
            }
            _ => bail!("unknown option {flag}"),
        }
    }
    Ok(a)
}

/// The underlay and delay model at `n` silos.
fn model(n: usize, routers: Option<usize>, degree: Option<f64>) -> Result<(Underlay, DelayModel)> {
    let r = routers.unwrap_or(n);
    let side = 4000.0 * (r as f64 / 300.0).sqrt();
    let radius = degree.map_or(400.0, |d| radius_for_degree(r, side, d));
    let u = random_geometric(r, side, radius, 1e9, 1)?;
    let p = SiloPlacement::spread(n, r, 1)?;
    let m = NetworkSpec {
        access_bps: 1e9,
        ..NetworkSpec::default()
    }
    .delay_model_placed(&u, p);
    Ok((u, m))
}

/// Nearest-neighbour tour on the ring delays from silo 0.
fn nearest_neighbour(d: &fedtopo::overlay::algo::DenseMatrix) -> Vec<usize> {
    let n = d.n();
    let mut seen = vec![false; n];
    let mut tour = vec![0];
    seen[0] = true;
    while tour.len() < n {
        let a = tour[tour.len() - 1];
        let row = d.row(a);
        let next = (0..n)
            .filter(|&c| !seen[c])
            .min_by(|&x, &y| row[x].total_cmp(&row[y]))
            .unwrap_or(0);
        seen[next] = true;
        tour.push(next);
    }
    tour
}

fn circulant(n: usize, strides: &[usize]) -> Overlay {
    Overlay::from_arcs(
        "circulant",
        n,
        (0..n).flat_map(|i| strides.iter().map(move |s| (i, (i + s) % n))),
    )
}

/// Peak resident set of this process, KiB (0 where unknown).
fn peak_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

/// CPU time (user + system) of this process so far, s (0 where unknown):
/// fields 14 and 15 of `/proc/self/stat`, in clock ticks.
fn cpu_s() -> f64 {
    let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
    std::fs::read_to_string("/proc/self/stat")
        .ok()
        .and_then(|s| {
            // The command name (field 2) may hold spaces: count after its `)`.
            let rest = &s[s.rfind(')')? + 1..];
            let f: Vec<&str> = rest.split_whitespace().collect();
            Some((f.get(11)?.parse::<f64>().ok()? + f.get(12)?.parse::<f64>().ok()?) / ticks)
        })
        .unwrap_or(0.0)
}

/// Runs one stage; prints `seconds cpu_seconds peak_kib detail`.
fn child(a: &Args, stage: &str, n: usize) -> Result<()> {
    let (rounds, routers) = (a.rounds, a.routers);
    let mut detail = String::new();
    let (t, c) = (Instant::now(), cpu_s());
    let (u, m) = model(n, routers, a.degree)?;
    let mut secs = t.elapsed().as_secs_f64();
    let mut cpu = cpu_s() - c;
    // Times `f` alone (wall and CPU seconds).
    let timed = |f: &mut dyn FnMut() -> Result<()>| -> Result<(f64, f64)> {
        let (t, c) = (Instant::now(), cpu_s());
        f()?;
        Ok((t.elapsed().as_secs_f64(), cpu_s() - c))
    };
    let build = |kind: OverlayKind| -> Result<(f64, f64)> {
        timed(&mut || {
            let o = build_overlay(kind, &u, &m, &BuildOptions::default())?;
            std::hint::black_box(o);
            Ok(())
        })
    };
    match stage {
        "underlay" => {}
        "compare" => {
            // `fedtopo compare --overlays star,mst,ring,ring-opt` past the
            // setup: its default STAR centre (`fastest`), one shared tour,
            // every cycle time.
            let kinds = [
                OverlayKind::Star,
                OverlayKind::Mst,
                OverlayKind::Ring,
                OverlayKind::RingOpt,
            ];
            let options = BuildOptions::from_knobs(|_| None, &u, m.connectivity.placement())?;
            (secs, cpu) = timed(&mut || {
                let c = compare_overlays(&u, &m, &kinds, &options)?;
                detail = c
                    .rows
                    .iter()
                    .map(|r| format!("{} {:.1} ms", r.overlay, r.cycle_time_ms))
                    .collect::<Vec<_>>()
                    .join("; ");
                Ok(())
            })?;
        }
        "star" => (secs, cpu) = build(OverlayKind::Star)?,
        "mst" => (secs, cpu) = build(OverlayKind::Mst)?,
        "ring" => (secs, cpu) = build(OverlayKind::Ring)?,
        "delta-mbst" => (secs, cpu) = build(OverlayKind::DeltaMbst)?,
        "ring-opt" => {
            let start = nearest_neighbour(&ring_delays(&m));
            let search = RingSearch {
                full_scan_max: if a.full_scan { usize::MAX } else { 400 },
                ..RingSearch::default()
            };
            let (t, c) = (Instant::now(), cpu_s());
            let d = ring_delays(&m);
            let tour = improve_directed_ring(&d, start.clone(), &search);
            (secs, cpu) = (t.elapsed().as_secs_f64(), cpu_s() - c);
            detail = format!(
                "ring cost {:.1} ms from {:.1} ms",
                directed_ring_cost(&d, &tour),
                directed_ring_cost(&d, &start)
            );
        }
        "cycle-time" => {
            let o = circulant(n, &[1, 2, 5]);
            let (t, c) = (Instant::now(), cpu_s());
            let tau = fedtopo::timing::cycle_time(&o, &m)?;
            (secs, cpu) = (t.elapsed().as_secs_f64(), cpu_s() - c);
            std::hint::black_box(tau);
        }
        "flow-replay" => {
            let o = circulant(n, &[1]);
            let opts = ReplayOptions {
                rounds,
                ..ReplayOptions::default()
            };
            let (t, c) = (Instant::now(), cpu_s());
            let r = replay(&o, &m, &mut FlowNetwork::new(&m), &opts)?;
            (secs, cpu) = (t.elapsed().as_secs_f64(), cpu_s() - c);
            detail = format!("{} events; makespan {:.3} ms", r.events, r.makespan_ms());
        }
        _ => bail!("unknown stage {stage}"),
    }
    println!("{secs} {cpu} {} {detail}", peak_kib());
    Ok(())
}

/// What a child reports: wall seconds, CPU seconds, peak KiB, detail.
type Measured = (f64, f64, u64, String);

/// Runs `--child stage n`, killed after `kill_s`; what it measured or a status.
fn run_child(a: &Args, stage: &str, n: usize) -> Result<std::result::Result<Measured, String>> {
    let mut cmd = Command::new(std::env::current_exe()?);
    cmd.args([
        "--child",
        stage,
        &n.to_string(),
        "--rounds",
        &a.rounds.to_string(),
    ]);
    if let Some(r) = a.routers {
        cmd.args(["--routers", &r.to_string()]);
    }
    if let Some(d) = a.degree {
        cmd.args(["--degree", &d.to_string()]);
    }
    if a.full_scan {
        cmd.arg("--ring-full-scan");
    }
    let mut ch = cmd.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn()?;
    let start = Instant::now();
    loop {
        if let Some(status) = ch.try_wait()? {
            let mut out = String::new();
            if let Some(o) = ch.stdout.take() {
                BufReader::new(o).read_to_string(&mut out)?;
            }
            if !status.success() {
                let mut err = String::new();
                if let Some(e) = ch.stderr.take() {
                    BufReader::new(e).read_line(&mut err)?;
                }
                return Ok(Err(format!("failed: {}", err.trim().replace(',', ";"))));
            }
            let mut f = out.trim().splitn(4, ' ');
            let secs = f
                .next()
                .and_then(|s| s.parse().ok())
                .context("child output")?;
            let cpu = f.next().and_then(|s| s.parse().ok()).unwrap_or(0.0);
            let kib = f.next().and_then(|s| s.parse().ok()).unwrap_or(0);
            let detail = f.next().unwrap_or("").replace(',', ";");
            return Ok(Ok((secs, cpu, kib, detail)));
        }
        if start.elapsed() > Duration::from_secs_f64(a.kill_s) {
            ch.kill()?;
            ch.wait()?;
            return Ok(Err(format!("killed after {} s", a.kill_s)));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn main() -> Result<()> {
    let a = parse_args()?;
    if let Some((stage, n)) = &a.child {
        return child(&a, stage, *n);
    }
    std::fs::create_dir_all(&a.out)?;
    if a.plot_only {
        let text = std::fs::read_to_string(a.out.join("results.csv"))?;
        let mut series: Vec<Series> = Vec::new();
        for line in text.lines().skip(1) {
            let f: Vec<&str> = line.split(',').collect();
            if f.len() < 6 || f[4] != "ok" {
                continue;
            }
            let n: f64 = f[1].parse().context("results.csv: silos")?;
            let secs: f64 = f[5].parse().context("results.csv: seconds")?;
            match series.iter_mut().find(|s| s.name == f[0]) {
                Some(s) => s.points.push((n, secs.max(1e-4))),
                None => series.push(Series {
                    name: f[0].to_string(),
                    points: vec![(n, secs.max(1e-4))],
                }),
            }
        }
        return plot(&a, &series);
    }
    let generator = match a.degree {
        Some(d) => format!("rgg degree {d}"),
        None => "rgg 400 km".to_string(),
    };
    let mut csv =
        String::from("stage,silos,routers,generator,status,seconds,cpu_seconds,peak_mib,detail\n");
    let mut series = Vec::new();
    for stage in &a.stages {
        let mut points = Vec::new();
        let mut over_cap: Option<usize> = None;
        for &n in &a.sizes {
            let routers = a.routers.unwrap_or(n);
            if let Some(m) = over_cap {
                eprintln!(
                    "{stage:>12} N={n:>6}: skipped (took > {} s at N={m})",
                    a.cap_s
                );
                csv += &format!("{stage},{n},{routers},{generator},skipped,,,,\n");
                continue;
            }
            match run_child(&a, stage, n)? {
                Ok((secs, cpu, kib, detail)) => {
                    let mib = kib as f64 / 1024.0;
                    eprintln!(
                        "{stage:>12} N={n:>6}: {secs:10.3} s ({cpu:.2} s CPU), peak {mib:8.1} MiB {detail}"
                    );
                    csv += &format!(
                        "{stage},{n},{routers},{generator},ok,{secs:.4},{cpu:.2},{mib:.1},{detail}\n"
                    );
                    points.push((n as f64, secs.max(1e-4)));
                    if secs > a.cap_s {
                        over_cap = Some(n);
                    }
                }
                Err(why) => {
                    eprintln!("{stage:>12} N={n:>6}: {why}");
                    csv += &format!("{stage},{n},{routers},{generator},{why},,,,\n");
                    over_cap = Some(n);
                }
            }
            std::fs::write(a.out.join("results.csv"), &csv)?;
        }
        series.push(Series {
            name: stage.clone(),
            points,
        });
    }
    plot(&a, &series)?;
    eprintln!("wrote {}", a.out.join("results.csv").display());
    Ok(())
}

/// Writes `scaling.svg` (log-log).
fn plot(a: &Args, series: &[Series]) -> Result<()> {
    let svg = line_plot(
        "Time per stage vs number of silos",
        &Axes {
            x_label: "silos N".into(),
            y_label: "time per stage (s)".into(),
            log_x: true,
            log_y: true,
            x_bandwidth: false,
        },
        series,
    )
    .map_err(anyhow::Error::msg)?;
    std::fs::write(a.out.join("scaling.svg"), svg)?;
    Ok(())
}
