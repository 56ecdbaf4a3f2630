//! Design search speed (fedtopo issue 24, item 7): the SLEM by one dense
//! eigendecomposition against Lanczos, one augmentation (exhaustive scan =
//! the historical greedy, against the certified lazy scan) and `design`'s
//! candidate search, on the built-in aws-north-america (22 silos) and
//! Ebone (87 silos).
//!
//! Reads Ebone from the paper underlays shipped in underlays/paper;
//! skipped when absent. Before/after ratios come from one run: the
//! `exhaustive` and `lazy` rows of `augment`, the `dense` and `lanczos` rows
//! of `slem`.
//!
//! `cargo bench --bench design`

use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};

use fedtopo::delay::DelayModel;
use fedtopo::design::search::{design_candidates, DesignOptions, RoundsPredictor};
use fedtopo::design::{augment, AugmentOptions};
use fedtopo::graph::Overlay;
use fedtopo::mixing::krylov::{lanczos_slem, SparseMatrix};
use fedtopo::mixing::slem;
use fedtopo::overlay::build::{build_overlay, BuildOptions, OverlayKind};
use fedtopo::scenario::{load_underlay, NetworkSpec};
use fedtopo::train::consensus::local_degree;
use fedtopo::underlay::{LoadOptions, Underlay};

fn load(name: &str) -> Option<Underlay> {
    if name == "aws-north-america" {
        return load_underlay(Some(name), &LoadOptions::default()).ok();
    }
    let path = fedtopo::builtin::paper_underlays_dir().join(format!("{name}.gml"));
    load_underlay(Some(path.to_str()?), &LoadOptions::default()).ok()
}

fn overlay(kind: &str, u: &Underlay, model: &DelayModel) -> Overlay {
    let k: OverlayKind = kind.parse().expect("kind");
    build_overlay(k, u, model, &BuildOptions::default()).expect("overlay")
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("design");
    g.sample_size(10).measurement_time(Duration::from_secs(10));
    for name in ["aws-north-america", "ebone"] {
        let Some(u) = load(name) else {
            eprintln!("{name}: not found, skipped");
            continue;
        };
        let model = NetworkSpec::default().build(&u).expect("model");
        let n = model.silo_count();
        // SLEM of an augmented delta-MBST's local-degree matrix.
        let base = overlay("delta-mbst", &u, &model);
        let options = AugmentOptions {
            front_steps: 0,
            ..AugmentOptions::default()
        };
        let aug = augment(&base, &model, &options).expect("augment").augmented;
        let w = local_degree(&aug).as_slice().to_vec();
        let sparse = SparseMatrix::from_dense(n, &w);
        g.bench_function(BenchmarkId::new("slem/dense", name), |b| {
            b.iter(|| slem(n, &w))
        });
        g.bench_function(BenchmarkId::new("slem/lanczos", name), |b| {
            b.iter(|| {
                lanczos_slem(&sparse, &[], 1e-12, n)
                    .expect("lanczos")
                    .slem()
            })
        });
        // One augmentation (phase 1 only) of delta-MBST: the exhaustive
        // scan (every candidate timed and scored exactly, as before) and
        // the lazy scan (the same choices).
        if name == "aws-north-america" {
            let exhaustive = AugmentOptions {
                exhaustive: true,
                ..options
            };
            g.bench_function(
                BenchmarkId::new("augment-delta-mbst/exhaustive", name),
                |b| b.iter(|| augment(&base, &model, &exhaustive).expect("augment")),
            );
        }
        g.bench_function(BenchmarkId::new("augment-delta-mbst/lazy", name), |b| {
            b.iter(|| augment(&base, &model, &options).expect("augment"))
        });
        if name == "aws-north-america" {
            let kinds = fedtopo::overlay::build::parse_overlay_list(
                "star,mst,delta-mbst,ring,ring-opt,matcha,matcha+,regular:k=4,dcliques-ring,exp,exp-1peer,base:k=1,base:k=2,base:k=3,d-equistatic,od-equidyn",
            )
            .expect("kinds");
            let options = DesignOptions {
                kinds,
                ..DesignOptions::default()
            };
            g.bench_function(BenchmarkId::new("design-candidates", name), |b| {
                b.iter(|| {
                    design_candidates(
                        &u,
                        &model,
                        &BuildOptions::default(),
                        &options,
                        &RoundsPredictor::proxy(15.0),
                    )
                    .expect("design")
                })
            });
        }
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
