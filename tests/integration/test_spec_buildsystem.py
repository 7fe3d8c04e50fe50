"""BuildSystem:/BuildOption: synthesis and -a/-p section hooks, which rpm 4.18 lacks.

Expected values are pinned by hand from rpm 4.20's documented behaviour
(docs/manual/buildsystem.md and the "rpmbuild -b buildsystem" / "section append and
prepend" cases of rpm's test suite; shared/rpm-reference.md sections 6.3 and 7):

* sections a spec leaves out are generated from %buildsystem_NAME_SECTION (or the
  default_ one), called with "-- OPTIONS" from BuildOption(SECTION) lines (default: conf);
* a main section in the spec overrides the generated one;
* after that, -a fragments append and -p fragments prepend, in spec order, wherever they
  are in the file.
The build-system macros here are kiln's own (configs/macros.d/macros.buildsystem).
"""
import json

import pytest

PREAMBLE = """Name: amhello
Version: 1.0
Release: 1
Summary: hello
License: GPL-2.0-or-later
Source0: amhello-1.0.tar.gz
"""
TAIL = """%description
Hello.

%files
/usr/bin/hello
"""
ENV = {"RPM_BUILD_NCPUS": "2"}
DEFS = ["--define", "_topdir /b"]


def parse(kiln, tmp_path, body, *args, name="t.spec"):
    spec = tmp_path / name
    spec.write_text(PREAMBLE + body + TAIL)
    r = kiln("spec", "--json", *DEFS, *args, spec, env=ENV)
    return r, (json.loads(r.stdout) if r.returncode == 0 else None)


def test_sections_order_main_prepend_append(kiln, tmp_path):
    # rpm's append.spec: %build BBB, -a CCC, -p AAA, -a DDD, -p 000.
    body = ("%build\necho BBB\n%build -a\necho CCC\n%build -p\necho AAA\n"
            "%build -a\necho DDD\n%build -p\necho 000\n")
    r, d = parse(kiln, tmp_path, body)
    assert r.returncode == 0, r.stderr
    assert d["sections"]["build"] == "echo 000\necho AAA\necho BBB\necho CCC\necho DDD\n"


def test_fragments_without_main_section(kiln, tmp_path):
    r, d = parse(kiln, tmp_path, "%install -a\necho two\n%install -p\necho one\n")
    assert r.returncode == 0, r.stderr
    assert d["sections"]["install"] == "echo one\necho two\n"


def test_fragments_before_main_section_in_file(kiln, tmp_path):
    r, d = parse(kiln, tmp_path, "%check -a\necho after\n%check\necho main\n")
    assert r.returncode == 0, r.stderr
    assert d["sections"]["check"] == "echo main\necho after\n"


@pytest.mark.parametrize("header,msg", [
    ("%build -a -p", "append and prepend specified: %build -a -p"),
    ("%build -x", "Bad %build option -x"),
])
def test_bad_fragment_headers(kiln, tmp_path, header, msg):
    spec = tmp_path / "t.spec"
    spec.write_text(PREAMBLE + header + "\necho\n" + TAIL)
    r = kiln("spec", "-P", *DEFS, spec, env=ENV)
    assert r.returncode == 1
    assert f"t.spec:{PREAMBLE.count(chr(10)) + 1}: {msg}" in r.stderr


def test_second_main_section_is_an_error(kiln, tmp_path):
    spec = tmp_path / "t.spec"
    spec.write_text(PREAMBLE + "%build\na\n%build -a\nb\n%build\nc\n" + TAIL)
    r = kiln("spec", "-P", *DEFS, spec, env=ENV)
    assert r.returncode == 1 and "second %build" in r.stderr


AMHELLO = """BuildSystem: autotools
BuildOption: --program-prefix=alt-
BuildOption(install): DESTDIR=${RPM_BUILD_ROOT}/alt
"""


def test_autotools_amhello(kiln, tmp_path):
    """rpm's amhello case: two %build -p, a %build -a, %install -p, two %install -a."""
    body = AMHELLO + ("%build -p\necho p1\n%build -p\necho p2\n%build -a\necho a1\n"
                      "%install -p\necho ip\n%install -a\necho ia1\n%install -a\necho ia2\n")
    r, d = parse(kiln, tmp_path, body)
    assert r.returncode == 0, r.stderr
    s = d["sections"]
    assert d["buildsystem"] == "autotools"
    assert d["buildoptions"] == {"conf": ["--program-prefix=alt-"],
                                 "install": ["DESTDIR=${RPM_BUILD_ROOT}/alt"]}
    assert s["build"] == "echo p2\necho p1\n/usr/bin/make -O -j2 V=1 VERBOSE=1 \necho a1\n"
    assert s["install"] == ("echo ip\n/usr/bin/make install DESTDIR=/b/BUILDROOT/"
                            "amhello-1.0-1.x86_64 INSTALL=\"/usr/bin/install -p\" "
                            "DESTDIR=${RPM_BUILD_ROOT}/alt\necho ia1\necho ia2\n")
    assert s["conf"].rstrip().endswith("--infodir=/usr/share/info --program-prefix=alt-")
    assert "./configure --host=x86_64-kiln-linux-gnu" in s["conf"]
    assert s["check"] == "/usr/bin/make check -j2 \n"
    # %prep comes from %buildsystem_default_prep: %autosetup -C -p1. rpm 4.20's %setup -C
    # leaves making the directory to rpmuncompress -C and passes its name unquoted.
    assert "mkdir -p 'amhello-1.0'" not in s["prep"]
    assert "-x -C amhello-1.0 /b/SOURCES/amhello-1.0.tar.gz\n" in s["prep"]


def test_parse_output_shows_generated_sections(kiln, tmp_path):
    """rpmspec -P prints the generated parts after the spec, each with its header."""
    spec = tmp_path / "t.spec"
    spec.write_text(PREAMBLE + AMHELLO + TAIL)
    r = kiln("spec", "-P", *DEFS, spec, env=ENV)
    assert r.returncode == 0, r.stderr
    out = r.stdout
    tail = out[out.index("/usr/bin/hello\n") + len("/usr/bin/hello\n"):]
    headers = [line for line in tail.splitlines() if line.startswith("%")]
    assert headers == ["%prep", "%conf", "%build", "%install", "%check"]


def test_spec_section_overrides_buildsystem(kiln, tmp_path):
    r, d = parse(kiln, tmp_path, AMHELLO + "%build\nmake mine\n%build -a\necho a\n")
    assert r.returncode == 0, r.stderr
    assert d["sections"]["build"] == "make mine\necho a\n"
    assert d["sections"]["install"].startswith("/usr/bin/make install")


def test_buildoption_for_prep_reaches_autosetup(kiln, tmp_path):
    r, d = parse(kiln, tmp_path, AMHELLO + "BuildOption(prep): -n amhello-src\n")
    assert r.returncode == 0, r.stderr
    assert "rm -rf 'amhello-src'\n" in d["sections"]["prep"]


def test_unknown_buildsystem(kiln, tmp_path):
    spec = tmp_path / "t.spec"
    spec.write_text(PREAMBLE + "BuildSystem: nosuch\n" + TAIL)
    r = kiln("spec", "-P", *DEFS, spec, env=ENV)
    assert r.returncode == 1
    assert "t.spec:7: Unknown buildsystem: nosuch" in r.stderr


def test_non_parametric_macros_do_not_count(kiln, tmp_path):
    """rpm's case: the autotools macros redefined without () are not a build system."""
    spec = tmp_path / "t.spec"
    spec.write_text(PREAMBLE + "BuildSystem: autotools\n" + TAIL)
    nil = []
    for s in ("conf", "build", "install", "check"):
        nil += ["--define", f"buildsystem_autotools_{s} %nil"]
    r = kiln("spec", "-P", *DEFS, *nil, spec, env=ENV)
    assert r.returncode == 1 and "Unknown buildsystem: autotools" in r.stderr
    r = kiln("spec", "-P", *DEFS, "--define", "buildsystem_autotools_build %nil",
             "--define", "buildsystem_autotools_check %nil", spec, env=ENV)
    assert r.returncode == 1
    assert ("Required parametric macro %buildsystem_autotools_build not defined for "
            "buildsystem autotools") in r.stderr


def test_own_buildsystem_from_spec(kiln, tmp_path):
    """A spec (or a macro file) can define a build system; options arrive after --."""
    body = ("%define buildsystem_mine_build() echo build: %*\n"
            "%define buildsystem_mine_install() echo install: %**\n"
            "BuildSystem: mine\nBuildOption(build): -j1 V=1\nBuildOption(build): X=2\n")
    r, d = parse(kiln, tmp_path, body)
    assert r.returncode == 0, r.stderr
    assert d["sections"]["build"] == "echo build: -j1 V=1 X=2\n"
    assert d["sections"]["install"] == "echo install: \n"
    assert "conf" not in d["sections"]


@pytest.mark.parametrize("system,expect", [
    ("cmake", {"conf": "/usr/bin/cmake -S . -B kiln-build",
               "build": "/usr/bin/cmake --build kiln-build -j2 --verbose",
               "install": 'DESTDIR="/b/BUILDROOT/amhello-1.0-1.x86_64" /usr/bin/cmake --install kiln-build',
               "check": "/usr/bin/ctest --test-dir kiln-build --output-on-failure -j2"}),
    ("meson", {"conf": "/usr/bin/meson setup --buildtype=plain",
               "build": "/usr/bin/meson compile -C kiln-build -j 2 --verbose",
               "install": 'DESTDIR="/b/BUILDROOT/amhello-1.0-1.x86_64" /usr/bin/meson install -C kiln-build --no-rebuild',
               "check": "/usr/bin/meson test -C kiln-build --num-processes 2 --print-errorlogs"}),
    ("make", {"build": "/usr/bin/make -O -j2 V=1 VERBOSE=1 PREFIX=/usr",
              "install": "/usr/bin/make install DESTDIR=/b/BUILDROOT/amhello-1.0-1.x86_64 "
                         'INSTALL="/usr/bin/install -p" PREFIX=/usr',
              "check": "if /usr/bin/make -n check >/dev/null 2>&1; then /usr/bin/make check -j2 ; fi"}),
])
def test_shipped_buildsystems(kiln, tmp_path, system, expect):
    r, d = parse(kiln, tmp_path, f"BuildSystem: {system}\n")
    assert r.returncode == 0, r.stderr
    for section, text in expect.items():
        assert text in d["sections"][section], (section, d["sections"][section])
    if system == "make":
        assert "conf" not in d["sections"]
