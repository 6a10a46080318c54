#!/bin/bash
# One sweep over a Slurm job array: task i of n runs shard i/n; every shard writes its
# points into the same results folder (one file per point, written atomically), so tasks
# never collide, and a task that is requeued or rerun skips the points already done.
#
#   sbatch --array=0-63 strategies/presets/sweeps/slurm-array.sh strategies/presets/sweeps/gpu-vs-network.yaml results/
#   build/tools/dejavu sweep-merge results/ -o table.csv --plot heatmap.svg    # once all are done
#
# Run from the repository root; DEJAVU names another dejavu binary.
#
#SBATCH --job-name=dejavu-sweep
#SBATCH --cpus-per-task=2
#SBATCH --time=02:00:00
#SBATCH --output=dejavu-sweep-%A_%a.log
set -euo pipefail
sweep=${1:?usage: slurm-array.sh SWEEP.yaml RESULTS_DIR}
results=${2:?usage: slurm-array.sh SWEEP.yaml RESULTS_DIR}
shards=${SLURM_ARRAY_TASK_COUNT:-1}
shard=${SLURM_ARRAY_TASK_ID:-0}
# Task ids start at the array's minimum; shard numbers at 0.
shard=$((shard - ${SLURM_ARRAY_TASK_MIN:-0}))
exec "${DEJAVU:-build/tools/dejavu}" sweep "$sweep" --shard "$shard/$shards" --jobs "${SLURM_CPUS_PER_TASK:-1}" \
     -o "$results" --no-progress
