#!/bin/bash
# make demo: show kiln working end to end on this machine. Each issue extends it until it
# runs the whole farm; today it shows the command front.
set -eu
cd "$(dirname "$0")/.."
KILN=${KILN:-build/kiln}
say() { printf '\n\033[1m$ %s\033[0m\n' "$*"; }

say kiln --version
"$KILN" --version
say kiln version -v
"$KILN" version -v
say kiln help
"$KILN" help
say "kiln eval '%{_libdir}' '%[1 + 2 * 3]' '%{lua: print(rpm.expand(\"%{_target}\"))}'"
"$KILN" eval '%{_libdir}' '%[1 + 2 * 3]' '%{lua: print(rpm.expand("%{_target}"))}'
say "kiln eval --define 'f(x:) [%{-x*}|%*]' '%{f -x value one two}' '%{shescape:it'\''s}'"
"$KILN" eval --define 'f(x:) [%{-x*}|%*]' '%{f -x value one two}' "%{shescape:it's}"
echo
echo "demo: ok"
