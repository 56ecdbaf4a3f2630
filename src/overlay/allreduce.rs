//! The schedules of exact averaging by all-reduce (overlay kinds
//! `ring-allreduce` and `mesh-allreduce`): how the chunks travel.

/// How an exact all-reduce moves its chunks: around a ring (timed in
/// [`crate::timing::allreduce`]) or directly between every pair of silos
/// ([`crate::timing::mesh_allreduce`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AllReduceSchedule {
    /// `2(n-1)` steps along a tour (silo indices in sending order).
    Ring(Vec<usize>),
    /// Two steps of direct sends (reduce-scatter, all-gather).
    Mesh,
}

impl AllReduceSchedule {
    /// The ring's tour; `None` for the mesh.
    pub fn tour(&self) -> Option<&[usize]> {
        match self {
            AllReduceSchedule::Ring(tour) => Some(tour),
            AllReduceSchedule::Mesh => None,
        }
    }

    /// `ring` or `mesh`.
    pub fn name(&self) -> &'static str {
        match self {
            AllReduceSchedule::Ring(_) => "ring",
            AllReduceSchedule::Mesh => "mesh",
        }
    }
}
