"""Packages built by Debian's rpmbuild from tests/data/pack/specs, for pack's tests.

Built once per session, reproducibly (SOURCE_DATE_EPOCH, clamped mtimes, fixed build host),
with a gzip, an xz and a zstd payload for the main demo spec.
"""
import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SPECS = ROOT / "tests" / "data" / "pack" / "specs"
HELPERS = Path(os.environ.get("KILN_BIN", ROOT / "build" / "kiln")).parent / "tests"

# rpm and kiln print dates in local time: pin it.
ENV = dict(os.environ, TZ="UTC", LC_ALL="C")

PAYLOADS = {"gz": "w9.gzdio", "xz": "w2.xzdio", "zst": "w3.zstdio", "none": "w.ufdio"}


def rpmbuild(topdir, spec, mode="-bb", payload="w9.gzdio"):
    cmd = ["rpmbuild", mode, "--nodeps", "--quiet", "--define", f"_topdir {topdir}",
           "--define", "use_source_date_epoch_as_buildtime 1",
           "--define", "clamp_mtime_to_source_date_epoch 1",
           "--define", "_buildhost oracle.example",
           "--define", f"_binary_payload {payload}", "--define", f"_source_payload {payload}",
           str(spec)]
    env = dict(ENV, SOURCE_DATE_EPOCH="1704067200")
    subprocess.run(cmd, check=True, env=env, capture_output=True)


HELLO_C = '#include <stdio.h>\nint main(void) { printf("Hello, world!\\n"); return 0; }\n'
HELLO_MK = ("CC ?= cc\nCFLAGS ?= -O2\nPREFIX ?= /usr\nall: hello\nhello: hello.c\n"
            "\t$(CC) $(CFLAGS) -o $@ $<\ninstall: hello\n"
            "\tinstall -D -m 0755 hello $(DESTDIR)$(PREFIX)/bin/hello\n")


def hello_source(sources: Path):
    """hello-1.0.tar.gz for hello.spec: a compiled binary gives ELF colors and file deps."""
    src = sources.parent / "hello-src" / "hello-1.0"
    src.mkdir(parents=True)
    (src / "hello.c").write_text(HELLO_C)
    (src / "Makefile").write_text(HELLO_MK)
    sources.mkdir(parents=True, exist_ok=True)
    subprocess.run(["tar", "-czf", str(sources / "hello-1.0.tar.gz"), "-C", str(src.parent),
                    "hello-1.0"], check=True)


def build_all(base: Path):
    """Return {label: path} of every package built."""
    out = {}
    for label, payload in PAYLOADS.items():
        top = base / f"top-{label}"
        rpmbuild(top, SPECS / "demo.spec", "-ba", payload)
        for p in sorted(top.glob("RPMS/*/*.rpm")) + sorted(top.glob("SRPMS/*.rpm")):
            out[f"{p.name}:{label}"] = p
    top = base / "top-misc"
    hello_source(top / "SOURCES")
    for spec in ("i18n.spec", "empty.spec", "hello.spec", "multi.spec"):
        rpmbuild(top, SPECS / spec, "-ba")
    for p in sorted(top.glob("RPMS/*/*.rpm")) + sorted(top.glob("SRPMS/*.rpm")):
        out[p.name] = p
    # The multi-threaded compressors and high levels (the payload is small, so this is quick).
    for label, payload in (("zst19T2", "w19T2.zstdio"), ("xz6T2", "w6T2.xzdio")):
        top = base / f"top-{label}"
        rpmbuild(top, SPECS / "multi.spec", "-bb", payload)
        for p in sorted(top.glob("RPMS/*/multi-4*.rpm")):
            out[f"{p.name}:{label}"] = p
    return out


def run(cmd, **kw):
    return subprocess.run([str(c) for c in cmd], capture_output=True, env=ENV, **kw)


# rpm 4.20 renamed these tags; kiln's --xml follows 4.20 (rpm-reference.md Appendix A), so
# rpm 4.18's names are mapped before comparing.
RENAMED = {"Payloaddigest": "Payloadsha256", "Payloaddigestalgo": "Payloadsha256algo",
           "Payloaddigestalt": "Payloadsha256alt", "Sourcepkgid": "Sourcesigmd5"}


def rpm_xml_as_420(text):
    for old, new in RENAMED.items():
        text = text.replace(f'<rpmTag name="{old}">', f'<rpmTag name="{new}">')
    return text


def read_headers(data):
    """Parse a package's two headers: (sig, main, payload offset) where sig and main map
    tag -> (type, count, data bytes up to the next entry's offset)."""
    import struct

    def one(off):
        il, dl = struct.unpack(">II", data[off + 8:off + 16])
        index = [struct.unpack(">IIiI", data[off + 16 + 16 * i:off + 32 + 16 * i])
                 for i in range(il)]
        store = off + 16 + 16 * il
        bounds = sorted({e[2] for e in index} | {dl})
        entries = {}
        for tag, typ, o, cnt in index:
            end = min((b for b in bounds if b > o), default=dl)
            entries[tag] = (typ, cnt, data[store + o:store + end])
        return entries, store + dl

    sig, end = one(96)
    end += (8 - end % 8) % 8
    main, payload = one(end)
    return sig, main, payload


def header_diff(a, b):
    """The tags whose entries differ between two packages' bytes, for assertion messages."""
    sa, ma, pa = read_headers(a)
    sb, mb, pb = read_headers(b)
    out = []
    for name, x, y in (("signature", sa, sb), ("main", ma, mb)):
        for t in sorted(set(x) | set(y)):
            if x.get(t) != y.get(t):
                out.append(f"{name} tag {t}: {x.get(t)!r:.200} != {y.get(t)!r:.200}")
    if a[pa:] != b[pb:]:
        out.append("payload differs")
    return "\n".join(out)
