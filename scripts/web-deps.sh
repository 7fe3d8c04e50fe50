#!/bin/sh
# Install the web tests' npm packages (tests/web: playwright-core, swagger-parser, ajv, pinned by its
# package-lock.json) with `npm ci`, only when the lockfile changed since the last install.
# Playwright never downloads a browser here: the test drives Debian's /usr/bin/chromium.
set -eu
cd "$(dirname "$0")/../tests/web"
stamp=node_modules/.kiln-lock
if [ -f "$stamp" ] && cmp -s package-lock.json "$stamp"; then
	exit 0
fi
if ! command -v npm >/dev/null 2>&1; then
	echo "web-deps.sh: npm is missing (Debian: apt-get install npm)" >&2
	exit 1
fi
PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund --loglevel=error
cp package-lock.json "$stamp"
