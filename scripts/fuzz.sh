#!/bin/bash
# make fuzz: run each libFuzzer target for a set time over a scratch copy of its corpus,
# then report. New interesting inputs can be merged back with -merge=1 by hand.
# usage: fuzz.sh BUILDDIR SECONDS TARGET...
set -u -o pipefail
build=$1 seconds=$2
shift 2
cd "$(dirname "$0")/.."
status=0
for t in "$@"; do
	work=$(mktemp -d)
	cp -r "fuzz/corpus/$t/." "$work/" 2>/dev/null || true
	dict=()
	[ -f "fuzz/$t.dict" ] && dict=(-dict="fuzz/$t.dict")
	echo "== fuzz $t for ${seconds}s"
	if "$build/fuzz/fuzzer-$t" "$work" "${dict[@]}" -max_total_time="$seconds" \
		-timeout=10 -rss_limit_mb=2048 -artifact_prefix="fuzz/" -print_final_stats=1 \
		2>&1 | tail -n 25; then
		echo "fuzz $t: clean"
	else
		echo "fuzz $t: FAILED (artifacts in fuzz/)"
		status=1
	fi
	rm -rf "$work"
done
exit $status
