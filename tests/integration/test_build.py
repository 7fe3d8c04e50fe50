"""kiln build against Debian's rpmbuild 4.18: the same specs give the same packages.

rpmbuild runs with Debian's configuration, --nodeps (its rpm database is empty) and the
reproducibility switches; kiln with its own configuration, the same payload (gzip) and
build host. Tags that legitimately differ are not compared (see DIFFERENT below).
"""
import gzip
import json
import os
import shutil
import subprocess
import tarfile
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data" / "build"
FAIL = DATA / "fail"
EPOCH = "1796126400"  # 2026-12-01 12:00 UTC: hello.spec's changelog date
ENV = dict(os.environ, TZ="UTC", LC_ALL="C", SOURCE_DATE_EPOCH=EPOCH)

# Tags whose values differ between rpmbuild and kiln by design:
#  RPMVERSION, COOKIE - the tool's version string and its build host/time cookie;
#  OPTFLAGS, PLATFORM - Debian's rpmrc flags vs kiln's (-O2 -g... vs kiln's defaults);
#  PAYLOADFLAGS is compared (both gzip 9); SPEC of rpm 4.18 lacks the %build line (its -P bug).
SRPM_QF = (
    "%{NAME} %{VERSION} %{RELEASE} %{EPOCH} %{ARCH} %{OS} %{LICENSE} %{URL}\n"
    "%{SUMMARY}\n%{DESCRIPTION}\n%{BUILDTIME} %{BUILDHOST} %{SOURCEPACKAGE}\n"
    "%{PAYLOADFORMAT} %{PAYLOADCOMPRESSOR} %{PAYLOADFLAGS} %{FILEDIGESTALGO}\n"
    "[%{SOURCE}\n][%{PATCH}\n]"
    "[R %{REQUIRENAME} %{REQUIREFLAGS} %{REQUIREVERSION}\n]"
    "[P %{PROVIDENAME} %{PROVIDEFLAGS} %{PROVIDEVERSION}\n]"
    "[F %{FILENAMES} %{FILEMODES:octal} %{FILEUSERNAME} %{FILEGROUPNAME} %{FILEFLAGS} "
    "%{FILESIZES} %{FILEDIGESTS} %{FILEMTIMES} %{FILEVERIFYFLAGS}\n]"
    "[C %{CHANGELOGTIME} %{CHANGELOGNAME} %{CHANGELOGTEXT}\n]"
)


def make_tarball(dest: Path):
    """hello-1.0.tar.gz from tests/data/build/hello-1.0, byte-stable."""
    dest.parent.mkdir(parents=True, exist_ok=True)

    def norm(ti):
        ti.uid = ti.gid = 0
        ti.uname = ti.gname = "root"
        ti.mtime = int(EPOCH)
        return ti

    with gzip.GzipFile(dest, "wb", mtime=int(EPOCH)) as gz:
        with tarfile.open(fileobj=gz, mode="w", format=tarfile.GNU_FORMAT) as tf:
            tf.add(DATA / "hello-1.0", arcname="hello-1.0", filter=norm)
    os.utime(dest, (int(EPOCH), int(EPOCH)))


def topdir_with_sources(base: Path) -> Path:
    top = base / "rpmbuild"
    src = top / "SOURCES"
    src.mkdir(parents=True)
    make_tarball(src / "hello-1.0.tar.gz")
    for f in ("hello.conf", "hello-greeting.patch"):
        shutil.copy2(DATA / f, src / f)
        os.utime(src / f, (int(EPOCH), int(EPOCH)))
    return top


def rpmbuild(top: Path, mode: str, spec: Path):
    # Both run rpm's post-install policy (%__os_install_post: strip, compress...); build-id
    # links need %debug_package, which these specs do not use. %_docdir_fmt is left as
    # rpm's macros leave it (undefined: %{NAME}-%{VERSION}, what rpmbuild 4.20.1 and 6.0.2
    # write too): kiln's defaults must give the same doc paths.
    cmd = ["rpmbuild", mode, "--nodeps", "--quiet", "--define", f"_topdir {top}",
           "--define", "_build_id_links none",
           "--define", "use_source_date_epoch_as_buildtime 1",
           "--define", "clamp_mtime_to_source_date_epoch 1",
           "--define", "_buildhost oracle.example", "--define", "_binary_payload w9.gzdio",
           "--define", "_source_payload w9.gzdio", str(spec)]
    return subprocess.run(cmd, env=ENV, capture_output=True, text=True)


def kiln_build(kiln_bin, top: Path, *args, env=None):
    cmd = [str(kiln_bin), "build", "--define", f"_topdir {top}",
           "--define", "_buildhost oracle.example", "--define", "_binary_payload w9.gzdio",
           "--define", "_source_payload w9.gzdio", *map(str, args)]
    return subprocess.run(cmd, env=env or ENV, capture_output=True, text=True, timeout=300)


def qf(pkg: Path, fmt: str) -> str:
    return subprocess.run(["rpm", "-qp", "--qf", fmt, str(pkg)], env=ENV, check=True,
                          capture_output=True, text=True).stdout


def rpm_k(pkg: Path) -> str:
    r = subprocess.run(["rpm", "-K", str(pkg)], env=ENV, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout


def outputs(top: Path):
    return sorted(p.relative_to(top) for p in top.glob("*RPMS/**/*.rpm"))


# ---------------------------------------------------------------------------------------
# The source package


def test_source_package_matches_rpmbuild(kiln_bin, tmp_path):
    rtop = topdir_with_sources(tmp_path / "r")
    ktop = topdir_with_sources(tmp_path / "k")
    spec = DATA / "hello.spec"
    r = rpmbuild(rtop, "-bs", spec)
    assert r.returncode == 0, r.stderr
    k = kiln_build(kiln_bin, ktop, "-bs", spec)
    assert k.returncode == 0, k.stderr
    assert outputs(ktop) == outputs(rtop) == [Path("SRPMS/hello-1.0-1.src.rpm")]
    rs, ks = rtop / outputs(rtop)[0], ktop / outputs(ktop)[0]
    assert qf(ks, SRPM_QF) == qf(rs, SRPM_QF)
    assert "digests OK" in rpm_k(ks)
    assert f"Wrote: {ks}" in k.stdout


def test_source_package_carries_the_parsed_spec(kiln, kiln_bin, tmp_path):
    ktop = topdir_with_sources(tmp_path / "k")
    spec = DATA / "hello.spec"
    assert kiln_build(kiln_bin, ktop, "-bs", spec).returncode == 0
    # The sandboxed build runs kiln's helpers from the fixed /builddir/kiln.
    parsed = kiln("spec", "--parse", "--define", f"_topdir {ktop}",
                  "--define", "_kiln_helperdir /builddir/kiln", spec)
    assert parsed.returncode == 0, parsed.stderr
    stored = qf(ktop / "SRPMS/hello-1.0-1.src.rpm", "%{SPEC}")
    # kiln writes the top directory as %{_topdir} (reproducible across top directories).
    assert stored == parsed.stdout.replace(str(ktop), "%{_topdir}")
    assert str(ktop) not in stored


def test_source_package_is_reproducible(kiln_bin, tmp_path):
    """Different topdirs, different wall-clock times: the same bytes."""
    spec = DATA / "hello.spec"
    tops = []
    for name in ("one", "two"):
        top = topdir_with_sources(tmp_path / name)
        shutil.copy2(spec, top / "hello.spec")
        k = kiln_build(kiln_bin, top, "-bs", top / "hello.spec")
        assert k.returncode == 0, k.stderr
        tops.append(top)
        time.sleep(1.1)
    a, b = (t / "SRPMS/hello-1.0-1.src.rpm" for t in tops)
    assert a.read_bytes() == b.read_bytes()


def test_nosource_makes_a_nosrc_package(kiln_bin, tmp_path):
    top = topdir_with_sources(tmp_path / "k")
    spec = tmp_path / "hello.spec"
    spec.write_text((DATA / "hello.spec").read_text().replace(
        "Patch0:", "NoSource:       0\nPatch0:"))
    k = kiln_build(kiln_bin, top, "-bs", spec)
    assert k.returncode == 0, k.stderr
    pkg = top / "SRPMS/hello-1.0-1.nosrc.rpm"
    names = qf(pkg, "[%{FILENAMES}\n]").split()
    assert "hello-1.0.tar.gz" not in names and "hello.spec" in names
    assert qf(pkg, "[%{NOSOURCE}\n]").split() == ["0"]


def test_missing_source_is_a_clear_error(kiln_bin, tmp_path):
    top = tmp_path / "t"
    k = kiln_build(kiln_bin, top, "-bs", FAIL / "missing-source.spec")
    assert k.returncode == 1
    assert f"Bad file: {top}/SOURCES/missing-source-1.tar.gz: No such file or directory" \
        in k.stderr
    assert outputs(top) == [] if top.exists() else True


# ---------------------------------------------------------------------------------------
# Stages and their failures


def test_failing_build_stage(kiln_bin, tmp_path):
    top = tmp_path / "t"
    k = kiln_build(kiln_bin, top, "-ba", FAIL / "fail-build.spec")
    assert k.returncode == 1
    assert "Bad exit status from" in k.stderr and "(%build)" in k.stderr
    assert "about to fail" in k.stdout
    assert outputs(top) == []
    log = top / "BUILD" / "fail-build-1-1.build.log"
    assert "about to fail" in log.read_text()


def test_failing_stage_with_quiet_shows_the_tail(kiln_bin, tmp_path):
    top = tmp_path / "t"
    k = kiln_build(kiln_bin, top, "-bb", "--quiet", FAIL / "fail-build.spec")
    assert k.returncode == 1
    assert "about to fail" in k.stdout  # only the tail, because the stage failed
    assert "Executing" not in k.stdout


def test_bad_buildrequires(kiln_bin, tmp_path):
    top = tmp_path / "t"
    k = kiln_build(kiln_bin, top, "-bb", FAIL / "bad-buildrequires.spec")
    assert k.returncode == 1
    assert "Failed build dependencies:" in k.stderr
    assert "/nonexistent/kiln-tool is needed by bad-buildrequires-1-1" in k.stderr
    assert "pkgconfig(kiln-nonexistent-module) >= 1.0 is needed by" in k.stderr
    assert "/bin/sh is needed" not in k.stderr
    assert outputs(top) == []
    # --nodeps skips the check, as rpmbuild's.
    k = kiln_build(kiln_bin, top, "-bc", "--nodeps", FAIL / "bad-buildrequires.spec")
    assert k.returncode == 0, k.stderr


def test_generate_buildrequires(kiln_bin, tmp_path):
    top = tmp_path / "t"
    spec = FAIL / "genreqs.spec"
    k = kiln_build(kiln_bin, top, "-br", spec)
    assert k.returncode == 11, k.stderr  # rpmbuild -br: missing dynamic build deps
    assert "/nonexistent/generated-tool is needed by genreqs-1-1" in k.stderr
    k = kiln_build(kiln_bin, top, "-bc", spec)
    assert k.returncode == 1
    assert "/nonexistent/generated-tool is needed by genreqs-1-1" in k.stderr


def test_prep_runs_uncompress_and_patches(kiln_bin, tmp_path):
    top = topdir_with_sources(tmp_path / "k")
    k = kiln_build(kiln_bin, top, "-bp", DATA / "hello.spec")
    assert k.returncode == 0, k.stderr
    src = (top / "BUILD/hello-1.0/hello.c").read_text()
    assert "Hello, kiln!" in src  # Patch0 applied by %autosetup -p1
    assert "Executing(%prep)" in k.stdout


def test_short_circuit_runs_only_the_named_stage(kiln_bin, tmp_path):
    top = topdir_with_sources(tmp_path / "k")
    spec = DATA / "hello.spec"
    assert kiln_build(kiln_bin, top, "-bp", spec).returncode == 0
    (top / "BUILD/hello-1.0/marker").write_text("kept")
    k = kiln_build(kiln_bin, top, "-bc", "--short-circuit", spec)
    assert k.returncode == 0, k.stderr
    assert "Executing(%prep)" not in k.stdout and "Executing(%build)" in k.stdout
    assert (top / "BUILD/hello-1.0/marker").exists()  # %prep would have removed it
    assert (top / "BUILD/hello-1.0/hello").exists()


@pytest.mark.parametrize("mode", ["sandbox", "host"])
def test_stage_environment(kiln_bin, tmp_path, mode):
    spec = tmp_path / "env.spec"
    spec.write_text("Name: env\nVersion: 2\nRelease: 3\nSummary: s\nLicense: MIT\n"
                    "%description\nd\n%build\nenv | sort > $RPM_BUILD_DIR/env.txt\n"
                    "echo \"HOSTNAME=$(uname -n)\" >> $RPM_BUILD_DIR/env.txt\n"
                    "%install\n%files\n")
    top = tmp_path / "t"
    env = dict(ENV, KILN_TEST_NOISE="leaks?")
    extra = ["--no-sandbox"] if mode == "host" else []
    k = kiln_build(kiln_bin, top, "-bc", *extra, spec, env=env)
    assert k.returncode == 0, k.stderr
    got = dict(l.split("=", 1) for l in (top / "BUILD/env.txt").read_text().splitlines()
               if "=" in l)
    # In the sandbox the top directory is always /builddir/build (as in mock).
    inside = "/builddir/build" if mode == "sandbox" else str(top)
    assert got["RPM_PACKAGE_NAME"] == "env" and got["RPM_PACKAGE_VERSION"] == "2"
    assert got["RPM_PACKAGE_RELEASE"] == "3" and got["RPM_BUILD_DIR"] == f"{inside}/BUILD"
    assert got["RPM_SOURCE_DIR"] == f"{inside}/SOURCES" and got["RPM_ARCH"] == "x86_64"
    assert got["SOURCE_DATE_EPOCH"] == EPOCH and got["TZ"] == "UTC"
    assert got["RPM_BUILD_ROOT"] == f"{inside}/BUILDROOT/env-2-3.x86_64"
    assert "RPM_OPT_FLAGS" in got and "RPM_BUILD_NCPUS" in got
    assert "KILN_TEST_NOISE" not in got  # the caller's environment does not leak in
    if mode == "sandbox":
        assert got["HOME"] == "/builddir"
        assert got["HOSTNAME"] == "oracle.example"  # %_buildhost


def test_json_summary(kiln_bin, tmp_path):
    top = topdir_with_sources(tmp_path / "k")
    k = kiln_build(kiln_bin, top, "-bs", "--json", DATA / "hello.spec")
    assert k.returncode == 0, k.stderr
    doc = json.loads(k.stdout)
    assert doc["ok"] is True and doc["error"] is None
    (out,) = doc["outputs"]
    assert out["kind"] == "source" and out["arch"] == "src" and out["name"] == "hello"
    import hashlib
    assert out["sha256"] == hashlib.sha256(Path(out["path"]).read_bytes()).hexdigest()
    assert doc["source_date_epoch"] == int(EPOCH)
    assert [s["name"] for s in doc["stages"]] == ["package"]
    k = kiln_build(kiln_bin, tmp_path / "f", "-bc", "--json", FAIL / "fail-build.spec")
    assert k.returncode == 1
    doc = json.loads(k.stdout)
    assert doc["ok"] is False and "Bad exit status" in doc["error"]
    assert doc["stages"][-1]["name"] == "build" and doc["stages"][-1]["exit_code"] == 3


def test_rebuild_from_source_package(kiln_bin, tmp_path):
    top = topdir_with_sources(tmp_path / "k")
    assert kiln_build(kiln_bin, top, "-bs", DATA / "hello.spec").returncode == 0
    srpm = top / "SRPMS/hello-1.0-1.src.rpm"
    other = tmp_path / "other"
    k = kiln_build(kiln_bin, other, "-rp", srpm)
    assert k.returncode == 0, k.stderr
    assert "Hello, kiln!" in (other / "BUILD/hello-1.0/hello.c").read_text()


def test_spec_from_tarball(kiln_bin, tmp_path):
    # A tarball holding its own spec at the top directory (rpmbuild -t).
    tree = tmp_path / "tree" / "hello-1.0"
    shutil.copytree(DATA / "hello-1.0", tree)
    spec = (DATA / "hello.spec").read_text()
    spec = spec.replace("Source1:        hello.conf\n", "").replace(
        "Patch0:         hello-greeting.patch\n", "").replace(
        "install -D -m 0644 %{SOURCE1} %{buildroot}/etc/hello.conf\n", "")
    (tree / "hello.spec").write_text(spec)
    tarball = tmp_path / "hello-1.0.tar.gz"
    with tarfile.open(tarball, "w:gz") as tf:
        tf.add(tree, arcname="hello-1.0")
    top = tmp_path / "t"
    k = kiln_build(kiln_bin, top, "-ts", tarball)
    assert k.returncode == 0, k.stderr
    assert (top / "SRPMS/hello-1.0-1.src.rpm").exists()
    assert (top / "SPECS/hello.spec").exists()


def test_usage_errors(kiln_bin, tmp_path):
    k = subprocess.run([str(kiln_bin), "build", "-bz", "x.spec"], capture_output=True,
                       text=True)
    assert k.returncode == 2 and "unknown stage 'z'" in k.stderr
    k = subprocess.run([str(kiln_bin), "build", "-ba"], capture_output=True, text=True)
    assert k.returncode == 2
    k = kiln_build(kiln_bin, tmp_path, "-ba", tmp_path / "nope.spec")
    assert k.returncode == 1 and "nope.spec" in k.stderr


# ---------------------------------------------------------------------------------------
# Binary packages

BIN_QF = (
    "%{NAME} %{VERSION} %{RELEASE} %{EPOCH} %{ARCH} %{OS} %{LICENSE} %{URL} %{GROUP}\n"
    "%{SUMMARY}\n%{DESCRIPTION}\n%{BUILDTIME} %{BUILDHOST} %{SOURCERPM}\n"
    "%{PAYLOADFORMAT} %{PAYLOADCOMPRESSOR} %{PAYLOADFLAGS} %{FILEDIGESTALGO}\n"
    "%{PREIN}|%{PREINPROG}|%{POSTIN}|%{POSTINPROG}|%{PREUN}|%{PREUNPROG}|%{POSTUN}\n"
    "[R %{REQUIRENAME} %{REQUIREFLAGS} %{REQUIREVERSION}\n]"
    "[P %{PROVIDENAME} %{PROVIDEFLAGS} %{PROVIDEVERSION}\n]"
    "[F %{FILENAMES} %{FILEMODES:octal} %{FILEUSERNAME} %{FILEGROUPNAME} %{FILEFLAGS} "
    "%{FILESIZES} %{FILEDIGESTS} %{FILEMTIMES} %{FILEVERIFYFLAGS} %{FILELINKTOS} "
    "%{FILELANGS} %{FILECOLORS} %{FILECLASS} %{FILERDEVS} %{FILEDEVICES}\n]"
    "[C %{CHANGELOGTIME} %{CHANGELOGNAME} %{CHANGELOGTEXT}\n]"
)


@pytest.fixture(scope="module")
def hello_builds(kiln_bin, tmp_path_factory):
    """hello.spec built -ba by rpmbuild and by kiln (in the sandbox, the default)."""
    base = tmp_path_factory.mktemp("hello")
    rtop = topdir_with_sources(base / "r")
    ktop = topdir_with_sources(base / "k")
    r = rpmbuild(rtop, "-ba", DATA / "hello.spec")
    assert r.returncode == 0, r.stderr
    k = kiln_build(kiln_bin, ktop, "-ba", "--json", DATA / "hello.spec")
    assert k.returncode == 0, k.stderr
    return rtop, ktop, json.loads(k.stdout)


def test_binary_packages_match_rpmbuild(hello_builds):
    rtop, ktop, _ = hello_builds
    assert outputs(ktop) == outputs(rtop)
    assert len(outputs(ktop)) == 3  # hello, hello-doc (noarch), the source package
    for rel in outputs(rtop):
        if rel.parts[0] != "RPMS":
            continue
        assert qf(ktop / rel, BIN_QF) == qf(rtop / rel, BIN_QF), rel


def test_binary_packages_verify_and_install(hello_builds, tmp_path):
    _, ktop, doc = hello_builds
    pkgs = [ktop / p for p in outputs(ktop) if p.parts[0] == "RPMS"]
    for p in pkgs:
        assert "digests OK" in rpm_k(p)
    root = tmp_path / "root"
    r = subprocess.run(["rpm", "-i", "--root", str(root), "--dbpath", "/var/lib/rpm",
                        "--nodeps", "--force-debian", *map(str, pkgs)], env=ENV,
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert (root / "usr/bin/hello").stat().st_mode & 0o777 == 0o755
    assert (root / "etc/hello.conf").read_text() == "greeting = hello\n"
    assert os.readlink(root / "usr/share/hello/hello-link") == "../bin/hello"
    assert (root / "usr/share/doc/hello-doc-1.0/README").exists()  # rpm: %{NAME}-%{VERSION}
    assert (root / "usr/share/licenses/hello-1.0/LICENSE").exists()
    out = subprocess.run([str(root / "usr/bin/hello")], capture_output=True, text=True)
    assert out.stdout == "Hello, kiln!\n"
    # --json names every output with its digest.
    import hashlib
    for o in doc["outputs"]:
        assert o["sha256"] == hashlib.sha256(Path(o["path"]).read_bytes()).hexdigest()
    assert doc["sandbox"] is True and doc["network"] is False
    assert [s["name"] for s in doc["stages"]] == ["prep", "build", "install", "check",
                                                  "package"]


def test_binary_packages_are_reproducible(kiln_bin, tmp_path):
    """Two builds at different times in different top directories: the same bytes."""
    tops = []
    for name in ("one", "two"):
        top = topdir_with_sources(tmp_path / name)
        k = kiln_build(kiln_bin, top, "-ba", DATA / "hello.spec")
        assert k.returncode == 0, k.stderr
        tops.append(top)
        time.sleep(1.1)
    assert outputs(tops[0]) == outputs(tops[1]) and len(outputs(tops[0])) == 3
    for rel in outputs(tops[0]):
        assert (tops[0] / rel).read_bytes() == (tops[1] / rel).read_bytes(), rel


def test_unpackaged_files(kiln_bin, tmp_path):
    top = tmp_path / "t"
    k = kiln_build(kiln_bin, top, "-bb", FAIL / "unpackaged.spec")
    assert k.returncode == 1
    assert "Installed (but unpackaged) file(s) found:" in k.stderr
    assert "/usr/share/unpackaged/forgotten" in k.stderr
    assert outputs(top) == []
    # rpm's switch turns it into a warning.
    k = kiln_build(kiln_bin, top, "-bb", "--define", "_unpackaged_files_terminate_build 0",
                   FAIL / "unpackaged.spec")
    assert k.returncode == 0, k.stderr
    assert "/usr/share/unpackaged/forgotten" in k.stderr


def test_missing_files_entry(kiln_bin, tmp_path):
    top = tmp_path / "t"
    k = kiln_build(kiln_bin, top, "-bb", FAIL / "missing-file.spec")
    assert k.returncode == 1
    assert "File not found:" in k.stderr and "/usr/share/missing-file/not-here" in k.stderr
    assert outputs(top) == []


def test_rpm_format_6(kiln, kiln_bin, tmp_path):
    top = topdir_with_sources(tmp_path / "k")
    k = kiln_build(kiln_bin, top, "-bb", "--rpm-format", "6", DATA / "hello.spec")
    assert k.returncode == 0, k.stderr
    pkg = top / "RPMS/x86_64/hello-1.0-1.x86_64.rpm"
    assert kiln("check", pkg).returncode == 0
    # rpm 4.18 does not know the RPMFORMAT tag (rpm 6.0's); kiln's reader does.
    assert kiln("query", "-p", "--qf", "%{RPMFORMAT}", pkg).stdout == "6"
    files = subprocess.run(["rpm", "-qpl", str(pkg)], env=ENV, capture_output=True,
                           text=True).stdout.split()
    assert "/usr/bin/hello" in files


def test_signed_build(kiln, kiln_bin, tmp_path):
    keydir = tmp_path / "key"
    g = kiln("keygen", "--name", "Build Key", "--email", "build@example.org", "--out", keydir)
    assert g.returncode == 0, g.stderr
    secret = next(p for p in keydir.iterdir() if p.stat().st_mode & 0o077 == 0
                  and not p.name.endswith(".asc"))
    public = next(p for p in keydir.iterdir() if p.name.endswith(".asc"))
    top = topdir_with_sources(tmp_path / "k")
    k = kiln_build(kiln_bin, top, "-ba", "--sign", secret, DATA / "hello.spec")
    assert k.returncode == 0, k.stderr
    db = tmp_path / "db"
    subprocess.run(["rpmkeys", "--dbpath", str(db), "--import", str(public)], check=True,
                   env=ENV)
    for rel in outputs(top):
        r = subprocess.run(["rpmkeys", "--dbpath", str(db), "--checksig", str(top / rel)],
                           env=ENV, capture_output=True, text=True)
        assert r.returncode == 0 and "signatures OK" in r.stdout, r.stdout + r.stderr


def test_fetch_sources_before_building(kiln_bin, tmp_path):
    """--fetch gets URL sources through the cache (tests/integration/test_sources*.py test
    the fetcher itself); without it a missing source is rpmbuild's error."""
    import http.server
    import threading
    served = tmp_path / "srv"
    served.mkdir()
    make_tarball(served / "hello-1.0.tar.gz")
    handler = lambda *a, **kw: http.server.SimpleHTTPRequestHandler(  # noqa: E731
        *a, directory=str(served), **kw)
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{srv.server_address[1]}/hello-1.0.tar.gz"
        spec = tmp_path / "hello.spec"
        spec.write_text((DATA / "hello.spec").read_text().replace(
            "Source0:        hello-1.0.tar.gz", f"Source0:        {url}"))
        top = tmp_path / "t"
        (top / "SOURCES").mkdir(parents=True)
        for f in ("hello.conf", "hello-greeting.patch"):
            shutil.copy2(DATA / f, top / "SOURCES" / f)
        k = kiln_build(kiln_bin, top, "-bs", spec)
        assert k.returncode == 1 and "hello-1.0.tar.gz: No such file" in k.stderr
        k = kiln_build(kiln_bin, top, "-bs", "--fetch", "--cache", tmp_path / "cache", spec)
        assert k.returncode == 0, k.stderr
        assert (top / "SOURCES/hello-1.0.tar.gz").read_bytes() == \
            (served / "hello-1.0.tar.gz").read_bytes()
        names = qf(top / "SRPMS/hello-1.0-1.src.rpm", "[%{FILENAMES}\n]").split()
        assert "hello-1.0.tar.gz" in names
    finally:
        srv.shutdown()


def git(*args, cwd):
    env = dict(ENV, GIT_AUTHOR_NAME="T", GIT_AUTHOR_EMAIL="t@example.org",
               GIT_COMMITTER_NAME="T", GIT_COMMITTER_EMAIL="t@example.org",
               GIT_AUTHOR_DATE="1796126400 +0000", GIT_COMMITTER_DATE="1796126400 +0000")
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True,
                          text=True).stdout.strip()


def test_build_from_git(kiln_bin, tmp_path):
    """kiln build --git: the spec, patches and sources file from a commit, the tarball
    made from it (byte-identical wherever it is built)."""
    repo = tmp_path / "repo"
    shutil.copytree(DATA / "hello-1.0", repo)
    for f in ("hello.spec", "hello.conf", "hello-greeting.patch"):
        shutil.copy2(DATA / f, repo / f)
    git("init", "-q", "-b", "main", cwd=repo)
    git("add", ".", cwd=repo)
    git("commit", "-q", "-m", "hello 1.0", cwd=repo)
    git("tag", "v1.0", cwd=repo)
    commit = git("rev-parse", "HEAD", cwd=repo)
    tops = []
    for name in ("one", "two"):
        top = tmp_path / name
        k = kiln_build(kiln_bin, top, "-ba", "--git", f"file://{repo}", "--ref", "v1.0",
                       "--cache", tmp_path / "cache")
        assert k.returncode == 0, k.stderr
        assert commit in k.stderr
        tops.append(top)
    assert outputs(tops[0]) == outputs(tops[1]) and len(outputs(tops[0])) == 3
    for rel in outputs(tops[0]):
        assert (tops[0] / rel).read_bytes() == (tops[1] / rel).read_bytes(), rel
    names = qf(tops[0] / "SRPMS/hello-1.0-1.src.rpm", "[%{FILENAMES}\n]").split()
    assert {"hello-1.0.tar.gz", "hello.spec", "hello-greeting.patch"} <= set(names)
    k = kiln_build(kiln_bin, tmp_path / "bad", "-bs", "--git", f"file://{repo}", "--ref",
                   "no-such-tag", "--cache", tmp_path / "cache")
    assert k.returncode == 1 and "no-such-tag" in k.stderr
