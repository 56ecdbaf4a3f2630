//! Heterogeneous silos from a CSV file: per-silo local-step time `Tc(i)`
//! (ms) and access capacities `Cup(i)`, `Cdn(i)` (bit/s), the per-silo
//! terms of \[Marfoq20\] eq. (3).
//!
//! The file has a header naming its columns, in any order:
//!
//! ```text
//! silo,compute_ms,up,down        # or `capacity` for up = down
//! Seattle,30.5,1G,500M
//! Miami#1,12,,                   # empty cell: keep the default
//! ```
//!
//! * `silo` (required): a router label or GML id, meaning every silo placed
//!   at that router, or a silo label `ROUTER#k` (the `k`-th silo, from 0, of
//!   a router that hosts several), meaning that silo only.
//! * `compute_ms`: time of one local step, ms (finite, >= 0).
//! * `up`, `down` or `capacity`: access capacities in the syntax of
//!   [`crate::units::parse_bandwidth`] (`10G`, `100Mbps`, `inf`).
//!
//! At least one value column is required; any other column is an error (no
//! column is silently ignored), and so is a silo named by two rows (no
//! "last row wins"). Lines starting with `#` are comments.

use std::path::Path;

use crate::csv_file::{read_bounded, reader, record_error, CsvFileError};
use crate::placement::SiloPlacement;
use crate::underlay::Underlay;
use crate::units::{parse_bandwidth, BitsPerSec, Ms};

/// A silo file that could not be read or applied (file:line in records).
pub type SiloFileError = CsvFileError;

/// What a silo file sets, per silo (`None`: keep the default).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SiloOverrides {
    /// `Tc(i)`, ms per local step.
    pub compute_ms: Vec<Option<Ms>>,
    /// `Cup(i)`, bit/s.
    pub up: Vec<Option<BitsPerSec>>,
    /// `Cdn(i)`, bit/s.
    pub down: Vec<Option<BitsPerSec>>,
}

impl SiloOverrides {
    /// Reads `path` for the silos of `placement` on `underlay`.
    pub fn read(
        path: &Path,
        underlay: &Underlay,
        placement: &SiloPlacement,
    ) -> Result<SiloOverrides, SiloFileError> {
        let text = read_bounded(path)?;
        Self::parse(&text, &path.display().to_string(), underlay, placement)
    }

    /// Parses silo-file `text`; `source` names it in errors.
    pub fn parse(
        text: &str,
        source: &str,
        underlay: &Underlay,
        placement: &SiloPlacement,
    ) -> Result<SiloOverrides, SiloFileError> {
        let err = |line: u64, message: String| record_error(source, line, message);
        let mut reader = reader(text);
        let headers = reader.headers().map_err(|e| err(1, e.to_string()))?.clone();
        let columns = Columns::of(&headers).map_err(|m| err(1, m))?;
        let n = placement.silo_count();
        let mut out = SiloOverrides {
            compute_ms: vec![None; n],
            up: vec![None; n],
            down: vec![None; n],
        };
        let labels = placement.labels(underlay);
        let mut named_on: Vec<Option<u64>> = vec![None; n];
        for record in reader.records() {
            let record =
                record.map_err(|e| err(e.position().map_or(0, |p| p.line()), e.to_string()))?;
            let line = record.position().map_or(0, |p| p.line());
            let cell = |c: Option<usize>| c.and_then(|c| record.get(c)).unwrap_or("");
            let name = cell(Some(columns.silo));
            let silos = resolve(name, underlay, placement, &labels).ok_or_else(|| {
                err(
                    line,
                    format!(
                        "no silo or router with label or id `{name}` in {}",
                        underlay.name
                    ),
                )
            })?;
            let compute = match cell(columns.compute) {
                "" => None,
                t => Some(
                    t.parse::<Ms>()
                        .ok()
                        .filter(|c| c.is_finite() && *c >= 0.0)
                        .ok_or_else(|| {
                            err(
                                line,
                                format!("compute_ms `{t}`: expected a finite time in ms >= 0"),
                            )
                        })?,
                ),
            };
            let bandwidth = |t: &str| match t {
                "" => Ok(None),
                t => parse_bandwidth(t)
                    .map(Some)
                    .map_err(|e| err(line, e.to_string())),
            };
            let up = bandwidth(cell(columns.up))?;
            let down = bandwidth(cell(columns.down))?;
            for s in silos {
                if let Some(first) = named_on[s] {
                    return Err(err(
                        line,
                        format!(
                            "silo `{}` is already set on line {first}; give every silo one row",
                            labels[s]
                        ),
                    ));
                }
                named_on[s] = Some(line);
                out.compute_ms[s] = compute;
                out.up[s] = up;
                out.down[s] = down;
            }
        }
        Ok(out)
    }

    /// Number of silos the file sets anything for.
    pub fn silos_set(&self) -> usize {
        (0..self.compute_ms.len())
            .filter(|&i| {
                self.compute_ms[i].is_some() || self.up[i].is_some() || self.down[i].is_some()
            })
            .count()
    }
}

/// Positions of the columns of a silo file.
struct Columns {
    silo: usize,
    compute: Option<usize>,
    up: Option<usize>,
    down: Option<usize>,
}

impl Columns {
    fn of(headers: &csv::StringRecord) -> Result<Columns, String> {
        const KNOWN: [&str; 5] = ["silo", "compute_ms", "up", "down", "capacity"];
        if let Some(bad) = headers
            .iter()
            .find(|h| !KNOWN.iter().any(|k| h.eq_ignore_ascii_case(k)))
        {
            return Err(format!(
                "unknown column `{bad}`; expected silo, compute_ms, up, down or capacity"
            ));
        }
        let col = |name: &str| headers.iter().position(|h| h.eq_ignore_ascii_case(name));
        let silo = col("silo").ok_or("expected a header with a `silo` column")?;
        let capacity = col("capacity");
        if capacity.is_some() && (col("up").is_some() || col("down").is_some()) {
            return Err("give `capacity` or `up`/`down`, not both".into());
        }
        let c = Columns {
            silo,
            compute: col("compute_ms"),
            up: col("up").or(capacity),
            down: col("down").or(capacity),
        };
        if c.compute.is_none() && c.up.is_none() && c.down.is_none() {
            return Err("expected at least one of compute_ms, up, down, capacity".into());
        }
        Ok(c)
    }
}

/// The silos `name` designates: a silo label (`ROUTER#k`), else every silo
/// placed at the router with that label or id.
fn resolve(
    name: &str,
    underlay: &Underlay,
    placement: &SiloPlacement,
    labels: &[String],
) -> Option<Vec<usize>> {
    if let Some(s) = labels.iter().position(|l| l == name) {
        if name.contains('#') {
            return Some(vec![s]);
        }
    }
    let r = underlay.find_router(name)?;
    let silos: Vec<usize> = placement.silos_at(r).collect();
    (!silos.is_empty()).then_some(silos)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::load_underlay;
    use crate::underlay::LoadOptions;

    fn gaia() -> Underlay {
        load_underlay(Some("aws-gaia"), &LoadOptions::default()).unwrap()
    }

    #[test]
    fn rows_set_routers_or_single_silos() {
        let u = gaia();
        let p = SiloPlacement::per_router(2, u.node_count()).unwrap();
        let text = "silo,compute_ms,up,down\nTokyo,30,1G,\nSeoul#1,,,500M\n# note\n";
        let o = SiloOverrides::parse(text, "s.csv", &u, &p).unwrap();
        assert_eq!(o.silos_set(), 3);
        assert_eq!(
            (o.compute_ms[10], o.compute_ms[11]),
            (Some(30.0), Some(30.0))
        );
        assert_eq!((o.up[10], o.down[10]), (Some(1e9), None));
        assert_eq!((o.down[12], o.down[13]), (None, Some(5e8)));
        let sym = SiloOverrides::parse("silo,capacity\n0,2G\n", "s.csv", &u, &p).unwrap();
        assert_eq!((sym.up[0], sym.down[1]), (Some(2e9), Some(2e9)));
    }

    #[test]
    fn bad_files_name_the_line_and_the_problem() {
        let u = gaia();
        let p = SiloPlacement::one_per_router(u.node_count());
        for (text, line, needle) in [
            (
                "silo,compute_ms\nTokyo,1\nTokyo,2\n",
                3,
                "already set on line 2",
            ),
            ("silo,compute_ms\nAtlantis,1\n", 2, "Atlantis"),
            ("silo,compute_ms\nTokyo,-1\n", 2, "finite time"),
            ("silo,up\nTokyo,fast\n", 2, "fast"),
            ("silo,data\nTokyo,3\n", 1, "unknown column `data`"),
            ("silo\nTokyo\n", 1, "at least one of"),
            ("name,up\nTokyo,1G\n", 1, "unknown column `name`"),
            ("silo,capacity,up\nTokyo,1G,1G\n", 1, "not both"),
        ] {
            let e = SiloOverrides::parse(text, "s.csv", &u, &p)
                .unwrap_err()
                .to_string();
            assert!(e.starts_with(&format!("s.csv:{line}:")), "{text:?}: {e}");
            assert!(e.contains(needle), "{text:?}: {e}");
        }
    }
}
