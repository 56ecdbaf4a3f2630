//! Geodesic distances on the WGS-84 ellipsoid (not a sphere).

use geographiclib_rs::{Geodesic, InverseGeodesic};
use std::sync::OnceLock;

fn wgs84() -> &'static Geodesic {
    static WGS84: OnceLock<Geodesic> = OnceLock::new();
    WGS84.get_or_init(Geodesic::wgs84)
}

/// Shortest distance in km along the WGS-84 ellipsoid between two points given as
/// `(latitude, longitude)` in degrees.
///
/// Latitudes must lie in [-90, 90] and both values must be finite; otherwise the
/// result is `NaN` (the caller validates coordinates before calling).
pub fn geodesic_km(a: (f64, f64), b: (f64, f64)) -> f64 {
    let valid = |(lat, lon): (f64, f64)| lat.is_finite() && lon.is_finite() && lat.abs() <= 90.0;
    if !valid(a) || !valid(b) {
        return f64::NAN;
    }
    let metres: f64 = wgs84().inverse(a.0, a.1, b.0, b.1);
    metres / 1000.0
}

/// The mean of `points` (`(latitude, longitude)` in degrees) on a sphere:
/// each point becomes a unit vector, the vectors are averaged and the mean
/// is normalised back to `(latitude, longitude)` in degrees (longitude in
/// (-180, 180]). One point is returned as is; when the mean vector is
/// shorter than 1e-9 (antipodal points) the first point is returned;
/// `None` for no points. Latitudes are treated as spherical (geocentric),
/// an approximation of at most 0.2 degrees for geodetic latitudes.
pub fn spherical_mean(points: &[(f64, f64)]) -> Option<(f64, f64)> {
    let first = *points.first()?;
    if points.len() == 1 {
        return Some(first);
    }
    let (mut x, mut y, mut z) = (0.0f64, 0.0f64, 0.0f64);
    for &(lat, lon) in points {
        let (la, lo) = (lat.to_radians(), lon.to_radians());
        x += la.cos() * lo.cos();
        y += la.cos() * lo.sin();
        z += la.sin();
    }
    let k = points.len() as f64;
    let (x, y, z) = (x / k, y / k, z / k);
    if (x * x + y * y + z * z).sqrt() < 1e-9 {
        return Some(first);
    }
    let lat = z.atan2((x * x + y * y).sqrt()).to_degrees();
    let lon = y.atan2(x).to_degrees();
    Some((lat, lon))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn jfk_to_lhr_is_about_5555_km() {
        let d = geodesic_km((40.6413, -73.7781), (51.4700, -0.4543));
        assert!((d - 5555.0).abs() < 1.0, "got {d}");
    }

    #[test]
    fn same_point_is_zero() {
        assert_eq!(
            geodesic_km((-33.86785, 151.20732), (-33.86785, 151.20732)),
            0.0
        );
    }

    #[test]
    fn quarter_meridian_is_ellipsoidal_not_spherical() {
        // Equator to pole along a meridian: 10001.966 km on WGS-84
        // (a sphere of radius 6371 km would give 10007.5 km).
        let d = geodesic_km((0.0, 0.0), (90.0, 0.0));
        assert!((d - 10001.966).abs() < 0.01, "got {d}");
    }

    #[test]
    fn spherical_means_by_hand() {
        assert_eq!(spherical_mean(&[]), None);
        assert_eq!(spherical_mean(&[(12.5, -3.0)]), Some((12.5, -3.0)));
        // (0,0) and (0,90): the mean vector (1/2, 1/2, 0) points to (0, 45).
        let (lat, lon) = spherical_mean(&[(0.0, 0.0), (0.0, 90.0)]).unwrap_or_default();
        assert!(
            lat.abs() < 1e-12 && (lon - 45.0).abs() < 1e-12,
            "{lat} {lon}"
        );
        // Plus the pole: (1/3, 1/3, 1/3), latitude asin(1/sqrt 3) = 35.26438968...
        let (lat, lon) =
            spherical_mean(&[(0.0, 0.0), (0.0, 90.0), (90.0, 0.0)]).unwrap_or_default();
        assert!((lat - 35.264_389_682_754_654).abs() < 1e-9, "{lat}");
        assert!((lon - 45.0).abs() < 1e-9, "{lon}");
        // Across the antimeridian: (0,170) and (0,-170) average to (0,180).
        let (lat, lon) = spherical_mean(&[(0.0, 170.0), (0.0, -170.0)]).unwrap_or_default();
        assert!(
            lat.abs() < 1e-9 && (lon.abs() - 180.0).abs() < 1e-9,
            "{lat} {lon}"
        );
        // Antipodes: the first point.
        assert_eq!(
            spherical_mean(&[(0.0, 0.0), (0.0, 180.0)]),
            Some((0.0, 0.0))
        );
    }

    #[test]
    fn invalid_inputs_give_nan() {
        assert!(geodesic_km((91.0, 0.0), (0.0, 0.0)).is_nan());
        assert!(geodesic_km((0.0, f64::INFINITY), (0.0, 0.0)).is_nan());
    }

    proptest! {
        #[test]
        fn symmetric_and_bounded(lat1 in -90.0f64..=90.0, lon1 in -180.0f64..=180.0,
                                 lat2 in -90.0f64..=90.0, lon2 in -180.0f64..=180.0) {
            let d1 = geodesic_km((lat1, lon1), (lat2, lon2));
            let d2 = geodesic_km((lat2, lon2), (lat1, lon1));
            prop_assert!((0.0..=20_004.0).contains(&d1));
            prop_assert!((d1 - d2).abs() < 1e-6);
        }
    }
}
