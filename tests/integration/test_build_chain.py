"""kiln build --chain (issue 28, locally: mock's --chain --localrepo): specs given in any
order build in the order their BuildRequires ask, each in a root made from the fixture
distribution plus the chain's local repository, so a later package's root holds exactly
the package the chain built before it."""
import hashlib
import json
import os
import re
import subprocess
from pathlib import Path

import pytest

CHAIN = Path(__file__).resolve().parent.parent / "data" / "roots" / "chain"


@pytest.fixture(scope="module")
def chain_env(debrpm_repo, tmp_path_factory):
    top = tmp_path_factory.mktemp("chain")
    cfg = top / "fixture-x86_64.cfg"
    cfg.write_text(debrpm_repo.root_config())
    env = dict(os.environ, KILN_CACHE_DIR=str(top / "cache"), TMPDIR=str(top))
    return cfg, env, top


def chain(kiln_bin, env, *args, timeout=1200):
    return subprocess.run([str(kiln_bin), "build", "--chain", *map(str, args)],
                          capture_output=True, text=True, env=env, timeout=timeout)


def sha256(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def work_dir(out):
    return Path(re.search(r"locks and build trees in (\S+)\)", out).group(1))


def test_three_levels_given_in_reverse_build_in_order(kiln_bin, chain_env, tmp_path):
    cfg, env, _ = chain_env
    repo = tmp_path / "results"
    r = chain(kiln_bin, env, "--root", cfg, "--localrepo", repo, "--nocheck",
              CHAIN / "chainc.spec", CHAIN / "chaind.spec", CHAIN / "chainb.spec",
              CHAIN / "chaina.spec")
    assert r.returncode == 0, r.stdout + r.stderr
    plan = re.findall(r"^  \d+\. (\S+) \(level (\d)", r.stdout, re.M)
    assert plan == [("chaina", "0"), ("chaind", "1"), ("chainb", "1"), ("chainc", "2")]
    assert "chainc (level 2, " in r.stdout and ": after chainb" in r.stdout
    assert "chain: 4 of 4 built" in r.stdout
    rpms = {p.name for p in repo.glob("*.rpm")}
    assert {"chaina-devel-1.2-1.noarch.rpm", "chainb-devel-2.0-1.noarch.rpm",
            "chainc-3.0-1.noarch.rpm", "chaind-3.0-1.noarch.rpm",
            "chainb-2.0-1.src.rpm"} <= rpms
    assert (repo / "repodata/repomd.xml").exists()
    # Each level's lock holds the package the chain built before it, by its sha256.
    work = work_dir(r.stdout)
    lock_b = json.loads((work / "locks/chainb.lock.json").read_text())
    a = [p for p in lock_b["packages"] if p["name"] == "chaina-devel"]
    assert len(a) == 1 and a[0]["repo"] == "kiln-chain"
    assert a[0]["sha256"] == sha256(repo / "chaina-devel-1.2-1.noarch.rpm")
    lock_c = json.loads((work / "locks/chainc.lock.json").read_text())
    b = [p for p in lock_c["packages"] if p["name"] == "chainb-devel"]
    assert b and b[0]["sha256"] == sha256(repo / "chainb-devel-2.0-1.noarch.rpm")
    # ...and what each built from is what the earlier one made.
    out = subprocess.run(["rpm2cpio", repo / "chainc-3.0-1.noarch.rpm"], capture_output=True)
    assert b"chaina 1.2\nchainb 2.0\nchainc 3.0\n" in out.stdout


def test_a_failure_stops_only_its_dependents(kiln_bin, chain_env, tmp_path):
    cfg, env, _ = chain_env
    r = chain(kiln_bin, env, "--root", cfg, "--define", "chain_fail 1", "--nocheck",
              CHAIN / "chainc.spec", CHAIN / "chainb.spec", CHAIN / "chaind.spec",
              CHAIN / "chaina.spec")
    assert r.returncode == 1, r.stdout + r.stderr
    states = dict(re.findall(r"^  (chain\w)\s+(\w+)", r.stdout, re.M))
    assert states == {"chaina": "built", "chainb": "failed", "chaind": "built",
                      "chainc": "dep_failed"}, r.stdout
    assert re.search(r"chainc\s+dep_failed \(waits for chainb\)", r.stdout)
    assert "chain: 2 of 4 built" in r.stdout


def test_a_cycle_is_named_and_a_bootstrap_breaks_it(kiln_bin, chain_env, tmp_path):
    cfg, env, _ = chain_env
    specs = []
    for name, needs in (("cyca", "cycb-devel"), ("cycb", "cyca-devel")):
        text = (CHAIN / "chaina.spec").read_text().replace("chaina", name)
        text = text.replace("BuildArch: noarch\n",
                            f"BuildArch: noarch\nBuildRequires: {needs}\n")
        spec = tmp_path / f"{name}.spec"
        spec.write_text(text)
        specs.append(spec)
    r = chain(kiln_bin, env, "--root", cfg, *specs)
    assert r.returncode == 1
    assert ("build dependency cycle: cyca, cycb (cyca: BuildRequires: cycb-devel, "
            "built by cycb; cycb: BuildRequires: cyca-devel, built by cyca)" in r.stderr), r.stderr
    assert "chain:" not in r.stdout  # nothing was built
    # cycb first: on the root alone its BuildRequires cannot be met (there is no cyca-devel
    # yet), so it fails and cyca waits; the order is what is checked.
    r = chain(kiln_bin, env, "--root", cfg, "--bootstrap", "cycb", *specs)
    assert r.returncode == 1, r.stdout + r.stderr
    assert re.findall(r"^  \d+\. (\S+)", r.stdout, re.M) == ["cycb", "cyca"]
    assert "cyca: not built: it waits for cycb" in r.stdout
    assert "cyca-devel" in r.stderr  # the root's resolution names what is missing


def test_chain_usage_errors(kiln_bin, chain_env):
    cfg, env, _ = chain_env
    r = chain(kiln_bin, env, CHAIN / "chaina.spec")
    assert r.returncode == 2 and "--chain needs --root CONFIG" in r.stderr
    r = chain(kiln_bin, env, "--root", cfg, "-bb", CHAIN / "chaina.spec")
    assert r.returncode == 2 and "not with -bb" in r.stderr
    r = subprocess.run([str(kiln_bin), "build", "--bootstrap", "x", CHAIN / "chaina.spec"],
                       capture_output=True, text=True, env=env)
    assert r.returncode == 2 and "go with --chain" in r.stderr


def test_source_packages_chain_too(kiln_bin, chain_env, tmp_path):
    """SRPMs: the spec inside each is read for the order, and each is built with --rebuild."""
    cfg, env, _ = chain_env
    top = tmp_path / "top"
    for name in ("chaina", "chainb"):
        r = subprocess.run([str(kiln_bin), "build", "-bs", "--topdir", str(top),
                            str(CHAIN / f"{name}.spec")], capture_output=True, text=True,
                           env=env)
        assert r.returncode == 0, r.stderr
    r = chain(kiln_bin, env, "--root", cfg, top / "SRPMS/chainb-2.0-1.src.rpm",
              top / "SRPMS/chaina-1.2-1.src.rpm")
    assert r.returncode == 0, r.stdout + r.stderr
    assert re.findall(r"^  \d+\. (\S+)", r.stdout, re.M) == ["chaina", "chainb"]
    repo = Path(re.search(r"^chain: results in (\S+) ", r.stdout, re.M).group(1))
    assert (repo / "chainb-devel-2.0-1.noarch.rpm").exists()
