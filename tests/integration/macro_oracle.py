"""Run the same macro expressions through `rpm --eval` and `kiln eval`.

Shared by the differential tests and by bench/macro. Both tools get the same macro files,
rpmrc and defines, so any difference is kiln's.
"""
import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CASES = ROOT / "tests" / "data" / "macro" / "diff_cases.txt"

RPM_MACROFILES = ("/usr/lib/rpm/macros:/usr/lib/rpm/macros.d/macros.*:"
                  "/usr/lib/rpm/platform/%{_target}/macros:/usr/lib/rpm/fileattrs/*.attr")
RPM_RCFILE = "/usr/lib/rpm/rpmrc"

# The same environment for both tools, and no user configuration files.
ENV = dict(os.environ, HOME="/nonexistent-home", LC_ALL="C")

LUA_OPTS = ('%{lua:local t = {} for k in pairs(opt) do t[#t+1] = k end table.sort(t) '
            'for _, k in ipairs(t) do print(k .. "=" .. opt[k] .. ";") end '
            'print(#arg, arg[1])}')

DEFINES = [
    "a b",
    "f(x:) [%{-x*}] [%1] [%*] [%#]",
    "bar B",
    "pm(ab:) <%{-a}|%{-b*}|%*|%#|%0|%**>",
    "mb %bar",
    "foo2() [%1|%2]",
    "np NP",
    "two 2",
    "s abc",
    "neg -5",
    "foo3 1 + 2",
    "lm(ab:) " + LUA_OPTS,
]


KILN_MACROFILES = (f"{ROOT}/configs/macros:{ROOT}/configs/macros.d/macros.*:"
                   f"{ROOT}/configs/platform/%{{_target}}/macros")
KILN_RCFILE = f"{ROOT}/configs/rpmrc"


def run_rpm_on_kiln_configs(expr):
    """rpm reading kiln's own configuration files (kiln defines %_kiln_confdir itself as
    the directory it loaded them from)."""
    return run_rpm(expr, macrofiles=KILN_MACROFILES, rcfile=KILN_RCFILE,
                   defines=DEFINES + [f"_kiln_confdir {ROOT}/configs"])


def run_kiln_defaults(kiln, expr):
    """kiln with no --macros/--rcfile: its own configuration."""
    args = []
    for d in DEFINES:
        args += ["--define", d]
    return subprocess.run([str(kiln), "eval", *args, "--", expr], capture_output=True,
                          timeout=60, env=ENV)


def load_cases(path=CASES):
    text = path.read_text()
    chunks = text.split("\n----\n")
    # The first chunk is the header comment.
    return [c for c in chunks[1:]]


def common_args(macrofiles=RPM_MACROFILES, rcfile=RPM_RCFILE, defines=DEFINES):
    args = ["--macros", macrofiles, "--rcfile", rcfile]
    for d in defines:
        args += ["--define", d]
    return args


def run_rpm(expr, **kw):
    return subprocess.run(["rpm", *common_args(**kw), "--eval", expr], capture_output=True,
                          timeout=60, env=ENV)


def run_kiln(kiln, expr, **kw):
    return subprocess.run([str(kiln), "eval", *common_args(**kw), "--", expr],
                          capture_output=True, timeout=60, env=ENV)
