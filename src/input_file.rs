//! Reading an input file with bounds: a regular file (not a device, FIFO or
//! directory, which could be read forever) of at most a given number of
//! bytes. Every reader of user files (GML, CSV, overlay files, experiment
//! files, job results) goes through [`read_bytes`] or [`read_text`], so a
//! path such as `/dev/zero` is refused at once instead of filling memory.

use std::io::Read;
use std::path::Path;

/// Largest input file read by default, bytes (256 MiB): far above any
/// underlay, CSV or experiment file (the largest Topology Zoo GML is
/// about 1 MB).
pub const MAX_INPUT_BYTES: u64 = 256 << 20;

/// The bytes of `path`, refused (as an [`std::io::Error`] of kind
/// `InvalidInput`, whose text says why) when it is not a regular file or
/// holds more than `max` bytes. At most `max + 1` bytes are read, whatever
/// the metadata says.
///
/// The file type is checked *before* the file is opened: opening a FIFO
/// for reading blocks until a writer comes, so a FIFO given as an input
/// would hang. On Unix the open is also non-blocking and the type checked
/// again on the open file, so a regular file swapped for a FIFO between
/// the two checks is refused too, never waited on.
///
/// # Errors
/// The I/O error of opening or reading the file; `InvalidInput` for a
/// non-regular file or one larger than `max` bytes.
pub fn read_bytes(path: &Path, max: u64) -> std::io::Result<Vec<u8>> {
    check_regular(&std::fs::metadata(path)?)?;
    let file = open_nonblocking(path)?;
    let meta = file.metadata()?;
    check_regular(&meta)?;
    if meta.len() > max {
        return Err(too_large(max));
    }
    let mut bytes = Vec::new();
    file.take(max.saturating_add(1)).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max {
        return Err(too_large(max));
    }
    Ok(bytes)
}

/// `InvalidInput` unless `meta` is a regular file's.
fn check_regular(meta: &std::fs::Metadata) -> std::io::Result<()> {
    if meta.is_file() {
        return Ok(());
    }
    let kind = if meta.is_dir() {
        "a directory"
    } else {
        "not a regular file (a device, FIFO or socket)"
    };
    Err(invalid(format!("is {kind}; expected a regular file")))
}

/// Opens `path` for reading; on Unix with `O_NONBLOCK`, so that opening a
/// FIFO returns at once (reads of a regular file ignore the flag).
fn open_nonblocking(path: &Path) -> std::io::Result<std::fs::File> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK);
    }
    options.open(path)
}

/// Whether `path` is a regular file (following symbolic links), without
/// opening it: `Ok(false)` when it does not exist; `InvalidInput` when it
/// exists but is a directory, device, FIFO or socket.
///
/// # Errors
/// As [`read_bytes`]'s type check, and the I/O error of `stat`.
pub fn is_regular_file(path: &Path) -> std::io::Result<bool> {
    match std::fs::metadata(path) {
        Ok(meta) => check_regular(&meta).map(|()| true),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(e),
    }
}

/// [`read_bytes`] decoded as UTF-8.
///
/// # Errors
/// As [`read_bytes`]; `InvalidData` when the file is not UTF-8.
pub fn read_text(path: &Path, max: u64) -> std::io::Result<String> {
    String::from_utf8(read_bytes(path, max)?).map_err(|e| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("not UTF-8 text ({e})"),
        )
    })
}

fn invalid(message: String) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidInput, message)
}

fn too_large(max: u64) -> std::io::Error {
    invalid(format!(
        "more than {max} bytes ({} MiB), the most an input file may have",
        max >> 20
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn devices_directories_and_large_files_are_refused() {
        let e = read_bytes(Path::new("/dev/zero"), MAX_INPUT_BYTES).unwrap_err();
        assert!(e.to_string().contains("not a regular file"), "{e}");
        let e = read_bytes(Path::new("/"), MAX_INPUT_BYTES).unwrap_err();
        assert!(e.to_string().contains("directory"), "{e}");
        let dir = std::env::temp_dir().join(format!("fedtopo-input-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("ten.txt");
        std::fs::write(&f, "0123456789").unwrap();
        assert_eq!(read_text(&f, 10).unwrap(), "0123456789");
        assert!(read_bytes(&f, 9)
            .unwrap_err()
            .to_string()
            .contains("more than 9 bytes"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
