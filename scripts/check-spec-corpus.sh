#!/bin/bash
# Check the spec corpus (tests/data/specs) against Debian's rpmspec -P (rpm 4.18).
#   good specs  tests/data/specs/NNN-name.spec      must parse; stdout must equal NNN-name.expected
#   bad specs   tests/data/specs/bad/NNN-name.spec  must fail; first stderr line must equal NNN-name.err
# --update rewrites the .expected/.err files from rpmspec instead of comparing.
# rpmspec runs with the spec directory as the working directory and the spec's bare file name
# (%include paths are relative to it), RPM_BUILD_NCPUS=2 (so %{_smp_mflags} is -j2 on any host)
# and LC_ALL=C. Usage: scripts/check-spec-corpus.sh [--update] [SPEC...]
set -u
shopt -s nullglob
cd "$(dirname "$0")/.." || exit 2
CORPUS=$PWD/tests/data/specs
update=0
if [ "${1:-}" = "--update" ]; then
	update=1
	shift
fi

if ! command -v rpmspec >/dev/null; then
	echo "spec-corpus: rpmspec not found (apt-get install rpm)" >&2
	exit 2
fi

run_rpmspec() { # DIR SPEC OUT ERR
	(cd "$1" && env LC_ALL=C RPM_BUILD_NCPUS=2 rpmspec -P \
		--macros '/usr/lib/rpm/macros:/usr/lib/rpm/macros.d/macros.*:/usr/lib/rpm/platform/%{_target}/macros:/usr/lib/rpm/fileattrs/*.attr' \
		--rcfile /usr/lib/rpm/rpmrc \
		--define '_topdir /builddir/build' \
		--define '_sourcedir /builddir/build/SOURCES' \
		"$2" >"$3" 2>"$4")
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
good=0 bad=0 failed=0

if [ $# -gt 0 ]; then
	specs=("$@")
else
	specs=("$CORPUS"/*.spec "$CORPUS"/bad/*.spec)
fi

for spec in "${specs[@]}"; do
	[ "${spec%.spec}" != "$spec" ] || continue
	spec=$(realpath "$spec")
	dir=${spec%/*}
	base=${spec##*/}
	stem=${spec%.spec}
	if [ "${dir##*/}" = bad ]; then
		if run_rpmspec "$dir" "$base" "$tmp/out" "$tmp/err"; then
			echo "FAIL bad/$base: rpmspec accepted it"
			failed=$((failed + 1))
			continue
		fi
		first=$(head -n 1 "$tmp/err")
		if [ $update = 1 ]; then
			printf '%s\n' "$first" >"$stem.err"
		elif [ ! -f "$stem.err" ] || [ "$first" != "$(head -n 1 "$stem.err")" ]; then
			echo "FAIL bad/$base: first error line differs"
			echo "  expected: $(head -n 1 "$stem.err" 2>/dev/null)"
			echo "  got:      $first"
			failed=$((failed + 1))
			continue
		fi
		bad=$((bad + 1))
	else
		if ! run_rpmspec "$dir" "$base" "$tmp/out" "$tmp/err"; then
			echo "FAIL $base: rpmspec rejected it: $(head -n 1 "$tmp/err")"
			failed=$((failed + 1))
			continue
		fi
		# rpmspec -P reports some %prep errors (e.g. an unknown %patch option) but still
		# exits 0; a good spec must not rely on that.
		if grep -q '^error:' "$tmp/err"; then
			echo "FAIL $base: rpmspec printed an error: $(grep -m 1 '^error:' "$tmp/err")"
			failed=$((failed + 1))
			continue
		fi
		if [ $update = 1 ]; then
			cp "$tmp/out" "$stem.expected"
		elif ! cmp -s "$tmp/out" "$stem.expected"; then
			echo "FAIL $base: output differs from ${stem##*/}.expected"
			diff -u "$stem.expected" "$tmp/out" | head -n 20
			failed=$((failed + 1))
			continue
		fi
		good=$((good + 1))
	fi
done

echo "spec-corpus: $good good specs ok, $bad bad specs ok, $failed failed"
[ $failed = 0 ]
