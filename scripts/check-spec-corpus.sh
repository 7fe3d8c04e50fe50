#!/bin/bash
# Check the spec corpus in tests/data/specs against Debian's rpmspec -P (rpm 4.18).
#
#   NNN-name.spec          good: rpmspec -P exits 0 and prints no "error:" line; its stdout
#                          must equal NNN-name.expected and its stderr NNN-name.stderr
#                          (no .stderr file when stderr is empty)
#   lenient/NNN-name.spec  rpmspec -P prints an "error:" line yet exits 0 (rpmspec parses
#                          with RPMSPEC_FORCE, which lets %prep and %changelog errors pass);
#                          stdout/stderr compared as for good specs
#   bad/NNN-name.spec      rpmspec -P must exit non-zero; the first stderr line must equal
#                          the first line of NNN-name.err
#
# rpmspec runs in the spec's directory with the bare file name (%include paths and the file
# names in some messages are relative to it), with RPM_BUILD_NCPUS=2 (so %{_smp_mflags} is
# -j2 on any host), LC_ALL=C and a fixed HOME.
#
# Usage: scripts/check-spec-corpus.sh [--update] [SPEC...]
#   --update  rewrite .expected/.stderr/.err from rpmspec instead of comparing
set -u
shopt -s nullglob
cd "$(dirname "$0")/.." || exit 2
CORPUS=$PWD/tests/data/specs
MACROS='/usr/lib/rpm/macros:/usr/lib/rpm/macros.d/macros.*:/usr/lib/rpm/platform/%{_target}/macros:/usr/lib/rpm/fileattrs/*.attr'

update=0
if [ "${1:-}" = "--update" ]; then
	update=1
	shift
fi
if ! command -v rpmspec >/dev/null; then
	echo "spec-corpus: rpmspec not found (apt-get install rpm)" >&2
	exit 2
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/home"
good=0 lenient=0 bad=0 failed=0

run_rpmspec() { # DIR SPEC: stdout to $tmp/out, stderr to $tmp/err, rpmspec's status
	(cd "$1" && env LC_ALL=C HOME="$tmp/home" RPM_BUILD_NCPUS=2 rpmspec -P \
		--macros "$MACROS" --rcfile /usr/lib/rpm/rpmrc \
		--define '_topdir /builddir/build' \
		--define '_sourcedir /builddir/build/SOURCES' \
		"$2" >"$tmp/out" 2>"$tmp/err")
}

fail() {
	echo "FAIL $*"
	failed=$((failed + 1))
}

# compare_or_update GOT FILE: FILE must hold GOT; an absent FILE stands for empty output
# when EMPTY_OK is set (stderr).
compare_or_update() {
	local got=$1 want=$2 empty_ok=$3
	if [ $update = 1 ]; then
		if [ "$empty_ok" = 1 ] && [ ! -s "$got" ]; then
			rm -f "$want"
		else
			cp "$got" "$want"
		fi
		return 0
	fi
	if [ "$empty_ok" = 1 ] && [ ! -s "$got" ] && [ ! -e "$want" ]; then
		return 0
	fi
	[ -e "$want" ] && cmp -s "$got" "$want"
}

check_parsed() { # KIND REL STEM: rpmspec succeeded; compare stdout and stderr
	local kind=$1 rel=$2 stem=$3 has_error=0
	grep -q '^error:' "$tmp/err" && has_error=1
	if [ "$kind" = good ] && [ $has_error = 1 ]; then
		fail "$rel: rpmspec printed an error: $(grep -m 1 '^error:' "$tmp/err")"
		return 1
	fi
	if [ "$kind" = lenient ] && [ $has_error = 0 ]; then
		fail "$rel: rpmspec printed no error (move it out of lenient/)"
		return 1
	fi
	if ! compare_or_update "$tmp/out" "$stem.expected" 0; then
		fail "$rel: stdout differs from ${stem##*/}.expected"
		diff -u "$stem.expected" "$tmp/out" 2>&1 | head -n 20
		return 1
	fi
	if ! compare_or_update "$tmp/err" "$stem.stderr" 1; then
		fail "$rel: stderr differs from ${stem##*/}.stderr"
		diff -u "$stem.stderr" "$tmp/err" 2>&1 | head -n 10
		return 1
	fi
	return 0
}

if [ $# -gt 0 ]; then
	specs=("$@")
else
	specs=("$CORPUS"/*.spec "$CORPUS"/lenient/*.spec "$CORPUS"/bad/*.spec)
fi

for spec in "${specs[@]}"; do
	case $spec in
	*.spec) ;;
	*) continue ;;
	esac
	spec=$(realpath "$spec")
	dir=${spec%/*}
	base=${spec##*/}
	stem=${spec%.spec}
	case ${dir##*/} in
	bad)
		rel=bad/$base
		if run_rpmspec "$dir" "$base"; then
			fail "$rel: rpmspec accepted it"
			continue
		fi
		first=$(head -n 1 "$tmp/err")
		if [ $update = 1 ]; then
			printf '%s\n' "$first" >"$stem.err"
		elif [ ! -f "$stem.err" ] || [ "$first" != "$(head -n 1 "$stem.err")" ]; then
			fail "$rel: first error line differs"
			echo "  expected: $(head -n 1 "$stem.err" 2>/dev/null)"
			echo "  got:      $first"
			continue
		fi
		bad=$((bad + 1))
		;;
	lenient)
		rel=lenient/$base
		if ! run_rpmspec "$dir" "$base"; then
			fail "$rel: rpmspec rejected it: $(head -n 1 "$tmp/err")"
			continue
		fi
		check_parsed lenient "$rel" "$stem" && lenient=$((lenient + 1))
		;;
	*)
		rel=$base
		if ! run_rpmspec "$dir" "$base"; then
			fail "$rel: rpmspec rejected it: $(head -n 1 "$tmp/err")"
			continue
		fi
		check_parsed good "$rel" "$stem" && good=$((good + 1))
		;;
	esac
done

# Every recorded output must belong to a spec.
if [ $# = 0 ]; then
	for out in "$CORPUS"/*.expected "$CORPUS"/*.stderr "$CORPUS"/lenient/*.expected \
		"$CORPUS"/lenient/*.stderr "$CORPUS"/bad/*.err; do
		stem=${out%.*}
		stem=${stem%.kiln} # NNN.kiln.expected: kiln's output pinned for rpm 4.20
		[ -f "$stem.spec" ] || fail "${out#"$CORPUS"/}: no matching .spec"
	done
fi

echo "spec-corpus: $good good, $lenient lenient, $bad bad specs ok, $failed failed"
[ $failed = 0 ]
