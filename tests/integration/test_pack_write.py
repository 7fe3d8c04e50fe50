"""Packages written by pack_write() (through tests/helpers/pkgtool) against real rpm 4.18."""
import json
import os
import random
import shutil
import stat
import struct
import subprocess

import pytest

import rpmfix
from rpmfix import run

PKGTOOL = rpmfix.HELPERS / "pkgtool"
T = 1704067200


def make_tree(base):
    src = base / "src"
    (src / "bin").mkdir(parents=True)
    (src / "bin" / "tool").write_text("#!/bin/sh\necho tool\n")
    (src / "conf").write_text("key=value\n")
    (src / "hard").write_text("hard linked\n")
    (src / "empty").write_text("")
    (src / "big").write_bytes(bytes(range(256)) * 2000)
    return src


def description(src, fmt=4, payload="w9.gzdio", reverse=False, extra=()):
    tags = [
        (1000, "s", "kilndemo"), (1001, "s", "2.5"), (1002, "s", "7"), (1003, "u32", "3"),
        (1004, "i18n", "Demo written by kiln"), (1005, "i18n", "Line one.\\nLine <two> & \"3\"."),
        (1006, "u32", str(T)), (1007, "s", "kiln.example"), (1014, "s", "MIT"),
        (1016, "i18n", "Unspecified"), (1020, "s", "https://example.invalid"),
        (1021, "s", "linux"), (1022, "s", "noarch"), (1044, "s", "kilndemo-2.5-7.src.rpm"),
        (1064, "s", "4.18.0"), (1023, "s", "echo pre"), (1085, "strs", "/bin/sh"),
    ]
    if fmt == 6:
        tags.append((5120, "s", "kilndemo-3:2.5-7"))
    lines = [f"format\t{fmt}", f"payload\t{payload}"]
    lines += ["\t".join(["tag", str(n), t, v]) for n, t, v in tags]
    lines += ["dep\tprovide\tkilndemo\t3:2.5-7\t8", "dep\trequire\t/bin/sh\t\t512",
              "dep\trequire\tbash\t4.0\t12"]
    files = [
        f"path=/usr\tmode=040755\tmtime={T}",
        f"path=/usr/bin\tmode=040755\tmtime={T}",
        f"path=/usr/bin/tool\tmode=0100755\tsrc={src}/bin/tool\tmtime={T}\tclass=POSIX shell script\tmime=text/x-shellscript",
        f"path=/usr/bin/tool-link\tmode=0120777\tlink=tool\tmtime={T}",
        f"path=/etc/kilndemo.conf\tmode=0100640\tsrc={src}/conf\tmtime={T - 5}\tflags=17\tuser=kilnuser\tgroup=kilngroup",
        f"path=/usr/share/kd/h1\tmode=0100644\tsrc={src}/hard\tmtime={T}\thardlink=1",
        f"path=/usr/share/kd/h2\tmode=0100644\tsrc={src}/hard\tmtime={T}\thardlink=1",
        f"path=/usr/share/kd/empty\tmode=0100600\tsrc={src}/empty\tmtime={T}\tflags=2",
        f"path=/usr/share/kd/big.bin\tmode=0100444\tsrc={src}/big\tmtime={T}\tlang=de",
        f"path=/usr/share/kd/setuid\tmode=0104755\tsrc={src}/bin/tool\tmtime={T}",
        f"path=/var/log/kd.log\tmode=0100644\tmtime={T}\tflags=64",
        f"path=/dev/kdnull\tmode=020666\trdev=259\tmtime={T}",
    ]
    if reverse:
        files.reverse()
    lines += ["file\t" + f for f in files]
    lines += list(extra)
    return "\n".join(lines) + "\n"


def build(tmp_path, name, **kw):
    src = tmp_path / "src"
    if not src.exists():
        make_tree(tmp_path)
    desc = tmp_path / (name + ".desc")
    desc.write_text(description(src, **kw))
    out = tmp_path / (name + ".rpm")
    r = run([PKGTOOL, "build", desc, out], text=True)
    assert r.returncode == 0, r.stderr
    return out


def install_root(tmp_path, name):
    root = tmp_path / name
    (root / "etc").mkdir(parents=True)
    (root / "etc" / "passwd").write_text("root:x:0:0::/root:/bin/sh\nkilnuser:x:4242:4343::/:/bin/sh\n")
    (root / "etc" / "group").write_text("root:x:0:\nkilngroup:x:4343:\n")
    return root


def rpm_install(root, pkg):
    return run(["rpm", "-i", "--force-debian", "--root", root, "--dbpath", "/var/lib/rpm",
                "--nodeps", "--noscripts", pkg], text=True)


def check_installed(root):
    tool = root / "usr/bin/tool"
    st = os.lstat(tool)
    assert stat.S_IMODE(st.st_mode) == 0o755 and st.st_mtime == T
    assert tool.read_text() == "#!/bin/sh\necho tool\n"
    assert os.readlink(root / "usr/bin/tool-link") == "tool"
    conf = os.lstat(root / "etc/kilndemo.conf")
    assert (conf.st_uid, conf.st_gid, stat.S_IMODE(conf.st_mode)) == (4242, 4343, 0o640)
    assert conf.st_mtime == T - 5
    h1, h2 = os.lstat(root / "usr/share/kd/h1"), os.lstat(root / "usr/share/kd/h2")
    assert h1.st_ino == h2.st_ino and h1.st_nlink == 2
    assert (root / "usr/share/kd/h2").read_text() == "hard linked\n"
    assert (root / "usr/share/kd/big.bin").read_bytes() == bytes(range(256)) * 2000
    assert stat.S_IMODE(os.lstat(root / "usr/share/kd/setuid").st_mode) == 0o4755
    assert not (root / "var/log/kd.log").exists()  # %ghost
    dev = os.lstat(root / "dev/kdnull")
    assert stat.S_ISCHR(dev.st_mode) and os.major(dev.st_rdev) == 1 and os.minor(dev.st_rdev) == 3


def test_v4_accepted_by_rpm(kiln_bin, tmp_path):
    pkg = build(tmp_path, "v4")
    k = run(["rpm", "-Kv", pkg], text=True)
    assert k.returncode == 0, k.stdout + k.stderr
    assert k.stdout.count(": OK") == 4
    want = run(["rpm", "-qp", "--dump", pkg], text=True)
    assert want.returncode == 0 and "/usr/bin/tool-link 4 " in want.stdout
    assert run([kiln_bin, "query", "-p", "--dump", pkg], text=True).stdout == want.stdout
    for mode in (["-i"], ["--requires"], ["--provides"], ["--scripts"]):
        assert run([kiln_bin, "query", "-p", *mode, pkg]).stdout == \
            run(["rpm", "-qp", *mode, pkg]).stdout, mode
    assert run([kiln_bin, "query", "-p", "--xml", pkg], text=True).stdout == \
        rpmfix.rpm_xml_as_420(run(["rpm", "-qp", "--xml", pkg], text=True).stdout)
    root = install_root(tmp_path, "root")
    r = rpm_install(root, pkg)
    assert r.returncode == 0, r.stderr
    check_installed(root)
    v = run(["rpm", "--root", root, "--dbpath", "/var/lib/rpm", "-V", "--nodeps", "kilndemo"],
            text=True)
    assert v.returncode == 0, v.stdout


def test_v4_header_layout(tmp_path):
    pkg = build(tmp_path, "v4")
    data = pkg.read_bytes()
    assert data[:6] == b"\xed\xab\xee\xdb\x03\x00"
    assert data[10:10 + 18] == b"kilndemo-3:2.5-7\0\0"
    assert struct.unpack(">h", data[78:80])[0] == 5
    il, dl = struct.unpack(">II", data[104:112])
    tags = [struct.unpack(">I", data[112 + 16 * i:116 + 16 * i])[0] for i in range(il)]
    assert tags == [62, 269, 273, 1000, 1004, 1007, 1008]
    assert (16 + 16 * il + dl) % 8 in range(8)
    q = run(["rpm", "-qp", "--qf", "%{PAYLOADFLAGS}|%{PAYLOADCOMPRESSOR}|%{FILEDIGESTALGO}|"
             "%{SIZE}|%{ENCODING}|[%{FILEINODES},]|[%{CLASSDICT},]\n", pkg], text=True)
    assert q.stdout.startswith("9|gzip|")  # rpm 4.18 cannot name FILEDIGESTALGO: (none)
    assert "|utf-8|" in q.stdout


def test_deterministic(tmp_path):
    a = build(tmp_path, "a")
    os.utime(tmp_path / "src" / "conf", (1, 1))  # host mtimes are not used
    b = build(tmp_path, "b", reverse=True)
    assert a.read_bytes() == b.read_bytes()
    z1 = build(tmp_path, "z1", payload="w3T1.zstdio")
    z2 = build(tmp_path, "z2", payload="w3T2.zstdio")
    # The compressed payload bytes are identical whatever the thread count (only
    # PAYLOADFLAGS, "3T1" or "3T2", and the digests over the header differ).
    z1d = z1.read_bytes()
    assert z1d[payload_offset(z1d):] == z2.read_bytes()[payload_offset(z2.read_bytes()):]
    assert run(["rpm2cpio", z1]).stdout == run(["rpm2cpio", z2]).stdout
    x1 = build(tmp_path, "x1", payload="w1T1.xzdio")
    x2 = build(tmp_path, "x2", payload="w1T2.xzdio")
    p1 = run(["rpm", "-qp", "--qf", "%{PAYLOADDIGEST}", x1]).stdout
    assert p1 == run(["rpm", "-qp", "--qf", "%{PAYLOADDIGEST}", x2]).stdout


def test_large_zstd_payload_same_bytes_any_thread_count(kiln_bin, tmp_path):
    """Payloads of 16 MiB and more are compressed in libzstd's multi-threaded mode even
    without T (pack_int.h, PACK_ZSTD_MT_MIN): the package must not depend on the number of
    workers, so "w1" (one worker per CPU), "w1T1" and "w1T3" give the same payload bytes
    (zstd level 1 cuts 2 MiB jobs: 9 of them here), and rpm must accept and install it."""
    large = tmp_path / "large"
    large.write_bytes(random.Random(5).randbytes(9 << 20).hex().encode())
    line = f"file\tpath=/usr/share/kd/large\tmode=0100644\tsrc={large}\tmtime={T}"
    digests = set()
    for i, mode in enumerate(["w1.zstdio", "w1T1.zstdio", "w1T3.zstdio"]):
        pkg = build(tmp_path, f"l{i}", payload=mode, extra=[line])
        assert run(["rpm", "-K", pkg]).returncode == 0
        digests.add(run(["rpm", "-qp", "--qf", "%{PAYLOADDIGEST}", pkg], text=True).stdout)
    assert len(digests) == 1
    assert run([kiln_bin, "check", pkg]).returncode == 0
    root = install_root(tmp_path, "root")
    r = rpm_install(root, pkg)
    assert r.returncode == 0, r.stderr
    assert (root / "usr/share/kd/large").read_bytes() == large.read_bytes()
    check_installed(root)


@pytest.mark.parametrize("payload", ["w.ufdio", "w6.gzdio", "w2.xzdio", "w3.zstdio", "w3T2.zstdio"])
def test_payload_kinds(kiln_bin, tmp_path, payload):
    pkg = build(tmp_path, "p", payload=payload)
    assert run(["rpm", "-K", pkg]).returncode == 0
    assert run([kiln_bin, "check", pkg]).returncode == 0
    assert run([kiln_bin, "cpio", pkg]).stdout == run(["rpm2cpio", pkg]).stdout
    out = tmp_path / "p.tgz"
    assert run([kiln_bin, "archive", "-o", out, pkg]).returncode == 0
    listed = run(["bsdtar", "-tvf", out], text=True).stdout
    assert "./usr/share/kd/h1 link to ./usr/share/kd/h2" in listed or \
        "./usr/share/kd/h2 link to ./usr/share/kd/h1" in listed
    assert "./usr/bin/tool-link -> tool" in listed


def payload_offset(data):
    il, dl = struct.unpack(">II", data[104:112])
    end = 96 + 16 + 16 * il + dl
    end += (8 - end % 8) % 8
    il2, dl2 = struct.unpack(">II", data[end + 8:end + 16])
    return end + 16 + 16 * il2 + dl2


def v6_headers(data):
    il, dl = struct.unpack(">II", data[104:112])
    sig = [struct.unpack(">IIiI", data[112 + 16 * i:128 + 16 * i]) for i in range(il)]
    end = 96 + 16 + 16 * il + dl
    end += (8 - end % 8) % 8
    il2, dl2 = struct.unpack(">II", data[end + 8:end + 16])
    main = [struct.unpack(">IIiI", data[end + 16 + 16 * i:end + 32 + 16 * i]) for i in range(il2)]
    return sig, main


def test_v6_structure(tmp_path):
    pkg = build(tmp_path, "v6", fmt=6, payload="w3.zstdio")
    data = pkg.read_bytes()
    assert data[4] == 4 and data[8:10] == b"\0\0" and data[76:78] == b"\0\0"
    sig, main = v6_headers(data)
    assert [e[0] for e in sig] == [62, 273, 279, 999]
    assert sig[-1][1] == 7 and sig[-1][3] == 4128 and all(e[0] < 1000 for e in sig)
    tags = {e[0]: e for e in main}
    assert [e[0] for e in main] == sorted(tags) and main[0][0] == 63
    for t in (5114, 5008, 5009, 5011, 5062, 5092, 5097, 5112, 5113, 5115, 5116, 5120, 5121,
              5122, 5123, 5124):
        assert t in tags, t
    for t in (1028, 1009, 1141, 1142, 5093, 1146):
        assert t not in tags, t
    assert tags[5008][1] == 5 and tags[5092][1] == 8 and tags[5121][1] == 6
    q = run(["rpm", "-qp", "--qf", "[%{REQUIRENAME} %{REQUIREVERSION}\n]", pkg], text=True).stdout
    assert "rpmlib(LargeFiles) 4.12.0-1" in q and "CompressedFileNames" not in q
    # The payload is the stripped format (rpm 4.18's rpm2cpio cannot convert it).
    payload = data[payload_offset(data):]
    raw = subprocess.run(["zstd", "-dc"], input=payload, capture_output=True).stdout
    assert raw[:16] == b"07070X00000000\0\0" and raw.endswith(b"TRAILER!!!\0\0\0\0")


def test_v6_payload_sizes_are_checked(kiln_bin, tmp_path):
    """The reader holds a v6 payload to the header's PAYLOADSIZE (compressed) and
    PAYLOADSIZEALT (archive) values: each one changed by one is an error naming it."""
    pkg = build(tmp_path, "v6", fmt=6, payload="w3.zstdio")
    data = pkg.read_bytes()
    assert run([kiln_bin, "cpio", pkg]).returncode == 0
    il, dl = struct.unpack(">II", data[104:112])
    end = 96 + 16 + 16 * il + dl
    end += (8 - end % 8) % 8
    _, main = v6_headers(data)
    store = end + 16 + 16 * len(main)
    for tag, what in ((5112, "compressed bytes, the header's PAYLOADSIZE says"),
                      (5113, "the headers say")):
        off = next(e[2] for e in main if e[0] == tag)
        bad = bytearray(data)
        value = struct.unpack(">Q", data[store + off:store + off + 8])[0]
        bad[store + off:store + off + 8] = struct.pack(">Q", value + 1)
        (tmp_path / "bad.rpm").write_bytes(bytes(bad))
        r = run([kiln_bin, "cpio", tmp_path / "bad.rpm"], text=True, errors="replace")
        assert r.returncode == 1 and f"{what} {value + 1}" in r.stderr, r.stderr


def test_v6_values_against_the_format(tmp_path):
    """The v6 values checked independently of kiln's reader (format_v6: digests of the
    compressed and uncompressed payload and their sizes, the header digests in the signature
    header, RPMFORMAT 6, FILEDIGESTALGO >= SHA-256, ENCODING utf-8, LONGSIZE)."""
    import hashlib

    pkg = build(tmp_path, "v6v", fmt=6, payload="w3.zstdio")
    data = pkg.read_bytes()
    sig, main, poff = rpmfix.read_headers(data)
    payload = data[poff:]
    raw = subprocess.run(["zstd", "-dc"], input=payload, capture_output=True).stdout
    il, dl = struct.unpack(">II", data[104:112])
    hoff = 96 + 16 + 16 * il + dl
    hoff += (8 - hoff % 8) % 8
    hdr = data[hoff:poff]  # the main header: from its magic to the payload

    def text(e):
        return e[2].split(b"\0")[0].decode()

    def u64(e):
        return struct.unpack(">Q", e[2][:8])[0]

    def u32(e):
        return struct.unpack(">I", e[2][:4])[0]

    assert text(sig[273]) == hashlib.sha256(hdr).hexdigest()
    assert text(sig[279]) == hashlib.sha3_256(hdr).hexdigest()
    assert text(main[5092]) == hashlib.sha256(payload).hexdigest()
    assert text(main[5097]) == hashlib.sha256(raw).hexdigest()
    assert text(main[5121]) == hashlib.sha512(payload).hexdigest()
    assert text(main[5122]) == hashlib.sha512(raw).hexdigest()
    assert text(main[5123]) == hashlib.sha3_256(payload).hexdigest()
    assert text(main[5124]) == hashlib.sha3_256(raw).hexdigest()
    assert (u64(main[5112]), u64(main[5113])) == (len(payload), len(raw))
    assert u32(main[5114]) == 6 and u32(main[5011]) in (8, 9, 10, 12, 14)
    assert text(main[5062]) == "utf-8" and main[5009][0] == 5
    sizes = struct.unpack(">%dQ" % main[5008][1], main[5008][2][:8 * main[5008][1]])
    names = run(["rpm", "-qp", "--qf", "[%{FILENAMES}\\n]", pkg], text=True).stdout.split()
    assert sizes[names.index("/usr/share/kd/big.bin")] == 512000
    assert u64(main[5009]) == sum(sizes[names.index(n)] for n in (
        "/usr/bin/tool", "/usr/bin/tool-link", "/etc/kilndemo.conf", "/usr/share/kd/h1",
        "/usr/share/kd/empty", "/usr/share/kd/big.bin", "/usr/share/kd/setuid"))


def test_v6_header_region_query(kiln_bin, tmp_path):
    """%{HEADERIMMUTABLE} is the region rpm's headerGet returns: the main header's bytes
    after its magic (entry count, data length, index, data), here the whole header."""
    pkg = build(tmp_path, "v6r", fmt=6, payload="w3.zstdio")
    data = pkg.read_bytes()
    _, _, poff = rpmfix.read_headers(data)
    il, dl = struct.unpack(">II", data[104:112])
    hoff = 96 + 16 + 16 * il + dl
    hoff += (8 - hoff % 8) % 8
    want = data[hoff + 8:poff].hex()
    got = run([kiln_bin, "query", "-p", "--qf", "%{HEADERIMMUTABLE}", pkg], text=True)
    assert got.returncode == 0 and got.stdout == want
    assert run(["rpm", "-qp", "--qf", "%{HEADERIMMUTABLE}", pkg], text=True).stdout == want


def test_v6_xml_json_use_rpm_60_tag_names(kiln_bin, tmp_path):
    """--xml and --json name tags as rpm 6.0.2 does (rpmTagGetName: RPMTAG_ names from
    rpm 6.0.2's include/rpm/rpmtag.h, first letter upper case): the v6 tags rpm 4.18 does
    not know, and 4.20's renames, pinned by hand."""
    pkg = build(tmp_path, "v6n", fmt=6, payload="w3.zstdio")
    want = ["Sha3_256header", "Payloadsha256", "Payloadsha256alt", "Payloadsize",
            "Payloadsizealt", "Rpmformat", "Payloadsha512", "Payloadsha512alt",
            "Payloadsha3_256", "Payloadsha3_256alt"]
    xml = run([kiln_bin, "query", "-p", "--xml", pkg], text=True).stdout
    names = [line.split('"')[1] for line in xml.splitlines() if "<rpmTag name=" in line]
    assert [n for n in names if n in want] == want
    assert not [n for n in names if n.startswith("[")]
    data = json.loads(run([kiln_bin, "query", "-p", "--json", pkg], text=True).stdout)
    assert [n for n in data if n in want] == want
    assert data["Rpmformat"] == 6
    # ...and the documentation says so.
    help_text = run([kiln_bin, "help", "query"], text=True).stdout
    assert "--xml and --json (with rpm 6.0's tag names" in help_text
    assert "every tag as XML (rpm 6.0's tag names)" in help_text
    readme = (rpmfix.ROOT / "README.md").read_text()
    assert "`--xml` and `--json` with rpm 6.0's tag names, as rpm 6.0.2 prints them" in readme


def test_v6_read_by_rpm_418(kiln_bin, tmp_path):
    pkg = build(tmp_path, "v6", fmt=6, payload="w3.zstdio")
    i = run(["rpm", "-qpi", pkg], text=True)
    assert i.returncode == 0 and "Name        : kilndemo" in i.stdout
    assert "Size        : " in i.stdout
    assert run([kiln_bin, "query", "-p", "-i", pkg]).stdout == run(["rpm", "-qpi", pkg]).stdout
    l = run(["rpm", "-qpl", pkg], text=True)
    assert l.stdout == run([kiln_bin, "query", "-p", "-l", pkg], text=True).stdout
    k = run(["rpm", "-Kv", pkg], text=True)
    assert k.returncode == 0 and "Header SHA256 digest: OK" in k.stdout \
        and "Payload SHA256 digest: OK" in k.stdout
    root = install_root(tmp_path, "root6")
    r = rpm_install(root, pkg)
    assert r.returncode == 0, r.stderr
    check_installed(root)
    assert run([kiln_bin, "check", pkg]).returncode == 0
    # kiln converts the stripped payload to newc, which cpio and bsdtar read.
    cp = run([kiln_bin, "cpio", pkg])
    assert cp.stdout[:6] == b"070701"
    t = subprocess.run(["cpio", "-t", "--quiet"], input=cp.stdout, capture_output=True)
    assert b"./usr/bin/tool\n" in t.stdout
    out = tmp_path / "v6.tgz"
    assert run([kiln_bin, "archive", "-o", out, pkg]).returncode == 0
    assert "./usr/bin/tool" in run(["bsdtar", "-tf", out], text=True).stdout


def test_v6_json_pinned(kiln_bin, tmp_path):
    """--json as rpm 4.20 prints it (rpm-reference.md section 9.3), pinned by hand."""
    pkg = build(tmp_path, "v6", fmt=6, payload="w.ufdio")
    out = run([kiln_bin, "query", "-p", "--json", pkg], text=True).stdout
    assert out.startswith('{\n    "Headeri18ntable": \t"C",\n    "Sha256header": \t"')
    assert '\n    "Name": \t"kilndemo",\n    "Version": \t"2.5",\n    "Release": \t"7",\n' \
           '    "Epoch": \t3,\n' in out
    assert '    "Description": \t"Line one.\\nLine <two> & \\"3\\"."\n' in out or \
        '    "Description": \t"Line one.\\nLine <two> & \\"3\\".",\n' in out
    assert '    "Longfilesizes": [\n\t0,\n' in out
    assert '    "Rpmformat": \t6,\n' in out and '    "Mimedict": [\n' in out
    assert out.endswith("\n}\n")
    doc = json.loads(out)
    assert doc["Sourcenevr"] == "kilndemo-3:2.5-7" and doc["Payloadsizealt"] > 0


def test_source_package(kiln_bin, tmp_path):
    src = make_tree(tmp_path)
    desc = "\n".join([
        "format\t4", "payload\tw9.gzdio", "source\t1",
        "tag\t1000\ts\tsrcdemo", "tag\t1001\ts\t1", "tag\t1002\ts\t1",
        "tag\t1004\ti18n\tS", "tag\t1005\ti18n\tD", "tag\t1021\ts\tlinux", "tag\t1022\ts\tnoarch",
        "tag\t1106\tu32\t1",
        f"file\tpath=srcdemo.spec\tmode=0100644\tsrc={src}/conf\tmtime={T}\tflags=32",
        f"file\tpath=srcdemo-1.tar.gz\tmode=0100644\tsrc={src}/big\tmtime={T}",
    ]) + "\n"
    (tmp_path / "s.desc").write_text(desc)
    out = tmp_path / "srcdemo-1-1.src.rpm"
    assert run([PKGTOOL, "build", tmp_path / "s.desc", out]).returncode == 0
    data = out.read_bytes()
    assert data[6:8] == b"\0\1"
    assert run(["rpm", "-qp", out], text=True).stdout == "srcdemo-1-1.src\n"
    assert run(["rpm", "-K", out]).returncode == 0
    names = subprocess.run(["cpio", "-t", "--quiet"], input=run(["rpm2cpio", out]).stdout,
                           capture_output=True).stdout
    assert names == b"srcdemo-1.tar.gz\nsrcdemo.spec\n"
    assert run([kiln_bin, "query", "-p", "--dump", out]).stdout == \
        run(["rpm", "-qp", "--dump", out]).stdout


def test_fifo_through_payload_tools(kiln_bin, tmp_path):
    # rpm 4.18 hangs installing a FIFO (it opens the new node to set its metadata), so FIFOs
    # are checked through kiln's own readers and cpio only.
    src = make_tree(tmp_path)
    desc = description(src) + f"file\tpath=/run/kd.fifo\tmode=010644\tmtime={T}\n"
    (tmp_path / "f.desc").write_text(desc)
    pkg = tmp_path / "f.rpm"
    assert run([PKGTOOL, "build", tmp_path / "f.desc", pkg]).returncode == 0
    assert run(["rpm", "-K", pkg]).returncode == 0
    out = tmp_path / "x"
    out.mkdir()
    r = run([PKGTOOL, "extract", pkg, out], text=True)
    assert r.returncode == 0, r.stderr
    assert stat.S_ISFIFO(os.lstat(out / "run/kd.fifo").st_mode)
    assert os.lstat(out / "usr/share/kd/h1").st_ino == os.lstat(out / "usr/share/kd/h2").st_ino
    assert "prw-r--r--" in run(["bsdtar", "-tvf", pkg], text=True).stdout


def test_bad_writer_input(tmp_path):
    src = make_tree(tmp_path)
    desc = description(src) + f"file\tpath=/usr/bin/tool\tmode=0100644\tsrc={src}/conf\n"
    (tmp_path / "d.desc").write_text(desc)
    r = run([PKGTOOL, "build", tmp_path / "d.desc", tmp_path / "d.rpm"], text=True)
    assert r.returncode == 1 and "/usr/bin/tool is listed twice" in r.stderr
    assert not (tmp_path / "d.rpm").exists()
    desc = description(src) + "file\tpath=/x\tmode=0100644\tsrc=/nonexistent/file\n"
    (tmp_path / "e.desc").write_text(desc)
    r = run([PKGTOOL, "build", tmp_path / "e.desc", tmp_path / "e.rpm"], text=True)
    assert r.returncode == 1 and "/nonexistent/file" in r.stderr


def test_writer_refuses_escaping_paths(tmp_path):
    src = make_tree(tmp_path)
    for bad in ("/usr/../etc/x", "usr/x", "/usr//x", "/usr/./x", "/usr/x/"):
        desc = description(src) + f"file\tpath={bad}\tmode=0100644\tsrc={src}/conf\n"
        (tmp_path / "b.desc").write_text(desc)
        r = run([PKGTOOL, "build", tmp_path / "b.desc", tmp_path / "b.rpm"], text=True)
        assert r.returncode == 1 and bad in r.stderr, bad


def test_extract_never_leaves_the_root(tmp_path):
    """A package that plants a symlink to outside and then a file below it."""
    src = make_tree(tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    desc = "\n".join([
        "format\t4", "payload\tw.ufdio", "tag\t1000\ts\tevil", "tag\t1001\ts\t1",
        "tag\t1002\ts\t1", "tag\t1044\ts\tevil-1-1.src.rpm",
        f"file\tpath=/a\tmode=0120777\tlink={outside}",
        f"file\tpath=/a/passwd\tmode=0100644\tsrc={src}/conf",
    ]) + "\n"
    (tmp_path / "evil.desc").write_text(desc)
    pkg = tmp_path / "evil.rpm"
    assert run([PKGTOOL, "build", tmp_path / "evil.desc", pkg]).returncode == 0
    root = tmp_path / "root"
    root.mkdir()
    r = run([PKGTOOL, "extract", pkg, root], text=True)
    assert r.returncode == 1 and "a is not a directory (or a symlink)" in r.stderr, r.stderr
    assert list(outside.iterdir()) == []
    # A symlink already in the target tree is not followed either.
    root2 = tmp_path / "root2"
    root2.mkdir()
    os.symlink(outside, root2 / "usr")
    pkg2 = build(tmp_path, "plain")
    r = run([PKGTOOL, "extract", pkg2, root2], text=True)
    assert r.returncode == 1 and "usr exists and is not a directory" in r.stderr
    assert list(outside.iterdir()) == []


def test_escaping_payload_names_are_refused(kiln_bin, tmp_path):
    pkg = build(tmp_path, "names", payload="w.ufdio")
    data = pkg.read_bytes()
    assert data.count(b"./usr/bin/tool\0") == 1
    hostile = data.replace(b"./usr/bin/tool\0", b"./../../../bi\0\0")
    bad = tmp_path / "hostile.rpm"
    bad.write_bytes(hostile)
    root = tmp_path / "r"
    root.mkdir()
    r = run([PKGTOOL, "extract", bad, root], text=True)
    assert r.returncode == 1 and "payload: entry at offset" in r.stderr, r.stderr
    for cmd in (["cpio"], ["archive", "-o", tmp_path / "x.tgz"]):
        r = run([kiln_bin, *cmd, bad])
        assert r.returncode == 1 and b"error:" in r.stderr, cmd
    assert not (tmp_path / "x.tgz").exists()


def test_escaping_header_names_are_refused_in_v6(kiln_bin, tmp_path):
    """v6 payload entries take their names from the header: a hostile DIRNAMES entry must
    not reach cpio, tar or the extractor (found by fuzz_payload)."""
    pkg = build(tmp_path, "v6names", fmt=6, payload="w.ufdio")
    data = pkg.read_bytes()
    assert data.count(b"/usr/bin/\0") == 1
    bad = tmp_path / "hostile6.rpm"
    bad.write_bytes(data.replace(b"/usr/bin/\0", b"//../bin/\0"))
    root = tmp_path / "r"
    root.mkdir()
    r = run([PKGTOOL, "extract", bad, root], text=True)
    assert r.returncode == 1 and "contains '..'" in r.stderr, r.stderr
    for cmd in (["cpio"], ["archive", "-o", tmp_path / "x.tgz"]):
        r = run([kiln_bin, *cmd, bad], text=True)
        assert r.returncode == 1 and "payload: stripped entry at offset" in r.stderr, r.stderr
    assert not (tmp_path / "x.tgz").exists()
    assert not (tmp_path / "bin").exists()  # where r/../bin/tool would have gone
