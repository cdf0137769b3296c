//! Typed indices into the simulator's arenas: a `PortId` can never be used where a `NodeId` is meant.

use std::fmt;

macro_rules! typed_id {
    ($(#[$doc:meta])* $name:ident, $prefix:literal) => {
        $(#[$doc])*
        #[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, serde::Serialize, serde::Deserialize)]
        #[serde(transparent)]
        pub struct $name(pub u32);

        impl $name {
            /// The index into the arena this id names.
            #[inline]
            pub const fn idx(self) -> usize {
                self.0 as usize
            }
            /// The id of arena slot `i`.
            #[inline]
            pub fn from_idx(i: usize) -> Self {
                Self(u32::try_from(i).expect(concat!(stringify!($name), " overflows u32")))
            }
        }

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, concat!($prefix, "{}"), self.0)
            }
        }
        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "{}", self.0)
            }
        }
    };
}

typed_id!(
    /// A host or switch. Numbered as in the topology (HPCC's `topology.txt` numbering when imported).
    NodeId,
    "n"
);
typed_id!(
    /// One egress port of a node; each port owns the transmit direction of one link.
    PortId,
    "p"
);
typed_id!(
    /// An undirected link between two ports.
    LinkId,
    "l"
);
typed_id!(
    /// A flow (one message from a source host to a destination host).
    FlowId,
    "f"
);
typed_id!(
    /// A packet's slot in the packet slab.
    PacketId,
    "pkt"
);

impl PacketId {
    /// No packet: the end of a list of packets (a slab never holds 2³² − 1 of them).
    pub const NONE: PacketId = PacketId(u32::MAX);
}
