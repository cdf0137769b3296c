//! The ideal flow completion time a measured FCT is divided by.
//!
//! BFC (NSDI'22, §6.2.1) reports "FCT normalized to the best possible FCT at link rate"; what "best possible"
//! means differs between codebases, so [`Ideal`] offers three definitions:
//!
//! - [`Ideal::Exact`] (bfcsim's default): the exact completion time of the flow alone on an idle network, as
//!   this simulator would produce it: the sender serializes every packet back to back on its NIC, every hop is
//!   store-and-forward FIFO, each packet is serialized with [`Rate::tx_time`] (per packet, rounded up to a
//!   picosecond), the receiver acknowledges every `ack_every` packets and the last one, and the flow completes
//!   when the last ACK reaches the sender (it may queue behind the ACK before it when the last packet is short).
//! - [`Ideal::BfcArtifact`]: the closed form of BFC's public artifact (`calculate_fct_slowdown.py`).
//! - [`Ideal::Hpcc`]: HPCC's ns-3 `standalone_fct` (`third.cc`, `qp_finish`), in integer nanoseconds.
//!
//! # How [`Ideal::Exact`] is computed without a per-packet loop
//!
//! Number the packets `i = 1..n` and the hops `h = 0..H-1`; let `s(i,h)` be the serialization time of packet `i`
//! on hop `h` and `d_h` the delay after hop `h`. Store-and-forward FIFO gives the departure recurrence
//! `D(i,h) = max(D(i-1,h), D(i,h-1) + d_{h-1}) + s(i,h)` with every packet ready at time 0. In max-plus algebra
//! its solution is the heaviest monotone lattice path from `(1,0)` to `(n,H-1)` (each step goes to the next
//! packet on the same hop or to the next hop for the same packet), plus the delays, which every path crosses
//! once each. All packets but the last have the same service time `p_h`, the last one `l_h`, so a path spends
//! hops `0..=k` on packets `1..n-1` (best weight `Σ_{h≤k} p_h + (n-2)·max_{h≤k} p_h`) and hops `k..H` on
//! packet `n` (weight `Σ_{h≥k} l_h`): the answer is the maximum over the `H` choices of `k`, O(hops).
//!
//! The ACK stream is another tandem of FIFO hops whose customers (all of service `u_k`) are the ACKs of packets
//! `N, 2N, .., mN` (`m = ⌊(n-1)/N⌋` for `ack_every = N`) and of packet `n`; the last ACK leaves the reverse
//! path at `max_j [a_{jN} + Σ u_k + (m-j+1)·max u_k]` or `a_n + Σ u_k`, and since `a_i` is affine in `i` for
//! `i < n`, only `j = 1` and `j = m` can attain the maximum.

use bfcsim_core::{Bytes, Rate, Time};
use serde::{Deserialize, Serialize};

/// One hop of a route: a link and what lies behind it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Hop {
    /// Rate of the link's transmitter (the sender's NIC for the first hop).
    pub rate: Rate,
    /// Propagation delay of the link plus the processing delay of the switch it leads into (just the
    /// propagation delay for the last hop, into the destination host).
    pub delay: Time,
}

/// The route of a flow as the ideal-FCT formulas need it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct PathProfile {
    /// Hops from the sender's NIC to the receiver, in order (at least one).
    pub hops: Vec<Hop>,
    /// Hops of the ACK from the receiver back to the sender (at least one). Only the sum of their delays
    /// matters, so the reversed data path is exact for the ACK even when switch processing delays are non-zero.
    pub ack_hops: Vec<Hop>,
    /// Whether sender and receiver hang off the same ToR (used only by [`Ideal::BfcArtifact`]).
    pub same_rack: bool,
}

impl PathProfile {
    /// A path whose ACKs take the same links back; `same_rack` is set when the path has at most two hops
    /// (host → ToR → host).
    pub fn mirrored(hops: Vec<Hop>) -> PathProfile {
        let ack_hops = hops.iter().rev().copied().collect();
        let same_rack = hops.len() <= 2;
        PathProfile {
            hops,
            ack_hops,
            same_rack,
        }
    }
}

/// How a flow's payload becomes packets on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PacketFormat {
    /// Payload bytes per full packet (the MTU payload).
    pub payload: u64,
    /// Header bytes added to every data packet on the wire.
    pub header: u64,
    /// Size of an ACK frame on the wire.
    pub ack_size: u64,
    /// The receiver acknowledges every this many packets, and always the last one.
    pub ack_every: u64,
}

impl Default for PacketFormat {
    fn default() -> Self {
        PacketFormat {
            payload: 1000,
            header: 48,
            ack_size: 64,
            ack_every: 1,
        }
    }
}

impl PacketFormat {
    /// Number of packets for `size` payload bytes: `ceil(size / payload)`, and 1 for an empty flow.
    pub fn packets(&self, size: Bytes) -> u64 {
        size.0.div_ceil(self.payload).max(1)
    }

    /// Wire size of a full packet.
    pub fn full_wire(&self) -> Bytes {
        Bytes(self.payload + self.header)
    }

    /// Wire size of the last packet of a `size`-byte flow: its payload remainder plus the header.
    pub fn last_wire(&self, size: Bytes) -> Bytes {
        let n = self.packets(size);
        Bytes(size.0 - (n - 1) * self.payload + self.header)
    }

    /// Total bytes on the wire for the data of a `size`-byte flow.
    pub fn total_wire(&self, size: Bytes) -> Bytes {
        Bytes(
            size.0
                .saturating_add(self.packets(size).saturating_mul(self.header)),
        )
    }
}

/// A definition of the ideal (best possible) FCT; see the module documentation.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Ideal {
    /// Exact FCT alone on an idle network, with the receiver's ACKs every `ack_every` packets.
    #[default]
    Exact,
    /// BFC artifact: `np = floor(size/1000)+1`; same rack `4µs + t·(np+1)`, else `8µs + t·(np+3)`, where `t` is
    /// the time of 1000 B at the first hop's (host link) rate (80 ns at 100 Gb/s).
    BfcArtifact,
    /// HPCC `standalone_fct`: `2·Σ delay + Σ_h payload·8/rate_h + total_wire·8/min_h rate_h`, each term
    /// rounded down to whole nanoseconds as HPCC's integer arithmetic does.
    Hpcc,
}

impl Ideal {
    /// The ideal FCT of a `size`-byte flow on `path`; `None` when it exceeds the range of [`Time`] (about 213
    /// days: a huge flow on a very slow link), which a caller must refuse before simulating.
    ///
    /// # Panics
    /// If `path.hops` is empty or, for the exact variants, `path.ack_hops` is empty or `format.payload` is 0.
    pub fn fct(self, path: &PathProfile, format: &PacketFormat, size: Bytes) -> Option<Time> {
        assert!(!path.hops.is_empty(), "ideal FCT of a path without hops");
        let ps = match self {
            Ideal::Exact => exact(path, format, size),
            Ideal::BfcArtifact => bfc_artifact(path, size),
            Ideal::Hpcc => hpcc(path, format, size),
        };
        u64::try_from(ps).ok().map(Time)
    }
}

// The formulas below work in u128 picoseconds, saturating, so that no input can overflow them: a result
// beyond u64 is reported by `Ideal::fct` as `None`.

/// Serialization time of `bytes` at `rate`, rounded up to a picosecond, as [`Rate::tx_time`] rounds it. A
/// multiplication for every rate whose byte time is a whole picosecond: the `u128` division otherwise taken per
/// hop was a third of the runner's ideal-FCT pass, which runs for every flow.
fn tx(rate: Rate, bytes: u64) -> u128 {
    match rate.ps_per_byte() {
        Some(ps) => bytes as u128 * ps as u128,
        None => (bytes as u128 * 8 * 1_000_000_000_000).div_ceil(rate.bps() as u128),
    }
}

fn ps(t: Time) -> u128 {
    t.0 as u128
}

/// Sums and maxima of the data path that both exact variants need.
struct DataPath {
    /// Arrival of the last packet, entirely, at the receiver.
    last_arrival: u128,
    /// Arrival of packet 1 (for `n ≥ 2`).
    first_arrival: u128,
    /// Time between consecutive full-packet arrivals: the slowest hop's full-packet serialization.
    full_gap: u128,
    /// Number of packets.
    n: u64,
}

fn data_path(path: &PathProfile, format: &PacketFormat, size: Bytes) -> DataPath {
    assert!(format.payload > 0, "packet payload must be positive");
    let n = format.packets(size);
    let full = format.full_wire().0;
    let last = format.last_wire(size).0;
    let delays: u128 = path.hops.iter().map(|h| ps(h.delay)).sum();
    let mut suffix_last: u128 = path.hops.iter().map(|h| tx(h.rate, last)).sum();
    // With one packet the only path is along the last packet's row; otherwise maximize over the hop k where the
    // path drops from packet n-1 to packet n.
    let mut best = if n == 1 { suffix_last } else { 0 };
    let (mut prefix_full, mut max_full) = (0u128, 0u128);
    for hop in &path.hops {
        let p = tx(hop.rate, full);
        prefix_full += p;
        max_full = max_full.max(p);
        if n >= 2 {
            let path = prefix_full
                .saturating_add(max_full.saturating_mul((n - 2) as u128))
                .saturating_add(suffix_last);
            best = best.max(path);
            suffix_last -= tx(hop.rate, last);
        }
    }
    DataPath {
        last_arrival: best.saturating_add(delays),
        first_arrival: prefix_full + delays,
        full_gap: max_full,
        n,
    }
}

fn ack_sums(path: &PathProfile, format: &PacketFormat) -> (u128, u128, u128) {
    assert!(
        !path.ack_hops.is_empty(),
        "ideal FCT of a path without ACK hops"
    );
    path.ack_hops
        .iter()
        .fold((0, 0, 0), |(sum, max, delay), h| {
            let t = tx(h.rate, format.ack_size);
            (sum + t, max.max(t), delay + ps(h.delay))
        })
}

fn exact(path: &PathProfile, format: &PacketFormat, size: Bytes) -> u128 {
    let data = data_path(path, format, size);
    let (ack_tx, ack_max, ack_delay) = ack_sums(path, format);
    let mut leave = data.last_arrival.saturating_add(ack_tx);
    let every = format.ack_every.max(1);
    let m = (data.n - 1) / every;
    if m >= 1 {
        // ACK j is sent when packet j·N arrives, at first_arrival + (j·N - 1)·full_gap; the ACKs j..m and the
        // last one queue behind each other at the reverse path's slowest hop.
        let ack_at = |j: u64| {
            data.first_arrival
                .saturating_add(data.full_gap.saturating_mul((j * every - 1) as u128))
                .saturating_add(ack_tx)
                .saturating_add(ack_max.saturating_mul((m - j + 1) as u128))
        };
        leave = leave.max(ack_at(1)).max(ack_at(m));
    }
    leave.saturating_add(ack_delay)
}

fn bfc_artifact(path: &PathProfile, size: Bytes) -> u128 {
    let np = (size.0 / 1000 + 1) as u128;
    let per_packet = tx(path.hops[0].rate, 1000);
    if path.same_rack {
        ps(Time::from_us(4)).saturating_add(per_packet.saturating_mul(np + 1))
    } else {
        ps(Time::from_us(8)).saturating_add(per_packet.saturating_mul(np + 3))
    }
}

/// `a · b / d` rounded down, in `u64` arithmetic when the product fits (a `u128` division is a library call).
fn mul_div(a: u64, b: u64, d: u64) -> u128 {
    match a.checked_mul(b) {
        Some(product) => (product / d) as u128,
        None => a as u128 * b as u128 / d as u128,
    }
}

fn hpcc(path: &PathProfile, format: &PacketFormat, size: Bytes) -> u128 {
    const NS_BITS: u64 = 8 * 1_000_000_000;
    let delay_ns: u128 = path.hops.iter().map(|h| h.delay.ns() as u128).sum();
    let tx_ns: u128 = path
        .hops
        .iter()
        .map(|h| mul_div(format.payload, NS_BITS, h.rate.bps()))
        .sum();
    let bottleneck = path.hops.iter().map(|h| h.rate.bps()).min().unwrap_or(1);
    let total_wire = format.total_wire(size).0;
    let ns = 2 * delay_ns + tx_ns + mul_div(total_wire, NS_BITS, bottleneck);
    ns.saturating_mul(1000)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Per-packet store-and-forward simulation of the same model, the reference [`Ideal::Exact`] must match.
    fn brute_force(path: &PathProfile, format: &PacketFormat, size: Bytes) -> Time {
        let n = format.packets(size);
        let mut departures = vec![Time::ZERO; path.hops.len()];
        let mut arrivals = Vec::with_capacity(n as usize);
        for i in 1..=n {
            let wire = if i == n {
                format.last_wire(size)
            } else {
                format.full_wire()
            };
            let mut ready = Time::ZERO;
            for (h, hop) in path.hops.iter().enumerate() {
                let start = ready.max(departures[h]);
                departures[h] = start + hop.rate.tx_time(wire);
                ready = departures[h] + hop.delay;
            }
            arrivals.push(ready);
        }
        let every = format.ack_every as usize;
        let acks: Vec<Time> = arrivals
            .iter()
            .enumerate()
            .filter(|(i, _)| (i + 1) % every == 0 || i + 1 == arrivals.len())
            .map(|(_, &a)| a)
            .collect();
        let mut ack_departures = vec![Time::ZERO; path.ack_hops.len()];
        let mut done = Time::ZERO;
        for a in acks {
            let mut ready = a;
            for (h, hop) in path.ack_hops.iter().enumerate() {
                let start = ready.max(ack_departures[h]);
                ack_departures[h] = start + hop.rate.tx_time(Bytes(format.ack_size));
                ready = ack_departures[h] + hop.delay;
            }
            done = ready;
        }
        done
    }

    fn fat_tree_path(hops: usize) -> PathProfile {
        PathProfile::mirrored(vec![
            Hop {
                rate: Rate::gbps(100),
                delay: Time::from_ns(1000)
            };
            hops
        ])
    }

    #[test]
    fn hpcc_matches_ns3_reference_output() {
        // HPCC ns-3 output on a k=8 fat tree: 6 hops of 100 Gb/s and 1 µs, 1000 B payload, 48 B header.
        let (path, fmt) = (fat_tree_path(6), PacketFormat::default());
        assert_eq!(
            Ideal::Hpcc.fct(&path, &fmt, Bytes(38884)),
            Some(Time::from_ns(15740))
        );
        assert_eq!(
            Ideal::Hpcc.fct(&path, &fmt, Bytes(25521)),
            Some(Time::from_ns(14621))
        );
        // Same ToR pair: 2·2000 + 2·80 + floor(23641·8/100) = 6051 ns.
        assert_eq!(
            Ideal::Hpcc.fct(&fat_tree_path(2), &fmt, Bytes(22537)),
            Some(Time::from_ns(6051))
        );
    }

    #[test]
    fn bfc_artifact_closed_form() {
        let fmt = PacketFormat::default();
        // np = 2: 4 µs + 80 ns · 3 and 8 µs + 80 ns · 5.
        assert_eq!(
            Ideal::BfcArtifact.fct(&fat_tree_path(2), &fmt, Bytes(1500)),
            Some(Time::from_ns(4240))
        );
        assert_eq!(
            Ideal::BfcArtifact.fct(&fat_tree_path(6), &fmt, Bytes(1500)),
            Some(Time::from_ns(8400))
        );
        // 1000 B is already two packets for the artifact (floor + 1).
        assert_eq!(
            Ideal::BfcArtifact.fct(&fat_tree_path(2), &fmt, Bytes(1000)),
            Some(Time::from_ns(4240))
        );
        let slow = PathProfile::mirrored(vec![
            Hop {
                rate: Rate::gbps(25),
                delay: Time::from_ns(1000)
            };
            4
        ]);
        assert_eq!(
            Ideal::BfcArtifact.fct(&slow, &fmt, Bytes(0)),
            Some(Time::from_ns(8000 + 320 * 4))
        );
    }

    #[test]
    fn exact_by_hand() {
        // One 1000 B packet over 2 hops of 100 Gb/s, 1 µs each: 2·1048·80 ps + 2 µs, then a 64 B ACK back.
        let path = fat_tree_path(2);
        let fmt = PacketFormat::default();
        let data = Time(2 * 83_840) + Time::from_us(2);
        let ack = Time(2 * 5_120) + Time::from_us(2);
        assert_eq!(Ideal::Exact.fct(&path, &fmt, Bytes(1000)), Some(data + ack));
        // Three packets (1000, 1000, 1): the 49 B tail queues behind the second packet at the second hop, and
        // its ACK (sent 3.92 ns after ACK 2) waits 1.2 ns behind ACK 2.
        let data = Time(3 * 83_840 + 3_920) + Time::from_us(2);
        assert_eq!(
            Ideal::Exact.fct(&path, &fmt, Bytes(2001)),
            Some(data + ack + Time(1_200))
        );
        // Acknowledging every 4th packet, only the last packet's ACK is sent.
        let fmt4 = PacketFormat {
            ack_every: 4,
            ..fmt
        };
        assert_eq!(
            Ideal::Exact.fct(&path, &fmt4, Bytes(2001)),
            Some(data + ack)
        );
    }

    #[test]
    fn exact_handles_a_slow_middle_hop() {
        let fast = Hop {
            rate: Rate::gbps(100),
            delay: Time::from_ns(500),
        };
        let slow = Hop {
            rate: Rate::gbps(10),
            delay: Time::from_ns(500),
        };
        let path = PathProfile::mirrored(vec![fast, slow, fast]);
        let fmt = PacketFormat::default();
        for size in [1, 999, 1000, 1001, 5_555, 100_000] {
            for ack_every in [1, 2, 3, 64] {
                let fmt = PacketFormat { ack_every, ..fmt };
                assert_eq!(
                    Ideal::Exact.fct(&path, &fmt, Bytes(size)),
                    Some(brute_force(&path, &fmt, Bytes(size)))
                );
            }
        }
    }

    fn hop_strategy() -> impl Strategy<Value = Hop> {
        (
            // 3 Gb/s: a byte takes no whole number of picoseconds, so `tx` divides.
            prop::sample::select(vec![3u64, 10, 25, 40, 100, 400]),
            0u64..3_000_000,
        )
            .prop_map(|(g, d)| Hop {
                rate: Rate::gbps(g),
                delay: Time(d),
            })
    }

    #[test]
    fn mul_div_is_exact_past_u64_products() {
        assert_eq!(mul_div(1_000, 8_000_000_000, 100_000_000_000), 80);
        assert_eq!(
            mul_div(u64::MAX, 8_000_000_000, 8_000_000_000),
            u64::MAX as u128
        );
        assert_eq!(tx(Rate(3_000_000_000), 3), 8_000);
        assert_eq!(tx(Rate(3_000_000_000), 1), 2_667);
    }

    #[test]
    fn a_flow_past_the_time_range_has_no_ideal() {
        let slow = PathProfile::mirrored(vec![
            Hop {
                rate: Rate(1),
                delay: Time::from_us(1)
            };
            2
        ]);
        let fmt = PacketFormat::default();
        // 100 MB at 1 b/s take 8·10⁸ s, past the ~213 days a u64 of picoseconds holds.
        for ideal in [Ideal::Exact, Ideal::BfcArtifact, Ideal::Hpcc] {
            assert_eq!(
                ideal.fct(&slow, &fmt, Bytes(100_000_000)),
                None,
                "{ideal:?}"
            );
            assert!(ideal.fct(&slow, &fmt, Bytes(1_000)).is_some(), "{ideal:?}");
        }
        assert_eq!(Ideal::Exact.fct(&slow, &fmt, Bytes(u64::MAX)), None);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(1024))]
        #[test]
        fn exact_equals_per_packet_store_and_forward(
            hops in prop::collection::vec(hop_strategy(), 1..=6),
            ack_hops in prop::collection::vec(hop_strategy(), 1..=6),
            mirrored in any::<bool>(),
            size in prop_oneof![1u64..20_000, 1u64..3_000_000],
            payload in 100u64..9_000,
            header in 0u64..120,
            ack_size in 1u64..200,
            ack_every in prop_oneof![Just(1u64), 1u64..300],
        ) {
            let path = if mirrored {
                PathProfile::mirrored(hops)
            } else {
                PathProfile { hops, ack_hops, same_rack: false }
            };
            let fmt = PacketFormat { payload, header, ack_size, ack_every };
            prop_assert_eq!(Ideal::Exact.fct(&path, &fmt, Bytes(size)), Some(brute_force(&path, &fmt, Bytes(size))));
        }
    }
}
