//! Splitting a training pool among silos. Every scheme is seeded and gives
//! each silo at least one example (or a typed error).

use rand::seq::SliceRandom;
use rand::Rng;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, Gamma, LogNormal};

use super::{DataError, Dataset};

/// How examples are assigned to silos.
#[derive(Debug, Clone, PartialEq)]
pub enum Partition {
    /// Uniformly at random, equal sizes (up to one example).
    Iid,
    /// Sort by label, cut into `shards * n` equal shards, `shards` random
    /// shards per silo (McMahan et al.; D-Cliques uses 2).
    Shards(usize),
    /// Every silo holds examples of a single class (silo `i` gets class
    /// `i mod C`; the examples of a class are split among its silos).
    OneClass,
    /// Class proportions per silo drawn from `Dirichlet(alpha)` (Hsu et al. 2019).
    Dirichlet(f64),
    /// Iid labels, silo sizes proportional to `LogNormal(0, sigma)` draws.
    LogNormal(f64),
    /// The paper's geographic split (\[Marfoq20\] Sec. 4): every class has
    /// a home location; half of the examples go to a random silo, the other
    /// half to the silo geographically closest to their class's home.
    Geo,
}

impl Partition {
    /// Parses `iid`, `shards[:K]`, `one-class`, `dirichlet:ALPHA`,
    /// `lognormal[:SIGMA]`, `geo`.
    pub fn parse(text: &str) -> Result<Self, DataError> {
        let t = text.trim().to_ascii_lowercase();
        let (name, arg) = match t.split_once(':') {
            Some((a, b)) => (a.to_string(), Some(b.to_string())),
            None => (t.clone(), None),
        };
        let num = |default: f64| -> Result<f64, DataError> {
            match &arg {
                None => Ok(default),
                Some(a) => a
                    .parse::<f64>()
                    .ok()
                    .filter(|x| x.is_finite() && *x > 0.0)
                    .ok_or_else(|| {
                        DataError::Invalid(format!(
                            "partition `{text}`: `{a}` is not a positive number"
                        ))
                    }),
            }
        };
        Ok(match name.as_str() {
            "iid" => Partition::Iid,
            "shards" => Partition::Shards(num(2.0)? as usize),
            "one-class" | "oneclass" => Partition::OneClass,
            "dirichlet" => Partition::Dirichlet(num(0.5)?),
            "lognormal" => Partition::LogNormal(num(1.0)?),
            "geo" => Partition::Geo,
            _ => {
                return Err(DataError::Invalid(format!(
                    "unknown partition `{text}`; expected iid, shards[:K], one-class, dirichlet:ALPHA, lognormal[:SIGMA], geo"
                )))
            }
        })
    }

    /// Indices of `data` held by each of `n` silos. `positions` are the
    /// silos' `(lat, lon)` in degrees, needed by [`Partition::Geo`].
    pub fn split(
        &self,
        data: &Dataset,
        n: usize,
        positions: Option<&[(f64, f64)]>,
        seed: u64,
    ) -> Result<Vec<Vec<usize>>, DataError> {
        if n == 0 || data.len() < n {
            return Err(DataError::Invalid(format!(
                "cannot split {} examples among {n} silos",
                data.len()
            )));
        }
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut all: Vec<usize> = (0..data.len()).collect();
        let by_class = |data: &Dataset| {
            let mut v = vec![Vec::new(); data.classes];
            for (k, &l) in data.labels.iter().enumerate() {
                v[l as usize].push(k);
            }
            v
        };
        let mut silos = vec![Vec::new(); n];
        match self {
            Partition::Iid => {
                all.shuffle(&mut rng);
                for (k, idx) in all.into_iter().enumerate() {
                    silos[k % n].push(idx);
                }
            }
            Partition::Shards(per) => {
                let per = (*per).max(1);
                let count = per * n;
                if data.len() < count {
                    return Err(DataError::Invalid(format!(
                        "{} examples cannot make {count} shards",
                        data.len()
                    )));
                }
                all.sort_by_key(|&k| (data.labels[k], k));
                let mut order: Vec<usize> = (0..count).collect();
                order.shuffle(&mut rng);
                let size = data.len() / count;
                for (pos, &shard) in order.iter().enumerate() {
                    silos[pos / per].extend_from_slice(&all[shard * size..(shard + 1) * size]);
                }
            }
            Partition::OneClass => {
                let classes = by_class(data);
                for (c, mut members) in classes.into_iter().enumerate() {
                    let owners: Vec<usize> = (0..n).filter(|i| i % data.classes == c).collect();
                    members.shuffle(&mut rng);
                    if owners.is_empty() {
                        continue;
                    }
                    for (k, idx) in members.into_iter().enumerate() {
                        silos[owners[k % owners.len()]].push(idx);
                    }
                }
            }
            Partition::Dirichlet(alpha) => {
                let g = Gamma::new(*alpha, 1.0)
                    .map_err(|e| DataError::Invalid(format!("dirichlet alpha {alpha}: {e}")))?;
                for mut members in by_class(data) {
                    members.shuffle(&mut rng);
                    let w: Vec<f64> = (0..n).map(|_| g.sample(&mut rng) + 1e-12).collect();
                    assign_by_weights(&members, &w, &mut silos);
                }
            }
            Partition::LogNormal(sigma) => {
                let ln = LogNormal::new(0.0, *sigma)
                    .map_err(|e| DataError::Invalid(format!("lognormal sigma {sigma}: {e}")))?;
                all.shuffle(&mut rng);
                let w: Vec<f64> = (0..n).map(|_| ln.sample(&mut rng)).collect();
                assign_by_weights(&all, &w, &mut silos);
            }
            Partition::Geo => {
                let pos = positions.filter(|p| p.len() == n).ok_or_else(|| {
                    DataError::Invalid(
                        "the geo partition needs the coordinates of every silo".into(),
                    )
                })?;
                let homes = geo_homes(pos, data.classes, &mut rng);
                all.shuffle(&mut rng);
                for (k, idx) in all.into_iter().enumerate() {
                    let silo = if k % 2 == 0 {
                        rng.gen_range(0..n)
                    } else {
                        homes[data.labels[idx] as usize]
                    };
                    silos[silo].push(idx);
                }
            }
        }
        rebalance_empty(&mut silos);
        for s in &mut silos {
            s.sort_unstable();
        }
        Ok(silos)
    }
}

/// The home silo of each of `classes` classes for [`Partition::Geo`]: the
/// silo nearest to a random point of the silos' bounding box.
pub(super) fn geo_homes(pos: &[(f64, f64)], classes: usize, rng: &mut ChaCha8Rng) -> Vec<usize> {
    let (lat0, lat1) = bounds(pos.iter().map(|p| p.0));
    let (lon0, lon1) = bounds(pos.iter().map(|p| p.1));
    (0..classes)
        .map(|_| {
            let h = (rng.gen_range(lat0..=lat1), rng.gen_range(lon0..=lon1));
            nearest(pos, h)
        })
        .collect()
}

fn bounds(v: impl Iterator<Item = f64>) -> (f64, f64) {
    v.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| {
        (a.min(x), b.max(x))
    })
}

fn nearest(pos: &[(f64, f64)], p: (f64, f64)) -> usize {
    // Equirectangular distance is enough to pick the closest silo.
    let d = |q: &(f64, f64)| {
        let x = (q.1 - p.1) * ((q.0 + p.0) / 2.0).to_radians().cos();
        let y = q.0 - p.0;
        x * x + y * y
    };
    (0..pos.len())
        .min_by(|&a, &b| d(&pos[a]).total_cmp(&d(&pos[b])))
        .expect("at least one silo")
}

/// `m` split in proportion to the weights `w` (largest remainders; the
/// counts add up to `m`, zero weights get 0 when some weight is > 0).
pub(super) fn counts_by_weights(w: &[f64], m: usize) -> Vec<usize> {
    let total: f64 = w.iter().sum();
    let exact: Vec<f64> = w.iter().map(|x| x / total * m as f64).collect();
    let mut counts: Vec<usize> = exact.iter().map(|x| x.floor() as usize).collect();
    let mut rest: Vec<usize> = (0..w.len()).collect();
    rest.sort_by(|&a, &b| (exact[b] - exact[b].floor()).total_cmp(&(exact[a] - exact[a].floor())));
    let left = m - counts.iter().sum::<usize>();
    for &i in rest.iter().take(left) {
        counts[i] += 1;
    }
    counts
}

/// Deals `members` to silos in proportion to `w` (largest remainders).
fn assign_by_weights(members: &[usize], w: &[f64], silos: &mut [Vec<usize>]) {
    let counts = counts_by_weights(w, members.len());
    let mut start = 0;
    for (i, c) in counts.into_iter().enumerate() {
        silos[i].extend_from_slice(&members[start..start + c]);
        start += c;
    }
}

/// Gives every empty silo one example from the largest silo.
fn rebalance_empty(silos: &mut [Vec<usize>]) {
    while let Some(e) = silos.iter().position(Vec::is_empty) {
        let big = (0..silos.len())
            .max_by_key(|&i| silos[i].len())
            .expect("non-empty");
        let x = silos[big].pop().expect("total >= silos");
        silos[e].push(x);
    }
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

    fn check_cover(s: &[Vec<usize>], total: usize) {
        let mut all: Vec<usize> = s.iter().flatten().copied().collect();
        all.sort_unstable();
        assert_eq!(
            all,
            (0..total).collect::<Vec<_>>(),
            "every example exactly once"
        );
        assert!(s.iter().all(|x| !x.is_empty()));
    }

    #[test]
    fn all_partitions_cover_and_are_seeded() {
        let d = toy(1000, 10);
        let pos: Vec<(f64, f64)> = (0..20)
            .map(|i| (30.0 + i as f64, -120.0 + 3.0 * i as f64))
            .collect();
        for p in [
            "iid",
            "shards",
            "one-class",
            "dirichlet:0.3",
            "lognormal:1.5",
            "geo",
        ] {
            let part = Partition::parse(p).unwrap();
            let a = part.split(&d, 20, Some(&pos), 3).unwrap();
            check_cover(&a, 1000);
            assert_eq!(a, part.split(&d, 20, Some(&pos), 3).unwrap(), "{p}");
        }
    }

    #[test]
    fn label_skew_is_as_specified() {
        let d = toy(1000, 10);
        let classes_of = |s: &Vec<usize>| {
            let mut c: Vec<i64> = s.iter().map(|&k| d.labels[k]).collect();
            c.sort_unstable();
            c.dedup();
            c.len()
        };
        let one = Partition::OneClass.split(&d, 20, None, 1).unwrap();
        assert!(one.iter().all(|s| classes_of(s) == 1));
        let shards = Partition::Shards(2).split(&d, 20, None, 1).unwrap();
        assert!(shards.iter().all(|s| s.len() == 50 && classes_of(s) <= 2));
        let iid = Partition::Iid.split(&d, 10, None, 1).unwrap();
        assert!(iid.iter().all(|s| s.len() == 100 && classes_of(s) >= 8));
        assert!(Partition::Geo.split(&d, 20, None, 1).is_err());
        assert!(Partition::Iid.split(&toy(3, 2), 5, None, 1).is_err());
        assert!(Partition::parse("dirichlet:-1").is_err());
    }
}
