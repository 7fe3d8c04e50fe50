"""kiln root lock: root configurations resolved against a signed repository kiln made.

The repository (rootsrepo.UNIVERSE) is built, signed and indexed by kiln once per module.
Debian's dnf 4.14 is the oracle for resolution: every request set is installed with
`dnf --installroot ... --assumeno install` and kiln must lock exactly the set dnf would
install, or fail naming the same problem packages.
"""
import hashlib
import json
import re
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

import rootsrepo


@pytest.fixture(scope="module")
def repo(kiln_bin, tmp_path_factory):
    return rootsrepo.make_repo(kiln_bin, tmp_path_factory.mktemp("rootsrepo"))


def write_config(path: Path, repo: dict, install: str, extra_repo: str = "",
                 baseurl: Path = None) -> Path:
    # The minimal form, as written.
    path.write_text(f"[root]\narch = x86_64\ninstall = {install}\n\n"
                    f"[repo base]\nbaseurl = file://{baseurl or repo['repo']}\n"
                    f"gpgkey = file://{repo['key']}\n{extra_repo}")
    return path


@pytest.fixture
def lock(kiln, tmp_path, repo):
    """Run kiln root lock with a cache of the test's own; returns the CompletedProcess."""

    def run(config: Path, *args):
        return kiln("root", "lock", config, *args, env={"KILN_CACHE_DIR": str(tmp_path / "c")})

    return run


def nevras(lock_json: str) -> list:
    out = []
    for p in json.loads(lock_json)["packages"]:
        evr = f"{p['epoch']}:" if p["epoch"] else ""
        out.append(f"{p['name']}-{evr}{p['version']}-{p['release']}.{p['arch']}")
    return out


def test_lock_minimal_config(lock, tmp_path, repo):
    cfg = write_config(tmp_path / "t.cfg", repo, "toolchain")
    r = lock(cfg)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].split() == ["Package", "Version", "Arch", "Repository"]
    assert lines[1].split() == ["binutils-lite", "2.41-1", "x86_64", "base"]
    j = lock(cfg, "--json")
    assert j.returncode == 0, j.stderr
    assert nevras(j.stdout) == [
        "binutils-lite-2.41-1.x86_64", "coreutils-lite-9.1-1.x86_64", "gcc-lite-12.2-1.x86_64",
        "libz-1.3-1.x86_64", "make-lite-4.3-1.x86_64", "shell-5.2-1.x86_64",
        "toolchain-1-1.noarch", "zdev-1.3-1.x86_64"]
    # The identity is the sha256 of the lock's bytes, and resolving again gives the same.
    ident = hashlib.sha256(j.stdout.encode()).hexdigest()
    assert lines[-1] == f"8 packages for x86_64, lock sha256 {ident}"
    assert lock(cfg, "--json").stdout == j.stdout
    pkg = json.loads(j.stdout)["packages"][0]
    rpm = repo["repo"] / pkg["location"]
    assert pkg["sha256"] == hashlib.sha256(rpm.read_bytes()).hexdigest()
    assert pkg["size"] == rpm.stat().st_size
    assert pkg["repo"] == "base"


def test_lock_by_name_from_the_configuration_directory(kiln, tmp_path, repo):
    confdir = tmp_path / "configs"
    shutil.copytree(Path(__file__).resolve().parents[2] / "configs", confdir)
    (confdir / "roots").mkdir(exist_ok=True)
    write_config(confdir / "roots" / "univ-1-x86_64.cfg", repo, "shell")
    r = kiln("root", "lock", "univ-1-x86_64",
             env={"KILN_CONFIGDIR": str(confdir), "KILN_CACHE_DIR": str(tmp_path / "c")})
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[1].split()[0] == "shell"
    r = kiln("root", "lock", "no-such-root", env={"KILN_CONFIGDIR": str(confdir)})
    assert r.returncode == 1
    assert "no root configuration 'no-such-root'" in r.stderr


def test_lock_given_back_is_checked(lock, tmp_path, repo):
    cfg = write_config(tmp_path / "t.cfg", repo, "gcc-lite")
    first = lock(cfg, "--json")
    assert first.returncode == 0, first.stderr
    saved = tmp_path / "lock.json"
    saved.write_text(first.stdout)
    again = lock(cfg, "--json", "--lock", saved)
    assert again.returncode == 0, again.stderr
    assert again.stdout == first.stdout
    # A lock naming a package the repository does not have as locked is refused.
    data = json.loads(first.stdout)
    data["packages"][0]["sha256"] = "0" * 64
    saved.write_text(json.dumps(data))
    bad = lock(cfg, "--lock", saved)
    assert bad.returncode == 1
    assert "locked package binutils-lite-2.41-1.x86_64" in bad.stderr
    saved.write_text('{"kiln_root_lock":1,"arch":"x86_64","packages":[{"name":"x"}]}')
    bad = lock(cfg, "--lock", saved)
    assert bad.returncode == 1
    assert "lock.json" in bad.stderr and "packages[0]" in bad.stderr


SPEC = """Name: needs-things
Version: 1
Release: 1
Summary: s
License: MIT
BuildRequires: pkgconfig(zlib) >= 1.3
BuildRequires: /usr/share/docfile/README
BuildRequires: (python-a or python-b)
BuildConflicts: python-a
%description
d
%files
"""


def test_lock_with_a_specs_buildrequires(kiln, lock, tmp_path, repo):
    cfg = write_config(tmp_path / "t.cfg", repo, "shell")
    spec = tmp_path / "needs-things.spec"
    spec.write_text(SPEC)
    r = lock(cfg, spec, "--json")
    assert r.returncode == 0, r.stderr
    # The file dependency is outside primary's subset: filelists were read for it; the
    # BuildConflicts keeps python-a out, so the rich dependency takes python-b.
    assert nevras(r.stdout) == ["docfile-1-1.noarch", "libz-1.3-1.x86_64",
                                "python-b-3.12-1.noarch", "shell-5.2-1.x86_64",
                                "zdev-1.3-1.x86_64"]
    # The same from the source package.
    b = kiln("build", "-bs", "--define", f"_topdir {tmp_path / 'top'}", spec)
    assert b.returncode == 0, b.stderr
    srpm = next((tmp_path / "top" / "SRPMS").glob("*.src.rpm"))
    s = lock(cfg, srpm, "--json")
    assert s.returncode == 0, s.stderr
    assert s.stdout == r.stdout


def test_unsatisfiable_names_the_packages(lock, tmp_path, repo):
    r = lock(write_config(tmp_path / "t.cfg", repo, "both-bins"))
    assert r.returncode == 1
    assert "cannot install both binutils-lite-2.41-1.x86_64 and binutils-lite-2.39-1.x86_64" \
        in r.stderr
    assert "package both-bins-1-1.noarch requires needs-old-bin" in r.stderr
    r = lock(write_config(tmp_path / "u.cfg", repo, "shell no-such-package"))
    assert r.returncode == 1
    assert "nothing provides requested no-such-package" in r.stderr


def test_bad_config_names_file_and_line(lock, tmp_path, repo):
    cfg = tmp_path / "bad.cfg"
    cfg.write_text("[root]\narch = x86_64\ninstall = shell\n[repo base]\n"
                   f"baseurl = file://{repo['repo']}\ngpgkey = file://{repo['key']}\n"
                   "gpgcheck = perhaps\n")
    r = lock(cfg)
    assert r.returncode == 1
    assert f"{cfg}:7:" in r.stderr and "boolean" in r.stderr


def copy_repo(repo: dict, dest: Path) -> Path:
    shutil.copytree(repo["repo"], dest, symlinks=True)
    return dest


def test_tampered_repomd_is_refused(lock, tmp_path, repo):
    copy = copy_repo(repo, tmp_path / "repo")
    repomd = copy / "repodata" / "repomd.xml"
    repomd.write_text(repomd.read_text().replace("<revision>", "<revision>9"))
    r = lock(write_config(tmp_path / "t.cfg", repo, "shell", baseurl=copy))
    assert r.returncode == 1
    assert "repository base: repomd.xml.asc: signature BAD" in r.stderr
    (copy / "repodata" / "repomd.xml.asc").unlink()
    r = lock(write_config(tmp_path / "t.cfg", repo, "shell", baseurl=copy))
    assert r.returncode == 1
    assert "repomd.xml is not signed" in r.stderr


def test_tampered_primary_is_refused(lock, tmp_path, repo):
    copy = copy_repo(repo, tmp_path / "repo")
    primary = next((copy / "repodata").glob("*-primary.xml.gz"))
    data = bytearray(primary.read_bytes())
    data[-9] ^= 0xff  # the gzip trailer's CRC: same size, other bytes
    primary.write_bytes(bytes(data))
    r = lock(write_config(tmp_path / "t.cfg", repo, "shell", baseurl=copy))
    assert r.returncode == 1
    assert "primary.xml.gz" in r.stderr and "mismatch" in r.stderr


def test_download_verifies_packages(kiln, lock, tmp_path, repo):
    cfg = write_config(tmp_path / "t.cfg", repo, "zdev")
    r = lock(cfg, "--download", tmp_path / "dl")
    assert r.returncode == 0, r.stderr
    got = sorted(p.name for p in (tmp_path / "dl" / "base").iterdir())
    assert got == ["libz-1.3-1.x86_64.rpm", "zdev-1.3-1.x86_64.rpm"]
    # A package whose bytes changed after the metadata was signed is refused. (With the
    # cache above it would never be read: the cache has the locked bytes by sha256.)
    copy = copy_repo(repo, tmp_path / "repo")
    victim = copy / "Packages" / "zdev-1.3-1.x86_64.rpm"
    victim.write_bytes(victim.read_bytes() + b"\0")
    r = kiln("root", "lock", write_config(tmp_path / "u.cfg", repo, "zdev", baseurl=copy),
             "--download", tmp_path / "dl2", env={"KILN_CACHE_DIR": str(tmp_path / "c2")})
    assert r.returncode == 1
    assert "package zdev-1.3-1.x86_64" in r.stderr and "mismatch" in r.stderr
    assert not (tmp_path / "dl2" / "base" / "zdev-1.3-1.x86_64.rpm").exists()


def test_unsigned_package_is_refused(kiln, lock, tmp_path, repo):
    copy = copy_repo(repo, tmp_path / "repo")
    victim = copy / "Packages" / "libz-1.3-1.x86_64.rpm"
    assert kiln("sign", "--delete", victim).returncode == 0
    # Metadata made again over the unsigned package and signed: only gpgcheck can tell.
    assert kiln("repo", "regenerate", "--dir", copy, "--key", repo["secret"]).returncode == 0
    r = lock(write_config(tmp_path / "t.cfg", repo, "zdev", baseurl=copy),
             "--download", tmp_path / "dl")
    assert r.returncode == 1
    assert "package libz-1.3-1.x86_64 from repository base" in r.stderr
    assert "NOTFOUND" in r.stderr or "no good signature" in r.stderr


def test_rich_and_request_installs_both(lock, tmp_path, repo):
    # Where kiln and dnf 4.14 differ (docs/roots.md): `dnf install '(editor-b and shell)'`
    # installs editor-b alone; the dependency means both, and kiln installs both.
    r = lock(write_config(tmp_path / "t.cfg", repo, "(editor-b and shell)"), "--json")
    assert r.returncode == 0, r.stderr
    assert nevras(r.stdout) == ["editor-b-1-1.noarch", "shell-5.2-1.x86_64"]


# ---- Debian's dnf as the oracle -----------------------------------------------------------

REQUESTS = sorted({name for name, _, _, _ in rootsrepo.UNIVERSE}) + [
    "libz = 1.2", "libz < 1.3", "binutils-lite < 2.40", "epochy < 1:0", "epochy >= 1:0",
    "editor", "libz.so.1()(64bit)", "pkgconfig(zlib)", "pkgconfig(zlib) >= 1.3",
    "old-tool = 2.0", "mta",
    "/usr/bin/sh", "/usr/share/docfile/README", "/etc/thing.conf", "/usr/bin/gcc",
    "/usr/sbin/sendmail", "/usr/bin/ld",
    "(python-a or python-b)", "(python-b or nonexistent-cap)", "(shell or conflicted)",
    "(libz >= 1.3 or shell)",
    "editor-a editor-b", "conflicted shell", "conflicts-new needs-new-bin",
    "old-tool new-tool", "uses-old-tool new-tool", "nonexistent-cap", "with-guile make-lite",
    "langpack-x editor-a", "ifelse-dep with-guile", "toolchain needs-old-bin",
    "needs-editor editor-b",
]

NEVRA = re.compile(r"\b([A-Za-z0-9_.+-]+?-(?:\d+:)?[A-Za-z0-9_.~^+]+-[A-Za-z0-9_.~^+]+"
                   r"\.(?:noarch|x86_64|i686))\b")


def split_request(req: str) -> list:
    """The words dnf gets: rich and versioned requests stay whole."""
    if req.startswith("(") or re.search(r" [<>=]+ ", req):
        return [req]
    return req.split()


def dnf_resolve(repo: dict, work: Path, req: str):
    """(installed NEVRAs, None) or (None, problem words) from dnf --assumeno install."""
    cmd = ["dnf", "-C" if (work / "cache-ready").exists() else "-q",
           f"--installroot={work / 'root'}", "--releasever=1", "--setopt=reposdir=/dev/null",
           f"--setopt=cachedir={work / 'cache'}", f"--repofrompath=t,file://{repo['repo']}",
           "--setopt=t.gpgcheck=0", "--setopt=t.repo_gpgcheck=0", "--setopt=install_weak_deps=0",
           "--setopt=metadata_expire=-1", "--assumeno", "install", *split_request(req)]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    out = r.stdout + r.stderr
    if "Error:" in out:
        return None, problem_words(out)
    rows, on = [], False
    for line in r.stdout.splitlines():
        if line.startswith("Installing"):
            on = not line.startswith("Installing Groups")  # a group is not a package
            continue
        if on and not line.startswith(" "):
            on = False
        if on and line.strip():
            name, arch, evr = line.split()[:3]
            rows.append(f"{name}-{evr}.{arch}")
    return sorted(rows), None


def problem_words(text: str) -> set:
    words = set(NEVRA.findall(text))
    words |= {f"missing:{m}" for m in re.findall(r"nothing provides (?:requested )?(\S+)", text)}
    words |= {f"missing:{m}" for m in re.findall(r"Unable to find a match: (.+)", text)}
    return words


def kiln_resolve(kiln, repo, work: Path, req: str):
    cfg = write_config(work / "r.cfg", repo, " ".join(split_request(req)))
    r = kiln("root", "lock", cfg, "--json", env={"KILN_CACHE_DIR": str(work / "kc")})
    if r.returncode == 0:
        return sorted(nevras(r.stdout)), None
    assert "cannot resolve the root" in r.stderr, r.stderr
    return None, problem_words(r.stderr)


@pytest.mark.skipif(not shutil.which("dnf"), reason="dnf is not installed (scripts/deps.sh)")
def test_resolution_agrees_with_dnf(kiln, tmp_path, repo):
    assert len(REQUESTS) >= 50
    # Fill dnf's metadata cache once; then each run reads it (-C) in a root of its own.
    warm = tmp_path / "warm"
    dnf_resolve(repo, warm, "shell")
    results = {}

    def one(i_req):
        i, req = i_req
        work = tmp_path / f"r{i}"
        shutil.copytree(warm / "cache", work / "cache")
        (work / "cache-ready").touch()
        return req, dnf_resolve(repo, work, req), kiln_resolve(kiln, repo, work, req)

    with ThreadPoolExecutor(max_workers=8) as pool:
        for req, want, got in pool.map(one, enumerate(REQUESTS)):
            results[req] = (want, got)
    failures = 0
    for req, (want, got) in results.items():
        if want[0] is not None:
            assert got[0] == want[0], f"{req}: kiln {got} != dnf {want}"
        else:
            failures += 1
            assert got[0] is None, f"{req}: kiln resolved {got[0]}, dnf failed {want[1]}"
            assert got[1] == want[1], f"{req}: kiln names {got[1]}, dnf {want[1]}"
    # The universe has unsatisfiable requests of each kind; they must have been compared.
    assert failures >= 6


FIXTURE_REQUESTS = ["@buildsys-build", "gcc", "rpm", "make pkgconf", "libc6-dev", "/usr/bin/gcc",
                    "(busybox or coreutils)", "bash tar gzip", "no-such-package"]


@pytest.mark.skipif(not shutil.which("dnf"), reason="dnf is not installed (scripts/deps.sh)")
def test_fixture_distribution_agrees_with_dnf(kiln, tmp_path, request):
    """The fixture distribution (Debian's toolchain as RPMs, with the comps group mock's
    configs install) resolves as dnf resolves it."""
    try:
        deb = request.getfixturevalue("debrpm_repo")
    except pytest.FixtureLookupError:
        pytest.skip("the fixture distribution (tests/fixtures/debrpm.py) is not in this tree")
    repo = {"repo": deb.repo, "key": deb.key}
    warm = tmp_path / "warm"
    dnf_resolve(repo, warm, "bash")
    for i, req in enumerate(FIXTURE_REQUESTS):
        work = tmp_path / f"r{i}"
        shutil.copytree(warm / "cache", work / "cache")
        (work / "cache-ready").touch()
        want = dnf_resolve(repo, work, req)
        got = kiln_resolve(kiln, repo, work, req)
        assert got == want, f"{req}: kiln {got} != dnf {want}"


NEWER_BIN = """Name: binutils-lite
Version: 2.42
Release: 1
Summary: a newer ld
License: MIT
%description
x
%install
mkdir -p %{buildroot}/usr/bin
echo 2.42 > %{buildroot}/usr/bin/ld
%files
/usr/bin/ld
"""


def test_resolution_is_cached_until_a_repomd_changes(kiln, tmp_path, repo):
    """A resolution is kept in the cache directory, keyed by the configuration, every
    repository's repomd.xml (read and its signature checked on every call) and the
    requests: unchanged repositories give the lock without reading the rest of the
    metadata; a changed repomd.xml is resolved again."""
    copy = copy_repo(repo, tmp_path / "repo")
    cfg = write_config(tmp_path / "t.cfg", repo, "needs-new-bin", baseurl=copy)
    cache = tmp_path / "c"
    env = {"KILN_CACHE_DIR": str(cache)}
    first = kiln("root", "lock", "--json", cfg, env=env)
    assert first.returncode == 0, first.stderr
    assert "resolution cache" not in first.stderr
    assert "binutils-lite-2.41-1.x86_64" in nevras(first.stdout)
    # Nothing but repomd.xml is needed now: the metadata gone from the repository and the
    # source cache, the same lock comes from the resolution cache.
    for p in (copy / "repodata").iterdir():
        if not p.name.startswith("repomd.xml"):
            p.unlink()
    for p in cache.iterdir():
        if p.name != "roots":
            shutil.rmtree(p) if p.is_dir() else p.unlink()
    again = kiln("root", "lock", "--json", cfg, env=env)
    assert again.returncode == 0, again.stderr
    assert again.stdout == first.stdout
    ident = hashlib.sha256(first.stdout.encode()).hexdigest()
    assert f"root t: lock {ident} from the resolution cache" in again.stderr
    # The signature is still checked every time.
    asc = copy / "repodata" / "repomd.xml.asc"
    good_sig = asc.read_bytes()
    asc.write_bytes((repo["repo"] / "repodata" / "repomd.xml.asc").read_bytes()[:-40] +
                    b"=\n-----END PGP SIGNATURE-----\n")
    bad = kiln("root", "lock", cfg, env=env)
    assert bad.returncode == 1 and "repomd.xml.asc" in bad.stderr, bad.stderr
    asc.write_bytes(good_sig)
    # A newer binutils-lite published: the repository's metadata made again and signed.
    shutil.rmtree(copy)
    copy_repo(repo, copy)
    spec = tmp_path / "newer.spec"
    spec.write_text(NEWER_BIN)
    top = tmp_path / "top"
    b = kiln("build", "-bb", "--define", f"_topdir {top}", spec,
             env={"SOURCE_DATE_EPOCH": "1700000000"})
    assert b.returncode == 0, b.stderr
    rpm = next((top / "RPMS").rglob("binutils-lite-2.42-1.*.rpm"))
    assert kiln("sign", "--key", repo["secret"], rpm).returncode == 0
    shutil.copy(rpm, copy / "Packages" / rpm.name)
    g = kiln("repo", "regenerate", "--dir", copy, "--key", repo["secret"])
    assert g.returncode == 0, g.stderr
    fresh = kiln("root", "lock", "--json", cfg, env=env)
    assert fresh.returncode == 0, fresh.stderr
    assert "resolution cache" not in fresh.stderr
    assert "binutils-lite-2.42-1.x86_64" in nevras(fresh.stdout)
    # A lock given back is checked once per repository state too.
    saved = tmp_path / "lock.json"
    saved.write_text(fresh.stdout)
    c1 = kiln("root", "lock", "--json", "--lock", saved, cfg, env=env)
    c2 = kiln("root", "lock", "--json", "--lock", saved, cfg, env=env)
    assert c1.returncode == 0 and c2.returncode == 0, c1.stderr + c2.stderr
    assert c1.stdout == c2.stdout == fresh.stdout
    assert "resolution cache" in c2.stderr
    # The lock resolved before the change is checked against the new state afresh (2.41
    # is still in the repository, so it passes).
    saved.write_text(first.stdout)
    old = kiln("root", "lock", "--lock", saved, cfg, env=env)
    assert old.returncode == 0, old.stderr
