#!/usr/bin/env bash
# Speed comparison: htsim (Broadcom/csg-htsim, the NDP authors' simulator) against bfcsim on the same k=8 fat tree
# (128 hosts, 100 Gb/s, 1 us per link) and the same seeded web-search trace, for DCTCP and HPCC. Prints, per
# scheme and simulator, the flows finished, the data packets, the wall time of the whole process, bfcsim's own
# event-loop time (run.json's wall_seconds), peak memory and the htsim/bfcsim ratios.
#
#   scripts/htsim/speed.sh
#   HTSIM_SRC=/path/to/csg-htsim BFCSIM=target/release/bfcsim DURATION_US=2000 scripts/htsim/speed.sh
#
# Environment (all optional):
#   LOAD=0.3 DURATION_US=2000 SEED=1   trace (gen-trace.sh): load on the host links, arrivals window, seed (trace and
#                      both simulators); 2000 us is 559 flows, 1-1.5 s of bfcsim and 3-4 s (DCTCP) to 15-20 s (HPCC) of
#                      htsim per scheme on a 2-core machine
#   OUT=DIR            run directory (default target/htsim-speed/load<LOAD>-<DURATION_US>us-seed<SEED>)
#   SCHEMES="dctcp hpcc"  the schemes to run (bfcsim presets of these names; htsim mains below)
#   HTSIM_SRC=DIR      an existing csg-htsim checkout (its sim/ is built in place); otherwise the pinned commit below is
#                      fetched from HTSIM_URL (default https://github.com/Broadcom/csg-htsim, sim/ only) into
#                      HTSIM_CACHE (default target/htsim-src) and built there, once
#   HTSIM_BUILD=DIR    where the DCTCP driver below is compiled (default target/htsim-build)
#   BFCSIM=PATH        bfcsim binary; otherwise `cargo build --release -p bfcsim` in the repository (about 3 minutes)
#   END_US             htsim -end and bfcsim run.max_time (default DURATION_US + 1000000: htsim's TCP has a 250 ms
#                      minimum RTO). htsim always simulates up to -end, bfcsim stops when the last flow finishes; the
#                      idle tail costs htsim only its timer ticks
#   REPEAT=1           run each simulator REPEAT times and keep the fastest (wall times on a busy machine are noisy)
#   MAX_FAILS=3        runs of a simulator that may crash before it is reported as failed (htsim_hpcc, see below)
#   MAKE_JOBS=2        parallel jobs for building htsim
#
# htsim: csg-htsim commit 841d9e7be46bb968eece766aa4b6c044c7799f67 (2026-03-23, "Revised connection_matrix.h/cpp"),
# the commit docs/FIDELITY.md's NDP comparison used. It is built with its own Makefiles (sim/ -> libhtsim.a,
# sim/datacenter -> htsim_hpcc), -O3 for the library and -O2 for the mains, as upstream ships them.
#   HPCC: htsim's own sim/datacenter/main_hpcc.cpp (htsim_hpcc), flags read from its argument parser.
#   DCTCP: csg-htsim has DCTCP (sim/dctcp.cpp) but no main that runs it on a connection matrix: there is no
#     main_dctcp.cpp in sim/datacenter, and the DCTCP mains in sim/datacenter/old_tests/ only run permutations of
#     infinite flows. So this script writes a small driver, htsim_dctcp_tm (the heredoc below: main_hpcc.cpp's
#     matrix loading and FatTreeTopology with old_tests/main_dctcp_permutation.cpp's DCTCPSrc/TcpSink wiring,
#     nothing else), compiles it against the built libhtsim.a and datacenter objects, and runs that. Everything the
#     packets do is htsim's library code; the driver only builds flows and reports completions.
#
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
HTSIM_COMMIT=841d9e7be46bb968eece766aa4b6c044c7799f67
HTSIM_URL=${HTSIM_URL:-https://github.com/Broadcom/csg-htsim}
DURATION_US=${DURATION_US:-2000}
LOAD=${LOAD:-0.3}
SEED=${SEED:-1}
SCHEMES=${SCHEMES:-dctcp hpcc}
REPEAT=${REPEAT:-1}
MAX_FAILS=${MAX_FAILS:-3}
MAKE_JOBS=${MAKE_JOBS:-2}
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

# --- htsim: source and build --------------------------------------------------------------------------------
t0=$(now)
if [[ -n "${HTSIM_SRC:-}" ]]; then
    SRC=$(cd "$HTSIM_SRC" && pwd)
else
    SRC=${HTSIM_CACHE:-$ROOT/target/htsim-src}
    if [[ ! -f "$SRC/sim/Makefile" ]]; then
        log "fetching csg-htsim $HTSIM_COMMIT (sim/ only) from $HTSIM_URL into $SRC"
        rm -rf "$SRC"
        git init -q "$SRC"
        git -C "$SRC" remote add origin "$HTSIM_URL"
        git -C "$SRC" sparse-checkout set sim 2>/dev/null || true     # the rest is experiments and papers' data
        # blobs on demand (only sim/'s are checked out); plain shallow, then full fetches for servers without filters
        git -C "$SRC" fetch -q --filter=blob:none --depth 1 origin "$HTSIM_COMMIT" ||
            git -C "$SRC" fetch -q --depth 1 origin "$HTSIM_COMMIT" || git -C "$SRC" fetch -q origin
        git -C "$SRC" -c advice.detachedHead=false checkout -q "$HTSIM_COMMIT"
    fi
fi
[[ -f "$SRC/sim/Makefile" && -f "$SRC/sim/datacenter/main_hpcc.cpp" ]] || { log "no csg-htsim sources in $SRC"; exit 1; }
src_commit=$(git -C "$SRC" rev-parse HEAD 2>/dev/null || echo unknown)
[[ "$src_commit" == "$HTSIM_COMMIT" ]] || log "warning: $SRC is at $src_commit, not the pinned $HTSIM_COMMIT"

BUILD=${HTSIM_BUILD:-$ROOT/target/htsim-build}
mkdir -p "$BUILD"
BUILD=$(cd "$BUILD" && pwd)
DC=$SRC/sim/datacenter
# the objects htsim_hpcc links besides its main (sim/datacenter/Makefile); the DCTCP driver links the same
DC_OBJS="firstfit.o vl2_topology.o fat_tree_topology.o fat_tree_switch.o bcube_topology.o connection_matrix.o
         oversubscribed_fat_tree_topology.o shortflows.o star_topology.o multihomed_fat_tree_topology.o"
{
    nice -n 10 make -C "$SRC/sim" -j"$MAKE_JOBS" libhtsim.a
    nice -n 10 make -C "$DC" -j"$MAKE_JOBS" htsim_hpcc
} > "$BUILD/make.log" 2>&1 || { log "building htsim failed, see $BUILD/make.log"; tail -20 "$BUILD/make.log" >&2; exit 1; }
HTSIM_HPCC=$DC/htsim_hpcc

cat > "$BUILD/main_dctcp_tm.cpp.new" <<'CPP'
// htsim_dctcp_tm: htsim's DCTCP (sim/dctcp.cpp: DCTCPSrc, TcpSink) on a FatTreeTopology, driven by a connection
// matrix (-tm, the format main_hpcc.cpp reads). csg-htsim ships no such main (its DCTCP mains are permutation tests
// in datacenter/old_tests/); this is main_hpcc.cpp's matrix loading and arguments with
// old_tests/main_dctcp_permutation.cpp's DCTCP wiring. Written by bfcsim's scripts/htsim/speed.sh.
#include "config.h"
#include <iostream>
#include <sstream>
#include <string.h>
#include <math.h>
#include "network.h"
#include "eventlist.h"
#include "logfile.h"
#include "loggers.h"
#include "clock.h"
#include "dctcp.h"
#include "tcp.h"
#include "firstfit.h"
#include "topology.h"
#include "connection_matrix.h"
#include "fat_tree_topology.h"
#include "fat_tree_switch.h"
#include "main.h"

EventList eventlist;

// A DCTCP source that reports its flow's completion: the first ACK covering the flow, TcpSrc's own test (whose
// "Flow tcpsrc finished" line names no flow).
class TracedDCTCPSrc : public DCTCPSrc {
public:
    TracedDCTCPSrc(EventList& ev, uint32_t id) : DCTCPSrc(NULL, NULL, ev), _id(id), _fin(0) {}
    virtual void receivePacket(Packet& pkt) {
        DCTCPSrc::receivePacket(pkt);
        if (!_fin && _last_acked >= _flow_size) {
            _fin = eventlist().now();
            cout << "FCT id " << _id << " finished at " << timeAsUs(_fin) << " us" << endl;
        }
    }
    uint32_t _id;
    simtime_picosec _fin;
};

static void usage(const char* progr) {
    cerr << "Usage " << progr << " -tm FILE [-nodes N] [-linkspeed Mbps] [-hop_latency us] [-switch_latency us]\n"
         << "\t[-mtu bytes (a TCP packet's size on the wire)] [-q packets per port] [-ecn_k bytes] [-cwnd packets]\n"
         << "\t[-end us] [-seed S] [-o logfile]" << endl;
    exit(1);
}

int main(int argc, char** argv) {
    Clock c(timeFromSec(5 / 100.), eventlist);
    uint32_t no_of_nodes = 128;
    linkspeed_bps linkspeed = speedFromMbps((double)HOST_NIC);
    int packet_size = 1500, queue_pkts = 100, cwnd_pkts = 10, seed = 13;
    mem_b ecn_k = 0;
    double end_us = 1000;
    simtime_picosec hop_latency = timeFromUs((uint32_t)1), switch_latency = 0;
    string logname = "logout.dat";
    const char* tm_file = NULL;

    for (int i = 1; i < argc; i++) {
        if (i + 1 >= argc) usage(argv[0]);
        const char* a = argv[i];
        const char* v = argv[++i];
        if (!strcmp(a, "-tm")) tm_file = v;
        else if (!strcmp(a, "-nodes")) no_of_nodes = atoi(v);
        else if (!strcmp(a, "-linkspeed")) linkspeed = speedFromMbps(atof(v));
        else if (!strcmp(a, "-hop_latency")) hop_latency = timeFromUs(atof(v));
        else if (!strcmp(a, "-switch_latency")) switch_latency = timeFromUs(atof(v));
        else if (!strcmp(a, "-mtu")) packet_size = atoi(v);
        else if (!strcmp(a, "-q")) queue_pkts = atoi(v);
        else if (!strcmp(a, "-ecn_k")) ecn_k = atoll(v);
        else if (!strcmp(a, "-cwnd")) cwnd_pkts = atoi(v);
        else if (!strcmp(a, "-end")) end_us = atof(v);
        else if (!strcmp(a, "-seed")) seed = atoi(v);
        else if (!strcmp(a, "-o")) logname = v;
        else usage(argv[0]);
    }
    if (!tm_file) usage(argv[0]);
    srand(seed);
    srandom(seed);
    Packet::set_packet_size(packet_size);      // a TcpPacket's size is its MSS: no header is added
    eventlist.setEndtime(timeFromUs(end_us));
    mem_b queuesize = memFromPkt(queue_pkts);
    if (ecn_k <= 0) ecn_k = memFromPkt(15);    // the K of htsim's plain ECN queue type
    // ECN_PRIO queues on every switch port: ACKs ahead of data, marking on dequeue above K = fraction * queue size
    FatTreeSwitch::_ecn_threshold_fraction = (double)ecn_k / (double)queuesize;
    cout << "mtu " << packet_size << " B, queue " << queuesize << " B, ecn_k " << ecn_k << " B, cwnd " << cwnd_pkts
         << " packets, end " << end_us << " us" << endl;

    Logfile logfile(logname, eventlist);
    logfile.setStartTime(timeFromSec(0));

    FatTreeTopology* top = new FatTreeTopology(no_of_nodes, linkspeed, queuesize, NULL, &eventlist, NULL,
                                               ECN_PRIO, hop_latency, switch_latency, FAIR_PRIO);
    if (top->no_of_nodes() != no_of_nodes) {
        cerr << "the topology has " << top->no_of_nodes() << " hosts, not " << no_of_nodes << endl;
        exit(1);
    }

    ConnectionMatrix* conns = new ConnectionMatrix(no_of_nodes);
    if (!conns->load(tm_file)) exit(1);
    if (conns->N != no_of_nodes) {
        cerr << "the connection matrix has " << conns->N << " nodes, not " << no_of_nodes << endl;
        exit(1);
    }
    vector<connection*>* all_conns = conns->getAllConnections();

    TcpRtxTimerScanner rtx_scanner(timeFromMs(10), eventlist);   // as htsim's TCP mains
    vector<vector<const Route*>*> paths(no_of_nodes * no_of_nodes, (vector<const Route*>*)NULL);
    vector<TracedDCTCPSrc*> srcs;
    for (size_t i = 0; i < all_conns->size(); i++) {
        connection* crt = all_conns->at(i);
        uint32_t src = crt->src, dst = crt->dst;
        vector<const Route*>*& out = paths[src * no_of_nodes + dst];
        vector<const Route*>*& back = paths[dst * no_of_nodes + src];
        if (!out) out = top->get_bidir_paths(src, dst, false);
        if (!back) back = top->get_bidir_paths(dst, src, false);

        TracedDCTCPSrc* tcp = new TracedDCTCPSrc(eventlist, crt->flowid);
        TcpSink* sink = new TcpSink();
        tcp->set_flowsize(crt->size);
        tcp->set_cwnd((uint64_t)cwnd_pkts * Packet::data_packet_size());
        tcp->set_ssthresh((uint64_t)cwnd_pkts * Packet::data_packet_size());
        tcp->setName("dctcp_" + ntoa(src) + "_" + ntoa(dst) + "_" + ntoa(crt->flowid));
        sink->setName("dctcp_sink_" + ntoa(src) + "_" + ntoa(dst) + "_" + ntoa(crt->flowid));
        rtx_scanner.registerTcp(*tcp);

        uint32_t choice = rand() % out->size();  // one path per flow, as ECMP
        Route* routeout = new Route(*out->at(choice));
        routeout->push_back(sink);
        Route* routein = new Route(*back->at(choice % back->size()));
        routein->push_back(tcp);
        tcp->connect(*routeout, *routein, *sink, crt->start);   // the matrix's start is in picoseconds
        srcs.push_back(tcp);
    }
    cout << "Loaded " << srcs.size() << " connections" << endl;

    while (eventlist.doNextEvent()) {
    }

    uint64_t sent = 0, finished = 0, fast_rtx = 0;
    for (size_t i = 0; i < srcs.size(); i++) {
        sent += srcs[i]->_packets_sent / srcs[i]->_mss;
        fast_rtx += srcs[i]->_drops;
        if (srcs[i]->_fin) finished++;
    }
    cout << "Done at " << timeAsUs(eventlist.now()) << " us: " << finished << " of " << srcs.size()
         << " flows finished, data packets sent " << sent << ", fast retransmits " << fast_rtx << endl;
    return 0;
}
CPP
if ! cmp -s "$BUILD/main_dctcp_tm.cpp.new" "$BUILD/main_dctcp_tm.cpp"; then
    mv "$BUILD/main_dctcp_tm.cpp.new" "$BUILD/main_dctcp_tm.cpp"
else
    rm "$BUILD/main_dctcp_tm.cpp.new"
fi
HTSIM_DCTCP=$BUILD/htsim_dctcp_tm
if [[ ! -x "$HTSIM_DCTCP" || "$BUILD/main_dctcp_tm.cpp" -nt "$HTSIM_DCTCP" || "$SRC/sim/libhtsim.a" -nt "$HTSIM_DCTCP"
      || "$(cat "$BUILD/htsim_src" 2>/dev/null)" != "$SRC" ]]; then
    objs=(); for o in $DC_OBJS; do objs+=("$DC/$o"); done
    # the flags of sim/datacenter/Makefile
    ( cd "$BUILD" && nice -n 10 g++ -Wall -std=c++11 -g -O2 -I"$SRC/sim" -I"$DC" -c main_dctcp_tm.cpp -o main_dctcp_tm.o &&
      nice -n 10 g++ -std=c++11 -g -O2 main_dctcp_tm.o "${objs[@]}" -L"$SRC/sim" -lhtsim -o htsim_dctcp_tm ) \
        >> "$BUILD/make.log" 2>&1 ||
        { log "building the DCTCP driver failed, see $BUILD/make.log"; tail -20 "$BUILD/make.log" >&2; exit 1; }
    echo "$SRC" > "$BUILD/htsim_src"
fi
step "htsim source + build" "$(since "$t0")"

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
            echo "dctcp htsim:  htsim_dctcp_tm ${args[*]}"
            echo "             -> $wire B packets, $((q * wire)) B tail-drop queue per port, ECN step at $kmin B,"
            echo "                first window $((cwnd * wire)) B"
        } >> "$OUT/params.txt"
        log "running htsim dctcp"
        # the driver's last line: "Done at T us: F of N flows finished, data packets sent P, fast retransmits R"
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
echo "htsim $src_commit; bfcsim $bfc_version ($bfc_commit)"
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
