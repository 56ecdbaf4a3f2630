//! Everything the CLI prints on stdout goes through [`print`] (the macros
//! [`out!`] and [`outln!`]): a failed write is an error the command
//! returns, never a panic (`println!` panics on a full disk) and never a
//! silent loss.
//!
//! * A full disk, an I/O error: `error: cannot write to stdout: ...`, exit 2.
//! * A closed pipe (`fedtopo compare | head -c 10` once `head` has exited):
//!   EPIPE ends the command quietly with status 141 (128 + SIGPIPE), what a
//!   shell reports for a program killed by SIGPIPE; the reader chose to
//!   stop reading, so nothing is printed on stderr, but the status is not 0.
//! * Stdout closed when fedtopo starts (`fedtopo compare >&-`): Rust's
//!   runtime would attach it to `/dev/null` and every write would
//!   "succeed"; on Linux the state of file descriptor 1 is recorded before
//!   the runtime starts ([`STDOUT_CLOSED_AT_START`]), and the first write
//!   fails with EBADF: `error: cannot write to stdout: ...`, exit 2.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};

use thiserror::Error;

/// A write to stdout that failed.
#[derive(Debug, Error)]
#[error("cannot write to stdout: {0}")]
pub struct StdoutError(pub std::io::Error);

impl StdoutError {
    /// True when the reader of a pipe has gone (EPIPE).
    pub fn is_broken_pipe(&self) -> bool {
        self.0.kind() == std::io::ErrorKind::BrokenPipe
    }
}

/// Exit status for a closed pipe: 128 + SIGPIPE (13), as a shell reports a
/// program killed by SIGPIPE.
pub const BROKEN_PIPE_EXIT: i32 = 141;

/// True when file descriptor 1 was closed when the process started (set
/// before `main`, Linux only).
static STDOUT_CLOSED_AT_START: AtomicBool = AtomicBool::new(false);

/// Records whether stdout is open, before Rust's runtime replaces a closed
/// one with `/dev/null`: glibc and musl run `.init_array` functions before
/// `main`, and Rust's start-up code runs from `main`.
#[cfg(target_os = "linux")]
#[used]
#[link_section = ".init_array"]
static RECORD_STDOUT_AT_START: extern "C" fn() = record_stdout_at_start;

#[cfg(target_os = "linux")]
extern "C" fn record_stdout_at_start() {
    // SAFETY: fcntl(F_GETFD) only queries the descriptor's flags; it fails
    // with EBADF when descriptor 1 is not open.
    let closed = unsafe { libc::fcntl(1, libc::F_GETFD) } == -1;
    STDOUT_CLOSED_AT_START.store(closed, Ordering::Relaxed);
}

/// Writes `text` to stdout and flushes it.
///
/// # Errors
/// The write or the flush failed, or stdout was closed at start (EBADF).
pub fn print(text: &str) -> Result<(), StdoutError> {
    if STDOUT_CLOSED_AT_START.load(Ordering::Relaxed) {
        return Err(StdoutError(std::io::Error::other(
            "Bad file descriptor: stdout was closed when fedtopo started",
        )));
    }
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .map_err(StdoutError)
}

/// `print!` that returns early with a [`StdoutError`] (`?`) instead of
/// panicking: for functions returning `anyhow::Result`.
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::cli::output::print(&format!($($arg)*))?
    };
}

/// `println!` that returns early with a [`StdoutError`] (`?`) instead of
/// panicking: for functions returning `anyhow::Result`.
macro_rules! outln {
    () => {
        $crate::cli::output::print("\n")?
    };
    ($($arg:tt)*) => {
        $crate::cli::output::print(&format!("{}\n", format_args!($($arg)*)))?
    };
}

pub(crate) use {out, outln};
