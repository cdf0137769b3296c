#!/usr/bin/env python3
"""Adds one N-to-1 incast to a trace directory written by scripts/htsim/gen-trace.sh (python3 standard library).

    scripts/xval/add-incast.py IN_DIR OUT_DIR [--senders 100] [--size 20000] [--receiver 0] [--start-ns 1000000]
                               [--seed 1] [--hosts 128]

Reads IN_DIR/trace.txt (`id src dst size_bytes start_ns`, sorted by start) and writes OUT_DIR/trace.txt, flow.txt
and htsim.cm in gen-trace.sh's formats with the incast flows added: `--senders` distinct hosts, drawn with
`random.Random(seed).sample(sorted(hosts other than the receiver), senders)`, each sending `--size` bytes to
`--receiver`, all starting at `--start-ns`. All flows are sorted again as gen-trace.sh sorts them (start, then src,
then dst) and renumbered 1..N, so in every file a flow's id is its line number in trace.txt (what ndp-xval.sh's join
expects) and the ids agree across the three files. OUT_DIR/incast.txt lists the incast flows' new ids (`id src dst
size start_ns`), OUT_DIR/incast-senders.txt the senders in drawing order.
"""
import argparse
import os
import random


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("in_dir")
    ap.add_argument("out_dir")
    ap.add_argument("--senders", type=int, default=100)
    ap.add_argument("--size", type=int, default=20000)
    ap.add_argument("--receiver", type=int, default=0)
    ap.add_argument("--start-ns", type=int, default=1000000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--hosts", type=int, default=128)
    a = ap.parse_args()

    flows = []
    with open(os.path.join(a.in_dir, "trace.txt")) as f:
        for line in f:
            p = line.split()
            if len(p) == 5:
                flows.append((int(p[1]), int(p[2]), int(p[3]), int(p[4]), False))
    others = [h for h in range(a.hosts) if h != a.receiver]
    if a.senders > len(others):
        raise SystemExit("add-incast: more senders than hosts")
    senders = random.Random(a.seed).sample(others, a.senders)
    for s in senders:
        flows.append((s, a.receiver, a.size, a.start_ns, True))
    # gen-trace.sh: sort -k4,4n -k1,1n -k2,2n on `src dst size start` (start, then src, then dst)
    flows.sort(key=lambda x: (x[3], x[0], x[1]))

    os.makedirs(a.out_dir, exist_ok=True)
    n = len(flows)
    with open(os.path.join(a.out_dir, "trace.txt"), "w") as tr, \
            open(os.path.join(a.out_dir, "flow.txt"), "w") as fl, \
            open(os.path.join(a.out_dir, "htsim.cm"), "w") as cm, \
            open(os.path.join(a.out_dir, "incast.txt"), "w") as inc:
        fl.write("%d\n" % n)
        cm.write("Nodes %d\nConnections %d\n" % (a.hosts, n))
        for i, (s, d, size, start, is_incast) in enumerate(flows, 1):
            tr.write("%d %d %d %d %d\n" % (i, s, d, size, start))
            fl.write("%d %d %d 3 100 %d %d.%09d\n" % (i, s, d, size, start // 10**9, start % 10**9))
            cm.write("%d->%d id %d start %d000 size %d\n" % (s, d, i, start, size))
            if is_incast:
                inc.write("%d %d %d %d %d\n" % (i, s, d, size, start))
    with open(os.path.join(a.out_dir, "incast-senders.txt"), "w") as f:
        f.write(" ".join(map(str, senders)) + "\n")
    print("add-incast: %d flows (%d incast %d B -> host %d at %d ns, seed %d) in %s"
          % (n, a.senders, a.size, a.receiver, a.start_ns, a.seed, a.out_dir))


if __name__ == "__main__":
    main()
