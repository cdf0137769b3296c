//! Switch and NIC configuration, with CLOS-128's defaults (BFC §6.2.1) where a field is left out; the scheme's
//! (`[flow_control]`) is the registry's [`FlowControl`].

pub use crate::engine::FlowControl;

use bfcsim_core::{Bytes, Time};
use bfcsim_net::ecn::{MarkPoint, Red, SharedEcn};
use bfcsim_net::mmu::Admission;
use bfcsim_net::routing::LoadBalancing;
use bfcsim_schemes::paths::{EntropyConfig, PathChoice};
use bfcsim_schemes::transport::TransportConfig;
use serde::{Deserialize, Serialize};

/// ECN marking at switch egress queues.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct EcnConfig {
    /// Mark at all.
    pub enabled: bool,
    /// RED thresholds of every queue: BFC §6.2.1 gives DCQCN's and DCTCP's Kmin = 100 KB and Kmax = 400 KB;
    /// Pmax 0.2 is HPCC's `run.py` value at 100 Gb/s.
    #[serde(flatten)]
    pub red: Red,
    /// When the marker looks at the queue (HPCC's ns-3 marks at dequeue).
    pub mark_on: MarkPoint,
    /// BCC's shared-buffer ECN/RED on each buffer pool's occupancy (`[switch.ecn.shared]`), off by default.
    pub shared: SharedEcn,
}

impl Default for EcnConfig {
    fn default() -> Self {
        EcnConfig {
            enabled: true,
            red: Red::default(),
            mark_on: MarkPoint::Dequeue,
            shared: SharedEcn::default(),
        }
    }
}

/// The scheduler among the queues of one priority level.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Scheduler {
    /// Deficit round robin (Shreedhar & Varghese), fair in bytes (BFC §3.3.1).
    Drr,
    /// One packet per queue per turn, whatever its size (BFC's public artifact).
    RoundRobin,
    /// Shortest remaining first (BFC App. A.2 "BFC-SRF"): the queue whose head packet carries the smallest
    /// remaining flow size.
    Srf,
}

/// The order in which a NIC serves its flows that may send.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum NicScheduler {
    /// One packet per flow in turn (BFC §6.2.1; HPCC's and BFC's ns-3 NICs).
    #[default]
    RoundRobin,
    /// The flow with the fewest bytes left to send first (BFC App. A.2: "NICs also follow SRF scheduling").
    Srf,
}

/// Which transport connection a flow travels on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Connections {
    /// Each flow opens its own connection with a fresh controller and RTT estimate (an RDMA queue pair per
    /// message, as BFC's and HPCC's ns-3 runs; the default).
    #[default]
    PerFlow,
    /// Persistent connections per host pair, as the BCC authors' ns-2 traffic generator keeps them (BCC
    /// §III-C/§V-B; its `Agent_Aggr_pair`): a flow takes the idle connection of its source and destination
    /// opened first, or opens another when all are busy, and starts from the state the connection's last flow
    /// left: the congestion controller's α, ssthresh and window, the window back at its initial value after
    /// an idle time longer than the RTO (ns-2's `slow_start_restart_`), and the RTT estimate. Window
    /// controllers only (`cc.name` = `dctcp` or `none`). See `docs/FIDELITY.md`, row "TCP connections".
    Persistent,
}

/// The switch model: output-queued, shared-buffer MMU, strict priority between classes and DRR within.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SwitchConfig {
    /// Shared buffer of each switch (BFC §6.2.1: 12 MB), split evenly among its pools unless `pool_size` is set.
    pub buffer: Bytes,
    /// Ports per buffer pool, in local port order (BCC: 8); 0 puts every port in one pool.
    pub ports_per_pool: u32,
    /// Size of each pool, overriding the split of `buffer` (BCC: 3 MB per 8 ports).
    pub pool_size: Option<Bytes>,
    /// Never drop: count occupancy but admit everything.
    pub unlimited_buffer: bool,
    /// Static reserve of every queue (BCC: 128 KB per port).
    pub reserve_per_queue: Bytes,
    /// How the buffer admits packets: `"dynamic-threshold"` (Choudhury & Hahne over the static reserve, the
    /// default) or `"bcc-ns2"` (the BCC authors' ns-2 switch, whose reserve fills up for good; see
    /// [`Admission`] and `docs/FIDELITY.md`).
    pub admission: Admission,
    /// Dynamic Threshold α of every queue.
    pub alpha: f64,
    /// Per-queue α overriding `alpha`, by queue index (control queue first when `control_priority`).
    pub alpha_by_queue: Option<Vec<f64>>,
    /// Data queues per egress port.
    pub queues_per_port: u32,
    /// Strict-priority classes among the data queues (queues are split evenly; class 0 is served first).
    pub classes: u32,
    /// A strict-priority control queue above the data queues carries per-hop frames (PAUSE, RESUME, BFC's
    /// refresh) and, with `ack_priority`, ACKs, NACKs and CNPs.
    pub control_priority: bool,
    /// ACKs, NACKs and CNPs ride the control queue. Off, they share their flow's data queue and its buffer
    /// accounting (PFC included), as in HPCC's ns-3 switches: `SwitchNode::SendToDev` puts an ACK in its
    /// priority group's queue unless `m_ackHighPrio`, which `third.cc` never sets (its `ACK_HIGH_PRIO` only
    /// orders the NIC's queues). Needs `control_priority`; not with BFC, whose queue assignment is for data.
    pub ack_priority: bool,
    /// How queues of one priority level share the port.
    pub scheduler: Scheduler,
    /// DRR quantum, 1 byte to 2^32 - 1 bytes; default one full-size data packet.
    pub quantum: Option<Bytes>,
    /// Time from a packet's arrival to its enqueue at the egress port.
    pub processing_delay: Time,
    /// ECMP per flow or spraying per packet.
    pub load_balancing: LoadBalancing,
    /// ECN/RED marking.
    pub ecn: EcnConfig,
    /// A switch that drops a data packet tells its sender at once, which resends it (alone under
    /// `nic.recovery = "selective"`, going back to it under go-back-N): BFC §6.2.1's "HPCC-PFC" ("on a packet
    /// drop, the switch informs the sender directly, which then retransmits the dropped packet"), an ideal bound
    /// on any retransmission scheme. Delivered to the sender's transport with no delay and no wire; see
    /// `docs/FIDELITY.md`.
    pub drop_notification: bool,
}

impl Default for SwitchConfig {
    fn default() -> Self {
        SwitchConfig {
            buffer: Bytes(12_000_000),
            ports_per_pool: 0,
            pool_size: None,
            unlimited_buffer: false,
            reserve_per_queue: Bytes(0),
            admission: Admission::DynamicThreshold,
            alpha: 1.0,
            alpha_by_queue: None,
            queues_per_port: 1,
            classes: 1,
            control_priority: true,
            ack_priority: true,
            scheduler: Scheduler::Drr,
            quantum: None,
            processing_delay: Time::ZERO,
            load_balancing: LoadBalancing::Ecmp,
            ecn: EcnConfig::default(),
            drop_notification: false,
        }
    }
}

impl SwitchConfig {
    /// What a scheme needs to know of the switch it runs on, for [`FlowControl::validate`].
    pub fn facts(&self) -> bfcsim_schemes::fabric::SwitchFacts {
        bfcsim_schemes::fabric::SwitchFacts {
            control_priority: self.control_priority,
            ack_priority: self.ack_priority,
            classes: self.classes,
            queues_per_port: self.queues_per_port,
            one_pool: self.ports_per_pool == 0 && self.pool_size.is_none(),
            ecmp: self.load_balancing == bfcsim_net::routing::LoadBalancing::Ecmp,
        }
    }

    /// Checks the parameters; the message names the field.
    pub fn validate(&self) -> Result<(), String> {
        if self.queues_per_port == 0 || self.queues_per_port > 4096 {
            return Err(format!(
                "switch.queues_per_port = {} must be in 1..=4096",
                self.queues_per_port
            ));
        }
        if self.classes == 0
            || self.classes > 63
            || !self.queues_per_port.is_multiple_of(self.classes)
        {
            return Err(format!(
                "switch.classes = {} must be in 1..=63 and divide queues_per_port ({})",
                self.classes, self.queues_per_port
            ));
        }
        if let Some(q) = self.quantum
            && (q.0 == 0 || q.0 > u64::from(u32::MAX))
        {
            return Err(format!(
                "switch.quantum = {} B must be in 1..=4294967295 bytes (default: one full-size packet)",
                q.0
            ));
        }
        if !(self.alpha > 0.0 && self.alpha.is_finite()) {
            return Err(format!("switch.alpha = {} must be positive", self.alpha));
        }
        if let Some(a) = &self.alpha_by_queue {
            if a.len() != self.total_queues() {
                return Err(format!(
                    "switch.alpha_by_queue has {} values but ports have {} queues",
                    a.len(),
                    self.total_queues()
                ));
            }
            if a.iter().any(|&x| !(x > 0.0 && x.is_finite())) {
                return Err("switch.alpha_by_queue values must be positive".into());
            }
        }
        if self.buffer == Bytes(0) && self.pool_size.is_none() && !self.unlimited_buffer {
            return Err("switch.buffer is 0: set a size or unlimited_buffer = true".into());
        }
        self.ecn
            .red
            .validate()
            .map_err(|e| format!("switch.ecn: {e}"))?;
        self.ecn
            .shared
            .validate()
            .map_err(|e| format!("switch.ecn.shared: {e}"))
    }

    /// Queues per port including the control queue.
    pub fn total_queues(&self) -> usize {
        self.queues_per_port as usize + usize::from(self.control_priority)
    }
}

/// The NICs: packetization and reliable delivery.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct NicConfig {
    /// Payload bytes per full data packet (BFC §6.2.1: an MTU of 1 KB).
    pub payload: u32,
    /// Header bytes added to every data packet (HPCC's ns-3: 48).
    pub header: u32,
    /// Bytes of an ACK or NACK frame.
    pub ack_size: u32,
    /// The order in which the NIC serves its flows.
    pub scheduler: NicScheduler,
    /// A connection per flow, or persistent connections per host pair.
    pub connections: Connections,
    /// Reliable delivery (ACK every N, RTO).
    #[serde(flatten)]
    pub transport: TransportConfig,
    /// How a sender chooses each data packet's path by its entropy ([`bfcsim_schemes::paths`]): `flow` (its
    /// 5-tuple hash, ECMP), `oblivious` (a fresh entropy per packet) or `reps` (recycled entropy packet
    /// spraying, the Ultra Ethernet transport's).
    #[serde(skip_serializing_if = "is_default")]
    pub paths: PathChoice,
    /// The entropies' parameters (`[nic.entropy]`).
    #[serde(skip_serializing_if = "is_default")]
    pub entropy: EntropyConfig,
}

/// Left out of a serialized configuration at its default, so that a key added later keeps older runs' files
/// and store keys as they were.
fn is_default<T: Default + PartialEq>(value: &T) -> bool {
    *value == T::default()
}

impl Default for NicConfig {
    fn default() -> Self {
        NicConfig {
            payload: 1000,
            header: 48,
            ack_size: 64,
            scheduler: NicScheduler::RoundRobin,
            connections: Connections::PerFlow,
            transport: TransportConfig::default(),
            paths: PathChoice::Flow,
            entropy: EntropyConfig::default(),
        }
    }
}

impl NicConfig {
    /// Checks the parameters.
    pub fn validate(&self) -> Result<(), String> {
        if self.payload == 0 {
            return Err("nic.payload must be at least 1 byte".into());
        }
        if self.ack_size == 0 {
            return Err("nic.ack_size must be at least 1 byte".into());
        }
        self.entropy.validate()?;
        self.transport.validate()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bfcsim_schemes::flow_control::bfc::BfcConfig;
    use bfcsim_schemes::flow_control::pfc::PfcConfig;

    #[test]
    fn acks_in_data_queues_only_without_bfc() {
        let fifo = SwitchConfig {
            ack_priority: false,
            ..SwitchConfig::default()
        };
        assert!(
            FlowControl::Pfc(PfcConfig::default())
                .validate(&fifo.facts())
                .is_ok()
        );
        assert!(FlowControl::None.validate(&fifo.facts()).is_ok());
        let e = FlowControl::Bfc(BfcConfig::default())
            .validate(&fifo.facts())
            .unwrap_err();
        assert!(e.contains("switch.ack_priority"), "{e}");
    }
}
