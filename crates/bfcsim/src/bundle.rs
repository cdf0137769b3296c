//! The repository's `experiments/` tree (experiment files, figure definitions, the palette, topology and flow
//! files), bundled into the binary at build time, so that an installed `bfcsim` (`cargo install --locked --path
//! crates/bfcsim`) runs `bfcsim run experiments/clos128-google-dctcp.toml` and `bfcsim reproduce` from any
//! directory. A path that exists is always used as it is: files in the working directory override the bundle.
//! A relative path under `experiments/` that does not exist is read from the bundle's copy, extracted once per
//! bundle into the user's cache directory (files are read by path everywhere, and experiments name each other
//! by relative paths, so the bundle is a directory like the repository's). `bfcsim reproduce --export DIR`
//! writes the bundle out for editing.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use crate::provenance::short_hash;

include!(concat!(env!("OUT_DIR"), "/bundle.rs"));

/// `path`, or the bundle's copy of it when `path` does not exist and the bundle has it.
pub fn resolve(path: &Path) -> Result<PathBuf, String> {
    if path.exists() || path.is_absolute() || !path.starts_with("experiments") {
        return Ok(path.to_path_buf());
    }
    let rel: Vec<String> = path
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    let rel = rel.join("/");
    let bundled = FILES
        .iter()
        .any(|(name, _)| *name == rel || name.starts_with(&format!("{rel}/")));
    if !bundled {
        return Ok(path.to_path_buf());
    }
    Ok(extracted()?.join(path))
}

/// Writes every bundled file under `dir` (as `dir/experiments/...`), which must not hold `experiments/` yet (a
/// checkout's own files are not overwritten); returns how many.
pub fn export(dir: &Path) -> Result<usize, String> {
    let target = dir.join("experiments");
    if target.exists() {
        return Err(format!(
            "{} exists: export into a directory without one (files there would be overwritten)",
            target.display()
        ));
    }
    write_all(dir)
}

/// Writes every bundled file under `dir`.
fn write_all(dir: &Path) -> Result<usize, String> {
    for (name, bytes) in FILES {
        let path = dir.join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|e| format!("creating {}: {e}", parent.display()))?;
        }
        bfcsim_metrics::write_atomic(&path, |w| w.write_all(bytes))
            .map_err(|e| format!("writing {}: {e}", path.display()))?;
    }
    Ok(FILES.len())
}

/// The directory holding the extracted bundle (its `experiments/`), extracted on first use.
fn extracted() -> Result<PathBuf, String> {
    static DIR: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    DIR.get_or_init(|| {
        let mut all = Vec::new();
        for (name, bytes) in FILES {
            all.extend_from_slice(name.as_bytes());
            all.push(0);
            all.extend_from_slice(bytes);
        }
        let base = cache_root().join(format!("bundle-{}", short_hash(&all)));
        // Complete when every file is there (a cache cleaner may have removed some since).
        let complete = || FILES.iter().all(|(name, _)| base.join(name).is_file());
        if complete() {
            return Ok(base);
        }
        // Written beside its place and renamed into it, so a half-extracted bundle is never used; a process that
        // loses the race to rename uses the winner's copy.
        let partial = base.with_extension(format!("partial-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&partial);
        write_all(&partial)?;
        if base.exists() && !complete() {
            let _ = std::fs::remove_dir_all(&base);
        }
        if std::fs::rename(&partial, &base).is_err() {
            let _ = std::fs::remove_dir_all(&partial);
        }
        if !complete() {
            return Err(format!(
                "extracting the bundled experiments into {}",
                base.display()
            ));
        }
        Ok(base)
    })
    .clone()
}

/// `$XDG_CACHE_HOME/bfcsim`, `$HOME/.cache/bfcsim`, or the temporary directory's `bfcsim`.
fn cache_root() -> PathBuf {
    let var = |k: &str| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    var("XDG_CACHE_HOME")
        .or_else(|| var("HOME").map(|h| h.join(".cache")))
        .unwrap_or_else(std::env::temp_dir)
        .join("bfcsim")
}
