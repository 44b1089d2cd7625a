#!/usr/bin/env bash
# A throwaway PostgreSQL 16 with pgvector for tests and benchmarks: the binaries come from the
# PyPI package pgserver (which bundles them, pgvector 0.6 included, for Linux x86_64), installed
# into .venv-pg; the cluster lives in a temporary folder and listens on a free loopback port.
#
#   scripts/postgres.sh start [FOLDER]   initdb + start; prints the URL (also in FOLDER/url)
#   scripts/postgres.sh stop FOLDER      stops it and deletes FOLDER
#   scripts/postgres.sh kill FOLDER      kills every process of the server with SIGKILL (a crash)
#   scripts/postgres.sh restart FOLDER   starts it again on its port, after a crash (crash recovery)
#
# KB_PG_SETTINGS adds server settings to `start` (e.g. "-c shared_buffers=2GB" for a large benchmark).
# KB_PG_HUGE_PAGES=1 (as root) has `start` reserve 2 MB huge pages for those shared buffers
# (vm.nr_hugepages) when the kernel has too few; PostgreSQL (huge_pages=try) maps them, and `stop`
# gives back what `start` reserved. Without root, or without the memory, it says so and starts
# on ordinary pages.
#
# As root (PostgreSQL refuses to run as root) the server runs as the system user kbpg.
. "$(dirname "$0")/lib.sh"
PGSERVER_VERSION="0.1.4"

install_pgserver() {
    ensure_system_packages python3-venv
    local venv="$KB_ROOT/.venv-pg"
    # find_spec locates the package without running it (importing it sets up logging and folders).
    local locate='import importlib.util, os, sys; spec = importlib.util.find_spec("pgserver"); sys.exit(1) if spec is None else print(os.path.join(os.path.dirname(spec.origin), "pginstall", "bin"))'
    if ! "$venv/bin/python" -c "$locate" >/dev/null 2>&1; then
        say "Installing PostgreSQL + pgvector (PyPI pgserver $PGSERVER_VERSION) into .venv-pg"
        python3 -m venv "$venv"
        "$venv/bin/pip" install --quiet --disable-pip-version-check "pgserver==$PGSERVER_VERSION"
    fi
    PG_BIN="$("$venv/bin/python" -c "$locate")"
    chmod -R a+rX "$venv"
}

# As root the server runs as kbpg, who must reach the binaries: under a private folder (a clone
# in a `mktemp -d` folder, mode 700) they are copied once to /tmp, where kbpg can run them.
reachable_binaries() {
    [ "$(id -u)" -eq 0 ] || return 0
    id kbpg >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin kbpg
    runuser -u kbpg -- test -x "$PG_BIN/initdb" && return 0
    # The package's folder and the libraries beside it, in their layout (the binaries find those
    # libraries three folders up).
    local package copy="/tmp/kb-pgserver-$PGSERVER_VERSION"
    package="$(dirname "$(dirname "$PG_BIN")")"
    if ! runuser -u kbpg -- test -x "$copy/pgserver/pginstall/bin/initdb"; then
        rm -rf "$copy.$$" && mkdir -p "$copy.$$"
        cp -a "$package" "$package.libs" "$copy.$$/" && chmod -R a+rX "$copy.$$"
        rm -rf "$copy" && mv "$copy.$$" "$copy"
    fi
    PG_BIN="$copy/pgserver/pginstall/bin"
}

# Reserves 2 MB huge pages for a server whose settings ($1) name shared_buffers, as root, and
# writes the count before into $2 (for `stop`); says why not when it cannot.
reserve_huge_pages() {
    local settings="$1" record="$2" size mb before needed free available
    size=$(printf '%s\n' "$settings" | grep -o 'shared_buffers=[0-9]*[GMgm]B' | tail -1 | cut -d= -f2)
    [ -n "$size" ] || { say "No huge pages: KB_PG_SETTINGS names no shared_buffers"; return 0; }
    case "$size" in *[Gg]B) mb=$(( ${size%??} * 1024 )) ;; *) mb=${size%??} ;; esac
    [ "$(id -u)" -eq 0 ] && [ -w /proc/sys/vm/nr_hugepages ] \
        || { say "No huge pages: reserving them needs root (vm.nr_hugepages); PostgreSQL uses ordinary pages"; return 0; }
    # The buffers and PostgreSQL's other shared memory (about 6% more at these sizes), in 2 MB pages.
    needed=$(( (mb * 106 / 100 + 64) / 2 ))
    before=$(cat /proc/sys/vm/nr_hugepages)
    free=$(awk '/^HugePages_Free:/ { print $2 }' /proc/meminfo)
    [ "$free" -ge "$needed" ] && return 0
    available=$(awk '/^MemAvailable:/ { print int($2 / 1024) }' /proc/meminfo)
    if [ $(( (needed - free) * 2 )) -gt $(( available / 2 )) ]; then
        say "No huge pages: $(( (needed - free) * 2 )) MB more would be over half of the $available MB available"
        return 0
    fi
    echo $(( before + needed - free )) > /proc/sys/vm/nr_hugepages
    echo "$before" > "$record"
    say "Reserved $(( needed - free )) huge pages (2 MB) for PostgreSQL's shared buffers; \`stop\` gives them back"
}

as_server_user() {
    if [ "$(id -u)" -eq 0 ]; then
        runuser -u kbpg -- "$@"
    else
        "$@"
    fi
}

case "${1:-}" in
start)
    install_pgserver
    reachable_binaries
    FOLDER="${2:-$(mktemp -d)}"
    mkdir -p "$FOLDER"
    if [ "$(id -u)" -eq 0 ]; then
        id kbpg >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin kbpg
        chown kbpg "$FOLDER"
        runuser -u kbpg -- test -w "$FOLDER" \
            || { echo "error: the user kbpg cannot reach $FOLDER (a parent folder is private); use a folder under /tmp." >&2; exit 1; }
    fi
    chmod 755 "$FOLDER"
    PORT="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
    as_server_user "$PG_BIN/initdb" -D "$FOLDER/data" -U kb --auth=trust -E UTF8 --no-locale >"$FOLDER/initdb.log" 2>&1 \
        || { cat "$FOLDER/initdb.log" >&2; echo "error: initdb failed" >&2; exit 1; }
    echo "-p $PORT -k $FOLDER -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=500 ${KB_PG_SETTINGS:-}" > "$FOLDER/options"
    [ "${KB_PG_HUGE_PAGES:-0}" != 1 ] || reserve_huge_pages "${KB_PG_SETTINGS:-}" "$FOLDER/nr_hugepages.before"
    as_server_user "$PG_BIN/pg_ctl" -D "$FOLDER/data" -l "$FOLDER/server.log" -w -t 60 -o "$(cat "$FOLDER/options")" start >/dev/null \
        || { cat "$FOLDER/server.log" >&2; echo "error: PostgreSQL did not start" >&2; exit 1; }
    "$PG_BIN/createdb" -h 127.0.0.1 -p "$PORT" -U kb kb
    echo "postgres://kb@127.0.0.1:$PORT/kb" | tee "$FOLDER/url"
    ;;
stop)
    [ -n "${2:-}" ] || { echo "usage: scripts/postgres.sh stop FOLDER" >&2; exit 64; }
    # Only a folder `start` made (its options file is there) is stopped and removed: a mistyped
    # argument must never become rm -rf of something else.
    if [ ! -d "$2" ] || [ ! -f "$2/options" ]; then
        [ -e "$2" ] || exit 0   # already gone
        echo "error: $2 is not a folder scripts/postgres.sh start made (no options file in it); nothing stopped or removed." >&2
        exit 1
    fi
    install_pgserver
    reachable_binaries
    [ -d "$2/data" ] && as_server_user "$PG_BIN/pg_ctl" -D "$2/data" -m immediate stop >/dev/null 2>&1 || true
    # Huge pages `start` reserved go back: the count is set to what it was before `start`.
    if [ -f "$2/nr_hugepages.before" ] && [ -w /proc/sys/vm/nr_hugepages ]; then
        cat "$2/nr_hugepages.before" > /proc/sys/vm/nr_hugepages || true
    fi
    rm -rf "$2"
    ;;
kill)
    [ -n "${2:-}" ] && [ -f "$2/data/postmaster.pid" ] || { echo "usage: scripts/postgres.sh kill FOLDER (a running server's)" >&2; exit 64; }
    postmaster=$(head -n 1 "$2/data/postmaster.pid")
    # The postmaster and its children (backends, checkpointer, WAL writer…), all at once.
    pids="$postmaster $(pgrep -P "$postmaster" || true)"
    # shellcheck disable=SC2086
    kill -9 $pids 2>/dev/null || true
    for _ in $(seq 100); do
        # shellcheck disable=SC2086
        kill -0 $pids 2>/dev/null || break
        sleep 0.05
    done
    ;;
restart)
    [ -n "${2:-}" ] && [ -f "$2/options" ] || { echo "usage: scripts/postgres.sh restart FOLDER (one that start made)" >&2; exit 64; }
    install_pgserver
    reachable_binaries
    # A killed server leaves its postmaster.pid; with no process of it left, the file is stale.
    pgrep -f -- "-D $2/data" >/dev/null || rm -f "$2/data/postmaster.pid"
    as_server_user "$PG_BIN/pg_ctl" -D "$2/data" -l "$2/server.log" -w -t 120 -o "$(cat "$2/options")" start >/dev/null \
        || { tail -n 20 "$2/server.log" >&2; echo "error: PostgreSQL did not start again" >&2; exit 1; }
    ;;
*)
    echo "usage: scripts/postgres.sh start [FOLDER] | stop FOLDER | kill FOLDER | restart FOLDER" >&2
    exit 64
    ;;
esac
