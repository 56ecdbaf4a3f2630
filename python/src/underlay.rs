//! `Underlay`: a loaded network underlay (GML file or built-in).

use std::sync::Arc;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use fedtopo::net::scenario::load_underlay;
use fedtopo::net::underlay::{
    Disconnected, IsolatedRouters, LoadOptions, MissingCoordinates, Underlay as RsUnderlay,
};
use fedtopo::report::render_json;
use fedtopo::report::underlay_info::UnderlayInfo;
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
    /// policies. Arguments (the CLI option in brackets):
    ///
    /// * `path_or_builtin`: a GML path (str or os.PathLike) or a built-in
    ///   name (`"aws-north-america"`, the default, or `"aws-gaia"`);
    /// * `missing_coordinates`: routers without Latitude/Longitude whose
    ///   links have no `distance`: `"estimate"` (default), `"refuse"` or
    ///   `"drop"` [`--missing-coordinates`];
    /// * `largest_component`: a bool, keep the largest connected component
    ///   of a disconnected underlay (default: refuse it)
    ///   [`--largest-component`];
    /// * `isolated_routers`: `"drop"` (default) or `"keep"`
    ///   [`--isolated-routers`];
    /// * `default_length_km`: a number >= 0, km, for links without any
    ///   length [`--default-length-km`];
    /// * `default_core_capacity`: a bandwidth such as `"1G"` for links
    ///   without a capacity [`--default-core-capacity`].
    ///
    /// Raises ValueError (`file:line:col: ...` for a bad GML file).
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
        py: Python<'_>,
        path_or_builtin: Option<std::path::PathBuf>,
        missing_coordinates: &str,
        largest_component: bool,
        isolated_routers: &str,
        default_length_km: Option<f64>,
        default_core_capacity: &str,
    ) -> PyResult<Self> {
        if let Some(km) = default_length_km {
            fedtopo::net::underlay::check_default_length_km(km)
                .map_err(|m| PyValueError::new_err(format!("default_length_km: {m}")))?;
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
            ..LoadOptions::default()
        };
        let spec = path_or_builtin.map(|p| p.to_string_lossy().into_owned());
        let u = py
            .detach(|| load_underlay(spec.as_deref(), &opts))
            .map_err(|e| value_error(&e))?;
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

    /// The summary of `fedtopo underlay info --format json` (its `notes`
    /// are the lines the CLI prints), plus what loading changed
    /// (`report`), as a dict.
    fn info<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let u = self.inner.clone();
        let info = py.detach(move || UnderlayInfo::new(&u));
        let doc = crate::from_json(py, &render_json(&info))?;
        let report = serde_json::to_string(&self.inner.report).map_err(|e| value_error(&e))?;
        doc.set_item("report", crate::from_json(py, &report)?)?;
        Ok(doc)
    }
}
