//! Trimming at a switch, which NDP's switches (Handley et al., SIGCOMM 2017, §3.1), the `trim-tail` scheme
//! (crate `bfcsim-trim-tail`, the developer guide's worked example) and RCCC's switches share: a data packet that finds its queue
//! holding `queue_packets` packets is cut to a header, which rides the strict-priority control queue, so that its
//! receiver learns of the loss within a round trip.

use bfcsim_net::mmu::DropReason;
use bfcsim_net::packet::PacketKind;

use crate::fabric::{Entry, SwitchOps};

/// Checks the two sizes every trimming scheme has (trim-tail's and NDP's `queue_packets` and `header`); messages
/// name the field.
pub fn validate_trimming(queue_packets: u32, header: u32) -> Result<(), String> {
    if queue_packets == 0 {
        return Err("flow_control.queue_packets must be at least 1".into());
    }
    if header == 0 {
        return Err("flow_control.header must be at least 1 byte".into());
    }
    Ok(())
}

/// What [`trim_enqueue`] did with a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Trimmed {
    /// It joined its class's queue as it is.
    Queued,
    /// It goes in the control queue as a header, cut here (`cut`) or at an earlier hop; the scheme bounds that
    /// queue and places it ([`queue_header`]).
    Header {
        /// Its payload is still to be cut.
        cut: bool,
    },
}

/// A switch's trimming enqueue, which NDP's switches share (Handley et al. §3.1): data packet `e` joins its
/// class's queue while that holds fewer than `queue_packets` packets; past them it is to be cut to a header.
/// A header cut at an earlier hop rides the control queue at every hop; other packets, and data no larger than
/// a header, are queued as without a scheme.
pub fn trim_enqueue<F: SwitchOps>(
    fab: &mut F,
    e: &Entry,
    queue_packets: u32,
    header: u32,
) -> Result<Trimmed, DropReason> {
    let queue = fab.layout().data_queue_for(e.p.class, e.p.hash);
    let full = fab.queues(e.out_sp).queue_len(queue) >= queue_packets as usize;
    let cut = e.p.kind == PacketKind::DATA && full && !e.p.trimmed() && e.p.size > header;
    if cut || e.p.trimmed() {
        return Ok(Trimmed::Header { cut });
    }
    fab.admit(e, queue)?;
    fab.push(e, queue);
    Ok(Trimmed::Queued)
}

/// Queues header `e` in its port's control queue, cutting its payload to `header` bytes first if `cut`.
pub fn queue_header<F: SwitchOps>(
    fab: &mut F,
    e: &Entry,
    cut: bool,
    header: u32,
) -> Result<(), DropReason> {
    let h = if cut { fab.trim(e, header) } else { *e };
    fab.admit(&h, 0)?;
    fab.push(&h, 0);
    Ok(())
}

/// trim-tail's whole enqueue, which RCCC's switches share: [`trim_enqueue`], then a header joins the control
/// queue while that holds fewer than `header_packets` packets and is refused past them
/// ([`DropReason::HeaderQueueFull`]).
pub fn trim_tail_enqueue<F: SwitchOps>(
    fab: &mut F,
    e: &Entry,
    (queue_packets, header, header_packets): (u32, u32, u32),
) -> Result<(), DropReason> {
    let Trimmed::Header { cut } = trim_enqueue(fab, e, queue_packets, header)? else {
        return Ok(());
    };
    if fab.queues(e.out_sp).queue_len(0) >= header_packets as usize {
        return Err(DropReason::HeaderQueueFull);
    }
    queue_header(fab, e, cut, header)
}
