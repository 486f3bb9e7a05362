#!/bin/sh
# A task of a test job (tests/slurm/run.sh): records what Slurm and the
# plugin gave it in $OUT/TAG.RANK.env, then runs the fake CUDA program,
# which launches until $OUT/TAG.stop exists and writes the TPCs its
# launches ran on to $OUT/TAG.RANK.state.
#
# Usage: task.sh TAG [ignore-term]   (ignore-term: the task ignores SIGTERM)
tag=$1
rank=${SLURM_PROCID:-0}
{
	echo "pid=$$"
	echo "uid=$(id -u)"
	echo "job=${SLURM_JOB_ID:-} step=${SLURM_STEP_ID:-}"
	env | grep -E '^(NVTASKSET_|LD_PRELOAD=|CUDA_|SLURM_SPANK_)' | sort
} >"$OUT/$tag.$rank.env.tmp"
mv "$OUT/$tag.$rank.env.tmp" "$OUT/$tag.$rank.env"
[ "${2:-}" = ignore-term ] && trap '' TERM
exec "$APP" loop "$OUT/$tag.stop" "$OUT/$tag.$rank.state"
