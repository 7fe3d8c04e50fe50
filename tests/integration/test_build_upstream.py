"""Issue 22: what real upstream packages need from kiln build to build as with rpmbuild.

Each test pins one behaviour rpmbuild has and kiln lacked: tarballs of every tar format,
%files -f with a path inside the sandbox's build directory, rpm's macros, the dependencies
rpmbuild writes on source packages, the post-install policy and the header tags.
"""
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
RPMUNCOMPRESS = ROOT / "configs" / "rpmuncompress"
EPOCH = "1796126400"
ENV = dict(os.environ, TZ="UTC", LC_ALL="C", SOURCE_DATE_EPOCH=EPOCH)

# ---------------------------------------------------------------------------------------
# Every tar format unpacks: rpm pipes any tar archive through tar, whatever its header
# format. automake's `make dist` writes v7 archives, which carry no "ustar" magic.

TAR_FORMATS = ["v7", "oldgnu", "gnu", "ustar", "pax"]
# compression: (suffix, command writing stdout from a file argument)
COMPRESSIONS = {
    "plain": ("", None),
    "gzip": (".gz", ["gzip", "-nc"]),
    "bzip2": (".bz2", ["bzip2", "-c"]),
    "xz": (".xz", ["xz", "-c"]),
    "lzma": (".lzma", ["xz", "--format=lzma", "-c"]),
    "zstd": (".zst", ["zstd", "-qc"]),
    "lz4": (".lz4", ["lz4", "-qc"]),
    "lzip": (".lz", ["lzip", "-c"]),
}


def make_tar(dest_dir: Path, fmt: str, compression: str) -> Path:
    tree = dest_dir / "tree"
    (tree / "hello-2.10" / "src").mkdir(parents=True)
    (tree / "hello-2.10" / "src" / "hello.c").write_text("int main(void) { return 0; }\n")
    (tree / "hello-2.10" / "configure").write_text("#!/bin/sh\n")
    tar = dest_dir / "hello-2.10.tar"
    subprocess.run(["tar", f"--format={fmt}", "-C", tree, "-cf", tar, "hello-2.10"],
                   check=True)
    suffix, cmd = COMPRESSIONS[compression]
    if not cmd:
        return tar
    if not shutil.which(cmd[0]):
        pytest.skip(f"{cmd[0]} is not installed")
    out = dest_dir / f"hello-2.10.tar{suffix}"
    with open(out, "wb") as f:
        subprocess.run([*cmd, tar], check=True, stdout=f)
    tar.unlink()
    return out


@pytest.mark.parametrize("compression", list(COMPRESSIONS))
@pytest.mark.parametrize("fmt", TAR_FORMATS)
def test_rpmuncompress_extracts_every_tar_format(tmp_path, fmt, compression):
    archive = make_tar(tmp_path, fmt, compression)
    work = tmp_path / "BUILD"
    work.mkdir()
    r = subprocess.run(["sh", RPMUNCOMPRESS, "-x", archive], cwd=work, capture_output=True,
                       text=True)
    assert r.returncode == 0, r.stderr
    assert sorted(p.name for p in work.iterdir()) == ["hello-2.10"]
    assert (work / "hello-2.10/src/hello.c").read_text().startswith("int main")
    # -C DIR (rpm 4.20's %setup -C): the archive's top directory is stripped.
    r = subprocess.run(["sh", RPMUNCOMPRESS, "-x", "-C", "into", archive], cwd=work,
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert (work / "into/src/hello.c").exists()


@pytest.mark.parametrize("compression", ["plain", "gzip", "xz"])
def test_rpmuncompress_keeps_non_tar_files_apart(tmp_path, compression):
    # A (compressed) file that is not a tar archive is written out decompressed, not fed
    # to tar: neither a text file nor a block of zeros passes the header check.
    for name, data in (("notes.txt", b"just text\n" * 80), ("zeros.bin", bytes(1024))):
        src = tmp_path / name
        src.write_bytes(data)
        suffix, cmd = COMPRESSIONS[compression]
        if cmd:
            with open(f"{src}{suffix}", "wb") as f:
                subprocess.run([*cmd, src], check=True, stdout=f)
            src.unlink()
            src = Path(f"{src}{suffix}")
        work = tmp_path / f"w-{name}"
        work.mkdir()
        r = subprocess.run(["sh", RPMUNCOMPRESS, "-x", src], cwd=work, capture_output=True,
                           text=True)
        assert r.returncode == 0, r.stderr
        # The compression suffix goes (rpm's %{uncompress} of a plain file: its last one).
        out = src.name.rsplit(".", 1)[0]
        assert (work / out).read_bytes() == data


# ---------------------------------------------------------------------------------------
# kiln build, in its default sandbox, against the same spec under rpmbuild


def kiln_build(kiln_bin, top: Path, *args, env=None):
    cmd = [str(kiln_bin), "build", "--define", f"_topdir {top}",
           "--define", "_buildhost oracle.example", *map(str, args)]
    return subprocess.run(cmd, env=env or ENV, capture_output=True, text=True, timeout=300)


def qf(pkg: Path, fmt: str) -> str:
    return subprocess.run(["rpm", "-qp", "--qf", fmt, str(pkg)], env=ENV, check=True,
                          capture_output=True, text=True).stdout


def write_spec(path: Path, body: str, name="t") -> Path:
    path.write_text(f"Name: {name}\nVersion: 1\nRelease: 1\nSummary: s\nLicense: MIT\n"
                    f"%description\nd\n{body}")
    return path


def test_files_list_at_an_absolute_builddir_path(kiln_bin, tmp_path):
    """Fedora's %pyproject_files is %{_builddir}/...-files: in the sandbox that path is
    /builddir/build/BUILD/..., which the file collector reads on the host side."""
    spec = write_spec(tmp_path / "t.spec",
                      "%install\nmkdir -p %{buildroot}/usr/share/t\n"
                      "echo x > %{buildroot}/usr/share/t/a\n"
                      "echo /usr/share/t/a > %{_builddir}/t-files\n"
                      "%files -f %{_builddir}/t-files\n")
    top = tmp_path / "top"
    k = kiln_build(kiln_bin, top, "-bb", spec)
    assert k.returncode == 0, k.stderr
    pkg = top / "RPMS/x86_64/t-1-1.x86_64.rpm"
    assert qf(pkg, "[%{FILENAMES}\n]") == "/usr/share/t/a\n"


def test_makeinstall_is_rpms(kiln_bin, tmp_path):
    defs = ["--define", "buildroot /br", "--define", "_sharedstatedir /var/lib"]
    r = subprocess.run(["rpm", *defs, "--eval", "%makeinstall"], capture_output=True,
                       text=True, env=ENV)
    k = subprocess.run([str(kiln_bin), "eval", *defs, "%makeinstall"], capture_output=True,
                       text=True, env=ENV)
    assert r.returncode == 0 and k.returncode == 0, k.stderr
    assert k.stdout == r.stdout
    # And a Makefile without DESTDIR installs into the buildroot through it.
    spec = write_spec(tmp_path / "t.spec",
                      "%prep\n%setup -c -T\n"
                      "printf 'install:\\n\\tmkdir -p $(bindir)\\n"
                      "\\tprintf \"#!/bin/sh\\\\n\" > $(bindir)/t\\n' > Makefile\n"
                      "%install\n%makeinstall\n%files\n%attr(0755,root,root) /usr/bin/t\n")
    top = tmp_path / "top"
    k = kiln_build(kiln_bin, top, "-bb", spec)
    assert k.returncode == 0, k.stderr
    assert "%makeinstall is deprecated" in k.stdout + k.stderr
    assert qf(top / "RPMS/x86_64/t-1-1.x86_64.rpm", "[%{FILENAMES}\n]") == "/usr/bin/t\n"


def rpmbuild(top: Path, *args):
    # Debian's rpmbuild, with its empty rpmdb (--nodeps) and kiln's defaults where Debian's
    # differ: gzip payloads are compared with --define below on both sides.
    cmd = ["rpmbuild", "--nodeps", "--define", f"_topdir {top}",
           "--define", "_buildhost oracle.example", "--define", "_binary_payload w9.gzdio",
           "--define", "_source_payload w9.gzdio",
           "--define", "use_source_date_epoch_as_buildtime 1",
           "--define", "clamp_mtime_to_source_date_epoch 1", *map(str, args)]
    return subprocess.run(cmd, env=ENV, capture_output=True, text=True, timeout=300)


REQUIRES_QF = "[%{REQUIRENAME} %{REQUIREFLAGS} %{REQUIREVERSION}\n]"


@pytest.mark.parametrize("dynamic", [True, False])
def test_source_package_of_generate_buildrequires(kiln_bin, tmp_path, dynamic):
    body = "BuildRequires: make\n"
    body += "%generate_buildrequires\necho gcc\n" if dynamic else ""
    spec = write_spec(tmp_path / "g.spec", body + "%files\n")
    pay = ["--define", "_source_payload w9.gzdio"]
    k = kiln_build(kiln_bin, tmp_path / "k", "-bs", *pay, spec)
    assert k.returncode == 0, k.stderr
    r = rpmbuild(tmp_path / "r", "-bs", spec)
    assert r.returncode == 0, r.stderr
    kq = qf(tmp_path / "k/SRPMS/t-1-1.src.rpm", REQUIRES_QF)
    assert kq == qf(tmp_path / "r/SRPMS/t-1-1.src.rpm", REQUIRES_QF)
    assert ("rpmlib(DynamicBuildRequires) 17301514 4.15.0-1\n" in kq) == dynamic


# ---------------------------------------------------------------------------------------
# %__os_install_post: kiln's brp scripts do to a buildroot what rpm's do


def make_buildroot(root: Path, precompressed=True):
    """A buildroot with what the post-install policy acts on (a page already gzipped when
    precompressed)."""
    src = root.parent / f"{root.name}-src"
    src.mkdir(parents=True)
    (src / "p.c").write_text("int f(int x) { return x + 1; }\n"
                             "int main(void) { return f(-1); }\n")
    (src / "l.c").write_text("int g(int x) { return x * 2; }\n")
    for d in ("usr/bin", "usr/lib64", "usr/share/man/man1", "usr/share/man/man3",
              "usr/share/info", "usr/lib/debug/usr/bin"):
        (root / d).mkdir(parents=True)
    cc = ["gcc", "-g", "-O1", f"-fdebug-prefix-map={src}=/src"]
    subprocess.run([*cc, "-o", root / "usr/bin/p", src / "p.c"], check=True)
    subprocess.run([*cc, "-o", root / "usr/bin/p-stripped", src / "p.c", "-s"], check=True)
    subprocess.run([*cc, "-shared", "-fPIC", "-o", root / "usr/lib64/libl.so.1",
                    src / "l.c"], check=True)
    os.chmod(root / "usr/lib64/libl.so.1", 0o755)
    subprocess.run([*cc, "-c", "-o", src / "l.o", src / "l.c"], check=True)
    subprocess.run(["ar", "rcD", root / "usr/lib64/libl.a", src / "l.o"], check=True)
    shutil.copy(root / "usr/bin/p", root / "usr/lib/debug/usr/bin/p.debug")
    (root / "usr/lib64/libl.la").write_text(
        "# libl.la - a libtool library file\n# Generated by libtool\n")
    (root / "usr/lib64/other.la").write_text("not libtool's\n")
    man = root / "usr/share/man"
    for i, name in enumerate(("p.1", "q.1", "r.3")):
        (man / f"man{name[-1]}" / name).write_text(f".TH P {i}\n" + "text\n" * 40)
    if precompressed:
        subprocess.run(["gzip", "-n", man / "man1/q.1"], check=True)
    os.link(man / "man3/r.3", man / "man3/r-alias.3")
    os.symlink("p.1", man / "man1/p-link.1")
    os.symlink("../man1/p.1.bz2", man / "man3/p-other.3")
    (man / "de/man1").mkdir(parents=True)
    (man / "de/man1/p.1").write_text(".TH P 1\nTexte\n")
    os.utime(man / "man1/p.1", (1700000000, 1700000000))
    (root / "usr/share/info/p.info").write_text("info\n" * 30)
    (root / "usr/share/info/dir").write_text("index\n")


def tree(root: Path):
    out = {}
    for p in sorted(root.rglob("*")):
        st = p.lstat()
        kind = "l" if p.is_symlink() else "d" if p.is_dir() else "f"
        data = os.readlink(p) if kind == "l" else p.read_bytes() if kind == "f" else ""
        out[str(p.relative_to(root))] = (kind, oct(st.st_mode & 0o7777), st.st_nlink, data)
    return out


BRP = [("brp-compress", ["/usr"]), ("brp-elfperms", []), ("brp-strip", ["strip"]),
       ("brp-strip-static-archive", ["strip"]),
       ("brp-strip-comment-note", ["strip", "objdump"]), ("brp-remove-la-files", [])]


@pytest.mark.parametrize("script,args", BRP, ids=[b[0] for b in BRP])
def test_brp_script_does_what_rpms_does(tmp_path, script, args):
    rpms = Path("/usr/lib/rpm") / script
    if not rpms.exists():
        pytest.skip(f"{rpms} is not installed")
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    make_buildroot(ours)
    make_buildroot(theirs)
    for sh, script_path, root in (("sh", ROOT / "configs" / script, ours),
                                  ("bash", rpms, theirs)):
        r = subprocess.run([sh, script_path, *args], capture_output=True, text=True,
                           env=dict(ENV, RPM_BUILD_ROOT=str(root)))
        assert r.returncode == 0, r.stderr
    assert tree(ours) == tree(theirs)
    untouched = tmp_path / "untouched"
    make_buildroot(untouched)
    assert tree(ours) != tree(untouched)  # the script had work to do


POLICY_SPEC = """%install
cp -a %{_sourcedir}/tree/. %{buildroot}/
%files
/usr
"""


@pytest.mark.parametrize("precompressed", [False, True], ids=["plain-pages", "gzipped-page"])
def test_in_process_policy_leaves_the_buildroot_the_scripts_leave(kiln_bin, tmp_path,
                                                                   precompressed):
    """worker/brp.c does kiln's brp scripts' work itself: on the same buildroot it must leave
    what the scripts leave, file by file (kinds, modes, link counts, contents, targets)."""
    spec = write_spec(tmp_path / "policy.spec", POLICY_SPEC, name="policy")
    roots, logs = {}, {}
    for inprocess in ("1", "0"):
        top = tmp_path / f"top{inprocess}"
        make_buildroot(top / "SOURCES" / "tree", precompressed)
        r = kiln_build(kiln_bin, top, "-bi", "--define", f"_kiln_brp_inprocess {inprocess}",
                       spec)
        assert r.returncode == 0, r.stdout[-3000:] + r.stderr
        roots[inprocess] = top / "BUILDROOT" / "policy-1-1.x86_64"
        logs[inprocess] = r.stdout
    assert tree(roots["1"]) == tree(roots["0"])
    for script, _ in BRP:
        done = re.compile(rf"^\+ \S*/{script}( \S+)*   \(in kiln\)$", re.M)
        assert done.search(logs["1"]) or (script == "brp-compress" and precompressed)
        assert not done.search(logs["0"])
    untouched = tmp_path / "untouched"
    make_buildroot(untouched, precompressed)
    assert tree(roots["1"]) != tree(untouched)
    man = roots["1"] / "usr/share/man"
    assert (man / "man1/p.1.gz").stat().st_mtime == 1700000000  # gzip keeps the page's time
    assert os.readlink(man / "man3/p-other.3.gz") == "../man1/p.1.gz"
    assert (man / "man3/r.3.gz").stat().st_ino == (man / "man3/r-alias.3.gz").stat().st_ino


def test_in_process_policy_skips_what_an_early_exit_skips(kiln_bin, tmp_path):
    """%install's script ends at `exit 0`: rpmbuild's policy never runs then, nor kiln's."""
    spec = write_spec(tmp_path / "early.spec", POLICY_SPEC.replace(
        "%files", "exit 0\n%files"), name="policy")
    make_buildroot(tmp_path / "SOURCES" / "tree", False)
    r = kiln_build(kiln_bin, tmp_path, "-bi", spec)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr
    assert "(in kiln)" not in r.stdout
    man = tmp_path / "BUILDROOT" / "policy-1-1.x86_64" / "usr/share/man"
    assert (man / "man1/p.1").exists() and not (man / "man1/p.1.gz").exists()


def test_in_process_policy_keeps_the_install_scripts_environment(kiln_bin, tmp_path):
    """A line after the policy's first step sees what %install exported, in the directory
    %install ended in, as in rpmbuild's single script; COMPRESS set there is obeyed."""
    spec = write_spec(tmp_path / "env.spec", "%global __os_install_post %{__brp_compress}\\\n"
                      "%{__brp_strip}\\\necho \"after: $KILN_T in $PWD\"\\\n%{nil}\n" +
                      POLICY_SPEC.replace("%files", "export KILN_T=seen COMPRESS='gzip -1 -n'\n"
                                          "cd %{buildroot}/usr\n%files"), name="policy")
    make_buildroot(tmp_path / "SOURCES" / "tree", False)
    r = kiln_build(kiln_bin, tmp_path, "-bi", spec)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr
    root = tmp_path / "BUILDROOT" / "policy-1-1.x86_64"
    assert re.search(r"after: seen in \S*/BUILDROOT/policy-1-1.x86_64/usr$", r.stdout, re.M), \
        r.stdout[-2000:]
    page = (root / "usr/share/man/man1/p.1.gz").read_bytes()
    src = (tmp_path / "SOURCES/tree/usr/share/man/man1/p.1").read_bytes()
    assert page == subprocess.run(["gzip", "-1", "-n"], input=src, capture_output=True,
                                  check=True).stdout


# ---------------------------------------------------------------------------------------
# Acceptance: a real autotools package from a v7 tarball, built by kiln and by rpmbuild

AMHELLO = {
    "configure.ac": "AC_INIT([amhello], [1.0], [bugs@example.org])\n"
                    "AM_INIT_AUTOMAKE([-Wall -Werror foreign])\nAC_PROG_CC\n"
                    "AC_CONFIG_HEADERS([config.h])\n"
                    "AC_CONFIG_FILES([Makefile src/Makefile])\nAC_OUTPUT\n",
    "Makefile.am": "SUBDIRS = src\ndist_doc_DATA = README\nman_MANS = amhello.1\n"
                   "EXTRA_DIST = amhello.1\n",
    "README": "amhello: automake's example, as a test package.\n",
    "amhello.1": ".TH AMHELLO 1\n.SH NAME\namhello \\- say hello\n" + ".PP\ntext\n" * 30,
    "src/Makefile.am": "bin_PROGRAMS = amhello\namhello_SOURCES = main.c\n",
    "src/main.c": '#include <config.h>\n#include <stdio.h>\n\n'
                  'int main(void)\n{\n\tputs("Hello World!");\n'
                  '\tputs("This is " PACKAGE_STRING ".");\n\treturn 0;\n}\n',
}

AMHELLO_SPEC = """Name:           amhello
Version:        1.0
Release:        1
Summary:        automake's example program
License:        GPL-3.0-or-later
Group:          Applications/Text
URL:            https://www.gnu.org/software/automake/
Source0:        amhello-1.0.tar.gz

%description
Prints a greeting.

%prep
%autosetup

%build
%configure
%make_build

%install
%make_install

%files
%doc README
%{_bindir}/amhello
%{_mandir}/man1/amhello.1*

%changelog
* Tue Dec 01 2026 Kiln Tests <tests@example.org> - 1.0-1
- Packaged.
"""


@pytest.fixture(scope="module")
def amhello(kiln_bin, tmp_path_factory):
    if not shutil.which("autoreconf"):
        pytest.skip("autoconf/automake are not installed (scripts/deps.sh installs them)")
    base = tmp_path_factory.mktemp("amhello")
    src = base / "amhello-1.0"
    for name, text in AMHELLO.items():
        (src / name).parent.mkdir(parents=True, exist_ok=True)
        (src / name).write_text(text)
    subprocess.run(["autoreconf", "-fi"], cwd=src, check=True, capture_output=True)
    tars = {}
    for side in ("k", "r"):
        sources = base / side / "SOURCES"
        sources.mkdir(parents=True)
        tar = sources / "amhello-1.0.tar"
        subprocess.run(["tar", "--format=v7", "--owner=0", "--group=0", "--sort=name",
                        f"--mtime=@{EPOCH}", "-C", base, "-cf", tar, "amhello-1.0"],
                       check=True)
        subprocess.run(["gzip", "-n9", tar], check=True)
        tars[side] = tar.with_suffix(".tar.gz")
    # A v7 header: no "ustar" magic at 257.
    import gzip
    assert b"ustar" not in gzip.decompress(tars["k"].read_bytes())[257:263]
    spec = base / "amhello.spec"
    spec.write_text(AMHELLO_SPEC)
    # amhello's make install puts README in /usr/share/doc/amhello: both sides use that
    # doc directory format (Fedora's, %{NAME}; rpm's default is %{NAME}-%{VERSION})
    k = kiln_build(kiln_bin, base / "k", "-ba", "--define", "_binary_payload w9.gzdio",
                   "--define", "_source_payload w9.gzdio", "--define", "_docdir_fmt %%{NAME}",
                   spec)
    assert k.returncode == 0, k.stdout[-3000:] + k.stderr
    # Debian's brp-compress is a bash script run by /bin/sh (dash), where it compresses
    # nothing; rpm's upstream (and every rpm distribution, whose /bin/sh is bash) compresses
    # manual pages, so the oracle runs it with bash.
    r = rpmbuild(base / "r", "-ba", "--define", "_build_id_links none",
                 "--define", "_docdir_fmt %%{NAME}",
                 "--define", "__brp_compress bash /usr/lib/rpm/brp-compress %{?_prefix}", spec)
    assert r.returncode == 0, r.stderr
    return base / "k", base / "r", k


AMHELLO_RPM = "RPMS/x86_64/amhello-1.0-1.x86_64.rpm"


def test_amhello_builds_from_a_v7_tarball(amhello):
    ktop, rtop, k = amhello
    assert sorted(p.relative_to(ktop) for p in ktop.glob("*RPMS/**/*.rpm")) == \
        sorted(p.relative_to(rtop) for p in rtop.glob("*RPMS/**/*.rpm"))
    assert f"Wrote: {ktop / AMHELLO_RPM}" in k.stdout


def test_amhello_files_and_dependencies_match_rpmbuild(amhello):
    ktop, rtop, _ = amhello
    fmt = ("[F %{FILENAMES} %{FILEMODES:octal} %{FILEUSERNAME} %{FILEGROUPNAME} "
           "%{FILEFLAGS:fflags} %{FILELINKTOS} %{FILECLASS}\n]"
           "[R %{REQUIRENAME} %{REQUIREFLAGS:depflags} %{REQUIREVERSION}\n]"
           "[P %{PROVIDENAME} %{PROVIDEFLAGS:depflags} %{PROVIDEVERSION}\n]"
           "[D %{FILENAMES} %{FILEREQUIRE}\n]")
    # Build-ids differ: they hash the build path (/builddir/build in kiln's sandbox).
    kq, rq = (re.sub(r"BuildID\[sha1\]=[0-9a-f]+", "BuildID", qf(top / AMHELLO_RPM, fmt))
              for top in (ktop, rtop))
    assert kq == rq
    assert "/usr/share/man/man1/amhello.1.gz " in kq  # brp-compress
    assert "R libc.so.6()(64bit)" in kq


def extract(pkg: Path, dest: Path) -> Path:
    dest.mkdir()
    cpio = subprocess.run(["rpm2cpio", pkg], check=True, capture_output=True).stdout
    subprocess.run(["cpio", "-idm", "--quiet"], input=cpio, cwd=dest, check=True)
    return dest


def sections(elf: Path):
    out = subprocess.run(["readelf", "-S", "-W", elf], check=True, capture_output=True,
                         text=True).stdout
    return {line.split("]", 1)[1].split()[0] for line in out.splitlines()
            if line.strip().startswith("[") and "]" in line and line.split("]", 1)[1].split()}


def test_amhello_binaries_are_stripped_as_rpmbuilds(amhello, tmp_path):
    ktop, rtop, _ = amhello
    kx = extract(ktop / AMHELLO_RPM, tmp_path / "k")
    rx = extract(rtop / AMHELLO_RPM, tmp_path / "r")
    ks, rs = sections(kx / "usr/bin/amhello"), sections(rx / "usr/bin/amhello")
    assert ".symtab" in rs and not any(s.startswith(".debug") for s in rs)
    assert ks == rs
    run = subprocess.run([kx / "usr/bin/amhello"], capture_output=True, text=True)
    assert run.stdout == "Hello World!\nThis is amhello 1.0.\n"


# ---------------------------------------------------------------------------------------
# Every tag rpmbuild writes, with its type and value (the deliberate differences are in
# docs/build.md, "Packages compared with rpmbuild's")

def header_types(pkg: Path) -> dict:
    """{tag: (type, count)} of the main header, read from the file's bytes."""
    data = pkg.read_bytes()
    off = 96
    for which in ("signature", "main"):
        assert data[off:off + 3] == b"\x8e\xad\xe8", which
        nindex = int.from_bytes(data[off + 8:off + 12], "big")
        hsize = int.from_bytes(data[off + 12:off + 16], "big")
        entries = {}
        for i in range(nindex):
            e = data[off + 16 + 16 * i:off + 32 + 16 * i]
            entries[int.from_bytes(e[0:4], "big")] = (int.from_bytes(e[4:8], "big"),
                                                      int.from_bytes(e[12:16], "big"))
        off += 16 + 16 * nindex + hsize
        if which == "signature":
            off = (off + 7) & ~7
    return entries


# Values that differ by design: the tool's name and version, the vendor in the platform,
# and everything computed from bytes that hold the build path (kiln builds in
# /builddir/build, rpmbuild in its top directory): ELF build-ids, hence file digests,
# file classes (they quote the build-id) and every header and package digest.
BY_DESIGN = {"RPMVERSION", "PLATFORM", "FILEDIGESTS", "FILEMD5S", "FILECLASS", "CLASSDICT",
             "HDRID", "SHA1HEADER", "SHA256HEADER", "PKGID", "SIGMD5", "SIGSIZE",
             "LONGSIGSIZE", "SIZE", "LONGSIZE", "PAYLOADDIGEST", "PAYLOADDIGESTALT",
             "HEADERIMMUTABLE", "SOURCEPKGID", "SIGPAYLOADSIZE", "LONGARCHIVESIZE",
             "ARCHIVESIZE", "PAYLOADSIZE", "FILESIZES", "LONGFILESIZES", "INSTFILENAMES",
             "SIGSHA256", "SIGSHA1"}
# The source package's SPEC tag: kiln writes %{_topdir} for the top directory (so source
# packages do not depend on it) and its own configuration's values (%_host's vendor,
# %_sharedstatedir of rpm 4.20).
BY_DESIGN_SRC = BY_DESIGN | {"SPEC"}


def tag_values(pkg: Path) -> dict:
    names = subprocess.run(["rpm", "--querytags"], capture_output=True, text=True,
                           check=True).stdout.split()
    fmt = "".join(f"{t}\\t[%{{{t}}}\\x1f]\\n" for t in names)
    out = qf(pkg, fmt)
    vals = {}
    for line in out.split("\n"):
        if "\t" in line:
            name, _, v = line.partition("\t")
            if v not in ("", "(none)\x1f"):
                vals[name] = v
    return vals


@pytest.mark.parametrize("rel", [AMHELLO_RPM, "SRPMS/amhello-1.0-1.src.rpm"])
def test_amhello_tags_are_rpmbuilds(amhello, rel):
    ktop, rtop, _ = amhello
    kt, rt = header_types(ktop / rel), header_types(rtop / rel)
    # The same tags, each of the same type.
    assert {t: v[0] for t, v in kt.items()} == {t: v[0] for t, v in rt.items()}
    assert kt[1016][0] == 9  # GROUP is an i18n string
    kv, rv = tag_values(ktop / rel), tag_values(rtop / rel)
    skip = BY_DESIGN_SRC if rel.startswith("SRPMS") else BY_DESIGN
    assert set(kv) == set(rv)
    diff = {t: (kv[t], rv[t]) for t in kv if t not in skip and kv[t] != rv[t]}
    assert diff == {}
    if not rel.startswith("SRPMS"):
        # SOURCEPKGID names the source package written in the same -ba run.
        assert qf(ktop / rel, "%{SOURCEPKGID}") == \
            qf(ktop / "SRPMS/amhello-1.0-1.src.rpm", "%{SIGMD5}")


def test_default_group_is_an_i18n_string(kiln_bin, tmp_path):
    spec = write_spec(tmp_path / "t.spec", "%files\n")  # no Group: "Unspecified"
    k = kiln_build(kiln_bin, tmp_path / "k", "-bb", spec)
    assert k.returncode == 0, k.stderr
    r = rpmbuild(tmp_path / "r", "-bb", spec)
    assert r.returncode == 0, r.stderr
    rel = "RPMS/x86_64/t-1-1.x86_64.rpm"
    kt, rt = header_types(tmp_path / "k" / rel), header_types(tmp_path / "r" / rel)
    assert kt[1016] == rt[1016] == (9, 1)
    assert qf(tmp_path / "k" / rel, "%{GROUP}") == "Unspecified"


def test_amhello_stays_reproducible(kiln_bin, amhello, tmp_path):
    """The post-install policy keeps builds reproducible: build-ids hash the pinned
    sandbox paths, strip and gzip -n add no time stamps."""
    top = tmp_path / "top"
    shutil.copytree(amhello[0] / "SOURCES", top / "SOURCES")
    spec = amhello[0].parent / "amhello.spec"
    k = kiln_build(kiln_bin, top, "-bb", "--verify-reproducible", "--define",
                   "_docdir_fmt %%{NAME}", spec)
    assert k.returncode == 0, k.stdout[-2000:] + k.stderr
    assert "NOT reproducible" not in k.stdout + k.stderr


def test_amhello_debuginfo_in_process_is_the_scripts(kiln_bin, amhello, tmp_path):
    """A real upstream build (automake's amhello, %configure and make) with %debug_package:
    kiln's find-debuginfo work and brp steps leave the buildroot and the lists that the
    scripts leave, file by file."""
    if not shutil.which("find-debuginfo"):
        pytest.skip("find-debuginfo (debugedit) is not installed")
    spec = tmp_path / "amhello.spec"
    spec.write_text(AMHELLO_SPEC.replace("%prep", "%debug_package\n%prep"))
    roots, lists = {}, {}
    for inprocess in ("1", "0"):
        top = tmp_path / f"top{inprocess}"
        shutil.copytree(amhello[0] / "SOURCES", top / "SOURCES")
        r = kiln_build(kiln_bin, top, "-bi", "--define", f"_kiln_brp_inprocess {inprocess}",
                       "--define", "_docdir_fmt %%{NAME}", spec)
        assert r.returncode == 0, r.stdout[-3000:] + r.stderr
        assert ("(in kiln)" in r.stdout) == (inprocess == "1")
        roots[inprocess] = tree(top / "BUILDROOT" / "amhello-1.0-1.x86_64")
        lists[inprocess] = fdi_lists(top / "BUILD" / "amhello-1.0")
    assert roots["1"] == roots["0"]
    assert lists["1"] == lists["0"]
    assert any(k.startswith("usr/lib/debug/usr/bin/amhello") for k in roots["1"])
    assert any(k.startswith("usr/src/debug/amhello-1.0-1.x86_64/") for k in roots["1"])


# ---------------------------------------------------------------------------------------
# rpmbuild's output and options

OUTPUT_SPEC = ("Requires(post): /bin/sh\n%install\nmkdir -p %{buildroot}/usr/bin\n"
               "printf '#!/bin/sh\\necho t\\n' > %{buildroot}/usr/bin/t\n"
               "chmod 755 %{buildroot}/usr/bin/t\n"
               "%post\ntrue\n%files\n/usr/bin/t\n")
SUMMARY = ("Processing files:", "Provides:", "Requires", "Checking for unpackaged file(s):")


def summary_lines(out: str):
    lines = [l for l in out.splitlines() if l.startswith(SUMMARY)]
    # rpmbuild names its check-files helper before the buildroot; kiln checks itself.
    return [l.split(":")[0] if l.startswith(SUMMARY[-1]) else l for l in lines]


def test_processing_files_and_dependency_lines_are_rpmbuilds(kiln_bin, tmp_path):
    spec = write_spec(tmp_path / "t.spec", OUTPUT_SPEC)
    gz = ["--define", "_binary_payload w9.gzdio"]
    k = kiln_build(kiln_bin, tmp_path / "k", "-bb", *gz, spec)
    assert k.returncode == 0, k.stderr
    r = rpmbuild(tmp_path / "r", "-bb", spec)
    assert r.returncode == 0, r.stderr
    # The same lines; kiln prints the dependencies as each package is written, after the
    # unpackaged-files check (docs/build.md), rpmbuild before it.
    assert sorted(summary_lines(k.stdout)) == sorted(summary_lines(r.stdout))
    assert "Requires: /bin/sh" in k.stdout and "Requires(post): /bin/sh" in k.stdout
    assert k.stdout.rstrip().endswith(f"Wrote: {tmp_path}/k/RPMS/x86_64/t-1-1.x86_64.rpm")


def test_bl_prints_the_file_check(kiln_bin, tmp_path):
    spec = write_spec(tmp_path / "t.spec", OUTPUT_SPEC)
    top = tmp_path / "k"
    assert kiln_build(kiln_bin, top, "-bi", spec).returncode == 0
    k = kiln_build(kiln_bin, top, "-bl", "--short-circuit", spec)
    assert k.returncode == 0, k.stderr
    assert "Processing files: t-1-1.x86_64" in k.stdout
    assert "Checking for unpackaged file(s): /builddir/build/BUILDROOT/t-1-1.x86_64" in k.stdout
    assert "Wrote:" not in k.stdout


def test_failed_build_summary_and_no_wrote_for_removed_packages(kiln_bin, tmp_path):
    spec = write_spec(tmp_path / "t.spec", "%install\n%files\n/usr/nosuch\n")
    top = tmp_path / "k"
    k = kiln_build(kiln_bin, top, "-ba", spec)
    assert k.returncode == 1
    # The source package was written before the binary one failed, then removed.
    assert "Wrote:" not in k.stdout
    assert not list(top.glob("SRPMS/*.rpm"))
    assert k.stdout.endswith("\nRPM build errors:\n")
    assert "    File not found: " in k.stderr and "/usr/nosuch" in k.stderr
    r = rpmbuild(tmp_path / "r", "-bb", spec)
    assert r.returncode == 1 and "\nRPM build errors:\n" in r.stdout
    assert "    File not found: " in r.stderr


def test_eval_showrc_nobuild_nodebuginfo_target(kiln_bin, tmp_path):
    def run(*args):
        return subprocess.run([str(kiln_bin), "build", *map(str, args)], env=ENV,
                              capture_output=True, text=True, timeout=120)

    k = run("-E", "%{_libdir}", "--eval", "%{expr:1+2}")
    r = subprocess.run(["rpmbuild", "-E", "%{_libdir}", "--eval", "%{expr:1+2}"], env=ENV,
                       capture_output=True, text=True)
    assert k.returncode == r.returncode == 0, k.stderr
    assert k.stdout == r.stdout == "/usr/lib64\n3\n"
    k = run("--showrc")
    assert k.returncode == 0, k.stderr
    assert k.stdout.startswith("ARCHITECTURE AND OS:\nbuild arch            : x86_64\n")
    assert "\n-13: _libdir\t%{_prefix}/lib64\n" in k.stdout  # every macro, whole
    assert k.stdout.count("\n-13: ") > 200
    assert run("--nodebuginfo", "-E", "%{debug_package}").stdout == "\n"
    # --nobuild parses the spec and runs no stage.
    spec = write_spec(tmp_path / "t.spec", "%build\ntouch %{_topdir}/ran\n%files\n")
    k = run("--nobuild", "--define", f"_topdir {tmp_path}/k", "-ba", spec)
    assert k.returncode == 0, k.stderr
    assert not (tmp_path / "k/ran").exists() and "Executing" not in k.stdout
    assert run("--nobuild", "--define", f"_topdir {tmp_path}/k", "-ba",
               tmp_path / "none.spec").returncode == 1
    k = run("--target", "noarch", "-bp", "--define", f"_topdir {tmp_path}/k", spec)
    assert k.returncode == 0, k.stderr
    assert k.stdout.startswith("Building target platforms: noarch\nBuilding for target noarch\n")


@pytest.mark.parametrize("rule,target", [
    ("ExclusiveArch: x86_64", "aarch64"), ("ExclusiveArch: x86_64", "i686"),
    ("ExclusiveArch: x86_64", "aarch64-linux"), ("ExcludeArch: aarch64", "aarch64"),
    ("ExclusiveOS: darwin", None), ("ExclusiveArch: x86_64", "noarch"),
    ("BuildArch: noarch", "aarch64"), ("BuildArch: noarch\nExclusiveArch: x86_64", None),
    ("BuildArch: s390x", "aarch64"), ("BuildArch: x86_64", "aarch64")])
def test_target_excluded_by_the_spec_is_rpmbuilds_error(kiln_bin, tmp_path, rule, target):
    """rpmbuild --target ARCH on a spec whose ExclusiveArch/ExcludeArch/ExclusiveOS rules it
    out: the target lines, one "error: Architecture is not included: ARCH" line (no "RPM
    build errors:" summary: the spec never got built) and exit status 1; a noarch target
    tests the build arch, and BuildArch: noarch builds for any target."""
    spec = write_spec(tmp_path / "t.spec", "%install\nmkdir -p %{buildroot}/usr/share/t\n"
                      "echo x > %{buildroot}/usr/share/t/f\n%files\n/usr/share/t/f\n")
    spec.write_text(spec.read_text().replace("License: MIT\n", f"License: MIT\n{rule}\n"))
    args = ["--target", target] if target else []
    k = kiln_build(kiln_bin, tmp_path / "k", "-bb", *args, spec)
    r = rpmbuild(tmp_path / "r", "-bb", *args, spec)
    assert k.returncode == r.returncode, (k.stdout + k.stderr, r.stdout + r.stderr)
    if r.returncode == 0:
        return
    assert r.returncode == 1
    assert k.stdout == r.stdout  # the target lines and nothing else
    assert k.stderr == r.stderr and r.stderr.startswith("error: ") and r.stderr.count("\n") == 1
    assert any(w in r.stderr for w in ("not included", "excluded", "No compatible"))


def trace_block(stderr: str, first: str, last: str) -> str:
    """The trace lines from the one starting with first to the next starting with last."""
    lines = stderr.splitlines()
    i = lines.index(first)
    j = next(k for k in range(i + 1, len(lines)) if lines[k].startswith(last))
    return "\n".join(lines[i:j + 1])


def test_trace_is_rpmbuilds(kiln_bin, tmp_path):
    """--trace is rpmbuild's --eval '%trace': an empty expansion printed first, then the
    spec's expansions traced on stderr in rpm's format (here: a %global and its use)."""
    spec = write_spec(tmp_path / "t.spec", "%prep\necho %{mine}\n")
    spec.write_text(spec.read_text().replace("%description", "%global mine %{name}-x\n"
                                             "%description", 1))
    k = kiln_build(kiln_bin, tmp_path / "k", "--trace", "-bp", spec)
    r = rpmbuild(tmp_path / "r", "--trace", "-bp", spec)
    assert k.returncode == r.returncode == 0, k.stderr[-2000:]
    assert k.stdout.startswith("\n") and r.stdout.startswith("\n")
    assert k.stderr.startswith("  0<  (%trace)\n") and r.stderr.startswith("  0<  (%trace)\n")
    glob = trace_block(r.stderr, "  1>   %global^mine %{name}-x", "  0<  (%global)")
    assert glob == "\n".join(["  1>   %global^mine %{name}-x", "  2>     %{name}^x",
                              "  2<      (%)", "t", "  1<    (%name)", "t-x",
                              "  0<  (%global)"])
    assert trace_block(k.stderr, "  1>   %global^mine %{name}-x", "  0<  (%global)") == glob
    use = trace_block(r.stderr, "  1>   %{mine}^", "  0<  (%mine)")
    assert trace_block(k.stderr, "  1>   %{mine}^", "  0<  (%mine)") == use
    # Without --trace nothing is traced.
    k = kiln_build(kiln_bin, tmp_path / "k", "-bp", spec)
    assert k.returncode == 0 and "%global^" not in k.stderr and " (%" not in k.stderr


INPLACE_SPEC = ("Source0: ip-2.tar.gz\n%description\nd\n%prep\n%setup -q\ntouch prep-ran\n"
                "%build\ncat hello.txt > built.txt\necho built >> built.txt\n"
                "%install\nmkdir -p %{buildroot}/usr/share/ip\n"
                "cp built.txt hello.txt %{buildroot}/usr/share/ip/\n%files\n/usr/share/ip\n")


@pytest.mark.parametrize("sandbox", [True, False])
def test_build_in_place(kiln_bin, tmp_path, sandbox):
    """--build-in-place builds the checked-out sources in the current directory (rpm 4.20:
    no %prep, %{_builddir}/NAME-VERSION links to the directory); its packages hold what
    rpmbuild's --build-in-place makes of the same directory."""
    spec = tmp_path / "ip.spec"
    spec.write_text("Name: ip\nVersion: 2\nRelease: 1\nSummary: s\nLicense: MIT\n" + INPLACE_SPEC)
    src = tmp_path / "src"
    src.mkdir()
    (src / "hello.txt").write_text("hi\n")
    opts = [] if sandbox else ["--no-sandbox"]
    cmd = [str(kiln_bin), "build", "--define", f"_topdir {tmp_path}/k", *opts,
           "--build-in-place", "-bb", str(spec)]
    k = subprocess.run(cmd, cwd=src, env=ENV, capture_output=True, text=True, timeout=300)
    assert k.returncode == 0, k.stdout[-2000:] + k.stderr
    assert "Executing(%prep)" not in k.stdout and not (src / "prep-ran").exists()
    assert (src / "built.txt").read_text() == "hi\nbuilt\n"  # built where the sources are
    link = tmp_path / "k/BUILD/ip-2"
    assert link.is_symlink() and os.readlink(link) == str(src)
    assert (src / "hello.txt").exists()  # the link replaced nothing of the sources
    (src / "built.txt").unlink()
    r = subprocess.run(["rpmbuild", "--nodeps", "--define", f"_topdir {tmp_path}/r",
                        "--build-in-place", "-bb", str(spec)], cwd=src, env=ENV,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    fmt = "[%{FILENAMES} %{FILEMODES:octal} %{FILESIZES} %{FILEDIGESTS}\n]"
    rel = "RPMS/x86_64/ip-2-1.x86_64.rpm"
    assert qf(tmp_path / "k" / rel, fmt) == qf(tmp_path / "r" / rel, fmt)
    assert "/usr/share/ip/built.txt" in qf(tmp_path / "k" / rel, fmt)
    # rpmbuild's alias: --define '_build_in_place 1' on the command line is the same.
    (src / "built.txt").unlink()
    i = cmd.index("--build-in-place")
    k = subprocess.run(cmd[:i] + ["--define", "_build_in_place 1"] + cmd[i + 1:], cwd=src,
                       env=ENV, capture_output=True, text=True, timeout=300)
    assert k.returncode == 0 and (src / "built.txt").exists(), k.stderr
    # Without it, the missing tarball is an error: nothing was built in place.
    cmd.remove("--build-in-place")
    k = subprocess.run(cmd, cwd=src, env=ENV, capture_output=True, text=True, timeout=300)
    assert k.returncode != 0


# ---------------------------------------------------------------------------------------
# --verify-reproducible explains itself


def test_verify_reproducible_names_variations_keeps_packages_and_diffs(kiln_bin, tmp_path):
    spec = write_spec(tmp_path / "t.spec",
                      "%install\nmkdir -p %{buildroot}/usr/share/t\n"
                      "uname -n > %{buildroot}/usr/share/t/host\n"
                      "echo same > %{buildroot}/usr/share/t/stable\n%files\n/usr/share/t\n")
    env = dict(ENV, TMPDIR=str(tmp_path))
    k = kiln_build(kiln_bin, tmp_path / "k", "-bb", "--verify-reproducible", spec, env=env)
    assert k.returncode == 1, k.stdout + k.stderr
    out = k.stdout
    varied = next(l for l in out.splitlines() if l.startswith("Varied in the rebuilds: "))
    assert {"build_path", "time", "hostname", "umask", "env"} <= \
        set(varied.split(": ", 1)[1].split(", "))
    kept = next(l for l in out.splitlines() if l.startswith("Packages of build 2 kept in "))
    kept_dir = Path(kept.rsplit(" ", 1)[1])
    rerun_pkg = kept_dir / "RPMS/x86_64/t-1-1.x86_64.rpm"
    assert rerun_pkg.exists() and kept_dir.parent == tmp_path
    # kiln diff's report of the two packages, as `kiln diff FIRST RERUN` prints it.
    first = tmp_path / "k/RPMS/x86_64/t-1-1.x86_64.rpm"
    d = subprocess.run([str(kiln_bin), "diff", first, rerun_pkg], capture_output=True,
                       text=True, env=ENV)
    assert d.returncode == 1 and "/usr/share/t/host" in d.stdout
    assert d.stdout in out
    assert "/usr/share/t/stable" not in out


# ---------------------------------------------------------------------------------------
# %debug_package: -debuginfo and -debugsource through find-debuginfo (debugedit)

DEBUG_SPEC = ("%debug_package\n%prep\n%setup -c -T\n"
              "printf 'int f(int x) { return x + 1; }\\nint main(void) { return f(-1); }\\n'"
              " > d.c\n%build\ngcc -g -O1 -o d d.c\n"
              "%install\ninstall -D -m755 d %{buildroot}/usr/bin/d\n%files\n/usr/bin/d\n")


def test_debug_package_is_rpmbuilds(kiln_bin, tmp_path):
    if not shutil.which("find-debuginfo"):
        pytest.skip("find-debuginfo (debugedit) is not installed")
    spec = write_spec(tmp_path / "d.spec", DEBUG_SPEC)
    gz = ["--define", "_binary_payload w9.gzdio"]
    # The build-id links are compared by test_build_id_links_are_rpmbuilds (their names
    # differ here: the build paths do); rpm 4.20's debugsource default is on.
    k = kiln_build(kiln_bin, tmp_path / "k", "-bb", *gz, "--define", "_build_id_links none",
                   spec)
    assert k.returncode == 0, k.stdout[-2000:] + k.stderr
    r = rpmbuild(tmp_path / "r", "-bb", "--define", "_build_id_links none",
                 "--define", "_debugsource_packages 1", spec)
    assert r.returncode == 0, r.stderr
    names = ["t-1-1", "t-debuginfo-1-1", "t-debugsource-1-1"]
    fmt = ("[%{FILENAMES} %{FILEMODES:octal} %{FILEFLAGS:fflags}\n]"
           "[R %{REQUIRENAME} %{REQUIREFLAGS:depflags} %{REQUIREVERSION}\n]"
           "[P %{PROVIDENAME} %{PROVIDEFLAGS:depflags} %{PROVIDEVERSION}\n]%{GROUP}\n")
    for n in names:
        rel = f"RPMS/x86_64/{n}.x86_64.rpm"
        assert qf(tmp_path / "k" / rel, fmt) == qf(tmp_path / "r" / rel, fmt), n
    x = extract(tmp_path / "k/RPMS/x86_64/t-debuginfo-1-1.x86_64.rpm", tmp_path / "x")
    assert ".debug_info" in sections(x / "usr/lib/debug/usr/bin/d-1-1.x86_64.debug")
    b = extract(tmp_path / "k/RPMS/x86_64/t-1-1.x86_64.rpm", tmp_path / "b")
    assert not any(s.startswith(".debug") for s in sections(b / "usr/bin/d"))
    # --nodebuginfo: no debug packages.
    k = kiln_build(kiln_bin, tmp_path / "n", "-bb", "--nodebuginfo", spec)
    assert k.returncode == 0, k.stderr
    assert [p.name for p in (tmp_path / "n/RPMS/x86_64").iterdir()] == ["t-1-1.x86_64.rpm"]
    # Reproducible: build-ids come from the pinned paths and VERSION-RELEASE.
    k = kiln_build(kiln_bin, tmp_path / "v", "-bb", "--verify-reproducible", spec,
                   env=dict(ENV, TMPDIR=str(tmp_path)))
    assert k.returncode == 0, k.stdout[-3000:] + k.stderr
    assert "Reproducible: 2 builds, 3 packages identical" in k.stdout


# find-debuginfo's work done by kiln (worker/brp_debuginfo.c) against the script itself on
# the same buildroot: hard links, a read-only program, a library and its symbolic links
# (relative, absolute, through ..), a stripped program, an object file, a program already
# below /usr/lib/debug, sources in directories and one deleted after the build.
FDI_SPEC = r"""%debug_package
%prep
%setup -c -T
mkdir src inc
printf 'static inline int k(int x)\n{\n\treturn x + 3;\n}\n' > inc/k.h
printf '#include "k.h"\nint main(int c, char **v) { (void)v; return k(c - 4); }\n' > src/p.c
printf 'int g(int x) { return x * 2; }\n' > src/l.c
printf 'int main(void) { return 0; }\n' > gen.c
%build
gcc -g -O1 -Iinc -o p src/p.c
gcc -g -O1 -shared -fPIC -Wl,-soname,libl.so.1 -o libl.so.1.0 src/l.c
gcc -g -O1 -o gen gen.c && rm gen.c
gcc -g -O1 -Iinc -s -o stripped src/p.c
gcc -g -O1 -c -o l.o src/l.c
%install
install -D -m755 p %{buildroot}/usr/bin/p
ln %{buildroot}/usr/bin/p %{buildroot}/usr/bin/p-again
install -D -m555 gen %{buildroot}/usr/libexec/t/gen
install -D -m755 libl.so.1.0 %{buildroot}/usr/lib64/libl.so.1.0
ln -s libl.so.1.0 %{buildroot}/usr/lib64/libl.so.1
ln -s /usr/lib64/libl.so.1 %{buildroot}/usr/lib64/libl.so
ln -s ../lib64/libl.so.1.0 %{buildroot}/usr/bin/libl-link
install -D -m755 stripped %{buildroot}/usr/bin/stripped
install -D -m644 l.o %{buildroot}/usr/share/t/l.o
install -D -m755 p %{buildroot}/usr/lib/debug/usr/libexec/sub/z
%files
/usr
"""


def fdi_lists(build: Path):
    out = {}
    for name in ("debugfiles.list", "debugsourcefiles.list", "debuglinks.list",
                 "elfbins.list"):
        out[name] = sorted((build / name).read_text().splitlines())
    out["debugsources.list"] = sorted((build / "debugsources.list").read_bytes().split(b"\0"))
    return out


@pytest.mark.parametrize("variant", ["unique-names", "plain-names", "one-job"])
def test_in_process_find_debuginfo_leaves_what_the_script_leaves(kiln_bin, tmp_path, variant):
    """kiln runs find-debuginfo's tools itself (worker/brp_debuginfo.c): on the same %install
    it must leave the buildroot and the lists the script leaves, file by file (kinds, modes,
    link counts, contents, link targets, the sources' times)."""
    if not shutil.which("find-debuginfo"):
        pytest.skip("find-debuginfo (debugedit) is not installed")
    spec = write_spec(tmp_path / "fdi.spec", FDI_SPEC)
    defs = {"unique-names": [], "plain-names": ["--undefine", "_unique_debug_names"],
            "one-job": ["--define", "_smp_build_ncpus 1"]}[variant]
    roots, lists, logs = {}, {}, {}
    for inprocess in ("1", "0"):
        top = tmp_path / f"top{inprocess}"
        r = kiln_build(kiln_bin, top, "-bi", "--define", f"_kiln_brp_inprocess {inprocess}",
                       *defs, spec)
        assert r.returncode == 0, r.stdout[-3000:] + r.stderr
        roots[inprocess] = top / "BUILDROOT" / "t-1-1.x86_64"
        lists[inprocess] = fdi_lists(top / "BUILD" / "t-1")
        logs[inprocess] = r.stdout
    done = re.compile(r"^\+ \S*/find-debuginfo .*   \(in kiln\)$", re.M)
    assert done.search(logs["1"]) and not done.search(logs["0"])
    assert tree(roots["1"]) == tree(roots["0"])
    assert lists["1"] == lists["0"]
    src = "usr/src/debug/t-1-1.x86_64"
    for inprocess, root in roots.items():  # cpio -m: the sources keep their times
        build = tmp_path / f"top{inprocess}" / "BUILD" / "t-1"
        copied = [p for p in (root / src).rglob("*") if p.is_file()]
        assert copied and all(int(p.stat().st_mtime) == int(
            (build / p.relative_to(root / src)).stat().st_mtime) for p in copied)
    # what there was to do was done: sources copied, programs stripped, links made
    debug = roots["1"] / "usr/lib/debug"
    assert (roots["1"] / src / "inc/k.h").is_file() and (roots["1"] / src / "src/p.c").is_file()
    assert not any(s.startswith(".debug") for s in sections(roots["1"] / "usr/bin/p"))
    suffix = "" if variant == "plain-names" else "-1-1.x86_64"
    assert (debug / f"usr/bin/p{suffix}.debug").stat().st_ino == \
        (debug / f"usr/bin/p-again{suffix}.debug").stat().st_ino
    assert oct((debug / f"usr/libexec/t/gen{suffix}.debug").stat().st_mode & 0o777) == "0o444"
    assert oct((roots["1"] / "usr/libexec/t/gen").stat().st_mode & 0o777) == "0o555"
    assert not list(debug.glob("usr/bin/stripped*"))
    if variant == "plain-names":
        assert os.readlink(debug / "usr/lib64/libl.so.1.debug") == "libl.so.1.0.debug"
        assert "/usr/lib/debug/usr/bin/libl-link.debug /usr/lib/debug/usr/lib64/libl.so.1.0.debug" \
            in lists["1"]["debuglinks.list"]


def test_in_process_find_debuginfo_leaves_another_version_to_itself(kiln_bin, tmp_path):
    """kiln follows debugedit 5.0's find-debuginfo: a %__find_debuginfo that is not that
    script (here a wrapper of it) runs as itself."""
    if not shutil.which("find-debuginfo"):
        pytest.skip("find-debuginfo (debugedit) is not installed")
    spec = write_spec(tmp_path / "fdi.spec", FDI_SPEC)
    top = tmp_path / "top"
    (top / "SOURCES").mkdir(parents=True)
    wrapper = top / "SOURCES" / "find-debuginfo"
    wrapper.write_text("#!/bin/sh\necho wrapped >&2\nexec /usr/bin/find-debuginfo \"$@\"\n")
    wrapper.chmod(0o755)
    r = kiln_build(kiln_bin, top, "-bi", "--define",
                   "__find_debuginfo %{_sourcedir}/find-debuginfo", spec)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr
    assert "wrapped" in r.stdout + r.stderr
    assert "/find-debuginfo is not debugedit 5.0's find-debuginfo: it runs itself" in r.stdout
    assert (top / "BUILDROOT/t-1-1.x86_64/usr/lib/debug/usr/bin/p-1-1.x86_64.debug").is_file()


# Two programs, one of them installed twice (the same build-id: the ".1" links).
BUILDID_SPEC = ("%debug_package\n%prep\n%setup -c -T\n"
                "printf 'int f(int x) { return x + 1; }\\nint main(void) { return f(-1); }\\n'"
                " > d.c\nprintf 'int main(void) { return 2; }\\n' > e.c\n"
                "%build\ngcc -g -O1 -o d d.c\ngcc -g -O1 -o e e.c\n"
                "%install\ninstall -D -m755 d %{buildroot}/usr/bin/d\n"
                "install -D -m755 d %{buildroot}/usr/bin/d2\n"
                "install -D -m755 e %{buildroot}/usr/libexec/t/e\n"
                "install -D -m644 d.c %{buildroot}/usr/share/t/d.c\n"
                "%files\n/usr/bin/d\n/usr/bin/d2\n/usr/libexec/t\n/usr/share/t\n")
BUILDID_QF = ("[%{FILENAMES} %{FILEMODES:octal} %{FILEFLAGS:fflags} %{FILEUSERNAME} "
              "%{FILEGROUPNAME} %{FILELINKTOS} %{FILEVERIFYFLAGS}\n]")


DUP_SUFFIX = re.compile(r"(/[0-9a-f]{38})\.\d+(?=(\.debug)? )")


def dups_unnumbered(listing: str):
    return sorted(DUP_SUFFIX.sub(r"\1", line) for line in listing.splitlines())


@pytest.mark.parametrize("mode", ["compat", "separate", "alldebug", "none"])
def test_build_id_links_are_rpmbuilds(kiln_bin, tmp_path, mode):
    """The /usr/lib/.build-id and /usr/lib/debug/.build-id links of %_build_id_links MODE
    (rpm's build/files.c generateBuildIDs): kiln on the host and rpmbuild build in the
    same top directory one after the other, so the build-ids are equal and the file lists
    of the main and -debuginfo packages must be too (names, modes, %artifact, owners,
    link targets, verify flags)."""
    if not shutil.which("find-debuginfo"):
        pytest.skip("find-debuginfo (debugedit) is not installed")
    spec = write_spec(tmp_path / "d.spec", BUILDID_SPEC)
    top = tmp_path / "top"
    links = ["--define", f"_build_id_links {mode}"]
    k = kiln_build(kiln_bin, top, "-bb", "--no-sandbox", *links, spec)
    assert k.returncode == 0, k.stdout[-2000:] + k.stderr
    shutil.move(top / "RPMS", tmp_path / "k")
    shutil.rmtree(top)
    r = rpmbuild(top, "-bb", *links, "--define", "_debugsource_packages 1", spec)
    assert r.returncode == 0, r.stderr
    rel = "x86_64/t-1-1.x86_64.rpm"
    main = qf(tmp_path / "k" / rel, BUILDID_QF)
    assert main == qf(top / "RPMS" / rel, BUILDID_QF)
    # In -debuginfo, rpm numbers duplicates in find-debuginfo's directory order, kiln in
    # path order (reproducible): the lists are equal but for which file has which number.
    rel = "x86_64/t-debuginfo-1-1.x86_64.rpm"
    debug = qf(tmp_path / "k" / rel, BUILDID_QF)
    assert dups_unnumbered(debug) == dups_unnumbered(qf(top / "RPMS" / rel, BUILDID_QF))
    if mode == "none":
        assert ".build-id" not in main + debug
        return
    assert re.search(r"[0-9a-f]{38}\.debug 120777 a root root "
                     r"../../../../../usr/lib/debug/usr/bin/d-1-1.x86_64.debug ", debug)
    assert re.search(r"[0-9a-f]{38}\.1\.debug 120777 a root root "
                     r"../../../../../usr/lib/debug/usr/bin/d2-1-1.x86_64.debug ", debug)
    assert ("/usr/lib/.build-id " in main) == (mode != "alldebug")
    assert "/usr/lib/debug/.build-id 40755 a root root" in debug
    assert ".debug 120777 a root root ../../../../../usr/lib/debug/usr/bin/d" in debug
    if mode != "alldebug":
        assert ".1 120777 a root root ../../../../usr/bin/d2 " in main
    if mode == "compat":
        assert " 120777 a root root ../../../.build-id/" in debug
    # The links lead to the files in an installed tree.
    x = extract(tmp_path / "k/x86_64/t-1-1.x86_64.rpm", tmp_path / "x")
    checked = 0
    for line in main.splitlines():
        f = line.split()
        if f[0].startswith("/usr/lib/.build-id/") and f[1] == "120777":
            assert (x / f[0][1:]).resolve() == x / os.path.normpath(
                os.path.join(os.path.dirname(f[0]), f[5]))[1:]
            assert (x / f[0][1:]).resolve().is_file()
            checked += 1
    assert checked == (0 if mode == "alldebug" else 3)


def test_build_id_links_stay_in_the_buildroot(kiln_bin, tmp_path):
    """A buildroot whose /usr/lib/.build-id is a symbolic link out of it: kiln makes its build-id
    directories beneath the buildroot's descriptor, so nothing is written outside (rpm
    would follow the link); the package fails as rpm's does when it cannot make them."""
    if not shutil.which("find-debuginfo"):
        pytest.skip("find-debuginfo (debugedit) is not installed")
    outside = tmp_path / "outside"
    outside.mkdir()
    spec = write_spec(tmp_path / "d.spec", BUILDID_SPEC.replace(
        "%files\n", "mkdir -p %{buildroot}/usr/lib\n"
                    f"ln -s {outside} %{{buildroot}}/usr/lib/.build-id\n%files\n"))
    k = kiln_build(kiln_bin, tmp_path / "k", "-bb", "--no-sandbox", spec)
    assert k.returncode != 0
    assert "failed to create directory" in k.stderr
    assert list(outside.iterdir()) == []


def test_build_id_links_are_reproducible(kiln_bin, tmp_path):
    if not shutil.which("find-debuginfo"):
        pytest.skip("find-debuginfo (debugedit) is not installed")
    spec = write_spec(tmp_path / "d.spec", BUILDID_SPEC)
    k = kiln_build(kiln_bin, tmp_path / "v", "-bb", "--verify-reproducible", spec,
                   env=dict(ENV, TMPDIR=str(tmp_path)))
    assert k.returncode == 0, k.stdout[-3000:] + k.stderr
    assert "Reproducible: 2 builds, 3 packages identical" in k.stdout
    main = qf(tmp_path / "v/RPMS/x86_64/t-1-1.x86_64.rpm", BUILDID_QF)
    assert "/usr/lib/.build-id 40755 a root root" in main  # on by default (compat)


def test_rebuild_names_its_source_package(kiln_bin, tmp_path):
    """-ba names the source package written with the binaries (SOURCEPKGID, as rpmbuild
    -ba); a rebuild from that source package names it too, so it reproduces them."""
    spec = write_spec(tmp_path / "t.spec", "%files\n")
    a = tmp_path / "a"
    k = kiln_build(kiln_bin, a, "-ba", spec)
    assert k.returncode == 0, k.stderr
    srpm = a / "SRPMS/t-1-1.src.rpm"
    pkgid = qf(srpm, "%{SIGMD5}")
    assert qf(a / "RPMS/x86_64/t-1-1.x86_64.rpm", "%{SOURCEPKGID}") == pkgid
    b = tmp_path / "b"
    k = kiln_build(kiln_bin, b, "-rb", srpm)
    assert k.returncode == 0, k.stderr
    assert qf(b / "RPMS/x86_64/t-1-1.x86_64.rpm", "%{SOURCEPKGID}") == pkgid
    assert (b / "RPMS/x86_64/t-1-1.x86_64.rpm").read_bytes() == \
        (a / "RPMS/x86_64/t-1-1.x86_64.rpm").read_bytes()
