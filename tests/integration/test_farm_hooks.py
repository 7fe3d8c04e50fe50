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
    return {"url": "file://" + str(d), "main": main, "dev": git("rev-parse", "HEAD")}


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


@pytest.fixture
def forge():
    f = FakeForge()
    yield f
    f.server.shutdown()


@pytest.fixture
def sched(kiln_bin, tmp_path, forge):
    for kind in ("github", "gitlab", "forgejo"):
        (tmp_path / f"{kind}.secret").write_text(SECRET + "\n")
    (tmp_path / "github.token").write_text("ghp_token\n")
    cfg = tmp_path / "kiln.ini"
    cfg.write_text(f"""
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
""")
    s = Scheduler(kiln_bin, tmp_path / "data", config=cfg).start()
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
