#!/usr/bin/env bash
# Runs the Ultra Ethernet Consortium's htsim (ultraethernet/uet-htsim: htsim_uec, or htsim_eqds) on one of
# data/reference/uet-k8's traces as that directory's reference outputs were made, and converts its output
# into HPCC's fct.txt format (scripts/xval/uet-htsim-fct.py), which `bfcsim run --compare` reads. This
# repository ships no htsim code and no recipe to build it: this script only runs a built binary.
#
#   UET_HTSIM=~/peers/uet-htsim/bin/htsim_uec TRACE=perm VARIANT=nscc-reps OUT=/tmp/uet \
#       scripts/xval/uet-htsim-run.sh
#
# The fabric is htsim's k = 8 fat tree (-nodes 128 -tiers 3), 100 Gb/s, 1 us per link, no switch latency,
# every other option at htsim_uec's default (4150 B packets, trimming at one BDP of queue, ECN over 20-80% of
# it, 64 entropies). The trace's flow.txt becomes the connection matrix htsim reads (`src->dst id N start T
# size S`, T in whole microseconds, which is how htsim_uec schedules a matrix's starts).
#
# Environment:
#   UET_HTSIM   (required) the htsim_uec binary, or htsim_eqds for VARIANT=eqds
#   TRACE       perm | incast64 | websearch (a directory of data/reference/uet-k8), or TRACE_DIR=DIR
#   VARIANT     nscc-reps (default) | nscc-oblivious | rccc-reps | nscc-rccc-reps | eqds
#   END_US      htsim -end (default: 50,000 us after the last start)
#   OUT         (required) output directory: htsim.cm, cmdline.txt, stdout.txt.gz, uet-htsim-VARIANT.fct.txt
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
: "${UET_HTSIM:?set UET_HTSIM to a built htsim_uec (or htsim_eqds) binary}"
: "${OUT:?set OUT to an output directory}"
[[ -x $UET_HTSIM ]] || { echo "uet-htsim-run: $UET_HTSIM is not an executable" >&2; exit 1; }
TRACE_DIR=${TRACE_DIR:-$ROOT/data/reference/uet-k8/${TRACE:?set TRACE or TRACE_DIR}}
VARIANT=${VARIANT:-nscc-reps}
case $VARIANT in
    nscc-reps) ARGS=(-sender_cc_only -sender_cc_algo nscc -load_balancing_algo reps) ;;
    nscc-oblivious) ARGS=(-sender_cc_only -sender_cc_algo nscc -load_balancing_algo oblivious) ;;
    rccc-reps) ARGS=(-receiver_cc_only -load_balancing_algo reps) ;;
    nscc-rccc-reps) ARGS=(-sender_cc_algo nscc -receiver_cc -load_balancing_algo reps) ;;
    eqds) ARGS=() ;;
    *) echo "uet-htsim-run: unknown VARIANT $VARIANT" >&2; exit 1 ;;
esac
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
# flow.txt (a count, then `id src dst pg dport size start_s`) to a connection matrix with whole-us starts.
awk 'NR == 1 { n = $1; next }
     { c[NR] = sprintf("%d->%d id %d start %d size %d", $2, $3, $1, int($7 * 1e6 + 0.5), $6)
       if ($7 * 1e6 > last) last = $7 * 1e6 }
     END { print "Nodes 128"; print "Connections " n; for (i = 2; i <= NR; i++) print c[i]
           printf "%d\n", last > "/dev/stderr" }' "$TRACE_DIR/flow.txt" > "$OUT/htsim.cm" 2> "$OUT/last-start-us.txt"
END_US=${END_US:-$(( $(cat "$OUT/last-start-us.txt") + 50000 ))}
CMD=("$UET_HTSIM" -tm "$OUT/htsim.cm" -nodes 128 -tiers 3 -linkspeed 100000 -hop_latency 1 -end "$END_US"
     "${ARGS[@]}" -o "$OUT/logout.dat")
echo "${CMD[*]}" > "$OUT/cmdline.txt"
(cd "$OUT" && "${CMD[@]}") 2>&1 | gzip > "$OUT/stdout.txt.gz"
rm -f "$OUT/logout.dat"
python3 "$HERE/uet-htsim-fct.py" "$OUT/stdout.txt.gz" --cm "$OUT/htsim.cm" --out /dev/null \
    --hpcc "$OUT/uet-htsim-$VARIANT.fct.txt"
echo "uet-htsim-run: $OUT/uet-htsim-$VARIANT.fct.txt" >&2
