//! The 2-D torus (periodic grid): node `r * cols + c` linked to its four
//! neighbours `(r +- 1, c)` and `(r, c +- 1)`, indices modulo the sides.

/// The shape `(rows, cols)` of a torus on `n` nodes: `rows` if given (must
/// divide `n`), else the divisor of `n` closest to `sqrt(n)` from below.
/// Both sides must be `>= 3` so that the torus is 4-regular.
pub fn torus_shape(n: usize, rows: Option<usize>) -> Result<(usize, usize), String> {
    let r = match rows {
        Some(r) => {
            if r == 0 || !n.is_multiple_of(r) {
                return Err(format!("rows = {r} does not divide n = {n}"));
            }
            r
        }
        None => (1..=n)
            .take_while(|r| r * r <= n)
            .filter(|r| n.is_multiple_of(*r))
            .last()
            .unwrap_or(1),
    };
    let c = n / r;
    if r < 3 || c < 3 {
        return Err(format!(
            "a {r} x {c} torus needs both sides >= 3 (n = {n}; choose n = rows x cols with rows, cols >= 3)"
        ));
    }
    Ok((r, c))
}

/// Undirected edges `(a, b)`, `a < b`, of the `rows x cols` torus.
pub fn torus_edges(rows: usize, cols: usize) -> Vec<(usize, usize)> {
    let id = |r: usize, c: usize| (r % rows) * cols + (c % cols);
    let mut e: Vec<(usize, usize)> = (0..rows)
        .flat_map(|r| {
            (0..cols).flat_map(move |c| [(id(r, c), id(r + 1, c)), (id(r, c), id(r, c + 1))])
        })
        .map(|(a, b)| (a.min(b), a.max(b)))
        .collect();
    e.sort_unstable();
    e.dedup();
    e
}
