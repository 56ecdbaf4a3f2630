//! Assembling a network scenario: underlay (file or built-in) + silo
//! placement + access links + connectivity options + workload ->
//! [`DelayModel`].
//!
//! [`NetworkSpec`] is the one front door to the network model: it parses its
//! own knobs ([`NetworkSpec::from_knobs`], keys in [`NETWORK_KNOBS`]), so the
//! CLI options and the axes of experiment files are the same keys with the
//! same parser and the same error texts. Sizes known only later (a trained
//! model's real size) are set on the spec before [`NetworkSpec::build`],
//! never patched into a finished [`DelayModel`].

use std::path::{Path, PathBuf};

use thiserror::Error;

use crate::csv_file::CsvFileError;
use crate::net::access::{AccessLinks, DEFAULT_ACCESS_BPS};
use crate::net::builtin::{builtin_underlay, BUILTIN_UNDERLAYS, DEFAULT_UNDERLAY};
use crate::net::connectivity::{Connectivity, ConnectivityOptions, PathModel};
use crate::net::delay::DelayModel;
use crate::net::links::LinkOverrides;
use crate::net::placement::{PlacementError, SiloPlacement, MAX_SILOS};
use crate::net::silos::{DataSizes, SiloOverrides};
use crate::net::underlay::{LoadOptions, Underlay, UnderlayError};
use crate::net::workload::Workload;
use crate::units::{parse_bandwidth, parse_bits, Bits, BitsPerSec, Ms, MAX_COMPUTE_MS};

/// Why a scenario could not be assembled.
#[derive(Debug, Error)]
pub enum ScenarioError {
    /// The underlay could not be loaded.
    #[error(transparent)]
    Underlay(#[from] UnderlayError),
    /// An input CSV (access, silos or links file) could not be read or
    /// applied; the message names the file and line.
    #[error(transparent)]
    InputFile(#[from] CsvFileError),
    /// Neither a file nor a built-in underlay.
    #[error("`{0}` is neither a readable file nor a built-in underlay (built-ins: {1})")]
    NotFound(String, String),
    /// A network knob with a value it does not accept.
    #[error(transparent)]
    Knob(#[from] KnobError),
    /// The silos could not be placed on the routers.
    #[error(transparent)]
    Placement(#[from] PlacementError),
    /// A trace that the network cannot follow (e.g. on an unlimited
    /// capacity).
    #[error("{0}")]
    Trace(String),
    /// Fewer than two silos: there is no overlay to time (a one-node or
    /// zero-link underlay with one silo per router).
    #[error("underlay `{underlay}` has {routers} router(s) and {links} link(s), which places {silos} silo: timing an overlay needs at least 2 silos (use an underlay with 2 or more connected routers, or place several silos with --silos / --silos-per-router)")]
    TooFewSilos {
        /// Underlay name.
        underlay: String,
        /// Its routers.
        routers: usize,
        /// Its links.
        links: usize,
        /// Silos placed.
        silos: usize,
    },
}

/// A network knob with a bad value: names the key, the value and what it
/// expects. The CLI shows the key as an option (`--core-capacity`), an
/// experiment file as its axis (`core_capacity`).
#[derive(Debug, Clone, PartialEq, Error)]
#[error("{key} `{value}`: expected {expected}")]
pub struct KnobError {
    /// The knob (experiment axis spelling, e.g. `core_capacity`).
    pub key: &'static str,
    /// The value given.
    pub value: String,
    /// What the knob accepts.
    pub expected: &'static str,
}

/// The network knobs: `(key, default, what it accepts)`. An empty default
/// means "not set" (the preset's value, or no file).
pub const NETWORK_KNOBS: [(&str, &str, &str); 15] = [
    (
        "workload",
        "inaturalist",
        "a workload preset: shakespeare, femnist, sent140 or inaturalist",
    ),
    (
        "local_steps",
        "1",
        "a whole number of local steps, at least 1",
    ),
    (
        "model_bits",
        "",
        "a model size > 0 and <= 1e18 bit such as 44961717, 42.88Mbit or 5MB",
    ),
    ("compute_ms", "", "a time in ms >= 0 and <= 1e12"),
    (
        "access",
        "10G",
        "a bandwidth of at least 1 bit/s such as 10G, 100Mbps, or inf",
    ),
    (
        "access_csv",
        "",
        "a CSV file of per-silo access capacities (silo,up,down or silo,capacity)",
    ),
    (
        "core_capacity",
        "file",
        "`file` (the underlay's capacities) or a bandwidth of at least 1 bit/s such as 1G",
    ),
    ("connectivity", "paper", "a path model: paper or bottleneck"),
    (
        "links_csv",
        "",
        "a CSV file of measured core links (a,b,latency_ms,capacity)",
    ),
    (
        "silos_csv",
        "",
        "a CSV file of per-silo compute times, access capacities and data sizes (silo,compute_ms,up,down,data)",
    ),
    (
        "silos_per_router",
        "",
        "a whole number of silos per router, at least 1 and at most 10000 in all (the network model keeps dense silo x silo matrices)",
    ),
    (
        "silos",
        "",
        "a whole number of silos, at least 1 and at most 10000 (the network model keeps dense silo x silo matrices)",
    ),
    ("placement_seed", "0", "a whole number"),
    (
        "trace",
        "",
        "a CSV file of bandwidth, latency and availability changes (time_s,target,value)",
    ),
    (
        "availability",
        "wait",
        "wait, skip, or timeout:MS (a time out in ms > 0 such as timeout:500); skip and timeout need a trace",
    ),
];

/// Where silos sit on the routers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PlacementSpec {
    /// Silo `i` on router `i`.
    #[default]
    OnePerRouter,
    /// `k` silos on every router.
    PerRouter(usize),
    /// `silos` silos spread as evenly as possible, the remainder on routers
    /// drawn with `seed`.
    Spread {
        /// Number of silos.
        silos: usize,
        /// Seed of the random part.
        seed: u64,
    },
}

impl PlacementSpec {
    /// Silos this placement puts on an underlay of `routers` routers.
    pub fn silo_count(&self, routers: usize) -> usize {
        match *self {
            PlacementSpec::OnePerRouter => routers,
            PlacementSpec::PerRouter(k) => k.saturating_mul(routers),
            PlacementSpec::Spread { silos, .. } => silos,
        }
    }

    /// The placement on `underlay`.
    pub fn place(&self, underlay: &Underlay) -> Result<SiloPlacement, PlacementError> {
        let routers = underlay.node_count();
        match *self {
            PlacementSpec::OnePerRouter if routers > MAX_SILOS => {
                Err(PlacementError::TooManySilos {
                    silos: routers,
                    how: format!("one per router of {}", underlay.name),
                })
            }
            PlacementSpec::OnePerRouter => Ok(SiloPlacement::one_per_router(routers)),
            PlacementSpec::PerRouter(k) => SiloPlacement::per_router(k, routers),
            PlacementSpec::Spread { silos, seed } => SiloPlacement::spread(silos, routers, seed),
        }
    }
}

/// Loads `spec`: a GML file path, `builtin:NAME`, a built-in name, or
/// `None` for the default built-in underlay.
pub fn load_underlay(spec: Option<&str>, options: &LoadOptions) -> Result<Underlay, ScenarioError> {
    let spec = spec.unwrap_or(DEFAULT_UNDERLAY);
    let name = spec.strip_prefix("builtin:").unwrap_or(spec);
    let path = Path::new(spec);
    if !spec.starts_with("builtin:") && path.exists() {
        return Ok(Underlay::load(path, options)?);
    }
    match builtin_underlay(name) {
        Some(text) => {
            let mut u = Underlay::from_gml_str(text, &format!("builtin:{name}"), options)?;
            u.name = name.to_string();
            Ok(u)
        }
        None if spec.starts_with("builtin:") || !spec.contains(['/', '.']) => {
            Err(ScenarioError::NotFound(spec.to_string(), builtin_names()))
        }
        // Looks like a path: let the loader report the I/O error with the path.
        None => Ok(Underlay::load(path, options)?),
    }
}

fn builtin_names() -> String {
    BUILTIN_UNDERLAYS
        .iter()
        .map(|b| b.0)
        .collect::<Vec<_>>()
        .join(", ")
}

/// Everything that turns an underlay into a [`DelayModel`].
///
/// # Examples
/// ```
/// use fedtopo::prelude::*;
///
/// let u = load_underlay(None, &LoadOptions::default())?;
/// // 100 Mbit/s access links, the paper's default workload.
/// let m = NetworkSpec { access_bps: 1e8, ..NetworkSpec::default() }.delay_model(&u);
/// // [Marfoq20] eq. (3): the delay of arc 0 -> 1 for out- and in-degree 1, ms.
/// assert!(m.arc_delay(0, 1, 1, 1) > m.compute_round_ms(0));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct NetworkSpec {
    /// Connectivity options (path model, latency constants, core capacity).
    pub connectivity: ConnectivityOptions,
    /// Access capacity of every silo, bit/s.
    pub access_bps: BitsPerSec,
    /// Workload (preset with overrides applied).
    pub workload: Workload,
    /// Per-silo access capacities, applied over `access_bps` by
    /// [`Self::build`] (CSV `silo,up,down` or `silo,capacity`).
    pub access_csv: Option<PathBuf>,
    /// Measured core links: per-link latency and capacity
    /// ([`crate::net::links`]), applied to the underlay by [`Self::build`].
    pub links_csv: Option<PathBuf>,
    /// Heterogeneous silos: per-silo `Tc(i)`, access capacities and data
    /// sizes ([`crate::net::silos`]), applied last by [`Self::build`].
    pub silos_csv: Option<PathBuf>,
    /// Where silos sit on the routers ([`Self::build`]).
    pub placement: PlacementSpec,
    /// Network dynamics: a trace file of bandwidth, latency and
    /// availability changes ([`crate::net::dynamics::read`]), applied last by
    /// [`Self::build`].
    pub trace: Option<PathBuf>,
    /// What synchronous rounds do about a silo the trace sets down
    /// ([`crate::net::dynamics::AvailabilityPolicy`]; not `Wait` only with a
    /// trace).
    pub availability: crate::net::dynamics::AvailabilityPolicy,
}

impl Default for NetworkSpec {
    fn default() -> Self {
        NetworkSpec {
            connectivity: ConnectivityOptions::default(),
            access_bps: DEFAULT_ACCESS_BPS,
            workload: Workload::default(),
            access_csv: None,
            links_csv: None,
            silos_csv: None,
            placement: PlacementSpec::OnePerRouter,
            trace: None,
            availability: crate::net::dynamics::AvailabilityPolicy::Wait,
        }
    }
}

impl NetworkSpec {
    /// Parses the network knobs of [`NETWORK_KNOBS`]: `value(key)` gives a
    /// knob's text, or `None` (or an empty text) for its default. Overrides
    /// of the preset (`model_bits`, `compute_ms`) apply whatever the order
    /// the knobs were given in, and rename the workload `custom`.
    ///
    /// # Errors
    /// [`KnobError`] naming the first knob whose value does not parse.
    pub fn from_knobs<'a>(value: impl Fn(&str) -> Option<&'a str>) -> Result<Self, KnobError> {
        let get = |key: &'static str| Knob::lookup(&NETWORK_KNOBS, &value, key);
        let steps: u32 = get("local_steps").parse(|t| t.trim().parse().ok().filter(|&s| s >= 1))?;
        let preset = get("workload");
        let mut workload = preset.parse(|t| Workload::preset(t.trim(), steps))?;
        let model_bits = get("model_bits");
        if model_bits.given {
            workload.model_bits = model_bits.parse(|t| {
                parse_bits(t)
                    .ok()
                    .filter(|b: &Bits| b.is_finite() && *b > 0.0)
            })?;
            workload.name = "custom".into();
        }
        let compute = get("compute_ms");
        if compute.given {
            workload.compute_ms = compute.parse(|t| {
                t.trim()
                    .parse::<Ms>()
                    .ok()
                    .filter(|c| c.is_finite() && *c >= 0.0 && *c <= MAX_COMPUTE_MS)
            })?;
            workload.name = "custom".into();
        }
        let core = get("core_capacity");
        let core_capacity_bps = match core.text.trim() {
            "file" => None,
            _ => Some(core.parse(|t| parse_bandwidth(t).ok())?),
        };
        let model = get("connectivity").parse(|t| t.trim().parse::<PathModel>().ok())?;
        let count = |key| -> Result<Option<usize>, KnobError> {
            let k = get(key);
            if !k.given {
                return Ok(None);
            }
            k.parse(|t| {
                t.trim()
                    .parse()
                    .ok()
                    .filter(|&n: &usize| (1..=MAX_SILOS).contains(&n))
            })
            .map(Some)
        };
        let seed: u64 = get("placement_seed").parse(|t| t.trim().parse().ok())?;
        let placement = match (count("silos_per_router")?, count("silos")?) {
            (Some(_), Some(_)) => {
                return Err(KnobError {
                    key: "silos",
                    value: get("silos").text.to_string(),
                    expected: "either silos or silos_per_router, not both",
                })
            }
            (Some(k), None) => PlacementSpec::PerRouter(k),
            (None, Some(n)) => PlacementSpec::Spread { silos: n, seed },
            (None, None) => PlacementSpec::OnePerRouter,
        };
        let access_csv = get("access_csv");
        let silos_csv = get("silos_csv");
        let links_csv = get("links_csv");
        let trace = get("trace");
        let availability = get("availability");
        let policy = availability.parse(crate::net::dynamics::AvailabilityPolicy::parse)?;
        if policy != crate::net::dynamics::AvailabilityPolicy::Wait && !trace.given {
            return Err(KnobError {
                key: "availability",
                value: availability.text.to_string(),
                expected: "wait without a trace: skip and timeout apply to the silos a trace \
                           (trace, --trace) sets down",
            });
        }
        Ok(NetworkSpec {
            connectivity: ConnectivityOptions {
                model,
                core_capacity_bps,
                ..ConnectivityOptions::default()
            },
            access_bps: get("access").parse(|t| parse_bandwidth(t).ok())?,
            workload,
            access_csv: access_csv.given.then(|| PathBuf::from(access_csv.text)),
            links_csv: links_csv.given.then(|| PathBuf::from(links_csv.text)),
            silos_csv: silos_csv.given.then(|| PathBuf::from(silos_csv.text)),
            placement,
            trace: trace.given.then(|| PathBuf::from(trace.text)),
            availability: policy,
        })
    }

    /// Warnings about knob values that parse but are likely mistakes, as
    /// `(key, warning)`: a bandwidth (`access`, `core_capacity`) written as
    /// a bare number below 1 kbit/s ([`crate::units::bare_bandwidth_warning`]).
    /// Callers print them naming the knob their own way (`--access`,
    /// `access =`, `access=`).
    pub fn knob_warnings<'a>(
        value: impl Fn(&str) -> Option<&'a str>,
    ) -> Vec<(&'static str, String)> {
        ["access", "core_capacity"]
            .into_iter()
            .filter_map(|key| {
                let text = value(key)?;
                crate::units::bare_bandwidth_warning(text).map(|w| (key, w))
            })
            .collect()
    }

    /// The same spec with the model size `bits` (bit) known only after the
    /// knobs were parsed (e.g. a trained model's real size), and the
    /// workload renamed `name`.
    pub fn with_model_bits(mut self, bits: Bits, name: &str) -> Self {
        self.workload.model_bits = bits;
        self.workload.name = name.to_string();
        self
    }

    /// The delay model of `underlay` under the whole spec: the measured
    /// links applied to the underlay, silos placed by [`Self::placement`],
    /// uniform access `access_bps`, then the access CSV,
    /// then the silo CSV (per-silo `Tc(i)` and capacities; its data sizes
    /// are kept in [`DelayModel::data_sizes`], outside the timing).
    ///
    /// # Errors
    /// A placement that does not fit the underlay or gives fewer than 2
    /// silos ([`ScenarioError::TooFewSilos`]); an unreadable or bad
    /// access, links or silo CSV (a `data` column missing a silo included).
    pub fn build(&self, underlay: &Underlay) -> Result<DelayModel, ScenarioError> {
        let placement = self.placement.place(underlay)?;
        if placement.silo_count() < 2 {
            return Err(ScenarioError::TooFewSilos {
                underlay: underlay.name.clone(),
                routers: underlay.node_count(),
                links: underlay.link_count(),
                silos: placement.silo_count(),
            });
        }
        let mut model = match &self.links_csv {
            None => self.delay_model_placed(underlay, placement),
            Some(path) => {
                // Measured links take precedence over a global core capacity:
                // apply that to every link first, then the file.
                let mut measured = underlay.clone();
                if let Some(c) = self.connectivity.core_capacity_bps {
                    for l in &mut measured.links {
                        l.capacity_bps = c;
                    }
                }
                LinkOverrides::read(path, underlay)?
                    .apply(&mut measured, self.connectivity.ms_per_km);
                let spec = NetworkSpec {
                    connectivity: ConnectivityOptions {
                        core_capacity_bps: None,
                        ..self.connectivity.clone()
                    },
                    ..self.clone()
                };
                spec.delay_model_placed(&measured, placement)
            }
        };
        if let Some(path) = &self.access_csv {
            let placement = model.connectivity.placement().clone();
            model
                .access
                .apply_csv_at(path, underlay, Some(&placement))?;
        }
        if let Some(path) = &self.silos_csv {
            let placement = model.connectivity.placement().clone();
            let o = SiloOverrides::read(path, underlay, &placement)?;
            model.data_sizes = o.data_sizes(&placement.labels(underlay))?;
            for i in 0..model.silo_count() {
                let up = o.up[i].unwrap_or(model.access.up[i]);
                let down = o.down[i].unwrap_or(model.access.down[i]);
                model.access.set(i, up, down);
            }
            if o.compute_ms.iter().any(Option::is_some) {
                let tc = model.workload.compute_ms;
                model.compute_ms = Some(o.compute_ms.iter().map(|c| c.unwrap_or(tc)).collect());
            }
        }
        if let Some(path) = &self.trace {
            let placement = model.connectivity.placement().clone();
            let mut d = crate::net::dynamics::read::read(path, underlay, &placement)?;
            d.policy = self.availability;
            check_traced_capacities(&d, &model, &placement.labels(underlay), path)?;
            model.dynamics = Some(std::sync::Arc::new(d));
        }
        Ok(model)
    }

    /// The silos' training-set sizes from the `data` column of the silo CSV
    /// (`None`: no silo CSV, or no `data` column), for the placement of this
    /// spec on `underlay`: the same values [`Self::build`] keeps in
    /// [`DelayModel::data_sizes`], available before the model is built
    /// (`train` splits its data first, then learns the model size).
    ///
    /// # Errors
    /// A placement that does not fit; an unreadable or bad silo CSV.
    pub fn data_sizes(&self, underlay: &Underlay) -> Result<Option<DataSizes>, ScenarioError> {
        let Some(path) = &self.silos_csv else {
            return Ok(None);
        };
        let placement = self.placement.place(underlay)?;
        let o = SiloOverrides::read(path, underlay, &placement)?;
        Ok(o.data_sizes(&placement.labels(underlay))?)
    }

    /// The delay model of `underlay` with one silo per router and uniform
    /// access `access_bps` (ignores `placement` and `access_csv`).
    pub fn delay_model(&self, underlay: &Underlay) -> DelayModel {
        self.delay_model_placed(
            underlay,
            SiloPlacement::one_per_router(underlay.node_count()),
        )
    }

    /// The delay model of `underlay` with silos attached by `placement`
    /// (one access link of `access_bps` per silo; ignores `access_csv`).
    pub fn delay_model_placed(&self, underlay: &Underlay, placement: SiloPlacement) -> DelayModel {
        let silos = placement.silo_count();
        let conn = Connectivity::with_placement(underlay, &self.connectivity, placement);
        let access = AccessLinks::uniform(silos, self.access_bps);
        DelayModel::new(conn, access, self.workload.clone())
    }
}

/// A trace may change only finite capacities (an unlimited link has no
/// rate to follow, and a silo that goes down needs a capacity to lose).
fn check_traced_capacities(
    d: &crate::net::dynamics::Dynamics,
    model: &DelayModel,
    labels: &[String],
    path: &Path,
) -> Result<(), ScenarioError> {
    let err = |what: String| {
        ScenarioError::Trace(format!(
            "{}: {what}: a trace changes finite capacities only; give it one with --access, --access-csv or --silos-csv",
            path.display()
        ))
    };
    for i in 0..model.silo_count() {
        let label = labels.get(i).map_or("?", String::as_str);
        for (side, series, cap) in [
            ("up", &d.up[i], model.access.up[i]),
            ("down", &d.down[i], model.access.down[i]),
        ] {
            if (series.is_some() || d.avail[i].is_some()) && !cap.is_finite() {
                return Err(err(format!(
                    "silo {label} has an unlimited {side}link access capacity"
                )));
            }
        }
    }
    let conn = &model.connectivity;
    for (l, _) in &d.links {
        if !conn.link_capacity_bps(*l).is_finite() {
            return Err(ScenarioError::Trace(format!(
                "{}: core link {l} has an unlimited capacity; a trace changes finite capacities only (set one with --links-csv or --core-capacity)",
                path.display()
            )));
        }
    }
    Ok(())
}

/// One knob's text and how to report it (shared with
/// [`crate::overlay::knobs`]).
pub(crate) struct Knob<'a> {
    pub(crate) key: &'static str,
    pub(crate) text: &'a str,
    pub(crate) given: bool,
    pub(crate) expected: &'static str,
}

impl<'a> Knob<'a> {
    /// The knob `key` of `table` (`(key, default, expected)` rows): the
    /// text `value(key)` gives, or its default when that is `None` or blank.
    pub(crate) fn lookup(
        table: &[(&'static str, &'static str, &'static str)],
        value: &impl Fn(&str) -> Option<&'a str>,
        key: &'static str,
    ) -> Knob<'a> {
        let (_, default, expected) = table
            .iter()
            .copied()
            .find(|k| k.0 == key)
            .unwrap_or((key, "", "a value"));
        let text = value(key).filter(|v| !v.trim().is_empty());
        Knob {
            key,
            text: text.unwrap_or(default),
            given: text.is_some(),
            expected,
        }
    }

    /// `f(text)`, or the knob's error when it gives `None`.
    pub(crate) fn parse<T>(&self, f: impl FnOnce(&str) -> Option<T>) -> Result<T, KnobError> {
        f(self.text).ok_or_else(|| KnobError {
            key: self.key,
            value: self.text.to_string(),
            expected: self.expected,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn knobs<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<&'a str> + 'a {
        move |k| pairs.iter().find(|p| p.0 == k).map(|p| p.1)
    }

    #[test]
    fn defaults_are_the_paper_setting() {
        let s = NetworkSpec::from_knobs(|_| None).unwrap();
        assert_eq!(s.workload, Workload::default());
        assert_eq!(s.access_bps, DEFAULT_ACCESS_BPS);
        assert_eq!(s.connectivity, ConnectivityOptions::default());
        assert_eq!(s.placement, PlacementSpec::OnePerRouter);
        assert!(s.access_csv.is_none());
        // Empty texts are "not given" (experiment jobs without the axis).
        let e = NetworkSpec::from_knobs(|_| Some("")).unwrap();
        assert_eq!(e.workload, s.workload);
    }

    #[test]
    fn overrides_apply_whatever_the_order() {
        let s = NetworkSpec::from_knobs(knobs(&[
            ("model_bits", "5MB"),
            ("compute_ms", "7.5"),
            ("workload", "femnist"),
            ("local_steps", "3"),
            ("core_capacity", "2G"),
            ("connectivity", "bottleneck"),
            ("silos", "30"),
            ("placement_seed", "4"),
        ]))
        .unwrap();
        assert_eq!(s.workload.model_bits, 40e6);
        assert_eq!(s.workload.compute_ms, 7.5);
        assert_eq!(s.workload.local_steps, 3);
        assert_eq!(s.workload.name, "custom");
        assert_eq!(s.connectivity.core_capacity_bps, Some(2e9));
        assert_eq!(s.connectivity.model, PathModel::Bottleneck);
        assert_eq!(s.placement, PlacementSpec::Spread { silos: 30, seed: 4 });
        let later = s.with_model_bits(1e6, "trained-model");
        assert_eq!(later.workload.model_bits, 1e6);
        assert_eq!(later.workload.name, "trained-model");
    }

    #[test]
    fn bad_values_name_the_knob_and_what_it_expects() {
        for (key, bad) in [
            ("workload", "imagenet"),
            ("local_steps", "0"),
            ("model_bits", "-3"),
            ("compute_ms", "nan"),
            ("access", "10 parsecs"),
            ("core_capacity", "fast"),
            ("connectivity", "shortest"),
            ("silos", "0"),
            ("silos_per_router", "x"),
            ("placement_seed", "-1"),
        ] {
            let e = NetworkSpec::from_knobs(knobs(&[(key, bad)])).unwrap_err();
            assert_eq!(e.key, key);
            assert_eq!(e.value, bad);
            assert!(e
                .to_string()
                .starts_with(&format!("{key} `{bad}`: expected")));
        }
        let both = NetworkSpec::from_knobs(knobs(&[("silos", "4"), ("silos_per_router", "2")]));
        assert!(both.unwrap_err().to_string().contains("not both"));
    }

    #[test]
    fn measured_links_set_latency_and_capacity_over_the_global_core() {
        let u = load_underlay(Some("aws-gaia"), &LoadOptions::default()).unwrap();
        let (a, b) = (u.links[0].a, u.links[0].b);
        let dir = std::env::temp_dir().join(format!("fedtopo-links-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let csv = dir.join("links.csv");
        std::fs::write(&csv, format!("a,b,latency_ms,capacity\n{a},{b},0.5,40G\n")).unwrap();
        let path = csv.to_string_lossy().into_owned();
        let s = NetworkSpec::from_knobs(knobs(&[
            ("links_csv", path.as_str()),
            ("core_capacity", "1G"),
        ]))
        .unwrap();
        let m = s.build(&u).unwrap();
        // Hand-computed: one hop of 0.5 ms (shorter than any detour) plus
        // the 4 ms per path; the paper path model's A = capacity / hops.
        let per_path = ConnectivityOptions::default().per_path_ms;
        assert!((m.connectivity.latency_ms(a, b) - (0.5 + per_path)).abs() < 1e-12);
        assert_eq!(m.connectivity.bandwidth_bps(a, b), 40e9);
        // Other links keep the global core capacity.
        let (c, d) = (u.links[1].a, u.links[1].b);
        let hops = m.connectivity.hops(c, d) as f64;
        assert_eq!(m.connectivity.bandwidth_bps(c, d), 1e9 / hops);
    }

    #[test]
    fn data_sizes_are_carried_but_do_not_time() {
        let u = load_underlay(Some("aws-gaia"), &LoadOptions::default()).unwrap();
        let dir = std::env::temp_dir().join(format!("fedtopo-data-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (with, without) = (dir.join("with.csv"), dir.join("without.csv"));
        let mut a = String::from("silo,up,data\n");
        let mut b = String::from("silo,up\n");
        for (i, r) in u.routers.iter().enumerate() {
            a.push_str(&format!("{},{}G,{}\n", r.label, i + 1, 7 * i + 1));
            b.push_str(&format!("{},{}G\n", r.label, i + 1));
        }
        std::fs::write(&with, a).unwrap();
        std::fs::write(&without, b).unwrap();
        let spec = |p: &Path| {
            let p = p.to_string_lossy().into_owned();
            NetworkSpec::from_knobs(|k| (k == "silos_csv").then_some(p.as_str())).unwrap()
        };
        let (m, plain) = (
            spec(&with).build(&u).unwrap(),
            spec(&without).build(&u).unwrap(),
        );
        let sizes = m.data_sizes.clone().unwrap();
        assert_eq!(
            sizes.samples,
            (0..u.node_count()).map(|i| 7 * i + 1).collect::<Vec<_>>()
        );
        assert_eq!(spec(&with).data_sizes(&u).unwrap(), Some(sizes));
        assert_eq!(
            (
                plain.data_sizes.as_ref(),
                spec(&without).data_sizes(&u).unwrap()
            ),
            (None, None)
        );
        let n = m.silo_count();
        for i in 0..n {
            for j in (0..n).filter(|&j| j != i) {
                assert_eq!(m.arc_delay(i, j, 2, 3), plain.arc_delay(i, j, 2, 3));
            }
        }
    }

    #[test]
    fn build_places_silos_and_reads_the_access_file() {
        let u = load_underlay(Some("aws-gaia"), &LoadOptions::default()).unwrap();
        let dir = std::env::temp_dir().join(format!("fedtopo-spec-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let csv = dir.join("access.csv");
        std::fs::write(&csv, "silo,up,down\n0,1G,2G\n").unwrap();
        let path = csv.to_string_lossy().into_owned();
        let s = NetworkSpec::from_knobs(knobs(&[
            ("silos_per_router", "2"),
            ("access", "5G"),
            ("access_csv", path.as_str()),
        ]))
        .unwrap();
        let m = s.build(&u).unwrap();
        assert_eq!(m.silo_count(), 2 * u.node_count());
        assert_eq!(m.access.up[0], 1e9);
        assert_eq!(m.access.down[0], 2e9);
        assert_eq!(m.access.up[m.silo_count() - 1], 5e9);
    }
}
