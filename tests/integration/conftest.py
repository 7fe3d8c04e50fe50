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
