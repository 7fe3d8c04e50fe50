"""Shared fixtures for kiln's integration tests: the real build/kiln binary, temp dirs."""
import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def kiln_binary() -> Path:
    return Path(os.environ.get("KILN_BIN", ROOT / "build" / "kiln"))


@pytest.fixture(scope="session")
def kiln_bin() -> Path:
    path = kiln_binary()
    if not path.exists():
        pytest.fail(f"{path} is missing: run make first")
    return path


@pytest.fixture
def kiln(kiln_bin):
    """Run kiln with arguments; returns the CompletedProcess (text mode)."""

    def run(*args, input=None, env=None, cwd=None, timeout=120):
        full_env = dict(os.environ)
        if env:
            full_env.update(env)
        return subprocess.run([str(kiln_bin), *map(str, args)], input=input,
                              capture_output=True, text=True, env=full_env, cwd=cwd,
                              timeout=timeout)

    return run


@pytest.fixture(scope="session")
def rpm_packages(tmp_path_factory):
    """Packages built once per session by Debian's rpmbuild from tests/data/pack/specs
    ({label: path}, see rpmfix.build_all)."""
    import rpmfix

    return rpmfix.build_all(tmp_path_factory.mktemp("rpmbuild"))


# A Debian build root for `--root dir:` tests: packages extracted (no maintainer scripts,
# which is what makes it ~30 s instead of ~3 min), merged /usr like Debian 12, and the `cc`
# link that update-alternatives would have made. Built once per cache key: the key names the
# suite, the variant and every package, so changing the list makes a new root.
DEBIAN_ROOT_SUITE = "bookworm"
DEBIAN_ROOT_PACKAGES = ("bash", "coreutils", "dash", "diffutils", "findutils", "gcc", "grep",
                        "gzip", "libc6-dev", "make", "patch", "sed", "tar")
DEBIAN_ROOT_MAX_AGE = 7 * 24 * 3600  # then the mirror has moved on: make it again


def debian_root_cache() -> Path:
    env = os.environ.get("KILN_TEST_CACHE")
    if env:
        return Path(env)
    if os.geteuid() == 0:
        return Path("/var/cache/kiln-test")
    return Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "kiln-test"


def debian_root_make(dest: Path) -> str:
    """mmdebstrap into dest; returns "" or why it could not run."""
    import shutil

    if not shutil.which("mmdebstrap"):
        return "mmdebstrap is not installed (scripts/deps.sh installs it)"
    cmd = ["mmdebstrap", "--quiet", "--variant=extract",
           "--hook-dir=/usr/share/mmdebstrap/hooks/merged-usr",
           "--include=" + ",".join(DEBIAN_ROOT_PACKAGES), DEBIAN_ROOT_SUITE, str(dest)]
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    except subprocess.TimeoutExpired:
        return "mmdebstrap took more than 600 s"
    if r.returncode != 0:
        last = (r.stderr.strip().splitlines() or ["no output"])[-1]
        return f"mmdebstrap failed (exit {r.returncode}): {last}"
    (dest / "usr/bin/cc").symlink_to("gcc")
    return ""


@pytest.fixture(scope="session")
def debian_root() -> Path:
    """The path of a Debian 12 root with sh, coreutils, make and gcc, made with mmdebstrap
    and cached in debian_root_cache() (one per package list; a fresh CI machine makes it
    once per run). Skips, saying why, only where mmdebstrap cannot make it."""
    import fcntl
    import hashlib
    import shutil
    import time

    key = hashlib.sha256(" ".join(("extract", "merged-usr", DEBIAN_ROOT_SUITE,
                                   *DEBIAN_ROOT_PACKAGES)).encode()).hexdigest()[:16]
    cache = debian_root_cache() / "roots"
    cache.mkdir(parents=True, exist_ok=True)
    root = cache / key
    with open(cache / f"{key}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        done = root / ".kiln-test-root"
        if done.exists() and time.time() - done.stat().st_mtime > DEBIAN_ROOT_MAX_AGE:
            shutil.rmtree(root)
        if not done.exists():
            part = cache / f"{key}.part"
            shutil.rmtree(part, ignore_errors=True)
            why = debian_root_make(part)
            if why:
                shutil.rmtree(part, ignore_errors=True)
                pytest.skip(f"no Debian dir: root could be made: {why}")
            (part / ".kiln-test-root").write_text(key + "\n")
            shutil.rmtree(root, ignore_errors=True)
            part.rename(root)
    return root
