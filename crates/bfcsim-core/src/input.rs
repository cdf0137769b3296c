//! Errors in user-supplied files (topology, flow list, CDF, experiment TOML): each names the file, the line and
//! the problem, so bad input produces a message and a non-zero exit, never a panic.

use std::fmt;
use std::path::{Path, PathBuf};

/// A problem in an input file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputError {
    /// The file, as the user named it.
    pub file: PathBuf,
    /// 1-based line number, when the problem is on one line.
    pub line: Option<usize>,
    /// What is wrong, in words a user can act on.
    pub message: String,
}

impl InputError {
    /// A problem on `line` (1-based) of `file`.
    pub fn at(file: impl AsRef<Path>, line: usize, message: impl Into<String>) -> Self {
        InputError {
            file: file.as_ref().to_path_buf(),
            line: Some(line),
            message: message.into(),
        }
    }
    /// A problem with `file` as a whole (unreadable, empty, inconsistent).
    pub fn file(file: impl AsRef<Path>, message: impl Into<String>) -> Self {
        InputError {
            file: file.as_ref().to_path_buf(),
            line: None,
            message: message.into(),
        }
    }
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "{}:{}: {}", self.file.display(), line, self.message),
            None => write!(f, "{}: {}", self.file.display(), self.message),
        }
    }
}

impl std::error::Error for InputError {}

/// The largest input file read: twenty times a paper-scale flow list (50 ms of CLOS-128 arrivals, about 8 M
/// flows, is 230 MB).
pub const MAX_INPUT_BYTES: u64 = 4 << 30;

/// Reads `path` to a string, turning an I/O failure into an [`InputError`] naming the file. Only a regular
/// file or a pipe is read, and at most [`MAX_INPUT_BYTES`] of it: a device (`/dev/zero`), a directory or a
/// runaway pipe is refused before memory grows.
pub fn read_to_string(path: impl AsRef<Path>) -> Result<String, InputError> {
    read_at_most(path.as_ref(), MAX_INPUT_BYTES)
}

fn read_at_most(path: &Path, limit: u64) -> Result<String, InputError> {
    use std::io::Read;
    let fail = |message: String| InputError::file(path, message);
    let cannot = |e: std::io::Error| fail(format!("cannot read: {e}"));
    let meta = std::fs::metadata(path).map_err(cannot)?;
    let kind = meta.file_type();
    if !(kind.is_file() || is_pipe(&kind)) {
        let what = if kind.is_dir() {
            "a directory"
        } else {
            "a device or special file"
        };
        return Err(fail(format!("is {what}, not a file to read")));
    }
    let too_large = || fail(format!("larger than the {limit} bytes an input may have"));
    if meta.len() > limit {
        return Err(too_large());
    }
    let mut text = String::new();
    std::fs::File::open(path)
        .map_err(cannot)?
        .take(limit + 1)
        .read_to_string(&mut text)
        .map_err(cannot)?;
    if text.len() as u64 > limit {
        return Err(too_large());
    }
    Ok(text)
}

#[cfg(unix)]
fn is_pipe(kind: &std::fs::FileType) -> bool {
    std::os::unix::fs::FileTypeExt::is_fifo(kind)
}

#[cfg(not(unix))]
fn is_pipe(_: &std::fs::FileType) -> bool {
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn devices_directories_and_oversized_files_are_refused_before_they_are_read() {
        // Issue 72: `/dev/zero` as a flow file grew to 4.2 GB before failing.
        let e = read_to_string("/dev/zero").unwrap_err();
        assert_eq!(
            e.to_string(),
            "/dev/zero: is a device or special file, not a file to read"
        );
        let dir = std::env::temp_dir();
        let e = read_to_string(&dir).unwrap_err();
        assert!(
            e.to_string()
                .ends_with("is a directory, not a file to read"),
            "{e}"
        );
        let path = dir.join(format!("bfcsim-input-limit-{}", std::process::id()));
        std::fs::write(&path, "0123456789").unwrap();
        assert_eq!(read_at_most(&path, 10).unwrap(), "0123456789");
        let e = read_at_most(&path, 9).unwrap_err();
        assert!(
            e.to_string()
                .ends_with("larger than the 9 bytes an input may have"),
            "{e}"
        );
        std::fs::remove_file(&path).unwrap();
    }
}
