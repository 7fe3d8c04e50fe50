"""kiln spec -q against rpmspec -q over the spec corpus: the header tags the parser makes
for every binary package and for the source package, printed with query formats that
cover names, versions, dependencies, scriptlets, triggers, changelog and every stored tag.
"""
import os
import subprocess
from concurrent.futures import ThreadPoolExecutor

import pytest

from conftest import kiln_binary
from test_spec_corpus import ARGS, CORPUS, specs

# Specs whose output is pinned for rpm 4.20 (see test_spec_corpus.py) print differently, or
# fail there.
PINNED = {p.name.split(".")[0]
          for p in [*CORPUS.glob("*.kiln.expected"), *CORPUS.glob("*.kiln.err")]}

FORMATS = {
    "nevra": "%{NAME}|%{EPOCH}|%{VERSION}|%{RELEASE}|%{ARCH}|%{OS}|%{nvra}|%{nevr}|%{evr}\\n",
    "text": "%{SUMMARY}|%{DESCRIPTION}|%{GROUP}|%{LICENSE}|%{URL}|%{PLATFORM}|%{OPTFLAGS}\\n",
    "deps": ("[R %{REQUIREFLAGS} %{REQUIRENAME} %{REQUIREVERSION}\\n]"
             "[P %{PROVIDEFLAGS} %{PROVIDENAME} %{PROVIDEVERSION}\\n]"
             "[C %{CONFLICTFLAGS} %{CONFLICTNAME} %{CONFLICTVERSION}\\n]"
             "[O %{OBSOLETEFLAGS} %{OBSOLETENAME} %{OBSOLETEVERSION}\\n]"
             "[Rec %{RECOMMENDFLAGS} %{RECOMMENDNAME} %{RECOMMENDVERSION}\\n]"
             "[Sug %{SUGGESTFLAGS} %{SUGGESTNAME} %{SUGGESTVERSION}\\n]"
             "[Sup %{SUPPLEMENTFLAGS} %{SUPPLEMENTNAME} %{SUPPLEMENTVERSION}\\n]"
             "[Enh %{ENHANCEFLAGS} %{ENHANCENAME} %{ENHANCEVERSION}\\n]"
             "[%{ORDERNAME}\\n]"),
    "scripts": ("%{PREIN}|%{PREINPROG}|%{POSTIN}|%{POSTINPROG}|%{PREUN}|%{POSTUN}|"
                "%{PRETRANS}|%{POSTTRANS}|%{VERIFYSCRIPT}|%{POSTINFLAGS}\\n"
                "[T %{TRIGGERNAME} %{TRIGGERFLAGS} %{TRIGGERVERSION} %{TRIGGERINDEX}\\n]"
                "[F %{FILETRIGGERNAME} %{FILETRIGGERINDEX}\\n]"),
    "changelog": "[%{CHANGELOGTIME} %{CHANGELOGNAME}\\n%{CHANGELOGTEXT}\\n]",
    "sources": "[S %{SOURCE}\\n][P %{PATCH}\\n][N %{NOSOURCE}\\n][%{BUILDARCHS} ]"
               "[%{EXCLUSIVEARCH} ][%{EXCLUDEARCH} ][%{PREFIXES} ]\\n",
}


def run(tool, spec, mode, fmt, home):
    env = dict(os.environ, LC_ALL="C", HOME=str(home), RPM_BUILD_NCPUS="2")
    args = ["-q", *mode] + (["--qf", fmt] if fmt else [])
    if tool == "rpmspec":
        cmd = ["rpmspec", *args, *ARGS, spec.name]
    else:
        cmd = [str(kiln_binary()), "spec", *args, *ARGS, spec.name]
    return subprocess.run(cmd, cwd=spec.parent, env=env, capture_output=True, timeout=60)


# One process pair per spec and mode keeps the suite fast; the sections are labelled so a
# failure shows which part differs.
ALL = "".join(f"=={name}==\\n{fmt}" for name, fmt in sorted(FORMATS.items()))


def compare(mode, fmt, tmp_path):
    todo = [s for s in specs() if s.stem not in PINNED]
    with ThreadPoolExecutor(max_workers=4) as pool:
        wants = list(pool.map(lambda s: run("rpmspec", s, mode, fmt, tmp_path), todo))
        gots = list(pool.map(lambda s: run("kiln", s, mode, fmt, tmp_path), todo))
    bad = []
    for spec, want, got in zip(todo, wants, gots):
        assert want.returncode == 0, want.stderr.decode()
        if got.returncode != 0 or got.stdout != want.stdout:
            w, g = want.stdout.split(b"\n"), got.stdout.split(b"\n")
            i = next((k for k in range(min(len(w), len(g))) if w[k] != g[k]), 0)
            bad.append(f"{spec.name} line {i + 1}\n  rpm:  {w[i:i + 3]!r}\n"
                       f"  kiln: {g[i:i + 3]!r} {got.stderr[-200:]!r}")
    assert not bad, "\n".join(bad[:8])


@pytest.mark.parametrize("mode", [[], ["--srpm"], ["--builtrpms"]], ids=["rpms", "srpm", "built"])
def test_query_matches_rpmspec(mode, tmp_path):
    compare(mode, ALL, tmp_path)


@pytest.mark.parametrize("mode", [[], ["--srpm"]], ids=["rpms", "srpm"])
def test_every_stored_tag(mode, tmp_path):
    """[%{*:...}] walks the stored tags in header order: the same tags, the same counts.
    (rpm gives %{*} meaning only as the whole format, so it runs on its own.)"""
    compare(mode, "[%{*:tagname} %{*:arraysize}\\n]", tmp_path)


def test_default_format_is_rpms(tmp_path):
    """Without --qf both print %{_query_all_fmt}: every package as NAME-V-R.src."""
    compare([], None, tmp_path)
