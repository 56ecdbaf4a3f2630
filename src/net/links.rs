//! Measured core links from a CSV: per-link latency (ms) and capacity
//! (bit/s) for users who measured their network, overriding what the
//! underlay file gives.
//!
//! ```text
//! a,b,latency_ms,capacity
//! Seattle,Hayward,6.2,40G
//! Denver,Dallas,,10G          # empty cell: keep the file's value
//! ```
//!
//! * `a`, `b` (required): router labels or GML ids of the two ends of a
//!   link of the underlay (either order).
//! * `latency_ms`: the link's one-way propagation latency, ms. The
//!   connectivity model's route latency is `ms_per_km * length + per_path_ms`
//!   (\[Marfoq20\] Sec. 4 and App. F), additive over the links of a route, so
//!   a measured latency `L` sets the link's length to `L / ms_per_km` km:
//!   routes, `l(i,j)` and every network model then use it.
//! * `capacity`: the link's capacity in the syntax of
//!   [`crate::units::parse_bandwidth`]; it takes precedence over a global
//!   core capacity.
//!
//! At least one value column is required; another column, a link given
//! twice or a pair of routers without a link between them is an error.

use std::path::Path;

use crate::csv_file::{read_bounded, reader, record_error, Columns, CsvFileError};
use crate::net::underlay::{CapacitySource, LengthSource, Underlay};
use crate::units::{parse_bandwidth, BitsPerSec, Ms, MAX_COMPUTE_MS};

/// A link file that could not be read or applied (file:line in records).
pub type LinkFileError = CsvFileError;

/// Measured values of some links of an underlay.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct LinkOverrides {
    /// `(link index, latency ms, capacity bit/s)`, in file order.
    pub links: Vec<(usize, Option<Ms>, Option<BitsPerSec>)>,
}

impl LinkOverrides {
    /// Reads `path` for the links of `underlay`.
    pub fn read(path: &Path, underlay: &Underlay) -> Result<LinkOverrides, LinkFileError> {
        let text = read_bounded(path)?;
        Self::parse(&text, &path.display().to_string(), underlay)
    }

    /// Parses link-file `text`; `source` names it in errors.
    pub fn parse(
        text: &str,
        source: &str,
        underlay: &Underlay,
    ) -> Result<LinkOverrides, LinkFileError> {
        let err = |line: u64, message: String| record_error(source, line, message);
        let mut reader = reader(text);
        let headers = reader.headers().map_err(|e| err(1, e.to_string()))?.clone();
        const KNOWN: [&str; 4] = ["a", "b", "latency_ms", "capacity"];
        let header = Columns::accepted(&headers, &KNOWN).map_err(|m| err(1, m))?;
        let col = |name: &str| header.position(name);
        let (Some(ca), Some(cb)) = (col("a"), col("b")) else {
            return Err(err(1, "expected a header with columns `a` and `b`".into()));
        };
        let (clat, ccap) = (col("latency_ms"), col("capacity"));
        if clat.is_none() && ccap.is_none() {
            return Err(err(1, "expected `latency_ms` and/or `capacity`".into()));
        }
        let mut out = LinkOverrides::default();
        let mut set_on: Vec<Option<u64>> = vec![None; underlay.links.len()];
        for record in reader.records() {
            let record =
                record.map_err(|e| err(e.position().map_or(0, |p| p.line()), e.to_string()))?;
            let line = record.position().map_or(0, |p| p.line());
            let cell = |c: Option<usize>| c.and_then(|c| record.get(c)).unwrap_or("");
            let router = |name: &str| {
                underlay.find_router(name).ok_or_else(|| {
                    err(
                        line,
                        format!("no router with label or id `{name}` in {}", underlay.name),
                    )
                })
            };
            let (a, b) = (router(cell(Some(ca)))?, router(cell(Some(cb)))?);
            let (lo, hi) = (a.min(b), a.max(b));
            let link = underlay
                .links
                .iter()
                .position(|l| l.a == lo && l.b == hi)
                .ok_or_else(|| {
                    err(
                        line,
                        format!(
                            "`{}` and `{}` have no link between them in {}",
                            cell(Some(ca)),
                            cell(Some(cb)),
                            underlay.name
                        ),
                    )
                })?;
            if let Some(first) = set_on[link] {
                return Err(err(
                    line,
                    format!("this link is already set on line {first}; give every link one row"),
                ));
            }
            set_on[link] = Some(line);
            let latency = match cell(clat) {
                "" => None,
                t => Some(
                    t.parse::<Ms>()
                        .ok()
                        .filter(|l| l.is_finite() && *l >= 0.0 && *l <= MAX_COMPUTE_MS)
                        .ok_or_else(|| {
                            err(
                                line,
                                format!("latency_ms `{t}`: expected a time in ms >= 0 and <= 1e12"),
                            )
                        })?,
                ),
            };
            let capacity = match cell(ccap) {
                "" => None,
                t => Some(parse_bandwidth(t).map_err(|e| err(line, e.to_string()))?),
            };
            out.links.push((link, latency, capacity));
        }
        Ok(out)
    }

    /// Applies the measured values to `underlay`: a latency `L` (ms) sets
    /// the link's length to `L / ms_per_km` km (`ms_per_km` > 0), a capacity
    /// replaces the link's.
    pub fn apply(&self, underlay: &mut Underlay, ms_per_km: f64) {
        for &(l, latency, capacity) in &self.links {
            if let Some(link) = underlay.links.get_mut(l) {
                if let Some(ms) = latency {
                    link.length_km = ms / ms_per_km;
                    link.length_source = LengthSource::Measured;
                }
                if let Some(c) = capacity {
                    link.capacity_bps = c;
                    link.capacity_source = CapacitySource::Measured;
                }
            }
        }
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
    fn rows_set_links_in_either_order() {
        let mut u = gaia();
        let (a, b) = (u.links[0].a, u.links[0].b);
        let (la, lb) = (u.routers[a].label.clone(), u.routers[b].label.clone());
        let text = format!("a,b,latency_ms,capacity\n{lb},{la},17,2G\n");
        let o = LinkOverrides::parse(&text, "l.csv", &u).unwrap();
        o.apply(&mut u, 0.0085);
        assert!((u.links[0].length_km - 17.0 / 0.0085).abs() < 1e-9);
        assert_eq!(u.links[0].capacity_bps, 2e9);
        assert_eq!(u.links[0].length_source, LengthSource::Measured);
    }

    #[test]
    fn bad_files_name_the_line_and_the_problem() {
        let u = gaia();
        let (a, b) = (u.links[0].a, u.links[0].b);
        let pair = format!("{a},{b}");
        // A path a - b - c: a and c have no link.
        let path = Underlay::from_gml_str(
            "graph [ node [ id 0 label \"a\" ] node [ id 1 label \"b\" ] \
             node [ id 2 label \"c\" ] edge [ source 0 target 1 distance 10 ] \
             edge [ source 1 target 2 distance 10 ] ]",
            "path.gml",
            &LoadOptions::default(),
        )
        .unwrap();
        let e = LinkOverrides::parse("a,b,latency_ms\na,c,1\n", "l.csv", &path)
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("l.csv:2:") && e.contains("no link"), "{e}");
        for (text, line, needle) in [
            (
                format!("a,b,latency_ms\n{pair},1\n{pair},2\n"),
                3,
                "already set on line 2".to_string(),
            ),
            (
                format!("a,b,latency_ms\n{pair},-1\n"),
                2,
                "time in ms >= 0".into(),
            ),
            (
                "a,b,latency_ms\nAtlantis,0,1\n".into(),
                2,
                "Atlantis".into(),
            ),
            (
                "a,b,weight\n0,1,1\n".into(),
                1,
                "unknown column `weight`".into(),
            ),
            ("a,b\n0,1\n".into(), 1, "latency_ms".into()),
        ] {
            let e = LinkOverrides::parse(&text, "l.csv", &u)
                .unwrap_err()
                .to_string();
            assert!(e.starts_with(&format!("l.csv:{line}:")), "{text:?}: {e}");
            assert!(e.contains(&needle), "{text:?}: {e}");
        }
    }
}
