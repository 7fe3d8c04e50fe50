"""%files applied to a buildroot: kiln's collector (build/tests/fldump) against the package
Debian's rpmbuild builds from the same spec and buildroot, and configs/find-lang.sh against
Debian's /usr/lib/rpm/find-lang.sh on the same tree."""
import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HELPERS = Path(os.environ.get("KILN_BIN", ROOT / "build" / "kiln")).parent / "tests"
FLDUMP = HELPERS / "fldump"
FIND_LANG = ROOT / "configs" / "find-lang.sh"
RPM_FIND_LANG = Path("/usr/lib/rpm/find-lang.sh")
SDE = "1704067200"
ENV = dict(os.environ, TZ="UTC", LC_ALL="C", SOURCE_DATE_EPOCH=SDE,
           KILN_CONFIGDIR=str(ROOT / "configs"))

SPEC = r"""Name: fl
Version: 1.2
Release: 3
Summary: files test
License: MIT
%description
Every %files directive.
%package extra
Summary: extra
%description extra
extra
%prep
%setup -c -T
echo readme > README
echo lic > COPYING
mkdir docs; echo x > docs/a.txt; chmod 600 docs/a.txt
%install
B=%{buildroot}
mkdir -p $B/usr/bin $B/etc/fl.d $B/usr/share/fl/sub $B/var/lib/fl $B/usr/lib64
cp /bin/true $B/usr/bin/true64
printf '#!/bin/sh\necho hi\n' > $B/usr/bin/script; chmod 755 $B/usr/bin/script
printf '#!/usr/bin/python3\nprint(1)\n' > $B/usr/bin/py; chmod 755 $B/usr/bin/py
echo conf > $B/etc/fl.conf
echo d > $B/etc/fl.d/x.conf
echo data > $B/usr/share/fl/data.txt
echo sub > $B/usr/share/fl/sub/x
echo '<html></html>' > $B/usr/share/fl/x.html
echo 'prefix=/usr' > $B/usr/share/fl/fl.pc
ln -s data.txt $B/usr/share/fl/link
ln $B/usr/share/fl/data.txt $B/usr/share/fl/hard
: > $B/usr/share/fl/empty
echo g > $B/var/lib/fl/ghost-exists
mkdir -p $B/usr/share/fl/ex; echo e > $B/usr/share/fl/ex/gone
mkdir -p $B/usr/share/locale/de/LC_MESSAGES $B/usr/share/locale/fr/LC_MESSAGES
echo mo > $B/usr/share/locale/de/LC_MESSAGES/fl.mo
echo mo > $B/usr/share/locale/fr/LC_MESSAGES/fl.mo
cp /bin/true $B/usr/lib64/libx.so
echo '%%attr(0700,-,-) /usr/bin/py' > extra.list
%find_lang fl
%files -f fl.lang
%defattr(-,root,root,0750)
%config(noreplace) /etc/fl.conf
%config(missingok) %verify(not md5 size mtime) /etc/fl.d
/usr/bin/true64
/usr/bin/scr*
%dir /usr/share/fl
/usr/share/fl/*
%exclude /usr/share/fl/ex
%ghost /var/lib/fl/ghost-exists
%ghost %attr(0640,-,-) /var/lib/fl/ghost-none
%dir /var/lib/fl
%doc README docs
%license COPYING
%dev(c,1,3) /dev/null
%attr(0600,bin,daemon) %verify(not md5 mtime) /usr/share/fl/data.txt
%files extra -f extra.list
%attr(0644,-,-) /usr/lib64/libx.so
"""

FIELDS = ["FILENAMES", "FILESIZES", "FILEMODES:octal", "FILEUSERNAME", "FILEGROUPNAME",
          "FILEFLAGS", "FILEVERIFYFLAGS", "FILELANGS", "FILECOLORS", "FILECLASS",
          "FILELINKTOS", "FILEMTIMES", "FILERDEVS"]
QF = "[%{=NAME}\t" + "\t".join("%{" + f + "}" for f in FIELDS) + "\t%{FILEINODES}\n]"
DEFINES = ["_docdir_fmt %%{NAME}", "_build_id_links none"]


def rpmbuild(top: Path, spec: Path, *extra):
    cmd = ["rpmbuild", "-bb", "--nodeps", "--noclean", "--define", f"_topdir {top}",
           "--define", "clamp_mtime_to_source_date_epoch 1"]
    for d in DEFINES:
        cmd += ["--define", d]
    return subprocess.run(cmd + list(extra) + [str(spec)], env=ENV, capture_output=True,
                          text=True)


def fldump(spec: Path, buildroot: Path, builddir: Path):
    cmd = [str(FLDUMP)]
    for d in DEFINES:
        cmd += ["-D", d]
    cmd += ["-c", SDE, str(spec), str(buildroot), str(builddir)]
    return subprocess.run(cmd, env=ENV, capture_output=True, text=True)


def parse(lines, with_inodes):
    rows, links = {}, {}
    for line in lines:
        f = line.split("\t")
        if f[0] == "hardlinks":
            links.setdefault(f[1], []).append(sorted(f[2].split(" ")))
            continue
        row = f[:2 + len(FIELDS) - 1]
        rows[(f[0], f[1])] = row
        if with_inodes:
            links.setdefault((f[0], f[-1]), []).append(f[1])
    return rows, links


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    if not shutil.which("rpmbuild") or not FLDUMP.exists():
        pytest.skip("needs Debian's rpmbuild and build/tests/fldump")
    base = tmp_path_factory.mktemp("fl")
    top = base / "top"
    (top / "SPECS").mkdir(parents=True)
    spec = top / "SPECS" / "fl.spec"
    spec.write_text(SPEC)
    r = rpmbuild(top, spec)
    assert r.returncode == 0, r.stdout + r.stderr
    return top, spec


def test_collected_list_matches_rpmbuild(built):
    top, spec = built
    want, want_links = {}, []
    for rpm in sorted(top.glob("RPMS/*/*.rpm")):
        out = subprocess.run(["rpm", "-qp", "--qf", QF, str(rpm)], env=ENV, check=True,
                             capture_output=True, text=True).stdout
        rows, inodes = parse(out.splitlines(), True)
        want.update(rows)
        want_links += [sorted(v) for k, v in inodes.items() if len(v) > 1 and k[0] == "fl"]
    r = fldump(spec, top / "BUILDROOT" / "fl-1.2-3.x86_64", top / "BUILD" / "fl-1.2")
    assert r.returncode == 0, r.stderr
    got, links = parse(r.stdout.splitlines(), False)
    assert "File listed twice: /usr/share/fl/data.txt" in r.stderr
    cls = 1 + FIELDS.index("FILECLASS")
    for key, row in want.items():
        mode = int(row[1 + FIELDS.index("FILEMODES:octal")], 8)
        # rpm 4.20's file class table (build/rpmfc.c rpmfcTokens) no longer keeps
        # "symbolic link to ..." or device descriptions, which 4.18 stores: pinned "".
        if mode & 0o170000 in (0o120000, 0o020000, 0o060000):
            row = row[:cls] + [""] + row[cls + 1:]
        # rpm >= 4.19 names .html files without libmagic (rpmfc.c skipped_extensions,
        # rpm PR #2429); 4.18 asks libmagic ("HTML document, ASCII text").
        if key[1].endswith(".html"):
            row = row[:cls] + ["HTML document"] + row[cls + 1:]
        assert got.get(key) == row, key
    assert sorted(got) == sorted(want)
    assert sorted(links.get("fl", [])) == sorted(want_links) == [
        ["/usr/share/fl/data.txt", "/usr/share/fl/hard"]]
    assert got[("fl", "/usr/share/locale/de/LC_MESSAGES/fl.mo")][8] == "de"


def test_unpackaged_files_as_rpmbuild(tmp_path):
    if not shutil.which("rpmbuild") or not FLDUMP.exists():
        pytest.skip("needs Debian's rpmbuild and build/tests/fldump")
    top = tmp_path / "top"
    (top / "SPECS").mkdir(parents=True)
    spec = top / "SPECS" / "u.spec"
    spec.write_text("Name: u\nVersion: 1\nRelease: 1\nSummary: s\nLicense: MIT\n"
                    "%description\nd\n%install\nmkdir -p %{buildroot}/usr/bin "
                    "%{buildroot}/usr/empty\ntouch %{buildroot}/usr/bin/a "
                    "%{buildroot}/usr/bin/b\nln -s a %{buildroot}/usr/bin/l\n"
                    "%files\n/usr/bin/a\n")
    r = rpmbuild(top, spec)
    assert r.returncode != 0
    want = list(dict.fromkeys(ln for ln in r.stderr.splitlines() if ln.startswith("   /")))
    k = fldump(spec, top / "BUILDROOT" / "u-1-1.x86_64", top / "BUILD")
    assert k.returncode == 1
    assert "Installed (but unpackaged) file(s) found:" in k.stderr
    got = [ln for ln in k.stderr.splitlines() if ln.startswith("   /")]
    assert got == want == ["   /usr/bin/b", "   /usr/bin/l"]


def lang_tree(root: Path):
    dirs = ["usr/share/locale/de/LC_MESSAGES", "usr/share/locale/pt_BR/LC_MESSAGES",
            "usr/share/locale/C/LC_MESSAGES", "usr/share/locale/sr@latin/LC_MESSAGES",
            "usr/share/help/de/foo", "usr/share/help/C/foo", "usr/share/help/fr/other",
            "usr/share/gnome/help/foo/de/figures", "usr/share/gnome/help/foo/C",
            "usr/share/omf/foo", "usr/share/mate/help/foo/es", "usr/share/doc/HTML/de/foo",
            "usr/share/doc/HTML/en_GB/foo/sub", "usr/share/man/de/man1", "usr/share/man/man1",
            "usr/share/man/fr.UTF-8/man8", "usr/share/foo/translations"]
    files = ["usr/share/locale/de/LC_MESSAGES/foo.mo", "usr/share/locale/de/LC_MESSAGES/bar.mo",
             "usr/share/locale/pt_BR/LC_MESSAGES/foo.mo", "usr/share/locale/C/LC_MESSAGES/foo.mo",
             "usr/share/locale/sr@latin/LC_MESSAGES/foo.mo", "usr/share/omf/foo/foo-de.omf",
             "usr/share/omf/foo/foo-C.omf", "usr/share/man/de/man1/foo.1.gz",
             "usr/share/man/man1/foo.1.gz", "usr/share/man/fr.UTF-8/man8/foo.8",
             "usr/share/foo/translations/foo_de.qm", "usr/share/foo/translations/foo_pt_BR.qm",
             "usr/share/foo/translations/qt_fr.qm", "usr/share/foo/translations/es.qm",
             "usr/share/foo/translations/x_y_it.qm"]
    for d in dirs:
        (root / d).mkdir(parents=True, exist_ok=True)
    for f in files:
        (root / f).write_text("")
    (root / "usr/share/locale/de/LC_MESSAGES/link.mo").symlink_to("foo.mo")


@pytest.mark.parametrize("opts", [
    [], ["--all-name"], ["--with-gnome"], ["--with-gnome", "--all-name"], ["--with-mate"],
    ["--with-qt"], ["--with-qt", "--all-name"], ["--with-html"], ["--with-html", "--all-name"],
    ["--with-man"], ["--with-man", "--all-name"], ["--without-mo", "--with-man"],
    ["--with-kde"], ["--with-gnome", "--with-qt", "--with-man"]])
def test_find_lang_matches_rpm(tmp_path, opts):
    if not RPM_FIND_LANG.exists():
        pytest.skip("needs Debian's rpm")
    br = tmp_path / "br"
    lang_tree(br)
    out = {}
    for label, script in (("rpm", RPM_FIND_LANG), ("kiln", FIND_LANG)):
        cwd = tmp_path / label
        cwd.mkdir()
        r = subprocess.run(["sh" if label == "kiln" else "bash", str(script), str(br), "foo",
                            *opts], cwd=cwd, capture_output=True, text=True, env=ENV)
        out[label] = (r.returncode, (cwd / "foo.lang").read_text())
    assert out["kiln"] == out["rpm"]
    assert out["kiln"][1].count("\n") > 0


def test_find_lang_nothing_found_and_output_name(tmp_path):
    br = tmp_path / "br"
    lang_tree(br)
    r = subprocess.run(["sh", str(FIND_LANG), str(br), "nothing"], cwd=tmp_path,
                       capture_output=True, text=True)
    assert r.returncode == 1
    assert r.stdout == f"No translations found for nothing in {br}\n"
    r = subprocess.run(["sh", str(FIND_LANG), str(br), "foo", "my.list"], cwd=tmp_path,
                       capture_output=True, text=True)
    assert r.returncode == 0
    assert "%lang(pt) /usr/share/locale/pt_BR/LC_MESSAGES/foo.mo" in \
        (tmp_path / "my.list").read_text().splitlines()
