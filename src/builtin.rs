//! Underlays shipped inside the binary (authored by the project, see
//! `underlays/` and `scripts/make-builtin-underlays.py` for sources).

/// `(name, description, GML text)` of every built-in underlay.
pub const BUILTIN_UNDERLAYS: [(&str, &str, &str); 2] = [
    (
        "aws-north-america",
        "22 AWS North America sites, full mesh from city coordinates",
        include_str!("../underlays/aws-north-america.gml"),
    ),
    (
        "aws-gaia",
        "11 AWS regions of Gaia, full mesh from city coordinates",
        include_str!("../underlays/aws-gaia.gml"),
    ),
];

/// The underlay used when the user names none.
pub const DEFAULT_UNDERLAY: &str = "aws-north-america";

/// GML text of a built-in underlay.
pub fn builtin_underlay(name: &str) -> Option<&'static str> {
    BUILTIN_UNDERLAYS
        .iter()
        .find(|(n, _, _)| n.eq_ignore_ascii_case(name))
        .map(|(_, _, text)| *text)
}
