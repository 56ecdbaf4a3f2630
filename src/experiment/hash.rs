//! The 64-bit FNV-1a hash of job keys (file names of stored results), of
//! stored results (their integrity check) and of experiment files (the
//! fingerprint of an output directory): stable across platforms and Rust
//! versions, unlike `DefaultHasher`. It detects accidents, not forgery.

/// The 64-bit FNV-1a hash of `bytes`.
pub(crate) fn fnv1a64(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

#[cfg(test)]
mod tests {
    #[test]
    fn known_values() {
        // Reference values of the 64-bit FNV-1a hash.
        assert_eq!(super::fnv1a64(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(super::fnv1a64(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(super::fnv1a64(b"foobar"), 0x8594_4171_f739_67e8);
    }
}
