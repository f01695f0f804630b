#!/usr/bin/env bash
# A single-node SLURM cluster on this machine, without systemd: munged, MariaDB, slurmdbd,
# slurmctld and slurmd as plain daemons whose keys, configs, databases, state, logs, sockets
# and pids all live under DIR.
#
#   scripts/slurm-local.sh start DIR    # write the configs, start the daemons, wait for idle
#   scripts/slurm-local.sh status DIR   # sinfo and squeue of that cluster (exit 1 when down)
#   scripts/slurm-local.sh stop DIR     # cancel its jobs, stop everything it started
#
# Then `export SLURM_CONF=DIR/etc/slurm.conf` (or `. DIR/env`) and use sbatch, srun, squeue,
# sacct as on any cluster. Needs root (slurmd starts jobs as their users) and Debian 12's
# SLURM 22.05 (slurmctld, slurmd, slurmdbd, slurm-client), munge, mariadb-server-core and
# mariadb-client-core: `make test` installs them (scripts/apt-deps.sh test), enabling and
# starting none of their services.
#
# The node is this host as `slurmd -C` sees it (real CPU count and memory). Without cgroups:
# proctrack/linuxproc tracks a job's processes by parentage and task/none binds nothing.
# Accounting as on a real cluster: slurmdbd over a private MariaDB (mariadbd, data under
# DIR/db, TCP on 127.0.0.1 only), so `sacct` answers: submitit asks it for the state of a job
# that ended without a result (one SLURM killed), and without it would wait for that forever.
# GPUS=N (default 2) declares N simulated GPUs as GRES (gpu:sim:N): each is a character
# device under DIR/dev with /dev/null's numbers, so a job that asks for --gpus-per-node=1 or
# --gres=gpu:1 gets CUDA_VISIBLE_DEVICES / SLURM_JOB_GPUS from SLURM exactly as on a GPU node;
# GPUS=0 declares none. The ports are free ones picked at start (SLURMCTLD_PORT, SLURMD_PORT,
# SLURMDBD_PORT, MARIADB_PORT to choose). A start that fails stops what it had started
# (SLURM_LOCAL_KEEP=1 keeps it, to look at).
set -euo pipefail
export PATH=$PATH:/usr/sbin:/sbin

usage() { echo "usage: $0 start|stop|status DIR" >&2; exit 2; }
[ $# -eq 2 ] || usage
cmd=$1
DIR=$(mkdir -p "$2" && cd "$2" && pwd)
CONF=$DIR/etc/slurm.conf
export SLURM_CONF=$CONF
GPUS=${GPUS:-2}

die() { echo "slurm-local: $*" >&2; exit 1; }

need_tools() {
  local missing=()
  for t in munged slurmctld slurmd slurmdbd sacctmgr mariadbd mariadb-install-db mariadb \
    sinfo squeue scancel scontrol; do
    command -v "$t" >/dev/null || missing+=("$t")
  done
  [ ${#missing[@]} -eq 0 ] ||
    die "${missing[*]} not found: install Debian's slurmctld, slurmd, slurmdbd, slurm-client," \
      "munge, mariadb-server-core and mariadb-client-core (scripts/apt-deps.sh test does)."
}

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

pid_of() {  # the pid in a pid file, if that process is alive
  local f=$1 pid
  [ -s "$f" ] || return 1
  pid=$(cat "$f")
  kill -0 "$pid" 2>/dev/null && echo "$pid"
}

# Processes that hold a file or their working directory under DIR: slurmstepd keeps its
# sockets in DIR/spool, the daemons their logs in DIR/log. Nothing else on the host does.
holders() {
  local p link
  for p in /proc/[0-9]*; do
    [ "${p#/proc/}" = "$$" ] && continue
    for link in "$p"/cwd "$p"/fd/*; do
      case "$(readlink "$link" 2>/dev/null)" in
        "$DIR"/*) echo "${p#/proc/}"; break ;;
      esac
    done
  done
}

stop_pid() {  # SIGTERM, then SIGKILL after 10 s
  local pid=$1 i
  kill "$pid" 2>/dev/null || return 0
  for i in $(seq 100); do
    kill -0 "$pid" 2>/dev/null || return 0
    sleep 0.1
  done
  kill -9 "$pid" 2>/dev/null || true
}

write_conf() {
  local node ctld_port slurmd_port dbd_port gres=""
  node=$(slurmd -C | head -n1)  # NodeName=<host -s> CPUs=.. Boards=.. ... RealMemory=..
  [[ $node == NodeName=* ]] || die "slurmd -C did not describe this node: $node"
  ctld_port=${SLURMCTLD_PORT:-$(free_port)}
  slurmd_port=${SLURMD_PORT:-$(free_port)}
  dbd_port=${SLURMDBD_PORT:-$(free_port)}
  DB_PORT=${MARIADB_PORT:-$(free_port)}
  mkdir -p "$DIR"/{etc,state,spool,log,run,dev,db}
  : >"$DIR/etc/gres.conf"
  if [ "$GPUS" -gt 0 ]; then
    local i
    for i in $(seq 0 $((GPUS - 1))); do
      [ -c "$DIR/dev/gpu$i" ] || mknod -m 666 "$DIR/dev/gpu$i" c 1 3
      echo "Name=gpu Type=sim File=$DIR/dev/gpu$i" >>"$DIR/etc/gres.conf"
    done
    gres=" Gres=gpu:sim:$GPUS"
  fi
  cat >"$CONF" <<EOF
# Written by scripts/slurm-local.sh: a single-node cluster on $(hostname -s), all under $DIR.
ClusterName=benchkit
SlurmctldHost=$(hostname -s)(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$DIR/munge/munge.sock
StateSaveLocation=$DIR/state
SlurmdSpoolDir=$DIR/spool
SlurmctldPidFile=$DIR/run/slurmctld.pid
SlurmdPidFile=$DIR/run/slurmd.pid
SlurmctldLogFile=$DIR/log/slurmctld.log
SlurmdLogFile=$DIR/log/slurmd.log
PlugStackConfig=$DIR/etc/plugstack.conf
# No cgroups here (a container): track job processes by parentage, bind nothing.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=127.0.0.1
AccountingStoragePort=$dbd_port
# For a connection to slurmdbd this names the munge socket (AuthInfo does for the rest).
AccountingStoragePass=$DIR/munge/munge.sock
JobCompType=jobcomp/none
MpiDefault=none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/backfill
ReturnToService=2
SlurmctldTimeout=30
SlurmdTimeout=60
KillWait=10
InactiveLimit=0
MinJobAge=600
GresTypes=gpu
$node NodeAddr=127.0.0.1$gres State=UNKNOWN
PartitionName=local Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
  : >"$DIR/etc/plugstack.conf"
  # slurmdbd refuses a config others can read (it may hold the database password).
  (umask 077 && cat >"$DIR/etc/slurmdbd.conf" <<EOF
AuthType=auth/munge
AuthInfo=socket=$DIR/munge/munge.sock
DbdHost=$(hostname -s)
DbdAddr=127.0.0.1
DbdPort=$dbd_port
SlurmUser=root
StorageType=accounting_storage/mysql
StorageHost=127.0.0.1
StoragePort=$DB_PORT
StorageUser=root
StorageLoc=slurm_acct_db
PidFile=$DIR/run/slurmdbd.pid
LogFile=$DIR/log/slurmdbd.log
EOF
  )
  cat >"$DIR/env" <<EOF
export SLURM_CONF=$CONF
EOF
}

start_munge() {
  mkdir -p "$DIR/munge"
  chmod 700 "$DIR/munge"
  if [ ! -s "$DIR/munge/munge.key" ]; then
    (umask 077 && dd if=/dev/urandom of="$DIR/munge/munge.key" bs=1024 count=1 status=none)
  fi
  chmod 400 "$DIR/munge/munge.key"
  pid_of "$DIR/munge/munged.pid" >/dev/null && return 0
  munged --force --socket="$DIR/munge/munge.sock" --key-file="$DIR/munge/munge.key" \
    --pid-file="$DIR/munge/munged.pid" --log-file="$DIR/munge/munged.log" \
    --seed-file="$DIR/munge/munged.seed" ||
    die "munged did not start: $(tail -n3 "$DIR/munge/munged.log" 2>/dev/null)"
}

start_db() {  # the private MariaDB slurmdbd keeps its records in
  if [ ! -d "$DIR/db/data/mysql" ]; then
    mariadb-install-db --no-defaults --datadir="$DIR/db/data" --user=root \
      --auth-root-authentication-method=normal --skip-test-db \
      >"$DIR/log/mariadb-install.log" 2>&1 ||
      die "mariadb-install-db failed: $(tail -n3 "$DIR/log/mariadb-install.log")"
  fi
  setsid mariadbd --no-defaults --datadir="$DIR/db/data" --socket="$DIR/db/mariadb.sock" \
    --port="$DB_PORT" --bind-address=127.0.0.1 --pid-file="$DIR/run/mariadbd.pid" \
    --log-error="$DIR/log/mariadbd.log" --user=root --innodb-buffer-pool-size=32M \
    --skip-log-bin </dev/null >/dev/null 2>&1 &
  for _ in $(seq 150); do
    mariadb --no-defaults -h 127.0.0.1 -P "$DB_PORT" -u root -e 'select 1' >/dev/null 2>&1 &&
      return 0
    sleep 0.2
  done
  die "mariadbd did not answer on 127.0.0.1:$DB_PORT: $(tail -n3 "$DIR/log/mariadbd.log")"
}

start_dbd() {  # slurmdbd, and this cluster registered with it
  slurmdbd || die "slurmdbd did not start: $(tail -n3 "$DIR/log/slurmdbd.log")"
  for _ in $(seq 150); do
    sacctmgr -i add cluster benchkit >/dev/null 2>&1 || true
    sacctmgr -n -P list cluster format=cluster 2>/dev/null | grep -qx benchkit && return 0
    sleep 0.2
  done
  die "slurmdbd does not answer: $(tail -n3 "$DIR/log/slurmdbd.log")"
}

wait_idle() {
  local i state
  for i in $(seq 120); do
    state=$(sinfo -h -N -o %T 2>/dev/null | head -n1 || true)
    case $state in
      idle*|mixed*|allocated*) return 0 ;;
      drain*|down*) [ "$i" -gt 20 ] && break ;;
    esac
    sleep 0.5
  done
  echo "slurm-local: the node is not idle after 60 s (state: ${state:-none}); last log lines:" >&2
  tail -n5 "$DIR/log/slurmctld.log" "$DIR/log/slurmd.log" >&2 2>/dev/null || true
  return 1
}

start() {
  need_tools
  [ "$(id -u)" -eq 0 ] || die "slurmd needs root: run it as root (CI does) or with sudo."
  if pid_of "$DIR/run/slurmctld.pid" >/dev/null; then
    die "a cluster already runs from $DIR (stop it first)."
  fi
  # Whatever fails on the way, what was started so far is stopped again.
  [ -n "${SLURM_LOCAL_KEEP:-}" ] || trap 'stop >/dev/null 2>&1' EXIT
  write_conf
  start_munge
  start_db
  start_dbd
  slurmctld -i -c || die "slurmctld did not start: $(tail -n3 "$DIR/log/slurmctld.log")"
  slurmd || die "slurmd did not start: $(tail -n3 "$DIR/log/slurmd.log")"
  wait_idle || exit 1
  trap - EXIT
  echo "slurm-local: up; export SLURM_CONF=$CONF"
  sinfo
}

stop() {
  local pid
  if [ -f "$CONF" ] && pid_of "$DIR/run/slurmctld.pid" >/dev/null; then
    # Every job of this cluster ends first: slurmstepd kills the job's processes itself.
    scancel --full --quiet --partition=local 2>/dev/null || true
    for _ in $(seq 150); do
      [ -z "$(squeue -h -o %i 2>/dev/null)" ] && break
      sleep 0.2
    done
  fi
  for f in run/slurmd.pid run/slurmctld.pid run/slurmdbd.pid run/mariadbd.pid; do
    pid=$(pid_of "$DIR/$f") && stop_pid "$pid"
  done
  # Whatever still holds DIR open (a slurmstepd that outlived its job) goes too.
  for pid in $(holders); do
    [ "$pid" = "$(cat "$DIR/munge/munged.pid" 2>/dev/null)" ] && continue
    stop_pid "$pid"
  done
  pid=$(pid_of "$DIR/munge/munged.pid") && stop_pid "$pid"
  rm -f "$DIR/munge/munge.sock" "$DIR/munge/munge.sock.lock"
  echo "slurm-local: stopped ($DIR)"
}

status() {
  pid_of "$DIR/run/slurmctld.pid" >/dev/null || { echo "slurm-local: not running ($DIR)"; exit 1; }
  sinfo
  squeue
}

case $cmd in
  start) start ;;
  stop) stop ;;
  status) status ;;
  *) usage ;;
esac
