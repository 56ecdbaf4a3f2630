//! The network a result was computed on, for scripts: the workload, every
//! silo's compute time and access capacities, and the measured core links.
//!
//! `compare` and `simulate` put it in their JSON output (`network`) and its
//! summary columns ([`NetworkDescription::csv_columns`]) in their CSV, so a
//! result never loses the inputs that produced it (`--silos-csv`,
//! `--links-csv`, `--access-csv`, `--compute-ms`, ...).

use serde::Serialize;

use crate::net::delay::DelayModel;
use crate::net::links::{LinkFileError, LinkOverrides};
use crate::net::scenario::NetworkSpec;
use crate::net::underlay::Underlay;

/// One silo's values as the delay model uses them (\[Marfoq20\] eq. (3)).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SiloValues {
    /// Silo label (the router's label, `ROUTER#k` with several per router).
    pub silo: String,
    /// Label of the router the silo is attached to.
    pub router: String,
    /// `Tc(i)`: compute time of one local step, ms.
    pub compute_ms: f64,
    /// `Cup(i)`: uplink capacity, bit/s.
    pub up_bps: f64,
    /// `Cdn(i)`: downlink capacity, bit/s.
    pub down_bps: f64,
    /// Training examples (the `data` column of `--silos-csv`), when given.
    pub data: Option<usize>,
}

/// One core link given values by `--links-csv`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MeasuredLink {
    /// Label of one endpoint router.
    pub a: String,
    /// Label of the other endpoint router.
    pub b: String,
    /// Measured latency, ms (when the file gives one).
    pub latency_ms: Option<f64>,
    /// Measured capacity, bit/s (when the file gives one).
    pub capacity_bps: Option<f64>,
}

/// The network of a result: workload, per-silo values, measured links and
/// the input files they came from.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NetworkDescription {
    /// Workload preset name (`custom` when overridden).
    pub workload: String,
    /// Model size `M`, bit.
    pub model_bits: f64,
    /// Local steps `s` per round.
    pub local_steps: u32,
    /// `--access-csv`, as given.
    pub access_csv: Option<String>,
    /// `--silos-csv`, as given.
    pub silos_csv: Option<String>,
    /// `--links-csv`, as given.
    pub links_csv: Option<String>,
    /// Every silo, in silo order.
    pub silos: Vec<SiloValues>,
    /// The links `--links-csv` measured, in file order (empty without it).
    pub measured_links: Vec<MeasuredLink>,
}

impl NetworkDescription {
    /// Describes the network `spec` built as `model` on `underlay`.
    ///
    /// # Errors
    /// The link file of `spec` cannot be read again (it was read to build
    /// `model`, so only if it changed meanwhile).
    pub fn new(
        underlay: &Underlay,
        spec: &NetworkSpec,
        model: &DelayModel,
    ) -> Result<NetworkDescription, LinkFileError> {
        let placement = model.connectivity.placement();
        let labels = placement.labels(underlay);
        let router_label = |r: usize| underlay.routers.get(r).map_or("", |r| r.label.as_str());
        let steps = model.workload.local_steps.max(1) as f64;
        let silos = labels
            .into_iter()
            .enumerate()
            .map(|(i, silo)| SiloValues {
                silo,
                router: router_label(placement.router(i)).to_string(),
                compute_ms: model.compute_round_ms(i) / steps,
                up_bps: model.access.up[i],
                down_bps: model.access.down[i],
                data: model
                    .data_sizes
                    .as_ref()
                    .and_then(|d| d.samples.get(i).copied()),
            })
            .collect();
        let measured_links = match &spec.links_csv {
            None => Vec::new(),
            Some(path) => LinkOverrides::read(path, underlay)?
                .links
                .into_iter()
                .filter_map(|(l, latency_ms, capacity_bps)| {
                    let link = underlay.links.get(l)?;
                    Some(MeasuredLink {
                        a: router_label(link.a).to_string(),
                        b: router_label(link.b).to_string(),
                        latency_ms,
                        capacity_bps,
                    })
                })
                .collect(),
        };
        let path = |p: &Option<std::path::PathBuf>| p.as_ref().map(|p| p.display().to_string());
        Ok(NetworkDescription {
            workload: model.workload.name.clone(),
            model_bits: model.workload.model_bits,
            local_steps: model.workload.local_steps,
            access_csv: path(&spec.access_csv),
            silos_csv: path(&spec.silos_csv),
            links_csv: path(&spec.links_csv),
            silos,
            measured_links,
        })
    }

    /// Summary columns for one-row-per-overlay CSVs: the workload, the
    /// range (min, max) of every per-silo value, the number of measured
    /// links and the input files (empty when not given).
    pub fn csv_columns(&self) -> Vec<(&'static str, String)> {
        let range = |f: fn(&SiloValues) -> f64| {
            let (lo, hi) = self
                .silos
                .iter()
                .map(f)
                .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
                    (lo.min(v), hi.max(v))
                });
            (lo.to_string(), hi.to_string())
        };
        let (tc_lo, tc_hi) = range(|s| s.compute_ms);
        let (up_lo, up_hi) = range(|s| s.up_bps);
        let (down_lo, down_hi) = range(|s| s.down_bps);
        let file = |p: &Option<String>| p.clone().unwrap_or_default();
        vec![
            ("workload", self.workload.clone()),
            ("model_bits", self.model_bits.to_string()),
            ("local_steps", self.local_steps.to_string()),
            ("compute_ms_min", tc_lo),
            ("compute_ms_max", tc_hi),
            ("up_bps_min", up_lo),
            ("up_bps_max", up_hi),
            ("down_bps_min", down_lo),
            ("down_bps_max", down_hi),
            ("measured_links", self.measured_links.len().to_string()),
            ("access_csv", file(&self.access_csv)),
            ("silos_csv", file(&self.silos_csv)),
            ("links_csv", file(&self.links_csv)),
        ]
    }

    /// The per-silo values as CSV (`silo,router,compute_ms,up_bps,down_bps,data`).
    pub fn silos_to_csv(&self) -> Result<String, csv::Error> {
        crate::csv_file::serde_csv(&self.silos)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::csv_file::append_columns;
    use crate::net::scenario::load_underlay;
    use crate::net::underlay::LoadOptions;

    #[test]
    fn silos_csv_values_show_per_silo_and_in_ranges() {
        let dir = std::env::temp_dir().join(format!("fedtopo-network-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{e}"));
        let silos = dir.join("silos.csv");
        std::fs::write(&silos, "silo,compute_ms,up,down\nSeattle,7.5,1G,2G\n")
            .unwrap_or_else(|e| panic!("{e}"));
        let u = load_underlay(None, &LoadOptions::default()).unwrap_or_else(|e| panic!("{e}"));
        let spec = NetworkSpec {
            silos_csv: Some(silos.clone()),
            ..NetworkSpec::default()
        };
        let model = spec.build(&u).unwrap_or_else(|e| panic!("{e}"));
        let d = NetworkDescription::new(&u, &spec, &model).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(d.silos.len(), 22);
        let seattle = d
            .silos
            .iter()
            .find(|s| s.silo == "Seattle")
            .unwrap_or_else(|| panic!("no Seattle"));
        assert_eq!(
            (seattle.compute_ms, seattle.up_bps, seattle.down_bps),
            (7.5, 1e9, 2e9)
        );
        let other = d.silos.iter().find(|s| s.silo != "Seattle");
        let tc = model.workload.compute_ms;
        assert_eq!(other.map(|s| s.compute_ms), Some(tc));
        let cols = d.csv_columns();
        let get = |k: &str| {
            cols.iter()
                .find(|c| c.0 == k)
                .map(|c| c.1.clone())
                .unwrap_or_default()
        };
        assert_eq!(get("compute_ms_min"), tc.min(7.5).to_string());
        assert_eq!(get("compute_ms_max"), tc.max(7.5).to_string());
        // The other silos keep the default 10 Gbit/s access.
        assert_eq!(get("up_bps_min"), "1000000000");
        assert_eq!(get("down_bps_min"), "2000000000");
        assert_eq!(get("down_bps_max"), "10000000000");
        assert_eq!(get("silos_csv"), silos.display().to_string());
        assert_eq!(get("links_csv"), "");
        let csv = d.silos_to_csv().unwrap_or_else(|e| panic!("{e}"));
        assert!(csv.starts_with("silo,router,compute_ms,up_bps,down_bps,data\n"));
        assert!(csv.contains("\nSeattle,Seattle,7.5,1000000000.0,2000000000.0,\n"));
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn append_columns_adds_header_and_values() {
        let out = append_columns("a,b\n1,2\n3,\"x,y\"\n", &[("c", "z".into())])
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(out, "a,b,c\n1,2,z\n3,\"x,y\",z\n");
    }
}
