//! `Clock`: the round clock a training loop advances, the same round
//! stepper the Rust trainer and `fedtopo simulate` use.

use std::borrow::Cow;
use std::sync::Arc;

use std::thread::ThreadId;

use pyo3::exceptions::{PyFutureWarning, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyDict};
use self_cell::self_cell;

use fedtopo::evaluate::EvaluatedOverlay;
use fedtopo::graph::failures::{FailureSpec, Failures};
use fedtopo::graph::{Overlay as RsOverlay, OverlaySchedule};
use fedtopo::net::delay::DelayModel;
use fedtopo::network::NetworkKind;
use fedtopo::replay::clock::{EngineClock, RoundClock};
use fedtopo::replay::{SiloRound, Straggler};
use fedtopo::units::Ms;

use crate::network::Network;
use crate::overlay::Overlay;
use crate::{seed_arg, value_error};

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

/// The clock's state: it borrows the overlay's rounds and the network,
/// which are not `Send`, so it stays on the thread that made it
/// (`unsendable`); [`Clock`] checks the thread before touching it.
#[pyclass(module = "fedtopo._fedtopo", unsendable)]
pub struct ClockState {
    cell: ClockCell,
    round: u64,
    now_ms: Ms,
    /// `t(round)`, ms per silo: the last round's end times (a buffer
    /// reused from round to round).
    times: Vec<Ms>,
    /// `numpy.frombuffer` (float64 by default).
    frombuffer: Py<PyAny>,
}

impl ClockState {
    /// Times the next round `k = self.round` on its overlay and advances
    /// `round` and `now_ms`; `self.times` becomes `t(k+1)`, ms since the
    /// start.
    fn next_round(&mut self) -> PyResult<()> {
        let k = self.round;
        let times = &mut self.times;
        self.cell
            .with_dependent_mut(|o, clock| {
                let overlay = o.rounds.round(k);
                clock.round_end_times_into(k, &overlay, times)
            })
            .map_err(|e| value_error(&e))?;
        self.round += 1;
        self.now_ms = self.times.iter().copied().fold(self.now_ms, f64::max);
        Ok(())
    }

    /// The last round's end times as a writable float64 NumPy array (over
    /// a bytearray the times are copied into: ~1 us, a third of
    /// `numpy.asarray(list)`).
    fn array<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.float_array(py, &self.times)
    }

    /// `t` as a writable float64 NumPy array.
    fn float_array<'py>(&self, py: Python<'py>, t: &[f64]) -> PyResult<Bound<'py, PyAny>> {
        let bytes = PyByteArray::new_with(py, 8 * t.len(), |b| {
            for (chunk, x) in b.chunks_exact_mut(8).zip(t) {
                chunk.copy_from_slice(&x.to_ne_bytes());
            }
            Ok(())
        })?;
        self.frombuffer.bind(py).call1((bytes,))
    }
}

/// Rounds timed between two checks for Ctrl-C in `advance` (a check is
/// one atomic load when no signal came).
const SIGNAL_EVERY: u64 = 64;

/// Wall time between two GIL releases in `advance`: more than Python's
/// switch interval (5 ms, `sys.getswitchinterval()`), so that a thread
/// waiting for the GIL has asked for it by then and gets it (CPython hands
/// the GIL over when asked). Releasing it every few rounds instead, the
/// waiter is woken before its wait times out, never asks, and loses the
/// race to re-acquire on a loaded machine: a `threading.Timer` calling
/// `_thread.interrupt_main` never ran.
const GIL_RELEASE_EVERY: std::time::Duration = std::time::Duration::from_millis(10);

/// Simulated wall-clock time of training rounds: `step()` times the next
/// round of the overlay on the network and returns when each silo finished
/// it (ms since the start). The round stepper of the Rust trainer and of
/// `fedtopo simulate` (event engine over the `maxplus`, `paper` or `flow`
/// network model; Clique Averaging: the two-phase max-plus recurrence).
///
/// Arguments: `net` (a `Network`), `overlay` (built by `net.overlay(...)`),
/// `network_model` (text: `"maxplus"`, `"paper"` or `"flow"`, as `fedtopo
/// simulate --network`), `stragglers` (`None`, `"none"` or
/// `"lognormal:SIGMA"`, SIGMA a number in (0, 10]: random compute times,
/// as `--straggler`), `seed` (an int from 0 to 2**64-1: every random draw),
/// `failures` (`None`, `"none"`, `"node-down:Q"` / `"link-down:Q"`: each
/// node / directed link down in a round with probability Q in [0, 1), or
/// `"node-up:P"` / `"link-up:P"` with P = 1 - Q in (0, 1]; the older
/// `"node:P"` / `"link:P"` mean `node-up:P` and raise a FutureWarning;
/// [BadieModiri24] Fig. 2, as `--failures`; gossip overlays only),
/// `breakdown` (True: `breakdown()` tells where each round's time went,
/// per silo; as `fedtopo simulate --breakdown`).
///
/// Memory stays constant however many rounds are timed (no per-round
/// history is kept: keep the arrays `step()` returns if you need them). A
/// clock belongs to the thread that created it: using it from another
/// thread raises RuntimeError (create one clock per thread).
#[pyclass(module = "fedtopo._fedtopo", frozen)]
pub struct Clock {
    owner: ThreadId,
    state: Py<ClockState>,
    name: String,
    /// The network model's name, `+traces` when the network has dynamics
    /// (the clock then runs event by event).
    network: String,
}

impl Clock {
    /// The state, on the thread that created the clock; RuntimeError from
    /// any other thread (PyO3 would panic).
    fn state<'py>(&self, py: Python<'py>) -> PyResult<PyRefMut<'py, ClockState>> {
        let here = std::thread::current().id();
        if here != self.owner {
            return Err(PyRuntimeError::new_err(format!(
                "this Clock ({:?}) was created in another thread ({:?}) and is used from {:?}: \
                 a clock holds one running simulation and stays in its thread; create one \
                 Clock per thread",
                self.name, self.owner, here
            )));
        }
        Ok(self.state.bind(py).try_borrow_mut()?)
    }
}

#[pymethods]
impl Clock {
    /// A clock for `overlay` on `net`, every silo at time 0 ms (arguments:
    /// see the class docstring).
    #[new]
    #[pyo3(signature = (net, overlay, network_model = "maxplus", stragglers = None, seed = 0, failures = None, breakdown = false))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        net: &Network,
        overlay: &Overlay,
        network_model: &str,
        stragglers: Option<&str>,
        #[pyo3(from_py_with = seed_arg)] seed: u64,
        failures: Option<&str>,
        breakdown: bool,
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
        if let Some(w) = failures.as_ref().and_then(FailureSpec::legacy_warning) {
            let future = py.get_type::<PyFutureWarning>();
            crate::warn(py, future.as_any(), &format!("failures={w}"))?;
        }
        let own_clock = if overlay.inner.gradient_groups().is_some() {
            Some("Clique Averaging")
        } else if overlay.inner.allreduce().is_some() {
            Some("all-reduce")
        } else {
            None
        };
        if let Some(shape) = own_clock {
            let what = match (straggler != Straggler::None, failures.is_some()) {
                (true, _) => Some("stragglers are"),
                (false, true) => Some("failures are"),
                (false, false) => None,
            };
            if let Some(what) = what {
                return Err(PyValueError::new_err(format!(
                    "{}: {what} not supported for {shape} clocks",
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
            let mut clock: DynClock<'_> = if straggler == Straggler::None {
                // The trainer's clock (EvaluatedOverlay::clock).
                o.overlay
                    .clock(rounds, &o.model, network)
                    .map_err(|e| value_error(&e))?
            } else {
                let c = EngineClock::with_stragglers(rounds, &o.model, network, straggler, seed)
                    .map_err(|e| value_error(&e))?;
                Box::new(c)
            };
            if breakdown {
                clock
                    .record_breakdown()
                    .map_err(|e| PyValueError::new_err(format!("breakdown=True: {e}")))?;
            }
            Ok(clock)
        })?;
        let frombuffer = py.import("numpy")?.getattr("frombuffer")?.unbind();
        let state = ClockState {
            cell,
            round: 0,
            now_ms: 0.0,
            times: Vec::new(),
            frombuffer,
        };
        Ok(Clock {
            owner: std::thread::current().id(),
            state: Py::new(py, state)?,
            name: overlay.inner.name(),
            network: match net.model.dynamics.as_ref() {
                Some(d) => d.model_name(&network.to_string()),
                None => network.to_string(),
            },
        })
    }

    /// Times the next round `k = clock.round` and returns `t(k+1)`, the
    /// time (ms since the start) at which each silo finished it, as a NumPy
    /// float64 array (one entry per silo, in `net.silos` order).
    fn step<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let mut s = self.state(py)?;
        s.next_round()?;
        s.array(py)
    }

    /// Times `rounds` rounds (an int from 1 to 1000000, the CLI's `--rounds`
    /// bound; call again for more) and returns the time (ms) each silo
    /// finished the last one (as `step()`), without building the arrays
    /// between. Ctrl-C interrupts it (KeyboardInterrupt; the rounds timed so
    /// far stay timed), and other Python threads run meanwhile (the GIL is
    /// released every 10 ms).
    fn advance<'py>(
        &self,
        py: Python<'py>,
        #[pyo3(from_py_with = advance_rounds_arg)] rounds: u64,
    ) -> PyResult<Bound<'py, PyAny>> {
        let mut s = self.state(py)?;
        let mut released = std::time::Instant::now();
        for i in 1..rounds {
            s.next_round()?;
            if i % SIGNAL_EVERY == 0 {
                if released.elapsed() >= GIL_RELEASE_EVERY {
                    // Let other Python threads run.
                    py.detach(|| {});
                    released = std::time::Instant::now();
                }
                // Honour Ctrl-C.
                py.check_signals()?;
            }
        }
        s.next_round()?;
        s.array(py)
    }

    /// Where the last round timed went, silo by silo (a clock made with
    /// `breakdown=True`): a dict of NumPy arrays, one entry per silo, ms
    /// unless said: `start_ms`, `compute_ms`, `transfer_ms` (the model the
    /// silo waited for last, in flight while it idled), `wait_ms` (idle
    /// before that model was even sent), `end_ms` (what `step()` returned),
    /// `via` (int64: the silo whose model ended the round, -1 when it
    /// ended with the silo's own computation) and `via_sent_ms` (NaN
    /// without one). `compute + transfer + wait = end - start`. None
    /// before the first step; ValueError for a clock without a breakdown.
    fn breakdown<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        let s = self.state(py)?;
        let rows = s
            .cell
            .with_dependent(|_, clock| clock.breakdown().map(<[_]>::to_vec));
        let Some(rows) = rows else {
            return Err(PyValueError::new_err(
                "this clock records no breakdown: create it with Clock(..., breakdown=True)",
            ));
        };
        if s.round == 0 {
            return Ok(None);
        }
        let d = PyDict::new(py);
        let column = |f: &dyn Fn(&SiloRound) -> f64| -> PyResult<Bound<'py, PyAny>> {
            let v: Vec<f64> = rows.iter().map(f).collect();
            s.float_array(py, &v)
        };
        d.set_item("start_ms", column(&|r| r.start_ms)?)?;
        d.set_item("compute_ms", column(&|r| r.compute_ms)?)?;
        d.set_item("transfer_ms", column(&|r| r.transfer_ms)?)?;
        d.set_item("wait_ms", column(&|r| r.wait_ms)?)?;
        d.set_item("end_ms", column(&|r| r.end_ms)?)?;
        d.set_item("via_sent_ms", column(&|r| r.via_sent_ms)?)?;
        let via: Vec<i64> = rows
            .iter()
            .map(|r| r.via.map_or(-1, |v| v as i64))
            .collect();
        let numpy = py.import("numpy")?;
        d.set_item("via", numpy.getattr("array")?.call1((via, "int64"))?)?;
        Ok(Some(d))
    }

    /// Who took part in the last round timed, on a network with an
    /// availability policy other than `"wait"` (`Network(...,
    /// availability="skip")`): a dict with `computed` (list of bool: the
    /// silo took its local steps), `used` (per silo, the list of
    /// in-neighbours whose model it averaged with its own, or None) and
    /// `joined` (per silo, the silos whose new models it starts the next
    /// round from, averaged: a STAR client takes the centre's, a silo back
    /// up rejoins from its neighbours'; None otherwise). A silo with both
    /// None was absent. Re-normalise your averaging weights over `used`.
    /// None before the first step and on networks without such a policy.
    fn participation<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        let s = self.state(py)?;
        let p = s
            .cell
            .with_dependent(|_, clock| clock.participation().cloned());
        let Some(p) = p else {
            return Ok(None);
        };
        let d = PyDict::new(py);
        d.set_item("computed", p.computed)?;
        d.set_item("used", p.used)?;
        d.set_item("joined", p.joined)?;
        Ok(Some(d))
    }

    /// Rounds timed so far (the next `step()` times this round).
    #[getter]
    fn round(&self, py: Python<'_>) -> PyResult<u64> {
        Ok(self.state(py)?.round)
    }

    /// Simulated wall-clock time, ms: the latest time any silo finished a
    /// round timed so far (0 before the first step).
    #[getter]
    fn now_ms(&self, py: Python<'_>) -> PyResult<f64> {
        Ok(self.state(py)?.now_ms)
    }

    /// The network model the clock runs (`"maxplus"`, `"paper"`,
    /// `"flow"`; `"maxplus+traces"` etc. when the network has a trace:
    /// then the rounds are replayed event by event; `"maxplus+traces+skip"`
    /// under an availability policy other than `"wait"`).
    #[getter]
    fn network(&self) -> String {
        self.network.clone()
    }

    fn __repr__(&self, py: Python<'_>) -> String {
        match self.state(py) {
            Ok(s) => format!(
                "Clock({:?}, network={}, round={}, now_ms={})",
                self.name, self.network, s.round, s.now_ms
            ),
            Err(_) => format!(
                "Clock({:?}, network={}, other thread)",
                self.name, self.network
            ),
        }
    }
}

/// `rounds=` of `advance`: 1 to [`fedtopo::replay::MAX_ROUNDS`], the
/// CLI's bound on rounds per replay (`simulate --rounds`).
fn advance_rounds_arg(obj: &Bound<'_, PyAny>) -> PyResult<u64> {
    crate::whole(obj, "rounds", 1, fedtopo::replay::MAX_ROUNDS)
}
