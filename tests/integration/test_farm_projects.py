"""Projects (issue 27) against a real `kiln scheduler`: projects made, listed, changed and
deleted (API and CLI); tokens bound to a project; every endpoint answering 404 or 403 for
another project's jobs, logs, packages and settings; the grant sharing workers between
projects and holding a project at its caps; a data directory made by main's kiln keeping
its jobs and tokens working in the project 'default' (built from the commit before projects)."""
import hashlib
import os
import subprocess
import time

import pytest

import rpmfix
from farm import Scheduler
from test_farm_api import FAST, SPEC, Worker


@pytest.fixture(scope="module")
def rpm_file(tmp_path_factory):
    top = tmp_path_factory.mktemp("rpmbuild")
    rpmfix.rpmbuild(top, rpmfix.SPECS / "empty.spec", "-bb")
    return next(top.glob("RPMS/*/*.rpm"))


def make_project(s, name, **settings):
    r = s.call("POST", "/api/v1/projects", {"name": name, **settings})
    assert r.status == 201, r.body
    return r.json()


def ptoken(s, project, scopes):
    r = s.call("POST", "/api/v1/tokens", {"scopes": scopes, "project": project,
                                          "name": f"{project}-{scopes}"})
    assert r.status == 201, r.body
    assert r.json()["project"] == project
    return r.json()["token"]


def submit(s, tok, **extra):
    return s.call("POST", "/api/v1/jobs", {"spec": SPEC, "spec_name": "t.spec", **extra},
                  token=tok)


def built_job(s, tok, w, rpm_file):
    """A job submitted with tok and built by hand by w: one signed package, attempt 1."""
    r = submit(s, tok)
    assert r.status == 201, r.body
    jid = r.json()["id"]
    lease = w.lease()
    assert lease["job_id"] == jid
    assert w.log(lease, 0, b"built\n").status == 200
    data = rpm_file.read_bytes()
    assert w.upload(lease, rpm_file.name, data).status == 201
    r = w.complete(lease, outputs=[(rpm_file.name, hashlib.sha256(data).hexdigest())])
    assert r.status == 200 and r.json()["state"] == "succeeded", r.body
    return jid


def test_projects_are_made_listed_changed_and_deleted(kiln_bin, kiln, tmp_path):
    s = Scheduler(kiln_bin, tmp_path / "data", *FAST).start()
    try:
        p = make_project(s, "ci", max_running=3, arch_caps="x86_64=2")
        assert p["name"] == "ci" and p["max_running"] == 3 and p["arch_caps"] == "x86_64=2"
        assert p["public_read"] is False
        assert s.call("POST", "/api/v1/projects", {"name": "ci"}).status == 409
        for body, field in (({"name": "Bad Name"}, "name"), ({"name": ""}, "name"),
                            ({"name": "x", "arch_caps": "x86_64"}, "arch_caps"),
                            ({"name": "x", "max_running": -1}, "max_running"),
                            ({"name": "x", "colour": 1}, "colour")):
            r = s.call("POST", "/api/v1/projects", body)
            assert r.status == 400 and field in r.json()["error"]["message"], (body, r.body)
        names = [x["name"] for x in s.call("GET", "/api/v1/projects").json()["projects"]]
        assert names == ["ci", "default"]
        r = s.call("PUT", "/api/v1/projects/ci", {"public_read": True, "max_running": 0})
        assert r.status == 200 and r.json()["public_read"] and r.json()["max_running"] == 0
        assert r.json()["arch_caps"] == "x86_64=2"
        shown = s.call("GET", "/api/v1/projects/ci").json()
        assert shown["project"]["public_read"] and shown["queued"] == 0
        assert s.call("GET", "/api/v1/projects/nope").status == 404
        # only admins make them
        sub = ptoken(s, "ci", "submit,read")
        assert s.call("POST", "/api/v1/projects", {"name": "y"}, token=sub).status == 403
        # not while it has work queued; default never
        assert submit(s, sub).status == 201
        r = s.call("DELETE", "/api/v1/projects/ci")
        assert r.status == 409 and "queued" in r.json()["error"]["message"]
        assert s.call("DELETE", "/api/v1/projects/default").status == 409
        # the CLI
        env = {"KILN_URL": s.url, "KILN_TOKEN": s.admin}
        r = kiln("project", "create", "web", "--public", "--max-running", "2", env=env)
        assert r.returncode == 0 and '"name":"web"' in r.stdout.replace(" ", ""), r.stderr
        r = kiln("project", "list", env=env)
        assert r.returncode == 0, r.stderr
        rows = [line.split() for line in r.stdout.splitlines()[1:]]
        assert [row[0] for row in rows] == ["ci", "default", "web"]
        assert rows[2][1:3] == ["yes", "2"]
        r = kiln("project", "set", "web", "--private", "--arch-caps", "aarch64=1", env=env)
        assert r.returncode == 0, r.stderr
        r = kiln("project", "show", "web", "--json", env=env)
        assert '"public_read":false' in r.stdout and '"aarch64=1"' in r.stdout
        r = kiln("project", "delete", "web", env=env)
        assert r.returncode == 0, r.stderr
        r = kiln("project", "show", "web", env=env)
        assert r.returncode == 1 and "no project 'web'" in r.stderr
        r = kiln("project", "frob", "web", env=env)
        assert r.returncode != 0
    finally:
        s.stop()


def test_tokens_and_jobs_belong_to_a_project(kiln_bin, kiln, tmp_path, rpm_file):
    s = Scheduler(kiln_bin, tmp_path / "data", *FAST).start()
    try:
        make_project(s, "a")
        make_project(s, "b")
        r = s.call("POST", "/api/v1/tokens", {"scopes": "submit", "project": "zz"})
        assert r.status == 400 and "project" in r.json()["error"]["message"]
        for scopes in ("admin", "worker", "read,worker"):
            r = s.call("POST", "/api/v1/tokens", {"scopes": scopes, "project": "a"})
            assert r.status == 400 and "farm-wide" in r.json()["error"]["message"], scopes
        ta = ptoken(s, "a", "submit,read")
        r = submit(s, ta)
        assert r.status == 201 and r.json()["project"] == "a"
        assert submit(s, ta, project="a").status == 201
        # another project answers as one that does not exist
        r = submit(s, ta, project="b")
        assert r.status == 404 and "no project 'b'" in r.json()["error"]["message"]
        assert submit(s, ta, project="zz").status == 404
        # the farm admin submits anywhere; its own default is default
        assert submit(s, s.admin, project="b").json()["project"] == "b"
        assert submit(s, s.admin).json()["project"] == "default"
        toks = {t["name"]: t for t in s.call("GET", "/api/v1/tokens").json()["tokens"]}
        assert toks["a-submit,read"]["project"] == "a" and toks["admin"]["project"] == "default"
        # the CLI: token create --project, submit --project, jobs --project
        env = {"KILN_URL": s.url, "KILN_TOKEN": s.admin}
        r = kiln("token", "create", "--project", "b", "--scope", "submit,read", env=env)
        assert r.returncode == 0, r.stderr
        tb = r.stdout.strip()
        f = tmp_path / "t.spec"
        f.write_text(SPEC)
        r = kiln("submit", f, env={"KILN_URL": s.url, "KILN_TOKEN": tb})
        assert r.returncode == 0, r.stderr
        r = kiln("submit", f, "--project", "a", env={"KILN_URL": s.url, "KILN_TOKEN": tb})
        assert r.returncode == 1 and "no project 'a'" in r.stderr
        r = kiln("jobs", "--project", "b", env=env)
        lines = r.stdout.splitlines()
        assert r.returncode == 0 and len(lines) == 2 and all(" b " in x for x in lines)
        jid = lines[0].split()[0]
        r = kiln("job", jid, env={"KILN_URL": s.url, "KILN_TOKEN": tb})
        assert r.returncode == 0 and "project: b" in r.stdout
        r = kiln("jobs", "--project", "a", env={"KILN_URL": s.url, "KILN_TOKEN": tb})
        assert r.returncode == 1 and "no project 'a'" in r.stderr
        # per-project queue depth
        m = s.call("GET", "/metrics", token="").body.decode()
        assert 'kiln_project_queue_depth{project="a"} 2' in m
        assert 'kiln_project_queue_depth{project="b"} 2' in m
        assert 'kiln_project_queue_depth{project="default"} 1' in m
        # a deleted project's tokens stop working
        for j in s.call("GET", "/api/v1/jobs?project=a").json()["jobs"]:
            assert s.call("POST", f"/api/v1/jobs/{j['id']}/cancel", {}).status in (200, 202)
        assert s.call("DELETE", "/api/v1/projects/a").status == 200
        assert s.call("GET", "/api/v1/jobs", token=ta).status == 401
    finally:
        s.stop()


@pytest.fixture(scope="module")
def two(kiln_bin, tmp_path_factory, rpm_file):
    """Projects a (a job built, with a package and a log) and b, with their tokens."""
    s = Scheduler(kiln_bin, tmp_path_factory.mktemp("two") / "data", *FAST).start()
    make_project(s, "a")
    make_project(s, "b")
    t = {"a": ptoken(s, "a", "submit,read"), "b": ptoken(s, "b", "submit,read"),
         "b_sub": ptoken(s, "b", "submit"), "b_read": ptoken(s, "b", "read")}
    w = Worker(s, "w1", s.token("worker"))
    ja = built_job(s, t["a"], w, rpm_file)
    art = s.call("GET", f"/api/v1/jobs/{ja}/artifacts").json()["artifacts"][0]
    # [batches] a's batch (its root exists nowhere: it stays queued)
    r = s.call("POST", "/api/v1/batches",
               {"root": "nowhere", "members": [{"spec": SPEC, "spec_name": "t.spec"}]},
               token=t["a"])
    assert r.status == 201, r.body
    s.batch_a = r.json()["id"]
    yield s, t, ja, art
    s.stop()


# (method, path, body, status for another project's token); {job} and {sha} are filled in
CROSS = [
    ("GET", "/api/v1/jobs/{job}", None, 404),
    ("GET", "/api/v1/jobs/{job}/placement", None, 404),
    ("GET", "/api/v1/jobs/{job}/reproducibility", None, 404),
    ("GET", "/api/v1/jobs/{job}/attempts/1/log", None, 404),
    ("GET", "/api/v1/jobs/{job}/artifacts", None, 404),
    ("GET", "/api/v1/artifacts/{sha}", None, 404),
    ("GET", "/api/v1/artifacts/{sha}/provenance", None, 404),
    ("GET", "/api/v1/blobs/{sha}", None, 404),
    ("GET", "/api/v1/rebuilds/{job}", None, 404),
    ("POST", "/api/v1/jobs/{job}/cancel", {}, 404),
    ("POST", "/api/v1/jobs/{job}/retry", {}, 404),
    ("POST", "/api/v1/jobs/{job}/reproduce", {}, 404),
    ("GET", "/api/v1/jobs?project=a", None, 404),
    ("POST", "/api/v1/jobs", {"spec": SPEC, "spec_name": "t.spec", "project": "a"}, 404),
    ("GET", "/api/v1/projects/a", None, 404),
    ("PUT", "/api/v1/projects/a", {"public_read": True}, 403),
    ("DELETE", "/api/v1/projects/a", None, 403),
    ("POST", "/api/v1/tokens", {"scopes": "submit", "project": "a"}, 403),
    ("POST", "/api/v1/projects", {"name": "c"}, 403),
    ("GET", "/api/v1/projects/a/key", None, 404),
    ("POST", "/api/v1/projects/a/key/extend", {}, 403),
    ("GET", "/api/v1/batches/{batch}", None, 404),
    ("POST", "/api/v1/batches/{batch}/cancel", {}, 404),
    ("POST", "/api/v1/batches/{batch}/publish", {}, 404),
]


@pytest.mark.parametrize("method,path,body,status", CROSS,
                         ids=[f"{m} {p}" for m, p, _, _ in CROSS])
@pytest.mark.parametrize("who", ["b", "b_sub", "b_read"])
def test_another_projects_things_are_not_found(two, method, path, body, status, who):
    s, t, ja, art = two
    url = path.format(job=ja, sha=art["sha256"], batch=s.batch_a)
    r = s.call(method, url, body, token=t[who])
    want = status
    # a token lacking the scope for the call is refused before the project is looked at
    if (who == "b_read" and method == "POST") or (who == "b_sub" and "/blobs/" in path):
        want = 403
    assert r.status == want, r.body
    if want == 404:
        msg = r.json()["error"]["message"]
        assert "no job" in msg or "no project" in msg or "not found" in msg or "no " in msg
    # the job still stands, untouched, and so does a's batch (listed for a only)
    assert s.job(ja)["state"] == "succeeded" and s.job(ja)["reruns"] == 0
    assert s.call("GET", f"/api/v1/batches/{s.batch_a}", token=t["a"]).json()["state"] != \
        "cancelled"
    if who != "b_sub":
        listed = s.call("GET", "/api/v1/batches", token=t[who]).json()["batches"]
        assert all(b["id"] != s.batch_a for b in listed)


@pytest.mark.parametrize("method,path", [("GET", "/api/v1/jobs/{job}"),
                                         ("GET", "/api/v1/jobs/{job}/placement"),
                                         ("GET", "/api/v1/jobs/{job}/attempts/1/log"),
                                         ("GET", "/api/v1/jobs/{job}/artifacts"),
                                         ("GET", "/api/v1/artifacts/{sha}"),
                                         ("GET", "/api/v1/artifacts/{sha}/provenance"),
                                         ("GET", "/api/v1/blobs/{sha}"),
                                         ("GET", "/api/v1/jobs?project=a"),
                                         ("GET", "/api/v1/projects/a"),
                                         ("GET", "/api/v1/projects/a/key")])
def test_the_own_project_reads_them(two, method, path):
    s, t, ja, art = two
    url = path.format(job=ja, sha=art["sha256"])
    r = s.call(method, url, token=t["a"])
    assert r.status == 200, (url, r.body)


def test_a_kept_job_body_is_shown_only_to_who_may_see_it(two):
    """GET /api/v1/jobs/{id} keeps its body (jobcache.c) with the job's project and
    submitter and checks them on every hit without reading the job: a body kept for one
    reader is refused to the others at the same store version."""
    s, t, ja, _ = two
    a_sub = ptoken(s, "a", "submit")  # a's, but not the job's submitter
    kept = s.call("GET", f"/api/v1/jobs/{ja}", token=t["a"])
    assert kept.status == 200, kept.body
    for who in ("b", "b_sub", "b_read"):
        r = s.call("GET", f"/api/v1/jobs/{ja}", token=t[who])
        assert r.status == 404 and f"no job {ja}" in r.json()["error"]["message"], (who, r.body)
    r = s.call("GET", f"/api/v1/jobs/{ja}", token=a_sub)
    assert r.status == 404, r.body
    for tok in (t["a"], s.admin):
        r = s.call("GET", f"/api/v1/jobs/{ja}", token=tok)
        assert r.status == 200 and r.body == kept.body


def test_listings_hold_only_the_own_project(two):
    s, t, ja, _ = two
    assert all(j["id"] != ja for j in s.call("GET", "/api/v1/jobs", token=t["b"]).json()["jobs"])
    own = s.call("GET", "/api/v1/jobs", token=t["a"]).json()["jobs"]
    assert ja in [j["id"] for j in own] and {j["project"] for j in own} == {"a"}
    assert len(own) == 2  # ja and the fixture's batch job
    names = [p["name"] for p in s.call("GET", "/api/v1/projects", token=t["b"]).json()["projects"]]
    assert names == ["b"]
    assert ja in [j["id"] for j in s.call("GET", "/api/v1/jobs").json()["jobs"]]


def test_grants_share_workers_between_projects_and_hold_capped_ones(kiln_bin, tmp_path):
    s = Scheduler(kiln_bin, tmp_path / "data", *FAST).start()
    try:
        make_project(s, "a")
        make_project(s, "b")
        make_project(s, "c", max_running=1)
        make_project(s, "d", arch_caps="x86_64=1")
        ta, tb, tc, td = (ptoken(s, p, "submit,read") for p in "abcd")
        w = Worker(s, "w1", s.token("worker"))
        a_jobs = [submit(s, ta, priority=100).json()["id"] for _ in range(10)]
        leased = [w.lease()["job_id"]]
        assert leased == [a_jobs[0]]
        b_job = submit(s, tb).json()["id"]
        # b's one job goes before a's nine, whatever their priority
        leased += [w.lease()["job_id"], w.lease()["job_id"]]
        assert leased[1:] == [b_job, a_jobs[1]]
        # a project at its cap waits (a's jobs go meanwhile), and placement says why
        c_jobs = [submit(s, tc).json()["id"] for _ in range(2)]
        got = [w.lease()["job_id"] for _ in range(2)]
        leased += got
        assert c_jobs[0] in got and c_jobs[1] not in got
        pl = s.call("GET", f"/api/v1/jobs/{c_jobs[1]}/placement", token=tc).json()
        assert pl["summary"] == "project quota 1/1 running" and pl["project"] == "c"
        d_jobs = [submit(s, td, arch="x86_64").json()["id"] for _ in range(2)]
        got = [w.lease()["job_id"] for _ in range(3)]
        leased += got
        assert d_jobs[0] in got and d_jobs[1] not in got and c_jobs[1] not in got
        pl = s.call("GET", f"/api/v1/jobs/{d_jobs[1]}/placement", token=td).json()
        assert pl["summary"] == "project quota x86_64 1/1 running"
        # raising the cap lets it go
        assert s.call("PUT", "/api/v1/projects/c", {"max_running": 2}).status == 200
        got = []
        while (lease := w.lease()) is not None:
            got.append(lease["job_id"])
        leased += got
        assert c_jobs[1] in got and d_jobs[1] not in got
        # every job but the one held went, each once
        assert sorted(leased) == sorted(set(a_jobs + c_jobs + d_jobs + [b_job]) - {d_jobs[1]})
    finally:
        s.stop()


# main just before projects came (c2ff40a): its stores have no projects table, no
# project_id on jobs and tokens
BEFORE_PROJECTS = "f54fd3848948578cba5363ac0b60529a6a35a8f4"


@pytest.fixture(scope="module")
def kiln_before_projects():
    from conftest import kiln_at_commit

    return kiln_at_commit(BEFORE_PROJECTS)


@pytest.mark.parametrize("store", ["sqlite3", "postgresql"])
def test_a_data_dir_made_before_projects_keeps_working_in_default(kiln_bin, tmp_path, rpm_file,
                                                                  store, request,
                                                                  kiln_before_projects):
    data = tmp_path / "data"
    repos = tmp_path / "repos"
    sets = (*FAST, f"repositories.main={repos}/main")
    if store == "postgresql":  # a database the old kiln made, migrated by this one
        sets += (f"storage.database={request.getfixturevalue('postgres_url')}",)
    old = Scheduler(kiln_before_projects, data, *sets).start()
    try:
        # the data is made without projects: that kiln has no such endpoint
        assert old.call("GET", "/api/v1/projects").status == 404
        toks = {sc: old.token(sc) for sc in ("submit", "read", "submit,read", "worker")}
        w = Worker(old, "w1", toks["worker"], secret="ab" * 32)
        r = old.call("POST", "/api/v1/jobs", {"spec": SPEC, "spec_name": "t.spec",
                                              "repository": "main"}, token=toks["submit"])
        assert r.status == 201, r.body
        built = r.json()["id"]
        lease = w.lease()
        data_rpm = rpm_file.read_bytes()
        assert w.upload(lease, rpm_file.name, data_rpm).status == 201
        r = w.complete(lease, outputs=[(rpm_file.name, hashlib.sha256(data_rpm).hexdigest())])
        assert r.status == 200, r.body
        queued = old.call("POST", "/api/v1/jobs", {"spec": SPEC, "spec_name": "q.spec"},
                          token=toks["submit,read"]).json()["id"]
        assert old.call("POST", "/api/v1/repos/main/regenerate?wait=1").status == 200
        before = old.call("GET", "/api/v1/repos/main").json()
    finally:
        old.stop()
    s = Scheduler(kiln_bin, data, *sets).start()
    try:
        assert [p["name"] for p in s.call("GET", "/api/v1/projects").json()["projects"]] == \
            ["default"]
        for t in s.call("GET", "/api/v1/tokens").json()["tokens"]:
            assert t["project"] == "default"
        # every token works as before: the submitter its own jobs, the reader all of them
        j = s.call("GET", f"/api/v1/jobs/{built}", token=toks["submit"]).json()
        assert j["project"] == "default" and j["state"] == "succeeded"
        ids = [x["id"] for x in s.call("GET", "/api/v1/jobs", token=toks["read"]).json()["jobs"]]
        assert sorted(ids) == sorted([built, queued])
        art = s.call("GET", f"/api/v1/jobs/{built}/artifacts", token=toks["read"]).json()
        assert s.call("GET", art["artifacts"][0]["url"], token=toks["read"]).status == 200
        r = s.call("POST", "/api/v1/jobs", {"spec": SPEC, "spec_name": "n.spec"},
                   token=toks["submit"])
        assert r.status == 201 and r.json()["project"] == "default"
        after = s.call("GET", "/api/v1/repos/main", token=toks["read"]).json()
        assert after["package_count"] == before["package_count"] == 1
        assert s.call("GET", "/repos/main/main.repo", token="").status == 200
        # the queued job is still granted, in default
        w = Worker(s, "w1", toks["worker"], secret="ab" * 32)
        assert w.lease()["job_id"] == queued
    finally:
        s.stop()


def test_repositories_belong_to_a_project(kiln_bin, kiln, tmp_path):
    repos = tmp_path / "repos"
    s = Scheduler(kiln_bin, tmp_path / "data", *FAST, f"repositories.main={repos}/main",
                  f"repositories.priv={repos}/priv", f"repositories.web={repos}/web").start()
    try:
        p = make_project(s, "p", repositories=["priv"])
        assert p["repositories"] == ["priv"]
        r = s.call("POST", "/api/v1/projects", {"name": "q", "repositories": ["priv"]})
        assert r.status == 409 and "another project" in r.json()["error"]["message"]
        r = s.call("POST", "/api/v1/projects", {"name": "q", "repositories": ["nope"]})
        assert r.status == 400 and "repositories" in r.json()["error"]["message"]
        dflt = s.call("GET", "/api/v1/projects/default").json()["project"]
        assert dflt["repositories"] == ["main", "web"]
        tp, td = ptoken(s, "p", "submit,read"), ptoken(s, "default", "submit,read")
        # jobs publish only into their project's repositories
        r = submit(s, tp, repository="main")
        assert r.status == 400 and "another project" in r.json()["error"]["message"]
        assert submit(s, tp, repository="priv").status == 201
        assert submit(s, td, repository="priv").status == 400
        assert submit(s, td, repository="main").status == 201
        # listings and reads: the own project's only
        def names(tok):  # NAME-v6 (v6 packages) goes with NAME
            rs = s.call("GET", "/api/v1/repos", token=tok).json()["repositories"]
            assert all(x["name"][:-3] in [y["name"] for y in rs]
                       for x in rs if x["name"].endswith("-v6"))
            return [x["name"] for x in rs if not x["name"].endswith("-v6")]
        assert names(tp) == ["priv"] and names(td) == ["main", "web"]
        assert names(s.admin) == ["main", "priv", "web"]
        one = s.call("GET", "/api/v1/repos/priv", token=tp).json()
        assert one["project"] == "p"
        assert s.call("GET", "/api/v1/repos/priv", token=td).status == 404
        assert s.call("GET", "/api/v1/repos/main", token=tp).status == 404
        # /repos/: a private project's only with its token (or an admin's); default's public
        deadline = time.monotonic() + 20
        while s.call("GET", "/repos/priv/priv.repo").status != 200:
            assert time.monotonic() < deadline, "priv never published"
            time.sleep(0.2)
        assert s.call("GET", "/repos/priv/priv.repo", token="").status == 404
        assert s.call("GET", "/repos/priv/priv.repo", token=td).status == 404
        assert s.call("GET", "/repos/priv/priv.repo", token=tp).status == 200
        # the project's key is served next to its repository (its packages are signed with it)
        pkey = s.call("GET", "/api/v1/projects/p/key", token=tp).body.decode()
        deadline = time.monotonic() + 20
        while pkey not in s.call("GET", "/repos/priv/RPM-GPG-KEY-priv", token=tp).body.decode():
            assert time.monotonic() < deadline, "the project's key is not beside priv"
            time.sleep(0.2)
        assert pkey not in s.call("GET", "/repos/main/RPM-GPG-KEY-main").body.decode()
        assert s.call("GET", "/repos/main/main.repo", token="").status == 200
        # public_read opens it
        assert s.call("PUT", "/api/v1/projects/p", {"public_read": True}).status == 200
        assert s.call("GET", "/repos/priv/priv.repo", token="").status == 200
        # the CLI gives and takes repositories, and shows whose they are
        env = {"KILN_URL": s.url, "KILN_TOKEN": s.admin}
        r = kiln("repo", "list", env=env)
        rows = {line.split()[0]: line.split() for line in r.stdout.splitlines()[1:]}
        assert r.returncode == 0 and "PROJECT" in r.stdout.splitlines()[0], r.stdout
        assert " p " in f" {' '.join(rows['priv'])} " and "default" in rows["main"]
        r = kiln("repo", "show", "priv", env={"KILN_URL": s.url, "KILN_TOKEN": tp})
        assert r.returncode == 0 and "\nproject: p\n" in r.stdout, r.stdout
        r = kiln("project", "set", "p", "--repositories", "priv,web", env=env)
        assert r.returncode == 0 and '"repositories":["priv","web"]' in r.stdout, r.stderr
        r = kiln("project", "set", "p", "--repositories", "", env=env)
        assert r.returncode == 0 and '"repositories":[]' in r.stdout, r.stderr
        assert names(td) == ["main", "priv", "web"]
        r = s.call("PUT", "/api/v1/projects/default", {"repositories": ["web"]})
        assert r.status == 400
        # a deleted project's repositories go back to default
        assert s.call("PUT", "/api/v1/projects/p", {"repositories": ["web"]}).status == 200
        for j in s.call("GET", "/api/v1/jobs?project=p").json()["jobs"]:
            s.call("POST", f"/api/v1/jobs/{j['id']}/cancel", {})
        assert s.call("DELETE", "/api/v1/projects/p").status == 200
        assert names(td) == ["main", "priv", "web"]
    finally:
        s.stop()


def checksig(db, pkg):
    r = subprocess.run(["rpmkeys", "--dbpath", str(db), "--checksig", "-v", str(pkg)],
                       capture_output=True, text=True)
    return r.returncode == 0 and "Signature, key ID" in r.stdout and "OK" in r.stdout, r.stdout


def key_expiry(key):
    """The expiry gpg reads from a certificate (seconds since the epoch)."""
    r = subprocess.run(["gpg", "--show-keys", "--with-colons", "--fixed-list-mode", str(key)],
                       capture_output=True, text=True, check=True,
                       env=dict(os.environ, GNUPGHOME=str(key.parent)))
    pub = next(line.split(":") for line in r.stdout.splitlines() if line.startswith("pub:"))
    return int(pub[6]), pub[4]  # expiry, key id


def test_a_project_signs_with_its_own_key_and_extends_it(kiln_bin, kiln, tmp_path, rpm_file):
    s = Scheduler(kiln_bin, tmp_path / "data", *FAST).start()
    try:
        now = time.time()
        p = make_project(s, "k", key_days=1)
        # made with the project, not at the first build
        path = s.data / "keys" / "project-k.key"
        assert path.exists() and path.stat().st_mode & 0o777 == 0o600
        assert abs(p["key_expires"] / 1000 - (now + 86400)) < 120
        tk = ptoken(s, "k", "submit,read")
        w = Worker(s, "w1", s.token("worker"))

        def package(name):
            jid = built_job(s, tk, w, rpm_file)
            art = s.call("GET", f"/api/v1/jobs/{jid}/artifacts", token=tk).json()["artifacts"][0]
            assert art["signed"]
            out = tmp_path / name
            out.write_bytes(s.call("GET", art["url"], token=tk).body)
            return out

        before = package("before.rpm")
        (tmp_path / "g1").mkdir(mode=0o700)
        key1 = tmp_path / "g1" / "k1.asc"
        r = s.call("GET", "/api/v1/projects/k/key", token=tk)
        assert r.status == 200 and r.body.startswith(b"-----BEGIN PGP PUBLIC KEY BLOCK-----")
        key1.write_bytes(r.body)
        farm = tmp_path / "farm.asc"
        farm.write_bytes(s.call("GET", "/api/v1/keys/default", token="").body)
        assert farm.read_bytes() != key1.read_bytes()
        exp1, id1 = key_expiry(key1)
        assert abs(exp1 - (now + 86400)) < 120
        # the farm's key does not verify the project's package; the project's does
        db0 = tmp_path / "db0"
        subprocess.run(["rpmkeys", "--dbpath", str(db0), "--import", str(farm)], check=True)
        assert not checksig(db0, before)[0]
        # extended: the same key, a later expiry
        r = s.call("POST", "/api/v1/projects/k/key/extend", {"days": 30})
        assert r.status == 200 and abs(r.json()["key_expires"] / 1000 - (now + 30 * 86400)) < 120
        env = {"KILN_URL": s.url, "KILN_TOKEN": s.admin}
        r = kiln("project", "key", "extend", "k", "--days", "60", env=env)
        assert r.returncode == 0, r.stderr
        assert s.call("GET", "/api/v1/projects/k").json()["project"]["key_expires"] / 1000 > \
            now + 59 * 86400
        r = kiln("project", "key", "show", "k", env=env)
        assert r.returncode == 0 and "BEGIN PGP PUBLIC KEY BLOCK" in r.stdout
        (tmp_path / "g2").mkdir(mode=0o700)
        key2 = tmp_path / "g2" / "k2.asc"
        key2.write_text(r.stdout)
        exp2, id2 = key_expiry(key2)
        assert id2 == id1 and abs(exp2 - (now + 60 * 86400)) < 120
        after = package("after.rpm")
        # the extended certificate imports, and verifies packages signed before and after
        db = tmp_path / "db"
        subprocess.run(["rpmkeys", "--dbpath", str(db), "--import", str(key2)], check=True)
        for pkg in (before, after):
            ok, out = checksig(db, pkg)
            assert ok, (pkg, out)
        # sq reads the same expiry
        r = subprocess.run(["sq", "inspect", str(key2)], capture_output=True, text=True)
        assert r.returncode == 0 and "Expiration time" in r.stdout, r.stdout + r.stderr
        # a new project's key replaces a deleted one's of the same name
        assert s.call("DELETE", "/api/v1/projects/k").status == 200
        assert not path.exists()
        make_project(s, "k")
        assert s.call("GET", "/api/v1/projects/k/key").body != key2.read_bytes()
    finally:
        s.stop()


def test_anonymous_readers_see_public_projects_only(kiln_bin, tmp_path):
    s = Scheduler(kiln_bin, tmp_path / "data", *FAST, "auth.anonymous_read=true").start()
    try:
        make_project(s, "pub", public_read=True)
        make_project(s, "priv")
        jobs = {p: submit(s, ptoken(s, p, "submit")).json()["id"] for p in ("pub", "priv")}
        jobs["default"] = submit(s, s.admin).json()["id"]
        ids = [j["id"] for j in s.call("GET", "/api/v1/jobs", token="").json()["jobs"]]
        assert sorted(ids) == sorted([jobs["pub"], jobs["default"]])
        assert s.call("GET", f"/api/v1/jobs/{jobs['pub']}", token="").status == 200
        assert s.call("GET", f"/api/v1/jobs/{jobs['priv']}", token="").status == 404
        assert s.call("GET", f"/api/v1/jobs/{jobs['priv']}/placement", token="").status == 404
        assert s.call("GET", "/api/v1/jobs?project=priv", token="").status == 404
        r = s.call("GET", "/api/v1/jobs?project=pub", token="")
        assert [j["id"] for j in r.json()["jobs"]] == [jobs["pub"]]
        names = [p["name"] for p in s.call("GET", "/api/v1/projects", token="").json()["projects"]]
        assert names == ["default", "pub"]
        assert s.call("GET", "/api/v1/projects/priv", token="").status == 404
        # made private, it is gone for them too
        assert s.call("PUT", "/api/v1/projects/pub", {"public_read": False}).status == 200
        assert s.call("GET", f"/api/v1/jobs/{jobs['pub']}", token="").status == 404
    finally:
        s.stop()


def test_a_projects_admin_manages_its_own_project_only(kiln_bin, kiln, tmp_path):
    s = Scheduler(kiln_bin, tmp_path / "data", *FAST, f"repositories.main={tmp_path}/r").start()
    try:
        make_project(s, "a")
        make_project(s, "b")
        pa, tb = ptoken(s, "a", "project-admin"), ptoken(s, "b", "submit,read")
        toks = {t["name"]: t for t in s.call("GET", "/api/v1/tokens").json()["tokens"]}
        assert toks["a-project-admin"]["scopes"] == "submit,read,project-admin"
        # tokens of its own project, with scopes inside it
        r = s.call("POST", "/api/v1/tokens", {"scopes": "submit", "name": "ci"}, token=pa)
        assert r.status == 201 and r.json()["project"] == "a", r.body
        made = r.json()
        for body in ({"scopes": "submit", "project": "b"}, {"scopes": "admin"},
                     {"scopes": "worker"}, {"scopes": "submit", "project": "default"}):
            r = s.call("POST", "/api/v1/tokens", body, token=pa)
            assert r.status == 400, (body, r.body)
        listed = s.call("GET", "/api/v1/tokens", token=pa).json()["tokens"]
        assert {t["project"] for t in listed} == {"a"} and made["id"] in [t["id"] for t in listed]
        bid = toks["b-submit,read"]["id"]
        assert s.call("DELETE", f"/api/v1/tokens/{bid}", token=pa).status == 404
        assert s.call("GET", "/api/v1/jobs", token=tb).status == 200
        assert s.call("DELETE", f"/api/v1/tokens/{made['id']}", token=pa).status == 200
        assert s.call("GET", "/api/v1/jobs", token=made["token"]).status == 401
        # its settings and key, not another's, not its repositories
        r = s.call("PUT", "/api/v1/projects/a", {"max_running": 3}, token=pa)
        assert r.status == 200 and r.json()["max_running"] == 3
        assert s.call("PUT", "/api/v1/projects/a", {"repositories": ["main"]},
                      token=pa).status == 403
        assert s.call("PUT", "/api/v1/projects/b", {"max_running": 3}, token=pa).status == 404
        assert s.call("POST", "/api/v1/projects/a/key/extend", {"days": 5},
                      token=pa).status == 200
        assert s.call("POST", "/api/v1/projects/b/key/extend", {}, token=pa).status == 404
        assert s.call("POST", "/api/v1/projects", {"name": "c"}, token=pa).status == 403
        assert s.call("DELETE", "/api/v1/projects/a", token=pa).status == 403
        # it submits and reads in its project like a submit,read token
        jid = submit(s, pa).json()["id"]
        assert s.call("GET", f"/api/v1/jobs/{jid}", token=pa).json()["project"] == "a"
        assert s.call("GET", f"/api/v1/jobs/{jid}", token=tb).status == 404
        # the CLI makes one
        r = kiln("token", "create", "--project", "b", "--scope", "project-admin",
                 env={"KILN_URL": s.url, "KILN_TOKEN": s.admin})
        assert r.returncode == 0, r.stderr
        r = s.call("GET", "/api/v1/tokens", token=r.stdout.strip())
        assert r.status == 200 and {t["project"] for t in r.json()["tokens"]} == {"b"}
    finally:
        s.stop()


def test_a_project_uses_only_its_roots(kiln_bin, kiln, tmp_path):
    """[projects] The root configurations a project may use: a job (or a batch member) naming
    another is refused naming the field; the farm's admin sets them, the project's admin
    cannot; none listed means any."""
    s = Scheduler(kiln_bin, tmp_path / "data", *FAST).start()
    try:
        p = make_project(s, "r", roots=["fedora-42"])
        assert p["roots"] == ["fedora-42"]
        tok = ptoken(s, "r", "submit,read")
        r = submit(s, tok, root="debian-fixture")
        assert r.status == 400, r.body
        msg = r.json()["error"]["message"]
        assert "'root'" in msg and "fedora-42" in msg and "debian-fixture" in msg
        assert submit(s, tok, root="fedora-42").status == 201
        assert submit(s, tok).status == 201  # no root: the worker's default
        r = s.call("POST", "/api/v1/batches", {"root": "debian-fixture", "members": [
            {"spec": SPEC, "spec_name": "t.spec"}]}, token=tok)
        assert r.status == 400 and "'root'" in r.json()["error"]["message"], r.body
        padmin = ptoken(s, "r", "project-admin")
        r = s.call("PUT", "/api/v1/projects/r", {"roots": []}, token=padmin)
        assert r.status == 403 and "'roots'" in r.json()["error"]["message"], r.body
        # the CLI: --roots "" lifts the limit
        env = {"KILN_URL": s.url, "KILN_TOKEN": s.admin}
        r = kiln("project", "set", "r", "--roots", "", env=env)
        assert r.returncode == 0, r.stderr
        assert s.call("GET", "/api/v1/projects/r").json()["project"]["roots"] == []
        assert submit(s, tok, root="debian-fixture").status == 201
        r = kiln("project", "set", "r", "--roots", "a,b", env=env)
        assert r.returncode == 0, r.stderr
        assert s.call("GET", "/api/v1/projects/r").json()["project"]["roots"] == ["a", "b"]
        r = s.call("PUT", "/api/v1/projects/r", {"roots": ["bad name"]})
        assert r.status == 400 and "'roots[0]'" in r.json()["error"]["message"], r.body
    finally:
        s.stop()
