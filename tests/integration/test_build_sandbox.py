"""kiln build's stages in the namespace sandbox (issue [chroot]): each spec's %build tries
to break out and must fail, or leave nothing behind."""
import os
import socket
import subprocess
import threading
import uuid
from pathlib import Path

import pytest

ENV = dict(os.environ, TZ="UTC", LC_ALL="C", SOURCE_DATE_EPOCH="1796126400")


def build(kiln_bin, tmp_path, body, *args, install="", files="", timeout=120):
    spec = tmp_path / "probe.spec"
    spec.write_text("Name: probe\nVersion: 1\nRelease: 1\nSummary: s\nLicense: MIT\n"
                    f"%description\nd\n%build\n{body}\n%install\n{install}\n%files\n{files}\n")
    top = tmp_path / "top"
    return subprocess.run([str(kiln_bin), "build", "-bb", "--define", f"_topdir {top}",
                           *map(str, args), str(spec)], env=ENV, capture_output=True,
                          text=True, timeout=timeout)


def test_no_network(kiln_bin, tmp_path):
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)
    port = srv.getsockname()[1]
    accepted = []

    def accept():
        try:
            accepted.append(srv.accept())
        except OSError:  # the test closed the socket: nothing connected
            pass

    threading.Thread(target=accept, daemon=True).start()
    body = (f"if (exec 3<>/dev/tcp/127.0.0.1/{port}) 2>/dev/null; then echo CONNECTED; "
            "exit 1; fi; echo isolated")
    k = build(kiln_bin, tmp_path, f"bash -c '{body}'")
    srv.close()
    assert k.returncode == 0, k.stdout + k.stderr
    assert "isolated" in k.stdout and not accepted


def test_host_tmp_and_home_are_private(kiln_bin, tmp_path):
    name = f"kiln-secret-{uuid.uuid4().hex}"
    secrets = [Path("/tmp") / name, Path.home() / name]
    for s in secrets:
        s.write_text("secret")
    try:
        body = " ".join(f"test ! -e {s} || {{ echo LEAK {s}; exit 1; }};" for s in secrets)
        k = build(kiln_bin, tmp_path, body + " touch /tmp/inside-only")
        assert k.returncode == 0, k.stdout + k.stderr
        assert not Path("/tmp/inside-only").exists()
    finally:
        for s in secrets:
            s.unlink()


@pytest.mark.parametrize("target", ["/usr/kiln-write-test", "/kiln-write-test"])
def test_root_is_read_only(kiln_bin, tmp_path, target):
    k = build(kiln_bin, tmp_path, f"touch {target}")
    assert k.returncode == 1
    assert "Bad exit status" in k.stderr and "(%build)" in k.stderr
    assert not Path(target).exists()


def test_background_process_does_not_outlive_the_stage(kiln_bin, tmp_path):
    marker = tmp_path / "top" / "BUILD" / "late"
    k = build(kiln_bin, tmp_path, "(sleep 3; touch ../late) & echo started")
    assert k.returncode == 0, k.stderr
    import time
    time.sleep(4)
    assert not marker.exists()


def test_stage_timeout(kiln_bin, tmp_path):
    k = build(kiln_bin, tmp_path, "sleep 1000", "--timeout", "2")
    assert k.returncode == 1
    assert "timed out" in k.stderr and "(%build)" in k.stderr


def test_network_opt_in_is_recorded(kiln_bin, tmp_path):
    k = build(kiln_bin, tmp_path, "true", "--enable-network", "--json")
    assert k.returncode == 0, k.stderr
    import json
    doc = json.loads(k.stdout)
    assert doc["sandbox"] is True and doc["network"] is True


def test_cpus_are_fixed(kiln_bin, tmp_path):
    k = build(kiln_bin, tmp_path, 'echo "ncpus=$(nproc) smp=$RPM_BUILD_NCPUS"', "--cpus", "1")
    assert k.returncode == 0, k.stderr
    assert "ncpus=1 smp=1" in k.stdout


def test_host_mode_is_rpmbuild_like(kiln_bin, tmp_path):
    k = build(kiln_bin, tmp_path, 'echo "dir=$RPM_BUILD_DIR"', "--no-sandbox")
    assert k.returncode == 0, k.stderr
    assert f"dir={tmp_path}/top/BUILD" in k.stdout


def test_fork_bomb_hits_the_pids_limit(kiln_bin, tmp_path):
    # a duration no other process uses, so the check below sees only this test's sleeps
    nap = f"30.{os.getpid()}"
    body = f"for i in $(seq 300); do sleep {nap} & done; wait"
    k = build(kiln_bin, tmp_path, body, "--pids-max", "64", "--timeout", "60")
    assert k.returncode == 1
    assert "(%build)" in k.stderr
    # Nothing of it is left on the host.
    ps = subprocess.run(["pgrep", "-fx", f"sleep {nap}"], capture_output=True, text=True)
    assert ps.stdout.strip() == ""


def test_memory_cap_stops_a_greedy_build(kiln_bin, tmp_path):
    greedy = "dd if=/dev/zero bs=300M count=1 of=/dev/null"
    k = build(kiln_bin, tmp_path, greedy, "--memory", "64M", "--timeout", "60")
    assert k.returncode == 1 and "(%build)" in k.stderr, k.stderr
    (tmp_path / "ok").mkdir()
    k = build(kiln_bin, tmp_path / "ok", greedy, "--memory", "1G", "--cpu", "100",
              "--timeout", "60")
    assert k.returncode == 0, k.stderr


def test_real_program_in_a_dir_root(kiln_bin, tmp_path, debian_root):
    """hello (make + cc) in a dir: root made with mmdebstrap, installed with rpm -i."""
    import test_build as tb
    top = tb.topdir_with_sources(tmp_path / "k")
    k = tb.kiln_build(kiln_bin, top, "-bb", "--root", f"dir:{debian_root}",
                      tb.DATA / "hello.spec")
    assert k.returncode == 0, k.stdout + k.stderr
    inst = tmp_path / "inst"
    pkgs = [str(top / p) for p in tb.outputs(top)]
    assert len(pkgs) == 2  # hello and hello-doc
    r = subprocess.run(["rpm", "-i", "--root", str(inst), "--dbpath", "/var/lib/rpm",
                        "--nodeps", "--force-debian", *pkgs], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    out = subprocess.run([str(inst / "usr/bin/hello")], capture_output=True, text=True)
    assert out.stdout == "Hello, kiln!\n"
    # The build wrote only into its own upper layer and build directory.
    assert not (debian_root / "builddir").exists()


def test_dir_root_is_shared_read_only_under_a_private_upper_layer(kiln_bin, tmp_path,
                                                                  debian_root):
    """Two builds at once in one dir: image: each sees the image (its marker file) and its
    own writes to /usr, never the other's, and the image itself stays as it was."""
    key = (debian_root / ".kiln-test-root").read_text().strip()
    body = ("grep -qx {key} /.kiln-test-root; echo {n} > /usr/kiln-upper; sleep 1; "
            "test \"$(cat /usr/kiln-upper)\" = {n}; echo own-upper-{n}")
    procs = []
    for n in (1, 2):
        d = tmp_path / str(n)
        d.mkdir()
        spec = d / "probe.spec"
        spec.write_text("Name: probe\nVersion: 1\nRelease: 1\nSummary: s\nLicense: MIT\n"
                        f"%description\nd\n%build\n{body.format(key=key, n=n)}\n"
                        "%install\n%files\n")
        procs.append(subprocess.Popen(
            [str(kiln_bin), "build", "-bc", "--define", f"_topdir {d / 'top'}", "--root",
             f"dir:{debian_root}", str(spec)], env=ENV, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True))
    for n, p in enumerate(procs, 1):
        out, errs = p.communicate(timeout=120)
        assert p.returncode == 0, out + errs
        assert f"own-upper-{n}" in out
    assert not (debian_root / "usr/kiln-upper").exists()
