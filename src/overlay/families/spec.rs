//! The names of the topology families: `exp`, `exp-1peer`, `base:k=K`,
//! `d-equistatic[:m=M,seed=S]`, `od-equidyn[:eta=E,seed=S,rounds=R]`, each
//! with an optional `order=ring-opt|identity|search` (`exp:order=identity`,
//! `base:k=2,order=identity`), and
//! `multigraph[:base=ring|ring-opt|mst|delta-mbst|star,t_max=T,weak=idle|background]`
//! (built on its base overlay, no order).

use std::fmt;
use std::str::FromStr;

use serde::Serialize;
use thiserror::Error;

use super::multigraph::{MultigraphBase, WeakEdges, MAX_T_MAX, T_MAX};
use crate::overlay::random::Param;
use crate::overlay::spec::{kind_of_name, NameKind, OverlaySpec};

/// OD-EquiDyn's default weight on the basis matrix (the value of
/// \[Song22\]'s public experiments).
pub const EQUIDYN_ETA: f64 = 0.53;
/// OD-EquiDyn's default number of sampled rounds replayed periodically.
pub const EQUIDYN_ROUNDS: usize = 100;

/// Which family.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Family {
    /// The static exponential graph (\[Ying21\]).
    Exp,
    /// The one-peer exponential graph (\[Ying21\]), time-varying.
    ExpOnePeer,
    /// The Base-(k+1) graph (\[Takezawa23\]), time-varying, maximum degree `k`.
    Base {
        /// Maximum degree per round, `k >= 1`.
        k: usize,
    },
    /// D-EquiStatic (\[Song22\]): static, `m` random circulant shifts.
    EquiStatic {
        /// Number of shifts (default `ceil(log2 n)`).
        m: Option<usize>,
        /// Seed of the shifts (default: the command's `--seed`).
        seed: Option<u64>,
    },
    /// OD-EquiDyn (\[Song22\]): one random shift per round, time-varying.
    EquiDyn {
        /// Weight on the basis matrix, in `(0, 1]`.
        eta: Param,
        /// Seed of the shifts (default: the command's `--seed`).
        seed: Option<u64>,
        /// Rounds drawn, then replayed periodically.
        rounds: usize,
    },
    /// Multigraph (\[Do23\]): a base overlay's arcs strong once every `m_e`
    /// rounds, slow arcs less often; isolated silos skip the exchange.
    Multigraph {
        /// The overlay it is built on (default RING, as \[Do23\]'s Table 3).
        base: MultigraphBase,
        /// Most parallel edges of one arc, `1..=10` (default 5).
        t_max: u32,
        /// What weak edges do (default: nothing).
        weak: WeakEdges,
    },
}

/// How the family's abstract nodes `0..n` are placed on the silos.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum FamilyOrder {
    /// Node `p` is the `p`-th silo of the `ring-opt` tour (the directed ring
    /// with the least cycle time found): consecutive nodes, the ones the
    /// families connect most, are close on the network.
    #[default]
    RingOpt,
    /// Node `p` is silo `p` (the underlay's order).
    Identity,
    /// The order found by a local search from the `ring-opt` tour for the
    /// family's exact cycle time on the network
    /// ([`super::placement::search_order`]): never slower than `ring-opt`.
    Search,
}

impl FamilyOrder {
    /// The name used in `order=NAME`.
    pub fn name(self) -> &'static str {
        match self {
            FamilyOrder::RingOpt => "ring-opt",
            FamilyOrder::Identity => "identity",
            FamilyOrder::Search => "search",
        }
    }
}

/// A family with its node order: an overlay name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct FamilySpec {
    /// The family.
    pub family: Family,
    /// Node order on the silos.
    pub order: FamilyOrder,
}

/// A family name that does not parse.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error(
    "overlay `{spec}`: {reason}; expected exp, exp-1peer, base:k=K (K >= 1), \
     d-equistatic[:m=M,seed=S] or od-equidyn[:eta=E,seed=S,rounds=R], optionally with \
     order=ring-opt|identity|search (e.g. exp:order=identity, base:k=2,order=identity), or \
     multigraph[:base=ring|ring-opt|mst|delta-mbst|star,t_max=T (1..=10),weak=idle|background]"
)]
pub struct FamilySpecError {
    /// The text.
    pub spec: String,
    /// What is wrong.
    pub reason: String,
}

impl FamilySpec {
    /// True when `s` names a family (so its parse errors are the family's,
    /// not "unknown overlay").
    pub fn claims(s: &str) -> bool {
        kind_of_name(s) == Some(NameKind::Family)
    }

    fn family_of(head: &str) -> Option<Family> {
        Some(match head {
            "exp" => Family::Exp,
            "exp-1peer" => Family::ExpOnePeer,
            "base" => Family::Base { k: 1 },
            "d-equistatic" => Family::EquiStatic {
                m: None,
                seed: None,
            },
            "od-equidyn" => Family::EquiDyn {
                eta: Param(EQUIDYN_ETA),
                seed: None,
                rounds: EQUIDYN_ROUNDS,
            },
            "multigraph" => Family::Multigraph {
                base: MultigraphBase::default(),
                t_max: T_MAX,
                weak: WeakEdges::default(),
            },
            _ => return None,
        })
    }

    /// The short name: `exp`, `exp-1peer`, `base`, `d-equistatic`,
    /// `od-equidyn` or `multigraph` (`to_string()` gives the full spec).
    pub fn name(self) -> &'static str {
        match self.family {
            Family::Exp => "exp",
            Family::ExpOnePeer => "exp-1peer",
            Family::Base { .. } => "base",
            Family::EquiStatic { .. } => "d-equistatic",
            Family::EquiDyn { .. } => "od-equidyn",
            Family::Multigraph { .. } => "multigraph",
        }
    }

    /// True for the families that change every round.
    pub fn is_schedule(self) -> bool {
        !matches!(self.family, Family::Exp | Family::EquiStatic { .. })
    }
}

impl fmt::Display for FamilySpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())?;
        let mut sep = ':';
        let mut param = |f: &mut fmt::Formatter<'_>, text: String| {
            let r = write!(f, "{sep}{text}");
            sep = ',';
            r
        };
        match self.family {
            Family::Base { k } => param(f, format!("k={k}"))?,
            Family::EquiStatic { m, seed } => {
                if let Some(m) = m {
                    param(f, format!("m={m}"))?;
                }
                if let Some(s) = seed {
                    param(f, format!("seed={s}"))?;
                }
            }
            Family::EquiDyn { eta, seed, rounds } => {
                if eta != Param(EQUIDYN_ETA) {
                    param(f, format!("eta={eta}"))?;
                }
                if let Some(s) = seed {
                    param(f, format!("seed={s}"))?;
                }
                if rounds != EQUIDYN_ROUNDS {
                    param(f, format!("rounds={rounds}"))?;
                }
            }
            Family::Multigraph { base, t_max, weak } => {
                if base != MultigraphBase::default() {
                    param(f, format!("base={}", base.name()))?;
                }
                if t_max != T_MAX {
                    param(f, format!("t_max={t_max}"))?;
                }
                if weak != WeakEdges::default() {
                    param(f, format!("weak={}", weak.name()))?;
                }
            }
            Family::Exp | Family::ExpOnePeer => {}
        }
        if self.order != FamilyOrder::default() {
            param(f, format!("order={}", self.order.name()))?;
        }
        Ok(())
    }
}

impl FromStr for FamilySpec {
    type Err = FamilySpecError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let spec = OverlaySpec::parse(s).map_err(|e| FamilySpecError {
            spec: e.text,
            reason: e.reason,
        })?;
        Self::from_spec(&spec)
    }
}

impl FamilySpec {
    /// The family of an overlay spec ([`OverlaySpec`], the one overlay
    /// grammar) with its parameters and node order.
    ///
    /// # Errors
    /// Not a family name, a parameter the family does not take, a value out
    /// of range.
    pub fn from_spec(spec: &OverlaySpec) -> Result<Self, FamilySpecError> {
        let err = |reason: String| FamilySpecError {
            spec: spec.text.clone(),
            reason,
        };
        let head = spec.name.as_str();
        let mut family = Self::family_of(head).ok_or_else(|| err("not a family name".into()))?;
        let mut order = FamilyOrder::default();
        let whole = |value: &str, key: &str, min: u64| {
            value
                .parse::<u64>()
                .ok()
                .filter(|&v| v >= min)
                .ok_or_else(|| err(format!("{key} `{value}` is not a whole number >= {min}")))
        };
        for (key, value) in &spec.params {
            let (key, value) = (key.as_str(), value.as_str());
            match (key, &mut family) {
                ("order", Family::Multigraph { .. }) => {
                    return Err(err(
                        "`order=` does not go with `multigraph`: it keeps its base overlay's silos"
                            .into(),
                    ))
                }
                ("order", _) => {
                    order = match value {
                        "ring-opt" | "ringopt" | "ring" => FamilyOrder::RingOpt,
                        "identity" | "id" | "index" => FamilyOrder::Identity,
                        "search" => FamilyOrder::Search,
                        other => return Err(err(format!("unknown order `{other}`"))),
                    };
                }
                ("k", Family::Base { k }) => *k = whole(value, "k", 1)? as usize,
                ("m", Family::EquiStatic { m, .. }) => *m = Some(whole(value, "m", 1)? as usize),
                ("seed", Family::EquiStatic { seed, .. } | Family::EquiDyn { seed, .. }) => {
                    *seed = Some(whole(value, "seed", 0)?)
                }
                ("rounds", Family::EquiDyn { rounds, .. }) => {
                    *rounds = whole(value, "rounds", 1)?.min(1_000_000) as usize
                }
                ("eta", Family::EquiDyn { eta, .. }) => {
                    let e: f64 = value
                        .parse()
                        .ok()
                        .filter(|e: &f64| *e > 0.0 && *e <= 1.0)
                        .ok_or_else(|| err(format!("eta `{value}` is not a number in (0, 1]")))?;
                    *eta = Param(e);
                }
                ("base", Family::Multigraph { base, .. }) => {
                    *base = MultigraphBase::parse(value).ok_or_else(|| {
                        err(format!(
                            "base `{value}` is not ring, ring-opt, mst, delta-mbst or star"
                        ))
                    })?
                }
                ("t_max" | "tmax", Family::Multigraph { t_max, .. }) => {
                    *t_max = whole(value, "t_max", 1)
                        .ok()
                        .filter(|&t| t <= MAX_T_MAX as u64)
                        .ok_or_else(|| {
                            err(format!(
                                "t_max `{value}` is not a whole number in 1..={MAX_T_MAX}"
                            ))
                        })? as u32
                }
                ("weak", Family::Multigraph { weak, .. }) => {
                    *weak = match value {
                        "idle" => WeakEdges::Idle,
                        "background" => WeakEdges::Background,
                        other => {
                            return Err(err(format!("weak `{other}` is not idle or background")))
                        }
                    }
                }
                ("k" | "m" | "seed" | "rounds" | "eta" | "base" | "t_max" | "tmax" | "weak", _) => {
                    return Err(err(format!("`{key}=` does not go with `{head}`")))
                }
                (k, _) => return Err(err(format!("unknown parameter `{k}`"))),
            }
        }
        Ok(FamilySpec { family, order })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_bad_ones_say_why() {
        for (text, shown) in [
            ("exp", "exp"),
            ("EXP:order=identity", "exp:order=identity"),
            ("exp-1peer", "exp-1peer"),
            ("exp-1peer:order=ring-opt", "exp-1peer"),
            ("base", "base:k=1"),
            ("base:k=3", "base:k=3"),
            ("base:k=2, order=identity", "base:k=2,order=identity"),
            ("d-equistatic", "d-equistatic"),
            ("equistatic:seed=3,m=4", "d-equistatic:m=4,seed=3"),
            ("od-equidyn:eta=0.53", "od-equidyn"),
            (
                "od-equidyn:eta=1,rounds=20,order=identity",
                "od-equidyn:eta=1,rounds=20,order=identity",
            ),
            ("multigraph", "multigraph"),
            ("multigraph:base=ring,t_max=5,weak=idle", "multigraph"),
            (
                "Multigraph:weak=background,tmax=3,base=ring-opt",
                "multigraph:base=ring-opt,t_max=3,weak=background",
            ),
            ("multigraph:base=mbst", "multigraph:base=delta-mbst"),
        ] {
            let s: FamilySpec = text.parse().unwrap();
            assert_eq!(s.to_string(), shown);
            assert_eq!(shown.parse::<FamilySpec>().unwrap(), s);
        }
        for (bad, why) in [
            ("base:k=0", "k `0`"),
            ("base:k=x", "k `x`"),
            ("exp:k=2", "`k=` does not go with `exp`"),
            ("od-equidyn:m=2", "`m=` does not go with `od-equidyn`"),
            ("od-equidyn:eta=1.5", "eta `1.5`"),
            ("d-equistatic:m=0", "m `0`"),
            ("exp:order=random", "unknown order `random`"),
            ("base:k=1,k=2", "`k` given twice"),
            ("exp:foo=1", "unknown parameter `foo`"),
            ("exp:order", "not KEY=VALUE"),
            ("multigraph:t_max=0", "t_max `0`"),
            ("multigraph:t_max=11", "t_max `11`"),
            ("multigraph:base=complete", "base `complete`"),
            ("multigraph:weak=sometimes", "weak `sometimes`"),
            (
                "multigraph:order=identity",
                "`order=` does not go with `multigraph`",
            ),
            ("exp:t_max=3", "`t_max=` does not go with `exp`"),
        ] {
            let e = bad.parse::<FamilySpec>().unwrap_err().to_string();
            assert!(e.contains(why), "{bad}: {e}");
        }
        assert!(FamilySpec::claims("base:k=2") && FamilySpec::claims("exp-1peer"));
        assert!(FamilySpec::claims("multigraph:base=mst"));
        assert!(!FamilySpec::claims("ring") && !FamilySpec::claims("er:p=0.1"));
    }
}
