#!/usr/bin/env python3
"""An HPCC-format fct.txt (possibly .gz) whose flows all finished -> HPCC flow.txt of the same flows.

    python3 scripts/xval/fct2flow.py data/reference/bfc-fig9-5ms/hpcc-ns3.fct.txt.gz [MAX_MS] > flow.txt

Flows in start order ((start_ns, src, dst), ties as listed), as `src dst 3 dport size start_s`, node id
= (ip >> 8) & 0xffff. With MAX_MS, only the flows that start within MAX_MS of the first (the order and cut
crates/bfcsim/tests/crossval_bfc_artifact.rs uses).
"""
import gzip
import sys


def main():
    path = sys.argv[1]
    opener = gzip.open if path.endswith('.gz') else open
    rows = []
    with opener(path, 'rt') as f:
        for n, line in enumerate(f, 1):
            x = line.split()
            if not x:
                continue
            if len(x) != 8:
                sys.exit('%s:%d: expected 8 fields, found %d' % (path, n, len(x)))
            node = lambda ip: (int(ip, 16) >> 8) & 0xffff
            rows.append((int(x[5]), node(x[0]), node(x[1]), x[3], x[4]))
    rows.sort(key=lambda r: r[:3])
    if len(sys.argv) > 2 and rows:
        end = rows[0][0] + float(sys.argv[2]) * 1e6
        rows = [r for r in rows if r[0] < end]
    out = sys.stdout
    out.write('%d\n' % len(rows))
    for t, s, d, dport, size in rows:
        out.write('%d %d 3 %s %s %d.%09d\n' % (s, d, dport, size, t // 10**9, t % 10**9))


if __name__ == '__main__':
    main()
