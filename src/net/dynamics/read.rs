//! The trace file: `time_s,target,value`, one value change per row.
//!
//! ```text
//! time_s,target,value
//! 0,up:Seattle,500M          # Seattle's uplink drops to 500 Mbit/s at t = 0
//! 3600,access:Miami#1,2G     # both directions of one silo of Miami
//! 60,latency:Denver,12.5     # 12.5 ms extra one-way access latency
//! 120,avail:Dallas,down      # Dallas is down from 120 s ...
//! 180,avail:Dallas,up        # ... to 180 s
//! 30,link:Seattle|Denver,1G  # a core link, both directions
//! 40,link_latency:Seattle|Denver,8   # 8 ms extra on that link
//! ```
//!
//! * `time_s`: when the value starts to hold, seconds from the start of
//!   the run (a number >= 0 and <= [`MAX_TRACE_TIME_S`]). A target's times
//!   must increase strictly from row to row (two values at one time would
//!   be ambiguous); rows of different targets may come in any order.
//! * `target`: `KIND:NAME`. `NAME` is a silo as in the silo file
//!   ([`crate::net::silos`]: a router label or GML id, meaning every silo at
//!   that router, or `ROUTER#k`), or for `link` two routers `A|B` joined
//!   by a core link (either order, as in [`crate::net::links`]). `KIND`:
//!   `up`, `down`, `access` (both), `latency`, `avail`, `link` or
//!   `link_latency`.
//! * `value`: a bandwidth for `up`, `down`, `access`, `link` (syntax of
//!   [`crate::units::parse_bandwidth`], finite, at least 1 bit/s); a time
//!   in ms for `latency` and `link_latency` (>= 0); `up` or `down` (or `1` / `0`) for `avail`.
//!
//! Before a target's first row its static value applies (for `avail`:
//! up). Any other column, an unknown kind, silo, router or link, and more
//! than [`MAX_TRACE_ROWS`] rows are errors naming the line (and column).

use std::collections::HashMap;
use std::path::Path;

use super::{Dynamics, Series};
use crate::csv_file::{read_bounded, reader, record_error, Columns, CsvFileError};
use crate::net::placement::SiloPlacement;
use crate::net::underlay::Underlay;
use crate::units::{parse_bandwidth, Ms, MAX_COMPUTE_MS};

/// Most rows a trace file may have.
pub const MAX_TRACE_ROWS: usize = 2_000_000;

/// Latest change time a trace may give, s (about 31 years; the engine's
/// times stay far inside `f64` precision).
pub const MAX_TRACE_TIME_S: f64 = 1e9;

/// What a trace row sets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TraceTarget {
    /// `Cup(i)`, bit/s.
    Up(usize),
    /// `Cdn(i)`, bit/s.
    Down(usize),
    /// Extra access latency of silo `i`, ms.
    Latency(usize),
    /// Silo `i` up (1) or down (0).
    Avail(usize),
    /// Core link `l`'s capacity, bit/s.
    Link(usize),
    /// Extra latency of core link `l`, ms.
    LinkLatency(usize),
}

const KINDS: &str = "up, down, access, latency, avail, link or link_latency";

/// Reads the trace file `path` for the silos of `placement` on `underlay`.
///
/// # Errors
/// An unreadable file or a bad row ([`CsvFileError`], with the line).
pub fn read(
    path: &Path,
    underlay: &Underlay,
    placement: &SiloPlacement,
) -> Result<Dynamics, CsvFileError> {
    let text = read_bounded(path)?;
    parse(&text, &path.display().to_string(), underlay, placement)
}

/// Parses trace `text`; `source` names it in errors.
///
/// # Errors
/// A bad header or row ([`CsvFileError::Record`], with the line).
pub fn parse(
    text: &str,
    source: &str,
    underlay: &Underlay,
    placement: &SiloPlacement,
) -> Result<Dynamics, CsvFileError> {
    let err = |line: u64, message: String| record_error(source, line, message);
    let mut rd = reader(text);
    let headers = rd.headers().map_err(|e| err(1, e.to_string()))?.clone();
    const KNOWN: [&str; 3] = ["time_s", "target", "value"];
    let header = Columns::accepted(&headers, &KNOWN).map_err(|m| err(1, m))?;
    let (Some(ct), Some(cg), Some(cv)) = (
        header.position("time_s"),
        header.position("target"),
        header.position("value"),
    ) else {
        return Err(err(
            1,
            "expected a header with columns `time_s`, `target` and `value`".into(),
        ));
    };
    let labels = placement.labels(underlay);
    // Per target: (time ms, value, line), in file order.
    let mut points: HashMap<TraceTarget, Vec<(Ms, f64, u64)>> = HashMap::new();
    let mut order: Vec<TraceTarget> = Vec::new();
    let mut rows = 0usize;
    for record in rd.records() {
        let record =
            record.map_err(|e| err(e.position().map_or(0, |p| p.line()), e.to_string()))?;
        let line = record.position().map_or(0, |p| p.line());
        rows += 1;
        if rows > MAX_TRACE_ROWS {
            return Err(err(
                line,
                format!("more than {MAX_TRACE_ROWS} rows; a trace holds at most that many changes"),
            ));
        }
        let cell = |c: usize| record.get(c).unwrap_or("");
        let col =
            |c: usize, what: &str, m: String| err(line, format!("column {} ({what}): {m}", c + 1));
        let time_text = cell(ct);
        let time_s = time_text
            .parse::<f64>()
            .ok()
            .filter(|t| t.is_finite() && (0.0..=MAX_TRACE_TIME_S).contains(t))
            .ok_or_else(|| {
                col(
                    ct,
                    "time_s",
                    format!("`{time_text}`: expected seconds >= 0 and <= {MAX_TRACE_TIME_S}"),
                )
            })?;
        let target_text = cell(cg);
        let Some((kind, name)) = target_text.split_once(':') else {
            return Err(col(
                cg,
                "target",
                format!("`{target_text}`: expected KIND:NAME with KIND {KINDS}"),
            ));
        };
        let value_text = cell(cv);
        let bad_value = |expected: &str| {
            col(
                cv,
                "value",
                format!("`{value_text}`: expected {expected} for `{kind}`"),
            )
        };
        let bandwidth = || {
            parse_bandwidth(value_text)
                .ok()
                .filter(|b| b.is_finite() && *b >= 1.0)
                .ok_or_else(|| bad_value("a finite bandwidth of at least 1 bit/s such as 1G"))
        };
        let silos = || {
            crate::net::silos::resolve(name, underlay, placement, &labels).ok_or_else(|| {
                col(
                    cg,
                    "target",
                    format!(
                        "no silo or router with label or id `{name}` in {}",
                        underlay.name
                    ),
                )
            })
        };
        let latency = || {
            value_text
                .parse::<Ms>()
                .ok()
                .filter(|l| l.is_finite() && (0.0..=MAX_COMPUTE_MS).contains(l))
                .ok_or_else(|| bad_value("a latency in ms >= 0 and <= 1e12"))
        };
        let (targets, value): (Vec<TraceTarget>, f64) = match kind {
            "up" => (
                silos()?.into_iter().map(TraceTarget::Up).collect(),
                bandwidth()?,
            ),
            "down" => (
                silos()?.into_iter().map(TraceTarget::Down).collect(),
                bandwidth()?,
            ),
            "access" => (
                silos()?
                    .into_iter()
                    .flat_map(|i| [TraceTarget::Up(i), TraceTarget::Down(i)])
                    .collect(),
                bandwidth()?,
            ),
            "latency" => (
                silos()?.into_iter().map(TraceTarget::Latency).collect(),
                latency()?,
            ),
            "avail" => (
                silos()?.into_iter().map(TraceTarget::Avail).collect(),
                match value_text.to_ascii_lowercase().as_str() {
                    "up" | "1" => 1.0,
                    "down" | "0" => 0.0,
                    _ => return Err(bad_value("`up` or `down` (or 1 / 0)")),
                },
            ),
            "link" => (
                vec![TraceTarget::Link(
                    link_index(name, underlay).map_err(|m| col(cg, "target", m))?,
                )],
                bandwidth()?,
            ),
            "link_latency" => (
                vec![TraceTarget::LinkLatency(
                    link_index(name, underlay).map_err(|m| col(cg, "target", m))?,
                )],
                latency()?,
            ),
            other => {
                return Err(col(
                    cg,
                    "target",
                    format!("unknown kind `{other}` in `{target_text}`; expected {KINDS}"),
                ))
            }
        };
        let t_ms = time_s * 1e3;
        for target in targets {
            let v = points.entry(target).or_insert_with(|| {
                order.push(target);
                Vec::new()
            });
            if let Some(&(prev, _, prev_line)) = v.last() {
                if t_ms <= prev {
                    return Err(col(
                        ct,
                        "time_s",
                        format!(
                            "`{time_text}` is not after this target's previous change at {} s \
                             (line {prev_line}); give each target's changes in increasing time",
                            prev / 1e3
                        ),
                    ));
                }
            }
            v.push((t_ms, value, line));
        }
    }
    let mut d = Dynamics::new(placement.silo_count(), source);
    for target in order {
        let s = Series::new(points[&target].iter().map(|&(t, v, _)| (t, v)).collect());
        match target {
            TraceTarget::Up(i) => d.up[i] = Some(s),
            TraceTarget::Down(i) => d.down[i] = Some(s),
            TraceTarget::Latency(i) => d.latency[i] = Some(s),
            TraceTarget::Avail(i) => d.avail[i] = Some(s),
            TraceTarget::Link(l) => d.links.push((l, s)),
            TraceTarget::LinkLatency(l) => d.link_latency.push((l, s)),
        }
    }
    d.links.sort_by_key(|(l, _)| *l);
    d.link_latency.sort_by_key(|(l, _)| *l);
    Ok(d)
}

/// The underlay link named `A|B`, or a message.
fn link_index(name: &str, underlay: &Underlay) -> Result<usize, String> {
    if underlay.measured.is_some() {
        return Err(format!(
            "`{name}`: {} is a latency matrix, which has no core links to trace",
            underlay.name
        ));
    }
    let Some((a, b)) = name.split_once('|') else {
        return Err(format!(
            "`{name}`: expected A|B, the routers at the two ends of a core link"
        ));
    };
    let router = |r: &str| {
        underlay
            .find_router(r)
            .ok_or_else(|| format!("no router with label or id `{r}` in {}", underlay.name))
    };
    let (a, b) = (router(a)?, router(b)?);
    let (lo, hi) = (a.min(b), a.max(b));
    underlay
        .links
        .iter()
        .position(|l| l.a == lo && l.b == hi)
        .ok_or_else(|| {
            format!(
                "`{name}`: no core link between these routers in {}",
                underlay.name
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::scenario::load_underlay;
    use crate::net::underlay::LoadOptions;

    fn gaia() -> (Underlay, SiloPlacement) {
        let u = load_underlay(Some("aws-gaia"), &LoadOptions::default()).unwrap();
        let p = SiloPlacement::one_per_router(u.node_count());
        (u, p)
    }

    #[test]
    fn rows_become_series_per_target() {
        let (u, p) = gaia();
        let (a, b) = (&u.routers[0].label, &u.routers[1].label);
        let (la, lb) = (
            &u.routers[u.links[0].a].label,
            &u.routers[u.links[0].b].label,
        );
        let text = format!(
            "time_s,target,value\n\
             10,access:{a},1G\n\
             5,avail:{b},down\n\
             20,up:{a},2G\n\
             6,avail:{b},up\n\
             1,latency:{b},3.5\n\
             2,link:{lb}|{la},5G\n"
        );
        let d = parse(&text, "t.csv", &u, &p).unwrap();
        assert_eq!(d.up[0].as_ref().unwrap().times(), &[10e3, 20e3]);
        assert_eq!(d.up[0].as_ref().unwrap().values(), &[1e9, 2e9]);
        assert_eq!(d.down[0].as_ref().unwrap().values(), &[1e9]);
        assert_eq!(d.avail[1].as_ref().unwrap().values(), &[0.0, 1.0]);
        assert!(!d.is_up(1, 5e3) && d.is_up(1, 6e3) && d.is_up(1, 4999.0));
        assert_eq!(d.latency_at(1, 1e3), 3.5);
        assert_eq!(d.links, vec![(0, Series::new(vec![(2e3, 5e9)]))]);
        assert_eq!(d.changes(), 7);
        assert_eq!(d.up_at(1, 5.5e3, 7.0), 0.0, "down: no capacity");
    }

    #[test]
    fn bad_rows_name_the_line_column_and_what_was_expected() {
        let (u, p) = gaia();
        let a = &u.routers[0].label;
        for (body, want) in [
            (
                "x,up:{a},1G",
                "t.csv:2: column 1 (time_s): `x`: expected seconds",
            ),
            ("-1,up:{a},1G", "column 1 (time_s)"),
            ("1e10,up:{a},1G", "column 1 (time_s)"),
            ("1,{a},1G", "column 2 (target): `{a}`: expected KIND:NAME"),
            ("1,speed:{a},1G", "unknown kind `speed`"),
            (
                "1,up:Atlantis,1G",
                "no silo or router with label or id `Atlantis`",
            ),
            (
                "1,up:{a},fast",
                "column 3 (value): `fast`: expected a finite bandwidth",
            ),
            ("1,up:{a},inf", "expected a finite bandwidth"),
            ("1,up:{a},0", "expected a finite bandwidth"),
            ("1,latency:{a},-2", "expected a latency in ms"),
            ("1,avail:{a},maybe", "expected `up` or `down`"),
            ("1,link:{a},1G", "expected A|B"),
            ("1,link_latency:{a}|{a},1", "no core link between"),
            ("1,link:{a}|{a},1G", "no core link between"),
            (
                "2,up:{a},1G\n1,up:{a},2G",
                "t.csv:3: column 1 (time_s): `1` is not after",
            ),
            (
                "2,up:{a},1G\n2,access:{a},2G",
                "is not after this target's previous change at 2 s (line 2)",
            ),
        ] {
            let text = format!("time_s,target,value\n{}\n", body.replace("{a}", a));
            let e = parse(&text, "t.csv", &u, &p).unwrap_err().to_string();
            let want = want.replace("{a}", a);
            assert!(e.starts_with("t.csv:"), "{e}");
            assert!(e.contains(&want), "{body}: `{e}` lacks `{want}`");
        }
        let e = parse("time,target,value\n", "t.csv", &u, &p).unwrap_err();
        assert!(e.to_string().contains("unknown column `time`"), "{e}");
        let e = parse("time_s,target\n", "t.csv", &u, &p).unwrap_err();
        assert!(
            e.to_string().contains("expected a header with columns"),
            "{e}"
        );
    }
}
