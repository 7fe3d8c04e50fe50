"""kiln store migrate (issue 25): a sqlite3 farm with a published repository copied into
PostgreSQL, verified, and the farm going on there on the same data directory: the old jobs,
their attempts and artifacts, the tokens and the repository are all there, and a new job
gets a new id and publishes beside the old packages."""
from farm import Scheduler
from test_farm_e2e import FAST, Worker, spec, submit
from test_publish_farm import check_repodata


def published(s, repo="main"):
    s.call("POST", f"/api/v1/repos/{repo}/regenerate?wait=1")
    return sorted(p["name"] for p in s.call("GET", f"/api/v1/repos/{repo}").json()["packages"])


def test_sqlite_farm_migrated_to_postgresql_goes_on(kiln_bin, kiln, tmp_path, postgres_url):
    data, repos = tmp_path / "data", tmp_path / "repos"
    sets = (*FAST, f"repositories.main={repos}/main")
    s = Scheduler(kiln_bin, data, *sets).start()
    w = Worker(kiln_bin, s, "mw1", tmp_path / "mw1")
    ci = s.token("submit read")
    old = [submit(s, spec("1").replace("farm-hello", f"old-{i}"), repository="main")
           for i in range(2)]
    for jid in old:
        assert s.wait_state(jid, ("succeeded", "failed"))["state"] == "succeeded"
    before = {jid: s.job(jid) for jid in old}
    assert {"old-0", "old-1"} <= set(published(s))
    w.stop()
    s.stop()

    r = kiln("store", "migrate", "--from", data, "--to", postgres_url, timeout=120)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    jobs = next(line for line in lines if line.split()[0] == "jobs")
    assert jobs.split()[1] == "2" and "sha256" in jobs, lines
    assert any(line.split()[0] == "tokens" for line in lines), lines
    assert any(line.split()[0] == "repo_packages" for line in lines), lines
    assert "copied and verified" in lines[-1], lines
    # a second copy into the same database is refused: nothing is merged
    r = kiln("store", "migrate", "--from", data, "--to", postgres_url, timeout=120)
    assert r.returncode != 0 and "import into an empty database" in r.stderr, r.stderr
    r = kiln("store", "migrate", "--from", tmp_path / "nope", "--to", postgres_url)
    assert r.returncode != 0 and "no job store" in r.stderr, r.stderr

    s = Scheduler(kiln_bin, data, *sets, f"store.url={postgres_url}").start()
    try:
        assert s.call("GET", "/api/v1/health", token="").json()["store"] == "postgresql"
        for jid in old:
            j = s.job(jid)
            for k in ("state", "spec_name", "content_key", "attempts", "created", "updated",
                      "started", "finished", "failure_class", "message"):
                if k not in before[jid]:
                    continue
                assert j[k] == before[jid][k], (k, j, before[jid])
            assert [a["state"] for a in j["attempt_list"]] == ["succeeded"]
            arts = s.call("GET", f"/api/v1/jobs/{jid}/artifacts").json()["artifacts"]
            assert arts and all(a["signed"] for a in arts)
            blob = s.call("GET", arts[0]["url"])
            assert blob.status == 200
        # the token made on sqlite works on PostgreSQL
        assert s.call("GET", "/api/v1/jobs", token=ci).status == 200
        w = Worker(kiln_bin, s, "mw2", tmp_path / "mw2")
        try:
            new = submit(s, spec("1").replace("farm-hello", "new-0"), repository="main")
            assert new > max(old)
            assert s.wait_state(new, ("succeeded", "failed"))["state"] == "succeeded"
            names = published(s)
            assert {"old-0", "old-1", "new-0"} <= set(names), names
            arch = next(d for d in (repos / "main").iterdir()
                        if (d / "repodata").is_dir() and d.name != "SRPMS")
            check_repodata(arch)
        finally:
            w.stop()
    finally:
        s.stop()
