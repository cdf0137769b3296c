//! A scripted fabric for testing a scheme's hooks without the event loop: it implements every operations trait
//! on a small topology, keeps real port queues (so that levels, pause states and the scheduler answer as the
//! fabric's would), admits everything unless told to refuse, and records what the scheme asked of it in
//! [`FakeFabric::log`]. Nothing moves by itself: no packet is transmitted, no timer fires, a port that is kicked
//! only logs it; the test calls the hooks in the order it wants and reads the log, like a protocol trace.
//!
//! ```
//! use bfcsim_core::{Rate, Time};
//! use bfcsim_schemes::fabric::fake::{Call, FakeFabric};
//! use bfcsim_schemes::fabric::{FabricOps, Plain, SwitchSide};
//!
//! // One switch and three hosts; the switch's local port i leads to host i.
//! let mut fab = FakeFabric::star(3, Rate::gbps(100), Time::from_us(1));
//! let flow = fab.add_flow(0, 2, 10_000);
//! let e = fab.data_entry(flow, 0, 2, 0);
//! Plain.enqueue(&mut fab, &e).unwrap();
//! assert!(matches!(fab.log[..], [Call::Admit { queue: 1, .. }, Call::Push { queue: 1, .. }]));
//! assert_eq!(fab.queues_of(0, 2).queue_bytes(1), 1048);
//! ```

use std::ops::Range;

use bfcsim_core::{Bytes, FlowId, FlowSpec, NodeId, PacketId, PortId, Rate, Time};
use bfcsim_net::int::IntStacks;
use bfcsim_net::mmu::DropReason;
use bfcsim_net::packet::{Flags, Packet, PacketKind, Packets};
use bfcsim_net::queues::{PortQueues, QueueLayout};
use bfcsim_net::routing::Routes;
use bfcsim_net::telemetry::Stamps;
use bfcsim_net::telemetry::pint::PintPort;
use bfcsim_net::topology::{NodeKind, Topology};

use super::{
    Device, Entry, FabricOps, Flow, NicOps, Receiving, Scheme, Setup, SwitchOps, Telemetry,
};
use crate::cc::{Cc, CcConfig, FixedConfig, FlowContext};
use crate::transport::{Receiver, Recovery, Sender, TransportConfig};

/// One thing a scheme asked of the fabric.
#[derive(Clone, Debug, PartialEq)]
pub enum Call {
    /// [`SwitchOps::admit`] or [`SwitchOps::admit_lossless`] (`lossless`), and whether it was refused.
    Admit {
        /// The packet.
        pkt: PacketId,
        /// The queue.
        queue: usize,
        /// Admitted without a test.
        lossless: bool,
        /// Refused, with this reason.
        refused: Option<DropReason>,
    },
    /// [`SwitchOps::push`] or [`SwitchOps::push_hop`].
    Push {
        /// The packet.
        pkt: PacketId,
        /// The queue.
        queue: usize,
        /// The scheme's per-hop flags (`None`: a plain push).
        hop_flags: Option<u8>,
    },
    /// A queue of a switch port paused or resumed ([`SwitchOps::set_port_paused`] or
    /// [`SwitchOps::set_queues_paused`]), when its state changed.
    Paused {
        /// The switch port.
        sp: u32,
        /// The queue.
        queue: usize,
        /// Paused (else resumed).
        paused: bool,
    },
    /// [`SwitchOps::hold_queue`], when the state changed.
    Held {
        /// The switch port.
        sp: u32,
        /// The queue.
        queue: usize,
        /// Held back (else let go).
        held: bool,
    },
    /// [`SwitchOps::reroute`].
    Reroute {
        /// The packet.
        pkt: PacketId,
        /// The port routing chose.
        egress: PortId,
    },
    /// [`SwitchOps::send_frame`].
    Frame {
        /// The port it leaves by.
        port: PortId,
        /// What it is.
        kind: PacketKind,
        /// Its `seq`.
        seq: u64,
        /// Its bytes.
        size: u32,
    },
    /// [`FabricOps::arm_timer`] or [`SwitchOps::arm_batched_timer`] (`batched`).
    Timer {
        /// The port.
        port: PortId,
        /// When.
        at: Time,
        /// On the batched grid.
        batched: bool,
    },
    /// [`FabricOps::arm_token_timer`].
    TokenTimer {
        /// When.
        at: Time,
        /// The scheme's token.
        token: u64,
    },
    /// [`SwitchOps::trim`].
    Trim {
        /// The packet.
        pkt: PacketId,
        /// Its header's bytes.
        header: u32,
    },
    /// [`NicOps::reply`].
    Reply {
        /// The host answering.
        h: u32,
        /// What it sends.
        kind: PacketKind,
        /// Its `seq`.
        seq: u64,
        /// Its `aux`.
        aux: u32,
    },
    /// [`FabricOps::kick`], or the kick of a resume or of [`NicOps::send_control`].
    Kick {
        /// The port.
        port: PortId,
    },
    /// [`FabricOps::drop_packet`].
    Drop {
        /// The packet.
        pkt: PacketId,
        /// Why.
        reason: DropReason,
    },
    /// [`NicOps::new_control`].
    Control {
        /// The packet built.
        pkt: PacketId,
        /// Its flow.
        flow: FlowId,
        /// What it is.
        kind: PacketKind,
        /// Its `seq`.
        seq: u64,
        /// Its `aux`.
        aux: u32,
    },
    /// [`NicOps::queue_control`] or [`NicOps::send_control`] (`woken`).
    Queued {
        /// The host.
        h: u32,
        /// The packet.
        pkt: PacketId,
        /// The NIC was woken.
        woken: bool,
    },
    /// A NIC queue paused or resumed ([`NicOps::set_nic_paused`]), when its state changed.
    NicPaused {
        /// The host.
        h: u32,
        /// The NIC queue.
        queue: u32,
        /// Paused (else resumed).
        paused: bool,
    },
    /// [`NicOps::make_ready`].
    Ready {
        /// The flow.
        flow: FlowId,
    },
    /// [`NicOps::restart_rto`].
    RestartRto {
        /// The flow's slot.
        slot: usize,
    },
    /// [`NicOps::complete`].
    Complete {
        /// The flow.
        flow: FlowId,
    },
    /// [`NicOps::controller_changed`].
    ControllerChanged {
        /// The flow's slot.
        slot: usize,
    },
}

/// A host's NIC queues as the fake keeps them.
#[derive(Default)]
struct Nic {
    paused: Vec<u64>,
    users: Vec<u32>,
    parked: Vec<FlowId>,
}

impl Nic {
    fn is_paused(&self, q: u32) -> bool {
        self.paused
            .get(q as usize / 64)
            .is_some_and(|w| w >> (q % 64) & 1 == 1)
    }
}

/// A fabric for unit tests of a scheme's hooks (see the module doc).
pub struct FakeFabric {
    /// The time every hook sees; set it between calls.
    pub now: Time,
    /// What the scheme asked, in order.
    pub log: Vec<Call>,
    /// The next admissions are refused with this reason while it is set.
    pub refuse: Option<DropReason>,
    /// The scheme turned pausing on ([`Setup::enable_pausing`]).
    pub pausing: bool,
    /// The watchdog's bound, once the scheme started it.
    pub watchdog: Option<Time>,
    /// The NICs' transport, for the senders of [`FakeFabric::add_flow`].
    pub transport: TransportConfig,
    /// The congestion control of the flows [`FakeFabric::add_flow`] adds (none: no window).
    pub cc: CcConfig,
    topo: Topology,
    routes: Routes,
    layout: QueueLayout,
    /// Each switch's node and its first switch port.
    switches: Vec<(NodeId, u32)>,
    /// Each switch port's switch, local number and port id.
    sw_ports: Vec<(usize, u16, PortId)>,
    device: Vec<Device>,
    queues: Vec<PortQueues>,
    nics: Vec<Nic>,
    packets: Packets,
    flows: Vec<Flow>,
    /// Each flow's sender slot, and the senders by slot.
    slots: Vec<Option<usize>>,
    senders: Vec<Sender>,
    controllers: Vec<Cc>,
    int_stacks: IntStacks,
    stamps: Stamps,
    /// Each port's PINT state, made at its first use.
    pint_ports: Vec<Option<PintPort>>,
    /// Each port's bytes sent ([`SwitchOps::tx_bytes`]); set by [`FakeFabric::set_tx_bytes`].
    tx_bytes: Vec<u64>,
    receivers: Vec<Option<Receiver>>,
    complete: Vec<bool>,
    words: Vec<Vec<u64>>,
}

/// One full data packet's payload and header, the fabric's defaults (BFC §6.2.1, HPCC's ns-3).
const PAYLOAD: u32 = 1000;
const HEADER: u32 = 48;
const ACK: u32 = 64;

impl FakeFabric {
    /// A fabric on `topo` whose ports have the queues of `layout`.
    pub fn new(topo: Topology, layout: QueueLayout) -> FakeFabric {
        let routes = Routes::new(&topo).expect("the fake's topology routes");
        let mut switches = Vec::new();
        let mut sw_ports = Vec::new();
        let mut device = vec![Device::Host(0); topo.ports.len()];
        for (i, node) in topo.nodes.iter().enumerate() {
            if node.kind != NodeKind::Switch {
                continue;
            }
            switches.push((NodeId::from_idx(i), sw_ports.len() as u32));
            for (local, &p) in node.ports.iter().enumerate() {
                device[p.idx()] = Device::Switch(sw_ports.len() as u32);
                sw_ports.push((switches.len() - 1, local as u16, p));
            }
        }
        for (h, &node) in topo.hosts.iter().enumerate() {
            for &p in &topo.nodes[node.idx()].ports {
                device[p.idx()] = Device::Host(h as u32);
            }
        }
        let levels = layout.levels();
        FakeFabric {
            now: Time::ZERO,
            log: Vec::new(),
            refuse: None,
            pausing: false,
            watchdog: None,
            transport: TransportConfig::default(),
            cc: CcConfig::None(FixedConfig::default()),
            tx_bytes: vec![0; topo.ports.len()],
            queues: sw_ports
                .iter()
                .map(|_| PortQueues::new(&levels, PAYLOAD + HEADER))
                .collect(),
            nics: topo.hosts.iter().map(|_| Nic::default()).collect(),
            topo,
            routes,
            layout,
            switches,
            sw_ports,
            device,
            packets: Packets::new(),
            flows: Vec::new(),
            slots: Vec::new(),
            senders: Vec::new(),
            controllers: Vec::new(),
            int_stacks: IntStacks::default(),
            stamps: Stamps::default(),
            pint_ports: Vec::new(),
            receivers: Vec::new(),
            complete: Vec::new(),
            words: Vec::new(),
        }
    }

    /// One switch with `hosts` hosts, each on its own link of `rate` and `delay`: the switch's local port `i`
    /// leads to host `i`. Ports have a control queue and one data queue.
    pub fn star(hosts: usize, rate: Rate, delay: Time) -> FakeFabric {
        let layout = QueueLayout {
            data_base: 1,
            per_class: 1,
            classes: 1,
        };
        FakeFabric::star_with(hosts, rate, delay, layout)
    }

    /// [`FakeFabric::star`] whose ports have the queues of `layout`.
    pub fn star_with(hosts: usize, rate: Rate, delay: Time, layout: QueueLayout) -> FakeFabric {
        let mut topo = Topology::new();
        let switch = topo.add_node(NodeKind::Switch);
        for _ in 0..hosts {
            let h = topo.add_node(NodeKind::Host);
            topo.connect(switch, h, rate, delay);
        }
        topo.finish();
        FakeFabric::new(topo, layout)
    }

    /// A star of three 100 Gb/s hosts on 1 us links whose ports have a control queue and `classes` data
    /// queues, under the transport of the receiver-driven schemes (Homa, EP(A)): selective repeat without
    /// NACKs, whole flows acknowledged.
    pub fn receiver_driven_star(classes: usize) -> FakeFabric {
        let layout = QueueLayout {
            data_base: 1,
            per_class: 1,
            classes,
        };
        let mut fab = FakeFabric::star_with(3, Rate::gbps(100), Time::from_us(1), layout);
        fab.transport = TransportConfig {
            recovery: Recovery::Selective,
            nack: false,
            ack_every: 0,
            ..TransportConfig::default()
        };
        fab
    }

    /// Adds a flow of `size` bytes from host `src` to host `dst`, started: its sender takes the next slot.
    pub fn add_flow(&mut self, src: u32, dst: u32, size: u64) -> FlowId {
        let id = FlowId(self.flows.len() as u32);
        let spec = FlowSpec {
            src: self.topo.hosts[src as usize],
            dst: self.topo.hosts[dst as usize],
            size: Bytes(size),
            start: self.now,
            class: 0,
            incast: false,
            group: None,
        };
        let mut flow =
            Flow::table(&self.topo, &[spec]).expect("a flow between two hosts")[0].clone();
        // Distinct hashes, so that flows do not share hashed state by accident.
        flow.hash = flow.hash.wrapping_add(u64::from(id.0) << 40);
        self.flows.push(flow);
        self.slots.push(Some(self.senders.len()));
        self.senders
            .push(Sender::new(size, PAYLOAD, &self.transport));
        let ctx = self.flow_context();
        self.controllers.push(self.cc.instantiate(&ctx));
        self.receivers.push(None);
        self.complete.push(false);
        id
    }

    /// A full data packet of `flow` carrying byte `seq` on, as its NIC sends it.
    pub fn data_packet(&self, flow: FlowId, seq: u64) -> Packet {
        let f = &self.flows[flow.idx()];
        Packet {
            seq,
            sent_at: self.now,
            flow,
            size: PAYLOAD + HEADER,
            payload: PAYLOAD,
            dst_host: f.dst_host,
            hash: f.hash as u32,
            flags: Flags::ECT,
            stamp: self.now,
            ..Packet::blank(PacketKind::DATA)
        }
    }

    /// [`FakeFabric::data_packet`] entering switch 0 through local port `in_local` and routed to local port
    /// `out_local`, as the fabric hands it to [`super::SwitchSide::enqueue`].
    pub fn data_entry(&mut self, flow: FlowId, in_local: u16, out_local: u16, seq: u64) -> Entry {
        let p = self.data_packet(flow, seq);
        self.entry(p, 0, in_local, out_local)
    }

    /// Packet `p` entering switch `s` through local port `in_local`, routed to local port `out_local`.
    pub fn entry(&mut self, p: Packet, s: usize, in_local: u16, out_local: u16) -> Entry {
        let out_sp = self.switches[s].1 + out_local as u32;
        Entry {
            s,
            in_local,
            out_sp,
            out_local,
            egress: self.sw_ports[out_sp as usize].2,
            pkt: self.packets.alloc(p),
            p,
        }
    }

    /// Packet `p`, stored: its id.
    pub fn alloc(&mut self, p: Packet) -> PacketId {
        self.packets.alloc(p)
    }

    /// The congestion controller of flow `id` (see [`FakeFabric::cc`]).
    pub fn controller_of(&self, id: FlowId) -> &Cc {
        &self.controllers[self.slots[id.idx()].expect("a running flow")]
    }

    /// Port `port` has sent `bytes` so far.
    pub fn set_tx_bytes(&mut self, port: PortId, bytes: u64) {
        self.tx_bytes[port.idx()] = bytes;
    }

    /// The queues of local port `local` of switch `s`.
    pub fn queues_of(&self, s: usize, local: u16) -> &PortQueues {
        &self.queues[(self.switches[s].1 + local as u32) as usize]
    }

    /// The switch-port index of local port `local` of switch `s`.
    pub fn sp(&self, s: usize, local: u16) -> u32 {
        self.switches[s].1 + local as u32
    }

    /// Takes the next packet switch port `sp`'s scheduler would send: its id and queue; the caller hands it to
    /// [`super::SwitchSide::dequeued`].
    pub fn pop(&mut self, sp: u32) -> Option<(PacketId, usize)> {
        self.queues[sp as usize]
            .pop()
            .map(|(pkt, _, queue)| (pkt, queue))
    }

    /// The frames sent so far: port, kind and `seq`.
    pub fn frames(&self) -> Vec<(PortId, PacketKind, u64)> {
        self.log
            .iter()
            .filter_map(|c| match *c {
                Call::Frame {
                    port, kind, seq, ..
                } => Some((port, kind, seq)),
                _ => None,
            })
            .collect()
    }

    /// Whether NIC queue `q` of host `h` is paused.
    pub fn nic_paused(&self, h: u32, q: u32) -> bool {
        self.nics[h as usize].is_paused(q)
    }

    /// Flow `id`'s receiver takes data bytes `seq..seq + len`, as the fabric's receive path would.
    pub fn receive(&mut self, id: FlowId, seq: u64, len: u32) -> u64 {
        let size = self.flows[id.idx()].spec.size.0;
        let r =
            self.receivers[id.idx()].get_or_insert_with(|| Receiver::new(size, &self.transport));
        r.handle_data(seq, len, false);
        let held = r.received();
        if r.rcv_nxt() == size {
            self.receivers[id.idx()] = None;
            self.complete[id.idx()] = true;
        }
        held
    }
}

impl FabricOps for FakeFabric {
    fn now(&self) -> Time {
        self.now
    }
    fn layout(&self) -> &QueueLayout {
        &self.layout
    }
    fn packet(&self, pkt: PacketId) -> &Packet {
        self.packets.get(pkt)
    }
    fn packet_mut(&mut self, pkt: PacketId) -> &mut Packet {
        self.packets.get_mut(pkt)
    }
    fn flow(&self, id: FlowId) -> &Flow {
        &self.flows[id.idx()]
    }
    fn link_rate(&self, port: PortId) -> Rate {
        self.topo.link_of(port).rate
    }
    fn device(&self, port: PortId) -> Device {
        self.device[port.idx()]
    }
    fn take_frame(&mut self, pkt: PacketId) -> Packet {
        let p = *self.packets.get(pkt);
        self.packets.free(pkt);
        p
    }
    fn drop_packet(&mut self, pkt: PacketId, reason: DropReason) {
        self.log.push(Call::Drop { pkt, reason });
        self.packets.free(pkt);
    }
    fn arm_timer(&mut self, port: PortId, at: Time) {
        self.log.push(Call::Timer {
            port,
            at,
            batched: false,
        });
    }
    fn frame_words(&self, index: u32) -> &[u64] {
        &self.words[index as usize]
    }
    fn release_frame_words(&mut self, index: u32) {
        self.words[index as usize].clear();
    }
    fn arm_token_timer(&mut self, at: Time, token: u64) {
        self.log.push(Call::TokenTimer { at, token });
    }
    fn kick<S: Scheme>(&mut self, _side: &mut S, port: PortId) {
        self.log.push(Call::Kick { port });
    }
    fn int_stacks(&self) -> &IntStacks {
        &self.int_stacks
    }
    fn int_stacks_mut(&mut self) -> &mut IntStacks {
        &mut self.int_stacks
    }
}

impl Telemetry for FakeFabric {
    fn stamps(&self) -> &Stamps {
        &self.stamps
    }
    fn stamps_mut(&mut self) -> &mut Stamps {
        &mut self.stamps
    }
    /// Made at its first use from the needs of the fake's controller ([`FakeFabric::cc`]), averaging over the
    /// fake's base RTT ([`Setup::flow_context`]) unless the controller sets its own.
    fn pint_port(&mut self, port: PortId) -> &mut PintPort {
        if self.pint_ports.len() <= port.idx() {
            self.pint_ports.resize(port.idx() + 1, None);
        }
        let t = self.flow_context().base_rtt;
        let pint = self
            .cc
            .needs()
            .pint
            .expect("the fake's controller asks for PINT");
        self.pint_ports[port.idx()].get_or_insert_with(|| {
            let rng = bfcsim_core::rng::stream(1, bfcsim_core::rng::Stream::Telemetry(port.0));
            PintPort::new(pint.encoding, pint.arithmetic, pint.t.unwrap_or(t), rng)
        })
    }
}

impl SwitchOps for FakeFabric {
    fn queues(&self, sp: u32) -> &PortQueues {
        &self.queues[sp as usize]
    }
    fn sw_port(&self, sp: u32) -> (usize, u16) {
        let (s, local, _) = self.sw_ports[sp as usize];
        (s, local)
    }
    fn sw_port_id(&self, sp: u32) -> PortId {
        self.sw_ports[sp as usize].2
    }
    fn switch_port(&self, s: usize, local: u16) -> PortId {
        self.sw_ports[(self.switches[s].1 + local as u32) as usize].2
    }
    fn switch_ports(&self, s: usize) -> Range<u32> {
        let (node, first) = self.switches[s];
        first..first + self.topo.nodes[node.idx()].ports.len() as u32
    }
    fn switch_node(&self, s: usize) -> NodeId {
        self.switches[s].0
    }
    fn admit(&mut self, e: &Entry, queue: usize) -> Result<(), DropReason> {
        self.log.push(Call::Admit {
            pkt: e.pkt,
            queue,
            lossless: false,
            refused: self.refuse,
        });
        self.refuse.map_or(Ok(()), Err)
    }
    fn admit_lossless(&mut self, e: &Entry, queue: usize) {
        self.log.push(Call::Admit {
            pkt: e.pkt,
            queue,
            lossless: true,
            refused: None,
        });
    }
    fn push(&mut self, e: &Entry, queue: usize) {
        self.queues[e.out_sp as usize].push(queue, e.pkt, e.p.size);
        self.log.push(Call::Push {
            pkt: e.pkt,
            queue,
            hop_flags: None,
        });
    }
    fn trim(&mut self, e: &Entry, header: u32) -> Entry {
        let p = self.packets.get_mut(e.pkt);
        p.size = header;
        p.payload = 0;
        p.flags = p.flags.with(Flags::TRIMMED);
        self.log.push(Call::Trim { pkt: e.pkt, header });
        Entry { p: *p, ..*e }
    }
    fn push_hop(&mut self, e: &Entry, queue: usize, hop_flags: u8) {
        self.queues[e.out_sp as usize].push(queue, e.pkt, e.p.size);
        let p = self.packets.get_mut(e.pkt);
        p.in_port = e.in_local;
        p.hop_flags = hop_flags;
        self.log.push(Call::Push {
            pkt: e.pkt,
            queue,
            hop_flags: Some(hop_flags),
        });
    }
    fn pause_changed(&mut self, _sp: u32) {}
    fn set_queues_paused(
        &mut self,
        sp: u32,
        changes: impl IntoIterator<Item = (usize, bool)>,
    ) -> bool {
        let mut resumed = false;
        for (queue, paused) in changes {
            let queues = &mut self.queues[sp as usize];
            if queue < queues.count() && queues.set_paused(queue, paused) {
                self.log.push(Call::Paused { sp, queue, paused });
                resumed |= !paused;
            }
        }
        resumed
    }
    fn set_port_paused<S: Scheme>(
        &mut self,
        _side: &mut S,
        sp: u32,
        changes: impl IntoIterator<Item = (usize, bool)>,
    ) {
        if self.set_queues_paused(sp, changes) {
            let port = self.sw_port_id(sp);
            self.log.push(Call::Kick { port });
        }
    }
    fn hold_queue(&mut self, sp: u32, queue: usize, held: bool) -> bool {
        let changed = self.queues[sp as usize].set_paused(queue, held);
        if changed {
            self.log.push(Call::Held { sp, queue, held });
        }
        changed
    }
    fn send_frame<S: Scheme>(
        &mut self,
        _side: &mut S,
        port: PortId,
        kind: PacketKind,
        seq: u64,
        size: u32,
    ) {
        self.log.push(Call::Frame {
            port,
            kind,
            seq,
            size,
        });
    }
    fn send_frame_words<S: Scheme>(
        &mut self,
        _side: &mut S,
        port: PortId,
        kind: PacketKind,
        words: &[u64],
        size: u32,
    ) {
        self.words.push(words.to_vec());
        let seq = self.words.len() as u64 - 1;
        self.log.push(Call::Frame {
            port,
            kind,
            seq,
            size,
        });
    }
    fn arm_batched_timer(&mut self, port: PortId, at: Time) {
        self.log.push(Call::Timer {
            port,
            at,
            batched: true,
        });
    }
    /// Takes the first of the routes' next hops toward the packet's destination, and logs the call.
    fn reroute(&mut self, e: &Entry) -> Entry {
        let p = *self.packets.get(e.pkt);
        let egress = self.routes.next_hops(self.switches[e.s].0, p.dst_host)[0];
        let Device::Switch(out_sp) = self.device[egress.idx()] else {
            unreachable!("a switch's port")
        };
        self.log.push(Call::Reroute { pkt: e.pkt, egress });
        Entry {
            out_sp,
            out_local: self.sw_ports[out_sp as usize].1,
            egress,
            p,
            ..*e
        }
    }
    fn toward_source(&self, id: FlowId, s: usize) -> PortId {
        let f = &self.flows[id.idx()];
        let node = self.switches[s].0;
        let hops = self.routes.next_hops(node, f.src_host);
        hops[0]
    }
    fn port_blocked_time(&self, _sp: u32) -> Time {
        Time::ZERO
    }
    fn tx_bytes(&self, port: PortId) -> u64 {
        self.tx_bytes[port.idx()]
    }
}

impl NicOps for FakeFabric {
    fn host_port(&self, h: u32) -> PortId {
        self.topo.nodes[self.topo.hosts[h as usize].idx()].ports[0]
    }
    fn host_node(&self, h: u32) -> NodeId {
        self.topo.hosts[h as usize]
    }
    fn flow_slot(&self, id: FlowId) -> Option<usize> {
        self.slots[id.idx()]
    }
    /// The scripted fabric keeps no ready list: no flow waits.
    fn ready_flows(&self, _h: u32) -> usize {
        0
    }
    fn sender(&self, slot: usize) -> &Sender {
        &self.senders[slot]
    }
    fn sender_mut(&mut self, slot: usize) -> &mut Sender {
        &mut self.senders[slot]
    }
    fn controller(&mut self, slot: usize) -> (&mut Cc, &IntStacks) {
        (&mut self.controllers[slot], &self.int_stacks)
    }
    fn controller_changed(&mut self, slot: usize) {
        self.log.push(Call::ControllerChanged { slot });
    }
    fn receiver(&self, id: FlowId) -> Receiving<'_> {
        match (&self.receivers[id.idx()], self.complete[id.idx()]) {
            (_, true) => Receiving::Complete,
            (Some(r), false) => Receiving::Partly(r),
            (None, false) => Receiving::NotStarted,
        }
    }
    fn nic_alloc(&mut self, h: u32, limit: Option<u32>, hash: u64) -> u32 {
        let nic = &mut self.nics[h as usize];
        let q = match nic.users.iter().position(|&u| u == 0) {
            Some(q) => q as u32,
            None if limit.is_none_or(|n| (nic.users.len() as u32) < n) => {
                nic.users.push(0);
                nic.users.len() as u32 - 1
            }
            None => (hash % nic.users.len() as u64) as u32,
        };
        nic.users[q as usize] += 1;
        q
    }
    fn nic_release(&mut self, h: u32, q: u32) {
        self.nics[h as usize].users[q as usize] -= 1;
    }
    fn nic_any_paused(&self, h: u32) -> bool {
        self.nics[h as usize].paused.iter().any(|&w| w != 0)
    }
    fn nic_paused_word(&self, h: u32, w: usize) -> u64 {
        self.nics[h as usize].paused.get(w).copied().unwrap_or(0)
    }
    fn nic_queue_count(&self, h: u32) -> usize {
        self.nics[h as usize].users.len()
    }
    fn park_if_paused(&mut self, h: u32, id: FlowId, _slot: usize) -> bool {
        // The fake's flows are on the NIC queue of their own number.
        let nic = &mut self.nics[h as usize];
        if !nic.is_paused(id.0) {
            return false;
        }
        if !nic.parked.contains(&id) {
            nic.parked.push(id);
        }
        true
    }
    fn set_nic_paused<S: Scheme>(
        &mut self,
        _side: &mut S,
        h: u32,
        changes: impl IntoIterator<Item = (u32, bool)>,
    ) {
        for (queue, paused) in changes {
            let nic = &mut self.nics[h as usize];
            if nic.is_paused(queue) == paused {
                continue;
            }
            let w = queue as usize / 64;
            if w >= nic.paused.len() {
                nic.paused.resize(w + 1, 0);
            }
            nic.paused[w] ^= 1 << (queue % 64);
            self.log.push(Call::NicPaused { h, queue, paused });
        }
    }
    fn make_ready<S: Scheme>(&mut self, _side: &mut S, id: FlowId) {
        self.log.push(Call::Ready { flow: id });
    }
    fn new_control(
        &mut self,
        id: FlowId,
        to_sender: bool,
        kind: PacketKind,
        (seq, aux): (u64, u32),
        size: u32,
    ) -> PacketId {
        let p =
            self.flows[id.idx()].control_packet(id, to_sender, kind, (seq, aux), size, self.now);
        let pkt = self.packets.alloc(p);
        self.log.push(Call::Control {
            pkt,
            flow: id,
            kind,
            seq,
            aux,
        });
        pkt
    }
    fn queue_control(&mut self, h: u32, pkt: PacketId) {
        self.log.push(Call::Queued {
            h,
            pkt,
            woken: false,
        });
    }
    fn send_control<S: Scheme>(&mut self, _side: &mut S, h: u32, pkt: PacketId) {
        self.log.push(Call::Queued {
            h,
            pkt,
            woken: true,
        });
    }
    fn reply<S: Scheme>(
        &mut self,
        side: &mut S,
        h: u32,
        data: &Packet,
        kind: PacketKind,
        (seq, aux): (u64, u32),
    ) {
        let mut reply = Packet {
            seq,
            aux,
            flow: data.flow,
            ..Packet::blank(kind)
        };
        side.echo(data, &mut reply);
        self.log.push(Call::Reply { h, kind, seq, aux });
    }
    fn restart_rto(&mut self, _h: u32, slot: usize) {
        self.log.push(Call::RestartRto { slot });
    }
    fn complete<S: Scheme>(&mut self, _side: &mut S, id: FlowId) {
        self.slots[id.idx()] = None;
        self.log.push(Call::Complete { flow: id });
    }
}

impl Setup for FakeFabric {
    fn topology(&self) -> &Topology {
        &self.topo
    }
    fn routes(&self) -> &Routes {
        &self.routes
    }
    fn seed(&self) -> u64 {
        1
    }
    fn switch_count(&self) -> usize {
        self.switches.len()
    }
    fn sw_port_count(&self) -> usize {
        self.sw_ports.len()
    }
    fn host_count(&self) -> usize {
        self.topo.hosts.len()
    }
    fn switch_of_node(&self, node: NodeId) -> Option<usize> {
        self.switches.iter().position(|&(n, _)| n == node)
    }
    fn wire_delay(&self, port: PortId) -> Time {
        self.topo.link_of(port).delay
    }
    fn flows(&self) -> &[Flow] {
        &self.flows
    }
    fn flow_context(&self) -> FlowContext {
        let line_rate = self.topo.links.first().map_or(Rate(1), |l| l.rate);
        let base_rtt = Time::from_us(8);
        FlowContext {
            mss: PAYLOAD,
            line_rate,
            base_rtt,
            bdp: line_rate.bytes_in(base_rtt),
            seed: 1,
            flow: FlowId(0),
        }
    }
    fn buffer(&self) -> Bytes {
        Bytes(12_000_000)
    }
    fn payload(&self) -> u32 {
        PAYLOAD
    }
    fn header(&self) -> u32 {
        HEADER
    }
    fn ack_size(&self) -> u32 {
        ACK
    }
    fn int_overhead(&self) -> u32 {
        0
    }
    fn transport(&self) -> &TransportConfig {
        &self.transport
    }
    fn enable_pausing(&mut self) {
        self.pausing = true;
    }
    fn start_watchdog(&mut self, bound: Time) {
        self.watchdog = Some(bound);
    }
}
