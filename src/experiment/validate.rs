//! Checking every grid point before any job runs: each underlay loads (with
//! the file's loading policies), each overlay name parses, and each axis
//! value parses (network knobs through [`NetworkSpec::from_knobs`], the
//! parser the jobs use). All problems are reported at once, in one
//! [`ExperimentError::Grid`], instead of the first failing job stopping a
//! sweep half-way.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::graph::failures::FailureSpec;
use crate::net::builtin::builtin_underlay;
use crate::net::scenario::{load_underlay, NetworkSpec, NETWORK_KNOBS};
use crate::net::underlay::Underlay;
use crate::network::NetworkKind;
use crate::overlay::build::{CenterPolicy, OverlayKind};
use crate::program::Method;
use crate::replay::Straggler;
use crate::units::parse_bandwidth;

use super::grid::Job;
use super::spec::{ExperimentKind, ExperimentSpec};
use super::ExperimentError;

/// The `shared/` directory of `shared:REL` underlays: the one lookup of
/// [`crate::net::builtin::shared_dir`] from the experiment file's directory
/// `base_dir` (`$FEDTOPO_SHARED`, else a `shared/` holding `underlays/` there
/// or in an ancestor), else from the crate it was compiled from, else
/// `shared` beside `base_dir` (which then fails to load, with a message
/// saying how to set it).
pub fn shared_dir(base_dir: &Path) -> PathBuf {
    crate::net::builtin::shared_dir(base_dir)
        .or_else(|| crate::net::builtin::shared_dir(Path::new(env!("CARGO_MANIFEST_DIR"))))
        .unwrap_or_else(|| base_dir.join("shared"))
}

/// Resolves an underlay spec of the grid to something [`crate::net::scenario::load_underlay`] takes.
pub fn resolve_underlay(spec: &str, base_dir: &Path) -> String {
    if let Some(rel) = spec.strip_prefix("shared:") {
        return shared_dir(base_dir)
            .join("underlays")
            .join(rel)
            .display()
            .to_string();
    }
    if spec.starts_with("builtin:") || builtin_underlay(spec).is_some() {
        return spec.to_string();
    }
    let p = Path::new(spec);
    if p.is_absolute() {
        spec.to_string()
    } else {
        base_dir.join(p).display().to_string()
    }
}

/// Problems found so far, each once, in the order found.
#[derive(Default)]
struct Problems(Vec<String>);

impl Problems {
    fn add(&mut self, p: String) {
        if !self.0.contains(&p) {
            self.0.push(p);
        }
    }
}

/// Checks every job of `jobs` (the whole grid) and returns the loaded
/// underlays by grid value; otherwise [`ExperimentError::Grid`] listing
/// every problem. Relative files (underlays, `access_csv`) are resolved
/// against `base_dir`, the experiment file's directory.
pub fn validate_grid(
    spec: &ExperimentSpec,
    jobs: &[Job],
    base_dir: &Path,
) -> Result<BTreeMap<String, Underlay>, ExperimentError> {
    let mut problems = Problems::default();
    let options = spec.load_options();
    let mut underlays = BTreeMap::new();
    for name in distinct(jobs, "underlay") {
        let resolved = resolve_underlay(name, base_dir);
        match load_underlay(Some(&resolved), &options) {
            Ok(u) => {
                underlays.insert(name.to_string(), u);
            }
            Err(e) if name.starts_with("shared:") => problems.add(format!(
                "underlay `{name}`: {e} (`shared:REL` is $FEDTOPO_SHARED/underlays/REL, else \
                 shared/underlays/REL beside the experiment's folder or an ancestor of it; \
                 set FEDTOPO_SHARED to the folder that holds underlays/)"
            )),
            Err(e) => problems.add(format!("underlay `{name}`: {e}")),
        }
    }
    for name in distinct(jobs, "overlay") {
        if name.trim().is_empty() {
            problems.add("overlay ``: empty overlay name; remove it or name an overlay".into());
            continue;
        }
        let parsed = match spec.kind {
            ExperimentKind::Program => name
                .parse::<Method>()
                .map(|_| ())
                .map_err(|e| e.to_string()),
            // A file overlay must also exist, fit the size limit and parse.
            _ => name
                .parse::<OverlayKind>()
                .map_err(|e| e.to_string())
                .and_then(|k| {
                    k.relative_to(base_dir)
                        .check_input()
                        .map_err(|e| e.to_string())
                }),
        };
        if let Err(e) = parsed {
            problems.add(format!("overlay `{name}`: {e}"));
        }
    }
    // Two passes over the points (knobs, centres): a long grid shows its
    // progress.
    let task = crate::progress::Task::start(
        &format!("check {}", spec.name),
        "points",
        2 * jobs.len() as u64,
    );
    check_network_knobs(jobs, base_dir, &mut problems, &task);
    for value in distinct(jobs, "center_access") {
        if value != "same" {
            if let Err(e) = parse_bandwidth(value) {
                problems.add(format!(
                    "center_access `{value}`: expected `same` or a bandwidth ({e})"
                ));
            }
        }
    }
    for (i, job) in jobs.iter().enumerate() {
        if i % 4096 == 0 {
            task.set((jobs.len() + i) as u64);
        }
        if let Some(u) = underlays.get(job.get("underlay")) {
            if let Err(e) = CenterPolicy::parse(job.get("center"), u) {
                problems.add(format!("underlay `{}`: {e}", job.get("underlay")));
            }
        }
    }
    task.finish();
    check_kind_axes(jobs, &mut problems);
    if problems.0.is_empty() {
        Ok(underlays)
    } else {
        Err(ExperimentError::Grid {
            name: spec.name.clone(),
            problems: problems.0,
        })
    }
}

/// The distinct values of `axis` over `jobs`, in grid order (none when the
/// grid lacks the axis).
fn distinct<'j>(jobs: &'j [Job], axis: &str) -> Vec<&'j str> {
    let mut seen = std::collections::HashSet::new();
    let mut out: Vec<&str> = Vec::new();
    for job in jobs.iter().filter(|j| j.has(axis)) {
        let v = job.get(axis);
        if seen.insert(v) {
            out.push(v);
        }
    }
    out
}

/// Every network knob value alone, then every job's combination (for
/// constraints between knobs); `access_csv`, `silos_csv`, `links_csv` and
/// `trace` files must exist.
fn check_network_knobs(
    jobs: &[Job],
    base_dir: &Path,
    problems: &mut Problems,
    task: &crate::progress::Task,
) {
    for (key, _, _) in NETWORK_KNOBS {
        for value in distinct(jobs, key) {
            // `availability` alone is checked beside a trace (it needs
            // one); each job's combination below checks that it has one.
            let alone = |k: &str| match k {
                _ if k == key => Some(value),
                "trace" if key == "availability" => Some("trace.csv"),
                _ => None,
            };
            if let Err(e) = NetworkSpec::from_knobs(alone) {
                problems.add(e.to_string());
            }
        }
    }
    for (i, job) in jobs.iter().enumerate() {
        if i % 4096 == 0 {
            task.set(i as u64);
        }
        if let Err(e) = NetworkSpec::from_knobs(|key| Some(job.get(key))) {
            problems.add(e.to_string());
        }
    }
    for axis in ["access_csv", "silos_csv", "links_csv", "trace"] {
        for value in distinct(jobs, axis) {
            let path = base_dir.join(value);
            match crate::input_file::is_regular_file(&path) {
                _ if value.trim().is_empty() => {}
                Ok(true) => {}
                Ok(false) => problems.add(format!(
                    "{axis} `{value}`: expected a CSV file, found none at {}",
                    path.display()
                )),
                Err(e) => problems.add(format!("{axis} `{value}`: {}: {e}", path.display())),
            }
        }
    }
}

/// The kind-specific axes that parse on their own: `network`, `straggler`,
/// `failures`,
/// and the whole numbers and numbers of `rounds`, `seed`, `lr`,
/// `batch_size`, `eval_every` and `separation`.
fn check_kind_axes(jobs: &[Job], problems: &mut Problems) {
    for value in distinct(jobs, "network") {
        if let Err(e) = value.parse::<NetworkKind>() {
            problems.add(format!("network `{value}`: {e}"));
        }
    }
    for value in distinct(jobs, "straggler") {
        if let Err(e) = value.parse::<Straggler>() {
            problems.add(format!("straggler `{value}`: {e}"));
        }
    }
    for value in distinct(jobs, "failures") {
        if let Err(e) = FailureSpec::parse_optional(value) {
            problems.add(format!("failures `{value}`: {e}"));
        }
    }
    for value in distinct(jobs, "breakdown") {
        if !matches!(value.trim(), "true" | "false") {
            problems.add(format!("breakdown `{value}`: expected true or false"));
        }
    }
    for value in distinct(jobs, "protocol") {
        if let Err(e) = crate::replay::asynchronous::AsyncProtocol::parse_choice(value) {
            problems.add(e);
        }
    }
    let whole = |v: &str, min: u64| v.trim().parse::<u64>().is_ok_and(|n| n >= min);
    for (axis, min) in [
        ("rounds", 1),
        ("seed", 0),
        ("batch_size", 1),
        ("eval_every", 1),
    ] {
        for value in distinct(jobs, axis) {
            if !whole(value, min) {
                problems.add(format!(
                    "{axis} `{value}`: expected a whole number >= {min}"
                ));
            }
        }
    }
    for axis in ["lr", "separation"] {
        for value in distinct(jobs, axis) {
            let ok = value
                .trim()
                .parse::<f64>()
                .is_ok_and(|x| x.is_finite() && x > 0.0);
            if !ok {
                problems.add(format!("{axis} `{value}`: expected a number > 0"));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::expand;

    fn problems(toml: &str) -> Vec<String> {
        let spec = ExperimentSpec::parse(toml, "t.toml").unwrap_or_else(|e| panic!("{e}"));
        let jobs = expand(&spec.grid);
        match validate_grid(&spec, &jobs, Path::new(".")) {
            Ok(_) => Vec::new(),
            Err(ExperimentError::Grid { problems, .. }) => problems,
            Err(e) => panic!("{e}"),
        }
    }

    #[test]
    fn an_empty_overlay_name_is_a_problem() {
        let p = problems(
            r#"
name = "e"
kind = "compare"
[grid]
underlay = ["aws-gaia"]
overlay = ["ring", ""]
"#,
        );
        assert_eq!(
            p,
            vec!["overlay ``: empty overlay name; remove it or name an overlay".to_string()]
        );
    }

    #[test]
    fn program_grid_reports_every_problem_once() {
        let p = problems(
            r#"
name = "p"
kind = "program"
[grid]
underlay = ["aws-gaia", "no-such-builtin"]
overlay = ["fedavg", "nope"]
lr = [0.03, 0.0]
rounds = [10, 0]
center_access = ["same", "x"]
"#,
        );
        assert_eq!(p.len(), 5, "{p:#?}");
        assert!(p[0].starts_with("underlay `no-such-builtin`: "), "{p:#?}");
        assert!(p[1].starts_with("overlay `nope`: "), "{p:#?}");
        assert!(p.iter().any(|m| m.starts_with("center_access `x`")));
        assert!(p
            .iter()
            .any(|m| m == "rounds `0`: expected a whole number >= 1"));
        assert!(p.iter().any(|m| m == "lr `0`: expected a number > 0"));
    }

    #[test]
    fn a_good_grid_passes_and_loads_its_underlays() {
        let spec = ExperimentSpec::parse(
            "name = \"g\"\nkind = \"compare\"\n[grid]\nunderlay = [\"aws-gaia\"]\n",
            "g.toml",
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let jobs = expand(&spec.grid);
        let u = validate_grid(&spec, &jobs, Path::new(".")).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(u["aws-gaia"].node_count(), 11);
        assert_eq!(
            spec.load_options(),
            crate::net::underlay::LoadOptions::default()
        );
    }

    #[test]
    fn loading_keys_parse_and_are_checked() {
        let base = "name = \"g\"\nkind = \"compare\"\n";
        let grid = "[grid]\nunderlay = [\"aws-gaia\"]\n";
        let spec = ExperimentSpec::parse(
            &format!("{base}missing_coordinates = \"drop\"\ndefault_length_km = 100\nlargest_component = true\n{grid}"),
            "g.toml",
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let o = spec.load_options();
        assert_eq!(
            o.missing_coordinates,
            crate::net::underlay::MissingCoordinates::Drop
        );
        assert_eq!(o.default_length_km, Some(100.0));
        assert_eq!(
            o.disconnected,
            crate::net::underlay::Disconnected::LargestComponent
        );
        let e = ExperimentSpec::parse(&format!("{base}default_length_km = -1\n{grid}"), "g.toml")
            .map(|_| ())
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("default_length_km = -1: expected a finite length >= 0 km"),
            "{e}"
        );
    }
}
