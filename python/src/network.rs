//! `Network`: an underlay with silos, access links and a workload (a
//! `NetworkSpec` built into a `DelayModel`).

use std::sync::Arc;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyList;

use fedtopo::evaluate::compare::compare_overlays;
use fedtopo::evaluate::EvaluatedOverlay;
use fedtopo::net::delay::DelayModel;
use fedtopo::net::description::NetworkDescription;
use fedtopo::net::scenario::NetworkSpec;
use fedtopo::net::underlay::Underlay as RsUnderlay;
use fedtopo::overlay::build::{parse_overlay_list, BuildOptions, OverlayKind};
use fedtopo::overlay::export::silo_positions;
use fedtopo::report::render_json;

use crate::overlay::Overlay;
use crate::underlay::Underlay;
use crate::{budget_arg, matcha_rounds_arg, seed_arg, value_error};

/// A network: an underlay, silos placed on its routers, their access links
/// and a workload (model size, compute time per local step), as the delay
/// model every timing uses. Built with `NetworkSpec::from_knobs`, the parser
/// of the CLI options and experiment-file axes.
///
/// `Network(underlay, access=None, ...)` builds the network of `underlay`
/// (an `Underlay`, a GML path or a
/// built-in name). Every knob takes the CLI's text or a number; `None`
/// keeps the default. Formats (the CLI option in brackets):
///
/// * `access`: bandwidth of every silo's access link, both ways, bit/s
///   with an optional SI unit: `"10G"`, `"100Mbps"`, `"1e9"`, `"inf"`
///   (default `"10G"`; a bare number is bit/s and one below 1000 warns,
///   UserWarning) [`--access`];
/// * `core_capacity`: every core link's capacity, same format, or
///   `"file"` (default: the underlay file's) [`--core-capacity`];
/// * `workload`: `"shakespeare"`, `"femnist"`, `"sent140"` or
///   `"inaturalist"` (default) [`--workload`];
/// * `model_bits`: model size, bits or bytes: `44961717`, `"42.88Mbit"`,
///   `"5MB"` [`--model-bits`];
/// * `compute_ms`: time of one local step, ms, a number >= 0
///   [`--compute-ms`];
/// * `local_steps`: local steps per round, an int >= 1 [`-s`];
/// * `silos_csv`, `links_csv`, `access_csv`: paths of the per-silo,
///   per-link and per-silo access CSV files [`--silos-csv`, ...];
/// * `connectivity`: `"paper"` (capacity / hops, default) or
///   `"bottleneck"` [`--connectivity`];
/// * `silos_per_router`, `silos`: an int >= 1 (not both)
///   [`--silos-per-router`, `--silos`]; `placement_seed`: an int >= 0;
/// * `trace`: path of a network-dynamics trace, CSV `time_s,target,value`
///   (bandwidth, latency and availability over time; `fedtopo trace`
///   writes them): clocks then run event by event and follow it
///   [`--trace`];
/// * `availability`: `"wait"` (default), `"skip"` or `"timeout:MS"`: what
///   synchronous rounds do about a silo the trace sets down
///   [`--availability`].
///
/// Raises ValueError naming the knob.
#[pyclass(module = "fedtopo._fedtopo", frozen)]
pub struct Network {
    pub(crate) underlay: Arc<RsUnderlay>,
    pub(crate) spec: NetworkSpec,
    pub(crate) model: Arc<DelayModel>,
    pub(crate) labels: Arc<Vec<String>>,
}

/// A knob's value as text (`str(value)`), `None` when not given.
fn knob_text(v: Option<&Bound<'_, PyAny>>) -> PyResult<Option<String>> {
    match v {
        None => Ok(None),
        Some(v) if v.is_none() => Ok(None),
        Some(v) if v.is_instance_of::<pyo3::types::PyBool>() => Err(PyValueError::new_err(
            format!("expected a number or text, got the boolean {v}"),
        )),
        Some(v) => Ok(Some(v.str()?.to_string())),
    }
}

impl Network {
    /// The build options of `compare` / `simulate` with these values.
    /// `budget` and `matcha_rounds` arrive checked (`budget_arg`,
    /// `matcha_rounds_arg`: the CLI's bounds and messages).
    fn build_options(
        &self,
        center: &str,
        seed: u64,
        budget: f64,
        matcha_rounds: u64,
    ) -> PyResult<BuildOptions> {
        let (seed, budget, rounds) = (
            seed.to_string(),
            budget.to_string(),
            matcha_rounds.to_string(),
        );
        let knob = |key: &str| match key {
            "center" => Some(center),
            "seed" => Some(seed.as_str()),
            "budget" => Some(budget.as_str()),
            "matcha_rounds" => Some(rounds.as_str()),
            _ => None,
        };
        BuildOptions::from_knobs(knob, &self.underlay, self.model.connectivity.placement())
            .map_err(|e| PyValueError::new_err(e.to_string()))
    }
}

/// `fedtopo compare`'s default overlays.
const DEFAULT_OVERLAYS: &str = "star,mst,delta-mbst,ring,ring-opt";

/// Overlay names from a comma-separated text or a list of names.
fn kinds_of(kinds: &Bound<'_, PyAny>) -> PyResult<Vec<OverlayKind>> {
    let text = if let Ok(s) = kinds.extract::<String>() {
        s
    } else {
        let list: Vec<String> = kinds.extract()?;
        if list.is_empty() {
            return Err(PyValueError::new_err(
                "empty overlay list; give names such as [\"star\", \"ring\"]",
            ));
        }
        let mut out = Vec::new();
        for k in &list {
            out.push(k.parse::<OverlayKind>().map_err(|e| value_error(&e))?);
        }
        return Ok(out);
    };
    // The one overlay grammar: empty items, stray parameters and unknown
    // names are errors with the CLI's messages.
    parse_overlay_list(&text).map_err(|e| value_error(&e))
}

#[pymethods]
impl Network {
    /// Builds the network (arguments: see the class docstring).
    #[new]
    #[pyo3(signature = (
        underlay,
        access = None,
        core_capacity = None,
        workload = None,
        model_bits = None,
        compute_ms = None,
        local_steps = None,
        silos_csv = None,
        links_csv = None,
        access_csv = None,
        connectivity = None,
        silos_per_router = None,
        silos = None,
        placement_seed = None,
        trace = None,
        availability = None,
    ))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        underlay: &Bound<'_, PyAny>,
        access: Option<&Bound<'_, PyAny>>,
        core_capacity: Option<&Bound<'_, PyAny>>,
        workload: Option<&Bound<'_, PyAny>>,
        model_bits: Option<&Bound<'_, PyAny>>,
        compute_ms: Option<&Bound<'_, PyAny>>,
        local_steps: Option<&Bound<'_, PyAny>>,
        silos_csv: Option<&Bound<'_, PyAny>>,
        links_csv: Option<&Bound<'_, PyAny>>,
        access_csv: Option<&Bound<'_, PyAny>>,
        connectivity: Option<&Bound<'_, PyAny>>,
        silos_per_router: Option<&Bound<'_, PyAny>>,
        silos: Option<&Bound<'_, PyAny>>,
        placement_seed: Option<&Bound<'_, PyAny>>,
        trace: Option<&Bound<'_, PyAny>>,
        availability: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let underlay: Arc<RsUnderlay> = match underlay.cast::<Underlay>() {
            Ok(u) => u.get().inner.clone(),
            Err(_) => {
                let spec: std::path::PathBuf = underlay.extract()?;
                Underlay::load(py, Some(spec), "estimate", false, "drop", None, "1G")?.inner
            }
        };
        let knobs: Vec<(&str, Option<String>)> = vec![
            ("access", knob_text(access)?),
            ("core_capacity", knob_text(core_capacity)?),
            ("workload", knob_text(workload)?),
            ("model_bits", knob_text(model_bits)?),
            ("compute_ms", knob_text(compute_ms)?),
            ("local_steps", knob_text(local_steps)?),
            ("silos_csv", knob_text(silos_csv)?),
            ("links_csv", knob_text(links_csv)?),
            ("access_csv", knob_text(access_csv)?),
            ("connectivity", knob_text(connectivity)?),
            ("silos_per_router", knob_text(silos_per_router)?),
            ("silos", knob_text(silos)?),
            ("placement_seed", knob_text(placement_seed)?),
            ("trace", knob_text(trace)?),
            ("availability", knob_text(availability)?),
        ];
        let knob = |key: &str| {
            knobs
                .iter()
                .find(|(k, _)| *k == key)
                .and_then(|(_, v)| v.as_deref())
        };
        let spec = NetworkSpec::from_knobs(knob).map_err(|e| value_error(&e))?;
        // `access=10` is 10 bit/s: a warning, as the CLI's.
        let user_warning = py.get_type::<pyo3::exceptions::PyUserWarning>();
        for (key, w) in NetworkSpec::knob_warnings(knob) {
            crate::warn(py, user_warning.as_any(), &format!("{key}={w}"))?;
        }
        // Placement and all-pairs routes: long on large underlays.
        let model = py
            .detach(|| spec.build(&underlay))
            .map_err(|e| value_error(&e))?;
        let labels = model.connectivity.placement().labels(&underlay);
        Ok(Network {
            underlay,
            spec,
            model: Arc::new(model),
            labels: Arc::new(labels),
        })
    }

    /// The underlay.
    #[getter]
    fn underlay(&self) -> Underlay {
        Underlay {
            inner: self.underlay.clone(),
        }
    }

    /// Silo labels (a router's label, `ROUTER#k` with several per router).
    #[getter]
    fn silos(&self) -> Vec<String> {
        self.labels.to_vec()
    }

    /// Number of silos.
    fn __len__(&self) -> usize {
        self.model.silo_count()
    }

    fn __repr__(&self) -> String {
        format!(
            "Network({:?}, silos={}, workload={:?})",
            self.underlay.name,
            self.model.silo_count(),
            self.model.workload.name
        )
    }

    /// Builds one overlay. Arguments (the CLI option in brackets):
    ///
    /// * `kind`: text, an overlay kind (`"star"`, `"mst"`, `"delta-mbst"`,
    ///   `"ring"`, `"ring-opt"`, `"matcha"`, `"complete"`, `"regular:k=4"`,
    ///   ... as `fedtopo overlay --help`) or `"file:PATH"` (GML, node-link
    ///   JSON, CSV or a per-round file);
    /// * `center`: STAR's centre, `"fastest"` (default), `"load"`,
    ///   `"first"` or a silo label / GML id [`--center`];
    /// * `seed`: an int from 0 to 2**64-1, MATCHA's activations and random
    ///   overlays [`--seed`];
    /// * `budget`: MATCHA's communication budget, a number in [0.001, 1]
    ///   [`--budget`];
    /// * `matcha_rounds`: rounds sampled for MATCHA's cycle time, an int
    ///   from 1 to 1000000 [`--matcha-rounds`].
    ///
    /// Raises ValueError (TypeError for a non-integer int argument) naming
    /// the argument.
    #[pyo3(signature = (kind, center = "fastest", seed = 0, budget = 0.5, matcha_rounds = 1000))]
    fn overlay(
        &self,
        py: Python<'_>,
        kind: &str,
        center: &str,
        #[pyo3(from_py_with = seed_arg)] seed: u64,
        #[pyo3(from_py_with = budget_arg)] budget: f64,
        #[pyo3(from_py_with = matcha_rounds_arg)] matcha_rounds: u64,
    ) -> PyResult<Overlay> {
        let k: OverlayKind = kind.parse().map_err(|e| value_error(&e))?;
        let options = self.build_options(center, seed, budget, matcha_rounds)?;
        let e = py
            .detach(|| EvaluatedOverlay::build(k, &self.underlay, &self.model, &options))
            .map_err(|e| value_error(&e))?;
        Ok(Overlay {
            inner: Arc::new(e),
            model: self.model.clone(),
            labels: self.labels.clone(),
            positions: Arc::new(silo_positions(
                &self.underlay,
                self.model.connectivity.placement(),
            )),
        })
    }

    /// `fedtopo compare --format json`'s rows as `fedtopo.Records` (a
    /// list with `.to_pandas()`): one dict per overlay
    /// (`overlay`, `arcs`, `max_degree`, `cycle_time_ms`, `rounds_per_s`,
    /// `speedup_vs_star`, `critical_circuit`, and `schedule` for
    /// schedules). `kinds`: a list of names or a comma-separated text
    /// (`"all"` too; default `"star,mst,delta-mbst,ring,ring-opt"`);
    /// `center`, `seed`, `budget`, `matcha_rounds` as in `overlay()`.
    #[pyo3(signature = (kinds = None, center = "fastest", seed = 0, budget = 0.5, matcha_rounds = 1000))]
    fn compare<'py>(
        &self,
        py: Python<'py>,
        kinds: Option<&Bound<'py, PyAny>>,
        center: &str,
        #[pyo3(from_py_with = seed_arg)] seed: u64,
        #[pyo3(from_py_with = budget_arg)] budget: f64,
        #[pyo3(from_py_with = matcha_rounds_arg)] matcha_rounds: u64,
    ) -> PyResult<Bound<'py, PyAny>> {
        let text = self.comparison_json(py, kinds, center, seed, budget, matcha_rounds)?;
        let rows = crate::from_json(py, &text)?.get_item("rows")?;
        py.import("fedtopo._records")?
            .getattr("Records")?
            .call1((rows,))
    }

    /// The whole `fedtopo compare --format json` document as a dict
    /// (`underlay`, `silos`, `rows`, `star_center`, `network`); arguments
    /// as `compare()`.
    #[pyo3(signature = (kinds = None, center = "fastest", seed = 0, budget = 0.5, matcha_rounds = 1000))]
    fn comparison<'py>(
        &self,
        py: Python<'py>,
        kinds: Option<&Bound<'py, PyAny>>,
        center: &str,
        #[pyo3(from_py_with = seed_arg)] seed: u64,
        #[pyo3(from_py_with = budget_arg)] budget: f64,
        #[pyo3(from_py_with = matcha_rounds_arg)] matcha_rounds: u64,
    ) -> PyResult<Bound<'py, PyAny>> {
        let text = self.comparison_json(py, kinds, center, seed, budget, matcha_rounds)?;
        crate::from_json(py, &text)
    }

    /// The network's description (workload, every silo's `compute_ms`,
    /// `up_bps`, `down_bps`, measured links, input files) as a dict.
    fn description<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let d = NetworkDescription::new(&self.underlay, &self.spec, &self.model)
            .map_err(|e| value_error(&e))?;
        crate::from_json(py, &render_json(&d))
    }

    /// Per-silo compute time of one round, `s * Tc(i)`, ms.
    fn compute_round_ms<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let v: Vec<f64> = (0..self.model.silo_count())
            .map(|i| self.model.compute_round_ms(i))
            .collect();
        PyList::new(py, v)
    }
}

impl Network {
    fn comparison_json(
        &self,
        py: Python<'_>,
        kinds: Option<&Bound<'_, PyAny>>,
        center: &str,
        seed: u64,
        budget: f64,
        matcha_rounds: u64,
    ) -> PyResult<String> {
        let default = pyo3::types::PyString::new(py, DEFAULT_OVERLAYS);
        let kinds = kinds_of(kinds.unwrap_or(default.as_any()))?;
        let options = self.build_options(center, seed, budget, matcha_rounds)?;
        // Building and timing every overlay runs without the GIL: other
        // Python threads keep running meanwhile.
        let mut cmp = py
            .detach(|| compare_overlays(&self.underlay, &self.model, &kinds, &options))
            .map_err(|e| value_error(&e))?;
        cmp.network = Some(
            NetworkDescription::new(&self.underlay, &self.spec, &self.model)
                .map_err(|e| value_error(&e))?,
        );
        Ok(render_json(&cmp))
    }
}
