/*
 * test_parse.c - spec/parse.c: the section dispatcher, %package, the option splitter,
 * the BuildArch re-parse, %end and translated strings. Expected values come from Debian's
 * rpmspec 4.18 unless a comment cites a later rpm.
 */
#include "util/util.h"

#include "tests/unit/spec/spec_test.h"

KILN_TEST(parse_packages_and_names)
{
	struct pt t;
	struct spec *s;

	pt_init(&t);
	s = pt_ok(&t, PT_MAIN "%package sub\nSummary: a\n%description sub\nx\n"
	                      "%package -n other\nSummary: b\n%description -n other\ny\n");
	assert_int_equal(s->npackages, 3);
	assert_true(s->packages[0]->is_main);
	assert_string_equal(s->packages[0]->name, "t");
	assert_int_equal(s->packages[0]->line, 0);
	assert_string_equal(s->packages[1]->name, "t-sub");
	assert_false(s->packages[1]->is_main);
	assert_int_equal(s->packages[1]->line, 8);
	assert_string_equal(pt_tag_str(s->packages[1], RPMTAG_NAME), "t-sub");
	assert_string_equal(s->packages[2]->name, "other");
	assert_string_equal(pt_tag_str(s->packages[2], RPMTAG_DESCRIPTION), "y");
	/* Only packages with %files are built. */
	assert_false(s->packages[1]->has_files);
	/* A subpackage name may start with anything a name may contain. */
	s = pt_ok(&t, PT_MAIN "%package -foo\nSummary: a\n%description -n t--foo\nx\n");
	assert_string_equal(s->packages[1]->name, "t--foo");
	pt_release(&t);
}

KILN_TEST(parse_package_errors)
{
	pt_expect_fail(PT_MAIN "%package\n", KILN_ESYNTAX, 8,
	               "Bad package specification: %package");
	pt_expect_fail(PT_MAIN "%package -n\n", KILN_ESYNTAX, 8,
	               "Bad package specification: %package -n");
	pt_expect_fail(PT_MAIN "%package a b\n", KILN_ESYNTAX, 8,
	               "Bad package specification: %package a b");
	pt_expect_fail(PT_MAIN "%package -n a b\n", KILN_ESYNTAX, 8,
	               "Bad package specification: %package -n a b");
	/* rpm splits the line at blanks only: quotes and backslashes are no help. */
	pt_expect_fail(PT_MAIN "%package \"a b\"\n", KILN_ESYNTAX, 8,
	               "Bad package specification: %package \"a b\"");
	pt_expect_fail(PT_MAIN "%package a\\ b\n", KILN_ESYNTAX, 8,
	               "Bad package specification: %package a\\ b");
	pt_expect_fail(PT_MAIN "%package \"ab\"\n", KILN_ESYNTAX, 8,
	               "Illegal char '\"' (0x22) in: %package \"ab\"");
	pt_expect_fail(PT_MAIN "%package a/b\n", KILN_ESYNTAX, 8,
	               "Illegal char '/' (0x2f) in: %package a/b");
	/* -n names follow Name:'s rule for the first character. */
	pt_expect_fail(PT_MAIN "%package -n -x\n", KILN_ESYNTAX, 8,
	               "Illegal char '-' (0x2d) in: %package -n -x");
	pt_expect_fail(PT_MAIN "%package -n t-a\nSummary: x\n%description -n t-a\nd\n%package a\n",
	               KILN_EEXIST, 12, "%package a: package t-a already exists");
	/* A subpackage must be complete at the end of its preamble. */
	pt_expect_fail(PT_MAIN "%package a\n%package b\n", KILN_ESYNTAX, 9,
	               "Summary field must be present in package: t-a");
}

KILN_TEST(parse_sections_find_their_package)
{
	pt_expect_fail(PT_MAIN "%files nosuch\n", KILN_ENOTFOUND, 8,
	               "%files nosuch: package t-nosuch does not exist");
	pt_expect_fail(PT_MAIN "%description -n nosuch\nx\n", KILN_ENOTFOUND, 8,
	               "%description -n nosuch: package nosuch does not exist");
	pt_expect_fail(PT_MAIN "%post nosuch\n", KILN_ENOTFOUND, 8,
	               "%post nosuch: package t-nosuch does not exist");
}

KILN_TEST(parse_option_splitting)
{
	struct pt t;
	struct spec *s;
	const struct spec_script *sc;

	pt_init(&t);
	/* popt rules: quotes group, a backslash escapes outside quotes; inside them only the
	 * quote character, so "\n" keeps its backslash; empty words vanish. */
	s = pt_ok(&t, PT_MAIN "%files -f \"a b\" -f c\\ d -f 'e\\f' -f \"g\\\"h\" \"\"\n"
	                      "%post -p \"/bin/sh -x\"\n:\n");
	assert_int_equal(s->packages[0]->nfile_lists, 4);
	assert_string_equal(s->packages[0]->file_lists[0], "a b");
	assert_string_equal(s->packages[0]->file_lists[1], "c d");
	assert_string_equal(s->packages[0]->file_lists[2], "e\\f");
	assert_string_equal(s->packages[0]->file_lists[3], "g\"h");
	sc = &s->packages[0]->scripts[0];
	assert_int_equal(sc->nprog, 2);
	assert_string_equal(sc->prog[0], "/bin/sh");
	assert_string_equal(sc->prog[1], "-x");
	/* An unterminated quote is no error: the word runs to the end of the line. */
	s = pt_ok(&t, PT_MAIN "%files -f \"x y\n");
	assert_string_equal(s->packages[0]->file_lists[0], "x y");
	s = pt_ok(&t, PT_MAIN "%post -p \"/bin/sh\n:\n");
	assert_string_equal(s->packages[0]->scripts[0].prog[0], "/bin/sh");
	pt_release(&t);
}

KILN_TEST(parse_option_splitting_trailing_backslash)
{
	/* Only a macro can put a backslash at the very end of a header line. */
	pt_expect_fail(PT_MAIN "%files -f a%{lua:print(string.char(92))}\n", KILN_ESYNTAX, 8,
	               "Error parsing %files: error in parameter quoting");
	pt_expect_fail(PT_MAIN "%description -l de%{lua:print(string.char(92))}\nx\n", KILN_ESYNTAX,
	               8, "Error parsing %description: error in parameter quoting");
	pt_expect_fail(PT_MAIN "%post -p /bin/sh%{lua:print(string.char(92))}\nx\n", KILN_ESYNTAX,
	               8, "Error parsing %post: error in parameter quoting");
}

KILN_TEST(parse_buildarch_reparses_the_spec)
{
	struct pt t;
	struct spec *s;

	pt_init(&t);
	/* The whole spec is read again with %_target_cpu set to the BuildArch, so lines above
	 * the tag see noarch too, and Lua state persists over both passes. */
	s = pt_ok(&t, PT_HEAD "URL: %{_target_cpu}-%{lua: n = (n or 0) + 1; print(n)}\n"
	                      "BuildArch: noarch\nVendor: %{_target_cpu}\n%description\nd\n");
	assert_string_equal(pt_tag_str(s->packages[0], RPMTAG_URL), "noarch-2");
	assert_string_equal(pt_tag_str(s->packages[0], RPMTAG_VENDOR), "noarch");
	assert_string_equal(pt_tag_str(s->packages[0], RPMTAG_ARCH), "noarch");
	assert_int_equal(s->nbuildarchs, 1);
	assert_string_equal(s->buildarchs[0], "noarch");
	assert_string_equal(pt_tag_stri(s->srctags, RPMTAG_BUILDARCHS, 0), "noarch");
	/* The parsed text is the second pass only. */
	assert_string_equal(s->parsed.ptr, PT_HEAD "URL: noarch-2\nBuildArch: noarch\n"
	                                           "Vendor: noarch\n%description\nd\n");
	/* The caller's %_target_cpu is back afterwards. */
	assert_string_equal(macro_body_get(t.ctx, "_target_cpu"), "x86_64");
	/* The first buildable architecture wins; the others need not be buildable. */
	s = pt_ok(&t, PT_HEAD "BuildArch: s390x noarch x86_64\n%description\nd\n");
	assert_string_equal(pt_tag_str(s->packages[0], RPMTAG_ARCH), "noarch");
	assert_int_equal(s->nbuildarchs, 3);
	s = pt_ok(&t, PT_HEAD "BuildArch: x86_64\n%description\nd\n");
	assert_string_equal(pt_tag_str(s->packages[0], RPMTAG_ARCH), "x86_64");
	pt_release(&t);
}

KILN_TEST(parse_buildarch_errors)
{
	/* Without an rpmrc only noarch and %_target_cpu itself can be built. */
	pt_expect_fail(PT_HEAD "BuildArch: s390x\n%description\nd\n", KILN_ESYNTAX, 0,
	               "No compatible architectures found for build");
	pt_expect_fail(PT_HEAD "BuildArch: noarch\nBuildArch: noarch\n%description\nd\n",
	               KILN_ESYNTAX, 7, "Duplicate BuildArch entry: BuildArch: noarch");
	pt_expect_fail(PT_MAIN "%package a\nSummary: a\nBuildArch: x86_64\n", KILN_ESYNTAX, 10,
	               "Only noarch subpackages are supported: BuildArch: x86_64");
}

KILN_TEST(parse_noarch_subpackage)
{
	struct pt t;
	struct spec *s;

	pt_init(&t);
	s = pt_ok(&t, PT_MAIN "%package a\nSummary: a\nBuildArch: noarch\n%description a\na\n");
	assert_string_equal(pt_tag_str(s->packages[0], RPMTAG_ARCH), "x86_64");
	assert_string_equal(pt_tag_str(s->packages[1], RPMTAG_ARCH), "noarch");
	/* Not a BuildArch of the spec: no re-parse, no BUILDARCHS in the source package. */
	assert_int_equal(s->nbuildarchs, 0);
	assert_int_equal(pt_tag_count(s->srctags, RPMTAG_BUILDARCHS), 0);
	pt_release(&t);
}

KILN_TEST(parse_end_closes_a_section)
{
	struct pt t;
	struct spec *s;

	pt_init(&t);
	/* rpm 6.0's %end (rpm-spec(5): "%SECTION ... [%end]"): it closes the section; up to
	 * the next header only blank lines and comments may follow. */
	s = pt_ok(&t, PT_HEAD "%end\n\n# c\n%description\nd\n%end\n%build\nx\n%end\n\n%files\n/a\n"
	                      "%end\n");
	assert_string_equal(pt_tag_str(s->packages[0], RPMTAG_DESCRIPTION), "d");
	assert_string_equal(s->sections[SPEC_SEC_BUILD], "x\n");
	assert_int_equal(s->packages[0]->nfiles, 1);
	pt_fail(&t, PT_MAIN "%end\n%end\n", KILN_ESYNTAX, 9,
	        "%end not expected here, no section to close: %end");
	pt_fail(&t, PT_MAIN "%end x\n", KILN_ESYNTAX, 8, "%end doesn't take any arguments: %end x");
	/* rpm's message has no colon after the number: it stays in the text. */
	pt_fail(&t, PT_MAIN "%end\nstray\n", KILN_ESYNTAX, 9,
	        "line 9 doesn't belong to any section: stray");
	pt_release(&t);
}

KILN_TEST(parse_i18n_strings)
{
	struct pt t;
	struct spec *s;
	const struct rpmtag_set *ts;

	pt_init(&t);
	s = pt_ok(&t,
	          PT_HEAD "Summary(de): Zus\nSummary(fr): Res\nGroup(de): G\n"
	                  "%description -l fr\nfr d\n%description\nd\n%description -l de\nde d\n");
	ts = s->packages[0]->tags;
	/* The locale table grows in order of first use; each string tag has one element per
	 * locale up to the last one it uses, "" where unset. */
	assert_int_equal(pt_tag_count(ts, RPMTAG_HEADERI18NTABLE), 3);
	assert_string_equal(pt_tag_stri(ts, RPMTAG_HEADERI18NTABLE, 0), "C");
	assert_string_equal(pt_tag_stri(ts, RPMTAG_HEADERI18NTABLE, 1), "de");
	assert_string_equal(pt_tag_stri(ts, RPMTAG_HEADERI18NTABLE, 2), "fr");
	assert_int_equal(pt_tag_count(ts, RPMTAG_SUMMARY), 3);
	assert_string_equal(pt_tag_stri(ts, RPMTAG_SUMMARY, 0), "s");
	assert_string_equal(pt_tag_stri(ts, RPMTAG_SUMMARY, 1), "Zus");
	assert_string_equal(pt_tag_stri(ts, RPMTAG_SUMMARY, 2), "Res");
	/* Group(de) alone makes a GROUP whose C string is empty: no "Unspecified" then. */
	assert_int_equal(pt_tag_count(ts, RPMTAG_GROUP), 2);
	assert_string_equal(pt_tag_stri(ts, RPMTAG_GROUP, 0), "");
	assert_string_equal(pt_tag_stri(ts, RPMTAG_GROUP, 1), "G");
	assert_int_equal(pt_tag_count(ts, RPMTAG_DESCRIPTION), 3);
	assert_string_equal(pt_tag_stri(ts, RPMTAG_DESCRIPTION, 0), "d");
	assert_string_equal(pt_tag_stri(ts, RPMTAG_DESCRIPTION, 1), "de d");
	assert_string_equal(pt_tag_stri(ts, RPMTAG_DESCRIPTION, 2), "fr d");
	{
		struct rpmtag_qf_value v;

		assert_true(rpmtag_set_get(ts, RPMTAG_SUMMARY, &v));
		assert_int_equal(v.type, RPMTAG_TYPE_I18NSTRING);
	}
	pt_release(&t);
}

KILN_TEST(parse_i18n_second_strings_warn)
{
	struct pt t;
	struct spec *s;

	pt_init(&t);
	s = pt_ok(&t, "Name: t\nVersion: 1\nRelease: 1\nSummary: s\nSummary: s2\nSummary(de): a\n"
	              "Summary(de): b\nLicense: MIT\n%description\nd\n%description\ne\n");
	pt_assert_log(&t, "warning: line 5: second Summary\n");
	pt_assert_log(&t, "warning: line 7: second Summary\n");
	pt_assert_log(&t, "warning: line 12: second Description\n");
	/* The later one wins. */
	assert_string_equal(pt_tag_stri(s->packages[0]->tags, RPMTAG_SUMMARY, 0), "s2");
	assert_string_equal(pt_tag_stri(s->packages[0]->tags, RPMTAG_SUMMARY, 1), "b");
	assert_string_equal(pt_tag_str(s->packages[0], RPMTAG_DESCRIPTION), "e");
	/* Another language is no second one. */
	s = pt_ok(&t, PT_MAIN "%description -l de\nx\n");
	assert_null(strstr(t.log, "second"));
	pt_release(&t);
}

KILN_TEST(parse_file_and_missing_file)
{
	struct kiln_err err = KILN_ERR_INIT;
	const char *dir = kiln_test_tmpdir();
	char path[512];
	struct pt t;
	struct spec *s = NULL;

	snprintf(path, sizeof(path), "%s/f.spec", dir);
	assert_ok(util_write_atomic(path, PT_MAIN, strlen(PT_MAIN), 0644, &err), &err);
	pt_init(&t);
	assert_ok(spec_parse_file(path, t.ctx, 0, &s, &err), &err);
	assert_string_equal(s->path, path);
	assert_string_equal(s->packages[0]->name, "t");
	spec_free(s);
	s = NULL;
	snprintf(path, sizeof(path), "%s/none.spec", dir);
	assert_int_equal(spec_parse_file(path, t.ctx, 0, &s, &err), KILN_ENOTFOUND);
	assert_null(s);
	pt_release(&t);
}

KILN_TEST(parse_without_an_error_struct)
{
	struct pt t;
	struct spec *s = (struct spec *)&t; /* must be reset */

	pt_init(&t);
	assert_int_equal(spec_parse_mem("x.spec", "Foo: bar\n", 9, t.ctx, 0, &s, NULL),
	                 KILN_ESYNTAX);
	assert_null(s);
	/* An empty text is a spec without a name. */
	pt_fail(&t, "", KILN_ESYNTAX, 0, "Name field must be present in package: (main package)");
	pt_release(&t);
}

KILN_TEST(parse_per_spec_state_is_reset)
{
	struct pt t;
	struct spec *s;

	pt_init(&t);
	s = pt_ok(&t, PT_HEAD "Source: a.tgz\nSource1: b.tgz\n%description\nd\n");
	assert_int_equal(s->nsources, 2);
	/* The Lua source tables are per spec; %_docdir is set again for each spec. */
	s = pt_ok(&t, PT_HEAD "Source: c.tgz\nURL: %{lua: print(#sources)}\nDocDir: /opt/doc\n"
	                      "%description\nd\n");
	assert_string_equal(pt_tag_str(s->packages[0], RPMTAG_URL), "1");
	s = pt_ok(&t, PT_HEAD "URL: %{_docdir}|%{_licensedir}\n%description\nd\n");
	assert_string_equal(pt_tag_str(s->packages[0], RPMTAG_URL),
	                    "/usr/share/doc|/usr/share/licenses");
	pt_release(&t);
}

KILN_TEST(parse_section_and_script_names)
{
	assert_string_equal(spec_section_name(SPEC_SEC_PREP), "prep");
	assert_string_equal(spec_section_name(SPEC_SEC_BUILDREQUIRES), "generate_buildrequires");
	assert_string_equal(spec_section_name(SPEC_SEC_CLEAN), "clean");
	assert_string_equal(spec_section_name(SPEC_SEC_COUNT), "?");
	assert_string_equal(spec_script_name(SPEC_SCRIPT_PRE), "pre");
	assert_string_equal(spec_script_name(SPEC_SCRIPT_VERIFY), "verifyscript");
	assert_string_equal(spec_script_name(SPEC_SCRIPT_TRANSFILETRIGGERPOSTUN),
	                    "transfiletriggerpostun");
	assert_string_equal(spec_script_name(SPEC_SCRIPT_COUNT), "?");
}
