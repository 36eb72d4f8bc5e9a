#!/usr/bin/env bash
# Install and start a single-node Slurm (Debian 12, slurm-wlm 22.05) for tests/test_slurm.py.
# Run as root on a fresh machine; safe to run again (it rewrites the config and restarts the daemons).
#
# The configuration is tuned so the tests are quick:
#   - KillWait=10: SIGTERM -> SIGKILL after 10 s (the default 30 s would slow every time-limit test;
#     5 s left too little room on a loaded 2-core CI machine).
#   - OverTimeLimit=0: the job is killed as soon as its limit is seen to be exceeded.
#     slurmctld checks limits every 30 s (fixed), so a --time=1 job gets SIGTERM 60-90 s after start.
#   - AuthInfo=cred_expire=10: a job step credential lives 10 s (default 120, minimum 5), and a
#     requeued job is held that long plus 1 s (Reason=BeginTime) before it may run again: the
#     requeue tests wait 11 s instead of 2 minutes. A batch launch on this one node takes well
#     under a second, far inside those 10 s.
#   - SchedulerParameters=bf_interval=2,sched_interval=2: a job whose hold has passed starts
#     within 2 s, not at the next backfill pass (30 s) or main pass (60 s).
#   - CPUs = max(nproc, 8) with SlurmdParameters=config_overrides, so several 1-CPU test jobs
#     run side by side even on a 2-core CI machine.
#   - Three partitions on the one node: `debug` (Default; its jobs are never preempted),
#     `low` (PreemptMode=CANCEL) and `urgent` (PriorityTier=10). With
#     PreemptType=preempt/partition_prio, a job in `urgent` that lacks CPUs cancels jobs
#     in `low` (SIGTERM, KillWait, SIGKILL; final state PREEMPTED) and nothing else.
#   - MinJobAge=3600: finished jobs stay visible to `scontrol show job` for an hour: test_slurm.py
#     submits its timer-bound jobs as the suite starts and reads their records when its turn
#     comes, 10 minutes or more later on 2 cores.
#   - No slurmdbd: `sacct` has no accounting storage here (the code must survive that).
# Environment: SLURM_SETUP_WAIT_S (default 60) bounds the wait for the node to come up.
set -euo pipefail

WAIT_S=${SLURM_SETUP_WAIT_S:-60}
CONF_DIR=/etc/slurm
LOG_DIR=/var/log/slurm

die() { echo "slurm-setup: error: $*" >&2; exit 1; }
trap 'echo "slurm-setup: error: command failed at line $LINENO: $BASH_COMMAND" >&2' ERR

[ "$(id -u)" -eq 0 ] || die "must run as root"

install_packages() {
  if command -v slurmctld >/dev/null && command -v slurmd >/dev/null && command -v munged >/dev/null; then
    return
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq || die "apt-get update failed"
  apt-get install -y -qq slurm-wlm munge >/dev/null || die "apt-get install slurm-wlm munge failed"
}

write_config() {
  local host cpus mem_mb
  host=$(hostname -s)
  cpus=$(nproc)
  [ "$cpus" -ge 8 ] || cpus=8
  mem_mb=$(awk '/^MemTotal:/ {print int($2 / 1024 * 0.9)}' /proc/meminfo)
  mkdir -p "$CONF_DIR" "$LOG_DIR" /var/spool/slurmctld /var/spool/slurmd
  cat >"$CONF_DIR/slurm.conf" <<EOF
# Written by .ci/slurm-setup.sh: single-node test cluster.
ClusterName=gpualert
SlurmctldHost=$host
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=cred_expire=10
StateSaveLocation=/var/spool/slurmctld
SlurmdSpoolDir=/var/spool/slurmd
SlurmctldPidFile=/run/slurmctld.pid
SlurmdPidFile=/run/slurmd.pid
SlurmctldLogFile=$LOG_DIR/slurmctld.log
SlurmdLogFile=$LOG_DIR/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/backfill
SchedulerParameters=bf_interval=2,sched_interval=2
SlurmdParameters=config_overrides
ReturnToService=2
KillWait=10
OverTimeLimit=0
MinJobAge=3600
InactiveLimit=0
MpiDefault=none
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/filetxt
JobCompLoc=$LOG_DIR/jobcomp.log
PreemptType=preempt/partition_prio
PreemptMode=CANCEL
NodeName=$host CPUs=$cpus RealMemory=$mem_mb State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP PriorityTier=1 PreemptMode=OFF
PartitionName=low Nodes=$host MaxTime=INFINITE State=UP PriorityTier=1 PreemptMode=CANCEL
PartitionName=urgent Nodes=$host MaxTime=INFINITE State=UP PriorityTier=10 PreemptMode=OFF
EOF
  # Empty cgroup.conf keeps slurmd from complaining when it looks for one.
  [ -f "$CONF_DIR/cgroup.conf" ] || echo "CgroupAutomount=no" >"$CONF_DIR/cgroup.conf"
}

stop_pidfile() {
  local pidfile=$1 pid
  [ -f "$pidfile" ] || return 0
  pid=$(cat "$pidfile" 2>/dev/null || true)
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  fi
  rm -f "$pidfile"
}

start_munge() {
  [ -s /etc/munge/munge.key ] || { /usr/sbin/mungekey --create 2>/dev/null || \
    dd if=/dev/urandom of=/etc/munge/munge.key bs=1 count=1024 2>/dev/null; }
  chown munge:munge /etc/munge/munge.key && chmod 400 /etc/munge/munge.key
  mkdir -p /run/munge && chown munge:munge /run/munge
  if ! munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then
    runuser -u munge -- /usr/sbin/munged || die "munged did not start"
    sleep 1
    munge -n | unmunge >/dev/null || die "munge round trip failed"
  fi
}

start_slurm() {
  # apt starts the packaged units on a systemd machine; ours replace them
  if [ -d /run/systemd/system ] && command -v systemctl >/dev/null; then
    systemctl stop slurmd slurmctld 2>/dev/null || true
  fi
  stop_pidfile /run/slurmd.pid
  stop_pidfile /run/slurmctld.pid
  /usr/sbin/slurmctld || die "slurmctld did not start; see $LOG_DIR/slurmctld.log"
  /usr/sbin/slurmd || die "slurmd did not start; see $LOG_DIR/slurmd.log"
}

wait_idle() {
  local deadline=$((SECONDS + WAIT_S)) state=""
  while [ $SECONDS -lt $deadline ]; do
    state=$(timeout 5 sinfo -h -N -o %t 2>/dev/null | head -n 1 || true)
    case "$state" in
      idle|mix|alloc) echo "slurm-setup: node $(hostname -s) is $state"; return 0 ;;
      drain*|down*|inval*) timeout 5 scontrol update NodeName="$(hostname -s)" State=RESUME 2>/dev/null || true ;;
    esac
    sleep 1
  done
  echo "--- slurmctld.log ---" >&2; tail -n 20 "$LOG_DIR/slurmctld.log" >&2 || true
  echo "--- slurmd.log ---" >&2; tail -n 20 "$LOG_DIR/slurmd.log" >&2 || true
  die "node not idle after ${WAIT_S}s (last state: '${state:-none}')"
}

leave_marker() {
  # tests/test_slurm.py submits jobs only where this marker holds the checksum of the
  # slurm.conf written above: never into a cluster this script did not configure.
  sha256sum "$CONF_DIR/slurm.conf" | cut -d' ' -f1 >"$CONF_DIR/gpualert-ci-marker"
}

install_packages
write_config
start_munge
start_slurm
wait_idle
leave_marker
