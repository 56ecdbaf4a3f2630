//! `fedtopo._fedtopo`: Python bindings of the fedtopo library (PyO3).
//!
//! Thin wrappers: every number comes from the Rust library, through the
//! same entry points the CLI uses (`scenario::load_underlay`,
//! `NetworkSpec::from_knobs`, `EvaluatedOverlay`, `compare_overlays`, the
//! round clocks of `replay::clock`). The pure-Python package `fedtopo`
//! (python/fedtopo) re-exports these classes.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

mod clock;
mod network;
mod overlay;
mod underlay;

/// A Rust error as a Python `ValueError` carrying the Rust message and its
/// causes (`message: cause: cause`).
pub(crate) fn value_error(e: &(dyn std::error::Error + 'static)) -> PyErr {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let more = s.to_string();
        if !text.contains(&more) {
            text = format!("{text}: {more}");
        }
        source = s.source();
    }
    PyValueError::new_err(text)
}

/// JSON text as Python objects (`json.loads`).
pub(crate) fn from_json<'py>(py: Python<'py>, text: &str) -> PyResult<Bound<'py, PyAny>> {
    py.import("json")?.call_method1("loads", (text,))
}

/// The extension module.
#[pymodule]
fn _fedtopo(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<underlay::Underlay>()?;
    m.add_class::<network::Network>()?;
    m.add_class::<overlay::Overlay>()?;
    m.add_class::<clock::Clock>()?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
