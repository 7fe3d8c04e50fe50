"""The farm end to end: a real `kiln scheduler` and real `kiln worker` daemons on loopback,
real specs built by the build pipeline, signed packages checked by rpmkeys; faults: a
worker killed mid-build, the scheduler killed under load, cancel of a running build."""
import base64
import hashlib
import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from farm import Scheduler, read_line

FAST = ("limits.lease_ttl=3", "limits.retry_backoff=200ms", "limits.tick=100ms",
        "limits.poll_max=5")

HELLO = """Name: farm-hello
Version: {v}
Release: 1
Summary: a farm test package
License: MIT
BuildArch: noarch

%description
Built by a kiln worker.

%build
echo built-{v} > hello.txt
{extra}

%install
mkdir -p %{{buildroot}}/usr/share/farm
cp hello.txt %{{buildroot}}/usr/share/farm/hello-{v}.txt

%files
/usr/share/farm/hello-{v}.txt
"""

SOURCED = """Name: farm-src
Version: 1
Release: 1
Summary: uses an uploaded source
License: MIT
BuildArch: noarch
Source0: data.txt

%description
d

%install
mkdir -p %{buildroot}/usr/share/farm-src
cp %{SOURCE0} %{buildroot}/usr/share/farm-src/data.txt

%files
/usr/share/farm-src/data.txt
"""

FAILING = """Name: farm-bad
Version: 1
Release: 1
Summary: fails
License: MIT
%description
d
%build
echo about to fail
exit 3
%files
"""


def spec(v, extra=""):
    return HELLO.format(v=v, extra=extra)


class Worker:
    def __init__(self, kiln_bin, sched, name, work, *extra, env=None):
        self.name = name
        # one token a worker name, kept across restarts: the name belongs to the token
        # that registered it
        toks = sched.__dict__.setdefault("worker_tokens", {})
        if name not in toks:
            toks[name] = sched.token("worker")
        tok = toks[name]
        args = [str(kiln_bin), "worker", "--scheduler", sched.url, "--token", tok,
                "--name", name, "--work-dir", str(work), "--poll", "2", *extra]
        # the sandbox when this machine allows it (the worker falls back to the host and
        # says so otherwise, as kiln build does)
        self.proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     env=dict(os.environ, KILN_LOG_LEVEL="info", **(env or {})))
        line = read_line(self.proc, time.monotonic() + 30, f"worker {name}")
        assert line.startswith(f"registered as {name}"), line

    def stop(self, sig=signal.SIGTERM):
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc.stdout.close()
        self.proc.stderr.close()


@pytest.fixture
def farm(kiln_bin, tmp_path):
    s = Scheduler(kiln_bin, tmp_path / "data", *FAST).start()
    workers = []

    def add(name, *extra):
        w = Worker(kiln_bin, s, name, tmp_path / name, *extra)
        workers.append(w)
        return w

    yield s, add
    for w in workers:
        w.stop()
    s.stop()


def submit(s, text, name="farm.spec", **kw):
    r = s.call("POST", "/api/v1/jobs", {"spec": text, "spec_name": name, **kw})
    assert r.status == 201, r.body
    return r.json()["id"]


def rpm_keydb(s, tmp_path):
    key = tmp_path / "scheduler.asc"
    key.write_bytes(s.call("GET", "/api/v1/keys/default", token="").body)
    db = tmp_path / "rpmdb"
    if not db.exists():
        subprocess.run(["rpmkeys", "--dbpath", str(db), "--import", str(key)], check=True)
    return db


def check_signed_artifacts(s, jid, tmp_path, want):
    arts = s.call("GET", f"/api/v1/jobs/{jid}/artifacts").json()["artifacts"]
    names = sorted(a["name"] for a in arts)
    assert any(n.startswith(want) and n.endswith(".noarch.rpm") for n in names), names
    assert any(n.endswith(".src.rpm") for n in names), names
    db = rpm_keydb(s, tmp_path)
    for a in arts:
        data = s.call("GET", a["url"]).body
        assert hashlib.sha256(data).hexdigest() == a["sha256"] and a["signed"]
        pkg = tmp_path / f"{jid}-{a['name']}"
        pkg.write_bytes(data)
        out = subprocess.run(["rpmkeys", "--dbpath", str(db), "--checksig", "-v", str(pkg)],
                             capture_output=True, text=True)
        assert out.returncode == 0 and "Signature, key ID" in out.stdout, out.stdout
    return arts


def test_twenty_jobs_on_two_workers(farm, tmp_path):
    s, add = farm
    add("w1", "--slots", "2")
    add("w2")
    ids = [submit(s, spec(f"1.{i}")) for i in range(18)]
    src = s.put_blob(b"uploaded source\n")
    ids.append(submit(s, SOURCED, "farm-src.spec", sources=[{"name": "data.txt",
                                                            "sha256": src}]))
    ids.append(submit(s, spec("2.0"), defines={"dist": ".farm"}))
    for jid in ids:
        j = s.wait_state(jid, ("succeeded", "failed", "cancelled"), timeout=300)
        assert j["state"] == "succeeded", j
    workers = {a["worker"] for jid in ids for a in s.job(jid)["attempt_list"]}
    assert workers == {"w1", "w2"}
    for jid in ids[:3] + ids[-2:]:
        want = "farm-src" if jid == ids[-2] else "farm-hello"
        check_signed_artifacts(s, jid, tmp_path, want)
    # the packages hold what the specs built
    arts = s.call("GET", f"/api/v1/jobs/{ids[-2]}/artifacts").json()["artifacts"]
    rpm = next(a for a in arts if a["name"].endswith(".noarch.rpm"))
    pkg = tmp_path / "src.rpm"
    pkg.write_bytes(s.call("GET", rpm["url"]).body)
    out = subprocess.run(["rpm", "-qpl", str(pkg)], capture_output=True, text=True)
    assert out.stdout.strip() == "/usr/share/farm-src/data.txt"
    log = s.call("GET", f"/api/v1/jobs/{ids[0]}/attempts/1/log").body.decode()
    assert "kiln worker w" in log and "%build" in log or "build" in log
    m = s.call("GET", "/metrics", token="").body.decode()
    assert 'kiln_jobs{state="succeeded"} 20' in m and "kiln_packages_signed_total" in m
    # the workers took jobs in their completions' replies too, not only by lease calls
    nxt = int(m.split("\nkiln_lease_grants_next_total ")[1].split()[0])
    assert 0 < nxt < 20, m


# Walks up from the build script to the worker's build child: a process of its own, exec'd
# (`kiln worker --build-child FILE`), whose environment lacks the worker's token.
ANCESTRY = r"""p=$$; child=none
while [ "$p" -gt 1 ]; do
  if tr '\0' ' ' < /proc/$p/cmdline | grep -q -- ' --build-child '; then
    child=$p; break
  fi
  p=$(awk '/^PPid:/ {print $2}' /proc/$p/status)
done
echo "build-child: $child"
[ "$child" != none ]
echo "token in its environment: $(tr '\0' '\n' < /proc/$child/environ | grep -c '^KILN_TOKEN=')"
parent=$(awk '/^PPid:/ {print $2}' /proc/$child/status)
echo "its parent is the worker: $(tr '\0' ' ' < /proc/$parent/cmdline | grep -c ' worker --scheduler ')"
"""


def test_the_build_child_is_a_process_of_its_own_without_the_token(kiln_bin, tmp_path):
    """The worker's slots are threads; a build child forked from them without exec could
    inherit a lock another thread held (it once hung in OpenSSL): it execs kiln."""
    s = Scheduler(kiln_bin, tmp_path / "data", *FAST).start()
    w = None
    try:
        w = Worker(kiln_bin, s, "w1", tmp_path / "w1", "--no-sandbox", "--slots", "2",
                   env={"KILN_TOKEN": "not-for-builds"})
        jid = submit(s, spec("9.0", ANCESTRY))
        j = s.wait_state(jid, ("succeeded", "failed"))
        log = s.call("GET", f"/api/v1/jobs/{jid}/attempts/1/log").body.decode()
        assert j["state"] == "succeeded", log
        assert "token in its environment: 0" in log, log
        assert "its parent is the worker: 1" in log, log
    finally:
        if w:
            w.stop()
        s.stop()


class OlderScheduler:
    """A scheduler from before "next" (its strict decoding refuses the field), played by a
    proxy in front of the real one: completions that ask for the next job get the 400 the
    older scheduler answered; every other call is passed through."""

    REFUSAL = json.dumps({"error": {"code": "invalid",
                                    "message": "field 'next': unknown field"}}).encode()

    def __init__(self, url):
        import http.server
        import threading
        import urllib.error
        import urllib.request

        target = url
        self.refused = 0
        proxy = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def relay(self):
                n = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(n) if n else None
                if self.path.endswith("/complete") and body and b'"next"' in body:
                    proxy.refused += 1
                    return self.answer(400, "application/json", self.REFUSAL_BODY)
                hdr = {k: v for k, v in self.headers.items()
                       if k.lower() not in ("host", "content-length", "connection")}
                req = urllib.request.Request(target + self.path, data=body, headers=hdr,
                                             method=self.command)
                try:
                    with urllib.request.urlopen(req, timeout=60) as r:
                        return self.answer(r.status, r.headers.get("Content-Type"), r.read())
                except urllib.error.HTTPError as e:
                    return self.answer(e.code, e.headers.get("Content-Type"), e.read())

            def answer(self, status, ctype, data):
                self.send_response(status)
                if ctype:
                    self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                if data and status not in (204, 304):
                    self.wfile.write(data)

            do_GET = do_POST = do_PUT = do_DELETE = relay

        Handler.REFUSAL_BODY = self.REFUSAL
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


def test_a_worker_falls_back_to_lease_calls_with_an_older_scheduler(kiln_bin, tmp_path):
    s = Scheduler(kiln_bin, tmp_path / "data", *FAST).start()
    old = OlderScheduler(s.url)
    w = None
    try:
        ids = [submit(s, spec(f"8.{i}")) for i in range(3)]
        s.url, real = old.url, s.url
        w = Worker(kiln_bin, s, "w1", tmp_path / "w1", "--no-sandbox")
        s.url = real
        for jid in ids:
            j = s.wait_state(jid, ("succeeded", "failed"), timeout=120)
            assert j["state"] == "succeeded", j
        # refused once, then never asked again; every job by a lease call
        assert old.refused == 1
        m = s.call("GET", "/metrics", token="").body.decode()
        assert "\nkiln_lease_grants_next_total 0\n" in m, m
    finally:
        if w:
            w.stop()
        old.close()
        s.stop()


def test_build_failure_is_not_retried(farm):
    s, add = farm
    add("w1")
    jid = submit(s, FAILING, "farm-bad.spec")
    j = s.wait_state(jid, ("succeeded", "failed"))
    assert j["state"] == "failed" and j["failure_class"] == "build" and j["attempts"] == 1
    log = s.call("GET", f"/api/v1/jobs/{jid}/attempts/1/log").body.decode()
    assert "about to fail" in log


def test_killed_worker_is_requeued_elsewhere(farm, kiln_bin, tmp_path):
    s, add = farm
    w1 = add("w1")
    jid = submit(s, spec("3.0", "echo started-slow; sleep 6"))
    # wait until w1 has started the build (its log says so), then kill it hard
    j = s.wait_state(jid, ("building",))
    assert j["worker"] == "w1"
    r = s.call("GET", f"/api/v1/jobs/{jid}/attempts/1/log?offset=0&follow=1")
    while b"started-slow" not in r.body:
        r = s.call("GET", f"/api/v1/jobs/{jid}/attempts/1/log?offset=0&follow=1")
    w1.proc.kill()
    w1.proc.wait()
    add("w2")
    j = s.wait_state(jid, ("succeeded", "failed"), timeout=120)
    assert j["state"] == "succeeded", j
    att = j["attempt_list"]
    assert [a["state"] for a in att] == ["lost", "succeeded"]
    assert att[0]["worker"] == "w1" and att[1]["worker"] == "w2"
    # the first attempt's log is kept
    assert b"started-slow" in s.call("GET", f"/api/v1/jobs/{jid}/attempts/1/log").body


def test_results_survive_a_worker_killed_before_completing(kiln_bin, tmp_path):
    """kill -9 between a build's end and its completion: restarted while the scheduler
    still holds the lease, the worker uploads the kept packages and completes the same
    attempt; restarted after the lease expired, it drops them and the job runs again."""
    # a lease of 12 s: long enough that a loaded machine's heartbeats keep attempt 2 alive
    s = Scheduler(kiln_bin, tmp_path / "data", "limits.lease_ttl=12", *FAST[1:]).start()
    work = tmp_path / "w1"
    hold = {"KILN_TEST_WORKER_HOLD_MS": "600000"}  # test-only: stop after saving the result
    try:
        for v, late in (("8.0", False), ("8.1", True)):
            w = Worker(kiln_bin, s, "w1", work, env=hold)
            jid = submit(s, spec(v))
            deadline = time.monotonic() + 120
            while not list(work.glob("jobs/*/completion.json")):
                assert time.monotonic() < deadline and w.proc.poll() is None
                time.sleep(0.05)
            w.proc.kill()  # SIGKILL
            w.proc.wait()
            w.stop()
            assert s.job(jid)["state"] == "building"
            if late:  # the scheduler requeues the job once the lease expired
                s.wait_state(jid, ("queued",), timeout=30)
            w = Worker(kiln_bin, s, "w1", work)
            j = s.wait_state(jid, ("succeeded", "failed"), timeout=120)
            w.stop()
            assert j["state"] == "succeeded", j
            att = [a["state"] for a in j["attempt_list"]]
            if late:
                # exactly attempt 1 lost: the kept result dropped, never sent. (Attempt 1
                # once went to the long poll of the worker stopped above, dead by then:
                # a job submitted before that poll's deadline was leased into its closed
                # connection and a second attempt was lost.)
                assert att == ["lost", "succeeded"], j
            else:
                assert att == ["succeeded"], j
            assert f"farm-hello-{v}-1.noarch.rpm" in [a["name"] for a in j["artifacts"]]
            log = s.call("GET", f"/api/v1/jobs/{jid}/attempts/1/log").body
            assert (b"sending the result kept" in log) != late, log
            assert not list(work.glob("jobs/*")), list(work.glob("jobs/*"))
    finally:
        s.stop()


def test_cancel_stops_a_running_build(farm):
    s, add = farm
    add("w1")
    jid = submit(s, spec("4.0", "echo sleeping; sleep 120"))
    s.wait_state(jid, ("building",))
    t = time.monotonic()
    r = s.call("POST", f"/api/v1/jobs/{jid}/cancel")
    assert r.status == 202
    j = s.wait_state(jid, ("cancelled", "failed", "succeeded"), timeout=30)
    assert j["state"] == "cancelled" and time.monotonic() - t < 10
    # the worker is free again
    jid2 = submit(s, spec("4.1"))
    assert s.wait_state(jid2, ("succeeded", "failed"))["state"] == "succeeded"


def test_scheduler_killed_under_load(farm, kiln_bin, tmp_path):
    s, add = farm
    add("w1", "--slots", "2")
    ids = [submit(s, spec(f"5.{i}", "sleep 1")) for i in range(6)]
    s.wait_state(ids[0], ("building", "succeeded"))
    s.kill()
    # back on the same port, so the workers (which know only the URL) find it again
    s.listen = s.url.split("//")[1]
    s.start()
    # the workers reconnect by themselves; every accepted job is there and finishes once
    for jid in ids:
        j = s.wait_state(jid, ("succeeded", "failed"), timeout=300)
        assert j["state"] == "succeeded", j
        done = [a for a in j["attempt_list"] if a["state"] == "succeeded"]
        assert len(done) == 1
    jobs = s.call("GET", "/api/v1/jobs?limit=100").json()["jobs"]
    assert sorted(j["id"] for j in jobs) == ids


def test_cli_submit_wait_follow_download(farm, kiln, tmp_path):
    s, add = farm
    add("w1")
    sub = s.token("submit,read")
    env = {"KILN_URL": s.url, "KILN_TOKEN": sub}
    f = tmp_path / "cli.spec"
    f.write_text(spec("6.0"))
    r = kiln("submit", f, "--follow", env=env, timeout=300)
    assert r.returncode == 0, r.stderr
    assert "built-6.0" in r.stdout or "job" in r.stdout
    jid = int(r.stdout.split("job ")[1].split()[0])
    r = kiln("download", str(jid), "-o", tmp_path / "dl", env=env)
    assert r.returncode == 0, r.stderr
    got = sorted(p.name for p in (tmp_path / "dl").iterdir())
    assert any(n.endswith(".noarch.rpm") for n in got) and any(n.endswith(".src.rpm")
                                                                for n in got)
    r = kiln("jobs", env=env)
    assert r.returncode == 0 and f"{jid}" in r.stdout and "succeeded" in r.stdout
    r = kiln("logs", str(jid), env=env)
    assert r.returncode == 0 and "kiln worker w1" in r.stdout
    bad = tmp_path / "bad.spec"
    bad.write_text(FAILING)
    r = kiln("submit", bad, "--wait", env=env, timeout=300)
    assert r.returncode == 1 and "failed" in r.stderr
    r = kiln("submit", f, env={"KILN_URL": s.url, "KILN_TOKEN": "nope"})
    assert r.returncode == 1 and "401" in r.stderr


GIT_SPEC = """Name: farm-git
Version: 1.2
Release: 1
Summary: built from a git repository
License: MIT
BuildArch: noarch
Source0: notes.txt

%description
d

%install
mkdir -p %{buildroot}/usr/share/farm-git
cp %{SOURCE0} %{buildroot}/usr/share/farm-git/

%files
/usr/share/farm-git/notes.txt
"""


def test_git_job(farm, tmp_path):
    s, add = farm
    add("w1")
    repo = tmp_path / "repo"
    (repo / "rpm").mkdir(parents=True)
    (repo / "rpm" / "farm-git.spec").write_text(GIT_SPEC)
    (repo / "rpm" / "notes.txt").write_text("from git\n")
    env = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.org",
               GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@example.org")
    for cmd in (["init", "-q", "-b", "main"], ["add", "."], ["commit", "-q", "-m", "one"]):
        subprocess.run(["git", "-C", str(repo), *cmd], check=True, env=env)
    commit = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], check=True,
                            capture_output=True, text=True).stdout.strip()
    r = s.call("POST", "/api/v1/jobs", {"git": {"url": f"file://{repo}", "ref": "main",
                                                "spec": "rpm/farm-git.spec"}})
    assert r.status == 201, r.body
    j = s.wait_state(r.json()["id"], ("succeeded", "failed"), timeout=120)
    assert j["state"] == "succeeded", ([a["message"] for a in j["attempt_list"]], s.call(
        "GET", f"/api/v1/jobs/{j['id']}/attempts/1/log").body)
    log = s.call("GET", f"/api/v1/jobs/{j['id']}/attempts/1/log").body.decode()
    assert f"is commit {commit}" in log
    names = [a["name"] for a in j["artifacts"]]
    assert "farm-git-1.2-1.noarch.rpm" in names, names
    # the manifest (and so the content key) names the commit the worker built
    assert j["manifest"]["git"]["commit"] == commit, j["manifest"]
    raw = json.dumps(j["manifest"], sort_keys=True, separators=(",", ":"))
    assert j["content_key"] == hashlib.sha256(raw.encode()).hexdigest()
    # a rerun after main moved on builds the recorded commit, and the provenance says it
    (repo / "rpm" / "notes.txt").write_text("moved on\n")
    subprocess.run(["git", "-C", str(repo), "commit", "-q", "-am", "two"], check=True, env=env)
    r = s.call("POST", f"/api/v1/jobs/{j['id']}/reproduce", {"count": 1})
    assert r.status in (200, 201, 202), r.body
    rerun = s.wait_state(j["id"] + 1, ("succeeded", "failed"), timeout=120)
    assert rerun["manifest"]["git"]["commit"] == commit
    log = s.call("GET", f"/api/v1/jobs/{rerun['id']}/attempts/1/log").body.decode()
    assert f"is commit {commit} (pinned by the job's manifest)" in log, log
    rpm = next(a for a in j["artifacts"] if a["name"].endswith(".noarch.rpm"))
    deadline = time.monotonic() + 30
    while (r := s.call("GET", f"/api/v1/artifacts/{rpm['sha256']}/provenance")).status != 200:
        assert time.monotonic() < deadline, r.body
        time.sleep(0.2)
    st = json.loads(base64.b64decode(r.json()["payload"]))
    deps = {d["name"]: d for d in st["predicate"]["buildDefinition"]["resolvedDependencies"]}
    assert deps["git"]["digest"] == {"gitCommit": commit}, deps


def test_sigterm_finishes_the_build_then_a_second_hands_it_back(farm):
    s, add = farm
    w1 = add("w1")
    jid = submit(s, spec("7.0", "echo slow-one; sleep 3"))
    s.wait_state(jid, ("building",))
    w1.proc.send_signal(signal.SIGTERM)
    assert w1.proc.wait(timeout=60) == 0
    assert s.job(jid)["state"] == "succeeded"
    # twice: the running build is killed and its lease handed back at once
    w2 = add("w2")
    jid = submit(s, spec("7.1", "echo slow-two; sleep 60"))
    s.wait_state(jid, ("building",))
    w2.proc.send_signal(signal.SIGTERM)
    time.sleep(0.5)  # two signals sent at once may arrive as one
    w2.proc.send_signal(signal.SIGTERM)
    assert w2.proc.wait(timeout=30) == 0
    j = s.job(jid)
    assert j["state"] == "queued" and j["attempt_list"][0]["state"] == "released", j
    assert j["max_attempts"] == 4  # a hand-back costs no attempt
    assert s.call("POST", f"/api/v1/jobs/{jid}/cancel").json()["state"] == "cancelled"


def test_srpm_job(farm, tmp_path):
    s, add = farm
    add("w1")
    top = tmp_path / "top"
    (top / "SPECS").mkdir(parents=True)
    (top / "SPECS" / "farm-hello.spec").write_text(spec("8.0"))
    subprocess.run(["rpmbuild", "-bs", "--nodeps", "--quiet", "--define", f"_topdir {top}",
                    str(top / "SPECS" / "farm-hello.spec")], check=True, capture_output=True)
    srpm = next((top / "SRPMS").glob("*.src.rpm"))
    sha = s.put_blob(srpm.read_bytes())
    r = s.call("POST", "/api/v1/jobs", {"srpm": {"name": srpm.name, "sha256": sha}})
    assert r.status == 201 and r.json()["spec_name"] == srpm.name, r.body
    j = s.wait_state(r.json()["id"], ("succeeded", "failed"), timeout=120)
    assert j["state"] == "succeeded", j
    # like rpmbuild --rebuild: the binary packages, signed by the scheduler
    assert [a["name"] for a in j["artifacts"]] == ["farm-hello-8.0-1.noarch.rpm"]
    pkg = tmp_path / "rebuilt.rpm"
    pkg.write_bytes(s.call("GET", j["artifacts"][0]["url"]).body)
    out = subprocess.run(["rpmkeys", "--dbpath", str(rpm_keydb(s, tmp_path)), "--checksig",
                          str(pkg)], capture_output=True, text=True)
    assert out.returncode == 0 and "signatures OK" in out.stdout, out.stdout


SAME_SPEC = """Name: same-build
Version: 1
Release: 1
Summary: built alike by kiln build and by a farm job
License: MIT
BuildArch: noarch
%bcond_with extra

%description
d

%install
mkdir -p %{buildroot}/usr/share/same
echo "flag=%{?my_flag}" > %{buildroot}/usr/share/same/out
%if %{with extra}
echo extra > %{buildroot}/usr/share/same/extra
%endif

%files
/usr/share/same

%changelog
* Mon Jan 01 2024 A <a@example.org> - 1-1
- first
"""


def test_kiln_build_and_a_farm_job_make_the_same_package(farm, kiln, tmp_path):
    """One build assembly: the same spec, a --define whose name has a '-' (rpm reads it as
    '_') and --with give byte-identical packages locally and on the farm."""
    s, add = farm
    add("w1")
    f = tmp_path / "same.spec"
    f.write_text(SAME_SPEC)
    top = tmp_path / "top"
    r = kiln("build", "-ba", "--topdir", top, "--define", "my-flag hello", "--with", "extra",
             f, timeout=300)
    assert r.returncode == 0, r.stderr
    local = next((top / "RPMS" / "noarch").glob("same-build-*.rpm"))
    env = {"KILN_URL": s.url, "KILN_TOKEN": s.token("submit,read")}
    r = kiln("submit", f, "-D", "my-flag hello", "--with", "extra", "--wait", env=env,
             timeout=300)
    assert r.returncode == 0, r.stderr
    jid = int(r.stdout.split("job ")[1].split()[0])
    r = kiln("download", str(jid), "-o", tmp_path / "dl", env=env)
    assert r.returncode == 0, r.stderr
    farm_rpm = next((tmp_path / "dl").glob("same-build-*.noarch.rpm"))
    # the scheduler signs what it publishes: compare the unsigned bytes
    r = kiln("sign", "--delete", farm_rpm)
    assert r.returncode == 0, r.stderr
    out = subprocess.run(["rpm2cpio", str(farm_rpm)], capture_output=True, check=True).stdout
    assert b"flag=hello" in out and b"usr/share/same/extra" in out
    assert farm_rpm.read_bytes() == local.read_bytes()
