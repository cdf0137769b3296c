#!/usr/bin/env bash
# Runs HPCC's ns-3 (alibaba-edu/High-Precision-Congestion-Control, simulation/, scratch/third) on a given HPCC
# flow.txt and topology.txt with one congestion control, writing the exact config it used next to its outputs.
# This repository ships no HPCC ns-3 code and no recipe to build it: this script only runs an already built one.
#
#   HPCC_NS3_DIR=~/peers/hpcc/simulation IN=/tmp/bfc-fig9-5ms SCHEME=hpcc OUT=/tmp/bfc-fig9-5ms-hpcc \
#       scripts/xval/hpcc-ns3-run.sh
#
# Schemes (CC_MODE numbers as rdma-hw.cc of that repository dispatches them; parameters as
# data/reference/ns3-perf-k8/*.config.txt, i.e. the repository's run.py values at 100 Gb/s):
#   hpcc    CC_MODE 3: eta 0.95, AI 50 Mb/s, INT_MULTI 4, window on (VAR_WIN, GLOBAL_T), FAST_REACT 1, ACKs not
#           high priority
#   dcqcn   CC_MODE 1: RED/ECN Kmin 100 KB, Kmax 400 KB, Pmax 0.2 at 100 Gb/s (BFC's values; ns3-perf-k8 used
#           400/1600), alpha gain 1/256, AI 20 Mb/s, HAI 200 Mb/s, RP timer 300 us, alpha resume 1 us, rate
#           decrease 4 us, no window, ACKs high priority
#   dctcp   CC_MODE 8: HPCC ns-3's rate-based DCTCP, g 1/16, K = 300 KB (Kmin = Kmax, Pmax 1), DCTCP AI 615 Mb/s,
#           window on
#   timely  CC_MODE 7: run.py's timely at 100 Gb/s: AI 100 Mb/s, HAI 500 Mb/s, no window, ACKs high priority
#   pint    CC_MODE 10: HPCC-PINT, HPCC's parameters plus PINT_LOG_BASE 1.01, PINT_PROB 1.0
# Common: 1000 B payload, an ACK per packet (L2_ACK_INTERVAL 1), dynamic PFC thresholds, no loss, BUFFER_MB MiB
# of shared buffer per switch (ns-3's BUFFER_SIZE is MiB: 12 -> 12,582,912 B).
#
# Environment:
#   HPCC_NS3_DIR  (required) a built HPCC ns-3 simulation/ directory (waf optimized profile)
#   NS3_BIN       the binary (default HPCC_NS3_DIR/build/scratch/third); its shared libraries are taken from
#                 the binary's ../ (build/)
#   IN            directory with flow.txt and topology.txt (or set FLOW and TOPO to the two files)
#   SCHEME        hpcc | dcqcn | dctcp | timely | pint (default hpcc)
#   OUT           (required) output directory; gets config.txt, trace.txt (empty), stdout.txt, stderr.txt,
#                 time.txt (/usr/bin/time -v), fct.txt (HPCC format: sip dip sport dport size start_ns fct_ns
#                 standalone_fct_ns), pfc.txt, slowdown.txt
#   BUFFER_MB     BUFFER_SIZE (default 12, BFC's CLOS-128 buffer; ns3-perf-k8 used 32)
#   STOP_TIME     SIMULATOR_STOP_TIME in seconds (default: the last flow's start + DRAIN_MS)
#   DRAIN_MS      (default 50)
#   NICE          nice level (default 10)
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
: "${HPCC_NS3_DIR:?set HPCC_NS3_DIR to a built HPCC ns-3 simulation directory}"
: "${OUT:?set OUT to an output directory}"
BIN=${NS3_BIN:-$HPCC_NS3_DIR/build/scratch/third}
[[ -x $BIN ]] || { echo "hpcc-ns3-run: no binary at $BIN (build HPCC ns-3 first)" >&2; exit 1; }
BIN=$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")
LIBDIR=$(cd "$(dirname "$BIN")/.." && pwd)
FLOW=${FLOW:-${IN:?set IN (or FLOW and TOPO)}/flow.txt}
TOPO=${TOPO:-$IN/topology.txt}
FLOW=$(cd "$(dirname "$FLOW")" && pwd)/$(basename "$FLOW")
TOPO=$(cd "$(dirname "$TOPO")" && pwd)/$(basename "$TOPO")
SCHEME=${SCHEME:-hpcc}
BUFFER_MB=${BUFFER_MB:-12}
DRAIN_MS=${DRAIN_MS:-50}
NICE=${NICE:-10}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
if [[ -z ${STOP_TIME:-} ]]; then
    STOP_TIME=$(tail -n 1 "$FLOW" | awk -v d="$DRAIN_MS" '{ printf "%.6f", $6 + d / 1000.0 }')
fi

# per scheme: CC_MODE EWMA_GAIN RATE_AI RATE_HAI DCTCP_RATE_AI HAS_WIN VAR_WIN FAST_REACT INT_MULTI ACK_HIGH_PRIO
#             KMIN KMAX PMAX (KB and probability at 100 Gb/s; x4 at 400 Gb/s)
case $SCHEME in
    hpcc)   set -- 3 0.00390625 50 50 1000 1 1 1 4 0 400 1600 0.20 ;;
    dcqcn)  set -- 1 0.00390625 20 200 1000 0 0 0 1 1 100 400 0.20 ;;
    dctcp)  set -- 8 0.0625 10 10 615 1 1 0 1 0 300 300 1.00 ;;
    timely) set -- 7 0.00390625 100 500 1000 0 0 0 1 1 400 1600 0.20 ;;
    pint)   set -- 10 0.00390625 50 50 1000 1 1 1 4 0 400 1600 0.20 ;;
    *) echo "hpcc-ns3-run: unknown SCHEME $SCHEME (hpcc dcqcn dctcp timely pint)" >&2; exit 1 ;;
esac
echo 0 >"$OUT/trace.txt"
cat >"$OUT/config.txt" <<EOF
ENABLE_QCN 1
USE_DYNAMIC_PFC_THRESHOLD 1

PACKET_PAYLOAD_SIZE 1000

TOPOLOGY_FILE $TOPO
FLOW_FILE $FLOW
TRACE_FILE $OUT/trace.txt
TRACE_OUTPUT_FILE $OUT/mix.tr
FCT_OUTPUT_FILE $OUT/fct.txt
PFC_OUTPUT_FILE $OUT/pfc.txt

SIMULATOR_STOP_TIME $STOP_TIME

CC_MODE $1
ALPHA_RESUME_INTERVAL 1
RATE_DECREASE_INTERVAL 4
CLAMP_TARGET_RATE 0
RP_TIMER 300
EWMA_GAIN $2
FAST_RECOVERY_TIMES 1
RATE_AI ${3}Mb/s
RATE_HAI ${4}Mb/s
MIN_RATE 1000Mb/s
DCTCP_RATE_AI ${5}Mb/s

ERROR_RATE_PER_LINK 0.0000
L2_CHUNK_SIZE 4000
L2_ACK_INTERVAL 1
L2_BACK_TO_ZERO 0

HAS_WIN $6
GLOBAL_T 1
VAR_WIN $7
FAST_REACT $8
U_TARGET 0.95
MI_THRESH 0
INT_MULTI $9
MULTI_RATE 0
SAMPLE_FEEDBACK 0
PINT_LOG_BASE 1.01
PINT_PROB 1.0

RATE_BOUND 1

ACK_HIGH_PRIO ${10}

LINK_DOWN 0 0 0

ENABLE_TRACE 0

KMAX_MAP 2 100000000000 ${12} 400000000000 $((${12} * 4))
KMIN_MAP 2 100000000000 ${11} 400000000000 $((${11} * 4))
PMAX_MAP 2 100000000000 ${13} 400000000000 ${13}
BUFFER_SIZE $BUFFER_MB
QLEN_MON_FILE $OUT/qlen.txt
QLEN_MON_START 9000000000
QLEN_MON_END 9000000000
EOF
echo "hpcc-ns3-run: $SCHEME on $FLOW -> $OUT" >&2
rm -f "$OUT/fct.txt" "$OUT/pfc.txt"
(cd "$OUT" && LD_LIBRARY_PATH=$LIBDIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} \
    nice -n "$NICE" /usr/bin/time -v -o "$OUT/time.txt" "$BIN" "$OUT/config.txt" \
    >"$OUT/stdout.txt" 2>"$OUT/stderr.txt") || echo "hpcc-ns3-run: ns-3 exited $?" >&2
rm -f "$OUT/mix.tr"
python3 "$HERE/slowdown.py" "$OUT/fct.txt" "$FLOW" >"$OUT/slowdown.txt"
cat "$OUT/slowdown.txt"
