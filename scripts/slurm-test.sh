#!/usr/bin/env bash
# Checks `bfcsim reproduce --slurm` on a real Slurm: installs Debian's slurm-wlm and munge (apt-get, needs root),
# starts a one-node cluster on localhost (munged, slurmctld, slurmd, all under a temporary directory), submits a
# --quick figure as a job array, waits for it, builds the report with --collect, reproduces the same figure
# locally into another directory, and checks that the two reports (report.md, every PNG, SVG and CSV) are equal.
# Stops the daemons it started when it ends.
#
#   sudo scripts/slurm-test.sh [FIGURE]        (default bfc-fig11a; needs only the Rust toolchain and apt)
set -euo pipefail
cd "$(dirname "$0")/.."
FIGURE="${1:-bfc-fig11a}"

if ! command -v slurmctld >/dev/null || ! command -v munged >/dev/null; then
    echo "== installing slurm-wlm and munge"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq slurm-wlm munge >/dev/null
fi

echo "== building bfcsim"
cargo build --release --quiet
BFCSIM="$PWD/target/release/bfcsim"

WORK="$(mktemp -d /tmp/bfcsim-slurm.XXXXXX)"
cleanup() {
    # The daemons write their own pid files; stop exactly those.
    for f in "$WORK"/slurmd.pid "$WORK"/slurmctld.pid "$WORK"/munged.pid; do
        [ -f "$f" ] && kill "$(cat "$f")" 2>/dev/null || true
    done
}
trap cleanup EXIT
echo "== cluster state in $WORK"

# munge: a key of our own and a socket in the work directory, so a system munged (if any) is left alone.
mkdir -p "$WORK/munge"
dd if=/dev/urandom of="$WORK/munge/munge.key" bs=1024 count=1 status=none
chmod 700 "$WORK/munge"
chmod 400 "$WORK/munge/munge.key"
SOCKET="$WORK/munge/munge.socket"
munged --force --key-file="$WORK/munge/munge.key" --socket="$SOCKET" \
    --pid-file="$WORK/munged.pid" --log-file="$WORK/munged.log" --seed-file="$WORK/munge/seed"

NODE="$(hostname -s)"
CPUS="$(nproc)"
mkdir -p "$WORK/state" "$WORK/spool"
cat >"$WORK/slurm.conf" <<EOF
ClusterName=bfcsim-test
SlurmctldHost=$NODE(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$SOCKET
CredType=cred/munge
StateSaveLocation=$WORK/state
SlurmdSpoolDir=$WORK/spool
SlurmctldPidFile=$WORK/slurmctld.pid
SlurmdPidFile=$WORK/slurmd.pid
SlurmctldLogFile=$WORK/slurmctld.log
SlurmdLogFile=$WORK/slurmd.log
SlurmctldPort=16817
SlurmdPort=16818
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
SchedulerType=sched/backfill
NodeName=$NODE NodeAddr=127.0.0.1 CPUs=$CPUS State=UNKNOWN
PartitionName=test Nodes=$NODE Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF="$WORK/slurm.conf"
slurmctld -f "$SLURM_CONF"
slurmd -f "$SLURM_CONF"

echo "== waiting for the node"
for _ in $(seq 60); do
    if sinfo -h -o '%T' 2>/dev/null | grep -Eq '^(idle|mixed|allocated)'; then break; fi
    sleep 1
done
sinfo

echo "== bfcsim reproduce $FIGURE --quick --slurm"
SLURM_OUT="$WORK/on-slurm"
LOCAL_OUT="$WORK/local"
"$BFCSIM" reproduce "$FIGURE" --quick --out "$SLURM_OUT" --slurm "$WORK/array"
cat "$WORK/array/job.sh"
JOB="$(sbatch --parsable "$WORK/array/job.sh")"
echo "submitted job array $JOB"

echo "== waiting for the array"
for _ in $(seq 600); do
    if [ -z "$(squeue -h -j "$JOB" 2>/dev/null)" ]; then break; fi
    sleep 1
done
if [ -n "$(squeue -h -j "$JOB" 2>/dev/null)" ]; then
    echo "FAIL: the array did not finish in 10 minutes"; squeue; exit 1
fi
cat "$WORK"/array/logs/*.out

echo "== collecting the report from the array's runs"
"$BFCSIM" reproduce "$FIGURE" --quick --out "$SLURM_OUT" --collect

echo "== reproducing the same figure locally"
"$BFCSIM" reproduce "$FIGURE" --quick --out "$LOCAL_OUT" --jobs 1

echo "== comparing"
if diff -r "$SLURM_OUT/$FIGURE-quick" "$LOCAL_OUT/$FIGURE-quick"; then
    echo "PASS: the report collected from Slurm equals the local one ($(ls "$LOCAL_OUT/$FIGURE-quick" | wc -l) files)"
    cleanup
    rm -rf "$WORK"
else
    echo "FAIL: the reports differ"; exit 1
fi
