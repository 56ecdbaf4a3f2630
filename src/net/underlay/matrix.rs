//! Measured connectivity as the network: a site x site latency matrix CSV
//! (and optionally a bandwidth matrix), for users who measured their sites
//! (cloud inter-region round-trip times, ping meshes) instead of knowing
//! the routers between them.
//!
//! ```text
//! Source,Paris,Frankfurt,Virginia
//! Paris,,9,80
//! Frankfurt,10,,88
//! Virginia,79,,          <- a gap: Virginia -> Frankfurt was not measured
//! ```
//!
//! * The first row names the destinations (its first cell is free text,
//!   e.g. `Source`); every other row is one source: its label, then one
//!   cell per destination. Rows and columns are matched **by label**, not
//!   by position; a site may appear only as a row or only as a column (its
//!   other direction then comes from the gap policy). Sites are the row
//!   labels in file order, then the column-only ones.
//! * A cell is the time from the row's site to the column's site in **ms**:
//!   a round-trip time (what ping and cloud latency tables report) under
//!   [`MatrixValues::Rtt`], the default, halved to the one-way latency
//!   `l(i,j)` of \[Marfoq20\] eq. (3); or the one-way latency itself under
//!   [`MatrixValues::OneWay`]. `l(i,j)` is used as measured: no per-path
//!   constant is added (the paper's `4 ms` is part of its distance model).
//!   Diagonal cells are ignored (a site's latency to itself is 0).
//! * Empty cells (or `-`, `NA`, `N/A`, `null`, any case) are gaps, handled
//!   by [`MatrixGaps`] and reported, never silently: `reverse` (the
//!   default) fills `(i,j)` from a measured `(j,i)` and refuses the file if
//!   gaps remain; `path` then fills each remaining one with the shortest
//!   path through measured (and reverse-filled) pairs; `drop` then drops
//!   sites, the one with most gaps first, until none remain; `refuse`
//!   refuses any gap.
//! * A bandwidth matrix (same layout, cells as `10G`, `500Mbps`, `1e9` in
//!   bit/s) gives the available bandwidth `A(i,j)` of eq. (3); its labels
//!   must be the latency matrix's sites; its gaps follow the same policy
//!   (`path`: the widest path's bottleneck). Without one, every pair gets
//!   the default core capacity (`--default-core-capacity`, or
//!   `--core-capacity` when given).
//!
//! The result is an [`Underlay`] whose routers are the sites (no
//! coordinates) and whose links join every pair (link `(a, b)`, `a < b`,
//! length `l / 0.0085 ms/km` for display only) with the matrices in
//! [`Underlay::measured`]; [`crate::net::connectivity::Connectivity`] reads
//! `l(i,j)` and `A(i,j)` from there, and each pair is its own route (the
//! flow model gives each direction of a pair its own resource of capacity
//! `A(i,j)`: measurements say nothing about shared links).

use std::collections::{BinaryHeap, HashMap};
use std::path::Path;

use serde::Serialize;

use crate::csv_file::{read_bounded, record_error, CsvFileError};
use crate::units::{parse_bandwidth, BitsPerSec, Ms};

use super::{
    CapacitySource, CoreLink, LengthSource, LoadOptions, LoadReport, Router, Underlay,
    UnderlayError,
};

/// Most sites a matrix may have (links and tables grow as sites squared).
pub const MAX_MATRIX_SITES: usize = 2000;

/// Milliseconds per km used to show a measured latency as a link length
/// (the paper's propagation constant; display only).
const MS_PER_KM: f64 = 0.0085;

/// What a latency matrix's cells are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum MatrixValues {
    /// Round-trip times, ms: `l(i,j) = cell / 2`.
    #[default]
    Rtt,
    /// One-way latencies, ms: `l(i,j) = cell`.
    OneWay,
}

impl MatrixValues {
    /// Every reading, in documentation order.
    pub const ALL: [MatrixValues; 2] = [MatrixValues::Rtt, MatrixValues::OneWay];

    /// The name the CLI and experiment files use.
    pub fn name(self) -> &'static str {
        match self {
            MatrixValues::Rtt => "rtt",
            MatrixValues::OneWay => "one-way",
        }
    }
}

impl std::str::FromStr for MatrixValues {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        MatrixValues::ALL
            .into_iter()
            .find(|v| v.name() == s.trim())
            .ok_or_else(|| format!("matrix values `{s}`: expected rtt or one-way"))
    }
}

/// What to do with empty cells of a matrix.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MatrixGaps {
    /// Refuse the file at any gap.
    Refuse,
    /// Fill `(i,j)` from a measured `(j,i)` (paths assumed symmetric);
    /// refuse the file if gaps remain.
    #[default]
    Reverse,
    /// As `Reverse`, then fill each remaining gap with the shortest path
    /// through known pairs (bandwidth: the widest path's bottleneck), as an
    /// approximation.
    Path,
    /// As `Reverse`, then drop sites (most gaps first) until none remain.
    Drop,
}

impl MatrixGaps {
    /// Every policy, in documentation order.
    pub const ALL: [MatrixGaps; 4] = [
        MatrixGaps::Refuse,
        MatrixGaps::Reverse,
        MatrixGaps::Path,
        MatrixGaps::Drop,
    ];

    /// The name the CLI and experiment files use.
    pub fn name(self) -> &'static str {
        match self {
            MatrixGaps::Refuse => "refuse",
            MatrixGaps::Reverse => "reverse",
            MatrixGaps::Path => "path",
            MatrixGaps::Drop => "drop",
        }
    }
}

impl std::str::FromStr for MatrixGaps {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        MatrixGaps::ALL
            .into_iter()
            .find(|v| v.name() == s.trim())
            .ok_or_else(|| format!("matrix gaps `{s}`: expected refuse, reverse, path or drop"))
    }
}

/// The measured pairs of an underlay read from matrices: dense site x site
/// tables, row-major (`i * n + j`).
#[derive(Debug, Clone, PartialEq)]
pub struct MeasuredPairs {
    /// Number of sites.
    pub n: usize,
    /// One-way latency `l(i,j)`, ms (0 on the diagonal).
    pub latency_ms: Vec<Ms>,
    /// Available bandwidth `A(i,j)`, bit/s (infinite on the diagonal).
    pub bandwidth_bps: Vec<BitsPerSec>,
    /// Whether `bandwidth_bps` comes from a bandwidth matrix (else every
    /// pair has the default core capacity, which `--core-capacity` overrides).
    pub bandwidth_measured: bool,
}

impl MeasuredPairs {
    /// One-way latency from site `a` to site `b`, ms.
    pub fn latency(&self, a: usize, b: usize) -> Ms {
        self.latency_ms[a * self.n + b]
    }

    /// Index of the underlay link joining sites `a != b` (links are every
    /// pair `(a, b)`, `a < b`, in lexicographic order).
    pub fn link_index(&self, a: usize, b: usize) -> usize {
        let (a, b) = if a < b { (a, b) } else { (b, a) };
        a * self.n - a * (a + 1) / 2 + (b - a - 1)
    }
}

/// A matrix read from a file: labels and cells (`None`: a gap).
struct Grid {
    labels: Vec<String>,
    cells: Vec<Option<f64>>,
    /// Labels only in the header (no row), only in rows (no column).
    column_only: Vec<String>,
    row_only: Vec<String>,
    diagonal_ignored: usize,
}

fn is_gap(cell: &str) -> bool {
    let c = cell.trim();
    c.is_empty() || ["-", "na", "n/a", "null", "nan"].contains(&c.to_ascii_lowercase().as_str())
}

/// Reads a matrix: `parse` turns a non-gap cell into a value or says what
/// it expected. `sites`: the labels the matrix must use (a bandwidth matrix
/// must name the latency matrix's sites), or `None` for a latency matrix.
fn read_grid(
    text: &str,
    source: &str,
    parse: &dyn Fn(&str) -> Result<f64, String>,
    sites: Option<&[String]>,
) -> Result<Grid, CsvFileError> {
    let err = |line: u64, message: String| record_error(source, line, message);
    let mut records = csv::ReaderBuilder::new()
        .trim(csv::Trim::All)
        .comment(Some(b'#'))
        .has_headers(false)
        .flexible(true)
        .from_reader(text.as_bytes());
    let mut rows = records.records();
    let header = match rows.next() {
        Some(r) => r.map_err(|e| err(1, e.to_string()))?,
        None => {
            return Err(err(
                1,
                "expected a header row of destination labels, found an empty file".into(),
            ))
        }
    };
    let header_line = header.position().map_or(1, |p| p.line());
    let columns: Vec<String> = header.iter().skip(1).map(str::to_string).collect();
    if columns.is_empty() {
        return Err(err(
            header_line,
            "expected a header `Source,SITE,SITE,...` naming the destinations".into(),
        ));
    }
    if columns.len() > MAX_MATRIX_SITES {
        return Err(err(
            header_line,
            format!(
                "{} columns: at most {MAX_MATRIX_SITES} sites",
                columns.len()
            ),
        ));
    }
    let mut col_index: HashMap<&str, usize> = HashMap::new();
    for (k, c) in columns.iter().enumerate() {
        if c.is_empty() {
            return Err(err(
                header_line,
                format!(
                    "column {}: expected a site label, found an empty cell",
                    k + 2
                ),
            ));
        }
        if col_index.insert(c.as_str(), k).is_some() {
            return Err(err(
                header_line,
                format!("expected unique destination labels, found `{c}` twice"),
            ));
        }
    }
    let mut row_labels: Vec<String> = Vec::new();
    let mut row_cells: Vec<(u64, Vec<Option<f64>>)> = Vec::new();
    for record in rows {
        let record =
            record.map_err(|e| err(e.position().map_or(0, |p| p.line()), e.to_string()))?;
        let line = record.position().map_or(0, |p| p.line());
        let label = record.get(0).unwrap_or("").to_string();
        if label.is_empty() {
            return Err(err(
                line,
                "expected the source site's label in the first cell, found none".into(),
            ));
        }
        if record.len() != columns.len() + 1 {
            return Err(err(
                line,
                format!(
                    "expected {} cells (the label and one per destination), found {}",
                    columns.len() + 1,
                    record.len()
                ),
            ));
        }
        if row_labels.contains(&label) {
            return Err(err(
                line,
                format!("expected one row per source, found `{label}` again"),
            ));
        }
        let mut cells = Vec::with_capacity(columns.len());
        for (k, cell) in record.iter().skip(1).enumerate() {
            cells.push(if is_gap(cell) {
                None
            } else {
                Some(
                    parse(cell)
                        .map_err(|e| err(line, format!("`{label}` -> `{}`: {e}", columns[k])))?,
                )
            });
        }
        row_labels.push(label);
        row_cells.push((line, cells));
        if row_labels.len() > MAX_MATRIX_SITES {
            return Err(err(
                line,
                format!("more than {MAX_MATRIX_SITES} rows: at most {MAX_MATRIX_SITES} sites"),
            ));
        }
    }
    if row_labels.is_empty() {
        return Err(err(
            header_line + 1,
            "expected one row per source site, found none".into(),
        ));
    }
    let mut labels: Vec<String> = match sites {
        Some(s) => s.to_vec(),
        None => row_labels.clone(),
    };
    let column_only: Vec<String> = columns
        .iter()
        .filter(|c| !row_labels.contains(c))
        .cloned()
        .collect();
    let row_only: Vec<String> = row_labels
        .iter()
        .filter(|r| !col_index.contains_key(r.as_str()))
        .cloned()
        .collect();
    match sites {
        None => labels.extend(column_only.iter().cloned()),
        Some(s) => {
            if let Some(bad) = row_labels.iter().chain(&columns).find(|l| !s.contains(l)) {
                return Err(err(
                    header_line,
                    format!(
                        "`{bad}` is not a site of the latency matrix (sites: {})",
                        s.join(", ")
                    ),
                ));
            }
        }
    }
    if labels.len() > MAX_MATRIX_SITES {
        return Err(err(
            header_line,
            format!("{} sites: at most {MAX_MATRIX_SITES}", labels.len()),
        ));
    }
    let n = labels.len();
    let index: HashMap<&str, usize> = labels
        .iter()
        .enumerate()
        .map(|(i, l)| (l.as_str(), i))
        .collect();
    let mut cells = vec![None; n * n];
    let mut diagonal_ignored = 0;
    for (r, (_, row)) in row_labels.iter().zip(&row_cells) {
        let i = index[r.as_str()];
        for (k, v) in row.iter().enumerate() {
            let j = index[columns[k].as_str()];
            if i == j {
                diagonal_ignored += usize::from(v.is_some_and(|x| x != 0.0));
                continue;
            }
            cells[i * n + j] = *v;
        }
    }
    Ok(Grid {
        labels,
        cells,
        column_only,
        row_only,
        diagonal_ignored,
    })
}

/// How the gaps of one matrix were filled, for the report.
#[derive(Default)]
struct Filled {
    reverse: Vec<(usize, usize)>,
    path: Vec<(usize, usize, Vec<usize>)>,
}

/// The gaps `(i, j)`, `i != j`, of `cells` among the kept sites.
fn gaps(cells: &[Option<f64>], n: usize, keep: &[bool]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    for i in (0..n).filter(|&i| keep[i]) {
        for j in (0..n).filter(|&j| keep[j] && j != i) {
            if cells[i * n + j].is_none() {
                out.push((i, j));
            }
        }
    }
    out
}

/// Fills gaps from the reverse direction.
fn fill_reverse(cells: &mut [Option<f64>], n: usize, keep: &[bool], filled: &mut Filled) {
    for (i, j) in gaps(cells, n, keep) {
        if let Some(v) = cells[j * n + i] {
            cells[i * n + j] = Some(v);
            filled.reverse.push((i, j));
        }
    }
}

/// Fills the remaining gaps with the best path through known pairs: the
/// least sum (`widest = false`, latencies) or the largest bottleneck
/// (`widest = true`, bandwidths). Known pairs are the cells before this
/// step; Dijkstra from every source that has a gap.
fn fill_paths(
    cells: &mut [Option<f64>],
    n: usize,
    keep: &[bool],
    widest: bool,
    filled: &mut Filled,
) {
    let known: Vec<Option<f64>> = cells.to_vec();
    let todo = gaps(cells, n, keep);
    let mut sources: Vec<usize> = todo.iter().map(|g| g.0).collect();
    sources.dedup();
    for s in sources {
        // Best value and predecessor per site.
        let worst = if widest { 0.0 } else { f64::INFINITY };
        let mut best = vec![worst; n];
        let mut pred = vec![usize::MAX; n];
        let mut done = vec![false; n];
        best[s] = if widest { f64::INFINITY } else { 0.0 };
        let mut heap = BinaryHeap::new();
        heap.push(HeapItem {
            key: if widest { best[s] } else { -best[s] },
            site: s,
        });
        while let Some(HeapItem { site: u, .. }) = heap.pop() {
            if done[u] {
                continue;
            }
            done[u] = true;
            for v in (0..n).filter(|&v| keep[v] && v != u && !done[v]) {
                let Some(w) = known[u * n + v] else { continue };
                let cand = if widest { best[u].min(w) } else { best[u] + w };
                let better = if widest {
                    cand > best[v]
                } else {
                    cand < best[v]
                };
                if better {
                    best[v] = cand;
                    pred[v] = u;
                    heap.push(HeapItem {
                        key: if widest { cand } else { -cand },
                        site: v,
                    });
                }
            }
        }
        for &(i, j) in todo.iter().filter(|g| g.0 == s) {
            if pred[j] == usize::MAX {
                continue;
            }
            cells[i * n + j] = Some(best[j]);
            let mut relays = Vec::new();
            let mut v = pred[j];
            while v != s {
                relays.push(v);
                v = pred[v];
            }
            relays.reverse();
            filled.path.push((i, j, relays));
        }
    }
}

#[derive(PartialEq)]
struct HeapItem {
    key: f64,
    site: usize,
}
impl Eq for HeapItem {}
impl PartialOrd for HeapItem {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for HeapItem {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        self.key.total_cmp(&o.key).then(o.site.cmp(&self.site))
    }
}

/// Drops sites with gaps, the one with most gaps first (ties: the later
/// site), until none remain; returns the dropped sites in order.
fn drop_sites(cells: &[Option<f64>], n: usize, keep: &mut [bool]) -> Vec<usize> {
    let mut dropped = Vec::new();
    loop {
        let g = gaps(cells, n, keep);
        if g.is_empty() {
            return dropped;
        }
        let mut count = vec![0usize; n];
        for (i, j) in g {
            count[i] += 1;
            count[j] += 1;
        }
        let worst = (0..n)
            .filter(|&i| keep[i])
            .max_by_key(|&i| (count[i], i))
            .unwrap_or(0);
        keep[worst] = false;
        dropped.push(worst);
    }
}

/// `a -> b` pairs named by label, at most `limit`, then how many more.
fn name_pairs(pairs: &[(usize, usize)], labels: &[String], limit: usize) -> String {
    let mut s: Vec<String> = pairs
        .iter()
        .take(limit)
        .map(|&(i, j)| format!("{} -> {}", labels[i], labels[j]))
        .collect();
    if pairs.len() > limit {
        s.push(format!("and {} more", pairs.len() - limit));
    }
    s.join(", ")
}

/// Per site, how many filled pairs touch it, most first: `A (12), B (3)`.
fn per_site(pairs: impl Iterator<Item = (usize, usize)>, labels: &[String]) -> String {
    let mut count: Vec<(usize, usize)> = vec![(0, 0); labels.len()];
    for (i, j) in pairs {
        count[i].0 += 1;
        count[j].0 += 1;
    }
    for (k, c) in count.iter_mut().enumerate() {
        c.1 = k;
    }
    count.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    count
        .iter()
        .filter(|c| c.0 > 0)
        .map(|c| format!("{} ({})", labels[c.1], c.0))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Applies the gap policy to one matrix; `what` names it in messages.
#[allow(clippy::too_many_arguments)]
fn handle_gaps(
    cells: &mut [Option<f64>],
    n: usize,
    keep: &mut [bool],
    labels: &[String],
    policy: MatrixGaps,
    widest: bool,
    what: &str,
    source: &str,
    notes: &mut Vec<String>,
) -> Result<(), UnderlayError> {
    let refuse = |g: &[(usize, usize)], how: &str| {
        UnderlayError::Matrix {
        file: source.to_string(),
        message: format!(
                "{} gap(s) in the {what} matrix{how}: {}; choose a gap policy: --matrix-gaps reverse \
                 (fill from the reverse direction), path (the shortest path through measured pairs, \
                 an approximation) or drop (drop the sites with gaps), or measure them",
                g.len(),
                name_pairs(g, labels, 12)
            ),
    }
    };
    let initial = gaps(cells, n, keep);
    if initial.is_empty() {
        return Ok(());
    }
    if policy == MatrixGaps::Refuse {
        return Err(refuse(&initial, " (--matrix-gaps refuse)"));
    }
    let mut filled = Filled::default();
    fill_reverse(cells, n, keep, &mut filled);
    if !filled.reverse.is_empty() {
        notes.push(format!(
            "{what} matrix: {} gap(s) filled from the reverse direction (the path assumed symmetric): {}",
            filled.reverse.len(),
            name_pairs(&filled.reverse, labels, 12)
        ));
    }
    let left = gaps(cells, n, keep);
    if left.is_empty() {
        return Ok(());
    }
    match policy {
        MatrixGaps::Refuse | MatrixGaps::Reverse => {
            Err(refuse(&left, " with no measurement in either direction"))
        }
        MatrixGaps::Path => {
            fill_paths(cells, n, keep, widest, &mut filled);
            let how = if widest {
                "the bottleneck of the widest path through known pairs"
            } else {
                "the shortest path through known pairs (an approximation: real routes may be shorter or longer)"
            };
            let examples: Vec<String> = filled
                .path
                .iter()
                .take(6)
                .map(|(i, j, relays)| {
                    let via: Vec<&str> = relays.iter().map(|&r| labels[r].as_str()).collect();
                    format!(
                        "{} -> {} = {:.1} via {}",
                        labels[*i],
                        labels[*j],
                        cells[i * n + j].unwrap_or(f64::NAN),
                        via.join(", ")
                    )
                })
                .collect();
            notes.push(format!(
                "{what} matrix: {} gap(s) filled with {how}, by site: {}; e.g. {}",
                filled.path.len(),
                per_site(filled.path.iter().map(|p| (p.0, p.1)), labels),
                examples.join("; ")
            ));
            let still = gaps(cells, n, keep);
            if still.is_empty() {
                Ok(())
            } else {
                Err(refuse(&still, " that no path through known pairs reaches"))
            }
        }
        MatrixGaps::Drop => {
            let dropped = drop_sites(cells, n, keep);
            let names: Vec<&str> = dropped.iter().map(|&d| labels[d].as_str()).collect();
            notes.push(format!(
                "{what} matrix: dropped {} site(s) with unmeasured pairs (--matrix-gaps drop), most gaps first: {}",
                dropped.len(),
                names.join(", ")
            ));
            Ok(())
        }
    }
}

/// Reads the latency matrix `path` (and `opts.bandwidth_matrix`) into an
/// underlay under the matrix policies of `opts`.
pub fn load(path: &Path, opts: &LoadOptions) -> Result<Underlay, UnderlayError> {
    let text = read_bounded(path)?;
    let bandwidth = match &opts.bandwidth_matrix {
        Some(p) => Some((read_bounded(p)?, p.display().to_string())),
        None => None,
    };
    from_csv_str(
        &text,
        &path.display().to_string(),
        bandwidth.as_ref().map(|(t, s)| (t.as_str(), s.as_str())),
        opts,
    )
}

/// As [`load`], from texts; `source` names the latency matrix (its file
/// stem becomes the underlay's name), `bandwidth` is `(text, source)`.
pub fn from_csv_str(
    text: &str,
    source: &str,
    bandwidth: Option<(&str, &str)>,
    opts: &LoadOptions,
) -> Result<Underlay, UnderlayError> {
    let latency = |cell: &str| -> Result<f64, String> {
        match cell.trim().parse::<f64>() {
            Ok(v) if v.is_finite() && v >= 0.0 => Ok(v),
            _ => Err(format!("expected a time in ms >= 0, found `{cell}`")),
        }
    };
    let mut grid = read_grid(text, source, &latency, None)?;
    let labels = grid.labels.clone();
    let n = labels.len();
    if n < 2 {
        return Err(
            record_error(source, 1, format!("expected at least 2 sites, found {n}")).into(),
        );
    }
    let mut notes = vec![format!(
        "latency matrix {source}: {n} sites; cells read as {} in ms, so l(i,j) = {} (no per-path constant added)",
        match opts.matrix_values {
            MatrixValues::Rtt => "round-trip times",
            MatrixValues::OneWay => "one-way latencies",
        },
        match opts.matrix_values {
            MatrixValues::Rtt => "cell / 2 (--matrix-values rtt; one-way for one-way latencies)",
            MatrixValues::OneWay => "cell (--matrix-values one-way)",
        }
    )];
    if !grid.column_only.is_empty() {
        notes.push(format!(
            "latency matrix: {} site(s) only as a column (no row, so no measurement from them): {}",
            grid.column_only.len(),
            grid.column_only.join(", ")
        ));
    }
    if !grid.row_only.is_empty() {
        notes.push(format!(
            "latency matrix: {} site(s) only as a row (no column, so no measurement to them): {}",
            grid.row_only.len(),
            grid.row_only.join(", ")
        ));
    }
    if grid.diagonal_ignored > 0 {
        notes.push(format!(
            "latency matrix: {} non-zero diagonal cell(s) ignored (a silo's latency to itself is 0)",
            grid.diagonal_ignored
        ));
    }
    let mut keep = vec![true; n];
    handle_gaps(
        &mut grid.cells,
        n,
        &mut keep,
        &labels,
        opts.matrix_gaps,
        false,
        "latency",
        source,
        &mut notes,
    )?;
    let mut bw_cells: Option<Vec<Option<f64>>> = None;
    if let Some((bw_text, bw_source)) = bandwidth {
        let parse = |cell: &str| -> Result<f64, String> {
            match parse_bandwidth(cell) {
                Ok(v) if v.is_finite() && v >= crate::units::MIN_CAPACITY_BPS => Ok(v),
                _ => Err(format!("expected a bandwidth of at least 1 bit/s such as 10G, 500Mbps or 1e9, found `{cell}`")),
            }
        };
        let mut g = read_grid(bw_text, bw_source, &parse, Some(&labels))?;
        handle_gaps(
            &mut g.cells,
            n,
            &mut keep,
            &labels,
            opts.matrix_gaps,
            true,
            "bandwidth",
            bw_source,
            &mut notes,
        )?;
        bw_cells = Some(g.cells);
    } else {
        notes.push(format!(
            "no bandwidth matrix: every pair's available bandwidth A(i,j) is the default core capacity ({} bit/s; --default-core-capacity, or --core-capacity)",
            opts.default_capacity_bps
        ));
    }
    // The kept sites, renumbered.
    let kept: Vec<usize> = (0..n).filter(|&i| keep[i]).collect();
    if kept.len() < 2 {
        return Err(UnderlayError::Matrix {
            file: source.to_string(),
            message: format!(
                "only {} site(s) left after dropping those with gaps",
                kept.len()
            ),
        });
    }
    let m = kept.len();
    let half = match opts.matrix_values {
        MatrixValues::Rtt => 0.5,
        MatrixValues::OneWay => 1.0,
    };
    let mut latency_ms = vec![0.0; m * m];
    let mut bandwidth_bps = vec![f64::INFINITY; m * m];
    for (a, &i) in kept.iter().enumerate() {
        for (b, &j) in kept.iter().enumerate() {
            if a == b {
                continue;
            }
            latency_ms[a * m + b] = grid.cells[i * n + j].unwrap_or(f64::NAN) * half;
            bandwidth_bps[a * m + b] = match &bw_cells {
                Some(c) => c[i * n + j].unwrap_or(f64::NAN),
                None => opts.default_capacity_bps,
            };
        }
    }
    let routers: Vec<Router> = kept
        .iter()
        .enumerate()
        .map(|(a, &i)| Router {
            gml_id: a as i64,
            label: labels[i].clone(),
            lat_lon: None,
        })
        .collect();
    let mut links = Vec::with_capacity(m * (m - 1) / 2);
    for a in 0..m {
        for b in a + 1..m {
            let l = latency_ms[a * m + b].min(latency_ms[b * m + a]);
            links.push(CoreLink {
                a,
                b,
                length_km: l / MS_PER_KM,
                capacity_bps: bandwidth_bps[a * m + b].min(bandwidth_bps[b * m + a]),
                length_source: LengthSource::Measured,
                capacity_source: if bw_cells.is_some() {
                    CapacitySource::Measured
                } else {
                    CapacitySource::Default
                },
            });
        }
    }
    notes.push(
        "links join every pair of sites; their km figures are the smaller one-way latency / 0.0085 ms/km, for display only (timing uses the matrix)".into(),
    );
    Ok(Underlay {
        name: super::build::stem(source),
        routers,
        links,
        directed_source: false,
        report: LoadReport {
            notes,
            ..LoadReport::default()
        },
        measured: Some(std::sync::Arc::new(MeasuredPairs {
            n: m,
            latency_ms,
            bandwidth_bps,
            bandwidth_measured: bw_cells.is_some(),
        })),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(gaps: MatrixGaps) -> LoadOptions {
        LoadOptions {
            matrix_gaps: gaps,
            ..LoadOptions::default()
        }
    }

    const M: &str = "Source,A,B,C\nA,,10,20\nB,12,,\nC,,40,\n";

    #[test]
    fn rtt_halved_reverse_fill_and_refusal_named() {
        // Gaps B -> C and C -> A: C -> A from A -> C (20), B -> C from C -> B (40).
        let u = from_csv_str(M, "m.csv", None, &opts(MatrixGaps::Reverse)).unwrap();
        let m = u.measured.as_ref().unwrap();
        assert_eq!(u.name, "m");
        assert_eq!((m.latency(0, 1), m.latency(1, 0)), (5.0, 6.0));
        assert_eq!((m.latency(2, 0), m.latency(1, 2)), (10.0, 20.0));
        assert_eq!(u.link_count(), 3);
        assert!(u
            .report
            .notes
            .iter()
            .any(|n| n.contains("2 gap(s) filled from the reverse")));
        let e = from_csv_str(M, "m.csv", None, &opts(MatrixGaps::Refuse))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("2 gap(s)") && e.contains("B -> C, C -> A"),
            "{e}"
        );
        let one_way = LoadOptions {
            matrix_values: MatrixValues::OneWay,
            ..LoadOptions::default()
        };
        let u = from_csv_str(M, "m.csv", None, &one_way).unwrap();
        assert_eq!(u.measured.as_ref().unwrap().latency(0, 1), 10.0);
    }

    #[test]
    fn path_fill_is_the_shortest_relay_and_drop_drops_the_worst_site() {
        // D only as a row, measured to A only: D's other pairs are gaps.
        let m = "S,A,B,C\nA,,10,100\nB,10,,10\nC,100,10,\nD,1,,\n";
        assert!(from_csv_str(m, "m.csv", None, &opts(MatrixGaps::Reverse)).is_err());
        let u = from_csv_str(m, "m.csv", None, &opts(MatrixGaps::Path)).unwrap();
        let p = u.measured.as_ref().unwrap();
        // D -> C: D -> A -> B -> C = 1 + 10 + 10 = 21 ms RTT, 10.5 one-way.
        assert_eq!(p.latency(3, 2), 10.5);
        // A -> D from D -> A (reverse), 0.5 ms.
        assert_eq!(p.latency(0, 3), 0.5);
        assert!(
            u.report
                .notes
                .iter()
                .any(|n| n.contains("D -> C = 21.0 via A, B")),
            "{:?}",
            u.report.notes
        );
        let u = from_csv_str(m, "m.csv", None, &opts(MatrixGaps::Drop)).unwrap();
        let labels: Vec<&str> = u.routers.iter().map(|r| r.label.as_str()).collect();
        assert_eq!(labels, ["A", "B", "C"]);
        assert_eq!(u.measured.as_ref().unwrap().link_index(1, 2), 2);
    }

    #[test]
    fn bandwidth_matrix_and_bad_cells() {
        let bw = "x,A,B,C\nA,,1G,2G\nB,1G,,500M\nC,2G,,\n";
        let u = from_csv_str(M, "m.csv", Some((bw, "bw.csv")), &LoadOptions::default()).unwrap();
        let p = u.measured.as_ref().unwrap();
        assert!(p.bandwidth_measured);
        assert_eq!(
            (p.bandwidth_bps[3 + 2], p.bandwidth_bps[2 * 3 + 1]),
            (500e6, 500e6)
        );
        let e = from_csv_str(
            "S,A,B\nA,,x\nB,1,\n",
            "m.csv",
            None,
            &LoadOptions::default(),
        )
        .unwrap_err()
        .to_string();
        assert_eq!(
            e,
            "m.csv:2: `A` -> `B`: expected a time in ms >= 0, found `x`"
        );
        let e = from_csv_str(
            M,
            "m.csv",
            Some(("x,A,Z\nA,,1G\n", "bw.csv")),
            &LoadOptions::default(),
        )
        .unwrap_err()
        .to_string();
        assert!(e.starts_with("bw.csv:1: `Z` is not a site"), "{e}");
    }
}
