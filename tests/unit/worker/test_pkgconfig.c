/*
 * test_pkgconfig.c - worker/pkgconfig.c: what pkgconf 1.8.1 prints for a .pc file and what
 * pkgconfigdeps.sh's `read n r v` makes of it. Expected values are pkg-config 1.8.1's output
 * on Debian 12 (PKG_CONFIG_MAXIMUM_TRAVERSE_DEPTH=1 pkg-config --print-provides /
 * --print-requires --print-requires-private FILE); tests/integration/test_autodeps.py checks
 * the same cases against the real program.
 */
#include "util/util.h"

#include "worker/autodeps_int.h"
#include "tests/unit/harness.h"

#define HEAD "Name: a\nVersion: 1\nDescription: d\n"

static char out[8192];

/* Print list for text; returns out, or NULL when pkgconf would refuse the file. */
static const char *pcn(const char *text, size_t len, enum worker_pc_list list)
{
	struct kiln_buf b = KILN_BUF_INIT(KILN_MIB);
	struct kiln_err err = KILN_ERR_INIT;
	bool loaded;

	assert_ok(
	    worker_pc_print(text, len, "t", "/r/usr/lib64/pkgconfig", list, &b, &loaded, &err),
	    &err);
	snprintf(out, sizeof(out), "%s", b.ptr);
	kiln_buf_release(&b);
	return loaded ? out : NULL;
}

static const char *pc(const char *text, enum worker_pc_list list)
{
	return pcn(text, strlen(text), list);
}

#define REQ(text) pc((text), WORKER_PC_REQUIRES)
#define PROV(text) pc((text), WORKER_PC_PROVIDES)

KILN_TEST(pc_provides_self_and_field)
{
	assert_string_equal(PROV("ver=1.2\nName: F\nVersion: ${ver}\nDescription: x\n"
	                         "Provides: foo-compat = 9, other\n"),
	                    "foo-compat = 9\nother\nt = 1.2\n");
	/* an empty version prints the bare name; a version is cut at a blank or tab */
	assert_string_equal(PROV("Name: a\nVersion: \nDescription: d\n"), "t\n");
	assert_string_equal(PROV("Name: a\nVersion: 1.0 beta\nDescription: d\n"), "t = 1.0\n");
	assert_string_equal(PROV("Name: a\nVersion: 1\ta\nDescription: d\n"), "t = 1\n");
	/* fields are case-insensitive, the last one counts */
	assert_string_equal(PROV("Name: a\nversion: 1\nVERSION: 2\nDescription: d\n"), "t = 2\n");
}

KILN_TEST(pc_missing_fields_refuse_the_file)
{
	assert_null(PROV("Name: a\nDescription: d\nRequires: foo\n"));
	assert_null(REQ("Version: 1\nDescription: d\nRequires: foo\n"));
	assert_null(REQ("Name: a\nVersion: 1\nRequires: foo\n"));
	assert_string_equal(out, "");
}

KILN_TEST(pc_requires_lists)
{
	assert_string_equal(REQ(HEAD "Requires: glib-2.0 >= 2.50, gobject-2.0 bar>=3 baz = 1.0\n"
	                             "Requires.private: zlib, libfoo-priv\nRequires: more\n"),
	                    "glib-2.0 >= 2.50\ngobject-2.0\nbar>=3\nbaz = 1.0\nmore\n"
	                    "zlib\nlibfoo-priv\n");
	assert_string_equal(REQ(HEAD "Requires.Private: p\nrequires: q\n"), "q\np\n");
	assert_string_equal(REQ(HEAD "Requires: ,foo, , ,bar,\n"), "foo\nbar\n");
	assert_string_equal(REQ(HEAD "Requires:\tfoo\t>=\t1\t,bar\n"), "foo >= 1\nbar\n");
	assert_string_equal(REQ(HEAD "Requires: x\vy\fz\n"), "x\ny\nz\n");
}

/* pkgconf 1.8.1's parser: the character after an operator is eaten when no blank follows,
 * an operator with no version drops the module, and unknown operators are "(any)". */
KILN_TEST(pc_requires_parser_quirks)
{
	assert_string_equal(REQ(HEAD "Requires: foo >=1, bar >=12 ,baz\n"),
	                    "foo >= ,\nbar >= 2\nbaz\n");
	assert_string_equal(REQ(HEAD "Requires: x=1 y =2 z= 3 w ==4\n"), "x=1\ny = z=\n3\n");
	assert_string_equal(REQ(HEAD "Requires: foo >=\n"), "");
	assert_string_equal(REQ(HEAD "Requires: foo >= 1 >= 2 bar\n"), "foo >= 1\n>=\n2\nbar\n");
	assert_string_equal(REQ(HEAD "Requires: w == 4, v =< 3, u => 1, t <> 2, s != 1\n"),
	                    "w (any) 4\nv (any) 3\nu (any) 1\nt (any) 2\ns != 1\n");
	assert_string_equal(REQ(HEAD "Requires: a < 1, b <= 2, c > 3, d = 4\n"),
	                    "a < 1\nb <= 2\nc > 3\nd = 4\n");
}

KILN_TEST(pc_variables)
{
	/* defined in order, the last definition wins, "v=${v}2" sees no v */
	assert_string_equal(PROV("v=1\nv=${v}2\nName: a\nVersion: ${v}\nDescription: d\n"),
	                    "t = 2\n");
	assert_string_equal(PROV("Name: a\nVersion: ${w}\nw=5\nDescription: d\n"), "t\n");
	/* quotes around a variable's value go, escaped ones stay */
	assert_string_equal(PROV("v=\"1.5\"\nName: a\nVersion: ${v}\nDescription: d\n"),
	                    "t = 1.5\n");
	assert_string_equal(PROV("v='1\\'5'x\nName: a\nVersion: ${v}\nDescription: d\n"),
	                    "t = 1'5x\n");
	assert_string_equal(PROV("Name: a\nVersion: \"2\"\nDescription: d\n"), "t = \"2\"\n");
	/* "$$" is not an escape; an unterminated reference runs to the end */
	assert_string_equal(PROV("v=7\nName: a\nVersion: $${v}\nDescription: d\n"), "t = $7\n");
	assert_string_equal(PROV("v=7\nName: a\nVersion: ${v\nDescription: d\n"), "t = 7\n");
	/* an expansion that produces ${...} is looked up again */
	assert_string_equal(PROV("a=$\nb=${a}{c}\nc=9\nName: a\nVersion: ${b}\nDescription: d\n"),
	                    "t = 9\n");
	/* a cycle ends at the depth limit instead of recursing forever */
	assert_non_null(PROV("a=$\nb=${a}{b}\nName: a\nVersion: x${b}\nDescription: d\n"));
	assert_string_equal(out, "t = x\n");
}

KILN_TEST(pc_builtin_variables)
{
	assert_string_equal(PROV("Name: a\nVersion: ${pcfiledir}\nDescription: d\n"),
	                    "t = /r/usr/lib64/pkgconfig\n");
	assert_string_equal(PROV("pcfiledir=zz\nName: a\nVersion: ${pcfiledir}\nDescription: d\n"),
	                    "t = zz\n");
	/* pkgconf's globals win over the file's variables */
	assert_string_equal(PROV("pc_sysrootdir=zz\nName: a\n"
	                         "Version: ${pc_sysrootdir}|${pc_top_builddir}\nDescription: d\n"),
	                    "t = /|$(top_builddir)\n");
}

KILN_TEST(pc_lines_comments_and_continuations)
{
	assert_string_equal(REQ(HEAD "Requires: foo # comment\n#Requires: x\n"), "foo\n");
	assert_string_equal(REQ(HEAD "Requires: foo \\# bar\n"), "foo\n#\nbar\n");
	assert_string_equal(REQ(HEAD "Requires: ab\\\n   cd\n"), "abcd\n");
	/* after a backslash, "\r\n" leaves a newline inside the line */
	assert_string_equal(REQ(HEAD "Requires: ab\\\r\ncd\n"), "ab\ncd\n");
	assert_string_equal(REQ("Name: a\rVersion: 1\rDescription: d\rRequires: x\r"), "x\n");
	assert_string_equal(REQ("Name: a\r\nVersion: 1\r\nDescription: d\r\nRequires: x >= 1\r\n"),
	                    "x >= 1\n");
	/* a comment running into the end of the file leaves pkgconf's EOF byte behind */
	assert_string_equal(REQ(HEAD "Requires: foo >= 1 # c"), "foo >= 1\n\xff\n");
	assert_string_equal(PROV("Name: a\nDescription: d\nVersion: 1"), "t = 1\n");
	assert_string_equal(REQ(HEAD "Requires: a\\\\b c\\d\n"), "a\\\\b\nc\\d\n");
}

KILN_TEST(pc_keys)
{
	static const char nul[] = "Name: a\nVersion: 1\0junk\nDescription: d\n";

	/* blanks around the key; keys are letters, digits, '_' and '.' starting with a letter */
	assert_string_equal(PROV("Name: a\nVersion : 3\nDescription: d\n"), "t = 3\n");
	assert_string_equal(REQ(HEAD "  Requires  :  x\nbad line\nRe-quires: y\n_b: z\n"), "x\n");
	assert_string_equal(PROV("1a=3\nName: a\nVersion: ${1a}\nDescription: d\n"), "t\n");
	assert_string_equal(PROV("x.y=9\nName: a\nVersion: ${x.y}\nDescription: d\n"), "t = 9\n");
	assert_string_equal(PROV("v = 8 \nName: a\nVersion: <${v}>\nDescription: d\n"),
	                    "t = <8>\n");
	/* a NUL ends the line for pkgconf */
	assert_string_equal(pcn(nul, sizeof(nul) - 1, WORKER_PC_PROVIDES), "t = 1\n");
}

static const char *lines(const char *text)
{
	struct kiln_buf b = KILN_BUF_INIT(KILN_MIB);

	worker_pc_rpm_lines(text, strlen(text), &b);
	snprintf(out, sizeof(out), "%s", b.ptr);
	kiln_buf_release(&b);
	return out;
}

KILN_TEST(pc_rpm_lines_are_read_n_r_v)
{
	assert_string_equal(lines("foo >= 1\nbar\n"), "pkgconfig(foo) >= 1\npkgconfig(bar) \n");
	/* r and v only together; v keeps inner blanks and loses outer ones */
	assert_string_equal(lines("  a  =  \n"), "pkgconfig(a) \n");
	assert_string_equal(lines("a = x  y  \n"), "pkgconfig(a) = x  y\n");
	/* read's backslash handling: escapes, and line continuation */
	assert_string_equal(lines("a\\\\b c\\d\n"), "pkgconfig(a\\b) \n");
	assert_string_equal(lines("a = 1\\\n2\n"), "pkgconfig(a) = 12\n");
	assert_string_equal(lines("a\\ b\n"), "pkgconfig(a b) \n");
	assert_string_equal(lines("\n\nx"), "pkgconfig(x) \n");
	assert_string_equal(lines(""), "");
}
