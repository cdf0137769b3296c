//! What each fabric event (`[[events]]`: a link down, a flap, a slow or lossy link) cost a run, for
//! `summary.json`'s `fabric_events` and the printed summary.

use std::fmt::Write;

use serde::Serialize;

/// One event of the experiment's `[[events]]`, by its index there.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FabricEventReport {
    /// Its index in `[[events]]`.
    pub event: usize,
    /// `down`, `flap`, `rate` or `loss`.
    pub kind: String,
    /// Where: `link A-B` (`A->B` for one direction) or `switch S`.
    pub place: String,
    /// When it starts, in ns.
    pub at_ns: u64,
    /// When it ends, in ns (`None`: never).
    pub until_ns: Option<u64>,
    /// Packets it lost (`link-down` and `link-loss` drops on its links).
    pub drops: u64,
    /// Of those, packets that joined a link's queue after routing knew the link was down: nonzero only where
    /// no live path was left (or a scheme routes by itself).
    pub queued_after_detection: u64,
}

impl FabricEventReport {
    /// One line of the printed summary.
    pub fn text(&self) -> String {
        let mut out = String::new();
        let until = self
            .until_ns
            .map_or(String::new(), |u| format!(" until {u} ns"));
        let _ = writeln!(
            out,
            "fabric event {} ({} {} at {} ns{until}): {} packets lost, {} of them queued after routing knew",
            self.event, self.kind, self.place, self.at_ns, self.drops, self.queued_after_detection
        );
        out
    }
}
