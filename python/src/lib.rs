//! `fedtopo._fedtopo`: Python bindings of the fedtopo library (PyO3).
//!
//! Thin wrappers: every number comes from the Rust library, through the
//! same entry points the CLI uses (`scenario::load_underlay`,
//! `NetworkSpec::from_knobs`, `EvaluatedOverlay`, `compare_overlays`, the
//! round clocks of `replay::clock`). The pure-Python package `fedtopo`
//! (python/fedtopo) re-exports these classes.

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyInt};

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

/// The integer value of argument `name`: any Python int (or object with
/// `__index__`, such as a NumPy integer); a `TypeError` naming the
/// parameter for anything else (a float, a bool, text), a `ValueError`
/// beyond 128 bits.
fn int_value(obj: &Bound<'_, PyAny>, name: &str, expected: &str) -> PyResult<i128> {
    let type_error = || -> PyResult<PyErr> {
        Ok(PyTypeError::new_err(format!(
            "{name}: expected {expected}, got {} {}",
            obj.get_type().name()?,
            obj.repr()?
        )))
    };
    if obj.is_instance_of::<PyBool>() {
        return Err(type_error()?);
    }
    let int = if obj.is_instance_of::<PyInt>() {
        obj.clone()
    } else if obj.hasattr("__index__")? {
        obj.call_method0("__index__")?
    } else {
        return Err(type_error()?);
    };
    int.extract::<i128>()
        .map_err(|_| PyValueError::new_err(format!("{name} {int}: expected {expected}")))
}

/// A whole-number argument `name` in `min..=max` ([`int_value`]). Out of
/// range: a `ValueError` naming the parameter and the range (PyO3 alone
/// raises a bare `OverflowError` without the name).
pub(crate) fn whole(obj: &Bound<'_, PyAny>, name: &str, min: u64, max: u64) -> PyResult<u64> {
    let expected = format!("a whole number from {min} to {max}");
    let v = int_value(obj, name, &expected)?;
    if v >= i128::from(min) && v <= i128::from(max) {
        Ok(v as u64)
    } else {
        Err(PyValueError::new_err(format!(
            "{name} {v}: expected {expected}"
        )))
    }
}

/// `seed=`: any `u64`.
pub(crate) fn seed_arg(obj: &Bound<'_, PyAny>) -> PyResult<u64> {
    whole(obj, "seed", 0, u64::MAX)
}

/// `round=`: a round index, any `u64`.
pub(crate) fn round_arg(obj: &Bound<'_, PyAny>) -> PyResult<u64> {
    whole(obj, "round", 0, u64::MAX)
}

/// `matcha_rounds=`: the CLI's `--matcha-rounds` bound and message
/// ([`fedtopo::overlay::matcha::check_matcha_rounds`]).
pub(crate) fn matcha_rounds_arg(obj: &Bound<'_, PyAny>) -> PyResult<u64> {
    use fedtopo::overlay::matcha::{matcha_rounds_error, MAX_MATCHA_ROUNDS};
    let v = int_value(
        obj,
        "matcha_rounds",
        &format!("1 to {MAX_MATCHA_ROUNDS} rounds"),
    )?;
    match u64::try_from(v) {
        Ok(r) => fedtopo::overlay::matcha::check_matcha_rounds(r),
        Err(_) => Err(matcha_rounds_error(&v)),
    }
    .map_err(|m| PyValueError::new_err(format!("matcha_rounds: {m}")))
}

/// `budget=`: the CLI's `--budget` bound and message
/// ([`fedtopo::overlay::matcha::check_budget`]).
pub(crate) fn budget_arg(obj: &Bound<'_, PyAny>) -> PyResult<f64> {
    let number = if obj.is_instance_of::<PyBool>() {
        Err(())
    } else {
        obj.extract::<f64>().map_err(|_| ())
    };
    let b: f64 = number.map_err(|()| {
        PyTypeError::new_err(format!(
            "budget: expected a number in [{}, 1], got {}",
            fedtopo::overlay::matcha::MIN_BUDGET,
            obj.repr().map_or_else(|_| "?".into(), |s| s.to_string())
        ))
    })?;
    fedtopo::overlay::matcha::check_budget(b)
        .map_err(|m| PyValueError::new_err(format!("budget: {m}")))
}

/// Issues a Python warning of `category` (`UserWarning`, `FutureWarning`)
/// pointing at the caller's line.
pub(crate) fn warn(py: Python<'_>, category: &Bound<'_, PyAny>, message: &str) -> PyResult<()> {
    let text = std::ffi::CString::new(message.replace('\0', " "))
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
    PyErr::warn(py, category, &text, 1)
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
