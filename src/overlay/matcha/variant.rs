//! Which MATCHA: the base graph it decomposes into matchings and, optionally,
//! a communication budget of its own — the overlay names `matcha`,
//! `matcha+` and `matcha:base=B,budget=CB`.
//!
//! \[Marfoq20\] run MATCHA over the connectivity graph `Gc` (every pair
//! of silos, "MATCHA") and over the underlay `Gu` ("MATCHA+", \[Marfoq20\] Tables 3, 6,
//! 7), and in Table 10 over the underlay, a delta-MBST and a RING for a sweep
//! of budgets `Cb`. A variant names one such configuration, so that a sweep
//! is a list of overlay names (`--overlays` or an experiment file's
//! `overlay` axis).

use std::fmt;
use std::str::FromStr;

use serde::Serialize;
use thiserror::Error;

use crate::overlay::random::Param;
use crate::overlay::spec::{kind_of_name, NameKind, OverlaySpec};

/// The graph MATCHA decomposes into matchings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum MatchaOn {
    /// The connectivity graph `Gc`: every pair of silos (the paper's MATCHA).
    #[default]
    Connectivity,
    /// The underlay `Gu`: the physical links between silos (MATCHA+).
    Underlay,
    /// The minimum spanning tree (\[Marfoq20\] Prop. 3.1), undirected.
    Mst,
    /// The delta-MBST (\[Marfoq20\] Algorithm 1), undirected (Table 10).
    DeltaMbst,
    /// The Christofides ring (\[Marfoq20\] Prop. 3.3), undirected: each silo talks to
    /// both ring neighbours (\[Marfoq20\] Table 10).
    Ring,
}

impl MatchaOn {
    /// Every base, in report order.
    pub const ALL: [MatchaOn; 5] = [
        MatchaOn::Connectivity,
        MatchaOn::Underlay,
        MatchaOn::Mst,
        MatchaOn::DeltaMbst,
        MatchaOn::Ring,
    ];

    /// The name used in `base=NAME`.
    pub fn name(self) -> &'static str {
        match self {
            MatchaOn::Connectivity => "connectivity",
            MatchaOn::Underlay => "underlay",
            MatchaOn::Mst => "mst",
            MatchaOn::DeltaMbst => "delta-mbst",
            MatchaOn::Ring => "ring",
        }
    }

    fn parse(s: &str) -> Option<MatchaOn> {
        Some(match s {
            "connectivity" | "gc" | "complete" => MatchaOn::Connectivity,
            "underlay" | "gu" => MatchaOn::Underlay,
            "mst" => MatchaOn::Mst,
            "delta-mbst" | "mbst" => MatchaOn::DeltaMbst,
            "ring" => MatchaOn::Ring,
            _ => return None,
        })
    }
}

/// One MATCHA configuration: base graph and, when given, its own budget
/// `Cb` in `(0, 1]` (otherwise the command's `--budget`, default 0.5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Default)]
pub struct MatchaVariant {
    /// Base graph.
    pub base: MatchaOn,
    /// Communication budget `Cb` overriding the command's.
    pub budget: Option<Param>,
}

/// A MATCHA overlay name that does not parse.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("MATCHA overlay `{spec}`: {reason}; expected matcha, matcha+ or matcha:base=connectivity|underlay|mst|delta-mbst|ring,budget=CB with CB in [0.001, 1]")]
pub struct MatchaVariantError {
    /// The text.
    pub spec: String,
    /// What is wrong.
    pub reason: String,
}

impl MatchaVariant {
    /// The paper's MATCHA (on `Gc`).
    pub const MATCHA: MatchaVariant = MatchaVariant {
        base: MatchaOn::Connectivity,
        budget: None,
    };
    /// The paper's MATCHA+ (on `Gu`).
    pub const MATCHA_PLUS: MatchaVariant = MatchaVariant {
        base: MatchaOn::Underlay,
        budget: None,
    };

    /// True when `s` names a MATCHA variant (so its parse errors are
    /// MATCHA's, not "unknown overlay").
    pub fn claims(s: &str) -> bool {
        kind_of_name(s) == Some(NameKind::Matcha)
    }

    /// Short name: `matcha` on `Gc`, `matcha+` on `Gu`, `matcha` otherwise
    /// (`to_string()` gives the full spec).
    pub fn family(self) -> &'static str {
        match self.base {
            MatchaOn::Underlay => "matcha+",
            _ => "matcha",
        }
    }

    /// The budget to use: this variant's, else `default`.
    pub fn budget_or(self, default: f64) -> f64 {
        self.budget.map_or(default, |b| b.0)
    }
}

impl fmt::Display for MatchaVariant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.family())?;
        let mut sep = ':';
        if !matches!(self.base, MatchaOn::Connectivity | MatchaOn::Underlay) {
            write!(f, "{sep}base={}", self.base.name())?;
            sep = ',';
        }
        if let Some(b) = self.budget {
            write!(f, "{sep}budget={b}")?;
        }
        Ok(())
    }
}

impl FromStr for MatchaVariant {
    type Err = MatchaVariantError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let spec = OverlaySpec::parse(s).map_err(|e| MatchaVariantError {
            spec: e.text,
            reason: e.reason,
        })?;
        Self::from_spec(&spec)
    }
}

impl MatchaVariant {
    /// The MATCHA variant of an overlay spec ([`OverlaySpec`], the one
    /// overlay grammar): `matcha` or `matcha+` with `base=` and `budget=`
    /// (or `cb=`).
    ///
    /// # Errors
    /// Not a MATCHA name, an unknown parameter or base, a budget outside
    /// `[0.001, 1]`.
    pub fn from_spec(spec: &OverlaySpec) -> Result<Self, MatchaVariantError> {
        let err = |reason: String| MatchaVariantError {
            spec: spec.text.clone(),
            reason,
        };
        let head = spec.name.as_str();
        let mut v = match head {
            "matcha" => MatchaVariant::MATCHA,
            "matcha+" => MatchaVariant::MATCHA_PLUS,
            _ => return Err(err("not a MATCHA name".into())),
        };
        let (mut base_seen, mut budget_seen) = (false, false);
        for (key, value) in &spec.params {
            match key.as_str() {
                "base" if !base_seen => {
                    base_seen = true;
                    if head != "matcha" {
                        return Err(err("base= goes with `matcha`, not `matcha+`".into()));
                    }
                    v.base = MatchaOn::parse(value.trim())
                        .ok_or_else(|| err(format!("unknown base `{}`", value.trim())))?;
                }
                "budget" | "cb" if !budget_seen => {
                    budget_seen = true;
                    let b: f64 = value
                        .trim()
                        .parse()
                        .map_err(|_| err(format!("budget `{}` is not a number", value.trim())))?;
                    if !super::budget_ok(b) {
                        return Err(err(format!("budget {b} is outside [0.001, 1]")));
                    }
                    v.budget = Some(Param(b));
                }
                k @ ("base" | "budget" | "cb") => {
                    return Err(err(format!("`{k}` given twice")));
                }
                k => return Err(err(format!("unknown parameter `{k}`"))),
            }
        }
        Ok(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for s in [
            "matcha",
            "matcha+",
            "matcha:budget=0.1",
            "matcha+:budget=0.8",
            "matcha:base=delta-mbst",
            "matcha:base=ring,budget=0.2",
            "matcha:base=mst,budget=1",
        ] {
            let v: MatchaVariant = s.parse().unwrap();
            assert_eq!(v.to_string(), s, "{s}");
        }
        let v: MatchaVariant = "matcha:base=underlay".parse().unwrap();
        assert_eq!(v, MatchaVariant::MATCHA_PLUS);
        assert_eq!(v.to_string(), "matcha+");
        let v: MatchaVariant = "MATCHA-plus".parse().unwrap();
        assert_eq!(v, MatchaVariant::MATCHA_PLUS);
        assert_eq!(
            "matcha:base=mbst,cb=0.5".parse::<MatchaVariant>().unwrap(),
            MatchaVariant {
                base: MatchaOn::DeltaMbst,
                budget: Some(Param(0.5))
            }
        );
    }

    #[test]
    fn bad_names_say_why() {
        for (s, why) in [
            ("matcha:budget=0", "outside [0.001, 1]"),
            ("matcha:budget=1e-4", "outside [0.001, 1]"),
            ("matcha:budget=1.5", "outside [0.001, 1]"),
            ("matcha:budget=x", "not a number"),
            ("matcha:base=tree", "unknown base `tree`"),
            ("matcha:speed=3", "unknown parameter `speed`"),
            ("matcha:budget", "not KEY=VALUE"),
            ("matcha+:base=ring", "goes with `matcha`"),
            ("matcha:budget=0.1,budget=0.2", "given twice"),
        ] {
            let e = s.parse::<MatchaVariant>().unwrap_err().to_string();
            assert!(e.contains(why), "{s}: {e}");
        }
        assert!(MatchaVariant::claims("matcha:oops"));
        assert!(!MatchaVariant::claims("mst"));
    }
}
