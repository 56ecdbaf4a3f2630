//! MNIST-format data (MNIST, Fashion-MNIST) from the four IDX files of the
//! original distribution in a directory: `train-images-idx3-ubyte`,
//! `train-labels-idx1-ubyte`, `t10k-images-idx3-ubyte`,
//! `t10k-labels-idx1-ubyte`, each uncompressed or gzip-compressed (`.gz`,
//! as the original sites and Debian's `dataset-fashion-mnist` ship them);
//! a `.` instead of the last `-` is accepted too, as some mirrors name them.
//!
//! Pixels are scaled to `[0, 1]` and standardised with the training set's
//! own pixel mean and standard deviation (one pair for all pixels; for
//! MNIST these are the usual 0.1307 and 0.3081, for Fashion-MNIST 0.2860
//! and 0.3530), applied to both sets.

use std::io::Read;
use std::path::{Path, PathBuf};

use super::{DataError, Dataset};

/// Where Debian's package `dataset-fashion-mnist` installs Fashion-MNIST
/// (`apt-get install dataset-fashion-mnist`; `scripts/fashion-mnist.sh`).
pub const FASHION_MNIST_DIR: &str = "/usr/share/datasets/fashion-mnist";

/// Largest IDX file read (decompressed), bytes: 256 MiB, five times the
/// 47 MB of the MNIST training images.
pub const MAX_IDX_BYTES: u64 = 256 << 20;

/// The four files of a directory, in the order train images, train labels,
/// test images, test labels.
const STEMS: [&str; 4] = [
    "train-images-idx3-ubyte",
    "train-labels-idx1-ubyte",
    "t10k-images-idx3-ubyte",
    "t10k-labels-idx1-ubyte",
];

/// The bytes of an IDX file, decompressed when its name ends in `.gz`;
/// at most [`MAX_IDX_BYTES`] either way.
fn read(path: &Path) -> Result<Vec<u8>, DataError> {
    let io = |source: std::io::Error| DataError::Io {
        path: path.display().to_string(),
        source,
    };
    let raw = crate::input_file::read_bytes(path, MAX_IDX_BYTES).map_err(io)?;
    if path.extension().is_some_and(|e| e == "gz") {
        let mut out = Vec::new();
        flate2::read::GzDecoder::new(raw.as_slice())
            .take(MAX_IDX_BYTES + 1)
            .read_to_end(&mut out)
            .map_err(|e| DataError::Format {
                path: path.display().to_string(),
                message: format!("not a readable gzip file ({e})"),
            })?;
        if out.len() as u64 > MAX_IDX_BYTES {
            return Err(DataError::Format {
                path: path.display().to_string(),
                message: format!("decompresses to more than {MAX_IDX_BYTES} bytes"),
            });
        }
        return Ok(out);
    }
    Ok(raw)
}

/// The names `stem` may have on disk: as is, with `.idx` for the last
/// `-idx`, each uncompressed or `.gz`.
fn candidates(stem: &str) -> Vec<String> {
    let dotted = stem.replacen("-idx", ".idx", 1);
    vec![
        stem.to_string(),
        format!("{stem}.gz"),
        dotted.clone(),
        format!("{dotted}.gz"),
    ]
}

/// The file of `stem` in `dir`, or an error naming every name tried.
fn find(dir: &Path, stem: &str) -> Result<PathBuf, DataError> {
    if !dir.is_dir() {
        return Err(DataError::Invalid(format!(
            "{}: not a directory; expected the directory of the four IDX files of MNIST or \
             Fashion-MNIST ({}; Debian's package dataset-fashion-mnist installs them in {})",
            dir.display(),
            STEMS.join(", "),
            FASHION_MNIST_DIR
        )));
    }
    let names = candidates(stem);
    names
        .iter()
        .map(|n| dir.join(n))
        .find(|p| p.is_file())
        .ok_or_else(|| {
            DataError::Invalid(format!(
                "{}: no {stem} (tried {}); expected the four IDX files of MNIST or \
                 Fashion-MNIST ({}), uncompressed or .gz",
                dir.display(),
                names.join(", "),
                STEMS.join(", ")
            ))
        })
}

/// Parses an IDX file of unsigned bytes: returns the dimensions and the data.
pub fn parse_idx(bytes: &[u8], path: &str) -> Result<(Vec<usize>, Vec<u8>), DataError> {
    let fmt = |m: String| DataError::Format {
        path: path.into(),
        message: m,
    };
    if bytes.len() < 4 || bytes[0] != 0 || bytes[1] != 0 {
        return Err(fmt("not an IDX file (bad magic number)".into()));
    }
    if bytes[2] != 0x08 {
        return Err(fmt(format!(
            "IDX element type 0x{:02x} is not unsigned byte (0x08)",
            bytes[2]
        )));
    }
    let ndim = bytes[3] as usize;
    let header = 4 + 4 * ndim;
    if bytes.len() < header {
        return Err(fmt("truncated IDX header".into()));
    }
    let dims: Vec<usize> = bytes[4..header]
        .chunks_exact(4)
        .map(|b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]) as usize)
        .collect();
    let count = dims
        .iter()
        .try_fold(1usize, |acc, &d| acc.checked_mul(d))
        .ok_or_else(|| fmt(format!("IDX dimensions {dims:?} overflow")))?;
    if bytes.len() - header != count {
        return Err(fmt(format!(
            "IDX dimensions {dims:?} need {count} bytes of data, file has {}",
            bytes.len() - header
        )));
    }
    Ok((dims, bytes[header..].to_vec()))
}

/// Encodes an IDX file of unsigned bytes (used by tests and tools).
pub fn encode_idx(dims: &[usize], data: &[u8]) -> Vec<u8> {
    let mut out = vec![0, 0, 0x08, dims.len() as u8];
    for &d in dims {
        out.extend_from_slice(&(d as u32).to_be_bytes());
    }
    out.extend_from_slice(data);
    out
}

/// Images (pixel bytes, `(h, w)`) and labels of one pair of files.
struct RawPair {
    pixels: Vec<u8>,
    labels: Vec<u8>,
    height: usize,
    width: usize,
    labels_path: String,
}

fn read_pair(dir: &Path, images: &str, labels: &str) -> Result<RawPair, DataError> {
    let (ip, lp) = (find(dir, images)?, find(dir, labels)?);
    let (idims, pixels) = parse_idx(&read(&ip)?, &ip.display().to_string())?;
    let (ldims, labels) = parse_idx(&read(&lp)?, &lp.display().to_string())?;
    if idims.len() != 3 || ldims.len() != 1 || idims[0] != ldims[0] {
        return Err(DataError::Format {
            path: ip.display().to_string(),
            message: format!("image dims {idims:?} do not match label dims {ldims:?}"),
        });
    }
    Ok(RawPair {
        pixels,
        labels,
        height: idims[1],
        width: idims[2],
        labels_path: lp.display().to_string(),
    })
}

/// Mean and standard deviation of pixels scaled to `[0, 1]` (standard
/// deviation 1 for constant pixels).
fn pixel_stats(pixels: &[u8]) -> (f32, f32) {
    let mut hist = [0u64; 256];
    for &p in pixels {
        hist[p as usize] += 1;
    }
    let n = pixels.len().max(1) as f64;
    let mean = (0..256).map(|v| hist[v] as f64 * v as f64).sum::<f64>() / n / 255.0;
    let var = (0..256)
        .map(|v| hist[v] as f64 * (v as f64 / 255.0 - mean).powi(2))
        .sum::<f64>()
        / n;
    let std = if var > 1e-12 { var.sqrt() } else { 1.0 };
    (mean as f32, std as f32)
}

fn dataset(raw: RawPair, (mean, std): (f32, f32)) -> Result<Dataset, DataError> {
    let ds = Dataset {
        features: raw
            .pixels
            .iter()
            .map(|&p| ((p as f32 / 255.0) - mean) / std)
            .collect(),
        labels: raw.labels.iter().map(|&l| l as i64).collect(),
        dim: raw.height * raw.width,
        classes: 10,
        image: Some((1, raw.height, raw.width)),
    };
    ds.validate(&raw.labels_path)?;
    Ok(ds)
}

/// Loads `(train, test)` from `dir`.
///
/// # Errors
/// A file missing (the error names every name tried), unreadable, not
/// gzip when named `.gz`, not IDX, too large, or with labels outside 0..10.
pub fn load(dir: &Path) -> Result<(Dataset, Dataset), DataError> {
    let train = read_pair(dir, STEMS[0], STEMS[1])?;
    let test = read_pair(dir, STEMS[2], STEMS[3])?;
    let stats = pixel_stats(&train.pixels);
    Ok((dataset(train, stats)?, dataset(test, stats)?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn gz(bytes: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        e.write_all(bytes).unwrap();
        e.finish().unwrap()
    }

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("fedtopo-mnist-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn reads_generated_idx_files() {
        let dir = scratch("plain");
        let (n, h, w) = (5, 4, 3);
        let px: Vec<u8> = (0..n * h * w).map(|k| (k * 7 % 256) as u8).collect();
        let lb: Vec<u8> = vec![3, 1, 4, 1, 5];
        for pre in ["train", "t10k"] {
            std::fs::write(
                dir.join(format!("{pre}-images-idx3-ubyte")),
                encode_idx(&[n, h, w], &px),
            )
            .unwrap();
            std::fs::write(
                dir.join(format!("{pre}-labels-idx1-ubyte")),
                encode_idx(&[n], &lb),
            )
            .unwrap();
        }
        let (tr, te) = load(&dir).unwrap();
        assert_eq!(tr.len(), 5);
        assert_eq!(te.labels, vec![3, 1, 4, 1, 5]);
        assert_eq!(tr.image, Some((1, 4, 3)));
        // Standardised with the training pixels' own mean and deviation.
        let scaled: Vec<f64> = px.iter().map(|&p| p as f64 / 255.0).collect();
        let mean = scaled.iter().sum::<f64>() / scaled.len() as f64;
        let sd =
            (scaled.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / scaled.len() as f64).sqrt();
        assert!((tr.features[1] as f64 - (7.0 / 255.0 - mean) / sd).abs() < 1e-5);
        let m: f64 = tr.features.iter().map(|&x| x as f64).sum::<f64>() / tr.features.len() as f64;
        assert!(m.abs() < 1e-5, "{m}");
        // Truncated file and bad label are typed errors.
        std::fs::write(
            dir.join("t10k-labels-idx1-ubyte"),
            &encode_idx(&[n], &lb)[..9],
        )
        .unwrap();
        assert!(matches!(load(&dir), Err(DataError::Format { .. })));
        std::fs::write(
            dir.join("t10k-labels-idx1-ubyte"),
            encode_idx(&[n], &[0, 1, 2, 3, 10]),
        )
        .unwrap();
        assert!(matches!(load(&dir), Err(DataError::Invalid(_))));
        std::fs::remove_dir_all(&dir).ok();
        let e = load(Path::new("/nonexistent/mnist")).unwrap_err();
        assert!(e.to_string().contains("not a directory"), "{e}");
    }

    /// Gzip-compressed files (Debian's dataset-fashion-mnist) read the same
    /// as uncompressed ones; a missing file names what was tried; a `.gz`
    /// that is not gzip is a format error.
    #[test]
    fn reads_gzip_files_and_names_missing_ones() {
        let (n, h, w) = (6, 2, 2);
        let px: Vec<u8> = (0..n * h * w).map(|k| (k * 11 % 256) as u8).collect();
        let lb: Vec<u8> = vec![0, 9, 2, 2, 7, 1];
        let plain = scratch("ref");
        let packed = scratch("gz");
        for pre in ["train", "t10k"] {
            let images = encode_idx(&[n, h, w], &px);
            let labels = encode_idx(&[n], &lb);
            std::fs::write(plain.join(format!("{pre}-images-idx3-ubyte")), &images).unwrap();
            std::fs::write(plain.join(format!("{pre}-labels-idx1-ubyte")), &labels).unwrap();
            std::fs::write(
                packed.join(format!("{pre}-images-idx3-ubyte.gz")),
                gz(&images),
            )
            .unwrap();
            std::fs::write(
                packed.join(format!("{pre}-labels-idx1-ubyte.gz")),
                gz(&labels),
            )
            .unwrap();
        }
        assert_eq!(load(&plain).unwrap(), load(&packed).unwrap());
        std::fs::write(packed.join("t10k-labels-idx1-ubyte.gz"), b"not gzip").unwrap();
        let e = load(&packed).unwrap_err();
        assert!(matches!(e, DataError::Format { .. }), "{e}");
        assert!(e.to_string().contains("gzip"), "{e}");
        std::fs::remove_file(packed.join("t10k-labels-idx1-ubyte.gz")).unwrap();
        let e = load(&packed).unwrap_err().to_string();
        assert!(
            e.contains("no t10k-labels-idx1-ubyte") && e.contains("t10k-labels-idx1-ubyte.gz"),
            "{e}"
        );
        for d in [plain, packed] {
            std::fs::remove_dir_all(d).ok();
        }
    }

    /// The real Fashion-MNIST of Debian's package, when installed: 60,000
    /// training and 10,000 test images of 28 x 28 in 10 balanced classes.
    #[test]
    fn reads_debian_fashion_mnist_when_installed() {
        let dir = Path::new(FASHION_MNIST_DIR);
        if !dir.is_dir() {
            // CI installs the package and sets FEDTOPO_REQUIRE_DATASETS.
            assert!(
                std::env::var_os("FEDTOPO_REQUIRE_DATASETS").is_none(),
                "FEDTOPO_REQUIRE_DATASETS is set but {FASHION_MNIST_DIR} is absent"
            );
            eprintln!("skipped: {FASHION_MNIST_DIR} absent (scripts/fashion-mnist.sh installs it)");
            return;
        }
        let (tr, te) = load(dir).unwrap();
        assert_eq!((tr.len(), te.len()), (60_000, 10_000));
        assert_eq!(tr.image, Some((1, 28, 28)));
        for c in 0..10 {
            assert_eq!(tr.labels.iter().filter(|&&l| l == c).count(), 6000);
        }
    }
}
