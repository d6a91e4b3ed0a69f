#!/usr/bin/env bash
# Waits until no task of (array) job JOBID is queued or running, then prints one line per task,
# in task order:  TASK STATE EXITCODE  (e.g. `3 COMPLETED 0`, `5 CANCELLED 0`, `0 FAILED 2`).
# The states come from slurmctld's memory of finished jobs (MinJobAge in start.sh's
# configuration); there is no accounting database for sacct. Gives up after TIMEOUT seconds
# (default 120) with exit 1.
#
#   scripts/slurm/wait-job.sh JOBID [TIMEOUT]      (SLURM_CONF as start.sh printed it)
set -euo pipefail
id=${1:?usage: scripts/slurm/wait-job.sh JOBID [TIMEOUT]}
limit=${2:-120}
start=$SECONDS
while squeue -h -j "$id" -t PENDING,CONFIGURING,RUNNING,COMPLETING,REQUEUED,RESIZING,SUSPENDED 2>/dev/null | grep -q .; do
  if [ $((SECONDS - start)) -ge "$limit" ]; then
    echo "slurm/wait-job.sh: job $id still queued or running after $limit s" >&2; exit 1
  fi
  sleep 0.2
done
# scontrol -o: one line per task, with ArrayTaskId=, JobState= and ExitCode=STATUS:SIGNAL
scontrol -o show job "$id" | sed -n 's/.*ArrayTaskId=\([0-9]*\) .*JobState=\([A-Z_]*\) .*ExitCode=\([0-9]*\):\([0-9]*\).*/\1 \2 \3/p' | sort -n
