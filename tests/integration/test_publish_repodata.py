"""kiln's repository metadata (scheduler/repodata.c, `kiln repo regenerate --dir`) against
the real tools: createrepo_c's metadata for the same directory (parsed XML compared, not
bytes), dnf reading it, gpg checking repomd.xml.asc; same packages, same bytes."""
import gzip
import hashlib
import os
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

NS = {"c": "http://linux.duke.edu/metadata/common", "rpm": "http://linux.duke.edu/metadata/rpm",
      "f": "http://linux.duke.edu/metadata/filelists", "o": "http://linux.duke.edu/metadata/other",
      "r": "http://linux.duke.edu/metadata/repo"}


def run(*cmd, **kw):
    kw.setdefault("check", True)
    return subprocess.run([str(c) for c in cmd], capture_output=True, text=True, **kw)


@pytest.fixture(scope="module")
def pkgdir(rpm_packages, tmp_path_factory):
    """Every package rpmbuild made for the tests (binary and source, several payloads), one
    directory per label so names do not clash, mtimes set to something not a build time."""
    d = tmp_path_factory.mktemp("repo") / "src"
    for label, p in rpm_packages.items():
        sub = d / "Packages" / (label.split(":")[1] if ":" in label else "misc")
        sub.mkdir(parents=True, exist_ok=True)
        shutil.copy(p, sub / p.name)
    os.utime(d / "Packages" / "misc" / "hello-1.0-1.x86_64.rpm", (1800000000, 1800000000))
    return d


def repomd(d):
    root = ET.parse(d / "repodata" / "repomd.xml").getroot()
    out = {}
    for data in root.findall("r:data", NS):
        out[data.get("type")] = {
            "checksum": data.find("r:checksum", NS).text,
            "open": data.find("r:open-checksum", NS).text,
            "href": data.find("r:location", NS).get("href"),
            "size": int(data.find("r:size", NS).text),
            "open_size": int(data.find("r:open-size", NS).text),
            "timestamp": int(data.find("r:timestamp", NS).text)}
    return root.find("r:revision", NS).text, out


def load(d, kind):
    _, md = repomd(d)
    raw = (d / md[kind]["href"]).read_bytes()
    if md[kind]["href"].endswith(".zst"):
        xml = subprocess.run(["zstd", "-dc"], input=raw, capture_output=True,
                             check=True).stdout
    else:
        xml = gzip.decompress(raw)
    return raw, xml, ET.fromstring(xml)


def deps(fmt, kind):
    e = fmt.find(f"rpm:{kind}", NS)
    if e is None:
        return []
    return sorted(tuple(sorted(x.attrib.items())) for x in e.findall("rpm:entry", NS))


def files(parent, ns):
    return [(x.get("type", "file"), x.text) for x in parent.findall(f"{ns}:file", NS)]


def primary_map(root):
    out = {}
    for p in root.findall("c:package", NS):
        fmt = p.find("c:format", NS)
        pid = p.find("c:checksum", NS).text
        out[pid] = {
            "name": p.find("c:name", NS).text, "arch": p.find("c:arch", NS).text,
            "version": dict(p.find("c:version", NS).attrib),
            "location": p.find("c:location", NS).get("href"),
            "size": dict(p.find("c:size", NS).attrib),
            "build": p.find("c:time", NS).get("build"),
            "text": [p.find(f"c:{t}", NS).text or "" for t in
                     ("summary", "description", "packager", "url")],
            "format": [fmt.find(f"rpm:{t}", NS).text or "" for t in
                       ("license", "vendor", "group", "buildhost", "sourcerpm")],
            "range": dict(fmt.find("rpm:header-range", NS).attrib),
            "deps": {k: deps(fmt, k) for k in ("provides", "requires", "conflicts", "obsoletes",
                                                "suggests", "enhances", "recommends",
                                                "supplements")},
            "files": files(fmt, "c")}
    return out


def sub_map(root, ns, what):
    out = {}
    for p in root.findall(f"{ns}:package", NS):
        if what == "files":
            items = files(p, ns)
        else:
            items = [(c.get("author"), c.get("date"), c.text)
                     for c in p.findall(f"{ns}:changelog", NS)]
        out[p.get("pkgid")] = (p.get("name"), p.get("arch"),
                               dict(p.find(f"{ns}:version", NS).attrib), items)
    return out


def check_repomd(d):
    """Every checksum, size and open size of repomd.xml holds."""
    _, md = repomd(d)
    for kind, m in md.items():
        raw, xml, _ = load(d, kind)
        assert hashlib.sha256(raw).hexdigest() == m["checksum"], kind
        assert len(raw) == m["size"], kind
        assert hashlib.sha256(xml).hexdigest() == m["open"], kind
        assert len(xml) == m["open_size"], kind
        assert Path(m["href"]).name.startswith(m["checksum"] + "-" + kind)


def test_metadata_matches_createrepo_c(kiln, pkgdir, tmp_path):
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    shutil.copytree(pkgdir, ours)
    shutil.copytree(pkgdir, theirs)
    r = kiln("repo", "regenerate", "--dir", ours, "--workers", "2")
    assert r.returncode == 0, r.stderr
    npk = len(list(pkgdir.rglob("*.rpm")))
    assert f": {npk} packages" in r.stdout
    run("createrepo_c", "-q", "--no-database", "--workers", "2", theirs)
    check_repomd(ours)
    a, b = (primary_map(load(d, "primary")[2]) for d in (ours, theirs))
    assert len(a) == npk and sorted(a) == sorted(b)
    for pid in a:
        assert a[pid] == b[pid], a[pid]["location"]
    for kind, ns, what in (("filelists", "f", "files"), ("other", "o", "changelog")):
        a, b = (sub_map(load(d, kind)[2], ns, what) for d in (ours, theirs))
        assert a == b, kind
    # Something of each kind was compared.
    prim = primary_map(load(ours, "primary")[2])
    assert any(p["arch"] == "src" for p in prim.values())
    assert any(p["deps"]["requires"] for p in prim.values())
    assert any(p["files"] for p in prim.values())
    assert any(x[3] for x in sub_map(load(ours, "other")[2], "o", "changelog").values())


def test_same_packages_same_bytes(kiln, pkgdir, tmp_path):
    """Two directories, other paths and mtimes, indexed at different times: identical
    repodata; the revision is the newest build time."""
    a, b = tmp_path / "a", tmp_path / "deep" / "b"
    shutil.copytree(pkgdir, a)
    shutil.copytree(pkgdir, b)
    for p in b.rglob("*.rpm"):
        os.utime(p, (1900000000, 1900000000))
    for d in (a, b):
        r = kiln("repo", "regenerate", "--dir", d, "--workers", "1" if d == a else "3")
        assert r.returncode == 0, r.stderr
    # (dot files are kiln's own: the description cache, keyed by inode, is not metadata)
    names = sorted(p.name for p in (a / "repodata").iterdir() if not p.name.startswith("."))
    assert names == sorted(p.name for p in (b / "repodata").iterdir()
                           if not p.name.startswith("."))
    for n in names:
        assert (a / "repodata" / n).read_bytes() == (b / "repodata" / n).read_bytes(), n
    rev, md = repomd(a)
    newest = max(int(run("rpm", "-qp", "--qf", "%{BUILDTIME}", p).stdout)
                 for p in a.rglob("*.rpm"))
    assert int(rev) == newest and all(m["timestamp"] == newest for m in md.values())
    # Again over the same directory: the same generation, nothing rewritten.
    target = os.readlink(a / "repodata")
    assert kiln("repo", "regenerate", "--dir", a).returncode == 0
    assert os.readlink(a / "repodata") == target


def test_unchanged_packages_come_from_the_description_cache(kiln, pkgdir, tmp_path):
    """A write takes the descriptions of files unchanged since the previous generation from
    that generation's cache; the bytes are those of a fresh index of the same files, also
    after a package is removed and another is replaced by different bytes at its path."""
    d, fresh = tmp_path / "cached", tmp_path / "fresh"
    shutil.copytree(pkgdir, d)
    debug = {"KILN_LOG_LEVEL": "debug"}
    rpms = sorted(d.rglob("*.rpm"))
    assert len(rpms) >= 3

    def regenerate(where):
        r = kiln("repo", "regenerate", "--dir", where, env=debug)
        assert r.returncode == 0, r.stderr
        m = re.search(r"(\d+) packages, (\d+) from the description cache", r.stderr)
        assert m, r.stderr
        return int(m.group(1)), int(m.group(2))

    def same_as_fresh():
        if fresh.exists():
            shutil.rmtree(fresh)
        shutil.copytree(d, fresh, ignore=shutil.ignore_patterns("repodata", ".repodata-gens"))
        regenerate(fresh)
        for kind in ("primary", "filelists", "other"):
            assert load(d, kind)[1] == load(fresh, kind)[1], kind

    assert regenerate(d) == (len(rpms), 0)
    assert regenerate(d) == (len(rpms), len(rpms))
    rpms[0].unlink()
    # Other bytes of the same size and mtime in the same file (a byte of the signature
    # header's reserved space, which no digest covers): only its ctime says it changed.
    st = rpms[1].stat()
    raw = bytearray(rpms[1].read_bytes())
    il = int.from_bytes(raw[104:108], "big")
    for i in range(il):
        tag, _, off, _ = (int.from_bytes(raw[112 + 16 * i + 4 * k:116 + 16 * i + 4 * k], "big")
                          for k in range(4))
        if tag == 1008:  # RESERVEDSPACE
            raw[112 + 16 * il + off] ^= 1
            break
    else:
        pytest.fail("no reserved space")
    with open(rpms[1], "r+b") as f:
        f.write(raw)
    os.utime(rpms[1], ns=(st.st_atime_ns, st.st_mtime_ns))
    assert rpms[1].stat().st_size == st.st_size and rpms[1].stat().st_ino == st.st_ino
    assert regenerate(d) == (len(rpms) - 1, len(rpms) - 2)
    same_as_fresh()
    check_repomd(d)


def test_zstd_generations_and_dnf(kiln, pkgdir, tmp_path):
    d = tmp_path / "z"
    shutil.copytree(pkgdir / "Packages" / "misc", d / "Packages")
    assert kiln("repo", "regenerate", "--dir", d, "--zstd", "--keep", "2").returncode == 0
    check_repomd(d)
    assert all(m["href"].endswith(".xml.zst") for m in repomd(d)[1].values())
    gens = []
    for extra in ("gz", "xz"):
        gens.append(os.readlink(d / "repodata"))
        for p in (pkgdir / "Packages" / extra).glob("demo-*.noarch.rpm"):
            shutil.copy(p, d / "Packages" / f"{extra}-{p.name}")
        assert kiln("repo", "regenerate", "--dir", d, "--zstd", "--keep", "2").returncode == 0
    # keep 2: the current generation and the one before; the first is gone.
    kept = sorted(p.name for p in (d / ".repodata-gens").iterdir())
    assert len(kept) == 2 and Path(gens[1]).name in kept and Path(gens[0]).name not in kept
    names = {p.name for p in d.rglob("*.rpm")}
    out = run("dnf", "-q", f"--installroot={tmp_path}/root", f"--setopt=cachedir={tmp_path}/c",
              "--setopt=reposdir=/dev/null", "--setopt=gpgcheck=0", "--releasever=1",
              f"--repofrompath=k,file://{d}", "--repo=k", "repoquery", "--qf",
              "%{location}").stdout.split()
    assert {Path(x).name for x in out} == names and len(out) == len(names)


def test_signed_repomd_verifies_with_gpg(kiln, pkgdir, tmp_path):
    key = tmp_path / "keys"
    r = kiln("keygen", "--name", "repo", "--email", "repo@kiln.example", "--algo", "ed25519",
             "--out", key, "--time", "1600000000")
    assert r.returncode == 0, r.stderr
    secret = re.search(r"^secret key: (.*)$", r.stdout, re.M).group(1)
    public = re.search(r"^public key: (.*)$", r.stdout, re.M).group(1)
    d = tmp_path / "s"
    shutil.copytree(pkgdir / "Packages" / "misc", d / "Packages")
    assert kiln("repo", "regenerate", "--dir", d, "--key", secret).returncode == 0
    home = tmp_path / "gpg"
    home.mkdir(mode=0o700)
    env = dict(os.environ, GNUPGHOME=str(home))
    run("gpg", "--batch", "--import", public, env=env)
    asc = d / "repodata" / "repomd.xml.asc"
    run("gpg", "--batch", "--verify", asc, d / "repodata" / "repomd.xml", env=env)
    md = d / "repodata" / "repomd.xml"
    tampered = tmp_path / "repomd.xml"
    tampered.write_bytes(md.read_bytes().replace(b"<revision>", b"<revision>1"))
    assert run("gpg", "--batch", "--verify", asc, tampered, env=env,
               check=False).returncode != 0
    run("gpgconf", "--kill", "gpg-agent", env=env, check=False)


COMPS = """<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE comps PUBLIC "-//Red Hat, Inc.//DTD Comps info//EN" "comps.dtd">
<comps>
  <group>
    <id>kiln-test</id>
    <name>kiln test group</name>
    <description>what the test installs</description>
    <default>false</default>
    <uservisible>false</uservisible>
    <packagelist>
      <packagereq type="mandatory">hello</packagereq>
    </packagelist>
  </group>
</comps>
"""


def group_entries(d):
    """repomd.xml's group entries: {type: (checksum, open-checksum, file name, size)}."""
    root = ET.parse(d / "repodata" / "repomd.xml").getroot()
    out = {}
    for data in root.findall("r:data", NS):
        if data.get("type").startswith("group"):
            oc = data.find("r:open-checksum", NS)
            out[data.get("type")] = (data.find("r:checksum", NS).text,
                                     None if oc is None else oc.text,
                                     Path(data.find("r:location", NS).get("href")).name,
                                     int(data.find("r:size", NS).text))
    return out


def test_groups_as_createrepo_c_g(kiln, pkgdir, tmp_path):
    """--groups FILE: the comps file as createrepo_c -g lists it (group and group_gz, the
    same names, checksums and sizes), and dnf sees the group."""
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    for d in (ours, theirs):
        shutil.copytree(pkgdir / "Packages" / "misc", d / "Packages")
    comps = tmp_path / "comps-kiln.xml"
    comps.write_text(COMPS)
    r = kiln("repo", "regenerate", "--dir", ours, "--groups", comps)
    assert r.returncode == 0, r.stderr
    run("createrepo_c", "-q", "--no-database", "-g", comps, theirs)
    mine = group_entries(ours)
    assert sorted(mine) == ["group", "group_gz"]
    assert mine == group_entries(theirs)
    sha = hashlib.sha256(COMPS.encode()).hexdigest()
    assert mine["group"] == (sha, None, f"{sha}-comps-kiln.xml", len(COMPS))
    assert gzip.decompress((ours / "repodata" / mine["group_gz"][2]).read_bytes()) == \
        COMPS.encode()
    out = run("dnf", "-q", f"--installroot={tmp_path}/root", f"--setopt=cachedir={tmp_path}/c",
              "--setopt=reposdir=/dev/null", "--setopt=gpgcheck=0", "--releasever=1",
              f"--repofrompath=k,file://{ours}", "--repo=k", "group", "info",
              "kiln-test").stdout
    assert "Group: kiln test group" in out and re.search(r"Mandatory Packages:\s+hello", out)
    # zstd metadata: the compressed copy is group_zst.
    r = kiln("repo", "regenerate", "--dir", ours, "--zstd", "--groups", comps)
    assert r.returncode == 0, r.stderr
    z = group_entries(ours)
    assert sorted(z) == ["group", "group_zst"] and z["group_zst"][2].endswith(".xml.zst")
    assert z["group_zst"][1] == sha


def test_groups_bad_file(kiln, pkgdir, tmp_path):
    d = tmp_path / "d"
    shutil.copytree(pkgdir / "Packages" / "misc", d / "Packages")
    notcomps = tmp_path / "comps.xml"
    notcomps.write_text("<?xml version=\"1.0\"?>\n<metadata/>\n")
    bad_name = tmp_path / "comps file.xml"
    bad_name.write_text(COMPS)
    for path, msg in ((tmp_path / "absent.xml", "absent.xml"),
                      (notcomps, f"groups file '{notcomps}': no <comps> element"),
                      (bad_name, "the name may hold only letters, digits and ._+-")):
        r = kiln("repo", "regenerate", "--dir", d, "--groups", path)
        assert r.returncode != 0 and msg in r.stderr, r.stderr
        assert not (d / "repodata").exists()
