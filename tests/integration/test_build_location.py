"""Where kiln is installed never shows in what it writes, and specs see rpm's directories.

kiln loads its configuration and runs its helper scripts (rpmuncompress, find-lang.sh) from
its own directory (KILN_CONFIGDIR here), but a sandboxed build sees them at the fixed
/builddir/kiln, so two workers with kiln installed in different places write the same
bytes. %{_rpmconfigdir}, %{_rpmmacrodir}... are rpm's paths (/usr/lib/rpm...), as a spec
that installs a macro file expects.
"""
import shutil
import subprocess

import pytest

import test_build as tb
from conftest import ROOT

RPM_DIRS = "%{_rpmconfigdir}|%{_rpmmacrodir}|%{_rpmluadir}|%{_fileattrsdir}"


def configs_copy(base):
    dest = base / "lib" / "kiln"
    shutil.copytree(ROOT / "configs", dest, symlinks=True)
    return dest


def sandbox_build(kiln_bin, top, conf, *args):
    env = dict(tb.ENV, KILN_CONFIGDIR=str(conf))
    cmd = [str(kiln_bin), "build", "--sandbox", "--define", f"_topdir {top}", *map(str, args)]
    r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    if r.returncode and "sandbox" in r.stderr and "not available" in r.stderr:
        pytest.skip(f"no build sandbox here: {r.stderr.strip()}")
    return r


def test_spec_sees_rpm_directories_not_kiln_install(kiln_bin, tmp_path):
    conf = configs_copy(tmp_path / "inst")
    want = subprocess.run(["rpm", "--eval", RPM_DIRS], capture_output=True, text=True,
                          check=True).stdout
    assert want == "/usr/lib/rpm|/usr/lib/rpm/macros.d|/usr/lib/rpm/lua|/usr/lib/rpm/fileattrs\n"
    got = subprocess.run([str(kiln_bin), "eval", RPM_DIRS], capture_output=True, text=True,
                         env=dict(tb.ENV, KILN_CONFIGDIR=str(conf)))
    assert got.returncode == 0, got.stderr
    assert got.stdout == want
    # kiln's own directory has a name of its own.
    got = subprocess.run([str(kiln_bin), "eval", "%{_kiln_confdir}"], capture_output=True,
                         text=True, env=dict(tb.ENV, KILN_CONFIGDIR=str(conf)))
    assert got.stdout == f"{conf}\n"


def test_macro_file_goes_to_rpm_macrodir(kiln_bin, tmp_path):
    """What glibc, mingw-filesystem or zig do: install a macro file into %{_rpmmacrodir}."""
    conf = configs_copy(tmp_path / "inst")
    spec = tmp_path / "mf.spec"
    spec.write_text(
        "Name: mf\nVersion: 1\nRelease: 1\nSummary: s\nLicense: MIT\nBuildArch: noarch\n"
        "%description\nd\n%install\nmkdir -p %{buildroot}%{_rpmmacrodir}\n"
        "echo '%%mf 1' > %{buildroot}%{_rpmmacrodir}/macros.mf\n"
        "%files\n%{_rpmmacrodir}/macros.mf\n")
    top = tmp_path / "top"
    r = subprocess.run([str(kiln_bin), "build", "-bb", "--no-sandbox", "--define",
                        f"_topdir {top}", str(spec)], capture_output=True, text=True,
                       env=dict(tb.ENV, KILN_CONFIGDIR=str(conf)), timeout=300)
    assert r.returncode == 0, r.stderr
    pkg = top / "RPMS" / "noarch" / "mf-1-1.noarch.rpm"
    files = subprocess.run(["rpm", "-qpl", str(pkg)], capture_output=True, text=True,
                           check=True).stdout
    assert files == "/usr/lib/rpm/macros.d/macros.mf\n"


def test_packages_do_not_depend_on_install_location(kiln_bin, tmp_path):
    """Two installations of kiln (copies of configs/ in two places) build the same source
    and binary packages, byte for byte; the SPEC tag names the fixed helper path."""
    tops = []
    for name in ("one", "two"):
        conf = configs_copy(tmp_path / f"inst-{name}")
        top = tb.topdir_with_sources(tmp_path / name)
        r = sandbox_build(kiln_bin, top, conf, "-ba", tb.DATA / "hello.spec")
        assert r.returncode == 0, r.stderr
        tops.append(top)
    pkgs = tb.outputs(tops[0])
    assert pkgs == tb.outputs(tops[1]) and len(pkgs) == 3
    for rel in pkgs:
        assert (tops[0] / rel).read_bytes() == (tops[1] / rel).read_bytes(), rel
    srpm = tops[0] / "SRPMS" / "hello-1.0-1.src.rpm"
    spec = tb.qf(srpm, "%{SPEC}")
    assert "/builddir/kiln/rpmuncompress -x " in spec
    assert str(tmp_path) not in spec and str(ROOT) not in spec


def test_verify_reproducible_varies_install_location(kiln_bin, tmp_path):
    """--verify-reproducible's rerun sees kiln installed elsewhere: a package recording
    kiln's own directory is caught."""
    spec = tmp_path / "where.spec"
    spec.write_text(
        "Name: where\nVersion: 1\nRelease: 1\nSummary: s\nLicense: MIT\nBuildArch: noarch\n"
        "%description\nd\n%install\nmkdir -p %{buildroot}/usr/share/where\n"
        "echo %{_kiln_confdir} > %{buildroot}/usr/share/where/conf\n"
        "echo %{__rpmuncompress} > %{buildroot}/usr/share/where/helper\n"
        "%files\n/usr/share/where\n%changelog\n* Tue Dec 01 2026 A <a@b> - 1-1\n- x\n")
    conf = configs_copy(tmp_path / "inst")
    env = dict(tb.ENV, KILN_CONFIGDIR=str(conf))
    env.pop("SOURCE_DATE_EPOCH")
    cmd = [str(kiln_bin), "build", "-bb", "--sandbox", "--verify-reproducible", "--define",
           f"_topdir {tmp_path / 'top'}", str(spec)]
    k = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    if k.returncode and "not available" in k.stderr:
        pytest.skip(f"no build sandbox here: {k.stderr.strip()}")
    assert k.returncode == 1, k.stdout + k.stderr
    assert "/usr/share/where/conf: contents differ" in k.stdout
    # The helper's path, as the build sees it, is the same wherever kiln is.
    assert "/usr/share/where/helper" not in k.stdout
