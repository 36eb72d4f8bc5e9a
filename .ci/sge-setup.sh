#!/usr/bin/env bash
# Install and start a single-node Son of Grid Engine (Debian 12, gridengine 8.1.9) for
# tests/test_sge.py. Run as root on a fresh machine; safe to run again (it rewrites the
# configuration and restarts the daemons).
#
# Gotchas this script handles (found by hand):
#   - debconf must be preseeded (master host, "configure automatically", cell `default`)
#     before the packages install, or the postinst leaves no cell behind.
#   - the qmaster resolves 127.0.0.1 as `localhost`, so the host's own name and `localhost`
#     are made one host in common/host_aliases, and act_qmaster names the host.
#   - jobs run as root here: the global configuration needs min_uid 0 and min_gid 0.
#   - the default queue template names an `smp` parallel environment that does not exist:
#     all.q gets pe_list NONE.
#   - sge_execd must be restarted after the configuration changes, and an error state
#     left by an earlier attempt is cleared with `qmod -cq all.q`.
# Tuned so the tests are quick:
#   - schedule_interval 1 s, flush_submit_sec/flush_finish_sec 1: jobs start within ~2 s.
#   - load_report_time 5 s; the queue's `notify` is 5 s (SIGUSR2 -> SIGKILL for -notify jobs).
#   - accounting on, flushed at once, so `qacct -j` sees a job as soon as it ends.
# Leaves $SGE_ROOT/$SGE_CELL/gpualert-ci-marker: tests submit only into an SGE that has it.
# Environment: SGE_SETUP_WAIT_S (default 60) bounds the wait for the queue to come up.
set -euo pipefail

WAIT_S=${SGE_SETUP_WAIT_S:-60}
export SGE_ROOT=/var/lib/gridengine SGE_CELL=default
COMMON=$SGE_ROOT/$SGE_CELL/common
MARKER=$SGE_ROOT/$SGE_CELL/gpualert-ci-marker
WORK=$(mktemp -d /tmp/sge-setup.XXXXXX)
HOST=$(hostname)

die() { echo "sge-setup: error: $*" >&2; exit 1; }
trap 'echo "sge-setup: error: command failed at line $LINENO: $BASH_COMMAND" >&2' ERR
trap 'rm -rf "$WORK"' EXIT

[ "$(id -u)" -eq 0 ] || die "must run as root"

# gridengine-common depends on a mailx, and bsd-mailx on some mail transport agent: apt
# would pull in exim4 and with it /usr/sbin/sendmail, which changes what gpualert does on
# this machine (and what other tests see). SGE's own job mails (qsub -m) are not used
# here, so where no MTA is installed a tiny local package stands in for one. Installing a
# real MTA later (postfix, exim4) replaces it: they conflict with mail-transport-agent.
install_mta_placeholder() {
  dpkg-query -W -f '${Provides}\n' 2>/dev/null | grep -q 'mail-transport-agent' && return 0
  local d=$WORK/mta-placeholder
  mkdir -p "$d/DEBIAN"
  printf '%s\n' "Package: gpualert-ci-no-mta" "Version: 1.0" "Architecture: all" \
    "Maintainer: gpualert CI <root@localhost>" "Provides: mail-transport-agent" \
    "Description: stands in for a mail transport agent so gridengine installs without one" \
    " Written by .ci/sge-setup.sh. It installs no files." >"$d/DEBIAN/control"
  dpkg-deb --build "$d" "$WORK/gpualert-ci-no-mta.deb" >/dev/null
  apt-get -o DPkg::Lock::Timeout=900 install -y -qq "$WORK/gpualert-ci-no-mta.deb" >/dev/null \
    || die "cannot install the MTA placeholder"
}

install_packages() {
  if command -v qsub >/dev/null && [ -x /usr/sbin/sge_qmaster ] && [ -x /usr/sbin/sge_execd ] \
     && [ -f "$COMMON/bootstrap" ]; then
    return
  fi
  local pkg
  for pkg in gridengine-common gridengine-client gridengine-master; do
    debconf-set-selections <<EOF
$pkg shared/gridenginemaster string $HOST
$pkg shared/gridengineconfig boolean true
$pkg shared/gridenginecell string default
EOF
  done
  export DEBIAN_FRONTEND=noninteractive
  install_mta_placeholder
  # Other setup scripts may be installing at the same time: wait for the dpkg lock.
  apt-get -o DPkg::Lock::Timeout=900 update -qq || die "apt-get update failed"
  apt-get -o DPkg::Lock::Timeout=900 install -y -qq --no-install-recommends \
    gridengine-master gridengine-exec gridengine-client >/dev/null \
    || die "apt-get install gridengine-master gridengine-exec gridengine-client failed"
  [ -f "$COMMON/bootstrap" ] || die "no cell in $COMMON after install (debconf preseed not taken?)"
}

write_host_files() {
  # First name is the one SGE uses; `localhost` becomes an alias of it.
  [ "$HOST" = localhost ] || echo "$HOST localhost" >"$COMMON/host_aliases"
  echo "$HOST" >"$COMMON/act_qmaster"
  mkdir -p /var/run/gridengine && chown sgeadmin:sgeadmin /var/run/gridengine
}

# By the pid the daemon wrote (ours, or the packaged init script's: same file), only if
# that pid is still the named daemon.
stop_daemon() {
  local name=$1 pidfile pid; shift
  for pidfile in "$@"; do
    pid=$(cat "$pidfile" 2>/dev/null || true)
    if [ -n "$pid" ] && [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = "$name" ]; then
      kill "$pid" 2>/dev/null || true
      for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
      kill -9 "$pid" 2>/dev/null || true
    fi
    rm -f "$pidfile"
  done
}

start_qmaster() {
  # sge_qmaster writes its pid into its spool directory; the init script's file is in /run
  stop_daemon sge_qmaster /var/run/gridengine/qmaster.pid /var/spool/gridengine/qmaster/qmaster.pid
  SGE_MASTER_PIDFILE=/var/run/gridengine/qmaster.pid /usr/sbin/sge_qmaster \
    || die "sge_qmaster did not start; see /var/spool/gridengine/qmaster/messages"
  local deadline=$((SECONDS + WAIT_S))
  until timeout 5 qconf -sh >/dev/null 2>&1; do
    [ $SECONDS -lt $deadline ] || die "qmaster does not answer after ${WAIT_S}s"
    sleep 1
  done
}

# `qconf -sX` output -> sed edits -> `qconf -MX file`: no editor involved.
modify_object() {
  local show=$1 modify=$2 file=$3; shift 3
  timeout 10 qconf "$show" >"$file"
  local expr
  for expr in "$@"; do sed -i -E "$expr" "$file"; done
  timeout 10 qconf "$modify" "$file" >/dev/null
}

configure_cluster() {
  modify_object -sconf -Mconf "$WORK/global" \
    's/^(min_uid|min_gid)( +).*/\1\20/' \
    's/^load_report_time( +).*/load_report_time\100:00:05/' \
    '/^reporting_params/,/^[a-z_]+ /{/^ +/d}' \
    's/^reporting_params( +).*/reporting_params\1accounting=true reporting=false flush_time=00:00:01 joblog=false sharelog=00:00:00 accounting_flush_time=00:00:00/'
  modify_object -ssconf -Msconf "$WORK/sched" \
    's/^schedule_interval( +).*/schedule_interval\10:0:1/' \
    's/^flush_submit_sec( +).*/flush_submit_sec\11/' \
    's/^flush_finish_sec( +).*/flush_finish_sec\11/'
  timeout 10 qconf -sh | grep -qx "$HOST" || timeout 10 qconf -ah "$HOST" >/dev/null
  timeout 10 qconf -ss 2>/dev/null | grep -qx "$HOST" || timeout 10 qconf -as "$HOST" >/dev/null
  if ! timeout 10 qconf -se "$HOST" >/dev/null 2>&1; then
    printf 'hostname %s\nload_scaling NONE\ncomplex_values NONE\nuser_lists NONE\nxuser_lists NONE\nprojects NONE\nxprojects NONE\nusage_scaling NONE\nreport_variables NONE\n' \
      "$HOST" >"$WORK/exechost"
    timeout 10 qconf -Ae "$WORK/exechost" >/dev/null
  fi
  printf 'group_name @allhosts\nhostlist %s\n' "$HOST" >"$WORK/hostgroup"
  if timeout 10 qconf -shgrp @allhosts >/dev/null 2>&1; then
    timeout 10 qconf -Mhgrp "$WORK/hostgroup" >/dev/null
  else
    timeout 10 qconf -Ahgrp "$WORK/hostgroup" >/dev/null
  fi
  write_queue
}

write_queue() {
  local slots
  slots=$(nproc)
  [ "$slots" -ge 8 ] || slots=8
  timeout 10 qconf -sq >"$WORK/queue"   # the template
  sed -i -E \
    -e 's/^qname( +).*/qname\1all.q/' \
    -e 's/^hostlist( +).*/hostlist\1@allhosts/' \
    -e "s/^slots( +).*/slots\1$slots/" \
    -e 's/^pe_list( +).*/pe_list\1NONE/' \
    -e 's/^notify( +).*/notify\100:00:05/' \
    -e 's/^load_thresholds( +).*/load_thresholds\1NONE/' \
    -e 's#^shell( +).*#shell\1/bin/sh#' \
    "$WORK/queue"
  if timeout 10 qconf -sq all.q >/dev/null 2>&1; then
    timeout 10 qconf -Mq "$WORK/queue" >/dev/null
  else
    timeout 10 qconf -Aq "$WORK/queue" >/dev/null
  fi
}

start_execd() {
  stop_daemon sge_execd /var/run/gridengine/execd.pid "/var/spool/gridengine/execd/$HOST/execd.pid" \
    /var/spool/gridengine/execd/localhost/execd.pid
  mkdir -p /var/spool/gridengine/execd && chown sgeadmin:sgeadmin /var/spool/gridengine/execd
  SGE_EXECD_PIDFILE=/var/run/gridengine/execd.pid /usr/sbin/sge_execd \
    || die "sge_execd did not start; see /var/spool/gridengine/execd/$HOST/messages"
}

wait_queue() {
  local deadline=$((SECONDS + WAIT_S)) state=""
  while [ $SECONDS -lt $deadline ]; do
    timeout 10 qmod -cq all.q >/dev/null 2>&1 || true
    # One line per queue instance; the state column is empty when the instance is usable.
    state=$(timeout 10 qstat -f -q all.q 2>/dev/null | awk -v h="all.q@$HOST" '$1 == h {print ($6 == "" ? "ok" : $6)}')
    if [ "$state" = ok ]; then
      echo "sge-setup: queue all.q@$HOST is up"
      return 0
    fi
    sleep 1
  done
  echo "--- qstat -f ---" >&2; timeout 10 qstat -f >&2 || true
  echo "--- execd messages ---" >&2
  tail -n 20 "/var/spool/gridengine/execd/$HOST/messages" >&2 || true
  die "queue all.q@$HOST not usable after ${WAIT_S}s (state: '${state:-none}')"
}

rm -f "$MARKER"  # written again only once this run has succeeded
install_packages
write_host_files
start_qmaster
configure_cluster
start_execd
wait_queue
echo "written by .ci/sge-setup.sh; tests/test_sge.py submits jobs only where this file is" >"$MARKER"
