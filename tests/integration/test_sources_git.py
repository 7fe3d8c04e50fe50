"""`kiln fetch --git`: mirrors, refs resolved to commits, dist-git checkouts and deterministic
tarballs, against repositories made here by git, over file:// and smart HTTP on loopback
(git-http-backend behind tests/integration/srcserver.py). `git archive` is the oracle for
the tar bytes.
"""
import gzip
import hashlib
import os
import subprocess
from pathlib import Path

import pytest

from srcserver import Server

GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.org",
           "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1"}

SPEC = """Name: bar
Version: {version}
Release: 1
Summary: s
License: MIT
Source0: %{{name}}-%{{version}}.tar.gz
Source1: extra.txt
%description
d
"""


def git(repo, *args, date="2024-05-06T07:08:09Z", **kw):
    env = dict(os.environ, **GIT_ENV, GIT_AUTHOR_DATE=date, GIT_COMMITTER_DATE=date)
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                          env=env, **kw).stdout


def rev(repo, ref):
    return git(repo, "rev-parse", f"{ref}^{{commit}}", text=True).strip()


def commit_all(repo, msg, date="2024-05-06T07:08:09Z"):
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", msg, date=date)


@pytest.fixture
def repo(tmp_path):
    r = tmp_path / "bar"
    r.mkdir()
    git(r, "init", "-q", "-b", "main")
    (r / "bar.spec").write_text(SPEC.format(version="1.0"))
    (r / "extra.txt").write_text("extra\n")
    (r / "src").mkdir()
    (r / "src" / "main.c").write_text("int main(void) { return 0; }\n")
    (r / "configure").write_text("#!/bin/sh\necho ok\n")
    (r / "configure").chmod(0o755)
    os.symlink("src/main.c", r / "link")
    commit_all(r, "one")
    git(r, "tag", "v1.0")
    (r / "bar.spec").write_text(SPEC.format(version="1.1"))
    (r / "NEWS").write_text("1.1\n")
    commit_all(r, "two", date="2024-06-01T00:00:00Z")
    git(r, "tag", "-a", "-m", "release", "v1.1")
    return r


@pytest.fixture
def gfetch(kiln, tmp_path):
    def run(*args, cache=None, **kw):
        return kiln("fetch", "--cache", cache or tmp_path / "cache", "--no-progress", *args,
                    **kw)

    return run


def archive(repo, ref, prefix):
    return git(repo, "archive", "--format=tar", f"--prefix={prefix}", ref)


def commit_line(out):
    return [line for line in out.splitlines() if line.startswith("commit: ")][0][8:]


def test_checkout_from_tag_makes_tarball(gfetch, repo, tmp_path):
    co = tmp_path / "co"
    r = gfetch("--git", f"file://{repo}", "--ref", "v1.0", "--checkout", co)
    assert r.returncode == 0, r.stderr
    assert commit_line(r.stdout) == rev(repo, "v1.0")
    assert (co / "bar.spec").read_text() == SPEC.format(version="1.0")
    assert (co / "configure").stat().st_mode & 0o777 == 0o755
    assert os.readlink(co / "link") == "src/main.c"
    assert not (co / "NEWS").exists() and not (co / ".git").exists()
    # Source0 is not in the repository: made from the commit, as git archive would.
    tarball = co / "bar-1.0.tar.gz"
    assert "Source0: " in r.stdout and "made from git" in r.stdout
    assert gzip.decompress(tarball.read_bytes()) == archive(repo, "v1.0", "bar-1.0/")
    assert "Source1: " in r.stdout and "present" in r.stdout


def test_checkout_from_commit_and_head(gfetch, repo, tmp_path):
    first = rev(repo, "v1.0")
    for ref in (first, first[:10]):
        co = tmp_path / f"co-{len(ref)}"
        r = gfetch("--git", str(repo), "--ref", ref, "--checkout", co)
        assert r.returncode == 0, r.stderr
        assert commit_line(r.stdout) == first
    # No ref: the remote's HEAD (main, the second commit; an annotated tag peels to it).
    r = gfetch("--git", f"file://{repo}", "--checkout", tmp_path / "head")
    assert r.returncode == 0, r.stderr
    assert commit_line(r.stdout) == rev(repo, "main") == rev(repo, "v1.1")
    assert (tmp_path / "head" / "bar-1.1.tar.gz").is_file()


def test_tarballs_are_identical_across_dirs_and_times(gfetch, repo, tmp_path):
    outs = []
    for i, env in enumerate(({"TZ": "UTC"}, {"TZ": "Asia/Tokyo", "SOURCE_DATE_EPOCH": "5"})):
        out = tmp_path / f"dir{i}" / "bar-1.1.tar.gz"
        out.parent.mkdir()
        r = gfetch("--git", f"file://{repo}", "--ref", "v1.1", "--archive", out, "--prefix",
                   "bar-1.1/", cache=tmp_path / f"cache{i}", env=env)
        assert r.returncode == 0, r.stderr
        os.utime(repo / "NEWS", (12345, 12345))  # touching the work tree changes nothing
        outs.append(out.read_bytes())
    assert outs[0] == outs[1]
    data = outs[0]
    # gzip header: no name flag, mtime 0
    assert data[:3] == b"\x1f\x8b\x08" and data[3] == 0 and data[4:8] == b"\0\0\0\0"
    assert gzip.decompress(data) == archive(repo, "v1.1", "bar-1.1/")


def test_tar_layout_edge_cases_match_git_archive(gfetch, tmp_path):
    r = tmp_path / "edge"
    r.mkdir()
    git(r, "init", "-q", "-b", "main")
    deep = r / ("d" * 60) / ("e" * 60) / ("f" * 60)
    deep.mkdir(parents=True)
    (deep / "file.txt").write_text("deep\n")  # > 100 bytes: ustar prefix split
    (r / ("n" * 120)).write_text("long name\n")  # no '/' to split at: a pax path record
    os.symlink("t" * 150, r / "longlink")  # > 100 bytes target: a pax linkpath record
    (r / "empty").write_bytes(b"")
    (r / "a.sh").write_text("#!/bin/sh\n")
    (r / "a.sh").chmod(0o755)
    (r / "bigger").write_bytes(os.urandom(70_000))
    git(r, "add", "-A")
    # A submodule entry (gitlink): an empty directory in the archive.
    git(r, "update-index", "--add", "--cacheinfo",
        "160000,1234567890123456789012345678901234567890,sub")
    git(r, "commit", "-q", "-m", "edge")
    out = tmp_path / "edge.tar.gz"
    res = gfetch("--git", str(r), "--archive", out, "--prefix", "edge-1/")
    assert res.returncode == 0, res.stderr
    assert gzip.decompress(out.read_bytes()) == archive(r, "HEAD", "edge-1/")
    out2 = tmp_path / "noprefix.tar.gz"
    assert gfetch("--git", str(r), "--archive", out2).returncode == 0
    assert gzip.decompress(out2.read_bytes()) == archive(r, "HEAD", "")


def test_moved_tag_is_noticed(gfetch, repo, tmp_path):
    url = f"file://{repo}"
    r = gfetch("--git", url, "--ref", "v1.0", "--archive", tmp_path / "a.tgz")
    old = commit_line(r.stdout)
    git(repo, "tag", "-f", "v1.0", "main")  # someone moved the tag upstream
    r = gfetch("--git", url, "--ref", "v1.0", "--archive", tmp_path / "b.tgz")
    assert r.returncode == 0, r.stderr
    new = rev(repo, "main")
    assert r.stdout.startswith(f"commit: {new} (moved from {old})")
    assert f"tag 'v1.0' moved: it was {old}, it is now {new}" in r.stderr
    # Offline, the mirror answers as it is; without a mirror, the error says so.
    r = gfetch("--git", url, "--ref", "v1.0", "--offline", "--archive", tmp_path / "c.tgz")
    assert r.returncode == 0 and commit_line(r.stdout) == new
    r = gfetch("--git", url, "--offline", "--archive", tmp_path / "d.tgz",
               cache=tmp_path / "empty")
    assert r.returncode == 1 and "offline: no mirror of" in r.stderr


def test_errors(gfetch, repo, tmp_path):
    r = gfetch("--git", str(repo), "--ref", "nope", "--archive", tmp_path / "x.tgz")
    assert r.returncode == 1 and "no ref or commit 'nope'" in r.stderr
    r = gfetch("--git", str(tmp_path / "missing"), "--archive", tmp_path / "x.tgz")
    assert r.returncode == 1 and "cannot fetch" in r.stderr
    assert str(tmp_path / "missing") in r.stderr
    assert not (tmp_path / "x.tgz").exists()
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "f").write_text("x")
    r = gfetch("--git", str(repo), "--checkout", tmp_path / "busy")
    assert r.returncode == 1 and "is not empty" in r.stderr


def test_unsafe_tree_names_are_refused(gfetch, tmp_path):
    r = tmp_path / "evil"
    r.mkdir()
    git(r, "init", "-q", "-b", "main")
    blob = git(r, "hash-object", "-w", "--stdin", input=b"x\n").decode().strip()
    try:
        tree = git(r, "mktree", input=f"100644 blob {blob}\t..\n".encode()).decode().strip()
    except subprocess.CalledProcessError:
        pytest.skip("this git refuses to write a tree entry named '..'")
    c = git(r, "commit-tree", tree, "-m", "evil").decode().strip()
    git(r, "update-ref", "refs/heads/main", c)
    res = gfetch("--git", str(r), "--checkout", tmp_path / "out", "--spec", "x.spec")
    assert res.returncode == 1 and "unsafe name '..'" in res.stderr
    assert list((tmp_path / "out").iterdir()) == []


def test_dist_git_over_http(gfetch, tmp_path):
    # A dist-git repository: spec, sources file, patch; the tarball on a lookaside server.
    srv_files = tmp_path / "lookaside"
    srv_files.mkdir()
    tarball = os.urandom(50_000)
    (srv_files / "baz-2.0.tar.gz").write_bytes(tarball)
    gitroot = tmp_path / "gitroot"
    work = tmp_path / "work"
    work.mkdir()
    git(work, "init", "-q", "-b", "rawhide")
    s = Server(srv_files, git_root=gitroot)
    try:
        (work / "baz.spec").write_text(
            "Name: baz\nVersion: 2.0\nRelease: 1\nSummary: s\nLicense: MIT\n"
            f"Source0: {s.base}/files/%{{name}}-%{{version}}.tar.gz\nPatch0: fix.patch\n"
            "%description\nd\n")
        (work / "fix.patch").write_text("--- a\n+++ b\n")
        (work / "sources").write_text(
            f"SHA512 (baz-2.0.tar.gz) = {hashlib.sha512(tarball).hexdigest()}\n")
        commit_all(work, "import")
        gitroot.mkdir()
        subprocess.run(["git", "clone", "-q", "--bare", str(work), str(gitroot / "baz.git")],
                       check=True, capture_output=True)
        url = f"{s.base}/git/baz.git"
        r = gfetch("--git", url, "--checkout", tmp_path / "co")
        assert r.returncode == 0, r.stderr
        assert commit_line(r.stdout) == rev(work, "rawhide")
        assert (tmp_path / "co" / "baz-2.0.tar.gz").read_bytes() == tarball
        assert "checksum verified" in r.stdout and "Patch0: " in r.stdout
        assert any(e[1].startswith("/git/baz.git/info/refs") for e in s.log)
        # The tarball of a commit over http equals git archive's.
        out = tmp_path / "baz.tgz"
        r = gfetch("--git", url, "--ref", "rawhide", "--archive", out, "--prefix", "baz/")
        assert r.returncode == 0, r.stderr
        assert gzip.decompress(out.read_bytes()) == archive(work, "rawhide", "baz/")
    finally:
        s.close()


def test_mirror_is_evicted_by_the_cap(kiln, gfetch, repo, tmp_path):
    cache = tmp_path / "cache"
    assert gfetch("--git", str(repo), "--archive", tmp_path / "a.tgz").returncode == 0
    r = kiln("cache", "--cache", cache)
    assert "git mirrors: 1" in r.stdout
    r = kiln("cache", "--cache", cache, "--gc", "--max-size", "1")
    assert r.returncode == 0 and "1 git mirrors" in r.stdout
    assert list((cache / "git").iterdir()) == []
