"""Forge webhooks in (issue 26): POST /api/v1/hooks/{github|gitlab|forgejo} against a real
`kiln scheduler`, with deliveries in each forge's header formats and payload shapes, and a
local git repository (file://) whose commits the jobs must pin."""
import hashlib
import hmac
import json
import subprocess
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from farm import Scheduler

SECRET = "s3cret-for-hooks"


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    """A git repository with a spec on main and on dev; its commits by branch."""
    d = tmp_path_factory.mktemp("gitrepo")

    def git(*a):
        return subprocess.run(["git", "-C", str(d), *a], check=True, capture_output=True,
                              text=True, env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t",
                                              "GIT_COMMITTER_NAME": "t",
                                              "GIT_COMMITTER_EMAIL": "t@t",
                                              "PATH": "/usr/bin:/bin"}).stdout.strip()
    git("init", "-q", "-b", "main")
    (d / "project.spec").write_text("Name: p\nVersion: 1\nRelease: 1\nSummary: s\n"
                                    "License: MIT\n%description\nd\n")
    git("add", "project.spec")
    git("commit", "-q", "-m", "one")
    main = git("rev-parse", "HEAD")
    git("checkout", "-q", "-b", "dev")
    (d / "README").write_text("dev\n")
    git("add", "README")
    git("commit", "-q", "-m", "two")
    dev = git("rev-parse", "HEAD")
    git("checkout", "-q", "-b", "nospec")
    git("mv", "project.spec", "other.spec")
    git("commit", "-q", "-m", "three")
    return {"url": "file://" + str(d), "main": main, "dev": dev,
            "nospec": git("rev-parse", "HEAD")}


class FakeForge:
    """A forge's status API on loopback: records each POST; answers 500 to the first
    `fail` of them (a forge having a bad minute), 201 after."""

    def __init__(self):
        self.calls, self.fail, self.lock = [], 0, threading.Lock()
        forge = self

        class H(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                with forge.lock:
                    failed = forge.fail > 0
                    forge.fail -= failed
                    forge.calls.append({"path": self.path, "failed": failed,
                                        "auth": self.headers.get("Authorization"),
                                        "body": json.loads(body), "at": time.monotonic()})
                self.send_response(500 if failed else 201)
                self.send_header("Content-Type", "application/json")
                self.end_headers()
                self.wfile.write(b"{}")

            def log_message(self, *a):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def posted(self, n, timeout=10):
        """The first n statuses the forge took."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self.lock:
                ok = [c for c in self.calls if not c["failed"]]
            if len(ok) >= n:
                return ok
            time.sleep(0.05)
        raise AssertionError(f"{len(ok)} statuses posted, expected {n}: {self.calls}")


class Receiver:
    """An outgoing webhook's receiver on loopback: checks each event's signature with the
    secret, as a consumer would; answers 500 to the first `fail` of them."""

    def __init__(self, secret):
        self.events, self.calls, self.fail, self.lock = [], [], 0, threading.Lock()
        self.answer = b""  # the body of a 500
        rcv = self

        class H(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                want = "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
                sig = self.headers.get("X-Kiln-Signature-256", "")
                with rcv.lock:
                    failed = rcv.fail > 0
                    rcv.fail -= failed
                    call = {"path": self.path, "failed": failed, "body": json.loads(body),
                            "verified": hmac.compare_digest(sig, want),
                            "event": self.headers.get("X-Kiln-Event"),
                            "delivery": self.headers.get("X-Kiln-Delivery"),
                            "timestamp": self.headers.get("X-Kiln-Timestamp"),
                            "at": time.monotonic()}
                    rcv.calls.append(call)
                    if not failed:
                        rcv.events.append(call)
                self.send_response(500 if failed else 204)
                if failed:
                    self.send_header("Content-Length", str(len(rcv.answer)))
                self.end_headers()
                if failed:
                    self.wfile.write(rcv.answer)

            def log_message(self, *a):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def of_job(self, jid, n, timeout=10):
        """The first n job.state events of job jid the receiver took."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self.lock:
                got = [e for e in self.events if e["event"] == "job.state"
                       and e["body"]["job"]["id"] == jid]
            if len(got) >= n:
                return got
            time.sleep(0.05)
        raise AssertionError(f"{len(got)} events of job {jid}, expected {n}: {self.calls}")


WEBHOOK_SECRET = "webhook-secret-for-chat"


@pytest.fixture
def forge():
    f = FakeForge()
    yield f
    f.server.shutdown()


@pytest.fixture
def receiver():
    r = Receiver(WEBHOOK_SECRET)
    yield r
    r.server.shutdown()


def restart(s):
    """kill -9 and start again on the same port and data."""
    s.kill()
    s.listen = s.url.split("//")[1]
    s.start()


def farm_config(tmp_path, forge, receiver):
    for kind in ("github", "gitlab", "forgejo"):
        (tmp_path / f"{kind}.secret").write_text(SECRET + "\n")
    (tmp_path / "github.token").write_text("ghp_token\n")
    (tmp_path / "chat.secret").write_text(WEBHOOK_SECRET + "\n")
    cfg = tmp_path / "kiln.ini"
    cfg.write_text(f"""
[webhook chat]
url = {receiver.url}/kiln/in
secret_file = {tmp_path}/chat.secret
events = job.state publish

[forge github]
kind = github
api_url = {forge.url}
secret_file = {tmp_path}/github.secret
token_file = {tmp_path}/github.token

[forge lab]
kind = gitlab
api_url = {forge.url}/api/v4
secret_file = {tmp_path}/gitlab.secret

[forge codeberg]
kind = forgejo
secret_file = {tmp_path}/forgejo.secret

[repositories]
stable =

[hook owner/project]
forge = github
spec = project.spec
events = push pull_request comment tag
branches = main
publish = stable

[hook group/project]
forge = lab
spec = project.spec
events = push merge_request

[hook org/project]
forge = codeberg
spec = project.spec
events = push pull_request comment

[hook owner/repro]
forge = github
spec = project.spec
reruns = 1
format = v6

[hook owner/team]
forge = github
spec = project.spec
project = team

[hook owner/lost]
forge = github
spec = project.spec
project = nosuch
""")
    return cfg


@pytest.fixture
def sched(kiln_bin, tmp_path, forge, receiver):
    s = Scheduler(kiln_bin, tmp_path / "data", config=farm_config(tmp_path, forge, receiver))
    s.start()
    yield s
    s.stop()


@pytest.fixture
def pgsched(kiln_bin, tmp_path, forge, receiver, postgres_url):
    s = Scheduler(kiln_bin, tmp_path / "data", f"storage.database={postgres_url}",
                  config=farm_config(tmp_path, forge, receiver))
    s.start()
    yield s
    s.stop()


def sign(body):
    return hmac.new(SECRET.encode(), body, hashlib.sha256).hexdigest()


def github(s, event, payload, delivery=None, signature=None):
    body = json.dumps(payload).encode()
    hdr = {"X-GitHub-Event": event, "X-GitHub-Delivery": delivery or str(uuid.uuid4()),
           "X-Hub-Signature-256": signature or "sha256=" + sign(body),
           "Content-Type": "application/json"}
    return s.call("POST", "/api/v1/hooks/github", raw=body, token="", headers=hdr)


def gh_push(repo, branch, project="owner/project"):
    return {"ref": f"refs/heads/{branch}", "before": "0" * 40, "after": repo[branch],
            "deleted": False, "head_commit": {"id": repo[branch]},
            "repository": {"full_name": project, "clone_url": repo["url"],
                           "owner": {"login": project.split("/")[0]}}}


def gh_pr(repo, action="opened", number=7):
    return {"action": action, "number": number,
            "pull_request": {"number": number,
                             "head": {"sha": repo["dev"], "ref": "dev",
                                      "repo": {"full_name": "fork/project",
                                               "clone_url": repo["url"]}},
                             "base": {"sha": repo["main"], "ref": "main",
                                      "repo": {"full_name": "owner/project"}}},
            "repository": {"full_name": "owner/project", "clone_url": repo["url"]}}


def job_of(s, jid):
    return s.job(jid)


def test_bad_signature_is_401(sched, repo):
    r = github(sched, "push", gh_push(repo, "main"), signature="sha256=" + "0" * 64)
    assert r.status == 401, r.body
    assert "signature" in r.json()["error"]["message"]
    body = json.dumps(gh_push(repo, "main")).encode()
    r = sched.call("POST", "/api/v1/hooks/github", raw=body, token="",
                   headers={"X-GitHub-Event": "push", "X-GitHub-Delivery": "x"})
    assert r.status == 401
    r = sched.call("POST", "/api/v1/hooks/gitlab", raw=body, token="",
                   headers={"X-Gitlab-Token": SECRET + "x", "X-Gitlab-Event": "Push Hook"})
    assert r.status == 401
    assert sched.call("GET", "/api/v1/jobs").json()["jobs"] == []


def test_push_builds_the_exact_commit_once(sched, repo):
    delivery = str(uuid.uuid4())
    r = github(sched, "push", gh_push(repo, "main"), delivery=delivery)
    assert r.status == 200, r.body
    jobs = r.json()["jobs"]
    assert len(jobs) == 1
    j = job_of(sched, jobs[0])
    assert j["manifest"]["git"]["url"] == repo["url"]
    assert j["manifest"]["git"]["commit"] == repo["main"]
    assert j["manifest"]["git"]["spec"] == "project.spec"
    assert j["request"]["repository"] == "stable"
    # the forge redelivers: the same answer, no second job
    again = github(sched, "push", gh_push(repo, "main"), delivery=delivery)
    assert again.status == 200 and again.json() == {"jobs": jobs}
    assert len(sched.call("GET", "/api/v1/jobs").json()["jobs"]) == 1


def test_a_hook_builds_in_its_project(sched, repo):
    """[projects] `project = NAME` in a [hook]: its jobs are that farm project's."""
    assert sched.call("POST", "/api/v1/projects", {"name": "team"}).status == 201
    r = github(sched, "push", gh_push(repo, "main", project="owner/team"))
    assert r.status == 200, r.body
    (jid,) = r.json()["jobs"]
    assert job_of(sched, jid)["project"] == "team"
    r = github(sched, "push", gh_push(repo, "main", project="owner/lost"))
    assert r.status == 400 and "no such project" in r.json()["error"]["message"], r.body


def test_unconfigured_branch_and_event_are_ignored_with_the_reason(sched, repo):
    r = github(sched, "push", gh_push(repo, "dev"))
    assert r.status == 200
    assert r.json() == {"ignored": "branch 'dev' is not configured for owner/project"}
    r = github(sched, "ping", {"zen": "hi", "repository": {"full_name": "owner/project"}})
    assert r.json() == {"ignored": "event 'ping' is not handled"}
    r = github(sched, "push", gh_push(repo, "main", project="owner/other"))
    assert "no [hook owner/other]" in r.json()["ignored"]
    r = github(sched, "pull_request", gh_pr(repo, action="closed"))
    assert r.json()["ignored"] == "pull request action 'closed' is not built"
    deleted = {**gh_push(repo, "main"), "after": "0" * 40, "deleted": True}
    assert "deleted" in github(sched, "push", deleted).json()["ignored"]
    assert sched.call("GET", "/api/v1/jobs").json()["jobs"] == []


def test_malformed_payload_is_400_naming_the_field(sched, repo):
    p = gh_push(repo, "main")
    p["after"] = "main"
    r = github(sched, "push", p)
    assert r.status == 400 and "'after'" in r.json()["error"]["message"]
    p = gh_push(repo, "main")
    p["repository"] = "owner/project"
    r = github(sched, "push", p)
    assert r.status == 400 and "repository" in r.json()["error"]["message"]
    deep = {"ref": "refs/heads/main"}
    for _ in range(200):
        deep = {"a": deep}
    assert github(sched, "push", deep).status in (400, 413)


def test_pull_request_builds_its_head_and_never_publishes(sched, repo):
    r = github(sched, "pull_request", gh_pr(repo))
    assert r.status == 200, r.body
    (jid,) = r.json()["jobs"]
    j = job_of(sched, jid)
    assert j["manifest"]["git"]["commit"] == repo["dev"]
    assert not j["request"].get("repository")
    # "/kiln retry" rebuilds the pull request's last commit
    c = {"action": "created", "issue": {"number": 7, "pull_request": {"url": "x"}},
         "comment": {"body": "looks flaky\n/kiln retry\n"},
         "repository": {"full_name": "owner/project", "clone_url": repo["url"]}}
    r = github(sched, "issue_comment", c)
    (jid2,) = r.json()["jobs"]
    assert jid2 != jid
    assert job_of(sched, jid2)["manifest"]["git"]["commit"] == repo["dev"]
    c["comment"]["body"] = "lgtm"
    assert "without '/kiln retry'" in github(sched, "issue_comment", c).json()["ignored"]


def test_gitlab_push_and_forgejo_push(sched, repo):
    body = json.dumps({"object_kind": "push", "ref": "refs/heads/dev", "before": "0" * 40,
                       "after": repo["dev"], "checkout_sha": repo["dev"],
                       "project": {"path_with_namespace": "group/project",
                                   "git_http_url": repo["url"]}}).encode()
    hdr = {"X-Gitlab-Token": SECRET, "X-Gitlab-Event": "Push Hook",
           "X-Gitlab-Event-UUID": str(uuid.uuid4())}
    r = sched.call("POST", "/api/v1/hooks/gitlab", raw=body, token="", headers=hdr)
    assert r.status == 200, r.body
    (jid,) = r.json()["jobs"]
    assert job_of(sched, jid)["manifest"]["git"]["commit"] == repo["dev"]
    again = sched.call("POST", "/api/v1/hooks/gitlab", raw=body, token="", headers=hdr)
    assert again.json() == {"jobs": [jid]}

    body = json.dumps(gh_push(repo, "main", project="org/project")).encode()
    hdr = {"X-Forgejo-Event": "push", "X-Forgejo-Delivery": str(uuid.uuid4()),
           "X-Forgejo-Signature": sign(body)}
    r = sched.call("POST", "/api/v1/hooks/forgejo", raw=body, token="", headers=hdr)
    assert r.status == 200, r.body
    (jid,) = r.json()["jobs"]
    assert job_of(sched, jid)["manifest"]["git"]["commit"] == repo["main"]


def test_unknown_forge_is_404(sched):
    r = sched.call("POST", "/api/v1/hooks/svn", raw=b"{}", token="")
    assert r.status == 404


def test_statuses_are_posted_in_order_through_a_failing_forge(sched, forge, repo):
    forge.fail = 3
    r = github(sched, "push", gh_push(repo, "main"))
    (jid,) = r.json()["jobs"]
    (pending,) = forge.posted(1)
    assert pending["path"] == f"/repos/owner/project/statuses/{repo['main']}"
    assert pending["auth"] == "Bearer ghp_token"
    assert pending["body"]["state"] == "pending"
    assert pending["body"]["context"] == "kiln/build"
    assert pending["body"]["target_url"].endswith(f"/#/jobs/{jid}")
    assert sum(c["failed"] for c in forge.calls) == 3
    t0 = time.monotonic()
    assert sched.call("POST", f"/api/v1/jobs/{jid}/cancel").status in (200, 202)
    ok = forge.posted(2)
    assert [c["body"]["state"] for c in ok] == ["pending", "error"]
    assert ok[1]["at"] - t0 < 2


def test_statuses_follow_a_build_to_its_end(sched, forge, repo):
    from test_farm_api import Worker
    r = github(sched, "pull_request", gh_pr(repo))
    (jid,) = r.json()["jobs"]
    w = Worker(sched, "w1", sched.token("worker"))
    lease = w.lease()
    assert lease and lease["job_id"] == jid
    assert w.complete(lease, "failed", failure_class="build", message="no").status == 200
    ok = forge.posted(3)
    assert [c["body"]["state"] for c in ok] == ["pending", "pending", "failure"]
    assert [c["body"]["description"] for c in ok] == ["queued", "building", "the build failed"]
    assert all(c["path"].endswith(repo["dev"]) for c in ok)


def test_gitlab_statuses_use_its_names(sched, forge, repo):
    body = json.dumps({"object_kind": "merge_request",
                       "object_attributes": {"action": "open", "iid": 4,
                                             "target_branch": "main",
                                             "last_commit": {"id": repo["dev"]},
                                             "source": {"git_http_url": repo["url"]}},
                       "project": {"path_with_namespace": "group/project",
                                   "git_http_url": repo["url"]}}).encode()
    hdr = {"X-Gitlab-Token": SECRET, "X-Gitlab-Event": "Merge Request Hook",
           "X-Gitlab-Event-UUID": str(uuid.uuid4())}
    r = sched.call("POST", "/api/v1/hooks/gitlab", raw=body, token="", headers=hdr)
    (jid,) = r.json()["jobs"]
    (st,) = forge.posted(1)
    assert st["path"] == f"/api/v4/projects/group%2Fproject/statuses/{repo['dev']}"
    assert st["body"]["state"] == "pending" and st["body"]["name"] == "kiln/build"
    assert st["auth"] is None


def test_tag_builds_its_commit_on_any_branch_filter(sched, repo):
    p = {**gh_push(repo, "dev"), "ref": "refs/tags/v1.0"}
    r = github(sched, "push", p)
    assert r.status == 200, r.body
    (jid,) = r.json()["jobs"]
    j = job_of(sched, jid)
    assert j["manifest"]["git"]["commit"] == repo["dev"]
    assert j["request"]["repository"] == "stable"


def test_a_success_is_posted(sched, forge, repo):
    from test_farm_api import Worker
    (jid,) = github(sched, "push", gh_push(repo, "main")).json()["jobs"]
    w = Worker(sched, "w2", sched.token("worker"))
    lease = w.lease()
    t0 = time.monotonic()
    assert w.complete(lease, "succeeded").status == 200
    ok = forge.posted(3)
    assert [c["body"]["state"] for c in ok] == ["pending", "pending", "success"]
    assert ok[2]["at"] - t0 < 2


def test_the_reproducibility_verdict_has_its_own_status(sched, forge, repo):
    from test_farm_api import Worker
    r = github(sched, "push", gh_push(repo, "main", project="owner/repro"))
    assert r.status == 200, r.body
    (jid,) = r.json()["jobs"]
    assert sched.job(jid)["request"]["formats"] == ["v6"]
    w1 = Worker(sched, "w1", sched.token("worker"))
    w2 = Worker(sched, "w2", sched.token("worker"))
    lease = w1.lease()
    assert lease["job_id"] == jid
    assert w1.complete(lease, "succeeded").status == 200
    rerun = w2.lease(wait=5)
    assert rerun and rerun["job_id"] != jid
    assert w2.complete(rerun, "succeeded").status == 200
    verdict = sched.job(jid)["reproducibility"]
    ok = forge.posted(4)
    assert [c["body"]["context"] for c in ok] == ["kiln/build"] * 3 + ["kiln/build/reproducible"]
    assert ok[3]["body"]["state"] == ("success" if verdict == "reproducible" else "failure")
    assert ok[3]["body"]["description"] == verdict


def forgejo(s, event, payload):
    body = json.dumps(payload).encode()
    hdr = {"X-Forgejo-Event": event, "X-Gitea-Event": event,
           "X-Forgejo-Delivery": str(uuid.uuid4()), "X-Forgejo-Signature": sign(body),
           "X-Gitea-Signature": sign(body)}
    return s.call("POST", "/api/v1/hooks/forgejo", raw=body, token="", headers=hdr)


def test_forgejo_pull_request_and_retry_comment(sched, repo):
    pr = gh_pr(repo, action="synchronized", number=3)
    pr["repository"]["full_name"] = "org/project"
    r = forgejo(sched, "pull_request", pr)
    assert r.status == 200, r.body
    (jid,) = r.json()["jobs"]
    assert job_of(sched, jid)["manifest"]["git"]["commit"] == repo["dev"]
    c = {"action": "created", "is_pull": True, "issue": {"number": 3, "pull_request": None},
         "comment": {"body": "/kiln retry"},
         "repository": {"full_name": "org/project", "clone_url": repo["url"]}}
    (jid2,) = forgejo(sched, "issue_comment", c).json()["jobs"]
    assert jid2 != jid and job_of(sched, jid2)["manifest"]["git"]["commit"] == repo["dev"]
    c["issue"]["number"] = 4
    assert forgejo(sched, "issue_comment", c).json() == {
        "ignored": "no earlier build of pull/4 to retry"}


def check_statuses_survive_kill_9(s, forge, repo):
    from test_farm_api import Worker
    forge.fail = 10**6  # the forge is down
    (jid,) = github(s, "push", gh_push(repo, "main")).json()["jobs"]
    w = Worker(s, "w1", s.token("worker"))
    lease = w.lease()
    assert lease["job_id"] == jid
    assert w.complete(lease, "succeeded").status == 200
    deadline = time.monotonic() + 10
    while len(forge.calls) < 3 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert forge.calls and all(c["failed"] for c in forge.calls)
    restart(s)  # kill -9 with three statuses queued, none taken
    forge.fail = 3  # and three more 500s after the restart
    ok = forge.posted(3, timeout=15)
    assert [c["body"]["state"] for c in ok] == ["pending", "pending", "success"]
    assert [c["body"]["description"] for c in ok] == ["queued", "building", "built"]
    assert all(c["path"].endswith(repo["main"]) for c in ok)


def test_statuses_survive_kill_9(sched, forge, repo):
    check_statuses_survive_kill_9(sched, forge, repo)


def test_statuses_survive_kill_9_on_postgresql(pgsched, forge, repo):
    check_statuses_survive_kill_9(pgsched, forge, repo)


def test_events_of_jobs_on_the_other_scheduler_are_sent_at_once(kiln_bin, tmp_path, forge,
                                                                  receiver, postgres_url):
    """Two schedulers on one database: the first holds the outbox's sending (its duty); a
    job submitted, leased and ended through the second has each event sent within
    seconds: the second's outbox item wakes the first's sender (' o'), which otherwise
    sleeps a minute when idle."""
    from test_farm_api import Worker
    cfg = farm_config(tmp_path, forge, receiver)
    a = Scheduler(kiln_bin, tmp_path / "data", f"storage.database={postgres_url}", config=cfg)
    a.start()
    b = None
    try:
        webhook_idle(a)
        b = Scheduler(kiln_bin, tmp_path / "data", f"storage.database={postgres_url}",
                      config=cfg)
        b.start()
        b.admin = a.admin
        time.sleep(1.5)  # b's own start-up pass of the outbox is over
        r = b.call("POST", "/api/v1/jobs", {"spec": "Name: x\n", "spec_name": "x.spec"})
        assert r.status == 201, r.body
        jid = r.json()["id"]
        w = Worker(b, "w1", b.token("worker"))
        t0 = time.monotonic()
        lease = w.lease()
        assert lease is not None and lease["job_id"] == jid
        ev = receiver.of_job(jid, 2, timeout=5)
        assert [e["body"]["job"]["state"] for e in ev] == ["queued", "leased"]
        assert w.complete(lease, "failed", failure_class="build", message="no").status == 200
        ev = receiver.of_job(jid, 3, timeout=5)
        assert ev[2]["body"]["job"]["state"] == "failed"
        assert ev[2]["at"] - t0 < 5
        # both schedulers show the one log, every item of it delivered
        logs = [s.call("GET", "/api/v1/webhooks/chat/deliveries").json()["deliveries"]
                for s in (a, b)]
        assert logs[0] == logs[1]
        assert len(logs[0]) >= 3 and all(d["state"] == "delivered" for d in logs[0])
    finally:
        if b:
            b.stop()
        a.stop()


def test_a_delivery_that_does_not_parse_is_kept_with_its_400(sched, repo):
    p = gh_push(repo, "main")
    p["after"] = "main"
    delivery = str(uuid.uuid4())
    r = github(sched, "push", p, delivery=delivery)
    assert r.status == 400 and "'after'" in r.json()["error"]["message"]
    body = b"{not json"
    r = sched.call("POST", "/api/v1/hooks/github", raw=body, token="",
                   headers={"X-GitHub-Event": "push", "X-GitHub-Delivery": "raw-1",
                            "X-Hub-Signature-256": "sha256=" + sign(body)})
    assert r.status == 400
    log = sched.call("GET", "/api/v1/hooks/deliveries?forge=github").json()["deliveries"]
    assert [d["delivery"] for d in log[:2]] == ["raw-1", delivery]
    assert log[1]["status"] == 400 and log[1]["event"] == "push"
    assert "'after'" in log[1]["answer"]["error"]["message"]
    # a redelivery gets the same answer, status and all
    again = github(sched, "push", p, delivery=delivery)
    assert again.status == 400 and again.json() == r.json() or again.json() == log[1]["answer"]
    # the log is the admin's
    assert sched.call("GET", "/api/v1/hooks/deliveries",
                      token=sched.token("read")).status == 403
    ok = github(sched, "push", gh_push(repo, "main"))
    log = sched.call("GET", "/api/v1/hooks/deliveries?limit=1").json()["deliveries"]
    assert log[0]["status"] == 200 and log[0]["answer"] == ok.json()
    assert log[0]["project"] == "owner/project"


def webhook_idle(s):
    """Wait until the webhook has nothing pending (the publishes of the start)."""
    deadline = time.monotonic() + 10
    while s.call("GET", "/api/v1/webhooks").json()["webhooks"][0]["pending"]:
        assert time.monotonic() < deadline
        time.sleep(0.05)


def test_outgoing_webhook_events_are_signed_in_order_through_500s(sched, receiver, repo):
    from test_farm_api import Worker
    webhook_idle(sched)
    receiver.fail = 3
    receiver.answer = b"\xff\xfe\x00down\n"  # any bytes: the log shows them printable
    (jid,) = github(sched, "push", gh_push(repo, "main")).json()["jobs"]
    w = Worker(sched, "w1", sched.token("worker"))
    lease = w.lease()
    t0 = time.monotonic()
    assert w.complete(lease, "failed", failure_class="build", message="no").status == 200
    ev = receiver.of_job(jid, 3)
    assert [e["body"]["job"]["state"] for e in ev] == ["queued", "leased", "failed"]
    assert ev[2]["at"] - t0 < 2
    assert all(e["verified"] for e in receiver.calls)
    assert all(e["path"] == "/kiln/in" and e["event"] == "job.state" for e in ev)
    assert [e["delivery"] for e in ev] == [e["body"]["id"] for e in ev]
    assert len({e["delivery"] for e in ev}) == 3
    assert ev[2]["body"]["job"]["failure_class"] == "build"
    assert ev[2]["body"]["job"]["url"].endswith(f"/#/jobs/{jid}")
    assert abs(int(ev[0]["timestamp"]) - time.time()) < 60
    # the delivery log: the first event took four tries, three 500s and the 204
    hooks = sched.call("GET", "/api/v1/webhooks").json()["webhooks"]
    every = sched.call("GET", "/api/v1/webhooks/chat/deliveries").json()["deliveries"]
    assert hooks == [{"name": "chat", "url": receiver.url + "/...",
                      "events": ["job.state", "publish"], "pending": 0,
                      "delivered": len(every), "failed": 0}]
    log = [d for d in every if d["job_id"] == jid]
    assert [d["event"]["job"]["state"] for d in log] == ["failed", "leased", "queued"]
    first = log[-1]
    assert first["event"]["id"] == ev[0]["delivery"]
    # the three 500s went to the oldest pending event (this job's first, or a publish
    # of the start's that came late): each try is in the log with its answer
    tries = [a["status"] for d in every for a in d["attempt_list"]]
    assert tries.count(500) == 3 and tries.count(204) == len(every)
    assert [a["answer"] for d in every for a in d["attempt_list"]
            if a["status"] == 500] == ["???down?"] * 3
    for d in every:
        assert d["state"] == "delivered" and d["attempts"] == len(d["attempt_list"])
        assert [a["status"] for a in d["attempt_list"]][-1] == 204
        assert [a["n"] for a in d["attempt_list"]] == list(range(1, d["attempts"] + 1))
    assert sched.call("GET", "/api/v1/webhooks/nope/deliveries").status == 404
    assert sched.call("GET", "/api/v1/webhooks", token=sched.token("read")).status == 403
    older = sched.call("GET", f"/api/v1/webhooks/chat/deliveries?before={log[1]['id']}")
    assert first["id"] in [d["id"] for d in older.json()["deliveries"]]
    assert log[1]["id"] not in [d["id"] for d in older.json()["deliveries"]]


def test_queued_events_survive_kill_9(sched, receiver, repo):
    receiver.fail = 10**6
    (jid,) = github(sched, "push", gh_push(repo, "main")).json()["jobs"]
    assert sched.call("POST", f"/api/v1/jobs/{jid}/cancel").status in (200, 202)
    deadline = time.monotonic() + 10
    while not receiver.calls and time.monotonic() < deadline:
        time.sleep(0.05)
    restart(sched)
    receiver.fail = 0
    ev = receiver.of_job(jid, 2, timeout=15)
    assert [e["body"]["job"]["state"] for e in ev] == ["queued", "cancelled"]
    assert all(e["verified"] for e in receiver.calls)


def test_a_publish_is_an_event(sched, receiver):
    webhook_idle(sched)

    def publishes():  # of stable (not its stable-v6 sibling)
        with receiver.lock:
            return [e for e in receiver.events if e["event"] == "publish"
                    and e["body"]["repository"] == "stable"]
    before = len(publishes())
    r = sched.call("POST", "/api/v1/repos/stable/regenerate")
    assert r.status in (200, 202), r.body
    deadline = time.monotonic() + 10
    while len(publishes()) == before and time.monotonic() < deadline:
        time.sleep(0.05)
    pub = publishes()[before:]
    assert pub, receiver.calls
    assert pub[0]["verified"] and pub[0]["body"]["repository"] == "stable"
    assert pub[0]["delivery"] == pub[0]["body"]["id"]
    assert {"revision", "published_ms"} <= set(pub[0]["body"])


def test_a_spec_missing_at_the_commit_is_ignored_with_the_reason(sched, forge, repo):
    p = gh_push(repo, "main")
    p["after"] = p["head_commit"]["id"] = repo["nospec"]
    r = github(sched, "push", p)
    assert r.status == 200, r.body
    assert r.json() == {"ignored": f"spec project.spec missing at {repo['nospec']}"}
    assert sched.call("GET", "/api/v1/jobs").json()["jobs"] == []
    log = sched.call("GET", "/api/v1/hooks/deliveries?limit=1").json()["deliveries"]
    assert log[0]["answer"] == r.json()
    # the same repository at a commit with the spec builds
    (jid,) = github(sched, "push", gh_push(repo, "main")).json()["jobs"]
    assert sched.job(jid)["manifest"]["git"]["commit"] == repo["main"]
    assert forge.posted(1)[0]["path"].endswith(repo["main"])


WEB_TESTS = __import__("pathlib").Path(__file__).resolve().parents[1] / "web"


def test_delivery_logs_in_the_openapi_document_and_the_dashboard(sched, receiver, repo, tmp_path):
    """Ajv checks the answers of the hook and log endpoints against the OpenAPI document;
    Chromium shows them on the dashboard's webhooks pages."""
    import os
    from test_web import CHROMIUM, artifacts_dir
    assert (WEB_TESTS / "node_modules" / "playwright-core").is_dir(), \
        "playwright-core is missing: run scripts/web-deps.sh (npm ci in tests/web)"
    samples = []

    def see(r, method, tpl):
        samples.append({"method": method, "path": tpl, "status": r.status, "body": r.json()})
        return r

    webhook_idle(sched)
    receiver.fail = 3
    (jid,) = see(github(sched, "push", gh_push(repo, "main")), "post",
                 "/api/v1/hooks/{forge}").json()["jobs"]
    see(github(sched, "push", gh_push(repo, "dev")), "post", "/api/v1/hooks/{forge}")
    p = gh_push(repo, "main")
    p["after"] = "main"
    bad = str(uuid.uuid4())
    see(github(sched, "push", p, delivery=bad), "post", "/api/v1/hooks/{forge}")
    assert sched.call("POST", f"/api/v1/jobs/{jid}/cancel").status in (200, 202)
    receiver.of_job(jid, 2)
    see(sched.call("GET", "/api/v1/hooks/deliveries"), "get", "/api/v1/hooks/deliveries")
    see(sched.call("GET", "/api/v1/webhooks"), "get", "/api/v1/webhooks")
    see(sched.call("GET", "/api/v1/webhooks/chat/deliveries"), "get",
        "/api/v1/webhooks/{name}/deliveries")
    see(sched.call("GET", "/api/v1/webhooks/nope/deliveries"), "get",
        "/api/v1/webhooks/{name}/deliveries")
    (tmp_path / "openapi.json").write_bytes(sched.call("GET", "/api/v1/openapi.json").body)
    (tmp_path / "samples.json").write_text(json.dumps(samples))
    r = subprocess.run(["node", str(WEB_TESTS / "openapi.mjs"), str(tmp_path / "openapi.json"),
                        str(tmp_path / "samples.json")], capture_output=True, text=True,
                       cwd=WEB_TESTS, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    assert json.loads(r.stdout)["checked"] == len(samples)

    out = artifacts_dir().parent / "webhooks"
    out.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, KILN_URL=sched.url, KILN_TOKEN=sched.admin,
               KILN_READ_TOKEN=sched.token("read"), KILN_BAD_DELIVERY=bad, KILN_JOB=str(jid),
               KILN_OUT=str(out), KILN_PROFILE=str(tmp_path / "profile"),
               KILN_CHROMIUM=CHROMIUM)
    r = subprocess.run(["node", str(WEB_TESTS / "webhooks.mjs")], env=env, capture_output=True,
                       text=True, timeout=180, cwd=WEB_TESTS)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-4000:]
    seen = json.loads(r.stdout.strip().splitlines()[-1])
    hooks = sched.call("GET", "/api/v1/webhooks").json()["webhooks"][0]
    assert seen["webhook"].startswith("chat ") and "job.state, publish" in seen["webhook"]
    assert f" {hooks['delivered']} " in seen["webhook"] + " "
    assert "400" in seen["bad_delivery"] and "'after'" in seen["bad_delivery"]
    assert seen["job_links"] >= 1
    assert "cancelled" not in seen["event"] and f"#{jid}" in seen["event"]
    assert seen["tries_500"] == 3
    assert seen["tries_204"] == seen["events"] == hooks["delivered"]
    assert "admin scope" in seen["read_only"]
    for shot in ("webhooks.png", "webhook.png"):
        assert (out / shot).stat().st_size > 1000, shot
