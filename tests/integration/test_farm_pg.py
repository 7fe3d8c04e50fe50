"""The farm end to end with its job store on PostgreSQL (issue 25): a real `kiln scheduler
--database postgresql://...` on a server the harness starts (tests/pg/pg-harness.sh), a real
worker, real builds; the scheduler killed under load and restarted on the same database."""
import subprocess

import pytest

from farm import Scheduler
from test_farm_e2e import FAILING, FAST, Worker, check_signed_artifacts, spec, submit


@pytest.fixture
def pgfarm(kiln_bin, tmp_path, postgres_url):
    s = Scheduler(kiln_bin, tmp_path / "data", *FAST, f"storage.database={postgres_url}")
    s.start()
    workers = []

    def add(name, *extra):
        w = Worker(kiln_bin, s, name, tmp_path / name, *extra)
        workers.append(w)
        return w

    yield s, add, postgres_url
    for w in workers:
        w.stop()
    s.stop()


def psql(url, query):
    return subprocess.run(["psql", "-At", url, "-c", query], capture_output=True, text=True,
                          check=True).stdout.strip()


def test_jobs_through_one_worker(pgfarm, tmp_path):
    s, add, url = pgfarm
    add("w1", "--slots", "2")
    ids = [submit(s, spec(f"6.{i}")) for i in range(5)]
    bad = submit(s, FAILING, "farm-bad.spec")
    for jid in ids:
        assert s.wait_state(jid, ("succeeded", "failed"), timeout=300)["state"] == "succeeded"
    j = s.wait_state(bad, ("succeeded", "failed"))
    assert j["state"] == "failed" and j["failure_class"] == "build" and j["attempts"] == 1
    check_signed_artifacts(s, ids[0], tmp_path, "farm-hello")
    h = s.call("GET", "/api/v1/health", token="").json()
    assert h["store"] == "postgresql", h
    # the state is in the database, not in a kiln.db
    assert not (tmp_path / "data" / "kiln.db").exists()
    assert psql(url, "SELECT count(*) FROM jobs WHERE state = 3") == "5"
    assert psql(url, "SELECT count(*) FROM attempts") == "6"
    m = s.call("GET", "/metrics", token="").body.decode()
    assert 'kiln_jobs{state="succeeded"} 5' in m


def test_scheduler_killed_under_load(pgfarm):
    s, add, url = pgfarm
    add("w1", "--slots", "2")
    ids = [submit(s, spec(f"7.{i}", "sleep 1")) for i in range(6)]
    s.wait_state(ids[0], ("building", "succeeded"))
    s.kill()
    s.listen = s.url.split("//")[1]
    s.start()
    for jid in ids:
        j = s.wait_state(jid, ("succeeded", "failed"), timeout=300)
        assert j["state"] == "succeeded", j
        assert len([a for a in j["attempt_list"] if a["state"] == "succeeded"]) == 1
    jobs = s.call("GET", "/api/v1/jobs?limit=100").json()["jobs"]
    assert sorted(j["id"] for j in jobs) == ids


def test_bad_database_urls_name_the_key(kiln, tmp_path):
    for url, msg in (("postgresql://kiln:s3cret@localhost/kiln", "password file"),
                     ("mysql://localhost/kiln", "expected a postgresql:// URL"),
                     ("postgresql://kiln@/kiln?host=/nonexistent-kiln", "cannot connect")):
        r = kiln("scheduler", "--listen", "127.0.0.1:0", "--data-dir", tmp_path / "d",
                 "--database", url, timeout=60)
        assert r.returncode != 0
        assert "storage.database" in r.stderr and msg in r.stderr, r.stderr
        assert "s3cret" not in r.stderr


def test_a_pool_of_one_connection_runs_the_farm(kiln, kiln_bin, tmp_path, postgres_url):
    """[store] pool: one connection carries every grant, end and read; 0 is refused, named."""
    r = kiln("scheduler", "--listen", "127.0.0.1:0", "--data-dir", tmp_path / "d",
             "--database", postgres_url, "--set", "store.pool=0", timeout=60)
    assert r.returncode != 0 and "store.pool" in r.stderr, r.stderr
    s = Scheduler(kiln_bin, tmp_path / "data", *FAST, f"storage.database={postgres_url}",
                  "store.pool=1")
    s.start()
    w = Worker(kiln_bin, s, "w1", tmp_path / "w1", "--slots", "2")
    try:
        ids = [submit(s, spec(f"8.{i}")) for i in range(4)]
        for jid in ids:
            assert s.wait_state(jid, ("succeeded", "failed"), timeout=300)["state"] == "succeeded"
        # the scheduler's sessions: its writer, its listener and the one pool connection
        app = psql(postgres_url, "SELECT count(*) FROM pg_stat_activity WHERE datname ="
                   " current_database() AND application_name LIKE 'kiln-scheduler-%'")
        assert app == "3", app
    finally:
        w.stop()
        s.stop()
