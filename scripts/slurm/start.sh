#!/usr/bin/env bash
# Starts a private single-node Slurm for make test-slurm (scripts/test-slurm.sh): a munged, a
# slurmctld and a slurmd of their own, every file of theirs (configuration, key, socket, spool,
# logs, pid files) under one folder, so a machine's own Slurm or munge, if it has one, is neither
# read nor changed. Run as root (slurmd starts the tasks as their users). Needs the packages of
# `scripts/install-deps.sh slurm` (Debian's slurmctld, slurmd, slurm-client, munge).
#
#   scripts/slurm/start.sh FOLDER     FOLDER: new or empty, e.g. from mktemp -d
#
# Prints `export SLURM_CONF=FOLDER/slurm.conf` on its last line: the clients (sbatch, squeue,
# scontrol, scancel) find this Slurm through it. The node is idle when it returns (about a second).
# scripts/slurm/stop.sh FOLDER stops the daemons by their recorded pids (after a failed start too).
#
# The configuration: one node (this host, its CPUs and memory as `slurmd -C` reports them, at
# 127.0.0.1 so an unresolvable hostname does not matter), one partition; ports from
# MIXFX_SLURM_PORT (default 6917, slurmd on the next one), not Slurm's usual 6817/6818;
# MIXFX_SLURM_CPUS (below) for a node with more CPUs than the host; processes tracked through
# /proc and no cgroups (works in a container); batch_sched_delay=0 (by default a batch task may
# wait up to 3 s to start); finished jobs stay known to scontrol for 10 minutes (MinJobAge;
# there is no accounting database, so no sacct).
set -euo pipefail
dir=${1:?usage: scripts/slurm/start.sh FOLDER}
[ "$(id -u)" -eq 0 ] || { echo "slurm/start.sh: run as root (slurmd starts jobs as their users)" >&2; exit 1; }
for c in munged mungekey slurmctld slurmd sinfo; do
  command -v "$c" >/dev/null || { echo "slurm/start.sh: '$c' is missing: scripts/install-deps.sh slurm installs it" >&2; exit 1; }
done
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
port=${MIXFX_SLURM_PORT:-6917}
for p in "$port" $((port + 1)); do
  if (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
    echo "slurm/start.sh: port $p is in use (another Slurm?); set MIXFX_SLURM_PORT to a free pair" >&2; exit 1
  fi
done
host=$(hostname -s)
chmod 755 "$dir"
mkdir -p "$dir/ctld" "$dir/spool" "$dir/log"

# munge: the key, seed, log and pid in a folder only munge reads; the socket in one everyone can
# reach (sbatch, slurmctld, slurmd connect to it). munged runs as the munge user.
install -d -o munge -g munge -m 700 "$dir/munge"
install -d -o munge -g munge -m 755 "$dir/munge-socket"
runuser -u munge -- mungekey --create --keyfile="$dir/munge/munge.key" --force
socket=$dir/munge-socket/munge.socket
runuser -u munge -- munged --socket="$socket" --key-file="$dir/munge/munge.key" \
    --pid-file="$dir/munge/munged.pid" --log-file="$dir/munge/munged.log" --seed-file="$dir/munge/munged.seed"
for _ in $(seq 50); do [ -S "$socket" ] && [ -s "$dir/munge/munged.pid" ] && break; sleep 0.1; done
cp "$dir/munge/munged.pid" "$dir/munged.pid"
munge --socket="$socket" -n | unmunge --socket="$socket" >/dev/null \
  || { echo "slurm/start.sh: munged does not answer on $socket (see $dir/munge/munged.log)" >&2; exit 1; }

# the node line as slurmd measures this host, under this host's short name, at 127.0.0.1;
# MIXFX_SLURM_CPUS=N declares N CPUs instead (more tasks at once than the host has cores:
# Slurm then places tasks by the declared count, config_overrides keeps it from draining the node)
node=$(slurmd -C | head -1 | sed "s/^NodeName=[^ ]*/NodeName=$host NodeAddr=127.0.0.1/")
overrides=""
if [ -n "${MIXFX_SLURM_CPUS:-}" ]; then
  node="NodeName=$host NodeAddr=127.0.0.1 CPUs=$MIXFX_SLURM_CPUS $(grep -o 'RealMemory=[0-9]*' <<<"$node")"
  overrides="SlurmdParameters=config_overrides"
fi
cat > "$dir/slurm.conf" <<CONF
ClusterName=mixfx-test
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$port
SlurmdPort=$((port + 1))
SlurmUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$socket
StateSaveLocation=$dir/ctld
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/backfill
SchedulerParameters=batch_sched_delay=0
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
MinJobAge=600
$overrides
$node State=UNKNOWN
PartitionName=test Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF=$dir/slurm.conf

# both daemons fork and write their pid files; -i: start without any saved state
slurmctld -i -f "$SLURM_CONF"
slurmd -f "$SLURM_CONF"
for f in slurmctld slurmd; do
  for _ in $(seq 50); do [ -s "$dir/$f.pid" ] && break; sleep 0.1; done
  [ -s "$dir/$f.pid" ] || { echo "slurm/start.sh: $f did not start (see $dir/log/$f.log)" >&2; exit 1; }
done
state=""
for _ in $(seq 100); do
  state=$(sinfo -h -n "$host" -o %T 2>/dev/null || true)
  [ "$state" = idle ] && break
  sleep 0.2
done
if [ "$state" != idle ]; then
  echo "slurm/start.sh: node $host is '$state', not idle after 20 s (see $dir/log/)" >&2; exit 1
fi
echo "slurm/start.sh: node $host idle ($(sed 's/^.* CPUs=\([0-9]*\).*/\1/' <<<"$node") CPUs); munged $(cat "$dir/munged.pid"), slurmctld $(cat "$dir/slurmctld.pid"), slurmd $(cat "$dir/slurmd.pid")" >&2
echo "export SLURM_CONF=$SLURM_CONF"
