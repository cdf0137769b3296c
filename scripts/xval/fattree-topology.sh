#!/usr/bin/env bash
# Writes the k-ary fat tree in HPCC ns-3's topology.txt format, numbered and wired as csg-htsim's FatTreeTopology
# (sim/datacenter/fat_tree_topology.cpp) builds it, so that host i is the same host in htsim, ns-3 and bfcsim.
#
#   scripts/xval/fattree-topology.sh [K=8] [RATE=100Gbps] [DELAY=0.001ms] [HEADER=4] > topology.txt
#
# Node ids: hosts 0 .. k^3/4-1 first, then k^2/2 edge (ToR) switches, k^2/2 aggregation switches, k^2/4 cores.
# Host h hangs off edge switch h / (k/2) (htsim HOST_POD_SWITCH), so pods hold k^2/4 hosts (16 for k = 8) and an
# edge switch k/2 (4). Edge switch t (pod t / (k/2)) links to every aggregation switch of its pod; aggregation
# switch a (pod position a % (k/2)) links to cores (a % (k/2)) + (k/2) * l for l = 0 .. k/2-1 (htsim's
# `core = podpos + _agg_switches_per_pod * l`).
# HEADER=4 writes the first line as `nodes switches switches links` (the PowerTCP repository's drivers,
# inet-tub/ns3-datacenter examples/PowerTCP/*.cc, read `node_num switch_num tors link_num`); HEADER=3 writes HPCC's
# `nodes switches links`. Then the switch ids, then one `a b rate delay 0` line per link: host-edge links in host
# order, edge-aggregation links, aggregation-core links.
set -euo pipefail
k=${1:-8}; rate=${2:-100Gbps}; delay=${3:-0.001ms}; header=${4:-4}
awk -v k="$k" -v rate="$rate" -v delay="$delay" -v header="$header" 'BEGIN {
    h = k / 2; hosts = k * k * k / 4; tors = k * k / 2; aggs = k * k / 2; cores = k * k / 4
    sw = tors + aggs + cores; nodes = hosts + sw
    links = hosts + tors * h + aggs * h
    if (header == 4) print nodes, sw, sw, links; else print nodes, sw, links
    line = ""
    for (i = hosts; i < nodes; i++) line = line (i > hosts ? " " : "") i
    print line
    tor0 = hosts; agg0 = hosts + tors; core0 = hosts + tors + aggs
    for (x = 0; x < hosts; x++) print x, tor0 + int(x / h), rate, delay, 0
    for (t = 0; t < tors; t++) { pod = int(t / h); for (j = 0; j < h; j++) print tor0 + t, agg0 + pod * h + j, rate, delay, 0 }
    for (a = 0; a < aggs; a++) { pos = a % h; for (l = 0; l < h; l++) print agg0 + a, core0 + pos + h * l, rate, delay, 0 }
}'
