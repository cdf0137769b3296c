#!/usr/bin/env python3
"""FCT slowdowns of an HPCC-format fct.txt against the BFC artifact's ideal FCT, as in the artifact's
calculate_fct_slowdown.py buckets, on the artifact's CLOS-128 (16 hosts per ToR).

    slowdown.py FCT_TXT [FLOW_TXT]

FCT_TXT: `sip dip sport dport size start_ns fct_ns standalone_ns` (node id = (ip >> 8) & 0xffff); dport 200 marks
incast flows. FLOW_TXT (optional) counts the flows that did not finish.

Ideal FCT (the artifact's, ns): np = ceil(size / 1000) packets (what the artifact's driver sends: floor(sampled
size / 1000) + 1 packets of 1000 B, or one packet of the sampled size if it is at most 1000 B);
same ToR: 4000 + 80 * (np + 1); other ToR: 8000 + 80 * (np + 3). (The artifact's script uses size * 8 / 100 ns
instead of 80 ns per packet for single-packet flows; column `p99_exact1` gives that variant for those.)
Percentiles as the artifact's script takes them: the sorted values' element int(p * n).
Rows: short = non-incast flows < 3000 B (1-2 packets); then the artifact's Google buckets by packets (<=1, <=2,
<=4, ..., <=1024, >1024, non-incast) and the incast flows.
"""
import sys

PER_TOR = 16


def ideal(size, same, exact1=False):
    np_ = max(1, -(-size // 1000))
    per = size * 8 / 100.0 if (exact1 and np_ == 1) else 80.0
    return 4000 + per * (np_ + 1) if same else 8000 + per * (np_ + 3)


def pct(s, p):
    return s[min(len(s) - 1, int(p * len(s)))] if s else float('nan')


def main():
    rows = []
    with open(sys.argv[1]) as f:
        for line in f:
            t = line.split()
            if len(t) < 8:
                continue
            src, dst = (int(t[0], 16) >> 8) & 0xFFFF, (int(t[1], 16) >> 8) & 0xFFFF
            size, fct, incast = int(t[4]), int(t[6]), t[3] == '200'
            same = src // PER_TOR == dst // PER_TOR
            rows.append((size, incast, fct / ideal(size, same), fct / ideal(size, same, True)))
    total = None
    if len(sys.argv) > 2:
        with open(sys.argv[2]) as f:
            total = int(f.readline())
    print('finished %d%s' % (len(rows), '' if total is None else ' of %d flows (%d unfinished)' % (total, total - len(rows))))
    edges = [1, 2, 4, 8, 16, 64, 256, 1024]
    groups = [('short<3KB', lambda s, i: not i and s < 3000)]
    lo = 0
    for e in edges:
        groups.append(('<=%dpkt' % e, (lambda a, b: lambda s, i: not i and a < max(1, -(-s // 1000)) <= b)(lo, e)))
        lo = e
    groups.append(('>1024pkt', lambda s, i: not i and max(1, -(-s // 1000)) > 1024))
    groups.append(('incast', lambda s, i: i))
    groups.append(('all', lambda s, i: True))
    print('%-10s %9s %9s %9s %9s %9s %11s' % ('bucket', 'flows', 'p50', 'p95', 'p99', 'mean', 'p99_exact1'))
    for name, sel in groups:
        v = sorted(r[2] for r in rows if sel(r[0], r[1]))
        w = sorted(r[3] for r in rows if sel(r[0], r[1]))
        mean = sum(v) / len(v) if v else float('nan')
        print('%-10s %9d %9.3f %9.3f %9.3f %9.3f %11.3f' % (name, len(v), pct(v, .5), pct(v, .95), pct(v, .99), mean, pct(w, .99)))


if __name__ == '__main__':
    main()
