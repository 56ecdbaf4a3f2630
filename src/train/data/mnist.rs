//! MNIST from the four IDX files of the original distribution in a
//! directory (uncompressed): `train-images-idx3-ubyte`,
//! `train-labels-idx1-ubyte`, `t10k-images-idx3-ubyte`,
//! `t10k-labels-idx1-ubyte` (a `.` instead of the last `-` is accepted too,
//! as some mirrors name them). Pixels are scaled to `[0, 1]` and then
//! standardised with MNIST's usual mean 0.1307 and std 0.3081.

use std::path::Path;

use super::{DataError, Dataset};

fn read(path: &Path) -> Result<Vec<u8>, DataError> {
    crate::input_file::read_bytes(path, crate::input_file::MAX_INPUT_BYTES).map_err(|source| {
        DataError::Io {
            path: path.display().to_string(),
            source,
        }
    })
}

fn find(dir: &Path, stem: &str) -> std::path::PathBuf {
    let a = dir.join(stem);
    if a.exists() {
        return a;
    }
    let alt = dir.join(stem.replacen("-idx", ".idx", 1));
    if alt.exists() {
        alt
    } else {
        a
    }
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
    let dims: Vec<usize> = (0..ndim)
        .map(|k| {
            u32::from_be_bytes(bytes[4 + 4 * k..8 + 4 * k].try_into().expect("4 bytes")) as usize
        })
        .collect();
    let count: usize = dims.iter().product();
    if bytes.len() != header + count {
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

fn load_pair(dir: &Path, images: &str, labels: &str) -> Result<Dataset, DataError> {
    let (ip, lp) = (find(dir, images), find(dir, labels));
    let (idims, pixels) = parse_idx(&read(&ip)?, &ip.display().to_string())?;
    let (ldims, labels) = parse_idx(&read(&lp)?, &lp.display().to_string())?;
    if idims.len() != 3 || ldims.len() != 1 || idims[0] != ldims[0] {
        return Err(DataError::Format {
            path: ip.display().to_string(),
            message: format!("image dims {idims:?} do not match label dims {ldims:?}"),
        });
    }
    let (h, w) = (idims[1], idims[2]);
    let ds = Dataset {
        features: pixels
            .iter()
            .map(|&p| ((p as f32 / 255.0) - 0.1307) / 0.3081)
            .collect(),
        labels: labels.iter().map(|&l| l as i64).collect(),
        dim: h * w,
        classes: 10,
        image: Some((1, h, w)),
    };
    ds.validate(&lp.display().to_string())?;
    Ok(ds)
}

/// Loads `(train, test)` from `dir`.
pub fn load(dir: &Path) -> Result<(Dataset, Dataset), DataError> {
    Ok((
        load_pair(dir, "train-images-idx3-ubyte", "train-labels-idx1-ubyte")?,
        load_pair(dir, "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte")?,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_generated_idx_files() {
        let dir = std::env::temp_dir().join(format!("fedtopo-mnist-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
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
        assert!((tr.features[1] - ((7.0 / 255.0 - 0.1307) / 0.3081)).abs() < 1e-6);
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
        assert!(matches!(
            load(Path::new("/nonexistent/mnist")),
            Err(DataError::Io { .. })
        ));
    }
}
