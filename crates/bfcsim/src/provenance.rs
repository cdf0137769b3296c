//! What made a result: the bfcsim version, the source commit it was built from, and its behaviour fingerprint.
//!
//! The behaviour fingerprint is a hash of `tests/fingerprints.txt`, the per-scheme digests of the fingerprint
//! scenarios that the fingerprint test checks on every build. A change of any scheme's behaviour re-records that
//! file (its own commit, by the project's rules), so two builds with the same fingerprint simulate every named
//! scheme alike: a run stored by one is valid for the other, and a report is current for main when its runs have
//! main's fingerprint, whichever commits made them.

use std::sync::LazyLock;

use serde::{Deserialize, Serialize};
use sha2::{Digest as _, Sha256};

/// The source commit of this build (`git rev-parse --short=12`, `-dirty` for uncommitted changes, `unknown`
/// outside a git checkout).
pub const COMMIT: &str = env!("BFCSIM_COMMIT");

/// The bfcsim release.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

static BEHAVIOUR: LazyLock<String> =
    LazyLock::new(|| short_hash(include_bytes!("../tests/fingerprints.txt")));

/// The behaviour fingerprint of this build (12 hex digits of the SHA-256 of `tests/fingerprints.txt`).
pub fn behaviour() -> &'static str {
    &BEHAVIOUR
}

/// 12 hex digits of the SHA-256 of `bytes`.
pub fn short_hash(bytes: &[u8]) -> String {
    Sha256::digest(bytes)[..6]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// What made a result.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Build {
    /// The bfcsim release.
    pub version: String,
    /// The source commit.
    pub commit: String,
    /// The behaviour fingerprint.
    pub behaviour: String,
}

impl Build {
    /// This binary.
    pub fn this() -> Build {
        Build {
            version: VERSION.into(),
            commit: COMMIT.into(),
            behaviour: behaviour().into(),
        }
    }
}
