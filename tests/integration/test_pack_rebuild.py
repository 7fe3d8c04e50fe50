"""pack_write() against rpmbuild: the same description gives the same bytes.

Each package Debian's rpmbuild built from tests/data/pack/specs is extracted, described to
pack_write() the way the build pipeline describes a package (its spec-level tags, and one
file entry per header file with contents from the extracted tree; see
tests/helpers/pkgrebuild.c) and written again. kiln computes every file tag, the payload
(cpio, gzip/xz/zstd at rpm's settings, single- and multi-threaded), the rpmlib() requirements
that follow from the files and the payload, all digests and the signature header, so an
identical file means kiln writes v4 packages (binary and source) the way rpmbuild does.
"""
import subprocess

import pytest

import rpmfix
from rpmfix import run

REBUILD = rpmfix.HELPERS / "pkgrebuild"


def extract(pkg, dest):
    dest.mkdir()
    r = subprocess.run(f"rpm2cpio '{pkg}' | cpio -idm --quiet --no-absolute-filenames",
                       shell=True, cwd=dest, capture_output=True)
    assert r.returncode == 0, r.stderr


def test_rebuilt_packages_are_rpmbuilds_bytes(rpm_packages, tmp_path):
    assert len(rpm_packages) >= 20
    for n, (label, pkg) in enumerate(sorted(rpm_packages.items())):
        tree = tmp_path / f"t{n}"
        out = tmp_path / f"k{n}.rpm"
        extract(pkg, tree)
        r = run([REBUILD, pkg, tree, out], text=True)
        assert r.returncode == 0, r.stderr
        want, got = pkg.read_bytes(), out.read_bytes()
        assert got == want, f"{label}:\n" + rpmfix.header_diff(want, got)


def test_rebuild_covers_the_interesting_cases(rpm_packages):
    """The specs give the comparison above something to compare."""
    q = "[%{FILEMODES:octal} %{FILEFLAGS:fflags} %{FILENLINKS} %{FILECAPS}|]"
    seen = " ".join(run(["rpm", "-qp", "--qf", q, p], text=True).stdout
                    for p in rpm_packages.values())
    for what in ("120777", "20000", "60660", "104755", "102755", "41777", " cn ", " cm ",
                 " cmng ", " g ", " d ", " l ", " 3 ", "cap_net_raw=ep", " s "):
        assert what in seen, what
    tags = run(["rpm", "-qp", "--qf", "%{PAYLOADCOMPRESSOR}%{PAYLOADFLAGS} "
                "%{TRIGGERNAME} %{FILETRIGGERNAME} %{TRANSFILETRIGGERNAME}\n",
                *rpm_packages.values()], text=True).stdout
    for what in ("gzip9", "xz2", "zstd3", "zstd19T2", "xz6T2", "bash", "/usr/lib/multi",
                 "/usr/lib64"):
        assert what in tags, what


def test_rebuild_detects_a_difference(rpm_packages, tmp_path):
    """The comparison can fail: change one file's contents and the digests differ."""
    pkg = rpm_packages["demo-1.2~rc1-3.noarch.rpm:gz"]
    tree = tmp_path / "t"
    extract(pkg, tree)
    (tree / "etc/demo/demo.conf").write_text("key=other\n")
    out = tmp_path / "k.rpm"
    assert run([REBUILD, pkg, tree, out]).returncode == 0
    diff = rpmfix.header_diff(pkg.read_bytes(), out.read_bytes())
    assert "main tag 1035" in diff and "payload differs" in diff
