"""Helpers for the farm's integration tests: a real `kiln scheduler` on a loopback port
chosen by the kernel (port 0, read back from its readiness line), HTTP calls with urllib,
and worker processes.  Every process is the test's own child and is stopped by the test."""
import hashlib
import json
import os
import select
import signal
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path


class Reply:
    def __init__(self, status, body, headers):
        self.status = status
        self.body = body
        self.headers = headers

    def json(self):
        return json.loads(self.body)


def read_line(proc, deadline, what):
    """One line of proc's stdout, failing past the deadline (the process may have died)."""
    buf = b""
    while not buf.endswith(b"\n"):
        left = deadline - time.monotonic()
        if left <= 0:
            raise AssertionError(f"{what}: no readiness line in time")
        r, _, _ = select.select([proc.stdout], [], [], left)
        if not r:
            continue
        ch = os.read(proc.stdout.fileno(), 1)
        if not ch:
            raise AssertionError(f"{what}: exited ({proc.wait()}): "
                                 f"{proc.stderr.read().decode(errors='replace')}")
        buf += ch
    return buf.decode()


class Scheduler:
    def __init__(self, kiln_bin, data, *sets, listen="127.0.0.1:0", config=None):
        self.kiln_bin = kiln_bin
        self.data = Path(data)
        self.sets = list(sets)
        self.listen = listen
        self.config = config
        self.proc = None
        self.url = None
        self.ssl = None  # an ssl.SSLContext for https

    def start(self):
        args = [str(self.kiln_bin), "scheduler", "--listen", self.listen,
                "--data-dir", str(self.data)]
        if self.config:
            args += ["--config", str(self.config)]
        for s in self.sets:
            args += ["--set", s]
        self.proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 30
        line = read_line(self.proc, deadline, "scheduler")
        if line.startswith("admin token:"):
            line = read_line(self.proc, deadline, "scheduler")
        assert line.startswith("listening on "), line
        self.url = line.split()[-1]
        self.admin = (self.data / "admin.token").read_text().strip()
        return self

    def stop(self, sig=signal.SIGTERM):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.proc:
            self.proc.stdout.close()
            self.proc.stderr.close()

    def kill(self):
        self.stop(signal.SIGKILL)

    def call(self, method, path, body=None, token=None, headers=None, raw=None, timeout=60):
        data = raw if raw is not None else (json.dumps(body).encode() if body is not None
                                            else None)
        req = urllib.request.Request(self.url + path, data=data, method=method)
        tok = self.admin if token is None else token
        if tok:
            req.add_header("Authorization", "Bearer " + tok)
        if data is not None and raw is None:
            req.add_header("Content-Type", "application/json")
        for k, v in (headers or {}).items():
            req.add_header(k, v)
        try:
            with urllib.request.urlopen(req, timeout=timeout, context=self.ssl) as r:
                return Reply(r.status, r.read(), r.headers)
        except urllib.error.HTTPError as e:
            return Reply(e.code, e.read(), e.headers)

    def token(self, scopes):
        r = self.call("POST", "/api/v1/tokens", {"scopes": scopes, "name": scopes})
        assert r.status == 201, r.body
        return r.json()["token"]

    def put_blob(self, data, token=None):
        sha = hashlib.sha256(data).hexdigest()
        r = self.call("PUT", f"/api/v1/blobs/{sha}", raw=data, token=token)
        assert r.status == 201, r.body
        return sha

    def job(self, jid):
        r = self.call("GET", f"/api/v1/jobs/{jid}")
        assert r.status == 200, r.body
        return r.json()

    def wait_state(self, jid, states, timeout=120):
        """Wait for a job state, riding on the log's long poll where possible."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            j = self.job(jid)
            if j["state"] in states:
                return j
            r = None
            final = all(x in ("succeeded", "failed", "cancelled") for x in states)
            if j["attempts"] and final:
                r = self.call("GET", f"/api/v1/jobs/{jid}/attempts/{j['attempts']}/log"
                              f"?offset=999999999&follow=1", timeout=timeout)
            if not r or r.headers.get("X-Kiln-Log-Complete") == "1":
                time.sleep(0.1)  # no running attempt to follow, or a state on the way
        raise AssertionError(f"job {jid} never reached {states}: {self.job(jid)}")
