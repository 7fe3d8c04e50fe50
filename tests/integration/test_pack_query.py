"""kiln query and the header codec against packages built by Debian's rpmbuild."""
import pytest

import rpmfix
from rpmfix import run

QF_FORMATS = [
    "%{NAME}|%{EPOCH}|%{VERSION}|%{RELEASE}|%{ARCH}|%{SIZE}|%{LONGSIZE}|%{OS}\\n",
    "%{NEVRA} %{NVRA} %{EVR} %{NEVR} %{NVR}%{ARCHSUFFIX} %{EPOCHNUM}\\n",
    "%{PAYLOADFORMAT}|%{PAYLOADCOMPRESSOR}|%{PAYLOADFLAGS}|%{SOURCERPM}|%{RPMVERSION}\\n",
    "[%{FILEMODES:perms} %{FILEUSERNAME}:%{FILEGROUPNAME} %{FILESIZES} %{FILEFLAGS:fflags} "
    "%{FILEDIGESTS} %{FILELINKTOS} %{FILENAMES}\\n]",
    "[%-30{FILENAMES} %10{FILESIZES:humansi} %{FILESIZES:humaniec} %{FILEMODES:octal} "
    "%{FILEMTIMES:date} %{FILEMTIMES:day} %{FILEINODES} %{FILENLINKS}\\n]",
    "[%{FILEVERIFYFLAGS:vflags} %{FILEVERIFYFLAGS:fstatus} %{FILEFLAGS:fstate} "
    "%{FILELANGS} %{FILECLASS} %{FILECOLORS} %{FILERDEVS} %{FILEDEVICES}\\n]",
    "[%{REQUIRENAME} %{REQUIREFLAGS} %{REQUIREFLAGS:depflags} %{REQUIREFLAGS:deptype} "
    "%{REQUIREVERSION}\\n]",
    "[%{REQUIRENEVRS}\\n][%{PROVIDENEVRS}\\n][%{CONFLICTNEVRS}\\n][%{OBSOLETENEVRS}\\n]"
    "[%{RECOMMENDNEVRS}\\n][%{SUGGESTNEVRS}\\n][%{SUPPLEMENTNEVRS}\\n][%{ENHANCENEVRS}\\n]",
    "[%{TRIGGERTYPE} %{TRIGGERCONDS} %{TRIGGERFLAGS:triggertype} %{TRIGGERSCRIPTPROG}\\n]",
    "%{SIGMD5}|%{SIGMD5:base64}|%{SIGSIZE}|%{SHA1HEADER}|%{SHA256HEADER}|%{ARCHIVESIZE}\\n",
    "%{NAME:shescape} %{DESCRIPTION:shescape} %{EPOCH:shescape} %{SIGMD5:shescape}\\n",
    "%{NAME:tagname} %{NAME:tagnum} %{#FILENAMES} %{FILENAMES:arraysize} %{=NAME}\\n",
    "%{NAME:date}|%{BUILDTIME:hex}|%{SIGMD5:hex}|%{NAME:base64}|%{SUMMARY:armor}\\n",
    "%|EPOCH?{e=%{EPOCH}}:{no epoch}| %|BUGURL?{yes}:{no}| %|URL?{%{URL}}|\\n",
    "[%{=NAME} %{FILENAMES}\\n]",
    "[%{FILENAMES} %{BUGURL}\\n]",
    "a\\tb\\\\c\\%d%%e\\{\\}\\n",
    "%{SUMMARY} %{GROUP} [%{HEADERI18NTABLE} ]\\n",
    "%{HEADERCOLOR} %{DBINSTANCE} %|VERBOSE?{v}:{q}|\\n",
    "[%{CHANGELOGTIME} %{CHANGELOGNAME}\\n]",
    "[%{DIRNAMES} ][%{DIRINDEXES} ][%{BASENAMES} ]\\n",
    "[%{FILECOLORS} %{FILECLASS} %{FILEPROVIDE} %{FILEREQUIRE}\\n]",
    "%{POSTINPROG} %{POSTIN}|%{SOURCEPKGID}|%{HEADERCOLOR}\\n",
    "%{NAME:xml}%{EPOCH:xml}%{SIGMD5:xml}|%{NAME:string}|%{EPOCH:string}|%{SUMMARY:expand}|"
    "%{EPOCH:expand}|%{SIGMD5:pgpsig}|%{RSAHEADER:pgpsig}|%{ARCH:xml}\\n",
    "[%{FILETRIGGERNAME} %{FILETRIGGERFLAGS:depflags} %{FILETRIGGERTYPE}\\n]"
    "[%{TRANSFILETRIGGERNAME} %{TRANSFILETRIGGERPRIORITIES} %{TRANSFILETRIGGERTYPE}\\n]",
    # The immutable region itself (rpm's headerGet of a region tag), as hex.
    "%{HEADERIMMUTABLE}\\n%{HEADERIMMUTABLE:arraysize}\\n",
]

MODES = [[], ["-i"], ["-l"], ["--dump"], ["--requires"], ["--provides"], ["--scripts"],
         ["--triggers"], ["--filetriggers"], ["--changelog"], ["--conflicts"], ["--obsoletes"],
         ["--recommends"], ["--suggests"], ["--supplements"], ["--enhances"],
         ["-i", "-l"], ["--requires", "-v"], ["--provides", "-v"],
         ["-l", "-v"], ["-lv"], ["-c"], ["-d"], ["-L"], ["-c", "-v"], ["-l", "--noghost"],
         ["--dump", "-c"], ["--configfiles", "--docfiles"]]

@pytest.fixture(scope="session")
def packages(rpm_packages):
    return rpm_packages


def test_headers_roundtrip(packages):
    r = run([rpmfix.HELPERS / "pkgtool", "roundtrip", *packages.values()], text=True)
    assert r.returncode == 0, r.stderr
    assert r.stdout.count("roundtrip ok") == len(packages)


@pytest.mark.parametrize("mode", MODES, ids=lambda m: " ".join(m) or "default")
def test_query_modes_match_rpm(kiln_bin, packages, mode):
    # One process per tool over every package (both print them in argument order).
    pkgs = list(packages.values())
    want = run(["rpm", "-qp", *mode, *pkgs])
    got = run([kiln_bin, "query", "-p", *mode, *pkgs])
    assert got.returncode == want.returncode == 0, got.stderr
    if got.stdout != want.stdout:
        for pkg in pkgs:  # name the first package that differs
            assert run([kiln_bin, "query", "-p", *mode, pkg]).stdout.decode() == \
                run(["rpm", "-qp", *mode, pkg]).stdout.decode(), f"{pkg} {mode}"
    assert got.stdout.decode() == want.stdout.decode()


def test_query_formats_match_rpm(kiln_bin, packages):
    pkgs = list(packages.values())
    for qf in QF_FORMATS:
        want = run(["rpm", "-qp", "--qf", qf, *pkgs])
        got = run([kiln_bin, "query", "-p", "--qf", qf, *pkgs])
        assert got.stdout.decode() == want.stdout.decode(), qf


def test_xml_matches_rpm(kiln_bin, packages):
    for pkg in packages.values():
        want = rpmfix.rpm_xml_as_420(run(["rpm", "-qp", "--xml", pkg]).stdout.decode())
        got = run([kiln_bin, "query", "-p", "--xml", pkg])
        assert got.returncode == 0
        assert got.stdout.decode() == want, pkg


def test_array_size_mismatch_is_an_error(kiln_bin, packages):
    pkg = next(iter(packages.values()))
    r = run([kiln_bin, "query", "-p", "--qf", "[%{NAME} %{FILENAMES}\\n]", pkg], text=True)
    assert r.returncode == 1
    assert "array iterator used with different sized arrays" in r.stderr


@pytest.mark.parametrize("qf,msg", [
    ("%{NAME", "missing } after %{"), ("%{}", "empty tag name"), ("%{NAME:}", "empty tag format"),
    ("%{FOO}", 'unknown tag: "FOO"'), ("[%{NAME}", "] expected at end of array"),
    ("]", "unexpected ]"), ("}", "unexpected }"), ("\\", "escaped char expected after \\"),
    ("%|NAME{x}|", "? expected in expression"), ("%|NAME?x|", "{ expected after ? in expression"),
    ("%|NAME?{x}y", ": expected following ? subexpression"), ("%x{NAME}", "invalid field width"),
    ("ab%", "missing { after %"), ("%{NAME:bogus}", 'unknown tag format: "bogus"'),
])
def test_bad_formats(kiln_bin, packages, qf, msg):
    pkg = next(iter(packages.values()))
    r = run([kiln_bin, "query", "-p", "--qf", qf, pkg], text=True)
    assert r.returncode == 1 and msg in r.stderr, r.stderr


def test_json_pinned(kiln_bin, packages):
    """rpm 4.20's --json layout (rpm-reference.md section 9.3), pinned by hand: 4.18 has none."""
    pkg = packages["empty-0.1-0.noarch.rpm"]
    out = run([kiln_bin, "query", "-p", "--json", pkg]).stdout.decode()
    assert out.startswith('{\n    "Headeri18ntable": \t"C",\n    "Sigsize": \t')
    assert '\n    "Name": \t"empty",\n    "Version": \t"0.1",\n' in out
    assert '    "Sigmd5": \t"' in out  # a blob as one base64 string
    assert '    "Requirename": [\n\t"rpmlib(CompressedFileNames)",\n\t"rpmlib(FileDigests)",' in out
    assert out.endswith('\n    "Payloadsha256algo": \t8,\n    "Payloadsha256alt": \t"%s"\n}\n'
                        % run(["rpm", "-qp", "--qf", "%{PAYLOADDIGESTALT}", pkg]).stdout.decode())
    import json
    data = json.loads(out)
    assert data["Name"] == "empty" and data["Requireflags"][0] == 16777226


def test_xml_json_formatters_pinned(kiln_bin, packages):
    """Outside %{*:xml} the :xml and :json formatters give bare values in rpm 4.20
    (headerfmt.c applies the rpmTag wrappers only to %{*:...}); 4.18 wrapped an array
    whose first item was :xml. Pinned by hand."""
    pkg = packages["empty-0.1-0.noarch.rpm"]
    out = run([kiln_bin, "query", "-p", "--qf", "[%{REQUIRENAME:xml}|][%{REQUIREFLAGS:json},]"
               "%{NAME:json}", pkg]).stdout.decode()
    assert out == ("\t<string>rpmlib(CompressedFileNames)</string>|"
                   "\t<string>rpmlib(FileDigests)</string>|"
                   "\t<string>rpmlib(PayloadFilesHavePrefix)</string>|"
                   "16777226,16777226,16777226,\"empty\"")
