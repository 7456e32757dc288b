#!/usr/bin/env bash
# A throwaway PostgreSQL 15 server for the store's tests (a ctest FIXTURES_SETUP/CLEANUP pair).
#   pg_fixture.sh start URLFILE   initdb + pg_ctl as user postgres in a temp dir, on a free port
#                                 of 127.0.0.1; writes the server's URL (no database) to URLFILE
#   pg_fixture.sh stop URLFILE    stops that server and removes its directory and URLFILE
#   pg_fixture.sh pause URLFILE   stops that server (fast shutdown), keeping its data
#   pg_fixture.sh resume URLFILE  starts it again on the same port and data
# initdb refuses to run as root: as root the server runs as the postgres user.
set -euo pipefail
cmd=$1 urlfile=$2
bin=${GP_PG_BIN:-/usr/lib/postgresql/15/bin}
as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }

server_start() { # DIR: its data directory's server, on the port of DIR/port
    as_pg "$bin/pg_ctl" -D "$1/data" -l "$1/server.log" -w -t 60 \
        -o "-p $(cat "$1/port") -k $1 -c listen_addresses=127.0.0.1 -c max_connections=200" \
        start >/dev/null
}

case $cmd in
start)
    dir=$(mktemp -d /tmp/gpupool-pg.XXXXXX)
    chmod 755 "$dir"
    [ "$(id -u)" = 0 ] && chown postgres "$dir"
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
    as_pg "$bin/initdb" -D "$dir/data" -U postgres --auth=trust -E UTF8 --locale=C >"$dir/initdb.log"
    echo "$port" >"$dir/port"
    server_start "$dir"
    echo "postgresql://postgres@127.0.0.1:$port" >"$urlfile"
    echo "$dir" >"$urlfile.dir"
    ;;
pause)
    dir=$(cat "$urlfile.dir")
    as_pg "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null
    ;;
resume)
    server_start "$(cat "$urlfile.dir")"
    ;;
stop)
    [ -f "$urlfile.dir" ] || exit 0
    dir=$(cat "$urlfile.dir")
    as_pg "$bin/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null 2>&1 || true
    rm -rf "$dir" "$urlfile" "$urlfile.dir"
    ;;
*)
    echo "usage: $0 start|stop|pause|resume URLFILE" >&2
    exit 2
    ;;
esac
