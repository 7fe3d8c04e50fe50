#!/bin/bash
# make check, after the build: lint, unit tests, fuzz-corpus replay, integration tests.
# Every suite runs even when an earlier one fails; the summaries come last and the exit
# status is non-zero if any suite failed.
set -u
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
summary=()
status=0

run_suite() {
	local name=$1
	shift
	local log
	log=$(mktemp)
	echo "== $name"
	if "$@" 2>&1 | tee "$log"; then
		summary+=("$name: ok — $(grep -E "$SUMMARY_RE" "$log" | tail -n 1)")
	else
		summary+=("$name: FAILED — $(grep -E "$SUMMARY_RE" "$log" | tail -n 1)")
		status=1
	fi
	rm -f "$log"
}

replay_all() {
	local rc=0 t
	for bin in "$BUILD"/fuzz/replay-*; do
		[ -x "$bin" ] || continue
		t=${bin##*/replay-}
		"$bin" "fuzz/corpus/$t" "fuzz/regressions/$t" || rc=1
	done
	return $rc
}

set -o pipefail
SUMMARY_RE='^lint:' run_suite lint ./scripts/lint.sh "$BUILD/libkiln.a"
SUMMARY_RE='^unit:' run_suite unit ./scripts/run-unit.sh "$BUILD"/tests/unit-*
SUMMARY_RE='replayed' run_suite fuzz-replay replay_all
SUMMARY_RE='(passed|failed|error|skipped)' run_suite integration \
	env KILN_BIN="$PWD/$BUILD/kiln" /usr/bin/python3 -m pytest -q -p no:cacheprovider \
	tests/integration

echo
echo "== summary"
printf '%s\n' "${summary[@]}"
exit $status
