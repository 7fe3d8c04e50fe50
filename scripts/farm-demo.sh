#!/bin/bash
# The build farm part of make demo: a scheduler and two workers on loopback with the
# embedded defaults (only the port is left to the kernel), two example specs submitted
# over the REST API (an autotools-style one and a BuildSystem: cmake one with -a/-p hooks),
# their logs followed, the signed packages downloaded and checked with rpmkeys.
set -eu
cd "$(dirname "$0")/.."
KILN=${KILN:-$PWD/build/kiln}
say() { printf '\n\033[1m$ %s\033[0m\n' "$*"; }
W=$(mktemp -d /tmp/kiln-farm-demo.XXXXXX)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
}
trap cleanup EXIT

# The scheduler prints its admin token and then its address.
mkfifo "$W/ready"
(cd "$W" && exec "$KILN" scheduler --listen 127.0.0.1:0 >"$W/ready" 2>"$W/scheduler.log") &
pids+=($!)
exec 3<"$W/ready"
read -r -u 3 line # admin token: ...
read -r -u 3 line # listening on URL
URL=${line##* }
export KILN_URL=$URL KILN_TOKEN
KILN_TOKEN=$(cat "$W/kiln-data/admin.token")
say "kiln scheduler   # listening on $URL, data in $W/kiln-data"
WTOKEN=$("$KILN" token create --scope worker --name demo-workers)
for n in 1 2; do
	"$KILN" worker --scheduler "$URL" --token "$WTOKEN" --name "worker$n" \
		--work-dir "$W/worker$n" >"$W/worker$n.out" 2>"$W/worker$n.log" &
	pids+=($!)
done
say "kiln worker --name worker1 ... ; kiln worker --name worker2 ..."

D=tests/data/farm
for p in greet calc; do
	tar -C "$D" --owner=0 --group=0 --mtime=@1796126400 --sort=name -czf \
		"$W/$p-1.0.tar.gz" "$p-1.0"
	say "kiln submit $D/$p.spec --source $p-1.0.tar.gz --follow"
	"$KILN" submit "$D/$p.spec" --source "$W/$p-1.0.tar.gz" --follow | tail -n 12
done
say "kiln jobs"
"$KILN" jobs
say "kiln download 1 -o $W/packages; kiln download 2 -o $W/packages"
"$KILN" download 1 -o "$W/packages"
"$KILN" download 2 -o "$W/packages"
python3 -c 'import sys, urllib.request; sys.stdout.buffer.write(urllib.request.urlopen(
    sys.argv[1] + "/api/v1/keys/default").read())' "$URL" >"$W/scheduler-key.asc"
rpmkeys --dbpath "$W/rpmdb" --import "$W/scheduler-key.asc"
say "rpmkeys --checksig $W/packages/*.rpm   # with the scheduler's key imported"
rpmkeys --dbpath "$W/rpmdb" --checksig "$W"/packages/*.rpm
echo
echo "The signed packages are in $W/packages/ (scheduler data in $W/kiln-data)."
