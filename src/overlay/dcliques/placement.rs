//! D-Cliques as an overlay family over the silos of an underlay: labels
//! from a seeded label-skewed partition (one node per silo) and the
//! topology, with or without Clique Averaging (timed by
//! [`crate::timing::two_phase`] and [`crate::evaluate`]).

use std::collections::BTreeSet;
use std::fmt;
use std::str::FromStr;
use std::sync::Mutex;

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::Serialize;

use super::labels::{LabelDistributions, MNIST_TRAIN_COUNTS};
use super::{build_topology, CliqueTopology, DCliquesError, DCliquesOptions, TopologyKind};
use crate::graph::Overlay;

/// A D-Cliques overlay kind: a topology of the D-Cliques evaluation and
/// whether rounds use Clique Averaging (gradient phase + model phase).
///
/// Names: the [`TopologyKind`] name (`dcliques-full`, `dcliques-smallworld`,
/// `dcliques-random-ring`, ...; baselines get a `dc-` prefix:
/// `dc-random-regular10`, `dc-diverse-random10`, `dc-node-ring`, `dc-grid`,
/// `dc-fully-connected`), with `+ca` appended for Clique Averaging.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct DCliquesOverlay {
    /// The topology.
    pub topology: TopologyKind,
    /// Rounds run Clique Averaging (two phases); otherwise plain D-SGD.
    pub clique_averaging: bool,
}

impl DCliquesOverlay {
    /// The name, interned (a few bytes per distinct kind, for `&'static str`
    /// APIs such as [`crate::overlay::build::OverlayKind::name`]).
    pub fn name(self) -> &'static str {
        static NAMES: Mutex<BTreeSet<&'static str>> = Mutex::new(BTreeSet::new());
        let s = self.to_string();
        let mut set = NAMES.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(&n) = set.get(s.as_str()) {
            return n;
        }
        let leaked: &'static str = Box::leak(s.into_boxed_str());
        set.insert(leaked);
        leaked
    }

    /// True when `s` looks like a D-Cliques overlay name (`dcliques...` or `dc-...`).
    pub fn claims(s: &str) -> bool {
        crate::overlay::spec::kind_of_name(s) == Some(crate::overlay::spec::NameKind::DCliques)
    }
}

impl fmt::Display for DCliquesOverlay {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let base = self.topology.to_string();
        let prefix = if base.starts_with("dcliques") {
            ""
        } else {
            "dc-"
        };
        let ca = if self.clique_averaging { "+ca" } else { "" };
        write!(f, "{prefix}{base}{ca}")
    }
}

impl FromStr for DCliquesOverlay {
    type Err = DCliquesError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let t = s.trim().to_ascii_lowercase();
        let (t, ca) = match t.strip_suffix("+ca") {
            Some(rest) => (rest.to_string(), true),
            None => (t, false),
        };
        let t = t.strip_prefix("dc-").unwrap_or(&t);
        let topology: TopologyKind = t
            .parse()
            .map_err(|_| DCliquesError::UnknownTopology(s.to_string()))?;
        Ok(DCliquesOverlay {
            topology,
            clique_averaging: ca,
        })
    }
}

/// Where the per-node label distributions come from.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub enum LabelSource {
    /// The paper's shards partition of a dataset with these label counts.
    Shards {
        /// Examples per label.
        class_counts: Vec<usize>,
        /// Shards per node.
        shards_per_node: usize,
    },
    /// Node `i` holds only label `i mod classes`.
    OneClass {
        /// Number of labels.
        classes: usize,
    },
    /// Given label counts per node (`counts[i][y]`), e.g. of a real data
    /// partition; the number of nodes must match.
    Counts(Vec<Vec<usize>>),
}

impl Default for LabelSource {
    /// MNIST training-set label counts, 2 shards per node (\[Bellet21\] Sec. 4.1).
    fn default() -> Self {
        LabelSource::Shards {
            class_counts: MNIST_TRAIN_COUNTS.to_vec(),
            shards_per_node: 2,
        }
    }
}

impl LabelSource {
    /// Label distributions of `n` nodes, seeded.
    pub fn distributions(&self, n: usize, seed: u64) -> Result<LabelDistributions, DCliquesError> {
        match self {
            LabelSource::Shards {
                class_counts,
                shards_per_node,
            } => {
                let mut rng = ChaCha8Rng::seed_from_u64(seed);
                LabelDistributions::shards_with_counts(n, class_counts, *shards_per_node, &mut rng)
            }
            LabelSource::OneClass { classes } => {
                LabelDistributions::one_class_per_node(n, *classes)
            }
            LabelSource::Counts(counts) => {
                if counts.len() != n {
                    return Err(DCliquesError::Invalid(format!(
                        "label counts for {} nodes, the network has {n} silos",
                        counts.len()
                    )));
                }
                LabelDistributions::from_counts(counts)
            }
        }
    }
}

/// D-Cliques build options for overlays on an underlay.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct DCliquesBuild {
    /// Construction parameters (`M`, `K`, removed intra edges, seed).
    pub options: DCliquesOptions,
    /// Label distributions of the silos (seeded by `options.seed`).
    pub labels: LabelSource,
}

impl DCliquesBuild {
    /// The topology of `kind` over `n` silos.
    pub fn topology(
        &self,
        kind: DCliquesOverlay,
        n: usize,
    ) -> Result<CliqueTopology, DCliquesError> {
        let labels = self.labels.distributions(n, self.options.seed)?;
        let mut t = build_topology(kind.topology, &labels, &self.options)?;
        if !t.is_connected() {
            return Err(DCliquesError::Invalid(format!(
                "{kind} on {n} silos is not connected"
            )));
        }
        t.name = kind.name().to_string();
        Ok(t)
    }

    /// The overlay of `kind` over `n` silos (both arcs of every edge).
    pub fn overlay(&self, kind: DCliquesOverlay, n: usize) -> Result<Overlay, DCliquesError> {
        Ok(self.topology(kind, n)?.overlay())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlay_names() {
        for s in [
            "dcliques-full",
            "dcliques-smallworld+ca",
            "dc-random-regular10",
            "dc-grid+ca",
        ] {
            let k: DCliquesOverlay = s.parse().unwrap();
            assert_eq!(k.name(), s);
            assert!(DCliquesOverlay::claims(s));
        }
        let k: DCliquesOverlay = "dcliques+ca".parse().unwrap();
        assert_eq!(k.name(), "dcliques-full+ca");
        assert!(std::ptr::eq(k.name(), k.name()));
        assert!("dc-foo".parse::<DCliquesOverlay>().is_err());
        assert!(!DCliquesOverlay::claims("ring"));
    }
}
