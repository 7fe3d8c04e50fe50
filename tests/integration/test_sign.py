"""kiln keygen / keys / sign / verify against the real tools: rpmbuild makes the packages,
rpmsign (gpg backend) and gpg make the foreign keys and signatures, rpmkeys, sq and gpg
judge kiln's keys and signatures (shared/ORACLES.md section 5)."""
import os
import re
import shutil
import struct
import subprocess
from pathlib import Path

import pytest

T_KEY = 1700000000  # kiln keys are made "at" 2023-11-14
T_SIG = 1704067200  # and sign "at" 2024-01-01

SPEC = """Name: signtest
Version: 1.0
Release: 1
Summary: kiln signing test package
License: MIT
BuildArch: noarch
%description
A package for signing tests.
%install
mkdir -p %{buildroot}/usr/share/signtest
echo hello > %{buildroot}/usr/share/signtest/hello
%files
/usr/share/signtest/hello
"""


def run(*args, env=None, check=True, input=None):
    full = dict(os.environ)
    full.update(env or {})
    r = subprocess.run([str(a) for a in args], capture_output=True, text=True, env=full,
                       input=input)
    if check and r.returncode != 0:
        raise AssertionError(f"{args[0]} failed ({r.returncode}):\n{r.stdout}\n{r.stderr}")
    return r


def rpm_parts(path):
    """Split a v4 package: (signature-header entries {tag: bytes}, main header bytes)."""
    f = Path(path).read_bytes()

    def header(off):
        assert f[off:off + 3] == b"\x8e\xad\xe8", f"no header magic at {off}"
        il, dl = struct.unpack(">II", f[off + 8:off + 16])
        ents = [struct.unpack(">IIiI", f[off + 16 + 16 * i:off + 32 + 16 * i])
                for i in range(il)]
        store = off + 16 + 16 * il
        return ents, store, store + dl

    ents, store, end = header(96)
    sigs = {tag: f[store + o:store + o + cnt] for tag, typ, o, cnt in ents if typ == 7}
    main = end + (8 - end % 8) % 8
    _, _, mend = header(main)
    return sigs, f[main:mend]


@pytest.fixture(scope="session")
def work(tmp_path_factory):
    return tmp_path_factory.mktemp("sign")


@pytest.fixture(scope="session")
def package(work):
    """A small noarch package built by Debian's rpmbuild."""
    top = work / "rpmbuild"
    (top / "SPECS").mkdir(parents=True)
    spec = top / "SPECS" / "signtest.spec"
    spec.write_text(SPEC)
    run("rpmbuild", "-bb", "--nodeps", "--quiet", "--define", f"_topdir {top}", spec)
    return top / "RPMS" / "noarch" / "signtest-1.0-1.noarch.rpm"


@pytest.fixture(scope="session")
def gnupg(work):
    """A GnuPG home with an RSA-2048 and an Ed25519 signing key; the agent is stopped at
    the end."""
    home = work / "gnupg"
    home.mkdir(mode=0o700)
    env = {"GNUPGHOME": str(home)}
    for algo in ("RSA\nKey-Length: 2048", "EDDSA\nKey-Curve: ed25519"):
        name = "rsa" if algo.startswith("RSA") else "ed"
        batch = (f"%no-protection\nKey-Type: {algo}\nKey-Usage: sign\nName-Real: gpg {name}\n"
                 f"Name-Email: {name}@gpg.example\nExpire-Date: 0\n%commit\n")
        run("gpg", "--batch", "--gen-key", env=env, input=batch)
    yield env
    run("gpgconf", "--kill", "gpg-agent", env=env, check=False)


@pytest.fixture(scope="session")
def kiln_keys(kiln_bin, work):
    """kiln-made keys: {"rsa": (secret, public), "ed25519": (...)}."""
    out = work / "kilnkeys"
    keys = {}
    for algo, name in (("rsa3072", "rsa"), ("ed25519", "ed25519")):
        r = run(kiln_bin, "keygen", "--name", f"Kiln {name}", "--email",
                f"{name}@kiln.example", "--algo", algo, "--out", out, "--time", T_KEY)
        secret = Path(re.search(r"^secret key: (.*)$", r.stdout, re.M).group(1))
        public = Path(re.search(r"^public key: (.*)$", r.stdout, re.M).group(1))
        keys[name] = (secret, public)
    return keys


def kiln_sign_cmd(kiln_bin, key):
    """rpmsign's signing command, running kiln instead of gpg."""
    return (f"{kiln_bin} {kiln_bin} sign --detached --key {key} --time {T_SIG} "
            "-o %{__signature_filename} %{__plaintext_filename}")


def test_keygen_files_and_modes(kiln_keys):
    for secret, public in kiln_keys.values():
        assert secret.stat().st_mode & 0o777 == 0o600
        assert public.stat().st_mode & 0o777 == 0o644
        assert secret.read_text().startswith("-----BEGIN PGP PRIVATE KEY BLOCK-----\n\n")
        assert public.read_text().startswith("-----BEGIN PGP PUBLIC KEY BLOCK-----\n\n")
        assert re.search(r"^=[A-Za-z0-9+/]{4}$", public.read_text(), re.M)


@pytest.mark.parametrize("name", ["rsa", "ed25519"])
def test_real_tools_accept_kiln_keys(kiln_keys, work, name):
    secret, public = kiln_keys[name]
    # rpmkeys (rpm 4.18) into a scratch rpmdb: gpg-pubkey-SHORTID-CREATED
    db = work / f"rpmdb-accept-{name}"
    db.mkdir()
    run("rpmkeys", "--dbpath", db, "--import", public)
    q = run("rpm", "--dbpath", db, "-q", "gpg-pubkey", "--qf", "%{VERSION}-%{RELEASE} %{SUMMARY}")
    assert q.stdout.endswith(f"-{T_KEY:08x} Kiln {name} <{name}@kiln.example> public key")
    # sq: a valid certificate whose primary key can sign
    inspect = run("sq", "inspect", public).stdout
    assert "Key flags: certification, signing" in inspect
    assert "Invalid" not in inspect and "not alive" not in inspect
    # gpg: the public key and the secret key import
    home = work / f"gpg-accept-{name}"
    home.mkdir(mode=0o700)
    env = {"GNUPGHOME": str(home)}
    try:
        assert "imported: 1" in run("gpg", "--batch", "--import", public, env=env).stderr
        assert "secret keys imported: 1" in run("gpg", "--batch", "--import", secret,
                                                env=env).stderr
    finally:
        run("gpgconf", "--kill", "gpg-agent", env=env, check=False)


@pytest.mark.parametrize("name", ["rsa", "ed25519"])
def test_sq_and_gpg_verify_kiln_header_signatures(kiln, kiln_keys, package, work, name):
    """The header-only signature: sign the main header bytes of an rpmbuild package."""
    secret, public = kiln_keys[name]
    _, hdr = rpm_parts(package)
    (work / f"hdr-{name}").write_bytes(hdr)
    sig = work / f"hdr-{name}.sig"
    r = kiln("sign", "--detached", "--key", secret, "-o", sig, work / f"hdr-{name}",
             env={"SOURCE_DATE_EPOCH": str(T_SIG)})
    assert r.returncode == 0, r.stderr
    ok = run("sq", "verify", "--detached", sig, "--signer-cert", public, work / f"hdr-{name}")
    assert "1 good signature" in ok.stderr
    home = work / f"gpg-verify-{name}"
    home.mkdir(mode=0o700)
    env = {"GNUPGHOME": str(home)}
    try:
        run("gpg", "--batch", "--import", public, env=env)
        assert "Good signature" in run("gpg", "--verify", sig, work / f"hdr-{name}",
                                       env=env).stderr
    finally:
        run("gpgconf", "--kill", "gpg-agent", env=env, check=False)
    # one flipped header byte: sq refuses
    bad = bytearray(hdr)
    bad[len(bad) // 2] ^= 1
    (work / f"hdr-{name}.bad").write_bytes(bytes(bad))
    r = run("sq", "verify", "--detached", sig, "--signer-cert", public, work / f"hdr-{name}.bad",
            check=False)
    assert r.returncode != 0


def flip(src, dst, offset):
    data = bytearray(Path(src).read_bytes())
    data[offset] ^= 1
    Path(dst).write_bytes(bytes(data))


def rpm_db(work, name, *keys):
    db = work / f"rpmdb-{name}"
    db.mkdir()
    for k in keys:
        run("rpmkeys", "--dbpath", db, "--import", k)
    return db


@pytest.mark.parametrize("name", ["rsa", "ed25519"])
def test_rpmkeys_accepts_kiln_signed_packages(kiln, kiln_bin, kiln_keys, package, work, name):
    secret, public = kiln_keys[name]
    pkg = work / f"kiln-signed-{name}.rpm"
    shutil.copy(package, pkg)
    r = kiln("sign", "--key", secret, pkg, env={"SOURCE_DATE_EPOCH": str(T_SIG)})
    assert r.returncode == 0 and r.stderr == "", r.stderr
    assert pkg.stat().st_size == package.stat().st_size
    empty = rpm_db(work, f"nokey-{name}")
    r = run("rpmkeys", "--dbpath", empty, "--checksig", "-v", pkg, check=False)
    assert r.returncode != 0 and "NOKEY" in r.stdout
    db = rpm_db(work, f"signed-{name}", public)
    r = run("rpmkeys", "--dbpath", db, "--checksig", "-v", pkg)
    lines = r.stdout.splitlines()
    algo = "RSA" if name == "rsa" else "EdDSA"
    assert lines[1].startswith(f"    Header V4 {algo}/SHA256 Signature, key ID ")
    assert len(lines) == 6 and all(line.endswith(": OK") for line in lines[1:]), r.stdout
    # kiln verify prints exactly what rpmkeys prints
    ring = work / f"ring-signed-{name}"
    assert kiln("keys", "--keyring", ring, "--import", public).returncode == 0
    v = kiln("verify", "--keyring", ring, "--signed", pkg)
    assert v.returncode == 0 and v.stdout == r.stdout
    # the signature rpmsign lays out with kiln as its signer is the same file, byte for byte
    via = work / f"rpmsign-kiln-{name}.rpm"
    shutil.copy(package, via)
    run("rpmsign", "--addsign", "--define", "_gpg_name unused", "--define",
        f"__gpg_sign_cmd {kiln_sign_cmd(kiln_bin, secret)}", via)
    assert via.read_bytes() == pkg.read_bytes()


@pytest.mark.parametrize("part", ["header", "payload", "signature"])
def test_tampering_is_bad_for_kiln_and_rpm(kiln, kiln_keys, package, work, part):
    secret, public = kiln_keys["ed25519"]
    pkg = work / f"tamper-{part}.rpm"
    shutil.copy(package, pkg)
    assert kiln("sign", "--key", secret, "--time", T_SIG, pkg).returncode == 0
    sigs, hdr = rpm_parts(pkg)
    data = pkg.read_bytes()
    if part == "header":  # a letter of the Summary, inside the header's data store
        at = data.index(b"kiln signing test package")
    elif part == "payload":
        at = len(data) - 30
    else:
        at = data.index(sigs[267]) + len(sigs[267]) - 5
    bad = work / f"tampered-{part}.rpm"
    flip(pkg, bad, at)
    db = rpm_db(work, f"tamper-{part}", public)
    r = run("rpmkeys", "--dbpath", db, "--checksig", "-v", bad, check=False)
    assert r.returncode != 0 and "BAD" in r.stdout, r.stdout
    ring = work / f"ring-tamper-{part}"
    kiln("keys", "--keyring", ring, "--import", public)
    v = kiln("verify", "--keyring", ring, bad)
    assert v.returncode == 1 and ": BAD" in v.stdout, v.stdout + v.stderr
    sig_line = v.stdout.splitlines()[1]
    assert sig_line.endswith(": OK") == (part == "payload"), v.stdout
    assert v.stdout == r.stdout
    if part != "payload":
        assert "warning: " in v.stderr and "Signature, key ID" in v.stderr


def test_reproducible_signing_and_delete(kiln, kiln_keys, package, work):
    secret = kiln_keys["rsa"][0]
    copies = []
    for i in range(2):
        pkg = work / f"repro-{i}.rpm"
        shutil.copy(package, pkg)
        r = kiln("sign", "--key", secret, pkg, env={"SOURCE_DATE_EPOCH": str(T_SIG)})
        assert r.returncode == 0, r.stderr
        copies.append(pkg.read_bytes())
    assert copies[0] == copies[1] and copies[0] != package.read_bytes()
    # re-signing with the same time leaves the file alone
    before = (work / "repro-0.rpm").stat().st_mtime_ns
    assert kiln("sign", "--key", secret, "--time", T_SIG, work / "repro-0.rpm").returncode == 0
    assert (work / "repro-0.rpm").stat().st_mtime_ns == before
    assert kiln("sign", "--delete", work / "repro-0.rpm").returncode == 0
    assert (work / "repro-0.rpm").read_bytes() == package.read_bytes()


def test_rpmv6_adds_openpgp_that_rpm_418_tolerates(kiln, kiln_keys, package, work):
    secret, public = kiln_keys["ed25519"]
    pkg = work / "both.rpm"
    shutil.copy(package, pkg)
    assert kiln("sign", "--key", secret, "--time", T_SIG, "--rpmv6", pkg).returncode == 0
    db = rpm_db(work, "rpmv6", public)
    r = run("rpmkeys", "--dbpath", db, "--checksig", "-v", pkg)
    assert all(line.endswith(": OK") for line in r.stdout.splitlines()[1:])
    ring = work / "ring-rpmv6"
    kiln("keys", "--keyring", ring, "--import", public)
    v = kiln("verify", "--keyring", ring, pkg).stdout.splitlines()
    assert v[1].startswith("    Header OpenPGP V4 EdDSA/SHA256 Signature") and v[1].endswith(": OK")
    assert v[2].startswith("    Header V4 EdDSA/SHA256 Signature") and v[2].endswith(": OK")


def test_sign_many_packages_reports_failures(kiln, kiln_keys, package, work):
    pkgs = []
    for i in range(5):
        pkgs.append(work / f"many-{i}.rpm")
        shutil.copy(package, pkgs[-1])
    (work / "not-a-package.rpm").write_text("hello\n")
    r = kiln("sign", "-j", "3", "--key", kiln_keys["ed25519"][0], "--time", T_SIG, *pkgs[:3],
             work / "not-a-package.rpm", *pkgs[3:])
    assert r.returncode == 1 and "not-a-package.rpm" in r.stderr
    ring = work / "ring-many"
    kiln("keys", "--keyring", ring, "--import", kiln_keys["ed25519"][1])
    v = kiln("verify", "--keyring", ring, "--signed", *pkgs)
    assert v.returncode == 0, v.stdout


def test_kiln_verifies_rpmsign_gpg_signatures(kiln, gnupg, package, work):
    """The reverse: gpg-made keys, rpmsign-made signatures, kiln verifies them."""
    ring = work / "ring-gpg"
    pub = work / "gpg-keys.asc"
    pub.write_text(run("gpg", "--export", "--armor", env=gnupg).stdout)
    r = kiln("keys", "--keyring", ring, "--import", pub)
    assert r.returncode == 0, r.stderr
    listed = kiln("keys", "--keyring", ring, "--list").stdout
    assert re.search(r"^[0-9a-f]{8}-[0-9a-f]{8}: gpg rsa <rsa@gpg.example> public key$", listed,
                     re.M)
    for name, algo in (("rsa", "RSA/SHA512"), ("ed", "EdDSA/SHA256")):
        pkg = work / f"rpmsign-gpg-{name}.rpm"
        shutil.copy(package, pkg)
        run("rpmsign", "--addsign", "--define", "__gpg /usr/bin/gpg", "--define",
            f"_gpg_name {name}@gpg.example", pkg, env=gnupg)
        sigs, hdr = rpm_parts(pkg)
        tag = 268 if name == "rsa" else 267
        (work / f"{name}.hdr").write_bytes(hdr)
        (work / f"{name}.sig").write_bytes(sigs[tag])
        r = kiln("verify", "--keyring", ring, "--signature", work / f"{name}.sig",
                 work / f"{name}.hdr")
        assert r.returncode == 0, r.stdout + r.stderr
        assert f"V4 {algo} Signature, key ID " in r.stdout and r.stdout.endswith(": OK\n")
        # header tampered: BAD, exit 1
        bad = bytearray(hdr)
        bad[100] ^= 1
        (work / f"{name}.hdr.bad").write_bytes(bytes(bad))
        r = kiln("verify", "--keyring", ring, "--signature", work / f"{name}.sig",
                 work / f"{name}.hdr.bad")
        assert r.returncode == 1 and r.stdout.endswith(": BAD\n") and "digest" in r.stderr
        # without the key: NOKEY, exit 1
        r = kiln("verify", "--keyring", work / "empty-ring", "--signature",
                 work / f"{name}.sig", work / f"{name}.hdr")
        assert r.returncode == 1 and r.stdout.endswith(": NOKEY\n")


@pytest.mark.parametrize("name", ["rsa", "ed"])
@pytest.mark.parametrize("v3", [False, True], ids=["header", "rpmv3"])
def test_kiln_verify_prints_what_rpmkeys_prints(kiln, gnupg, package, work, name, v3):
    """Packages signed by rpmsign with gpg keys (also with --rpmv3's header+payload
    signatures): kiln verify's report equals rpmkeys --checksig -v's, line for line."""
    tag = f"{name}-{'v3' if v3 else 'hdr'}"
    pub = work / f"gpg-{tag}.asc"
    pub.write_text(run("gpg", "--export", "--armor", f"{name}@gpg.example", env=gnupg).stdout)
    pkg = work / f"rpmsign-{tag}.rpm"
    shutil.copy(package, pkg)
    run("rpmsign", "--addsign", *(["--rpmv3"] if v3 else []), "--define", "__gpg /usr/bin/gpg",
        "--define", f"_gpg_name {name}@gpg.example", pkg, env=gnupg)
    db = rpm_db(work, f"gpg-{tag}", pub)
    want = run("rpmkeys", "--dbpath", db, "--checksig", "-v", pkg)
    assert len(want.stdout.splitlines()) == (7 if v3 else 6)
    ring = work / f"ring-gpg-{tag}"
    assert kiln("keys", "--keyring", ring, "--import", pub).returncode == 0
    got = kiln("verify", "--keyring", ring, pkg)
    assert got.returncode == 0, got.stdout + got.stderr
    assert got.stdout == want.stdout
    # the payload changed: both fail, and the v3 signature with it
    bad = work / f"rpmsign-{tag}-bad.rpm"
    flip(pkg, bad, pkg.stat().st_size - 30)
    want = run("rpmkeys", "--dbpath", db, "--checksig", "-v", bad, check=False)
    got = kiln("verify", "--keyring", ring, bad)
    assert want.returncode != 0 and got.returncode == 1
    assert got.stdout == want.stdout


def test_gpg_secret_keys_sign_in_kiln(kiln, gnupg, work):
    data = work / "data.txt"
    data.write_text("payload\n")
    for name in ("rsa", "ed"):
        sec = work / f"gpg-{name}.sec"
        sec.write_bytes(subprocess.run(["gpg", "--export-secret-keys", f"{name}@gpg.example"],
                                       capture_output=True, env={**os.environ, **gnupg},
                                       check=True).stdout)
        sec.chmod(0o600)
        sig = work / f"data.{name}.asc"
        r = kiln("sign", "--detached", "--armor", "--key", sec, "-o", sig, data)
        assert r.returncode == 0, r.stderr
        assert sig.read_text().startswith("-----BEGIN PGP SIGNATURE-----")
        assert "Good signature" in run("gpg", "--verify", sig, data, env=gnupg).stderr


def test_same_source_date_epoch_same_signature(kiln, kiln_keys, work):
    data = work / "repro.txt"
    data.write_text("reproducible\n")
    outs = []
    for i in range(2):
        out = work / f"repro.{i}.sig"
        r = kiln("sign", "--detached", "--key", kiln_keys["rsa"][0], "-o", out, data,
                 env={"SOURCE_DATE_EPOCH": str(T_SIG)})
        assert r.returncode == 0, r.stderr
        outs.append(out.read_bytes())
    assert outs[0] == outs[1]
    r = kiln("sign", "--detached", "--key", kiln_keys["rsa"][0], "-o", work / "repro.2.sig",
             data, env={"SOURCE_DATE_EPOCH": str(T_SIG + 1)})
    assert (work / "repro.2.sig").read_bytes() != outs[0]


def test_keys_import_list_delete(kiln, kiln_keys, work):
    ring = work / "ring-manage"
    assert kiln("keys", "--keyring", ring, "--list").stdout == ""
    pubs = [str(p) for _, p in kiln_keys.values()]
    assert kiln("keys", "--keyring", ring, "--import", *pubs).returncode == 0
    listed = kiln("keys", "--keyring", ring, "--list").stdout.splitlines()
    assert len(listed) == 2
    assert all(re.fullmatch(rf"[0-9a-f]{{8}}-{T_KEY:08x}: Kiln \S+ <\S+> public key", line)
               for line in listed)
    short = listed[0].split("-")[0]
    assert kiln("keys", "--keyring", ring, "--delete", short).returncode == 0
    assert len(kiln("keys", "--keyring", ring, "--list").stdout.splitlines()) == 1
    r = kiln("keys", "--keyring", ring, "--delete", short)
    assert r.returncode == 1 and f"key not found: {short}" in r.stderr
    r = kiln("keys", "--keyring", ring, "--import", work / "nonexistent.asc")
    assert r.returncode == 1 and "nonexistent.asc" in r.stderr
    # the default keyring lives under XDG_CONFIG_HOME
    cfg = work / "xdg"
    assert kiln("keys", "--import", pubs[0], env={"XDG_CONFIG_HOME": str(cfg)}).returncode == 0
    assert len(list((cfg / "kiln" / "keyring").glob("*.asc"))) == 1


def test_secret_key_permissions_and_usage_errors(kiln, kiln_keys, work):
    loose = work / "loose.key"
    shutil.copy(kiln_keys["ed25519"][0], loose)
    loose.chmod(0o644)
    (work / "f").write_text("x")
    r = kiln("sign", "--detached", "--key", loose, work / "f")
    assert r.returncode == 1 and "accessible by other users (mode 0644)" in r.stderr
    assert kiln("sign", "--detached", work / "f").returncode == 2
    assert kiln("keys", "--list", "--import").returncode == 2
    assert kiln("keygen", "--email", "x@y").returncode == 2
    assert kiln("keygen", "--name", "x", "--algo", "dsa1024").returncode == 2
    assert kiln("verify").returncode == 2
    assert kiln("verify", "--signature", work / "f", work / "f", work / "f").returncode == 2
    r = kiln("verify", "--keyring", work / "none", work / "f")
    assert r.returncode == 1 and "lead: truncated" in r.stderr
