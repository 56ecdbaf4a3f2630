//! Workloads: what one silo computes and sends per round.
//!
//! A [`Workload`] is the model size `M` (bit), the time of one local
//! mini-batch step `Tc` (ms) and the number of local steps `s` per round
//! (\[Marfoq20\] eq. 2). Presets are \[Marfoq20\] Table 2 (mini-batch gradient time
//! measured on a P100 GPU), with the exact sizes (bit) of the same models.

use serde::Serialize;

use crate::units::{Bits, Ms};

/// Model size, compute time of one local step, and local steps per round.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Workload {
    /// Human name ("inaturalist", "custom").
    pub name: String,
    /// Model size `M`, bit.
    pub model_bits: Bits,
    /// Time of one local step `Tc`, ms (the same on every silo unless overridden).
    pub compute_ms: Ms,
    /// Local steps per round `s` (>= 1).
    pub local_steps: u32,
}

/// The paper's four workloads (\[Marfoq20\] Table 2): name, model, `M` (bit), `Tc` (ms).
pub const PRESETS: [(&str, &str, Bits, Ms); 4] = [
    ("shakespeare", "stacked GRU", 3_385_747.0, 389.6),
    ("femnist", "2-layer CNN", 4_843_243.0, 4.6),
    ("sent140", "GloVe+LSTM", 19_269_416.0, 9.8),
    ("inaturalist", "ResNet-18", 44_961_717.0, 25.4),
];

impl Workload {
    /// A preset of \[Marfoq20\] Table 2 by name (case-insensitive), with `s` local steps.
    pub fn preset(name: &str, local_steps: u32) -> Option<Workload> {
        PRESETS.iter().find(|p| p.0.eq_ignore_ascii_case(name)).map(
            |&(name, _, model_bits, compute_ms)| Workload {
                name: name.to_string(),
                model_bits,
                compute_ms,
                local_steps,
            },
        )
    }

    /// Time of the `s` local steps of one round, ms (`s * Tc`).
    pub fn round_compute_ms(&self) -> Ms {
        self.local_steps as f64 * self.compute_ms
    }
}

impl Default for Workload {
    /// iNaturalist / ResNet-18 with one local step, the setting of \[Marfoq20\] Table 3.
    fn default() -> Self {
        Workload::preset("inaturalist", 1).expect("preset exists")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presets() {
        let w = Workload::preset("iNaturalist", 5).unwrap();
        assert_eq!(w.model_bits, 44_961_717.0);
        assert!((w.round_compute_ms() - 127.0).abs() < 1e-9);
        assert!(Workload::preset("imagenet", 1).is_none());
        assert_eq!(Workload::default().local_steps, 1);
    }
}
