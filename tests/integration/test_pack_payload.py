"""kiln cpio / archive / check and payload extraction against rpm2cpio, rpm -K, bsdtar."""
import os
import stat
import subprocess

import pytest

import rpmfix
from rpmfix import run


@pytest.fixture(scope="session")
def packages(rpm_packages):
    return rpm_packages


def test_cpio_matches_rpm2cpio(kiln_bin, packages):
    for pkg in packages.values():
        want = run(["rpm2cpio", pkg])
        got = run([kiln_bin, "cpio", pkg])
        assert got.returncode == 0, got.stderr
        assert got.stdout == want.stdout, pkg


def test_check_matches_rpm(kiln_bin, packages):
    for pkg in packages.values():
        for v in ([], ["-v"]):
            want = run(["rpm", "-K", "--nosignature", *v, pkg])
            got = run([kiln_bin, "check", *v, pkg])
            assert (got.returncode, got.stdout) == (want.returncode, want.stdout), pkg


def corrupt(src, dst, offset_from_end):
    data = bytearray(src.read_bytes())
    data[len(data) - offset_from_end] ^= 0xFF
    dst.write_bytes(bytes(data))


def test_check_reports_bad_payload(kiln_bin, packages, tmp_path):
    bad = tmp_path / "bad.rpm"
    corrupt(packages["demo-1.2~rc1-3.noarch.rpm:zst"], bad, 50)
    want = run(["rpm", "-K", "--nosignature", bad])
    got = run([kiln_bin, "check", bad], text=True)
    assert want.returncode == 1 and got.returncode == 1
    assert got.stdout == f"{bad}: DIGESTS NOT OK\n"
    got = run([kiln_bin, "check", "-v", bad], text=True)
    assert "Payload SHA256 digest: BAD (Expected " in got.stdout
    assert "MD5 digest: BAD" in got.stdout and "Header SHA256 digest: OK" in got.stdout
    # Reading the payload checks the digests too.
    r = run([kiln_bin, "cpio", bad])
    assert r.returncode == 1 and b"error:" in r.stderr


def test_archive_lists_with_bsdtar(kiln_bin, packages, tmp_path):
    for name, pkg in packages.items():
        out = tmp_path / (pkg.name + ".tgz")
        r = run([kiln_bin, "archive", "-o", out, pkg])
        assert r.returncode == 0, r.stderr
        listed = run(["bsdtar", "-tf", out], text=True)
        assert listed.returncode == 0, listed.stderr
        want = run(["bsdtar", "-tf", pkg], text=True).stdout  # libarchive reads rpm itself
        norm = lambda s: sorted(line.rstrip("/") for line in s.splitlines())
        assert norm(listed.stdout) == norm(want), name
    # default name PKG.tgz, and plain tar with -o X.tar
    pkg = packages["demo-1.2~rc1-3.noarch.rpm:gz"]
    tar = tmp_path / "x.tar"
    assert run([kiln_bin, "archive", "-o", tar, pkg]).returncode == 0
    assert run(["bsdtar", "-tvf", tar], text=True).stdout.count("h1 link to") == 1


def tree(root):
    out = {}
    for dirpath, dirs, files in os.walk(root):
        for n in dirs + files:
            p = os.path.join(dirpath, n)
            st = os.lstat(p)
            rel = os.path.relpath(p, root)
            if stat.S_ISLNK(st.st_mode):
                out[rel] = ("l", os.readlink(p))
            elif stat.S_ISDIR(st.st_mode):
                out[rel] = ("d", oct(st.st_mode & 0o7777), st.st_mtime)
            else:
                out[rel] = ("f", oct(st.st_mode & 0o7777), st.st_mtime, st.st_nlink,
                            open(p, "rb").read())
    return out


def test_extract_matches_cpio(packages, tmp_path):
    pkg = packages["demo-1.2~rc1-3.noarch.rpm:xz"]
    mine, ref = tmp_path / "mine", tmp_path / "ref"
    mine.mkdir()
    ref.mkdir()
    r = run([rpmfix.HELPERS / "pkgtool", "extract", pkg, mine], text=True)
    assert r.returncode == 0, r.stderr
    cp = subprocess.run(f"rpm2cpio '{pkg}' | cpio -idm --quiet --no-absolute-filenames",
                        shell=True, cwd=ref, capture_output=True)
    assert cp.returncode == 0, cp.stderr
    a, b = tree(mine), tree(ref)
    assert a.keys() == b.keys()
    for k in a:
        if a[k][0] == "d":
            assert a[k][1] == b[k][1], k  # cpio does not restore directory mtimes
        else:
            assert a[k] == b[k], k
    assert a["usr/bin/h1"][3] == 2


@pytest.mark.parametrize("cut", [10, 96, 100, 200, 4000, 4600, -20])
def test_truncated_packages_fail_cleanly(kiln_bin, packages, tmp_path, cut):
    pkg = packages["demo-1.2~rc1-3.noarch.rpm:gz"]
    data = pkg.read_bytes()
    bad = tmp_path / "t.rpm"
    bad.write_bytes(data[:cut] if cut > 0 else data[:cut])
    for cmd in (["query", "-p", "-i"], ["check"], ["cpio"]):
        r = run([kiln_bin, *cmd, bad], text=True)
        if cut < 0 and cmd[0] == "query":
            assert r.returncode == 0  # the headers are intact
            continue
        assert r.returncode == 1, (cmd, r.stdout)
        assert r.stderr.startswith("error: ") and "offset" in r.stderr or "payload" in r.stderr \
            or "DIGESTS NOT OK" in r.stdout, r.stderr


def test_not_a_package(kiln_bin, tmp_path):
    bad = tmp_path / "x.rpm"
    bad.write_bytes(b"hello world" * 20)
    r = run([kiln_bin, "query", "-p", bad], text=True)
    assert r.returncode == 1
    assert r.stderr == f"error: {bad}: lead: bad magic at offset 0: not an rpm package\n"


def test_query_refuses_a_bad_header_digest_like_rpm(kiln_bin, packages, tmp_path):
    """rpm -qp checks the header digests before it shows anything."""
    pkg = packages["demo-1.2~rc1-3.noarch.rpm:gz"]
    data = pkg.read_bytes()
    assert data.count(b"Demo package for kiln tests\0") == 1
    bad = tmp_path / "badhdr.rpm"
    bad.write_bytes(data.replace(b"Demo package for kiln tests\0",
                                 b"Demo package for KILN tests\0"))
    want = run(["rpm", "-qp", "-i", bad], text=True)
    got = run([kiln_bin, "query", "-p", "-i", bad], text=True)
    assert want.returncode == got.returncode == 1
    assert got.stdout == want.stdout == ""
    assert got.stderr == want.stderr
    assert "Header SHA256 digest: BAD (Expected " in got.stderr


def test_payload_sizes_are_checked(kiln_bin, packages, tmp_path):
    """The archive size the signature header states (PAYLOADSIZE, tag 1007; not covered by
    any digest) must be what the payload decompresses to."""
    import struct
    data = bytearray(packages["demo-1.2~rc1-3.noarch.rpm:zst"].read_bytes())
    il = struct.unpack(">I", data[104:108])[0]
    store = 96 + 16 + 16 * il
    for i in range(il):
        tag, typ, off, cnt = struct.unpack(">IIiI", data[112 + 16 * i:128 + 16 * i])
        if tag == 1007:
            size = struct.unpack(">I", data[store + off:store + off + 4])[0]
            data[store + off:store + off + 4] = struct.pack(">I", size + 4)
            break
    else:
        pytest.fail("no PAYLOADSIZE in the signature header")
    bad = tmp_path / "size.rpm"
    bad.write_bytes(bytes(data))
    for cmd in (["cpio"], ["archive", "-o", tmp_path / "x.tgz"]):
        r = run([kiln_bin, *cmd, bad], text=True, errors="replace")
        assert r.returncode == 1, cmd
        assert f"archive of {size} bytes, the headers say {size + 4}" in r.stderr, r.stderr


def payload_offset(data):
    """Where the payload starts: after the lead, the signature header (padded to 8) and the
    main header."""
    import struct
    il, dl = struct.unpack(">II", data[104:112])
    off = 96 + 16 + 16 * il + dl
    off += (8 - off % 8) % 8
    il, dl = struct.unpack(">II", data[off + 8:off + 16])
    return off + 16 + 16 * il + dl


def test_a_payload_bomb_stops_at_the_declared_size(kiln_bin, packages, tmp_path):
    """A payload that decompresses to far more than the headers declare (here 256 MiB of
    zeros in a few KiB of zstd) is stopped there, not after writing it all out."""
    import struct
    data = packages["demo-1.2~rc1-3.noarch.rpm:zst"].read_bytes()
    il = struct.unpack(">I", data[104:108])[0]
    store = 96 + 16 + 16 * il
    for i in range(il):
        tag, typ, off, cnt = struct.unpack(">IIiI", data[112 + 16 * i:128 + 16 * i])
        if tag == 1007:
            declared = struct.unpack(">I", data[store + off:store + off + 4])[0]
    bomb = subprocess.run("head -c 268435456 /dev/zero | zstd -q -1 -c", shell=True,
                          capture_output=True, check=True).stdout
    assert len(bomb) < 64 * 1024
    bad = tmp_path / "bomb.rpm"
    bad.write_bytes(data[:payload_offset(data)] + bomb)
    for cmd in (["cpio"], ["archive"]):
        with open(tmp_path / "out", "wb") as out:
            r = subprocess.run([str(kiln_bin), *cmd, str(bad)], stdout=out,
                               stderr=subprocess.PIPE, text=True, timeout=60)
        written = (tmp_path / "out").stat().st_size
        assert r.returncode == 1, cmd
        assert f"grows past the {declared} bytes the headers declare" in r.stderr, r.stderr
        assert written <= declared + 64 * 1024, (cmd, written, declared)
