"""kiln diff against packages built by Debian's rpmbuild, checked with rpm, GNU diff and
diffoscope as oracles."""
import json
import shutil
import subprocess
from pathlib import Path

import pytest

import rpmfix
from rpmfix import run

NOTES = "".join(f"line {i}\n" for i in range(1, 21))
NOTES2 = NOTES.replace("line 7\n", "line seven\n").replace("line 19\n", "")
BLOB = r"\177ELF\000\001\002\003"  # octal: dash's printf has no \x

BASE = {
    "summary": "diff test",
    "notes": NOTES,
    "mode": "0755",
    "blob": BLOB,
    "extra": False,
}


def spec_text(v):
    """A noarch spec whose files and tags come from the variant v."""
    extra = "printf 'fresh\\n' > %{buildroot}/usr/share/dt/added\n" if v["extra"] else ""
    notes = v["notes"].replace("\n", "\\n")
    return f"""Name: dt
Version: 1
Release: 1
Summary: {v["summary"]}
License: MIT
BuildArch: noarch
%description
A package for kiln diff's tests.
%install
mkdir -p %{{buildroot}}/usr/share/dt %{{buildroot}}/usr/bin
printf '{notes}' > %{{buildroot}}/usr/share/dt/notes.txt
printf '#!/bin/sh\\necho dt\\n' > %{{buildroot}}/usr/bin/dt
chmod {v["mode"]} %{{buildroot}}/usr/bin/dt
printf '{v["blob"]}' > %{{buildroot}}/usr/share/dt/blob.bin
{extra}%files
/usr/bin/dt
/usr/share/dt
"""


def build(base: Path, label: str, **changes) -> Path:
    v = dict(BASE, **changes)
    top = base / label
    (top / "SPECS").mkdir(parents=True)
    spec = top / "SPECS" / "dt.spec"
    spec.write_text(spec_text(v))
    rpmfix.rpmbuild(top, spec, "-bb")
    return top / "RPMS" / "noarch" / "dt-1-1.noarch.rpm"


@pytest.fixture(scope="module")
def pkgs(tmp_path_factory):
    base = tmp_path_factory.mktemp("diff")
    return {
        "base": build(base, "base"),
        "again": build(base, "again"),
        "content": build(base, "content", notes=NOTES2),
        "mode": build(base, "mode", mode="0700"),
        "tag": build(base, "tag", summary="diff test, changed"),
        "added": build(base, "added", extra=True),
        "binary": build(base, "binary", blob=r"\177ELF\000\011\011\011"),
        "all": build(base, "all", notes=NOTES2, mode="0700", summary="all changed",
                     extra=True),
    }


def kdiff(kiln, a, b, *opts):
    return kiln("diff", *opts, a, b)


def kjson(kiln, a, b):
    r = kdiff(kiln, a, b, "--json")
    assert r.returncode in (0, 1), r.stderr
    return r.returncode, json.loads(r.stdout)


def items(doc, kind):
    return [d for d in doc["differences"] if d["kind"] == kind]


def diffoscope_paths(a, b):
    """diffoscope's rc and the payload members it shows a content difference for."""
    r = run(["diffoscope", "--json", "-", a, b], text=True)
    assert r.returncode in (0, 1), r.stderr
    if r.returncode == 0:
        return 0, set()
    doc = json.loads(r.stdout)
    found = set()
    for sect in doc.get("details", []):
        if sect["source1"] != "content":
            continue
        for d in sect.get("details", []):
            if d["source1"] != "file list":
                found.add(d["source1"].lstrip("."))
    return 1, found


def test_identical_rebuilds(kiln, pkgs):
    a, b = pkgs["base"], pkgs["again"]
    assert a.read_bytes() == b.read_bytes()  # the reproducible rpmbuild settings work
    r = kdiff(kiln, a, b)
    assert (r.returncode, r.stdout, r.stderr) == (0, "", "")
    rc, doc = kjson(kiln, a, b)
    assert rc == 0
    assert doc == {"old": str(a), "new": str(b), "identical": True, "differences": [],
                   "files": []}
    assert diffoscope_paths(a, b) == (0, set())


def test_content_change_matches_gnu_diff(kiln, pkgs, tmp_path):
    a, b = pkgs["base"], pkgs["content"]
    rc, doc = kjson(kiln, a, b)
    assert rc == 1
    content = items(doc, "content")
    assert [c["path"] for c in content] == ["/usr/share/dt/notes.txt"]
    c = content[0]
    assert c["content"] == "text"
    # Extract both with rpm2cpio and compare the hunks with GNU diff -u's.
    files = []
    for label, pkg in (("a", a), ("b", b)):
        d = tmp_path / label
        d.mkdir()
        cpio = run(["rpm2cpio", pkg]).stdout
        subprocess.run(["cpio", "-idm", "--quiet"], input=cpio, cwd=d, check=True)
        files.append(d / "usr/share/dt/notes.txt")
    want = run(["diff", "-u", "--label", "a/usr/share/dt/notes.txt", "--label",
                "b/usr/share/dt/notes.txt", *files], text=True)
    assert want.returncode == 1
    assert c["diff"] == want.stdout
    assert c["old_size"] == files[0].stat().st_size
    assert c["new_size"] == files[1].stat().st_size
    sha = run(["sha256sum", *files], text=True).stdout.split()
    assert (c["old_sha256"], c["new_sha256"]) == (sha[0], sha[2])
    # The header's view of the same file.
    fields = {i["field"]: (i["old"], i["new"]) for i in items(doc, "file")}
    assert fields["size"] == (c["old_size"], c["new_size"])
    assert fields["digest"] == (c["old_sha256"], c["new_sha256"])
    # The text output carries the same diff, indented.
    r = kdiff(kiln, a, b)
    assert r.returncode == 1
    indented = "".join("  " + line + "\n" for line in want.stdout.splitlines())
    assert "file /usr/share/dt/notes.txt: contents differ\n" + indented in r.stdout
    # diffoscope agrees on which file's contents differ.
    assert diffoscope_paths(a, b) == (1, {"/usr/share/dt/notes.txt"})


def test_mode_change(kiln, pkgs):
    a, b = pkgs["base"], pkgs["mode"]
    rc, doc = kjson(kiln, a, b)
    assert rc == 1
    modes = {}
    for pkg in (a, b):
        out = run(["rpm", "-qp", "--qf", "[%{FILEMODES:octal} %{FILENAMES}\\n]", pkg],
                  text=True).stdout
        modes[pkg] = dict(reversed(line.split(" ", 1)) for line in out.splitlines())
    got = [(i["path"], i["field"], i["old"], i["new"]) for i in items(doc, "file")]
    assert got == [("/usr/bin/dt", "mode", "0" + modes[a]["/usr/bin/dt"],
                    "0" + modes[b]["/usr/bin/dt"])]
    assert got[0][2:] == ("0100755", "0100700")
    assert not items(doc, "content")
    assert doc["files"] == ["/usr/bin/dt"]
    r = kdiff(kiln, a, b)
    assert "file /usr/bin/dt: mode 0100755 -> 0100700\n" in r.stdout
    # diffoscope sees it in its file list only: no member's contents differ.
    assert diffoscope_paths(a, b) == (1, set())


def test_tag_change(kiln, pkgs):
    a, b = pkgs["base"], pkgs["tag"]
    rc, doc = kjson(kiln, a, b)
    assert rc == 1
    want = [run(["rpm", "-qp", "--qf", "%{SUMMARY}", p], text=True).stdout for p in (a, b)]
    # Only the summary: the payload (and so its digests) is the same.
    assert doc["differences"] == [{"kind": "tag", "tag": 1004, "name": "SUMMARY",
                                   "old": want[0], "new": want[1]}]
    assert doc["files"] == []
    r = kdiff(kiln, a, b)
    assert r.stdout == (f"--- {a}\n+++ {b}\n"
                        "tag SUMMARY: diff test -> diff test, changed\n")
    assert diffoscope_paths(a, b) == (1, set())


def test_file_added(kiln, pkgs):
    a, b = pkgs["base"], pkgs["added"]
    rc, doc = kjson(kiln, a, b)
    assert rc == 1
    added = items(doc, "file-added")
    assert [(i["path"], i["new"]) for i in added] == [("/usr/share/dt/added",
                                                      "0100644 root:root 6")]
    assert doc["files"] == ["/usr/share/dt/added"]
    # Per-file arrays are explained by the added file, not reported as tags.
    tags = {i["name"] for i in items(doc, "tag")}
    assert not tags & {"BASENAMES", "DIRINDEXES", "FILEMODES", "FILEDIGESTS", "FILESIZES"}
    assert "SIZE" in tags
    # Swapped: removed.
    rc, doc = kjson(kiln, b, a)
    assert [i["path"] for i in items(doc, "file-removed")] == ["/usr/share/dt/added"]
    # rpm lists one file more.
    la = run(["rpm", "-qpl", a], text=True).stdout.splitlines()
    lb = run(["rpm", "-qpl", b], text=True).stdout.splitlines()
    assert sorted(set(lb) - set(la)) == ["/usr/share/dt/added"]


def test_binary_change(kiln, pkgs):
    a, b = pkgs["base"], pkgs["binary"]
    rc, doc = kjson(kiln, a, b)
    assert rc == 1
    content = items(doc, "content")
    assert [(c["path"], c["content"]) for c in content] == [("/usr/share/dt/blob.bin",
                                                            "binary")]
    digests = [run(["rpm", "-qp", "--qf", "[%{FILEDIGESTS} %{FILENAMES}\\n]", p],
                   text=True).stdout for p in (a, b)]
    want = [dict(reversed(line.split(" ", 1)) for line in d.splitlines())["/usr/share/dt/blob.bin"]
            for d in digests]
    assert [content[0]["old_sha256"], content[0]["new_sha256"]] == want
    r = kdiff(kiln, a, b)
    assert (f"file /usr/share/dt/blob.bin: binary contents differ (sha256 {want[0]} -> "
            f"{want[1]})\n") in r.stdout
    assert diffoscope_paths(a, b) == (1, {"/usr/share/dt/blob.bin"})


def test_everything_at_once(kiln, pkgs):
    a, b = pkgs["base"], pkgs["all"]
    rc, doc = kjson(kiln, a, b)
    assert rc == 1
    assert doc["files"] == ["/usr/bin/dt", "/usr/share/dt/added", "/usr/share/dt/notes.txt"]
    kinds = [d["kind"] for d in doc["differences"]]
    # Tags first, then files in path order.
    assert kinds.index("file") > max(i for i, k in enumerate(kinds) if k == "tag")
    r = kdiff(kiln, a, b)
    lines = r.stdout.splitlines()
    assert lines[:2] == [f"--- {a}", f"+++ {b}"]
    heads = [ln for ln in lines[2:] if not ln.startswith("  ")]
    assert heads[0].startswith("tag SUMMARY: ")
    size = f"file /usr/share/dt/notes.txt: size {len(NOTES)} -> {len(NOTES2)}"
    assert heads[-3:] == [size,
                          heads[-2], "file /usr/share/dt/notes.txt: contents differ"]
    assert kdiff(kiln, a, b, "-q").stdout == ""
    assert kdiff(kiln, a, b, "-q").returncode == 1
    # -U 0: hunks without context.
    r = kdiff(kiln, a, b, "-U", "0")
    assert "  @@ -7 +7 @@\n  -line 7\n  +line seven\n" in r.stdout
    ds_rc, ds_paths = diffoscope_paths(a, b)
    assert ds_rc == 1
    assert ds_paths == {c["path"] for c in items(doc, "content")}


def test_usage_and_unreadable_input(kiln, pkgs, tmp_path):
    a = pkgs["base"]
    r = kiln("diff", a)
    assert r.returncode == 2
    assert "usage: kiln diff" in r.stderr
    r = kiln("diff", "--bogus", a, a)
    assert r.returncode == 2
    data = a.read_bytes()
    bad = tmp_path / "bad.rpm"
    bad.write_bytes(data[:-100])  # cut inside the compressed payload
    r = kiln("diff", a, bad)
    assert r.returncode == 2
    assert r.stdout == ""
    assert f"error: {bad}: gzip: truncated payload" in r.stderr
    bad.write_bytes(data[:300])  # cut inside the signature header
    r = kiln("diff", bad, a)
    assert r.returncode == 2
    assert f"{bad}: signature header: truncated" in r.stderr
    bad.write_text("not a package\n" * 10)
    r = kiln("diff", "--json", a, bad)
    assert r.returncode == 2
    assert f"{bad}: lead: bad magic" in r.stderr
    r = kiln("diff", a, tmp_path / "missing.rpm")
    assert r.returncode == 2
    assert "missing.rpm" in r.stderr
