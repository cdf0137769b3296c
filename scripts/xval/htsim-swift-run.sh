#!/usr/bin/env bash
# Runs an already built htsim Swift main (Broadcom/csg-htsim, sim/datacenter, FatTreeTopology + SwiftSrc/SwiftSink
# of sim/swift.cpp) on a gen-trace.sh trace (htsim.cm, trace.txt) and converts its per-flow finish lines to an
# HPCC-format fct.txt that `bfcsim compare` reads. This repository ships no htsim code and no recipe to build it.
#
#   HTSIM_SWIFT=/path/to/htsim_swift_tm IN=/path/to/trace-dir OUT=/path/to/out scripts/xval/htsim-swift-run.sh
#
# The binary must take a connection matrix's per-flow `size` and `start` (picoseconds) and these options, besides
# main_swift.cpp's own (-tm -nodes -linkspeed -q -mtu -cwnd -end -o): -hop_latency US, -switch_latency US,
# -queue_type random|composite|ecn, -payload BYTES (a flow of S bytes becomes ceil(S / BYTES) packets of -mtu
# bytes) and -nolog; and print `Flow swift_<ID> finished at <T_US> total bytes <B>` (SwiftSrc::update_dsn_ack)
# with ID the connection matrix's flow id. The stock htsim_swift of commit 841d9e7 ignores the matrix's sizes and
# reads its picosecond starts as microseconds, so it cannot run a trace as is.
#
# Environment:
#   HTSIM_SWIFT   (required) the Swift binary described above
#   IN            (required) trace directory with htsim.cm and trace.txt (gen-trace.sh, add-incast.py)
#   OUT           (required) output directory; gets cmdline.txt, stdout.txt (finish lines and the RTO /
#                 retransmission lines htsim prints), stderr.txt, time.txt (/usr/bin/time -v), wall.txt,
#                 fin.txt (`id finish_us`), fct.txt (HPCC format: `%08x %08x %u %u %lu %lu %lu %lu` = sip dip
#                 sport dport size start_ns fct_ns standalone_ns, ip = 0x0b000001 + (node << 8), sport 10000 +
#                 the pair's flow count, dport 100, size and start from trace.txt, standalone as HPCC's qp_finish
#                 computes it, see HPCC_HEADER), joined.txt (`id src dst size start_ns fct_ns`, `-` unfinished),
#                 counts.txt, summary.txt (fct-summary.py)
#   MTU=1048      htsim -mtu: bytes of every data packet on the wire (htsim adds no header; ACKs are 40 B)
#   PAYLOAD=1000  -payload: bytes of flow data per packet (so a flow has as many packets as in bfcsim)
#   QUEUE_PKTS=1000  htsim -q: every switch port's queue limit, in MTU-byte packets (main_swift.cpp default 8)
#   QUEUE_TYPE=random  -queue_type (main_swift.cpp uses RANDOM: RandomQueue, tail drop plus 10% random drop of
#                 arrivals within 3 packets of the limit)
#   CWND=157      htsim -cwnd: first window in packets (main_swift.cpp default 15); 157 = bfcsim's first window
#                 of 156672 B over 1000 B payloads, rounded up
#   LINK_MBPS=100000  -linkspeed; HOP_US=1 -hop_latency; SWITCH_US=0 -switch_latency
#   END_US        -end (default: the last flow's start + DRAIN_US); DRAIN_US=100000
#   NODES=128     -nodes (k = 8 fat tree)
#   HPCC_HEADER=48 HOSTS_PER_TOR=4 HOSTS_PER_POD=16  the standalone column: HPCC's per-packet header without
#                 INT (14 + 20 + 8 + 2 + 4 B) and the fat tree's racks and pods (2, 4 or 6 links between two hosts)
#   NOLOG=1       pass -nolog (no logout.dat sink sampling; the simulation is unchanged)
#   NICE=10       nice level; RERUN=1 runs again even if OUT/fin.txt exists
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
: "${HTSIM_SWIFT:?set HTSIM_SWIFT to an htsim Swift binary (see the header)}"
: "${IN:?set IN to a trace directory}"
: "${OUT:?set OUT to an output directory}"
[[ -x $HTSIM_SWIFT ]] || { echo "htsim-swift-run: no binary at $HTSIM_SWIFT" >&2; exit 1; }
IN=$(cd "$IN" && pwd)
mkdir -p "$OUT"; OUT=$(cd "$OUT" && pwd)
MTU=${MTU:-1048}; PAYLOAD=${PAYLOAD:-1000}; QUEUE_PKTS=${QUEUE_PKTS:-1000}; QUEUE_TYPE=${QUEUE_TYPE:-random}
CWND=${CWND:-157}; LINK_MBPS=${LINK_MBPS:-100000}; HOP_US=${HOP_US:-1}; SWITCH_US=${SWITCH_US:-0}
DRAIN_US=${DRAIN_US:-100000}; NODES=${NODES:-128}; NICE=${NICE:-10}
HPCC_HEADER=${HPCC_HEADER:-48}; HOSTS_PER_TOR=${HOSTS_PER_TOR:-4}; HOSTS_PER_POD=${HOSTS_PER_POD:-16}
if [[ -z ${END_US:-} ]]; then
    END_US=$(awk -v d="$DRAIN_US" '{ if ($5 > m) m = $5 } END { printf "%d", m / 1000 + d }' "$IN/trace.txt")
fi
ARGS=(-tm "$IN/htsim.cm" -nodes "$NODES" -linkspeed "$LINK_MBPS" -hop_latency "$HOP_US" -switch_latency "$SWITCH_US"
      -queue_type "$QUEUE_TYPE" -q "$QUEUE_PKTS" -mtu "$MTU" -payload "$PAYLOAD" -cwnd "$CWND" -end "$END_US"
      -o "$OUT/logout.dat")
[[ ${NOLOG:-1} == 1 ]] && ARGS+=(-nolog)
echo "$HTSIM_SWIFT ${ARGS[*]}" > "$OUT/cmdline.txt"

if [[ ! -s $OUT/fin.txt || -n ${RERUN:-} ]]; then
    echo "htsim-swift-run: $(wc -l < "$IN/trace.txt") flows from $IN -> $OUT" >&2
    t0=$(date +%s.%N)
    (cd "$OUT" && /usr/bin/time -v -o "$OUT/time.txt" nice -n "$NICE" "$HTSIM_SWIFT" "${ARGS[@]}") \
        > "$OUT/stdout.txt" 2> "$OUT/stderr.txt" \
        || { echo "htsim-swift-run: htsim failed (status $?), see $OUT/stderr.txt" >&2; tail -5 "$OUT/stderr.txt" >&2; exit 1; }
    awk -v t0="$t0" -v t1="$(date +%s.%N)" 'BEGIN { printf "%.2f\n", t1 - t0 }' > "$OUT/wall.txt"
    rm -f "$OUT/logout.dat"
    # `Flow swift_ID finished at T_US total bytes B`, printed at every data ACK at or past the flow's end: keep the first
    awk '$1 == "Flow" && $3 == "finished" && $4 == "at" { id = $2; sub(/^swift_/, "", id); if (!seen[id]++) print id, $5 }' \
        "$OUT/stdout.txt" > "$OUT/fin.txt"
fi

# standalone FCT in HPCC's convention (third.cc / the PowerTCP drivers' qp_finish): pair RTT (2 x links x hop delay
# + links x one payload's serialization) + (size + packets x HPCC_HEADER) x 8 / link rate, integer ns as there
awk -v out="$OUT/joined.txt" -v hop_ns="$(awk -v h="$HOP_US" 'BEGIN { printf "%d", h * 1000 }')" -v mbps="$LINK_MBPS" \
    -v payload="$PAYLOAD" -v hdr="$HPCC_HEADER" -v ptor="$HOSTS_PER_TOR" -v ppod="$HOSTS_PER_POD" '
    FILENAME == ARGV[1] { fin[$1] = $2; next }
    {
        id = $1; s = $2; d = $3; size = $4; start = $5
        pair = s " " d; sport = 10000 + cnt[pair]++
        links = (int(s / ptor) == int(d / ptor)) ? 2 : (int(s / ppod) == int(d / ppod)) ? 4 : 6
        bps = mbps * 1000000
        rtt = 2 * links * hop_ns + links * int(payload * 8000000000 / bps)
        npk = int((size + payload - 1) / payload)
        standalone = rtt + int((size + npk * hdr) * 8000000000 / bps)
        if (id in fin) {
            f = sprintf("%.0f", fin[id] * 1000 - start)
            printf "%08x %08x %u %u %d %d %s %d\n", 184549377 + s * 256, 184549377 + d * 256, sport, 100, size, start, f, standalone
            print id, s, d, size, start, f > out
        } else print id, s, d, size, start, "-" > out
    }' "$OUT/fin.txt" "$IN/trace.txt" > "$OUT/fct.txt"

{
    echo "flows $(wc -l < "$IN/trace.txt") finished $(wc -l < "$OUT/fin.txt") unfinished $(awk '$6 == "-"' "$OUT/joined.txt" | wc -l)"
    echo "retransmit_packet lines (every retransmission) $(grep -c ' retransmit_packet' "$OUT/stdout.txt" || true)"
    echo "RTO firings (rtx_timer_hook) $(grep -c ' RTO .* MDEV ' "$OUT/stdout.txt" || true)"
    echo "spurious retransmits received $(grep -c '^Spurious retransmit' "$OUT/stdout.txt" || true)"
    grep '^xval:' "$OUT/stdout.txt" || true
    grep '^hop_count check' "$OUT/stdout.txt" || true
    echo "wall seconds $(cat "$OUT/wall.txt" 2>/dev/null || echo '?'), peak RSS kB $(awk -F': ' '/Maximum resident/ { print $2 }' "$OUT/time.txt" 2>/dev/null)"
} > "$OUT/counts.txt"
inc=(); [[ -s $IN/incast.txt ]] && inc=(--incast "$IN/incast.txt")
python3 "$HERE/fct-summary.py" "$OUT/fct.txt" "$IN/trace.txt" "${inc[@]}" --json "$OUT/summary.json" > "$OUT/summary.txt"
cat "$OUT/counts.txt" "$OUT/summary.txt" >&2
