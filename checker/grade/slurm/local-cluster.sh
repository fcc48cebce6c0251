#!/usr/bin/env bash
# local-cluster.sh -- a one-node Slurm cluster on this machine, for testing
# the job array (CI does; see ci-test.sh). Root only: it starts daemons.
#
#   checker/grade/slurm/local-cluster.sh start DIR    munged, slurmctld, slurmd
#   checker/grade/slurm/local-cluster.sh stop DIR     stop what start started
#
# DIR holds the generated slurm.conf, the daemons' state, logs and pid files;
# start prints `export SLURM_CONF=DIR/slurm.conf`, which the Slurm commands
# need. The node is this machine as `slurmd -C` describes it, with no GPU
# gres (ask for none: GRADE_GRES=). Ports 16817/16818, so that a real
# Slurm on the machine is not disturbed. Needs Debian's slurm-wlm and munge.
set -u
cmd=${1:-} dir=${2:-}
[ -n "$cmd" ] && [ -n "$dir" ] || { echo "usage: local-cluster.sh start|stop DIR" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "local-cluster.sh: needs root (it starts munged and the Slurm daemons)" >&2; exit 2; }

stop() {
    local f
    for f in slurmd slurmctld munged; do
        [ -f "$dir/$f.pid" ] && kill "$(cat "$dir/$f.pid")" 2>/dev/null
        rm -f "$dir/$f.pid"
    done
    return 0
}

# wait_for SECONDS WHAT COMMAND...: until COMMAND succeeds; else say WHAT failed.
wait_for() {
    local s=$1 what=$2
    shift 2
    for _ in $(seq 1 "$s"); do
        "$@" >/dev/null 2>&1 && return 0
        sleep 1
    done
    echo "local-cluster.sh: $what did not come up in $s s" >&2
    return 1
}

start() {
    local node m
    for m in munged slurmctld slurmd sbatch; do
        command -v "$m" >/dev/null || [ -x "/usr/sbin/$m" ] ||
            { echo "local-cluster.sh: $m not found (apt-get install slurm-wlm munge)" >&2; return 1; }
    done
    export PATH="$PATH:/usr/sbin"
    mkdir -p "$dir/state" "$dir/spool" "$dir/munge"
    dir=$(cd "$dir" && pwd)

    # munge: the key Debian made at install (or a new one), its own socket
    if [ ! -s /etc/munge/munge.key ]; then
        mungekey --create --force >/dev/null 2>&1 ||
            dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 2>/dev/null
        chown munge:munge /etc/munge/munge.key && chmod 400 /etc/munge/munge.key
    fi
    chown munge:munge "$dir/munge"
    runuser -u munge -- munged --socket="$dir/munge/munge.socket" \
        --pid-file="$dir/munge/munged.pid" --log-file="$dir/munge/munged.log" \
        --seed-file="$dir/munge/munged.seed" || { echo "local-cluster.sh: munged did not start" >&2; return 1; }
    wait_for 10 munged test -S "$dir/munge/munge.socket" || return 1
    cp "$dir/munge/munged.pid" "$dir/munged.pid"

    node=$(hostname -s)
    cat >"$dir/slurm.conf" <<EOF
# slurm.conf -- a one-node test cluster (checker/grade/slurm/local-cluster.sh)
ClusterName=gradetest
SlurmctldHost=$node
SlurmUser=root
SlurmdUser=root
SlurmctldPort=16817
SlurmdPort=16818
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/munge/munge.socket
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
MpiDefault=none
$(slurmd -C | head -n 1) NodeAddr=127.0.0.1 State=UNKNOWN
PartitionName=grade Nodes=$node Default=YES MaxTime=INFINITE State=UP
EOF
    export SLURM_CONF="$dir/slurm.conf"
    slurmctld -f "$SLURM_CONF" || { echo "local-cluster.sh: slurmctld did not start (log: $dir/slurmctld.log)" >&2; return 1; }
    slurmd -f "$SLURM_CONF" -N "$node" || { echo "local-cluster.sh: slurmd did not start (log: $dir/slurmd.log)" >&2; return 1; }
    wait_for 60 "the node (sinfo: idle)" sh -c "sinfo -h -N -o %T | grep -qx idle" || {
        sinfo >&2; tail -n 5 "$dir/slurmctld.log" "$dir/slurmd.log" >&2; return 1; }
    echo "export SLURM_CONF=$SLURM_CONF"
}

case $cmd in
    start) start || { stop; exit 1; } ;;
    stop) stop ;;
    *) echo "usage: local-cluster.sh start|stop DIR" >&2; exit 2 ;;
esac
