#!/usr/bin/env bash
# Runs the BFC authors' ns-3 artifact (prateshg/BFC_NS3_NSDI2022, ns3-backpressure, scratch/nsdifinal.cc) in its
# Fig. 9 or Fig. 10 setup for a given duration of flow arrivals, and converts its output into HPCC ns-3 formats
# (artifact2hpcc.py next to this script): the exact flows it generated (flow.txt), its CLOS-128 (topology.txt)
# and its per-flow FCTs (fct.txt). This repository ships no artifact code and no recipe to build it: this script
# only runs an already built checkout.
#
#   ARTIFACT_DIR=~/peers/bfc FIG=9 DURATION_MS=5 OUT=/tmp/bfc-fig9-5ms scripts/xval/bfc-artifact-run.sh
#
# The setup is the driver's, with the paper's values (§6.2): CLOS-128 (8 ToRs x 16 hosts, 8 spines, 100 Gb/s,
# 1 us links, hard-coded in the driver), Google all-RPC sizes (mix/W3.txt), lognormal arrivals (sigma 2,
# POISSON_DISTRIBUTION 0), UTILIZATION_FACTOR 0.60 of the 64 ToR-spine links; FIG=9 adds the 100-to-1 incasts of
# 200 x 1000 B flows (CREATE_INCAST 1, 5% of the 0.60, one incast per 500 us); FIG=10 has none. Flows arrive from
# 1.0 s for DURATION_MS (the paper's runs: 50 ms, APP_STOP_TIME 1.05); the simulation goes on for DRAIN_MS more.
# The driver seeds its flow generator with a fixed seed (same flows every run) but ns-3's own RNG (packet
# jitter) with time(NULL), so FCTs differ slightly between runs.
#
# Environment:
#   ARTIFACT_DIR    (required) a built BFC_NS3_NSDI2022 checkout (or its ns3-backpressure folder), built with
#                   waf's optimized profile; the run's working directory (the driver reads mix/W3.txt from it)
#   NS3_BIN         the driver binary (default ARTIFACT_DIR/ns3-backpressure/build/scratch/nsdifinal)
#   FIG=9|10        9: incast (default); 10: no incast
#   DURATION_MS     arrivals window (default 5)
#   DRAIN_MS        simulated time after the last arrival (default 50)
#   UTILIZATION     UTILIZATION_FACTOR (default 0.60)
#   OUT             (required) output directory; gets config.txt, artifact.log.gz (the driver's stdout),
#                   stderr.txt, time.txt (/usr/bin/time -v), flow.txt, topology.txt, fct.txt, flows.tsv,
#                   convert.json, slowdown.txt
#   NICE            nice level (default 10)
#   KEEP_LOG=1      keep artifact.log uncompressed
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
: "${ARTIFACT_DIR:?set ARTIFACT_DIR to a built BFC_NS3_NSDI2022 checkout}"
: "${OUT:?set OUT to an output directory}"
A=$ARTIFACT_DIR
[[ -d $A/ns3-backpressure ]] && A=$A/ns3-backpressure
A=$(cd "$A" && pwd)
BIN=${NS3_BIN:-$A/build/scratch/nsdifinal}
[[ -x $BIN ]] || { echo "bfc-artifact-run: no driver binary at $BIN (build the artifact first)" >&2; exit 1; }
FIG=${FIG:-9}
DURATION_MS=${DURATION_MS:-5}
DRAIN_MS=${DRAIN_MS:-50}
UTILIZATION=${UTILIZATION:-0.60}
NICE=${NICE:-10}
case $FIG in 9) INCAST=1 ;; 10) INCAST=0 ;; *) echo "FIG must be 9 or 10" >&2; exit 1 ;; esac
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
read -r STOP END <<<"$(python3 -c "print('%.6f %.6f' % (1.0 + $DURATION_MS / 1000.0, 1.0 + ($DURATION_MS + $DRAIN_MS) / 1000.0))")"
cat >"$OUT/config.txt" <<EOF
POISSON_DISTRIBUTION 0

CREATE_INCAST $INCAST
NUMBER_OF_INCAST_SOURCES 100
FLOW_SIZE_IN_INCAST 200

DATA_RATE 100Gbps
LINK_DELAY 0.001ms
UTILIZATION_FACTOR $UTILIZATION

APP_START_TIME 1.0
APP_STOP_TIME $STOP
SIMULATOR_STOP_TIME $END

WORKLOAD W3

QCOUNT 36

ENABLE_BUFFER_STATS 1
EOF
echo "bfc-artifact-run: $BIN $OUT/config.txt (cwd $A) -> $OUT" >&2
rm -f "$OUT/artifact.log" "$OUT/artifact.log.gz"
(cd "$A" && LD_LIBRARY_PATH=$A/build${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} \
    nice -n "$NICE" /usr/bin/time -v -o "$OUT/time.txt" "$BIN" "$OUT/config.txt" \
    >"$OUT/artifact.log" 2>"$OUT/stderr.txt") || echo "bfc-artifact-run: driver exited $?" >&2
nice -n "$NICE" python3 "$HERE/artifact2hpcc.py" "$OUT/artifact.log" "$OUT"
python3 "$HERE/slowdown.py" "$OUT/fct.txt" >"$OUT/slowdown.txt"
if [[ -z ${KEEP_LOG:-} ]]; then nice -n "$NICE" gzip -f "$OUT/artifact.log"; fi
cat "$OUT/slowdown.txt"
