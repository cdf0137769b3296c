#!/usr/bin/env python3
"""Convert the stdout of the BFC artifact's driver (prateshg/BFC_NS3_NSDI2022, ns3-backpressure,
scratch/nsdifinal.cc) into HPCC ns-3 formats, so the same flows can be replayed elsewhere.

    artifact2hpcc.py ARTIFACT_LOG OUT_DIR

Reads only the log. Writes into OUT_DIR:
  flow.txt       HPCC ns-3 flow list: the count, then `src dst pg dport size_bytes start_seconds`, ascending start
                 (pg 3; dport 200 for incast flows, 100 for the others). Every flow the driver generated, from its
                 `New Flow Created Src S Dst D Size B Time T` lines; the start is the exact ns at which the
                 sender's NIC saw the flow's first packet (its `Starting flow at` line), which is the driver's
                 start time (`Time`, printed to 10 digits) to within 1 ns.
  topology.txt   HPCC ns-3 topology of the artifact's hard-coded CLOS-128, numbered as the artifact numbers its
                 nodes: hosts 0-127, ToR 128 + h/16 (128-135), spines 136-143; links in the artifact's creation
                 order (ToR-host i for i < 128, then spine-ToR), 100 Gb/s (DATA_RATE), 1 us (LINK_DELAY).
  fct.txt        the artifact's per-flow FCTs in HPCC's fct.txt format:
                 `sip dip sport dport size start_ns fct_ns ideal_ns` (%08x %08x %u %u %u %u %u %u), sip/dip
                 HPCC-style (0x0b000001 + id/256 << 16 + id%256 << 8, so node id = (ip >> 8) & 0xffff), sport
                 the artifact's UDP source port, fct the artifact's `Time taken` (first packet at the sender NIC
                 to the ACK of the last packet), ideal_ns the artifact's ideal FCT (see ideal_fct_ns below).
                 Finished flows only, in flow.txt order.
  flows.tsv      every flow: idx src dst size start_ns incast sport fct_ns (fct -1 if it did not finish)
  convert.json   counts and consistency checks (pairing by start time, receiver = destination)
"""
import collections
import json
import math
import os
import re
import sys

HOSTS, HOSTS_PER_TOR, TORS, SPINES = 128, 16, 8, 8


def ideal_fct_ns(size, same_rack, gbps=100):
    """The artifact's ideal FCT (calculate_fct_slowdown.py) with np = ceil(size/1000) packets (the driver's
    floor(sampled/1000)+1): same rack 4 us + 8000/gbps ns * (np+1), else 8 us + 8000/gbps ns * (np+3).
    (The artifact uses size*8/gbps instead of 8000/gbps for single-packet flows; this uses 8000/gbps always.)"""
    np_ = max(1, -(-size // 1000))
    per = 8000.0 / gbps
    return 4000 + per * (np_ + 1) if same_rack else 8000 + per * (np_ + 3)


def hpcc_ip(node):
    return 0x0B000001 + ((node // 256) << 16) + ((node % 256) << 8)


def ns_of(tok):  # ns-3 Time printout: "+1000000123.0ns"
    return int(round(float(tok.strip().lstrip('+').rstrip('ns').rstrip('n'))))


def link_host_of_ip(ip):
    # The host of link i (i < 128) has 10.(i/254+1).(i%254+1).2; the artifact's Ipv4Address::Print prints only
    # the middle two octets ("1.5" for host 4).
    t = [int(x) for x in ip.split('.')]
    b, c = (t[1], t[2]) if len(t) == 4 else (t[0], t[1])
    return (b - 1) * 254 + (c - 1)


def main():
    log, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    re_new = re.compile(r'^New Flow Created Src (\d+) Dst (\d+) Size (\d+) Time (\S+)')
    re_start = re.compile(r'^Starting flow at (\S+) port (\d+) qbbid (\d+) qindex (\d+) IP (\S+)')
    re_fin = re.compile(r'^Flow finished at qbbid (\d+) at (\S+) at port(\d+) Num packets:(\d+), Time taken :(\S+) qindex (\d+)')
    re_rx = re.compile(r'^Received the last packet on port (\d+) at (\S+) qbbid (\d+) IP (\S+) size (\d+)')
    flows = []                                   # [src, dst, size, time_str, incast]
    starts = collections.defaultdict(list)       # host -> [(t_ns, port, qindex)]
    fins = collections.defaultdict(list)         # (qbbid, port, qindex) -> [(t_ns, np, fct)]
    rxs = collections.defaultdict(list)          # (src host, port) -> [(t_ns, rx qbbid)]
    qbb_host = {}
    incast_pkts, create_incast, rate, delay = None, False, '100Gbps', '0.001ms'
    with open(log, errors='replace') as f:
        for line in f:
            c = line[0:3]
            if c == 'New':
                m = re_new.match(line)
                if m:
                    flows.append([int(m.group(1)), int(m.group(2)), int(m.group(3)), m.group(4), 0])
            elif c == 'Sta':
                m = re_start.match(line)
                if m:
                    h = link_host_of_ip(m.group(5))
                    qbb_host[int(m.group(3))] = h
                    starts[h].append((ns_of(m.group(1)), int(m.group(2)), int(m.group(4))))
            elif c == 'Flo':
                m = re_fin.match(line)
                if m:
                    fins[(int(m.group(1)), int(m.group(3)), int(m.group(6)))].append(
                        (ns_of(m.group(2)), int(m.group(4)), ns_of(m.group(5))))
            elif c == 'Rec':
                m = re_rx.match(line)
                if m:
                    rxs[(link_host_of_ip(m.group(4)), int(m.group(1)))].append((ns_of(m.group(2)), int(m.group(3))))
            elif line.startswith('FLOW_SIZE_IN_INCAST'):
                incast_pkts = int(line.split()[-1])
            elif line.startswith('CREATE_INCAST'):
                create_incast = line.split()[-1] == 'Yes'
            elif line.startswith('DATA_RATE'):
                rate = line.split()[-1]
            elif line.startswith('LINK_DELAY'):
                delay = line.split()[-1]
    gbps = int(rate[:-4]) if rate.endswith('Gbps') else 100
    # Incast flows are the only ones of exactly FLOW_SIZE_IN_INCAST packets: the driver bumps a sampled flow of
    # that many packets to one more.
    if create_incast and incast_pkts:
        for fl in flows:
            if fl[2] == incast_pkts * 1000:
                fl[4] = 1
    # Pair each flow with its sender's `Starting flow` lines in order: a host's flows start in creation order
    # (same-time events run FIFO, and the NIC sees the first packet at the flow's start time). A flow whose
    # first packet the NIC did not register (the artifact then prints "ERROR---Finishing a flow that does not
    # exist" and never reports it finished) has no line: skip it when the next line's time does not match.
    by_src = collections.defaultdict(list)
    for i, fl in enumerate(flows):
        by_src[fl[0]].append(i)
    start_ns = [None] * len(flows)
    sport = [None] * len(flows)
    qidx = [None] * len(flows)
    max_dev, unstarted, big_dev = 0, 0, 0
    for h, idxs in by_src.items():
        idxs.sort(key=lambda i: (float(flows[i][3]), i))
        st = starts.get(h, [])
        j = 0
        for i in idxs:
            want = float(flows[i][3]) * 1e9
            if j >= len(st) or st[j][0] - want > 2:
                unstarted += 1
                continue
            while j < len(st) and want - st[j][0] > 2:   # a line without a flow: should not happen
                big_dev += 1
                j += 1
            if j >= len(st) or abs(st[j][0] - want) > 2:
                unstarted += 1
                continue
            t, p, q = st[j]
            j += 1
            max_dev = max(max_dev, abs(t - want))
            start_ns[i], sport[i], qidx[i] = t, p, q
    host_qbb = {h: q for q, h in qbb_host.items()}
    fct = [-1] * len(flows)
    np_mismatch = 0
    for i, fl in enumerate(flows):
        if start_ns[i] is None or fl[0] not in host_qbb:
            continue
        for (t, npk, d) in fins.get((host_qbb[fl[0]], sport[i], qidx[i]), []):
            if t >= start_ns[i]:
                fct[i] = d
                if npk != max(1, -(-fl[2] // 1000)):
                    np_mismatch += 1
                break
    # Check the receiver of each flow's last packet against its destination.
    rx_ok = rx_bad = 0
    for i, fl in enumerate(flows):
        if start_ns[i] is None:
            continue
        for (t, q) in rxs.get((fl[0], sport[i]), []):
            if t >= start_ns[i]:
                if qbb_host.get(q, q // 2 - 1) == fl[1]:  # host h's NIC is qbbid 2h+2
                    rx_ok += 1
                else:
                    rx_bad += 1
                break
    order = sorted(range(len(flows)), key=lambda i: (start_ns[i] if start_ns[i] is not None else float(flows[i][3]) * 1e9, i))
    with open(os.path.join(out, 'flow.txt'), 'w') as f:
        f.write('%d\n' % len(flows))
        for i in order:
            src, dst, size, ts, inc = flows[i]
            t = start_ns[i] if start_ns[i] is not None else round(float(ts) * 1e9)
            f.write('%d %d 3 %d %d %d.%09d\n' % (src, dst, 200 if inc else 100, size, t // 10**9, t % 10**9))
    with open(os.path.join(out, 'topology.txt'), 'w') as f:
        n_sw = TORS + SPINES
        f.write('%d %d %d\n' % (HOSTS + n_sw, n_sw, HOSTS + TORS * SPINES))
        f.write(' '.join(str(HOSTS + s) for s in range(n_sw)) + '\n')
        for i in range(HOSTS):
            f.write('%d %d %s %s 0\n' % (HOSTS + i // HOSTS_PER_TOR, i, rate, delay))
        for i in range(TORS * SPINES):
            f.write('%d %d %s %s 0\n' % (HOSTS + TORS + i % SPINES, HOSTS + i // SPINES, rate, delay))
    finished = 0
    with open(os.path.join(out, 'fct.txt'), 'w') as f, open(os.path.join(out, 'flows.tsv'), 'w') as g:
        g.write('idx\tsrc\tdst\tsize\tstart_ns\tincast\tsport\tfct_ns\n')
        for i in order:
            src, dst, size, ts, inc = flows[i]
            g.write('%d\t%d\t%d\t%d\t%s\t%d\t%s\t%d\n' % (i, src, dst, size, start_ns[i], inc, sport[i], fct[i]))
            if fct[i] >= 0:
                finished += 1
                same = src // HOSTS_PER_TOR == dst // HOSTS_PER_TOR
                f.write('%08x %08x %u %u %u %u %u %u\n' % (hpcc_ip(src), hpcc_ip(dst), sport[i], 200 if inc else 100,
                                                          size, start_ns[i], fct[i],
                                                          int(round(ideal_fct_ns(size, same, gbps)))))
    summary = dict(flows=len(flows), incast_flows=sum(fl[4] for fl in flows), finished=finished,
                   unfinished=len(flows) - finished, unpaired_starts=unstarted,
                   start_pairing_max_dev_ns=max_dev, start_lines_without_flow=big_dev,
                   receiver_is_dst=rx_ok, receiver_not_dst=rx_bad, packets_mismatch=np_mismatch,
                   data_rate=rate, link_delay=delay, create_incast=create_incast, incast_packets=incast_pkts)
    with open(os.path.join(out, 'convert.json'), 'w') as f:
        json.dump(summary, f, indent=1)
    print(json.dumps(summary))


if __name__ == '__main__':
    main()
