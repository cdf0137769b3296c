#!/usr/bin/env python3
"""Per-flow FCTs from the text output of the Ultra Ethernet Consortium's htsim (htsim_uec, htsim_eqds).

    scripts/xval/uet-htsim-fct.py LOG [--cm FILE] [--out FCT.tsv] [--hpcc FCT.txt] [--tput TPUT.tsv]

Reads LOG, the standard output of one htsim_uec or htsim_eqds run (plain or .gz), and uses only its
text lines

    Flow <Uec|Eqds>_<src>_<dst> flowId <id> <nodename> starting at <t_us>
    Flow <Uec|Eqds>_<src>_<dst> flowId <id> <nodename> finished at <t_us> ... total bytes <B> ...

(htsim prints the times in microseconds with C++'s default six significant digits, so a finish time is exact
to 1 ns below 1 ms, 10 ns below 10 ms and 100 ns below 100 ms; "finished" is when the sender has the
acknowledgement of the flow's last byte). With --cm, the connection matrix the run read (`src->dst id I start
PS size S` lines), each flow's size and start come exactly from it, joined on the flow id; without it the start
is the "starting at" time and the size is the "total bytes" htsim prints (whole packets of payload). This fork
reads a matrix's `start` as whole microseconds (it schedules the flow at timeFromUs((uint32_t)start), whatever
its parser's comment says about picoseconds), so the start taken from --cm is the value truncated to whole us.

Writes a TSV (to --out, else standard output; a header line only with --header), one line per finished flow,
in flow-id order: `src dst size_bytes start_ns fct_ns` (fct = finish - start). With --tput, also a TSV `id src dst
size_bytes fct_ns gbps` (size * 8 / fct). With --hpcc, the same flows in HPCC ns-3's fct.txt format, which `bfcsim
compare` and `bfcsim run --compare` read: `sip dip sport dport size start_ns fct_ns standalone_ns` (hosts as
11.0.x.1 in hex, sport 10000 + the pair's earlier flows, dport 100), the standalone FCT in HPCC's convention
(bfcsim's `metrics.ideal = "hpcc"`) on the k = 8 fat tree htsim builds: links 2, 4 or 6 for hosts under one ToR,
one pod or not (--hosts-per-tor, --hosts-per-pod), 2 x links x --hop-ns + links x one payload's serialization +
(size + packets x --header) x 8 / --gbps. Prints to standard error how many flows started, finished and (with
--cm) were in the matrix, and the ids of unfinished flows (at most 20).
"""
import argparse
import gzip
import re
import sys

FLOW_RE = re.compile(r"^Flow (\S+?)_(\d+)_(\d+) flowId (\d+) .*?\b(starting|finished) at (\S+)(.*)$")
BYTES_RE = re.compile(r"\btotal bytes (\d+)")


def us_to_ns(text):
    return round(float(text) * 1000.0)


def read_cm(path):
    flows = {}
    with open(path) as f:
        for line in f:
            tok = line.split()
            if not tok or "->" not in tok[0]:
                continue
            src, dst = (int(x) for x in tok[0].split("->"))
            attrs = dict(zip(tok[1::2], tok[2::2]))
            if "id" not in attrs:
                sys.exit(f"{path}: a connection without an id cannot be joined: {line.strip()}")
            start_ns = int(float(attrs["start"])) * 1000 if "start" in attrs else None  # whole us
            flows[int(attrs["id"])] = (src, dst, int(attrs.get("size", 0)), start_ns)
    return flows


def standalone_ns(a, src, dst, size):
    """HPCC's standalone FCT (third.cc's qp_finish, bfcsim's Ideal::Hpcc) on htsim's k = 8 fat tree."""
    if src // a.hosts_per_tor == dst // a.hosts_per_tor:
        links = 2
    elif src // a.hosts_per_pod == dst // a.hosts_per_pod:
        links = 4
    else:
        links = 6
    bps = a.gbps * 10**9
    packets = -(-size // a.payload)
    wire = size + packets * a.hdr
    return 2 * links * a.hop_ns + links * (a.payload * 8 * 10**9 // bps) + wire * 8 * 10**9 // bps


def write_hpcc(a, rows):
    seen = {}
    with open(a.hpcc, "w") as out:
        for fid, src, dst, size, start_ns, fct in sorted(rows, key=lambda r: (r[4], r[0])):
            sport = 10000 + seen.get((src, dst), 0)
            seen[(src, dst)] = seen.get((src, dst), 0) + 1
            ip = lambda h: 0x0B000001 + h * 256  # noqa: E731
            out.write(f"{ip(src):08x} {ip(dst):08x} {sport} 100 {size} {start_ns:.0f} {fct:.0f} "
                      f"{standalone_ns(a, src, dst, size)}\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("log")
    ap.add_argument("--cm", help="the connection matrix of the run (exact sizes and starts)")
    ap.add_argument("--out", help="FCT TSV (default standard output)")
    ap.add_argument("--tput", help="per-flow throughput TSV")
    ap.add_argument("--header", action="store_true", help="write a header line")
    ap.add_argument("--hpcc", help="the flows in HPCC's fct.txt format")
    ap.add_argument("--payload", type=int, default=4086, help="payload bytes per packet (htsim_uec: 4150 - 64)")
    ap.add_argument("--hdr", type=int, default=64, help="header bytes per packet")
    ap.add_argument("--hop-ns", type=int, default=1000, help="link latency")
    ap.add_argument("--gbps", type=int, default=100, help="link rate")
    ap.add_argument("--hosts-per-tor", type=int, default=4)
    ap.add_argument("--hosts-per-pod", type=int, default=16)
    a = ap.parse_args()

    opener = gzip.open if a.log.endswith(".gz") else open
    started, finished = {}, {}
    with opener(a.log, "rt", errors="replace") as f:
        for line in f:
            if not line.startswith("Flow "):
                continue
            m = FLOW_RE.match(line.rstrip("\n"))
            if not m:
                continue
            _, src, dst, fid, ev, t, rest = m.groups()
            fid = int(fid)
            if ev == "starting":
                started[fid] = (int(src), int(dst), us_to_ns(t))
            elif fid not in finished:
                b = BYTES_RE.search(rest)
                finished[fid] = (int(src), int(dst), us_to_ns(t), int(b.group(1)) if b else 0)

    cm = read_cm(a.cm) if a.cm else None
    rows = []
    for fid in sorted(finished):
        src, dst, fin_ns, total_bytes = finished[fid]
        if cm is not None:
            if fid not in cm:
                sys.exit(f"flow {fid} finished in the log but is not in {a.cm}")
            csrc, cdst, size, start_ns = cm[fid]
            if (csrc, cdst) != (src, dst):
                sys.exit(f"flow {fid}: log says {src}->{dst}, matrix says {csrc}->{cdst}")
            if start_ns is None:
                start_ns = started[fid][2]
            elif fid in started and abs(started[fid][2] - start_ns) > 1e-5 * max(start_ns, 1e5):
                sys.exit(f"flow {fid}: the log starts it at {started[fid][2]} ns, the matrix at {start_ns} ns")
        else:
            size = total_bytes
            start_ns = started[fid][2] if fid in started else 0
        rows.append((fid, src, dst, size, start_ns, fin_ns - start_ns))

    out = open(a.out, "w") if a.out else sys.stdout
    if a.header:
        out.write("src\tdst\tsize_bytes\tstart_ns\tfct_ns\n")
    for fid, src, dst, size, start_ns, fct in rows:
        out.write(f"{src}\t{dst}\t{size}\t{start_ns:.0f}\t{fct:.0f}\n")
    if a.out:
        out.close()
    if a.tput:
        with open(a.tput, "w") as t:
            t.write("id\tsrc\tdst\tsize_bytes\tfct_ns\tgbps\n")
            for fid, src, dst, size, start_ns, fct in rows:
                t.write(f"{fid}\t{src}\t{dst}\t{size}\t{fct:.0f}\t{size * 8 / fct:.3f}\n")

    if a.hpcc:
        write_hpcc(a, rows)

    expected = set(cm) if cm is not None else set(started)
    unfinished = sorted(expected - set(finished))
    msg = f"uet-htsim-fct: {len(started)} started, {len(finished)} finished"
    if cm is not None:
        msg += f", {len(cm)} in the matrix"
    if unfinished:
        msg += f"; unfinished: {' '.join(map(str, unfinished[:20]))}" + (" ..." if len(unfinished) > 20 else "")
    print(msg, file=sys.stderr)


if __name__ == "__main__":
    main()
