#!/usr/bin/env bash
# A one-node Slurm cluster on this machine, for the Slurm target's tests (tests/test_jobs_slurm.py) and CI.
#
#   scripts/slurm_cluster.sh install   apt-get install Debian's slurm-wlm and munge (needs the package mirror)
#   scripts/slurm_cluster.sh start     install, then munged + slurmctld + slurmd, waits until the node is idle;
#                                      idempotent, and safe to run from two test workers at once (a lock)
#   scripts/slurm_cluster.sh stop      stops the three daemons this script started
#   scripts/slurm_cluster.sh status    sinfo against the cluster
#
# Everything lives in $COMPLAB_SLURM_DIR (default /tmp/complab-slurm): slurm.conf, state, spool, logs, pid files.
# Client commands find the cluster through SLURM_CONF=$COMPLAB_SLURM_DIR/slurm.conf; the tests look there too.
# The configuration is the least a real scheduler needs: no cgroups (proctrack/linuxproc, task/none; a CI sandbox
# has no cgroup delegation), no accounting daemon, one partition "debug" holding this node, declared with 8 CPUs
# (config_overrides) so that a running 2-task job and the next test's job can share a 2-core machine.
set -euo pipefail
if [ "$(id -u)" -ne 0 ] && [ "${1:-start}" != status ]; then  # daemons and apt need root, as in scripts/setup.sh
    exec sudo --preserve-env=COMPLAB_SLURM_DIR "$0" "$@"
fi
DIR=${COMPLAB_SLURM_DIR:-/tmp/complab-slurm}
CONF=$DIR/slurm.conf
export SLURM_CONF=$CONF

install() {
    if command -v slurmctld >/dev/null && command -v munged >/dev/null; then return; fi
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq slurm-wlm munge >/dev/null
}

write_conf() {
    local host
    host=$(hostname -s)
    mkdir -p "$DIR/state" "$DIR/spool" "$DIR/log"
    cat > "$CONF" <<EOF
ClusterName=complab
SlurmctldHost=$host(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
StateSaveLocation=$DIR/state
SlurmdSpoolDir=$DIR/spool
SlurmctldPidFile=$DIR/slurmctld.pid
SlurmdPidFile=$DIR/slurmd.pid
SlurmctldLogFile=$DIR/log/slurmctld.log
SlurmdLogFile=$DIR/log/slurmd.log
SlurmctldPort=6817
SlurmdPort=6818
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SlurmdParameters=config_overrides
ReturnToService=2
JobRequeue=1
MinJobAge=600
KillWait=10
SchedulerParameters=sched_interval=2
NodeName=$host NodeAddr=127.0.0.1 CPUs=8 State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
}

running() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

start() {
    install
    mkdir -p "$DIR"
    exec 9>"$DIR/start.lock"
    flock 9  # a second caller waits, then finds the daemons running
    write_conf
    if ! [ -S /run/munge/munge.socket.2 ] || ! munge -n </dev/null >/dev/null 2>&1; then
        mkdir -p /run/munge /var/log/munge /var/lib/munge
        chown munge:munge /run/munge /var/log/munge /var/lib/munge
        [ -f /etc/munge/munge.key ] || runuser -u munge -- mungekey --create
        runuser -u munge -- munged 9>&-
    fi
    # The daemons must not inherit the lock's descriptor (9): a daemon holding it would block every later `start`
    running "$DIR/slurmctld.pid" || slurmctld -f "$CONF" 9>&-
    running "$DIR/slurmd.pid" || slurmd -f "$CONF" 9>&-
    for _ in $(seq 60); do
        if sinfo -h -o %T 2>/dev/null | grep -qE '^(idle|mixed|allocated)'; then
            sinfo
            echo "Slurm is up: export SLURM_CONF=$CONF"
            return
        fi
        sleep 1
    done
    echo "Slurm did not come up; logs in $DIR/log" >&2
    tail -n 20 "$DIR/log/slurmctld.log" "$DIR/log/slurmd.log" >&2 || true
    exit 1
}

stop() {
    for daemon in slurmd slurmctld; do
        if running "$DIR/$daemon.pid"; then kill "$(cat "$DIR/$daemon.pid")"; fi
    done
}

case "${1:-start}" in
    install) install ;;
    start) start ;;
    stop) stop ;;
    status) sinfo ;;
    *) echo "usage: $0 install|start|stop|status" >&2; exit 2 ;;
esac
