#!/usr/bin/env bash
# A throwaway PostgreSQL server for the sync package's tests (Sync/): a cluster of its own in a
# directory, trust authentication, user `postgres`, listening on 127.0.0.1 only.
#
#   scripts/postgres.sh start DIR [PORT]   creates the cluster in DIR (or reuses the one there),
#                                          starts it (port 55432 by default), waits until it
#                                          answers (30 s at most) and creates the database
#                                          cellar_sync_test; prints on standard output the line
#                                          CELLAR_SYNC_POSTGRES=postgres://postgres@127.0.0.1:PORT/cellar_sync_test
#   scripts/postgres.sh stop DIR           stops it (fast shutdown; a stopped server is fine) and
#                                          removes DIR
#   scripts/postgres.sh restart DIR        stops it and starts it again, DIR and its data kept
#   scripts/postgres.sh require-tls DIR    makes the running server in DIR accept TCP connections
#                                          only over TLS: a certificate authority of its own and a
#                                          server certificate it signed (for localhost and
#                                          127.0.0.1, valid 2 days) made with openssl in DIR/tls,
#                                          ssl = on, and pg_hba.conf rejecting plain TCP; then
#                                          reloads the configuration. Prints on standard output
#                                          CELLAR_SYNC_POSTGRES_CA=DIR/tls/ca.crt (what clients trust)
#
# Everything else goes to standard error, so that the URL can be captured:
#   url=$(scripts/postgres.sh start "$dir" | sed -n 's/^CELLAR_SYNC_POSTGRES=//p')
#
# In DIR: data/ (the cluster), log (the server's log), options (the server's options, the ones
# `start` gave pg_ctl: `-c listen_addresses=127.0.0.1 -p PORT -k DIR`, the Unix socket in DIR
# itself), bindir (the directory of pg_ctl, psql and the other PostgreSQL programs).
#
# Tests of a server going away mid-sync can stop and start it themselves with pg_ctl and the same
# options (as root, prefix each with `runuser -u postgres --`: initdb and the server refuse root,
# DIR belongs to the postgres user then):
#   "$(cat DIR/bindir)/pg_ctl" -D DIR/data -w stop -m fast          (or -m immediate: a crash)
#   "$(cat DIR/bindir)/pg_ctl" -D DIR/data -l DIR/log -o "$(cat DIR/options)" -w start
#
# PostgreSQL itself comes from Debian's `postgresql` package (installed through
# scripts/ensure-deps.sh --postgres when missing); the newest version in /usr/lib/postgresql is
# used, or else the one on the PATH (macOS, Homebrew). DIR must be a short path (the socket's
# path is limited to about 100 bytes) without spaces, that the postgres user can reach when run
# as root: a directory from `mktemp -d` is.
set -euo pipefail
scripts=$(cd "$(dirname "$0")" && pwd)

usage() { echo "usage: scripts/postgres.sh start DIR [PORT] | stop DIR | restart DIR | require-tls DIR" >&2; exit 64; }
[[ $# -ge 2 ]] || usage
command="$1"
dir="$2"
port="${3:-}"
[[ "$dir" != *[[:space:]\'\"]* ]] || { echo "postgres.sh: DIR must not contain spaces or quotes: $dir" >&2; exit 64; }
database=cellar_sync_test

# The PostgreSQL programs' directory: the newest /usr/lib/postgresql/*/bin, or the PATH's.
find_bindir() {
    local newest
    newest=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
    if [[ -n "$newest" && -x "$newest/initdb" ]]; then echo "$newest"; return; fi
    if command -v initdb >/dev/null 2>&1; then dirname "$(command -v initdb)"; return; fi
    return 1
}

# Runs a PostgreSQL program as the postgres user when we are root (initdb and the server refuse
# root), as ourselves otherwise; from DIR, which that user can read.
as_owner() {
    if [[ $(id -u) -eq 0 ]]; then
        (cd "$dir" && runuser -u postgres -- "$@")
    else
        (cd "$dir" && "$@")
    fi
}

# The port in DIR/options: the one the server was last started on.
options_port() { sed -n 's/.* -p \([0-9]*\) .*/\1/p' "$dir/options"; }

# Runs the command after WHAT until it succeeds, every 0.1 s for 10 s at most; then fails,
# saying the server WHAT, with the end of its log.
wait_for() {
    local what="$1" waited=0
    shift
    until "$@" >/dev/null 2>&1; do
        if (( waited >= 100 )); then
            echo "postgres.sh: the server in $dir $what; the end of $dir/log:" >&2
            tail -n 30 "$dir/log" >&2 || true
            exit 1
        fi
        sleep 0.1
        waited=$(( waited + 1 ))
    done
}

start() {
    local bindir
    bindir=$(find_bindir) || { "$scripts/ensure-deps.sh" --postgres; bindir=$(find_bindir); } || {
        echo "postgres.sh: no PostgreSQL found (initdb in /usr/lib/postgresql/*/bin or on the PATH)" >&2; exit 1; }
    mkdir -p "$dir"
    dir=$(cd "$dir" && pwd)
    # A restart keeps the port the server had.
    if [[ -z "$port" && -f "$dir/options" ]]; then
        port=$(options_port)
    fi
    port="${port:-55432}"
    echo "$bindir" > "$dir/bindir"
    echo "-c listen_addresses=127.0.0.1 -p $port -k $dir" > "$dir/options"
    if [[ $(id -u) -eq 0 ]]; then
        chown -R postgres: "$dir"
        runuser -u postgres -- test -w "$dir" || {
            echo "postgres.sh: the postgres user cannot reach $dir (a parent directory is closed to it)" >&2; exit 1; }
    fi
    if [[ ! -f "$dir/data/PG_VERSION" ]]; then
        as_owner "$bindir/initdb" -D "$dir/data" -U postgres --auth=trust -E UTF8 --locale=C --no-sync >/dev/null
    fi
    # pg_ctl -w waits until the server is ready, or has failed (a port in use, say): 30 s at most.
    if ! as_owner "$bindir/pg_ctl" -D "$dir/data" -l "$dir/log" -o "$(cat "$dir/options")" -w -t 30 start >/dev/null; then
        echo "postgres.sh: the server in $dir did not start (30 s at most); the end of $dir/log:" >&2
        tail -n 30 "$dir/log" >&2 || true
        as_owner "$bindir/pg_ctl" -D "$dir/data" -w stop -m immediate >/dev/null 2>&1 || true
        exit 1
    fi
    wait_for "does not answer on 127.0.0.1:$port" "$bindir/pg_isready" -q -h 127.0.0.1 -p "$port" -U postgres -d postgres
    local psql=("$bindir/psql" -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$port" -U postgres -d postgres)
    # The server that answers is this one, not another one on the same port.
    local answering
    answering=$("${psql[@]}" -tAc "SHOW data_directory")
    if [[ "$answering" != "$dir/data" ]]; then
        echo "postgres.sh: another server ($answering) answers on 127.0.0.1:$port" >&2
        exit 1
    fi
    if [[ -z "$("${psql[@]}" -tAc "SELECT 1 FROM pg_database WHERE datname = '$database'")" ]]; then
        "${psql[@]}" -c "CREATE DATABASE $database"
    fi
    echo "CELLAR_SYNC_POSTGRES=postgres://postgres@127.0.0.1:$port/$database"
}

# Stops the server in DIR, if one runs; DIR is kept.
stop_server() {
    [[ -f "$dir/data/PG_VERSION" ]] || return 0
    local bindir
    bindir=$(cat "$dir/bindir" 2>/dev/null || find_bindir) || return 0
    as_owner "$bindir/pg_ctl" -D "$dir/data" -w stop -m fast >/dev/null 2>&1 || true
}

# Turns TLS on for the running server in DIR and refuses plain TCP (see the header).
require_tls() {
    [[ -f "$dir/options" ]] || { echo "postgres.sh: no server of this script's in $dir" >&2; exit 1; }
    command -v openssl >/dev/null 2>&1 || { echo "postgres.sh: require-tls needs openssl" >&2; exit 1; }
    local bindir port tls="$dir/tls"
    bindir=$(cat "$dir/bindir")
    port=$(options_port)
    mkdir -p "$tls"
    openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=Cellar test CA" \
        -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" \
        -keyout "$tls/ca.key" -out "$tls/ca.crt" 2>/dev/null
    openssl req -newkey rsa:2048 -nodes -subj "/CN=localhost" -keyout "$tls/server.key" -out "$tls/server.csr" 2>/dev/null
    printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\nbasicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\n' > "$tls/server.ext"
    openssl x509 -req -in "$tls/server.csr" -CA "$tls/ca.crt" -CAkey "$tls/ca.key" -CAcreateserial -days 2 \
        -extfile "$tls/server.ext" -out "$tls/server.crt" 2>/dev/null
    # The server's defaults: server.crt and server.key in its data directory, the key private.
    cp "$tls/server.crt" "$tls/server.key" "$dir/data/"
    chmod 600 "$dir/data/server.key"
    printf 'local all all trust\nhostssl all all 127.0.0.1/32 trust\nhostnossl all all 0.0.0.0/0 reject\n' > "$dir/data/pg_hba.conf"
    if [[ $(id -u) -eq 0 ]]; then chown -R postgres: "$dir"; fi
    # Through the Unix socket (trust): TCP may already refuse plain connections.
    local psql=("$bindir/psql" -X -q -v ON_ERROR_STOP=1 -h "$dir" -p "$port" -U postgres -d postgres)
    as_owner "${psql[@]}" -c "ALTER SYSTEM SET ssl = on" -c "SELECT pg_reload_conf()" >/dev/null
    # A reload applies in the background: wait until a TLS connection is taken.
    PGSSLMODE=require wait_for "takes no TLS connection" \
        "$bindir/psql" -X -q -h 127.0.0.1 -p "$port" -U postgres -d postgres -tAc "SELECT 1"
    echo "CELLAR_SYNC_POSTGRES_CA=$tls/ca.crt"
}

case "$command" in
    start) start ;;
    stop)
        [[ -d "$dir" ]] || exit 0
        dir=$(cd "$dir" && pwd)
        stop_server
        # Only a directory this script made a server in, or an empty one, is removed.
        if [[ -f "$dir/options" || -z "$(ls -A "$dir")" ]]; then
            rm -rf "$dir"
        else
            echo "postgres.sh: $dir holds no server of this script's; left in place" >&2
        fi
        ;;
    require-tls)
        dir=$(cd "$dir" && pwd)
        require_tls
        ;;
    restart)
        [[ -f "$dir/options" ]] || { echo "postgres.sh: no server of this script's in $dir" >&2; exit 1; }
        [[ -z "$port" ]] || usage
        dir=$(cd "$dir" && pwd)
        stop_server
        start
        ;;
    *) usage ;;
esac
