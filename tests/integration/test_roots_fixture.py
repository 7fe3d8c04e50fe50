"""The fixture distribution (tests/fixtures/debrpm.py, docs/roots.md): this machine's Debian
toolchain rebuilt as RPMs by kiln, signed, published with a comps group. The real tools
accept it: rpmkeys checks every signature, dnf resolves and installs from it, and the root
dnf makes compiles and runs a C program."""
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fixtures"))
import debrpm  # noqa: E402

TOOLCHAIN = ("bash", "binutils", "busybox", "coreutils", "diffutils", "findutils", "gawk",
             "gcc", "grep", "gzip", "libc6-dev", "make", "patch", "pkgconf", "rpm", "sed",
             "tar", "zlib1g-dev")


def run(*cmd, **kw):
    kw.setdefault("check", True)
    return subprocess.run([str(c) for c in cmd], capture_output=True, text=True, **kw)


def dnf(repo, root: Path, cache: Path, *args, check=True, quiet=True):
    """dnf on the fixture repository alone, signatures of repomd.xml and packages checked."""
    return run("dnf", *(["-q"] if quiet else []), f"--installroot={root}", f"--setopt=cachedir={cache}",
               "--releasever=1", "--setopt=reposdir=/dev/null",
               f"--repofrompath=fx,file://{repo.repo}", "--setopt=fx.gpgcheck=1",
               "--setopt=fx.repo_gpgcheck=1", f"--setopt=fx.gpgkey=file://{repo.key}",
               "--setopt=install_weak_deps=0", *args, check=check)


@pytest.fixture
def dnf_ready(debrpm_repo, tmp_path):
    """A dnf cache that has imported the repository key (dnf asks before importing the key
    that checks repomd.xml, which --assumeno would refuse)."""
    root, cache = tmp_path / "root", tmp_path / "cache"
    dnf(debrpm_repo, root, cache, "-y", "makecache")
    return lambda *a, **kw: dnf(debrpm_repo, root, cache, *a, **kw)


def rpm_of(repo, name):
    found = [p for p in repo.repo.glob(f"{name}-*.rpm")
             if run("rpm", "-qp", "--nosignature", "--qf", "%{NAME}", p).stdout == name]
    assert len(found) == 1, (name, found)
    return found[0]


def test_generated_set_and_cache_key(debrpm_repo):
    info = debrpm_repo.info
    assert debrpm_repo.top.name.startswith("debrpm-") and len(debrpm_repo.top.name) == 23
    names = set(info["packages"])
    assert set(TOOLCHAIN) | {"filesystem", "libc6", "zlib1g", "libc-bin"} <= names
    # One package per Debian package of the closure, and the filesystem package.
    assert names == set(info["debian"]) | {"filesystem"}
    assert len(list(debrpm_repo.repo.glob("*.rpm"))) == len(names)
    installed = run("dpkg-query", "-W", "-f", "${Package} ${Version}\n", *info["debian"])
    assert dict(line.split(" ", 1) for line in installed.stdout.splitlines()) == \
        info["debian"]


def test_every_package_signature_checks_with_rpmkeys(debrpm_repo, tmp_path):
    db = tmp_path / "db"
    run("rpmkeys", "--dbpath", db, "--import", debrpm_repo.key)
    pkgs = sorted(debrpm_repo.repo.glob("*.rpm"))
    out = run("rpmkeys", "--dbpath", db, "-K", *pkgs).stdout.splitlines()
    assert len(out) == len(pkgs)
    assert all(line.endswith(": digests signatures OK") for line in out), out
    # Without the key: the signature is there but cannot be checked.
    r = run("rpmkeys", "--dbpath", tmp_path / "empty", "-K", pkgs[0], check=False)
    assert r.returncode != 0 and "SIGNATURES NOT OK" in r.stdout.upper()


def test_versions_and_translated_dependencies(debrpm_repo):
    def q(name, fmt):
        return run("rpm", "-qp", "--nosignature", "--qf", fmt,
                   rpm_of(debrpm_repo, name)).stdout

    def tags(name, what):
        return run("rpm", "-qp", "--nosignature", f"--{what}",
                   rpm_of(debrpm_repo, name)).stdout.splitlines()

    deb = debrpm_repo.info["debian"]
    # Epoch from the epoch, the last '-' splits version and release.
    epoch, ver = deb["diffutils"].split(":", 1)
    assert q("diffutils", "%{EPOCH}:%{VERSION}-%{RELEASE} %{ARCH}") == f"{epoch}:{ver} x86_64"
    assert q("sed", "%{EPOCHNUM}:%{VERSION}-%{RELEASE}") == "0:" + deb["sed"]
    assert q("libtirpc-common", "%{ARCH}") == "noarch"  # Debian's Architecture: all
    # Depends: versioned; >> without a Debian revision gets release 0 (2.36-9 >> 2.36).
    assert re.search(r"^libc6 > 2\.36-0$", "\n".join(tags("libc-bin", "requires")), re.M)
    # a | b becomes a rich dependency.
    assert "(dpkg >= 1.15.4 or install-info)" in tags("gzip", "requires")
    # Pre-Depends become Requires(pre), shown like plain requires by rpm -q.
    assert any(t.startswith("libc6 >= ") for t in tags("sed", "requires"))
    # Automatic: ELF sonames both ways, rtld(GNU_HASH) from glibc, and the /bin names.
    assert "libc.so.6()(64bit)" in tags("sed", "requires")
    libc = tags("libc6", "provides")
    assert "libc.so.6()(64bit)" in libc and "rtld(GNU_HASH)" in libc
    assert "/bin/sed" in tags("sed", "provides")
    assert "/bin/sh" in tags("bash", "provides")
    # zlib-devel only through the repository: the dev package provides the Fedora name, its
    # Debian virtual name, and pkgconfig(zlib) from kiln's pkgconfig generator.
    z = tags("zlib1g-dev", "provides")
    assert "zlib-devel" in z and "libz-dev" in z
    assert any(t.startswith("pkgconfig(zlib) = ") for t in z)
    # Recommends and Suggests stay weak.
    assert "(libc6-dev or libc-dev)" in tags("gcc", "recommends")
    assert "make" in tags("gcc", "suggests")
    # Breaks/Conflicts become Conflicts.
    assert any(t.startswith("bash-completion < ") for t in tags("bash", "conflicts"))
    # Scriptlets: ldconfig as the interpreter, a Lua one, no Debian maintainer scripts.
    scripts = q("libc-bin", "%{POSTIN}|%{POSTINPROG}")
    assert scripts.endswith("/sbin/ldconfig")
    assert q("bash", "%{POSTINPROG}") == "<lua>"
    assert "dpkg" not in q("base-files", "%{PREIN}%{POSTIN}%{PREUN}%{POSTUN}")
    # usrmerge: files live under /usr; filesystem owns the symlinks.
    assert "/usr/bin/sed" in tags("sed", "list") and "/bin/sed" not in tags("sed", "list")
    fs = run("rpm", "-qlvp", "--nosignature", rpm_of(debrpm_repo, "filesystem")).stdout
    for d in ("bin", "sbin", "lib", "lib64"):
        assert re.search(rf"^l.* /{d} -> usr/{d}$", fs, re.M), d
    assert re.search(r"^drwxrwxrwt .* /tmp$", fs, re.M)


def test_dnf_resolves_the_toolchain_and_buildsys_build(dnf_ready):
    r = dnf_ready("--assumeno", "install", "@buildsys-build", *TOOLCHAIN, check=False,
                  quiet=False)
    out = r.stdout + r.stderr
    assert r.returncode == 1 and "Operation aborted" in out, out
    assert "Installing Groups:" in out and "Buildsystem building group" in out
    for name in TOOLCHAIN + ("filesystem", "libc6", "libc-bin"):
        assert re.search(rf"^ {re.escape(name)}\s", out, re.M), name
    # The group as dnf reads it from the comps file.
    info = dnf_ready("group", "info", "--hidden", "buildsys-build").stdout
    assert "Mandatory Packages:" in info
    for name in ("bash", "gcc", "make", "rpm", "filesystem"):
        assert re.search(rf"^\s+{re.escape(name)}$", info, re.M), name
    # A name nothing provides fails naming it.
    r = dnf_ready("--assumeno", "install", "no-such-package", check=False)
    assert r.returncode != 0 and "no-such-package" in r.stdout + r.stderr


HELLO_SPEC = """Name: hello
Version: 1
Release: 1
Summary: hello with zlib
License: MIT
BuildRequires: gcc make zlib-devel
%description
Built by rpmbuild inside a root dnf made from the fixture distribution.
%build
cp /tmp/hello.c /tmp/Makefile .
make CC=gcc hello
%install
install -D -m 0755 hello %{buildroot}/usr/bin/hello
%files
/usr/bin/hello
"""


@pytest.mark.skipif(os.geteuid() != 0, reason="chroot needs root")
def test_dnf_installs_a_root_that_compiles_and_runs_hello(debrpm_repo, dnf_ready, kiln_bin,
                                                          tmp_path):
    """dnf installs @buildsys-build and zlib-devel; in the root, make and gcc build a
    program against zlib that runs, rpmbuild (its BuildRequires checked against the root's
    rpm database) packages it, and kiln builds tests/data/build/hello.spec in it, whose
    package rpm installs there (its Requires: /bin/sh met by the root's bash)."""
    root = tmp_path / "root"
    dnf_ready("-y", "install", "@buildsys-build", "zlib-devel")
    listed = set(run("rpm", "--root", root, "-qa", "--qf", "%{NAME}\n").stdout.split())
    assert {"gcc", "make", "rpm", "zlib1g-dev", "filesystem", "libc-bin", "gawk"} <= listed
    # The scriptlets ran: ldconfig (libc-bin, zlib1g) and the Lua one (bash).
    assert (root / "etc/ld.so.cache").stat().st_size > 0
    assert "/bin/bash" in (root / "etc/shells").read_text().split()
    (root / "tmp/hello.c").write_text(
        "#include <stdio.h>\n#include <zlib.h>\n"
        "int main(void) { printf(\"hello from zlib %s\\n\", zlibVersion()); return 0; }\n")
    (root / "tmp/Makefile").write_text("hello: hello.c\n\t$(CC) -O2 -o $@ $< -lz\n")
    (root / "tmp/hello.spec").write_text(HELLO_SPEC)
    env = {"PATH": "/usr/bin:/usr/sbin", "HOME": "/root", "LC_ALL": "C"}
    script = ("cd /tmp && make CC=cc hello && ./hello && awk 'BEGIN { print \"awk works\" }' && "
              "rpm -q --whatprovides zlib-devel && "
              "rpmbuild -bb --quiet --define '_topdir /tmp/top' hello.spec && "
              "rpm -qp --requires /tmp/top/RPMS/x86_64/hello-1-1.x86_64.rpm")
    r = subprocess.run(["chroot", str(root), "/bin/sh", "-c", script], capture_output=True,
                       text=True, env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    assert re.search(r"^hello from zlib \d", r.stdout, re.M)
    assert "awk works" in r.stdout and re.search(r"^zlib1g-dev-", r.stdout, re.M)
    assert "libz.so.1()(64bit)" in r.stdout.split()
    # kiln builds in it too, as a dir: root (what a root from a lock will be), and the
    # package installs into it with rpm and runs.
    import test_build as tb
    top = tb.topdir_with_sources(tmp_path / "k")
    k = tb.kiln_build(kiln_bin, top, "-bb", "--root", f"dir:{root}", tb.DATA / "hello.spec")
    assert k.returncode == 0, k.stdout + k.stderr
    pkgs = [top / p for p in tb.outputs(top)]
    run("rpm", "-i", "--root", root, *pkgs)
    r = subprocess.run(["chroot", str(root), "/usr/bin/hello"], capture_output=True, text=True,
                       env=env)
    assert r.stdout == "Hello, kiln!\n", r.stdout + r.stderr


def test_rpmvercmp_agrees_with_rpm(tmp_path):
    """The generator's rpmvercmp (which decides which Debian Breaks it keeps) against rpm's
    own rpm.vercmp."""
    pairs = [("1.0", "1.0"), ("1.0", "1.1"), ("1.0~rc1", "1.0"), ("1.0^post", "1.0"),
             ("1.0^", "1.0~"), ("12.2.0", "12_20211113"), ("2.36", "2.36.1"), ("a", "1"),
             ("1.a", "1.1"), ("010", "10"), ("1.0+dfsg", "1.0.dfsg"), ("5.36.0", "5.36.0~"),
             ("deb12u14", "deb12u2"), ("0.1", "0"), ("1..2", "1.2"), ("1_2", "1.2"),
             ("2.0a", "2.0"), ("1:1", "1:2"), ("~~", "~"), ("^^", "^")]
    lua = "".join(f'print(rpm.vercmp("{a}", "{b}") .. " ")' for a, b in pairs)
    theirs = [int(x) for x in run("rpm", "--eval", "%{lua:" + lua + "}").stdout.split()]
    ours = [debrpm.rpmvercmp(a, b) for a, b in pairs]
    assert ours == theirs, list(zip(pairs, ours, theirs))


def test_debian_versions_and_relations_translate():
    assert debrpm.rpm_evr("1:3.8-4") == ("1", "3.8", "4")
    assert debrpm.rpm_evr("4.3") == (None, "4.3", "0")
    assert debrpm.rpm_evr("12-20211113-2~") == (None, "12_20211113", "2~")
    assert debrpm.dep_atom("libc6 (>> 2.36)", "t") == ("libc6", "libc6 > 2.36-0")
    assert debrpm.dep_atom("libc6 (>= 2.36)", "t") == ("libc6", "libc6 >= 2.36")
    assert debrpm.dep_atom("zlib1g (>= 1:1.1.4)", "t") == ("zlib1g", "zlib1g >= 1:1.1.4")
    assert debrpm.dep_atom("python3:any (<< 3.12-1)", "t") == ("python3", "python3 < 3.12-1")
    g = debrpm.dep_groups("a, b (= 1.0-1) | c", "t")
    assert [debrpm.dep_rpm(x) for x in g] == ["a", "(b = 1.0-1 or c)"]
    with pytest.raises(debrpm.Failure, match=r"t: cannot read the relation 'b \(~ 1\)'"):
        debrpm.dep_groups("a, b (~ 1)", "t")
    assert debrpm.files_glob_quote("/usr/bin/[") == "/usr/bin/[[]"
    assert debrpm.canonical("/bin/sh") == "/usr/bin/sh" and debrpm.canonical("/lib64") == ""


def test_closure_names_what_is_not_installed():
    """The fixture skips with this message where a toolchain package is missing."""
    pkgs = debrpm.dpkg_packages()
    names = debrpm.closure(pkgs)
    assert "libc6" in names and "zlib1g" in names and "libc-bin" in names
    del pkgs["gawk"], pkgs["busybox"]
    with pytest.raises(debrpm.Failure, match=r"^Debian packages not installed: busybox gawk "
                       r"\(scripts/deps.sh installs them\)$"):
        debrpm.closure(pkgs)
