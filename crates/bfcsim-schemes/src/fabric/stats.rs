//! The counts the fabric and the running scheme keep of what happened inside the network.

/// Per-hop flow control counts, and each scheme's own: the fabric's watchdog fills in its alarms, the running
/// scheme adds the rest ([`super::Scheme::add_stats`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HopStats {
    /// PAUSE frames sent.
    pub pause_frames: u64,
    /// RESUME frames sent.
    pub resume_frames: u64,
    /// Refresh frames sent.
    pub refresh_frames: u64,
    /// Frames lost on purpose (`lose_frames`).
    pub frames_lost: u64,
    /// Queues found paused longer than the watchdog bound (each pause episode counted once).
    pub watchdog_alarms: u64,
    /// The first alarm, described.
    pub first_alarm: Option<String>,
    /// BFC's switch counts, summed over switches.
    pub bfc: crate::bfc::BfcStats,
    /// ExpressPass's credit counts.
    pub credits: crate::expresspass::CreditStats,
    /// Homa's grants, RESENDs and core queuing delays.
    pub homa: crate::homa::HomaStats,
    /// Aquarius's switch counts, summed over switches.
    pub aquarius: crate::aquarius::AquariusStats,
}

impl std::ops::Add for HopStats {
    type Output = HopStats;
    /// Two shards' counts together; the first alarm is the left one's, else the right one's.
    fn add(self, o: HopStats) -> HopStats {
        HopStats {
            pause_frames: self.pause_frames + o.pause_frames,
            resume_frames: self.resume_frames + o.resume_frames,
            refresh_frames: self.refresh_frames + o.refresh_frames,
            frames_lost: self.frames_lost + o.frames_lost,
            watchdog_alarms: self.watchdog_alarms + o.watchdog_alarms,
            first_alarm: self.first_alarm.or(o.first_alarm),
            bfc: self.bfc + o.bfc,
            credits: self.credits + o.credits,
            homa: self.homa + o.homa,
            aquarius: self.aquarius + o.aquarius,
        }
    }
}

/// PAUSE and RESUME frames a pausing scheme sent, for [`HopStats`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FrameCounts {
    /// PAUSE frames sent.
    pub pauses: u64,
    /// RESUME frames sent.
    pub resumes: u64,
}

impl FrameCounts {
    /// Counts a frame: a PAUSE when `pause`, else a RESUME.
    pub fn count(&mut self, pause: bool) {
        if pause {
            self.pauses += 1;
        } else {
            self.resumes += 1;
        }
    }

    /// Adds these counts to `stats`.
    pub fn add_to(&self, stats: &mut HopStats) {
        stats.pause_frames += self.pauses;
        stats.resume_frames += self.resumes;
    }
}
