//! The names of the topology families: `exp`, `exp-1peer`, `base:k=K`, each
//! with an optional `order=ring-opt|identity` (`exp:order=identity`,
//! `base:k=2,order=identity`).

use std::fmt;
use std::str::FromStr;

use serde::Serialize;
use thiserror::Error;

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
}

impl FamilyOrder {
    /// The name used in `order=NAME`.
    pub fn name(self) -> &'static str {
        match self {
            FamilyOrder::RingOpt => "ring-opt",
            FamilyOrder::Identity => "identity",
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
    "overlay `{spec}`: {reason}; expected exp, exp-1peer or base:k=K (K >= 1), \
     optionally with order=ring-opt|identity (e.g. exp:order=identity, base:k=2,order=identity)"
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
        let head = s.trim().split(':').next().unwrap_or("");
        Self::family_of(&head.trim().to_ascii_lowercase()).is_some()
    }

    fn family_of(head: &str) -> Option<Family> {
        Some(match head {
            "exp" | "exponential" => Family::Exp,
            "exp-1peer" | "exp1peer" | "one-peer-exp" | "1peer-exp" => Family::ExpOnePeer,
            "base" => Family::Base { k: 1 },
            _ => return None,
        })
    }

    /// The short name: `exp`, `exp-1peer` or `base` (`to_string()` gives
    /// the full spec).
    pub fn name(self) -> &'static str {
        match self.family {
            Family::Exp => "exp",
            Family::ExpOnePeer => "exp-1peer",
            Family::Base { .. } => "base",
        }
    }

    /// True for the families that change every round.
    pub fn is_schedule(self) -> bool {
        !matches!(self.family, Family::Exp)
    }
}

impl fmt::Display for FamilySpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())?;
        let mut sep = ':';
        if let Family::Base { k } = self.family {
            write!(f, "{sep}k={k}")?;
            sep = ',';
        }
        if self.order != FamilyOrder::default() {
            write!(f, "{sep}order={}", self.order.name())?;
        }
        Ok(())
    }
}

impl FromStr for FamilySpec {
    type Err = FamilySpecError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let err = |reason: String| FamilySpecError {
            spec: s.to_string(),
            reason,
        };
        let lower = s.trim().to_ascii_lowercase();
        let (head, params) = match lower.split_once(':') {
            Some((h, p)) => (h.trim(), Some(p)),
            None => (lower.as_str(), None),
        };
        let mut family = Self::family_of(head).ok_or_else(|| err("not a family name".into()))?;
        let mut order = FamilyOrder::default();
        let (mut k_seen, mut order_seen) = (false, false);
        for item in params.into_iter().flat_map(|p| p.split(',')) {
            let (key, value) = item
                .split_once('=')
                .ok_or_else(|| err(format!("`{}` is not KEY=VALUE", item.trim())))?;
            let value = value.trim();
            match key.trim() {
                "k" if !k_seen => {
                    k_seen = true;
                    let Family::Base { k } = &mut family else {
                        return Err(err("k= goes with `base` only".into()));
                    };
                    *k = value
                        .parse()
                        .ok()
                        .filter(|&k: &usize| k >= 1)
                        .ok_or_else(|| err(format!("k `{value}` is not a whole number >= 1")))?;
                }
                "order" if !order_seen => {
                    order_seen = true;
                    order = match value {
                        "ring-opt" | "ringopt" | "ring" => FamilyOrder::RingOpt,
                        "identity" | "id" | "index" => FamilyOrder::Identity,
                        other => return Err(err(format!("unknown order `{other}`"))),
                    };
                }
                k @ ("k" | "order") => return Err(err(format!("`{k}` given twice"))),
                k => return Err(err(format!("unknown parameter `{k}`"))),
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
        ] {
            let s: FamilySpec = text.parse().unwrap();
            assert_eq!(s.to_string(), shown);
            assert_eq!(shown.parse::<FamilySpec>().unwrap(), s);
        }
        for (bad, why) in [
            ("base:k=0", "k `0`"),
            ("base:k=x", "k `x`"),
            ("exp:k=2", "k= goes with `base`"),
            ("exp:order=random", "unknown order `random`"),
            ("base:k=1,k=2", "`k` given twice"),
            ("exp:foo=1", "unknown parameter `foo`"),
            ("exp:order", "not KEY=VALUE"),
        ] {
            let e = bad.parse::<FamilySpec>().unwrap_err().to_string();
            assert!(e.contains(why), "{bad}: {e}");
        }
        assert!(FamilySpec::claims("base:k=2") && FamilySpec::claims("exp-1peer"));
        assert!(!FamilySpec::claims("ring") && !FamilySpec::claims("er:p=0.1"));
    }
}
