//! delta-MBST on the Topology Zoo (issue 24, item 8): every Zoo file that
//! loads by default builds a delta-MBST overlay that is a spanning tree of
//! its silos, and every file that does not load is refused with an error
//! naming it. Speed is measured in `benches/overlays.rs`
//! (`delta-mbst-zoo`), not here.

mod common;

use common::fedtopo;
use std::collections::BTreeMap;

/// `(nodes, edges)` of a GML overlay file as written by `fedtopo overlay`
/// (`node [ id N ... ]`, `edge [ source S target T ... ]`).
fn read_gml(text: &str) -> (usize, Vec<(usize, usize)>) {
    let mut nodes = 0;
    let mut edges = Vec::new();
    let mut source = None;
    for line in text.lines().map(str::trim) {
        if line.starts_with("node [") {
            nodes += 1;
        } else if let Some(s) = line.strip_prefix("source ") {
            source = s.parse::<usize>().ok();
        } else if let Some(t) = line.strip_prefix("target ") {
            let t = t.parse::<usize>().expect("target id");
            edges.push((source.take().expect("source before target"), t));
        }
    }
    (nodes, edges)
}

/// Whether the arcs form a spanning tree of `0..n` in both directions: each
/// undirected edge twice (once per direction), `n - 1` edges, connected.
fn is_spanning_tree(n: usize, arcs: &[(usize, usize)]) -> bool {
    let mut count: BTreeMap<(usize, usize), usize> = BTreeMap::new();
    for &(u, v) in arcs {
        *count.entry((u.min(v), u.max(v))).or_default() += 1;
    }
    if count.len() + 1 != n || count.values().any(|&c| c != 2) {
        return false;
    }
    let mut comp: Vec<usize> = (0..n).collect();
    fn find(c: &mut [usize], x: usize) -> usize {
        let mut r = x;
        while c[r] != r {
            r = c[r];
        }
        c[x] = r;
        r
    }
    count.keys().all(|&(u, v)| {
        if u >= n || v >= n {
            return false;
        }
        let (a, b) = (find(&mut comp, u), find(&mut comp, v));
        comp[a] = b;
        a != b
    })
}

#[test]
fn every_zoo_file_that_loads_builds_a_delta_mbst_spanning_tree() {
    let Some(shared) =
        common::shared_dir("every_zoo_file_that_loads_builds_a_delta_mbst_spanning_tree")
    else {
        eprintln!("Topology Zoo corpus not found (set FEDTOPO_SHARED): test skipped");
        return;
    };
    let zoo = shared.join("underlays/topology-zoo");
    let mut files: Vec<_> = std::fs::read_dir(&zoo)
        .expect("topology-zoo folder")
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "gml"))
        .collect();
    files.sort();
    let dir = std::env::temp_dir().join(format!("fedtopo-zoo-mbst-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let out = dir.join("overlay.gml");
    let out = out.to_str().expect("utf-8 temp path");
    let (mut built, mut refused) = (0, 0);
    for f in &files {
        let path = f.to_str().expect("utf-8 path");
        let name = f.file_name().and_then(|n| n.to_str()).unwrap_or_default();
        let o = fedtopo(&["overlay", "delta-mbst", path, "-o", out]);
        let err = String::from_utf8_lossy(&o.stderr);
        match o.status.code() {
            Some(0) => {
                let text = std::fs::read_to_string(out).expect("overlay written");
                let (n, arcs) = read_gml(&text);
                assert!(n >= 2, "{name}: {n} silos");
                assert!(
                    is_spanning_tree(n, &arcs),
                    "{name}: the delta-MBST overlay is not a spanning tree ({n} silos, {} arcs)",
                    arcs.len()
                );
                built += 1;
            }
            Some(2) => {
                // Not loadable by default: the loader refuses it too, naming
                // the file.
                let info = fedtopo(&["underlay", "info", path]);
                assert_eq!(
                    info.status.code(),
                    Some(2),
                    "{name}: overlay failed but the file loads\n{err}"
                );
                assert!(err.contains(name), "{name}: {err}");
                refused += 1;
            }
            c => panic!("{name}: exit {c:?}\n{err}"),
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    eprintln!("Topology Zoo: delta-MBST built on {built} files, {refused} refused at loading");
    assert!(built > 200, "only {built} Zoo files built delta-MBST");
}
