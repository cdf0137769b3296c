#!/usr/bin/env bash
# Seeds fuzz/corpus/<target>/ with the real input files of the repository, framed as each target reads its
# bytes (crates/bfcsim/src/fuzz_targets.rs). Run from anywhere; it only adds files.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
corpus="$root/fuzz/corpus"
ref="$root/data/reference/ns3-perf-k8"
mkdir -p "$corpus"/{hpcc_topology,flow_file,connection_matrix,cdf,experiment,sweep,compare,small_run}

cp "$ref/topology.txt" "$corpus/hpcc_topology/ns3-perf-k8-topology.txt"
printf '4 2 4\n2 3\n0 2 100Gbps 1000ns 0\n1 3 100Gbps 0.001ms 0\n2 3 40Gbps 1us 0\n2 3 40Gbps 1us 0\n' \
    > "$corpus/hpcc_topology/parallel-links.txt"

# flow.txt: the node count (208) and host count (128) of the reference topology, then the file (its first
# 200 flows: libFuzzer mutates short inputs faster).
{ printf '\xd0\x80'; { echo 200; sed -n '2,201p' "$ref/flow.txt"; }; } > "$corpus/flow_file/ns3-perf-k8-flow.bin"
{ printf '\x06\x04'; printf '3\n0 0 1 3 100 1000 2.0\n1 2 3 3 200 20000 2.000002612\n2 1 0 0 100 1 2.000003\n'; } \
    > "$corpus/flow_file/seven-columns.bin"

# Connection matrices: a small barrier here; fuzz/corpus/connection_matrix/htsim-*.bin are matrices of 8 hosts
# that csg-htsim's connection_matrices/gen_allreduce.py, gen_serial_alltoall.py and gen_allreduce_butterfly.py
# wrote (kept in the corpus: this script cannot make them without htsim).
{ printf '\x04'; printf 'Connections 3\nTriggers 1\n0->1 id 1 start 0 size 10 recv_done_trigger 1\n'
  printf '2->1 id 2 start 5 size 10 recv_done_trigger 1\n1->3 id 3 trigger 1 size 10\ntrigger id 1 barrier count 2\n'; } \
    > "$corpus/connection_matrix/barrier.bin"

# CDFs: every shipped file with default options, and BFC's with its min_size rule (flag bit 3).
for f in "$root"/crates/bfcsim-workload/data/*.txt; do
    { printf '\x00'; cat "$f"; } > "$corpus/cdf/$(basename "$f" .txt).bin"
done
for f in bfc_W3_GoogleAllRPC bfc_W4_FacebookHadoop; do
    { printf '\x08'; cat "$root/crates/bfcsim-workload/data/$f.txt"; } > "$corpus/cdf/$f-min-size.bin"
done
{ printf '\x10'; cat "$root/crates/bfcsim-workload/data/homa_FacebookKeyValueMsgSizeDist.txt"; } \
    > "$corpus/cdf/homa-key-value-tail.bin"

# Experiments: every experiment file, alone and with overrides of each kind (after NUL bytes).
for f in "$root"/experiments/*.toml "$ref"/*.toml; do
    name="$(basename "$f" .toml)"
    cp "$f" "$corpus/experiment/$name.toml"
done
{ cat "$root/experiments/clos128-google-dctcp.toml"
  printf '\0switch.buffer=6MB\0workload.load=0.8\0scheme.name=bfc\0workload.group.0.count=3'
  printf '\0output.files=["fct.csv"]\0limits.memory=1GB'; } > "$corpus/experiment/with-overrides.bin"

printf 'workload.load=0.5,0.7,0.9\nscheme.name=ideal-fq,ideal-srf\n' > "$corpus/sweep/two-sweeps.txt"
printf 'seed=1,2,3\n' > "$corpus/sweep/seeds.txt"

# compare: the first 100 flows of ns-3's HPCC and DCQCN outputs, then a --buckets value.
for b in equal_count:10 bfc_google edges:10KB,100KB,1MB; do
    { head -100 "$ref/hpcc.fct.txt"; printf '\0'; head -100 "$ref/dcqcn.fct.txt"; printf '\0%s' "$b"; } \
        > "$corpus/compare/hpcc-dcqcn-${b%%:*}.bin"
done

# small_run: a few byte strings; the generator reads any bytes.
for i in 0 1 2 3 4 5 6 7; do
    head -c 64 /dev/zero | tr '\0' "\\$(printf '%03o' $((i * 31 + 1)))" > "$corpus/small_run/seed-$i.bin"
done
echo "seeded $(find "$corpus" -type f | wc -l) files under $corpus"
