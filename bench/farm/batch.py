#!/usr/bin/python3
"""bench/farm/batch.py - [batches] the scheduler alone with a batch (no builds).

A batch of N specs (default 1,000) whose BuildRequires form a random DAG (fixed seed: each
package needs up to 3 earlier ones) is submitted in one POST /api/v1/batches: the scheduler
reads every spec, orders the graph and stores the jobs (goal: accepted in < 2 s). Then T
dispatch-only clients (default 4) lease and complete the jobs WITHOUT building anything:
each completion lands the job's (no) packages in the batch repository (its metadata
rewritten) and hands its dependents over. The hand-over overhead is, for each job with
dependencies, the time from the completion of its last dependency being sent to the lease
of the job being received (a client long-polls, so this includes the wake and the grant, and
the wait behind other ready jobs when all clients are busy); p50/p99 printed, and the same for
a chain of 100 (one ready job at a time: the overhead alone).

usage: bench/farm/batch.py [N] [T]   (KILN: the kiln binary, default build/kiln)
"""
import json
import os
import random
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
KILN = os.environ.get("KILN", str(ROOT / "build" / "kiln"))
SECRET = "0123456789abcdef" * 4

SPEC = """Name: p{i}
Version: 1
Release: 1
Summary: bench
License: MIT
{br}
%description
bench

%files
"""


def call(url, tok, method, path, body=None, headers=None, timeout=120):
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url + path, data=data, method=method)
    req.add_header("Authorization", "Bearer " + tok)
    if data is not None:
        req.add_header("Content-Type", "application/json")
    for k, v in (headers or {}).items():
        req.add_header(k, v)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def members(n, chain):
    rnd = random.Random(28)
    out, deps = [], {}
    for i in range(n):
        if chain:
            d = [i - 1] if i else []
        else:
            d = sorted(set(rnd.randrange(i) for _ in range(rnd.randint(0, 3)))) if i else []
        deps[i] = d
        br = "".join(f"BuildRequires: p{k}\n" for k in d)
        out.append({"spec": SPEC.format(i=i, br=br), "spec_name": f"p{i}.spec"})
    # submitted in reverse: the order is the scheduler's to find
    return out[::-1], deps


def pct(v, p):
    v = sorted(v)
    return v[min(len(v) - 1, int(len(v) * p / 100))] if v else 0.0


def run(url, stok, wtok, n, threads, chain):
    body, _ = members(n, chain)
    t0 = time.monotonic()
    st, rep = call(url, stok, "POST", "/api/v1/batches", {"root": "bench", "members": body})
    accept = time.monotonic() - t0
    assert st == 201, rep[:500]
    b = json.loads(rep)
    deps = {j["id"]: j["depends_on"] for j in b["jobs"]}
    sent, granted, lock = {}, {}, threading.Lock()
    hdr = {"X-Kiln-Worker-Secret": SECRET}

    def drain():
        while True:
            with lock:
                if len(sent) == n:
                    return
            st, rep = call(url, wtok, "POST", "/api/v1/leases",
                           {"worker": "bench", "arches": ["x86_64"], "tags": ["root:bench"],
                            "wait": 1000}, headers=hdr)
            t = time.monotonic()
            if st == 204:
                continue
            assert st == 200, rep[:300]
            lease = json.loads(rep)
            jid = lease["job_id"]
            with lock:
                granted[jid] = t
                sent[jid] = time.monotonic()
            st, rep = call(url, wtok, "POST", f"/api/v1/leases/{lease['lease_id']}/complete",
                           {"generation": lease["generation"], "status": "succeeded"},
                           headers=hdr)
            assert st == 200, rep[:300]

    t1 = time.monotonic()
    th = [threading.Thread(target=drain) for _ in range(threads)]
    for t in th:
        t.start()
    for t in th:
        t.join()
    drained = time.monotonic() - t1
    hand = [(granted[j] - max(sent[d] for d in ds)) * 1000 for j, ds in deps.items() if ds]
    order_ok = all(granted[j] >= sent[d] for j, ds in deps.items() for d in ds)
    return accept, drained, hand, order_ok, len(b["levels"])


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    threads = int(sys.argv[2]) if len(sys.argv) > 2 else 4
    w = tempfile.mkdtemp()
    p = subprocess.Popen([KILN, "scheduler", "--listen", "127.0.0.1:0", "--data-dir",
                          f"{w}/data", "--set", "server.threads=4"],
                         stdout=subprocess.PIPE, stderr=open(f"{w}/scheduler.log", "w"),
                         text=True)
    try:
        line = p.stdout.readline()
        if line.startswith("admin token:"):
            line = p.stdout.readline()
        url = line.split()[-1]
        admin = Path(f"{w}/data/admin.token").read_text().strip()

        def tok(scope):
            st, rep = call(url, admin, "POST", "/api/v1/tokens", {"scopes": scope, "name": scope})
            return json.loads(rep)["token"]

        stok, wtok = tok("submit"), tok("worker")
        st, rep = call(url, wtok, "POST", "/api/v1/workers",
                       {"name": "bench", "arches": ["x86_64"], "tags": ["root:bench"]},
                       headers={"X-Kiln-Worker-Secret": SECRET})
        assert st == 200, rep
        dag = run(url, stok, wtok, n, threads, False)
        chain = run(url, stok, wtok, 100, threads, True)
    finally:
        p.terminate()
        p.wait()
    load = open("/proc/loadavg").read().split()[:3]
    print(f"## bench/farm/batch.py: a batch of {n} no-build jobs, random DAG "
          f"({dag[4]} levels), {threads} dispatch-only clients\n")
    print(f"Load average when it ended: {' '.join(load)} on {os.cpu_count()} cores.\n")
    print("| measure | value | goal |\n|---|---|---|")
    print(f"| batch of {n} accepted (POST /api/v1/batches: specs read, graph, store) | "
          f"{dag[0]:.2f} s | < 2 s |")
    print(f"| drained (lease + complete + landing, {n} jobs) | {dag[1]:.2f} s "
          f"({n / dag[1]:.0f} jobs/s) | |")
    print(f"| hand-over, random DAG (last dependency's completion sent -> dependent "
          f"leased), {len(dag[2])} jobs | p50 {pct(dag[2], 50):.1f} ms, "
          f"p99 {pct(dag[2], 99):.1f} ms | < 1 s |")
    print(f"| hand-over, chain of 100 (one ready job at a time) | p50 {pct(chain[2], 50):.1f} "
          f"ms, p99 {pct(chain[2], 99):.1f} ms | < 1 s |")
    print(f"| dependency order kept | {'yes' if dag[3] and chain[3] else 'NO'} | yes |")
    split = [ln for ln in open(f"{w}/scheduler.log") if "specs read and ordered" in ln]
    if split:
        print(f"\nThe scheduler's own account of the {n}: {split[0].split('(', 2)[-1].strip().rstrip(')')}")
    return 0 if dag[3] and chain[3] else 1


if __name__ == "__main__":
    sys.exit(main())
