#!/bin/sh
# Run unit-test binaries; print one summary line; exit non-zero if any failed.
# usage: run-unit.sh BIN...
pass=0
fail=0
failed=""
for bin in "$@"; do
	if "$bin"; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1))
		failed="$failed $(basename "$bin")"
	fi
done
echo "unit: $pass of $((pass + fail)) test binaries passed${failed:+; failed:$failed}"
[ "$fail" -eq 0 ]
