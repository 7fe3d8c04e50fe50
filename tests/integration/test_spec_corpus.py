"""kiln spec --parse against rpmspec -P over the spec corpus (tests/data/specs).

The .expected/.stderr/.err files were recorded from Debian's rpmspec 4.18 by
scripts/check-spec-corpus.sh (which also re-checks them against rpmspec). kiln parses with
rpm's own macro files here, so the output must be byte-identical, with two documented
exceptions:

* rpm 4.18's -P loses the section header line that follows %prep (a bug rpm 4.20 fixed):
  kiln prints it and the comparison ignores exactly that one line.
* Where rpm 4.20 differs from 4.18 (new built-ins, %setup expanded as its line is read),
  NNN-name.kiln.expected holds kiln's output, pinned by hand (its header says why), and
  NNN-name.kiln.stderr the messages.
* Where rpm 4.20 or 6.0 fails a spec that rpm 4.18 parses (%patchN, a bare %patch, %setup and
  %patch errors and missing sources or patches end the parse), NNN-name.kiln.err holds the
  error, pinned by hand after "#" lines saying why: kiln exits 1, prints nothing on stdout
  and reports that error at that line.

Messages are compared without their location prefix: rpm writes "line N: " or "FILE: line
N: " (or nothing), kiln always "FILE:N: "; where rpm names a line, kiln's must be the same.
"""
import os
import re
import subprocess
from pathlib import Path

import pytest

from conftest import ROOT, kiln_binary

CORPUS = ROOT / "tests" / "data" / "specs"
MACROS = ("/usr/lib/rpm/macros:/usr/lib/rpm/macros.d/macros.*:"
          "/usr/lib/rpm/platform/%{_target}/macros:/usr/lib/rpm/fileattrs/*.attr")
ARGS = ["--macros", MACROS, "--rcfile", "/usr/lib/rpm/rpmrc",
        "--define", "_topdir /builddir/build",
        "--define", "_sourcedir /builddir/build/SOURCES"]


def run_kiln(spec: Path, home: Path):
    env = dict(os.environ, LC_ALL="C", HOME=str(home), RPM_BUILD_NCPUS="2")
    return subprocess.run([str(kiln_binary()), "spec", "--parse", *ARGS, spec.name],
                          cwd=spec.parent, env=env, capture_output=True, timeout=60)


def specs(sub=""):
    return sorted((CORPUS / sub).glob("*.spec"))


def same_but_prep_header(got: bytes, want: bytes) -> bool:
    """got equals want, or equals it with one extra section header line after %prep."""
    if got == want:
        return True
    g, w = got.split(b"\n"), want.split(b"\n")
    i = next((k for k in range(min(len(g), len(w))) if g[k] != w[k]), min(len(g), len(w)))
    if i >= len(g) or not g[i].startswith(b"%"):
        return False
    if b"%prep" not in [x.strip().lower() for x in g[:i]]:
        return False
    return g[:i] + g[i + 1:] == w


LOCATION = re.compile(r"^(?:(?:[^:\s]+: )?line (\d+): |[^:\s]+:(\d+): )")


def message(line: str):
    """(severity, line number or None, text) of an "error:"/"warning:" line."""
    m = re.match(r"^(error|warning): (.*)$", line)
    if not m:
        return None
    sev, text = m.groups()
    loc = LOCATION.match(text)
    num = None
    if loc:
        num = int(loc.group(1) or loc.group(2))
        text = text[loc.end():]
    return sev, num, text.rstrip()


def messages(text: str):
    return [m for m in map(message, text.splitlines()) if m]


def same_messages(got: str, want: str) -> bool:
    g, w = messages(got), messages(want)
    if len(g) != len(w):
        return False
    for (gs, gn, gt), (ws, wn, wt) in zip(g, w):
        if gs != ws or gt != wt or (wn is not None and gn != wn):
            return False
    return True


def pinned_lines(path: Path):
    """A pinned file's lines after its leading "#" comment lines."""
    lines = path.read_bytes().split(b"\n")
    while lines and lines[0].startswith(b"#"):
        lines.pop(0)
    return lines


@pytest.mark.parametrize("spec", specs() + specs("lenient"),
                         ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_parse_matches_rpmspec(spec, tmp_path):
    r = run_kiln(spec, tmp_path)
    pinned_err = spec.with_suffix(".kiln.err")
    if pinned_err.exists():
        want = message(pinned_lines(pinned_err)[0].decode())
        assert r.returncode == 1, r.stdout.decode()[-500:]
        assert r.stdout == b""
        assert want in messages(r.stderr.decode()), r.stderr.decode()
        return
    pinned = spec.with_suffix(".kiln.expected")
    stderr_file = spec.with_suffix(".stderr")
    want_err = stderr_file.read_text() if stderr_file.exists() else ""
    assert r.returncode == 0, r.stderr.decode()
    if pinned.exists():
        # The pinned file starts with "#" comment lines saying why; the rest is output.
        assert r.stdout == b"\n".join(pinned_lines(pinned))
        pinned_err = spec.with_suffix(".kiln.stderr")
        want_err = pinned_err.read_text() if pinned_err.exists() else ""
        assert same_messages(r.stderr.decode(), want_err), r.stderr.decode()
        return
    want = spec.with_suffix(".expected").read_bytes()
    assert same_but_prep_header(r.stdout, want), "output differs from rpmspec -P"
    assert same_messages(r.stderr.decode(), want_err), r.stderr.decode()


@pytest.mark.parametrize("spec", specs("bad"), ids=lambda p: p.stem)
def test_bad_spec_fails_like_rpmspec(spec, tmp_path):
    """rpm's first message must be among kiln's, with the same severity and line; kiln's
    message may say more (it keeps context such as "bad %if condition: ...")."""
    r = run_kiln(spec, tmp_path)
    stderr = r.stderr.decode()
    want = spec.with_suffix(".err").read_text().splitlines()[0]
    assert r.returncode == 1, r.stdout.decode()[-500:]
    sev, num, text = message(want)
    found = [(gs, gn, gt) for gs, gn, gt in messages(stderr) if gs == sev and text in gt]
    assert found, stderr
    if num is not None:
        assert any(gn == num for _, gn, _ in found), stderr
    # kiln names the file and line on the error that stops it.
    assert re.match(rf"error: {re.escape(spec.name)}:\d+: ", stderr.splitlines()[-1]), stderr
