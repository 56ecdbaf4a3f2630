//! A fast, non-cryptographic hasher for the simulator's hot paths: the
//! multiply-rotate hash of Firefox and rustc ("FxHash"), a few cycles per
//! word where the standard library's SipHash takes tens.
//!
//! Keys here are silo indices and round numbers the simulator makes
//! itself, never data an adversary chooses, so the denial-of-service
//! protection SipHash buys is not needed. Iteration order of an
//! [`FxHashMap`] is deterministic (no random seed); callers that report
//! a map's contents still sort them.

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};

/// The FxHash multiplier (`2^64 / golden ratio`, odd).
const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

/// The Fx hasher (module docs).
#[derive(Debug, Default, Clone, Copy)]
pub struct FxHasher {
    hash: u64,
}

impl FxHasher {
    fn add(&mut self, word: u64) {
        self.hash = (self.hash.rotate_left(5) ^ word).wrapping_mul(SEED);
    }
}

impl Hasher for FxHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let mut w = [0u8; 8];
            w.copy_from_slice(c);
            self.add(u64::from_le_bytes(w));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut w = [0u8; 8];
            w[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(w));
        }
    }
    fn write_u8(&mut self, i: u8) {
        self.add(u64::from(i));
    }
    fn write_u16(&mut self, i: u16) {
        self.add(u64::from(i));
    }
    fn write_u32(&mut self, i: u32) {
        self.add(u64::from(i));
    }
    fn write_u64(&mut self, i: u64) {
        self.add(i);
    }
    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }
    fn finish(&self) -> u64 {
        self.hash
    }
}

/// A `HashMap` with [`FxHasher`].
pub type FxHashMap<K, V> = HashMap<K, V, BuildHasherDefault<FxHasher>>;

/// A `HashSet` with [`FxHasher`].
pub type FxHashSet<K> = HashSet<K, BuildHasherDefault<FxHasher>>;

#[cfg(test)]
mod tests {
    use super::*;
    use std::hash::Hash;

    fn hash(x: impl Hash) -> u64 {
        let mut h = FxHasher::default();
        x.hash(&mut h);
        h.finish()
    }

    #[test]
    fn distinct_small_keys_hash_apart_and_maps_work() {
        let mut seen = FxHashSet::default();
        for i in 0..200usize {
            for j in 0..200usize {
                assert!(seen.insert(hash((i, j))), "collision at ({i}, {j})");
            }
        }
        assert_eq!(hash(&b"abcdefghij"[..]), hash(&b"abcdefghij"[..]));
        assert_ne!(hash(&b"abcdefghij"[..]), hash(&b"abcdefghik"[..]));
        let mut m: FxHashMap<(usize, u64), u32> = FxHashMap::default();
        *m.entry((3, 9)).or_insert(0) += 2;
        *m.entry((3, 9)).or_insert(0) += 1;
        assert_eq!(m[&(3, 9)], 3);
        assert_eq!(m.len(), 1);
    }
}
