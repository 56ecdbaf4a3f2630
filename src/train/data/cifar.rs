//! CIFAR-10 from its binary distribution in a directory:
//! `data_batch_1.bin` .. `data_batch_5.bin` (those present are used; at
//! least one) and `test_batch.bin`. Each record is 1 label byte then
//! 3 x 32 x 32 pixel bytes (channel-major). Pixels are scaled to `[0, 1]`
//! and standardised per channel with the usual CIFAR-10 means and stds.

use std::path::Path;

use super::{DataError, Dataset};

const RECORD: usize = 1 + 3 * 32 * 32;
const MEAN: [f32; 3] = [0.4914, 0.4822, 0.4465];
const STD: [f32; 3] = [0.2470, 0.2435, 0.2616];

/// Parses the records of one binary batch into `out`.
pub fn parse_batch(bytes: &[u8], path: &str, out: &mut Dataset) -> Result<(), DataError> {
    if bytes.is_empty() || !bytes.len().is_multiple_of(RECORD) {
        return Err(DataError::Format {
            path: path.into(),
            message: format!(
                "size {} is not a positive multiple of {RECORD}-byte records",
                bytes.len()
            ),
        });
    }
    for rec in bytes.chunks(RECORD) {
        if rec[0] > 9 {
            return Err(DataError::Format {
                path: path.into(),
                message: format!("label {} outside 0..10", rec[0]),
            });
        }
        out.labels.push(rec[0] as i64);
        for (k, &p) in rec[1..].iter().enumerate() {
            let ch = k / 1024;
            out.features.push((p as f32 / 255.0 - MEAN[ch]) / STD[ch]);
        }
    }
    Ok(())
}

fn empty() -> Dataset {
    Dataset {
        features: Vec::new(),
        labels: Vec::new(),
        dim: 3 * 32 * 32,
        classes: 10,
        image: Some((3, 32, 32)),
    }
}

fn read_into(path: &Path, out: &mut Dataset) -> Result<(), DataError> {
    let bytes = crate::input_file::read_bytes(path, crate::input_file::MAX_INPUT_BYTES).map_err(
        |source| DataError::Io {
            path: path.display().to_string(),
            source,
        },
    )?;
    parse_batch(&bytes, &path.display().to_string(), out)
}

/// Loads `(train, test)` from `dir`.
pub fn load(dir: &Path) -> Result<(Dataset, Dataset), DataError> {
    let mut train = empty();
    let mut found = 0;
    for b in 1..=5 {
        let p = dir.join(format!("data_batch_{b}.bin"));
        if p.exists() {
            read_into(&p, &mut train)?;
            found += 1;
        }
    }
    if found == 0 {
        return Err(DataError::Io {
            path: dir.join("data_batch_1.bin").display().to_string(),
            source: std::io::Error::new(std::io::ErrorKind::NotFound, "no CIFAR-10 training batch"),
        });
    }
    let mut test = empty();
    read_into(&dir.join("test_batch.bin"), &mut test)?;
    Ok((train, test))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_generated_batches() {
        let dir = std::env::temp_dir().join(format!("fedtopo-cifar-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let rec = |label: u8, px: u8| {
            let mut r = vec![label];
            r.extend(std::iter::repeat_n(px, 3072));
            r
        };
        std::fs::write(
            dir.join("data_batch_1.bin"),
            [rec(2, 0), rec(9, 255)].concat(),
        )
        .unwrap();
        std::fs::write(dir.join("data_batch_3.bin"), rec(0, 128)).unwrap();
        std::fs::write(dir.join("test_batch.bin"), rec(7, 10)).unwrap();
        let (tr, te) = load(&dir).unwrap();
        assert_eq!(tr.labels, vec![2, 9, 0]);
        assert_eq!(te.labels, vec![7]);
        assert_eq!(tr.features.len(), 3 * 3072);
        assert!((tr.features[0] + MEAN[0] / STD[0]).abs() < 1e-6);
        assert!((tr.features[3072 + 2048] - (1.0 - MEAN[2]) / STD[2]).abs() < 1e-5);
        std::fs::write(dir.join("test_batch.bin"), &rec(7, 10)[..100]).unwrap();
        assert!(matches!(load(&dir), Err(DataError::Format { .. })));
        std::fs::write(dir.join("test_batch.bin"), rec(11, 10)).unwrap();
        assert!(matches!(load(&dir), Err(DataError::Format { .. })));
        std::fs::remove_dir_all(&dir).ok();
    }
}
