#!/usr/bin/env bash
# Seeded web-search trace for the htsim/bfcsim NDP cross-validation (bash + awk only).
#
#   scripts/htsim/gen-trace.sh CDF_FILE OUTDIR [HOSTS=128] [LOAD=0.5] [DURATION_US=2000] [SEED=1] [LINK_GBPS=100]
#
# Poisson arrivals at every host (rate LOAD * link / (8 * mean size), BFC's nsdifinal.cc formula, the one bfcsim's
# `load_on = "host"` uses), sizes drawn by inverse transform from an HPCC-format CDF (`size percent` lines,
# linear between points, rounded to whole bytes, at least 1 byte: bfcsim's `websearch` rule), destinations
# uniform over the other hosts. Random numbers come from L'Ecuyer's combined MLCG computed in awk doubles
# (exact: every product < 2^53), so the trace is the same under gawk, mawk or busybox awk.
# Writes, in OUTDIR:
#   trace.txt  `id src dst size_bytes start_ns`, sorted by start (the reference the parsers join on)
#   flow.txt   bfcsim/HPCC flow file: count, then `id src dst 3 100 size start_seconds`
#   htsim.cm   htsim connection matrix: `Nodes N`, `Connections C`, then `src->dst id I start PS size S`
set -euo pipefail
cdf=${1:?CDF file}; out=${2:?output dir}
hosts=${3:-128}; load=${4:-0.5}; dur_us=${5:-2000}; seed=${6:-1}; gbps=${7:-100}
mkdir -p "$out"

awk -v hosts="$hosts" -v load="$load" -v dur_us="$dur_us" -v seed="$seed" -v gbps="$gbps" '
function rnd(   z) {               # L-Ecuyer 1988, uniform in (0,1)
    s1 = (40014 * s1) % 2147483563
    s2 = (40692 * s2) % 2147483399
    z = s1 - s2; if (z < 1) z += 2147483562
    return z / 2147483563
}
function quantile(u,   i, p) {
    p = u * 100
    for (i = 1; i < n; i++) if (cp[i] >= p) break
    if (cp[i] == cp[i-1]) return cx[i]
    return cx[i-1] + (cx[i] - cx[i-1]) * (p - cp[i-1]) / (cp[i] - cp[i-1])
}
NF >= 2 { cx[n] = $1 + 0; cp[n] = $2 + 0; n++ }
END {
    if (n < 2 || cp[n-1] != 100) { print "bad CDF" > "/dev/stderr"; exit 1 }
    # exact mean under linear interpolation (plus a point mass at the first size if its percent > 0)
    mean = cx[0] * cp[0] / 100
    for (i = 1; i < n; i++) mean += (cp[i] - cp[i-1]) / 100 * (cx[i] + cx[i-1]) / 2
    rate = load * gbps * 1e9 / (8 * mean)          # flows per second per host
    s1 = 12345 + seed * 7919; s2 = 67890 + seed * 104729
    for (k = 0; k < 10; k++) rnd()
    dur_ns = dur_us * 1000
    for (h = 0; h < hosts; h++) {
        t = 0
        while (1) {
            t += -log(rnd()) / rate * 1e9
            if (t >= dur_ns) break
            size = int(quantile(rnd()) + 0.5); if (size < 1) size = 1
            d = int(rnd() * (hosts - 1)); if (d >= h) d++
            printf "%d %d %d %d\n", h, d, size, int(t + 0.5)
        }
    }
    printf "gen-trace: mean size %.1f B, %.2f flows/s/host\n", mean, rate > "/dev/stderr"
}' "$cdf" | sort -k4,4n -k1,1n -k2,2n | awk '{ print NR, $0 }' > "$out/trace.txt"

count=$(wc -l < "$out/trace.txt")
awk -v c="$count" 'BEGIN { print c }
    { printf "%d %d %d 3 100 %d %d.%09d\n", $1, $2, $3, $4, int($5 / 1e9), $5 % 1000000000 }' "$out/trace.txt" > "$out/flow.txt"
awk -v c="$count" -v hosts="$hosts" 'BEGIN { print "Nodes " hosts; print "Connections " c }
    { printf "%d->%d id %d start %d000 size %d\n", $2, $3, $1, $5, $4 }' "$out/trace.txt" > "$out/htsim.cm"
echo "gen-trace: $count flows in $out" >&2
