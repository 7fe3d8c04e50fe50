"""A small signed RPM repository for resolution tests, made by kiln itself.

Each package of UNIVERSE becomes a subpackage of a generated spec (one spec per version of
a name, since a spec holds one package of each name); `kiln build -bb`, `kiln sign` and
`kiln repo regenerate --dir --key` turn them into a signed rpm-md repository with
filelists, which dnf and kiln's resolver both read.
"""
import subprocess
from pathlib import Path

# name, [epoch:]version, arch ("noarch" or "x86_64"), and its dependencies and files:
# P provides, R requires, C conflicts, O obsoletes, W recommends, S supplements, F files.
UNIVERSE = [
    ("libz", "1.2", "x86_64", {"P": ["libz.so.1()(64bit)"], "F": ["/usr/lib64/libz.so.1"]}),
    ("libz", "1.3", "x86_64", {"P": ["libz.so.1()(64bit)"], "F": ["/usr/lib64/libz.so.1.3"]}),
    ("zdev", "1.3", "x86_64", {"R": ["libz(x86-64) = 1.3"], "P": ["pkgconfig(zlib) = 1.3"],
                               "F": ["/usr/include/zlib.h"]}),
    ("shell", "5.2", "x86_64", {"F": ["/usr/bin/sh", "/usr/bin/bash"]}),
    ("coreutils-lite", "9.1", "x86_64", {"R": ["/usr/bin/sh"], "F": ["/usr/bin/ls"]}),
    ("binutils-lite", "2.39", "x86_64", {"F": ["/usr/bin/ld"]}),
    ("binutils-lite", "2.41", "x86_64", {"F": ["/usr/bin/ld"]}),
    ("gcc-lite", "12.2", "x86_64", {"R": ["binutils-lite >= 2.40", "libz.so.1()(64bit)",
                                          "/usr/bin/sh"], "F": ["/usr/bin/gcc"]}),
    ("make-lite", "4.3", "x86_64", {"R": ["(guile-lite if with-guile)"],
                                    "F": ["/usr/bin/make"]}),
    ("with-guile", "1", "noarch", {}),
    ("guile-lite", "3.0", "x86_64", {}),
    ("editor-a", "1", "noarch", {"P": ["editor"], "C": ["editor-b"]}),
    ("editor-b", "1", "noarch", {"P": ["editor"], "C": ["editor-a"]}),
    ("needs-editor", "1", "noarch", {"R": ["editor"]}),
    ("old-tool", "1.0", "noarch", {}),
    ("new-tool", "2.0", "noarch", {"O": ["old-tool < 2"], "P": ["old-tool = 2.0"]}),
    ("uses-old-tool", "1", "noarch", {"R": ["old-tool"]}),
    ("pyish", "1", "noarch", {"R": ["(python-a or python-b)"]}),
    ("python-a", "3.11", "noarch", {}),
    ("python-b", "3.12", "noarch", {}),
    ("richy", "1", "noarch", {"R": ["((libz >= 1.3 and zdev) or shell)"]}),
    ("richer", "1", "noarch", {"R": ["(shell with coreutils-lite)"]}),
    ("docfile", "1", "noarch", {"F": ["/usr/share/docfile/README"]}),
    ("wants-doc", "1", "noarch", {"R": ["/usr/share/docfile/README"]}),
    ("etcpkg", "1", "noarch", {"F": ["/etc/thing.conf"]}),
    ("wants-etc", "1", "noarch", {"R": ["/etc/thing.conf"]}),
    ("broken", "1", "noarch", {"R": ["nonexistent-cap"]}),
    ("needs-broken", "1", "noarch", {"R": ["broken"]}),
    ("conflicted", "1", "noarch", {"C": ["shell"]}),
    ("epochy", "1:0.9", "noarch", {}),
    ("epochy", "2.0", "noarch", {}),
    ("wants-epochy", "1", "noarch", {"R": ["epochy >= 1:0"]}),
    ("weakling", "1", "noarch", {"W": ["bonus"]}),
    ("bonus", "1", "noarch", {}),
    ("langpack-x", "1", "noarch", {"S": ["editor-a"]}),
    ("needs-new-bin", "1", "noarch", {"R": ["binutils-lite >= 2.41"]}),
    ("needs-old-bin", "1", "noarch", {"R": ["binutils-lite < 2.40"]}),
    ("both-bins", "1", "noarch", {"R": ["needs-new-bin", "needs-old-bin"]}),
    ("toolchain", "1", "noarch", {"R": ["gcc-lite", "make-lite", "coreutils-lite",
                                        "pkgconfig(zlib)"]}),
    ("conflicts-new", "1", "noarch", {"C": ["binutils-lite >= 2.41"]}),
    ("ifelse-dep", "1", "noarch", {"R": ["(python-a if with-guile else python-b)"]}),
    ("mta-a", "1", "noarch", {"P": ["mta"], "F": ["/usr/sbin/sendmail"]}),
    ("needs-mta", "1", "noarch", {"R": ["/usr/sbin/sendmail"]}),
]


def _spec(idx: int, pkgs) -> str:
    lines = [f"Name: univ{idx}", "Version: 1", "Release: 1", "Summary: resolution test",
             "License: MIT", "%description", "x", ""]
    install = ["%install"]
    files = []
    for name, evr, arch, deps in pkgs:
        epoch, _, ver = evr.rpartition(":")
        lines += [f"%package -n {name}", f"Summary: {name}", f"Version: {ver}"]
        if epoch:
            lines.append(f"Epoch: {epoch}")
        if arch == "noarch":
            lines.append("BuildArch: noarch")
        for kind, tag in (("P", "Provides"), ("R", "Requires"), ("C", "Conflicts"),
                          ("O", "Obsoletes"), ("W", "Recommends"), ("S", "Supplements")):
            for d in deps.get(kind, []):
                lines.append(f"{tag}: {d}")
        lines += [f"%description -n {name}", name, ""]
        files.append(f"%files -n {name}")
        for f in deps.get("F", []):
            install.append(f"mkdir -p %{{buildroot}}{str(Path(f).parent)}")
            install.append(f"echo {name} > %{{buildroot}}{f}")
            files.append(f)
        files.append("")
    return "\n".join(lines + install + [""] + files) + "\n"


def _groups(specs):
    """Each spec holds at most one package of a name."""
    out = []
    for pkg in UNIVERSE:
        for group in out:
            if all(p[0] != pkg[0] for p in group):
                group.append(pkg)
                break
        else:
            out.append([pkg])
    return out


def make_repo(kiln_bin: Path, work: Path) -> dict:
    """Build, sign and index UNIVERSE under work; returns {repo, key, secret}."""
    work.mkdir(parents=True, exist_ok=True)
    keys = work / "keys"
    run = lambda *a, **kw: subprocess.run([str(kiln_bin), *map(str, a)], check=True,
                                          capture_output=True, text=True, **kw)
    run("keygen", "--name", "roots test", "--algo", "ed25519", "--time", "1700000000",
        "-o", keys)
    secret = next(keys.glob("*.key"))
    public = next(keys.glob("*.asc"))
    repo = work / "repo"
    (repo / "Packages").mkdir(parents=True, exist_ok=True)
    env = {"SOURCE_DATE_EPOCH": "1700000000", "PATH": "/usr/bin:/bin"}
    for i, group in enumerate(_groups(UNIVERSE)):
        spec = work / f"univ{i}.spec"
        spec.write_text(_spec(i, group))
        top = work / f"top{i}"
        run("build", "-bb", "--define", f"_topdir {top}", spec, env=env)
        for rpm in (top / "RPMS").rglob("*.rpm"):
            if not rpm.name.startswith(f"univ{i}-"):
                rpm.rename(repo / "Packages" / rpm.name)
    pkgs = sorted((repo / "Packages").glob("*.rpm"))
    run("sign", "--key", secret, "--time", "1700000000", *pkgs)
    run("repo", "regenerate", "--dir", repo, "--key", secret, "--revision", "1700000000")
    return {"repo": repo, "key": public, "secret": secret}
