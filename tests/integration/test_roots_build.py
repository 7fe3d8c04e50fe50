"""kiln build --root CONFIG (issue 21): a fresh root made from the fixture distribution's
signed repository (tests/fixtures/debrpm.py), with the spec's BuildRequires installed from
it, the build run in it, and the root's rpm database holding exactly the lock."""
import base64
import hashlib
import json
import os
import re
import subprocess
from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parent.parent / "data" / "roots"


@pytest.fixture(scope="module")
def root_env(debrpm_repo, tmp_path_factory):
    """A root configuration over the fixture repository, and a cache of the module's own
    (the image is made once for the module)."""
    top = tmp_path_factory.mktemp("rootbuild")
    cfg = top / "fixture-x86_64.cfg"
    cfg.write_text(debrpm_repo.root_config())
    env = dict(os.environ, KILN_CACHE_DIR=str(top / "cache"))
    return cfg, env, top


def run(kiln_bin, *args, env, timeout=900):
    return subprocess.run([str(kiln_bin), *map(str, args)], capture_output=True, text=True,
                          env=env, timeout=timeout)


def nevra(p):
    return f"{p['name']}-{p['epoch']}:{p['version']}-{p['release']}.{p['arch']}"


def test_a_c_package_builds_in_a_root_from_the_repository(kiln_bin, root_env, tmp_path):
    cfg, env, _ = root_env
    spec = DATA / "zdemo.spec"
    r = run(kiln_bin, "root", "lock", "--json", cfg, spec, env=env)
    assert r.returncode == 0, r.stderr
    lock = json.loads(r.stdout)
    r_lock = r.stdout
    names = {p["name"] for p in lock["packages"]}
    # BuildRequires: zlib-devel is only provided by the repository's zlib1g-dev
    assert "zlib1g-dev" in names and "gcc" in names
    (tmp_path / "lock.json").write_text(r.stdout)

    top = tmp_path / "top"
    r = run(kiln_bin, "build", "-bb", "--topdir", top, "--root", cfg, spec, env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    rpm = next((top / "RPMS" / "x86_64").glob("zdemo-1.0-1.x86_64.rpm"))
    req = subprocess.run(["rpm", "-qp", "--requires", rpm], capture_output=True, text=True,
                         check=True).stdout
    assert "libz.so.1()(64bit)" in req

    # the package installs with rpm and runs
    inst = tmp_path / "inst"
    subprocess.run(["rpm", "-i", "--nodeps", "--root", inst, rpm], check=True,
                   capture_output=True)
    out = subprocess.run([inst / "usr/bin/zdemo"], capture_output=True, text=True, check=True)
    assert out.stdout.startswith("zlib ")

    # the root's rpm database lists exactly the lock (asked inside the root, on a fresh
    # overlay of the image, as mock --shell would)
    r = run(kiln_bin, "root", "shell", "--lock", tmp_path / "lock.json", cfg, "--", "rpm",
            "-qa", "--qf", "%{NAME}-%{EPOCHNUM}:%{VERSION}-%{RELEASE}.%{ARCH}\\n", env=env)
    assert r.returncode == 0, r.stderr
    assert sorted(r.stdout.split()) == sorted(nevra(p) for p in lock["packages"])

    # given the lock back, the same root: the same package, byte for byte
    top2 = tmp_path / "top2"
    r = run(kiln_bin, "build", "-bb", "--topdir", top2, "--root", cfg, "--lock",
            tmp_path / "lock.json", spec, env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    assert (top2 / "RPMS/x86_64" / rpm.name).read_bytes() == rpm.read_bytes()


def test_rich_build_requires_are_checked_in_the_root(kiln_bin, root_env, tmp_path):
    """rpm -q --whatprovides takes no rich dependency: kiln's check in the root evaluates
    and/or/if/else itself (rpmbuild does, through rpm's transaction check)."""
    cfg, env, _ = root_env
    base = (DATA / "chain/chaina.spec").read_text()
    good = tmp_path / "good.spec"
    good.write_text(base.replace("BuildArch: noarch\n", "BuildArch: noarch\n"
                                 "BuildRequires: (nonexistent-devel or bash)\n"
                                 "BuildRequires: (coreutils if bash else nonexistent-b)\n"))
    r = run(kiln_bin, "build", "-bb", "--topdir", tmp_path / "t1", "--root", cfg, good,
            env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    # On an image used as dir: (no resolution first), the check itself finds what is missing.
    r = run(kiln_bin, "root", "create", cfg, env=env)
    assert r.returncode == 0, r.stderr
    image = re.search(r"^root: (\S+)", r.stdout, re.M).group(1)
    bad = tmp_path / "bad.spec"
    bad.write_text(base.replace("BuildArch: noarch\n", "BuildArch: noarch\n"
                                "BuildRequires: (nonexistent-a or (bash and nonexistent-b))\n"))
    r = run(kiln_bin, "build", "-bb", "--topdir", tmp_path / "t2", "--root", f"dir:{image}",
            bad, env=env)
    assert r.returncode == 1
    assert ("(nonexistent-a or (bash and nonexistent-b)) is needed by chaina-1.2-1"
            in r.stderr), r.stderr


def test_unsatisfiable_build_requires_name_the_package(kiln_bin, root_env, tmp_path):
    cfg, env, _ = root_env
    spec = tmp_path / "nope.spec"
    spec.write_text((DATA / "zdemo.spec").read_text().replace(
        "BuildRequires: zlib-devel", "BuildRequires: zlib-devel\nBuildRequires: no-such-lib"))
    r = run(kiln_bin, "build", "-bb", "--topdir", tmp_path / "top", "--root", cfg, spec,
            env=env)
    assert r.returncode != 0
    assert "no-such-lib" in r.stderr
    assert not (tmp_path / "top" / "RPMS").exists() or not list(
        (tmp_path / "top" / "RPMS").rglob("*.rpm"))


def test_root_usage_errors(kiln_bin, root_env, tmp_path):
    cfg, env, _ = root_env
    spec = DATA / "zdemo.spec"
    r = run(kiln_bin, "build", "-bb", "--no-sandbox", "--root", cfg, spec, env=env)
    assert r.returncode == 2 and "sandbox" in r.stderr
    r = run(kiln_bin, "build", "-bb", "--lock", tmp_path / "x.json", spec, env=env)
    assert r.returncode == 2 and "--lock goes with --root" in r.stderr
    r = run(kiln_bin, "build", "-bb", "--root", "no-such-config", spec, env=env)
    assert r.returncode == 1 and "no-such-config" in r.stderr


# %generate_buildrequires in a root: a base set without make, patch and the rest, so each
# round's request is new to the root. findutils stays in it: the root's post-install policy
# (brp-strip) needs find.
MINIMAL = "filesystem bash coreutils findutils sed grep rpm"

TWO_ROUNDS = """Name: dyn
Version: 1
Release: 1
Summary: two rounds of generated build requirements
License: MIT
BuildArch: noarch

%description
d

%generate_buildrequires
echo make
if command -v make >/dev/null; then echo patch; fi

%build
make --version | head -1 > out
patch --version | head -1 >> out

%install
install -D -m 0644 out %{buildroot}/usr/share/dyn/out

%files
/usr/share/dyn/out

%changelog
* Mon Jan 01 2024 A <a@example.org> - 1-1
- first
"""

# Asks each round for the first package of the repository the root lacks: a new one every
# round, never satisfied within ten.
def endless_spec(packages):
    return TWO_ROUNDS.replace("""echo make
if command -v make >/dev/null; then echo patch; fi""", f"""for p in {' '.join(sorted(packages))}; do
  rpm -q "$p" >/dev/null 2>&1 || {{ echo "$p"; exit 0; }}
done""")


def minimal_config(debrpm_repo, top):
    cfg = top / "minimal.cfg"
    cfg.write_text(debrpm_repo.root_config(MINIMAL))
    return cfg


def test_generate_buildrequires_rounds_extend_the_root(kiln_bin, debrpm_repo, root_env,
                                                      tmp_path):
    _, env, top = root_env
    cfg = minimal_config(debrpm_repo, top)
    spec = tmp_path / "dyn.spec"
    spec.write_text(TWO_ROUNDS)
    r = run(kiln_bin, "build", "-bb", "--topdir", tmp_path / "top", "--root", cfg, spec,
            env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "round 1: %generate_buildrequires asks for make\n" in r.stderr
    assert "round 2: %generate_buildrequires asks for make patch\n" in r.stderr
    assert "satisfied after 3 rounds" in r.stderr
    rpm = next((tmp_path / "top" / "RPMS" / "noarch").glob("dyn-1-1.noarch.rpm"))
    out = subprocess.run(["rpm2cpio", rpm], capture_output=True, check=True).stdout
    assert b"GNU Make" in out and b"patch" in out


def test_endless_generate_buildrequires_stops_at_ten_rounds(kiln_bin, debrpm_repo, root_env,
                                                            tmp_path):
    _, env, top = root_env
    cfg = minimal_config(debrpm_repo, top)
    spec = tmp_path / "endless.spec"
    spec.write_text(endless_spec(debrpm_repo.info["packages"]))
    r = run(kiln_bin, "build", "-bb", "--topdir", tmp_path / "top", "--root", cfg, spec,
            env=env)
    assert r.returncode == 1
    assert "round 10: %generate_buildrequires asks for" in r.stderr
    assert "round 11" not in r.stderr
    assert "after 10 rounds: giving up" in r.stderr


def test_farm_job_builds_in_the_root_a_worker_offers(kiln_bin, root_env, tmp_path):
    """kiln submit --root NAME: only a worker offering that root configuration takes the
    job; it builds in the root (BuildRequires from the repository); a job naming a root no
    worker offers waits, and its placement says so."""
    from farm import Scheduler, read_line
    import time

    cfg, env, _ = root_env
    s = Scheduler(kiln_bin, tmp_path / "data", "limits.lease_ttl=30", "limits.tick=100ms",
                  "limits.poll_max=5").start()
    procs = []
    try:
        for name, extra in (("plain", []), ("rooted", ["--root-config", str(cfg)])):
            p = subprocess.Popen([str(kiln_bin), "worker", "--scheduler", s.url, "--token",
                                  s.token("worker"), "--name", name, "--work-dir",
                                  str(tmp_path / name), "--poll", "2", *extra],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
            procs.append(p)
            line = read_line(p, time.monotonic() + 60, f"worker {name}")
            assert line.startswith(f"registered as {name}"), line
        cenv = dict(env, KILN_URL=s.url, KILN_TOKEN=s.token("submit,read"))
        r = run(kiln_bin, "submit", DATA / "zdemo.spec", "--root", cfg.stem, "--wait",
                env=cenv)
        assert r.returncode == 0, r.stdout + r.stderr
        jid = int(r.stdout.split("job ")[1].split()[0])
        job = s.job(jid)
        manifest = job["manifest"] if isinstance(job["manifest"], dict) else json.loads(
            job["manifest"])
        assert manifest["root"] == cfg.stem
        r = run(kiln_bin, "logs", str(jid), env=cenv)
        assert f"root {cfg.stem}, lock " in r.stdout
        assert "kiln worker rooted: job" in r.stdout
        # the lock the worker resolved is pinned in the manifest (the root's identity)
        job = s.job(jid)
        manifest = job["manifest"] if isinstance(job["manifest"], dict) else json.loads(
            job["manifest"])
        lock_id = manifest["root_lock"]
        assert len(lock_id) == 64 and f"lock {lock_id}" in r.stdout
        r = run(kiln_bin, "download", str(jid), "-o", tmp_path / "dl", env=cenv)
        assert r.returncode == 0, r.stderr
        rpm = next((tmp_path / "dl").glob("zdemo-1.0-1.x86_64.rpm"))
        # its provenance lists every root package with its digest
        sha = hashlib.sha256(rpm.read_bytes()).hexdigest()
        env_ = json.loads(s.call("GET", f"/api/v1/artifacts/{sha}/provenance").body)
        stmt = json.loads(base64.b64decode(env_["payload"]))
        deps = stmt["predicate"]["buildDefinition"]["resolvedDependencies"]
        root = [d for d in deps if d["name"] == "root"][0]
        assert root["uri"] == f"urn:kiln:root:{cfg.stem}" and root["digest"]["sha256"] == lock_id
        assert any(d["name"].startswith("zlib1g-dev-") and len(d["digest"]["sha256"]) == 64
                   for d in deps)
        # a rerun builds on that same lock, pinned
        r = run(kiln_bin, "reproduce", "--count", "1", "--wait", str(jid), env=cenv,
                timeout=900)
        assert r.returncode == 0, r.stdout + r.stderr
        logs = "".join(run(kiln_bin, "logs", str(i), env=cenv).stdout
                       for i in range(jid + 1, jid + 3))
        assert f"lock {lock_id} " in logs and "pinned by the job" in logs
        # a rebuild of the published package runs on the same root and lock
        srpm = next((tmp_path / "dl").glob("zdemo-1.0-1.src.rpm"))
        r = run(kiln_bin, "rebuild", "--wait", srpm, rpm, env=cenv, timeout=900)
        assert r.returncode == 0, r.stdout + r.stderr
        last = max(j["id"] for j in s.call("GET", "/api/v1/jobs").json()["jobs"])
        rb = s.job(last)
        rbm = rb["manifest"] if isinstance(rb["manifest"], dict) else json.loads(rb["manifest"])
        assert rbm["root"] == cfg.stem and rbm["root_lock"] == lock_id, rbm
        assert "pinned by the job" in run(kiln_bin, "logs", str(last), env=cenv).stdout
        req = subprocess.run(["rpm", "-qp", "--requires", rpm], capture_output=True,
                             text=True, check=True).stdout
        assert "libz.so.1()(64bit)" in req

        r = s.call("POST", "/api/v1/jobs", {"spec": (DATA / "zdemo.spec").read_text(),
                                            "spec_name": "zdemo.spec", "root": "nowhere-42"},
                   token=s.token("submit,read"))
        assert r.status == 201, r.body
        pid = r.json()["id"]
        p = s.call("GET", f"/api/v1/jobs/{pid}/placement").json()
        assert p["summary"] == "no worker offers nowhere-42", p
        assert all("does not offer root nowhere-42" in w["reason"] for w in p["workers"]), p
    finally:
        for p in procs:
            p.terminate()
            try:
                p.wait(timeout=60)
            except subprocess.TimeoutExpired:
                p.kill()
        s.stop()


def test_root_list_names_the_configurations_found(kiln_bin, root_env, tmp_path):
    import shutil

    cfg, env, _ = root_env
    confdir = tmp_path / "configs"
    shutil.copytree(Path(__file__).resolve().parent.parent.parent / "configs", confdir)
    (confdir / "roots").mkdir(exist_ok=True)
    shutil.copy(cfg, confdir / "roots" / "fixture-x86_64.cfg")
    (confdir / "roots" / "broken.cfg").write_text("[root]\narch = x86_64\nbogus = 1\n")
    r = run(kiln_bin, "root", "list", env=dict(env, KILN_CONFIGDIR=str(confdir)))
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].split()[0] == "broken" and "broken.cfg:3" in lines[0]
    assert lines[1].split()[:2] == ["fixture-x86_64", "x86_64"]
