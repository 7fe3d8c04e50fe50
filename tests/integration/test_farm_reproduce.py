"""Reproducibility reruns on a real farm (issue 12): a job with reruns gets rerun jobs of the
same manifest on the other worker with declared variations; their packages are compared with
the original's unsigned bytes, the verdict is in the API and the metrics, and the report
names the file that differs and shows how."""
import base64
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from farm import Scheduler
from test_farm_e2e import FAILING, FAST, Worker, spec, submit


@pytest.fixture
def farm2(kiln_bin, tmp_path):
    s = Scheduler(kiln_bin, tmp_path / "data", *FAST).start()
    work = Path(os.path.realpath(tmp_path)) / "work"
    ws = [Worker(kiln_bin, s, n, work / n) for n in ("w1", "w2")]
    yield s, work
    for w in ws:
        w.stop()
    s.stop()
    os.system(f"rm -rf '{work}'")  # noqa: S605 - our own directory


DFS = shutil.which("diffoscope")


def wait_verdict(s, jid, timeout=240):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        r = s.call("GET", f"/api/v1/jobs/{jid}/reproducibility")
        if r.status == 200:
            doc = r.json()
            # diffoscope's output follows the verdict (when diffoscope is installed)
            if doc["verdict"] != "pending" and all(
                    a["diffoscope"] is not None or a["verdict"] != "differs" or not DFS
                    for x in doc["reruns"] for a in x["artifacts"]):
                return doc
        elif r.status != 404:
            raise AssertionError(r.body)
        time.sleep(0.3)
    raise AssertionError(f"job {jid}: no verdict: {s.call('GET', f'/api/v1/jobs/{jid}').body}")


def test_well_behaved_spec_reproduces_on_the_other_worker(farm2):
    s, work = farm2
    jid = submit(s, spec("7.0"), reproduce=2, source_date_epoch=1700000000)
    j = s.wait_state(jid, ("succeeded", "failed"))
    assert j["state"] == "succeeded", j
    assert j["reruns"] == 2 and j["reproducibility"] == "pending"
    doc = wait_verdict(s, jid)
    assert doc["job"] == jid and doc["verdict"] == "reproducible", s.call(
        "GET", f"/api/v1/jobs/{jid}/reproducibility?format=text").body.decode()
    assert [r["n"] for r in doc["reruns"]] == [1, 2]
    orig = {a["worker"] for a in j["attempt_list"]}
    for r in doc["reruns"]:
        assert r["state"] == "succeeded" and r["verdict"] == "reproducible"
        # anti-affinity: the other worker, and the pair is recorded
        assert {r["original_worker"]} == orig and r["worker"] != r["original_worker"]
        assert set(r["variations"]) >= {"time", "build_path", "hostname", "cpus", "umask",
                                        "locale", "file_order"}
        names = sorted(a["name"] for a in r["artifacts"])
        assert any(n.endswith(".noarch.rpm") for n in names), names
        assert any(n.endswith(".src.rpm") for n in names), names
        for a in r["artifacts"]:
            assert a["verdict"] == "reproducible" and a["diff"] is None
            assert a["original_sha256"] and a["rerun_sha256"]
        rj = s.job(r["job"])
        assert rj["rerun_of"] == jid and rj["manifest"] == j["manifest"]
        log = s.call("GET", f"/api/v1/jobs/{r['job']}/attempts/latest/log").body.decode()
        assert "rerun %d with variations: time build_path" % r["n"] in log
    # the original's unsigned bytes are what was compared: the served ones are signed
    arts = {a["name"]: a for a in s.call("GET", f"/api/v1/jobs/{jid}/artifacts").json()
            ["artifacts"]}
    for a in doc["reruns"][0]["artifacts"]:
        assert arts[a["name"]]["unsigned_sha256"] == a["original_sha256"]
        assert arts[a["name"]]["sha256"] != a["original_sha256"]
    assert s.job(jid)["reproducibility"] == "reproducible"
    check_provenance(s, jid, work)
    m = s.call("GET", "/metrics", token="").body.decode()
    assert 'kiln_reproducibility_jobs{verdict="reproducible"} 1' in m
    text = s.call("GET", f"/api/v1/jobs/{jid}/reproducibility?format=text").body.decode()
    assert text.startswith(f"job {jid}: reproducible\n") and "original on w" in text
    # a job without reruns has no report; a rerun more on request
    plain = submit(s, spec("7.1"), source_date_epoch=1700000000)
    s.wait_state(plain, ("succeeded",))
    assert s.call("GET", f"/api/v1/jobs/{plain}/reproducibility").status == 404
    r = s.call("POST", f"/api/v1/jobs/{plain}/reproduce", {"count": 1,
                                                          "variations": ["umask"]})
    assert r.status == 202 and r.json()["reruns"] == 1, r.body
    doc = wait_verdict(s, plain)
    assert doc["verdict"] == "reproducible" and doc["reruns"][0]["variations"] == ["umask"]
    bad = s.call("POST", f"/api/v1/jobs/{plain}/reproduce", {"variations": ["moon"]})
    assert bad.status == 400 and b"variations[0]" in bad.body
    # the CLI: one rerun more, waiting for the verdict and printing the report
    env = dict(os.environ, KILN_URL=s.url, KILN_TOKEN=s.admin)
    k = subprocess.run([str(s.kiln_bin), "reproduce", "--count", "1", "--wait", str(plain)],
                       env=env, capture_output=True, text=True, timeout=300)
    assert k.returncode == 0, k.stdout + k.stderr
    assert k.stdout.startswith(f"job {plain}: reproducible\n") and "rerun 2: job" in k.stdout
    # kiln submit --reproduce N asks for reruns at submission
    sp = work / "cli.spec"
    sp.write_text(spec("7.2"))
    k = subprocess.run([str(s.kiln_bin), "submit", "--reproduce", "1", "--json", str(sp)],
                       env=env, capture_output=True, text=True, timeout=60)
    assert k.returncode == 0, k.stdout + k.stderr
    assert json.loads(k.stdout)["reruns"] == 1
    # a build that fails is not rerun: no verdict, no report, no reruns on request
    bad = submit(s, FAILING, "farm-bad.spec", reruns=1)
    assert s.wait_state(bad, ("succeeded", "failed"))["state"] == "failed"
    assert s.job(bad)["reproducibility"] is None
    assert s.call("GET", f"/api/v1/jobs/{bad}/reproducibility").status == 404
    assert s.call("POST", f"/api/v1/jobs/{bad}/reproduce", {}).status == 409


def gpg_verify_dsse(env, key, home):
    """The oracle: gpg checks the DSSE signature over PAE(payloadType, payload)."""
    payload = base64.b64decode(env["payload"])
    t = env["payloadType"].encode()
    pae = b"DSSEv1 %d %s %d %s" % (len(t), t, len(payload), payload)
    home.mkdir(exist_ok=True)
    home.chmod(0o700)
    (home / "pae").write_bytes(pae)
    (home / "sig").write_bytes(base64.b64decode(env["signatures"][0]["sig"]))
    g = ["gpg", "--batch", "--homedir", str(home)]
    subprocess.run(g + ["--import", str(key)], check=True, capture_output=True)
    return subprocess.run(g + ["--verify", str(home / "sig"), str(home / "pae")],
                          capture_output=True, text=True)


def check_provenance(s, jid, work):
    arts = s.call("GET", f"/api/v1/jobs/{jid}/artifacts").json()["artifacts"]
    rpm = next(a for a in arts if a["name"].endswith(".noarch.rpm"))
    pkg = work / rpm["name"]
    pkg.write_bytes(s.call("GET", rpm["url"]).body)
    key = work / "farm.asc"
    key.write_bytes(s.call("GET", "/api/v1/keys/default", token="").body)
    env = {}
    for kind in ("build", "rerun"):
        r = s.call("GET", f"/api/v1/artifacts/{rpm['sha256']}/provenance?attestation={kind}")
        assert r.status == 200, r.body
        env[kind] = r.json()
        f = work / f"{kind}.intoto.json"
        f.write_bytes(r.body)
        k = subprocess.run([str(s.kiln_bin), "provenance", "verify", "--key", str(key),
                            str(f), str(pkg)], capture_output=True, text=True)
        assert k.returncode == 0 and "good signature by" in k.stdout, k.stdout + k.stderr
        g = gpg_verify_dsse(env[kind], key, work / f"gnupg-{kind}")
        assert g.returncode == 0 and "Good signature" in g.stderr, g.stderr
    # the same envelope by the unsigned digest the reruns compared
    r = s.call("GET", f"/api/v1/artifacts/{rpm['unsigned_sha256']}/provenance")
    assert r.status == 200 and r.json() == env["build"]
    st = json.loads(base64.b64decode(env["build"]["payload"]))
    assert st["_type"] == "https://in-toto.io/Statement/v1"
    assert st["predicateType"] == "https://slsa.dev/provenance/v1"
    subj = {x["name"]: x["digest"]["sha256"] for x in st["subject"]}
    assert subj == {a["name"]: a["sha256"] for a in arts if a["name"].endswith(".rpm")}
    bd = st["predicate"]["buildDefinition"]
    job = s.job(jid)
    assert bd["externalParameters"]["manifest"] == job["manifest"]
    deps = {d["name"]: d for d in bd["resolvedDependencies"]}
    assert deps["farm.spec"]["digest"]["sha256"] == job["manifest"]["spec"]["sha256"]
    assert deps["root"]["uri"] == "urn:kiln:root:worker-default"
    rd = st["predicate"]["runDetails"]
    assert rd["builder"]["id"].startswith("urn:kiln:builder:")
    assert rd["metadata"]["invocationId"] == f"job/{jid}/attempt/1"
    att = json.loads(base64.b64decode(env["rerun"]["payload"]))
    assert att["predicateType"] == "urn:kiln:attestation:reproducible:v1"
    assert att["predicate"]["verdict"] == "reproducible"
    assert [x["verdict"] for x in att["predicate"]["reruns"]] == ["reproducible"] * 2
    # a package that is not a subject, a tampered envelope
    other = work / "other.rpm"
    other.write_bytes(pkg.read_bytes() + b"x")
    k = subprocess.run([str(s.kiln_bin), "provenance", "verify", "--key", str(key),
                        str(work / "build.intoto.json"), str(other)],
                       capture_output=True, text=True)
    assert k.returncode != 0 and "not a subject" in k.stderr, k.stderr
    bad = dict(env["build"])
    bad["payload"] = base64.b64encode(base64.b64decode(bad["payload"]).replace(
        b"worker-default", b"worker-defaulT")).decode()
    (work / "bad.json").write_text(json.dumps(bad))
    k = subprocess.run([str(s.kiln_bin), "provenance", "verify", "--key", str(key),
                        str(work / "bad.json"), str(pkg)], capture_output=True, text=True)
    assert k.returncode != 0 and "signature" in k.stderr, k.stderr


LEAK = """Name: leak-{what}
Version: 1
Release: 1
Summary: leaks {what}
License: MIT
BuildArch: noarch
Source0: a.txt
Source1: b.txt
Source2: c.txt
%description
d
%install
mkdir -p %{{buildroot}}/usr/share/leak
{cmd} > %{{buildroot}}/usr/share/leak/{what}
echo same > %{{buildroot}}/usr/share/leak/stable
%files
/usr/share/leak
%changelog
* Tue Dec 01 2026 A <a@b> - 1-1
- x
"""

CASES = {
    "time": "date +%s%N",
    "hostname": "uname -n",
    "random": "od -An -N8 -tx8 /dev/urandom",
    "order": "ls -U %{_sourcedir}",
}


def test_leaky_specs_differ_and_the_report_names_the_file(farm2):
    s, work = farm2
    srcs = [{"name": n, "sha256": s.put_blob(n.encode() + b"\n")}
            for n in ("a.txt", "b.txt", "c.txt")]
    ids = {w: submit(s, LEAK.format(what=w, cmd=c), f"leak-{w}.spec", sources=srcs,
                     reruns=1)
           for w, c in CASES.items()}
    # the host name varies inside the sandbox only (workers fall back to the host without
    # the privileges for it)
    sandboxed = subprocess.run([str(s.kiln_bin), "sandbox", "--", "true"],
                               capture_output=True).returncode == 0
    for what, jid in ids.items():
        if what == "order" and not (sandboxed and shutil.which("disorderfs")):
            continue  # file order varies through disorderfs, in the sandbox
        if what == "hostname" and not sandboxed:
            continue
        doc = wait_verdict(s, jid)
        assert doc["verdict"] == "differs", (what, doc)
        r = doc["reruns"][0]
        assert r["verdict"] == "differs"
        rpm = next(a for a in r["artifacts"] if a["name"].endswith(".noarch.rpm"))
        assert rpm["verdict"] == "differs" and rpm["original_sha256"] != rpm["rerun_sha256"]
        paths = {i.get("path") for i in rpm["diff"]["differences"]}
        assert f"/usr/share/leak/{what}" in paths, (what, rpm["diff"])
        assert rpm["diff"]["files"] == [f"/usr/share/leak/{what}"], rpm["diff"]
        text = s.call("GET", f"/api/v1/jobs/{jid}/reproducibility?format=text").body.decode()
        assert f"file /usr/share/leak/{what}: contents differ" in text, text
        assert "\n    +" in text and "\n    -" in text, text  # the lines themselves
        assert isinstance(rpm["diffoscope"], str) or not DFS
        # a build provenance, but no rerun attestation for a package that differs
        sha = s.call("GET", f"/api/v1/jobs/{jid}/artifacts").json()["artifacts"][0]["sha256"]
        assert s.call("GET", f"/api/v1/artifacts/{sha}/provenance").status == 200
        assert s.call("GET", f"/api/v1/artifacts/{sha}/provenance?attestation=rerun"
                      ).status == 404
    m = s.call("GET", "/metrics", token="").body.decode()
    assert 'kiln_reproducibility_jobs{verdict="differs"}' in m
    assert json.dumps(m) and 'verdict="differs"} 0' not in m


RB_SPEC = """Name: rb-{v}
Version: 1
Release: 1
Summary: rebuilt
License: MIT
BuildArch: noarch
%description
d
%install
mkdir -p %{{buildroot}}/usr/share/rb
echo rebuild me > %{{buildroot}}/usr/share/rb/data
%files
/usr/share/rb/data
%changelog
* Tue Dec 01 2026 A <a@b> - 1-1
- x
"""


def test_rebuilder_mode(farm2, tmp_path):
    s, work = farm2
    env = dict(os.environ, KILN_URL=s.url, KILN_TOKEN=s.admin)
    # an SRPM and its package built earlier by the farm (signed): reproducible
    jid = submit(s, RB_SPEC.format(v="kiln"), "rb-kiln.spec", source_date_epoch=1700000000)
    assert s.wait_state(jid, ("succeeded", "failed"))["state"] == "succeeded"
    files = []
    for a in s.call("GET", f"/api/v1/jobs/{jid}/artifacts").json()["artifacts"]:
        p = tmp_path / a["name"]
        p.write_bytes(s.call("GET", a["url"]).body)
        files.append(p)
    files.sort(key=lambda p: not p.name.endswith(".src.rpm"))
    k = subprocess.run([str(s.kiln_bin), "rebuild", "--wait", *map(str, files)], env=env,
                       capture_output=True, text=True, timeout=300)
    assert k.returncode == 0, k.stdout + k.stderr
    assert "reproducible (payload matches, metadata matches)" in k.stdout, k.stdout
    rid = int(k.stdout.split()[1])
    doc = s.call("GET", f"/api/v1/rebuilds/{rid}").json()
    assert doc["verdict"] == "reproducible" and doc["state"] == "succeeded"
    rpm = doc["rpms"][0]
    assert rpm["payload_match"] and rpm["metadata_match"] and rpm["ignored"] == []
    assert rpm["buildtime_controlled"] is False and rpm["buildhost_controlled"] is True
    # the published one is signed, the rebuilt one not: only the signature header differs
    assert rpm["published_sha256"] != rpm["rebuilt_sha256"]
    assert s.job(rid)["request"]["source_date_epoch"] == 1700000000

    # built by Debian's rpmbuild without SOURCE_DATE_EPOCH: differs, and says why
    top = tmp_path / "rpmbuild"
    (top / "SPECS").mkdir(parents=True)
    sp = top / "SPECS" / "rb-deb.spec"
    sp.write_text(RB_SPEC.format(v="deb"))
    benv = {k: v for k, v in os.environ.items() if k != "SOURCE_DATE_EPOCH"}
    subprocess.run(["rpmbuild", "-ba", "--nodeps", "--quiet", "--define", f"_topdir {top}",
                    str(sp)], check=True, env=benv, capture_output=True)
    srpm = next((top / "SRPMS").glob("*.src.rpm"))
    rpm_path = next((top / "RPMS").rglob("*.noarch.rpm"))
    # the SRPM by upload, the package by URL (the scheduler fetches it)
    url_srv = subprocess.Popen([sys.executable, "-m", "http.server", "0", "--bind",
                                "127.0.0.1", "--directory", str(rpm_path.parent)],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        line = url_srv.stdout.readline()
        port = int(line.split(" port ")[1].split()[0])
        url = f"http://127.0.0.1:{port}/{rpm_path.name}"
        k = subprocess.run([str(s.kiln_bin), "rebuild", "--wait", str(srpm), url], env=env,
                           capture_output=True, text=True, timeout=300)
    finally:
        url_srv.kill()
        url_srv.wait()
        url_srv.stdout.close()
    assert k.returncode == 1 and k.stdout, k.stdout + k.stderr
    rid = int(k.stdout.split()[1])
    doc = s.call("GET", f"/api/v1/rebuilds/{rid}").json()
    assert doc["verdict"] == "differs", doc
    rpm = doc["rpms"][0]
    assert rpm["name"] == rpm_path.name and rpm["verdict"] == "differs"
    assert not rpm["metadata_match"] and rpm["diff"]["differences"]
    # rpm 4.18's BUILDTIME is the wall clock, not the changelog's: not controlled
    assert rpm["buildtime_controlled"] is False
    assert "not controlled by the original: BUILDTIME BUILDHOST" in k.stdout, k.stdout
    assert "\n    tag " in k.stdout, k.stdout  # each difference, named
    bad = s.call("POST", "/api/v1/rebuilds", {"srpm": {"name": "x.src.rpm"}, "rpms": []})
    assert bad.status == 400
