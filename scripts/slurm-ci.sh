#!/usr/bin/env bash
# scripts/slurm-sweep.sh on a real Slurm scheduler: a single-node cluster
# started here, a job array submitted with sbatch, the shards merged.
#
# 1. Installs Debian's slurm-wlm and munge (apt-get, as root) if they are
#    missing.
# 2. Starts munged, slurmctld -D and slurmd -D in a scratch directory: its
#    own munge key and socket, a minimal slurm.conf (this host as the only
#    node, CPUs and memory from `slurmd -C`, no cgroups, no accounting),
#    ports 16817/16818 (FEDTOPO_SLURM_PORT), so a Slurm or munge already
#    set up on the machine is left alone. Waits (60 s at most) for the node
#    to be idle.
# 3. Writes a small experiment (48 simulate jobs on the built-in underlays,
#    a few seconds of work), submits it twice with
#    `sbatch --array=... --wait scripts/slurm-sweep.sh`: as 5 tasks
#    (--array=0-4, uneven shards of 10 and 9 jobs) and as 3 tasks numbered
#    from 1 (--array=1-3), merges each array's shards with `fedtopo merge`
#    and compares the merged directory, jobs/ included, byte for byte
#    (`diff -r`) with a single-process `fedtopo run` of the same file.
# 4. Stops the daemons it started (on any exit) and removes the scratch
#    directory.
#
# Usage: scripts/slurm-ci.sh [--profile NAME | --bin PATH] [--keep]
#   --profile NAME: cargo profile to build fedtopo with (default release; CI
#     passes --bin target/debug/fedtopo, the binary `cargo test` built);
#   --bin PATH: use this fedtopo binary;
#   --keep: keep the scratch directory (logs, outputs) and print its path.
# Exits non-zero when Slurm cannot be installed or started (the daemon logs
# are printed), when a task fails or the sweep exceeds its time limit
# (FEDTOPO_SLURM_TIMEOUT seconds per array, default 600), or when the
# merged outputs differ from the single-process run.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

KEEP=0
BIN=
PROFILE=release
while [ $# -gt 0 ]; do
  case "$1" in
    --keep) KEEP=1 ;;
    --bin) shift; BIN=${1:?--bin needs a path} ;;
    --profile) shift; PROFILE=${1:?--profile needs a name} ;;
    -h|--help) sed -n '2,32p' "$0"; exit 0 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
  shift
done

PORT=${FEDTOPO_SLURM_PORT:-16817}
TIMEOUT=${FEDTOPO_SLURM_TIMEOUT:-600}
START=$SECONDS
phase() { printf '== slurm-ci: %s (%ds)\n' "$*" $((SECONDS - START)); }
die() { echo "slurm-ci: error: $*" >&2; exit 1; }

# --- fedtopo binary ---------------------------------------------------------
if [ -z "$BIN" ]; then
  phase "cargo build --profile $PROFILE"
  cargo build --profile "$PROFILE" --locked --quiet --bin fedtopo
  case "$PROFILE" in
    dev | test) BIN=$ROOT/target/debug/fedtopo ;;
    bench) BIN=$ROOT/target/release/fedtopo ;;
    *) BIN=$ROOT/target/$PROFILE/fedtopo ;;
  esac
fi
[ -x "$BIN" ] || die "fedtopo binary $BIN not found or not executable"
BIN=$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")

# --- install ----------------------------------------------------------------
missing=()
for cmd in munged munge slurmctld slurmd sbatch sinfo squeue scancel; do
  command -v "$cmd" >/dev/null || missing+=("$cmd")
done
if [ ${#missing[@]} -gt 0 ]; then
  phase "installing slurm-wlm munge (missing: ${missing[*]})"
  [ "$(id -u)" = 0 ] || die "${missing[*]} not installed; run as root or: apt-get install slurm-wlm munge"
  command -v apt-get >/dev/null || die "${missing[*]} not installed and no apt-get to install them"
  # Keep the packages' maintainer scripts from starting the system services
  # (they would need /etc/slurm/slurm.conf): the cluster below is our own.
  policy=/usr/sbin/policy-rc.d
  made_policy=0
  if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\nexit 101\n' >"$policy"
    chmod 755 "$policy"
    made_policy=1
  fi
  apt_log=$(mktemp)
  if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
    --no-install-recommends slurm-wlm munge; } >"$apt_log" 2>&1; then
    cat "$apt_log" >&2
    [ "$made_policy" = 0 ] || rm -f "$policy"
    die "apt-get install slurm-wlm munge failed"
  fi
  [ "$made_policy" = 0 ] || rm -f "$policy"
  rm -f "$apt_log"
fi
SLURM_VERSION=$(slurmd -V)
phase "$SLURM_VERSION, $(munged -V 2>&1 | head -1)"

# --- scratch directory and daemons ------------------------------------------
WORK=$(mktemp -d "${TMPDIR:-/tmp}/fedtopo-slurm.XXXXXX")
chmod 755 "$WORK"
mkdir -p "$WORK"/{munge,state,spool,log,bin,exp}
export SLURM_CONF=$WORK/slurm.conf
PIDS=()

stop_all() {
  local rc=$?
  set +e
  if [ ${#PIDS[@]} -gt 0 ]; then
    # Jobs first (their processes belong to slurmd), then the daemons.
    if [ -n "${CTLD_PID:-}" ] && kill -0 "$CTLD_PID" 2>/dev/null; then
      scancel --quiet --user="$(id -un)" 2>/dev/null
      for _ in $(seq 20); do
        [ -z "$(squeue -h 2>/dev/null)" ] && break
        sleep 0.5
      done
    fi
    for ((k = ${#PIDS[@]} - 1; k >= 0; k--)); do
      kill "${PIDS[k]}" 2>/dev/null
    done
    for pid in "${PIDS[@]}"; do
      for _ in $(seq 20); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.5
      done
      kill -9 "$pid" 2>/dev/null
      wait "$pid" 2>/dev/null
    done
  fi
  if [ "$KEEP" = 1 ]; then
    echo "slurm-ci: kept $WORK"
  else
    rm -rf "$WORK"
  fi
  exit "$rc"
}
trap stop_all EXIT
trap 'exit 130' INT TERM

logs() {
  for f in "$WORK"/log/*; do
    [ -s "$f" ] || continue
    echo "--- $f (last 30 lines)" >&2
    tail -n 30 "$f" >&2
  done
}
fail() {
  logs
  die "$*"
}

port_busy() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
for p in "$PORT" $((PORT + 1)); do
  if port_busy "$p"; then
    die "port $p on 127.0.0.1 is in use (a Slurm left from an earlier run?); set FEDTOPO_SLURM_PORT"
  fi
done

phase "starting munged"
head -c 1024 /dev/urandom >"$WORK/munge/munge.key"
chmod 600 "$WORK/munge/munge.key"
SOCKET=$WORK/munge/munge.socket
munged --foreground --force --socket="$SOCKET" --key-file="$WORK/munge/munge.key" \
  --pid-file="$WORK/munge/munged.pid" --seed-file="$WORK/munge/munged.seed" \
  --log-file="$WORK/log/munged.log" >"$WORK/log/munged.out" 2>&1 &
PIDS+=($!)
for _ in $(seq 50); do
  [ -S "$SOCKET" ] && break
  kill -0 "${PIDS[0]}" 2>/dev/null || fail "munged exited"
  sleep 0.2
done
munge --socket="$SOCKET" --no-input | unmunge --socket="$SOCKET" >/dev/null ||
  fail "munged does not answer on $SOCKET"

NODE=$(hostname -s)
# `slurmd -C`: "NodeName=HOST CPUs=.. Boards=.. ... RealMemory=..".
HW=$(slurmd -C | head -1 | sed 's/^NodeName=[^ ]* //')
[ -n "$HW" ] || fail "slurmd -C reported no hardware"
CPUS=$(sed -n 's/.*CPUs=\([0-9]*\).*/\1/p' <<<"$HW")
cat >"$SLURM_CONF" <<EOF
# Written by scripts/slurm-ci.sh: one node, no cgroups, no accounting.
ClusterName=fedtopo-ci
SlurmctldHost=$NODE(127.0.0.1)
SlurmctldPort=$PORT
SlurmdPort=$((PORT + 1))
SlurmUser=$(id -un)
SlurmdUser=$(id -un)
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$SOCKET
StateSaveLocation=$WORK/state
SlurmdSpoolDir=$WORK/spool
SlurmctldPidFile=$WORK/slurmctld.pid
SlurmdPidFile=$WORK/slurmd.pid
SlurmctldLogFile=$WORK/log/slurmctld.log
SlurmdLogFile=$WORK/log/slurmd.log
MailProg=/bin/true
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SwitchType=switch/none
MpiDefault=none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
NodeName=$NODE NodeAddr=127.0.0.1 $HW State=UNKNOWN
PartitionName=ci Nodes=$NODE Default=YES MaxTime=INFINITE State=UP
EOF

phase "starting slurmctld and slurmd ($NODE: $HW)"
slurmctld -D -i -f "$SLURM_CONF" >"$WORK/log/slurmctld.out" 2>&1 &
CTLD_PID=$!
PIDS+=("$CTLD_PID")
slurmd -D -N "$NODE" -f "$SLURM_CONF" >"$WORK/log/slurmd.out" 2>&1 &
PIDS+=($!)
state=
for _ in $(seq 120); do
  for pid in "${PIDS[@]}"; do
    kill -0 "$pid" 2>/dev/null || fail "a Slurm daemon exited (pid $pid)"
  done
  state=$(sinfo -h -N -n "$NODE" -o %t 2>/dev/null || true)
  [ "$state" = idle ] && break
  sleep 0.5
done
[ "$state" = idle ] || fail "node $NODE not idle after 60 s (state: ${state:-no answer from slurmctld})"
phase "cluster up: $(sinfo -h -o '%P %a %D %t %N')"

# --- the sweep ----------------------------------------------------------------
EXP=$WORK/exp/experiment.toml
cat >"$EXP" <<'EOF'
# scripts/slurm-ci.sh: a small sweep (48 jobs, built-in underlays).
name = "slurm-ci"
description = "Event replay of four overlays, eq. (3) vs flow sharing, three access capacities."
kind = "simulate"

[grid]
underlay = ["aws-north-america", "aws-gaia"]
overlay = ["star", "mst", "delta-mbst", "ring"]
access = ["10G", "1G", "100M"]
core_capacity = ["1G"]
network = ["maxplus", "flow"]
rounds = [50]

[[plot]]
file = "steady.svg"
title = "steady round time"
x = "access"
y = "steady_round_ms"
series = "overlay,network"
log_x = true
log_y = true
EOF
JOBS=48

# The job inherits this environment (sbatch --export=ALL): fedtopo on PATH.
ln -s "$BIN" "$WORK/bin/fedtopo"
export PATH=$WORK/bin:$PATH

phase "single-process run"
"$BIN" run "$EXP" --out "$WORK/single" >"$WORK/log/single.out" 2>&1 ||
  { cat "$WORK/log/single.out" >&2; die "fedtopo run (single process) failed"; }
rows=$(($(wc -l <"$WORK/single/results.csv") - 1))
[ "$rows" = "$JOBS" ] || die "single run wrote $rows rows, expected $JOBS"

# sweep NAME ARRAY TASKS: one job array, its shards merged and compared.
sweep() {
  local name=$1 array=$2 tasks=$3 dir=$WORK/$1
  mkdir -p "$dir"
  phase "sbatch --array=$array --wait scripts/slurm-sweep.sh ($name)"
  if ! timeout "$TIMEOUT" sbatch --wait --quiet --array="$array" --cpus-per-task=1 \
    --job-name="fedtopo-$name" --chdir="$dir" --output="$WORK/log/$name-%A_%a.out" \
    "$ROOT/scripts/slurm-sweep.sh" "$EXP"; then
    squeue >&2 || true
    fail "job array $name failed or took more than $TIMEOUT s (FEDTOPO_SLURM_TIMEOUT)"
  fi
  local from=() total=0 n
  for ((i = 0; i < tasks; i++)); do
    [ -d "$dir/out/shard-$i/jobs" ] || fail "array $name: task $i wrote no $dir/out/shard-$i/jobs"
    n=$(find "$dir/out/shard-$i/jobs" -name '*.json' | wc -l)
    [ "$n" -gt 0 ] || fail "array $name: shard $i is empty"
    total=$((total + n))
    from+=(--from "$dir/out/shard-$i")
  done
  [ "$(find "$dir/out" -mindepth 1 -maxdepth 1 | wc -l)" = "$tasks" ] ||
    fail "array $name: expected $tasks shard directories in $dir/out"
  [ "$total" = "$JOBS" ] || fail "array $name: shards hold $total job results, expected $JOBS"
  fedtopo merge "$EXP" "${from[@]}" --out "$dir/merged" >"$WORK/log/$name-merge.out" 2>&1 ||
    { cat "$WORK/log/$name-merge.out" >&2; die "fedtopo merge ($name) failed"; }
  if ! diff -r "$WORK/single" "$dir/merged" >&2; then
    die "array $name: merged shards differ from the single-process run"
  fi
  echo "slurm-ci: $name: $tasks tasks, $total job results; merged == single process ($(find "$dir/merged" -type f | wc -l) files, diff -r)"
}

sweep zero-based 0-4 5
sweep one-based 1-3 3

phase "done ($SLURM_VERSION, node $NODE, $CPUS CPUs)"
