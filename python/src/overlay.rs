//! `Overlay`: an overlay kind built on a network (`EvaluatedOverlay`).

use std::sync::Arc;

use pyo3::exceptions::{PyImportError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use fedtopo::evaluate::EvaluatedOverlay;
use fedtopo::mixing::consensus::ConsensusRule;
use fedtopo::net::delay::DelayModel;

use crate::{round_arg, value_error};

/// An overlay built on a network: its arcs, exact cycle time, critical
/// circuit and consensus matrices. Schedules (MATCHA, per-round files,
/// `exp-1peer`, ...) change every round: `arcs_at(k)` and
/// `consensus_matrix(round=k)` give round `k`.
#[pyclass(module = "fedtopo._fedtopo", frozen)]
pub struct Overlay {
    pub(crate) inner: Arc<EvaluatedOverlay>,
    pub(crate) model: Arc<DelayModel>,
    pub(crate) labels: Arc<Vec<String>>,
    /// `(latitude, longitude)` of every silo in degrees, when known.
    pub(crate) positions: Arc<Vec<Option<(f64, f64)>>>,
}

impl Overlay {
    fn arcs_of(&self, round: u64) -> Vec<(usize, usize)> {
        self.inner.schedule().round(round).arcs().to_vec()
    }
}

#[pymethods]
impl Overlay {
    /// The overlay's name (as in `fedtopo compare`).
    #[getter]
    fn name(&self) -> String {
        self.inner.name()
    }

    /// Silo labels; silo `i` of every arc is `silos[i]`.
    #[getter]
    fn silos(&self) -> Vec<String> {
        self.labels.to_vec()
    }

    /// True when the overlay changes every round.
    #[getter]
    fn is_schedule(&self) -> bool {
        self.inner.is_schedule()
    }

    /// Arcs `(src, dst)` as silo indices (round 0's for schedules).
    #[getter]
    fn arcs(&self) -> Vec<(usize, usize)> {
        self.arcs_of(0)
    }

    /// Arcs `(src, dst)` of round `round` (an int >= 0; schedules repeat
    /// their period or sampled rounds).
    fn arcs_at(&self, #[pyo3(from_py_with = round_arg)] round: u64) -> Vec<(usize, usize)> {
        self.arcs_of(round)
    }

    /// Number of silos.
    fn __len__(&self) -> usize {
        self.inner.silo_count()
    }

    fn __repr__(&self) -> String {
        format!(
            "Overlay({:?}, silos={}, schedule={})",
            self.inner.name(),
            self.inner.silo_count(),
            self.inner.is_schedule()
        )
    }

    /// Cycle time, ms per round: the exact max-plus cycle time
    /// ([Marfoq20] Sec. 2, Howard's policy iteration); for MATCHA the
    /// paper's estimate over the sampled rounds (App. H.6). The value of
    /// `fedtopo compare`'s `cycle_time_ms`.
    fn cycle_time_ms(&self, py: Python<'_>) -> PyResult<f64> {
        let t = py
            .detach(|| self.inner.cycle_time(&self.model))
            .map_err(|e| value_error(&e))?;
        Ok(t.cycle_time_ms)
    }

    /// A critical circuit (silo labels; empty for schedules).
    fn critical_circuit(&self, py: Python<'_>) -> PyResult<Vec<String>> {
        let t = py
            .detach(|| self.inner.cycle_time(&self.model))
            .map_err(|e| value_error(&e))?;
        Ok(t.critical_circuit
            .iter()
            .map(|&i| self.labels[i].clone())
            .collect())
    }

    /// The consensus matrix of round `round` under `rule`, as a NumPy
    /// array `A` (n x n float64) with `A[i, j]` the weight silo `i` gives
    /// silo `j`'s model (rows sum to 1, [Marfoq20] eq. 2).
    ///
    /// `rule` (text, the trainer's `--consensus`): `auto` (what training
    /// uses), `local-degree`, `mh`, `half`, `average`, `fedavg`,
    /// `matcha:ALPHA` (`W = I - ALPHA L`, ALPHA a number in (0, 1]),
    /// `decavg`, `fastest`, `file:PATH` (a CSV matrix). `round`: an int
    /// >= 0. Raises ValueError for an unknown rule or a bad ALPHA.
    #[pyo3(signature = (rule = "auto", round = 0))]
    fn consensus_matrix<'py>(
        &self,
        py: Python<'py>,
        rule: &str,
        #[pyo3(from_py_with = round_arg)] round: u64,
    ) -> PyResult<Bound<'py, PyAny>> {
        let mut r = ConsensusRule::parse(rule)
            .and_then(|r| r.for_overlay(&self.inner))
            .map_err(|e| value_error(&e))?;
        // Data-size rules use the silo file's `data` column when it has one.
        if let Some(d) = &self.model.data_sizes {
            let sizes = Some(d.samples.iter().map(|&s| s as f64).collect());
            match &mut r {
                ConsensusRule::DecAvg { sizes: s }
                | ConsensusRule::WeightedAverage { sizes: s }
                    if s.is_none() =>
                {
                    *s = sizes
                }
                _ => {}
            }
        }
        let o = self.inner.schedule().round(round);
        let m = r.matrix_at(&o, round).map_err(|e| value_error(&e))?;
        let rows = m.to_rows();
        let np = py.import("numpy")?;
        np.call_method1("asarray", (PyList::new(py, rows)?,))
    }

    /// The overlay of round `round` (an int >= 0) as a `networkx.DiGraph`:
    /// nodes are silo labels with attributes `index` (the silo's index)
    /// and, when the underlay gives the silo's router a position,
    /// `latitude` and `longitude` (degrees, WGS-84; as in `fedtopo
    /// overlay --format json`); arcs carry `delay_ms`, the [Marfoq20]
    /// eq. (3) delay of the arc in ms. Needs networkx.
    #[pyo3(signature = (round = 0))]
    fn to_networkx<'py>(
        &self,
        py: Python<'py>,
        #[pyo3(from_py_with = round_arg)] round: u64,
    ) -> PyResult<Bound<'py, PyAny>> {
        let nx = py.import("networkx").map_err(|_| {
            PyImportError::new_err("Overlay.to_networkx needs networkx: pip install networkx")
        })?;
        let g = nx.call_method0("DiGraph")?;
        g.getattr("graph")?.set_item("name", self.inner.name())?;
        for (i, label) in self.labels.iter().enumerate() {
            let kw = PyDict::new(py);
            kw.set_item("index", i)?;
            if let Some(Some((lat, lon))) = self.positions.get(i) {
                kw.set_item("latitude", lat)?;
                kw.set_item("longitude", lon)?;
            }
            g.call_method("add_node", (label,), Some(&kw))?;
        }
        let o = self.inner.schedule().round(round);
        if o.silo_count() != self.labels.len() {
            return Err(PyValueError::new_err(
                "overlay and network disagree on silos",
            ));
        }
        for &(i, j) in o.arcs() {
            let kw = PyDict::new(py);
            let d = self.model.arc_delay(i, j, o.out_degree(i), o.in_degree(j));
            kw.set_item("delay_ms", d)?;
            g.call_method("add_edge", (&self.labels[i], &self.labels[j]), Some(&kw))?;
        }
        Ok(g)
    }
}
