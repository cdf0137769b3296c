#!/usr/bin/env bash
# Speed comparison: htsim (Broadcom/csg-htsim, the NDP authors' simulator) against bfcsim on the same k=8 fat tree
# (128 hosts, 100 Gb/s, 1 us per link) and the same seeded web-search trace, for DCTCP and HPCC. Prints, per
# scheme and simulator, the flows finished, the data packets, the wall time of the whole process, bfcsim's own
# event-loop time (run.json's wall_seconds), peak memory and the htsim/bfcsim ratios.
#
#   HTSIM_HPCC=/path/to/csg-htsim/sim/datacenter/htsim_hpcc SCHEMES=hpcc scripts/htsim/speed.sh
#   HTSIM_HPCC=... HTSIM_DCTCP=/path/to/dctcp-driver BFCSIM=target/release/bfcsim DURATION_US=2000 scripts/htsim/speed.sh
#
# Environment (all optional):
#   LOAD=0.3 DURATION_US=2000 SEED=1   trace (gen-trace.sh): load on the host links, arrivals window, seed (trace and
#                      both simulators); 2000 us is 559 flows, 1-1.5 s of bfcsim and 3-4 s (DCTCP) to 15-20 s (HPCC) of
#                      htsim per scheme on a 2-core machine
#   OUT=DIR            run directory (default target/htsim-speed/load<LOAD>-<DURATION_US>us-seed<SEED>)
#   SCHEMES="dctcp hpcc"  the schemes to run (bfcsim presets of these names; htsim mains below)
#   HTSIM_HPCC=PATH    htsim's own htsim_hpcc (sim/datacenter/main_hpcc.cpp), built from csg-htsim's public source;
#                      needed when SCHEMES has hpcc
#   HTSIM_DCTCP=PATH   a binary that runs htsim's DCTCP (sim/dctcp.cpp) on a connection matrix; needed when SCHEMES has
#                      dctcp (see below: csg-htsim ships none)
#   BFCSIM=PATH        bfcsim binary; otherwise `cargo build --release -p bfcsim` in the repository (about 3 minutes)
#   END_US             htsim -end and bfcsim run.max_time (default DURATION_US + 1000000: htsim's TCP has a 250 ms
#                      minimum RTO). htsim always simulates up to -end, bfcsim stops when the last flow finishes; the
#                      idle tail costs htsim only its timer ticks
#   REPEAT=1           run each simulator REPEAT times and keep the fastest (wall times on a busy machine are noisy)
#   MAX_FAILS=3        runs of a simulator that may crash before it is reported as failed (htsim_hpcc, see below)
#
# htsim: csg-htsim commit 841d9e7be46bb968eece766aa4b6c044c7799f67 (2026-03-23, "Revised connection_matrix.h/cpp"),
# the commit docs/FIDELITY.md's NDP comparison used, built with its own Makefiles as upstream ships them.
#   HPCC: htsim's own htsim_hpcc, flags read from its argument parser.
#   DCTCP: csg-htsim has DCTCP (sim/dctcp.cpp) but no main that runs it on a connection matrix (its DCTCP mains in
#     sim/datacenter/old_tests/ run permutations of infinite flows). HTSIM_DCTCP is such a main of your own: it takes
#     htsim_hpcc's -tm -nodes -linkspeed -hop_latency -switch_latency -end -seed -mtu -o, and -q (packets per port),
#     -ecn_k (bytes) and -cwnd (packets), and its last line reads "Done at T us: F of N flows finished, data packets
#     sent P, fast retransmits R". BENCHMARKS.md's DCTCP row was measured with one.
# Parameters are matched where htsim has a knob (from bfcsim's resolved config in run.json), but the simulators'
# models differ, so this compares SPEED, not results:
#   - buffers: bfcsim switches share a 12 MB buffer per switch with dynamic thresholds (alpha 1: one busy port may
#     take half of it); htsim has a fixed queue per port. DCTCP: -q = buffer / 8 ports (1.5 MB), tail drop.
#     HPCC: htsim's lossless output queues are sized to the whole buffer and PFC pauses an input at a fixed
#     threshold (-pfc_thresholds), set to bfcsim's threshold on an empty buffer (pause_fraction x buffer, resume
#     resume_offset below it); bfcsim's threshold shrinks as the buffer fills.
#   - ECN (DCTCP): bfcsim marks on dequeue with RED between kmin and kmax (100/400 KB, pmax 0.2); htsim's ECN_PRIO
#     queues mark every packet dequeued above one K, set to kmin. htsim's DCTCP alpha starts at 0, bfcsim's at 1.
#   - packets: bfcsim sends payload + header (1000 + 48 B). htsim's TCP packet is its MSS on the wire (no header):
#     -mtu = 1048 (so a flow takes 4.8% fewer packets); htsim's HPCC adds 64 B: -mtu 984. ACKs are 40 B (htsim TCP)
#     and 64 B (htsim HPCC, bfcsim). bfcsim's HPCC adds 80 B of INT to data packets, htsim's does not count it.
#     htsim's TCP opens with a SYN round trip and rounds a flow up to whole MSS plus one more; bfcsim does neither.
#   - windows: bfcsim's dctcp starts at line rate with a BDP window; htsim's DCTCP gets that window as -cwnd and
#     ssthresh (its own default is slow start from 10 packets). htsim's HPCC uses its fixed 12 us base RTT for T and
#     the first window (bfcsim: the computed base RTT, 12.53 us). RTOs: htsim TCP at least 250 ms, bfcsim 1-64 ms.
#   - routing: both pick one path per flow (ECMP); htsim_hpcc hashes at the switches (-strat ecmp_host; its parser
#     insists on -paths with it but main_hpcc.cpp never reads it), the DCTCP driver draws the path at the source.
#   - output: htsim's HPCC prints a line per ACK (CWND1/CWND2) and per flow to stdout; that cost is part of its
#     time (stdout goes to a file; to /dev/null instead, a 1000 us run was only about 2% faster). Its own New/Rtx
#     packet counters stay 0 at this commit, so its packet count here is those ACK lines (data packets
#     acknowledged). The DCTCP driver counts data packets sent (with retransmits). bfcsim's count is run.json's
#     counters.data_packets.
#   - htsim_hpcc is not reproducible: HPCCSrc's constructor reseeds htsim's one random generator from the clock
#     (hpcc.cpp: srand(time(NULL))), so the path ids its switches hash on (ECMP) change from run to run, and at
#     this commit some runs abort on `assert(next_send > eventlist().now())` in HPCCSrc::doNextEvent (after its
#     window overflows: CWND2 lines of ~8e13 bytes); about one 2000 us run in six here. A crashed run is retried
#     (MAX_FAILS) and counted in the table's "failed" column.
# Both run single-threaded (bfcsim run.threads = 1) under `nice -n 10`.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=${BFCSIM_ROOT:-$(cd "$HERE/../.." && pwd)}
DURATION_US=${DURATION_US:-2000}
LOAD=${LOAD:-0.3}
SEED=${SEED:-1}
SCHEMES=${SCHEMES:-dctcp hpcc}
REPEAT=${REPEAT:-1}
MAX_FAILS=${MAX_FAILS:-3}
K=8                  # fat-tree radix: 128 hosts, 8 ports per switch
HOSTS=128
LINK_GBPS=100
HOP_US=1
END_US=${END_US:-$((DURATION_US + 1000000))}
OUT=${OUT:-$ROOT/target/htsim-speed/load$LOAD-${DURATION_US}us-seed$SEED}
CDF=$ROOT/crates/bfcsim-workload/data/hpcc_WebSearch_distribution.txt
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
log() { echo "speed: $*" >&2; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }'; }
: > "$OUT/steps.txt"
step() { printf '%-34s %8s s\n' "$1" "$2" >> "$OUT/steps.txt"; log "$1: $2 s"; }

# --- htsim: the binaries --------------------------------------------------------------------------------
# Built by the user from htsim's public source; this repository holds no htsim code, driver or build recipe.
want() { local v=$1; [[ " $SCHEMES " == *" $2 "* ]] || return 0
         [[ -n "${!v:-}" && -x "${!v}" ]] || { log "$v must name a built htsim binary for $2 (see the header)"; exit 1; }; }
want HTSIM_HPCC hpcc
want HTSIM_DCTCP dctcp

# --- bfcsim build -------------------------------------------------------------------------------------------
t0=$(now)
if [[ -z "${BFCSIM:-}" ]]; then
    (cd "$ROOT" && nice -n 10 cargo build --release -p bfcsim >&2)
    BFCSIM=${CARGO_TARGET_DIR:-$ROOT/target}/release/bfcsim
fi
[[ -x "$BFCSIM" ]] || { log "missing bfcsim binary: $BFCSIM"; exit 1; }
BFCSIM=$(cd "$(dirname "$BFCSIM")" && pwd)/$(basename "$BFCSIM")
step "bfcsim build" "$(since "$t0")"

# --- trace --------------------------------------------------------------------------------------------------
t0=$(now)
"$HERE/gen-trace.sh" "$CDF" "$OUT" "$HOSTS" "$LOAD" "$DURATION_US" "$SEED" "$LINK_GBPS"
flows=$(wc -l < "$OUT/trace.txt")
step "trace ($flows flows)" "$(since "$t0")"

# --- helpers ------------------------------------------------------------------------------------------------
# jget FILE section.key: a value of bfcsim's run.json (pretty-printed, one key per line)
jget() {
    awk -v want="$2" '
        /\{[ \t]*$/ { k = $1; gsub(/[":]/, "", k); stack[++d] = k; next }
        /^[ \t]*\}/ { d--; next }
        { k = $1; gsub(/[":]/, "", k); v = $0; sub(/^[^:]*:[ \t]*/, "", v); sub(/,[ \t]*$/, "", v); gsub(/"/, "", v)
          path = ""; for (i = 2; i <= d; i++) path = path stack[i] "."; if ((path k) == want) { print v; exit } }
    ' "$1"
}
# bytes 12MB -> 12000000 (bfcsim's units: KB = 10^3, KiB = 2^10)
bytes() {
    awk -v s="$1" 'BEGIN {
        n = s + 0; u = s; sub(/^[0-9.]+/, "", u)
        m["B"] = 1; m["KB"] = 1e3; m["MB"] = 1e6; m["GB"] = 1e9; m["KiB"] = 1024; m["MiB"] = 1048576; m["GiB"] = 1073741824
        if (!(u in m)) { print "speed: unknown size " s > "/dev/stderr"; exit 1 }
        printf "%d\n", n * m[u] }'
}
# timed NAME CMD...: run CMD in OUT until it has succeeded REPEAT times, keeping the fastest run's output
# (OUT/NAME.stdout, and OUT/NAME.run.json for bfcsim), its wall time (OUT/NAME.wall) and peak RSS in KB (OUT/NAME.rss,
# when /usr/bin/time exists). A failed run is kept as OUT/NAME.failed.stdout and retried, up to MAX_FAILS failures
# (htsim_hpcc aborts now and then, see the header); their count goes to OUT/NAME.fails. Fails when no run succeeded.
timed() {
    local name=$1; shift
    local best="" rss="-" ok=0 fails=0 t st
    local pre=(); [[ -x /usr/bin/time ]] && pre=(/usr/bin/time -o "$OUT/$name.time" -f %M)
    rm -f "$OUT/$name".{stdout,failed.stdout,run.json,wall,rss,time}
    while (( ok < REPEAT && fails < MAX_FAILS )); do
        t=$(now); st=0
        (cd "$OUT" && nice -n 10 ${pre[@]+"${pre[@]}"} "$@") > "$OUT/$name.out" 2>&1 || st=$?
        t=$(since "$t")
        if (( st != 0 )); then
            fails=$((fails + 1))
            mv "$OUT/$name.out" "$OUT/$name.failed.stdout"
            log "$name failed (status $st) after $t s, see $OUT/$name.failed.stdout:"
            grep -v '^CWND' "$OUT/$name.failed.stdout" | tail -3 >&2 || true
            continue
        fi
        ok=$((ok + 1))
        log "$name run $ok: $t s"
        if [[ -z "$best" ]] || awk -v a="$t" -v b="$best" 'BEGIN { exit !(a < b) }'; then
            best=$t
            mv "$OUT/$name.out" "$OUT/$name.stdout"
            [[ -f "$OUT/$name.time" ]] && rss=$(tail -1 "$OUT/$name.time")
            [[ -f "$OUT/$name/run.json" ]] && cp "$OUT/$name/run.json" "$OUT/$name.run.json"
        else
            rm -f "$OUT/$name.out"
        fi
    done
    echo "$fails" > "$OUT/$name.fails"
    [[ -n "$best" ]] || return 1
    echo "$best" > "$OUT/$name.wall"
    echo "$rss" > "$OUT/$name.rss"
}

# --- runs ---------------------------------------------------------------------------------------------------
# results.txt, a line per run: scheme sim flows_finished flows data_packets wall loop rss_kb failed_runs [hops events]
: > "$OUT/results.txt"
: > "$OUT/params.txt"
# result SCHEME SIM FINISHED PACKETS LOOP [EXTRA...]: append a result line of a run timed as SIM-SCHEME
result() {
    local scheme=$1 sim=$2 fin=$3 pkts=$4 loop=$5; shift 5
    echo "$scheme $sim $fin $flows $pkts $(cat "$OUT/$sim-$scheme.wall") $loop $(cat "$OUT/$sim-$scheme.rss")" \
         "$(cat "$OUT/$sim-$scheme.fails")" "$@" >> "$OUT/results.txt"
}
for scheme in $SCHEMES; do
    case $scheme in dctcp|hpcc) ;; *) log "unknown scheme $scheme (dctcp, hpcc)"; exit 1 ;; esac
    t0=$(now)
    cat > "$OUT/bfcsim-$scheme.toml" <<TOML
# Written by scripts/htsim/speed.sh: bfcsim's $scheme preset on a k=8 fat tree, one thread.
name = "htsim-speed-$scheme"
seed = $SEED

[topology]
kind = "fat-tree"
k = $K
rate = "${LINK_GBPS}Gbps"
delay = "${HOP_US}us"

[scheme]
name = "$scheme"

[flows]
file = "flow.txt"

[run]
max_time = "${END_US}us"
threads = 1
TOML
    log "running bfcsim $scheme"
    timed "bfcsim-$scheme" "$BFCSIM" run "bfcsim-$scheme.toml" --out "bfcsim-$scheme" --outputs summary.json \
        || { log "bfcsim $scheme failed"; exit 1; }
    rj=$OUT/bfcsim-$scheme.run.json
    result "$scheme" bfcsim $(( $(jget "$rj" flows) - $(jget "$rj" unfinished) )) "$(jget "$rj" counters.data_packets)" \
        "$(jget "$rj" wall_seconds)" "$(jget "$rj" counters.packet_hops)" "$(jget "$rj" counters.events)"
    step "bfcsim $scheme" "$(since "$t0")"

    # htsim's parameters from bfcsim's resolved ones
    payload=$(jget "$rj" config.nic.payload); header=$(jget "$rj" config.nic.header)
    buffer=$(bytes "$(jget "$rj" config.switch.buffer)")
    iw=$(jget "$rj" initial_window_bytes)
    [[ -n "$payload" && -n "$header" && -n "$buffer" && -n "$iw" ]] || { log "could not read $rj"; exit 1; }
    wire=$((payload + header))
    common=(-tm htsim.cm -nodes "$HOSTS" -linkspeed $((LINK_GBPS * 1000)) -hop_latency "$HOP_US" -switch_latency 0
            -end "$END_US" -seed "$SEED")
    t0=$(now)
    if [[ $scheme == dctcp ]]; then
        kmin=$(bytes "$(jget "$rj" config.switch.ecn.kmin)"); kmax=$(bytes "$(jget "$rj" config.switch.ecn.kmax)")
        q=$((buffer / K / wire))                  # packets of `wire` bytes in a port's static share
        cwnd=$(( (iw + wire - 1) / wire ))        # bfcsim's first window (one BDP) in htsim packets
        args=("${common[@]}" -mtu "$wire" -q "$q" -ecn_k "$kmin" -cwnd "$cwnd" -o htsim-dctcp.logfile)
        {
            echo "dctcp bfcsim: $payload+$header B packets, ${buffer} B shared buffer per switch, ECN RED $kmin..$kmax B,"
            echo "             first window $iw B, run.threads 1, max_time ${END_US}us"
            echo "dctcp htsim:  $(basename "$HTSIM_DCTCP") ${args[*]}"
            echo "             -> $wire B packets, $((q * wire)) B tail-drop queue per port, ECN step at $kmin B,"
            echo "                first window $((cwnd * wire)) B"
        } >> "$OUT/params.txt"
        log "running htsim dctcp"
        # its last line: "Done at T us: F of N flows finished, data packets sent P, fast retransmits R"
        if timed htsim-dctcp "$HTSIM_DCTCP" "${args[@]}" &&
            done_line=$(awk 'sub(/.*Done at /, "") { gsub(/,/, ""); print $3, $11; found = 1 } END { exit !found }' \
                "$OUT/htsim-dctcp.stdout"); then
            result dctcp htsim $done_line -
        else
            echo "dctcp htsim - $flows - - - - $(cat "$OUT/htsim-dctcp.fails" 2>/dev/null || echo ?)" >> "$OUT/results.txt"
        fi
    else
        frac=$(jget "$rj" config.flow_control.pause_fraction)
        resume=$(bytes "$(jget "$rj" config.flow_control.resume_offset)")
        mtu=$((wire - 64))                        # hpccpacket.h: ACKSIZE (64 B) added to every data packet
        qh=$(( (buffer + mtu - 1) / mtu ))        # lossless output queue: the whole buffer (it only warns when full)
        high=$(awk -v f="$frac" -v b="$buffer" -v m="$mtu" 'BEGIN { printf "%d", f * b / m }')
        low=$((high - (resume + mtu - 1) / mtu))
        args=("${common[@]}" -mtu "$mtu" -q "$qh" -queue_type lossless_input -strat ecmp_host -paths 16
              -pfc_thresholds "$low" "$high" -o htsim-hpcc.logfile)
        {
            echo "hpcc bfcsim:  $payload+$header B packets (+ INT), PFC pause at $frac x free buffer, resume $resume B lower"
            echo "hpcc htsim:   htsim_hpcc ${args[*]}"
            echo "             -> $wire B packets, PFC pause/resume at $high/$low x $mtu B per input,"
            echo "                output queues $((qh * mtu)) B"
        } >> "$OUT/params.txt"
        log "running htsim hpcc"
        if timed htsim-hpcc "$HTSIM_HPCC" "${args[@]}"; then
            # HPCCSrc::processAck prints "Flow NAME finished at T total bytes B" once per flow, and a line per ACK
            # (CWND1 or CWND2)
            result hpcc htsim $(awk -v n="$flows" '$1 == "Flow" && $3 == "finished" { f++ } $1 ~ /^CWND[12]$/ { a++ }
                END { print (f > n ? n : f) + 0, a + 0 }' "$OUT/htsim-hpcc.stdout") -
        else
            echo "hpcc htsim - $flows - - - - $(cat "$OUT/htsim-hpcc.fails")" >> "$OUT/results.txt"
        fi
    fi
    rm -f "$OUT/idmap.txt"                        # htsim's Logged::dump_idmap()
    step "htsim $scheme" "$(since "$t0")"
done

# --- table --------------------------------------------------------------------------------------------------
{
echo "k=8 fat tree, $HOSTS hosts, $LINK_GBPS Gb/s, $HOP_US us links; web search at load $LOAD," \
     "$DURATION_US us of arrivals, seed $SEED: $flows flows"
bfc_version=$("$BFCSIM" --version 2>/dev/null | awk '{ print $NF }')
bfc_commit=$(jget "$(ls "$OUT"/bfcsim-*.run.json | head -1)" build.commit)
echo "htsim: ${HTSIM_HPCC:-} ${HTSIM_DCTCP:-}; bfcsim $bfc_version ($bfc_commit)"
awk '
    { s[NR] = $1; sim[NR] = $2; fin[NR] = $3; n[NR] = $4; pk[NR] = $5; w[NR] = $6; lp[NR] = $7; rss[NR] = $8; f[NR] = $9
      if ($2 == "bfcsim") { bw[$1] = $6; bl[$1] = $7 } }
    function mb(k) { return k == "-" ? "-" : sprintf("%.0f", k / 1024) }
    function fmt(x, spec) { return x == "-" ? "-" : sprintf(spec, x) }
    END {
        printf "%-6s %-7s %13s %10s %8s %8s %7s %9s %9s %6s\n", "scheme", "sim", "flows done", "data pkts", "wall s",
            "loop s", "RSS MB", "wall h/b", "h/b loop", "failed"
        for (i = 1; i <= NR; i++) {
            r1 = r2 = "-"
            if (sim[i] == "htsim" && w[i] != "-" && (s[i] in bw)) {
                if (bw[s[i]] > 0) r1 = sprintf("%.2f", w[i] / bw[s[i]])
                if (bl[s[i]] > 0) r2 = sprintf("%.2f", w[i] / bl[s[i]])
            }
            printf "%-6s %-7s %13s %10s %8s %8s %7s %9s %9s %6s\n", s[i], sim[i], fin[i] "/" n[i], pk[i],
                fmt(w[i], "%.2f"), fmt(lp[i], "%.2f"), mb(rss[i]), r1, r2, f[i]
        }
    }' "$OUT/results.txt"
echo "wall s: the whole process (setup, simulation, output), fastest of $REPEAT successful runs; loop s: bfcsim's event loop"
echo "(run.json wall_seconds); wall h/b: htsim wall / bfcsim wall; h/b loop: htsim wall / bfcsim loop; failed: runs that"
echo "crashed (retried up to MAX_FAILS=$MAX_FAILS times). data pkts: bfcsim counters.data_packets, htsim DCTCP data packets"
echo "sent, htsim HPCC ACKs logged. htsim simulates to -end ${END_US} us; bfcsim stops at the last FCT."
awk '$2 == "bfcsim" { printf "bfcsim %s: %s events, %s packet hops\n", $1, $11, $10 }' "$OUT/results.txt"
echo
echo "parameters:"
cat "$OUT/params.txt"
echo
echo "step times (wall s; a run step includes its REPEAT runs, failed runs and parsing):"
cat "$OUT/steps.txt"
} | tee "$OUT/table.txt"
