//! Loads every file of the corpus: the paper's underlays shipped in the
//! repository (`underlays/paper/`) always, and the Topology Zoo
//! (`shared/underlays/topology-zoo`) when the shared folder is found by the
//! one lookup of [`crate::net::builtin::shared_dir`] (`$FEDTOPO_SHARED`, else a
//! `shared/` beside the crate or an ancestor). Without it the Zoo tests note
//! their skip ([`crate::net::builtin::note_skipped_test`]), or fail when
//! `FEDTOPO_REQUIRE_SHARED` is set, as in CI.

use super::{Disconnected, LoadOptions, MissingCoordinates, Underlay, UnderlayError};
use crate::net::builtin::paper_underlays_dir;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// `shared/underlays`, or `None` after noting that `test` skips (its Zoo part).
fn shared_underlays(test: &str) -> Option<PathBuf> {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let found = crate::net::builtin::shared_dir(manifest)
        .map(|d| d.join("underlays"))
        .filter(|d| d.is_dir());
    if found.is_none() {
        // CI sets FEDTOPO_REQUIRE_SHARED so that these tests cannot silently skip.
        if std::env::var_os("FEDTOPO_REQUIRE_SHARED").is_some() {
            panic!(
                "{test}: FEDTOPO_REQUIRE_SHARED is set but no shared/underlays directory was found"
            );
        }
        crate::net::builtin::note_skipped_test(
            &format!("underlay::corpus_tests::{test}"),
            "no shared/underlays with the Topology Zoo corpus (set FEDTOPO_SHARED)",
        );
    }
    found
}

fn gml_files(dir: &Path) -> Vec<PathBuf> {
    let Ok(read) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = read
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "gml"))
        .collect();
    files.sort();
    files
}

/// The paper's underlays from the repository, then the Zoo's when `shared` is given.
fn corpus_files(shared: Option<&Path>) -> Vec<PathBuf> {
    let mut files = gml_files(&paper_underlays_dir());
    if let Some(dir) = shared {
        files.extend(gml_files(&dir.join("topology-zoo")));
    }
    files
}

fn reason(e: &UnderlayError) -> &'static str {
    match e {
        UnderlayError::Io { .. } => "io",
        UnderlayError::Gml { .. } => "syntax",
        UnderlayError::Invalid { .. } => "invalid",
        UnderlayError::MissingCoordinates { .. } => "missing coordinates",
        UnderlayError::Disconnected { .. } => "disconnected",
        UnderlayError::Empty { .. } => "empty",
        UnderlayError::NoCoordinates { .. } => "no coordinates",
        UnderlayError::BadDefaultLength { .. } => "bad option",
        UnderlayError::LengthOverflow { .. } => "infinite lengths",
        UnderlayError::InputFile(_) | UnderlayError::Matrix { .. } => "matrix",
    }
}

/// A precise error: positioned (`file:line:col:`), or naming nodes / components.
fn is_precise(e: &UnderlayError, file: &Path) -> bool {
    let text = e.to_string();
    let prefix = format!("{}:", file.display());
    let positioned = text.strip_prefix(&prefix).is_some_and(|rest| {
        let mut parts = rest.splitn(3, ':');
        let line = parts.next().unwrap_or("");
        let col = parts.next().unwrap_or("");
        !line.is_empty()
            && line.chars().all(|c| c.is_ascii_digit())
            && !col.is_empty()
            && col.chars().all(|c| c.is_ascii_digit())
    });
    match e {
        UnderlayError::MissingCoordinates { nodes, .. } => {
            !nodes.is_empty() && text.contains("(id ")
        }
        UnderlayError::Disconnected {
            component_sizes, ..
        } => {
            component_sizes.len() > 1
                && text.contains("components of sizes")
                && text.contains("--largest-component")
        }
        UnderlayError::Empty { .. } => text.contains("expected at least one node"),
        UnderlayError::NoCoordinates { .. } => {
            text.contains("has Latitude/Longitude") && text.contains("--default-length-km")
        }
        _ => positioned,
    }
}

/// Loads every file with `opts`; returns (loaded, refusals by reason).
fn run_corpus(files: &[PathBuf], opts: &LoadOptions, label: &str) -> usize {
    let mut loaded = 0;
    let mut refused: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for file in files {
        match Underlay::load(file, opts) {
            Ok(u) => {
                loaded += 1;
                check_invariants(&u, file);
            }
            Err(e) => {
                assert!(is_precise(&e, file), "imprecise error: {e}");
                let stem = file
                    .file_stem()
                    .map_or(String::new(), |s| s.to_string_lossy().into_owned());
                refused.entry(reason(&e)).or_default().push(stem);
            }
        }
    }
    eprintln!("corpus [{label}]: {} files, {loaded} loaded", files.len());
    for (why, names) in &refused {
        eprintln!("  refused ({why}): {} -- {}", names.len(), names.join(", "));
    }
    loaded
}

fn check_invariants(u: &Underlay, file: &Path) {
    let n = u.node_count();
    assert!(n > 0, "{}", file.display());
    for l in &u.links {
        assert!(l.a < l.b && l.b < n, "{}: bad link {l:?}", file.display());
        assert!(l.length_km.is_finite() && l.length_km >= 0.0);
        assert!(l.capacity_bps.is_finite() && l.capacity_bps > 0.0);
    }
    let mut pairs: Vec<(usize, usize)> = u.links.iter().map(|l| (l.a, l.b)).collect();
    pairs.sort_unstable();
    pairs.dedup();
    assert_eq!(pairs.len(), u.link_count(), "{}", file.display());
}

fn lenient() -> LoadOptions {
    LoadOptions {
        missing_coordinates: MissingCoordinates::Drop,
        disconnected: Disconnected::LargestComponent,
        ..LoadOptions::default()
    }
}

#[test]
fn corpus_loads_or_refuses_precisely() {
    let shared = shared_underlays("corpus_loads_or_refuses_precisely (its Zoo part)");
    let files = corpus_files(shared.as_deref());
    assert!(
        files.len() >= 8,
        "expected the 8 paper underlays, found {files:?}"
    );
    run_corpus(&files, &LoadOptions::default(), "default options");
    let loaded = run_corpus(&files, &lenient(), "Drop + LargestComponent");
    assert!(loaded > 0);
}

#[test]
fn every_file_with_a_link_loads_leniently_or_errs_precisely() {
    let shared =
        shared_underlays("every_file_with_a_link_loads_leniently_or_errs_precisely (its Zoo part)");
    for file in corpus_files(shared.as_deref()) {
        match Underlay::load(&file, &lenient()) {
            Ok(u) => check_invariants(&u, &file),
            Err(e) => assert!(is_precise(&e, &file), "{e}"),
        }
    }
}

#[test]
fn gaia_has_11_routers_and_55_links() {
    let u = Underlay::load(
        &paper_underlays_dir().join("gaia.gml"),
        &LoadOptions::default(),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(u.name, "gaia");
    assert_eq!(u.node_count(), 11);
    assert_eq!(u.link_count(), 55);
    assert_eq!(u.report.lengths_from_geodesic, 0);
    assert_eq!(u.find_router("Tokyo"), Some(5));
}

#[test]
fn telstra_is_disconnected_into_3_components() {
    let file = paper_underlays_dir().join("telstra.gml");
    match Underlay::load(&file, &LoadOptions::default()) {
        Err(UnderlayError::Disconnected {
            component_sizes, ..
        }) => assert_eq!(component_sizes.len(), 3, "{component_sizes:?}"),
        other => panic!("expected Disconnected, got {other:?}"),
    }
    let u = Underlay::load(&file, &lenient()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(u.report.dropped_components.len(), 2);
}

/// The Topology Zoo with default options (issue 15): every file loads, or is
/// refused as disconnected or as having no coordinates at all; no router is
/// dropped; every router without coordinates that loads has its estimate
/// reported.
#[test]
fn zoo_loads_by_default_without_losing_nodes() {
    let Some(dir) = shared_underlays("zoo_loads_by_default_without_losing_nodes") else {
        return;
    };
    let zoo = gml_files(&dir.join("topology-zoo"));
    assert!(
        !zoo.is_empty(),
        "no Topology Zoo files under {}",
        dir.display()
    );
    let mut loaded = 0;
    let mut estimated = 0;
    let mut isolated = 0;
    for file in &zoo {
        match Underlay::load(file, &LoadOptions::default()) {
            Ok(u) => {
                loaded += 1;
                check_invariants(&u, file);
                // Only routers without any link are left out, each named.
                assert_eq!(
                    u.report.dropped_nodes.len(),
                    u.report.isolated_routers_dropped,
                    "{}",
                    file.display()
                );
                isolated += u.report.isolated_routers_dropped;
                let unlocated = u.routers.iter().filter(|r| r.lat_lon.is_none()).count();
                // Routers without coordinates whose links all have `distance`
                // need no estimate; the Zoo has (almost) no `distance`.
                assert!(u.report.estimated_positions.len() <= unlocated);
                estimated += u.report.estimated_positions.len();
            }
            Err(e) => assert!(
                matches!(
                    e,
                    UnderlayError::Disconnected { .. } | UnderlayError::NoCoordinates { .. }
                ) && is_precise(&e, file),
                "{e}"
            ),
        }
    }
    eprintln!(
        "zoo, default options: {loaded} of {} loaded, {estimated} positions estimated, \
         {isolated} isolated routers left out (named)",
        zoo.len()
    );
    // 261 files, 249 load. Refused: 4 whose linked routers form several
    // components (DeutscheTelekom, JanetExternal, Nordu2010, Oteglobe) and 8
    // without any coordinates (Ai3, Azrena, Cudi, Harnet, Nsfcnet, Singaren,
    // Twaren, Uninet).
    if zoo.len() == 261 {
        assert!(loaded >= 249, "{loaded} of {}", zoo.len());
    }
    assert!(loaded * 100 >= zoo.len() * 90, "{loaded} of {}", zoo.len());
    // With both ways forward every file loads, and what is dropped is reported.
    let forward = LoadOptions {
        disconnected: Disconnected::LargestComponent,
        default_length_km: Some(100.0),
        ..LoadOptions::default()
    };
    for file in &zoo {
        let u = Underlay::load(file, &forward).unwrap_or_else(|e| panic!("{e}"));
        check_invariants(&u, file);
        let dropped: usize = u.report.dropped_components.iter().sum();
        assert_eq!(
            dropped + u.report.isolated_routers_dropped,
            u.report.dropped_nodes.len(),
            "{}",
            file.display()
        );
    }
}

#[test]
fn garr_estimates_its_13_unlocated_routers() {
    let Some(dir) = shared_underlays("garr_estimates_its_13_unlocated_routers") else {
        return;
    };
    let file = dir.join("topology-zoo/Garr201201.gml");
    assert!(file.is_file(), "{} not found", file.display());
    let u = Underlay::load(&file, &LoadOptions::default()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(u.node_count(), 61);
    assert_eq!(u.report.estimated_positions.len(), 13);
    assert_eq!(u.report.lengths_from_estimates, 13);
    let refuse = LoadOptions {
        missing_coordinates: MissingCoordinates::Refuse,
        ..LoadOptions::default()
    };
    assert!(matches!(
        Underlay::load(&file, &refuse),
        Err(UnderlayError::MissingCoordinates { nodes, .. }) if nodes.len() == 13
    ));
}

/// The copies of the paper's underlays shipped in `underlays/paper/` give
/// exactly the underlays of the originals in `shared/underlays/paper/` (under
/// the default and the lenient policies), when both exist: the copies are
/// what every experiment file and `reproduce matcha-tables` read.
#[test]
fn shipped_paper_underlays_equal_the_shared_originals() {
    let Some(dir) = shared_underlays("shipped_paper_underlays_equal_the_shared_originals") else {
        return;
    };
    let shipped = gml_files(&paper_underlays_dir());
    let names: Vec<String> = shipped
        .iter()
        .filter_map(|f| f.file_stem().map(|s| s.to_string_lossy().into_owned()))
        .collect();
    let mut expected: Vec<String> = crate::reproduce::PAPER_UNDERLAYS
        .iter()
        .map(|s| s.to_string())
        .collect();
    expected.sort();
    assert_eq!(names, expected);
    for copy in &shipped {
        let original = dir.join("paper").join(copy.file_name().unwrap_or_default());
        assert_eq!(
            std::fs::read(copy).unwrap(),
            std::fs::read(&original).unwrap(),
            "{} differs from {}",
            copy.display(),
            original.display()
        );
        for opts in [LoadOptions::default(), lenient()] {
            let a = Underlay::load(copy, &opts).map_err(|e| e.to_string());
            let b = Underlay::load(&original, &opts).map_err(|e| e.to_string());
            match (a, b) {
                (Ok(a), Ok(b)) => assert_eq!(a, b, "{}", copy.display()),
                // Only the file name in the message may differ.
                (Err(a), Err(b)) => assert_eq!(
                    a.replace(&copy.display().to_string(), "F"),
                    b.replace(&original.display().to_string(), "F")
                ),
                (a, b) => panic!("{}: {a:?} vs {b:?}", copy.display()),
            }
        }
    }
}
