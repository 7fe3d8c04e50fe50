"""kiln's installer (roots/, `kiln image`): packages made by `kiln build`, installed into an
image with their scriptlets in the sandbox, compared with Debian's rpm 4.18 installing the
same packages with `rpm --root`; the rpm database; hostile packages; the image cache.

The test packages: "base" (the host's busybox as /bin/sh with the libraries it needs, and an
/etc/passwd), "app" (scriptlets and a trigger logging their arguments), "rpm" (the host's rpm
and its libraries, so the image can write and read its own database).
"""
import fcntl
import os
import shutil
import stat
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

MUST_WORK = os.environ.get("KILN_MUST_WORK") == "1"
FIXTURE_CACHE = Path(os.environ.get("KILN_TEST_CACHE", "/var/cache/kiln-test"))

BASE_SPEC = """\
Name: base
Version: 1
Release: 1
Summary: a shell for tests
License: MIT
BuildArch: x86_64
AutoReqProv: no
Provides: /bin/sh

%description
busybox and libc from the host.

%install
mkdir -p %{buildroot}/usr/bin %{buildroot}/bin %{buildroot}/lib64 \\
         %{buildroot}/lib/x86_64-linux-gnu %{buildroot}/etc
cp /usr/bin/busybox %{buildroot}/usr/bin/busybox
ln -s ../usr/bin/busybox %{buildroot}/bin/sh
cp /lib64/ld-linux-x86-64.so.2 %{buildroot}/lib64/
cp /lib/x86_64-linux-gnu/libc.so.6 /lib/x86_64-linux-gnu/libresolv.so.2 \\
   %{buildroot}/lib/x86_64-linux-gnu/
printf 'root:x:0:0:root:/root:/bin/sh\\nappuser:x:123:0::/:/bin/sh\\n' > %{buildroot}/etc/passwd
printf 'root:x:0:\\nappgroup:x:456:\\n' > %{buildroot}/etc/group

%files
/usr/bin/busybox
/bin/sh
/lib64/ld-linux-x86-64.so.2
/lib/x86_64-linux-gnu/libc.so.6
/lib/x86_64-linux-gnu/libresolv.so.2
%config /etc/passwd
%config /etc/group
"""

APP_SPEC = """\
Name: app
Version: 2
Release: 1
Summary: scriptlets
License: MIT
BuildArch: noarch
Requires(pre): base

%description
Logs its scriptlets.

%install
mkdir -p %{buildroot}/usr/share/app %{buildroot}/var/lib/app
echo data > %{buildroot}/usr/share/app/data
ln -s data %{buildroot}/usr/share/app/link
echo same > %{buildroot}/usr/share/app/hard1
ln %{buildroot}/usr/share/app/hard1 %{buildroot}/usr/share/app/hard2

%pre
echo "pre $# $1" >> /app.log

%post
echo "post $# $1" >> /app.log
echo made-by-post > /var/lib/app/state

%posttrans
echo "posttrans $# $1" >> /app.log

%triggerin -- base
echo "triggerin $# $1 $2" >> /app.log

%filetriggerin -- /usr/share/app
while read f; do echo "filetriggerin $# $f" >> /app.log; done

%transfiletriggerin -- /lib /usr/bin
while read f; do echo "transfiletriggerin $# $f" >> /app.log; done

%files
%attr(0640,appuser,appgroup) /usr/share/app/data
/usr/share/app/link
/usr/share/app/hard1
/usr/share/app/hard2
%dir %attr(0750,appuser,-) /var/lib/app
%ghost /var/lib/app/state
"""

FAILPRE_SPEC = """\
Name: failpre
Version: 1
Release: 1
Summary: a failing pre
License: MIT
BuildArch: noarch
Requires(pre): base

%description
x

%pre
exit 3

%files
"""

FAILPOST_SPEC = FAILPRE_SPEC.replace("failpre", "failpost").replace("%pre\n", "%post\n")

RPM_SPEC = """\
Name: rpm
Version: 4.18.0
Release: 1
Summary: the host's rpm and its libraries, repackaged for tests
License: GPLv2+
BuildArch: x86_64
AutoReqProv: no
Requires: base
Source0: rpmfiles.txt

%description
x

%install
while read f; do mkdir -p "%{buildroot}$(dirname "$f")"; cp -L "$f" "%{buildroot}$f"; done \\
  < %{SOURCE0}
sed 's|^|"|; s|$|"|' %{SOURCE0} > files.list

%files -f files.list
"""

BASE_FILES = {"/lib64/ld-linux-x86-64.so.2", "/lib/x86_64-linux-gnu/libc.so.6",
              "/lib/x86_64-linux-gnu/libresolv.so.2"}


def rpm_file_list():
    """The host rpm's files and the libraries /usr/bin/rpm loads (not base's)."""
    out = subprocess.run(["dpkg", "-L", "rpm", "rpm-common", "librpm9", "librpmio9"],
                         capture_output=True, text=True).stdout.split()
    files = set()
    for f in out:
        if f.startswith(("/usr/share/doc", "/usr/share/man", "/usr/share/lintian", "/etc/")):
            continue
        if os.path.isfile(f):
            files.add(f)
    ldd = subprocess.run(["ldd", "/usr/bin/rpm"], capture_output=True, text=True).stdout
    for line in ldd.splitlines():
        paths = [x for x in line.split() if x.startswith("/")]
        if paths:
            files.add(paths[0])
    files -= BASE_FILES
    by_real = {}
    for f in sorted(files):  # merged /usr: dpkg says /usr/lib/..., ldd /lib/...
        by_real.setdefault(os.path.realpath(f), f)
    return sorted(by_real.values())


@pytest.fixture(scope="module")
def sandbox_ok(kiln_bin):
    if not shutil.which("busybox"):
        pytest.skip("no busybox to make the test shell from")
    r = subprocess.run([str(kiln_bin), "sandbox", "--", "/bin/true"], capture_output=True,
                       text=True, timeout=60)
    if r.returncode != 0:
        reason = f"the sandbox does not work here: {r.stderr.strip()}"
        if MUST_WORK:
            pytest.fail(reason)
        pytest.skip(reason)
    return True


@pytest.fixture(scope="module")
def pkgs(kiln_bin, sandbox_ok, tmp_path_factory):
    """{name: path} of the test packages, built once by kiln."""
    top = tmp_path_factory.mktemp("roots-top")
    (top / "SOURCES").mkdir()
    (top / "SOURCES" / "rpmfiles.txt").write_text("\n".join(rpm_file_list()) + "\n")
    out = {}
    for name, text in (("base", BASE_SPEC), ("app", APP_SPEC), ("rpm", RPM_SPEC),
                       ("failpre", FAILPRE_SPEC), ("failpost", FAILPOST_SPEC)):
        spec = top / f"{name}.spec"
        spec.write_text(text)
        # the host's own binaries repackaged: no post-install policy (its brp-elfperms
        # would take the execute bit off ld.so, which every program needs)
        r = subprocess.run([str(kiln_bin), "build", "-bb", "--define", f"_topdir {top}",
                            "--define", "__os_install_post %{nil}", str(spec)],
                           capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stderr
        out[name] = next((top / "RPMS").glob(f"*/{name}-*.rpm"))
    return out


def tree(root: Path, skip=()):
    """path -> (type, mode, uid, gid, size, link, mtime of non-directories)."""
    out = {}
    for dirpath, dirs, files in os.walk(root):
        for name in dirs + files:
            p = Path(dirpath) / name
            rel = "/" + str(p.relative_to(root))
            if any(rel == s or rel.startswith(s + "/") for s in skip):
                continue
            st = p.lstat()
            link = os.readlink(p) if stat.S_ISLNK(st.st_mode) else ""
            size = st.st_size if stat.S_ISREG(st.st_mode) else 0
            mtime = 0 if stat.S_ISDIR(st.st_mode) else int(st.st_mtime)
            out[rel] = (stat.S_IFMT(st.st_mode), stat.S_IMODE(st.st_mode), st.st_uid,
                        st.st_gid, size, link, mtime)
    return out


def test_install_runs_scriptlets_like_rpm(kiln, pkgs, tmp_path):
    img = tmp_path / "img"
    # app first on the command line: the order comes from Requires(pre), not from here.
    r = kiln("image", "install", "--state-dir", tmp_path, img, pkgs["app"], pkgs["base"])
    assert r.returncode == 0, r.stderr
    assert "installed 2 packages" in r.stderr
    log = (img / "app.log").read_text()
    assert log == ("pre 1 1\n"
                   "filetriggerin 1 /usr/share/app/data\n"
                   "filetriggerin 1 /usr/share/app/hard1\n"
                   "filetriggerin 1 /usr/share/app/hard2\n"
                   "filetriggerin 1 /usr/share/app/link\n"
                   "post 1 1\ntriggerin 2 1 1\nposttrans 1 1\n"
                   "transfiletriggerin 1 /lib/x86_64-linux-gnu/libc.so.6\n"
                   "transfiletriggerin 1 /lib/x86_64-linux-gnu/libresolv.so.2\n"
                   "transfiletriggerin 1 /lib64/ld-linux-x86-64.so.2\n"
                   "transfiletriggerin 1 /usr/bin/busybox\n")
    assert (img / "var/lib/app/state").read_text() == "made-by-post\n"
    st = (img / "usr/share/app/data").stat()
    assert (st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode)) == (123, 456, 0o640)
    assert os.path.samefile(img / "usr/share/app/hard1", img / "usr/share/app/hard2")

    if not shutil.which("rpm"):
        pytest.skip("no rpm for the oracle")
    ref = tmp_path / "ref"
    ref.mkdir()
    r = subprocess.run(["rpm", "--root", str(ref), "--dbpath", "/var/lib/rpm", "-i",
                        "--nosignature", "--nodeps", str(pkgs["app"]), str(pkgs["base"])],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert (ref / "app.log").read_text() == log
    # kiln's sandbox leaves its mount points; rpm its database and scriptlet directory.
    skip = ("/proc", "/sys", "/dev", "/tmp", "/var/lib/rpm", "/var/tmp")
    a, b = tree(img, skip), tree(ref, skip)
    for made_now in ("/app.log", "/var/lib/app/state"):  # written by scriptlets just now
        a[made_now], b[made_now] = a[made_now][:6], b[made_now][:6]
    assert a == b


def test_failing_pre_stops_and_failing_post_warns(kiln, pkgs, tmp_path):
    r = kiln("image", "install", "--state-dir", tmp_path, tmp_path / "a", pkgs["base"],
             pkgs["failpre"])
    assert r.returncode == 1
    assert "%pre(failpre-1-1.noarch) scriptlet failed, exit status 3" in r.stderr
    r = kiln("image", "install", "--state-dir", tmp_path, tmp_path / "b", pkgs["base"],
             pkgs["failpost"])
    assert r.returncode == 0, r.stderr
    assert "warning: %post(failpost-1-1.noarch) scriptlet failed, exit status 3" in r.stderr


def test_rpm_database_lists_exactly_the_set(kiln, pkgs, tmp_path):
    img = tmp_path / "img"
    r = kiln("image", "install", "--state-dir", tmp_path, img, pkgs["base"], pkgs["rpm"],
             pkgs["app"])
    assert r.returncode == 0, r.stderr
    assert "rpmdb yes" in r.stderr
    r = kiln("sandbox", "--state-dir", tmp_path, "--root", f"dir:{img}", "--", "rpm", "-qa",
             "--qf", "%{NEVRA}\\n")
    assert r.returncode == 0, r.stderr
    assert sorted(r.stdout.split()) == ["app-2-1.noarch", "base-1-1.x86_64",
                                        "rpm-4.18.0-1.x86_64"]
    r = kiln("sandbox", "--state-dir", tmp_path, "--root", f"dir:{img}", "--", "rpm", "-qf",
             "/usr/share/app/data")
    assert r.returncode == 0 and r.stdout.strip() == "app-2-1.noarch", r.stdout + r.stderr
    # Without rpm in the set there is no database.
    r = kiln("image", "install", "--state-dir", tmp_path, tmp_path / "nodb", pkgs["base"])
    assert r.returncode == 0 and "rpmdb no" in r.stderr
    assert not (tmp_path / "nodb/var/lib/rpm").exists()


def test_unpack_only_needs_no_sandbox(kiln, pkgs, tmp_path):
    img = tmp_path / "img"
    r = kiln("image", "install", "--no-scripts", img, pkgs["app"], pkgs["base"])
    assert r.returncode == 0, r.stderr
    assert not (img / "app.log").exists()
    assert (img / "bin/sh").is_symlink() and (img / "usr/share/app/data").read_text() == "data\n"


def get_image(kiln_bin, cache, key, *pkgs):
    return subprocess.run([str(kiln_bin), "image", "get", "--cache", str(cache), "--key", key,
                           "-q", *map(str, pkgs)], capture_output=True, text=True, timeout=300)


def test_eight_processes_make_one_image(kiln_bin, pkgs, tmp_path):
    cache = tmp_path / "cache"
    with ThreadPoolExecutor(8) as ex:
        runs = list(ex.map(lambda _: get_image(kiln_bin, cache, "k1", pkgs["app"],
                                               pkgs["base"]), range(8)))
    for r in runs:
        assert r.returncode == 0, r.stderr
    words = [r.stdout.split() for r in runs]
    assert [w[2] for w in words].count("made") == 1
    assert len({w[0] for w in words}) == 1
    root = Path(words[0][0])
    assert root == cache / "images/k1/root"
    assert (root / "app.log").read_text().count("post 1 1\n") == 1
    assert not list((cache / "images/tmp").iterdir())
    # Another key is made on its own; the first is reused.
    r = get_image(kiln_bin, cache, "k2", pkgs["base"])
    assert r.returncode == 0 and r.stdout.split()[2] == "made", r.stderr
    r = get_image(kiln_bin, cache, "k1", pkgs["base"])
    assert r.returncode == 0 and r.stdout.split()[2] == "cached", r.stderr


def test_keys_never_wait_on_each_other(kiln_bin, pkgs, tmp_path):
    cache = tmp_path / "cache"
    (cache / "images/lock").mkdir(parents=True)
    with open(cache / "images/lock/busy", "w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)  # as a process making image "busy" holds it
        r = get_image(kiln_bin, cache, "other", pkgs["base"])
        assert r.returncode == 0 and r.stdout.split()[2] == "made", r.stderr
        p = subprocess.Popen([str(kiln_bin), "image", "get", "--cache", str(cache), "--key",
                              "busy", "-q", str(pkgs["base"])], stdout=subprocess.PIPE,
                             text=True)
        time.sleep(1)
        assert p.poll() is None  # the same key waits for its maker...
    out, _ = p.communicate(timeout=120)  # ...and goes on when it is done
    assert p.returncode == 0 and out.split()[2] == "made"


def test_an_unsynced_image_from_an_earlier_boot_is_made_again(kiln_bin, pkgs, tmp_path):
    """Images are written without syncing the disk; info names the boot, and an image of an
    earlier boot (a crash may have lost part of it) is made again, not used."""
    cache = tmp_path / "cache"
    r = get_image(kiln_bin, cache, "k", pkgs["base"])
    assert r.returncode == 0 and r.stdout.split()[2] == "made", r.stderr
    info = cache / "images/k/info"
    boot = Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    assert f"\nboot {boot}\n" in info.read_text()
    r = get_image(kiln_bin, cache, "k", pkgs["base"])
    assert r.returncode == 0 and r.stdout.split()[2] == "cached", r.stderr
    info.write_text(info.read_text().replace(boot, "00000000-0000-0000-0000-000000000000"))
    (cache / "images/k/root/stale-marker").write_text("x")
    r = get_image(kiln_bin, cache, "k", pkgs["base"])
    assert r.returncode == 0 and r.stdout.split()[2] == "made", r.stderr
    assert not (cache / "images/k/root/stale-marker").exists()
    assert f"\nboot {boot}\n" in info.read_text()
    assert not list((cache / "images/tmp").iterdir())


def test_failed_image_leaves_nothing(kiln_bin, pkgs, tmp_path):
    cache = tmp_path / "cache"
    r = get_image(kiln_bin, cache, "bad", pkgs["base"], pkgs["failpre"])
    assert r.returncode == 1
    assert not (cache / "images/bad").exists()
    assert not list((cache / "images/tmp").iterdir())
    r = get_image(kiln_bin, cache, "../x", pkgs["base"])
    assert r.returncode == 1 and "bad image key" in r.stderr


def test_gc_ages_images_out_but_never_one_in_use(kiln, kiln_bin, pkgs, tmp_path):
    cache = tmp_path / "cache"
    for key in ("old", "used", "new"):
        r = get_image(kiln_bin, cache, key, pkgs["base"])
        assert r.returncode == 0, r.stderr
        time.sleep(0.05)
    os.utime(cache / "images/used", (1, 1))  # the least recently used...
    with open(cache / "images/lock/used", "r+") as f:
        fcntl.flock(f, fcntl.LOCK_SH)  # ...but in use
        r = kiln("cache", "--cache", cache, "--gc", "--max-size", "1")
        assert r.returncode == 0, r.stderr
    assert "images removed: 2" in r.stdout, r.stdout
    assert (cache / "images/used/root/bin/sh").is_symlink()
    assert not (cache / "images/old").exists() and not (cache / "images/new").exists()


def fixture_repo():
    """The newest fixture distribution made by tests/fixtures/debrpm.py (the debrpm_repo
    fixture caches it as debian_root_cache()/debrpm-KEY), or None."""
    made = sorted((p for p in FIXTURE_CACHE.glob("debrpm-*") if (p / "INFO.json").exists()),
                  key=lambda p: p.stat().st_mtime)
    return made[-1] / "repo" if made else None


def test_fixture_toolchain_compiles_hello(kiln, sandbox_ok, tmp_path):
    repo = fixture_repo()
    if not repo:
        pytest.skip("no fixture distribution made yet (tests/fixtures/debrpm.py)")
    files = sorted(str(p) for p in repo.glob("*.rpm"))
    img = tmp_path / "img"
    r = kiln("image", "install", "--state-dir", tmp_path, img, *files, timeout=1200)
    assert r.returncode == 0, r.stderr[-4000:]
    assert f"installed {len(files)} packages" in r.stderr and "rpmdb yes" in r.stderr
    # bash's <lua> %post, deferred until rpm was in the image, ran through the image's rpm.
    assert "<lua> scriptlet deferred" in r.stderr
    assert "/usr/bin/bash\n" in (img / "etc/shells").read_text()
    (tmp_path / "src").mkdir()
    (tmp_path / "src/hello.c").write_text('#include <stdio.h>\nint main(void)'
                                          '{puts("hello");return 0;}\n')
    r = kiln("sandbox", "--state-dir", tmp_path, "--root", f"dir:{img}", "--bind",
             f"{tmp_path / 'src'}:/src", "--", "sh", "-c",
             "cd /src && gcc -o hello hello.c && ./hello && make --version >/dev/null")
    assert r.returncode == 0 and r.stdout == "hello\n", r.stderr
    r = kiln("sandbox", "--state-dir", tmp_path, "--root", f"dir:{img}", "--", "rpm", "-qa",
             "--qf", "%{NAME}-%{VERSION}-%{RELEASE}.%{ARCH}.rpm\n")
    assert r.returncode == 0, r.stderr
    assert sorted(r.stdout.split()) == sorted(Path(f).name for f in files)


def test_root_create_and_shell_from_the_fixture_repository(kiln, sandbox_ok, tmp_path):
    repo = fixture_repo()
    if not repo:
        pytest.skip("no fixture distribution made yet (tests/fixtures/debrpm.py)")
    cfg = tmp_path / "fx.cfg"
    cfg.write_text(f"[root]\narch = x86_64\ninstall = @buildsys-build\n\n[repo fx]\n"
                   f"baseurl = file://{repo}\ngpgkey = file://{repo.parent / 'key/key.asc'}\n")
    cache = tmp_path / "cache"
    args = ("--cache", cache, "--state-dir", tmp_path)
    r = kiln("root", "create", *args, cfg, timeout=1200)
    assert r.returncode == 0, r.stderr[-4000:]
    root, key, made = r.stdout.split()[1], r.stdout.split()[3], r.stdout.split()[4]
    assert made == "made" and root == str(cache / "images" / key / "root")
    lock = kiln("root", "lock", "--json", "--cache", cache, cfg)
    assert lock.returncode == 0, lock.stderr
    import hashlib
    assert hashlib.sha256(lock.stdout.encode()).hexdigest() == key
    r = kiln("root", "create", *args, cfg)
    assert r.returncode == 0 and r.stdout.split()[4] == "cached", r.stderr
    # shell: a fresh overlay; the image never changes.
    r = kiln("root", "shell", *args, cfg, "--", "sh", "-c",
             "rpm -q gcc make >/dev/null && touch /usr/bin/scratch && echo ok")
    assert r.returncode == 0 and r.stdout == "ok\n", r.stderr
    assert not (Path(root) / "usr/bin/scratch").exists()
    r = kiln("root", "shell", *args, cfg, "--", "sh", "-c", "exit 7")
    assert r.returncode == 7
