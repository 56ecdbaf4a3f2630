//! Round programs: hierarchical and ring-based federated learning
//! (TornadoAggregate, \[Lee21\], and the eight baselines of its
//! \[Lee21\] Table 4) as one general mechanism.
//!
//! A [`Program`] is a sequence of *steps* `t = 1, 2, ...`. In step `t` the
//! *active* nodes compute one local SGD step, then the step's operations
//! ([`Op`]) run with **snapshot semantics**: every operation reads the
//! models as they were after the local computation of step `t` and only
//! then are the results assigned (so simultaneous ring hand-offs and group
//! swaps are well defined). Two operations never write the same node.
//!
//! A program is generated from a small parameter set ([`ProgramSpec`]): the
//! groups (with a ring order inside each group), the intra-group operation
//! ([`Intra`]: star aggregation at a group leader, or a ring hop carried by
//! `C` parallel chains), the inter-group operation ([`Inter`]: none, a
//! global star aggregation at a server, or a hand-off along a ring of groups
//! carried by `C` chains) and the intervals `tau1`, `tau2`:
//!
//! * `t mod tau1*tau2 == 0` (and an inter-group op exists): the inter-group op;
//! * else `t mod tau1 == 0`: the intra-group op of every active group.
//!
//! The nine algorithms of \[Lee21\] Table 4 are [`Method`]s, each a choice
//! of these parameters ([`Method::defaults`]).
//!
//! * [`grouping`]: EMD between label distributions (\[Lee21\] eq. 32), GROUP_BY_IID,
//!   CLUSTER (k-medoids, Algorithm 3), random grouping.
//! * [`sim`]: the program in the event engine on a real underlay:
//!   wall-clock per step, bytes and messages per node and per core link.
//! * [`learn`]: a pure-Rust reference learner (softmax regression) driven
//!   by the programs; `train` (feature `train`): the same programs on the
//!   libtorch batched trainer. [`outcome`]: bits / wall-clock / steps to a
//!   target accuracy and statistics over seeds, for both.

pub mod grouping;
pub mod learn;
pub mod method;
pub mod outcome;
pub mod sim;
pub mod spec;
#[cfg(feature = "train")]
pub mod train;

pub use method::{Architecture, GroupingKind, Method, MethodParams};
pub use spec::{Inter, Intra, Message, Op, Program, ProgramError, ProgramSpec, Step};

#[cfg(test)]
mod tests;
