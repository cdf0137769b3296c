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

/// Reads `path` to a string, turning an I/O failure into an [`InputError`] naming the file.
pub fn read_to_string(path: impl AsRef<Path>) -> Result<String, InputError> {
    let path = path.as_ref();
    std::fs::read_to_string(path).map_err(|e| InputError::file(path, format!("cannot read: {e}")))
}
