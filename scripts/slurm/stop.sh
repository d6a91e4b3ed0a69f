#!/usr/bin/env bash
# Stops the Slurm scripts/slurm/start.sh FOLDER started, by the pids it recorded in FOLDER (never
# by process name): first the jobs still queued or running (they would outlive slurmd), then
# slurmd, slurmctld and munged, each waited for (SIGKILL after 10 s). Then removes FOLDER unless
# MIXFX_SLURM_KEEP=1 (its log/ holds the daemons' logs).
#
#   scripts/slurm/stop.sh FOLDER
set -uo pipefail
dir=${1:?usage: scripts/slurm/stop.sh FOLDER}
[ -d "$dir" ] || exit 0
export SLURM_CONF=$dir/slurm.conf

alive() { [ -s "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

if alive "$dir/slurmctld.pid" && command -v scancel >/dev/null; then
  scancel --full --quiet --partition=test 2>/dev/null || true
  for _ in $(seq 50); do [ -z "$(squeue -h 2>/dev/null)" ] && break; sleep 0.2; done
fi
stop() {  # name pidfile
  local pid
  [ -s "$2" ] || return 0
  pid=$(cat "$2")
  if kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid"
    for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    if kill -0 "$pid" 2>/dev/null; then
      echo "slurm/stop.sh: $1 ($pid) still running after 10 s: SIGKILL" >&2
      kill -KILL "$pid"
    fi
  fi
  rm -f "$2"
}
stop slurmd "$dir/slurmd.pid"
stop slurmctld "$dir/slurmctld.pid"
stop munged "$dir/munged.pid"
if [ "${MIXFX_SLURM_KEEP:-0}" = 1 ]; then
  echo "slurm/stop.sh: stopped; logs kept in $dir/log" >&2
else
  rm -rf "$dir"
fi
