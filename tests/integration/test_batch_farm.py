"""Batches on the farm (issue 28): specs submitted together on one root build in the order
their BuildRequires ask, each job's root resolved against the fixture distribution plus the
batch's own repository on the scheduler, so a later level's lock holds exactly the package
the batch built before it; a cycle is refused naming its members and edges; a failure makes
only its dependents dep_failed, and a retry of it puts them back in the queue."""
import hashlib
import json
import os
import re
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest

from farm import Scheduler
from test_farm_e2e import FAST, Worker

CHAIN = Path(__file__).resolve().parent.parent / "data" / "roots" / "chain"


def member(name, **extra):
    return dict(spec=(CHAIN / f"{name}.spec").read_text(), spec_name=f"{name}.spec", **extra)


def wait_batch(s, bid, timeout=900):
    deadline = time.monotonic() + timeout
    while True:
        b = s.call("GET", f"/api/v1/batches/{bid}").json()
        if b["state"] != "building" or time.monotonic() > deadline:
            return b
        time.sleep(0.5)


def by_name(b):
    return {j["name"]: j for j in b["jobs"]}


def log_of(s, jid):
    return s.call("GET", f"/api/v1/jobs/{jid}/attempts/latest/log").body.decode()


@pytest.fixture
def farm(kiln_bin, debrpm_repo, tmp_path):
    work = Path(os.path.realpath(tmp_path))
    cfg = work / "fixture-x86_64.cfg"
    cfg.write_text(debrpm_repo.root_config())
    s = Scheduler(kiln_bin, work / "data", *FAST, "limits.lease_ttl=30",
                  f"repositories.main={work}/repos/main").start()
    w = None
    try:
        w = Worker(kiln_bin, s, "w1", work / "w1", "--root-config", str(cfg))
        yield s, cfg.stem
    finally:
        if w:
            w.stop()
        s.stop()


def test_three_levels_in_reverse_build_in_order_on_the_batch_repository(farm):
    s, root = farm
    r = s.call("POST", "/api/v1/batches", {
        "root": root, "repository": "main",
        "members": [member("chainc"), member("chaind"),
                    member("chainb", reruns=1, source_date_epoch=1700000000),
                    member("chaina")]})
    assert r.status == 201, r.body
    b = r.json()
    assert r.headers["Location"] == f"/api/v1/batches/{b['id']}"
    jobs = by_name(b)
    assert [sorted(jobs[n]["name"] for n in jobs if jobs[n]["id"] in lvl)
            for lvl in b["levels"]] == [["chaina"], ["chainb", "chaind"], ["chainc"]]
    assert jobs["chainb"]["depends_on"] == [jobs["chaina"]["id"]]
    assert jobs["chainc"]["depends_on"] == [jobs["chainb"]["id"]]
    assert jobs["chainc"]["pending"] == 1 and jobs["chaina"]["pending"] == 0
    assert any(e["why"] == "BuildRequires: chaina-devel >= 1.1" for e in b["edges"])
    b = wait_batch(s, b["id"])
    jobs = by_name(b)
    assert b["state"] == "succeeded", {n: (j["state"], j["message"]) for n, j in jobs.items()}
    assert all(j["landed"] and j["pending"] == 0 for j in jobs.values())
    full = {n: s.job(j["id"]) for n, j in jobs.items()}
    # dependency order: nobody started before what it waits for had finished
    for dep, n in (("chaina", "chainb"), ("chaina", "chaind"), ("chainb", "chainc")):
        assert full[n]["started"] >= full[dep]["finished"], (dep, n)
    # the level-2 lock holds chainb-devel as the batch built it, from the batch repository
    lock_id = full["chainc"]["manifest"]["root_lock"]
    lock = s.call("GET", f"/api/v1/blobs/{lock_id}").json()
    arts = s.call("GET", f"/api/v1/jobs/{jobs['chainb']['id']}/artifacts").json()["artifacts"]
    [devel] = [a for a in arts if a["name"] == "chainb-devel-2.0-1.noarch.rpm"]
    [locked] = [p for p in lock["packages"] if p["name"] == "chainb-devel"]
    assert locked["repo"] == "kiln-batch" and locked["sha256"] == devel["sha256"]
    # ...and the batch repository serves that very package, with its metadata
    repo = b["repo_url"]
    assert s.call("GET", repo + "repodata/repomd.xml").status == 200
    pkg = s.call("GET", repo + "chainb-devel-2.0-1.noarch.rpm")
    assert pkg.status == 200 and hashlib.sha256(pkg.body).hexdigest() == devel["sha256"]
    assert s.call("GET", repo + "../../../kiln.db").status == 404
    # every job succeeded, and chainb's rerun (its pinned lock naming chaina-devel from
    # the batch repository) found it reproducible: the batch was published into main
    deadline = time.monotonic() + 600
    while not b["publish"]["state"] and time.monotonic() < deadline:
        time.sleep(0.5)
        b = s.call("GET", f"/api/v1/batches/{b['id']}").json()
    assert s.job(jobs["chainb"]["id"])["reproducibility"] == "reproducible"
    assert b["publish"] == {"state": "published", "message": ""}, b["publish"]
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        doc = s.call("GET", "/api/v1/repos/main").json()
        if doc["last_publish_ms"]:
            break
        time.sleep(0.2)
    files = sorted(p["file"] for p in doc["packages"])
    assert {"chaina-devel-1.2-1.noarch.rpm", "chainb-devel-2.0-1.noarch.rpm",
            "chainc-3.0-1.noarch.rpm", "chaind-3.0-1.noarch.rpm"} <= set(files), files
    r = s.call("POST", f"/api/v1/batches/{b['id']}/publish")
    assert r.status == 409 and "published already" in r.json()["error"]["message"]


def test_a_failure_marks_only_its_dependents_and_a_retry_resumes_them(farm):
    s, root = farm
    r = s.call("POST", "/api/v1/batches", {
        "root": root, "repository": "main",
        "members": [member("chainc"), member("chainb", defines={"chain_fail": "1"}),
                    member("chaind"), member("chaina")]})
    assert r.status == 201, r.body
    bid = r.json()["id"]
    b = wait_batch(s, bid)
    jobs = by_name(b)
    states = {n: j["state"] for n, j in jobs.items()}
    assert states == {"chaina": "succeeded", "chainb": "failed", "chaind": "succeeded",
                      "chainc": "dep_failed"}, states
    c, failed = jobs["chainc"], jobs["chainb"]["id"]
    assert c["waiting_for"] == failed
    job_c = s.job(c["id"])
    assert job_c["state"] == "dep_failed"
    assert job_c["batch"] == {"id": bid, "level": 2, "pending": 1, "waiting_for": failed,
                              "depends_on": [failed]}
    assert f"waits for job {failed} (chainb), which failed" in job_c["message"]
    assert b["state"] == "failed" and b["counts"]["dep_failed"] == 1
    # not published: not every job succeeded (and nothing of it reached main)
    assert b["publish"]["state"] == "refused" and str(failed) in b["publish"]["message"]
    r = s.call("POST", f"/api/v1/batches/{bid}/publish")
    assert r.status == 409 and "is failed" in r.json()["error"]["message"], r.body
    assert s.call("GET", "/api/v1/repos/main").json()["packages"] == []
    # a dep_failed job is retried through the job it waits for
    r = s.call("POST", f"/api/v1/jobs/{c['id']}/retry")
    assert r.status == 409 and str(failed) in r.json()["error"]["message"], r.body
    r = s.call("POST", f"/api/v1/jobs/{failed}/retry")
    assert r.status == 200, r.body
    assert s.job(c["id"])["state"] == "queued"
    assert by_name(s.call("GET", f"/api/v1/batches/{bid}").json())["chainc"]["waiting_for"] \
        is None
    # chainb fails again (the same define): chainc is dep_failed on it again
    b = wait_batch(s, bid)
    assert {n: j["state"] for n, j in by_name(b).items()} == states


def test_kiln_submit_batch_waits_and_prints_the_levels(farm, kiln_bin, tmp_path):
    s, root = farm
    env = dict(os.environ, KILN_URL=s.url, KILN_TOKEN=s.token("submit,read"))
    # a package directory: its spec and, beside it, its sources
    pkg = tmp_path / "chaina"
    pkg.mkdir()
    (pkg / "chaina.spec").write_text((CHAIN / "chaina.spec").read_text())
    (pkg / "notes.txt").write_text("a source nobody reads\n")
    r = subprocess.run([str(kiln_bin), "submit", "--batch", "--root", root, "--wait",
                        str(CHAIN / "chainb.spec"), str(pkg)],
                       capture_output=True, text=True, env=env, timeout=900)
    assert r.returncode == 0, r.stdout + r.stderr
    lines = r.stdout.splitlines()
    assert re.match(r"batch \d+ submitted: 2 jobs on root " + root, lines[0]), r.stdout
    assert re.search(r"level 0: chaina \(job \d+\)\n  level 1: chainb \(job \d+\)", r.stdout)
    assert re.search(r"batch \d+ succeeded", r.stdout)
    bid = int(lines[0].split()[1])
    [a] = [j for j in s.call("GET", f"/api/v1/batches/{bid}").json()["jobs"]
           if j["name"] == "chaina"]
    assert [x["name"] for x in s.job(a["id"])["request"]["sources"]] == ["notes.txt"]
    r = subprocess.run([str(kiln_bin), "submit", "--batch", str(pkg)], capture_output=True,
                       text=True, env=env)
    assert r.returncode != 0 and "--batch needs --root" in r.stderr, r.stderr
    r = subprocess.run([str(kiln_bin), "submit", "--bootstrap", "x", str(pkg)],
                       capture_output=True, text=True, env=env)
    assert r.returncode != 0 and "--bootstrap goes with --batch" in r.stderr, r.stderr


def cyc(name, needs):
    text = (CHAIN / "chaina.spec").read_text().replace("chaina", name)
    return {"spec": text.replace("BuildArch: noarch\n",
                                 f"BuildArch: noarch\nBuildRequires: {needs}\n"),
            "spec_name": f"{name}.spec"}


def test_a_cycle_is_refused_naming_it_unless_a_bootstrap_breaks_it(kiln_bin, tmp_path):
    s = Scheduler(kiln_bin, tmp_path / "data").start()
    try:
        body = {"root": "fixture-x86_64",
                "members": [cyc("cyca", "cycb-devel"), cyc("cycb", "cyca-devel")]}
        r = s.call("POST", "/api/v1/batches", body)
        assert r.status == 422, r.body
        assert r.json()["error"]["code"] == "dependency_cycle"
        assert ("build dependency cycle: cyca, cycb (cyca: BuildRequires: cycb-devel, "
                "built by cycb; cycb: BuildRequires: cyca-devel, built by cyca)"
                in r.json()["error"]["message"]), r.body
        # nothing was queued
        assert s.call("GET", "/api/v1/jobs").json()["jobs"] == []
        r = s.call("POST", "/api/v1/batches", dict(body, bootstrap=["cycb"]))
        assert r.status == 201, r.body
        b = r.json()
        jobs = by_name(b)
        assert b["levels"] == [[jobs["cycb"]["id"]], [jobs["cyca"]["id"]]]
        assert jobs["cycb"]["depends_on"] == [] and jobs["cycb"]["pending"] == 0
        assert s.call("GET", "/api/v1/batches").json()["batches"][0]["id"] == b["id"]
        # a client's retry with its Idempotency-Key gets the same batch, nothing more
        key = {"Idempotency-Key": "ci-42"}
        body = dict(body, bootstrap=["cycb"], members=body["members"][::-1])
        first = s.call("POST", "/api/v1/batches", body, headers=key)
        assert first.status == 201, first.body
        again = s.call("POST", "/api/v1/batches", body, headers=key)
        assert again.status == 200 and again.json()["id"] == first.json()["id"]
        assert len(s.call("GET", "/api/v1/batches").json()["batches"]) == 2
        r = s.call("POST", "/api/v1/batches", dict(body, bootstrap=["cyca"]), headers=key)
        assert r.status == 409 and "different request" in r.json()["error"]["message"]
    finally:
        s.stop()


def test_source_packages_are_batch_members_too(kiln_bin, tmp_path):
    """SRPM members: the spec inside each is read for the order (kiln submit --batch too)."""
    top = tmp_path / "top"
    for name in ("chaina", "chainb"):
        r = subprocess.run([str(kiln_bin), "build", "-bs", "--topdir", str(top),
                            str(CHAIN / f"{name}.spec")], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
    s = Scheduler(kiln_bin, tmp_path / "data").start()
    try:
        members = []
        for f in ("chainb-2.0-1.src.rpm", "chaina-1.2-1.src.rpm"):
            members.append({"srpm": {"name": f, "sha256": s.put_blob((top / "SRPMS" / f)
                                                                      .read_bytes())}})
        r = s.call("POST", "/api/v1/batches", {"root": "r", "members": members})
        assert r.status == 201, r.body
        jobs = by_name(r.json())
        assert jobs["chainb"]["depends_on"] == [jobs["chaina"]["id"]]
        assert jobs["chaina"]["level"] == 0 and jobs["chainb"]["level"] == 1
        # nothing of the unpacking is left behind
        assert not list((tmp_path / "data" / "tmp").glob("batch-srpm-*"))
        env = dict(os.environ, KILN_URL=s.url, KILN_TOKEN=s.admin)
        r = subprocess.run([str(kiln_bin), "submit", "--batch", "--root", "r",
                            str(top / "SRPMS" / "chainb-2.0-1.src.rpm"),
                            str(top / "SRPMS" / "chaina-1.2-1.src.rpm")],
                           capture_output=True, text=True, env=env)
        assert r.returncode == 0, r.stderr
        assert re.search(r"level 0: chaina \(job \d+\)\n  level 1: chainb", r.stdout), r.stdout
    finally:
        s.stop()


def test_git_members_are_read_at_their_commit_and_built_there(kiln_bin, tmp_path):
    """A git member's spec is read from the scheduler's own mirror at the commit its ref
    names when the batch is submitted, and its job is pinned to that commit: a later push
    to the branch changes neither the order nor what is built."""
    repo = tmp_path / "repo"
    repo.mkdir()
    env = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.org",
               GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@example.org")

    def git(*args):
        return subprocess.run(["git", "-C", repo, *args], check=True, capture_output=True,
                              text=True, env=env).stdout.strip()

    git("init", "-q", "-b", "main")
    (repo / "pkg").mkdir()
    (repo / "pkg" / "chaina.spec").write_text((CHAIN / "chaina.spec").read_text())
    git("add", "-A")
    git("commit", "-q", "-m", "chaina")
    sha = git("rev-parse", "HEAD")
    s = Scheduler(kiln_bin, tmp_path / "data").start()
    try:
        r = s.call("POST", "/api/v1/batches", {"root": "r", "members": [
            member("chainb"),
            {"git": {"url": f"file://{repo}", "ref": "main", "spec": "pkg/chaina.spec"}}]})
        assert r.status == 201, r.body
        jobs = by_name(r.json())
        assert jobs["chaina"]["level"] == 0 and jobs["chainb"]["level"] == 1, r.body
        job = s.call("GET", f"/api/v1/jobs/{jobs['chaina']['id']}").json()
        assert job["request"]["git"]["ref"] == sha
        assert job["manifest"]["git"]["commit"] == sha
        # the branch moves on: the batch's member stays where it was read
        (repo / "pkg" / "chaina.spec").write_text("Name: other\n")
        git("commit", "-q", "-am", "moved")
        job = s.call("GET", f"/api/v1/jobs/{jobs['chaina']['id']}").json()
        assert job["request"]["git"]["ref"] == sha
    finally:
        s.stop()


@pytest.mark.parametrize("body,field", [
    ({"members": [member("chaina")]}, "'root'"),
    ({"root": "r", "members": []}, "'members'"),
    ({"root": "r", "members": [member("chaina", root="other")]}, "'members[0].root'"),
    ({"root": "r", "members": [member("chaina", repository="x")]}, "'members[0].repository'"),
    ({"root": "r", "members": [member("chaina"), {"srpm": {"name": "a.src.rpm",
                                                            "sha256": "0" * 64}}]},
     "'members[1].srpm'"),
    ({"root": "r", "members": [{"git": {"url": "ftp://example.org/a.git", "ref": "main",
                                        "spec": "a.spec"}}]}, "'git.url'"),
    ({"root": "r", "members": [{"git": {"url": "file:///nonexistent/a.git", "ref": "main",
                                        "spec": "a.spec"}}]}, "'members[0]' (a.spec)"),
    ({"root": "r", "members": [member("chaina")], "bootstrap": ["nope"]}, "'bootstrap'"),
    ({"root": "r", "members": [member("chaina")], "repository": "nope"}, "'repository'"),
    ({"root": "r", "members": [member("chaina", bogus=1)]}, "bogus"),
    ({"root": "r", "members": [{"spec": "Name: x\n%%%bad", "spec_name": "x.spec"}]},
     "'members[0]' (x.spec)"),
])
def test_bad_batches_name_the_field(kiln_bin, tmp_path, body, field):
    s = Scheduler(kiln_bin, tmp_path / "data").start()
    try:
        r = s.call("POST", "/api/v1/batches", body)
        assert r.status == 400, r.body
        assert field in r.json()["error"]["message"], r.body
        assert s.call("GET", "/api/v1/jobs").json()["jobs"] == []
        assert s.call("GET", "/api/v1/batches/1").status == 404
    finally:
        s.stop()


@pytest.mark.parametrize("store", ["sqlite3", "postgresql"])
def test_only_what_waits_for_nothing_is_leased(kiln_bin, tmp_path, request, store):
    """Through the API on either store: a lease takes a level-0 job, never one whose
    dependencies' packages have not landed; a completion hands the next level over; a failed
    completion makes the rest dep_failed; a restart keeps all of it."""
    sets = [f"storage.database={request.getfixturevalue('postgres_url')}"] \
        if store == "postgresql" else []
    s = Scheduler(kiln_bin, tmp_path / "data", *FAST, *sets).start()
    try:
        r = s.call("POST", "/api/v1/batches", {
            "root": "r", "members": [member("chainc"), member("chainb"), member("chaina")]})
        assert r.status == 201, r.body
        jobs = by_name(r.json())
        wt = s.token("worker")
        hdr = {"X-Kiln-Worker-Secret": "0123456789abcdef" * 4}
        assert s.call("POST", "/api/v1/workers", {"name": "fake", "arches": ["x86_64"],
                                                  "tags": ["root:r"]},
                      token=wt, headers=hdr).status == 200

        def lease():
            r = s.call("POST", "/api/v1/leases", {"worker": "fake", "arches": ["x86_64"],
                                                  "tags": ["root:r"], "wait": 0},
                       token=wt, headers=hdr)
            return r.json() if r.status == 200 else None

        def complete(le, status):
            r = s.call("POST", f"/api/v1/leases/{le['lease_id']}/complete",
                       {"generation": le["generation"], "status": status,
                        **({"failure_class": "build", "message": "x"}
                           if status == "failed" else {})},
                       token=wt, headers=hdr)
            assert r.status == 200, r.body

        a = lease()
        assert a["job_id"] == jobs["chaina"]["id"] and a["batch_repo"] == \
            f"/batches/{r.json()['id']}/repo"
        assert lease() is None  # chainb waits for chaina's packages
        complete(a, "succeeded")
        b = lease()
        assert b["job_id"] == jobs["chainb"]["id"]
        s.stop()
        s.start()  # the counts and states are the store's
        assert lease() is None
        complete(b, "failed")
        c = s.job(jobs["chainc"]["id"])
        assert c["state"] == "dep_failed" and c["batch"]["waiting_for"] == b["job_id"]
        assert lease() is None
        # a second batch cancelled as a whole: every job not ended is cancelled (a running
        # one through its worker), none becomes dep_failed on the way
        r = s.call("POST", "/api/v1/batches", {
            "root": "r", "members": [member("chainc"), member("chainb"), member("chaina")]})
        bid2, jobs2 = r.json()["id"], by_name(r.json())
        running = lease()
        assert running["job_id"] == jobs2["chaina"]["id"]
        r = s.call("POST", f"/api/v1/batches/{bid2}/cancel")
        assert r.status == 202, r.body
        states = {j["name"]: j["state"] for j in r.json()["jobs"]}
        assert states == {"chaina": "leased", "chainb": "cancelled", "chainc": "cancelled"}
        assert s.job(jobs2["chaina"]["id"])["cancel_requested"] is True
        assert lease() is None
        assert s.call("POST", "/api/v1/batches/999/cancel").status == 404
    finally:
        s.stop()
