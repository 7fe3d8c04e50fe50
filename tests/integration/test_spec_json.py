"""kiln spec --json: the documented layout (docs/spec-json.md), checked against rpmspec -q
for the values both can show, over a spec that uses most of the grammar."""
import json
import os
import subprocess

from conftest import kiln_binary
from test_spec_corpus import ARGS, CORPUS

SPEC = """Name: jsontest
Version: 2.1
Release: 3
Epoch: 1
Summary: JSON layout test
Summary(de): JSON-Test
License: MIT
URL: https://example.org
Source0: https://example.org/jsontest-2.1.tar.gz
Source5: extra.conf
Patch1: fix.patch
NoSource: 5
BuildRequires: gcc >= 10, (pkgconfig(foo) or pkgconfig(bar))
BuildConflicts: badlib
Requires(pre,post): shadow-utils
Requires: libfoo%{?_isa} = %{epoch}:%{version}-%{release}
Recommends: jsontest-doc
Obsoletes: oldjson < 2
ExclusiveArch: x86_64 aarch64

%description
Main.

%description -l de
Haupt.

%package doc
Summary: Docs
BuildArch: noarch

%description doc
Docs.

%prep
%setup -q
%patch -P 1 -p1

%build
make

%install -a
echo extra

%pre -p /bin/bash
echo pre

%triggerin -- bash < 5
echo trig

%filetriggerin -P 2000 -- /usr/lib
echo ft

%files
%defattr(0644,root,root,0755)
%attr(0755,-,-) /usr/bin/jsontest
%config(noreplace) %verify(not md5 size mtime) /etc/jsontest.conf
%doc README
%lang(de) /usr/share/jsontest/de.msg
%dir /var/lib/jsontest
%ghost /var/log/jsontest.log
%caps(cap_net_raw=ep) /usr/bin/ping-helper
%dev(c,1,3) /dev/jsonnull
"/usr/share/jsontest/with space"

%files doc -f doc.list

%changelog
* Tue Jan 02 2024 B <b@example.org> - 1:2.1-3
- second
* Mon Jan 01 2024 A <a@example.org> - 1:2.1-2
- first
"""


def run(cmd, cwd):
    env = dict(os.environ, LC_ALL="C", RPM_BUILD_NCPUS="2")
    return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=60)


def model(tmp_path):
    (tmp_path / "j.spec").write_text(SPEC)
    r = run([str(kiln_binary()), "spec", "--json", *ARGS, "j.spec"], tmp_path)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_top_level_layout(tmp_path):
    d = model(tmp_path)
    assert list(d) == ["kiln_spec_json", "path", "buildsystem", "buildoptions", "buildarchs",
                       "exclusivearch", "excludearch", "exclusiveos", "excludeos", "sources",
                       "source_package", "packages", "sections", "changelog"]
    assert d["kiln_spec_json"] == 1 and d["buildsystem"] is None
    assert d["exclusivearch"] == ["x86_64", "aarch64"]
    assert [(s["type"], s["num"], s["file"], s["nosource"]) for s in d["sources"]] == [
        ("source", 0, "jsontest-2.1.tar.gz", False), ("source", 5, "extra.conf", True),
        ("patch", 1, "fix.patch", False)]
    assert d["sources"][0]["path"] == "/builddir/build/SOURCES/jsontest-2.1.tar.gz"
    assert [c["name"] for c in d["changelog"]] == ["B <b@example.org> - 1:2.1-3",
                                                   "A <a@example.org> - 1:2.1-2"]
    assert d["changelog"][0]["time"] == 1704196800  # 12:00 UTC, as rpm stores dates
    assert set(d["sections"]) == {"prep", "build", "install"}
    assert d["sections"]["install"] == "echo extra\n\n"  # the blank line is the fragment's
    assert "fix.patch" in d["sections"]["prep"]


def test_dependencies(tmp_path):
    d = model(tmp_path)
    br = d["source_package"]["buildrequires"]
    assert {"name": "gcc", "op": ">=", "evr": "10", "flags": 12} in br
    assert any(x.get("rich") and x["name"] == "(pkgconfig(foo) or pkgconfig(bar))" for x in br)
    main = d["packages"][0]
    req = main["dependencies"]["requires"]
    shadow = next(x for x in req if x["name"] == "shadow-utils")
    assert shadow["qualifiers"] == ["pre", "post"]
    bash = next(x for x in req if x["name"] == "/bin/bash")
    assert "interp" in bash["qualifiers"] and "pre" in bash["qualifiers"]
    assert main["dependencies"]["obsoletes"] == [
        {"name": "oldjson", "op": "<", "evr": "2", "flags": 2}]


def test_packages_scripts_files(tmp_path):
    d = model(tmp_path)
    main, doc = d["packages"]
    assert (main["name"], main["main"], main["built"], main["arch"]) == (
        "jsontest", True, True, "x86_64")
    assert (doc["name"], doc["arch"], doc["file_lists"]) == ("jsontest-doc", "noarch",
                                                             ["doc.list"])
    kinds = [s["kind"] for s in main["scripts"]]
    assert kinds == ["pre", "triggerin", "filetriggerin"]
    assert main["scripts"][0]["interpreter"] == ["/bin/bash"]
    trig = main["scripts"][1]["conditions"][0]
    assert (trig["name"], trig["op"], trig["evr"]) == ("bash", "<", "5")
    assert main["scripts"][2]["priority"] == 2000
    files = {tuple(f["paths"]): f for f in main["files"]}
    f = files[("/usr/bin/jsontest",)]
    assert f["attr"] == {"mode": "0755"}
    assert f["defattr"] == {"mode": "0644", "user": "root", "group": "root", "dirmode": "0755"}
    conf = files[("/etc/jsontest.conf",)]
    assert conf["flags"] == ["config", "noreplace"]
    assert conf["verify"] == ["link", "user", "group", "mode", "rdev", "caps"]
    assert files[("README",)]["flags"] == ["doc", "special"]
    assert files[("/usr/share/jsontest/de.msg",)]["lang"] == "de"
    assert files[("/var/lib/jsontest",)]["flags"] == ["dir"]
    assert files[("/var/log/jsontest.log",)]["flags"] == ["ghost"]
    assert files[("/usr/bin/ping-helper",)]["caps"] == "cap_net_raw=ep"
    assert files[("/dev/jsonnull",)]["dev"] == {"type": "c", "major": 1, "minor": 3}
    assert ("/usr/share/jsontest/with space",) in files


def test_tags_agree_with_rpmspec(tmp_path):
    """Every tag value in the JSON equals what rpmspec -q prints for it."""
    d = model(tmp_path)
    for pkg, mode, tags in [(0, [], d["packages"][0]["tags"]),
                            (None, ["--srpm"], d["source_package"]["tags"])]:
        for name, value in tags.items():
            if name in ("SUMMARY", "DESCRIPTION", "GROUP", "HEADERI18NTABLE"):
                continue  # i18n: rpm prints the C element only
            r = run(["rpmspec", "-q", *mode, "--qf", f"[%{{{name}}}\\n]", *ARGS, "j.spec"],
                    tmp_path)
            assert r.returncode == 0, r.stderr
            lines = r.stdout.splitlines()
            if pkg is not None:  # one block per package: take the main one's
                n = len(value) if isinstance(value, list) else 1
                lines = lines[:n]
            want = [str(v) for v in (value if isinstance(value, list) else [value])]
            assert lines == want, name
    assert d["packages"][0]["tags"]["SUMMARY"] == ["JSON layout test", "JSON-Test"]
    assert d["packages"][0]["tags"]["HEADERI18NTABLE"] == ["C", "de"]
