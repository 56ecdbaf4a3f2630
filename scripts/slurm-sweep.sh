#!/usr/bin/env bash
# Example: spread an experiment over a Slurm job array, then merge.
#
#   sbatch --array=0-15 scripts/slurm-sweep.sh experiments/fig3-access-sweep/experiment.toml
#   # when all tasks are done:
#   fedtopo merge experiments/fig3-access-sweep/experiment.toml --from out/shard-*
#
# Each array task runs the deterministic slice i/n of the grid into its own
# directory (shard numbering: `fedtopo run --help`, option --shard; i is
# the task's offset in the array, so --array=0-15 and --array=1-16 both work); `fedtopo merge` joins them into results identical (byte for
# byte) to a single-machine run. Kubernetes indexed jobs work the same way
# with JOB_COMPLETION_INDEX in place of SLURM_ARRAY_TASK_ID.
#SBATCH --job-name=fedtopo-sweep
#SBATCH --cpus-per-task=4
#SBATCH --time=01:00:00
set -euo pipefail
experiment=${1:?usage: slurm-sweep.sh EXPERIMENT.toml}
task=${SLURM_ARRAY_TASK_ID:?run as a Slurm array task}
i=$((task - ${SLURM_ARRAY_TASK_MIN:-0}))
n=${SLURM_ARRAY_TASK_COUNT:?run as a Slurm array task}
out=out/shard-$i
mkdir -p "$out"
fedtopo run "$experiment" --shard "$i/$n" --out "$out" --threads "${SLURM_CPUS_PER_TASK:-1}"
