//! `Clock`: the round clock a training loop advances, the same round
//! stepper the Rust trainer and `fedtopo simulate` use.

use std::borrow::Cow;
use std::sync::Arc;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyByteArray;
use self_cell::self_cell;

use fedtopo::delay::DelayModel;
use fedtopo::evaluate::EvaluatedOverlay;
use fedtopo::network::NetworkKind;
use fedtopo::overlay::failures::{FailureSpec, Failures};
use fedtopo::overlay::{Overlay as RsOverlay, OverlaySchedule};
use fedtopo::replay::clock::{EngineClock, RoundClock};
use fedtopo::replay::Straggler;
use fedtopo::units::Ms;

use crate::network::Network;
use crate::overlay::Overlay;
use crate::value_error;

/// An evaluated overlay's rounds as an owned schedule (what
/// [`Failures`] wraps).
struct Rounds(Arc<EvaluatedOverlay>);

impl OverlaySchedule for Rounds {
    fn silo_count(&self) -> usize {
        self.0.schedule().silo_count()
    }
    fn round(&self, k: u64) -> Cow<'_, RsOverlay> {
        self.0.schedule().round(k)
    }
    fn is_static(&self) -> bool {
        self.0.schedule().is_static()
    }
}

/// What a clock borrows: the rounds it times (the overlay's schedule,
/// possibly with random failures), the overlay and the delay model.
struct Owner {
    overlay: Arc<EvaluatedOverlay>,
    rounds: Box<dyn OverlaySchedule>,
    model: Arc<DelayModel>,
}

type DynClock<'a> = Box<dyn RoundClock + 'a>;

self_cell!(
    struct ClockCell {
        owner: Owner,
        #[not_covariant]
        dependent: DynClock,
    }
);

/// Simulated wall-clock time of training rounds: `step()` times the next
/// round of the overlay on the network and returns when each silo finished
/// it (ms since the start). The round stepper of the Rust trainer and of
/// `fedtopo simulate` (event engine over the `maxplus`, `paper` or `flow`
/// network model; Clique Averaging: the two-phase max-plus recurrence).
#[pyclass(module = "fedtopo._fedtopo", unsendable)]
pub struct Clock {
    cell: ClockCell,
    round: u64,
    now_ms: Ms,
    /// `numpy.frombuffer` (float64 by default).
    frombuffer: Py<PyAny>,
    name: String,
    network: NetworkKind,
}

impl Clock {
    /// Times the next round `k = self.round` on its overlay and advances
    /// `round` and `now_ms`; returns `t(k+1)`, ms since the start.
    fn next_round(&mut self) -> PyResult<Vec<f64>> {
        let k = self.round;
        let t = self
            .cell
            .with_dependent_mut(|o, clock| {
                let overlay = o.rounds.round(k);
                clock.round_end_times(k, &overlay)
            })
            .map_err(|e| value_error(&e))?;
        self.round += 1;
        self.now_ms = t.iter().copied().fold(self.now_ms, f64::max);
        Ok(t)
    }
}

#[pymethods]
impl Clock {
    /// A clock for `overlay` on `net`, every silo at time 0 ms.
    /// `stragglers`: `None`/`"none"` or `"lognormal:SIGMA"` (random compute
    /// times, as `fedtopo simulate --straggler`); `failures`:
    /// `None`/`"none"`, `"node:P"` or `"link:P"` (each node / directed link
    /// active with probability P in each round, [BadieModiri24] Fig. 2, as
    /// `fedtopo simulate --failures`; gossip overlays only). Both are drawn
    /// from `seed` (`--seed`).
    #[new]
    #[pyo3(signature = (net, overlay, network_model = "maxplus", stragglers = None, seed = 0, failures = None))]
    fn new(
        py: Python<'_>,
        net: &Network,
        overlay: &Overlay,
        network_model: &str,
        stragglers: Option<&str>,
        seed: u64,
        failures: Option<&str>,
    ) -> PyResult<Self> {
        if !Arc::ptr_eq(&net.model, &overlay.model) {
            return Err(PyValueError::new_err(
                "the overlay was built on another network: use net.overlay(...) of this network",
            ));
        }
        let network: NetworkKind = network_model.parse().map_err(|e| value_error(&e))?;
        let straggler: Straggler = stragglers
            .unwrap_or("none")
            .parse()
            .map_err(PyValueError::new_err)?;
        let failures =
            FailureSpec::parse_optional(failures.unwrap_or("none")).map_err(|e| value_error(&e))?;
        if overlay.inner.gradient_groups().is_some() {
            let what = match (straggler != Straggler::None, failures.is_some()) {
                (true, _) => Some("stragglers are"),
                (false, true) => Some("failures are"),
                (false, false) => None,
            };
            if let Some(what) = what {
                return Err(PyValueError::new_err(format!(
                    "{}: {what} not supported for Clique Averaging clocks",
                    overlay.inner.name()
                )));
            }
        }
        // The rounds `fedtopo simulate` replays (EvaluatedOverlay::with_failures).
        let base = Rounds(overlay.inner.clone());
        let rounds: Box<dyn OverlaySchedule> = match failures {
            None => Box::new(base),
            Some(f) => Box::new(Failures::new(base, f, seed).map_err(|e| value_error(&e))?),
        };
        let owner = Owner {
            overlay: overlay.inner.clone(),
            rounds,
            model: net.model.clone(),
        };
        let cell = ClockCell::try_new(owner, |o| -> Result<DynClock<'_>, PyErr> {
            let rounds = o.rounds.as_ref();
            if straggler == Straggler::None {
                // The trainer's clock (EvaluatedOverlay::clock).
                o.overlay
                    .clock(rounds, &o.model, network)
                    .map_err(|e| value_error(&e))
            } else {
                let c = EngineClock::with_stragglers(rounds, &o.model, network, straggler, seed)
                    .map_err(|e| value_error(&e))?;
                Ok(Box::new(c))
            }
        })?;
        let frombuffer = py.import("numpy")?.getattr("frombuffer")?.unbind();
        Ok(Clock {
            cell,
            round: 0,
            now_ms: 0.0,
            frombuffer,
            name: overlay.inner.name(),
            network,
        })
    }

    /// Times the next round `k = clock.round` and returns `t(k+1)`, the
    /// time (ms since the start) at which each silo finished it, as a NumPy
    /// array (one entry per silo, in `net.silos` order).
    fn step<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let t = self.next_round()?;
        // A writable float64 array over a copy of the times (a bytearray):
        // ~1 µs, a third of `numpy.asarray(list)`.
        let bytes: Vec<u8> = t.iter().flat_map(|x| x.to_ne_bytes()).collect();
        self.frombuffer
            .bind(py)
            .call1((PyByteArray::new(py, &bytes),))
    }

    /// Times `rounds` rounds and returns the time (ms) each silo finished
    /// the last one (as `step()`), without building the arrays between.
    fn advance<'py>(&mut self, py: Python<'py>, rounds: u64) -> PyResult<Bound<'py, PyAny>> {
        if rounds == 0 {
            return Err(PyValueError::new_err("advance: rounds must be at least 1"));
        }
        for _ in 1..rounds {
            self.next_round()?;
        }
        self.step(py)
    }

    /// Rounds timed so far (the next `step()` times this round).
    #[getter]
    fn round(&self) -> u64 {
        self.round
    }

    /// Simulated wall-clock time, ms: the latest time any silo finished a
    /// round timed so far (0 before the first step).
    #[getter]
    fn now_ms(&self) -> f64 {
        self.now_ms
    }

    fn __repr__(&self) -> String {
        format!(
            "Clock({:?}, network={}, round={}, now_ms={})",
            self.name, self.network, self.round, self.now_ms
        )
    }
}
