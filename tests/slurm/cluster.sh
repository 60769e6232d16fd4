# cluster.sh: a Slurm cluster of one node on localhost, for the tests and
# the sweep benchmark (sourced). slurm_cluster_start: MUNGE with its own key
# and socket, slurmctld and slurmd from Debian's packages on two free ports,
# their state, spool, pid and log files in a temporary folder T; SLURM_CONF
# exported; returns once `sinfo` shows the node idle. MaxArraySize is 5 so
# that a sweep of 6 tasks is two arrays. Everything is killed and T removed
# at exit (trap), whatever the outcome. A system Slurm is left alone. Skips
# (exit 77, with the reason) when not root or the packages are absent, except
# under CI (CI set), where scripts/install-deps installed them: a failure.
skip() {
  if [ -n "${CI:-}" ]; then echo "FAIL: under CI this test must run: $*" >&2; exit 1; fi
  echo "SKIP: $*"; exit 77
}
fail() { echo "FAIL: $*" >&2; exit 1; }
# poll CMD until it succeeds, at most $1 seconds
wait_for() {
  local secs=$1; shift
  local end=$((SECONDS + secs))
  until "$@"; do
    [ $SECONDS -lt $end ] || return 1
    sleep 0.2
  done
}
T=""
slurm_cluster_stop() {
  local rc=$?
  [ -n "$T" ] || exit $rc
  # jobs still queued or running (a failure mid-sweep): cancelled, bounded wait
  if [ -s "$T/slurmctld.pid" ] && [ -n "$(squeue -h 2>/dev/null)" ]; then
    scancel --full --quiet --user=root 2>/dev/null
    wait_for 15 test -z "$(squeue -h 2>/dev/null)"
  fi
  for pf in "$T/slurmd.pid" "$T/slurmctld.pid" "$T/munged.pid"; do
    [ -s "$pf" ] && kill "$(cat "$pf")" 2>/dev/null
  done
  # a job step of this cluster left behind (its slurmd gone): slurmd's
  # environment, and so its steps', names this cluster's config
  for p in $(pgrep -x slurmstepd); do
    tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -qx "SLURM_CONF=$T/slurm.conf" && kill -9 "$p" 2>/dev/null
  done
  # bounded wait for them to go, then the folder
  for _ in $(seq 50); do
    alive=0
    for pf in "$T/slurmd.pid" "$T/slurmctld.pid" "$T/munged.pid"; do
      [ -s "$pf" ] && kill -0 "$(cat "$pf")" 2>/dev/null && alive=1
    done
    [ $alive = 0 ] && break
    sleep 0.1
  done
  if [ $rc != 0 ] && [ $rc != 77 ]; then
    for l in slurmctld.log slurmd.log munged.log; do
      [ -f "$T/$l" ] && { echo "--- $l (tail)"; tail -15 "$T/$l"; }
    done
  fi
  rm -rf "$T"
  exit $rc
}
trap slurm_cluster_stop EXIT
trap 'exit 1' INT TERM
slurm_cluster_start() {
  [ "$(id -u)" = 0 ] || skip "not root (slurmd and munged run as root here)"
  for c in munged mungekey slurmctld slurmd sbatch squeue scontrol scancel sinfo; do
    command -v "$c" >/dev/null || skip "$c not installed (Debian: slurmctld slurmd slurm-client munge)"
  done

  T=$(mktemp -d /tmp/snr-slurm.XXXXXX)
  chmod 700 "$T"
  # MUNGE with its own key and socket
  mungekey --create --keyfile="$T/munge.key" >/dev/null 2>&1 || dd if=/dev/urandom of="$T/munge.key" bs=1024 count=1 2>/dev/null
  chmod 400 "$T/munge.key"
  munged --force --key-file="$T/munge.key" --socket="$T/munge.sock" --pid-file="$T/munged.pid" \
    --log-file="$T/munged.log" --seed-file="$T/munged.seed" || fail "munged did not start: $(tail -3 "$T/munged.log" 2>/dev/null)"
  wait_for 10 test -S "$T/munge.sock" || fail "munged made no socket"

  # two free ports for slurmctld and slurmd
  read -r P1 P2 < <(python3 -c '
import socket
s = [socket.socket() for _ in range(2)]
for x in s: x.bind(("127.0.0.1", 0))
print(*[x.getsockname()[1] for x in s])')
  mkdir -p "$T/state" "$T/spool"
  cat >"$T/slurm.conf" <<CONF
ClusterName=snrtest
SlurmctldHost=localhost
SlurmctldPort=$P1
SlurmdPort=$P2
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$T/munge.sock
StateSaveLocation=$T/state
SlurmdSpoolDir=$T/spool
SlurmctldPidFile=$T/slurmctld.pid
SlurmdPidFile=$T/slurmd.pid
SlurmctldLogFile=$T/slurmctld.log
SlurmdLogFile=$T/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
ReturnToService=2
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
MaxArraySize=5
KillWait=2
SchedulerParameters=sched_min_interval=0
NodeName=localhost NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
PartitionName=snrtest Nodes=localhost Default=YES MaxTime=INFINITE State=UP
CONF
  export SLURM_CONF="$T/slurm.conf"
  slurmctld -c || fail "slurmctld did not start"
  slurmd -N localhost || fail "slurmd did not start"
  node_idle() { [ "$(sinfo -h -n localhost -o %T 2>/dev/null)" = idle ]; }
  wait_for 60 node_idle || fail "the node is not idle after 60 s: $(sinfo -h -N 2>&1)"
}
