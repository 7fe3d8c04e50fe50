"""Several schedulers on one PostgreSQL database and one data directory (issue 25): two real
`kiln scheduler`s (one given [store] url in its configuration file, the other --set
store.url=...), three workers given both URLs, 50 jobs submitted through both; the
scheduler holding the reaper and the repository's publisher is killed with SIGKILL under
load, and so is a worker in the middle of a build. No accepted job is lost, none completes
twice, the survivor reaps the dead worker's lease and publishes, and the workers and the
CLI fail over to it."""
import hashlib
import json
import os
import re
import subprocess
import time

import pytest

from conftest import ROOT
from farm import Scheduler, read_line
from test_farm_e2e import FAST, spec, submit
from test_publish_farm import check_repodata

JOBS = 50


def named(i, extra=""):
    # a name each: the repository keeps every job's package (retention is by name)
    return spec("1", extra).replace("farm-hello", f"multi-{i}")


class MultiWorker:
    def __init__(self, kiln_bin, urls, token, name, work, poll=2):
        self.name = name
        self.proc = subprocess.Popen(
            [str(kiln_bin), "worker", "--scheduler", ",".join(urls), "--token", token,
             "--name", name, "--work-dir", str(work), "--slots", "2", "--poll", str(poll)],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            env=dict(os.environ, KILN_LOG_LEVEL="warn"))
        line = read_line(self.proc, time.monotonic() + 30, f"worker {name}")
        assert line.startswith(f"registered as {name}"), line

    def stop(self, sig=15):
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc.stdout.close()


@pytest.fixture
def two(kiln_bin, tmp_path, postgres_url):
    data, repos = tmp_path / "data", tmp_path / "repos"
    sets = (*FAST, f"repositories.main={repos}/main")
    conf = tmp_path / "a.ini"
    conf.write_text(f"[store]\nurl = {postgres_url}\n")
    # started one after the other: the first makes the admin token and the key
    a = Scheduler(kiln_bin, data, *sets, config=conf).start()
    b = Scheduler(kiln_bin, data, *sets, f"store.url={postgres_url}").start()
    b.admin = a.admin
    workers = []
    yield a, b, workers, tmp_path
    for w in workers:
        w.stop()
    b.stop()
    a.stop()


def wait_all(s, ids, timeout):
    deadline = time.monotonic() + timeout
    pending = set(ids)
    while pending and time.monotonic() < deadline:
        for jid in sorted(pending):
            if s.job(jid)["state"] in ("succeeded", "failed", "cancelled"):
                pending.discard(jid)
        if pending:
            time.sleep(0.3)
    assert not pending, {j: s.job(j)["state"] for j in pending}


def test_two_schedulers_one_killed_under_load(two, kiln_bin, kiln):
    a, b, workers, tmp = two
    assert a.call("GET", "/api/v1/health", token="").json()["store"] == "postgresql"
    # the worker tokens and the admin's are one set: made on one, valid on the other
    tok = b.token("worker")
    for n in ("m1", "m2", "m3"):
        workers.append(MultiWorker(kiln_bin, [a.url, b.url], tok, n, tmp / n))
    # A job submitted to b is seen at once on a (the job cache knows another wrote)
    first = submit(b, named(0), repository="main")
    assert a.job(first)["id"] == first
    ids = [first]
    for i in range(1, 40):
        # a few slow ones: a build still running when its worker is killed
        slow = i % 10 == 5
        ids.append(submit((a, b)[i % 2], named(i, "sleep 4" if slow else "sleep 0.3"),
                          "slow.spec" if slow else "m.spec", repository="main"))
    # kill, under load, a worker with a slow build in hand (its lease is left for the
    # reaper) and the scheduler holding the duties (the first started)
    deadline = time.monotonic() + 90
    victim = None
    while victim is None and time.monotonic() < deadline:
        busy = b.call("GET", "/api/v1/jobs?state=building&limit=100").json()["jobs"]
        slow = [j for j in busy if j["spec_name"] == "slow.spec"]
        if slow:
            victim = b.job(slow[0]["id"])
        else:
            time.sleep(0.1)
    assert victim, "no slow build was running"
    killed = [w for w in workers if w.name == victim["worker"]]
    assert killed, (victim["worker"], [w.name for w in workers])
    killed[0].stop(9)
    workers.remove(killed[0])
    a.kill()
    killed_at = time.monotonic()
    # the CLI fails over too: the dead scheduler first in KILN_URL
    env = {"KILN_URL": f"{a.url},{b.url}", "KILN_TOKEN": b.admin}
    for i in range(40, JOBS):
        p = tmp / f"m{i}.spec"
        p.write_text(named(i))
        r = kiln("submit", "--json", "--repository", "main", p, env=dict(os.environ, **env))
        assert r.returncode == 0, r.stderr
        ids.append(json.loads(r.stdout)["id"])
    assert len(set(ids)) == JOBS
    wait_all(b, ids, 240)
    took = time.monotonic() - killed_at
    # 0 accepted jobs lost, 0 completed twice
    for jid in ids:
        j = b.job(jid)
        assert j["state"] == "succeeded", j
        ok = [t for t in j["attempt_list"] if t["state"] == "succeeded"]
        assert len(ok) == 1, j["attempt_list"]
    # the dead worker's lease was reaped by the survivor: lost, then built again
    v = b.job(victim["id"])
    assert any(t["state"] == "lost" for t in v["attempt_list"]), v["attempt_list"]
    listed = b.call("GET", "/api/v1/jobs?limit=200").json()["jobs"]
    assert sorted(j["id"] for j in listed) == sorted(ids)
    # publishing went on on the survivor: every job's package in the repository, on disk
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        doc = b.call("GET", "/api/v1/repos/main").json()
        names = {p["name"] for p in doc["packages"]}
        if len(names) == JOBS:
            break
        time.sleep(0.3)
    assert len(names) == JOBS, sorted(names)
    r = b.call("POST", "/api/v1/repos/main/regenerate?wait=1")
    assert r.status == 200, r.body
    arch = next(d for d in (tmp / "repos" / "main").iterdir()
                if (d / "repodata").is_dir() and d.name != "SRPMS")
    check_repodata(arch)
    primary = b"".join(p.read_bytes() for p in (arch / "repodata").glob("*primary*"))
    assert primary  # compressed: the count is in the packages list above
    files = {p.name for p in (arch / "Packages").rglob("*.rpm")}
    assert all(any(f.startswith(f"{n}-1-1") for f in files) for n in names), files
    print(f"{JOBS} jobs, one scheduler and one worker killed: all done "
          f"{took:.1f} s after the kill")


def test_a_worker_long_polling_one_scheduler_hears_a_job_submitted_to_the_other(two, kiln_bin):
    a, b, workers, tmp = two
    workers.append(MultiWorker(kiln_bin, [b.url], b.token("worker"), "lp", tmp / "lp", 20))
    waits = []
    for i in range(4):
        time.sleep(0.5)  # both slots in their long polls on b (which look again each second)
        t0 = time.monotonic()
        jid = submit(a, named(90 + i))
        deadline = t0 + 30
        while a.job(jid)["state"] == "queued" and time.monotonic() < deadline:
            time.sleep(0.02)
        waits.append(time.monotonic() - t0)
        assert a.job(jid)["state"] != "queued"
        a.wait_state(jid, ("succeeded", "failed"))
    print("long poll wake-ups across schedulers (s):", [round(w, 3) for w in waits])
    # woken by the other scheduler's write (LISTEN/NOTIFY), not by the poll's own look
    # each second (which would make these about 0.5 s on average)
    assert max(waits) < 0.6 and sum(waits) / len(waits) < 0.3, waits


def test_an_upload_to_the_other_scheduler_counts_at_the_completion(two):
    """A completion checks and signs the artifacts its scheduler kept from the uploads it
    took (scheduler/lease_kept.c) without reading them back. An artifact uploaded to the
    other scheduler meanwhile (a worker failing over) is found all the same: named as an
    output, the check reads the attempt's artifacts; not named, the end's guard on the job's
    uploads refuses the end decided without it and the completion decides again on both.
    Either way the job ends with every upload, signed."""
    from test_farm_api import Worker
    a, b, _, tmp = two
    rpm = ROOT / "tests" / "data" / "sign" / "kt-1.0-1.noarch.rpm"
    data = rpm.read_bytes()
    sha = hashlib.sha256(data).hexdigest()
    tok = a.token("worker")
    wa = Worker(a, "hand", tok)
    wb = Worker(b, "hand", tok, secret=wa.secret)
    for named_out in (True, False):
        jid = submit(a, named(70 + named_out))
        lease = wa.lease()
        assert lease and lease["job_id"] == jid
        assert wa.upload(lease, "a.log", b"log\n", kind="log").status == 201
        assert wb.upload(lease, rpm.name, data).status == 201  # the other scheduler's
        outs = [("a.log", hashlib.sha256(b"log\n").hexdigest())]
        if named_out:
            outs.append((rpm.name, sha))
        r = wa.complete(lease, outputs=outs)
        assert r.status == 200 and r.json()["state"] == "succeeded", r.body
        arts = a.call("GET", f"/api/v1/jobs/{jid}/artifacts").json()["artifacts"]
        assert sorted(x["name"] for x in arts) == sorted(["a.log", rpm.name])
        pkg = next(x for x in arts if x["name"] == rpm.name)
        assert pkg["signed"] and pkg["unsigned_sha256"] == sha, pkg


def test_duties_are_held_once_and_move(two):
    a, b, _, _ = two
    m_a = a.call("GET", "/metrics", token="").body.decode()
    m_b = b.call("GET", "/metrics", token="").body.decode()
    assert re.search(r"kiln_duties_held\{duty=\"reaper\"\} 1", m_a), m_a
    assert re.search(r"kiln_duties_held\{duty=\"reaper\"\} 0", m_b), m_b
    a.kill()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        m_b = b.call("GET", "/metrics", token="").body.decode()
        if ("kiln_duties_held{duty=\"reaper\"} 1" in m_b and
                "kiln_duties_held{duty=\"publish:main\"} 1" in m_b):
            break
        time.sleep(0.1)
    assert "kiln_duties_held{duty=\"reaper\"} 1" in m_b, m_b
    assert "kiln_duties_held{duty=\"publish:main\"} 1" in m_b, m_b
