//! Design candidates written by `fedtopo::design::export` read back as the
//! candidate: the same cycle time and the same consensus matrices of every
//! round (weights included: MATCHA's `I - alpha L(k)`, a family's
//! per-round matrices, a file's fastest-mixing weights), so that training
//! the exported file trains what was designed.

use fedtopo::design::calibrate::{candidate_stem, matches};
use fedtopo::design::export::export_all;
use fedtopo::design::figures::mixing_figures;
use fedtopo::design::search::{design_candidates, DesignOptions, RoundsPredictor};
use fedtopo::evaluate::EvaluatedOverlay;
use fedtopo::net::scenario::{load_underlay, NetworkSpec};
use fedtopo::net::underlay::LoadOptions;
use fedtopo::overlay::build::{BuildOptions, OverlayKind};
use fedtopo::overlay::file::OverlayPath;

#[test]
fn exported_candidates_mix_and_time_as_designed() {
    let dir = std::env::temp_dir().join(format!("fedtopo-design-export-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let u = load_underlay(Some("aws-gaia"), &LoadOptions::default()).unwrap();
    let model = NetworkSpec::default().build(&u).unwrap();
    let build = BuildOptions::default();
    let kinds: Vec<OverlayKind> = [
        "star",
        "ring-opt",
        "mst",
        "matcha",
        "exp-1peer",
        "base:k=2",
        "d-equistatic",
    ]
    .iter()
    .map(|k| k.parse().unwrap())
    .collect();
    let options = DesignOptions {
        kinds,
        ..DesignOptions::default()
    };
    let mut c =
        design_candidates(&u, &model, &build, &options, &RoundsPredictor::proxy(15.0)).unwrap();
    let skipped = export_all(&dir, &mut c, &u, &model, &build).unwrap();
    assert!(skipped.is_empty());
    for x in &c {
        let file = x
            .file
            .clone()
            .unwrap_or_else(|| panic!("{} not exported", x.name));
        assert!(file.contains(&candidate_stem(&x.name)), "{file}");
        assert!(matches(x, &format!("file:{file}")), "{file}");
        let kind = OverlayKind::File(OverlayPath::new(&file));
        let back = EvaluatedOverlay::build(kind, &u, &model, &build).unwrap();
        assert_eq!(back.is_schedule(), x.time_varying, "{}", x.name);
        let t = back.cycle_time(&model).unwrap();
        let t = t
            .schedule
            .as_ref()
            .map_or(t.cycle_time_ms, |s| s.maxplus_ms);
        // MATCHA's cycle time is over its sampled rounds; the file replays
        // those rounds periodically (the exact rate of that period).
        let tol = if x.weights.starts_with("matcha") {
            0.02
        } else {
            1e-9
        };
        assert!(
            (t - x.cycle_time_ms).abs() <= tol * x.cycle_time_ms,
            "{}: {t} vs {}",
            x.name,
            x.cycle_time_ms
        );
        let f = mixing_figures(&back, options.schedule_rounds, options.gamma).unwrap();
        assert!(
            (1.0 - f.slem - x.spectral_gap).abs() < 1e-9,
            "{}: spectral gap {} vs {}",
            x.name,
            1.0 - f.slem,
            x.spectral_gap
        );
        assert_eq!(f.exact_round, x.exact_rounds, "{}", x.name);
    }
    // MATCHA's file carries MATCHA's own matrices, round by round.
    let m = c.iter().find(|x| x.name == "matcha").unwrap();
    let kind: OverlayKind = "matcha".parse().unwrap();
    let orig = mixing_figures(
        &EvaluatedOverlay::build(kind, &u, &model, &build).unwrap(),
        20,
        0.95,
    )
    .unwrap();
    let file = OverlayKind::File(OverlayPath::new(m.file.as_deref().unwrap()));
    let back = mixing_figures(
        &EvaluatedOverlay::build(file, &u, &model, &build).unwrap(),
        20,
        0.95,
    )
    .unwrap();
    assert!(orig.rule.starts_with("matcha") && back.rule == "per-round weights");
    for (a, b) in orig.matrices.iter().zip(&back.matrices) {
        assert!(a
            .as_slice()
            .iter()
            .zip(b.as_slice())
            .all(|(x, y)| (x - y).abs() < 1e-12));
    }
    std::fs::remove_dir_all(&dir).ok();
}
