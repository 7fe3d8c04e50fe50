/*
 * test_read.c - spec/read.c: logical lines, strip modes, conditionals, %include and the
 * parsed text. Expected values come from Debian's rpmspec -P (rpm 4.18) unless a comment
 * cites rpm 4.20.
 */
#include "util/util.h"

#include "tests/unit/spec/spec_test.h"

KILN_TEST(read_preamble_strips_comments_and_trailing_blanks)
{
	/* A comment line becomes an empty line, an indented one its indentation (rpm cuts at
	 * the '#' but measured the trailing blanks on the whole line), trailing blanks go. */
	pt_expect_parsed(PT_HEAD "# c1\n  # c2\nURL: http://x   \n%description\nd  \n  # c3\n\n",
	                 PT_HEAD "\n  \nURL: http://x\n%description\nd\n  \n\n");
}

KILN_TEST(read_description_text_is_stripped)
{
	struct pt t;

	pt_init(&t);
	pt_ok(&t, PT_HEAD "%description\n  first  \n# gone\n\nsecond\n\n\n");
	/* Comment lines leave empty lines, trailing blank lines are dropped. */
	assert_string_equal(pt_tag_str(t.spec->packages[0], RPMTAG_DESCRIPTION),
	                    "  first\n\n\nsecond");
	pt_release(&t);
}

KILN_TEST(read_build_sections_keep_comments_and_blanks)
{
	struct pt t;

	pt_init(&t);
	pt_ok(&t, PT_MAIN "%build\n# b1 %{name}\n  # b2  \necho  \n\n");
	/* Comments are shell comments there: kept, macro-expanded, trailing blanks too. */
	assert_string_equal(t.spec->sections[SPEC_SEC_BUILD], "# b1 t\n  # b2  \necho  \n\n");
	assert_string_equal(t.spec->parsed.ptr, PT_MAIN "%build\n# b1 t\n  # b2  \necho  \n\n");
	pt_release(&t);
}

KILN_TEST(read_files_and_changelog_comments_vanish)
{
	/* Only comments are stripped there: a comment line disappears with its newline, so an
	 * indented comment's blanks end up in front of the next line. */
	pt_expect_parsed(PT_MAIN "%files\n# f1\n  # f2\n/a\n  # f3\n%changelog\n",
	                 PT_MAIN "%files\n  /a\n  %changelog\n");
}

KILN_TEST(read_backslash_continues_a_line)
{
	struct pt t;

	pt_init(&t);
	pt_ok(&t, PT_MAIN "%build\necho 1 \\\n  2\necho 3\n");
	/* The physical lines are joined for expansion but handed out one by one. */
	assert_string_equal(t.spec->sections[SPEC_SEC_BUILD], "echo 1 \\\n  2\necho 3\n");
	pt_release(&t);
}

KILN_TEST(read_open_macro_continues_a_line)
{
	struct pt t;

	pt_init(&t);
	/* An unclosed %{ %( %[ pulls in the next line; the expansion may give several lines. */
	pt_ok(&t, PT_MAIN "%build\n%{expand:x\ny}\n%[1 +\n2]\n%{lua:print(\n\"z\")}\n");
	assert_string_equal(t.spec->sections[SPEC_SEC_BUILD], "x\ny\n3\nz\n");
	pt_release(&t);
}

KILN_TEST(read_continued_tag_keeps_the_backslash)
{
	/* The tag sees "a, \" and rpm names the last physical line of the logical line. */
	pt_expect_fail(PT_HEAD "Requires: a, \\\n  b\n", KILN_ESYNTAX, 7,
	               "Dependency tokens must begin with alpha-numeric, '_' or '/': "
	               "Requires: a, \\");
}

KILN_TEST(read_unclosed_macro_at_end_of_file)
{
	/* The line named is the first one of the unfinished logical line. */
	pt_expect_fail(PT_HEAD "URL: %{foo\nbar\n", KILN_ESYNTAX, 6,
	               "unclosed macro or bad line continuation");
	pt_expect_fail(PT_MAIN "%build\necho \\\n", KILN_ESYNTAX, 9,
	               "unclosed macro or bad line continuation");
}

KILN_TEST(read_last_line_without_newline)
{
	struct pt t;

	pt_init(&t);
	pt_ok(&t, PT_MAIN "%build\nmake");
	assert_string_equal(t.spec->sections[SPEC_SEC_BUILD], "make");
	assert_string_equal(t.spec->parsed.ptr, PT_MAIN "%build\nmake");
	pt_release(&t);
}

KILN_TEST(read_if_expression_continues_over_lines)
{
	struct pt t;

	pt_init(&t);
	/* A backslash-newline inside %if/%elif is blank space to the expression; the
	 * directive is one (empty) line of the parsed text. */
	pt_ok(&t, PT_HEAD "%if 1 && \\\n  0\nURL: no\n%elif 2 \\\n  > 1\nURL: yes\n%else\nURL: "
	                  "else\n%endif\n%description\nd\n");
	assert_string_equal(pt_tag_str(t.spec->packages[0], RPMTAG_URL), "yes");
	assert_string_equal(t.spec->parsed.ptr, PT_HEAD "\n\n\nURL: yes\n\n\n\n%description\nd\n");
	pt_release(&t);
}

KILN_TEST(read_false_branches_are_empty_lines_in_text_sections)
{
	struct pt t;

	pt_init(&t);
	pt_ok(&t, PT_HEAD "%description\nd\n%if 0\nhidden\n%endif\nshown\n");
	/* In a %description the directive and the skipped lines are blank lines. */
	assert_string_equal(pt_tag_str(t.spec->packages[0], RPMTAG_DESCRIPTION), "d\n\n\n\nshown");
	assert_string_equal(t.spec->parsed.ptr, PT_HEAD "%description\nd\n\n\n\nshown\n");
	pt_release(&t);
}

KILN_TEST(read_false_branches_vanish_from_scripts)
{
	struct pt t;

	pt_init(&t);
	pt_ok(&t, PT_MAIN "%build\na\n%if 0\nb\n%else\nc\n%endif\nd\n%global g 1\ne\n");
	assert_string_equal(t.spec->sections[SPEC_SEC_BUILD], "a\nc\nd\ne\n");
	assert_string_equal(t.spec->parsed.ptr, PT_MAIN "%build\na\nc\nd\ne\n");
	pt_release(&t);
}

KILN_TEST(read_false_branches_are_not_expanded)
{
	struct pt t;

	pt_init(&t);
	pt_ok(&t, PT_MAIN "%if 0\n%{error:never}\n%global g 1\n%if %{error:nested}\n%endif\n"
	                  "%elif %{?g:1}0\nURL: x\n%endif\n");
	assert_false(macro_is_defined(t.ctx, "g"));
	assert_null(pt_tag_str(t.spec->packages[0], RPMTAG_URL));
	pt_release(&t);
}

/* The URL a preamble with conditionals selects. */
static void expect_url(const char *conds, const char *want)
{
	struct pt t;
	struct kiln_buf text = KILN_BUF_INIT(KILN_MIB);

	kiln_buf_addf(&text, PT_HEAD "%s%%description\nd\n", conds);
	pt_init(&t);
	pt_ok(&t, text.ptr);
	if (!want)
		assert_null(pt_tag_str(t.spec->packages[0], RPMTAG_URL));
	else
		assert_string_equal(pt_tag_str(t.spec->packages[0], RPMTAG_URL), want);
	kiln_buf_release(&text);
	pt_release(&t);
}

KILN_TEST(read_if_elif_else_chains)
{
	expect_url("%if 0\nURL: a\n%elif 1\nURL: b\n%elif 1\nURL: c\n%else\nURL: d\n%endif\n", "b");
	expect_url("%if 1\nURL: a\n%elif 1\nURL: b\n%else\nURL: d\n%endif\n", "a");
	expect_url("%if 0\nURL: a\n%elif 0\nURL: b\n%else\nURL: d\n%endif\n", "d");
	expect_url("%if 0\nURL: a\n%elif 0\nURL: b\n%endif\n", NULL);
	/* Nested: an inner branch is read only when every enclosing one is. */
	expect_url("%if 1\n%if 0\n%elif 0\n%else\nURL: x\n%endif\n%endif\n", "x");
	expect_url("%if 0\n%if 1\nURL: x\n%else\nURL: y\n%endif\n%else\nURL: z\n%endif\n", "z");
	/* Strings, versions, and rpm's equal-precedence && || (left to right). */
	expect_url("%if \"%{name}\" == \"t\"\nURL: s\n%endif\n", "s");
	expect_url("%if v\"1.10\" > v\"1.9\"\nURL: v\n%endif\n", "v");
	expect_url("%if 1 || 0 && 0\nURL: p\n%else\nURL: q\n%endif\n", "q");
	expect_url("%if %{?undefined_macro}0\nURL: p\n%else\nURL: q\n%endif\n", "q");
}

KILN_TEST(read_arch_and_os_conditionals)
{
	/* %_target_cpu is x86_64 and %_target_os linux; tokens match case-insensitively. */
	expect_url("%ifarch i386 X86_64\nURL: a\n%endif\n", "a");
	expect_url("%ifarch x86_64,i386\nURL: a\n%endif\n", NULL);
	expect_url("%ifnarch x86_64\nURL: a\n%elifarch s390 x86_64\nURL: b\n%endif\n", "b");
	expect_url("%ifnarch s390\nURL: a\n%endif\n", "a");
	expect_url("%ifos Linux\nURL: a\n%endif\n", "a");
	expect_url("%ifnos linux\nURL: a\n%elifos darwin\nURL: b\n%else\nURL: c\n%endif\n", "c");
	expect_url("%ifnos darwin\nURL: a\n%endif\n", "a");
	/* The arguments are expanded with the line. */
	expect_url("%global arches aarch64 x86_64\n%ifarch %{arches}\nURL: m\n%endif\n", "m");
	/* Only a leading '#' makes a comment: "# c" here is two more tokens. */
	expect_url("%ifarch # c\nURL: a\n%else\nURL: b\n%endif\n", "b");
}

KILN_TEST(read_arch_conditional_needs_an_argument)
{
	/* rpm 4.20 recognises "%ifarch" at the end of a line (4.18 took it for a tag). */
	pt_expect_fail(PT_HEAD "%ifarch\n%endif\n", KILN_ESYNTAX, 6,
	               "Argument expected for %ifarch");
	pt_expect_fail(PT_HEAD "%if 0\n%elifos\n%endif\n", KILN_ESYNTAX, 7,
	               "Argument expected for %elifos");
}

KILN_TEST(read_arch_conditional_with_only_a_newline_after_it)
{
	struct pt t;

	pt_init(&t);
	/* In a script the newline is part of the line: "%ifarch \n" has a (blank) argument
	 * that matches nothing, and "%ifarch\n" is no directive at all. */
	pt_ok(&t, PT_MAIN "%build\n%ifarch \nA\n%endif\nB\n");
	assert_string_equal(t.spec->sections[SPEC_SEC_BUILD], "B\n");
	pt_fail(&t, PT_MAIN "%build\n%ifarch\nA\n%endif\n", KILN_ESYNTAX, 11, "%endif with no %if");
	pt_release(&t);
}

KILN_TEST(read_conditional_errors)
{
	pt_expect_fail(PT_HEAD "%if 1\nURL: x\n", KILN_ESYNTAX, 6, "Unclosed %if");
	pt_expect_fail(PT_HEAD "%if 1\n%if 1\n%endif\n", KILN_ESYNTAX, 6, "Unclosed %if");
	pt_expect_fail(PT_HEAD "%endif\n", KILN_ESYNTAX, 6, "%endif with no %if");
	pt_expect_fail(PT_HEAD "%else\n", KILN_ESYNTAX, 6, "%else with no %if");
	pt_expect_fail(PT_HEAD "%elif 1\n", KILN_ESYNTAX, 6, "%elif with no %if");
	pt_expect_fail(PT_HEAD "%elifarch x86_64\n", KILN_ESYNTAX, 6, "%elifarch with no %if");
	pt_expect_fail(PT_HEAD "%elifos linux\n", KILN_ESYNTAX, 6, "%elifos with no %if");
	pt_expect_fail(PT_HEAD "%if 1\n%else\n%else\n%endif\n", KILN_ESYNTAX, 8,
	               "%else after %else");
	pt_expect_fail(PT_HEAD "%if 1\n%else\n%elif 1\n%endif\n", KILN_ESYNTAX, 8,
	               "%elif after %else");
	pt_expect_fail(PT_HEAD "%ifarch x\n%else\n%elifarch y\n%endif\n", KILN_ESYNTAX, 8,
	               "%elifarch after %else");
	/* An %if in a false branch is not evaluated, but still has to be closed. */
	pt_expect_fail(PT_HEAD "%if 0\n%if garbage(\n%endif\n", KILN_ESYNTAX, 6, "Unclosed %if");
}

KILN_TEST(read_bad_conditions)
{
	/* rpm prints the expression error, then "FILE:N: bad %if condition: EXPR"; kiln
	 * carries both in one message. */
	pt_expect_fail(PT_HEAD "%if 1 +\n%endif\n", KILN_ESYNTAX, 6,
	               "bad %if condition:  1 +: unexpected end of expression:  1 +");
	pt_expect_fail(PT_HEAD "%if 1 # c\n%endif\n", KILN_ESYNTAX, 6,
	               "bad %if condition:  1 # c: parse error in expression:  1 # c");
	pt_expect_fail(PT_HEAD "%if 0\n%elif 1 +\n%endif\n", KILN_ESYNTAX, 7,
	               "bad %elif condition:  1 +: unexpected end of expression:  1 +");
	/* An %elif after a taken branch is not evaluated. */
	expect_url("%if 1\nURL: a\n%elif 1 +\n%endif\n", "a");
}

KILN_TEST(read_extra_tokens_after_else_and_endif_warn)
{
	struct pt t;

	pt_init(&t);
	pt_ok(&t, PT_MAIN "%if 1\n%else junk\n%endif  junk2\n");
	pt_assert_log(&t, "warning: extra tokens at the end of %else directive in line 9:  "
	                  "%else junk\n");
	pt_assert_log(&t, "warning: extra tokens at the end of %endif directive in line 10:  "
	                  "%endif  junk2\n");
	/* %else and %endif are directives only as whole words. */
	pt_fail(&t, PT_HEAD "%if 1\n%elsewhere\n%endif\n", KILN_ESYNTAX, 7,
	        "Unknown tag: %elsewhere");
	pt_release(&t);
}

KILN_TEST(read_if_nesting_is_limited)
{
	struct kiln_buf text = KILN_BUF_INIT(KILN_MIB);
	char msg[128];
	int i;

	kiln_buf_addstr(&text, PT_HEAD);
	for (i = 0; i < KILN_LIMIT_IF_DEPTH; i++)
		kiln_buf_addstr(&text, "%if 1\n");
	snprintf(msg, sizeof(msg), "%%if nested more than %d levels", KILN_LIMIT_IF_DEPTH);
	pt_expect_fail(text.ptr, KILN_ELIMIT, 5 + KILN_LIMIT_IF_DEPTH, msg);
	kiln_buf_release(&text);
}

KILN_TEST(read_include_reads_the_file_inline)
{
	struct kiln_err err = KILN_ERR_INIT;
	const char *dir = kiln_test_tmpdir();
	char inc[512], spec[512], text[2048];
	struct pt t;

	snprintf(inc, sizeof(inc), "%s/part.inc", dir);
	snprintf(spec, sizeof(spec), "%s/x.spec", dir);
	assert_ok(
	    util_write_atomic(inc, "URL: http://inc\n%if 0\nhidden\n%endif\n", 36, 0644, &err),
	    &err);
	pt_init(&t);
	/* An absolute path; the %include line itself leaves nothing in the parsed text. */
	snprintf(text, sizeof(text),
	         PT_HEAD "%%include %s\nVendor: v\n%%if 0\n%%include /nonexistent\n%%endif\n"
	                 "%%description\nd\n",
	         inc);
	assert_ok(pt_run_named(&t, spec, text, 0), &t.err);
	assert_string_equal(pt_tag_str(t.spec->packages[0], RPMTAG_URL), "http://inc");
	assert_string_equal(pt_tag_str(t.spec->packages[0], RPMTAG_VENDOR), "v");
	assert_string_equal(t.spec->parsed.ptr,
	                    PT_HEAD "URL: http://inc\n\n\n\nVendor: v\n\n\n\n%description\nd\n");
	/* A relative path not found from the current directory is looked for beside the
	 * including file (kiln's addition; rpm only tries the current directory). */
	assert_ok(pt_run_named(&t, spec, PT_HEAD "%include part.inc\n%description\nd\n", 0),
	          &t.err);
	assert_string_equal(pt_tag_str(t.spec->packages[0], RPMTAG_URL), "http://inc");
	pt_release(&t);
}

KILN_TEST(read_include_errors)
{
	struct kiln_err err = KILN_ERR_INIT;
	const char *dir = kiln_test_tmpdir();
	char inc[512], text[2048];
	struct pt t;

	snprintf(inc, sizeof(inc), "%s/bad.inc", dir);
	assert_ok(util_write_atomic(inc, "\nFoo: bar\n", 10, 0644, &err), &err);
	pt_init(&t);
	/* Errors inside the included file name it and its line. */
	snprintf(text, sizeof(text), PT_HEAD "%%include %s\n", inc);
	pt_fail(&t, text, KILN_ESYNTAX, 2, "Unknown tag: Foo: bar");
	assert_string_equal(t.err.input, inc);
	pt_fail(&t, PT_HEAD "%include /nonexistent/x.inc\n", KILN_ENOTFOUND, 6,
	        "Unable to open /nonexistent/x.inc: No such file or directory");
	assert_string_equal(t.err.input, "t.spec");
	/* rpm 4.20: a name is required ("%include" alone is no tag any more). */
	pt_fail(&t, PT_HEAD "%include\n", KILN_ESYNTAX, 6, "malformed %include statement");
	pt_fail(&t, PT_HEAD "%include   \n", KILN_ESYNTAX, 6, "malformed %include statement");
	/* Blanks inside are part of the name: rpm opens "a b". */
	pt_fail(&t, PT_HEAD "%include /nonexistent/a b\n", KILN_ENOTFOUND, 6,
	        "Unable to open /nonexistent/a b: No such file or directory");
	pt_release(&t);
}

KILN_TEST(read_macro_errors_carry_the_location)
{
	struct pt t;

	pt_init(&t);
	pt_fail(&t, PT_HEAD "URL: %{error:boom}\n", KILN_EMACRO, 6, "boom");
	assert_string_equal(t.err.input, "t.spec");
	pt_release(&t);
}

KILN_TEST(read_file_name_and_line_macros)
{
	struct pt t;

	pt_init(&t);
	pt_ok(&t, PT_HEAD "URL: %{__file_name}-%{__file_lineno}\n%description\nd\n");
	assert_string_equal(pt_tag_str(t.spec->packages[0], RPMTAG_URL), "t.spec-6");
	/* Gone after the parse. */
	assert_false(macro_is_defined(t.ctx, "__file_name"));
	pt_release(&t);
}

KILN_TEST(read_macro_expanded_in_a_comment_warns)
{
	struct pt t;

	pt_init(&t);
	pt_ok(&t, PT_HEAD "# %{name} and %%x\n# %%y only\n%description\nd\n");
	/* %% becoming % is no change; the message shows the line from its first '%'. */
	pt_assert_log(&t, "warning: Macro expanded in comment on line 6: %{name} and %%x\n");
	assert_null(strstr(t.log, "line 7"));
	pt_release(&t);
}

KILN_TEST(read_section_headers)
{
	struct pt t;

	pt_init(&t);
	/* Case-insensitive, at the start of the line only, followed by a blank or the end. */
	pt_ok(&t, PT_HEAD "%DESCRIPTION\nd\n  %files\n%Build\nx\n%buildx\n");
	assert_string_equal(pt_tag_str(t.spec->packages[0], RPMTAG_DESCRIPTION), "d\n  %files");
	assert_string_equal(t.spec->sections[SPEC_SEC_BUILD], "x\n%buildx\n");
	pt_release(&t);
}

KILN_TEST(read_a_macro_may_expand_to_sections)
{
	struct pt t;

	pt_init(&t);
	/* Headers are recognised after expansion, line by line. */
	pt_ok(&t, PT_MAIN "%define mksub() %%package %1\\\nSummary: sub %1\\\n%%description "
	                  "%1\\\ntext %1\n%mksub a\n%files a\n");
	assert_int_equal(t.spec->npackages, 2);
	assert_string_equal(t.spec->packages[1]->name, "t-a");
	assert_string_equal(pt_tag_str(t.spec->packages[1], RPMTAG_SUMMARY), "sub a");
	assert_string_equal(pt_tag_str(t.spec->packages[1], RPMTAG_DESCRIPTION), "text a");
	assert_true(t.spec->packages[1]->has_files);
	assert_string_equal(t.spec->parsed.ptr, PT_MAIN "\n%package a\nSummary: sub a\n"
	                                                "%description a\ntext a\n%files a\n");
	pt_release(&t);
}

KILN_TEST(read_binary_package_is_refused)
{
	pt_expect_fail("\xed\xab\xee\xdb\x03\x00", KILN_ESYNTAX, 1,
	               "Binary rpm package found. Expected spec file!");
}
