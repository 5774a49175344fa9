#!/usr/bin/env bash
# Stop the single-node SLURM that .ci/slurm/up.sh started (idempotent).
#
# Only processes recorded in $KCLF_SLURM_STATE's pid files are signalled; munged is
# stopped only if up.sh started it. The /etc/slurm/slurm.conf symlink is removed only
# if it points into our state folder. KCLF_SLURM_KEEP_STATE=1 keeps the logs.
set -uo pipefail

STATE="${KCLF_SLURM_STATE:-/var/tmp/kclf-slurm}"
CONF_LINK=/etc/slurm/slurm.conf

log() { echo "[slurm-down] $*" >&2; }

stop_pid() {  # stop_pid NAME PIDFILE
    local name="$1" file="$2" pid
    [[ -s "$file" ]] || return 0
    pid="$(cat "$file")"
    if kill -0 "$pid" 2>/dev/null; then
        log "stopping $name (pid $pid)"
        kill -TERM "$pid" 2>/dev/null
        for _ in $(seq 30); do
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.5
        done
        kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null
    fi
    rm -f "$file"
}

if [[ -d "$STATE" ]]; then
    # Cancel what is still queued so slurmd has no job steps left behind.
    command -v scancel >/dev/null 2>&1 && scancel --full --quiet --user root 2>/dev/null
    stop_pid slurmd "$STATE/slurmd.pid"
    stop_pid slurmctld "$STATE/slurmctld.pid"
    if [[ -f "$STATE/munged.ours" ]]; then
        stop_pid munged /run/munge/munged.pid
        rm -f "$STATE/munged.ours"
    fi
fi

if [[ -L "$CONF_LINK" && "$(readlink "$CONF_LINK")" == "$STATE/slurm.conf" ]]; then
    rm -f "$CONF_LINK"
fi
if [[ "${KCLF_SLURM_KEEP_STATE:-0}" != 1 && -d "$STATE" ]]; then
    rm -rf "$STATE"
fi
log "done"
