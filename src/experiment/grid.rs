//! Expanding a grid into jobs, in a fixed order.

use serde::{Deserialize, Serialize};

use super::spec::Grid;

/// One point of the grid: every axis has one value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Job {
    /// Position in the grid order (0-based).
    pub index: usize,
    /// Underlay spec as written in the file.
    pub underlay: String,
    /// Overlay name.
    pub overlay: String,
    /// Access capacity of every silo.
    pub access: String,
    /// Access capacity of the STAR centre's silo (`same` or a bandwidth).
    pub center_access: String,
    /// Local steps s.
    pub local_steps: u32,
    /// Workload preset.
    pub workload: String,
    /// Core capacity (`file` or a bandwidth).
    pub core_capacity: String,
    /// Path model.
    pub connectivity: String,
    /// STAR centre policy.
    pub center: String,
}

impl Job {
    /// A stable text key of the job's parameters (not its index), so that
    /// results survive reordering of the grid.
    pub fn key(&self) -> String {
        format!(
            "underlay={}|overlay={}|access={}|center_access={}|local_steps={}|workload={}|core_capacity={}|connectivity={}|center={}",
            self.underlay,
            self.overlay,
            self.access,
            self.center_access,
            self.local_steps,
            self.workload,
            self.core_capacity,
            self.connectivity,
            self.center
        )
    }

    /// File-name-safe 64-bit FNV-1a hash of [`Job::key`], as 16 hex digits
    /// (stable across platforms and Rust versions, unlike `DefaultHasher`).
    pub fn id(&self) -> String {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in self.key().bytes() {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
        format!("{h:016x}")
    }
}

/// All jobs of `grid`, axes nested in declaration order (the last axis,
/// `overlay`, varies fastest).
pub fn expand(grid: &Grid) -> Vec<Job> {
    let mut jobs = Vec::new();
    for underlay in &grid.underlay {
        for access in &grid.access {
            for center_access in &grid.center_access {
                for &local_steps in &grid.local_steps {
                    for workload in &grid.workload {
                        for core_capacity in &grid.core_capacity {
                            for connectivity in &grid.connectivity {
                                for center in &grid.center {
                                    for overlay in &grid.overlay {
                                        jobs.push(Job {
                                            index: jobs.len(),
                                            underlay: underlay.clone(),
                                            overlay: overlay.clone(),
                                            access: access.clone(),
                                            center_access: center_access.clone(),
                                            local_steps,
                                            workload: workload.clone(),
                                            core_capacity: core_capacity.clone(),
                                            connectivity: connectivity.clone(),
                                            center: center.clone(),
                                        });
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
    jobs
}

/// A slice `i` of `n` of the jobs (`--shard i/n`): every job whose index is
/// `i` modulo `n`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    /// This shard, `0 <= index < count`.
    pub index: usize,
    /// Number of shards.
    pub count: usize,
}

impl Shard {
    /// Parses `i/n`.
    pub fn parse(text: &str) -> Result<Shard, String> {
        let (i, n) = text
            .split_once('/')
            .ok_or_else(|| format!("expected a shard as i/n (e.g. 0/4), found `{text}`"))?;
        let index: usize = i
            .trim()
            .parse()
            .map_err(|_| format!("bad shard index `{i}`"))?;
        let count: usize = n
            .trim()
            .parse()
            .map_err(|_| format!("bad shard count `{n}`"))?;
        if count == 0 || index >= count {
            return Err(format!("shard {index}/{count}: need 0 <= i < n"));
        }
        Ok(Shard { index, count })
    }

    /// Whether this shard runs `job`.
    pub fn contains(&self, job: &Job) -> bool {
        job.index % self.count == self.index
    }
}
