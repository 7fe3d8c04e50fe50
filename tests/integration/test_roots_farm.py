"""Roots in the farm (issue 21): workers on separate machines agree on a root bit for bit,
and many builds needing one new root make it once.

The fixture distribution (tests/fixtures/debrpm.py) is the repository; a worker's caches
(sources, images, resolutions) are WORK_DIR/cache, so workers with separate work
directories behave as workers on separate machines."""
import hashlib
import json
import os
import shutil
import time
from pathlib import Path

import pytest

from farm import Scheduler
from test_farm_e2e import FAST, Worker
from test_farm_reproduce import wait_verdict

DATA = Path(__file__).resolve().parent.parent / "data" / "roots"


def manifest_of(job):
    m = job["manifest"]
    return m if isinstance(m, dict) else json.loads(m)


def log_of(s, jid):
    return s.call("GET", f"/api/v1/jobs/{jid}/attempts/latest/log").body.decode()


def images(cache):
    """The finished images of a cache (images/KEY), and what is left in images/tmp."""
    top = cache / "images"
    done = sorted(p.name for p in top.iterdir() if (p / "root").is_dir()) if top.is_dir() \
        else []
    tmp = sorted(p.name for p in (top / "tmp").iterdir()) if (top / "tmp").is_dir() else []
    return done, tmp


def resolved_locks(cache):
    """The locks a cache's resolution cache holds, by their bytes."""
    d = cache / "roots" / "resolved"
    return [p.read_bytes() for p in sorted(d.glob("*.json"))] if d.is_dir() else []


def zdemo(name):
    return (DATA / "zdemo.spec").read_text().replace("Name: zdemo", f"Name: {name}")


def test_rerun_on_the_other_worker_is_reproducible(kiln, kiln_bin, debrpm_repo, tmp_path):
    """One scheduler, two workers with their own work and cache directories offering the
    same root configuration. A job with one reproducibility rerun: the original resolves
    the lock on one worker, the rerun builds on the other from the pinned lock (making its
    own image from the repository), and the verdict is reproducible. Each worker's own
    resolution of the configuration gives the same lock, byte for byte."""
    work = Path(os.path.realpath(tmp_path))
    cfg = work / "fixture-x86_64.cfg"
    cfg.write_text(debrpm_repo.root_config())
    s = Scheduler(kiln_bin, work / "data", *FAST, "limits.lease_ttl=30").start()
    ws = []
    try:
        for n in ("w1", "w2"):
            ws.append(Worker(kiln_bin, s, n, work / n, "--root-config", str(cfg)))
        r = s.call("POST", "/api/v1/jobs", {"spec": zdemo("zdemo"), "spec_name": "zdemo.spec",
                                            "root": cfg.stem, "reproduce": 1,
                                            "source_date_epoch": 1700000000})
        assert r.status == 201, r.body
        jid = r.json()["id"]
        j = s.wait_state(jid, ("succeeded", "failed"), timeout=900)
        assert j["state"] == "succeeded", log_of(s, jid)
        doc = wait_verdict(s, jid, timeout=900)
        text = s.call("GET", f"/api/v1/jobs/{jid}/reproducibility?format=text").body.decode()
        assert doc["verdict"] == "reproducible", text
        lock_id = manifest_of(s.job(jid))["root_lock"]
        orig = {a["worker"] for a in s.job(jid)["attempt_list"]}
        [rerun] = doc["reruns"]
        assert {rerun["original_worker"]} == orig and rerun["worker"] != rerun["original_worker"]
        assert rerun["verdict"] == "reproducible"
        assert any(a["name"].endswith(".x86_64.rpm") for a in rerun["artifacts"])
        rj = s.job(rerun["job"])
        assert rj["rerun_of"] == jid and manifest_of(rj)["root_lock"] == lock_id
        # the original resolved the lock; the rerun, on the other machine, built on it pinned
        olog, rlog = log_of(s, jid), log_of(s, rerun["job"])
        assert f"root {cfg.stem}, lock {lock_id} (" in olog and "pinned by the job" not in olog
        assert f"root {cfg.stem}, lock {lock_id} (" in rlog and "pinned by the job" in rlog
        # each machine made the image of that lock in its own cache
        for n in ("w1", "w2"):
            assert images(work / n / "cache") == ([lock_id], []), n
    finally:
        for w in ws:
            w.stop()
        s.stop()
    # Both workers' resolution caches hold the lock (the original's resolution, the rerun's
    # check of the pinned lock against the repository): the same bytes, the manifest's id.
    spec = work / "zdemo.spec"
    spec.write_text(zdemo("zdemo"))
    locks = {}
    for n in ("w1", "w2"):
        cache = work / n / "cache"
        held = resolved_locks(cache)
        assert held and all(hashlib.sha256(b).hexdigest() == lock_id for b in held), n
        # and each machine resolving the configuration for the spec itself agrees
        r = kiln("root", "lock", "--json", cfg, spec, env={"KILN_CACHE_DIR": str(cache)})
        assert r.returncode == 0, r.stderr
        locks[n] = r.stdout.encode()
    assert locks["w1"] == locks["w2"]
    assert hashlib.sha256(locks["w1"]).hexdigest() == lock_id
    shutil.rmtree(work / "w1", ignore_errors=True)
    shutil.rmtree(work / "w2", ignore_errors=True)


def test_eight_concurrent_jobs_make_one_image_and_fetch_each_package_once(
        kiln_bin, debrpm_repo, tmp_path):
    """Eight jobs needing one root nobody has made yet, on one worker with eight slots
    (one machine: one cache directory). The repository is served over HTTP
    (tests/integration/srcserver.py) so every download is counted. Exactly one image is
    made for the lock, the others wait for it and build on it, and every package of the
    lock is downloaded once, as is every metadata file repomd.xml names."""
    from srcserver import Server

    work = Path(os.path.realpath(tmp_path))
    srv = Server(debrpm_repo.top)
    base = f"{srv.base}/files"
    cfg = work / "served-x86_64.cfg"
    cfg.write_text(f"[root]\narch = x86_64\ninstall = @buildsys-build\n\n"
                   f"[repo base]\nbaseurl = {base}/repo\ngpgkey = {base}/key/key.asc\n")
    s = Scheduler(kiln_bin, work / "data", *FAST, "limits.lease_ttl=60").start()
    w = None
    try:
        jids = []
        for i in range(8):
            r = s.call("POST", "/api/v1/jobs", {"spec": zdemo(f"zdemo{i}"),
                                                "spec_name": f"zdemo{i}.spec",
                                                "root": cfg.stem})
            assert r.status == 201, r.body
            jids.append(r.json()["id"])
        # submitted before the worker exists: its eight slots take them together
        w = Worker(kiln_bin, s, "w8", work / "w8", "--slots", "8", "--root-config", str(cfg))
        jobs = [s.wait_state(j, ("succeeded", "failed"), timeout=1200) for j in jids]
        logs = [log_of(s, j) for j in jids]
        for j, lg in zip(jobs, logs):
            assert j["state"] == "succeeded", lg
    finally:
        if w:
            w.stop()
        s.stop()
        srv.close()
    lock_ids = {manifest_of(j)["root_lock"] for j in jobs}
    assert len(lock_ids) == 1, lock_ids
    [lock_id] = lock_ids
    # they ran at the same time: every job started before the first one finished
    spans = [(a["started"], a["ended"]) for j in jobs for a in j["attempt_list"]]
    assert len(spans) == 8 and max(b for b, _ in spans) < min(e for _, e in spans), spans
    # one image, made by one of the jobs; the others used it
    cache = work / "w8" / "cache"
    assert images(cache) == ([lock_id], [])
    made = [lg for lg in logs if f"root {cfg.stem}: installed " in lg]
    assert len(made) == 1, [lg[-2000:] for lg in logs]
    # every package of the lock downloaded once, and nothing else from the repository
    held = resolved_locks(cache)
    assert held and hashlib.sha256(held[0]).hexdigest() == lock_id
    lock = json.loads(held[0])
    gets = [path for method, path, _ in srv.log if method == "GET"]
    for p in lock["packages"]:
        n = gets.count(f"/files/repo/{p['location']}")
        assert n == 1, (p["location"], n)
    pkgs = [g for g in gets if g.endswith(".rpm")]
    assert len(pkgs) == len(lock["packages"]), sorted(pkgs)
    # the metadata too: repomd.xml is read fresh by every job (it changes in place), what
    # it names by checksum comes through the source cache once
    assert gets.count("/files/repo/repodata/repomd.xml") == 8
    meta = [g for g in gets if "/repodata/" in g and "/repomd.xml" not in g]
    assert any("-primary.xml" in g for g in meta)
    assert all(meta.count(g) == 1 for g in meta), sorted(meta)
    shutil.rmtree(work / "w8", ignore_errors=True)
