//! Random-graph specifications as written on the command line:
//! `er:p=0.1`, `er:k=8`, `ba:m=2`, `regular:k=4`, `chung-lu:gamma=3,k=8`,
//! `torus`, `torus:rows=4`, each optionally with `,seed=N`.

use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::str::FromStr;

use serde::Serialize;
use thiserror::Error;

use super::RandomGraphError;
use crate::overlay::spec::{kind_of_name, NameKind, OverlaySpec};

/// A finite real parameter with total equality, order and hashing (by bits),
/// so that overlay kinds holding it can be map keys.
#[derive(Debug, Clone, Copy, Serialize)]
#[serde(transparent)]
pub struct Param(pub f64);

impl PartialEq for Param {
    fn eq(&self, other: &Self) -> bool {
        self.0.to_bits() == other.0.to_bits()
    }
}
impl Eq for Param {}
impl Hash for Param {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.0.to_bits().hash(state)
    }
}
impl PartialOrd for Param {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Param {
    fn cmp(&self, other: &Self) -> Ordering {
        self.0.total_cmp(&other.0)
    }
}
impl fmt::Display for Param {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// A random-graph family with its parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case", tag = "family")]
pub enum RandomGraph {
    /// Erdos-Renyi `G(n, p)`: every pair linked independently with
    /// probability `p`, or `p = k / (n - 1)` for a mean degree `k`.
    ErdosRenyi {
        /// Link probability.
        p: Option<Param>,
        /// Expected mean degree (used when `p` is not given).
        mean_degree: Option<Param>,
    },
    /// Barabasi-Albert preferential attachment, `m` links per new node
    /// (mean degree about `2m`).
    BarabasiAlbert {
        /// Links per new node.
        m: usize,
    },
    /// Uniform-ish random `k`-regular graph (`n k` even, `k < n`).
    Regular {
        /// Degree.
        k: usize,
    },
    /// Chung-Lu with Pareto weights: `w_i` Pareto with tail `P(w > x) ~
    /// x^-(gamma-1)` (so degrees `p(k) ~ k^-gamma`) scaled to mean `k`, link
    /// `{i,j}` with probability `min(1, w_i w_j / sum w)`.
    ChungLu {
        /// Degree exponent, `> 2`.
        gamma: Param,
        /// Expected mean degree.
        mean_degree: Param,
    },
    /// 2-D torus `rows x cols = n` (4-regular; deterministic). Without
    /// `rows`, the most square factorisation with both sides `>= 3`.
    Torus {
        /// Rows, or `None` for the most square shape.
        rows: Option<usize>,
    },
}

/// A family plus an optional seed of its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct RandomSpec {
    /// Family and parameters.
    pub graph: RandomGraph,
    /// Seed overriding the command's `--seed`.
    pub seed: Option<u64>,
}

/// A random-graph spec that does not parse.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("random overlay `{spec}`: {reason}")]
pub struct RandomSpecError {
    /// The text.
    pub spec: String,
    /// What is wrong.
    pub reason: String,
}

impl RandomGraph {
    /// Short family name (`er`, `ba`, `regular`, `chung-lu`, `torus`).
    pub fn family(&self) -> &'static str {
        match self {
            RandomGraph::ErdosRenyi { .. } => "er",
            RandomGraph::BarabasiAlbert { .. } => "ba",
            RandomGraph::Regular { .. } => "regular",
            RandomGraph::ChungLu { .. } => "chung-lu",
            RandomGraph::Torus { .. } => "torus",
        }
    }

    /// False for the deterministic torus.
    pub fn is_random(&self) -> bool {
        !matches!(self, RandomGraph::Torus { .. })
    }

    /// Checks the parameters against `n` nodes.
    pub fn check(&self, n: usize) -> Result<(), RandomGraphError> {
        let bad = |reason: String| {
            Err(RandomGraphError::BadParameters {
                family: self.family(),
                n,
                reason,
            })
        };
        if n < 2 {
            return bad("needs at least 2 nodes".into());
        }
        match *self {
            RandomGraph::ErdosRenyi { p, mean_degree } => match (p, mean_degree) {
                (Some(p), _) if !(p.0 > 0.0 && p.0 <= 1.0) => {
                    bad(format!("p = {p} must be in (0, 1]"))
                }
                (None, Some(k)) if !(k.0 > 0.0 && k.0.is_finite()) => {
                    bad(format!("mean degree k = {k} must be > 0"))
                }
                (None, None) => bad("give p=P or k=MEAN_DEGREE".into()),
                _ => Ok(()),
            },
            RandomGraph::BarabasiAlbert { m } if m == 0 || m >= n => {
                bad(format!("m = {m} must be in 1..{n}"))
            }
            RandomGraph::Regular { k } if k == 0 || k >= n => {
                bad(format!("k = {k} must be in 1..{n}"))
            }
            RandomGraph::Regular { k } if (n * k) % 2 == 1 => {
                bad(format!("n k = {n} x {k} must be even"))
            }
            RandomGraph::ChungLu { gamma, mean_degree } => {
                if !(gamma.0 > 2.0 && gamma.0.is_finite()) {
                    bad(format!("gamma = {gamma} must be > 2 (finite mean degree)"))
                } else if !(mean_degree.0 > 0.0 && mean_degree.0 < n as f64) {
                    bad(format!("mean degree k = {mean_degree} must be in (0, {n})"))
                } else {
                    Ok(())
                }
            }
            RandomGraph::Torus { rows } => super::torus_shape(n, rows).map(|_| ()).or_else(bad),
            _ => Ok(()),
        }
    }
}

impl fmt::Display for RandomGraph {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RandomGraph::ErdosRenyi { p: Some(p), .. } => write!(f, "er:p={p}"),
            RandomGraph::ErdosRenyi { mean_degree, .. } => {
                write!(f, "er:k={}", mean_degree.unwrap_or(Param(0.0)))
            }
            RandomGraph::BarabasiAlbert { m } => write!(f, "ba:m={m}"),
            RandomGraph::Regular { k } => write!(f, "regular:k={k}"),
            RandomGraph::ChungLu { gamma, mean_degree } => {
                write!(f, "chung-lu:gamma={gamma},k={mean_degree}")
            }
            RandomGraph::Torus { rows: None } => write!(f, "torus"),
            RandomGraph::Torus { rows: Some(r) } => write!(f, "torus:rows={r}"),
        }
    }
}

impl fmt::Display for RandomSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.graph)?;
        if let Some(s) = self.seed {
            let sep = if matches!(self.graph, RandomGraph::Torus { rows: None }) {
                ':'
            } else {
                ','
            };
            write!(f, "{sep}seed={s}")?;
        }
        Ok(())
    }
}

impl RandomSpec {
    /// True when `text` names a random family (`er`, `ba`, ... with or
    /// without parameters), so callers can route it here.
    pub fn is_random_name(text: &str) -> bool {
        kind_of_name(text) == Some(NameKind::Random)
    }

    /// The random graph of an overlay spec ([`OverlaySpec`], the one
    /// overlay grammar): its family and parameters.
    ///
    /// # Errors
    /// Not a random family, an unknown or missing parameter, a value out of
    /// range.
    pub fn from_spec(spec: &OverlaySpec) -> Result<Self, RandomSpecError> {
        let err = |reason: String| RandomSpecError {
            spec: spec.text.clone(),
            reason,
        };
        if spec.kind() != Some(NameKind::Random) {
            return Err(err(
                "unknown family; expected er, ba, regular, chung-lu or torus".into(),
            ));
        }
        let family = spec.name.as_str();
        let allowed: &[&str] = match family {
            "er" => &["p", "k"],
            "ba" => &["m"],
            "regular" => &["k"],
            "chung-lu" => &["gamma", "k"],
            _ => &["rows"],
        };
        let mut values: Vec<(String, String)> = Vec::new();
        let mut seed = None;
        for (key, value) in &spec.params {
            let key = match key.as_str() {
                "mean-degree" => "k",
                k => k,
            };
            if key == "seed" {
                seed = Some(
                    value
                        .parse::<u64>()
                        .map_err(|_| err(format!("seed `{value}` is not an unsigned integer")))?,
                );
            } else if allowed.contains(&key) {
                if values.iter().any(|(k, _)| k == key) {
                    return Err(err(format!("`{key}` given twice")));
                }
                values.push((key.to_string(), value.to_string()));
            } else {
                return Err(err(format!(
                    "unknown parameter `{key}` for {family}; expected {} (and optionally seed)",
                    allowed.join(", ")
                )));
            }
        }
        let get = |key: &str| {
            values
                .iter()
                .find(|(k, _)| k == key)
                .map(|(_, v)| v.as_str())
        };
        let real = |key: &str| -> Result<Option<Param>, RandomSpecError> {
            get(key)
                .map(|v| match v.parse::<f64>() {
                    Ok(x) if x.is_finite() => Ok(Param(x)),
                    _ => Err(err(format!("{key} = `{v}` is not a finite number"))),
                })
                .transpose()
        };
        let int = |key: &str| -> Result<Option<usize>, RandomSpecError> {
            get(key)
                .map(|v| {
                    v.parse::<usize>()
                        .map_err(|_| err(format!("{key} = `{v}` is not a non-negative integer")))
                })
                .transpose()
        };
        let need = |key: &str, example: &str| err(format!("needs {key}= (e.g. `{example}`)"));
        let graph = match family {
            "er" => {
                let (p, k) = (real("p")?, real("k")?);
                if p.is_some() && k.is_some() {
                    return Err(err("give p or k, not both".into()));
                }
                if p.is_none() && k.is_none() {
                    return Err(need("p or k", "er:p=0.1 or er:k=8"));
                }
                RandomGraph::ErdosRenyi { p, mean_degree: k }
            }
            "ba" => RandomGraph::BarabasiAlbert {
                m: int("m")?.ok_or_else(|| need("m", "ba:m=2"))?,
            },
            "regular" => RandomGraph::Regular {
                k: int("k")?.ok_or_else(|| need("k", "regular:k=4"))?,
            },
            "chung-lu" => RandomGraph::ChungLu {
                gamma: real("gamma")?.ok_or_else(|| need("gamma", "chung-lu:gamma=3,k=8"))?,
                mean_degree: real("k")?.ok_or_else(|| need("k", "chung-lu:gamma=3,k=8"))?,
            },
            _ => RandomGraph::Torus { rows: int("rows")? },
        };
        // Parameter ranges that do not depend on n.
        let range_err = match graph {
            RandomGraph::ErdosRenyi { p: Some(p), .. } if !(p.0 > 0.0 && p.0 <= 1.0) => {
                Some(format!("p = {p} must be in (0, 1]"))
            }
            RandomGraph::ErdosRenyi {
                mean_degree: Some(k),
                ..
            } if k.0 <= 0.0 => Some(format!("k = {k} must be > 0")),
            RandomGraph::BarabasiAlbert { m: 0 } => Some("m must be >= 1".into()),
            RandomGraph::Regular { k: 0 } => Some("k must be >= 1".into()),
            RandomGraph::ChungLu { gamma, mean_degree }
                if gamma.0 <= 2.0 || mean_degree.0 <= 0.0 =>
            {
                Some(format!(
                    "gamma = {gamma} must be > 2 and k = {mean_degree} > 0"
                ))
            }
            RandomGraph::Torus { rows: Some(r) } if r < 3 => {
                Some(format!("rows = {r} must be >= 3"))
            }
            _ => None,
        };
        if let Some(r) = range_err {
            return Err(err(r));
        }
        Ok(RandomSpec { graph, seed })
    }
}

impl FromStr for RandomSpec {
    type Err = RandomSpecError;
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let spec = OverlaySpec::parse(text).map_err(|e| RandomSpecError {
            spec: e.text,
            reason: e.reason,
        })?;
        Self::from_spec(&spec)
    }
}
