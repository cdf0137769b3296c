//! Persistent connections (`nic.connections = "persistent"`), the way the BCC authors' ns-2 traffic generator
//! runs TCP (BCC §III-C, §V-B; `Agent_Aggr_pair` in their scripts): each host pair keeps its connections open,
//! a new flow takes the idle one opened first (or opens another when all are busy), and the flow starts from
//! what the connection's previous flow left: the controller's α, ssthresh and window, and the RTT estimate.
//!
//! The pool lives at the source host's shard, where flows start and finish, so a sharded run hands state
//! between flows exactly as one thread does.

use std::collections::HashMap;

use bfcsim_core::Time;
use bfcsim_schemes::cc::Cc;
use bfcsim_schemes::transport::RttEstimate;

/// What an idle connection holds for its next flow.
#[derive(Debug)]
pub(super) struct Connection {
    cc: Cc,
    rtt: RttEstimate,
    /// When its last data packet left the NIC.
    last_send: Time,
}

impl Connection {
    /// The state a finished flow leaves on its connection.
    pub(super) fn after(cc: Cc, rtt: RttEstimate, last_send: Time) -> Connection {
        Connection { cc, rtt, last_send }
    }

    /// The RTT estimate and controller a flow starting at `now` takes over. A connection that sent nothing
    /// for longer than its RTO restarts its window (ns-2 FullTcp's `idle_restart()`: idle time > `t_rtxcur_`).
    /// `None` when the controller starts every flow afresh.
    pub(super) fn next_flow(self, now: Time) -> Option<(RttEstimate, Cc)> {
        let idle = now.saturating_sub(self.last_send) > self.rtt.rto();
        Some((self.rtt, self.cc.next_flow(idle)?))
    }
}

/// The connections of every host pair with a source at this shard, by opening order; `None` marks one busy
/// with a flow.
#[derive(Debug, Default)]
pub(super) struct ConnectionPool {
    pairs: HashMap<(u32, u32), Vec<Option<Connection>>>,
}

impl ConnectionPool {
    /// A flow from host `src` to host `dst` starts: the index of the connection it takes, and what that
    /// connection carries over (`None`: a new connection).
    pub(super) fn open(&mut self, src: u32, dst: u32) -> (u32, Option<Connection>) {
        let conns = self.pairs.entry((src, dst)).or_default();
        match conns.iter().position(Option::is_some) {
            Some(i) => (i as u32, conns[i].take()),
            None => {
                conns.push(None);
                (conns.len() as u32 - 1, None)
            }
        }
    }

    /// The flow on connection `index` from `src` to `dst` finished and leaves `state`.
    pub(super) fn release(&mut self, src: u32, dst: u32, index: u32, state: Connection) {
        let conns = self
            .pairs
            .get_mut(&(src, dst))
            .expect("a released connection was opened");
        conns[index as usize] = Some(state);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use bfcsim_schemes::cc::dctcp::DctcpConfig;
    use bfcsim_schemes::cc::{CcConfig, CongestionControl, FlowContext};
    use bfcsim_schemes::transport::{Sender, TransportConfig};

    /// A connection whose DCTCP (line-rate start, one BDP) has grown on one ACK, its last packet sent at
    /// `last_send`.
    fn state(last_send: Time) -> Connection {
        let ctx = FlowContext {
            mss: 1000,
            line_rate: bfcsim_core::Rate::gbps(100),
            base_rtt: Time::from_us(8),
            bdp: bfcsim_core::Bytes(100_000),
            seed: 0,
            flow: bfcsim_core::FlowId(0),
        };
        let mut cc = CcConfig::Dctcp(DctcpConfig::default()).instantiate(&ctx);
        let ack = bfcsim_schemes::AckSignal {
            newly_acked: 50_000,
            ack_seq: 50_000,
            snd_nxt: 100_000,
            ..Default::default()
        };
        cc.on_ack(Time::ZERO, &ack);
        let rtt = Sender::new(1000, 1000, &TransportConfig::default()).rtt_estimate();
        Connection::after(cc, rtt, last_send)
    }

    #[test]
    fn a_flow_takes_the_idle_connection_opened_first_or_opens_one() {
        let mut pool = ConnectionPool::default();
        assert!(matches!(pool.open(0, 1), (0, None)));
        assert!(matches!(pool.open(0, 1), (1, None)));
        // Another pair has its own connections.
        assert!(matches!(pool.open(1, 0), (0, None)));
        pool.release(0, 1, 1, state(Time::ZERO));
        pool.release(0, 1, 0, state(Time::ZERO));
        assert!(matches!(pool.open(0, 1), (0, Some(_))));
        assert!(matches!(pool.open(0, 1), (1, Some(_))));
        assert!(matches!(pool.open(0, 1), (2, None)));
    }

    #[test]
    fn the_window_restarts_only_after_an_idle_rto() {
        // Default transport: 10 ms initial RTO, no RTT sample yet.
        let rto = TransportConfig::default().rto_initial;
        let last = Time::from_ms(1);
        let grown = state(last).cc.window();
        assert!(grown > 100_000);
        let (_, cc) = state(last).next_flow(last + rto).expect("dctcp persists");
        assert_eq!(cc.window(), grown);
        let (_, cc) = state(last)
            .next_flow(last + rto + Time(1))
            .expect("dctcp persists");
        assert_eq!(cc.window(), 100_000);
    }
}
