//! Units used throughout fedtopo, and parsing of human-written quantities.
//!
//! fedtopo keeps quantities as documented `f64`s, always in the same base unit:
//!
//! | quantity      | unit   | alias          |
//! |---------------|--------|----------------|
//! | time          | ms     | [`Ms`]         |
//! | data size     | bit    | [`Bits`]       |
//! | bandwidth     | bit/s  | [`BitsPerSec`] |
//! | length        | km     | [`Km`]         |
//!
//! [`transfer_ms`] is the one place where bits and bit/s become milliseconds.

use thiserror::Error;

/// Time in milliseconds.
pub type Ms = f64;
/// Data size in bits.
pub type Bits = f64;
/// Bandwidth in bits per second.
pub type BitsPerSec = f64;
/// Length in kilometres.
pub type Km = f64;

/// Smallest finite capacity accepted anywhere (access, core, links), bit/s.
/// Below it a transfer time `M/C` of \[Marfoq20\] eq. (3) can overflow to
/// infinity (`1e-300` bit/s did), so every capacity is checked against it
/// where it enters (options, CSV, GML).
pub const MIN_CAPACITY_BPS: BitsPerSec = 1.0;

/// Largest model size accepted, bit (10^18 bit = 125 PB): with capacities
/// of at least [`MIN_CAPACITY_BPS`] every transfer time stays finite.
pub const MAX_MODEL_BITS: Bits = 1e18;

/// Largest time of one local step accepted, ms (10^12 ms, about 32 years):
/// keeps `s * Tc` and the sums of eq. (3) finite for any `u32` step count.
pub const MAX_COMPUTE_MS: Ms = 1e12;

/// Bits in a gigabyte (10^9 bytes), the unit of traffic in reports.
pub const BITS_PER_GB: Bits = 8e9;

/// `bits` in gigabytes (10^9 bytes).
pub fn gigabytes(bits: Bits) -> f64 {
    bits / BITS_PER_GB
}

/// Time (ms) to push `size` bits through a pipe of `rate` bit/s.
/// An infinite rate gives 0 ms.
#[inline]
pub fn transfer_ms(size: Bits, rate: BitsPerSec) -> Ms {
    if rate.is_infinite() {
        0.0
    } else {
        size / rate * 1e3
    }
}

/// A quantity that could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("cannot read {what} from `{text}`: {reason}")]
pub struct UnitError {
    /// What was being parsed ("a bandwidth", "a size").
    pub what: &'static str,
    /// The offending text.
    pub text: String,
    /// What was expected instead.
    pub reason: String,
}

fn split_number(text: &str) -> Option<(f64, &str)> {
    let t = text.trim();
    // The longest prefix that parses as a number (digits, sign, '.', exponent).
    let mut best = None;
    for (i, _) in t.char_indices().chain(std::iter::once((t.len(), ' '))) {
        if i == 0 {
            continue;
        }
        if let Ok(v) = t[..i].parse::<f64>() {
            best = Some((v, t[i..].trim()));
        }
    }
    best
}

fn scale(prefix: &str) -> Option<f64> {
    Some(match prefix {
        "" => 1.0,
        "k" | "K" => 1e3,
        "M" => 1e6,
        "G" => 1e9,
        "T" => 1e12,
        _ => return None,
    })
}

/// Parses a bandwidth in bit/s: `10G`, `10Gbps`, `100Mbps`, `100 Mbit/s`,
/// `1e9`, `1.5 Gb/s`, `inf` (unlimited). Decimal SI prefixes (k, M, G, T).
///
/// A trailing `B` (bytes, as in `MB/s`) is refused rather than guessed.
pub fn parse_bandwidth(text: &str) -> Result<BitsPerSec, UnitError> {
    let err = |reason: &str| UnitError {
        what: "a bandwidth",
        text: text.to_string(),
        reason: reason.to_string(),
    };
    let t = text.trim();
    if matches!(
        t.to_ascii_lowercase().as_str(),
        "inf" | "infinite" | "unlimited"
    ) {
        return Ok(f64::INFINITY);
    }
    let (value, unit) = split_number(t).ok_or_else(|| {
        err("expected a number followed by an optional unit such as G, Gbps, Mbit/s")
    })?;
    let (prefix, rest) = match unit.chars().next() {
        Some(c) if "kKMGT".contains(c) => unit.split_at(c.len_utf8()),
        _ => ("", unit),
    };
    let rest_l = rest.to_ascii_lowercase();
    let ok_suffix = ["", "bps", "bit/s", "b/s", "bit", "bits/s", "bits"];
    if rest.contains('B') || !ok_suffix.contains(&rest_l.as_str()) {
        return Err(err(
            "unknown unit; use bit/s with an SI prefix, e.g. 10G, 100Mbps, 1e9",
        ));
    }
    let v = value * scale(prefix).ok_or_else(|| err("unknown prefix"))?;
    if v.is_nan() || v <= 0.0 {
        return Err(err("a bandwidth must be positive"));
    }
    if v < MIN_CAPACITY_BPS {
        return Err(err("a bandwidth must be at least 1 bit/s (or inf)"));
    }
    Ok(v)
}

/// Parses a data size in bits: `44961717`, `42.88Mbit`, `4.6e6`, `1Gbit`, or
/// bytes with an explicit `B`: `5.6MB` (= 44.8e6 bit).
pub fn parse_bits(text: &str) -> Result<Bits, UnitError> {
    let err = |reason: &str| UnitError {
        what: "a size",
        text: text.to_string(),
        reason: reason.to_string(),
    };
    let (value, unit) = split_number(text)
        .ok_or_else(|| err("expected a number followed by an optional unit (bit, kbit, MB)"))?;
    let (prefix, rest) = match unit.chars().next() {
        Some(c) if "kKMGT".contains(c) => unit.split_at(c.len_utf8()),
        _ => ("", unit),
    };
    let factor = match rest {
        "" | "b" | "bit" | "bits" => 1.0,
        "B" | "byte" | "bytes" => 8.0,
        _ => return Err(err("unknown unit; use bit, kbit, Mbit, or B, MB for bytes")),
    };
    let v = value * scale(prefix).ok_or_else(|| err("unknown prefix"))? * factor;
    if v.is_nan() || v <= 0.0 || !v.is_finite() {
        return Err(err("a size must be positive and finite"));
    }
    if v > MAX_MODEL_BITS {
        return Err(err("a size must be at most 1e18 bit"));
    }
    Ok(v)
}

/// Bandwidths below this (bit/s) written as a bare number get a warning
/// ([`bare_bandwidth_warning`]).
pub const BARE_BANDWIDTH_WARN_BELOW: BitsPerSec = 1e3;

/// A warning for a bandwidth written as a bare number (no unit) below
/// [`BARE_BANDWIDTH_WARN_BELOW`]: `10` is 10 bit/s, a round of days, and
/// almost always meant `10G`. `None` for anything else (a unit given, a
/// larger number, text that is not a bandwidth).
pub fn bare_bandwidth_warning(text: &str) -> Option<String> {
    let t = text.trim();
    let v: f64 = t.parse().ok()?;
    if !(v.is_finite() && v < BARE_BANDWIDTH_WARN_BELOW) {
        return None;
    }
    Some(format!(
        "`{t}` is {t} bit/s (a bare number is bit/s); did you mean {t}G ({t} Gbit/s) or {t}M? \
         Write the unit, e.g. {t}bps, to keep {t} bit/s without this warning"
    ))
}

/// Formats a bandwidth for humans: `10 Gbit/s`, `100 Mbit/s`.
pub fn format_bandwidth(v: BitsPerSec) -> String {
    if v.is_infinite() {
        return "unlimited".into();
    }
    for (f, p) in [(1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")] {
        if v >= f {
            return format!("{} {p}bit/s", trim_float(v / f));
        }
    }
    format!("{} bit/s", trim_float(v))
}

fn trim_float(v: f64) -> String {
    let s = format!("{v:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bandwidths() {
        assert_eq!(parse_bandwidth("10G").unwrap(), 10e9);
        assert_eq!(parse_bandwidth("100Mbps").unwrap(), 100e6);
        assert_eq!(parse_bandwidth("100 Mbit/s").unwrap(), 100e6);
        assert_eq!(parse_bandwidth("1e9").unwrap(), 1e9);
        assert_eq!(parse_bandwidth("1.5Gb/s").unwrap(), 1.5e9);
        assert_eq!(parse_bandwidth(" 250k ").unwrap(), 250e3);
        assert!(parse_bandwidth("inf").unwrap().is_infinite());
        for bad in [
            "", "G", "10X", "10MB/s", "-1G", "0", "ten", "1e-300", "0.5", "nan",
        ] {
            assert!(parse_bandwidth(bad).is_err(), "{bad} should fail");
        }
    }

    #[test]
    fn a_bare_bandwidth_below_1_kbit_warns() {
        let w = bare_bandwidth_warning("10").unwrap();
        assert!(w.contains("did you mean 10G"), "{w}");
        assert!(bare_bandwidth_warning(" 999.5 ").is_some());
        for quiet in ["1000", "10G", "10bps", "10 bit/s", "inf", "1e9", "fast", ""] {
            assert_eq!(bare_bandwidth_warning(quiet), None, "{quiet}");
        }
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_bits("44961717").unwrap(), 44961717.0);
        assert_eq!(parse_bits("42.88Mbit").unwrap(), 42.88e6);
        assert_eq!(parse_bits("1MB").unwrap(), 8e6);
        assert!(parse_bits("1 parsec").is_err());
        assert!(parse_bits("-3").is_err());
        assert!(parse_bits("1e19").is_err());
        assert!(parse_bits("1e308B").is_err());
    }

    #[test]
    fn transfer() {
        assert_eq!(transfer_ms(1e9, 1e9), 1000.0);
        assert_eq!(transfer_ms(1e9, f64::INFINITY), 0.0);
        assert_eq!(format_bandwidth(10e9), "10 Gbit/s");
        assert_eq!(format_bandwidth(1.5e8), "150 Mbit/s");
    }
}
