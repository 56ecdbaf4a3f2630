//! fedtopo as a library: the pipeline underlay -> delay model -> overlay ->
//! cycle time -> event replay (with where the time goes) -> round clock,
//! on the built-in underlay (no files, no downloads).
//!
//! `cargo run --example library`

use fedtopo::prelude::*;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // The underlay and the network on it (100 Mbit/s access links).
    let underlay = load_underlay(None, &LoadOptions::default())?;
    let model = NetworkSpec {
        access_bps: 1e8,
        ..NetworkSpec::default()
    }
    .delay_model(&underlay);
    println!(
        "{}: {} silos, model {} Mbit",
        underlay.name,
        model.silo_count(),
        model.workload.model_bits / 1e6
    );
    for kind in [OverlayKind::Star, OverlayKind::Mst, OverlayKind::RingOpt] {
        // Build, then time exactly (max-plus cycle time, ms per round).
        let overlay = EvaluatedOverlay::build(kind, &underlay, &model, &BuildOptions::default())?;
        let tau = overlay.cycle_time(&model)?.cycle_time_ms;
        // Replay 20 rounds in the event engine, with contention (flow model).
        let options = ReplayOptions {
            rounds: 20,
            breakdown: true,
            ..ReplayOptions::default()
        };
        let mut net = NetworkKind::Flow.build(&model);
        let r = overlay.replay(&model, net.as_mut(), &options, None, &mut |_| {})?;
        let b = r.breakdown.as_ref().ok_or("no breakdown")?;
        let share =
            |f: fn(&SiloRound) -> f64| b.rows.iter().map(f).sum::<f64>() / b.rows.len() as f64;
        println!(
            "{:>9}: cycle time {tau:7.1} ms; flow replay {:7.1} ms per round \
             (per silo: compute {:.1}, transfer {:.1}, wait {:.1} ms)",
            overlay.name(),
            r.mean_round_ms(),
            share(|s| s.compute_ms),
            share(|s| s.transfer_ms),
            share(|s| s.wait_ms),
        );
    }
    // A round clock, as a training loop drives it: one call per round.
    let ring = EvaluatedOverlay::build(
        OverlayKind::Ring,
        &underlay,
        &model,
        &BuildOptions::default(),
    )?;
    let schedule = ring.schedule();
    let mut clock = ring.clock(schedule, &model, NetworkKind::Maxplus)?;
    let mut t = Vec::new();
    for k in 0..100 {
        clock.round_end_times_into(k, &schedule.round(k), &mut t)?;
    }
    let end = t.iter().copied().fold(0.0, f64::max);
    println!("ring: 100 rounds end at {end:.1} ms on the maxplus clock");
    Ok(())
}
