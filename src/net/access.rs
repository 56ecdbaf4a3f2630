//! Silo access links: the uplink `Cup(i)` and downlink `Cdn(i)` that attach
//! each silo to its router (\[Marfoq20\] Sec. 2, "node-capacitated" network).
//!
//! By default every silo gets a symmetric access link of 10 Gbit/s, the
//! paper's setting for \[Marfoq20\] Table 3. Capacities can be set globally or per silo
//! from a CSV file with a header `silo,up,down` (or `silo,capacity` for
//! symmetric links); `silo` is a router label or GML id, capacities use the
//! unit syntax of [`crate::units::parse_bandwidth`] (`10G`, `100Mbps`, `1e9`).

use std::path::Path;

use crate::csv_file::{read_bounded, reader, record_error, Columns, CsvFileError};
use crate::net::placement::SiloPlacement;
use crate::net::underlay::Underlay;
use crate::units::{parse_bandwidth, BitsPerSec};
use serde::Serialize;

/// Default access capacity, bit/s (10 Gbit/s, as in \[Marfoq20\] Table 3).
pub const DEFAULT_ACCESS_BPS: BitsPerSec = 10e9;

/// Uplink and downlink capacity of every silo, bit/s (`f64::INFINITY` = unlimited).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AccessLinks {
    /// `Cup(i)`, bit/s.
    pub up: Vec<BitsPerSec>,
    /// `Cdn(i)`, bit/s.
    pub down: Vec<BitsPerSec>,
}

/// A per-silo capacity file that could not be read or applied (file:line
/// in records).
pub type AccessError = CsvFileError;

impl AccessLinks {
    /// `n` silos with the same symmetric capacity (bit/s).
    pub fn uniform(n: usize, capacity: BitsPerSec) -> Self {
        AccessLinks {
            up: vec![capacity; n],
            down: vec![capacity; n],
        }
    }

    /// Number of silos.
    pub fn len(&self) -> usize {
        self.up.len()
    }

    /// True when there are no silos.
    pub fn is_empty(&self) -> bool {
        self.up.is_empty()
    }

    /// Sets silo `i`'s capacities (bit/s).
    pub fn set(&mut self, i: usize, up: BitsPerSec, down: BitsPerSec) {
        self.up[i] = up;
        self.down[i] = down;
    }

    /// Applies a per-silo CSV (`silo,up,down` or `silo,capacity`) on top of
    /// the current values. Returns the number of silos changed.
    pub fn apply_csv(&mut self, path: &Path, underlay: &Underlay) -> Result<usize, AccessError> {
        self.apply_csv_at(path, underlay, None)
    }

    /// As [`AccessLinks::apply_csv`] with silos attached by `placement`
    /// (`None`: one silo per router): the `silo` column names a router, and
    /// its capacities go to every silo placed at that router. Returns the
    /// number of silos changed.
    pub fn apply_csv_at(
        &mut self,
        path: &Path,
        underlay: &Underlay,
        placement: Option<&SiloPlacement>,
    ) -> Result<usize, AccessError> {
        let text = read_bounded(path)?;
        self.apply_csv_str_at(&text, &path.display().to_string(), underlay, placement)
    }

    /// As [`AccessLinks::apply_csv`], from text; `source` names it in errors.
    pub fn apply_csv_str(
        &mut self,
        text: &str,
        source: &str,
        underlay: &Underlay,
    ) -> Result<usize, AccessError> {
        self.apply_csv_str_at(text, source, underlay, None)
    }

    /// As [`AccessLinks::apply_csv_at`], from text; `source` names it in errors.
    pub fn apply_csv_str_at(
        &mut self,
        text: &str,
        source: &str,
        underlay: &Underlay,
        placement: Option<&SiloPlacement>,
    ) -> Result<usize, AccessError> {
        let rec_err = |line: u64, message: String| record_error(source, line, message);
        let mut reader = reader(text);
        let headers = reader
            .headers()
            .map_err(|e| rec_err(1, e.to_string()))?
            .clone();
        let header = Columns::accepted(&headers, &["silo", "up", "down", "capacity"])
            .map_err(|m| rec_err(1, m))?;
        let col = |name: &str| header.position(name);
        let silo_col = col("silo").ok_or_else(|| {
            rec_err(
                1,
                "expected a header with a `silo` column (silo,up,down or silo,capacity)".into(),
            )
        })?;
        let (up_col, down_col) = match (col("up"), col("down"), col("capacity")) {
            (Some(u), Some(d), None) => (u, d),
            (None, None, Some(c)) => (c, c),
            (_, _, Some(_)) => {
                return Err(rec_err(
                    1,
                    "give `capacity` (both directions) or `up` and `down`, not both".into(),
                ))
            }
            _ => {
                return Err(rec_err(
                    1,
                    "expected columns `up` and `down`, or `capacity`".into(),
                ))
            }
        };
        let mut changed = 0;
        // The line that set each silo: a silo named twice is an error, not
        // "last row wins".
        let mut set_on: Vec<Option<u64>> = vec![None; self.len()];
        for record in reader.records() {
            let record = record.map_err(|e| {
                let line = e.position().map_or(0, |p| p.line());
                rec_err(line, e.to_string())
            })?;
            let line = record.position().map_or(0, |p| p.line());
            let field = |c: usize| record.get(c).unwrap_or("");
            let name = field(silo_col);
            let i = underlay.find_router(name).ok_or_else(|| {
                rec_err(
                    line,
                    format!("no silo with label or id `{name}` in {}", underlay.name),
                )
            })?;
            let up = parse_bandwidth(field(up_col)).map_err(|e| rec_err(line, e.to_string()))?;
            let down =
                parse_bandwidth(field(down_col)).map_err(|e| rec_err(line, e.to_string()))?;
            let silos: Vec<usize> = match placement {
                None => vec![i],
                Some(p) => p.silos_at(i).collect(),
            };
            for s in silos {
                if let Some(first) = set_on.get(s).copied().flatten() {
                    return Err(rec_err(
                        line,
                        format!(
                            "silo `{name}` is already set on line {first}; give every silo one row"
                        ),
                    ));
                }
                if let Some(slot) = set_on.get_mut(s) {
                    *slot = Some(line);
                }
                self.set(s, up, down);
                changed += 1;
            }
        }
        Ok(changed)
    }
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
    fn csv_sets_named_silos() {
        let u = gaia();
        let mut a = AccessLinks::uniform(u.node_count(), DEFAULT_ACCESS_BPS);
        let text = "silo,up,down\nTokyo,100M,1G\n# a comment\n3,1G,inf\n";
        assert_eq!(a.apply_csv_str(text, "x.csv", &u).unwrap(), 2);
        assert_eq!((a.up[5], a.down[5]), (100e6, 1e9));
        assert_eq!(a.up[3], 1e9);
        assert!(a.down[3].is_infinite());
        assert_eq!(a.up[0], DEFAULT_ACCESS_BPS);
        let mut b = AccessLinks::uniform(u.node_count(), DEFAULT_ACCESS_BPS);
        b.apply_csv_str("silo,capacity\nSeoul,2.5G\n", "y.csv", &u)
            .unwrap();
        assert_eq!((b.up[6], b.down[6]), (2.5e9, 2.5e9));
    }

    #[test]
    fn csv_errors_name_file_and_line() {
        let u = gaia();
        let mut a = AccessLinks::uniform(u.node_count(), DEFAULT_ACCESS_BPS);
        let e = a
            .apply_csv_str("silo,up,down\nTokyo,1G,1G\nAtlantis,1G,1G\n", "x.csv", &u)
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("x.csv:3:") && e.contains("Atlantis"), "{e}");
        let e = a
            .apply_csv_str("silo,up,down\nTokyo,fast,1G\n", "x.csv", &u)
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("x.csv:2:") && e.contains("fast"), "{e}");
        let e = a
            .apply_csv_str("name,up\n", "x.csv", &u)
            .unwrap_err()
            .to_string();
        assert!(e.contains("unknown column `name`"), "{e}");
        let e = a
            .apply_csv_str("up,down\n", "x.csv", &u)
            .unwrap_err()
            .to_string();
        assert!(e.contains("`silo` column"), "{e}");
        // No column is ignored: `up` next to `capacity` is ambiguous, a
        // misspelled or repeated column is named.
        for (text, needle) in [
            (
                "silo,up,capacity\nTokyo,1G,2G\n",
                "`capacity` (both directions) or `up` and `down`",
            ),
            (
                "silo,up,dwn\nTokyo,1G,2G\n",
                "unknown column `dwn` (column 3); expected `silo`, `up`, `down` or `capacity`",
            ),
            (
                "silo,capacity,capacity\nTokyo,1G,2G\n",
                "`capacity` is named twice",
            ),
            (
                "silo,up\nTokyo,1G\n",
                "expected columns `up` and `down`, or `capacity`",
            ),
        ] {
            let e = a.apply_csv_str(text, "x.csv", &u).unwrap_err().to_string();
            assert!(
                e.starts_with("x.csv:1:") && e.contains(needle),
                "{text:?}: {e}"
            );
        }
        let e = a
            .apply_csv_str("silo,up,down\nTokyo,1G,1G\n5,2G,2G\n", "x.csv", &u)
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("x.csv:3:") && e.contains("already set on line 2"),
            "{e}"
        );
    }

    #[test]
    fn csv_with_placement_sets_every_silo_of_the_router() {
        let u = gaia();
        let p = SiloPlacement::per_router(2, u.node_count()).unwrap();
        let mut a = AccessLinks::uniform(p.silo_count(), DEFAULT_ACCESS_BPS);
        let n = a
            .apply_csv_str_at("silo,up,down\nTokyo,100M,1G\n", "x.csv", &u, Some(&p))
            .unwrap();
        assert_eq!(n, 2);
        assert_eq!((a.up[10], a.up[11], a.down[11]), (100e6, 100e6, 1e9));
        assert_eq!(a.up[9], DEFAULT_ACCESS_BPS);
        assert_eq!(a.up[12], DEFAULT_ACCESS_BPS);
    }
}
