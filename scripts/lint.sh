#!/bin/bash
# make lint: formatting, static analysis and the project's structural rules
# (shared/STYLE.md rules 1, 2, 17, 19, 20). usage: lint.sh build/libkiln.a
set -u
cd "$(dirname "$0")/.."
lib=${1:-build/libkiln.a}
modules=(util macro rpmtag spec pack sign repo chroot api sources roots batch worker scheduler cli)
status=0
fail() { echo "lint: $*" >&2; status=1; }

c_files() { git ls-files --cached --others --exclude-standard -- '*.c' '*.h' 2>/dev/null |
	grep -v '^tests/data/' || true; }
mapfile -t files < <(c_files)
mapfile -t lib_c < <(printf '%s\n' "${files[@]}" | grep -E "^($(IFS='|'; echo "${modules[*]}"))/" || true)

# 1. Formatting decides layout.
if ! out=$(clang-format --dry-run -Werror "${files[@]}" 2>&1); then
	echo "$out" | head -20 >&2
	fail "clang-format: files need 'make format'"
fi

# 2. cppcheck on the library and the program.
if ! out=$(cppcheck -q -j2 --error-exitcode=1 --enable=warning,portability --std=c11 \
	--inline-suppr -I. -D_GNU_SOURCE -DKILN_VERSION='"lint"' \
	--suppress=missingIncludeSystem --suppress=unknownMacro "${lib_c[@]}" 2>&1); then
	echo "$out" | head -40 >&2
	fail "cppcheck found problems"
fi

# 3. Layering: a module includes only headers of itself and of modules before it, and of
#    another module only its public <m>/<m>.h (util.h pulls in compat.h and limits.h).
index_of() { local i; for i in "${!modules[@]}"; do [ "${modules[$i]}" = "$1" ] && echo "$i"; done; }
for f in "${lib_c[@]}"; do
	m=${f%%/*}
	mi=$(index_of "$m")
	while IFS= read -r inc; do
		dep=${inc%%/*}
		di=$(index_of "$dep")
		[ -z "$di" ] && continue
		if [ "$dep" != "$m" ]; then
			[ "$di" -gt "$mi" ] && fail "$f includes $inc: $m may not depend on $dep (higher layer)"
			case "$inc" in
			"$dep/$dep.h") ;;
			util/compat.h | util/limits.h) ;;
			*) fail "$f includes $inc: other modules may include only $dep/$dep.h" ;;
			esac
		fi
	done < <(sed -n 's/^#include "\([^"]*\)".*/\1/p' "$f")
done

# 4. Every .c starts with util/util.h (it brings compat.h and banned.h).
for f in $(printf '%s\n' "${files[@]}" | grep '\.c$'); do
	first=$(grep -m1 '^#include' "$f" || true)
	[ "$first" = '#include "util/util.h"' ] || fail "$f: first include must be \"util/util.h\""
done

# 5. The wall clock is read only in util/clock.c (rule 17).
for f in "${lib_c[@]}"; do
	[ "$f" = util/clock.c ] && continue
	grep -nE '(^|[^_a-z])(time|gettimeofday)[[:space:]]*\(|CLOCK_REALTIME' "$f" |
		grep -vE '^[0-9]+:[[:space:]]*(/\*|\*)' |
		sed "s|^|$f:|" | grep . >&2 && fail "$f reads the wall clock: use util_clock_*"
done

# 6. Exported symbols carry kiln_ or a module prefix (rule 2).
if [ -f "$lib" ]; then
	prefix="^(kiln_|$(IFS='|'; echo "${modules[*]/%/_}"))"
	bad=$(nm -g --defined-only "$lib" 2>/dev/null | awk 'NF==3 && $2 ~ /[TDBRC]/ {print $3}' |
		grep -vE "$prefix" || true)
	[ -n "$bad" ] && fail "exported symbols without a kiln_/module prefix: $(echo $bad)"
fi

# 7. Each public header compiles on its own.
cflags=$(pkg-config --cflags libcrypto 2>/dev/null)
for m in "${modules[@]}"; do
	h=$m/$m.h
	[ -f "$h" ] || continue
	echo "#include \"$h\"" | cc -std=c17 -D_GNU_SOURCE -I. $cflags -Wall -Werror -fsyntax-only -x c - ||
		fail "$h does not compile on its own"
done

[ $status -eq 0 ] && echo "lint: ok (${#files[@]} files)"
exit $status
