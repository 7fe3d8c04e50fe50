"""Differential suite: kiln eval against Debian's rpm --eval (rpm 4.18) on the same files.

Each case in tests/data/macro/diff_cases.txt must give the same stdout and the same
success or failure. Behaviour that rpm 4.20 changed relative to 4.18 is pinned by hand in
test_macro_pinned.py instead.
"""
import subprocess

import pytest

import macro_oracle as mo

CASES = mo.load_cases()


def test_corpus_is_large_enough():
    assert len(CASES) >= 200


@pytest.mark.parametrize("expr", CASES, ids=[f"case{i}" for i in range(len(CASES))])
def test_same_as_rpm(kiln_bin, expr):
    want = mo.run_rpm(expr)
    got = mo.run_kiln(kiln_bin, expr)
    assert (got.returncode == 0) == (want.returncode == 0), (
        f"rpm rc={want.returncode} stderr={want.stderr!r}; "
        f"kiln rc={got.returncode} stderr={got.stderr!r}")
    assert got.stdout == want.stdout, f"kiln stderr: {got.stderr!r}"


@pytest.mark.parametrize("expr", CASES, ids=[f"case{i}" for i in range(len(CASES))])
def test_kiln_configs_same_in_rpm(kiln_bin, expr):
    """kiln's own configs/ read by rpm give what kiln prints with its defaults."""
    want = mo.run_rpm_on_kiln_configs(expr)
    got = mo.run_kiln_defaults(kiln_bin, expr)
    assert (got.returncode == 0) == (want.returncode == 0), (
        f"rpm rc={want.returncode} stderr={want.stderr!r}; "
        f"kiln rc={got.returncode} stderr={got.stderr!r}")
    assert got.stdout == want.stdout, f"kiln stderr: {got.stderr!r}"


FILES = sorted((mo.ROOT / "tests" / "data" / "macro" / "files").glob("*.macros"))
FILE_EXPRS = [
    "[%{?t1}][%{?t2}][%{?t3}][%{?t4}][%{?t5}][%{t6 -a q}][%{?t8}][%{?t9}][%{?t10}][%{?t11}]",
    "[%{?e1}][%{?e2}][%{?e3}][%{?e4}][%{?l1}][%{?l2}][%{?ok1}][%{?ok2}][%{?ok4}]",
]


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_macro_file_reading_same_as_rpm(kiln_bin, path):
    """Continuation lines, brackets across lines, comments and bad lines in macro files."""
    import subprocess

    args = mo.common_args()
    want = subprocess.run(["rpm", *args, "--load", str(path), *sum((["--eval", e] for e in
                          FILE_EXPRS), [])], capture_output=True, env=mo.ENV)
    got = subprocess.run([str(kiln_bin), "eval", *args, "--load", str(path), "--",
                          *FILE_EXPRS], capture_output=True, env=mo.ENV)
    assert (got.returncode == 0) == (want.returncode == 0), got.stderr
    assert got.stdout == want.stdout


# rpm --trace (an alias of --eval '%trace'): every expansion after it is traced on stderr,
# "  D>   %MACRO^REST" before a macro expands and "  D<    (%NAME)" with its text after.
TRACE_EXPRS = [
    "%{_libdir}",
    "%{?_libdir}%{!?nosuch:x}%{nosuch}",
    "%{f:1} %{f -x 2 3} %{pm -a -b z q}\n%f -x 4",
    "%{expand:%%{mb}}%{shrink: a  b }",
    "%[1 + %{two}] %[\"%{s}\" == \"abc\" ? 3 : 4] %(echo hi)",
    "%{lua:print(macros.foo2({'p', 'q'}))}",
    "%{dnl:x}%define zz 1\n%zz%{global yy %{bar}}%yy",
    "%{?np:1}%{undefine np}%{?np:2} %{basename:/a/b}",
]


def rpm_trace_of_eval(stderr: bytes) -> bytes:
    """rpm's trace up to its own expansions after the --eval (rpmts's)."""
    cut = stderr.find(b"%{?_transaction_color}^")
    if cut < 0:
        return stderr
    return stderr[:stderr.rfind(b"\n", 0, cut) + 1]


@pytest.mark.parametrize("expr", TRACE_EXPRS, ids=[f"trace{i}" for i in range(len(TRACE_EXPRS))])
def test_trace_same_as_rpm(kiln_bin, expr):
    args = [*mo.common_args(), "--trace", "--eval", expr]
    want = subprocess.run(["rpm", *args], capture_output=True, timeout=60, env=mo.ENV)
    got = subprocess.run([str(kiln_bin), "eval", *args], capture_output=True, timeout=60,
                         env=mo.ENV)
    assert got.returncode == want.returncode == 0, got.stderr
    assert got.stdout == want.stdout
    trace = rpm_trace_of_eval(want.stderr)
    assert trace.startswith(b"  0<  (%trace)\n  1>   ")
    assert got.stderr.decode() == trace.decode()
