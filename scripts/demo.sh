#!/bin/bash
# make demo: show kiln working end to end on this machine. Each issue extends it until it
# runs the whole farm; today: the command front, a reproducible local build, and the farm.
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

# The main job: build a real program from its spec like rpmbuild, in the sandbox, check
# the packages with rpm and prove the build reproducible.
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
TOP=$W/rpmbuild
mkdir -p "$TOP/SOURCES"
tar -C tests/data/build --owner=0 --group=0 --mtime=@1796126400 --sort=name -czf \
	"$TOP/SOURCES/hello-1.0.tar.gz" hello-1.0
cp tests/data/build/hello.conf tests/data/build/hello-greeting.patch "$TOP/SOURCES/"
say "kiln build -ba --define '_topdir $TOP' tests/data/build/hello.spec"
"$KILN" build -ba --define "_topdir $TOP" tests/data/build/hello.spec
say "rpm -qp --qf '%{NEVRA} [requires: %{REQUIRES}]' $TOP/RPMS/*/*.rpm"
rpm -qp --qf '%{NEVRA}\n[  requires: %{REQUIRES}\n]' "$TOP"/RPMS/*/*.rpm
say "rpm -K $TOP/RPMS/*/*.rpm $TOP/SRPMS/*.rpm"
rpm -K "$TOP"/RPMS/*/*.rpm "$TOP"/SRPMS/*.rpm
say "kiln build -bb --verify-reproducible --quiet tests/data/build/hello.spec"
"$KILN" build -bb --verify-reproducible --quiet --define "_topdir $TOP" tests/data/build/hello.spec

# The farm: a scheduler and two workers, jobs over the REST API, signed packages.
./scripts/farm-demo.sh
echo
echo "demo: ok"
