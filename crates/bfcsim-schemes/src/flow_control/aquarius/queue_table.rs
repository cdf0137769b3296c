//! Aquarius §3.3, opportunistic re-assigning, on the upstream side of a PAUSE: the QueueTable of one egress port
//! records how many flows are mapped to each queue and which flows the downstream paused. A PAUSE for a flow
//! alone in its queue (no uncongested flow shares it) pauses that queue. A PAUSE for a flow that shares its
//! queue with uncongested flows re-assigns the flow: its later packets go to the reserved queue (rsvQ), which is
//! paused, while the original queue goes on serving the victims. The rsvQ is taken from the empty queues when
//! first needed, shared by every congested flow of the port, and released when it is empty again (dynamic
//! allocation, as in §4). It resumes once every one of its flows has been resumed and the packets those flows
//! had in their original queues have all left, so that no later packet overtakes an earlier one. A PAUSE for a
//! flow with no packet at the port and nothing to re-assign it to (re-assigning off, or no empty queue) is kept
//! pending: the queue the flow's next packet is mapped to is paused for it, so that every PAUSE holds its flow.
//!
//! Flows are named by their flow-table key (egress port, hash of the FID), as the switch's flow table names
//! them: two flows whose FIDs collide are one flow to the table, as in the hardware.

/// A change of one queue's pause state at the port.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueueAction {
    /// Stop serving the queue.
    Pause(u16),
    /// Serve it again.
    Resume(u16),
}

/// A congested flow re-assigned to the rsvQ.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Member {
    key: u64,
    /// Its RESUME arrived (since its last PAUSE).
    resumed: bool,
    /// Its packets still in its original queue, queued before it was re-assigned.
    earlier: u32,
}

/// What a PAUSE did at the port.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Paused {
    /// The queue whose state changed.
    pub action: Option<QueueAction>,
    /// The flow was re-assigned to this queue (the rsvQ): its later packets go there.
    pub moved_to: Option<u16>,
    /// The PAUSE paused the flow's own queue: it was alone there, or re-assigning was off or found no queue.
    pub sole: bool,
    /// A rsvQ was allocated for this PAUSE.
    pub allocated: bool,
    /// Re-assigning was needed but no queue was empty: the flow's own queue was paused instead.
    pub unavailable: bool,
}

/// What [`QueueTable::joined`] did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Joined {
    /// Queue changes at the port, in order: the rsvQ paused, the joined queue resumed.
    pub actions: [Option<QueueAction>; 2],
    /// The flows moved to the rsvQ: their later packets go there.
    pub moved: Vec<u64>,
    /// The rsvQ they moved to.
    pub rsv: Option<u16>,
    /// It was allocated for them.
    pub allocated: bool,
}

/// The QueueTable of one egress port (§3.3).
#[derive(Clone, Debug)]
pub struct QueueTable {
    /// Flows with packets at the port mapped to each queue.
    flows: Vec<u32>,
    /// Per queue, the flows whose PAUSE paused it (as the only flow not yet paused there).
    held_by: Vec<Vec<u64>>,
    rsv: Option<u16>,
    /// The rsvQ is statically configured (§3.3): set aside for good, never released.
    fixed_rsv: bool,
    rsv_paused: bool,
    members: Vec<Member>,
    /// Flows paused while they had no packet here and no rsvQ to wait in: their next packet's queue is paused
    /// for them ([`QueueTable::mapped`]).
    pending: Vec<u64>,
}

impl QueueTable {
    /// The table of a port with `queues` queues whose rsvQ is allocated dynamically (§4).
    pub fn new(queues: usize) -> QueueTable {
        QueueTable {
            flows: vec![0; queues],
            held_by: vec![Vec::new(); queues],
            rsv: None,
            fixed_rsv: false,
            rsv_paused: false,
            members: Vec::new(),
            pending: Vec::new(),
        }
    }

    /// The table of a port with `queues` queues whose rsvQ is queue `rsv`, statically configured (§3.3).
    pub fn with_static_rsv(queues: usize, rsv: u16) -> QueueTable {
        QueueTable {
            rsv: Some(rsv),
            fixed_rsv: true,
            ..QueueTable::new(queues)
        }
    }

    /// Flows mapped to queue `q` (N of Occu_fair, §3.2).
    pub fn flows_in(&self, q: u16) -> u32 {
        self.flows[q as usize]
    }

    /// The reserved queue, while allocated.
    pub fn rsv(&self) -> Option<u16> {
        self.rsv
    }

    /// A flow (its first packet at the port) is now mapped to queue `q`.
    pub fn flow_active(&mut self, q: u16) {
        self.flows[q as usize] += 1;
    }

    /// A flow mapped to queue `q` has no packet left at the port.
    pub fn flow_idle(&mut self, q: u16) {
        let n = &mut self.flows[q as usize];
        debug_assert!(*n > 0, "no flow mapped to queue {q}");
        *n = n.saturating_sub(1);
    }

    /// The queue a paused flow's packets must join whatever its flow-table entry says: the rsvQ for a
    /// re-assigned flow, its held queue for a flow whose PAUSE paused its own queue.
    pub fn forced(&self, key: u64) -> Option<u16> {
        if self.members.iter().any(|m| m.key == key) {
            return self.rsv;
        }
        self.held_by
            .iter()
            .position(|h| h.contains(&key))
            .map(|q| q as u16)
    }

    /// §3.3: a PAUSE for flow `key`, whose packets at the port (`size` of them) are in queue `current` (`None`:
    /// it has none). With `reassign`, a flow that shares its queue with uncongested flows moves to the rsvQ,
    /// allocated with `find_empty` (an empty queue that is neither paused nor reserved) if none is.
    pub fn handle_pause(
        &mut self,
        key: u64,
        current: Option<u16>,
        size: u32,
        reassign: bool,
        find_empty: impl FnOnce() -> Option<u16>,
    ) -> Paused {
        if let Some(m) = self.members.iter_mut().find(|m| m.key == key) {
            m.resumed = false;
            return Paused {
                action: self.hold_rsv(),
                ..Paused::default()
            };
        }
        if self.held_by.iter().any(|h| h.contains(&key)) || self.pending.contains(&key) {
            return Paused::default();
        }
        let shares = current.is_some_and(|q| {
            let q = q as usize;
            self.flows[q] as usize > self.held_by[q].len() + 1
        });
        if let Some(q) = current
            && (!reassign || !shares)
        {
            return self.hold(q, key);
        }
        if !reassign {
            // No packets here and nothing to re-assign to: the queue of the flow's next packet is paused.
            self.pending.push(key);
            return Paused::default();
        }
        let Some((rsv, allocated)) = self.take_rsv(find_empty) else {
            return match current {
                Some(q) => Paused {
                    unavailable: true,
                    ..self.hold(q, key)
                },
                None => {
                    self.pending.push(key);
                    Paused {
                        unavailable: true,
                        ..Paused::default()
                    }
                }
            };
        };
        let earlier = if current.is_some() { size } else { 0 };
        self.enrol(key, current, rsv, earlier);
        Paused {
            action: self.hold_rsv(),
            moved_to: Some(rsv),
            sole: false,
            allocated,
            unavailable: false,
        }
    }

    /// A new uncongested flow was mapped to queue `q` (every queue of the port was paused, so it took the
    /// shortest, §3.1). If `q` is held paused for flows that were alone there, they now share it with an
    /// uncongested flow: they move to the rsvQ (allocated with `find_empty` if none is) as §3.3 moves a paused
    /// flow that shares its queue, `packets(key)` giving the packets each has at the port, all in `q`; and `q`
    /// resumes. Returns the flows moved, the rsvQ, and the queue changes; nothing when no rsvQ can be had.
    pub fn joined(
        &mut self,
        q: u16,
        packets: impl Fn(u64) -> u32,
        find_empty: impl FnOnce() -> Option<u16>,
    ) -> Joined {
        if self.held_by[q as usize].is_empty() {
            return Joined::default();
        }
        let Some((rsv, allocated)) = self.take_rsv(find_empty) else {
            return Joined::default();
        };
        let moved = std::mem::take(&mut self.held_by[q as usize]);
        for &key in &moved {
            self.enrol(key, Some(q), rsv, packets(key));
        }
        Joined {
            actions: [self.hold_rsv(), Some(QueueAction::Resume(q))],
            moved,
            rsv: Some(rsv),
            allocated,
        }
    }

    /// The rsvQ, allocated with `find_empty` if none is: the queue and whether it was allocated now; `None`
    /// when there is none and no queue is empty.
    fn take_rsv(&mut self, find_empty: impl FnOnce() -> Option<u16>) -> Option<(u16, bool)> {
        if let Some(r) = self.rsv {
            return Some((r, false));
        }
        let r = find_empty()?;
        self.rsv = Some(r);
        self.rsv_paused = false;
        Some((r, true))
    }

    /// Flow `key` is re-assigned to rsvQ `rsv`: mapped there from queue `from` (`None`: it has no packet at the
    /// port), with `earlier` packets left in `from` that must leave before the rsvQ may resume.
    fn enrol(&mut self, key: u64, from: Option<u16>, rsv: u16, earlier: u32) {
        if let Some(q) = from {
            self.flow_idle(q);
            self.flow_active(rsv);
        }
        self.members.push(Member {
            key,
            resumed: false,
            earlier,
        });
    }

    /// Pauses queue `q` for flow `key`, alone there among the flows not yet paused.
    fn hold(&mut self, q: u16, key: u64) -> Paused {
        let held = &mut self.held_by[q as usize];
        held.push(key);
        Paused {
            action: (held.len() == 1).then_some(QueueAction::Pause(q)),
            sole: true,
            ..Paused::default()
        }
    }

    fn hold_rsv(&mut self) -> Option<QueueAction> {
        let r = self.rsv?;
        (!std::mem::replace(&mut self.rsv_paused, true)).then_some(QueueAction::Pause(r))
    }

    /// A flow with no packet at the port was mapped to queue `q` for its next packet: if a PAUSE for it is
    /// pending, `q` is paused for it now, as if the PAUSE had found the flow alone there.
    pub fn mapped(&mut self, key: u64, q: u16) -> Option<QueueAction> {
        let at = self.pending.iter().position(|&k| k == key)?;
        self.pending.swap_remove(at);
        self.hold(q, key).action
    }

    /// §3.3: a RESUME for flow `key`. `rsv_empty`: the rsvQ holds no packet.
    pub fn handle_resume(&mut self, key: u64, rsv_empty: bool) -> Option<QueueAction> {
        if let Some(at) = self.pending.iter().position(|&k| k == key) {
            self.pending.swap_remove(at);
            return None;
        }
        if let Some(m) = self.members.iter_mut().find(|m| m.key == key) {
            m.resumed = true;
            return self.try_resume(rsv_empty);
        }
        let q = self.held_by.iter().position(|h| h.contains(&key))?;
        let held = &mut self.held_by[q];
        held.retain(|&k| k != key);
        held.is_empty().then_some(QueueAction::Resume(q as u16))
    }

    /// A packet of flow `key` left queue `from`; `rsv_empty`: the rsvQ holds no packet now.
    pub fn departed(&mut self, key: u64, from: u16, rsv_empty: bool) -> Option<QueueAction> {
        let r = self.rsv?;
        if from == r {
            self.release_if_done(rsv_empty);
            return None;
        }
        let m = self.members.iter_mut().find(|m| m.key == key)?;
        if m.earlier == 0 {
            return None;
        }
        m.earlier -= 1;
        if m.earlier > 0 {
            return None;
        }
        self.try_resume(rsv_empty)
    }

    /// Resumes the rsvQ once every flow in it was resumed and their earlier packets drained (§3.3), then
    /// releases it if it is empty.
    fn try_resume(&mut self, rsv_empty: bool) -> Option<QueueAction> {
        let r = self.rsv?;
        let ready = self.members.iter().all(|m| m.resumed && m.earlier == 0);
        if !ready || !self.rsv_paused {
            return None;
        }
        self.rsv_paused = false;
        self.release_if_done(rsv_empty);
        Some(QueueAction::Resume(r))
    }

    /// §3.3: "When rsvQ becomes empty, it is released to the initial dynamic flow mapping." Only an rsvQ that
    /// is not paused is released: a paused one still holds back flows that have no packet in it yet. A static
    /// rsvQ stays set aside, and only forgets its flows.
    fn release_if_done(&mut self, rsv_empty: bool) {
        if rsv_empty && !self.rsv_paused {
            if !self.fixed_rsv {
                self.rsv = None;
            }
            self.members.clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A port of 8 queues with flows `a`, `b` in queue 2 and `c` alone in queue 5.
    fn port() -> QueueTable {
        let mut t = QueueTable::new(8);
        t.flow_active(2);
        t.flow_active(2);
        t.flow_active(5);
        t
    }

    const A: u64 = 10;
    const B: u64 = 11;
    const C: u64 = 12;

    #[test]
    fn a_flow_alone_in_its_queue_pauses_the_queue() {
        let mut t = port();
        let p = t.handle_pause(C, Some(5), 4, true, || unreachable!("no rsvQ needed"));
        assert_eq!(p.action, Some(QueueAction::Pause(5)));
        assert!(p.sole && p.moved_to.is_none());
        assert_eq!(t.forced(C), Some(5));
        assert_eq!(
            t.handle_pause(C, Some(5), 4, true, || None),
            Paused::default()
        );
        assert_eq!(t.handle_resume(C, true), Some(QueueAction::Resume(5)));
        assert_eq!(t.forced(C), None);
        assert_eq!(
            t.handle_resume(C, true),
            None,
            "a stray RESUME changes nothing"
        );
    }

    #[test]
    fn a_flow_sharing_its_queue_moves_to_a_paused_rsvq() {
        let mut t = port();
        let p = t.handle_pause(A, Some(2), 3, true, || Some(6));
        assert_eq!(p.action, Some(QueueAction::Pause(6)));
        assert_eq!(p.moved_to, Some(6));
        assert!(p.allocated && !p.sole);
        assert_eq!(t.rsv(), Some(6));
        assert_eq!(t.forced(A), Some(6));
        assert_eq!((t.flows_in(2), t.flows_in(6)), (1, 1), "b stays in queue 2");
        // The RESUME arrives while two of a's three earlier packets are still in queue 2: the rsvQ waits.
        assert_eq!(t.departed(A, 2, false), None);
        assert_eq!(t.handle_resume(A, false), None);
        assert_eq!(t.departed(A, 2, false), None);
        assert_eq!(
            t.departed(A, 2, false),
            Some(QueueAction::Resume(6)),
            "the last earlier packet left"
        );
        assert_eq!(t.rsv(), Some(6), "not released while it holds packets");
        assert_eq!(t.departed(A, 6, true), None);
        assert_eq!(t.rsv(), None, "released once empty");
        assert_eq!(t.forced(A), None);
    }

    #[test]
    fn the_rsvq_is_shared_and_resumes_after_every_flows_resume() {
        let mut t = port();
        t.flow_active(2); // a third flow, d, in queue 2
        let d = 13;
        assert!(t.handle_pause(A, Some(2), 1, true, || Some(7)).allocated);
        let p = t.handle_pause(d, Some(2), 1, true, || unreachable!("already allocated"));
        assert_eq!((p.action, p.moved_to), (None, Some(7)), "already paused");
        assert_eq!(t.departed(A, 2, false), None);
        assert_eq!(t.departed(d, 2, false), None);
        assert_eq!(t.handle_resume(A, false), None, "d still paused");
        assert_eq!(t.handle_resume(d, false), Some(QueueAction::Resume(7)));
        // A PAUSE for a flow already in the rsvQ pauses it again.
        assert_eq!(
            t.handle_pause(A, Some(7), 2, true, || None).action,
            Some(QueueAction::Pause(7))
        );
    }

    #[test]
    fn a_flow_sharing_only_with_paused_flows_holds_the_queue() {
        let mut t = port();
        // a is re-assigned: b alone in queue 2 now, so its PAUSE pauses queue 2.
        t.handle_pause(A, Some(2), 1, true, || Some(6));
        let p = t.handle_pause(B, Some(2), 1, true, || unreachable!());
        assert_eq!(p.action, Some(QueueAction::Pause(2)));
        assert!(p.sole);
    }

    #[test]
    fn no_empty_queue_or_no_reassigning_pauses_the_shared_queue() {
        let mut t = port();
        let p = t.handle_pause(A, Some(2), 1, true, || None);
        assert_eq!(p.action, Some(QueueAction::Pause(2)));
        assert!(p.unavailable && p.sole);
        let mut t = port();
        let p = t.handle_pause(A, Some(2), 1, false, || unreachable!());
        assert_eq!(p.action, Some(QueueAction::Pause(2)));
        assert_eq!(
            t.handle_pause(B, Some(2), 1, false, || None).action,
            None,
            "already paused for a"
        );
        assert_eq!(t.handle_resume(A, false), None, "b still holds it");
        assert_eq!(t.handle_resume(B, false), Some(QueueAction::Resume(2)));
    }

    #[test]
    fn a_flow_with_no_packets_here_waits_in_the_rsvq() {
        let mut t = port();
        let p = t.handle_pause(20, None, 0, true, || Some(4));
        assert_eq!(
            (p.action, p.moved_to),
            (Some(QueueAction::Pause(4)), Some(4))
        );
        assert_eq!(
            t.forced(20),
            Some(4),
            "its next packet joins the paused rsvQ"
        );
        assert_eq!(t.handle_resume(20, true), Some(QueueAction::Resume(4)));
        assert_eq!(t.rsv(), None, "empty: released at once");
        let mut off = port();
        assert_eq!(
            off.handle_pause(20, None, 0, false, || None),
            Paused::default()
        );
        assert_eq!(
            off.mapped(20, 3),
            Some(QueueAction::Pause(3)),
            "its next packet's queue is paused for it"
        );
        assert_eq!(off.forced(20), Some(3));
        assert_eq!(off.handle_resume(20, false), Some(QueueAction::Resume(3)));
    }

    #[test]
    fn a_pause_with_no_packets_and_no_empty_queue_waits_for_the_next_packet() {
        let mut t = port();
        let p = t.handle_pause(20, None, 0, true, || None);
        assert!(p.unavailable && p.action.is_none());
        // Resumed before its next packet: nothing to pause.
        assert_eq!(t.handle_resume(20, false), None);
        assert_eq!(t.mapped(20, 2), None);
        // Paused again; its next packet maps to queue 2, shared with a and b, which is paused for it.
        t.handle_pause(20, None, 0, true, || None);
        assert_eq!(t.mapped(20, 2), Some(QueueAction::Pause(2)));
        assert_eq!(t.mapped(20, 2), None, "once");
        assert_eq!(t.handle_resume(20, false), Some(QueueAction::Resume(2)));
    }

    #[test]
    fn a_static_rsvq_is_always_there_and_never_released() {
        let mut t = QueueTable::with_static_rsv(8, 7);
        t.flow_active(2);
        t.flow_active(2);
        assert_eq!(t.rsv(), Some(7));
        let p = t.handle_pause(A, Some(2), 1, true, || {
            unreachable!("a static rsvQ needs no empty queue")
        });
        assert_eq!(
            (p.action, p.moved_to, p.allocated),
            (Some(QueueAction::Pause(7)), Some(7), false)
        );
        assert_eq!(
            t.handle_resume(A, false),
            None,
            "a's earlier packet is still in queue 2"
        );
        assert_eq!(t.departed(A, 2, true), Some(QueueAction::Resume(7)));
        assert_eq!(t.rsv(), Some(7), "kept when empty");
        assert_eq!(t.forced(A), None, "its flows are forgotten");
    }

    #[test]
    fn a_new_flow_joining_a_queue_held_for_a_lone_flow_moves_that_flow_to_the_rsvq() {
        let mut t = port();
        // c is alone in queue 5; its PAUSE pauses the queue.
        assert_eq!(
            t.handle_pause(C, Some(5), 4, true, || unreachable!())
                .action,
            Some(QueueAction::Pause(5))
        );
        // Every queue paused, a new flow takes queue 5: c now shares it, and moves to the rsvQ (queue 6) with
        // its 4 packets in queue 5 counted as earlier ones; queue 5 serves again.
        t.flow_active(5);
        let j = t.joined(5, |k| if k == C { 4 } else { 0 }, || Some(6));
        assert_eq!(
            j,
            Joined {
                actions: [Some(QueueAction::Pause(6)), Some(QueueAction::Resume(5))],
                moved: vec![C],
                rsv: Some(6),
                allocated: true,
            }
        );
        assert_eq!(t.forced(C), Some(6));
        assert_eq!((t.flows_in(5), t.flows_in(6)), (1, 1));
        // c's RESUME and its earlier packets' departures resume the rsvQ, as for a PAUSE that re-assigned it.
        assert_eq!(t.handle_resume(C, false), None);
        for left in (0..4).rev() {
            let r = t.departed(C, 5, true);
            assert_eq!(r, (left == 0).then_some(QueueAction::Resume(6)));
        }
        // A queue held for nobody, or no rsvQ to be had: nothing happens.
        assert_eq!(t.joined(2, |_| 0, || None), Joined::default());
        let mut u = port();
        u.handle_pause(C, Some(5), 4, true, || unreachable!());
        assert_eq!(u.joined(5, |_| 4, || None), Joined::default());
        assert_eq!(u.forced(C), Some(5));
    }
}
