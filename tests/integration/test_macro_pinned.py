"""Macro behaviour where rpm 4.20 differs from Debian's rpm 4.18, pinned by hand.

Each expected value follows rpm 4.20's documentation (rpm-macros(7), "Added: 4.19.0" for
the string built-ins) and is what kiln must print; rpm 4.18 leaves these unexpanded.
"""
import pytest

import macro_oracle as mo

PINNED = [
    # 4.19 string built-ins, thin wrappers over Lua's string library.
    ("%{gsub aaa a b}", "bbb\n"),
    ("%{gsub aaa a b 2}", "bba\n"),
    ("%{gsub aabbaacc aa dd 1}", "ddbbaacc\n"),
    ("%{len:abc}", "3\n"),
    ("%{len:9bf7da058a7c582878310e75be3d56a5a8b67f95}", "40\n"),
    ("%{upper:CamelCase}", "CAMELCASE\n"),
    ("%{lower:CamelCase}", "camelcase\n"),
    ("%{reverse:tac}", "cat\n"),
    ("%{rep a 5}", "aaaaa\n"),
    ("%{rep ai 2 -}", "ai-ai\n"),
    ("%{sub myfile.zip 3 6}", "file\n"),
    ("%{sub cd6317ba 1 7}", "cd6317b\n"),
    ("%{sub abcdef -3}", "def\n"),
    # 4.19: %getncpus takes total, proc or thread.
    ("%[%{getncpus total} == %{getncpus}]", "1\n"),
    ("%[%{getncpus proc} >= 1 && %{getncpus thread} >= 1]", "1\n"),
    # The rpm language level kiln implements.
    ("%{rpmversion}", "4.20.1\n"),
    # 4.19: %dirname and %basename are POSIX dirname(3)/basename(3) (rpm commits 9571e3d9
    # and 3ad98187, expectations in rpm's tests/rpmmacro.at); 4.18 cut at the last '/'.
    ("%{dirname:dir}|%{dirname:/}|%{dirname:./}|%{dirname:..}|%{dirname:../}", ".|/|.|.|.\n"),
    ("%{dirname:../foo}|%{dirname:/foo}|%{dirname:/foo/}|%{dirname:/foo/foobar}",
     "..|/|/|/foo\n"),
    ("%{dirname:/foo/foobar/}|%{dirname:/a}|%{dirname:}", "/foo|/|.\n"),
    ("%{basename:/foo/foobar}|%{basename:/foo/foobar/}|%{basename:/}|%{basename:foobar/}",
     "foobar|foobar|/|foobar\n"),
    ("%{basename:foobar}|%{basename:/a/b/}|%{basename:}", "foobar|b|.\n"),
    # 4.19: %{quote:} marks its argument's bounds only where the text is split into
    # arguments; anywhere else the marks are stripped (rpm commit fff2111a, "Strip quote
    # characters in macro expansion if we do not split the result"). 4.18 left \037 in.
    ("%{quote:a b}x", "a bx\n"),
    ("%{quote:%%}", "%\n"),
    ("%{expand:%{quote:a b}}", "a b\n"),
    ("%{shrink:%{quote:a  b}  c}", "a b c\n"),
    ("%{shrink:  a   b  }|%{quote:a b}|%{S:1}", "a b|a b|%SOURCE1\n"),
    # ...and where it is split, one argument with its blanks; %** keeps the bounds.
    ("%define c1() [%#:%1:%**]\n%c1 %{quote:a b} c", "[2:a b:a b c]\n"),
    ("%define c1() [%#:%1]\n%define c2() %c1 %**\n%c2 %{quote:a b} c", "[2:a b]\n"),
    ("%global q %{quote:x y}\n%define c1() [%#:%1]\n%{c1 %q z}|%q", "[2:x y]|x y\n"),
]


@pytest.mark.parametrize("expr,want", PINNED, ids=[e for e, _ in PINNED])
def test_pinned_420_behaviour(kiln_bin, expr, want):
    got = mo.run_kiln(kiln_bin, expr)
    assert got.returncode == 0, got.stderr
    assert got.stdout.decode() == want


def test_non_parametric_argument_warning(kiln_bin):
    """4.20 warns when a non-parametric macro gets arguments and drops them."""
    got = mo.run_kiln(kiln_bin, "%{np:x}|%{np x}")
    assert got.returncode == 0
    assert got.stdout == b"NP|NP\n"
    assert b"warning: unexpected argument to non-parametric macro %np" in got.stderr


def test_getncpus_rejects_unknown_kind(kiln_bin):
    got = mo.run_kiln(kiln_bin, "%{getncpus bogus}")
    assert got.returncode == 1
    assert got.stdout == b""
