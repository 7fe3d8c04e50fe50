"""Shared fixtures for kiln's integration tests: the real build/kiln binary, temp dirs."""
import itertools
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


PG_HARNESS = ROOT / "tests" / "pg" / "pg-harness.sh"
PG_DATABASES = itertools.count(1)


@pytest.fixture(scope="session")
def postgres_server():
    """A PostgreSQL server of Debian's packages for this session (tests/pg/pg-harness.sh:
    initdb + pg_ctl as an unprivileged user, a unix socket in a temp dir): its directory.
    Skipped only when PostgreSQL is not installed."""
    r = subprocess.run([str(PG_HARNESS), "start"], capture_output=True, text=True, timeout=120)
    if r.returncode == 77:
        pytest.skip(r.stderr.strip())
    if r.returncode != 0:
        pytest.fail(f"PostgreSQL harness failed to start: {r.stderr.strip()}")
    pgdir = r.stdout.split("\n")[0]
    try:
        yield pgdir
    finally:
        subprocess.run([str(PG_HARNESS), "stop", pgdir], timeout=120, check=False)


@pytest.fixture
def postgres_url(postgres_server):
    """The URL of a fresh database on the session's PostgreSQL server."""
    name = f"t{os.getpid()}_{next(PG_DATABASES)}"
    subprocess.run([str(PG_HARNESS), "createdb", postgres_server, name], check=True,
                   timeout=60)
    return f"postgresql://kiln@/{name}?host={postgres_server}"


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


def kiln_at_commit(sha: str) -> Path:
    """build/kiln of an earlier commit of this repository (a data directory or database
    that commit's kiln made is what an upgrade starts from), built once into
    debian_root_cache()/kiln-SHA from `git archive` (about 30 s on 2 CPUs). Skips, saying
    why, only where the history is not there (not a git checkout, or a shallow one)."""
    import shutil
    import tempfile

    if subprocess.run(["git", "-C", str(ROOT), "cat-file", "-e", f"{sha}^{{commit}}"],
                      capture_output=True).returncode:
        pytest.skip(f"commit {sha} is not in this checkout's history (not a git clone, or a "
                    "shallow one): cannot build the kiln that made the old data")
    cache = debian_root_cache()
    cache.mkdir(parents=True, exist_ok=True)
    top = cache / f"kiln-{sha}"
    with open(cache / f"kiln-{sha}.lock", "w") as lock:
        import fcntl

        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (top / "build" / "kiln").exists():
            part = Path(tempfile.mkdtemp(dir=cache, prefix=f"kiln-{sha}.part"))
            try:
                archive = subprocess.run(["git", "-C", str(ROOT), "archive", sha],
                                         capture_output=True, check=True).stdout
                subprocess.run(["tar", "-x", "-C", str(part)], input=archive, check=True)
                r = subprocess.run(["make", "-C", str(part), f"-j{os.cpu_count() or 2}",
                                    "build/kiln"], capture_output=True, text=True)
                assert r.returncode == 0, f"building kiln at {sha}: {r.stdout[-2000:]}" \
                    f"{r.stderr[-2000:]}"
                shutil.rmtree(top, ignore_errors=True)
                part.rename(top)
            finally:
                shutil.rmtree(part, ignore_errors=True)
    return top / "build" / "kiln"


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


# The RPM distribution the roots tests (issue 21) install from: this machine's Debian
# toolchain packages rebuilt as RPMs by kiln, signed, with a comps group
# (tests/fixtures/debrpm.py, docs/roots.md). Cached by a key over the generator, the kiln
# sources that shape packages and repositories, and the Debian packages' versions.
DEBRPM_KILN_INPUTS = ("util", "macro", "spec", "rpmtag", "pack", "sign", "chroot", "worker",
                      "sources", "repo", "configs",
                      "cli/cmd_build.c", "cli/cmd_repo.c", "cli/cmd_keygen.c")
DEBRPM_STALE_AFTER = 24 * 3600  # other keys' repositories unused this long are removed


class DebRpmRepo:
    """A made fixture distribution: repo (the repository directory, baseurl file://repo),
    key (the armored public key), secret_key, info (INFO.json)."""

    def __init__(self, top: Path):
        import json

        self.top = top
        self.repo = top / "repo"
        self.key = top / "key" / "key.asc"
        self.secret_key = next((top / "key").glob("*.key"))
        self.info = json.loads((top / "INFO.json").read_text())

    def root_config(self, install: str = "@buildsys-build") -> str:
        """A root configuration over this repository in the minimal form of issue 21."""
        return (f"[root]\narch = x86_64\ninstall = {install}\n\n"
                f"[repo base]\nbaseurl = file://{self.repo}\ngpgkey = file://{self.key}\n")


def debrpm_key(debrpm) -> str:
    import hashlib

    h = hashlib.sha256()
    h.update(Path(debrpm.__file__).read_bytes())
    for item in DEBRPM_KILN_INPUTS:
        p = ROOT / item
        files = sorted(p.rglob("*")) if p.is_dir() else [p] if p.exists() else []
        for f in files:
            if f.is_file() and not f.name.startswith("."):
                h.update(str(f.relative_to(ROOT)).encode() + b"\0" + f.read_bytes())
    pkgs = debrpm.dpkg_packages()
    for name in debrpm.closure(pkgs):
        h.update(f"{name} {pkgs[name]['Version']} {pkgs[name]['Architecture']}\n".encode())
    return h.hexdigest()[:16]


@pytest.fixture(scope="session")
def debrpm_repo(kiln_bin) -> DebRpmRepo:
    """The fixture distribution (see DebRpmRepo), made once per key under
    debian_root_cache()/debrpm-KEY (about 30 s on 2 CPUs). Skips, saying why, only where
    it cannot be made (a toolchain package not installed, not root)."""
    import fcntl
    import shutil
    import sys
    import time

    sys.path.insert(0, str(ROOT / "tests" / "fixtures"))
    import debrpm

    try:
        key = debrpm_key(debrpm)
    except debrpm.Failure as e:
        pytest.skip(f"no fixture distribution: {e}")
    cache = debian_root_cache()
    cache.mkdir(parents=True, exist_ok=True)
    top = cache / f"debrpm-{key}"
    with open(cache / f"debrpm-{key}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (top / "INFO.json").exists():
            if os.geteuid() != 0:
                pytest.skip("no fixture distribution: its packages copy host files only "
                            "root can read (/var/cache/ldconfig): run as root")
            part = cache / f"debrpm-{key}.part"
            shutil.rmtree(part, ignore_errors=True)
            try:
                debrpm.make(str(kiln_bin), part, os.cpu_count() or 1, "w3.zstdio", False)
            except debrpm.Failure as e:
                shutil.rmtree(part, ignore_errors=True)
                pytest.fail(f"tests/fixtures/debrpm.py failed: {e}")
            shutil.rmtree(top, ignore_errors=True)
            part.rename(top)
            for old in cache.glob("debrpm-*"):
                if old.is_dir() and old != top and \
                        time.time() - old.stat().st_mtime > DEBRPM_STALE_AFTER:
                    shutil.rmtree(old, ignore_errors=True)
                    (cache / f"{old.name}.lock").unlink(missing_ok=True)
        os.utime(top)
    return DebRpmRepo(top)
