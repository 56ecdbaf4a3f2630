//! A map projection for pictures of an underlay: equirectangular (plate
//! carrée) with a standard parallel, the simplest projection that keeps
//! north up and east right.
//!
//! A point at latitude `lat` and longitude `lon` (degrees) goes to
//!
//! ```text
//! x = wrap(lon - lon0) * cos(lat0)     (east)
//! y = lat                              (north)
//! ```
//!
//! in degrees of arc along the equator, where `lat0` (the standard
//! parallel) is the middle of the points' latitude range, so that
//! distances along it are true to scale, and `lon0` is the middle of the
//! smallest longitude interval holding every point (the map is cut at the
//! widest empty meridian gap, so a network around the antimeridian, e.g.
//! across the Pacific, is not torn apart). `wrap` brings a longitude
//! difference into `[-180, 180)`.
//!
//! [`Frame`] then fits the projected points into a pixel box (y down,
//! one scale for both axes).

/// Latitudes beyond this (degrees) do not shrink the east-west scale
/// further (`cos` of the standard parallel is at least `cos(80 deg)`).
const MAX_STANDARD_PARALLEL_DEG: f64 = 80.0;

/// An equirectangular projection (module docs).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Projection {
    /// Central meridian, degrees east.
    pub lon0: f64,
    /// Standard parallel, degrees north.
    pub lat0: f64,
}

/// `d` brought into `[-180, 180)` degrees.
fn wrap(d: f64) -> f64 {
    (d + 180.0).rem_euclid(360.0) - 180.0
}

impl Projection {
    /// The projection fitted to `points` (`(latitude, longitude)`, degrees;
    /// non-finite ones are ignored): `lon0` the middle of the smallest
    /// longitude interval holding them, `lat0` the middle of their latitude
    /// range. `None` without any finite point.
    pub fn fit(points: impl IntoIterator<Item = (f64, f64)>) -> Option<Projection> {
        let pts: Vec<(f64, f64)> = points
            .into_iter()
            .filter(|(a, b)| a.is_finite() && b.is_finite())
            .collect();
        if pts.is_empty() {
            return None;
        }
        let (lat_lo, lat_hi) = pts.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |a, p| {
            (a.0.min(p.0), a.1.max(p.0))
        });
        let mut lons: Vec<f64> = pts.iter().map(|p| p.1.rem_euclid(360.0)).collect();
        lons.sort_by(f64::total_cmp);
        // The widest gap between consecutive longitudes (the last one wraps
        // around to the first): the map's cut.
        let n = lons.len();
        let (mut gap, mut after) = (lons[0] + 360.0 - lons[n - 1], 0);
        for i in 1..n {
            let g = lons[i] - lons[i - 1];
            if g > gap {
                gap = g;
                after = i;
            }
        }
        let start = lons[after];
        let lon0 = wrap(start + (360.0 - gap) / 2.0);
        let lat0 =
            ((lat_lo + lat_hi) / 2.0).clamp(-MAX_STANDARD_PARALLEL_DEG, MAX_STANDARD_PARALLEL_DEG);
        Some(Projection { lon0, lat0 })
    }

    /// `(x, y)` of a point (module docs), degrees of arc; x east, y north.
    pub fn project(&self, lat: f64, lon: f64) -> (f64, f64) {
        (wrap(lon - self.lon0) * self.lat0.to_radians().cos(), lat)
    }

    /// A one-line statement of the projection for captions, e.g.
    /// `equirectangular projection, standard parallel 38.5°N, central
    /// meridian 95.3°W`.
    pub fn describe(&self) -> String {
        let ns = if self.lat0 < 0.0 { 'S' } else { 'N' };
        let ew = if self.lon0 < 0.0 { 'W' } else { 'E' };
        format!(
            "equirectangular projection (x = longitude x cos {:.1}°, y = latitude), standard parallel {:.1}°{ns}, central meridian {:.1}°{ew}",
            self.lat0,
            self.lat0.abs(),
            self.lon0.abs()
        )
    }
}

/// Projected points fitted into a pixel box: one scale for x and y (no
/// distortion beyond the projection's), centred, y growing downwards.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Frame {
    /// Pixels per degree of arc.
    pub scale: f64,
    /// Pixel x of projected x = 0.
    pub x0: f64,
    /// Pixel y of projected y = 0.
    pub y0: f64,
}

impl Frame {
    /// The frame that fits projected `points` into the box `left..left +
    /// width`, `top..top + height` (pixels), centred; a single point (or
    /// none) sits in the middle.
    pub fn fit(points: &[(f64, f64)], left: f64, top: f64, width: f64, height: f64) -> Frame {
        let fold = |f: fn(&(f64, f64)) -> f64| {
            points
                .iter()
                .map(f)
                .fold((f64::INFINITY, f64::NEG_INFINITY), |a, v| {
                    (a.0.min(v), a.1.max(v))
                })
        };
        let (x_lo, x_hi) = fold(|p| p.0);
        let (y_lo, y_hi) = fold(|p| p.1);
        if !(x_lo.is_finite() && y_lo.is_finite()) {
            return Frame {
                scale: 1.0,
                x0: left + width / 2.0,
                y0: top + height / 2.0,
            };
        }
        let (dx, dy) = (x_hi - x_lo, y_hi - y_lo);
        let scale = match (dx > 1e-12, dy > 1e-12) {
            (true, true) => (width / dx).min(height / dy),
            (true, false) => width / dx,
            (false, true) => height / dy,
            (false, false) => 1.0,
        };
        // Centre the points' box in the pixel box.
        let x0 = left + width / 2.0 - scale * (x_lo + x_hi) / 2.0;
        let y0 = top + height / 2.0 + scale * (y_lo + y_hi) / 2.0;
        Frame { scale, x0, y0 }
    }

    /// Pixel position of projected `(x, y)`.
    pub fn pixel(&self, p: (f64, f64)) -> (f64, f64) {
        (self.x0 + self.scale * p.0, self.y0 - self.scale * p.1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn north_up_east_right_true_scale_on_the_standard_parallel() {
        // Seattle, Miami, Boston.
        let pts = [(47.6, -122.3), (25.8, -80.2), (42.4, -71.1)];
        let p = Projection::fit(pts).unwrap();
        assert!((p.lat0 - (47.6 + 25.8) / 2.0).abs() < 1e-12);
        assert!((p.lon0 - (-122.3 - 71.1) / 2.0).abs() < 1e-9, "{p:?}");
        let (sx, sy) = p.project(47.6, -122.3);
        let (bx, by) = p.project(42.4, -71.1);
        assert!(sx < bx && sy > by);
        // One degree of longitude on the standard parallel is cos(lat0)
        // degrees of arc.
        let (a, _) = p.project(p.lat0, 10.0);
        let (b, _) = p.project(p.lat0, 11.0);
        assert!(((b - a) - p.lat0.to_radians().cos()).abs() < 1e-12);
        assert!(p.describe().contains("36.7°N") && p.describe().contains("96.7°W"));
    }

    #[test]
    fn networks_across_the_antimeridian_stay_whole() {
        // Tokyo, Honolulu, Los Angeles: the widest gap is over Europe.
        let pts = [(35.7, 139.7), (21.3, -157.9), (34.1, -118.2)];
        let p = Projection::fit(pts).unwrap();
        let xs: Vec<f64> = pts.iter().map(|&(a, b)| p.project(a, b).0).collect();
        // West to east: Tokyo, Honolulu, Los Angeles, within 120 degrees.
        assert!(xs[0] < xs[1] && xs[1] < xs[2], "{xs:?} {p:?}");
        assert!(xs[2] - xs[0] < 120.0);
    }

    #[test]
    fn frames_keep_one_scale_and_centre() {
        let pts = [(0.0, 0.0), (10.0, 5.0)];
        let f = Frame::fit(&pts, 10.0, 20.0, 400.0, 100.0);
        // Height binds: 100 px for 5 degrees.
        assert!((f.scale - 20.0).abs() < 1e-12);
        let (a, b) = (f.pixel(pts[0]), f.pixel(pts[1]));
        assert!((a.1 - 120.0).abs() < 1e-9 && (b.1 - 20.0).abs() < 1e-9);
        assert!(((a.0 + b.0) / 2.0 - 210.0).abs() < 1e-9);
        let one = Frame::fit(&[(3.0, 4.0)], 0.0, 0.0, 100.0, 50.0);
        assert_eq!(one.pixel((3.0, 4.0)), (50.0, 25.0));
        assert!(Projection::fit([(f64::NAN, 1.0)]).is_none());
    }
}
