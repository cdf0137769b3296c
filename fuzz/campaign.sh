#!/usr/bin/env bash
# One fuzz campaign: each target in turn (one process at a time: the machine is shared) for RUNS executions
# (SMALL_RUNS for the structured target small_run), starting from the kept corpus fuzz/corpus/<target>/ (the
# repository's real files, fuzz/seed.sh) and the crash reproducers fuzz/regressions/<target>/. What libFuzzer
# generates goes to fuzz/work/<target>/ (ignored by git: thousands of files), so a later campaign resumes from
# it. Prints libFuzzer's final statistics per target; a crash stops that target and leaves its input in
# fuzz/artifacts/<target>/: copy it to fuzz/regressions/<target>/ and fix it (docs/FUZZING.md).
# The targets are built once (`cargo fuzz build`: release with debug assertions and overflow checks) and run
# directly, so that editing the sources during a long campaign neither rebuilds nor changes what is fuzzed;
# NO_BUILD=1 skips the build and runs the binaries already in fuzz/target/. SANITIZER=address builds with
# AddressSanitizer, libFuzzer's default; the default here is none: bfcsim has no unsafe code, ASan slows the
# structured target several times, and its leak check stopped a campaign on a 32-byte allocation that the
# same input run again does not repeat (a value the runtime initialises once, not a leak of a run).
# Needs cargo-fuzz (`cargo install --locked cargo-fuzz`); RUSTC_BOOTSTRAP=1 lets its nightly flags work on stable.
#
#   nice -n 10 fuzz/campaign.sh [RUNS] [SMALL_RUNS] [TARGET...]   # defaults 1000000, 100000, every target
set -uo pipefail
cd "$(dirname "$0")"
runs="${1:-1000000}"
small_runs="${2:-100000}"
shift $(($# < 2 ? $# : 2))
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(hpcc_topology flow_file connection_matrix cdf experiment sweep compare small_run)
export RUSTC_BOOTSTRAP=1
[ "${NO_BUILD:-0}" = 1 ] || cargo fuzz build --sanitizer "${SANITIZER:-none}" || exit 1
bin="target/$(rustc -vV | sed -n 's/^host: //p')/release"
status=0
for target in "${targets[@]}"; do
    n="$runs"
    [ "$target" = small_run ] && n="$small_runs"
    mkdir -p "work/$target" "regressions/$target" "artifacts/$target"
    echo "== $target: $n runs, started $(date -u +%FT%TZ)"
    "$bin/$target" "work/$target" "corpus/$target" "regressions/$target" -artifact_prefix="artifacts/$target/" \
        -runs="$n" -timeout=120 -rss_limit_mb=4096 -print_final_stats=1 2>&1 |
        grep -E '^stat::(number_of_executed_units|average_exec_per_sec|new_units_added)|^==[0-9]+==|panicked|^SUMMARY|Test unit written|^Done'
    code="${PIPESTATUS[0]}"
    [ "$code" = 0 ] || status=1
    echo "== $target: exit $code, ended $(date -u +%FT%TZ)"
done
exit "$status"
