#!/usr/bin/env bash
# .ci/docker.sh - give a CI run a working Docker engine plus a local stand-in
# for the base image `python:3.11-slim`, on a Debian bookworm machine where
# no Docker engine runs and Docker Hub is unreachable.
#
# Usage:
#   .ci/docker.sh up       install docker.io/debootstrap if missing, start a
#                          private dockerd (or reuse one already answering),
#                          build the python:3.11-slim stand-in if missing.
#                          Prints ONE line on stdout:
#                              export DOCKER_HOST=unix://...
#                          so `eval "$(.ci/docker.sh up)"` works; the same
#                          line is written to $STATE_DIR/env for `source`.
#   .ci/docker.sh down     stop the dockerd that `up` started (data and the
#                          debootstrap cache are kept, so the next `up` is fast).
#   .ci/docker.sh status   say whether the private engine answers.
#
# All progress messages go to stderr; only the export line goes to stdout.
#
# Environment knobs (all optional):
#   AGENTASSAY_DOCKER_DIR      state dir (socket, data root, logs); default
#                              /tmp/agentassay-docker
#   AGENTASSAY_DOCKER_CACHE    where the debootstrap tarball is cached; default
#                              $AGENTASSAY_DOCKER_DIR/cache (point it at a CI
#                              cache directory to skip debootstrap next time)
#   AGENTASSAY_DOCKER_DRIVER   force a storage driver (default: overlay2, then
#                              vfs if dockerd rejects overlay2; the one in use
#                              is printed and written to $STATE_DIR/storage-driver)
#   AGENTASSAY_DOCKER_TIMEOUT  seconds to wait for dockerd to answer (default 60)
#   AGENTASSAY_DEBIAN_MIRROR   Debian mirror for debootstrap (default: the one
#                              this machine's apt sources use for bookworm)
#   AGENTASSAY_REBUILD_IMAGE=1 re-import the stand-in even if it exists
#
# Why a stand-in and not the real image: Docker Hub cannot be reached here.
# Debian bookworm ships Python 3.11, so a minbase bookworm rootfs with
# python3/pip/venv, imported under the name python:3.11-slim, behaves like the
# official image for a typical `FROM python:3.11-slim` + `pip install` Dockerfile.
set -euo pipefail

STATE_DIR="${AGENTASSAY_DOCKER_DIR:-/tmp/agentassay-docker}"
CACHE_DIR="${AGENTASSAY_DOCKER_CACHE:-$STATE_DIR/cache}"
SOCK="$STATE_DIR/docker.sock"
DOCKER_HOST_VALUE="unix://$SOCK"
DATA_ROOT="$STATE_DIR/root"      # images, containers, layers
EXEC_ROOT="$STATE_DIR/exec"      # runtime state (containerd sockets, netns)
PIDFILE="$STATE_DIR/dockerd.pid"
LOG="$STATE_DIR/dockerd.log"
ENV_FILE="$STATE_DIR/env"
DRIVER_FILE="$STATE_DIR/storage-driver"
TIMEOUT="${AGENTASSAY_DOCKER_TIMEOUT:-60}"

IMAGE="python:3.11-slim"
SUITE="bookworm"                 # Debian release whose python3 is 3.11
# Packages on top of minbase. The cache file name carries a hash of this list,
# so changing it invalidates the cached rootfs automatically.
INCLUDE_PKGS="ca-certificates,python3,python3-pip,python3-venv"
HOST_CA_BUNDLE="/etc/ssl/certs/ca-certificates.crt"

log() { printf '[docker.sh] %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

# Always talk to OUR daemon, whatever DOCKER_HOST/DOCKER_CONTEXT the caller has.
dk() { docker -H "$DOCKER_HOST_VALUE" "$@"; }

engine_answers() { dk info >/dev/null 2>&1; }

# Wall-clock seconds with millisecond precision (for the timing report).
now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

# True if process $1 exists and is not a zombie. `kill -0` alone is not
# enough: the daemon is detached, so its parent becomes PID 1, and on some CI
# VMs PID 1 is not a real init and never reaps it -- a dead dockerd would then
# look alive forever.
is_alive() {
    local st
    st="$(sed -E 's/^.*\) ([A-Za-z]).*$/\1/' "/proc/$1/stat" 2>/dev/null)" || return 1
    [[ -n "$st" && "$st" != Z && "$st" != X ]]
}

# PID from our pidfile if that process is alive AND is a dockerd (guards
# against a recycled PID); empty otherwise.
our_dockerd_pid() {
    local pid
    [[ -s "$PIDFILE" ]] || return 0
    pid="$(cat "$PIDFILE")"
    if [[ "$pid" =~ ^[0-9]+$ ]] && is_alive "$pid" \
        && [[ "$(cat "/proc/$pid/comm" 2>/dev/null)" == dockerd ]]; then
        echo "$pid"
    fi
}

# ---------------------------------------------------------------- packages --

ensure_packages() {
    local pkgs=()
    command -v dockerd >/dev/null 2>&1 || pkgs+=(docker.io)
    command -v docker >/dev/null 2>&1 || pkgs+=(docker.io)
    if ! command -v debootstrap >/dev/null 2>&1; then
        # debootstrap only Recommends the keyring; it is needed to verify
        # the Release file, so ask for it explicitly.
        pkgs+=(debootstrap debian-archive-keyring)
    fi
    ((${#pkgs[@]})) || return 0
    # De-duplicate (docker.io may be listed twice).
    mapfile -t pkgs < <(printf '%s\n' "${pkgs[@]}" | sort -u)
    log "installing: ${pkgs[*]}"
    local t0; t0="$(now)"
    # noninteractive: no debconf prompts in CI.  --no-install-recommends keeps
    # docker.io from pulling in e.g. apparmor/cgroupfs-mount/git extras.
    # Output goes to a log (dpkg is chatty even with -qq); shown on failure.
    mkdir -p "$STATE_DIR"
    if ! { DEBIAN_FRONTEND=noninteractive apt-get update -qq &&
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
            "${pkgs[@]}"; } >"$STATE_DIR/apt.log" 2>&1; then
        tail -n 30 "$STATE_DIR/apt.log" >&2
        die "apt-get failed (full log: $STATE_DIR/apt.log)"
    fi
    log "apt-get update + install took $(elapsed "$t0")s"
    command -v dockerd >/dev/null 2>&1 || die "dockerd still missing after installing docker.io"
}

# ------------------------------------------------------------------ dockerd --

# A previous dockerd of ours that died hard (SIGKILL, OOM) leaves its
# supervised containerd's pidfile in the exec root. If that PID is a zombie
# (nobody reaped it) or an orphaned containerd, a new dockerd believes
# "containerd is still running", waits for its socket and fails with
# "timeout waiting for containerd to start". Clear that state first.
clear_stale_containerd() {
    local cpidfile="$EXEC_ROOT/containerd/containerd.pid" cpid
    [[ -s "$cpidfile" ]] || return 0
    cpid="$(cat "$cpidfile")"
    if [[ "$cpid" =~ ^[0-9]+$ ]] && is_alive "$cpid" \
        && [[ "$(cat "/proc/$cpid/comm" 2>/dev/null)" == containerd ]] \
        && tr '\0' ' ' <"/proc/$cpid/cmdline" | grep -qF "$EXEC_ROOT/containerd/"; then
        log "stopping containerd $cpid orphaned by a previous dockerd of ours"
        stop_pid "$cpid"
    fi
    rm -f "$cpidfile"
}

# Start dockerd with storage driver $1 and wait until it answers.
# Returns 0 when it answers; 1 if it exited because of the storage driver
# (worth trying the next one); 2 on any other failure (log tail printed,
# daemon stopped again).
start_dockerd() {
    local driver="$1" pid waited=0 t0 logstart
    rm -f "$SOCK" "$PIDFILE"
    mkdir -p "$DATA_ROOT" "$EXEC_ROOT"
    clear_stale_containerd
    log "starting dockerd (storage driver $driver), log: $LOG"
    printf '\n===== %s: dockerd --storage-driver %s =====\n' "$(date -Is)" "$driver" >>"$LOG"
    logstart="$(wc -l <"$LOG")"
    # Flags:
    #   --host unix://$SOCK      private socket: no clash with a system dockerd
    #                            on /var/run/docker.sock, no TCP exposure.
    #   --data-root / --exec-root  private image store and runtime state
    #                            (also where the daemon's own containerd lives).
    #   --pidfile                 lets `down` find exactly the process we started.
    #   --bridge=none             no docker0 bridge: nothing to set up on the
    #                            host's network; builds/runs use --network=host
    #                            (containers without it get loopback only).
    #   --iptables=false / --ip-masq=false  do not touch the host firewall
    #                            (no bridge => no NAT rules needed).
    #   --ip-forward=false        do not flip the host's net.ipv4.ip_forward
    #                            (cost: `docker run` without --network=host
    #                            prints "WARNING: IPv4 forwarding is disabled").
    #   --storage-driver          overlay2 is fast; vfs (full copies) is the
    #                            fallback that works on any filesystem.
    # setsid + </dev/null + log redirection: detach the daemon from this
    # script's session/terminal and stdout, so the CI step (or a caller doing
    # `$(.ci/docker.sh up)`) does not hang waiting for it and it survives the
    # step.  9>&- closes our lock fd so the daemon does not hold the lock.
    setsid dockerd \
        --host "$DOCKER_HOST_VALUE" \
        --data-root "$DATA_ROOT" \
        --exec-root "$EXEC_ROOT" \
        --pidfile "$PIDFILE" \
        --bridge=none \
        --iptables=false \
        --ip-masq=false \
        --ip-forward=false \
        --storage-driver "$driver" \
        </dev/null >>"$LOG" 2>&1 9>&- &
    pid=$!
    t0="$(now)"
    while ((waited < TIMEOUT * 2)); do
        if engine_answers; then
            log "dockerd (pid $pid) answers after $(elapsed "$t0")s"
            return 0
        fi
        if ! is_alive "$pid"; then
            log "dockerd with storage driver $driver exited; log tail:"
            tail -n +"$((logstart + 1))" "$LOG" | tail -n 15 >&2 || true
            # Only a storage-driver failure justifies trying another driver;
            # anything else (e.g. containerd trouble) would just repeat.
            if tail -n +"$((logstart + 1))" "$LOG" | grep -q 'graphdriver'; then
                return 1
            fi
            return 2
        fi
        sleep 0.5
        waited=$((waited + 1))
    done
    log "dockerd with storage driver $driver did not answer within ${TIMEOUT}s; log tail:"
    tail -n +"$((logstart + 1))" "$LOG" | tail -n 40 >&2 || true
    stop_pid "$pid"
    return 2
}

# SIGTERM, wait up to 30s, then SIGKILL.
stop_pid() {
    local pid="$1" i
    kill "$pid" 2>/dev/null || return 0
    for ((i = 0; i < 60; i++)); do
        is_alive "$pid" || return 0
        sleep 0.5
    done
    log "process $pid ignored SIGTERM for 30s; sending SIGKILL"
    kill -9 "$pid" 2>/dev/null || true
}

ensure_engine() {
    local pid driver rc drivers=(overlay2 vfs)
    if engine_answers; then
        log "reusing the dockerd already answering on $SOCK"
        return 0
    fi
    pid="$(our_dockerd_pid)"
    if [[ -n "$pid" ]]; then
        # Ours but not answering (still starting up, or wedged): wait, then restart.
        log "dockerd $pid is running but not answering yet; waiting up to ${TIMEOUT}s"
        local i
        for ((i = 0; i < TIMEOUT * 2; i++)); do
            engine_answers && return 0
            sleep 0.5
        done
        log "dockerd $pid never answered; restarting it"
        stop_pid "$pid"
    fi
    # overlay2 is always tried first (a failed attempt costs well under a
    # second: dockerd exits at graphdriver init), so one odd failure never
    # pins a state dir to the slow vfs driver.
    if [[ -n "${AGENTASSAY_DOCKER_DRIVER:-}" ]]; then
        drivers=("$AGENTASSAY_DOCKER_DRIVER")
    fi
    for driver in "${drivers[@]}"; do
        rc=0
        start_dockerd "$driver" || rc=$?
        ((rc == 0)) || unmount_leftovers   # the dead daemon's mounts
        case "$rc" in
            0)
                echo "$driver" >"$DRIVER_FILE"   # for information only
                return 0 ;;
            1) log "storage driver $driver is not usable here" ;;
            *) die "dockerd failed to start for a reason other than the storage driver (full log: $LOG)" ;;
        esac
    done
    die "could not start dockerd with any of: ${drivers[*]} (full log: $LOG)"
}

# ---------------------------------------------------------- stand-in image --

# The Debian mirror URI this machine's apt sources use for suite $1 (default
# $SUITE): deb822 *.sources first, then one-line *.list, else $2 (default
# http://deb.debian.org/debian). Used for debootstrap and the image's sources.
detect_mirror() {
    local suite="${1:-$SUITE}" fallback="${2:-http://deb.debian.org/debian}"
    local uri="" files=()
    if [[ -n "${AGENTASSAY_DEBIAN_MIRROR:-}" && "$suite" == "$SUITE" ]]; then
        echo "$AGENTASSAY_DEBIAN_MIRROR"
        return
    fi
    shopt -s nullglob
    files=(/etc/apt/sources.list.d/*.sources)
    if ((${#files[@]})); then
        # Paragraph mode: one stanza per record. Take the first URI of the
        # first enabled "deb" stanza whose Suites list contains $suite.
        uri="$(awk -v s="$suite" '
            BEGIN { RS = ""; FS = "\n" }
            {
                types = ""; uris = ""; suites = ""; enabled = "yes"
                for (i = 1; i <= NF; i++) {
                    line = $i
                    if (line ~ /^Types:/)   { sub(/^Types:[ \t]*/, "", line);   types = " " line " " }
                    if (line ~ /^URIs:/)    { sub(/^URIs:[ \t]*/, "", line);    uris = line }
                    if (line ~ /^Suites:/)  { sub(/^Suites:[ \t]*/, "", line);  suites = " " line " " }
                    if (line ~ /^Enabled:/) { sub(/^Enabled:[ \t]*/, "", line); enabled = line }
                }
                if (enabled != "no" && index(types, " deb ") && index(suites, " " s " ")) {
                    split(uris, u, /[ \t]+/); print u[1]; exit
                }
            }' "${files[@]}")"
    fi
    if [[ -z "$uri" ]]; then
        files=(/etc/apt/sources.list /etc/apt/sources.list.d/*.list)
        if ((${#files[@]})); then
            # "deb [options] URI SUITE COMPONENTS..."
            uri="$(awk -v s="$suite" '
                $1 == "deb" {
                    i = 2
                    if ($i ~ /^\[/) { while (i <= NF && $i !~ /\]$/) i++; i++ }
                    if ($(i + 1) == s) { print $i; exit }
                }' "${files[@]}" 2>/dev/null || true)"
        fi
    fi
    shopt -u nullglob
    # debootstrap understands http(s):// and file:// only (not mirror+file:, cdrom:).
    if [[ ! "$uri" =~ ^(https?|file):// ]]; then
        uri="$fallback"
    fi
    echo "${uri%/}"
}

# Unmount anything left mounted under $1 (debootstrap mounts proc/sys into the
# target and normally cleans up, but not necessarily when killed) and delete
# it without ever crossing into another filesystem.
safe_rm_tree() {
    local dir="$1" m
    [[ -d "$dir" ]] || return 0
    # Deepest mount points first.
    while read -r m; do
        umount -l "$m" 2>/dev/null || true
    done < <(awk -v d="$dir/" 'index($2, d) == 1 { print $2 }' /proc/self/mounts | sort -r)
    rm -rf --one-file-system "$dir"
}

TMP_DIRS=()
cleanup() {
    local d
    for d in "${TMP_DIRS[@]+"${TMP_DIRS[@]}"}"; do safe_rm_tree "$d"; done
}
trap cleanup EXIT

# Build (or reuse) the cached debootstrap rootfs tarball; path -> $TARBALL.
# When it was just built, the still-unpacked tree is left in $FRESH_ROOTFS
# (saves re-extracting it). Globals, not $(...): a command substitution
# subshell would not run the EXIT trap that removes a half-built rootfs.
TARBALL=""
FRESH_ROOTFS=""
rootfs_tarball() {
    local key tarball work mirror t0
    key="$(printf '%s %s' "$SUITE" "$INCLUDE_PKGS" | md5sum | cut -c1-8)"
    tarball="$CACHE_DIR/debian-$SUITE-minbase-python3-$key.tar"
    if [[ -s "$tarball" ]]; then
        log "using cached rootfs $tarball"
        TARBALL="$tarball"
        return
    fi
    mkdir -p "$CACHE_DIR"
    mirror="$(detect_mirror)"
    work="$(mktemp -d "$STATE_DIR/debootstrap.XXXXXX")"
    TMP_DIRS+=("$work")
    log "debootstrap $SUITE (minbase + $INCLUDE_PKGS) from $mirror"
    t0="$(now)"
    # --variant=minbase: essential packages + apt only (what *-slim images use).
    # --include: python3 + pip + venv (ensurepip wheels) + the CA store.
    # --components=main: everything we need is in main.
    debootstrap --variant=minbase --components=main --include="$INCLUDE_PKGS" \
        "$SUITE" "$work" "$mirror" >"$STATE_DIR/debootstrap.log" 2>&1 || {
        tail -n 30 "$STATE_DIR/debootstrap.log" >&2
        die "debootstrap failed (full log: $STATE_DIR/debootstrap.log)"
    }
    log "debootstrap took $(elapsed "$t0")s"
    # Slim it like the official images: no downloaded .debs, no apt lists
    # (a Dockerfile runs `apt-get update` before installing anyway).
    rm -rf "$work"/var/cache/apt/archives/*.deb "$work"/var/cache/apt/*.bin \
        "$work"/var/lib/apt/lists/* "$work"/debootstrap
    find "$work/var/log" -type f -delete    # keep the dirs apt/dpkg expect
    # Leave /dev, /proc, /sys empty: Docker provides them at run time.
    tar --numeric-owner -C "$work" \
        --exclude='./dev/*' --exclude='./proc/*' --exclude='./sys/*' \
        -cf "$tarball.tmp" .
    mv "$tarball.tmp" "$tarball"     # atomic: a killed run leaves no half cache
    log "cached rootfs: $tarball ($(du -h "$tarball" | cut -f1))"
    TARBALL="$tarball"
    FRESH_ROOTFS="$work"             # removed by ensure_image / the EXIT trap
}

# Host pip settings worth carrying into the image: network ones only
# (index-url, extra-index-url, trusted-host, timeout, retries), and only
# http(s) index URLs -- file:// indexes and find-links are host paths that do
# not exist inside a container. `cert` is not copied: the image gets its own
# bundle path (the host's CA bundle is copied in, see customize_rootfs).
# Env vars (PIP_*) take precedence over config files, as in pip itself.
host_pip_settings() {
    local line key val index="" extra=() trusted=() timeout="" retries="" src=""
    local -a py=()
    if command -v python3 >/dev/null 2>&1 && python3 -m pip --version >/dev/null 2>&1; then
        py=(python3 -m pip)
    fi
    {
        # "pip config list" prints  scope.key='value'  (env vars as :env:.key)
        if ((${#py[@]})); then
            "${py[@]}" config list 2>/dev/null || true
        fi
        # Env vars also directly, in case pip is not installed on the host.
        [[ -n "${PIP_INDEX_URL:-}" ]] && printf ":env:.index-url='%s'\n" "$PIP_INDEX_URL"
        [[ -n "${PIP_EXTRA_INDEX_URL:-}" ]] && printf ":env:.extra-index-url='%s'\n" "$PIP_EXTRA_INDEX_URL"
        [[ -n "${PIP_TRUSTED_HOST:-}" ]] && printf ":env:.trusted-host='%s'\n" "$PIP_TRUSTED_HOST"
        [[ -n "${PIP_DEFAULT_TIMEOUT:-}" ]] && printf ":env:.default-timeout='%s'\n" "$PIP_DEFAULT_TIMEOUT"
        [[ -n "${PIP_TIMEOUT:-}" ]] && printf ":env:.timeout='%s'\n" "$PIP_TIMEOUT"
        [[ -n "${PIP_RETRIES:-}" ]] && printf ":env:.retries='%s'\n" "$PIP_RETRIES"
        true
    } | {
        while IFS= read -r line; do
            [[ "$line" =~ ^(.*)\.([a-z-]+)=\'(.*)\'$ ]] || continue
            src="${BASH_REMATCH[1]}" key="${BASH_REMATCH[2]}" val="${BASH_REMATCH[3]}"
            case "$key" in
                index-url)
                    [[ "$val" =~ ^https?:// ]] || continue
                    # env beats files; otherwise first seen wins
                    if [[ -z "$index" || "$src" == ":env:" ]]; then index="$val"; fi ;;
                extra-index-url)
                    for val in $val; do
                        [[ "$val" =~ ^https?:// ]] && extra+=("$val")
                    done ;;
                trusted-host)
                    for val in $val; do trusted+=("$val"); done ;;
                timeout | default-timeout)
                    if [[ -z "$timeout" || "$src" == ":env:" ]]; then timeout="$val"; fi ;;
                retries)
                    if [[ -z "$retries" || "$src" == ":env:" ]]; then retries="$val"; fi ;;
            esac
        done
        [[ -n "$index" ]] && echo "index-url = $index"
        if ((${#extra[@]})); then
            echo "extra-index-url = $(printf '%s\n' "${extra[@]}" | awk '!seen[$0]++' | paste -sd' ')"
        fi
        if ((${#trusted[@]})); then
            echo "trusted-host = $(printf '%s\n' "${trusted[@]}" | awk '!seen[$0]++' | paste -sd' ')"
        fi
        [[ -n "$timeout" ]] && echo "timeout = $timeout"
        [[ -n "$retries" ]] && echo "retries = $retries"
        true
    }
}

# Make the plain Debian rootfs in $1 look like python:3.11-slim.
customize_rootfs() {
    local root="$1" b
    # Official image has python/python3/pip/pip3 in /usr/local/bin.
    mkdir -p "$root/usr/local/bin"
    for b in python python3; do ln -sfn /usr/bin/python3 "$root/usr/local/bin/$b"; done
    for b in pip pip3; do ln -sfn /usr/bin/pip3 "$root/usr/local/bin/$b"; done
    # Debian marks its python "externally managed" (PEP 668), which makes a
    # plain `pip install` fail; the official image allows it. Removing the
    # marker is the fix (PIP_BREAK_SYSTEM_PACKAGES=1 below is a second guard,
    # e.g. if a Dockerfile's apt-get upgrade restores the file).
    rm -f "$root"/usr/lib/python3*/EXTERNALLY-MANAGED
    # The host's CA bundle, so TLS from inside builds works through whatever
    # TLS-intercepting egress proxy this machine uses (pip -> PyPI). Also the
    # host's local CAs, so an `update-ca-certificates` inside a build (e.g.
    # triggered by `apt-get install ca-certificates`) keeps them.
    if [[ -s "$HOST_CA_BUNDLE" ]]; then
        install -m 0644 "$HOST_CA_BUNDLE" "$root/etc/ssl/certs/ca-certificates.crt"
    else
        log "WARNING: $HOST_CA_BUNDLE not found; image keeps Debian's CA bundle"
    fi
    if compgen -G "/usr/local/share/ca-certificates/*.crt" >/dev/null; then
        mkdir -p "$root/usr/local/share/ca-certificates"
        cp /usr/local/share/ca-certificates/*.crt "$root/usr/local/share/ca-certificates/"
    fi
    # pip config: always point pip at the system bundle (a pip upgraded inside
    # a build uses its own certifi bundle otherwise, which lacks local CAs),
    # plus the host's network settings (mirror, timeout...).
    {
        echo "# written by agentassay .ci/docker.sh (stand-in for $IMAGE)"
        echo "[global]"
        echo "cert = /etc/ssl/certs/ca-certificates.crt"
        host_pip_settings
    } >"$root/etc/pip.conf"
    log "image /etc/pip.conf:"
    sed 's/^/    /' "$root/etc/pip.conf" >&2
    # apt sources like the official bookworm images (deb822, with updates and
    # security), using the same mirror as debootstrap for the main archive.
    local mirror security
    mirror="$(detect_mirror "$SUITE")"
    security="$(detect_mirror "$SUITE-security" http://deb.debian.org/debian-security)"
    rm -f "$root/etc/apt/sources.list"
    mkdir -p "$root/etc/apt/sources.list.d"
    cat >"$root/etc/apt/sources.list.d/debian.sources" <<EOF
Types: deb
URIs: $mirror
Suites: $SUITE $SUITE-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: $security
Suites: $SUITE-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
    # Docker bind-mounts its own at run time; do not ship the host's.
    : >"$root/etc/resolv.conf"
    echo localhost >"$root/etc/hostname"
}

ensure_image() {
    if [[ "${AGENTASSAY_REBUILD_IMAGE:-0}" != 1 ]] && dk image inspect "$IMAGE" >/dev/null 2>&1; then
        log "image $IMAGE already present"
        return 0
    fi
    local stage t0 pyver old_id
    # On a forced rebuild, the replaced image would linger untagged.
    old_id="$(dk image inspect -f '{{.Id}}' "$IMAGE" 2>/dev/null || true)"
    rootfs_tarball
    t0="$(now)"
    if [[ -n "$FRESH_ROOTFS" ]]; then
        stage="$FRESH_ROOTFS"        # just debootstrapped: customize in place
    else
        stage="$(mktemp -d "$STATE_DIR/stage.XXXXXX")"
        TMP_DIRS+=("$stage")
        tar --numeric-owner -C "$stage" -xf "$TARBALL"
    fi
    customize_rootfs "$stage"
    # Running the target's own interpreter needs no mounts (no /proc needed).
    pyver="$(chroot "$stage" /usr/bin/python3 -c 'import platform; print(platform.python_version())')"
    log "customized rootfs (python $pyver) in $(elapsed "$t0")s; importing as $IMAGE"
    t0="$(now)"
    # --change: the image config the official image has (PATH with
    # /usr/local/bin first, LANG, PYTHON_VERSION, CMD python3), plus
    #   PIP_BREAK_SYSTEM_PACKAGES=1   see customize_rootfs
    #   SSL_CERT_FILE / REQUESTS_CA_BUNDLE  make non-pip clients (requests,
    #       httpx, urllib) use the bundle with the host's CAs, as on the host.
    #   LABEL  so anyone can tell this is the stand-in, not Docker Hub's image.
    tar --numeric-owner -C "$stage" \
        --exclude='./dev/*' --exclude='./proc/*' --exclude='./sys/*' -c . | dk import \
        --change 'ENV PATH=/usr/local/bin:/usr/local/sbin:/usr/sbin:/usr/bin:/sbin:/bin' \
        --change 'ENV LANG=C.UTF-8' \
        --change "ENV PYTHON_VERSION=$pyver" \
        --change 'ENV PIP_BREAK_SYSTEM_PACKAGES=1' \
        --change 'ENV SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt' \
        --change 'ENV REQUESTS_CA_BUNDLE=/etc/ssl/certs/ca-certificates.crt' \
        --change 'LABEL org.agentassay.standin="debootstrap bookworm minbase + python3, not the Docker Hub image"' \
        --change 'CMD ["python3"]' \
        --message "agentassay stand-in for $IMAGE (debootstrap $SUITE)" \
        - "$IMAGE" >/dev/null
    log "docker import took $(elapsed "$t0")s"
    if [[ -n "$old_id" ]]; then
        # Fails harmlessly if images built FROM it still exist.
        dk image rm "$old_id" >/dev/null 2>&1 || true
    fi
    safe_rm_tree "$stage"
    # Smoke test: interpreter, pip and venv present; no network needed.
    dk run --rm --network=none "$IMAGE" sh -ec \
        'python --version; pip --version; python -m venv /tmp/v && /tmp/v/bin/pip --version >/dev/null' >&2 \
        || die "smoke test of the $IMAGE stand-in failed"
}

# ------------------------------------------------------------------- verbs --

write_env() {
    local line="export DOCKER_HOST=$DOCKER_HOST_VALUE"
    echo "$line" >"$ENV_FILE"
    # In GitHub Actions, later steps get it too.
    if [[ -n "${GITHUB_ENV:-}" ]]; then echo "DOCKER_HOST=$DOCKER_HOST_VALUE" >>"$GITHUB_ENV"; fi
    log "engine ready (storage driver: $(dk info --format '{{.Driver}}' 2>/dev/null || echo '?')); for your shell:"
    log "  source $ENV_FILE    # or:"
    echo "$line"
}

cmd_up() {
    [[ $EUID -eq 0 ]] || die "must run as root (installs packages, runs dockerd)"
    mkdir -p "$STATE_DIR"
    # Serialize concurrent `up`s on the same state dir.
    exec 9>"$STATE_DIR/lock"
    flock -w 900 9 || die "another .ci/docker.sh holds $STATE_DIR/lock"
    ensure_packages
    ensure_engine
    ensure_image
    write_env
}

# dockerd leaves two mounts behind even after a clean shutdown: its data root
# bind-mounted onto itself (made private) and exec-root/netns/default. Harmless
# for the next `up`, but they make `rm -rf $STATE_DIR` fail, so drop them --
# only when no dockerd of ours is running, deepest first, only under $STATE_DIR.
unmount_leftovers() {
    local m
    [[ -z "$(our_dockerd_pid)" ]] || return 0
    while read -r m; do
        umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true
    done < <(awk -v d="$STATE_DIR/" 'index($2, d) == 1 { print $2 }' /proc/self/mounts | sort -r)
}

cmd_down() {
    local pid
    pid="$(our_dockerd_pid)"
    if [[ -z "$pid" ]]; then
        if engine_answers; then
            log "a dockerd answers on $SOCK but was not started by this script (no live pidfile); leaving it"
        else
            log "no dockerd of ours is running"
            unmount_leftovers
        fi
        rm -f "$PIDFILE"
        return 0
    fi
    log "stopping dockerd $pid"
    stop_pid "$pid"
    rm -f "$PIDFILE"
    unmount_leftovers
    log "stopped (data root $DATA_ROOT and cache $CACHE_DIR kept)"
}

cmd_status() {
    if engine_answers; then
        log "running: DOCKER_HOST=$DOCKER_HOST_VALUE, driver $(dk info --format '{{.Driver}}')"
    else
        log "not running"
        return 1
    fi
}

case "${1:-}" in
    up) cmd_up ;;
    down) cmd_down ;;
    status) cmd_status ;;
    *)
        echo "usage: $0 up|down|status" >&2
        exit 2
        ;;
esac
