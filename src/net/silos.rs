//! Heterogeneous silos from a CSV file: per-silo local-step time `Tc(i)`
//! (ms) and access capacities `Cup(i)`, `Cdn(i)` (bit/s), the per-silo
//! terms of \[Marfoq20\] eq. (3), and the number of training examples each
//! silo holds (`data`, used by `train` only).
//!
//! The file has a header naming its columns, in any order:
//!
//! ```text
//! silo,compute_ms,up,down,data   # or `capacity` for up = down
//! Seattle,30.5,1G,500M,1200
//! Miami#1,12,,,300               # empty cell: keep the default
//! ```
//!
//! * `silo` (required): a router label or GML id, meaning every silo placed
//!   at that router, or a silo label `ROUTER#k` (the `k`-th silo, from 0, of
//!   a router that hosts several), meaning that silo only.
//! * `compute_ms`: time of one local step, ms (>= 0, at most
//!   [`crate::units::MAX_COMPUTE_MS`]).
//! * `up`, `down` or `capacity`: access capacities in the syntax of
//!   [`crate::units::parse_bandwidth`] (`10G`, `100Mbps`, `inf`).
//! * `data`: the number of training examples the silo holds, a whole
//!   number >= 1 (a count, not a relative weight; a router row gives that
//!   many to *each* of its silos). When the column is present every silo
//!   must get a size (no default: a silo without one is an error naming
//!   it), see [`SiloOverrides::data_sizes`]. Data sizes do not enter the
//!   timing (eq. (3) has no data term); `fedtopo train` partitions the
//!   training set so that silo `i` holds exactly `data(i)` examples
//!   (refused when they add up to more than the training set), and the
//!   consensus rules that weight silos by data size (DecAvg, and STAR's
//!   FedAvg average) use them (`crate::train`).
//!
//! At least one value column is required; any other column is an error (no
//! column is silently ignored), and so is a silo named by two rows (no
//! "last row wins"). Lines starting with `#` are comments.

use std::path::Path;

use crate::csv_file::{read_bounded, reader, record_error, CsvFileError};
use crate::net::placement::SiloPlacement;
use crate::net::underlay::Underlay;
use crate::units::{parse_bandwidth, BitsPerSec, Ms, MAX_COMPUTE_MS};

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
    /// Training examples held by silo `i` (the `data` column).
    pub data: Vec<Option<usize>>,
    /// True when the file has a `data` column.
    pub has_data_column: bool,
    /// `line[i]`: the line of the row that set silo `i` (0: no row).
    lines: Vec<u64>,
    /// The file, as named in errors.
    source: String,
}

/// The training examples held by every silo, from the `data` column of a
/// silo file (see the module docs): a count per silo, each >= 1.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct DataSizes {
    /// `samples[i]`: examples held by silo `i`.
    pub samples: Vec<usize>,
    /// The file they come from (named in errors, e.g. a total larger than
    /// the training set).
    pub source: String,
}

impl DataSizes {
    /// Total examples over all silos.
    pub fn total(&self) -> usize {
        self.samples.iter().sum()
    }
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
            data: vec![None; n],
            has_data_column: columns.data.is_some(),
            lines: vec![0; n],
            source: source.to_string(),
        };
        let labels = placement.labels(underlay);
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
                        .filter(|c| c.is_finite() && *c >= 0.0 && *c <= MAX_COMPUTE_MS)
                        .ok_or_else(|| {
                            err(
                                line,
                                format!("compute_ms `{t}`: expected a time in ms >= 0 and <= 1e12"),
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
            let data = match cell(columns.data) {
                "" => None,
                t => Some(t.parse::<usize>().ok().filter(|&d| d >= 1).ok_or_else(|| {
                    err(
                        line,
                        format!("data `{t}`: expected a whole number of training examples >= 1"),
                    )
                })?),
            };
            for s in silos {
                if out.lines[s] != 0 {
                    let first = out.lines[s];
                    return Err(err(
                        line,
                        format!(
                            "silo `{}` is already set on line {first}; give every silo one row",
                            labels[s]
                        ),
                    ));
                }
                out.lines[s] = line.max(1);
                out.compute_ms[s] = compute;
                out.up[s] = up;
                out.down[s] = down;
                out.data[s] = data;
            }
        }
        Ok(out)
    }

    /// The silos' data sizes: `None` when the file has no `data` column.
    ///
    /// # Errors
    /// The column is present but some silo gets no size (no row, or an
    /// empty cell): the error names the first such silo, with the line of
    /// its row (line 1, the header, when it has none).
    pub fn data_sizes(&self, labels: &[String]) -> Result<Option<DataSizes>, SiloFileError> {
        if !self.has_data_column {
            return Ok(None);
        }
        let missing: Vec<usize> = (0..self.data.len())
            .filter(|&i| self.data[i].is_none())
            .collect();
        if let Some(&i) = missing.first() {
            let label = labels.get(i).map_or("?", String::as_str);
            return Err(record_error(
                &self.source,
                self.lines[i].max(1),
                format!(
                    "the data column gives no size for silo `{label}` ({} of {} silos have none); \
                     give every silo a number of training examples, or drop the column",
                    missing.len(),
                    self.data.len()
                ),
            ));
        }
        Ok(Some(DataSizes {
            samples: self.data.iter().map(|d| d.unwrap_or(0)).collect(),
            source: self.source.clone(),
        }))
    }

    /// Number of silos the file sets anything for.
    pub fn silos_set(&self) -> usize {
        (0..self.compute_ms.len())
            .filter(|&i| {
                self.compute_ms[i].is_some()
                    || self.up[i].is_some()
                    || self.down[i].is_some()
                    || self.data[i].is_some()
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
    data: Option<usize>,
}

impl Columns {
    fn of(headers: &csv::StringRecord) -> Result<Columns, String> {
        const KNOWN: [&str; 6] = ["silo", "compute_ms", "up", "down", "capacity", "data"];
        let header = crate::csv_file::Columns::accepted(headers, &KNOWN)?;
        let col = |name: &str| header.position(name);
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
            data: col("data"),
        };
        if c.compute.is_none() && c.up.is_none() && c.down.is_none() && c.data.is_none() {
            return Err("expected at least one of compute_ms, up, down, capacity, data".into());
        }
        Ok(c)
    }
}

/// The silos `name` designates: a silo label (`ROUTER#k`), else every silo
/// placed at the router with that label or id.
pub(crate) fn resolve(
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
    use crate::net::scenario::load_underlay;
    use crate::net::underlay::LoadOptions;

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
    fn data_sizes_are_per_silo_counts_for_every_silo() {
        let u = gaia();
        let p = SiloPlacement::per_router(2, u.node_count()).unwrap();
        let labels = p.labels(&u);
        let n = p.silo_count();
        // Every router's two silos get 100 each, then one silo is set alone.
        let mut text = String::from("silo,data,compute_ms\n");
        for r in 1..u.node_count() {
            text.push_str(&format!("{},100,\n", u.routers[r].label));
        }
        let r0 = &u.routers[0].label;
        text.push_str(&format!("{r0}#0,7,3\n{r0}#1,9,\n"));
        let o = SiloOverrides::parse(&text, "s.csv", &u, &p).unwrap();
        let d = o.data_sizes(&labels).unwrap().unwrap();
        assert_eq!(d.source, "s.csv");
        assert_eq!(&d.samples[..2], &[7, 9]);
        assert!(d.samples[2..].iter().all(|&s| s == 100));
        assert_eq!(d.total(), 16 + 100 * (n - 2));
        assert_eq!(o.silos_set(), n);
        // Without the column: no sizes, and no error.
        let none = SiloOverrides::parse("silo,compute_ms\nTokyo,1\n", "s.csv", &u, &p).unwrap();
        assert_eq!(none.data_sizes(&labels).unwrap(), None);
        // A silo without a size: refused, naming it (its row, or the header).
        let partial = format!("silo,data,compute_ms\n{r0}#0,7,\n{r0}#1,,4\n");
        let e = SiloOverrides::parse(&partial, "s.csv", &u, &p)
            .unwrap()
            .data_sizes(&labels)
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("s.csv:3: "), "{e}");
        assert!(e.contains(&format!("silo `{r0}#1`")), "{e}");
        assert!(
            e.contains(&format!("({} of {n} silos have none)", n - 1)),
            "{e}"
        );
        let e = SiloOverrides::parse(&format!("silo,data\n{r0}#0,7\n"), "s.csv", &u, &p)
            .unwrap()
            .data_sizes(&labels)
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("s.csv:1: "), "{e}");
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
            ("silo,compute_ms\nTokyo,-1\n", 2, "time in ms >= 0"),
            ("silo,up\nTokyo,fast\n", 2, "fast"),
            (
                "silo,data\nTokyo,0\n",
                2,
                "data `0`: expected a whole number",
            ),
            ("silo,data\nTokyo,-4\n", 2, "data `-4`"),
            ("silo,data\nTokyo,2.5\n", 2, "data `2.5`"),
            ("silo,data\nTokyo,many\n", 2, "data `many`"),
            ("silo,data\nTokyo,3\nTokyo,4\n", 3, "already set on line 2"),
            ("silo,weight\nTokyo,3\n", 1, "unknown column `weight`"),
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
