//! Expanding a grid into jobs, in a fixed order.
//!
//! A [`Job`] is one point of the grid: a value for every axis of the
//! experiment's kind, kept as text exactly as written in the file, so that
//! the same point always has the same key (and the same stored result)
//! whatever the order of the file's other values.

use serde::{Deserialize, Serialize};

use super::spec::Grid;

/// One point of the grid: every axis has one value (as written).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Job {
    /// Position in the grid order (0-based).
    pub index: usize,
    /// `(axis, value)` in the key order of [`Grid::axes`].
    pub params: Vec<(String, String)>,
}

impl Job {
    /// The value of `axis` (`""` when the experiment has no such axis).
    pub fn get(&self, axis: &str) -> &str {
        self.params
            .iter()
            .find(|(a, _)| a == axis)
            .map_or("", |(_, v)| v.as_str())
    }

    /// True when the experiment has `axis`.
    pub fn has(&self, axis: &str) -> bool {
        self.params.iter().any(|(a, _)| a == axis)
    }

    /// A stable text key of the job's parameters (not its index), so that
    /// results survive reordering of the grid: `axis=value|axis=value...`.
    pub fn key(&self) -> String {
        self.params
            .iter()
            .map(|(a, v)| format!("{a}={v}"))
            .collect::<Vec<_>>()
            .join("|")
    }

    /// File-name-safe 64-bit FNV-1a hash of [`Job::key`], as 16 hex digits
    /// (stable across platforms and Rust versions, unlike `DefaultHasher`).
    pub fn id(&self) -> String {
        format!("{:016x}", super::hash::fnv1a64(self.key().as_bytes()))
    }
}

/// Most grid points a run or merge takes unless asked
/// (`--allow-large-grid`): every point is held in memory and checked before
/// any job runs. 100,000 points took 1 s and 111 MB to expand and check
/// (`fedtopo run` of a 10 overlays x 100 access x 100 local_steps grid with
/// `--shard 0/10000000`, dev profile); a million took 11 s and 1 GB.
pub const MAX_GRID_JOBS: u128 = 100_000;

/// The number of points of `grid` (the product of its axes' lengths).
pub fn grid_size(grid: &Grid) -> u128 {
    grid.axes()
        .iter()
        .map(|(_, v)| v.len() as u128)
        .fold(1u128, u128::saturating_mul)
}

/// Refuses a grid of more than [`MAX_GRID_JOBS`] points unless
/// `allow_large`, naming the axes that multiply; returns its size.
///
/// # Errors
/// A message for the user when the grid is too large.
pub fn check_grid_size(grid: &Grid, allow_large: bool) -> Result<u128, String> {
    let size = grid_size(grid);
    if size <= MAX_GRID_JOBS || allow_large {
        return Ok(size);
    }
    let factors: Vec<String> = grid
        .axes()
        .iter()
        .filter(|(_, v)| v.len() > 1)
        .map(|(a, v)| format!("{} {a}", v.len()))
        .collect();
    Err(format!(
        "the grid has {size} points ({}), more than the {MAX_GRID_JOBS} a run takes by default \
         (every point is held in memory and checked before any job runs: about 1 KB and 20 us \
         each); split the experiment into several files, or give --allow-large-grid",
        factors.join(" x ")
    ))
}

/// All jobs of `grid`, axes nested in the order of [`Grid::axes`] except
/// that `overlay` varies fastest (so the overlays of one network sit
/// together in the results).
pub fn expand(grid: &Grid) -> Vec<Job> {
    let axes = grid.axes();
    // Nesting order: every axis but `overlay` in key order, then `overlay`.
    let mut nest: Vec<usize> = (0..axes.len())
        .filter(|&i| axes[i].0 != "overlay")
        .collect();
    nest.extend((0..axes.len()).filter(|&i| axes[i].0 == "overlay"));
    if axes.iter().any(|(_, values)| values.is_empty()) {
        return Vec::new();
    }
    let total: usize = axes.iter().map(|(_, v)| v.len()).product();
    let mut digits = vec![0usize; axes.len()];
    let mut jobs = Vec::with_capacity(total);
    for index in 0..total {
        jobs.push(Job {
            index,
            params: axes
                .iter()
                .zip(&digits)
                .map(|((name, values), &d)| (name.to_string(), values[d].clone()))
                .collect(),
        });
        // Odometer over `nest`, last position fastest.
        for &a in nest.iter().rev() {
            digits[a] += 1;
            if digits[a] < axes[a].1.len() {
                break;
            }
            digits[a] = 0;
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::spec::ExperimentSpec;

    fn grid(toml: &str) -> Grid {
        ExperimentSpec::parse(toml, "t.toml").unwrap().grid
    }

    #[test]
    fn grids_above_the_bound_are_refused_unless_allowed() {
        let values = |n: usize| {
            (1..=n)
                .map(|i| format!("'{i}G'"))
                .collect::<Vec<_>>()
                .join(",")
        };
        let steps = (1..=1000)
            .map(|i| i.to_string())
            .collect::<Vec<_>>()
            .join(",");
        let g = grid(&format!(
            "name='t'\nkind='compare'\n[grid]\nunderlay=['a']\noverlay=['star','ring']\naccess=[{}]\nlocal_steps=[{steps}]\n",
            values(100)
        ));
        assert_eq!(grid_size(&g), 200_000);
        let e = check_grid_size(&g, false).unwrap_err();
        assert!(
            e.contains("200000 points (2 overlay x 100 access x 1000 local_steps)"),
            "{e}"
        );
        assert!(e.contains("--allow-large-grid"), "{e}");
        assert_eq!(check_grid_size(&g, true), Ok(200_000));
        let small = grid("name='t'\nkind='compare'\n[grid]\nunderlay=['a']\n");
        assert_eq!(check_grid_size(&small, false), Ok(grid_size(&small)));
    }

    #[test]
    fn overlay_varies_fastest_and_keys_are_stable() {
        let g = grid(
            "name='t'\nkind='compare'\n[grid]\nunderlay=['a','b']\noverlay=['star','ring']\naccess=['1G','10G']\n",
        );
        let jobs = expand(&g);
        assert_eq!(jobs.len(), 8);
        let order: Vec<(&str, &str, &str)> = jobs
            .iter()
            .map(|j| (j.get("underlay"), j.get("access"), j.get("overlay")))
            .collect();
        assert_eq!(order[0], ("a", "1G", "star"));
        assert_eq!(order[1], ("a", "1G", "ring"));
        assert_eq!(order[2], ("a", "10G", "star"));
        assert_eq!(order[7], ("b", "10G", "ring"));
        // The key is the pre-generic format, so stored results stay valid.
        assert_eq!(
            jobs[0].key(),
            "underlay=a|overlay=star|access=1G|center_access=same|local_steps=1|workload=inaturalist|core_capacity=file|connectivity=paper|center=load"
        );
        let ids: std::collections::BTreeSet<String> = jobs.iter().map(Job::id).collect();
        assert_eq!(ids.len(), 8);
    }

    #[test]
    fn simulate_axes_extend_the_key() {
        let g = grid(
            "name='t'\nkind='simulate'\n[grid]\nunderlay=['a']\nnetwork=['maxplus','flow']\nrounds=[50]\n",
        );
        let jobs = expand(&g);
        assert_eq!(jobs.len(), 2 * 5);
        assert!(jobs[0]
            .key()
            .ends_with("|network=maxplus|rounds=50|straggler=none|seed=0"));
        assert_eq!(jobs[5].get("network"), "flow");
    }
}
