#!/usr/bin/env bash
# Shows that a change alters no output: runs every named scheme (`bfcsim schemes`) of a base commit on a short
# CLOS-128 run with that commit's build and with this tree's (or a second commit's), and compares the hashes of
# every output file. Exit status 0 when every preset's outputs are byte-identical, 1 otherwise.
#
#   scripts/compare-presets.sh BASE_COMMIT [OTHER_COMMIT]
#
# Environment: DURATION (arrivals, default 1ms), EXPERIMENT (default experiments/clos128-google-incast-bfc.toml,
# BFC's Fig. 9 setup: Google sizes, 55% load + 5% 100->1 incast), THREADS (run.threads of the second build,
# default 1), WORK (scratch directory, default /tmp/bfcsim-compare). Builds go to WORK/<commit>/ and are reused.
#
# Compared per preset: fct.csv, fct.txt, pfc.txt (when written), summary.json, and run.json without its
# wall-clock time and its resolved configuration (a later commit may add configuration keys with defaults;
# the counters, e.g. events processed and packet-hops, stay compared; with THREADS > 1 the count of events is
# left out, as each shard runs its own watchdog and arrival events). Presets that exist only in the second
# build are listed as new and not compared.
set -euo pipefail
cd "$(dirname "$0")/.."
base=${1:?usage: scripts/compare-presets.sh BASE_COMMIT [OTHER_COMMIT]}
other=${2:-}
duration=${DURATION:-1ms}
experiment=${EXPERIMENT:-experiments/clos128-google-incast-bfc.toml}
threads=${THREADS:-1}
work=${WORK:-/tmp/bfcsim-compare}
mkdir -p "$work"

# Builds commit $1 in WORK/<sha>/ (from `git archive`, so no worktree is touched); prints the binary's path.
build() {
    local sha dir
    sha=$(git rev-parse --verify "$1^{commit}")
    dir="$work/$sha"
    if [ ! -x "$dir/target/release/bfcsim" ]; then
        rm -rf "$dir" && mkdir -p "$dir/src"
        git archive "$sha" | tar -x -C "$dir/src"
        (cd "$dir/src" && CARGO_TARGET_DIR="$dir/target" cargo build --release --quiet) >&2
    fi
    echo "$dir/target/release/bfcsim"
}

presets() {
    "$1" schemes | awk '/^Named schemes/ {on = 1; next} /^$/ {on = 0} on && /^  [a-z]/ {print $1}'
}

# The digest of one run's outputs, one line per file.
digest() {
    local out=$1 f
    for f in fct.csv fct.txt pfc.txt summary.json; do
        [ -f "$out/$f" ] && echo "$f $(sha256sum < "$out/$f" | cut -c1-16)"
    done
    echo "run.json $(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); d.pop("wall_seconds"); d.pop("config"); sys.argv[2] == "1" or d["counters"].pop("events"); print(json.dumps(d, sort_keys=True))' "$out/run.json" "$threads" | sha256sum | cut -c1-16)"
}

a_bin=$(build "$base")
if [ -n "$other" ]; then
    b_bin=$(build "$other")
    b_name=$(git rev-parse --short "$other")
else
    cargo build --release --quiet
    b_bin=$PWD/target/release/bfcsim
    b_name="this tree"
fi
# Builds that write only some files by default (`[output]`, `--outputs`) are asked for every file compared.
outputs() {
    if "$1" run --help | grep -q -- '--outputs'; then
        echo "--outputs=fct.csv,fct.txt,pfc.txt,summary.json"
    fi
}
a_outputs=$(outputs "$a_bin")
b_outputs=$(outputs "$b_bin")
echo "base $(git rev-parse --short "$base") against $b_name: $experiment, workload.duration=$duration, run.threads=$threads for $b_name"
fail=0
for p in $(presets "$a_bin"); do
    a_out="$work/out/a/$p" b_out="$work/out/b/$p"
    rm -rf "$a_out" "$b_out"
    mkdir -p "$work/out/a" "$work/out/b"
    "$a_bin" run "$experiment" --set "workload.duration=$duration" --set "scheme.name=$p" --out "$a_out" \
        $a_outputs > "$a_out.log" 2>&1 || { cat "$a_out.log"; exit 2; }
    "$b_bin" run "$experiment" --set "workload.duration=$duration" --set "scheme.name=$p" \
        --set "run.threads=$threads" --out "$b_out" $b_outputs > "$b_out.log" 2>&1 || { cat "$b_out.log"; exit 2; }
    if [ "$(digest "$a_out")" == "$(digest "$b_out")" ]; then
        printf '%-18s identical  %s\n' "$p" "$(digest "$a_out" | tr '\n' ' ')"
    else
        printf '%-18s DIFFERENT\n' "$p"
        diff <(digest "$a_out") <(digest "$b_out") | sed 's/^/    /' || true
        fail=1
    fi
done
for p in $(presets "$b_bin"); do
    presets "$a_bin" | grep -qx "$p" || printf '%-18s new (not in the base)\n' "$p"
done
exit $fail
