//! The nine algorithms of \[Lee21\] Table 4 as parameter choices of one
//! [`ProgramSpec`] generator.

use std::fmt;
use std::str::FromStr;

use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::Serialize;
use thiserror::Error;

use super::grouping::{self, GroupingError, LabelCounts};
use super::spec::{Inter, Intra, ProgramError, ProgramSpec};

/// Architecture (\[Lee21\] Table 1, Definitions 1-8).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Architecture {
    /// STAR: one group, global aggregation every `tau`.
    Star,
    /// RING: one ring over all nodes, one chain.
    Ring,
    /// STAR-stars: group stars every `tau1`, global star every `tau1 tau2`.
    StarStars,
    /// STAR-rings: group rings every `tau1`, global star every `tau1 tau2`.
    StarRings,
    /// RING-stars: group stars every `tau1`, ring of groups every `tau1 tau2`.
    RingStars,
    /// stars: group stars, no global step.
    Stars,
    /// rings: group rings, no global step.
    Rings,
}

impl Architecture {
    /// `(intra, inter)` operations with `chains` chains.
    pub fn ops(self, chains: usize) -> (Intra, Inter) {
        match self {
            Architecture::Star | Architecture::Stars => (Intra::Star, Inter::None),
            Architecture::Ring => (Intra::Ring { chains: 1 }, Inter::None),
            Architecture::StarStars => (Intra::Star, Inter::Star),
            Architecture::StarRings => (Intra::Ring { chains }, Inter::Star),
            Architecture::RingStars => (Intra::Star, Inter::Ring { chains }),
            Architecture::Rings => (Intra::Ring { chains }, Inter::None),
        }
    }

    /// The paper's name.
    pub fn name(self) -> &'static str {
        match self {
            Architecture::Star => "STAR",
            Architecture::Ring => "RING",
            Architecture::StarStars => "STAR-stars",
            Architecture::StarRings => "STAR-rings",
            Architecture::RingStars => "RING-stars",
            Architecture::Stars => "stars",
            Architecture::Rings => "rings",
        }
    }
}

/// How nodes are grouped (\[Lee21\] Algorithm 3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum GroupingKind {
    /// A single group of all nodes.
    None,
    /// Random near-equal groups.
    Random,
    /// GROUP_BY_IID: every group's label distribution close to the global one.
    Iid,
    /// CLUSTER: k-medoids on label distributions.
    Cluster,
}

/// One algorithm of \[Lee21\] Table 4.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum Method {
    /// FedAvg (McMahan et al.): STAR.
    FedAvg,
    /// HierFAVG (Liu et al.): STAR-stars, random groups.
    HierFavg,
    /// Astraea (Duan et al.): STAR-rings, IID groups, one chain.
    Astraea,
    /// MM-PSGD (Ding et al.): RING-stars, clustered groups, one chain.
    MmPsgd,
    /// Tornado (\[Lee21\] Algorithm 1): RING-stars, IID groups, `C = G`.
    Tornado,
    /// Tornadoes (\[Lee21\] Algorithm 2): STAR-rings, clustered groups, `C = G`.
    Tornadoes,
    /// IFCA (Ghosh et al.): stars, clustered groups.
    Ifca,
    /// SemiCyclic (Eichner et al.): rings, random groups, one chain.
    SemiCyclic,
    /// Tornado-rings: rings, clustered groups, `C = G`.
    TornadoRings,
}

/// The parameters of one algorithm (a row of \[Lee21\] Table 4).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct MethodParams {
    /// The algorithm.
    pub method: Method,
    /// Architecture.
    pub architecture: Architecture,
    /// Grouping scheme.
    pub grouping: GroupingKind,
    /// Number of groups `|G|` (\[Lee21\] Table 4's "group size" column).
    pub groups: usize,
    /// Chains `C` (1 where \[Lee21\] Table 4 has none).
    pub chains: usize,
    /// `tau1` (`tau` for flat and pluralistic architectures).
    pub tau1: u64,
    /// `tau2` (1 where \[Lee21\] Table 4 has none).
    pub tau2: u64,
}

/// Why a method could not be built.
#[derive(Debug, Error)]
pub enum MethodError {
    /// Unknown name.
    #[error("unknown method `{0}`; expected one of fedavg, hierfavg, astraea, mm-psgd, tornado, tornadoes, ifca, semicyclic, tornado-rings (or all)")]
    Unknown(String),
    /// Grouping failed.
    #[error(transparent)]
    Grouping(#[from] GroupingError),
    /// Invalid program.
    #[error(transparent)]
    Program(#[from] ProgramError),
}

impl Method {
    /// All nine, in \[Lee21\] Table 4 order.
    pub const ALL: [Method; 9] = [
        Method::FedAvg,
        Method::HierFavg,
        Method::Astraea,
        Method::MmPsgd,
        Method::Tornado,
        Method::Tornadoes,
        Method::Ifca,
        Method::SemiCyclic,
        Method::TornadoRings,
    ];

    /// Command-line name.
    pub fn name(self) -> &'static str {
        match self {
            Method::FedAvg => "fedavg",
            Method::HierFavg => "hierfavg",
            Method::Astraea => "astraea",
            Method::MmPsgd => "mm-psgd",
            Method::Tornado => "tornado",
            Method::Tornadoes => "tornadoes",
            Method::Ifca => "ifca",
            Method::SemiCyclic => "semicyclic",
            Method::TornadoRings => "tornado-rings",
        }
    }

    /// \[Lee21\] Table 4 row: architecture, grouping, `|G|`, `C`, intervals.
    pub fn defaults(self) -> MethodParams {
        use Architecture as A;
        use GroupingKind as Gk;
        let (architecture, grouping, groups, chains, tau1, tau2) = match self {
            Method::FedAvg => (A::Star, Gk::None, 1, 1, 100, 1),
            Method::HierFavg => (A::StarStars, Gk::Random, 5, 1, 10, 10),
            Method::Astraea => (A::StarRings, Gk::Iid, 2, 1, 10, 10),
            Method::MmPsgd => (A::RingStars, Gk::Cluster, 10, 1, 10, 10),
            Method::Tornado => (A::RingStars, Gk::Iid, 2, 2, 10, 10),
            Method::Tornadoes => (A::StarRings, Gk::Cluster, 10, 10, 10, 10),
            Method::Ifca => (A::Stars, Gk::Cluster, 10, 1, 100, 1),
            Method::SemiCyclic => (A::Rings, Gk::Random, 5, 1, 100, 1),
            Method::TornadoRings => (A::Rings, Gk::Cluster, 10, 10, 100, 1),
        };
        MethodParams {
            method: self,
            architecture,
            grouping,
            groups,
            chains,
            tau1,
            tau2,
        }
    }

    /// Parses a comma-separated list of names, or `all`.
    pub fn parse_list(s: &str) -> Result<Vec<Method>, MethodError> {
        if s.trim() == "all" {
            return Ok(Method::ALL.to_vec());
        }
        s.split(',').map(|p| p.trim().parse()).collect()
    }
}

impl fmt::Display for Method {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Method {
    type Err = MethodError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let k = s.to_ascii_lowercase().replace('_', "-");
        Method::ALL
            .into_iter()
            .find(|m| m.name() == k)
            .ok_or_else(|| MethodError::Unknown(s.to_string()))
    }
}

impl MethodParams {
    /// These parameters with `groups` groups instead of the default (when
    /// given), at most one per node of `nodes`.
    pub fn with_groups(mut self, groups: Option<usize>, nodes: usize) -> MethodParams {
        if let Some(g) = groups {
            self.groups = g;
        }
        self.groups = self.groups.min(nodes);
        self
    }

    /// Groups the nodes of `labels` (seeded), draws the random rings
    /// (\[Lee21\] Algorithm 1 line 2, Algorithm 2 line 2) and builds the program.
    /// Aggregation weights are the nodes' data sizes; group leaders are the
    /// first member of each (shuffled) group, the server is `server`, which
    /// also leads the single group of STAR.
    pub fn build(
        &self,
        labels: &LabelCounts,
        server: usize,
        seed: u64,
    ) -> Result<ProgramSpec, MethodError> {
        let n = labels.len();
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let g = match self.architecture {
            Architecture::Star | Architecture::Ring => 1,
            _ => self.groups,
        };
        let mut groups = match (g, self.grouping) {
            (1, _) | (_, GroupingKind::None) => vec![(0..n).collect()],
            (_, GroupingKind::Random) => grouping::random_groups(n, g, &mut rng)?,
            (_, GroupingKind::Iid) => grouping::group_by_iid(labels, g, &mut rng)?.groups,
            (_, GroupingKind::Cluster) => grouping::cluster(labels, g, &mut rng)?.groups,
        };
        for grp in &mut groups {
            grp.shuffle(&mut rng);
        }
        let (intra, inter) = self.architecture.ops(self.chains);
        let mut spec = ProgramSpec::new(groups, intra, inter, self.tau1, self.tau2)?;
        spec.group_ring.shuffle(&mut rng);
        spec.data_sizes = labels.sizes();
        if spec.data_sizes.iter().any(|&d| d <= 0.0) {
            return Err(GroupingError::EmptyNode.into());
        }
        spec.server = server;
        if spec.groups.len() == 1 && intra == Intra::Star {
            spec.leaders = vec![server];
        }
        spec.validate()?;
        Ok(spec)
    }
}
