/*
 * test_prep.c - spec/prep.c: the shell %setup and %patch stand for in %prep, their options
 * and errors, and %autosetup/%autopatch from kiln's configs/macros on top of them.
 *
 * Expected text and messages are Debian rpmspec 4.18's -P output with rpm's own macro
 * files, except where a comment cites rpm 4.20: %setup -C, a bare %patch and %patchN
 * (shared/rpm-reference.md section 6.7).
 */
#include "util/util.h"

#include "tests/unit/spec/spec_test.h"

#define PREP_HEAD                                                                                  \
	PT_HEAD "Source0: a.tar.gz\nSource1: b.zip\nSource2: c.tar.xz\nPatch0: p0.patch\n"         \
	        "Patch1: p1.patch.gz\nPatch3: http://x/p3.patch\n%description\nd\n%prep\n"

#define SRC "/builddir/build/SOURCES/"
#define UNPACK(q, file)                                                                            \
	"/usr/lib/rpm/rpmuncompress -x" q " " SRC file "\n"                                        \
	"STATUS=$?\nif [ $STATUS -ne 0 ]; then\n  exit $STATUS\nfi\n"
#define CD_BUILD "cd '/builddir/build/BUILD'\n"
#define FIXPERMS "/bin/chmod -Rf a+rX,u+w,g-w,o-w .\n"
/* Patches that cannot be read count as compressed. */
#define PATCH(n, file, args)                                                                       \
	"echo \"Patch #" #n " (" file "):\"\n{ /usr/lib/rpm/rpmuncompress " SRC file               \
	" || echo patch_fail ; } | /usr/bin/patch --no-backup-if-mismatch -f " args "\n\n"

/* The %prep text of PREP_HEAD + body. */
static void expect_prep(const char *body, const char *want)
{
	char text[2048];
	struct pt t;

	snprintf(text, sizeof(text), "%s%s\n", PREP_HEAD, body);
	pt_init(&t);
	pt_ok(&t, text);
	if (strcmp(t.spec->sections[SPEC_SEC_PREP], want))
		print_error("%s\ngot:\n%s\nwant:\n%s\n", body, t.spec->sections[SPEC_SEC_PREP],
		            want);
	assert_string_equal(t.spec->sections[SPEC_SEC_PREP], want);
	pt_release(&t);
}

static void expect_prep_error(const char *body, kiln_rc code, const char *msg)
{
	char text[2048];

	snprintf(text, sizeof(text), "%s%s\n", PREP_HEAD, body);
	pt_expect_fail(text, code, 15, msg);
}

/* ---------------------------------------------------------------------------------------- */
/* %setup. */

KILN_TEST(prep_setup_default)
{
	expect_prep("%setup",
	            CD_BUILD "rm -rf 't-1'\n" UNPACK(" -v", "a.tar.gz") "cd 't-1'\n" FIXPERMS);
	expect_prep("%setup -q",
	            CD_BUILD "rm -rf 't-1'\n" UNPACK("", "a.tar.gz") "cd 't-1'\n" FIXPERMS);
	/* Other lines stay as they are, around the commands. */
	expect_prep("echo a\n%setup -q\necho b",
	            "echo a\n" CD_BUILD
	            "rm -rf 't-1'\n" UNPACK("", "a.tar.gz") "cd 't-1'\n" FIXPERMS "echo b\n");
}

KILN_TEST(prep_setup_options)
{
	expect_prep("%setup -q -n foo",
	            CD_BUILD "rm -rf 'foo'\n" UNPACK("", "a.tar.gz") "cd 'foo'\n" FIXPERMS);
	expect_prep("%setup -n \"a b\"",
	            CD_BUILD "rm -rf 'a b'\n" UNPACK(" -v", "a.tar.gz") "cd 'a b'\n" FIXPERMS);
	expect_prep("%setup -c", CD_BUILD "rm -rf 't-1'\n/bin/mkdir -p 't-1'\ncd 't-1'\n" UNPACK(
	                             " -v", "a.tar.gz") FIXPERMS);
	expect_prep("%setup -D", CD_BUILD UNPACK(" -v", "a.tar.gz") "cd 't-1'\n" FIXPERMS);
	expect_prep("%setup -T", CD_BUILD "rm -rf 't-1'\ncd 't-1'\n" FIXPERMS);
	expect_prep("%setup -D -T", CD_BUILD "cd 't-1'\n" FIXPERMS);
	/* -b unpacks before changing into the directory, -a after; each where it stands. */
	expect_prep("%setup -a 1 -b 2",
	            CD_BUILD "rm -rf 't-1'\n" UNPACK(" -v", "c.tar.xz")
	                UNPACK(" -v", "a.tar.gz") "cd 't-1'\n" UNPACK(" -v", "b.zip") FIXPERMS);
	expect_prep("%setup -b 1 -b 2 -T", CD_BUILD "rm -rf 't-1'\n" UNPACK(" -v", "b.zip")
	                                       UNPACK(" -v", "c.tar.xz") "cd 't-1'\n" FIXPERMS);
	expect_prep("%setup -c -n d -a 1",
	            CD_BUILD "rm -rf 'd'\n/bin/mkdir -p 'd'\ncd 'd'\n" UNPACK(" -v", "a.tar.gz")
	                UNPACK(" -v", "b.zip") FIXPERMS);
	/* popt: clusters, attached values, a repeated flag; other words are ignored. */
	expect_prep("%setup -qcT",
	            CD_BUILD "rm -rf 't-1'\n/bin/mkdir -p 't-1'\ncd 't-1'\n" FIXPERMS);
	expect_prep("%setup -Ta1 -q",
	            CD_BUILD "rm -rf 't-1'\ncd 't-1'\n" UNPACK("", "b.zip") FIXPERMS);
	expect_prep("%setup -q -q foo",
	            CD_BUILD "rm -rf 't-1'\n" UNPACK("", "a.tar.gz") "cd 't-1'\n" FIXPERMS);
	/* rpm 4.18 matches "%setup" as a prefix. */
	expect_prep("%setup_x -q",
	            CD_BUILD "rm -rf 't-1'\n" UNPACK("", "a.tar.gz") "cd 't-1'\n" FIXPERMS);
}

KILN_TEST(prep_setup_create_strip)
{
	/* rpm 4.20's -C: rpmuncompress makes the directory and strips the archive's top one
	 * (-C DIR, unquoted, as 4.20's doUntar writes it); no mkdir, then cd into it. */
	expect_prep("%setup -q -C",
	            CD_BUILD "rm -rf 't-1'\n"
	                     "/usr/lib/rpm/rpmuncompress -x -C t-1 " SRC "a.tar.gz\n"
	                     "STATUS=$?\nif [ $STATUS -ne 0 ]; then\n  exit $STATUS\nfi\n"
	                     "cd 't-1'\n" FIXPERMS);
}

KILN_TEST(prep_setup_defines_buildsubdir)
{
	struct pt t;
	struct spec *s;

	pt_init(&t);
	s = pt_ok(&t, PREP_HEAD
	          "%setup -q -n x-%{version}\n%setup -q -T -D\n%build\necho %{buildsubdir}\n");
	assert_string_equal(s->sections[SPEC_SEC_BUILD], "echo t-1\n");
	pt_release(&t);
}

KILN_TEST(prep_setup_errors)
{
	expect_prep_error("%setup -x", KILN_ESYNTAX, "Bad %setup option -x: unknown option");
	expect_prep_error("%setup -qx", KILN_ESYNTAX, "Bad %setup option -qx: unknown option");
	expect_prep_error("%setup -n", KILN_ESYNTAX, "Bad %setup option -n: missing argument");
	expect_prep_error("%setup -q -a", KILN_ESYNTAX, "Bad %setup option -a: missing argument");
	expect_prep_error("%setup -a x", KILN_ESYNTAX, "Bad arg to %setup: x");
	expect_prep_error("%setup -a -1", KILN_ESYNTAX, "Bad arg to %setup: -1");
	expect_prep_error("%setup -b 99999999999", KILN_ESYNTAX, "Bad arg to %setup: 99999999999");
	expect_prep_error("%setup -a 5", KILN_ENOTFOUND, "No source number 5");
	/* The source is looked up as its option is read. */
	expect_prep_error("%setup -a 5 -x", KILN_ENOTFOUND, "No source number 5");
	pt_expect_fail(PT_MAIN "%prep\n%setup -q\n", KILN_ENOTFOUND, 9, "No source number 0");
}

/* ---------------------------------------------------------------------------------------- */
/* %patch. */

KILN_TEST(prep_patch_numbers)
{
	expect_prep("%patch 0", PATCH(0, "p0.patch", "-p0  --fuzz=0"));
	expect_prep("%patch -P 1", PATCH(1, "p1.patch.gz", "-p0  --fuzz=0"));
	/* -P numbers first, in order, then the other words. */
	expect_prep("%patch 0 -P3 -P 1",
	            PATCH(3, "p3.patch", "-p0  --fuzz=0") PATCH(1, "p1.patch.gz", "-p0  --fuzz=0")
	                PATCH(0, "p0.patch", "-p0  --fuzz=0"));
	expect_prep("%patch -P 0 -P 0",
	            PATCH(0, "p0.patch", "-p0  --fuzz=0") PATCH(0, "p0.patch", "-p0  --fuzz=0"));
}

KILN_TEST(prep_patch_options)
{
	expect_prep("%patch -p1 0", PATCH(0, "p0.patch", "-p1  --fuzz=0"));
	expect_prep("%patch -p 1 -R -E -Z 0", PATCH(0, "p0.patch", "-p1  --fuzz=0 -R -E -Z"));
	expect_prep("%patch -RE 0", PATCH(0, "p0.patch", "-p0  --fuzz=0 -R -E"));
	expect_prep("%patch -b .orig 0", PATCH(0, "p0.patch", "-p0 -b --suffix .orig --fuzz=0"));
	expect_prep("%patch -z .z 0", PATCH(0, "p0.patch", "-p0 -b --suffix .z --fuzz=0"));
	expect_prep("%patch -F 2 0", PATCH(0, "p0.patch", "-p0  --fuzz=2"));
	expect_prep("%patch -d sub -o out 0", PATCH(0, "p0.patch", "-p0  --fuzz=0 -d sub -o out"));
	/* -p and -F are popt integers: base prefixes count, and a negative fuzz drops it. */
	expect_prep("%patch -p01 0", PATCH(0, "p0.patch", "-p1  --fuzz=0"));
	expect_prep("%patch -p 010 0", PATCH(0, "p0.patch", "-p8  --fuzz=0"));
	expect_prep("%patch -p 0x2 0", PATCH(0, "p0.patch", "-p2  --fuzz=0"));
	expect_prep("%patch -F 03 0", PATCH(0, "p0.patch", "-p0  --fuzz=3"));
	expect_prep("%patch -F -1 0", PATCH(0, "p0.patch", "-p0 "));
}

KILN_TEST(prep_patch_default_fuzz)
{
	struct pt t;

	pt_init(&t);
	pt_define(&t, "_default_patch_fuzz 2");
	pt_ok(&t, PREP_HEAD "%patch 0\n");
	assert_string_equal(t.spec->sections[SPEC_SEC_PREP], PATCH(0, "p0.patch", "-p0  --fuzz=2"));
	/* rpmExpandNumeric: what is no number is 0. */
	pt_define(&t, "_default_patch_fuzz x");
	pt_ok(&t, PREP_HEAD "%patch 0\n");
	assert_string_equal(t.spec->sections[SPEC_SEC_PREP], PATCH(0, "p0.patch", "-p0  --fuzz=0"));
	pt_release(&t);
}

KILN_TEST(prep_patch_compression_is_read_from_the_file)
{
	static const char gz[] = "\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03\x01\x00\x00";
	struct kiln_err err = KILN_ERR_INIT;
	const char *dir = kiln_test_tmpdir();
	char path[512], def[600], want[2048];
	struct pt t;

	snprintf(path, sizeof(path), "%s/plain.patch", dir);
	assert_ok(util_write_atomic(path, "--- a/x\n+++ b/x\n", 16, 0644, &err), &err);
	snprintf(path, sizeof(path), "%s/z.patch", dir);
	assert_ok(util_write_atomic(path, gz, sizeof(gz) - 1, 0644, &err), &err);
	snprintf(path, sizeof(path), "%s/tiny.patch", dir);
	assert_ok(util_write_atomic(path, "x", 1, 0644, &err), &err);
	pt_init(&t);
	snprintf(def, sizeof(def), "_sourcedir %s", dir);
	pt_define(&t, def);
	pt_ok(&t, PT_HEAD "Patch0: plain.patch\nPatch1: z.patch\nPatch2: tiny.patch\n"
	                  "%description\nd\n%prep\n%patch 0 1 2\n");
	/* Plain text is redirected; a compressed file (by magic) is piped through the
	 * uncompressor; a file too short to tell is plain, with rpm's complaint. */
	snprintf(want, sizeof(want),
	         "echo \"Patch #0 (plain.patch):\"\n"
	         "/usr/bin/patch --no-backup-if-mismatch -f -p0  --fuzz=0 < %s/plain.patch\n\n"
	         "echo \"Patch #1 (z.patch):\"\n"
	         "{ /usr/lib/rpm/rpmuncompress %s/z.patch || echo patch_fail ; } | "
	         "/usr/bin/patch --no-backup-if-mismatch -f -p0  --fuzz=0\n\n"
	         "echo \"Patch #2 (tiny.patch):\"\n"
	         "/usr/bin/patch --no-backup-if-mismatch -f -p0  --fuzz=0 < %s/tiny.patch\n\n",
	         dir, dir, dir);
	assert_string_equal(t.spec->sections[SPEC_SEC_PREP], want);
	snprintf(want, sizeof(want), "error: File %s/tiny.patch is smaller than 13 bytes\n", dir);
	assert_string_equal(t.log, want);
	pt_release(&t);
}

KILN_TEST(prep_patch_errors)
{
	expect_prep_error("%patch -x 0", KILN_ESYNTAX, "unknown option: -x: patch -x 0");
	expect_prep_error("%patch -P", KILN_ESYNTAX, "missing argument: -P: patch -P");
	expect_prep_error("%patch -P 0 -P", KILN_ESYNTAX, "missing argument: -P: patch -P 0 -P");
	expect_prep_error("%patch 0 -z", KILN_ESYNTAX, "missing argument: -z: patch 0 -z");
	expect_prep_error("%patch x", KILN_ESYNTAX, "Invalid patch number x: patch x");
	expect_prep_error("%patch -P -1", KILN_ESYNTAX, "Invalid patch number -1: patch -P -1");
	expect_prep_error("%patchx", KILN_ESYNTAX, "Invalid patch number x: %patchx");
	expect_prep_error("%patch -p x 0", KILN_ESYNTAX, "invalid numeric value: x: patch -p x 0");
	expect_prep_error("%patch -F 1x 0", KILN_ESYNTAX,
	                  "invalid numeric value: 1x: patch -F 1x 0");
	expect_prep_error("%patch -p 99999999999 0", KILN_ESYNTAX,
	                  "number too large or too small: 99999999999: patch -p 99999999999 0");
	expect_prep_error("%patch 2", KILN_ENOTFOUND, "No patch number 2");
	/* rpm 4.20: both are errors (4.18 warned and applied patch 0, or patch N). Where %patch
	 * is a macro (4.20) its messages quote its name and arguments: "patch -p1". */
	expect_prep_error("%patch", KILN_ESYNTAX, "Patch number not specified: patch");
	expect_prep_error("%patch -p1", KILN_ESYNTAX, "Patch number not specified: patch -p1");
	expect_prep_error("%patch0", KILN_ESYNTAX,
	                  "%patchN is obsolete, use %patch N (or %patch -P N): %patch0");
	expect_prep_error("%patch1 -p1", KILN_ESYNTAX,
	                  "%patchN is obsolete, use %patch N (or %patch -P N): %patch1 -p1");
}

KILN_TEST(prep_errors_end_the_parse_and_name_their_line)
{
	struct pt t;

	/* rpm 6.0.2 raises them as macro errors, which end even rpmspec's forced parse (rpm
	 * 4.18 reported them and went on); the error names the macro's line, not the end of
	 * %prep. */
	pt_init(&t);
	assert_int_equal(pt_run(&t, PREP_HEAD "%patch 0\n%setup -a 9\necho end\n\n%build\necho b\n",
	                        SPEC_PARSE_FORCE),
	                 KILN_ENOTFOUND);
	assert_string_equal(t.err.msg, "No source number 9");
	assert_int_equal(t.err.line, 16);
	pt_release(&t);
	pt_init(&t);
	assert_int_equal(
	    pt_run(&t, PREP_HEAD "echo a\n%patch 2\necho b\n%build\n", SPEC_PARSE_FORCE),
	    KILN_ENOTFOUND);
	assert_string_equal(t.err.msg, "No patch number 2");
	assert_int_equal(t.err.line, 16);
	pt_release(&t);
	pt_init(&t);
	assert_int_equal(pt_run(&t, PREP_HEAD "%patch1 -p1\necho b\n%build\n", SPEC_PARSE_FORCE),
	                 KILN_ESYNTAX);
	assert_int_equal(t.err.line, 15);
	pt_release(&t);
}

KILN_TEST(prep_setup_unterminated_macro_in_directory)
{
	struct pt t;

	/* rpm expands %{buildsubdir} in the lines %setup writes: an unterminated %{ in the
	 * directory is reported ("Unterminated {"), the line stops there as rpm's expansion
	 * does, and %setup goes on. */
	pt_init(&t);
	assert_ok(pt_run(&t, PREP_HEAD "%setup -q -n a%%{b\n", 0), &t.err);
	assert_string_equal(t.spec->sections[SPEC_SEC_PREP],
	                    CD_BUILD "rm -rf 'a\n" UNPACK("", "a.tar.gz") "cd 'a\n" FIXPERMS);
	pt_assert_log(&t, "Unterminated {: {b");
	pt_release(&t);
}

/* ---------------------------------------------------------------------------------------- */
/* %autosetup and %autopatch: kiln's configs/macros (run from the source tree, as the test
 * suite is), which must give what rpm 4.18's macros give. */

static void autosetup_init(struct pt *t, const char *srcdir)
{
	struct kiln_err err = KILN_ERR_INIT;
	char def[600];
	size_t i;

	pt_init(t);
	assert_ok(macro_load_file(t->ctx, "configs/macros", MACRO_LEVEL_FILE, &err), &err);
	/* The file redefines what the tests pin; %autopatch checks files with posix.access. */
	for (i = 0; i < KILN_ARRAY_SIZE(pt_base_macros); i++)
		pt_define(t, pt_base_macros[i]);
	snprintf(def, sizeof(def), "_sourcedir %s", srcdir);
	pt_define(t, def);
	macro_ctx_set_restricted(t->ctx, false);
}

static void write_patches(const char *dir)
{
	static const char gz[] = "\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03\x01\x00\x00";
	struct kiln_err err = KILN_ERR_INIT;
	char path[512];

	snprintf(path, sizeof(path), "%s/p0.patch", dir);
	assert_ok(util_write_atomic(path, "--- a\n+++ b\n", 12, 0644, &err), &err);
	snprintf(path, sizeof(path), "%s/p1.patch.gz", dir);
	assert_ok(util_write_atomic(path, gz, sizeof(gz) - 1, 0644, &err), &err);
	snprintf(path, sizeof(path), "%s/p3.patch", dir);
	assert_ok(util_write_atomic(path, "--- c\n+++ d\n", 12, 0644, &err), &err);
}

/* What rpm 4.18's %autopatch gives for one patch with the plain "patch" SCM (its macros
 * start and end with newlines). */
static void apply(char *dst, size_t size, const char *dir, const char *file, const char *opts)
{
	size_t n = strlen(dst);

	snprintf(dst + n, size - n,
	         "\n/usr/lib/rpm/rpmuncompress %s/%s | \n/usr/bin/patch %s --fuzz=0 "
	         "--no-backup-if-mismatch -f\n\n",
	         dir, file, opts);
}

static void add(char *dst, size_t size, const char *s)
{
	size_t n = strlen(dst);

	snprintf(dst + n, size - n, "%s", s);
}

KILN_TEST(prep_autosetup)
{
	const char *dir = kiln_test_tmpdir();
	char want[4096];
	struct pt t;

	write_patches(dir);
	autosetup_init(&t, dir);
	pt_ok(&t, PREP_HEAD "%autosetup -p1\n");
	snprintf(want, sizeof(want),
	         "\n" CD_BUILD "rm -rf 't-1'\n/usr/lib/rpm/rpmuncompress -x %s/a.tar.gz\n"
	         "STATUS=$?\nif [ $STATUS -ne 0 ]; then\n  exit $STATUS\nfi\ncd 't-1'\n" FIXPERMS
	         "\n\n",
	         dir);
	apply(want, sizeof(want), dir, "p0.patch", "-p1 -s");
	apply(want, sizeof(want), dir, "p1.patch.gz", "-p1 -s");
	apply(want, sizeof(want), dir, "p3.patch", "-p1 -s");
	add(want, sizeof(want), "\n");
	assert_string_equal(t.spec->sections[SPEC_SEC_PREP], want);
	/* -N leaves the patches out. */
	pt_ok(&t, PREP_HEAD "%autosetup -N -n foo\n");
	snprintf(want, sizeof(want),
	         "\n" CD_BUILD "rm -rf 'foo'\n/usr/lib/rpm/rpmuncompress -x %s/a.tar.gz\n"
	         "STATUS=$?\nif [ $STATUS -ne 0 ]; then\n  exit $STATUS\nfi\ncd 'foo'\n" FIXPERMS
	         "\n\n\n",
	         dir);
	assert_string_equal(t.spec->sections[SPEC_SEC_PREP], want);
	pt_release(&t);
}

KILN_TEST(prep_autopatch)
{
	const char *dir = kiln_test_tmpdir();
	char want[4096];
	struct pt t;

	write_patches(dir);
	autosetup_init(&t, dir);
	/* In declaration order, or the numbers given; -m/-M bound the range; -v is verbose. */
	pt_ok(&t, PREP_HEAD "%autopatch -m 1\n");
	want[0] = '\0';
	apply(want, sizeof(want), dir, "p1.patch.gz", " -s");
	apply(want, sizeof(want), dir, "p3.patch", " -s");
	add(want, sizeof(want), "\n");
	assert_string_equal(t.spec->sections[SPEC_SEC_PREP], want);
	pt_ok(&t, PREP_HEAD "%autopatch -M 1 -v -p2\n");
	want[0] = '\0';
	apply(want, sizeof(want), dir, "p0.patch", "-p2 ");
	apply(want, sizeof(want), dir, "p1.patch.gz", "-p2 ");
	add(want, sizeof(want), "\n");
	assert_string_equal(t.spec->sections[SPEC_SEC_PREP], want);
	pt_ok(&t, PREP_HEAD "%autopatch 3 0\n");
	want[0] = '\0';
	apply(want, sizeof(want), dir, "p3.patch", " -s");
	apply(want, sizeof(want), dir, "p0.patch", " -s");
	add(want, sizeof(want), "\n");
	assert_string_equal(t.spec->sections[SPEC_SEC_PREP], want);
	pt_ok(&t, PREP_HEAD "%autopatch -m 5\n");
	assert_string_equal(t.spec->sections[SPEC_SEC_PREP], "\n");
	pt_release(&t);
}

KILN_TEST(prep_autopatch_errors)
{
	const char *dir = kiln_test_tmpdir();
	struct pt t;

	autosetup_init(&t, dir);
	/* An error of the macros, which rpm 4.18 reports and goes on after (even rpmbuild). */
	pt_ok(&t, PREP_HEAD "%autopatch 7\n");
	pt_assert_log(&t, "no such patch 7");
	/* A patch file that cannot be read makes the script fail when it runs. */
	pt_ok(&t, PREP_HEAD "%autopatch 0\n");
	assert_non_null(strstr(t.spec->sections[SPEC_SEC_PREP], "echo 'Cannot read "));
	pt_release(&t);
}
