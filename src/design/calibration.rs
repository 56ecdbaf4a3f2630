//! Checks of the design search's inputs: the measured runs a calibration
//! reads (a `fedtopo train` summary) and the proxy's base rounds.
//!
//! A measured value is a count of rounds or a duration: a finite number
//! `>= 0`. NaN, infinities and negative values are refused (they would
//! fit a predictor that predicts negative or infinite times), and so is a
//! second row for an overlay already measured (which of the two to fit
//! would be a guess).

use std::collections::HashMap;

/// Largest `--base-rounds`: rounds exact averaging needs to reach the
/// target. Predicted times stay finite (`1e6` rounds x any cycle time a
/// network can have).
pub const MAX_BASE_ROUNDS: f64 = 1e6;

/// Why a measured value is refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum MeasuredValueError {
    /// Not a number at all.
    #[error("`{text}` is not a number")]
    NotANumber {
        /// The cell.
        text: String,
    },
    /// NaN or an infinity.
    #[error("`{text}` is not a finite number (expected a finite number >= 0)")]
    NotFinite {
        /// The cell.
        text: String,
    },
    /// Below 0.
    #[error("`{text}` is negative (expected a finite number >= 0)")]
    Negative {
        /// The cell.
        text: String,
    },
}

/// A measured value of a summary cell: `None` when the cell is empty (the
/// run did not reach the target), else a finite number `>= 0`.
///
/// # Errors
/// [`MeasuredValueError`] for text that is not a number, NaN, an infinity
/// or a negative number.
pub fn measured_value(cell: &str) -> Result<Option<f64>, MeasuredValueError> {
    let t = cell.trim();
    if t.is_empty() {
        return Ok(None);
    }
    let text = t.to_string();
    let v: f64 = t
        .parse()
        .map_err(|_| MeasuredValueError::NotANumber { text: text.clone() })?;
    if !v.is_finite() {
        return Err(MeasuredValueError::NotFinite { text });
    }
    if v < 0.0 {
        return Err(MeasuredValueError::Negative { text });
    }
    Ok(Some(v))
}

/// The first overlay named twice in `rows` (`(overlay, line)`), with the
/// lines of its first and second rows.
pub fn first_duplicate<'a>(
    rows: impl IntoIterator<Item = (&'a str, u64)>,
) -> Option<(String, u64, u64)> {
    let mut seen: HashMap<&str, u64> = HashMap::new();
    for (name, line) in rows {
        if let Some(&first) = seen.get(name) {
            return Some((name.to_string(), first, line));
        }
        seen.insert(name, line);
    }
    None
}

/// Checks `--base-rounds`: a finite number in `(0, MAX_BASE_ROUNDS]`.
///
/// # Errors
/// A message naming the option, the value and the accepted range.
pub fn check_base_rounds(value: f64) -> Result<f64, String> {
    if value.is_finite() && value > 0.0 && value <= MAX_BASE_ROUNDS {
        Ok(value)
    } else {
        let shown = if value.abs() < 1e9 {
            value.to_string()
        } else {
            format!("{value:e}")
        };
        Err(format!(
            "--base-rounds {shown}: expected a number of rounds in (0, {MAX_BASE_ROUNDS:e}] \
             (the rounds exact averaging needs to reach the target)"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn measured_values_are_finite_and_not_negative() {
        assert_eq!(measured_value(""), Ok(None));
        assert_eq!(measured_value(" 12 "), Ok(Some(12.0)));
        assert_eq!(measured_value("0"), Ok(Some(0.0)));
        for bad in ["nan", "NaN", "inf", "-inf", "infinity"] {
            assert!(
                matches!(
                    measured_value(bad),
                    Err(MeasuredValueError::NotFinite { .. })
                ),
                "{bad}"
            );
        }
        assert!(matches!(
            measured_value("-3"),
            Err(MeasuredValueError::Negative { .. })
        ));
        assert!(matches!(
            measured_value("twelve"),
            Err(MeasuredValueError::NotANumber { .. })
        ));
    }

    #[test]
    fn duplicates_and_base_rounds() {
        assert_eq!(
            first_duplicate([("ring", 2), ("mst", 3), ("ring", 4)]),
            Some(("ring".to_string(), 2, 4))
        );
        assert_eq!(first_duplicate([("ring", 2), ("mst", 3)]), None);
        assert_eq!(check_base_rounds(15.0), Ok(15.0));
        assert_eq!(check_base_rounds(1e6), Ok(1e6));
        for bad in [0.0, -1.0, 1e308, f64::NAN, f64::INFINITY, 1e6 + 1.0] {
            let e = check_base_rounds(bad).unwrap_err();
            assert!(e.contains("--base-rounds") && e.contains("(0, 1e6]"), "{e}");
        }
    }
}
