//! What a workload offers to the network: one [`FlowSpec`] per flow.

use crate::ids::NodeId;
use crate::time::Time;
use crate::units::Bytes;

/// One flow to simulate: `size` bytes of payload from `src` to `dst`, starting at `start`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FlowSpec {
    /// Sending host.
    pub src: NodeId,
    /// Receiving host.
    pub dst: NodeId,
    /// Payload bytes (at least 1).
    pub size: Bytes,
    /// When the sender starts the flow.
    pub start: Time,
    /// Priority group / traffic class (HPCC's `pg`); 0 is the default data class.
    pub class: u8,
    /// Whether the flow belongs to an incast event (reported separately; HPCC's dport 200).
    pub incast: bool,
    /// The named workload group the flow belongs to, by index (`[[workload.group]]`; reported separately).
    pub group: Option<u16>,
}

impl FlowSpec {
    /// A flow of `size` bytes from host node `src` to host node `dst` at `start`, in the default class and no
    /// incast or group.
    pub fn new(src: u32, dst: u32, size: u64, start: Time) -> FlowSpec {
        FlowSpec {
            src: NodeId(src),
            dst: NodeId(dst),
            size: Bytes(size),
            start,
            class: 0,
            incast: false,
            group: None,
        }
    }
}
