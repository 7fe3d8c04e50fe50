"""The dashboard (issue 13): the static files' HTTP headers, the job list's name search and
the dashboard's time series over the REST API, then the whole dashboard end to end in
Debian's headless Chromium driven by playwright-core (tests/web/dashboard.mjs) against a
real scheduler and worker: a build's log growing live, its state reaching succeeded,
artifacts with digests and a download, provenance, the reproducibility report, the queue's
"why pending", a long build cancelled from the UI with a token, keyboard navigation and a
360 px layout. Screenshots go to build/test-artifacts/web/ (or $KILN_TEST_ARTIFACTS)."""
import hashlib
import json
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from farm import Scheduler
from test_farm_e2e import FAST, Worker, submit

ROOT = Path(__file__).resolve().parents[2]
WEB_TESTS = ROOT / "tests" / "web"
CHROMIUM = "/usr/bin/chromium"

GROWING = """Name: web-growing
Version: 1
Release: 1
Summary: writes its log a line at a time
License: MIT
BuildArch: noarch

%description
A dashboard test package.

%build
for i in $(seq 1 10); do echo "web-log-line-$i"; sleep 0.4; done
echo done > web.txt

%install
mkdir -p %{buildroot}/usr/share/web
cp web.txt %{buildroot}/usr/share/web/web.txt

%files
/usr/share/web/web.txt
"""

SLEEPER = """Name: web-sleeper
Version: 1
Release: 1
Summary: builds for a long time
License: MIT
BuildArch: noarch

%description
d

%build
echo sleeper-started
sleep 240

%files
"""


@pytest.fixture
def sched(kiln_bin, tmp_path):
    s = Scheduler(kiln_bin, tmp_path / "data", *FAST, "auth.anonymous_read=true",
                  "limits.history_interval=500ms",
                  f"repositories.web={tmp_path / 'repos' / 'web'}").start()
    yield s
    s.stop()


def test_static_files_headers_and_etag(sched):
    r = sched.call("GET", "/", token="")
    assert r.status == 200, r.body
    assert r.headers["Content-Type"] == "text/html; charset=utf-8"
    csp = r.headers["Content-Security-Policy"]
    assert "script-src 'self'" in csp and "default-src 'none'" in csp
    assert "frame-ancestors 'none'" in csp
    assert r.headers["X-Content-Type-Options"] == "nosniff"
    assert r.headers["Cache-Control"] == "no-cache"
    etag = r.headers["ETag"]
    html = r.body.decode()
    assert "<title>" in html and "/ui/app.js" in html
    # the same bytes as web/index.html, and its ETag is their sha256's start
    src = (ROOT / "web" / "index.html").read_bytes()
    assert r.body == src and etag == '"%s"' % hashlib.sha256(src).hexdigest()[:16]
    # revalidation: 304 without a body
    r = sched.call("GET", "/", token="", headers={"If-None-Match": etag})
    assert r.status == 304 and r.body == b""
    r = sched.call("GET", "/", token="", headers={"If-None-Match": '"0000", W/' + etag})
    assert r.status == 304
    r = sched.call("GET", "/", token="", headers={"If-None-Match": '"0000"'})
    assert r.status == 200
    for name, ctype in (("app.js", "text/javascript; charset=utf-8"),
                        ("app.css", "text/css; charset=utf-8"),
                        ("favicon.svg", "image/svg+xml")):
        r = sched.call("GET", "/ui/" + name, token="")
        assert r.status == 200 and r.headers["Content-Type"] == ctype, name
        assert r.body == (ROOT / "web" / name).read_bytes()
        assert r.headers["ETag"] and r.headers["Content-Security-Policy"]
    # HEAD answers the headers alone
    r = sched.call("HEAD", "/ui/app.js", token="")
    assert r.status == 200 and r.body == b"" and r.headers["ETag"]
    for bad in ("/ui/nope.js", "/ui/..%2Fkiln.db", "/ui/", "/index.html"):
        assert sched.call("GET", bad, token="").status == 404, bad
    # the page itself needs no token even when reads do; the API keeps asking for one
    assert sched.call("POST", "/", token="").status == 405


def test_job_search_and_history(sched):
    a = submit(sched, GROWING, "web-growing.spec")
    b = submit(sched, SLEEPER, "Web-Sleeper.spec", arch="nowhere")
    ids = lambda q: [j["id"] for j in sched.call("GET", "/api/v1/jobs" + q).json()["jobs"]]
    assert ids("?name=growing") == [a]
    assert ids("?name=WEB-") == [b, a]  # case-insensitive substring of the spec name
    assert ids("?name=sleeper&state=queued") == [b]
    assert ids("?name=sleeper&state=failed") == []
    assert ids("?name=nothing-like-it") == []
    r = sched.call("GET", "/api/v1/jobs?name=" + "x" * 256)
    assert r.status == 400 and "name" in r.json()["error"]["message"]
    # the time series: samples every 500 ms with the queue depth
    deadline = time.monotonic() + 10
    while True:
        doc = sched.call("GET", "/api/v1/stats/history").json()
        if doc["samples"] and doc["samples"][-1]["queued"] == 2:
            break
        assert time.monotonic() < deadline, doc
        time.sleep(0.2)
    assert doc["interval_ms"] == 500 and doc["max_samples"] >= 100
    last = doc["samples"][-1]
    assert last["running"] == 0 and set(last["verdicts"]) == {
        "pending", "reproducible", "differs", "rerun_failed", "unknown"}
    ts = [x["t"] for x in doc["samples"]]
    assert ts == sorted(ts)
    paths = sched.call("GET", "/api/v1/openapi.json", token="").json()["paths"]
    assert {"/", "/ui/{name}", "/api/v1/stats/history"} <= set(paths)
    assert any(p["name"] == "name" for p in paths["/api/v1/jobs"]["get"]["parameters"])
    # anonymous reads are on here; without them the series needs a token like the rest
    assert sched.call("GET", "/api/v1/stats/history", token="").status == 200


def test_history_needs_a_token_without_anonymous_reads(kiln_bin, tmp_path):
    s = Scheduler(kiln_bin, tmp_path / "data", *FAST).start()
    try:
        assert s.call("GET", "/api/v1/stats/history", token="").status == 401
        assert s.call("GET", "/", token="").status == 200
        assert s.call("GET", "/api/v1/stats/history").status == 200
    finally:
        s.stop()


def artifacts_dir():
    d = Path(os.environ.get("KILN_TEST_ARTIFACTS", ROOT / "build" / "test-artifacts")) / "web"
    if d.exists():
        shutil.rmtree(d)
    d.mkdir(parents=True)
    return d


def test_dashboard_in_chromium(kiln_bin, sched, tmp_path):
    assert Path(CHROMIUM).exists(), "Debian's chromium is missing: run scripts/deps.sh"
    assert (WEB_TESTS / "node_modules" / "playwright-core").is_dir(), \
        "playwright-core is missing: run scripts/web-deps.sh (npm ci in tests/web)"
    w = Worker(kiln_bin, sched, "w1", tmp_path / "w1", "--slots", "2")
    try:
        submit_tok = sched.token("submit,read")  # the dashboard shows every job and worker
        # a job no worker can take, for the queue's "why pending"
        stuck = submit(sched, SLEEPER, "web-stuck.spec", arch="s390x")
        sleeper = submit(sched, SLEEPER, "web-sleeper.spec")
        out = artifacts_dir()
        env = dict(os.environ, KILN_URL=sched.url, KILN_TOKEN=submit_tok,
                   KILN_GROWING=GROWING, KILN_STUCK=str(stuck), KILN_OUT=str(out),
                   KILN_PROFILE=str(tmp_path / "chromium-profile"),
                   KILN_SLEEPER=str(sleeper), KILN_CHROMIUM=CHROMIUM,
                   KILN_REPO="web")
        t0 = time.monotonic()
        p = subprocess.run(["node", str(WEB_TESTS / "dashboard.mjs")], env=env,
                           capture_output=True, text=True, timeout=240, cwd=WEB_TESTS)
        took = time.monotonic() - t0
        assert p.returncode == 0, f"dashboard.mjs failed after {took:.0f}s:\n" \
                                  f"{p.stdout[-6000:]}\n{p.stderr[-6000:]}"
        report = json.loads(p.stdout.strip().splitlines()[-1])
        # what the browser saw agrees with the API
        j = sched.job(int(report["job"]))
        assert j["state"] == "succeeded"
        arts = {a["name"]: a for a in j["artifacts"]}
        assert report["downloaded"]["sha256"] == arts[report["downloaded"]["name"]]["sha256"]
        assert len(set(report["log_lengths"])) >= 3, report["log_lengths"]
        sleeper = sched.job(sleeper)
        assert sleeper["state"] == "cancelled" and sleeper["failure_class"] == "cancel"
        for shot in ("jobs.png", "job.png", "job-360.png", "jobs-360.png", "queue.png",
                     "workers.png", "trends.png", "cancelled.png"):
            assert (out / shot).stat().st_size > 1000, shot
    finally:
        w.stop()


def test_batch_page_in_chromium(sched, tmp_path):
    """[batches] The batch page shows the graph's levels with each job's state."""
    assert Path(CHROMIUM).exists(), "Debian's chromium is missing: run scripts/deps.sh"
    assert (WEB_TESTS / "node_modules" / "playwright-core").is_dir(), \
        "playwright-core is missing: run scripts/web-deps.sh (npm ci in tests/web)"
    chain = ROOT / "tests" / "data" / "roots" / "chain"
    members = [{"spec": (chain / f"{n}.spec").read_text(), "spec_name": f"{n}.spec"}
               for n in ("chainc", "chaind", "chainb", "chaina")]
    r = sched.call("POST", "/api/v1/batches", {"root": "nowhere", "members": members})
    assert r.status == 201, r.body
    b = r.json()
    out = tmp_path / "shots"
    out.mkdir()
    env = dict(os.environ, KILN_URL=sched.url, KILN_BATCH=str(b["id"]), KILN_OUT=str(out),
               KILN_PROFILE=str(tmp_path / "chromium-profile"), KILN_CHROMIUM=CHROMIUM)
    p = subprocess.run(["node", str(WEB_TESTS / "batch.mjs")], env=env, capture_output=True,
                       text=True, timeout=120, cwd=WEB_TESTS)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    seen = json.loads(p.stdout.strip().splitlines()[-1])
    assert seen["problems"] == [] and seen["state"] == "building"
    names = [sorted(j["name"] for j in lvl) for lvl in seen["levels"]]
    assert names == [["chaina"], ["chainb", "chaind"], ["chainc"]]
    ids = {j["name"]: j["id"] for j in b["jobs"]}
    assert all(int(j["job"]) == ids[j["name"]] and j["state"] == "queued"
               for lvl in seen["levels"] for j in lvl)
    assert (out / "batch.png").stat().st_size > 1000
    assert seen["back"] == f"#/batches/{b['id']}"
    assert seen["waits"] == f"#{b['id']} level 2, waits for 1 more", seen["waits"]
