//! Partitions with given silo sizes: silo `i` holds exactly `sizes[i]`
//! examples (the `data` column of a silo file, [`crate::net::silos`]), drawn
//! without replacement from the training pool; examples beyond the total
//! are left out. Every scheme keeps its label skew where it can:
//!
//! * `iid`: a seeded shuffle, then consecutive runs of `sizes[i]`.
//! * `shards[:K]`: `T = sum sizes` examples drawn at random and sorted by
//!   label; silo `i`'s size cut into `K` near-equal shards (fewer when it
//!   holds fewer than `K` examples); all shards laid over the sorted
//!   examples in a random order (the shard scheme with shards scaled to
//!   the sizes).
//! * `one-class`: silo `i` takes `sizes[i]` examples of class `i mod C`
//!   (refused when a class has too few).
//! * `dirichlet:ALPHA`: silo `i` draws class proportions `q_i ~
//!   Dirichlet(alpha)` and takes `sizes[i]` examples in those proportions
//!   (largest remainders); a class that runs out is dropped from `q_i` and
//!   the rest re-split among the others.
//! * `geo`: the \[Marfoq20\] split (half at random, half to the silo
//!   nearest to the class's home), with each silo's capacity `sizes[i]`:
//!   an example whose silo is full goes to a random silo with room.
//! * `lognormal`: refused (it draws the sizes the file sets; `iid` gives
//!   iid labels with the file's sizes).

use rand::seq::SliceRandom;
use rand::Rng;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, Gamma};

use super::partition::{counts_by_weights, geo_homes, Partition};
use super::{DataError, Dataset};

/// Indices of `data` held by silo `i`, exactly `sizes[i]` of them (sorted),
/// split by `partition`; `positions` are the silos' `(lat, lon)` for `geo`.
///
/// # Errors
/// A size of 0, sizes adding up to more than `data.len()`, a class with
/// too few examples for `one-class`, `lognormal`, `geo` without positions.
pub fn split_sized(
    partition: &Partition,
    data: &Dataset,
    sizes: &[usize],
    positions: Option<&[(f64, f64)]>,
    seed: u64,
) -> Result<Vec<Vec<usize>>, DataError> {
    let n = sizes.len();
    let total: usize = sizes.iter().sum();
    if n == 0 || sizes.contains(&0) {
        return Err(DataError::Invalid(
            "every silo needs a data size of at least 1 example".into(),
        ));
    }
    if total > data.len() {
        return Err(DataError::Invalid(format!(
            "the silos' data sizes add up to {total} examples, more than the {} of the training set",
            data.len()
        )));
    }
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut all: Vec<usize> = (0..data.len()).collect();
    all.shuffle(&mut rng);
    let mut silos: Vec<Vec<usize>> = sizes.iter().map(|&s| Vec::with_capacity(s)).collect();
    match partition {
        Partition::Iid => {
            let mut start = 0;
            for (silo, &s) in silos.iter_mut().zip(sizes) {
                silo.extend_from_slice(&all[start..start + s]);
                start += s;
            }
        }
        Partition::Shards(per) => {
            let per = (*per).max(1);
            let mut pool = all[..total].to_vec();
            pool.sort_by_key(|&k| (data.labels[k], k));
            let mut shards: Vec<(usize, usize)> = Vec::new();
            for (i, &s) in sizes.iter().enumerate() {
                let k = per.min(s);
                shards.extend((0..k).map(|p| (i, s / k + usize::from(p < s % k))));
            }
            shards.shuffle(&mut rng);
            let mut start = 0;
            for (i, len) in shards {
                silos[i].extend_from_slice(&pool[start..start + len]);
                start += len;
            }
        }
        Partition::OneClass => {
            let mut pools = class_pools(data, &all);
            let c = data.classes;
            for (i, &s) in sizes.iter().enumerate() {
                let pool = &mut pools[i % c];
                if pool.len() < s {
                    let asked: usize = (i % c..n).step_by(c).map(|j| sizes[j]).sum();
                    let has = data.labels.iter().filter(|&&l| l as usize == i % c).count();
                    return Err(DataError::Invalid(format!(
                        "one-class: the silos of class {} ask for {asked} examples, the training set has {has}",
                        i % c
                    )));
                }
                silos[i].extend(pool.drain(pool.len() - s..));
            }
        }
        Partition::Dirichlet(alpha) => {
            let g = Gamma::new(*alpha, 1.0)
                .map_err(|e| DataError::Invalid(format!("dirichlet alpha {alpha}: {e}")))?;
            let mut pools = class_pools(data, &all);
            for (silo, &s) in silos.iter_mut().zip(sizes) {
                let mut q: Vec<f64> = (0..data.classes)
                    .map(|_| g.sample(&mut rng) + 1e-12)
                    .collect();
                let mut need = s;
                while need > 0 {
                    for (w, pool) in q.iter_mut().zip(&pools) {
                        if pool.is_empty() {
                            *w = 0.0;
                        }
                    }
                    // Every draw empties a class or fills the silo; the total
                    // fits in the pool, so some class still has examples.
                    for (pool, take) in pools.iter_mut().zip(counts_by_weights(&q, need)) {
                        let take = take.min(pool.len());
                        silo.extend(pool.drain(pool.len() - take..));
                        need -= take;
                    }
                }
            }
        }
        Partition::Geo => {
            let pos = positions.filter(|p| p.len() == n).ok_or_else(|| {
                DataError::Invalid("the geo partition needs the coordinates of every silo".into())
            })?;
            let homes = geo_homes(pos, data.classes, &mut rng);
            let mut left = total;
            for (k, &idx) in all.iter().enumerate() {
                if left == 0 {
                    break;
                }
                let mut silo = if k % 2 == 0 {
                    rng.gen_range(0..n)
                } else {
                    homes[data.labels[idx] as usize]
                };
                if silos[silo].len() == sizes[silo] {
                    let open: Vec<usize> = (0..n).filter(|&i| silos[i].len() < sizes[i]).collect();
                    silo = open[rng.gen_range(0..open.len())];
                }
                silos[silo].push(idx);
                left -= 1;
            }
        }
        Partition::LogNormal(_) => {
            return Err(DataError::Invalid(
                "the lognormal partition draws the silo sizes that the silo file's data column \
                 sets; use iid (iid labels with the file's sizes) or another label skew"
                    .into(),
            ))
        }
    }
    for s in &mut silos {
        s.sort_unstable();
    }
    Ok(silos)
}

/// The examples of every class, in the order of `order`.
fn class_pools(data: &Dataset, order: &[usize]) -> Vec<Vec<usize>> {
    let mut pools = vec![Vec::new(); data.classes];
    for &k in order {
        pools[data.labels[k] as usize].push(k);
    }
    pools
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toy(n: usize, classes: usize) -> Dataset {
        Dataset {
            features: (0..n).map(|k| k as f32).collect(),
            labels: (0..n).map(|k| (k % classes) as i64).collect(),
            dim: 1,
            classes,
            image: None,
        }
    }

    fn classes_of(d: &Dataset, s: &[usize]) -> usize {
        let mut c: Vec<i64> = s.iter().map(|&k| d.labels[k]).collect();
        c.sort_unstable();
        c.dedup();
        c.len()
    }

    #[test]
    fn every_scheme_gives_exact_sizes_without_repeats() {
        let d = toy(1000, 10);
        let sizes = [1, 7, 50, 95, 3, 90, 90, 30];
        let pos: Vec<(f64, f64)> = (0..sizes.len())
            .map(|i| (30.0 + i as f64, -120.0 + 3.0 * i as f64))
            .collect();
        for p in ["iid", "shards:2", "one-class", "dirichlet:0.3", "geo"] {
            let part = Partition::parse(p).unwrap();
            let a = split_sized(&part, &d, &sizes, Some(&pos), 5).unwrap();
            let got: Vec<usize> = a.iter().map(Vec::len).collect();
            assert_eq!(got, sizes, "{p}");
            let mut all: Vec<usize> = a.iter().flatten().copied().collect();
            all.sort_unstable();
            all.dedup();
            assert_eq!(all.len(), sizes.iter().sum::<usize>(), "{p}: repeats");
            assert_eq!(a, split_sized(&part, &d, &sizes, Some(&pos), 5).unwrap());
        }
    }

    #[test]
    fn label_skew_survives_the_sizes() {
        // About 61 examples of each class drawn; shards of at most 45.
        let d = toy(10000, 10);
        let sizes = [40, 80, 60, 20, 10, 70, 50, 90, 30, 60, 45, 55];
        let one = split_sized(&Partition::OneClass, &d, &sizes, None, 1).unwrap();
        assert!(one.iter().all(|s| classes_of(&d, s) == 1));
        // K shards smaller than a class over label-sorted data: at most 2K
        // classes per silo (a shard may straddle one class boundary).
        let shards = split_sized(&Partition::Shards(2), &d, &sizes, None, 1).unwrap();
        assert!(shards.iter().all(|s| classes_of(&d, s) <= 4), "{shards:?}");
        let iid = split_sized(&Partition::Iid, &d, &sizes, None, 1).unwrap();
        assert!(classes_of(&d, &iid[1]) >= 8);
    }

    #[test]
    fn impossible_sizes_are_refused_with_the_reason() {
        let d = toy(100, 2);
        let err = |p: Partition, sizes: &[usize]| {
            split_sized(&p, &d, sizes, None, 0).unwrap_err().to_string()
        };
        assert!(err(Partition::Iid, &[60, 41]).contains("add up to 101"));
        assert!(err(Partition::Iid, &[0, 4]).contains("at least 1"));
        assert!(err(Partition::OneClass, &[30, 10, 30]).contains("class 0 ask for 60"));
        assert!(err(Partition::LogNormal(1.0), &[5, 5]).contains("lognormal"));
        assert!(err(Partition::Geo, &[5, 5]).contains("coordinates"));
    }
}
