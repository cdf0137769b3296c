//! Seeded random-number streams, one per component.
//!
//! Every component that draws random numbers (a workload generator, a switch's ECMP hash seed, a RED marker)
//! gets its own stream derived from (master seed, component id). Adding a component, or drawing more numbers in
//! one, then never shifts the numbers another component sees, and the same inputs give the same run on every
//! machine. The generator is named (xoshiro256++), never `StdRng` or OS entropy.

use rand::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;

/// The generator every stream uses.
pub type Rng = Xoshiro256PlusPlus;

/// What a stream belongs to. The tag keeps streams of different kinds of component apart even when their
/// numeric ids coincide.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stream {
    /// A workload generator (arrivals, sizes, endpoints), numbered by its position in the experiment.
    Workload(u32),
    /// A switch or host node (ECMP seed, packet spraying, RED/ECN marking).
    Node(u32),
    /// A port's marking decisions.
    Port(u32),
    /// A flow's own randomness (e.g. its 5-tuple hash).
    Flow(u32),
    /// Anything else, by a fixed number chosen at the call site.
    Other(u32),
    /// A switch port's in-band telemetry (PINT's randomized rounding), by port id.
    Telemetry(u32),
    /// A flow's congestion controller (PINT's sampling of ACKs), by flow id.
    Controller(u32),
    /// A port's random loss on its link (fabric events), by port id.
    Fault(u32),
    /// A flow's choice of entropies (`nic.paths`: oblivious spraying's shuffles, REPS's exploration), by flow id.
    Paths(u32),
}

impl Stream {
    fn key(self) -> u64 {
        let (tag, id) = match self {
            Stream::Workload(i) => (1u64, i),
            Stream::Node(i) => (2, i),
            Stream::Port(i) => (3, i),
            Stream::Flow(i) => (4, i),
            Stream::Other(i) => (5, i),
            Stream::Telemetry(i) => (6, i),
            Stream::Controller(i) => (7, i),
            Stream::Fault(i) => (8, i),
            Stream::Paths(i) => (9, i),
        };
        (tag << 32) | id as u64
    }
}

/// SplitMix64's finaliser: a bijective mix of 64 bits, used to derive stream seeds and hash values.
#[inline]
pub const fn mix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The seed of `stream` under `master_seed`.
pub fn stream_seed(master_seed: u64, stream: Stream) -> u64 {
    mix64(master_seed ^ mix64(stream.key()))
}

/// A fresh generator for `stream` under `master_seed`.
pub fn stream(master_seed: u64, stream: Stream) -> Rng {
    Rng::seed_from_u64(stream_seed(master_seed, stream))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::RngExt;

    #[test]
    fn streams_are_reproducible_and_distinct() {
        let a: u64 = stream(7, Stream::Node(3)).random();
        let b: u64 = stream(7, Stream::Node(3)).random();
        let c: u64 = stream(7, Stream::Port(3)).random();
        let d: u64 = stream(8, Stream::Node(3)).random();
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert_ne!(a, d);
    }
}
