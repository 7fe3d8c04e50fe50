"""The scheduler's REST API against a real `kiln scheduler` on loopback, with this test as a
scripted worker client (the lease protocol: lease, heartbeat, log by offset, artifacts by
sha256, complete).  Real worker daemons building real specs are in test_farm_e2e.py."""
import hashlib
import secrets
import json
import ssl
import subprocess
import signal
import threading
import time
import urllib.parse

import pytest

import rpmfix
from farm import Scheduler

FAST = ("limits.lease_ttl=1500ms", "limits.retry_backoff=100ms", "limits.tick=50ms",
        "limits.poll_max=5", "limits.max_body=64K", "limits.max_upload=1M")


@pytest.fixture
def sched(kiln_bin, tmp_path):
    s = Scheduler(kiln_bin, tmp_path / "data", *FAST).start()
    yield s
    s.stop()


@pytest.fixture(scope="module")
def rpm_file(tmp_path_factory):
    top = tmp_path_factory.mktemp("rpmbuild")
    rpmfix.rpmbuild(top, rpmfix.SPECS / "empty.spec", "-bb")
    return next(top.glob("RPMS/*/*.rpm"))


SPEC = "Name: t\nVersion: 1\nRelease: 1\nSummary: s\nLicense: MIT\n%description\nd\n"


def submit(s, body=None, token=None, headers=None):
    return s.call("POST", "/api/v1/jobs", body or {"spec": SPEC, "spec_name": "t.spec"},
                  token=token, headers=headers)


class Worker:
    """The worker side of the API, by hand."""

    def __init__(self, s, name, token, arches=("x86_64", "noarch"), tags=(), secret=None):
        self.s, self.name, self.tok = s, name, token
        # the worker's own credential, presented on every call (kiln worker keeps its own
        # in its work directory)
        self.secret = secret or secrets.token_hex(32)
        self.arches, self.tags = list(arches), list(tags)
        r = self.register()
        assert r.status == 200, r.body

    def hdr(self):
        return {"X-Kiln-Worker-Secret": self.secret}

    def register(self):
        return self.s.call("POST", "/api/v1/workers", {"name": self.name, "arches": self.arches,
                                                      "tags": self.tags, "slots": 1},
                           token=self.tok, headers=self.hdr())

    def lease(self, wait=0):
        r = self.s.call("POST", "/api/v1/leases", {"worker": self.name, "arches": self.arches,
                                                   "tags": self.tags, "wait": wait},
                        token=self.tok, headers=self.hdr())
        assert r.status in (200, 204), r.body
        return r.json() if r.status == 200 else None

    def beat(self, lease):
        return self.s.call("POST", f"/api/v1/leases/{lease['lease_id']}/heartbeat",
                           {"generation": lease["generation"]}, token=self.tok,
                           headers=self.hdr())

    def log(self, lease, offset, data):
        return self.s.call("PUT", f"/api/v1/leases/{lease['lease_id']}/log?generation="
                           f"{lease['generation']}&offset={offset}", raw=data, token=self.tok,
                           headers=self.hdr())

    def upload(self, lease, name, data, sha=None, kind="binary"):
        sha = sha or hashlib.sha256(data).hexdigest()
        q = urllib.parse.quote(name, safe="")
        return self.s.call("PUT", f"/api/v1/leases/{lease['lease_id']}/artifacts/{q}"
                           f"?generation={lease['generation']}&sha256={sha}&kind={kind}"
                           f"&arch=noarch", raw=data, token=self.tok, headers=self.hdr())

    def complete(self, lease, status="succeeded", outputs=(), **kw):
        body = {"generation": lease["generation"], "status": status,
                "outputs": [{"name": n, "sha256": h} for n, h in outputs], **kw}
        return self.s.call("POST", f"/api/v1/leases/{lease['lease_id']}/complete", body,
                           token=self.tok, headers=self.hdr())


def test_service_endpoints_need_no_token(sched):
    h = sched.call("GET", "/api/v1/health", token="")
    assert h.status == 200 and h.json()["status"] == "ok" and h.json()["store"] == "sqlite3"
    doc = sched.call("GET", "/api/v1/openapi.json", token="").json()
    assert doc["openapi"].startswith("3.") and "/api/v1/jobs/{id}/placement" in doc["paths"]
    m = sched.call("GET", "/metrics", token="")
    assert m.status == 200 and b'kiln_jobs{state="queued"} 0' in m.body
    assert b"# TYPE kiln_job_wait_seconds histogram" in m.body
    key = sched.call("GET", "/api/v1/keys/default", token="")
    assert key.body.startswith(b"-----BEGIN PGP PUBLIC KEY BLOCK-----")


def test_auth_failures(sched):
    r = sched.call("GET", "/api/v1/jobs", token="")
    assert r.status == 401 and r.json()["error"]["code"] == "unauthorized"
    assert "WWW-Authenticate" in r.headers
    assert sched.call("GET", "/api/v1/jobs", token="kiln_" + "0" * 48).status == 401
    r = sched.call("GET", "/api/v1/jobs", headers={"Authorization": "Basic eDp5"}, token="")
    assert r.status == 401
    worker = sched.token("worker")
    r = submit(sched, token=worker)
    assert r.status == 403 and "submit" in r.json()["error"]["message"]
    assert sched.call("GET", "/api/v1/tokens", token=worker).status == 403
    assert sched.call("POST", "/api/v1/tokens", {"scopes": "admin"}, token=worker).status == 403
    reader = sched.token("read")
    assert submit(sched, token=reader).status == 403
    assert sched.call("GET", "/api/v1/jobs", token=reader).status == 200
    submitter = sched.token("submit")
    assert submit(sched, token=submitter).status == 201
    assert sched.call("POST", "/api/v1/leases", {"worker": "w", "arches": ["x"]},
                      token=submitter).status == 403
    # tokens are listed without secrets, and a revoked one stops working
    toks = sched.call("GET", "/api/v1/tokens").json()["tokens"]
    assert {t["scopes"] for t in toks} >= {"read", "worker", "submit"}
    assert all("token" not in t and "hash" not in t for t in toks)
    rid = next(t["id"] for t in toks if t["scopes"] == "read")
    assert sched.call("DELETE", f"/api/v1/tokens/{rid}").status == 200
    assert sched.call("GET", "/api/v1/jobs", token=reader).status == 401
    # only hashes are stored
    db = (sched.data / "kiln.db").read_bytes()
    assert reader.encode() not in db and sched.admin.encode() not in db


@pytest.mark.parametrize("body,field", [
    (b'{"spec": "x", ', "malformed JSON"),
    (b'[1, 2]', "expected a JSON object"),
    (b'{"spec": 5}', "field 'spec': expected a string"),
    (b'{"spec": "x", "priority": "high"}', "field 'priority': expected an integer"),
    (b'{"spec": "x", "priority": 5000}', "field 'priority': 5000 is out of range"),
    (b'{"spec": "x", "sources": [{"name": "a"}]}', "field 'sources[0].sha256': required"),
    (b'{"spec": "x", "defines": {"a": 1}}', "field 'defines.a': expected a string"),
    (b'{"spec": "x", "colour": "red"}', "field 'colour': unknown field"),
    (b'{"spec": "x", "srpm": {"name": "a.src.rpm", "sha256": "' + b"0" * 64 + b'"}}',
     "exactly one of the fields 'spec', 'srpm' and 'git'"),
    (b'{"spec": "a\\u0000b"}', "field 'spec': a NUL byte"),
    (b'{"spec": "x", "sources": [{"name": "../x", "sha256": "' + b"a" * 64 + b'"}]}',
     "field 'sources[0].name'"),
    (b'{"spec": "x", "formats": ["v5"]}', "field 'formats[0]'"),
    (b'{"spec": "x", "sign_key": "nokey"}', "field 'sign_key': no key 'nokey'"),
    (b'[' * 100 + b']' * 100, "nested deeper than 64"),
])
def test_malformed_json_names_the_field(sched, body, field):
    r = sched.call("POST", "/api/v1/jobs", raw=body,
                   headers={"Content-Type": "application/json"})
    assert r.status in (400, 413), r.body
    assert field in r.json()["error"]["message"]


@pytest.mark.parametrize("git,field", [
    ({"url": "ftp://example.org/x.git", "spec": "x.spec"}, "field 'git.url'"),
    ({"url": "https://example.org/x .git", "spec": "x.spec"}, "field 'git.url'"),
    ({"url": "https://example.org/x.git"}, "field 'git.spec'"),
    ({"url": "https://example.org/x.git", "spec": "../x.spec"}, "field 'git.spec'"),
    ({"url": "https://example.org/x.git", "spec": "/x.spec"}, "field 'git.spec'"),
    ({"url": "https://example.org/x.git", "spec": "x.spec", "ref": "a..b"}, "field 'git.ref'"),
])
def test_git_jobs_are_checked(sched, git, field):
    r = submit(sched, {"git": git})
    assert r.status == 400 and field in r.json()["error"]["message"], r.body


def canonical_key(doc):
    raw = json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(raw.encode()).hexdigest()


def test_git_job_lease_carries_the_repository(sched):
    git = {"url": "https://example.org/x.git", "ref": "v1.0", "spec": "pkg/x.spec"}
    j = submit(sched, {"git": git}).json()
    assert j["spec_name"] == "x.spec" and j["manifest"]["git"] == {**git, "commit": None}
    assert j["content_key"] == canonical_key(j["manifest"])
    lease = Worker(sched, "w1", sched.token("worker")).lease()
    assert lease["job"]["git"] == git and lease["job"]["spec"] is None


def test_git_commit_is_pinned_in_the_manifest(sched):
    """The commit a worker resolved the ref to goes into the manifest and the content key;
    every later attempt gets it; another commit for the same job is refused."""
    git = {"url": "https://example.org/x.git", "ref": "main", "spec": "x.spec"}
    c1, c2 = "1" * 40, "2" * 40
    j0 = submit(sched, {"git": git}, headers={"Idempotency-Key": "g1"}).json()
    w = Worker(sched, "w1", sched.token("worker"))
    lease = w.lease()
    assert w.complete(lease, "failed", failure_class="infra", git_commit="nope").status == 400
    r = w.complete(lease, "failed", failure_class="infra", message="fetch", git_commit=c1)
    assert r.status == 200, r.body
    j = sched.job(j0["id"])
    assert j["manifest"]["git"] == {**git, "commit": c1} and j["request"]["git"]["commit"] == c1
    assert j["content_key"] == canonical_key(j["manifest"]) != j0["content_key"]
    # the retry builds the pinned commit, not whatever main is now
    lease = w.lease(wait=3000)
    assert lease["job"]["git"]["commit"] == c1, lease
    r = w.complete(lease, "failed", failure_class="build", git_commit=c2)
    assert r.status == 400 and "builds commit " + c1 in r.json()["error"]["message"], r.body
    assert w.complete(lease, "failed", failure_class="build", git_commit=c1).status == 200
    # the same submission again is the same job, though its key changed since
    again = submit(sched, {"git": git}, headers={"Idempotency-Key": "g1"})
    assert again.status == 200 and again.json()["id"] == j0["id"], again.body
    other = submit(sched, {"git": {**git, "ref": "dev"}}, headers={"Idempotency-Key": "g1"})
    assert other.status == 409, other.body
    # a full commit id is pinned at submission
    j = submit(sched, {"git": {**git, "ref": c2}}).json()
    assert j["manifest"]["git"]["commit"] == c2 and j["request"]["git"]["commit"] == c2


def test_size_limits(sched):
    big = {"spec": "x" * (70 * 1024)}
    r = submit(sched, big)
    assert r.status == 413 and r.json()["error"]["code"] == "too_large"
    data = b"\0" * (1024 * 1024 + 1)
    sha = hashlib.sha256(data).hexdigest()
    assert sched.call("PUT", f"/api/v1/blobs/{sha}", raw=data).status == 413
    # a wrong digest is refused and nothing is stored
    r = sched.call("PUT", "/api/v1/blobs/" + "0" * 64, raw=b"abc")
    assert r.status == 422 and r.json()["error"]["code"] == "digest_mismatch"
    assert sched.call("GET", "/api/v1/blobs/" + "0" * 64).status == 404
    # sources must be uploaded first
    r = submit(sched, {"spec": SPEC, "sources": [{"name": "a.tar.gz", "sha256": "1" * 64}]})
    assert r.status == 400 and "was not uploaded" in r.json()["error"]["message"]
    sha = sched.put_blob(b"source bytes")
    r = submit(sched, {"spec": SPEC, "sources": [{"name": "a.tar.gz", "sha256": sha}]})
    assert r.status == 201, r.body
    assert sched.call("GET", f"/api/v1/blobs/{sha}").body == b"source bytes"


def test_idempotency_key(sched):
    a = submit(sched, headers={"Idempotency-Key": "ci-run-7"})
    b = submit(sched, headers={"Idempotency-Key": "ci-run-7"})
    assert a.status == 201 and b.status == 200 and a.json()["id"] == b.json()["id"]
    c = submit(sched, {"spec": SPEC + "# other\n"}, headers={"Idempotency-Key": "ci-run-7"})
    assert c.status == 409
    d = submit(sched, headers={"Idempotency-Key": "ci-run-8"})
    assert d.status == 201 and d.json()["id"] != a.json()["id"]
    # the same request gives the same content key (manifest digest)
    assert d.json()["content_key"] == a.json()["content_key"]
    m = d.json()["manifest"]
    assert m["spec"]["name"] == "t.spec" and m["kiln_version"]
    assert hashlib.sha256(SPEC.encode()).hexdigest() == m["spec"]["sha256"]


def test_lease_protocol_and_signing(sched, rpm_file, tmp_path):
    jid = submit(sched).json()["id"]
    w = Worker(sched, "w1", sched.token("worker"))
    lease = w.lease()
    assert lease["job_id"] == jid and lease["attempt"] == 1 and lease["generation"] == 1
    assert lease["job"]["spec"]["sha256"]
    spec = sched.call("GET", f"/api/v1/blobs/{lease['job']['spec']['sha256']}", token=w.tok)
    assert spec.body.decode() == SPEC
    assert sched.job(jid)["state"] == "leased"
    assert w.beat(lease).json()["cancel"] is False
    assert sched.job(jid)["state"] == "building"
    # logs append by offset; a repeated chunk is harmless; a gap is refused with the size
    assert w.log(lease, 0, b"line 1\n").json()["size"] == 7
    assert w.log(lease, 0, b"line 1\n").json()["size"] == 7
    r = w.log(lease, 100, b"x")
    assert r.status == 409 and r.json()["size"] == 7
    assert w.log(lease, 7, b"line 2\n").status == 200
    log = sched.call("GET", f"/api/v1/jobs/{jid}/attempts/1/log?offset=0")
    assert log.body == b"line 1\nline 2\n" and log.headers["X-Kiln-Log-Complete"] == "0"
    assert sched.call("GET", f"/api/v1/jobs/{jid}/attempts/1/log?offset=7").body == b"line 2\n"
    # artifact names and digests are checked
    data = rpm_file.read_bytes()
    for bad in ("a/b.rpm", "..", "a\0b.rpm"):
        r = w.upload(lease, bad, data)
        assert r.status == 400, (bad, r.body)
    r = w.upload(lease, rpm_file.name, data, sha="f" * 64)
    assert r.status == 422 and "sha256" in r.json()["error"]["message"]
    r = w.complete(lease, outputs=[(rpm_file.name, hashlib.sha256(data).hexdigest())])
    assert r.status == 400 and "was not uploaded" in r.json()["error"]["message"]
    assert w.upload(lease, rpm_file.name, data).status == 201
    r = w.complete(lease, outputs=[(rpm_file.name, hashlib.sha256(data).hexdigest())])
    assert r.status == 200 and r.json()["state"] == "succeeded", r.body
    # the scheduler signed the package: rpmkeys accepts it with the scheduler's key
    arts = sched.call("GET", f"/api/v1/jobs/{jid}/artifacts").json()["artifacts"]
    assert len(arts) == 1 and arts[0]["signed"] and arts[0]["unsigned_sha256"] == \
        hashlib.sha256(data).hexdigest()
    signed = sched.call("GET", arts[0]["url"]).body
    assert hashlib.sha256(signed).hexdigest() == arts[0]["sha256"] != arts[0]["unsigned_sha256"]
    pkg = tmp_path / rpm_file.name
    pkg.write_bytes(signed)
    key = tmp_path / "key.asc"
    key.write_bytes(sched.call("GET", "/api/v1/keys/default", token="").body)
    db = tmp_path / "rpmdb"
    subprocess.run(["rpmkeys", "--dbpath", str(db), "--import", str(key)], check=True)
    out = subprocess.run(["rpmkeys", "--dbpath", str(db), "--checksig", "-v", str(pkg)],
                         capture_output=True, text=True)
    assert out.returncode == 0 and "Signature, key ID" in out.stdout and "OK" in out.stdout, \
        out.stdout
    # a finished lease is dead: nothing more can be changed through it
    assert w.beat(lease).status == 409
    assert w.complete(lease, "failed").status == 409
    assert w.lease() is None
    m = sched.call("GET", "/metrics", token="").body
    assert b"kiln_lease_grants_total 1" in m and b"kiln_packages_signed_total 1" in m


def test_a_completion_hands_the_worker_its_next_lease(sched):
    """A worker that asks with its completion ("next") gets its next job in the reply, as
    POST /leases would grant it: one round trip a job instead of two."""
    jids = [submit(sched).json()["id"] for _ in range(2)]
    noarch = submit(sched, {"spec": SPEC + "BuildArch: noarch\n", "spec_name": "t.spec",
                            "arch": "ppc64le"}).json()["id"]
    w = Worker(sched, "w1", sched.token("worker"))
    lease = w.lease()
    assert lease["job_id"] == jids[0]
    r = w.complete(lease, "failed", next={"arches": w.arches, "tags": w.tags})
    assert r.status == 200 and r.json()["state"] == "failed", r.body
    nxt = r.json()["next_lease"]
    assert nxt["job_id"] == jids[1] and nxt["attempt"] == 1 and nxt["generation"] == 1
    assert nxt["job"]["spec"]["sha256"] and nxt["ttl_ms"] > 0 and nxt["heartbeat_ms"] > 0
    assert sched.job(jids[1])["state"] == "leased" and sched.job(jids[1])["worker"] == "w1"
    # the lease is like any other: heartbeats, completes
    assert w.beat(nxt).json()["cancel"] is False
    # nothing left for these arches: no next lease, the completion stands
    r = w.complete(nxt, "failed", next={"arches": w.arches, "tags": w.tags})
    assert r.status == 200 and r.json()["state"] == "failed" and "next_lease" not in r.json()
    assert sched.job(noarch)["state"] == "queued"
    # without "next" nothing is granted
    w2 = Worker(sched, "w2", sched.token("worker"), arches=("ppc64le",))
    lease = w2.lease()
    assert lease["job_id"] == noarch
    r = w2.complete(lease, "failed")
    assert r.status == 200 and "next_lease" not in r.json()
    # "next" is checked as a lease request is
    jid = submit(sched).json()["id"]
    lease = w.lease()
    assert lease["job_id"] == jid
    r = w.complete(lease, "failed", next={"tags": []})
    assert r.status == 400 and "next.arches" in r.json()["error"]["message"], r.body
    m = sched.call("GET", "/metrics", token="").body
    assert b"kiln_lease_grants_total 4" in m and b"kiln_lease_grants_next_total 1" in m, m
    # that one was taken in the end's own write (its pick made from the queue read before)
    assert b"kiln_lease_grants_with_end_total 1" in m, m


def test_grants_share_one_read_of_the_queue(sched):
    """The scheduler keeps the queued jobs it read between grants: three grants of three
    jobs queued before read the store once; a job queued after them is read again."""
    jids = [submit(sched).json()["id"] for _ in range(3)]
    w = Worker(sched, "w1", sched.token("worker"))
    assert [w.lease()["job_id"] for _ in range(3)] == jids
    reads = "kiln_lease_candidate_reads_total"
    m = sched.call("GET", "/metrics", token="").body
    assert f"{reads} 1\n".encode() in m, m
    jid = submit(sched).json()["id"]
    assert w.lease()["job_id"] == jid
    m = sched.call("GET", "/metrics", token="").body
    assert f"{reads} 2\n".encode() in m, m


def test_lost_lease_is_requeued_and_stale_worker_rejected(sched):
    jid = submit(sched).json()["id"]
    tok = sched.token("worker")
    w1, w2 = Worker(sched, "w1", tok), Worker(sched, "w2", tok)
    l1 = w1.lease()
    assert w1.log(l1, 0, b"attempt one\n").status == 200
    # w1 goes silent: its lease expires, the job is requeued, w2 gets it (long poll)
    l2 = w2.lease(wait=5000)
    assert l2 and l2["job_id"] == jid and l2["attempt"] == 2 and l2["generation"] == 2
    # everything the stale worker does is refused
    assert w1.beat(l1).status == 409
    assert w1.log(l1, 12, b"late\n").status == 409
    assert w1.upload(l1, "x.rpm", b"late").status == 409
    r = w1.complete(l1)
    assert r.status == 409 and r.json()["error"]["code"] == "conflict"
    assert w2.complete(l2).json()["state"] == "succeeded"
    j = sched.job(jid)
    assert [a["state"] for a in j["attempt_list"]] == ["lost", "succeeded"]
    assert j["attempt_list"][0]["worker"] == "w1" and "lease expired" in \
        j["attempt_list"][0]["message"]
    # the first attempt's log is kept
    assert sched.call("GET", f"/api/v1/jobs/{jid}/attempts/1/log").body == b"attempt one\n"
    assert b'kiln_retries_total{reason="worker_lost"} 1' in sched.call("GET", "/metrics").body


def test_failures_retries_and_backoff(sched):
    tok = sched.token("worker")
    w = Worker(sched, "w1", tok)
    build = submit(sched).json()["id"]
    lease = w.lease()
    r = w.complete(lease, "failed", failure_class="build", message="Bad exit status")
    assert r.json()["state"] == "failed" and r.json()["failure_class"] == "build"
    # infra failures are retried with backoff, up to max_attempts
    infra = submit(sched, {"spec": SPEC, "max_attempts": 2}).json()["id"]
    lease = w.lease()
    assert lease["job_id"] == infra
    r = w.complete(lease, "failed", failure_class="infra", message="disk full")
    j = r.json()
    assert j["state"] == "queued" and j["not_before"] and j["message"] == "disk full"
    lease = w.lease(wait=3000)
    assert lease["job_id"] == infra and lease["attempt"] == 2
    assert w.complete(lease, "failed", failure_class="infra").json()["state"] == "failed"
    # retry brings a failed job back
    r = sched.call("POST", f"/api/v1/jobs/{build}/retry")
    assert r.status == 200 and r.json()["state"] == "queued"
    assert sched.call("POST", f"/api/v1/jobs/{build}/retry").status == 409
    lease = w.lease()
    assert lease["job_id"] == build and lease["attempt"] == 2
    # a hand-back (worker shutting down) requeues at once and costs no attempt
    r = w.complete(lease, "released")
    assert r.json()["state"] == "queued" and r.json()["max_attempts"] == 4
    assert w.lease()["attempt"] == 3
    bad = w.complete(lease, "exploded")
    assert bad.status in (400, 409)


def test_cancel(sched):
    tok = sched.token("worker")
    w = Worker(sched, "w1", tok)
    queued = submit(sched).json()["id"]
    r = sched.call("POST", f"/api/v1/jobs/{queued}/cancel")
    assert r.status == 202 and r.json()["state"] == "cancelled"
    running = submit(sched).json()["id"]
    lease = w.lease()
    assert lease["job_id"] == running
    r = sched.call("POST", f"/api/v1/jobs/{running}/cancel")
    assert r.json()["state"] == "leased" and r.json()["cancel_requested"]
    assert w.beat(lease).json()["cancel"] is True
    assert w.complete(lease, "cancelled").json()["state"] == "cancelled"
    assert w.lease() is None


def test_placement_explains_waiting(sched):
    tok = sched.token("worker")
    Worker(sched, "arm", tok, arches=["aarch64"])
    Worker(sched, "gpu", tok, arches=["x86_64"], tags=["gpu"])
    jid = submit(sched, {"spec": SPEC, "arch": "x86_64", "tags": ["big"]}).json()["id"]
    p = sched.call("GET", f"/api/v1/jobs/{jid}/placement").json()
    why = {w["worker"]: w for w in p["workers"]}
    assert not why["arm"]["matches"] and "arch x86_64" in why["arm"]["reason"]
    assert not why["gpu"]["matches"] and "lacks tag big" in why["gpu"]["reason"]
    assert p["summary"] == "no online worker matches this job"
    ok = Worker(sched, "big", tok, arches=["x86_64"], tags=["big", "gpu"])
    p = sched.call("GET", f"/api/v1/jobs/{jid}/placement").json()
    assert {w["worker"]: w["matches"] for w in p["workers"]}["big"] is True
    assert p["summary"].startswith("next in line")
    assert ok.lease()["job_id"] == jid
    workers = sched.call("GET", "/api/v1/workers").json()["workers"]
    assert {w["name"]: w["busy"] for w in workers} == {"arm": 0, "big": 1, "gpu": 0}


def test_list_filter_and_cursor(sched):
    ids = [submit(sched).json()["id"] for _ in range(5)]
    sched.call("POST", f"/api/v1/jobs/{ids[0]}/cancel")
    r = sched.call("GET", "/api/v1/jobs?limit=2").json()
    assert [j["id"] for j in r["jobs"]] == ids[:-3:-1] and r["next_cursor"] == ids[3]
    r = sched.call("GET", f"/api/v1/jobs?limit=2&cursor={r['next_cursor']}").json()
    assert [j["id"] for j in r["jobs"]] == [ids[2], ids[1]]
    r = sched.call("GET", "/api/v1/jobs?state=cancelled").json()
    assert [j["id"] for j in r["jobs"]] == [ids[0]]
    assert sched.call("GET", "/api/v1/jobs?state=bogus").status == 400
    assert sched.call("GET", "/api/v1/jobs?limit=x").status == 400
    assert sched.call("GET", "/api/v1/jobs/999").status == 404
    assert sched.call("GET", "/api/v1/nothing").status == 404
    assert sched.call("DELETE", "/api/v1/jobs").status == 405


def test_long_polls_wake_on_events(sched):
    tok = sched.token("worker")
    w = Worker(sched, "w1", tok)
    got = {}

    def poll():
        t = time.monotonic()
        got["lease"] = w.lease(wait=4500)
        got["took"] = time.monotonic() - t

    th = threading.Thread(target=poll)
    th.start()
    time.sleep(0.3)
    jid = submit(sched).json()["id"]
    th.join()
    assert got["lease"]["job_id"] == jid and got["took"] < 3
    # a follower of the log gets appended bytes as they come
    out = {}

    def follow():
        out["r"] = sched.call("GET", f"/api/v1/jobs/{jid}/attempts/1/log?offset=0&follow=1")

    th = threading.Thread(target=follow)
    th.start()
    time.sleep(0.3)
    w.log(got["lease"], 0, b"hello\n")
    th.join()
    assert out["r"].body == b"hello\n"
    w.complete(got["lease"])
    r = sched.call("GET", f"/api/v1/jobs/{jid}/attempts/1/log?offset=6&follow=1")
    assert r.body == b"" and r.headers["X-Kiln-Log-Complete"] == "1"
    # nothing to lease: 204 after the wait
    t = time.monotonic()
    assert w.lease(wait=300) is None and time.monotonic() - t >= 0.25


def test_restart_keeps_everything(kiln_bin, tmp_path):
    slow = (*FAST, "limits.lease_ttl=30")
    s = Scheduler(kiln_bin, tmp_path / "data", *slow).start()
    tok = s.token("worker")
    ids = [submit(s, headers={"Idempotency-Key": f"k{i}"}).json()["id"] for i in range(10)]
    w = Worker(s, "w1", tok)
    lease = w.lease()
    s.kill()
    s = Scheduler(kiln_bin, tmp_path / "data", *slow).start()
    w.s = s
    try:
        jobs = s.call("GET", "/api/v1/jobs?limit=100").json()["jobs"]
        assert sorted(j["id"] for j in jobs) == ids
        # the worker's lease survived the restart; the same key gives the same job
        assert w.beat(lease).status == 200
        assert submit(s, headers={"Idempotency-Key": "k3"}).json()["id"] == ids[3]
        assert w.complete(lease).json()["state"] == "succeeded"
        assert s.call("GET", "/api/v1/jobs?state=queued&limit=100").json()["jobs"].__len__() == 9
        # tokens survive too (known, so 403 for a worker token rather than 401)
        assert s.call("GET", "/api/v1/jobs", token=tok).status == 403
    finally:
        s.stop()


def test_config_file_errors_name_the_line(kiln, tmp_path):
    cfg = tmp_path / "kiln.ini"
    cfg.write_text("[server]\nlisten = 127.0.0.1:0\n[limits]\nlease_tll = 5\n")
    r = kiln("scheduler", "--config", cfg, "--data-dir", tmp_path / "d")
    assert r.returncode == 1 and f"{cfg}:4" in r.stderr and "lease_tll" in r.stderr
    cfg.write_text("[server]\nlisten = 127.0.0.1:0\n[limits]\nmax_upload = lots\n")
    r = kiln("scheduler", "--config", cfg, "--data-dir", tmp_path / "d")
    assert r.returncode == 1 and "is not a size" in r.stderr


def test_tls_and_graceful_stop(kiln_bin, kiln, tmp_path):
    key, cert = tmp_path / "key.pem", tmp_path / "cert.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout",
                    str(key), "-out", str(cert), "-days", "1", "-subj", "/CN=127.0.0.1",
                    "-addext", "subjectAltName=IP:127.0.0.1"], check=True, capture_output=True)
    s = Scheduler(kiln_bin, tmp_path / "data", f"server.tls_cert={cert}",
                  f"server.tls_key={key}").start()
    try:
        assert s.url.startswith("https://127.0.0.1:")
        s.ssl = ssl.create_default_context(cafile=str(cert))
        assert s.call("GET", "/api/v1/health", token="").status == 200
        assert submit(s).status == 201
        # kiln's client checks the certificate: refused without the CA, fine with it
        env = {"KILN_URL": s.url, "KILN_TOKEN": s.admin}
        r = kiln("jobs", env=env)
        assert r.returncode == 1 and "certificate" in r.stderr.lower()
        r = kiln("jobs", env=dict(env, KILN_CA_FILE=str(cert)))
        assert r.returncode == 0 and "queued" in r.stdout
    finally:
        s.proc.send_signal(signal.SIGTERM)
        assert s.proc.wait(timeout=20) == 0  # SIGTERM is a clean stop
        s.stop()


def test_tokens_declared_in_the_configuration(kiln_bin, tmp_path):
    """[tokens] NAME = SCOPES sha256:DIGEST: the file holds the digest, never the secret; the
    token is added at start, once; a revoked one stays revoked across restarts."""
    secret = "ci-" + "7" * 40
    conf = tmp_path / "kiln.ini"
    digest = hashlib.sha256(secret.encode()).hexdigest()
    conf.write_text(f"[tokens]\nci = submit read sha256:{digest}\n")
    s = Scheduler(kiln_bin, tmp_path / "data", *FAST, config=conf).start()
    try:
        assert submit(s, token=secret).status == 201
        assert s.call("GET", "/api/v1/jobs", token=secret).status == 200
        r = s.call("POST", "/api/v1/leases", {"worker": "w", "arches": ["x"]}, token=secret)
        assert r.status == 403
        assert secret.encode() not in (tmp_path / "data" / "kiln.db").read_bytes()
        s.stop()
        s.start()
        toks = [t for t in s.call("GET", "/api/v1/tokens").json()["tokens"]
                if t["name"] == "ci"]
        assert len(toks) == 1 and set(toks[0]["scopes"].split(",")) == {"submit", "read"}
        assert s.call("DELETE", f"/api/v1/tokens/{toks[0]['id']}").status == 200
        s.stop()
        s.start()
        assert s.call("GET", "/api/v1/jobs", token=secret).status == 401
    finally:
        s.stop()


def test_a_long_poll_whose_worker_went_away_grants_no_lease(sched):
    """A worker stopped (or killed) during its long poll leaves the poll suspended in the
    scheduler; a job submitted before the poll's deadline must not be leased into the
    closed connection (that attempt would be lost, as a restarted worker's job once was)."""
    import socket
    tok = sched.token("worker")
    w = Worker(sched, "w1", tok)
    host, port = sched.url.split("//")[1].rsplit(":", 1)
    body = json.dumps({"worker": "w1", "arches": w.arches, "wait": 4000}).encode()
    c = socket.create_connection((host, int(port)), timeout=5)
    c.sendall(b"POST /api/v1/leases HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " +
              tok.encode() + b"\r\nX-Kiln-Worker-Secret: " + w.secret.encode() +
              b"\r\nContent-Type: application/json\r\nContent-Length: " +
              str(len(body)).encode() + b"\r\n\r\n" + body)
    time.sleep(0.5)  # suspended: nothing to lease yet
    c.close()  # the worker goes away
    time.sleep(1.5)  # the poll is run again by the scheduler's tick meanwhile
    r = submit(sched)
    assert r.status == 201, r.body
    jid = r.json()["id"]
    time.sleep(0.5)  # the submit woke the dead poll
    j = sched.call("GET", f"/api/v1/jobs/{jid}").json()
    assert j["state"] == "queued" and j["attempts"] == 0, j
    lease = w.lease()
    assert lease and lease["job_id"] == jid and lease["attempt"] == 1, lease
