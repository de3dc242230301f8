#!/usr/bin/env bash
# A real single-node Slurm cluster (munged, slurmctld, slurmd; optionally slurmdbd + MariaDB)
# on this Debian host, for the Slurm executor's tests and CI. No systemd needed. Needs root
# (another user's start, stop, restart and status run through password-less sudo).
#
#   slurm-cluster.sh start [--state-dir DIR] [--cgroup auto|yes|no] [--accounting]
#       Install the Debian packages if missing, write the config, start the daemons and wait
#       until the node is idle. Prints `export` lines: eval "$(slurm-cluster.sh start)".
#       A no-op (prints the same lines) when the cluster already runs; an error if it runs with
#       a different --accounting or --cgroup than one given explicitly.
#   slurm-cluster.sh stop [--state-dir DIR] [--keep-jobs] [--purge]
#       Cancel every job (unless --keep-jobs), stop the daemons this script started. --purge
#       also removes DIR (job state, logs, database) and the /etc/slurm/slurm.conf link.
#   slurm-cluster.sh restart [--state-dir DIR]
#       stop --keep-jobs, then start with the same config: running and finished jobs survive
#       (StateSaveLocation), as on a real cluster.
#   slurm-cluster.sh status [--state-dir DIR]   what runs; exit 0 only if the cluster is up.
#   slurm-cluster.sh env [--state-dir DIR]      the `export` lines only.
#
# --cgroup: yes = proctrack/cgroup + task/cgroup (cgroup v1): a job over --mem ends as
#   OUT_OF_MEMORY and scancel kills every process of the job. no = proctrack/linuxproc +
#   task/none + jobacct_gather OverMemoryKill: a job over --mem is killed within ~1 s but ends
#   as FAILED (ExitCode 0:9), and processes that double-fork away from the job survive scancel.
#   auto (default) = yes when a writable cgroup v1 memory and freezer hierarchy is mounted.
# --accounting: also install and run MariaDB + slurmdbd, so sacct works (adds ~30 s the first
#   time). Without it sacct has no data; use squeue/scontrol (finished jobs stay MinJobAge s).
#
# DIR: $SCIMCP_SLURM_DIR, else /var/lib/scimcp-slurm. It holds etc/ (slurm.conf …), the saved
# controller state, slurmd's spool, pid files, logs (DIR/log/*.log) and the database.
# Env: SCIMCP_SLURM_TIMEOUT   seconds to wait for daemons and the idle node (default 90)
#      SCIMCP_SLURM_CPUS      CPUs of the node (default nproc; more oversubscribes the host)
#      SCIMCP_SLURM_MIN_JOB_AGE  seconds a finished job stays in squeue/scontrol (default 3600)
#      SCIMCP_SLURM_TEST_USER a non-root user created for jobs (default scimcp; "" for none)
#      SCIMCP_SLURM_CGROUP, SCIMCP_SLURM_ACCOUNTING=1  defaults for --cgroup, --accounting
# Partitions: debug (Default, MaxTime 1:00:00, DefaultTime 10 min) and short (MaxTime 0:05:00,
# at most 1 CPU and 1024M per node). Ports: 6817 (slurmctld), 6818 (slurmd), 6819 (slurmdbd).
set -euo pipefail

prog=slurm-cluster
die() { echo "$prog: error: $*" >&2; exit 1; }
say() { echo "$prog: $*" >&2; }
usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; }

cmd=${1:-help}
[ $# -gt 0 ] && shift
args=("$@")   # as given, for the run through sudo
state_dir=${SCIMCP_SLURM_DIR:-/var/lib/scimcp-slurm}
cgroup=${SCIMCP_SLURM_CGROUP:-auto}
accounting=${SCIMCP_SLURM_ACCOUNTING:-}   # empty: as running, else 0
keep_jobs=0
keep_conf=0
purge=0
while [ $# -gt 0 ]; do
  case $1 in
    --state-dir) [ $# -ge 2 ] || die "--state-dir needs a value"; state_dir=$2; shift 2 ;;
    --state-dir=*) state_dir=${1#*=}; shift ;;
    --cgroup) [ $# -ge 2 ] || die "--cgroup needs auto, yes or no"; cgroup=$2; shift 2 ;;
    --cgroup=*) cgroup=${1#*=}; shift ;;
    --accounting) accounting=1; shift ;;
    --keep-jobs) keep_jobs=1; shift ;;
    --purge) purge=1; shift ;;
    -h|--help) usage; exit 0 ;;
    *) die "unknown argument: $1 (try --help)" ;;
  esac
done
case $cgroup in auto|yes|no) ;; *) die "--cgroup must be auto, yes or no (got '$cgroup')" ;; esac
case $accounting in ""|0|1) ;; *) die "SCIMCP_SLURM_ACCOUNTING must be 0 or 1" ;; esac
case $state_dir in /*) ;; *) state_dir=$PWD/$state_dir ;; esac
state_dir=${state_dir%/}

timeout=${SCIMCP_SLURM_TIMEOUT:-90}
min_job_age=${SCIMCP_SLURM_MIN_JOB_AGE:-3600}
test_user=${SCIMCP_SLURM_TEST_USER-scimcp}
etc=$state_dir/etc
conf=$etc/slurm.conf
run=$state_dir/run
logs=$state_dir/log
node=$(hostname -s)
munge_socket=/run/munge/munge.socket.2
mysql_socket=/run/mysqld/mysqld.sock

# --- helpers ---------------------------------------------------------------------------------

# running PID: the process exists and is not a zombie (PID 1 may be slow to reap them).
running() {
  local st
  st=$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null) || return 1
  [ -n "$st" ] && [ "$st" != Z ] && [ "$st" != X ]
}

# pid_alive NAME: the pid in $run/NAME.pid is a live process whose executable is /usr/sbin/NAME*
# (slurmctld is a link to slurmctld-wlm, mariadbd may show as mysqld).
pid_alive() {
  local f=$run/$1.pid pid exe
  [ -s "$f" ] || return 1
  pid=$(cat "$f")
  [[ $pid =~ ^[0-9]+$ ]] || return 1
  exe=$(readlink "/proc/$pid/exe" 2>/dev/null) || return 1
  case $1 in
    mariadbd) [[ $exe == /usr/sbin/mariadbd* || $exe == /usr/sbin/mysqld* ]] ;;
    *) [[ $exe == "/usr/sbin/$1"* ]] ;;
  esac
}

munge_works() { munge -n -S "$munge_socket" 2>/dev/null | unmunge -S "$munge_socket" >/dev/null 2>&1; }

# Slurm's client tools, pointed at this cluster's config.
sl() { SLURM_CONF=$conf "$@"; }

node_state() { sl sinfo -h -n "$node" -o '%t' 2>/dev/null | head -n1; }

# Settings of the written config (so `env` and a second `start` report what actually runs).
conf_cgroup() { grep -q '^ProctrackType=proctrack/cgroup' "$conf" 2>/dev/null && echo yes || echo no; }
conf_accounting() { grep -q '^AccountingStorageType=accounting_storage/slurmdbd' "$conf" 2>/dev/null && echo 1 || echo 0; }

show_logs() {
  local f
  for f in "$logs"/*.log /var/log/munge/munged.log; do
    [ -f "$f" ] || continue
    case $f in */jobcomp.log) continue ;; esac
    echo "----- last lines of $f -----" >&2
    tail -n 25 "$f" >&2
  done
}

# Daemons this `start` launched; if it fails they are stopped again (see stop_started).
started=()

# wait_for WHAT COMMAND...: retry COMMAND every 0.2 s for up to $timeout seconds.
wait_for() {
  local what=$1 deadline=$((SECONDS + timeout))
  shift
  until "$@" >/dev/null 2>&1; do
    if [ $SECONDS -ge "$deadline" ]; then
      show_logs
      die "$what not ready after ${timeout}s"
    fi
    sleep 0.2
  done
}

print_env() {
  printf "export SLURM_CONF='%s'\n" "$conf"
  printf "export SCIMCP_SLURM_DIR='%s'\n" "$state_dir"
  printf "export SCIMCP_SLURM_NODE='%s'\n" "$node"
  printf "export SCIMCP_SLURM_PARTITION='debug'\n"
  printf "export SCIMCP_SLURM_CGROUP='%s'\n" "$(conf_cgroup)"
  printf "export SCIMCP_SLURM_ACCOUNTING='%s'\n" "$(conf_accounting)"
  if [ -n "$test_user" ]; then printf "export SCIMCP_SLURM_TEST_USER='%s'\n" "$test_user"; fi
}

# --- start -----------------------------------------------------------------------------------

install_packages() {
  local missing=() p log
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  say "installing ${missing[*]} (apt)"
  log=$(mktemp)
  # The packages' scripts would start munged, slurmctld and slurmd (systemd or init.d) with
  # Debian's own configuration, on the ports this script's daemons need: a policy-rc.d that
  # refuses every start keeps them stopped (container images usually have one already).
  local policy=/usr/sbin/policy-rc.d added_policy=0 ok=1
  if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\n# slurm-cluster.sh: no service starts while it installs packages.\nexit 101\n' >"$policy"
    chmod 755 "$policy"
    added_policy=1
  fi
  { DEBIAN_FRONTEND=noninteractive apt-get update -qq &&
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"; } >"$log" 2>&1 || ok=0
  [ "$added_policy" = 0 ] || rm -f "$policy"
  if [ "$ok" = 0 ]; then
    cat "$log" >&2
    rm -f "$log"
    die "apt-get install ${missing[*]} failed"
  fi
  rm -f "$log"
}

ensure_test_user() {
  [ -n "$test_user" ] || return 0
  id -u "$test_user" >/dev/null 2>&1 && return 0
  say "creating user $test_user (to run jobs as a non-root user)"
  useradd --create-home --shell /bin/bash "$test_user"
}

# A writable cgroup v1 memory and freezer hierarchy (what proctrack/task cgroup v1 need).
cgroup_v1_usable() {
  local c d
  for c in memory freezer; do
    d=/sys/fs/cgroup/$c
    grep -qs " $d cgroup .*\b$c\b" /proc/mounts || return 1
    mkdir "$d/scimcp-probe.$$" 2>/dev/null || return 1
    rmdir "$d/scimcp-probe.$$"
  done
}

write_conf() {
  local cpus overrides mem_kib mem_mib margin real_mem use_cg tmp
  cpus=${SCIMCP_SLURM_CPUS:-$(nproc)}
  mem_kib=$(awk '/^MemTotal:/ {print $2}' /proc/meminfo)
  mem_mib=$((mem_kib / 1024))
  margin=$((mem_mib / 20)); [ "$margin" -lt 512 ] && margin=512   # 5 %, at least 512 MiB
  real_mem=$((mem_mib - margin))
  # More CPUs than the host has (to run more 1-CPU test jobs at once) needs config_overrides.
  overrides="# CPUs = nproc"
  [ "$cpus" -gt "$(nproc)" ] && overrides="SlurmdParameters=config_overrides"
  use_cg=$cgroup
  if [ "$use_cg" = auto ]; then
    if cgroup_v1_usable; then use_cg=yes; else use_cg=no; fi
  elif [ "$use_cg" = yes ] && ! cgroup_v1_usable; then
    die "--cgroup yes: no writable cgroup v1 memory+freezer hierarchy under /sys/fs/cgroup"
  fi
  mkdir -p "$etc" "$state_dir/ctld" "$state_dir/spool" "$run" "$logs"
  chmod 755 "$state_dir" "$etc" "$logs"

  local tracking accounting_lines
  if [ "$use_cg" = yes ]; then
    tracking="# cgroup v1: memory limited by the kernel (OUT_OF_MEMORY), processes tracked by cgroup.
ProctrackType=proctrack/cgroup
TaskPlugin=task/cgroup
JobAcctGatherType=jobacct_gather/cgroup
JobAcctGatherFrequency=task=5"
    cat >"$etc/cgroup.conf" <<EOF
CgroupPlugin=cgroup/v1
CgroupMountpoint=/sys/fs/cgroup
ConstrainCores=no
ConstrainRAMSpace=yes
ConstrainSwapSpace=no
EOF
  else
    tracking="# No cgroups: processes tracked by parent pid; memory sampled every second and a step
# over its --mem killed (it ends FAILED, ExitCode 0:9, not OUT_OF_MEMORY).
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/linux
JobAcctGatherFrequency=task=1
JobAcctGatherParams=OverMemoryKill"
    rm -f "$etc/cgroup.conf"
  fi
  if [ "$accounting" = 1 ]; then
    accounting_lines="AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=localhost
AccountingStoragePort=6819"
  else
    accounting_lines="# No slurmdbd: sacct has no data (\"Slurm accounting storage is disabled\").
AccountingStorageType=accounting_storage/none"
  fi

  tmp=$conf.tmp
  cat >"$tmp" <<EOF
# Written by slurm-cluster.sh at each start while the cluster is stopped.
ClusterName=scimcp
SlurmctldHost=$node(127.0.0.1)
SlurmUser=root
SlurmdUser=root
SlurmctldPort=6817
SlurmdPort=6818
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$munge_socket
StateSaveLocation=$state_dir/ctld
SlurmdSpoolDir=$state_dir/spool
SlurmctldPidFile=$run/slurmctld.pid
SlurmdPidFile=$run/slurmd.pid
SlurmctldLogFile=$logs/slurmctld.log
SlurmdLogFile=$logs/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
MpiDefault=none
MailProg=/bin/true
$tracking
# Cores and memory are both consumable, so --mem is scheduled; a job without --mem gets
# DefMemPerCPU per CPU (without it a job would take the whole node's memory).
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
DefMemPerCPU=512
$accounting_lines
# Finished jobs are also appended here (sacct -c cannot read it once it has array jobs).
JobCompType=jobcomp/filetxt
JobCompLoc=$logs/jobcomp.log
# Fast turnaround for tests; finished jobs stay in squeue -t all / scontrol for MinJobAge s.
SchedulerType=sched/backfill
SchedulerParameters=sched_interval=2,bf_interval=2,sched_min_interval=100000
MinJobAge=$min_job_age
KillWait=5
OverTimeLimit=0
InactiveLimit=0
MessageTimeout=10
SlurmctldTimeout=30
SlurmdTimeout=60
# A node set DOWN comes back by itself when slurmd registers again.
ReturnToService=2
# A job on a failed node ends as NODE_FAIL instead of being requeued (sbatch --requeue still can).
JobRequeue=0
# Requests over a partition's limits are refused by sbatch instead of pending forever.
EnforcePartLimits=ALL
$overrides
NodeName=$node NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$real_mem State=UNKNOWN
PartitionName=debug Nodes=$node Default=YES MaxTime=01:00:00 DefaultTime=00:10:00 State=UP
PartitionName=short Nodes=$node MaxTime=00:05:00 DefaultTime=00:01:00 MaxCPUsPerNode=1 MaxMemPerNode=1024 State=UP
EOF
  mv "$tmp" "$conf"
  chmod 644 "$conf"
  if [ -n "$test_user" ] && ! runuser -u "$test_user" -- test -r "$conf"; then
    say "warning: $test_user cannot read $conf: non-root sbatch and jobs will fail (pick a --state-dir outside private directories)"
  fi

  if [ "$accounting" = 1 ]; then
    # slurmdbd reads slurmdbd.conf next to $SLURM_CONF; it must be private to SlurmUser.
    (umask 077 && cat >"$etc/slurmdbd.conf" <<EOF
AuthType=auth/munge
AuthInfo=socket=$munge_socket
DbdHost=localhost
DbdAddr=127.0.0.1
DbdPort=6819
SlurmUser=root
StorageType=accounting_storage/mysql
StorageHost=localhost
StorageUser=root
StorageLoc=slurm_acct_db
PidFile=$run/slurmdbd.pid
LogFile=$logs/slurmdbd.log
DebugLevel=info
EOF
    )
  else
    rm -f "$etc/slurmdbd.conf"
  fi

  # Plain `sinfo` (no SLURM_CONF) works too, unless the host has a Slurm config of its own
  # (a file, or a link to another live cluster's config).
  if [ -d /etc/slurm ] && [ ! -e /etc/slurm/slurm.conf ]; then
    ln -sfn "$conf" /etc/slurm/slurm.conf
  fi
}

start_munge() {
  if munge_works; then
    pid_alive munged || say "munged already running (not started here; stop leaves it)"
    return 0
  fi
  if [ ! -s /etc/munge/munge.key ]; then
    say "creating /etc/munge/munge.key"
    mungekey --create --keyfile=/etc/munge/munge.key
  fi
  chown munge:munge /etc/munge /etc/munge/munge.key
  chmod 700 /etc/munge
  chmod 400 /etc/munge/munge.key
  install -d -o munge -g munge -m 755 /run/munge
  install -d -o munge -g munge -m 700 /var/log/munge
  install -d -o munge -g munge -m 711 /var/lib/munge
  rm -f "$run/munged.pid"
  runuser -u munge -- /usr/sbin/munged --socket="$munge_socket" --pid-file=/run/munge/munged.pid 9>&-
  cp /run/munge/munged.pid "$run/munged.pid"
  started+=(munged)
  wait_for "munged (socket $munge_socket)" munge_works
}

mysql_ping() { mariadb-admin --socket="$mysql_socket" ping; }

start_mariadb() {
  local db=$state_dir/db
  pid_alive mariadbd && return 0
  if mysql_ping >/dev/null 2>&1; then
    die "a MariaDB/MySQL server not started by this script already listens on $mysql_socket"
  fi
  if [ ! -d "$db/mysql" ]; then
    say "initialising MariaDB in $db"
    mkdir -p "$db"
    mariadb-install-db --datadir="$db" --user=root --auth-root-authentication-method=socket \
      --skip-test-db >"$logs/mariadb-install.log" 2>&1 ||
      { cat "$logs/mariadb-install.log" >&2; die "mariadb-install-db failed"; }
  fi
  install -d -m 755 "$(dirname "$mysql_socket")"
  rm -f "$run/mariadbd.pid"
  # Its own process group and no terminal: it does not daemonize by itself.
  setsid /usr/sbin/mariadbd --user=root --datadir="$db" --socket="$mysql_socket" \
    --pid-file="$run/mariadbd.pid" --skip-networking --log-error="$logs/mariadb.log" \
    </dev/null >/dev/null 2>&1 9>&- &
  started+=(mariadbd)
  wait_for "mariadbd (socket $mysql_socket)" mysql_ping
  wait_for "mariadbd pid file" pid_alive mariadbd
}

start_slurmdbd() {
  pid_alive slurmdbd && return 0
  rm -f "$run/slurmdbd.pid"
  sl /usr/sbin/slurmdbd 9>&- || { show_logs; die "slurmdbd failed to start"; }
  started+=(slurmdbd)
  wait_for slurmdbd sl sacctmgr -n list cluster
}

start_daemon() { # NAME
  local name=$1
  pid_alive "$name" && return 0
  rm -f "$run/$name.pid"
  "/usr/sbin/$name" -f "$conf" 9>&- || { show_logs; die "$name failed to start"; }
  started+=("$name")
  wait_for "$name pid file" pid_alive "$name"
}

# On the way out of a failed start: stop, newest first, every daemon it launched, so a failure
# leaves nothing running that was not running before (`stop` would also stop daemons an
# earlier start left, which may be in use).
stop_started() {
  local rc=$? i
  [ "$rc" -ne 0 ] && [ ${#started[@]} -gt 0 ] || return 0
  say "start failed: stopping what it started (${started[*]})"
  for ((i = ${#started[@]} - 1; i >= 0; i--)); do stop_pid "${started[$i]}" || true; done
  return 0
}

# slurmd's registration time as the controller saw it (epoch seconds; 0 if unknown).
slurmd_registered_at() {
  local t
  t=$(sl scontrol show node "$node" 2>/dev/null | grep -o 'SlurmdStartTime=[^ ]*' | cut -d= -f2)
  date -d "${t:-@0}" +%s 2>/dev/null || echo 0
}

wait_idle() { # SINCE: slurmd must have registered at or after this epoch second
  local since=$1 deadline=$((SECONDS + timeout)) st="" resumed=0
  while [ $SECONDS -lt $deadline ]; do
    st=$(node_state || true)
    case $st in
      idle|mix|alloc) [ "$(slurmd_registered_at)" -ge "$since" ] && return 0 ;;
      down*|drain*|drng*|fail*)
        # Left down or drained by an earlier run (e.g. a NODE_FAIL test): bring it back once.
        if [ $resumed -eq 0 ]; then
          sl scontrol update nodename="$node" state=resume >/dev/null 2>&1 || true
          resumed=1
        fi ;;
    esac
    sleep 0.2
  done
  show_logs
  sl scontrol show node "$node" >&2 2>/dev/null || true
  die "node $node not idle after ${timeout}s (last state: '${st:-none}')"
}

# port_free PORT: nothing accepts connections on 127.0.0.1:PORT.
port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

check_ports() {
  local port ports=()
  pid_alive slurmctld || ports+=(6817)
  pid_alive slurmd || ports+=(6818)
  [ "$accounting" = 0 ] || pid_alive slurmdbd || ports+=(6819)
  for port in "${ports[@]}"; do
    port_free "$port" || die "port $port is in use (another Slurm cluster on this host? see 'status')"
  done
}

cluster_up() {
  pid_alive slurmctld && pid_alive slurmd && munge_works && [ -f "$conf" ] &&
    [ -n "$(node_state || true)" ] &&
    { [ "$(conf_accounting)" = 0 ] || { pid_alive slurmdbd && pid_alive mariadbd; }; }
}

cmd_start() {
  trap stop_started EXIT
  if cluster_up; then
    [ -z "$accounting" ] || [ "$accounting" = "$(conf_accounting)" ] ||
      die "already running with accounting=$(conf_accounting); run '$0 stop' first"
    [ "$cgroup" = auto ] || [ "$cgroup" = "$(conf_cgroup)" ] ||
      die "already running with cgroup=$(conf_cgroup); run '$0 stop' first"
    say "already running ($state_dir)"
    print_env
    return 0
  fi
  if [ -z "$accounting" ]; then
    accounting=0
    if pid_alive slurmctld || pid_alive slurmd; then accounting=$(conf_accounting); fi
  fi
  local pkgs=(slurmctld slurmd slurm-client munge)
  [ "$accounting" = 0 ] || pkgs+=(slurmdbd mariadb-server)
  install_packages "${pkgs[@]}"
  ensure_test_user
  if ! pid_alive slurmctld && ! pid_alive slurmd; then
    # restart keeps the config: a changed node (CPUs, memory) would fail its running jobs.
    [ "$keep_conf" = 1 ] && [ -f "$conf" ] || write_conf
  elif [ "$accounting" != "$(conf_accounting)" ]; then
    die "partly running with accounting=$(conf_accounting); run '$0 stop' first"
  fi
  check_ports
  start_munge
  if [ "$accounting" = 1 ]; then
    start_mariadb
    start_slurmdbd
  fi
  start_daemon slurmctld
  local since=0
  pid_alive slurmd || since=$(($(date +%s) - 1))
  start_daemon slurmd
  wait_idle "$since"
  say "ready: node $node idle, cgroup=$(conf_cgroup) accounting=$(conf_accounting) ($state_dir)"
  started=()
  print_env
}

# --- stop ------------------------------------------------------------------------------------

stop_pid() { # NAME
  local name=$1 pid
  pid_alive "$name" || { rm -f "$run/$name.pid"; return 0; }
  pid=$(cat "$run/$name.pid")
  kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 150); do
    running "$pid" || break
    sleep 0.1
  done
  if running "$pid"; then
    say "$name (pid $pid) ignored SIGTERM for 15 s; killing it"
    kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -f "$run/$name.pid"
  say "stopped $name (pid $pid)"
}

# The step daemons (and so the jobs under them) of this cluster's slurmd. Only one slurmd can
# serve this node, so every slurmstepd on the host is this cluster's.
stepd_pids() {
  local p exe
  for p in /proc/[0-9]*; do
    exe=$(readlink "$p/exe" 2>/dev/null) || continue
    [[ $exe == /usr/sbin/slurmstepd* ]] && echo "${p#/proc/}"
  done
  return 0
}

cancel_all_jobs() {
  pid_alive slurmctld || return 0
  local ids
  ids=$(sl squeue -h -o '%A' 2>/dev/null | sort -u | tr '\n' ' ') || return 0
  [ -n "${ids// /}" ] || return 0
  say "cancelling jobs: $ids"
  # shellcheck disable=SC2086 # ids is a list of job ids
  sl scancel $ids 2>/dev/null || true
  for _ in $(seq 60); do
    [ -z "$(sl squeue -h -t running,completing,suspended -o '%A' 2>/dev/null)" ] && break
    sleep 0.5
  done
}

cmd_stop() {
  [ $keep_jobs -eq 1 ] || cancel_all_jobs
  stop_pid slurmd
  if [ $keep_jobs -eq 0 ]; then
    local p left
    left=$(stepd_pids)
    for p in $left; do kill -KILL "$p" 2>/dev/null || true; done
    [ -z "$left" ] || say "killed leftover slurmstepd: $(echo "$left" | tr '\n' ' ')"
  fi
  if [ $keep_jobs -eq 0 ]; then
    # slurmd's (now empty) cgroups; rmdir refuses any cgroup that still has processes.
    local d
    for d in /sys/fs/cgroup/*/slurm_"$node"; do
      [ -d "$d" ] && find "$d" -depth -type d -exec rmdir {} + 2>/dev/null || true
    done
  fi
  stop_pid slurmctld
  stop_pid slurmdbd
  stop_pid mariadbd
  stop_pid munged
  if [ $purge -eq 1 ]; then
    if [ -L /etc/slurm/slurm.conf ] && [ "$(readlink /etc/slurm/slurm.conf)" = "$conf" ]; then
      rm -f /etc/slurm/slurm.conf
    fi
    case $state_dir in /|/etc|/var|/var/lib|/tmp|/root|/home|/run) die "refusing to remove $state_dir" ;; esac
    rm -rf "$state_dir"
    say "removed $state_dir"
  fi
}

# --- status ----------------------------------------------------------------------------------

cmd_status() {
  local name pid
  for name in munged mariadbd slurmdbd slurmctld slurmd; do
    if pid_alive "$name"; then
      pid=$(cat "$run/$name.pid")
      echo "$name: running (pid $pid)"
    elif [ "$name" = munged ] && munge_works; then
      echo "munged: running (not started by this script)"
    elif [ "$name" = mariadbd ] || [ "$name" = slurmdbd ]; then
      [ "$(conf_accounting)" = 0 ] || echo "$name: stopped"
    else
      echo "$name: stopped"
    fi
  done
  for pid in $(stepd_pids); do echo "slurmstepd: running (pid $pid)"; done
  cluster_up || { echo "cluster: down ($state_dir)"; return 1; }
  echo "cluster: up, node $node $(node_state), cgroup=$(conf_cgroup) accounting=$(conf_accounting) ($state_dir)"
  sl sinfo -o '%P %a %l %D %c %m %t'
  echo "jobs pending or running: $(sl squeue -h -o '%A' | wc -l)"
}

# One start/stop/restart at a time (test binaries may each call start). Daemons are started
# with fd 9 closed, or they would hold the lock for ever.
lock() {
  mkdir -p "$state_dir"
  exec 9>"$state_dir/.lock"
  flock -w "$timeout" 9 || die "another $prog holds $state_dir/.lock"
}

# start, stop and restart install packages, create a user and run daemons as root; status
# reads root's processes. Another user gets the same command through sudo, non-interactively
# (CI runners have password-less sudo), with this script's variables.
case $cmd in
  start|stop|restart|status)
    if [ "$(id -u)" -ne 0 ]; then
      command -v sudo >/dev/null 2>&1 || die "$cmd needs root: run it as root (there is no sudo)"
      sudo -n true >/dev/null 2>&1 || die "$cmd needs root: run it as root, or give $(id -un) password-less sudo"
      exec sudo -n --preserve-env=SCIMCP_SLURM_DIR,SCIMCP_SLURM_CPUS,SCIMCP_SLURM_TIMEOUT,SCIMCP_SLURM_MIN_JOB_AGE,SCIMCP_SLURM_TEST_USER,SCIMCP_SLURM_CGROUP,SCIMCP_SLURM_ACCOUNTING \
        -- "$0" "$cmd" "${args[@]}"
    fi ;;
esac
case $cmd in start|stop|restart) lock ;; esac
case $cmd in
  start) cmd_start ;;
  stop) cmd_stop ;;
  restart)
    accounting=$(conf_accounting); cgroup=$(conf_cgroup)
    keep_jobs=1; cmd_stop; keep_jobs=0; keep_conf=1; cmd_start ;;
  status) cmd_status ;;
  env) print_env ;;
  help|-h|--help) usage ;;
  *) die "unknown command: $cmd (start, stop, restart, status, env)" ;;
esac
