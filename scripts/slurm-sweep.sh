#!/usr/bin/env bash
# Example: spread an experiment over a Slurm job array, then merge.
#
#   sbatch --array=0-15 scripts/slurm-sweep.sh experiments/fig3-access-sweep/experiment.toml
#   # when all tasks are done (or submit with --wait):
#   fedtopo merge experiments/fig3-access-sweep/experiment.toml \
#     $(for d in out/shard-*; do printf -- '--from %s ' "$d"; done)
#
# Each array task runs the deterministic slice i/n of the grid into
# out/shard-i under the job's working directory (where sbatch was called,
# or its --chdir); give the experiment file as a path valid on the compute
# nodes (a shared file system) and have fedtopo on their PATH (sbatch
# passes the submitting shell's environment by default). Shard numbering:
# `fedtopo run --help`, option --shard; i is the task's position in the
# array, so --array=0-15, --array=1-16 and --array=0-30:2 all give shards
# 0..15 of 16. `fedtopo merge` joins them into results identical (byte for
# byte) to a single-machine run. Each task uses one CPU unless given more
# (`sbatch -c 4 ...` runs each shard on 4 threads). scripts/slurm-ci.sh
# checks all of this on a single-node cluster (run in CI).
# Kubernetes indexed jobs work the same way with JOB_COMPLETION_INDEX in
# place of SLURM_ARRAY_TASK_ID.
#SBATCH --job-name=fedtopo-sweep
#SBATCH --time=01:00:00
set -euo pipefail
experiment=${1:?usage: slurm-sweep.sh EXPERIMENT.toml}
task=${SLURM_ARRAY_TASK_ID:?run as a Slurm array task}
n=${SLURM_ARRAY_TASK_COUNT:?run as a Slurm array task}
offset=$((task - ${SLURM_ARRAY_TASK_MIN:-0}))
step=${SLURM_ARRAY_TASK_STEP:-1}
i=$((offset / step))
if [ $((offset % step)) != 0 ] || [ "$i" -ge "$n" ]; then
  echo "slurm-sweep.sh: task $task is not on the evenly spaced range" \
    "${SLURM_ARRAY_TASK_MIN:-0}..${SLURM_ARRAY_TASK_MAX:-?} step $step;" \
    "submit with --array=A-B or --array=A-B:STEP" >&2
  exit 2
fi
out=out/shard-$i
mkdir -p "$out"
fedtopo run "$experiment" --shard "$i/$n" --out "$out" --threads "${SLURM_CPUS_PER_TASK:-1}"
