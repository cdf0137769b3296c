//! Drop-tail with payload cutting end to end: under an incast that overflows the 8-packet queue of the
//! receiver's port, no data packet is lost for good, every cut packet's header draws a NACK and its payload is
//! sent again, every byte is accounted (the cut payloads with the delivered and dropped bytes), and the bit each
//! data packet carries comes back in its reply.

use bfcsim_core::{FlowSpec, Rate, Time};
use bfcsim_net::build::{Build, Star};
use bfcsim_net::mmu::DropReason;
use bfcsim_schemes::cc::CcConfig;
use bfcsim_schemes::transport::Recovery;
use bfcsim_sim::{FlowControl, NicConfig, Sim, SimParams, SwitchConfig};
use bfcsim_trim_tail::{TrimTail, TrimTailConfig};

/// Eight senders of 100 KB each to one receiver on a star of 100 Gb/s links, all at once, with selective
/// repeat (the `dctcp-trim` preset's transport).
fn incast(cfg: TrimTailConfig) -> Sim {
    incast_with(cfg, Recovery::Selective)
}

fn incast_with(cfg: TrimTailConfig, recovery: Recovery) -> Sim {
    let mut p = SimParams {
        switch: SwitchConfig::default(),
        nic: NicConfig::default(),
        cc: CcConfig::Dctcp(Default::default()),
        flow_control: FlowControl::TrimTail(cfg),
        seed: 1,
    };
    p.nic.transport.recovery = recovery;
    let flows: Vec<_> = (1..9)
        .map(|s| FlowSpec::new(s, 0, 100_000, Time::ZERO))
        .collect();
    let star = Star {
        hosts: 9,
        rate: Rate::gbps(100),
        delay: Time::from_us(1),
    };
    let mut sim = Sim::new(star.build().unwrap(), &flows, p).unwrap();
    sim.run();
    sim
}

#[test]
fn an_incast_loses_no_payload_for_good() {
    let sim = incast(TrimTailConfig::default());
    assert_eq!(sim.flows_done(), sim.flow_count(), "every flow finished");
    assert!(
        sim.check_invariants().is_empty(),
        "{:?}",
        sim.check_invariants()
    );
    let c = sim.counters();
    assert!(c.trimmed_pkts > 50, "the queue overflowed: {c:?}");
    assert_eq!(c.trimmed_bytes, c.trimmed_pkts * (1048 - 64));
    assert_eq!(
        c.dropped_pkts, 0,
        "headers ride the control queue: nothing is dropped"
    );
    let s = sim.scheme_stats::<TrimTail>().expect("trim-tail ran");
    assert_eq!(s.header_nacks, c.trimmed_pkts, "every header drew a NACK");
    assert!(
        c.retransmits >= c.trimmed_pkts,
        "every cut payload was sent again"
    );
    assert_eq!(c.timeouts, 0, "no loss waited for a timeout");
    assert!(s.echoes > 700, "replies bring the bit back: {s:?}");
}

/// Under go-back-N a header's NACK sends its sender back to that segment only if no go-back since covers it:
/// the run completes without timeouts, at the price of resending what was not lost.
#[test]
fn go_back_n_recovers_from_headers_too() {
    let sim = incast_with(TrimTailConfig::default(), Recovery::GoBackN);
    assert_eq!(sim.flows_done(), sim.flow_count());
    assert!(
        sim.check_invariants().is_empty(),
        "{:?}",
        sim.check_invariants()
    );
    let c = sim.counters();
    assert_eq!(c.timeouts, 0);
    assert!(
        c.retransmits > c.trimmed_pkts,
        "go-back-N resends more than was cut: {c:?}"
    );
}

#[test]
fn a_full_header_queue_drops_headers_with_their_reason() {
    let sim = incast(TrimTailConfig {
        header_packets: 2,
        ..TrimTailConfig::default()
    });
    let dropped = sim
        .drops()
        .into_iter()
        .find(|&(r, _)| r == DropReason::HeaderQueueFull)
        .map_or(0, |(_, n)| n);
    let s = sim.scheme_stats::<TrimTail>().expect("trim-tail ran");
    assert!(dropped > 0 && dropped == s.header_drops, "{dropped} {s:?}");
    assert_eq!(
        sim.flows_done(),
        sim.flow_count(),
        "timeouts recover what the NACKs could not"
    );
    assert!(
        sim.check_invariants().is_empty(),
        "{:?}",
        sim.check_invariants()
    );
}
