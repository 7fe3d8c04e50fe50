#!/bin/sh
# A throwaway PostgreSQL server for kiln's store tests (issue 25), from Debian's packages.
#
#   tests/pg/pg-harness.sh start   prints DIR and the URL (two lines) of a new server
#   tests/pg/pg-harness.sh createdb DIR NAME   adds database NAME to it
#   tests/pg/pg-harness.sh restart DIR   restarts it (its clients' connections break)
#   tests/pg/pg-harness.sh stop DIR   stops it and removes DIR
#
# initdb and pg_ctl run as an unprivileged user (postgres refuses root: as root, `nobody`),
# the server listens on a unix socket in DIR only (no TCP port to collide with the other
# tests), DIR is mode 0700 so no other local user reaches the trust-authenticated socket.
# Exit 77 with a message on stderr when PostgreSQL is not installed: the callers skip.
set -eu

pg_bin() {
	for d in /usr/lib/postgresql/*/bin; do
		[ -x "$d/initdb" ] && [ -x "$d/pg_ctl" ] && { echo "$d"; return 0; }
	done
	return 1
}

# Run "$@" as the server's user.
as_user() {
	if [ "$(id -u)" = 0 ]; then
		setpriv --reuid=nobody --regid=nogroup --clear-groups -- "$@"
	else
		"$@"
	fi
}

start() {
	bin=$(pg_bin) || { echo "PostgreSQL is not installed (apt-get install postgresql)" >&2; exit 77; }
	dir=$(mktemp -d "${TMPDIR:-/tmp}/kiln-pg.XXXXXX")
	chmod 700 "$dir"
	[ "$(id -u)" = 0 ] && chown nobody:nogroup "$dir"
	if ! as_user "$bin/initdb" -D "$dir/data" -U kiln --auth=trust -E UTF8 --no-locale \
	    --no-sync >"$dir/initdb.log" 2>&1; then
		cat "$dir/initdb.log" >&2; rm -rf "$dir"; exit 1
	fi
	# fsync off: a test server that dies loses nothing anyone needs. KILN_PG_OPTS adds
	# server options after these (bench/farm turns fsync back on).
	if ! as_user "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
	    -o "-c listen_addresses= -k $dir -c fsync=off -c full_page_writes=off -c max_connections=200 ${KILN_PG_OPTS:-}" \
	    start >/dev/null; then
		cat "$dir/server.log" >&2; rm -rf "$dir"; exit 1
	fi
	as_user "$bin/createdb" -h "$dir" -U kiln kiln
	echo "$dir"
	echo "postgresql://kiln@/kiln?host=$dir"
}

createdb() {
	bin=$(pg_bin)
	as_user "$bin/createdb" -h "$1" -U kiln "$2"
}

restart() {
	bin=$(pg_bin)
	as_user "$bin/pg_ctl" -D "$1/data" -m fast -w -t 60 restart >/dev/null
}

stop() {
	dir=$1
	case "$dir" in */kiln-pg.*) ;; *) echo "not a harness directory: $dir" >&2; exit 2 ;; esac
	bin=$(pg_bin) || exit 0
	[ -d "$dir/data" ] && as_user "$bin/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null 2>&1 || true
	rm -rf "$dir"
}

case "${1:-}" in
start) start ;;
createdb) createdb "${2:?usage: $0 createdb DIR NAME}" "${3:?usage: $0 createdb DIR NAME}" ;;
restart) restart "${2:?usage: $0 restart DIR}" ;;
stop) stop "${2:?usage: $0 stop DIR}" ;;
*) echo "usage: $0 start | createdb DIR NAME | restart DIR | stop DIR" >&2; exit 2 ;;
esac
