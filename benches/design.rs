//! Design search speed (fedtopo issue 24, item 7): the SLEM by one dense
//! eigendecomposition against Lanczos, one augmentation (exhaustive scan =
//! the historical greedy, against the certified lazy scan) and `design`'s
//! candidate search, on the built-in aws-north-america (22 silos) and
//! Ebone (87 silos).
//!
//! Reads Ebone from the paper underlays shipped in underlays/paper;
//! skipped when absent. Before/after ratios come from one run: the
//! `exhaustive` and `lazy` rows of `augment`, the `dense` and `lanczos` rows
//! of `slem`, the `with-vectors` and `values-only` rows of `eigen` (the
//! dense symmetric solve every dense SLEM made, and the one it makes now),
//! the `modified` and `classical` rows of `fastest-mixing-mst` (Ebone: the
//! historical Lanczos reorthogonalisation and convergence checks, and the
//! fast ones), the `complex-schur` and `complex-values` rows of `eigen`
//! (nalgebra's Schur decomposition, what the exact score of a directed
//! candidate ran, and the eigenvalues-only QR iteration it runs now).
//! `design-candidates/ebone` is `fedtopo design` on Ebone without
//! training; `augment-ring-opt/estimated` its directed augmentation.
//!
//! `cargo bench --bench design`

use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};

use fedtopo::design::search::{
    design_candidates, DesignOptions, RoundsPredictor, DEFAULT_CANDIDATES,
};
use fedtopo::design::{augment, AugmentOptions};
use fedtopo::graph::Overlay;
use fedtopo::mixing::consensus::local_degree;
use fedtopo::mixing::krylov::{lanczos_slem, Reorthogonalisation, SparseMatrix};
use fedtopo::mixing::spectrum::{
    complex_eigenvalues, qr_iterations, symmetric_eigen, symmetric_eigenvalues,
};
use fedtopo::mixing::{fastest_mixing, slem, undirected_edges, FastestOptions};
use fedtopo::net::delay::DelayModel;
use fedtopo::net::scenario::{load_underlay, NetworkSpec};
use fedtopo::net::underlay::{LoadOptions, Underlay};
use fedtopo::overlay::build::{build_overlay, BuildOptions, OverlayKind};

fn load(name: &str) -> Option<Underlay> {
    if name == "aws-north-america" {
        return load_underlay(Some(name), &LoadOptions::default()).ok();
    }
    let path = fedtopo::net::builtin::paper_underlays_dir().join(format!("{name}.gml"));
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
        // The dense symmetric solve with eigenvectors (what every dense
        // SLEM did) against eigenvalues only (the same values to the bit).
        let centred = {
            let mut m = nalgebra::DMatrix::from_row_slice(n, n, &w);
            m.add_scalar_mut(-1.0 / n as f64);
            m
        };
        g.bench_function(BenchmarkId::new("eigen/with-vectors", name), |b| {
            b.iter(|| symmetric_eigen(centred.clone()).expect("eigen").eigenvalues)
        });
        g.bench_function(BenchmarkId::new("eigen/values-only", name), |b| {
            b.iter(|| symmetric_eigenvalues(&centred).expect("eigen"))
        });
        // Fastest-mixing weights of the MST (200 subgradient iterations;
        // above 64 silos each is a Lanczos solve): the historical
        // reorthogonalisation against the fast one.
        if n > 64 {
            let mst = overlay("mst", &u, &model);
            let edges = undirected_edges(n, mst.arcs()).expect("undirected");
            for (label, reorthogonalisation) in [
                ("modified", Reorthogonalisation::Modified),
                ("classical", Reorthogonalisation::Classical),
            ] {
                let options = FastestOptions {
                    iterations: 200,
                    reorthogonalisation,
                    ..FastestOptions::default()
                };
                g.bench_function(
                    BenchmarkId::new(format!("fastest-mixing-mst/{label}"), name),
                    |b| b.iter(|| fastest_mixing(n, &edges, &options).expect("fastest")),
                );
            }
        }
        // Eigenvalues of a directed overlay's local-degree matrix (an
        // augmented ring-opt, what every exact score of a directed
        // augmentation solves): nalgebra's Schur decomposition (with the
        // Schur vectors, what `complex_eigenvalues` ran before) against the
        // eigenvalues-only QR iteration (the same values to the bit).
        let ring = overlay("ring-opt", &u, &model);
        let ring_aug = augment(&ring, &model, &options).expect("augment").augmented;
        let directed = nalgebra::DMatrix::from_row_slice(n, n, local_degree(&ring_aug).as_slice());
        g.bench_function(BenchmarkId::new("eigen/complex-schur", name), |b| {
            b.iter(|| {
                nalgebra::Schur::try_new(directed.clone(), f64::EPSILON, qr_iterations(n))
                    .expect("schur")
                    .complex_eigenvalues()
            })
        });
        g.bench_function(BenchmarkId::new("eigen/complex-values", name), |b| {
            b.iter(|| complex_eigenvalues(&directed).expect("eigen"))
        });
        if name == "ebone" {
            // The directed augmentation `design` runs (estimated scans).
            g.bench_function(BenchmarkId::new("augment-ring-opt/estimated", name), |b| {
                b.iter(|| augment(&ring, &model, &options).expect("augment"))
            });
        }
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
        // `fedtopo design underlays/paper/ebone.gml` without training:
        // the CLI's default candidates, fastest-mixing weights and the two
        // augmentations (issue 24 item 7: below 5 s of CPU); on
        // aws-north-america the list before Multigraph joined it.
        let kinds = match name {
            "ebone" => Some(DEFAULT_CANDIDATES),
            "aws-north-america" => Some(
                "star,mst,delta-mbst,ring,ring-opt,matcha,matcha+,regular:k=4,dcliques-ring,exp,exp-1peer,base:k=1,base:k=2,base:k=3,d-equistatic,od-equidyn",
            ),
            _ => None,
        };
        if let Some(kinds) = kinds {
            let options = DesignOptions {
                kinds: fedtopo::overlay::build::parse_overlay_list(kinds).expect("kinds"),
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
