//! Embeds a fingerprint of the source (`src/**` and `Cargo.lock`) as
//! `FEDTOPO_SOURCE_HASH`, so that stored experiment results computed by
//! different code are recognised as stale (`src/experiment/store.rs`).
//!
//! With `--features train` it also records libtorch's directory (from
//! torch-sys, whose `links = "tch"` passes it as `DEP_TCH_LIBTORCH_LIB`) as
//! the run path of the binaries, tests and benches, so that they start
//! without `LD_LIBRARY_PATH` (`scripts/libtorch.sh` is needed to build them,
//! not to run them).

use std::fs;
use std::path::{Path, PathBuf};

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            files(&p, out);
        } else {
            out.push(p);
        }
    }
}

/// 64-bit FNV-1a.
fn fnv(hash: &mut u64, bytes: &[u8]) {
    for &b in bytes {
        *hash ^= u64::from(b);
        *hash = hash.wrapping_mul(0x100_0000_01b3);
    }
}

fn main() {
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let mut paths = Vec::new();
    files(&root.join("src"), &mut paths);
    paths.push(root.join("Cargo.lock"));
    paths.sort();
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for p in &paths {
        let rel = p.strip_prefix(&root).unwrap_or(p);
        // Path separators normalised so the hash is the same on every OS.
        fnv(
            &mut hash,
            rel.to_string_lossy().replace('\\', "/").as_bytes(),
        );
        fnv(&mut hash, &[0]);
        if let Ok(bytes) = fs::read(p) {
            fnv(&mut hash, &bytes);
        }
        fnv(&mut hash, &[0]);
    }
    println!("cargo:rustc-env=FEDTOPO_SOURCE_HASH={hash:016x}");
    println!("cargo:rerun-if-changed=src");
    println!("cargo:rerun-if-changed=Cargo.lock");
    if let Ok(dir) = std::env::var("DEP_TCH_LIBTORCH_LIB") {
        println!("cargo:rustc-link-arg=-Wl,-rpath,{dir}");
    }
}
