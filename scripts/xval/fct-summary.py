#!/usr/bin/env python3
"""FCT percentiles of an HPCC-format fct.txt against the trace it ran (python3 standard library).

    scripts/xval/fct-summary.py FCT_TXT TRACE_TXT [--incast INCAST_TXT] [--json OUT.json]

FCT_TXT: `sip dip sport dport size start_ns fct_ns standalone_ns` (node id = (ip >> 8) & 0xffff). TRACE_TXT:
gen-trace.sh's `id src dst size start_ns`. Each fct.txt line is matched to the trace flow with the same (src, dst,
size) and the nearest start (within 2 ns: ns-3 reads start seconds through a double); trace flows left unmatched
are unfinished. Prints, for all flows, flows < 100 KB, 100 KB - 1 MB and >= 1 MB (and, with --incast, the incast
flows listed in INCAST_TXT by id and the other flows apart): flows, finished, unfinished, p50/p99/max FCT in
microseconds (nearest rank over the finished flows).
"""
import argparse
import json
import math
from collections import defaultdict


def node(ip_hex):
    return (int(ip_hex, 16) >> 8) & 0xFFFF


def pct(sorted_vals, p):
    if not sorted_vals:
        return None
    k = max(1, math.ceil(p * len(sorted_vals)))
    return sorted_vals[k - 1]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("fct")
    ap.add_argument("trace")
    ap.add_argument("--incast")
    ap.add_argument("--json")
    a = ap.parse_args()

    trace = {}
    by_key = defaultdict(list)
    with open(a.trace) as f:
        for line in f:
            p = line.split()
            if len(p) != 5:
                continue
            i, s, d, size, start = map(int, p)
            trace[i] = (s, d, size, start)
            by_key[(s, d, size)].append((start, i))
    fct = {}
    unmatched = 0
    with open(a.fct) as f:
        for line in f:
            p = line.split()
            if len(p) != 8:
                continue
            s, d = node(p[0]), node(p[1])
            size, start, t = int(p[4]), int(p[5]), int(p[6])
            best = None
            for st, i in by_key.get((s, d, size), []):
                if i in fct:
                    continue
                diff = abs(st - start)
                if diff <= 2 and (best is None or diff < best[0]):
                    best = (diff, i)
            if best is None:
                unmatched += 1
                continue
            fct[best[1]] = t
    incast = set()
    if a.incast:
        with open(a.incast) as f:
            incast = {int(l.split()[0]) for l in f if l.strip()}

    groups = [("all", lambda i: True), ("<100KB", lambda i: trace[i][2] < 100000),
              ("100KB-1MB", lambda i: 100000 <= trace[i][2] < 1000000), (">=1MB", lambda i: trace[i][2] >= 1000000)]
    if incast:
        groups += [("incast", lambda i: i in incast), ("non-incast", lambda i: i not in incast),
                   ("non-incast <100KB", lambda i: i not in incast and trace[i][2] < 100000)]
    out = {"unmatched_fct_lines": unmatched, "groups": {}}
    print("%-18s %6s %6s %6s %11s %11s %11s" % ("group", "flows", "fin", "unfin", "p50 us", "p99 us", "max us"))
    for name, pred in groups:
        ids = [i for i in trace if pred(i)]
        vals = sorted(fct[i] for i in ids if i in fct)
        r = {"flows": len(ids), "finished": len(vals), "unfinished": len(ids) - len(vals),
             "p50_us": None if not vals else pct(vals, 0.5) / 1000,
             "p99_us": None if not vals else pct(vals, 0.99) / 1000,
             "max_us": None if not vals else vals[-1] / 1000}
        out["groups"][name] = r
        fmt = lambda x: "-" if x is None else "%.2f" % x
        print("%-18s %6d %6d %6d %11s %11s %11s" % (name, r["flows"], r["finished"], r["unfinished"],
                                                    fmt(r["p50_us"]), fmt(r["p99_us"]), fmt(r["max_us"])))
    if unmatched:
        print("fct lines matching no trace flow: %d" % unmatched)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
