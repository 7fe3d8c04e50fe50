"""kiln build --verify-reproducible: a well-behaved spec is identical across reruns with
variations; specs that embed the time, $RANDOM or the host name are caught, by file."""
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

import test_build as tb

ENV = {k: v for k, v in tb.ENV.items() if k != "SOURCE_DATE_EPOCH"}


def verify(kiln_bin, tmp_path, spec, *args):
    cmd = [str(kiln_bin), "build", "-bb", "--verify-reproducible", "--define",
           f"_topdir {tmp_path / 'top'}", *args, str(spec)]
    return subprocess.run(cmd, env=ENV, capture_output=True, text=True, timeout=600)


def test_well_behaved_spec_is_reproducible(kiln_bin, tmp_path):
    top = tb.topdir_with_sources(tmp_path / "k")
    cmd = [str(kiln_bin), "build", "-ba", "--verify-reproducible=3", "--json", "--define",
           f"_topdir {top}", str(tb.DATA / "hello.spec")]
    k = subprocess.run(cmd, env=ENV, capture_output=True, text=True, timeout=600)
    assert k.returncode == 0, k.stdout + k.stderr
    doc = json.loads(k.stdout)
    rep = doc["reproducible"]
    assert {k: rep[k] for k in ("runs", "identical", "differences")} == \
        {"runs": 3, "identical": True, "differences": []}
    assert rep["varied"].startswith("time, build_path, hostname, cpus, umask")
    assert len(rep["kept"]) == 2
    for kept in rep["kept"]:
        assert (Path(kept) / "SRPMS/hello-1.0-1.src.rpm").exists()
        assert not (Path(kept) / "BUILD").exists()
        shutil.rmtree(kept)
    assert len(doc["outputs"]) == 3
    for o in doc["outputs"]:  # the first run's packages are the build's output
        assert os.path.exists(o["path"]) and o["path"].startswith(str(top))


@pytest.mark.parametrize("what,cmd", [
    ("date", "date +%s%N"),
    ("random", "bash -c 'echo $RANDOM$RANDOM'"),
    ("hostname", "uname -n"),
])
def test_nondeterminism_is_caught_and_named(kiln_bin, tmp_path, what, cmd):
    spec = tmp_path / f"{what}.spec"
    spec.write_text(
        f"Name: leak-{what}\nVersion: 1\nRelease: 1\nSummary: s\nLicense: MIT\n"
        "BuildArch: noarch\n%description\nd\n%install\n"
        f"mkdir -p %{{buildroot}}/usr/share/leak\n{cmd} > %{{buildroot}}/usr/share/leak/{what}\n"
        "echo same > %{buildroot}/usr/share/leak/stable\n"
        "%files\n/usr/share/leak\n%changelog\n* Tue Dec 01 2026 A <a@b> - 1-1\n- x\n")
    k = verify(kiln_bin, tmp_path, spec)
    assert k.returncode == 1, k.stdout + k.stderr
    assert "NOT reproducible" in k.stdout
    assert f"/usr/share/leak/{what}: contents differ" in k.stdout
    assert "/usr/share/leak/stable" not in k.stdout


@pytest.mark.parametrize("lister", ["ls -U", "find"])
def test_file_order_dependence_is_caught_and_named(kiln_bin, tmp_path, lister):
    """A package that records the order a directory lists in: the rerun sees the build
    directories through disorderfs, reversed, so it differs whatever the file system."""
    import shutil
    if not shutil.which("disorderfs") or not os.access("/dev/fuse", os.W_OK):
        pytest.skip("disorderfs or /dev/fuse missing: the file order variation is skipped")
    spec = tmp_path / "order.spec"
    spec.write_text(
        "Name: order\nVersion: 1\nRelease: 1\nSummary: s\nLicense: MIT\n"
        "BuildArch: noarch\n%description\nd\n%install\n"
        "mkdir -p %{buildroot}/usr/share/order/d\ncd %{buildroot}/usr/share/order\n"
        "for f in one two three four five six; do echo $f > d/$f; done\n"
        f"{lister} d > listing\n"
        "%files\n/usr/share/order\n%changelog\n* Tue Dec 01 2026 A <a@b> - 1-1\n- x\n")
    k = verify(kiln_bin, tmp_path, spec)
    assert k.returncode == 1, k.stdout + k.stderr
    assert "/usr/share/order/listing: contents differ" in k.stdout
    assert "/usr/share/order/d/one" not in k.stdout


def test_a_failing_rerun_is_an_error(kiln_bin, tmp_path):
    k = verify(kiln_bin, tmp_path, tb.FAIL / "fail-build.spec")
    assert k.returncode == 1
    assert "Bad exit status" in k.stderr
