#!/bin/bash
# make bench: run every bench/<name>/run and rewrite bench/RESULTS.md with their reports.
# Each run script compares kiln with the real tool in the same run and prints a markdown
# section (a heading, what was measured, a table with ratios) on stdout.
set -u
cd "$(dirname "$0")/.."
out=bench/RESULTS.md
tmp=$(mktemp)
{
	echo "# Benchmark results"
	echo
	echo "Written by \`make bench\` on $(date -u '+%Y-%m-%d %H:%M UTC'), $(git rev-parse --short HEAD 2>/dev/null || echo 'uncommitted tree')."
	echo
	echo "Machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo) RAM," \
		"$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)," \
		"$(. /etc/os-release && echo "$PRETTY_NAME"), kernel $(uname -r)."
	echo "Figures compare kiln with the real tool in the same run; absolute times vary with load."
} >"$tmp"
status=0
found=0
for run in bench/*/run; do
	[ -x "$run" ] || continue
	found=1
	echo "== $run" >&2
	echo >>"$tmp"
	if ! "$run" >>"$tmp"; then
		echo "bench: $run failed" >&2
		echo "**$run failed in this run.**" >>"$tmp"
		status=1
	fi
done
[ $found -eq 1 ] || echo -e "\nNo benchmarks yet." >>"$tmp"
mv "$tmp" "$out"
echo "bench: wrote $out" >&2
exit $status
