#!/bin/sh
# Run unit-test binaries; print one summary line naming every failed test (with its first
# error line, so a truncated CI log still says what broke); exit non-zero if any failed.
# usage: run-unit.sh BIN...
pass=0
fail=0
failed=""
out=$(mktemp)
trap 'rm -f "$out"' EXIT
for bin in "$@"; do
	if "$bin" >"$out" 2>&1; then
		cat "$out"
		pass=$((pass + 1))
	else
		cat "$out"
		fail=$((fail + 1))
		tests=$(sed -n 's/^\[  FAILED  \] \([A-Za-z0-9_]*\)$/\1/p' "$out" | sort -u | tr "\n" " ")
		where=$(grep -m1 -E '^\[   LINE   \]' "$out" | sed 's/^\[[ A-Z]*\] --- //')
		failed="$failed $(basename "$bin")(${tests% }${where:+: $where})"
	fi
done
echo "unit: $pass of $((pass + fail)) test binaries passed${failed:+; failed:$failed}"
[ "$fail" -eq 0 ]
