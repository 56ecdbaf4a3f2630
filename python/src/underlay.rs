//! `Underlay`: a loaded network underlay (GML file or built-in).

use std::sync::Arc;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use fedtopo::connectivity::ConnectivityOptions;
use fedtopo::scenario::load_underlay;
use fedtopo::underlay::diameter::diameter;
use fedtopo::underlay::{
    Disconnected, IsolatedRouters, LoadOptions, MissingCoordinates, Underlay as RsUnderlay,
};
use fedtopo::units::parse_bandwidth;

use crate::value_error;

/// A network underlay: routers and core links, loaded from a GML file or a
/// built-in name (`aws-north-america`, `aws-gaia`).
#[pyclass(module = "fedtopo._fedtopo", frozen)]
pub struct Underlay {
    pub(crate) inner: Arc<RsUnderlay>,
}

fn missing_policy(text: &str) -> PyResult<MissingCoordinates> {
    match text {
        "estimate" => Ok(MissingCoordinates::Estimate),
        "refuse" => Ok(MissingCoordinates::Refuse),
        "drop" => Ok(MissingCoordinates::Drop),
        other => Err(PyValueError::new_err(format!(
            "missing_coordinates `{other}`: expected estimate, refuse or drop"
        ))),
    }
}

fn isolated_policy(text: &str) -> PyResult<IsolatedRouters> {
    match text {
        "drop" => Ok(IsolatedRouters::Drop),
        "keep" => Ok(IsolatedRouters::Keep),
        other => Err(PyValueError::new_err(format!(
            "isolated_routers `{other}`: expected drop or keep"
        ))),
    }
}

#[pymethods]
impl Underlay {
    /// Loads a GML file or a built-in underlay with the CLI's loading
    /// policies (`--missing-coordinates`, `--default-length-km`,
    /// `--isolated-routers`, `--largest-component`,
    /// `--default-core-capacity`).
    #[staticmethod]
    #[pyo3(signature = (
        path_or_builtin = None,
        missing_coordinates = "estimate",
        largest_component = false,
        isolated_routers = "drop",
        default_length_km = None,
        default_core_capacity = "1G",
    ))]
    pub(crate) fn load(
        path_or_builtin: Option<std::path::PathBuf>,
        missing_coordinates: &str,
        largest_component: bool,
        isolated_routers: &str,
        default_length_km: Option<f64>,
        default_core_capacity: &str,
    ) -> PyResult<Self> {
        if let Some(km) = default_length_km {
            if !(km.is_finite() && km >= 0.0) {
                return Err(PyValueError::new_err(format!(
                    "default_length_km `{km}`: expected a finite length >= 0 in km"
                )));
            }
        }
        let default_capacity_bps = parse_bandwidth(default_core_capacity).map_err(|_| {
            PyValueError::new_err(format!(
                "default_core_capacity `{default_core_capacity}`: expected a bandwidth such as 1G"
            ))
        })?;
        let opts = LoadOptions {
            missing_coordinates: missing_policy(missing_coordinates)?,
            isolated_routers: isolated_policy(isolated_routers)?,
            disconnected: if largest_component {
                Disconnected::LargestComponent
            } else {
                Disconnected::Refuse
            },
            default_capacity_bps,
            default_length_km,
        };
        let spec = path_or_builtin.map(|p| p.to_string_lossy().into_owned());
        let u = load_underlay(spec.as_deref(), &opts).map_err(|e| value_error(&e))?;
        Ok(Underlay { inner: Arc::new(u) })
    }

    /// The underlay's name (file stem or built-in name).
    #[getter]
    fn name(&self) -> String {
        self.inner.name.clone()
    }

    /// Router labels, in file order (after drops).
    #[getter]
    fn routers(&self) -> Vec<String> {
        self.inner.routers.iter().map(|r| r.label.clone()).collect()
    }

    /// Number of routers.
    fn __len__(&self) -> usize {
        self.inner.node_count()
    }

    fn __repr__(&self) -> String {
        format!(
            "Underlay({:?}, routers={}, links={})",
            self.inner.name,
            self.inner.node_count(),
            self.inner.link_count()
        )
    }

    /// The summary of `fedtopo underlay info --format json` (without the
    /// notes), plus what loading changed (`report`), as a dict.
    fn info<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let u = &self.inner;
        let n = u.node_count();
        // As `fedtopo underlay info`: exact up to 10,000 routers, bounded
        // above (`diameter_bounds` then says how).
        let d = diameter(u);
        let latency = ConnectivityOptions::default();
        let ms = |km: f64| {
            if n < 2 {
                0.0
            } else {
                latency.route_latency_ms(km)
            }
        };
        let (dkm, dhops, dms) = (d.km, d.hops, ms(d.km));
        let bounds = (!d.all_pairs).then(|| {
            serde_json::json!({
                "km_upper": d.km_upper,
                "ms_upper": ms(d.km_upper),
                "km_exact": d.km_exact(),
                "hops_lower_bound": true,
                "sources_scanned": d.sources,
            })
        });
        let caps = u.links.iter().map(|l| l.capacity_bps);
        let mut info = serde_json::json!({
            "name": u.name,
            "routers": n,
            "links": u.link_count(),
            "directed_source": u.directed_source,
            "total_length_km": u.links.iter().map(|l| l.length_km).sum::<f64>(),
            "diameter_km": dkm,
            "diameter_hops": dhops,
            "diameter_ms": dms,
            "min_capacity_bps": caps.clone().fold(f64::INFINITY, f64::min),
            "max_capacity_bps": caps.fold(0.0, f64::max),
            "routers_without_coordinates": u.routers.iter().filter(|r| r.lat_lon.is_none()).count(),
            "estimated_positions": u.report.estimated_positions,
            "report": u.report,
        });
        if let (Some(b), Some(o)) = (bounds, info.as_object_mut()) {
            o.insert("diameter_bounds".into(), b);
        }
        let text = serde_json::to_string(&info).map_err(|e| value_error(&e))?;
        crate::from_json(py, &text)
    }
}
