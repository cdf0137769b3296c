#!/usr/bin/env bash
# NDP cross-validation: htsim's NDP (Broadcom/csg-htsim, sim/datacenter/main_ndp.cpp) against bfcsim's `ndp`
# preset on the same k=8 fat tree (128 hosts, 100 Gb/s, 1 us per link) and the same web-search trace.
# Prints, per size bucket, flows, p50 and p99 FCT of each simulator and bfcsim/htsim ratios.
#
#   scripts/htsim/ndp-xval.sh
#
# Environment (all optional):
#   DURATION_US=2000 LOAD=0.5 SEED=1   trace: arrivals window, load on the host links, seed (trace and both sims)
#   TRACE_DIR=DIR      use DIR/{trace.txt,flow.txt,htsim.cm} (from gen-trace.sh) instead of generating one
#   CM=FILE            run this connection matrix instead, triggers included (htsim's own generators write them:
#                      csg-htsim's sim/datacenter/connection_matrices/gen_allreduce.py, gen_serial_alltoall.py);
#                      bfcsim reads the same file ([flows] file, its triggers as dependencies, notices at once as
#                      htsim fires them), and a second table gives each collective's completion time: its flows
#                      grouped by the hosts they connect, from the first start to the last finish
#   OUT=DIR            run directory (default target/ndp-xval/load<LOAD>-<DURATION_US>us-seed<SEED>)
#   HTSIM=PATH         (required) an htsim_ndp binary built from Broadcom/csg-htsim (the comparison in
#                      docs/FIDELITY.md used commit 841d9e7be46bb968eece766aa4b6c044c7799f67); this repository
#                      ships no htsim code and no recipe to build it
#   BFCSIM=PATH        bfcsim binary; otherwise `cargo build --release -p bfcsim` in the repository
#   END_US             htsim -end (default DURATION_US + 100000); bfcsim's run.max_time is the same
#   RERUN=1            rerun a simulator even when its output is already in OUT
#   HTSIM_STRAT=perm   htsim -strat (perm: NDP's per-flow permutation of all paths; rand: a random path per packet)
# Reads nothing outside the repository but the htsim binary.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=${BFCSIM_ROOT:-$(cd "$HERE/../.." && pwd)}
DURATION_US=${DURATION_US:-2000}
LOAD=${LOAD:-0.5}
SEED=${SEED:-1}
HOSTS=128            # k = 8 fat tree
LINK_GBPS=100
HOP_US=1
END_US=${END_US:-$((DURATION_US + 100000))}
OUT=${OUT:-$ROOT/target/ndp-xval/load$LOAD-${DURATION_US}us-seed$SEED}
CDF=$ROOT/crates/bfcsim-workload/data/hpcc_WebSearch_distribution.txt
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
log() { echo "ndp-xval: $*" >&2; }

# --- binaries ---------------------------------------------------------------------------------------------
[[ -n "${HTSIM:-}" ]] || { log "set HTSIM to an htsim_ndp binary (see the header of this script)"; exit 1; }
if [[ -z "${BFCSIM:-}" ]]; then
    (cd "$ROOT" && nice cargo build --release -p bfcsim >&2)
    BFCSIM=${CARGO_TARGET_DIR:-$ROOT/target}/release/bfcsim
fi
[[ -x "$HTSIM" && -x "$BFCSIM" ]] || { log "missing binary: HTSIM=$HTSIM BFCSIM=$BFCSIM"; exit 1; }

# --- trace --------------------------------------------------------------------------------------------------
if [[ -n "${CM:-}" ]]; then
    cp "$CM" "$OUT/htsim.cm"
    # trace.txt (id src dst size start_ns) in bfcsim's order: by start time, file order among equal starts (a
    # triggered flow's start is 0 there, a lower bound); the start in a connection matrix is in picoseconds.
    awk '$1 ~ /->/ { split($1, h, "->"); size = 0; start = 0
            for (i = 2; i < NF; i++) { if ($i == "size") size = $(i + 1); if ($i == "start") start = $(i + 1) / 1000 }
            print ++n, h[1], h[2], size, start, ($0 ~ / trigger /) ? 1 : 0 }' "$OUT/htsim.cm" \
        | sort -s -n -k5,5 | awk '{ print NR, $2, $3, $4, $5, $6, $1 }' > "$OUT/trace.txt"
elif [[ -n "${TRACE_DIR:-}" ]]; then
    for f in trace.txt flow.txt htsim.cm; do cp "$TRACE_DIR/$f" "$OUT/$f"; done
elif [[ ! -s "$OUT/trace.txt" || -n "${RERUN:-}" ]]; then
    "$HERE/gen-trace.sh" "$CDF" "$OUT" "$HOSTS" "$LOAD" "$DURATION_US" "$SEED" "$LINK_GBPS"
fi
flows=$(wc -l < "$OUT/trace.txt")
log "$flows flows, arrivals over ${DURATION_US} us at load $LOAD (seed $SEED) in $OUT"

# --- bfcsim -------------------------------------------------------------------------------------------------
cat > "$OUT/bfcsim.toml" <<TOML
# Written by scripts/htsim/ndp-xval.sh: bfcsim's ndp preset on a k=8 fat tree (100 Gb/s, 1 us links by default).
name = "ndp-xval"
seed = $SEED

[topology]
kind = "fat-tree"
k = 8

[scheme]
name = "ndp"

[flows]
file = "$([[ -n "${CM:-}" ]] && echo htsim.cm || echo flow.txt)"

[run]
max_time = "${END_US}us"
TOML
if [[ ! -s "$OUT/bfcsim/fct.csv" || -n "${RERUN:-}" ]]; then
    log "running bfcsim"
    start=$(date +%s)
    (cd "$OUT" && nice "$BFCSIM" run bfcsim.toml --out bfcsim --outputs fct.csv,summary.json) > "$OUT/bfcsim.stdout" 2>&1 \
        || { log "bfcsim failed (status $?), see $OUT/bfcsim.stdout"; tail -20 "$OUT/bfcsim.stdout" >&2; exit 1; }
    echo $(( $(date +%s) - start )) > "$OUT/bfcsim.wall"
fi

# Pull the resolved parameters htsim must match out of bfcsim's run.json ("section.key" -> value).
jget() {
    awk -v want="$1" '
        /\{[ \t]*$/ { k = $1; gsub(/[":]/, "", k); stack[++d] = k; next }
        /^[ \t]*\}/ { d--; next }
        { k = $1; gsub(/[":]/, "", k); v = $0; sub(/^[^:]*:[ \t]*/, "", v); sub(/,[ \t]*$/, "", v); gsub(/"/, "", v)
          path = ""; for (i = 2; i <= d; i++) path = path stack[i] "."; if ((path k) == want) { print v; exit } }
    ' "$OUT/bfcsim/run.json"
}
payload=$(jget config.nic.payload); header=$(jget config.nic.header); ack=$(jget config.nic.ack_size)
qpkts=$(jget config.flow_control.queue_packets); trim=$(jget config.flow_control.header)
iw_bytes=$(jget initial_window_bytes); base_rtt=$(jget base_rtt_ns)
[[ -n "$payload" && -n "$header" && -n "$qpkts" && -n "$iw_bytes" ]] || { log "could not read run.json"; exit 1; }

# --- htsim parameters mapped from bfcsim's ------------------------------------------------------------------
HTSIM_HDR=64                                  # ndppacket.h: NdpPacket::ACKSIZE, added to every data packet
wire=$((payload + header))                    # bfcsim's full packet on the wire
mtu=$((wire - HTSIM_HDR))                     # htsim -mtu is the payload; its wire size is mtu + 64
q=$(( (qpkts * wire + mtu - 1) / mtu ))       # htsim -q counts mtu-byte units of a byte limit: fit qpkts full packets
(( q * mtu < (qpkts + 1) * wire )) || { log "no -q fits exactly $qpkts packets"; exit 1; }
cwnd=$(( (iw_bytes + payload - 1) / payload ))  # bfcsim's first window in packets (initial_window.div_ceil(mss))
HARGS=(-nodes "$HOSTS" -tiers 3 -linkspeed $((LINK_GBPS * 1000)) -hop_latency "$HOP_US" -switch_latency 0
       -mtu "$mtu" -q "$q" -cwnd "$cwnd" -strat "${HTSIM_STRAT:-perm}" -queue_type composite -end "$END_US" -seed "$SEED")
{
    echo "bfcsim: payload $payload B + header $header B = $wire B packets, ACK/PULL $ack B, trimmed header $trim B,"
    echo "        $qpkts-packet data queues, first window $iw_bytes B = $cwnd packets (base RTT $base_rtt ns)"
    echo "htsim:  ${HARGS[*]}"
    echo "        -> $wire B data packets ($mtu B payload + 64), queue limit $((q * mtu)) B = $qpkts packets, first window $cwnd packets"
} > "$OUT/params.txt"
cat "$OUT/params.txt" >&2

if [[ ! -s "$OUT/htsim.fin" || -n "${RERUN:-}" ]]; then
    log "running htsim"
    start=$(date +%s)
    (cd "$OUT" && nice "$HTSIM" -tm htsim.cm "${HARGS[@]}" -o htsim.logfile) > "$OUT/htsim.stdout" 2>&1 \
        || { log "htsim failed (status $?), see $OUT/htsim.stdout"; tail -20 "$OUT/htsim.stdout" >&2; exit 1; }
    echo $(( $(date +%s) - start )) > "$OUT/htsim.wall"
    # NdpSrc::processAck prints `Flow NAME flow_id ID finished at T_US total bytes B` when the last ACK arrives.
    awk '$1 == "Flow" && $3 == "flow_id" && $5 == "finished" && !seen[$4]++ { print $4, $7 }' \
        "$OUT/htsim.stdout" > "$OUT/htsim.fin"
    rm -f "$OUT/htsim.logfile" "$OUT/idmap.txt"
fi

# --- htsim's start of each triggered flow (CM): its trigger fires when the needed-th of the flows activating it
# finishes at its sender (send_done_trigger; htsim prints no receiver's finish, so recv_done_trigger leaves it
# unknown), and htsim starts the flow at once -------------------------------------------------------------------
: > "$OUT/htsim.start"
if [[ -n "${CM:-}" ]]; then
    awk 'FILENAME == ARGV[1] { fin[$1] = $2 * 1000; next }
         $1 ~ /->/ { n++; for (i = 2; i < NF; i++) {
                         if ($i == "trigger") waits[n] = $(i + 1)
                         if ($i == "send_done_trigger") acts[$(i + 1)] = acts[$(i + 1)] " " n
                         if ($i == "recv_done_trigger") unknown[$(i + 1)] = 1 } }
         $1 == "trigger" { for (i = 2; i <= NF; i++) { if ($i == "id") id = $(i + 1); if ($i == "count") c = $(i + 1) }
                           need[id] = ($0 ~ /barrier/) ? c : 1 }
         END { for (f in waits) { t = waits[f]; if (unknown[t]) continue
                   m = split(acts[t], a, " "); k = 0
                   for (i = 1; i <= m; i++) if (a[i] in fin) v[++k] = fin[a[i]]
                   if (k < need[t]) continue
                   for (i = 2; i <= k; i++) { x = v[i]; for (j = i - 1; j >= 1 && v[j] > x; j--) v[j + 1] = v[j]; v[j + 1] = x }
                   print f, v[need[t]] } }' "$OUT/htsim.fin" "$OUT/htsim.cm" > "$OUT/htsim.start"
fi

# --- join: id size fct_htsim_ns fct_bfcsim_ns ("-" = unfinished) -------------------------------------------
awk -F'[ ,]' '
    FILENAME == ARGV[1] { src[$1] = $2; dst[$1] = $3; size[$1] = $4; start[$1] = $5; trig[$1] = $6 + 0
                          hid[$1] = (NF >= 7) ? $7 : $1; n++; next }
    FILENAME == ARGV[2] { hfin[$1] = $2; next }
    FILENAME == ARGV[3] { hstart[$1] = $2; next }
    FNR > 1 {                                   # bfcsim fct.csv: ids are 0-based in the trace order
        id = $1 + 1
        if (!(id in size) || $2 != src[id] || $3 != dst[id] || $4 != size[id] || !trig[id] && $5 + 0 != start[id] + 0) {
            print "ndp-xval: fct.csv row " FNR " does not match trace flow " id > "/dev/stderr"; bad = 1; exit 1
        }
        bfct[id] = ($7 == "") ? "-" : $7
        bstart[id] = $5; bfin[id] = ($6 == "") ? "-" : $6
    }
    END {
        if (bad) exit 1
        # A triggered flow'"'"'s FCT counts from when its trigger fired ("-" where that is unknown).
        for (id = 1; id <= n; id++) {
            s0 = trig[id] ? ((hid[id] in hstart) ? hstart[hid[id]] : "-") : start[id]
            h = (hid[id] in hfin && s0 != "-") ? sprintf("%.3f", hfin[hid[id]] * 1000 - s0) : "-"
            b = (id in bfct) ? bfct[id] : "-"
            hf = (hid[id] in hfin) ? sprintf("%.3f", hfin[hid[id]] * 1000) : "-"
            print id, src[id], dst[id], size[id], h, b, start[id], hf, (id in bfin) ? bfin[id] : "-"
        }
    }' "$OUT/trace.txt" "$OUT/htsim.fin" "$OUT/htsim.start" "$OUT/bfcsim/fct.csv" > "$OUT/joined.txt"

# --- table --------------------------------------------------------------------------------------------------
table() {
awk -v hw="$(cat "$OUT/htsim.wall" 2>/dev/null || echo '?')" -v bw="$(cat "$OUT/bfcsim.wall" 2>/dev/null || echo '?')" '
function bucket(s) { return s < 10000 ? 1 : s < 100000 ? 2 : s < 1000000 ? 3 : 4 }
function pct(arr, m, p,   k) { if (m == 0) return "-"; k = int(p * m); if (k < p * m) k++; if (k < 1) k = 1; return arr[k] }
function isort(arr, m,   i, t) {               # heap sort (no asort in mawk)
    for (i = int(m / 2); i >= 1; i--) sift(arr, i, m)
    for (i = m; i > 1; i--) { t = arr[1]; arr[1] = arr[i]; arr[i] = t; sift(arr, 1, i - 1) }
}
function sift(arr, i, m,   c, t) {
    while ((c = 2 * i) <= m) { if (c < m && arr[c + 1] > arr[c]) c++; if (arr[i] >= arr[c]) return
        t = arr[i]; arr[i] = arr[c]; arr[c] = t; i = c }
}
function us(x) { return x == "-" ? "-" : sprintf("%.1f", x / 1000) }
function ratio(a, b) { return (a == "-" || b == "-" || a == 0) ? "-" : sprintf("%.2f", b / a) }
BEGIN { name[1] = "<10KB"; name[2] = "10-100KB"; name[3] = "100KB-1MB"; name[4] = ">1MB"; name[5] = "all" }
{
    add(bucket($4)); add(5)
}
function add(k) {
    nb[k]++
    if ($5 != "-") H[k, ++nh[k]] = $5 + 0; else uh[k]++
    if ($6 != "-") B[k, ++nbf[k]] = $6 + 0; else ub[k]++
    if ($5 != "-" && $6 != "-") R[k, ++nr[k]] = ($6 + 0) / ($5 + 0)
}
END {
    printf "%-10s %6s %6s %6s | %10s %10s | %10s %10s | %9s %9s | %9s\n", "size", "flows", "unf.h", "unf.b",
        "htsim p50", "bfcsim p50", "htsim p99", "bfcsim p99", "p50 b/h", "p99 b/h", "flow b/h"
    for (k = 1; k <= 5; k++) {
        m = nh[k] + 0; for (i = 1; i <= m; i++) a[i] = H[k, i]; isort(a, m); h50 = pct(a, m, .5); h99 = pct(a, m, .99)
        m = nbf[k] + 0; for (i = 1; i <= m; i++) a[i] = B[k, i]; isort(a, m); b50 = pct(a, m, .5); b99 = pct(a, m, .99)
        m = nr[k] + 0; for (i = 1; i <= m; i++) a[i] = R[k, i]; isort(a, m); r50 = pct(a, m, .5)
        printf "%-10s %6d %6d %6d | %10s %10s | %10s %10s | %9s %9s | %9s\n", name[k], nb[k], uh[k], ub[k],
            us(h50), us(b50), us(h99), us(b99), ratio(h50, b50), ratio(h99, b99), (r50 == "-" ? "-" : sprintf("%.2f", r50))
    }
    print "FCTs in us (sender gets the last ACK, both simulators); unf.h/unf.b: flows htsim/bfcsim left unfinished"
    print "(percentiles over each simulator'"'"'s finished flows, nearest rank); flow b/h: median over flows of bfcsim FCT / htsim FCT"
    printf "wall time: htsim %s s, bfcsim %s s\n", hw, bw
}' "$OUT/joined.txt"
}
table | tee "$OUT/table.txt"
# --- collectives (CM): flows grouped by the hosts they connect, each group's completion time ------------------
if [[ -n "${CM:-}" ]]; then
awk '
function find(x) { while (parent[x] != x) x = parent[x] = parent[parent[x]]; return x }
function join(a, b) { a = find(a); b = find(b); if (a != b) parent[a] = b }
{ for (i = 2; i <= 3; i++) if (!($i in parent)) parent[$i] = $i; join($2, $3); row[NR] = $0 }
END {
    for (r = 1; r <= NR; r++) {
        split(row[r], f, " "); g = find(f[2])
        if (!(g in first)) { first[g] = f[7]; order[++groups] = g }
        if (f[7] + 0 < first[g] + 0) first[g] = f[7]
        flows[g]++; hosts[g] = hosts[g] " " f[2]
        if (f[8] == "-") hu[g]++; else if (f[8] + 0 > hl[g] + 0) hl[g] = f[8]
        if (f[9] == "-") bu[g]++; else if (f[9] + 0 > bl[g] + 0) bl[g] = f[9]
    }
    printf "%-6s %6s %6s | %12s %12s | %7s\n", "group", "flows", "hosts", "htsim CCT", "bfcsim CCT", "b/h"
    for (k = 1; k <= groups; k++) {
        g = order[k]; nh = split(hosts[g], hs, " "); delete seen; m = 0
        for (i = 1; i <= nh; i++) if (!(hs[i] in seen)) { seen[hs[i]] = 1; m++ }
        h = hu[g] ? "-" : (hl[g] - first[g]) / 1000; b = bu[g] ? "-" : (bl[g] - first[g]) / 1000
        printf "%-6d %6d %6d | %12s %12s | %7s\n", k, flows[g], m, (h == "-") ? h : sprintf("%.2f", h),
            (b == "-") ? b : sprintf("%.2f", b), (h == "-" || b == "-") ? "-" : sprintf("%.3f", b / h)
    }
    print "CCT in us: the group'"'"'s first start to its last flow'"'"'s finish (sender gets the last ACK); - : unfinished"
}' "$OUT/joined.txt" | tee -a "$OUT/table.txt"
fi
{
    # htsim prints `Total RTOs: N` at every retransmission timeout (NdpSrc::retransmit_packet)
    echo "htsim:  $(grep -E '^New: ' "$OUT/htsim.stdout" || true), RTO retransmissions: $(grep -c '^Total RTOs' "$OUT/htsim.stdout" || true)"
    grep -E '^NDP:|^drops:' "$OUT/bfcsim.stdout" | sed 's/^/bfcsim: /'
    echo "bfcsim: $(grep -E '"(retransmitted_packets|trimmed_packets|timeouts|dropped_packets|unfinished)"' "$OUT/bfcsim/run.json" | tr -d ' \n')"
} | tee -a "$OUT/table.txt"
