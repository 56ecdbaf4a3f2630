//! Random failures (\[BadieModiri24\] Fig. 2): in every round each node,
//! or each directed link, is active independently with probability `p`.
//!
//! Written `node-down:Q` / `link-down:Q` (`Q`: the probability that a node
//! or link is down in a round, the failure probability, in `[0, 1)`) or
//! `node-up:P` / `link-up:P` (`P = 1 - Q`, the probability it is up, in
//! `(0, 1]`). The older `node:P` / `link:P` keep working with their old
//! meaning, `P` the probability of being *up*, and a warning
//! ([`FailureSpec::legacy_warning`]): most readers take `node:0.1` for 10 %
//! failures.
//!
//! [`Failures`] wraps any [`OverlaySchedule`]; round `k` keeps the arcs whose
//! endpoints are both active (node failures) or that are themselves active
//! (link failures). An inactive node still trains locally, it only neither
//! sends nor receives. Round `k` draws from ChaCha8 stream `k` of the seed,
//! so any round can be asked for in any order and the trainer and the event
//! engine ([`crate::replay`]) see the same failures.

use std::borrow::Cow;
use std::fmt;
use std::str::FromStr;

use rand::Rng;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::Serialize;
use thiserror::Error;

use super::{Overlay, OverlaySchedule, Protocol};

/// What fails.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum FailureKind {
    /// Each node is active with probability `p` (all its arcs go with it).
    Node,
    /// Each directed link (arc) is active with probability `p`.
    Link,
}

/// A failure model: `node-down:Q`, `node-up:P`, `link-down:Q`,
/// `link-up:P` (or the legacy `node:P`, `link:P`, `P` up).
#[derive(Debug, Clone, Copy, Serialize)]
pub struct FailureSpec {
    /// Nodes or links.
    pub kind: FailureKind,
    /// Probability of being active (up) in a round, in `(0, 1]`.
    pub p: f64,
    /// How the text gave it (written back the same way).
    #[serde(skip)]
    pub spelling: Spelling,
}

/// How a [`FailureSpec`] was written.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum Spelling {
    /// `node-up:P`: the probability of being up.
    #[default]
    Up,
    /// `node-down:Q`: the probability of being down, `Q = 1 - p`, as given.
    Down(f64),
    /// `node:P` (deprecated): `P` the probability of being up.
    Legacy,
}

/// Equal when they fail the same way (the spelling does not count).
impl PartialEq for FailureSpec {
    fn eq(&self, other: &Self) -> bool {
        self.kind == other.kind && self.p == other.p
    }
}

/// Bad failure specification or base schedule.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum FailureError {
    /// Text does not parse.
    #[error(
        "failures `{0}`: expected none, node-down:Q or link-down:Q (Q: the probability that a \
         node / link is down in a round, in [0, 1)), or node-up:P or link-up:P (P = 1 - Q, in (0, 1])"
    )]
    Parse(String),
    /// Probability out of range.
    #[error("failure activity probability p = {0} must be in (0, 1]")]
    Probability(f64),
    /// Failure probability out of range.
    #[error("failure probability q = {0} must be in [0, 1) (node-down:Q, link-down:Q)")]
    DownProbability(f64),
    /// Failures apply to gossip overlays only.
    #[error("failures need a decentralised (gossip) overlay; `{0}` is server-client")]
    NotGossip(String),
}

impl FailureSpec {
    /// Parses `none` (no failures: `Ok(None)`), `node:P` or `link:P`.
    pub fn parse_optional(text: &str) -> Result<Option<FailureSpec>, FailureError> {
        let t = text.trim().to_ascii_lowercase();
        if t == "none" || t.is_empty() {
            return Ok(None);
        }
        t.parse().map(Some)
    }

    /// Probability that a node / link is down in a round, `1 - p`.
    pub fn down_probability(&self) -> f64 {
        match self.spelling {
            Spelling::Down(q) => q,
            _ => 1.0 - self.p,
        }
    }

    /// For the deprecated `node:P` / `link:P`: what it means and how to
    /// write it unambiguously; `None` for the explicit spellings.
    pub fn legacy_warning(&self) -> Option<String> {
        if self.spelling != Spelling::Legacy {
            return None;
        }
        let k = self.kind_name();
        Some(format!(
            "`{k}:{p}` reads {p} as the probability that a {k} is UP in a round (not the failure \
             probability); write `{k}-up:{p}` for this meaning, or `{k}-down:Q` with Q the \
             probability of failure (`{k}:P` is deprecated)",
            p = self.p
        ))
    }

    fn kind_name(&self) -> &'static str {
        match self.kind {
            FailureKind::Node => "node",
            FailureKind::Link => "link",
        }
    }
}

impl FromStr for FailureSpec {
    type Err = FailureError;
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let t = text.trim().to_ascii_lowercase();
        let (k, p) = t
            .split_once(':')
            .ok_or_else(|| FailureError::Parse(text.into()))?;
        let (what, direction) = match k.trim().split_once('-') {
            Some((what, dir)) => (what, Some(dir)),
            None => (k.trim(), None),
        };
        let kind = match what {
            "node" | "nodes" => FailureKind::Node,
            "link" | "links" | "edge" => FailureKind::Link,
            _ => return Err(FailureError::Parse(text.into())),
        };
        let value = p
            .trim()
            .trim_start_matches("p=")
            .trim_start_matches("q=")
            .parse::<f64>()
            .map_err(|_| FailureError::Parse(text.into()))?;
        let (p, spelling) = match direction {
            None => (value, Spelling::Legacy),
            Some("up") => (value, Spelling::Up),
            Some("down") => {
                if !(0.0..1.0).contains(&value) {
                    return Err(FailureError::DownProbability(value));
                }
                (1.0 - value, Spelling::Down(value))
            }
            Some(_) => return Err(FailureError::Parse(text.into())),
        };
        if !(p > 0.0 && p <= 1.0) {
            return Err(FailureError::Probability(p));
        }
        Ok(FailureSpec { kind, p, spelling })
    }
}

/// As written: `node-down:Q`, `node-up:P` or the legacy `node:P`.
impl fmt::Display for FailureSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let k = self.kind_name();
        match self.spelling {
            Spelling::Up => write!(f, "{k}-up:{}", self.p),
            Spelling::Down(q) => write!(f, "{k}-down:{q}"),
            Spelling::Legacy => write!(f, "{k}:{}", self.p),
        }
    }
}

/// A schedule whose rounds lose nodes or links at random.
#[derive(Debug, Clone)]
pub struct Failures<S> {
    base: S,
    spec: FailureSpec,
    seed: u64,
}

const SALT: u64 = 0x6661_696c_7572_6573;

impl<S: OverlaySchedule> Failures<S> {
    /// Wraps `base` (a gossip overlay or schedule) with failures `spec`
    /// drawn from `seed`.
    pub fn new(base: S, spec: FailureSpec, seed: u64) -> Result<Self, FailureError> {
        if !(spec.p > 0.0 && spec.p <= 1.0) {
            return Err(FailureError::Probability(spec.p));
        }
        let r0 = base.round(0);
        if let Protocol::ServerClient { .. } = r0.protocol {
            return Err(FailureError::NotGossip(r0.name.clone()));
        }
        Ok(Failures { base, spec, seed })
    }

    /// The failure model.
    pub fn spec(&self) -> FailureSpec {
        self.spec
    }

    fn rng(&self, k: u64) -> ChaCha8Rng {
        let mut rng = ChaCha8Rng::seed_from_u64(self.seed ^ SALT);
        rng.set_stream(k);
        rng
    }

    /// Which nodes are active in round `k` (all, for link failures).
    pub fn active_nodes(&self, k: u64) -> Vec<bool> {
        let n = self.base.silo_count();
        match self.spec.kind {
            FailureKind::Node => {
                let mut rng = self.rng(k);
                (0..n).map(|_| rng.gen_bool(self.spec.p)).collect()
            }
            FailureKind::Link => vec![true; n],
        }
    }
}

impl<S: OverlaySchedule> OverlaySchedule for Failures<S> {
    fn silo_count(&self) -> usize {
        self.base.silo_count()
    }

    fn round(&self, k: u64) -> Cow<'_, Overlay> {
        let base = self.base.round(k);
        let n = base.silo_count();
        let arcs: Vec<(usize, usize)> = match self.spec.kind {
            FailureKind::Node => {
                let on = self.active_nodes(k);
                base.arcs()
                    .iter()
                    .copied()
                    .filter(|&(a, b)| on[a] && on[b])
                    .collect()
            }
            FailureKind::Link => {
                let mut rng = self.rng(k);
                base.arcs()
                    .iter()
                    .copied()
                    .filter(|_| rng.gen_bool(self.spec.p))
                    .collect()
            }
        };
        let mut o = Overlay::from_arcs(&format!("{}/{}", base.name, self.spec), n, arcs);
        o.protocol = base.protocol;
        Cow::Owned(o)
    }

    fn is_static(&self) -> bool {
        self.spec.p >= 1.0 && self.base.is_static()
    }

    fn arc_lag(&self, k: u64, from: usize, to: usize) -> u64 {
        self.base.arc_lag(k, from, to)
    }

    fn max_lag(&self) -> u64 {
        self.base.max_lag()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::overlay::complete;

    #[test]
    fn parse() {
        let s: FailureSpec = "node:0.5".parse().unwrap();
        assert_eq!((s.kind, s.p), (FailureKind::Node, 0.5));
        assert_eq!(s.to_string(), "node:0.5");
        assert_eq!("link:p=0.25".parse::<FailureSpec>().unwrap().p, 0.25);
        assert_eq!(FailureSpec::parse_optional("none").unwrap(), None);
        for bad in [
            "node",
            "node:x",
            "disk:0.5",
            "link:0",
            "link:1.5",
            "node-sideways:0.5",
        ] {
            let e = bad.parse::<FailureSpec>().unwrap_err().to_string();
            assert!(e.contains("(0, 1]"), "{bad}: {e}");
        }
        for bad in ["node-down:1", "link-down:-0.1", "node-down:nan"] {
            let e = bad.parse::<FailureSpec>().unwrap_err().to_string();
            assert!(e.contains("[0, 1)"), "{bad}: {e}");
        }
        let star = crate::overlay::star::star(4, 0);
        let e = Failures::new(star, s, 0).unwrap_err();
        assert!(matches!(e, FailureError::NotGossip(_)));
    }

    /// `node-down:Q` is the failure probability; `node-up:P` and the
    /// legacy `node:P` the probability of being up: `node-down:0.1`,
    /// `node-up:0.9` and `node:0.9` fail the same nodes in every round, and
    /// each is written back as given.
    #[test]
    fn down_and_up_spellings_agree_and_the_legacy_one_warns() {
        let down: FailureSpec = "node-down:0.1".parse().unwrap();
        let up: FailureSpec = "node-up:0.9".parse().unwrap();
        let legacy: FailureSpec = "node:0.9".parse().unwrap();
        assert_eq!((down.p, up.p, legacy.p), (0.9, 0.9, 0.9));
        assert_eq!(down.down_probability(), 0.1);
        assert_eq!(down, up);
        let rounds = |s: FailureSpec| {
            let f = Failures::new(complete(12), s, 5).unwrap();
            (0..30)
                .map(|k| f.round(k).arcs().to_vec())
                .collect::<Vec<_>>()
        };
        assert_eq!(rounds(down), rounds(up));
        assert_eq!(rounds(legacy), rounds(up));
        assert_eq!(down.to_string(), "node-down:0.1");
        assert_eq!(up.to_string(), "node-up:0.9");
        assert_eq!(legacy.to_string(), "node:0.9");
        assert_eq!(down.legacy_warning(), None);
        assert_eq!(up.legacy_warning(), None);
        let w = legacy.legacy_warning().unwrap();
        assert!(
            w.contains("UP") && w.contains("node-up:0.9") && w.contains("node-down:Q"),
            "{w}"
        );
        let link: FailureSpec = "link-down:0.25".parse().unwrap();
        assert_eq!((link.kind, link.p), (FailureKind::Link, 0.75));
        assert!("node-down:0".parse::<FailureSpec>().unwrap().p == 1.0);
    }

    #[test]
    fn node_failures_isolate_inactive_nodes() {
        let f = Failures::new(complete(20), "node:0.6".parse().unwrap(), 3).unwrap();
        let mut active = 0usize;
        for k in 0..200 {
            let on = f.active_nodes(k);
            let o = f.round(k);
            for i in 0..20 {
                let m = on.iter().filter(|&&x| x).count();
                let want = if on[i] { m - 1 } else { 0 };
                assert_eq!(o.in_degree(i), want);
                assert_eq!(o.out_degree(i), want);
            }
            active += on.iter().filter(|&&x| x).count();
        }
        let rate = active as f64 / 4000.0;
        assert!((rate - 0.6).abs() < 0.03, "{rate}");
        // Random access: round 7 alone equals round 7 in sequence.
        let g = Failures::new(complete(20), "node:0.6".parse().unwrap(), 3).unwrap();
        assert_eq!(g.round(7).arcs(), f.round(7).arcs());
        let h = Failures::new(complete(20), "node:0.6".parse().unwrap(), 4).unwrap();
        assert_ne!(h.round(7).arcs(), f.round(7).arcs());
    }

    #[test]
    fn link_failures_drop_arcs_independently() {
        let f = Failures::new(complete(30), "link:0.3".parse().unwrap(), 1).unwrap();
        let kept: usize = (0..100).map(|k| f.round(k).arc_count()).sum();
        let rate = kept as f64 / (100.0 * 870.0);
        assert!((rate - 0.3).abs() < 0.01, "{rate}");
        // Directed: some round keeps an arc without its reverse.
        assert!((0..10).any(|k| !f.round(k).is_undirected()));
        let all = Failures::new(complete(5), "link:1".parse().unwrap(), 1).unwrap();
        assert_eq!(all.round(3).arc_count(), 20);
        assert!(all.is_static());
    }
}
