"""`kiln fetch` and `kiln cache` against a local HTTP(S) server (tests/integration/srcserver.py):
downloads, the cache, checksums from a dist-git `sources` file, --pin, --offline, and the
failure modes farms meet: cut connections (resume), 503/429 (retry), 404, slow bodies,
redirect loops, TLS with a self-signed certificate, and concurrent fetches.
"""
import hashlib
import os
import subprocess
from pathlib import Path

import pytest

from srcserver import Server, make_cert

# Short retries so failing cases finish quickly; none of the assertions depend on timing.
FAST = ["--retry-delay", "50", "--no-progress"]


@pytest.fixture
def files(tmp_path):
    d = tmp_path / "srv"
    d.mkdir()
    (d / "foo-1.0.tar.gz").write_bytes(os.urandom(300_000))
    (d / "big.bin").write_bytes(os.urandom(2 * 1024 * 1024))
    return d


@pytest.fixture
def server(files):
    s = Server(files)
    yield s
    s.close()


@pytest.fixture
def fetch(kiln, tmp_path):
    cache = tmp_path / "cache"

    def run(*args, cache_dir=None, **kw):
        return kiln("fetch", "--cache", cache_dir or cache, *FAST, *args, **kw)

    run.cache = cache
    return run


def write_spec(dir_, *sources, name="foo", version="1.0"):
    dir_.mkdir(parents=True, exist_ok=True)
    lines = [f"Name: {name}", f"Version: {version}", "Release: 1", "Summary: s", "License: MIT"]
    lines += [f"Source{i}: {u}" for i, u in enumerate(sources)]
    lines += ["%description", "d", ""]
    spec = dir_ / f"{name}.spec"
    spec.write_text("\n".join(lines))
    return spec


def sha(path, algo="sha256"):
    return hashlib.new(algo, Path(path).read_bytes()).hexdigest()


def objects(cache):
    return sorted(p for p in (Path(cache) / "sha256").glob("*/*") if p.is_file())


def test_download_then_cache(fetch, server, files, tmp_path):
    spec = write_spec(tmp_path / "a", f"{server.base}/files/foo-1.0.tar.gz")
    r = fetch("-C", tmp_path / "a", spec)
    assert r.returncode == 0, r.stderr
    got = tmp_path / "a" / "foo-1.0.tar.gz"
    assert got.read_bytes() == (files / "foo-1.0.tar.gz").read_bytes()
    assert "downloaded" in r.stdout and sha(got) in r.stdout
    # The object is named by its sha256 and read-only.
    [obj] = objects(fetch.cache)
    assert obj.name == sha(got) and obj.parent.name == obj.name[:2]
    assert obj.stat().st_mode & 0o777 == 0o444
    # A second sourcedir is served from the cache: no request reaches the server.
    n = len(server.log)
    r = fetch("-C", tmp_path / "b", spec)
    assert r.returncode == 0, r.stderr
    assert "from the cache" in r.stdout and len(server.log) == n
    assert (tmp_path / "b" / "foo-1.0.tar.gz").read_bytes() == got.read_bytes()
    # A file already present is used as it is.
    r = fetch("-C", tmp_path / "b", spec)
    assert "present" in r.stdout and len(server.log) == n


def test_sourcedir_macro_and_patches(fetch, server, tmp_path):
    top = tmp_path / "top"
    spec = write_spec(tmp_path / "spec", f"{server.base}/files/foo-1.0.tar.gz")
    spec.write_text(spec.read_text().replace("%description",
                                             "Patch0: fix.patch\n%description"))
    r = fetch("-D", f"_topdir {top}", spec)
    assert r.returncode == 1
    assert "Patch0" in r.stderr and "fix.patch does not exist" in r.stderr
    assert "no URL" in r.stderr
    (top / "SOURCES" / "fix.patch").write_text("--- a\n+++ b\n")
    r = fetch("-D", f"_topdir {top}", spec)
    assert r.returncode == 0, r.stderr
    assert (top / "SOURCES" / "foo-1.0.tar.gz").is_file()
    assert "Patch0: " in r.stdout and "present" in r.stdout


def test_checksums_pin_and_mismatch(fetch, server, files, tmp_path):
    d = tmp_path / "dg"
    spec = write_spec(d, f"{server.base}/files/foo-1.0.tar.gz")
    r = fetch("--pin", "-C", d, spec)
    assert r.returncode == 0, r.stderr
    want = sha(files / "foo-1.0.tar.gz", "sha512")
    assert (d / "sources").read_text() == f"SHA512 (foo-1.0.tar.gz) = {want}\n"
    # sha512sum --check accepts what --pin wrote (the BSD tagged format).
    chk = subprocess.run(["sha512sum", "--check", "sources"], cwd=d, capture_output=True,
                         text=True)
    assert chk.returncode == 0, chk.stdout + chk.stderr
    # A declared checksum is verified, from a fresh cache.
    (d / "foo-1.0.tar.gz").unlink()
    r = fetch("-C", d, spec, cache_dir=tmp_path / "c2")
    assert r.returncode == 0 and "checksum verified" in r.stdout
    # A wrong one is an error naming the file, expected and actual, and the cache stays empty.
    bad = "0" * 128
    (d / "sources").write_text(f"SHA512 (foo-1.0.tar.gz) = {bad}\n")
    (d / "foo-1.0.tar.gz").unlink()
    r = fetch("-C", d, spec, cache_dir=tmp_path / "c3")
    assert r.returncode == 1
    assert f"foo-1.0.tar.gz: sha512 mismatch: expected {bad}, got {want}" in r.stderr
    assert "Source0" in r.stderr and server.base in r.stderr
    assert objects(tmp_path / "c3") == [] and not (d / "foo-1.0.tar.gz").exists()
    assert list((tmp_path / "c3" / "tmp").iterdir()) == []


def test_local_file_with_wrong_checksum_is_fetched_again(fetch, server, files, tmp_path):
    d = tmp_path / "dg"
    spec = write_spec(d, f"{server.base}/files/foo-1.0.tar.gz")
    good = sha(files / "foo-1.0.tar.gz")
    (d / "sources").write_text(f"SHA256 (foo-1.0.tar.gz) = {good}\n")
    (d / "foo-1.0.tar.gz").write_bytes(b"stale tarball of the previous version")
    r = fetch("-C", d, spec)
    assert r.returncode == 0, r.stderr
    assert "fetching it again" in r.stderr
    assert sha(d / "foo-1.0.tar.gz") == good


def test_old_md5_sources_file(fetch, server, files, tmp_path):
    d = tmp_path / "dg"
    spec = write_spec(d, f"{server.base}/files/foo-1.0.tar.gz")
    (d / "sources").write_text(f"{sha(files / 'foo-1.0.tar.gz', 'md5')}  foo-1.0.tar.gz\n")
    r = fetch("-C", d, spec)
    assert r.returncode == 0 and "checksum verified" in r.stdout, r.stderr
    (d / "sources").write_text("SHA512 (foo-1.0.tar.gz) = 12\n")
    r = fetch("-C", d, spec)
    assert r.returncode == 1 and "sources:1" in r.stderr and "128 hex digits" in r.stderr


def test_offline(fetch, server, files, tmp_path):
    spec = write_spec(tmp_path / "s", f"{server.base}/files/foo-1.0.tar.gz")
    r = fetch("--offline", "-C", tmp_path / "a", spec)
    assert r.returncode == 1
    assert "offline" in r.stderr and "foo-1.0.tar.gz" in r.stderr
    assert server.log == []
    assert fetch("-C", tmp_path / "a", spec).returncode == 0
    r = fetch("--offline", "-C", tmp_path / "b", spec)
    assert r.returncode == 0 and "from the cache" in r.stdout, r.stderr
    # A file known only by a declared checksum (a lookaside tarball) comes from the cache.
    spec2 = write_spec(tmp_path / "t", "foo-1.0.tar.gz")
    (tmp_path / "t" / "sources").write_text(
        f"SHA512 (foo-1.0.tar.gz) = {sha(files / 'foo-1.0.tar.gz', 'sha512')}\n")
    r = fetch("--offline", "-C", tmp_path / "t", spec2)
    assert r.returncode == 0 and "checksum verified" in r.stdout, r.stderr


def test_resume_after_cut(fetch, server, files, tmp_path):
    spec = write_spec(tmp_path / "s", f"{server.base}/cut/big.bin")
    r = fetch("-C", tmp_path / "s", spec)
    assert r.returncode == 0, r.stderr
    assert sha(tmp_path / "s" / "big.bin") == sha(files / "big.bin")
    reqs = server.requests("/cut/big.bin")
    assert len(reqs) == 2
    half = (2 * 1024 * 1024) // 2
    assert reqs[0][2] is None and reqs[1][2] == f"bytes={half}-"
    assert "resuming" in r.stderr


def test_resume_refused_restarts(fetch, server, files, tmp_path):
    spec = write_spec(tmp_path / "s", f"{server.base}/cutnorange/big.bin")
    r = fetch("-C", tmp_path / "s", spec)
    assert r.returncode == 0, r.stderr
    assert sha(tmp_path / "s" / "big.bin") == sha(files / "big.bin")


def test_retry_on_503_and_429(fetch, server, files, tmp_path):
    for kind in ("flaky", "ratelimit"):
        spec = write_spec(tmp_path / kind, f"{server.base}/{kind}/foo-1.0.tar.gz")
        r = fetch("-C", tmp_path / kind, spec)
        assert r.returncode == 0, r.stderr
        assert len(server.requests(f"/{kind}/foo-1.0.tar.gz")) == 2
        assert "trying again (attempt 2 of 5)" in r.stderr
    assert "HTTP status 503" in fetch("-C", tmp_path / "x", write_spec(
        tmp_path / "x", f"{server.base}/status/503"), "--retries", "1").stderr


def test_404_names_the_url(fetch, server, tmp_path):
    url = f"{server.base}/files/missing-2.0.tar.gz"
    spec = write_spec(tmp_path / "s", url)
    r = fetch("-C", tmp_path / "s", spec)
    assert r.returncode == 1
    assert f"Source0 ({url})" in r.stderr
    assert f"cannot fetch '{url}': HTTP status 404 Not Found" in r.stderr
    assert len(server.requests("/files/missing-2.0.tar.gz")) == 1  # 404 is not retried
    assert objects(fetch.cache) == []


def test_slow_body(fetch, server, tmp_path):
    spec = write_spec(tmp_path / "s", f"{server.base}/slow/x.tar.gz")
    r = fetch("-C", tmp_path / "s", spec, "--low-speed-time", "1", "--low-speed-limit", "1000",
              "--retries", "1")
    assert r.returncode == 1
    assert "transfer too slow (below 1000 bytes/s for 1 s)" in r.stderr
    assert "after 2 attempts" in r.stderr


def test_redirects(fetch, server, files, tmp_path):
    spec = write_spec(tmp_path / "s", f"{server.base}/redirect/foo-1.0.tar.gz")
    r = fetch("-C", tmp_path / "s", spec)
    assert r.returncode == 0, r.stderr
    assert sha(tmp_path / "s" / "foo-1.0.tar.gz") == sha(files / "foo-1.0.tar.gz")
    spec = write_spec(tmp_path / "l", f"{server.base}/loop")
    r = fetch("-C", tmp_path / "l", spec, "--max-redirs", "5")
    assert r.returncode == 1
    assert "too many redirects (the limit is 5)" in r.stderr
    assert len(server.log) < 20


def test_size_limit(fetch, server, tmp_path):
    spec = write_spec(tmp_path / "s", f"{server.base}/files/big.bin")
    r = fetch("-C", tmp_path / "s", spec, "--max-size", "1M")
    assert r.returncode == 1
    assert "larger than the limit of 1048576 bytes" in r.stderr
    assert objects(fetch.cache) == []


def test_connect_refused_and_dns(fetch, tmp_path):
    import socket
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens there now
    spec = write_spec(tmp_path / "s", f"http://127.0.0.1:{port}/a.tar.gz")
    r = fetch("-C", tmp_path / "s", spec, "--retries", "0")
    assert r.returncode == 1
    assert f"cannot connect to 127.0.0.1:{port}" in r.stderr
    spec = write_spec(tmp_path / "d", "http://no-such-host.invalid/a.tar.gz")
    r = fetch("-C", tmp_path / "d", spec, "--retries", "0")
    assert r.returncode == 1
    assert "cannot resolve host 'no-such-host.invalid' (DNS)" in r.stderr


def test_credentials_never_printed(fetch, tmp_path):
    spec = write_spec(tmp_path / "s", "http://user:s3cret@no-such-host.invalid/a.tar.gz")
    r = fetch("-C", tmp_path / "s", spec, "--retries", "0")
    assert r.returncode == 1 and "s3cret" not in r.stderr and "***" in r.stderr


def test_unsupported_scheme_and_file_urls(fetch, files, tmp_path):
    spec = write_spec(tmp_path / "s", "gopher://example.org/a.tar.gz")
    r = fetch("-C", tmp_path / "s", spec)
    assert r.returncode == 1 and "URL scheme 'gopher' is not one kiln fetches" in r.stderr
    spec = write_spec(tmp_path / "f", f"file://{files}/foo-1.0.tar.gz")
    r = fetch("-C", tmp_path / "f", spec)
    assert r.returncode == 0, r.stderr
    assert sha(tmp_path / "f" / "foo-1.0.tar.gz") == sha(files / "foo-1.0.tar.gz")


def test_progress(fetch, server, tmp_path):
    spec = write_spec(tmp_path / "s", f"{server.base}/paced/big.bin")
    r = fetch("-C", tmp_path / "s", spec, "--progress")
    assert r.returncode == 0, r.stderr
    assert "big.bin: 2.0 MiB / 2.0 MiB" in r.stderr and "MiB/s" in r.stderr


def test_one_url(fetch, server, files, tmp_path):
    out = tmp_path / "one" / "x.bin"
    out.parent.mkdir()
    want = sha(files / "big.bin")
    r = fetch("--url", f"{server.base}/files/big.bin", "-o", out, "--sha256", want)
    assert r.returncode == 0, r.stderr
    assert sha(out) == want
    r = fetch("--url", f"{server.base}/files/big.bin", "-o", tmp_path / "one" / "y",
              "--sha256", "1" * 64, cache_dir=tmp_path / "c2")
    assert r.returncode == 1 and "sha256 mismatch" in r.stderr


def test_tls(kiln, files, tmp_path):
    cert, key = make_cert(tmp_path)
    s = Server(files, tls_cert=cert, tls_key=key)
    try:
        spec = write_spec(tmp_path / "s", f"{s.base}/files/foo-1.0.tar.gz")
        base = ["fetch", "--cache", tmp_path / "c", *FAST, "--retries", "0", "-C",
                tmp_path / "s", spec]
        r = kiln(*base)
        assert r.returncode == 1
        assert "TLS: SSL certificate problem: self-signed certificate" in r.stderr
        r = kiln(*base, "--ca-file", cert)
        assert r.returncode == 0, r.stderr
        assert "OFF" not in r.stderr
        (tmp_path / "s" / "foo-1.0.tar.gz").unlink()
        r = kiln(*base[:2], tmp_path / "c2", *base[3:], "--insecure")
        assert r.returncode == 0, r.stderr
        assert "TLS certificate checks are OFF (--insecure)" in r.stderr
    finally:
        s.close()


def test_concurrent_fetches_share_one_download(kiln_bin, server, files, tmp_path):
    spec = write_spec(tmp_path / "s", f"{server.base}/paced/big.bin")
    procs = [subprocess.Popen([str(kiln_bin), "fetch", "--cache", tmp_path / "cache", *FAST,
                               "-C", tmp_path / f"out{i}", spec], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for i in range(2)]
    outs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    want = sha(files / "big.bin")
    for i in range(2):
        assert sha(tmp_path / f"out{i}" / "big.bin") == want
    assert [o.name for o in objects(tmp_path / "cache")] == [want]
    # The per-URL lock: the second process waited and used the first one's download.
    assert len(server.requests("/paced/big.bin")) == 1
    assert sorted("downloaded" in o[0] for o in outs) == [False, True]


def test_cache_stats_and_gc(kiln, fetch, server, files, tmp_path):
    for n in ("foo-1.0.tar.gz", "big.bin"):
        assert fetch("-C", tmp_path / "s", write_spec(tmp_path / "s", f"{server.base}/files/{n}")
                     ).returncode == 0
    cache = fetch.cache
    r = kiln("cache", "--cache", cache, "--stats")
    assert r.returncode == 0
    total = 300_000 + 2 * 1024 * 1024
    assert f"objects: 2 ({total} bytes)" in r.stdout and "urls: 2" in r.stdout
    # A leftover of a crashed download, older than a day, is removed by --gc.
    left = cache / "tmp" / "dl-crashed"
    left.write_bytes(b"x" * 10)
    os.utime(left, (1, 1))
    # Make big.bin the least recently used: the cap evicts it first.
    big = cache / "sha256" / sha(files / "big.bin")[:2] / sha(files / "big.bin")
    os.utime(big, (1000, 1000))
    r = kiln("cache", "--cache", cache, "--gc", "--max-size", "1M")
    assert r.returncode == 0, r.stderr
    assert "removed: 1 objects (2097152 bytes)" in r.stdout
    assert "2 index entries" in r.stdout  # its URL entry and its sha512 alias
    assert "1 temporary files" in r.stdout
    assert "objects: 1 (300000 bytes)" in r.stdout and "urls: 1" in r.stdout
    assert not big.exists() and not left.exists()
    # A corrupt object is found by --verify and removed.
    [obj] = objects(cache)
    obj.chmod(0o644)
    obj.write_bytes(b"bit rot")
    r = kiln("cache", "--cache", cache, "--gc", "--verify")
    assert r.returncode == 0 and "1 corrupt objects" in r.stdout
    assert objects(cache) == []


def test_cache_cap_while_fetching(fetch, server, files, tmp_path):
    d = tmp_path / "s"
    fetch("-C", d, write_spec(d, f"{server.base}/files/big.bin"))
    r = fetch("-C", d, write_spec(d, f"{server.base}/files/foo-1.0.tar.gz", name="foo2"),
              "--cache-max", "1M")
    assert r.returncode == 0, r.stderr
    assert [o.name for o in objects(fetch.cache)] == [sha(files / "foo-1.0.tar.gz")]


def test_usage(kiln):
    assert kiln("fetch").returncode == 2
    r = kiln("fetch", "--url", "http://x/a")
    assert r.returncode == 2 and "-o FILE" in r.stderr
    assert kiln("cache", "--verify").returncode == 2
    r = kiln("fetch", "--max-size", "12Q", "x.spec")
    assert r.returncode == 1 and "invalid size '12Q'" in r.stderr
