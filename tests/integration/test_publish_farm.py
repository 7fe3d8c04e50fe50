"""Publishing from the farm (scheduler/publish.c): succeeded jobs land in the repository they
name, laid out as ARCH/Packages/L/FILE and SRPMS/, served read-only at /repos/ with Range
and ETag; real dnf installs from it over HTTP with gpgcheck=1 and repo_gpgcheck=1; the
reproducibility verdict gates publishing; retention, removal, v6 repositories; the
scheduler killed in the middle of publishes leaves a readable repository."""
import gzip
import hashlib
import json
import os
import random
import re
import shutil
import subprocess
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from farm import Scheduler
from test_farm_e2e import FAST, Worker, spec, submit

REPO_NS = {"r": "http://linux.duke.edu/metadata/repo"}

BIG = """Name: farm-big
Version: 1
Release: 1
Summary: a big package (reading it makes a publish take a while)
License: MIT
BuildArch: noarch
%define _binary_payload w1.gzdio
%description
d
%install
mkdir -p %{buildroot}/usr/share/big
head -c 32M /dev/urandom > %{buildroot}/usr/share/big/blob
%files
/usr/share/big/blob
"""

LEAKY = """Name: farm-leaky
Version: 1
Release: 1
Summary: not reproducible
License: MIT
BuildArch: noarch
%description
d
%install
mkdir -p %{buildroot}/usr/share/leaky
date +%s%N > %{buildroot}/usr/share/leaky/stamp
%files
/usr/share/leaky/stamp
"""


def start(kiln_bin, data, repos):
    return Scheduler(kiln_bin, data, *FAST, f"repositories.main={repos}/main",
                     "publish.keep_versions=2", f"publish.retire_after={RETIRE_S}s").start()


RETIRE_S = 1  # publish.retire_after here; the default is a day


@pytest.fixture(scope="module")
def farm(kiln_bin, tmp_path_factory):
    base = tmp_path_factory.mktemp("pubfarm")
    s = start(kiln_bin, base / "data", base / "repos")
    w = Worker(kiln_bin, s, "pw1", base / "pw1")
    yield s, w, base
    w.stop()
    s.stop()


def wait_published(s, repo, pred, timeout=60):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        r = s.call("GET", f"/api/v1/repos/{repo}")
        assert r.status == 200, r.body
        doc = r.json()
        if doc["last_publish_ms"] and pred(doc):
            # the publish that follows a change may still be running: let it end
            r2 = s.call("POST", f"/api/v1/repos/{repo}/regenerate?wait=1")
            assert r2.status == 200, r2.body
            return r2.json()
        time.sleep(0.2)
    raise AssertionError(f"{repo}: never published as expected: {doc}")


def run_job(s, text, name, **kw):
    jid = submit(s, text, name, repository="main", source_date_epoch=1700000000, **kw)
    j = s.wait_state(jid, ("succeeded", "failed", "cancelled"), timeout=180)
    assert j["state"] == "succeeded", j
    return jid


def files_of(doc):
    return sorted(p["file"] for p in doc["packages"])


def check_repodata(d):
    """repomd.xml and every file it names agree (what a client checks)."""
    root = ET.parse(d / "repodata" / "repomd.xml").getroot()
    for data in root.findall("r:data", REPO_NS):
        raw = (d / data.find("r:location", REPO_NS).get("href")).read_bytes()
        assert hashlib.sha256(raw).hexdigest() == data.find("r:checksum", REPO_NS).text
    return root.find("r:revision", REPO_NS).text


def dnf(root, reposd, *args, check=True):
    r = subprocess.run(["dnf", "-y", f"--installroot={root}", f"--setopt=cachedir={root}-cache",
                        f"--setopt=reposdir={reposd}", "--releasever=1", *args],
                       capture_output=True, text=True, timeout=120)
    assert not check or r.returncode == 0, r.stdout + r.stderr
    return r


def test_dnf_installs_from_the_farm_over_http(farm, tmp_path):
    s, _, base = farm
    jid = run_job(s, spec("1"), "farm-hello.spec")
    doc = wait_published(s, "main", lambda d: d["package_count"] >= 2)
    arch = os.uname().machine
    assert doc["arches"] and set(doc["arches"]) <= {"noarch", "src"}
    names = files_of(doc)
    assert "farm-hello-1-1.noarch.rpm" in names and "farm-hello-1-1.src.rpm" in names
    for p in doc["packages"]:
        assert p["job_id"] == jid and len(p["sha256"]) == 64 and p["size"] > 0
        assert p["nevra"] in ("farm-hello-1-1.noarch", "farm-hello-1-1.src")
    repo = base / "repos" / "main"
    assert (repo / arch / "Packages" / "f" / "farm-hello-1-1.noarch.rpm").is_file()
    assert (repo / "SRPMS" / "farm-hello-1-1.src.rpm").is_file()
    assert int(check_repodata(repo / arch)) == 1700000000
    check_repodata(repo / "SRPMS")
    # the list endpoint (what the dashboard reads)
    lst = s.call("GET", "/api/v1/repos").json()["repositories"]
    main = next(r for r in lst if r["name"] == "main")
    assert main["package_count"] == doc["package_count"] and main["revision"] == 1700000000
    assert any(r["name"] == "main-v6" for r in lst)

    # dnf with the .repo file the scheduler serves: gpgcheck=1, repo_gpgcheck=1, the key
    # fetched from the repository
    repofile = s.call("GET", "/repos/main/main.repo", token="")
    assert repofile.status == 200
    text = repofile.body.decode()
    assert "gpgcheck=1" in text and "repo_gpgcheck=1" in text and "RPM-GPG-KEY-main" in text
    reposd = tmp_path / "reposd"
    reposd.mkdir()
    (reposd / "main.repo").write_text(text)
    root = tmp_path / "root"
    out = dnf(root, reposd, "install", "farm-hello")
    assert (root / "usr/share/farm/hello-1.txt").read_text() == "built-1\n", out.stdout
    q = subprocess.run(["rpm", "--root", str(root), "-q", "gpg-pubkey"], capture_output=True,
                       text=True)
    assert q.stdout.startswith("gpg-pubkey-"), q.stdout + q.stderr
    # repoquery lists every published binary package, with its provides
    rq = dnf(root, reposd, "repoquery", "--qf", "%{name}-%{evr}.%{arch}").stdout.split()
    assert rq == ["farm-hello-1-1.noarch"]
    prov = dnf(root, reposd, "repoquery", "--provides", "farm-hello").stdout.split("\n")
    pkg = repo / arch / "Packages" / "f" / "farm-hello-1-1.noarch.rpm"
    want = subprocess.run(["rpm", "-qp", "--provides", str(pkg)], capture_output=True,
                          text=True).stdout.split("\n")
    assert sorted(x for x in prov if x) == sorted(x for x in want if x)

    # a tampered repomd.xml is refused by dnf (repo_gpgcheck)
    md = repo / arch / "repodata" / "repomd.xml"
    good = md.read_bytes()
    md.write_bytes(good.replace(b"<revision>", b"<revision>9"))
    bad = dnf(tmp_path / "root2", reposd, "--setopt=skip_if_unavailable=False", "makecache",
              check=False)
    md.write_bytes(good)
    assert bad.returncode != 0 and "Bad GPG signature" in bad.stdout + bad.stderr


def test_zypper_installs_from_the_farm(farm, tmp_path):
    """zypper 1.14 (Debian's) reads the same repository: the key from
    repodata/repomd.xml.key, repomd.xml.asc checked, the package signature checked."""
    if not shutil.which("zypper"):
        pytest.skip("zypper is not installed (scripts/deps.sh installs it)")
    s, _, _ = farm
    wait_published(s, "main", lambda d: d["package_count"] >= 2)
    root = tmp_path / "zroot"

    def z(*args):
        r = subprocess.run(["zypper", "--root", str(root), "--non-interactive", *args],
                           capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stdout + r.stderr
        return r.stdout

    z("addrepo", "--gpgcheck", f"{s.url}/repos/main/{os.uname().machine}/", "kiln-main")
    z("--gpg-auto-import-keys", "refresh")
    assert "farm-hello" in z("search", "-s", "farm-hello")
    z("install", "--no-recommends", "farm-hello")
    assert (root / "usr/share/farm").is_dir()


def test_served_with_etag_and_range(farm):
    s, _, _ = farm
    wait_published(s, "main", lambda d: d["package_count"] >= 2)
    arch = os.uname().machine
    path = f"/repos/main/{arch}/repodata/repomd.xml"
    full = s.call("GET", path, token="")
    assert full.status == 200 and full.headers["Accept-Ranges"] == "bytes"
    etag = full.headers["ETag"]
    assert etag.startswith('"')
    assert s.call("GET", path, token="", headers={"If-None-Match": etag}).status == 304
    part = s.call("GET", path, token="", headers={"Range": "bytes=5-14"})
    assert part.status == 206 and part.body == full.body[5:15]
    assert part.headers["Content-Range"] == f"bytes 5-14/{len(full.body)}"
    tail = s.call("GET", path, token="", headers={"Range": "bytes=-7"})
    assert tail.status == 206 and tail.body == full.body[-7:]
    r = s.call("GET", path, token="", headers={"Range": f"bytes={len(full.body) + 10}-"})
    assert r.status == 416 and r.headers["Content-Range"] == f"bytes */{len(full.body)}"
    for bad in ("/repos/main/../data/kiln.db", "/repos/main/%2e%2e/x",
                f"/repos/main/{arch}/.repodata-gens", "/repos/nope/x", "/repos/main/"):
        assert s.call("GET", bad, token="").status == 404, bad


def test_retention_removal_and_v6(farm, kiln_bin):
    s, _, base = farm
    for v in ("2", "3"):
        run_job(s, spec(v), "farm-hello.spec")
    doc = wait_published(s, "main", lambda d: "farm-hello-3-1.noarch.rpm" in files_of(d))
    # keep_versions = 2: version 1 retired, at once from the metadata
    assert [f for f in files_of(doc) if f.endswith("noarch.rpm")] == [
        "farm-hello-2-1.noarch.rpm", "farm-hello-3-1.noarch.rpm"]
    arch = os.uname().machine
    repo = base / "repos" / "main"
    pk = repo / arch / "Packages" / "f"
    check_repodata(repo / arch)

    def on_disk():
        return sorted(p.name for p in pk.iterdir())

    def regenerate_after_retirement():
        time.sleep(RETIRE_S + 0.2)
        assert s.call("POST", "/api/v1/repos/main/regenerate?wait=1").status == 200

    # ... and from the disk once retire_after has passed (clients holding the metadata from
    # before could still download it meanwhile)
    regenerate_after_retirement()
    assert on_disk() == ["farm-hello-2-1.noarch.rpm", "farm-hello-3-1.noarch.rpm"]
    assert not (repo / ".kiln-retired").exists()
    env = dict(os.environ, KILN_URL=s.url, KILN_TOKEN=s.admin)
    # Text for people, the server's JSON with --json.
    r = subprocess.run([str(kiln_bin), "repo", "show", "main"], capture_output=True, text=True,
                       env=env)
    assert r.returncode == 0, r.stderr
    assert "repository: main\npackages: 4\n" in r.stdout, r.stdout  # the src.rpms too
    assert re.search(r"^farm-hello-3-1\.noarch +\d+ +\d+  [0-9a-f]{16}$", r.stdout, re.M), r.stdout
    r = subprocess.run([str(kiln_bin), "repo", "remove-package", "main", "farm-hello-3-1.noarch"],
                       capture_output=True, text=True, env=env)
    assert r.returncode == 0 and r.stdout == "removed 1 package from main\n", r.stdout + r.stderr
    r = subprocess.run([str(kiln_bin), "repo", "show", "--json", "main"], capture_output=True,
                       text=True, env=env)
    assert "farm-hello-3-1.noarch.rpm" not in files_of(json.loads(r.stdout))
    # Out of the metadata, still served, recorded as retired; a dot file is never served.
    check_repodata(repo / arch)
    primary = b"".join(p.read_bytes() for p in (repo / arch / "repodata").glob("*primary*"))
    assert b"farm-hello-2-1" in gzip.decompress(primary) and \
        b"farm-hello-3-1" not in gzip.decompress(primary)
    assert "farm-hello-3-1.noarch.rpm" in on_disk()
    assert f"{arch}/Packages/f/farm-hello-3-1.noarch.rpm" in (repo / ".kiln-retired").read_text()
    got = s.call("GET", f"/repos/main/{arch}/Packages/f/farm-hello-3-1.noarch.rpm", token="")
    assert got.status == 200
    assert s.call("GET", "/repos/main/.kiln-retired", token="").status == 404
    regenerate_after_retirement()
    assert on_disk() == ["farm-hello-2-1.noarch.rpm"]
    assert not (repo / ".kiln-retired").exists()
    m = s.call("GET", "/metrics", token="").body.decode()
    count = re.search(r"^kiln_publish_seconds_count (\d+)$", m, re.M)
    assert count and int(count.group(1)) >= 4, m
    assert re.search(r"^kiln_publish_failures_total 0$", m, re.M), m
    r = subprocess.run([str(kiln_bin), "repo", "remove-package", "main", "nothing-1-1.noarch"],
                       capture_output=True, text=True, env=env)
    assert r.returncode == 1 and "no package" in r.stderr
    r = subprocess.run([str(kiln_bin), "repo", "list"], capture_output=True, text=True, env=env)
    assert r.returncode == 0 and r.stdout.startswith("NAME "), r.stdout
    rows = {line.split()[0]: line.split() for line in r.stdout.splitlines()[1:]}
    r = subprocess.run([str(kiln_bin), "repo", "list", "--json"], capture_output=True,
                       text=True, env=env)
    repos = {x["name"]: x for x in json.loads(r.stdout)["repositories"]}
    assert set(rows) == set(repos) >= {"main", "main-v6"}
    for name, row in rows.items():
        assert row[1] == str(repos[name]["package_count"]), (row, repos[name])
    assert rows["main"][-1] == ",".join(repos["main"]["arches"])
    # a v6 package goes to its own repository
    run_job(s, spec("6"), "farm-hello.spec", formats=["v6"])
    v6 = wait_published(s, "main-v6", lambda d: d["package_count"] >= 2)
    assert "farm-hello-6-1.noarch.rpm" in files_of(v6)
    assert "farm-hello-6-1.noarch.rpm" not in files_of(s.call("GET", "/api/v1/repos/main").json())
    check_repodata(base / "repos" / "main-v6" / arch)


def test_reproducibility_verdict_gates_publishing(farm):
    s, _, _ = farm
    good = run_job(s, spec("7"), "farm-hello.spec", reruns=1)
    bad = run_job(s, LEAKY, "farm-leaky.spec", reruns=1)
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline:
        verdicts = [s.job(j)["reproducibility"] for j in (good, bad)]
        if "pending" not in verdicts:
            break
        time.sleep(0.3)
    assert verdicts == ["reproducible", "differs"], verdicts
    doc = wait_published(s, "main", lambda d: "farm-hello-7-1.noarch.rpm" in files_of(d))
    assert not any(f.startswith("farm-leaky") for f in files_of(doc))


def test_kill_during_publish_leaves_a_readable_repository(kiln_bin, tmp_path):
    data, repos = tmp_path / "data", tmp_path / "repos"
    s = start(kiln_bin, data, repos)
    w = Worker(kiln_bin, s, "kw1", tmp_path / "kw1")
    try:
        run_job(s, BIG, "farm-big.spec")
        run_job(s, spec("1"), "farm-hello.spec")
        wait_published(s, "main", lambda d: d["package_count"] >= 4)
        w.stop()
        arch = os.uname().machine
        d = repos / "main" / arch
        rev = check_repodata(d)
        interrupted = 0
        rng = random.Random(11)
        for _ in range(3):
            # a regenerate rewrites the whole generation: kill the scheduler in the middle
            s.call("POST", "/api/v1/repos/main/regenerate")
            time.sleep(rng.uniform(0.005, 0.15))
            s.kill()
            gens = d / ".repodata-gens"
            interrupted += any(p.name.startswith("tmp-") for p in gens.iterdir())
            assert check_repodata(d) == rev  # the previous generation, whole
            s = start(kiln_bin, data, repos)
        # after the restart the next publish completes and cleans up
        wait_published(s, "main", lambda doc: doc["package_count"] >= 4)
        assert not any(p.name.startswith("tmp-") for p in (d / ".repodata-gens").iterdir())
        reposd = tmp_path / "reposd"
        reposd.mkdir()
        (reposd / "main.repo").write_text(s.call("GET", "/repos/main/main.repo").body.decode())
        out = dnf(tmp_path / "root", reposd, "repoquery", "--qf", "%{name}").stdout.split()
        assert sorted(out) == ["farm-big", "farm-hello"]
        print(f"kills that interrupted a publish: {interrupted} of 3")
    finally:
        s.stop()
