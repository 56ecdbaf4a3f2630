//! The overlay build knobs: [`BuildOptions::from_knobs`], the twin of
//! [`crate::net::scenario::NetworkSpec::from_knobs`]. Every front end (the CLI's
//! `--center`, `--seed`, `--budget`, `--matcha-rounds`, `--dc-*` options,
//! experiment files, Python's `Network` methods) hands its text to this one
//! parser, so the defaults, bounds and error texts live here once (keys in
//! [`BUILD_KNOBS`]).

use crate::net::placement::SiloPlacement;
use crate::net::scenario::{Knob, KnobError};
use crate::net::underlay::Underlay;
use crate::overlay::build::{BuildOptions, CenterPolicy};
use crate::overlay::dcliques::placement::{DCliquesBuild, LabelSource};
use crate::overlay::dcliques::DCliquesOptions;
use crate::overlay::matcha::{budget_ok, MatchaOptions, MAX_MATCHA_ROUNDS};

/// The build knobs: `(key, default, what it accepts)`. The CLI spells a key
/// with dashes (`dc_clique_size` is `--dc-clique-size`).
pub const BUILD_KNOBS: [(&str, &str, &str); 10] = [
    (
        "center",
        "fastest",
        "fastest, load, first, or a silo label or GML id of the underlay (a router hosting a silo)",
    ),
    ("seed", "0", "a whole number from 0 to 18446744073709551615"),
    (
        "budget",
        "0.5",
        "a MATCHA communication budget in [0.001, 1]",
    ),
    (
        "matcha_rounds",
        "1000",
        "a whole number of rounds sampled for MATCHA's cycle time, 1 to 1000000",
    ),
    (
        "dc_clique_size",
        "10",
        "a whole number of silos per D-Clique, at least 1",
    ),
    ("dc_steps", "1000", "a whole number of Greedy Swap steps"),
    (
        "dc_remove_intra",
        "0",
        "a whole number of intra-clique edges removed per clique",
    ),
    (
        "dc_seed",
        "0",
        "a whole number from 0 to 18446744073709551615",
    ),
    ("dc_labels", "shards", "shards or one-class"),
    ("dc_classes", "10", "a whole number of classes, at least 1"),
];

impl BuildOptions {
    /// Parses the build knobs of [`BUILD_KNOBS`]: `value(key)` gives a
    /// knob's text, or `None` (or a blank text) for its default. `center`
    /// names a router of `underlay`; under `placement` it designates the
    /// first silo placed there. MATCHA's activations and random overlays
    /// share `seed`; D-Cliques use the MNIST label shards or one class per
    /// silo (`train` replaces them by the data's own labels).
    ///
    /// # Errors
    /// [`KnobError`] naming the first knob whose value does not parse (a
    /// centre at a router hosting no silo included).
    pub fn from_knobs<'a>(
        value: impl Fn(&str) -> Option<&'a str>,
        underlay: &Underlay,
        placement: &SiloPlacement,
    ) -> Result<Self, KnobError> {
        let get = |key: &'static str| Knob::lookup(&BUILD_KNOBS, &value, key);
        let center = get("center").parse(|t| {
            CenterPolicy::parse(t.trim(), underlay)
                .ok()?
                .at_placement(placement)
                .ok()
        })?;
        let seed: u64 = get("seed").parse(whole)?;
        let budget = get("budget").parse(|t| whole::<f64>(t).filter(|&b| budget_ok(b)))?;
        let rounds = get("matcha_rounds")
            .parse(|t| whole::<u64>(t).filter(|r| (1..=MAX_MATCHA_ROUNDS).contains(r)))?;
        Ok(BuildOptions {
            center,
            matcha: MatchaOptions {
                budget,
                seed,
                rounds,
                ..MatchaOptions::default()
            },
            seed,
            dcliques: DCliquesBuild::from_knobs(value)?,
            ..BuildOptions::default()
        })
    }
}

/// Plain whole numbers (and reals) of the knobs.
fn whole<T: std::str::FromStr>(t: &str) -> Option<T> {
    t.trim().parse().ok()
}

impl DCliquesBuild {
    /// The D-Cliques knobs of [`BUILD_KNOBS`] (`dc_*`), the part of
    /// [`BuildOptions::from_knobs`] that needs no network (the CLI's
    /// `overlay dcliques... --nodes N` builds without one).
    ///
    /// # Errors
    /// [`KnobError`] naming the first `dc_*` knob whose value does not parse.
    pub fn from_knobs<'a>(value: impl Fn(&str) -> Option<&'a str>) -> Result<Self, KnobError> {
        let get = |key: &'static str| Knob::lookup(&BUILD_KNOBS, &value, key);
        let at_least_one = |t: &str| whole::<usize>(t).filter(|&v| v >= 1);
        let options = DCliquesOptions {
            max_size: get("dc_clique_size").parse(at_least_one)?,
            steps: get("dc_steps").parse(whole)?,
            remove_intra: get("dc_remove_intra").parse(whole)?,
            seed: get("dc_seed").parse(whole)?,
        };
        let one_class = get("dc_labels").parse(|t| match t.trim() {
            "shards" => Some(false),
            "one-class" => Some(true),
            _ => None,
        })?;
        let labels = if one_class {
            LabelSource::OneClass {
                classes: get("dc_classes").parse(at_least_one)?,
            }
        } else {
            // The MNIST label shards, 2 per silo ([Bellet21] Sec. 4.1).
            LabelSource::default()
        };
        Ok(DCliquesBuild { options, labels })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::scenario::load_underlay;
    use crate::net::underlay::LoadOptions;

    fn builtin_underlay(name: &str) -> Option<Underlay> {
        load_underlay(Some(name), &LoadOptions::default()).ok()
    }

    fn knobs<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<&'a str> + 'a {
        move |k| pairs.iter().find(|p| p.0 == k).map(|p| p.1)
    }

    fn gaia() -> (Underlay, SiloPlacement) {
        let u = builtin_underlay("aws-gaia").unwrap();
        let p = SiloPlacement::one_per_router(u.routers.len());
        (u, p)
    }

    #[test]
    fn defaults_are_the_cli_defaults() {
        let (u, p) = gaia();
        let o = BuildOptions::from_knobs(|_| None, &u, &p).unwrap();
        assert_eq!(o.center, CenterPolicy::Fastest);
        assert_eq!(o.seed, 0);
        assert_eq!(o.matcha, MatchaOptions::default());
        assert_eq!(o.dcliques, DCliquesBuild::default());
        // Blank texts are the defaults too.
        let blank =
            BuildOptions::from_knobs(knobs(&[("budget", " "), ("center", "")]), &u, &p).unwrap();
        assert_eq!(blank.matcha, MatchaOptions::default());
    }

    #[test]
    fn every_knob_is_read() {
        let (u, p) = gaia();
        let label = u.routers[3].label.clone();
        let pairs = [
            ("center", label.as_str()),
            ("seed", "7"),
            ("budget", "0.25"),
            ("matcha_rounds", "20"),
            ("dc_clique_size", "4"),
            ("dc_steps", "5"),
            ("dc_remove_intra", "1"),
            ("dc_seed", "9"),
            ("dc_labels", "one-class"),
            ("dc_classes", "3"),
        ];
        let o = BuildOptions::from_knobs(knobs(&pairs), &u, &p).unwrap();
        assert_eq!(o.center, CenterPolicy::Silo(3));
        assert_eq!((o.seed, o.matcha.seed), (7, 7));
        assert_eq!((o.matcha.budget, o.matcha.rounds), (0.25, 20));
        assert_eq!(
            o.dcliques.options,
            DCliquesOptions {
                max_size: 4,
                steps: 5,
                remove_intra: 1,
                seed: 9
            }
        );
        assert_eq!(o.dcliques.labels, LabelSource::OneClass { classes: 3 });
    }

    #[test]
    fn bad_values_name_their_knob() {
        let (u, p) = gaia();
        for (key, bad) in [
            ("center", "atlantis"),
            ("seed", "-1"),
            ("budget", "0"),
            ("budget", "1.5"),
            ("matcha_rounds", "0"),
            ("matcha_rounds", "1000001"),
            ("dc_clique_size", "0"),
            ("dc_steps", "x"),
            ("dc_labels", "skewed"),
        ] {
            let e = BuildOptions::from_knobs(knobs(&[(key, bad)]), &u, &p).unwrap_err();
            assert_eq!((e.key, e.value.as_str()), (key, bad));
        }
        let e = BuildOptions::from_knobs(
            knobs(&[("dc_labels", "one-class"), ("dc_classes", "0")]),
            &u,
            &p,
        )
        .unwrap_err();
        assert_eq!(e.key, "dc_classes");
    }

    #[test]
    fn a_centre_router_designates_its_first_silo() {
        let u = builtin_underlay("aws-gaia").unwrap();
        let p = SiloPlacement::per_router(2, u.routers.len()).unwrap();
        let label = u.routers[3].label.clone();
        let o = BuildOptions::from_knobs(knobs(&[("center", label.as_str())]), &u, &p).unwrap();
        assert_eq!(o.center, CenterPolicy::Silo(p.silos_at(3).next().unwrap()));
    }
}
