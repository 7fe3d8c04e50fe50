/*
 * test_files.c - spec/files.c: %files lines as entries, and %files -f lists added with
 * spec_files_add_text() (the section's %defattr in force, errors naming the list's line).
 */
#include "util/util.h"

#include "macro/macro.h"
#include "spec/spec.h"
#include "tests/unit/harness.h"
#include "tests/unit/spec/spec_test.h"

KILN_TEST(files_globs_keep_literal_glob_characters)
{
	struct pt t;
	struct spec *s;
	const struct spec_files_entry *e;

	pt_init(&t);
	s = pt_ok(&t, PT_MAIN "%files\n/a/*.so\n\"/b/x*y\"\n/c/d\\*e\n");
	e = s->packages[0]->files;
	assert_string_equal(e[0].globs[0], "/a/*.so");
	assert_string_equal(e[1].paths[0], "/b/x*y");
	assert_string_equal(e[1].globs[0], "/b/x\\*y");
	assert_string_equal(e[2].paths[0], "/c/d*e");
	assert_string_equal(e[2].globs[0], "/c/d\\*e");
	pt_release(&t);
}

KILN_TEST(files_attr_given_and_verify_flags)
{
	struct pt t;
	struct spec *s;
	const struct spec_files_entry *e;

	pt_init(&t);
	s = pt_ok(&t, PT_MAIN "%files\n%attr(-,-,-) /a\n%defverify(not md5)\n/b\n%verify() /c\n");
	e = s->packages[0]->files;
	assert_true(e[0].attr.given);
	assert_int_equal(e[0].attr.set, 0);
	assert_false(e[0].defattr.given);
	assert_true(e[1].flags & SPEC_ENTRY_DEFVERIFY);
	assert_int_equal(e[1].verifyflags, ~(uint32_t)SPEC_VERIFY_FILEDIGEST);
	/* An empty %verify() verifies nothing (it is not "use the default"). */
	assert_true(e[2].flags & SPEC_ENTRY_VERIFY);
	assert_int_equal(e[2].verifyflags, 0);
	assert_int_equal(s->packages[0]->files_defverify, ~(uint32_t)SPEC_VERIFY_FILEDIGEST);
	pt_release(&t);
}

KILN_TEST(files_add_text_defattr_macros_comments)
{
	struct pt t;
	struct spec *s;
	struct spec_package *pkg;
	struct kiln_err err = KILN_ERR_INIT;
	const char *list = "# %{nothing} here\n\n%{dir}/a\n%attr(0600,-,-) \"%{dir}/b c\"\n";

	pt_init(&t);
	pt_define(&t, "dir /usr/x");
	s = pt_ok(&t, PT_MAIN "%files\n%defattr(0640,bin,bin,0750)\n/first\n");
	pkg = s->packages[0];
	assert_ok(spec_files_add_text(s, pkg, "/b/l.list", list, strlen(list), &err), &err);
	assert_int_equal(pkg->nfiles, 3);
	assert_string_equal(pkg->files[1].paths[0], "/usr/x/a");
	assert_string_equal(pkg->files[1].file, "/b/l.list");
	assert_int_equal(pkg->files[1].line, 3);
	assert_int_equal(pkg->files[1].defattr.mode, 0640);
	assert_string_equal(pkg->files[1].defattr.user, "bin");
	assert_string_equal(pkg->files[2].paths[0], "/usr/x/b c");
	assert_int_equal(pkg->files[2].attr.mode, 0600);
	assert_null(pkg->files[0].file);
	pt_release(&t);
}

KILN_TEST(files_add_text_errors)
{
	struct pt t;
	struct spec *s;
	struct kiln_err err = KILN_ERR_INIT;
	const char *bad = "/a\n%{error:broken}\n";

	pt_init(&t);
	s = pt_ok(&t, PT_MAIN "%files\n/first\n");
	assert_int_equal(spec_files_add_text(s, s->packages[0], "e.list", "", 0, &err),
	                 KILN_ESYNTAX);
	assert_string_equal(err.msg, "Empty %files file e.list");
	kiln_err_clear(&err);
	assert_int_equal(spec_files_add_text(s, s->packages[0], "# only\n", "# only\n", 7, &err),
	                 KILN_ESYNTAX);
	kiln_err_clear(&err);
	pt_define(&t, "_empty_manifest_terminate_build 0");
	assert_ok(spec_files_add_text(s, s->packages[0], "e.list", "", 0, &err), &err);
	assert_non_null(strstr(t.log, "warning: Empty %files file e.list"));
	assert_int_not_equal(
	    spec_files_add_text(s, s->packages[0], "m.list", bad, strlen(bad), &err), KILN_OK);
	assert_string_equal(err.input, "m.list");
	assert_int_equal(err.line, 2);
	pt_release(&t);
}
