//! The hardware budget BFC would need on Tofino2 (BFC §3.3.1, §3.3.2, §4, App. A.8): per switch, the memory of
//! the flow table and of the pause counter, and the headers recirculated from the egress to the ingress pipeline
//! to run the dequeue operations there (§4: "we mirror packets as they exit and recirculate the header of the
//! mirrored packet back to the ingress pipeline"), against the recirculation bandwidth ("limited to 12% of the
//! entire switch capacity") and against the packets per second the pipelines can process (each recirculated
//! header "consumes an additional ingress cycle").
//!
//! Field widths. §4 keeps the flow table as three register arrays (assigned queue, packet count `size`,
//! last-touched time) and §6.2.1 gives "76K entries ... 400 KB" for CLOS-128 (a ToR's 24 ports × 32 queues ×
//! 100 = 76,800 entries): about 5.2 bytes per entry. Tofino registers are 8, 16 or 32 bits wide, so by default the
//! queue number takes the narrowest of those that numbers a port's queues (8 bits up to 256 queues), the count
//! and the timestamp 16 bits each: 5 bytes, 384 KB for 76,800 entries. The paper gives no width for the pause
//! counter; it counts packets as `size` does, so 16 bits by default.
//!
//! What the paper leaves open, as parameters: the recirculated header's size (default 64 B, a mirrored packet
//! truncated to the minimum Ethernet frame) and Tofino2's packet rate (default: the switch's capacity in
//! minimum-size frames, 84 B on the wire with preamble and inter-frame gap, i.e. line rate at 64 B packets).
//! §4's sizing argument is consistent with the default header: recirculating 64 B per packet of 500 B (the
//! average below which it suggests sampling) takes 12.8% of the bandwidth those packets use.

use bfcsim_core::{Bytes, NodeId};
use serde::{Deserialize, Serialize};

/// Wire bytes of a minimum-size Ethernet frame with its preamble and inter-frame gap: the default packet rate
/// of a switch is its capacity in such frames.
pub const MIN_FRAME_ON_WIRE: u64 = 84;

/// How to size BFC's hardware (`[metrics.budget]` in an experiment file).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct BudgetConfig {
    /// Bits of a flow-table entry's queue number; default the narrowest register (8, 16 or 32 bits) that
    /// numbers the queues of a port.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub queue_bits: Option<u32>,
    /// Bits of a flow-table entry's packet count `size`.
    pub size_bits: u32,
    /// Bits of a flow-table entry's last-touched timestamp.
    pub time_bits: u32,
    /// Bits of a pause-counter entry.
    pub pause_counter_bits: u32,
    /// Bytes of a recirculated header.
    pub recirculation_header: Bytes,
    /// The recirculation bandwidth, as a fraction of the switch's capacity (§4: 12%).
    pub recirculation_budget: f64,
    /// Packets per second a switch's ingress pipelines process; default its capacity in
    /// [`MIN_FRAME_ON_WIRE`]-byte frames.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pps_capacity: Option<f64>,
}

impl Default for BudgetConfig {
    fn default() -> Self {
        BudgetConfig {
            queue_bits: None,
            size_bits: 16,
            time_bits: 16,
            pause_counter_bits: 16,
            recirculation_header: Bytes(64),
            recirculation_budget: 0.12,
            pps_capacity: None,
        }
    }
}

impl BudgetConfig {
    /// Checks the numbers, and that a configured queue field numbers `queues_per_port` queues; messages name
    /// the field.
    pub fn validate(&self, queues_per_port: u32) -> Result<(), String> {
        for (name, bits) in [
            ("size_bits", Some(self.size_bits)),
            ("time_bits", Some(self.time_bits)),
            ("pause_counter_bits", Some(self.pause_counter_bits)),
            ("queue_bits", self.queue_bits),
        ] {
            if let Some(b) = bits.filter(|b| !(1..=64).contains(b)) {
                return Err(format!("metrics.budget.{name} = {b} must be in 1..=64"));
            }
        }
        if let Some(b) = self
            .queue_bits
            .filter(|&b| b < 32 && (1u64 << b) < queues_per_port as u64)
        {
            return Err(format!(
                "metrics.budget.queue_bits = {b} cannot number {queues_per_port} queues per port"
            ));
        }
        if self.recirculation_header == Bytes(0) {
            return Err("metrics.budget.recirculation_header must be at least 1 byte".into());
        }
        if !(self.recirculation_budget > 0.0 && self.recirculation_budget <= 1.0) {
            return Err(format!(
                "metrics.budget.recirculation_budget = {} must be in (0, 1]",
                self.recirculation_budget
            ));
        }
        if let Some(p) = self.pps_capacity.filter(|p| !(p.is_finite() && *p > 0.0)) {
            return Err(format!(
                "metrics.budget.pps_capacity = {p} must be positive"
            ));
        }
        Ok(())
    }

    /// Bits of the queue field for `queues_per_port` queues.
    pub fn queue_field_bits(&self, queues_per_port: u32) -> u32 {
        self.queue_bits.unwrap_or_else(|| {
            [8, 16, 32]
                .into_iter()
                .find(|&b| (1u64 << b) >= queues_per_port as u64)
                .unwrap_or(32)
        })
    }

    /// Bits of a flow-table entry: queue, `size` and timestamp.
    pub fn entry_bits(&self, queues_per_port: u32) -> u32 {
        self.queue_field_bits(queues_per_port) + self.size_bits + self.time_bits
    }

    /// The budget of one switch from what it held and did.
    pub fn switch_budget(&self, u: &SwitchUsage) -> SwitchBudget {
        let bytes = |entries: u64, bits: u32| (entries * bits as u64).div_ceil(8);
        let capacity = u.capacity_bps.max(1.0);
        let pps = self
            .pps_capacity
            .unwrap_or(capacity / (8 * MIN_FRAME_ON_WIRE) as f64);
        let header_bits = 8.0 * self.recirculation_header.0 as f64;
        SwitchBudget {
            flow_table_entries: u.flow_table_entries,
            flow_table_bytes: bytes(u.flow_table_entries, self.entry_bits(u.queues_per_port)),
            pause_counter_entries: u.pause_counter_entries,
            pause_counter_bytes: bytes(u.pause_counter_entries, self.pause_counter_bits),
            capacity_gbps: u.capacity_bps / 1e9,
            recirculations_per_sec: u.recirculations_per_sec,
            peak_recirculations_per_sec: u.peak_recirculations_per_sec,
            recirculation_share: u.recirculations_per_sec * header_bits / capacity,
            peak_recirculation_share: u.peak_recirculations_per_sec * header_bits / capacity,
            peak_pps_share: u.peak_recirculations_per_sec / pps,
        }
    }

    /// The report over `switches`.
    pub fn report(&self, switches: &[SwitchUsage]) -> BudgetReport {
        let per_switch: Vec<PerSwitch> = switches
            .iter()
            .map(|u| PerSwitch {
                switch: u.switch,
                budget: self.switch_budget(u),
            })
            .collect();
        let mut max = SwitchBudget::default();
        for b in per_switch.iter().map(|p| &p.budget) {
            max = SwitchBudget {
                flow_table_entries: max.flow_table_entries.max(b.flow_table_entries),
                flow_table_bytes: max.flow_table_bytes.max(b.flow_table_bytes),
                pause_counter_entries: max.pause_counter_entries.max(b.pause_counter_entries),
                pause_counter_bytes: max.pause_counter_bytes.max(b.pause_counter_bytes),
                capacity_gbps: max.capacity_gbps.max(b.capacity_gbps),
                recirculations_per_sec: max.recirculations_per_sec.max(b.recirculations_per_sec),
                peak_recirculations_per_sec: max
                    .peak_recirculations_per_sec
                    .max(b.peak_recirculations_per_sec),
                recirculation_share: max.recirculation_share.max(b.recirculation_share),
                peak_recirculation_share: max
                    .peak_recirculation_share
                    .max(b.peak_recirculation_share),
                peak_pps_share: max.peak_pps_share.max(b.peak_pps_share),
            };
        }
        BudgetReport {
            recirculation_header_bytes: self.recirculation_header.0,
            recirculation_budget: self.recirculation_budget,
            pause_counter_bits: self.pause_counter_bits,
            within_recirculation_budget: max.peak_recirculation_share <= self.recirculation_budget,
            max,
            per_switch,
        }
    }
}

/// What one switch's BFC state held and did over a run.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SwitchUsage {
    /// The switch.
    pub switch: NodeId,
    /// Sum of its ports' rates, bits per second.
    pub capacity_bps: f64,
    /// Data queues per port (the width of the queue field).
    pub queues_per_port: u32,
    /// Flow-table entries.
    pub flow_table_entries: u64,
    /// Pause-counter entries: over the ingress ports, the queues of the device upstream.
    pub pause_counter_entries: u64,
    /// Headers recirculated per second, averaged over the run.
    pub recirculations_per_sec: f64,
    /// The same over the busiest sample interval.
    pub peak_recirculations_per_sec: f64,
}

/// One switch's hardware budget.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct SwitchBudget {
    /// Flow-table entries.
    pub flow_table_entries: u64,
    /// Flow-table memory, bytes.
    pub flow_table_bytes: u64,
    /// Pause-counter entries.
    pub pause_counter_entries: u64,
    /// Pause-counter memory, bytes.
    pub pause_counter_bytes: u64,
    /// Switch capacity (its ports' rates summed), Gb/s.
    pub capacity_gbps: f64,
    /// Recirculated headers per second, over the run.
    pub recirculations_per_sec: f64,
    /// Recirculated headers per second in the busiest sample interval.
    pub peak_recirculations_per_sec: f64,
    /// Recirculation bandwidth over the run as a fraction of the switch's capacity (§4 allows 12%).
    pub recirculation_share: f64,
    /// The same in the busiest sample interval.
    pub peak_recirculation_share: f64,
    /// Recirculated headers in the busiest sample interval as a fraction of the pipelines' packet rate.
    pub peak_pps_share: f64,
}

/// A switch's budget, with its id.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct PerSwitch {
    /// The switch.
    pub switch: NodeId,
    /// Its budget.
    #[serde(flatten)]
    pub budget: SwitchBudget,
}

/// The hardware budget of a BFC run (`summary.json`'s `hardware`).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BudgetReport {
    /// Bytes of a recirculated header.
    pub recirculation_header_bytes: u64,
    /// The recirculation bandwidth budget, as a fraction of capacity.
    pub recirculation_budget: f64,
    /// Bits of a pause-counter entry.
    pub pause_counter_bits: u32,
    /// Every switch's busiest interval stayed within the recirculation budget.
    pub within_recirculation_budget: bool,
    /// Each field's maximum over the switches.
    pub max: SwitchBudget,
    /// Each switch.
    pub per_switch: Vec<PerSwitch>,
}

/// The largest rate of a counter over sample intervals.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PeakRate {
    last_count: u64,
    last_secs: f64,
    peak: f64,
}

impl PeakRate {
    /// A counter at `count` at time `secs`.
    pub fn new(count: u64, secs: f64) -> PeakRate {
        PeakRate {
            last_count: count,
            last_secs: secs,
            peak: 0.0,
        }
    }

    /// The counter reads `count` at `secs`: the interval since the last reading may raise the peak.
    pub fn sample(&mut self, count: u64, secs: f64) {
        let dt = secs - self.last_secs;
        if dt > 0.0 {
            self.peak = self.peak.max((count - self.last_count) as f64 / dt);
            self.last_count = count;
            self.last_secs = secs;
        }
    }

    /// The largest rate per second seen.
    pub fn peak(&self) -> f64 {
        self.peak
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A CLOS-128 ToR (24 × 100 Gb/s ports, 32 queues, 100 entries per queue) forwarding `pps` data packets.
    fn tor(pps: f64) -> SwitchUsage {
        SwitchUsage {
            switch: NodeId(128),
            capacity_bps: 24.0 * 100e9,
            queues_per_port: 32,
            flow_table_entries: 24 * 32 * 100,
            // 8 spine ingresses with 32 upstream queues each, 16 host ingresses with 4 NIC queues each.
            pause_counter_entries: 8 * 32 + 16 * 4,
            recirculations_per_sec: pps,
            peak_recirculations_per_sec: 2.0 * pps,
        }
    }

    #[test]
    fn paper_flow_table_is_about_400_kb() {
        let c = BudgetConfig::default();
        assert_eq!((c.queue_field_bits(32), c.entry_bits(32)), (8, 40));
        let b = c.switch_budget(&tor(0.0));
        // §6.2.1: "our flow table has 76K entries. The flow table takes 400 KB of memory."
        assert_eq!(
            (b.flow_table_entries, b.flow_table_bytes),
            (76_800, 384_000)
        );
        assert_eq!((b.pause_counter_entries, b.pause_counter_bytes), (320, 640));
        // §3.3.2's example: 128 upstream queues on each of 32 ports is 4096 entries.
        let pc = c.switch_budget(&SwitchUsage {
            pause_counter_entries: 32 * 128,
            ..tor(0.0)
        });
        assert_eq!(pc.pause_counter_bytes, 8192);
        // Wider queue fields past 256 queues; explicit widths are honoured, packed to the bit.
        assert_eq!((c.queue_field_bits(128), c.queue_field_bits(1024)), (8, 16));
        let packed = BudgetConfig {
            queue_bits: Some(5),
            size_bits: 11,
            time_bits: 9,
            ..c.clone()
        };
        assert_eq!(
            packed.switch_budget(&tor(0.0)).flow_table_bytes,
            76_800 * 25 / 8
        );
    }

    #[test]
    fn recirculation_against_bandwidth_and_packet_rate() {
        let c = BudgetConfig::default();
        // A ToR fully loaded with 1048 B packets forwards 2.4 Tb/s / (8 × 1048 B) packets per second; each
        // recirculates 64 B: 64 / 1048 of the capacity.
        let full = 2.4e12 / (8.0 * 1048.0);
        let b = c.switch_budget(&tor(full));
        assert!((b.recirculation_share - 64.0 / 1048.0).abs() < 1e-12);
        assert!((b.peak_recirculation_share - 128.0 / 1048.0).abs() < 1e-12);
        // Packet rate: the capacity in 84 B frames; the peak is twice the mean.
        assert!((b.peak_pps_share - 2.0 * 84.0 / 1048.0).abs() < 1e-12);
        assert!((b.capacity_gbps - 2400.0).abs() < 1e-9);
        let r = c.report(&[tor(full / 2.0), tor(full)]);
        assert!((r.max.peak_recirculation_share - 128.0 / 1048.0).abs() < 1e-12);
        assert!(!r.within_recirculation_budget, "12.2% > 12%");
        assert!(c.report(&[tor(full / 2.0)]).within_recirculation_budget);
        // An explicit packet rate.
        let fixed = BudgetConfig {
            pps_capacity: Some(1e9),
            ..c
        };
        assert!((fixed.switch_budget(&tor(1e8)).peak_pps_share - 0.2).abs() < 1e-12);
        // §4: at 500 B packets, recirculating every header takes 12.8% of their bandwidth.
        let at500 = BudgetConfig::default().switch_budget(&SwitchUsage {
            peak_recirculations_per_sec: 2.4e12 / (8.0 * 500.0),
            ..tor(0.0)
        });
        assert!((at500.peak_recirculation_share - 0.128).abs() < 1e-12);
    }

    #[test]
    fn peak_rate_over_intervals() {
        let mut p = PeakRate::new(0, 0.0);
        p.sample(10, 1e-5);
        p.sample(40, 2e-5);
        p.sample(40, 2e-5); // an empty interval changes nothing
        p.sample(45, 3e-5);
        assert!((p.peak() - 3e6).abs() < 1e-3);
    }

    #[test]
    fn rejects_bad_parameters() {
        let ok = BudgetConfig::default();
        assert!(ok.validate(1024).is_ok());
        let cases = [
            (
                BudgetConfig {
                    queue_bits: Some(5),
                    ..ok.clone()
                },
                64,
                "cannot number 64 queues",
            ),
            (
                BudgetConfig {
                    size_bits: 0,
                    ..ok.clone()
                },
                32,
                "size_bits = 0",
            ),
            (
                BudgetConfig {
                    recirculation_budget: 1.5,
                    ..ok.clone()
                },
                32,
                "recirculation_budget",
            ),
            (
                BudgetConfig {
                    recirculation_header: Bytes(0),
                    ..ok.clone()
                },
                32,
                "recirculation_header",
            ),
            (
                BudgetConfig {
                    pps_capacity: Some(-1.0),
                    ..ok.clone()
                },
                32,
                "pps_capacity",
            ),
        ];
        for (c, queues, want) in cases {
            let e = c.validate(queues).unwrap_err();
            assert!(e.contains(want), "{e}");
        }
        assert!(
            BudgetConfig {
                queue_bits: Some(5),
                ..ok
            }
            .validate(32)
            .is_ok()
        );
    }
}
