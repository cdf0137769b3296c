#!/usr/bin/env bash
# Runs the PowerTCP authors' ns-3 model (inet-tub/ns3-datacenter, simulator/ns-3.35, the program
# examples/PowerTCP/powertcp-evaluation-burst.cc, which reads an HPCC-style topology.txt and flow.txt) with
# PowerTCP (INT) or theta-PowerTCP on a given trace, over PFC as the repository's runs use it, writing the exact
# config it used next to its outputs. This repository ships no ns-3 code and no recipe to build it: this script
# only runs an already built binary.
#
#   POWERTCP_NS3_BIN=/path/to/powertcp-evaluation-burst IN=/path/to/trace-dir SCHEME=powertcp \
#       OUT=/path/to/out scripts/xval/powertcp-ns3-run.sh
#
# Schemes (the flags the repository's script-burst.sh / script-workload.sh pass: --algorithm=3 is CC_MODE 3, the
# HPCC/INT code path; --windowCheck=1 turns HAS_WIN and VAR_WIN on):
#   powertcp   --wien=true --delayWien=false: PowerTCP with INT (RdmaHw::UpdateRatePower, switches push
#              rx bytes, queue length, rate and time per hop)
#   theta      --wien=true --delayWien=true: theta-PowerTCP (RTT-gradient power, no INT needed)
# Config: the repository's examples/PowerTCP/config-burst.txt values (the workload script uses the same file):
# 1000 B payload, an ACK per packet, ECN on with Kmin/Kmax/Pmax 400 KB/1600 KB/0.2 at 100 Gb/s, U_TARGET 0.95,
# MIN_RATE 100 Mb/s, FAST_REACT 1, MULTI_RATE 0, INT_MULTI 1, RATE_BOUND 1, ACK_HIGH_PRIO 0, BUFFER_SIZE 4 (MiB
# per switch), L2_CHUNK_SIZE 4000, PFC pause time 5 (driver default); only the input/output paths and the stop
# time differ. The driver sets per switch: DT ingress alpha 1/8 (PFC thresholds), egress alpha 65535, headroom
# 3 x rate x link delay per port and queue, ingress pool = buffer - total headroom.
#
# Environment:
#   POWERTCP_NS3_BIN  (required) the built powertcp-evaluation-burst program; its shared libraries are taken from
#                 NS3_LIB (default: the lib/ directory of the ns-3 build/ the binary lives under)
#   IN            (required) directory with topology.txt (fattree-topology.sh: 4-number header, hosts first) and
#                 flow.txt (gen-trace.sh's `id src dst pg dport size start_s`, or HPCC's 6-column
#                 `src dst pg dport size start_s`; the 7-column form is converted to the 6-column one)
#   SCHEME        powertcp | theta (default powertcp)
#   OUT           (required) output directory; gets config.txt, flow-ns3.txt, cmdline.txt, stdout.txt (filtered:
#                 per-port lines dropped, see STDOUT_ALL), stderr.txt, time.txt (/usr/bin/time -v), wall.txt,
#                 fct-ns3.txt (the driver's own HPCC fct.txt), fct.txt (the same lines sorted by start, src),
#                 pfc.txt (empty: the driver does not connect the PFC trace), counts.txt, summary.txt
#   BUFFER_MB     BUFFER_SIZE (default 4, config-burst.txt's)
#   STOP_TIME     SIMULATOR_STOP_TIME in seconds (default: the last flow's start + DRAIN_MS)
#   DRAIN_MS      (default 50)
#   STDOUT_ALL=1  keep every stdout line (the driver prints each ToR 0 port's counters every 1.5 x min RTT)
#   NICE          nice level (default 10); RERUN=1 runs again even if OUT/fct-ns3.txt exists
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
: "${POWERTCP_NS3_BIN:?set POWERTCP_NS3_BIN to a built powertcp-evaluation-burst (see the header)}"
: "${IN:?set IN to a trace directory}"
: "${OUT:?set OUT to an output directory}"
[[ -x $POWERTCP_NS3_BIN ]] || { echo "powertcp-ns3-run: no binary at $POWERTCP_NS3_BIN" >&2; exit 1; }
BIN=$(cd "$(dirname "$POWERTCP_NS3_BIN")" && pwd)/$(basename "$POWERTCP_NS3_BIN")
if [[ -z ${NS3_LIB:-} ]]; then
    d=$(dirname "$BIN"); while [[ $d != / && ! -d $d/lib ]]; do d=$(dirname "$d"); done
    NS3_LIB=$d/lib
fi
IN=$(cd "$IN" && pwd)
mkdir -p "$OUT"; OUT=$(cd "$OUT" && pwd)
SCHEME=${SCHEME:-powertcp}
BUFFER_MB=${BUFFER_MB:-4}
DRAIN_MS=${DRAIN_MS:-50}
NICE=${NICE:-10}
case $SCHEME in
    powertcp) FLAGS=(--algorithm=3 --wien=true --delayWien=false --windowCheck=1) ;;
    theta)    FLAGS=(--algorithm=3 --wien=true --delayWien=true --windowCheck=1) ;;
    *) echo "powertcp-ns3-run: SCHEME must be powertcp or theta" >&2; exit 1 ;;
esac

# flow file: HPCC's `src dst pg dport size start_s` (drop gen-trace.sh's leading id column)
awk 'NR == 1 { print; next } NF == 7 { print $2, $3, $4, $5, $6, $7; next } NF == 6 { print; next }
     { print "powertcp-ns3-run: bad flow line " NR > "/dev/stderr"; exit 1 }' "$IN/flow.txt" > "$OUT/flow-ns3.txt"
if [[ -z ${STOP_TIME:-} ]]; then
    STOP_TIME=$(tail -n 1 "$OUT/flow-ns3.txt" | awk -v d="$DRAIN_MS" '{ printf "%.6f", $6 + d / 1000.0 }')
fi

cat > "$OUT/config.txt" <<EOF
ENABLE_QCN 1
USE_DYNAMIC_PFC_THRESHOLD 1

PACKET_PAYLOAD_SIZE 1000

TOPOLOGY_FILE $IN/topology.txt
FLOW_FILE $OUT/flow-ns3.txt
TRACE_FILE $OUT/trace-unused.txt
TRACE_OUTPUT_FILE $OUT/mix.tr
FCT_OUTPUT_FILE $OUT/fct-ns3.txt
PFC_OUTPUT_FILE $OUT/pfc.txt

SIMULATOR_STOP_TIME $STOP_TIME

CC_MODE 3
ALPHA_RESUME_INTERVAL 1
RATE_DECREASE_INTERVAL 4
CLAMP_TARGET_RATE 0
RP_TIMER 900
EWMA_GAIN 0.00390625
FAST_RECOVERY_TIMES 1
RATE_AI 50Mb/s
RATE_HAI 100Mb/s
MIN_RATE 100Mb/s
DCTCP_RATE_AI 1000Mb/s

ERROR_RATE_PER_LINK 0.0000
L2_CHUNK_SIZE 4000
L2_ACK_INTERVAL 1
L2_BACK_TO_ZERO 0

HAS_WIN 1
GLOBAL_T 1
VAR_WIN 1
FAST_REACT 1
U_TARGET 0.95
MI_THRESH 5
INT_MULTI 1
MULTI_RATE 0
SAMPLE_FEEDBACK 0
PINT_LOG_BASE 1.05
PINT_PROB 1.0

RATE_BOUND 1

ACK_HIGH_PRIO 0

LINK_DOWN 0 0 0

ENABLE_TRACE 1

KMAX_MAP 3 25000000000 400 50000000000 800 100000000000 1600
KMIN_MAP 3 25000000000 100 50000000000 200 100000000000 400
PMAX_MAP 3 25000000000 0.2 50000000000 0.2 100000000000 0.2
BUFFER_SIZE $BUFFER_MB
QLEN_MON_FILE $OUT/qlen.txt
QLEN_MON_START 2000000000
QLEN_MON_END 2010000000
EOF
: > "$OUT/trace-unused.txt"
echo "$BIN --conf=$OUT/config.txt ${FLAGS[*]}" > "$OUT/cmdline.txt"

if [[ ! -s $OUT/fct-ns3.txt || -n ${RERUN:-} ]]; then
    echo "powertcp-ns3-run: $SCHEME on $IN ($(head -1 "$OUT/flow-ns3.txt") flows, stop $STOP_TIME s) -> $OUT" >&2
    t0=$(date +%s.%N)
    filter() { if [[ -n ${STDOUT_ALL:-} ]]; then cat; else grep -v -E '^(ToR|Src) [0-9]+ '; fi; }
    (cd "$OUT" && LD_LIBRARY_PATH=$NS3_LIB${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} \
        /usr/bin/time -v -o "$OUT/time.txt" nice -n "$NICE" "$BIN" --conf="$OUT/config.txt" "${FLAGS[@]}") \
        2> "$OUT/stderr.txt" | filter > "$OUT/stdout.txt" \
        || { echo "powertcp-ns3-run: ns-3 failed, see $OUT/stderr.txt" >&2; tail -5 "$OUT/stderr.txt" >&2; exit 1; }
    awk -v t0="$t0" -v t1="$(date +%s.%N)" 'BEGIN { printf "%.2f\n", t1 - t0 }' > "$OUT/wall.txt"
fi
sort -k6,6n -k1,1 -k2,2 "$OUT/fct-ns3.txt" > "$OUT/fct.txt"

{
    echo "flows $(head -1 "$OUT/flow-ns3.txt") finished $(wc -l < "$OUT/fct.txt")"
    echo "wall seconds $(cat "$OUT/wall.txt" 2>/dev/null || echo '?'), peak RSS kB $(awk -F': ' '/Maximum resident/ { print $2 }' "$OUT/time.txt" 2>/dev/null)"
    grep -E '^maxRtt=' "$OUT/stdout.txt" || true
} > "$OUT/counts.txt"
if [[ -f $IN/trace.txt ]]; then
    inc=(); [[ -s $IN/incast.txt ]] && inc=(--incast "$IN/incast.txt")
    python3 "$HERE/fct-summary.py" "$OUT/fct.txt" "$IN/trace.txt" "${inc[@]}" --json "$OUT/summary.json" > "$OUT/summary.txt"
    cat "$OUT/counts.txt" "$OUT/summary.txt" >&2
else
    cat "$OUT/counts.txt" >&2
fi
