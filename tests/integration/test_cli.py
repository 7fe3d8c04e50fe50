"""The kiln command's front: help, version, usage errors, config lookup."""
import re
import shutil
import subprocess

from conftest import ROOT


def test_version(kiln):
    r = kiln("--version")
    assert r.returncode == 0
    version = (ROOT / "VERSION").read_text().strip()
    assert r.stdout == f"kiln {version}\n"
    assert kiln("version").stdout == r.stdout


def test_help_lists_commands(kiln):
    r = kiln("help")
    assert r.returncode == 0
    assert r.stdout.startswith("usage: kiln ")
    commands = re.findall(r"^  (\S+) ", r.stdout, re.M)
    assert "help" in commands and "version" in commands
    for cmd in commands:
        one = kiln("help", cmd)
        assert one.returncode == 0, cmd
        assert one.stdout.startswith(f"usage: kiln {cmd}")


def test_kiln_links_only_what_every_command_needs(kiln_bin):
    """The libraries only some commands use are opened on first use (util_dl_ready); a call
    missing from a lib*_int.h table links the library back in and every command, `kiln
    sandbox` included, pays for loading it at start (docs/ARCHITECTURE.md)."""
    out = subprocess.run(["ldd", str(kiln_bin)], capture_output=True, text=True,
                         check=True).stdout
    linked = {line.split()[0] for line in out.splitlines() if line.strip()}
    for lib in ("libcrypto", "libcurl", "libgit2", "libmagic", "libmicrohttpd", "libsqlite3",
                "libzstd"):
        assert not any(n.startswith(lib + ".") for n in linked), (lib, sorted(linked))
    # The small ones come from their static archives, which Debian's -dev packages ship
    # (not libzstd: Debian's archive has no multi-threading; it is opened on first use).
    for lib in ("libjansson", "liblzma", "liblua5.4", "libz"):
        assert not any(n.startswith(lib + ".") for n in linked), (lib, sorted(linked))


def test_unknown_command_is_usage_error(kiln):
    r = kiln("frobnicate")
    assert r.returncode == 2
    assert "'frobnicate' is not a kiln command" in r.stderr
    assert "usage: kiln" in r.stderr
    assert r.stdout == ""


def test_unknown_global_option_and_no_command(kiln):
    assert kiln("--bogus").returncode == 2
    assert kiln().returncode == 2
    assert kiln("help", "nosuch").returncode == 2


def test_installed_tree_works_anywhere(tmp_path):
    """make install puts the binary and configs where kiln finds them without any
    compiled-in path."""
    prefix = tmp_path / "prefix"
    subprocess.run(["make", "-s", "install", f"PREFIX={prefix}"], cwd=ROOT, check=True,
                   capture_output=True)
    assert (prefix / "bin" / "kiln").exists()
    assert (prefix / "lib" / "kiln" / "macros").exists()
    moved = tmp_path / "moved"
    shutil.copytree(prefix, moved, symlinks=True)
    r = subprocess.run([str(moved / "bin" / "kiln"), "version", "-v"], capture_output=True,
                       text=True)
    assert r.returncode == 0
    assert f"configdir: {moved / 'lib' / 'kiln'}\n" in r.stdout


def test_configdir_from_build_tree_and_env(kiln, tmp_path):
    r = kiln("version", "-v")
    assert r.returncode == 0
    assert f"configdir: {ROOT / 'configs'}\n" in r.stdout
    r = kiln("version", "-v", env={"KILN_CONFIGDIR": str(tmp_path)})
    assert f"configdir: {tmp_path}\n" in r.stdout
