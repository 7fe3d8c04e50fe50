"""worker_autodeps_collect() (through tests/helpers/depstool) against Debian's rpmdeps 4.18.

Both get the same files on stdin and print provides, then requires, one dependency a line;
errors are compared by their message. The files: binaries from /usr/bin and shared libraries
from /usr/lib/x86_64-linux-gnu, the small ELF files of fuzz/corpus/elf (x86_64, i386, x32,
and big-endian powerpc64, powerpc, mips, aarch64_be), a library with a symbol version map
and a program using it compiled here, scripts with #! lines, and .pc files in a buildroot.

Legitimate differences, filtered out of rpmdeps' output and nowhere else:
  * rpmdeps also runs Debian's other file attribute generators: perl.req/perl.prov on Perl
    scripts and modules ("perl(Carp)", "perl >= 0:5.006") and python.attr on Python paths
    ("python(abi) = 3.11"). kiln implements the ELF, script and pkgconfig generators only.
  * config(), user() and group() dependencies are not rpmdeps' (rpmbuild adds them); the
    unit tests pin them to rpm 4.20.
  * A file that looks like ELF but cannot be read (the truncated corpus files) gets a kiln
    warning naming the file and the broken structure; rpm says nothing and, like kiln,
    generates no dependencies for it.
Everything else must be equal, line for line.
"""
import os
import re
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

import rpmfix

ROOT = rpmfix.ROOT
DEPSTOOL = rpmfix.HELPERS / "depstool"
RPMDEPS = Path("/usr/lib/rpm/rpmdeps")
CORPUS = ROOT / "fuzz" / "corpus" / "elf"
OTHER_GENERATORS = re.compile(r"^(perl(\(| )|python\(abi\))")

pytestmark = pytest.mark.skipif(not RPMDEPS.exists(), reason="Debian's rpm is not installed")


def run_rpmdeps(paths, kinds=("--provides", "--requires"), root=None, defines=()):
    env = dict(rpmfix.ENV)
    env.pop("RPM_BUILD_ROOT", None)
    if root:
        env["RPM_BUILD_ROOT"] = str(root)
    args = [str(RPMDEPS), *kinds]
    for d in defines:
        args += ["--define", d]
    r = subprocess.run(args, input="".join(f"{p}\n" for p in paths), capture_output=True,
                       text=True, errors="surrogateescape", env=env, timeout=600)
    lines = [l for l in r.stdout.splitlines() if not OTHER_GENERATORS.match(l)]
    errors = [l[len("error: "):] for l in r.stderr.splitlines() if l.startswith("error: ")]
    warnings = [l[len("warning: "):] for l in r.stderr.splitlines()
                if l.startswith("warning: ")]
    return lines, errors, warnings


def run_kiln(paths, kinds=("--provides", "--requires"), root=None, defines=()):
    args = [str(DEPSTOOL), "--confdir", str(ROOT / "configs"), *kinds]
    if root:
        args += ["--root", str(root)]
    for d in defines:
        args += ["--define", d]
    r = subprocess.run(args, input="".join(f"{p}\n" for p in paths), capture_output=True,
                       text=True, errors="surrogateescape", env=rpmfix.ENV,
                       timeout=600)
    # kiln names the file in front of rpm's message: "depstool: /usr/bin/x: MESSAGE"
    errors = [re.sub(r"^depstool: [^:]*: ", "", l) for l in r.stderr.splitlines()
              if l.startswith("depstool: ")]
    warnings = [re.sub(r"^warning: (/[^:]*: )?", "", l) for l in r.stderr.splitlines()
                if l.startswith("warning: ") and "no dependencies generated" not in l]
    assert (r.returncode != 0) == bool(errors), r.stderr
    return r.stdout.splitlines(), errors, warnings


def compare(paths, root=None, defines=(), kinds=("--provides", "--requires")):
    """Return rpmdeps' lines after checking kiln prints the same (and fails the same)."""
    want, want_err, want_warn = run_rpmdeps(paths, kinds, root, defines)
    got, got_err, got_warn = run_kiln(paths, kinds, root, defines)
    assert got_err == want_err, f"{paths}: errors differ"
    if not want_err:
        assert got == want, f"{paths}: dependencies differ"
        assert got_warn == want_warn, f"{paths}: warnings differ"
    return want


def sample(directory, pattern, count):
    files = sorted(p for p in Path(directory).glob(pattern)
                   if p.is_file() and not p.is_symlink() and os.access(p, os.R_OK))
    step = max(1, len(files) // count)
    return [str(p) for p in files[::step][:count]]


@pytest.fixture(scope="module")
def tool():
    if not DEPSTOOL.exists():
        pytest.fail(f"{DEPSTOOL} is missing: run make first")
    return DEPSTOOL


def test_system_binaries(tool):
    paths = sample("/usr/bin", "*", 150)
    lines = compare(paths)
    assert any(l.startswith("libc.so.6(GLIBC_") for l in lines)
    assert "rtld(GNU_HASH)" in lines


def test_system_libraries(tool):
    paths = sample("/usr/lib/x86_64-linux-gnu", "*.so*", 150)
    lines = compare(paths)
    assert any(l.endswith("()(64bit)") for l in lines)


def test_system_libraries_one_by_one(tool):
    """Per file too, so one library's deps cannot hide another's."""
    for p in sample("/usr/lib/x86_64-linux-gnu", "lib*.so.*", 12):
        compare([p])


@pytest.mark.parametrize("mode", [0o755, 0o644])
def test_corpus_files(tool, tmp_path, mode):
    """Every byte order and class, as executable files and not (rpm's requires rule)."""
    for src in sorted(CORPUS.iterdir()):
        dst = tmp_path / src.name
        shutil.copyfile(src, dst)
        dst.chmod(mode)
        compare([str(dst)])


def test_alpha_has_no_64bit_marker(tool, tmp_path):
    data = bytearray((CORPUS / "libfoo-x86_64.so").read_bytes())
    data[18:20] = (0x9026).to_bytes(2, "little")  # EM_ALPHA
    lib = tmp_path / "libfoo.so.1"
    lib.write_bytes(bytes(data))
    lib.chmod(0o755)
    lines = compare([str(lib)])
    assert "libfoo.so.1(FOO_2.0)" in lines


def have(cmd):
    return shutil.which(cmd) is not None


def compile_lib(tmp_path, flags=()):
    (tmp_path / "v.c").write_text(
        '#include <stdio.h>\n'
        'int v_old(void) { return 1; }\n'
        'int v_new(void) { return puts("v") + 2; }\n'
        'int v_more(void) { return 3; }\n'
        '__asm__(".symver v_old,v@V_1.0");\n'
        '__asm__(".symver v_new,v@@V_2.0");\n')
    (tmp_path / "v.map").write_text(
        "V_1.0 { global: v_old; local: *; };\n"
        "V_2.0 { global: v_new; } V_1.0;\n"
        "V_2.1 { global: v_more; } V_2.0;\n")
    (tmp_path / "use.c").write_text("int v(void); int v_more(void);\n"
                                    "int main(void) { return v() + v_more(); }\n")
    lib = tmp_path / "libv.so.2.0.1"
    subprocess.run(["gcc", *flags, "-shared", "-fPIC", "-o", str(lib), str(tmp_path / "v.c"),
                    "-Wl,-soname,libv.so.2", f"-Wl,--version-script,{tmp_path / 'v.map'}"],
                   check=True)
    exe = tmp_path / "use"
    subprocess.run(["gcc", *flags, "-o", str(exe), str(tmp_path / "use.c"), str(lib)],
                   check=True)
    return lib, exe


@pytest.mark.skipif(not have("gcc"), reason="gcc is not installed")
def test_fresh_versioned_library(tool, tmp_path):
    lib, exe = compile_lib(tmp_path)
    lines = compare([str(lib)], kinds=("--provides",))
    assert lines == ["libv.so.2()(64bit)", "libv.so.2(V_1.0)(64bit)", "libv.so.2(V_2.0)(64bit)",
                     "libv.so.2(V_2.1)(64bit)"]
    lines = compare([str(exe)], kinds=("--requires",))
    assert "libv.so.2(V_2.0)(64bit)" in lines and "libv.so.2(V_2.1)(64bit)" in lines
    compare([str(lib), str(exe)])


def gcc_m32_links(tmp_path):
    if not have("gcc"):
        return False
    (tmp_path / "t.c").write_text("int main(void) { return 0; }\n")
    r = subprocess.run(["gcc", "-m32", "-o", str(tmp_path / "t"), str(tmp_path / "t.c")],
                       capture_output=True)
    return r.returncode == 0


def test_fresh_versioned_library_32bit(tool, tmp_path):
    if not gcc_m32_links(tmp_path):
        pytest.skip("gcc -m32 cannot link here (no 32-bit C library)")
    lib, exe = compile_lib(tmp_path, ["-m32"])
    lines = compare([str(lib), str(exe)])
    assert "libv.so.2(V_2.1)" in lines


SCRIPTS = {
    "sh": "#!/bin/sh\necho\n",
    "perl": "#! /usr/bin/perl -w\nprint 1;\n",
    "env": "#!/usr/bin/env python3\nprint(1)\n",
    "envpath": "#!/usr/bin/env /usr/bin/foo bar\n",
    "xenv": "#!/x/bin/env /y\n",
    "relative": "#!bash\n",
    "tab-crlf": "#!\t/bin/bash\r\necho\r\n",
    "indented": "  #!/bin/sh\n",
    "binary": "#!/usr/local/bin/tool arg\n\x01\x02binary",
    "noeol": "#!/bin/sh",
    "slash": "#!/\n",
    "awk": "#!/usr/bin/awk -f\n",
    "badenv": "#!/usr/bin/env /usr/bin/foo -x\n",
    "versioned": "#!/usr/bin/env /usr/bin/foo >= 3\n",
    # the rest of an env line is read as dependencies, rich ones included
    "rich": "#!/usr/bin/env /x (c >= 1 or (d)) (e  =>  1)b (a if b else c) (a with b)\n",
    "rich-op": "#!/usr/bin/env /x (a,b)\n",
    "rich-empty": "#!/usr/bin/env /x ()\n",
    "rich-open": "#!/usr/bin/env /x (a or (b\n",
    "rich-chain": "#!/usr/bin/env /x (a or b and c)\n",
    "rich-unless": "#!/usr/bin/env /x (a unless b) c\n",
    "rich-with": "#!/usr/bin/env /x ((a and b) with c)\n",
    "rich-evr": "#!/usr/bin/env /x (a >= 1.0@x)\n",
    "rich-comma": "#!/usr/bin/env /usr/!/usr/bin,(R\xf3bin,R\xf3\n",
}


@pytest.mark.parametrize("name", sorted(SCRIPTS))
@pytest.mark.parametrize("mode", [0o755, 0o644])
def test_scripts(tool, tmp_path, name, mode):
    script = tmp_path / name
    script.write_bytes(SCRIPTS[name].encode("latin-1"))
    script.chmod(mode)
    compare([str(script)])


def test_scripts_together(tool, tmp_path):
    paths = []
    for name, text in SCRIPTS.items():
        if name in ("badenv", "versioned") or name.startswith("rich"):
            continue
        (tmp_path / name).write_text(text)
        (tmp_path / name).chmod(0o755)
        paths.append(str(tmp_path / name))
    lines = compare(paths)
    assert "/bin/sh" in lines and "/usr/bin/foo" in lines and "bar" in lines


HEAD = "Name: a\nVersion: 1\nDescription: d\n"
PC_CASES = [
    "prefix=/usr\nver=1.2\nName: Foo\nVersion: ${ver}\nDescription: x\n"
    "Requires: glib-2.0 >= 2.50, gobject-2.0 bar>=3 baz = 1.0\n"
    "Requires.private: zlib, libfoo-priv\nProvides: foo-compat = 9\n",
    HEAD + "Requires: foo >= 1.0@x\n",
    HEAD + "Requires: foo >= 1:2:3\n",
    HEAD + "Requires: foo = a:2\n",
    HEAD + "Requires: foo != 1.0, bar => 2, baz < 3,qux<=4 , z > 5\n",
    "Name: a\nDescription: d\nRequires: foo\n",
    "Version: 1\nDescription: d\nRequires: foo\n",
    "Name: a\nVersion: 1.0 beta\nDescription: d\n",
    HEAD + "Requires: foo >=\n",
    HEAD + "Requires: foo >= 1\nRequires.private: foo >= 2, bar\nRequires: baz\n",
    HEAD + "Requires: foo >= ${missing}1, \\\n  cont\n#Requires: x\nRequires.private: (paren\n",
    HEAD + "Requires: -neg\n",
    "Name: a\nVersion: 1-2-3\nDescription: d\n",
    "Name: a\nVersion: 1~rc^2+x_y%{z}\nDescription: d\n",
    HEAD + "Requires: w == 4, v =< 3, u => 1, t <> 2\n",
    HEAD + "Provides: w == 4\n",
    HEAD + "Requires: a\\\\b c\\d\n",
    "Name: a\nVersion: 1:2\nDescription: d\nRequires: q = 0:1-2\n",
    HEAD + "Requires: q = -1 r = 1- s = :1\n",
    "Name: a\nVersion: 1..2\nDescription: d\n",
    HEAD + "Requires: é = 1é\n",
    "v=1\nv=${v}2\nName: a\nVersion: ${v}\nDescription: d\n",
    'v="1.5"\nName: a\nVersion: ${v}\nDescription: d\n',
    "v='1\\'5'x\nName: a\nVersion: ${v}\nDescription: d\n",
    "Name: a\nVersion: 1\nDescription: d",
    HEAD + "Requires: ab\\\r\ncd\n",
    "Name: a\rVersion: 1\rDescription: d\rRequires: x\r",
    "pcfiledir=zz\nName: a\nVersion: ${pcfiledir}\nDescription: d\n",
    "a=$\nb=${a}{c}\nc=9\nName: a\nVersion: ${b}\nDescription: d\n",
    "1a=3\n_b: x\nName: a\nVersion: ${1a}\nDescription: d\n",
    HEAD + "Requires: x\x0by\x0cz\n",
    HEAD + "Requires: foo >=1, bar >=12 ,baz\n",
    HEAD + "Requires: foo >= 1 # c",
    HEAD + "Requires: x=1 y =2 z= 3 w ==4\n",
    HEAD + "Requires: foo >= 1 >= 2 bar\n",
    "Name: a\nversion: 1\nDescription: d\nrequires: foo\nREQUIRES.PRIVATE: bar\n",
    "v = 8 \nName: a\nVersion: <${v}>|${pc_sysrootdir}|${pc_top_builddir}\nDescription: d\n",
    "x.y=9\nName: a\nVersion : ${x.y}\nDescription: d\n  Requires  :  x\nRe-quires: y\n",
]


def buildroot(tmp_path):
    root = tmp_path / "br"
    for d in ("usr/lib64/pkgconfig", "usr/share/pkgconfig", "usr/lib/pkgconfig", "usr/bin"):
        (root / d).mkdir(parents=True)
    return root


@pytest.mark.parametrize("index", range(len(PC_CASES)))
def test_pkgconfig_files(tool, tmp_path, index):
    root = buildroot(tmp_path)
    pc = root / "usr/lib64/pkgconfig" / f"case{index}.pc"
    pc.write_bytes(PC_CASES[index].encode())
    compare([str(pc)], root=root)


def test_pkgconfig_tree(tool, tmp_path):
    """Several .pc files: the pkgconfig path, a relative symlink, and rpm's rule that an
    unversioned require yields to a versioned one of the same name."""
    root = buildroot(tmp_path)
    (root / "usr/share/pkgconfig/real.pc").write_text(
        "Name: r\nVersion: 7\nDescription: d\nRequires: glib-2.0\n")
    (root / "usr/lib64/pkgconfig/link.pc").symlink_to("../../share/pkgconfig/real.pc")
    (root / "usr/lib64/pkgconfig/v.pc").write_text(
        "Name: v\nVersion: 1\nDescription: d\nRequires: glib-2.0 >= 2.50\n")
    (root / "usr/lib/pkgconfig/elsewhere.pc").write_text(HEAD + "Requires: nothere\n")
    paths = [str(p) for p in sorted(root.rglob("*.pc"))]
    lines = compare(paths, root=root)
    assert "pkgconfig(link) = 7" in lines
    assert "pkgconfig(glib-2.0) >= 2.50" in lines and "pkgconfig(glib-2.0)" not in lines
    assert "pkgconfig(nothere)" not in lines


def mixed_tree(tmp_path):
    root = buildroot(tmp_path)
    lib = root / "usr/lib64/libfoo.so.1"
    shutil.copyfile(CORPUS / "libfoo-x86_64.so", lib)
    lib.chmod(0o755)
    (root / "usr/lib64/pkgconfig/foo.pc").write_text(PC_CASES[0])
    script = root / "usr/bin/s"
    script.write_text("#!/bin/sh\n")
    script.chmod(0o755)
    exe = root / "usr/bin/hello"
    shutil.copyfile(CORPUS / "exe-x86_64", exe)
    exe.chmod(0o755)
    return root, [str(p) for p in sorted(root.rglob("*")) if p.is_file()]


@pytest.mark.parametrize("defines", [
    ["__requires_exclude ^libc\\\\.so"],
    ["__requires_exclude ^pkgconfig\\\\(glib-2.0\\\\) >= 2"],
    ["__provides_exclude \\\\(FOO_", "__requires_exclude rtld"],
    ["__requires_exclude_from ^/usr/bin/"],
    ["__provides_exclude_from ^/usr/lib64/pkgconfig"],
    ["__global_requires_exclude_from ^/usr/lib64/", "__global_provides_exclude_from ^/usr"],
    ["__elf_exclude_path ^/usr/lib64/"],
])
def test_excludes(tool, tmp_path, defines):
    root, paths = mixed_tree(tmp_path)
    full = compare(paths, root=root)
    filtered = compare(paths, root=root, defines=defines)
    assert len(filtered) < len(full)
