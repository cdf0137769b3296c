//! The pure PFC modules' tests: ingress accounting, thresholds, and the upstream's pause state.

use super::*;
use crate::flow_control::pfc::*;
use proptest::prelude::*;

const PKT: u64 = 1_000;

/// Two ports, one lossless priority: headroom 5 000 B, reserve 1 000 B each, so 12 000 B are carved out of
/// a 92 000 B buffer and 80 000 B start free; α = 1/8, resume offset 3 KiB.
fn small(prios: Vec<bool>) -> PfcIngress {
    PfcIngress::new(PfcLayout {
        buffer: 92_000,
        lossless: prios,
        headroom: vec![5_000, 5_000],
        threshold: vec![PauseThreshold::Dynamic { fraction: 0.125 }; 2],
        reserve: 1_000,
        resume_offset: 3_072,
    })
}

#[test]
fn threshold_at_free_levels() {
    let dynamic = PauseThreshold::Dynamic { fraction: 0.125 };
    for (free, expect) in [
        (0, 0),
        (7, 0),
        (8, 1),
        (80_000, 10_000),
        (12 * 1024 * 1024, 1_572_864),
    ] {
        assert_eq!(dynamic.bytes(free), expect, "free {free}");
        assert_eq!(dynamic.bytes(free), free >> 3);
    }
    assert_eq!(PauseThreshold::Static { bytes: 30_000 }.bytes(0), 30_000);

    // In the switch the threshold follows the free buffer other ports leave.
    let mut pfc = small(vec![true]);
    assert_eq!((pfc.shared_free(), pfc.threshold(0)), (80_000, 10_000));
    assert_eq!(pfc.admit(1, 0, PKT), Admission::Reserve);
    assert_eq!(pfc.threshold(0), 10_000);
    for _ in 0..8 {
        assert_eq!(pfc.admit(1, 0, PKT), Admission::Shared);
    }
    assert_eq!((pfc.shared_free(), pfc.threshold(0)), (72_000, 9_000));
    assert_eq!(pfc.admit(1, 0, PKT), Admission::Shared);
    assert_eq!((pfc.shared_free(), pfc.threshold(0)), (71_000, 8_875));
}

/// ns-3's `third.cc`: 3 one-way BDPs of headroom, α halved per factor-2 rate over the NICs; the carve-out
/// counts headroom and reserve per (port, lossless priority).
#[test]
fn layout_follows_third_cc() {
    let cfg = PfcConfig::default();
    let us = Time::from_us(1);
    let ports = [
        (Rate::gbps(100), us),
        (Rate::gbps(400), us),
        (Rate::gbps(25), Time::from_ns(500)),
    ];
    let l = cfg
        .layout(Bytes(12 << 20), 2, &ports, Rate::gbps(100), Bytes(1_048))
        .unwrap();
    assert_eq!(l.headroom, vec![37_500, 150_000, 4_686]);
    assert_eq!(
        l.threshold,
        vec![
            PauseThreshold::Dynamic { fraction: 0.125 },
            PauseThreshold::Dynamic { fraction: 0.5 },
            PauseThreshold::Dynamic { fraction: 0.125 },
        ]
    );
    assert_eq!(l.carved(), 2 * (37_500 + 150_000 + 4_686 + 3 * 4_096));
    assert_eq!(
        HeadroomRule::Classic.headroom(Rate::gbps(100), us, Bytes(1_048)),
        Bytes(2 * 12_500 + 2 * 1_048)
    );
    let one = PfcConfig {
        priorities: Some(vec![1]),
        headroom: Some(Bytes(10_000)),
        scale_with_rate: false,
        ..cfg.clone()
    };
    let l = one
        .layout(Bytes(1 << 20), 2, &ports, Rate::gbps(100), Bytes(1_048))
        .unwrap();
    assert_eq!(l.lossless, vec![false, true]);
    assert_eq!(l.headroom, vec![10_000; 3]);
    assert_eq!(l.threshold[1], PauseThreshold::Dynamic { fraction: 0.125 });
    let stat = PfcConfig {
        static_threshold: Some(Bytes(50_000)),
        ..cfg.clone()
    };
    assert_eq!(
        stat.threshold_for(Rate::gbps(400), Rate::gbps(100)),
        PauseThreshold::Static { bytes: 50_000 }
    );
    let err = cfg
        .layout(Bytes(100_000), 1, &ports, Rate::gbps(100), Bytes(1_048))
        .unwrap_err();
    assert!(err.starts_with("flow_control:"), "{err}");
    let err = one
        .layout(Bytes(1 << 20), 1, &ports, Rate::gbps(100), Bytes(1_048))
        .unwrap_err();
    assert!(err.contains("flow_control.priorities"), "{err}");
}

#[test]
fn validate_names_the_field() {
    assert!(PfcConfig::default().validate().is_ok());
    for (cfg, field) in [
        (
            PfcConfig {
                pause_fraction: 0.0,
                ..Default::default()
            },
            "flow_control.pause_fraction",
        ),
        (
            PfcConfig {
                pause_fraction: 1.5,
                ..Default::default()
            },
            "flow_control.pause_fraction",
        ),
        (
            PfcConfig {
                pause_fraction: f64::NAN,
                ..Default::default()
            },
            "flow_control.pause_fraction",
        ),
        (
            PfcConfig {
                static_threshold: Some(Bytes(0)),
                ..Default::default()
            },
            "flow_control.static_threshold",
        ),
        (
            PfcConfig {
                pause_frame: Bytes(0),
                ..Default::default()
            },
            "flow_control.pause_frame",
        ),
        (
            PfcConfig {
                priorities: Some(vec![3, 3]),
                ..Default::default()
            },
            "flow_control.priorities",
        ),
        (
            PfcConfig {
                priorities: Some(vec![64]),
                ..Default::default()
            },
            "flow_control.priorities",
        ),
    ] {
        let e = cfg.validate().unwrap_err();
        assert!(e.starts_with(field), "{e}");
    }
}

/// A lone port fills 1 000 B reserve and then shared bytes `s` while `s ≤ (80 000 − s)/8`: 9 shared
/// packets (s = 9 000 ≥ ⌊71 000/8⌋ = 8 875) trigger the one PAUSE; it resumes once `s + 3 072 ≤ ⌊free/8⌋`,
/// first at s = 6 000 (6 000 + 3 072 ≤ ⌊74 000/8⌋ = 9 250; 7 000 + 3 072 > 9 125).
#[test]
fn pause_once_on_crossing_resume_once_after_hysteresis() {
    let mut pfc = small(vec![true]);
    let mut actions = Vec::new();
    for k in 0..10 {
        let a = pfc.admit(0, 0, PKT);
        assert_eq!(
            a,
            if k == 0 {
                Admission::Reserve
            } else {
                Admission::Shared
            }
        );
        actions.extend(pfc.poll_pause(0, 0).map(|a| (k, a)));
    }
    assert_eq!(actions, vec![(9, PfcAction::Pause { port: 0, prio: 0 })]);
    assert_eq!((pfc.shared_of(0, 0), pfc.threshold(0)), (9_000, 8_875));
    assert!(pfc.is_paused(0, 0) && !pfc.should_pause(0, 0));

    let mut resumes = Vec::new();
    for k in 0..10 {
        pfc.release(0, 0, PKT);
        resumes.extend(pfc.poll_resume(0, 0).map(|a| (k, pfc.shared_of(0, 0), a)));
    }
    assert_eq!(
        resumes,
        vec![(2, 6_000, PfcAction::Resume { port: 0, prio: 0 })]
    );
    assert_eq!(
        (pfc.total(), pfc.shared_used(), pfc.frames()),
        (0, 0, (1, 1))
    );
    assert!(pfc.violations().is_empty());
}

/// After the PAUSE, in-flight packets go to headroom (5 000 B: five packets); only the sixth is a drop. The
/// pause holds while headroom is in use, and releases drain headroom first.
#[test]
fn headroom_absorbs_in_flight_then_drops() {
    let mut pfc = small(vec![true]);
    for _ in 0..10 {
        pfc.admit(0, 0, PKT);
    }
    assert!(pfc.poll_pause(0, 0).is_some());
    for _ in 0..5 {
        assert_eq!(pfc.admit(0, 0, PKT), Admission::Headroom);
        assert_eq!(pfc.poll_pause(0, 0), None);
    }
    assert_eq!(pfc.headroom_bytes(0, 0), 5_000);
    assert_eq!(pfc.lossless_drops(), (0, 0));
    assert_eq!(pfc.admit(0, 0, PKT), Admission::Drop);
    assert_eq!(pfc.lossless_drops(), (1, PKT));
    assert_eq!(
        (pfc.ingress_bytes(0, 0), pfc.headroom_bytes(0, 0)),
        (10_000, 5_000)
    );
    // Even a minimum-size packet: the port is over its threshold and headroom is full.
    assert_eq!(pfc.admit(0, 0, 64), Admission::Drop);

    // Releases empty headroom first; no resume while any is left, even with shared low enough.
    for _ in 0..5 {
        pfc.release(0, 0, PKT);
        assert_eq!(pfc.poll_resume(0, 0), None);
    }
    assert_eq!(
        (pfc.ingress_bytes(0, 0), pfc.headroom_bytes(0, 0)),
        (10_000, 0)
    );
    assert_eq!(pfc.shared_used(), 9_000);
}

/// Two ingress ports at the same priority: separate counters and pause states, one shared free buffer.
#[test]
fn ingress_ports_are_accounted_separately() {
    let mut pfc = small(vec![true]);
    for _ in 0..10 {
        pfc.admit(0, 0, PKT);
    }
    assert!(pfc.poll_pause(0, 0).is_some());
    assert_eq!(pfc.admit(1, 0, PKT), Admission::Reserve);
    assert_eq!(pfc.poll_pause(1, 0), None);
    assert_eq!(pfc.admit(1, 0, PKT), Admission::Shared);
    assert_eq!(pfc.poll_pause(1, 0), None);
    assert_eq!((pfc.shared_free(), pfc.threshold(1)), (70_000, 8_750));
    assert_eq!(
        (pfc.ingress_bytes(0, 0), pfc.ingress_bytes(1, 0)),
        (10_000, 2_000)
    );
    assert!(pfc.is_paused(0, 0) && !pfc.is_paused(1, 0));
    pfc.release(1, 0, PKT);
    pfc.release(1, 0, PKT);
    assert_eq!(pfc.poll_resume(1, 0), None);
    assert!(pfc.is_paused(0, 0));
    assert_eq!(
        (pfc.ingress_bytes(0, 0), pfc.ingress_bytes(1, 0)),
        (10_000, 0)
    );
    assert_eq!(pfc.shared_used(), 9_000);
}

/// A lossy priority is counted as shared use (so it shrinks the lossless threshold) but never reserves,
/// pauses or drops.
#[test]
fn lossy_priority_is_counted_not_paused() {
    let mut pfc = small(vec![true, false]);
    // Carve-out counts only the lossless priority: 80 000 B free as before.
    assert_eq!(pfc.shared_free(), 80_000);
    for _ in 0..100 {
        assert_eq!(pfc.admit(0, 1, PKT), Admission::Shared);
        assert_eq!(pfc.poll_pause(0, 1), None);
    }
    assert_eq!(
        (pfc.shared_used(), pfc.shared_free(), pfc.threshold(1)),
        (100_000, 0, 0)
    );
    // The lossless priority on the other port now pauses on its first packet, in its reserve.
    assert_eq!(pfc.admit(1, 0, PKT), Admission::Reserve);
    assert!(pfc.poll_pause(1, 0).is_some());
    assert_eq!(pfc.admit(1, 0, PKT), Admission::Headroom);
    pfc.release(0, 1, PKT);
    assert_eq!(pfc.poll_resume(1, 0), None, "not (1, 0)'s release");
    assert!(pfc.is_paused(1, 0));
    for _ in 1..100 {
        pfc.release(0, 1, PKT);
    }
    // Headroom drains first; with none left and no shared bytes, (1, 0) resumes.
    pfc.release(1, 0, PKT);
    assert!(pfc.poll_resume(1, 0).is_some());
    pfc.release(1, 0, PKT);
    assert_eq!(pfc.poll_resume(1, 0), None);
    assert_eq!((pfc.total(), pfc.shared_used()), (0, 0));
}

/// A static threshold still never lets shared use exceed the free buffer.
#[test]
fn static_threshold_is_bounded_by_free_buffer() {
    let mut pfc = PfcIngress::new(PfcLayout {
        buffer: 5_000,
        lossless: vec![true],
        headroom: vec![1_000],
        threshold: vec![PauseThreshold::Static { bytes: 100_000 }],
        reserve: 0,
        resume_offset: 0,
    });
    for _ in 0..4 {
        assert_eq!(pfc.admit(0, 0, PKT), Admission::Shared);
    }
    assert_eq!(pfc.shared_free(), 0);
    assert_eq!(pfc.admit(0, 0, PKT), Admission::Headroom);
    assert_eq!(pfc.admit(0, 0, PKT), Admission::Drop);
    assert!(pfc.poll_pause(0, 0).is_some());
}

#[test]
fn port_pause_accounts_paused_time() {
    let us = Time::from_us;
    let mut pp = PortPause::new(8);
    assert!(pp.handle_pause(3, us(10)));
    assert!(
        !pp.handle_pause(3, us(20)),
        "a repeated PAUSE changes nothing"
    );
    assert!(pp.is_paused(3) && !pp.is_paused(2));
    assert!(pp.handle_pause(5, us(20)));
    assert_eq!(pp.paused_mask(), 0b10_1000);
    assert!(pp.handle_resume(3, us(30)));
    assert!(
        !pp.handle_resume(3, us(35)),
        "a stray RESUME changes nothing"
    );
    assert!(pp.handle_resume(5, us(40)));
    assert!(pp.handle_pause(3, us(50)));
    assert_eq!(pp.paused_time(3, us(60)), us(30));
    assert_eq!(pp.paused_time(5, us(60)), us(20));
    assert_eq!(pp.paused_time_any(us(60)), us(40));
    assert_eq!(pp.paused_fraction(3, us(60)), 0.5);
    assert_eq!(pp.paused_fraction_any(Time::ZERO), 0.0);
    assert_eq!(pp.pauses(), 3);
}

#[test]
fn pfc_record_matches_hpcc_format() {
    let r = PauseRecord {
        time: Time::from_ps(2_000_001_234_567),
        node: NodeId(130),
        node_type: 1,
        if_index: 3,
        pause: true,
    };
    assert_eq!(r.to_string(), "2000001234 130 1 3 1");
    let r = PauseRecord {
        pause: false,
        node_type: 0,
        ..r
    };
    assert_eq!(r.to_string(), "2000001234 130 0 3 0");
}

#[derive(Clone, Debug)]
enum Op {
    Arrive { port: usize, prio: u8, size: u64 },
    Leave(usize),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (0..3usize, 0..2u8, 64..=1_500u64)
            .prop_map(|(port, prio, size)| Op::Arrive { port, prio, size }),
        2 => any::<usize>().prop_map(Op::Leave),
    ]
}

/// Drives `pfc` as the engine would: poll for a PAUSE after an admission (not after a drop, as ns-3
/// returns before `CheckAndSendPfc`), for a RESUME after a release. Checks that actions alternate per
/// (port, priority), starting with PAUSE.
struct Harness {
    pfc: PfcIngress,
    held: Vec<(usize, u8, u64)>,
    last: Vec<Option<bool>>,
}

impl Harness {
    fn record(&mut self, a: Option<PfcAction>) -> Result<(), TestCaseError> {
        let Some(a) = a else { return Ok(()) };
        let (port, prio, pause) = match a {
            PfcAction::Pause { port, prio } => (port, prio, true),
            PfcAction::Resume { port, prio } => (port, prio, false),
        };
        let slot = &mut self.last[port * self.pfc.prios + prio as usize];
        prop_assert_eq!(
            slot.unwrap_or(false),
            !pause,
            "{:?} repeats the previous action",
            a
        );
        *slot = Some(pause);
        Ok(())
    }

    fn run(&mut self, op: Op) -> Result<(), TestCaseError> {
        match op {
            Op::Arrive { port, prio, size } => {
                if self.pfc.admit(port, prio, size) != Admission::Drop {
                    self.held.push((port, prio, size));
                    let a = self.pfc.poll_pause(port, prio);
                    self.record(a)?;
                }
            }
            Op::Leave(i) if !self.held.is_empty() => {
                let (port, prio, size) = self.held.swap_remove(i % self.held.len());
                self.pfc.release(port, prio, size);
                let a = self.pfc.poll_resume(port, prio);
                self.record(a)?;
            }
            Op::Leave(_) => {}
        }
        self.invariants()
    }

    fn invariants(&self) -> Result<(), TestCaseError> {
        let pfc = &self.pfc;
        let mut shared = 0;
        for port in 0..pfc.layout.headroom.len() {
            for prio in 0..pfc.prios as u8 {
                let bytes: u64 = self
                    .held
                    .iter()
                    .filter(|h| h.0 == port && h.1 == prio)
                    .map(|h| h.2)
                    .sum();
                prop_assert_eq!(
                    pfc.ingress_bytes(port, prio) + pfc.headroom_bytes(port, prio),
                    bytes
                );
                prop_assert!(pfc.headroom_bytes(port, prio) <= pfc.layout.headroom[port]);
                shared += pfc.shared_of(port, prio);
            }
        }
        prop_assert_eq!(pfc.shared_used(), shared);
        prop_assert!(pfc.violations().is_empty());
        Ok(())
    }
}

proptest! {
    /// Any admit/release sequence: the counters match the packets held, headroom stays within its size,
    /// PAUSE and RESUME alternate strictly per (port, priority) starting with PAUSE, and releasing
    /// everything leaves every counter at zero and nothing paused.
    #[test]
    fn accounting_balances_and_actions_alternate(
        ops in proptest::collection::vec(op(), 1..400),
        lossy1 in any::<bool>(),
        hdrm in 0..6_000u64,
        buffer in 20_000..200_000u64,
    ) {
        let pfc = PfcIngress::new(PfcLayout {
            buffer,
            lossless: vec![true, !lossy1],
            headroom: vec![hdrm; 3],
            threshold: vec![
                PauseThreshold::Dynamic { fraction: 0.125 },
                PauseThreshold::Dynamic { fraction: 0.5 },
                PauseThreshold::Static { bytes: 4_000 },
            ],
            reserve: 1_000,
            resume_offset: 3_072,
        });
        let mut h = Harness { pfc, held: Vec::new(), last: vec![None; 6] };
        for o in ops {
            h.run(o)?;
        }
        while !h.held.is_empty() {
            h.run(Op::Leave(0))?;
        }
        prop_assert_eq!((h.pfc.total(), h.pfc.shared_used()), (0, 0));
        for port in 0..3 {
            for prio in 0..2u8 {
                prop_assert!(!h.pfc.is_paused(port, prio));
            }
        }
        let (p, r) = h.pfc.frames();
        prop_assert_eq!(p, r);
    }
}
