#!/bin/sh
# Install the Debian packages kiln needs to build and test, and nothing else.
# The one list of packages lives here; `make deps`, `make check` and `make demo` call it.
# It asks dpkg what is missing and runs apt-get (with one `update`) only when something is.
set -eu

# Libraries kiln links, and the tools that build it.
BUILD="build-essential pkg-config git
 libcurl4-openssl-dev libgit2-dev libssl-dev libzstd-dev liblzma-dev liblua5.4-dev
 libsqlite3-dev libmicrohttpd-dev libjansson-dev zlib1g-dev libmagic-dev
 libsolv-dev libsolvext-dev libpq-dev"

# Test harnesses and linters.
TEST="libcmocka-dev python3-pytest clang-format cppcheck clang libclang-rt-14-dev valgrind"
# The upstream-package tests make a real autotools package (autoreconf).
TEST="$TEST autoconf automake"
# The dashboard's browser test: Debian's Chromium driven by playwright-core (tests/web/,
# installed with npm ci by scripts/web-deps.sh; Playwright never downloads a browser).
TEST="$TEST chromium nodejs"
# The PostgreSQL store's tests start a real server (tests/pg/pg-harness.sh).
TEST="$TEST postgresql"
# The dependency generator's 32-bit ELF test links with gcc -m32.
TEST="$TEST gcc-multilib"

# The real tools kiln is checked against (oracles).
ORACLES="rpm rpm2cpio sq gnupg createrepo-c dnf diffoscope-minimal python3-rpm
 python3-libarchive-c cpio libarchive-tools zstd xz-utils iproute2 zypper
 lz4 lzip bzip2"

# Tools kiln runs: disorderfs (FUSE) for the file_order reproducibility variation; debugedit
# (find-debuginfo) for %debug_package, elfutils (eu-elfclassify) for brp-elfperms.
RUNTIME="disorderfs debugedit elfutils"

# Test fixtures: mmdebstrap makes the Debian root the `--root dir:` tests build in; gawk,
# busybox and file join the toolchain tests/fixtures/debrpm.py turns into an RPM
# distribution.
FIXTURES="mmdebstrap gawk busybox file"

# Optional extra packages for a caller (e.g. KILN_DEPS_EXTRA="hyperfine" for benchmarks).
EXTRA="${KILN_DEPS_EXTRA:-}"

missing=""
for p in $BUILD $RUNTIME $TEST $ORACLES $FIXTURES $EXTRA; do
	if ! dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null | grep -qx installed; then
		missing="$missing $p"
	fi
done

if [ -z "$missing" ]; then
	exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
	echo "deps.sh: missing Debian packages:$missing" >&2
	echo "deps.sh: run as root (or: sudo apt-get install$missing)" >&2
	exit 1
fi

echo "deps.sh: installing:$missing" >&2
export DEBIAN_FRONTEND=noninteractive
# Several builds may run deps.sh at once: wait for dpkg's lock instead of failing.
apt-get -o DPkg::Lock::Timeout=600 update -qq
# --no-install-recommends keeps diffoscope-minimal and dnf small (see shared/ORACLES.md).
# shellcheck disable=SC2086
apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends $missing >/dev/null
