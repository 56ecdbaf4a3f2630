//! The overlay grammar: one parser for every overlay name and list.
//!
//! An overlay is written `NAME`, `NAME:KEY=VALUE,...` or
//! `NAME[KEY=VALUE,...]` (the bracket form reads unambiguously inside a
//! list). [`OverlaySpec::parse`] splits that text once, checks its syntax
//! (every parameter `KEY=VALUE`, no key twice) and gives the canonical name
//! of [`OVERLAY_NAMES`]; each family then reads its own parameters
//! ([`crate::overlay::random::RandomSpec::from_spec`],
//! [`crate::overlay::matcha::variant::MatchaVariant::from_spec`],
//! [`crate::overlay::families::FamilySpec::from_spec`]). The help text of
//! `--overlays` and the "unknown overlay" message are derived from
//! [`OVERLAY_NAMES`], so a new name is added in one place.
//!
//! A list ([`split_overlay_list`]) separates overlays by commas. A comma
//! inside brackets belongs to the overlay, and an item `KEY=VALUE` (no `:`,
//! no `[`) continues the parameters of the `NAME:...` item before it
//! (`chung-lu:gamma=3,k=8,ring` is two overlays); anywhere else it is an
//! error, never a guess.

use thiserror::Error;

/// Which builder an overlay name routes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NameKind {
    /// A static overlay of \[Marfoq20\] without parameters.
    Plain,
    /// MATCHA or MATCHA+ ([`crate::overlay::matcha::variant`]).
    Matcha,
    /// A seeded random graph ([`crate::overlay::random`]).
    Random,
    /// A family of the decentralized-learning literature
    /// ([`crate::overlay::families`]).
    Family,
    /// D-Cliques and their baselines (names starting `dcliques` or `dc-`).
    DCliques,
    /// A topology read from a file (`file:PATH`).
    File,
}

/// One overlay name fedtopo knows.
#[derive(Debug, Clone, Copy)]
pub struct OverlayName {
    /// The canonical name (what reports print).
    pub name: &'static str,
    /// Other spellings accepted.
    pub aliases: &'static [&'static str],
    /// How it is written with its parameters (for help and errors).
    pub usage: &'static str,
    /// The builder it routes to.
    pub kind: NameKind,
}

const fn name(
    name: &'static str,
    aliases: &'static [&'static str],
    usage: &'static str,
    kind: NameKind,
) -> OverlayName {
    OverlayName {
        name,
        aliases,
        usage,
        kind,
    }
}

/// Every overlay name, in the order help texts list them.
pub const OVERLAY_NAMES: &[OverlayName] = &[
    name("star", &["server-client"], "star", NameKind::Plain),
    name("mst", &[], "mst", NameKind::Plain),
    name(
        "delta-mbst",
        &["mbst", "δ-mbst"],
        "delta-mbst (or mbst)",
        NameKind::Plain,
    ),
    name("ring", &[], "ring", NameKind::Plain),
    name("ring-opt", &["ringopt"], "ring-opt", NameKind::Plain),
    name(
        "ring-allreduce",
        &["allreduce", "all-reduce", "ring-all-reduce"],
        "ring-allreduce",
        NameKind::Plain,
    ),
    name(
        "mesh-allreduce",
        &["mesh-all-reduce"],
        "mesh-allreduce",
        NameKind::Plain,
    ),
    name("complete", &["full"], "complete", NameKind::Plain),
    name(
        "matcha",
        &[],
        "matcha[:base=connectivity|underlay|mst|delta-mbst|ring,budget=C]",
        NameKind::Matcha,
    ),
    name(
        "matcha+",
        &["matcha-plus", "matchaplus"],
        "matcha+[:budget=C]",
        NameKind::Matcha,
    ),
    name(
        "dcliques",
        &[],
        "dcliques[-ring|-fractal|-smallworld|-full][+ca], dc-random-regular10, \
         dc-diverse-random10, dc-node-ring, dc-grid",
        NameKind::DCliques,
    ),
    name(
        "er",
        &["erdos-renyi", "gnp"],
        "a random graph er:p=P|k=K",
        NameKind::Random,
    ),
    name("ba", &["barabasi-albert"], "ba:m=M", NameKind::Random),
    name(
        "regular",
        &["random-regular", "rr"],
        "regular:k=K",
        NameKind::Random,
    ),
    name(
        "chung-lu",
        &["chunglu", "cl"],
        "chung-lu:gamma=G,k=K",
        NameKind::Random,
    ),
    name(
        "torus",
        &[],
        "torus[:rows=R] (random graphs take seed=S too)",
        NameKind::Random,
    ),
    name("exp", &["exponential"], "exp", NameKind::Family),
    name(
        "exp-1peer",
        &["exp1peer", "one-peer-exp", "1peer-exp"],
        "exp-1peer",
        NameKind::Family,
    ),
    name("base", &[], "base:k=K", NameKind::Family),
    name(
        "d-equistatic",
        &["equistatic", "equi-static"],
        "d-equistatic[:m=M,seed=S]",
        NameKind::Family,
    ),
    name(
        "od-equidyn",
        &["equidyn", "equi-dyn"],
        "od-equidyn[:eta=E,seed=S,rounds=R] (families: order=ring-opt|identity|search)",
        NameKind::Family,
    ),
    name(
        "multigraph",
        &["multigraph-fl"],
        "multigraph[:base=ring|ring-opt|mst|delta-mbst|star,t_max=T,weak=idle|background]",
        NameKind::Family,
    ),
    name("file", &[], "file:PATH", NameKind::File),
];

/// The names and their parameters, comma-separated (the "unknown overlay"
/// message and the `--overlays` help).
pub fn known_overlays() -> String {
    OVERLAY_NAMES
        .iter()
        .map(|n| n.usage)
        .collect::<Vec<_>>()
        .join(", ")
}

/// The entry of `name` (lower case; a canonical name or an alias), D-Cliques
/// names by their prefix.
pub fn lookup(name: &str) -> Option<&'static OverlayName> {
    if name.starts_with("dcliques") || name.starts_with("dc-") {
        return OVERLAY_NAMES.iter().find(|n| n.kind == NameKind::DCliques);
    }
    OVERLAY_NAMES
        .iter()
        .find(|n| n.kind != NameKind::DCliques && (n.name == name || n.aliases.contains(&name)))
}

/// Where the name at the head of `text` routes (the text before `:` or
/// `[`), whether or not its parameters parse: so a family reports the
/// errors of its own names.
pub fn kind_of_name(text: &str) -> Option<NameKind> {
    let head = text.trim().split([':', '[']).next().unwrap_or("");
    lookup(&head.trim().to_ascii_lowercase()).map(|n| n.kind)
}

/// An overlay text that does not follow the grammar.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("overlay `{text}`: {reason}")]
pub struct OverlaySpecError {
    /// The text.
    pub text: String,
    /// What is wrong.
    pub reason: String,
}

/// An overlay as written, split once: `NAME`, `NAME:K=V,...` or
/// `NAME[K=V,...]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OverlaySpec {
    /// The text as given (trimmed), for messages.
    pub text: String,
    /// The name, lower case; canonical when it is a known name or alias
    /// (`mbst` reads `delta-mbst`), else as written.
    pub name: String,
    /// The parameters in the order given, keys and values trimmed and lower
    /// case (a `file:` path keeps its case: `("path", PATH)`).
    pub params: Vec<(String, String)>,
}

impl OverlaySpec {
    /// Splits `text`.
    ///
    /// # Errors
    /// An empty name, an unclosed bracket, a parameter that is not
    /// `KEY=VALUE`, an empty key or value, a key given twice.
    pub fn parse(text: &str) -> Result<OverlaySpec, OverlaySpecError> {
        let t = text.trim();
        let err = |reason: &str| OverlaySpecError {
            text: t.to_string(),
            reason: reason.to_string(),
        };
        // `file:PATH`: the rest is a path, verbatim.
        if let Some(path) = t
            .get(..5)
            .filter(|p| p.eq_ignore_ascii_case("file:"))
            .and_then(|_| t.get(5..))
        {
            let path = path.trim();
            if path.is_empty() {
                return Err(err("file: needs a path"));
            }
            return Ok(OverlaySpec {
                text: t.to_string(),
                name: "file".into(),
                params: vec![("path".into(), path.to_string())],
            });
        }
        let bracket = t.find('[');
        let colon = t.find(':');
        let (head, inner) = match (bracket, colon) {
            (Some(b), c) if c.is_none_or(|c| b < c) => {
                let Some(inner) = t[b + 1..].strip_suffix(']') else {
                    return Err(err("expected `]` at the end (NAME[KEY=VALUE,...])"));
                };
                (&t[..b], Some(inner))
            }
            (_, Some(c)) => (&t[..c], Some(&t[c + 1..])),
            _ => (t, None),
        };
        let lower = head.trim().to_ascii_lowercase();
        if lower.is_empty() {
            return Err(err("empty overlay name"));
        }
        if lower.contains([',', '=', ']', '[']) {
            return Err(err(&format!(
                "`{}` is not an overlay name: write parameters as NAME:KEY=VALUE,... or \
                 NAME[KEY=VALUE,...]",
                head.trim()
            )));
        }
        let mut params: Vec<(String, String)> = Vec::new();
        if let Some(inner) = inner {
            for item in inner.split(',') {
                let item = item.trim();
                let Some((key, value)) = item.split_once('=') else {
                    return Err(err(&if item.is_empty() {
                        "an empty parameter (a stray comma or colon)".to_string()
                    } else {
                        format!("`{item}` is not KEY=VALUE")
                    }));
                };
                let (key, value) = (key.trim().to_ascii_lowercase(), value.trim());
                if key.is_empty() || value.is_empty() {
                    return Err(err(&format!("`{item}` is not KEY=VALUE")));
                }
                if params.iter().any(|(k, _)| *k == key) {
                    return Err(err(&format!("`{key}` given twice")));
                }
                params.push((key, value.to_ascii_lowercase()));
            }
        }
        let name = match lookup(&lower) {
            Some(n) if n.kind != NameKind::DCliques => n.name.to_string(),
            _ => lower,
        };
        Ok(OverlaySpec {
            text: t.to_string(),
            name,
            params,
        })
    }

    /// The value of `key`, if given.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.params
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// Where this name routes, `None` for an unknown name.
    pub fn kind(&self) -> Option<NameKind> {
        lookup(&self.name).map(|n| n.kind)
    }
}

/// Splits an overlay list into its items (see the module doc): commas
/// inside brackets stay, an item `KEY=VALUE` continues a `NAME:...` item.
///
/// # Errors
/// An empty list or item, or a parameter that follows an item it cannot
/// belong to.
pub fn split_overlay_list(list: &str) -> Result<Vec<String>, OverlaySpecError> {
    let err = |reason: String| OverlaySpecError {
        text: list.trim().to_string(),
        reason,
    };
    if list.trim().is_empty() {
        return Err(err(
            "empty list; give overlay names separated by commas, e.g. `star,ring`, or `all`".into(),
        ));
    }
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0usize, 0);
    for (i, c) in list.char_indices() {
        match c {
            '[' => depth += 1,
            ']' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                parts.push(&list[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&list[start..]);
    let mut items: Vec<String> = Vec::new();
    for (i, part) in parts.iter().map(|p| p.trim()).enumerate() {
        if part.is_empty() {
            return Err(err(format!(
                "item {} is empty; give overlay names separated by single commas",
                i + 1
            )));
        }
        let is_param = part.contains('=') && !part.contains([':', '[']);
        if !is_param {
            items.push(part.to_string());
            continue;
        }
        match items.last_mut() {
            Some(last)
                if last.contains(':')
                    && !last.contains('[')
                    && !last.to_ascii_lowercase().starts_with("file:") =>
            {
                last.push(',');
                last.push_str(part);
            }
            Some(last) => {
                return Err(err(format!(
                    "item {} `{part}` is a parameter, but `{last}` before it takes none in \
                     this list; write NAME:KEY=VALUE,... or NAME[KEY=VALUE,...]",
                    i + 1
                )))
            }
            None => {
                return Err(err(format!(
                    "the list starts with a parameter `{part}`; write NAME:KEY=VALUE,..."
                )))
            }
        }
    }
    Ok(items)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(t: &str) -> OverlaySpec {
        OverlaySpec::parse(t).unwrap()
    }

    #[test]
    fn colon_and_bracket_forms_are_the_same_spec() {
        let a = spec("chung-lu:gamma=3,k=8");
        let b = spec(" Chung-Lu[ gamma = 3 , k=8 ] ");
        assert_eq!((a.name.as_str(), &a.params), (b.name.as_str(), &b.params));
        assert_eq!(a.get("k"), Some("8"));
        assert_eq!(spec("mbst").name, "delta-mbst");
        assert_eq!(spec("MATCHA-plus:budget=0.1").name, "matcha+");
        assert_eq!(spec("dc-grid").name, "dc-grid");
        assert_eq!(spec("dc-grid").kind(), Some(NameKind::DCliques));
        assert_eq!(spec("spiral").kind(), None);
        let f = spec("file:Some,Dir/Ring.GML");
        assert_eq!(
            (f.name.as_str(), f.get("path")),
            ("file", Some("Some,Dir/Ring.GML"))
        );
    }

    #[test]
    fn syntax_errors_say_why() {
        for (t, why) in [
            ("", "empty overlay name"),
            (":k=1", "empty overlay name"),
            ("er:p", "not KEY=VALUE"),
            ("er:p=", "not KEY=VALUE"),
            ("er:=1", "not KEY=VALUE"),
            ("er:", "empty parameter"),
            ("er:p=0.1,", "empty parameter"),
            ("er:p=0.1,p=0.2", "given twice"),
            ("er[p=0.1", "expected `]`"),
            ("er[p=0.1]x", "expected `]`"),
            ("file:", "needs a path"),
        ] {
            let e = OverlaySpec::parse(t).unwrap_err().to_string();
            assert!(e.contains(why), "`{t}`: {e}");
        }
    }

    #[test]
    fn lists_are_unambiguous() {
        let l = |t: &str| split_overlay_list(t).unwrap();
        assert_eq!(l("star, ring"), ["star", "ring"]);
        assert_eq!(
            l("chung-lu:gamma=3,k=8,ring"),
            ["chung-lu:gamma=3,k=8", "ring"]
        );
        assert_eq!(
            l("chung-lu[gamma=3,k=8],base[k=2],exp"),
            ["chung-lu[gamma=3,k=8]", "base[k=2]", "exp"]
        );
        for (t, why) in [
            ("", "empty list"),
            ("ring,,star", "item 2 is empty"),
            ("ring,", "item 2 is empty"),
            ("star,k=2", "`star` before it takes none"),
            ("base[k=2],order=identity", "takes none"),
            ("k=2,ring", "starts with a parameter"),
        ] {
            let e = split_overlay_list(t).unwrap_err().to_string();
            assert!(e.contains(why), "`{t}`: {e}");
        }
    }

    #[test]
    fn every_name_and_alias_is_found_once() {
        let mut seen = std::collections::HashSet::new();
        for n in OVERLAY_NAMES {
            for s in std::iter::once(&n.name).chain(n.aliases) {
                assert!(seen.insert(*s), "`{s}` listed twice");
                assert_eq!(lookup(s).map(|m| m.name), Some(n.name), "{s}");
            }
        }
        assert!(known_overlays().contains("exp-1peer"));
    }
}
