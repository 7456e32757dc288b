#!/usr/bin/env bash
# A throwaway PostgreSQL 15 server for the store's tests (a ctest FIXTURES_SETUP/CLEANUP pair).
#   pg_fixture.sh start URLFILE   initdb + pg_ctl as user postgres in a temp dir, on a free port
#                                 of 127.0.0.1; writes the server's URL (no database) to URLFILE
#   pg_fixture.sh stop URLFILE    stops that server and removes its directory and URLFILE
# initdb refuses to run as root: as root the server runs as the postgres user.
set -euo pipefail
cmd=$1 urlfile=$2
bin=${GP_PG_BIN:-/usr/lib/postgresql/15/bin}
as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }

case $cmd in
start)
    dir=$(mktemp -d /tmp/gpupool-pg.XXXXXX)
    chmod 755 "$dir"
    [ "$(id -u)" = 0 ] && chown postgres "$dir"
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
    as_pg "$bin/initdb" -D "$dir/data" -U postgres --auth=trust -E UTF8 --locale=C >"$dir/initdb.log"
    as_pg "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
        -o "-p $port -k $dir -c listen_addresses=127.0.0.1 -c max_connections=200" start >/dev/null
    echo "postgresql://postgres@127.0.0.1:$port" >"$urlfile"
    echo "$dir" >"$urlfile.dir"
    ;;
stop)
    [ -f "$urlfile.dir" ] || exit 0
    dir=$(cat "$urlfile.dir")
    as_pg "$bin/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null 2>&1 || true
    rm -rf "$dir" "$urlfile" "$urlfile.dir"
    ;;
*)
    echo "usage: $0 start|stop URLFILE" >&2
    exit 2
    ;;
esac
