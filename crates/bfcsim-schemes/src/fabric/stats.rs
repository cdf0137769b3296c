//! The counts the fabric and the running scheme keep of what happened inside the network.

/// Per-hop flow control counts the fabric and every pausing scheme keep: the watchdog fills in its alarms, the
/// running scheme the rest ([`super::Scheme::add_stats`]); what a scheme counts beyond these is its own
/// ([`super::Describe::Stats`]).
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
    /// Queue assignments a scheme that assigns flows to queues made (BFC, Aquarius).
    pub assignments: u64,
    /// Assignments that found no empty queue: a new flow shares an occupied one (BFC §3.3.1).
    pub queue_collisions: u64,
    /// Packets that found their flow-table entry holding another flow's packets (BFC §3.3.1).
    pub index_collisions: u64,
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
            assignments: self.assignments + o.assignments,
            queue_collisions: self.queue_collisions + o.queue_collisions,
            index_collisions: self.index_collisions + o.index_collisions,
        }
    }
}

/// Nothing counted: the [`super::Describe::Stats`] of a scheme without counts of its own.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NoStats;

impl std::ops::Add for NoStats {
    type Output = NoStats;
    fn add(self, _: NoStats) -> NoStats {
        NoStats
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
