/*
 * test_sections.c - spec/sections.c: build sections and their -a/-p fragments (with the
 * BuildSystem synthesis final.c does for them), %description, scriptlets and triggers with
 * their options, %changelog, %sourcelist/%patchlist and %sepolicy.
 *
 * Expected values come from Debian's rpmspec 4.18 (-P, and -q --qf for tags), except where
 * a comment cites rpm 4.20: -a/-p and BuildSystem do not exist in 4.18; they are pinned to
 * 4.20's behaviour as shared/rpm-reference.md sections 6.3 and 7 document it.
 */
#include "util/util.h"

#include "tests/unit/spec/spec_test.h"

/* ---------------------------------------------------------------------------------------- */
/* Build sections. */

KILN_TEST(sections_build_text_is_kept_as_written)
{
	struct pt t;
	struct spec *s;

	pt_init(&t);
	s = pt_ok(&t, PT_MAIN "%build\n# a comment\n  make  \n\n%install\nmake install\n%check\n"
	                      "%clean\nrm -rf x\n%conf\n./configure\n%generate_buildrequires\n"
	                      "echo br\n");
	assert_string_equal(s->sections[SPEC_SEC_BUILD], "# a comment\n  make  \n\n");
	assert_string_equal(s->sections[SPEC_SEC_INSTALL], "make install\n");
	/* An empty section exists. */
	assert_string_equal(s->sections[SPEC_SEC_CHECK], "");
	assert_string_equal(s->sections[SPEC_SEC_CLEAN], "rm -rf x\n");
	assert_string_equal(s->sections[SPEC_SEC_CONF], "./configure\n");
	assert_string_equal(s->sections[SPEC_SEC_BUILDREQUIRES], "echo br\n");
	assert_null(s->sections[SPEC_SEC_PREP]);
	pt_release(&t);
	pt_expect_fail(PT_MAIN "%build\n%install\n%build\n", KILN_ESYNTAX, 10, "second %build");
	pt_expect_fail(PT_MAIN "%check\n%check\n", KILN_ESYNTAX, 9, "second %check");
}

KILN_TEST(sections_append_and_prepend)
{
	struct pt t;
	struct spec *s;

	pt_init(&t);
	/* rpm 4.20 (rpm-reference.md 6.3): start from the main text, then each fragment in
	 * spec order, -a at the end and -p at the front, wherever the main section is. */
	s = pt_ok(&t, PT_MAIN "%build -a\nCCC\n%build -p\nAAA\n%build\nBBB\n%build -a\nDDD\n"
	                      "%build -p\n000\n");
	assert_string_equal(s->sections[SPEC_SEC_BUILD], "000\nAAA\nBBB\nCCC\nDDD\n");
	/* Fragments alone make the section; any number of them. */
	s = pt_ok(&t, PT_MAIN "%install -a\nA\n%install -a\nB\n%check -p\nC\n%clean -a\nD\n");
	assert_string_equal(s->sections[SPEC_SEC_INSTALL], "A\nB\n");
	assert_string_equal(s->sections[SPEC_SEC_CHECK], "C\n");
	assert_string_equal(s->sections[SPEC_SEC_CLEAN], "D\n");
	assert_null(s->sections[SPEC_SEC_BUILD]);
	/* popt clusters and repeats; other words are not options and do not matter. */
	s = pt_ok(&t, PT_MAIN "%build\nB\n%build -a -a\nA\n%build foo -p\nP\n");
	assert_string_equal(s->sections[SPEC_SEC_BUILD], "P\nB\nA\n");
	/* The parsed text shows every header as written. */
	assert_non_null(strstr(s->parsed.ptr, "%build -a -a\nA\n%build foo -p\nP\n"));
	pt_release(&t);
}

KILN_TEST(sections_append_and_prepend_errors)
{
	/* rpm 4.20's parseSimpleScript messages: argv[0], popt's bad option and its
	 * "unknown option". */
	pt_expect_fail(PT_MAIN "%build -a -p\n", KILN_ESYNTAX, 8,
	               "append and prepend specified: %build -a -p");
	pt_expect_fail(PT_MAIN "%install -ap\n", KILN_ESYNTAX, 8,
	               "append and prepend specified: %install -ap");
	pt_expect_fail(PT_MAIN "%build -x\n", KILN_ESYNTAX, 8,
	               "Bad %build option -x: unknown option");
	pt_expect_fail(PT_MAIN "%prep -ax\n", KILN_ESYNTAX, 8,
	               "Bad %prep option -ax: unknown option");
	pt_expect_fail(PT_MAIN "%check --foo\n", KILN_ESYNTAX, 8,
	               "Bad %check option --foo: unknown option");
	/* A fragment does not count as the main section, a second main one does. */
	pt_expect_fail(PT_MAIN "%build -a\nx\n%build\ny\n%build\n", KILN_ESYNTAX, 12,
	               "second %build");
}

KILN_TEST(sections_prep_fragments_expand_setup)
{
	struct pt t;
	struct spec *s;

	pt_init(&t);
	s = pt_ok(&t, PT_HEAD "Source0: a.tgz\n%description\nd\n%prep -a\n%setup -q -T -D\n"
	                      "%prep\necho main\n");
	assert_string_equal(s->sections[SPEC_SEC_PREP],
	                    "echo main\ncd '/builddir/build/BUILD'\ncd 't-1'\n"
	                    "/bin/chmod -Rf a+rX,u+w,g-w,o-w .\n");
	pt_release(&t);
}

/* ---------------------------------------------------------------------------------------- */
/* BuildSystem (rpm 4.20, rpm-reference.md section 7). */

static void define_buildsystem(struct pt *t)
{
	pt_define(t, "buildsystem_foo_conf() conf %*");
	pt_define(t, "buildsystem_foo_build() make %*");
	pt_define(t, "buildsystem_foo_install() make install %*");
	pt_define(t, "buildsystem_foo_check() make check");
	pt_define(t, "buildsystem_default_build() never used");
	pt_define(t, "buildsystem_default_clean() clean %*");
}

KILN_TEST(sections_buildsystem_generates_missing_sections)
{
	struct pt t;
	struct spec *s;

	pt_init(&t);
	define_buildsystem(&t);
	s = pt_ok(&t, PT_HEAD "BuildSystem: foo\nBuildOption: --a\nBuildOption: b  c\n"
	                      "BuildOption(install): DESTDIR=x\nBuildOption(clean): -f\n"
	                      "%description\nd\n%check\nown check\n");
	assert_string_equal(s->buildsystem, "foo");
	/* BuildOption lines follow "--", joined by single blanks, split again by the
	 * macro's own argument parsing. */
	assert_string_equal(s->sections[SPEC_SEC_CONF], "conf --a b c\n");
	assert_string_equal(s->sections[SPEC_SEC_BUILD], "make \n");
	assert_string_equal(s->sections[SPEC_SEC_INSTALL], "make install DESTDIR=x\n");
	/* A section the spec has wins; the default macro fills what NAME lacks. */
	assert_string_equal(s->sections[SPEC_SEC_CHECK], "own check\n");
	assert_string_equal(s->sections[SPEC_SEC_CLEAN], "clean -f\n");
	assert_null(s->sections[SPEC_SEC_PREP]);
	assert_null(s->sections[SPEC_SEC_BUILDREQUIRES]);
	/* The generated sections are parsed text too, after the spec's own. */
	assert_non_null(strstr(s->parsed.ptr, "own check\n%conf\nconf --a b c\n%build\nmake \n"
	                                      "%install\nmake install DESTDIR=x\n%clean\n"
	                                      "clean -f\n"));
	pt_release(&t);
}

KILN_TEST(sections_buildsystem_with_fragments)
{
	struct pt t;
	struct spec *s;

	pt_init(&t);
	define_buildsystem(&t);
	/* Fragments are applied after synthesis and wrap the generated body. */
	s = pt_ok(&t, PT_HEAD "BuildSystem: foo\n%description\nd\n%build -p\necho pre\n"
	                      "%build -a\necho post\n%install -p\nA\n%install -p\nB\n");
	assert_string_equal(s->sections[SPEC_SEC_BUILD], "echo pre\nmake \necho post\n");
	assert_string_equal(s->sections[SPEC_SEC_INSTALL], "B\nA\nmake install \n");
	pt_release(&t);
}

KILN_TEST(sections_buildsystem_errors)
{
	struct pt t;

	pt_init(&t);
	pt_fail(&t, PT_HEAD "BuildSystem: nope\n%description\nd\n", KILN_ENOTFOUND, 6,
	        "Unknown buildsystem: nope");
	/* Only parametric macros count. */
	pt_define(&t, "buildsystem_half_build make");
	pt_define(&t, "buildsystem_half_install make install");
	pt_fail(&t, PT_HEAD "BuildSystem: half\n%description\nd\n", KILN_ENOTFOUND, 6,
	        "Unknown buildsystem: half");
	pt_define(&t, "buildsystem_half_conf() conf");
	pt_fail(&t, PT_HEAD "BuildSystem: half\n%description\nd\n", KILN_ENOTFOUND, 6,
	        "Required parametric macro %buildsystem_half_build not defined for buildsystem "
	        "half");
	pt_define(&t, "buildsystem_half_build() make");
	pt_fail(&t, PT_HEAD "BuildSystem: half\n%description\nd\n", KILN_ENOTFOUND, 6,
	        "Required parametric macro %buildsystem_half_install not defined for buildsystem "
	        "half");
	pt_release(&t);
}

/* ---------------------------------------------------------------------------------------- */
/* %description. */

KILN_TEST(sections_description)
{
	struct pt t;
	struct spec *s;

	pt_init(&t);
	s = pt_ok(&t, PT_HEAD "%description\nline 1  \n# not a comment here? \n\nline 3\n\n\n"
	                      "%package a\nSummary: x\n%description a\nA\n"
	                      "%description -n t-a -l de\nA de\n%description -ln\nT nl\n");
	/* Comment lines are emptied, trailing blanks and blank lines at the end go. */
	assert_string_equal(pt_tag_str(s->packages[0], RPMTAG_DESCRIPTION), "line 1\n\n\nline 3");
	assert_string_equal(pt_tag_str(s->packages[1], RPMTAG_DESCRIPTION), "A");
	assert_string_equal(pt_tag_stri(s->packages[1]->tags, RPMTAG_DESCRIPTION, 1), "A de");
	/* "-ln" is popt's -l with "n" attached: the main package's text for language "n". */
	assert_string_equal(pt_tag_stri(s->packages[0]->tags, RPMTAG_DESCRIPTION, 1), "T nl");
	s = pt_ok(&t, PT_MAIN "%description\nagain\n\n\n");
	/* rpm notices at the end of the section: the last line read. */
	pt_assert_log(&t, "warning: line 11: second Description\n");
	assert_string_equal(pt_tag_str(s->packages[0], RPMTAG_DESCRIPTION), "again");
	s = pt_ok(&t, PT_MAIN "%description -l de\nDE\n%description -l de\nDE2\n");
	pt_assert_log(&t, "warning: line 11: second Description\n");
	pt_release(&t);
}

KILN_TEST(sections_description_errors)
{
	pt_expect_fail(PT_MAIN "%description -x\n", KILN_ESYNTAX, 8,
	               "Bad option -x: %description -x");
	pt_expect_fail(PT_MAIN "%description -l\n", KILN_ESYNTAX, 8,
	               "Bad option -l: %description -l");
	pt_expect_fail(PT_MAIN "%description a b\n", KILN_ESYNTAX, 8,
	               "Too many names: %description a b");
	pt_expect_fail(PT_MAIN "%description -n t x\n", KILN_ESYNTAX, 8,
	               "Too many names: %description -n t x");
	pt_expect_fail(PT_MAIN "%description x -n t\n", KILN_ESYNTAX, 8,
	               "Too many names: %description x -n t");
	pt_expect_fail(PT_MAIN "%description x\n", KILN_ENOTFOUND, 8,
	               "%description x: package t-x does not exist");
	/* After "--" everything is a name. */
	pt_expect_fail(PT_MAIN "%description -- -n\n", KILN_ENOTFOUND, 8,
	               "%description -- -n: package t--n does not exist");
}

/* ---------------------------------------------------------------------------------------- */
/* Scriptlets. */

KILN_TEST(sections_scriptlets)
{
	static const char *const kinds[] = {"pre",        "post",        "preun",
	                                    "postun",     "pretrans",    "posttrans",
	                                    "preuntrans", "postuntrans", "verifyscript"};
	char text[512];
	char want[64];
	struct pt t;
	struct spec *s;
	size_t i;

	pt_init(&t);
	for (i = 0; i < KILN_ARRAY_SIZE(kinds); i++) {
		snprintf(text, sizeof(text), "%s%%%s\necho %s\n\n\n", PT_MAIN, kinds[i], kinds[i]);
		snprintf(want, sizeof(want), "echo %s", kinds[i]);
		s = pt_ok(&t, text);
		assert_int_equal(s->packages[0]->nscripts, 1);
		assert_int_equal(s->packages[0]->scripts[0].kind, (enum spec_script_kind)i);
		assert_string_equal(spec_script_name(s->packages[0]->scripts[0].kind), kinds[i]);
		/* Trailing blank lines go. */
		assert_string_equal(s->packages[0]->scripts[0].body, want);
	}
	pt_release(&t);
}

KILN_TEST(sections_scriptlet_options)
{
	struct pt t;
	struct spec *s;
	const struct spec_script *sc;

	pt_init(&t);
	s = pt_ok(&t, PT_MAIN "%package a\nSummary: x\n%description a\nd\n"
	                      "%post -p \"/bin/sh -x\" a\n:\n%pre -n t-a -e -q -f pre.sh\n"
	                      "%preun -ep <lua>\nprint(1)\n%postun -nt -p /bin/bash\n");
	sc = &s->packages[1]->scripts[0];
	assert_int_equal(sc->kind, SPEC_SCRIPT_POST);
	assert_int_equal(sc->nprog, 2);
	assert_string_equal(sc->prog[0], "/bin/sh");
	assert_string_equal(sc->prog[1], "-x");
	assert_int_equal(sc->line, 12);
	sc = &s->packages[1]->scripts[1];
	assert_int_equal(sc->flags, SPEC_SCRIPT_F_EXPAND | SPEC_SCRIPT_F_QFORMAT);
	assert_string_equal(sc->file, "pre.sh");
	assert_string_equal(sc->body, "");
	sc = &s->packages[0]->scripts[0];
	assert_int_equal(sc->kind, SPEC_SCRIPT_PREUN);
	assert_int_equal(sc->flags, SPEC_SCRIPT_F_EXPAND);
	assert_string_equal(sc->prog[0], "<lua>");
	assert_string_equal(sc->body, "print(1)");
	/* "-nt": popt's -n with its value attached. */
	assert_int_equal(s->packages[0]->scripts[1].kind, SPEC_SCRIPT_POSTUN);
	assert_string_equal(s->packages[0]->scripts[1].prog[0], "/bin/bash");
	/* popt hands a value on even when it starts with '-'. */
	s = pt_ok(&t, PT_MAIN "%pre -f -x\n:\n");
	assert_string_equal(s->packages[0]->scripts[0].file, "-x");
	pt_release(&t);
}

KILN_TEST(sections_scriptlet_errors)
{
	pt_expect_fail(PT_MAIN "%pre\n%pre\n", KILN_ESYNTAX, 9, "Second %pre");
	pt_expect_fail(PT_MAIN "%pre -x\n", KILN_ESYNTAX, 8, "Bad option -x: %pre -x");
	pt_expect_fail(PT_MAIN "%pre -f\n", KILN_ESYNTAX, 8, "Bad option -f: %pre -f");
	pt_expect_fail(PT_MAIN "%pre --foo\n", KILN_ESYNTAX, 8, "Bad option --foo: %pre --foo");
	pt_expect_fail(PT_MAIN "%pre a b\n", KILN_ESYNTAX, 8, "Too many names: %pre a b");
	pt_expect_fail(PT_MAIN "%pre a -n b\n", KILN_ESYNTAX, 8, "Too many names: %pre a -n b");
	pt_expect_fail(PT_MAIN "%pre -n x\n", KILN_ENOTFOUND, 8,
	               "%pre -n x: package x does not exist");
	pt_expect_fail(PT_MAIN "%pre -p bash\n", KILN_ESYNTAX, 8,
	               "script program must begin with '/': bash");
	/* The empty word vanishes, so -p has no value. */
	pt_expect_fail(PT_MAIN "%pre -p \"\"\n", KILN_ESYNTAX, 8, "Bad option -p: %pre -p \"\"");
	pt_expect_fail(PT_MAIN "%pre -p <lua\n", KILN_ESYNTAX, 8,
	               "internal script must end with '>': <lua");
	/* popt: -p takes "q"; the program is checked before the rest of the line. */
	pt_expect_fail(PT_MAIN "%pre -pq /bin/sh\n", KILN_ESYNTAX, 8,
	               "script program must begin with '/': q");
	pt_expect_fail(PT_MAIN "%pre -p x -z\n", KILN_ESYNTAX, 8,
	               "script program must begin with '/': x");
	/* (rpm 4.18 reports this one after the body.) */
	pt_expect_fail(PT_MAIN "%pre -p <foo>\n:\n", KILN_ESYNTAX, 8,
	               "unsupported internal script: <foo>");
	pt_expect_fail(PT_MAIN "%pre -P 5\n", KILN_ESYNTAX, 8,
	               "Priorities are allowed only for file triggers : /bin/sh");
	pt_expect_fail(PT_MAIN "%pre -p /bin/bash -P 5\n", KILN_ESYNTAX, 8,
	               "Priorities are allowed only for file triggers : /bin/bash");
}

/* ---------------------------------------------------------------------------------------- */
/* Triggers. */

static const char *conds_str(const struct spec_deps *d, char *dst, size_t size)
{
	size_t len = 0;
	size_t i;

	dst[0] = '\0';
	for (i = 0; i < d->n && len < size; i++) {
		int n = snprintf(dst + len, size - len, "%s|%u|%s;", d->v[i].name,
		                 (unsigned)d->v[i].flags, d->v[i].evr);

		if (n < 0)
			break;
		len += (size_t)n;
	}
	return dst;
}

KILN_TEST(sections_triggers)
{
	struct pt t;
	struct spec *s;
	const struct spec_package *pkg;
	char got[512];

	pt_init(&t);
	s = pt_ok(&t, PT_MAIN "%triggerin -- a, b > 1\n:\n%triggerun -p /bin/bash -- a\nx\n"
	                      "%triggerpostun -n t -- c\n%triggerprein\t--\td\n%trigger -- e\n"
	                      "%triggerin -- b < 1\n");
	pkg = s->packages[0];
	assert_int_equal(pkg->nscripts, 6);
	assert_int_equal(pkg->scripts[0].kind, SPEC_SCRIPT_TRIGGERIN);
	assert_string_equal(conds_str(&pkg->scripts[0].conds, got, sizeof(got)),
	                    "a|65536|;b|65540|1;");
	assert_int_equal(pkg->scripts[1].kind, SPEC_SCRIPT_TRIGGERUN);
	assert_string_equal(conds_str(&pkg->scripts[1].conds, got, sizeof(got)), "a|131072|;");
	assert_string_equal(pkg->scripts[1].body, "x");
	assert_string_equal(conds_str(&pkg->scripts[2].conds, got, sizeof(got)), "c|262144|;");
	/* Blanks around "--" may be tabs. */
	assert_int_equal(pkg->scripts[3].kind, SPEC_SCRIPT_TRIGGERPREIN);
	assert_string_equal(conds_str(&pkg->scripts[3].conds, got, sizeof(got)), "d|33554432|;");
	/* %trigger is %triggerin. */
	assert_int_equal(pkg->scripts[4].kind, SPEC_SCRIPT_TRIGGERIN);
	/* Ranges that do not meet may share a name. */
	assert_string_equal(conds_str(&pkg->scripts[5].conds, got, sizeof(got)), "b|65538|1;");
	/* -P is accepted on plain triggers (and does nothing). */
	pt_ok(&t, PT_MAIN "%triggerin -P 5 -- a\n:\n");
	pt_release(&t);
}

KILN_TEST(sections_trigger_errors)
{
	pt_expect_fail(PT_MAIN "%triggerin\n", KILN_ESYNTAX, 8,
	               "triggers must have --: %triggerin");
	pt_expect_fail(PT_MAIN "%triggerin --\n", KILN_ESYNTAX, 8,
	               "triggers must have --: %triggerin --");
	pt_expect_fail(PT_MAIN "%triggerin --a\n", KILN_ESYNTAX, 8,
	               "triggers must have --: %triggerin --a");
	/* Header lines lose trailing blanks, and with them the separator. */
	pt_expect_fail(PT_MAIN "%triggerin -- %{?nothing}\n", KILN_ESYNTAX, 8,
	               "triggers must have --: %triggerin --");
	/* Header messages quote the line as rpm cuts it, after "--". */
	pt_expect_fail(PT_MAIN "%triggerin -x -- a\n", KILN_ESYNTAX, 8,
	               "Bad option -x: %triggerin -x --");
	pt_expect_fail(PT_MAIN "%triggerin a b -- a\n", KILN_ESYNTAX, 8,
	               "Too many names: %triggerin a b --");
	pt_expect_fail(PT_MAIN "%triggerin -n nope -- a\n", KILN_ENOTFOUND, 8,
	               "%triggerin -n nope --: package nope does not exist");
	/* Condition errors: rpm 4.18 reports them after the body and goes on; kiln stops at
	 * the header. */
	pt_expect_fail(PT_MAIN "%triggerin -- -a\n", KILN_ESYNTAX, 8,
	               "Dependency tokens must begin with alpha-numeric, '_' or '/': "
	               "%triggerin -- -a");
	pt_expect_fail(PT_MAIN "%triggerin -- (a or b)\n", KILN_ESYNTAX, 8,
	               "No rich dependencies allowed for this type: %triggerin -- (a or b)");
	pt_expect_fail(PT_MAIN "%triggerin -p \"/bin/sh -x\" -- a\n", KILN_ESYNTAX, 8,
	               "interpreter arguments not allowed in triggers: /bin/sh -x");
}

KILN_TEST(sections_trigger_fired_twice)
{
	static const char msg[] =
	    "Trigger fired by the same package is already defined in spec file: ";
	static const char *const twice[] = {
	    "%triggerin -- a, a\n",
	    "%triggerin -- a\n:\n%triggerin -- a < 1\n",
	    "%triggerin -- a = 1\n:\n%triggerin -- a = 1-2\n",
	    "%triggerin -- a >= 1\n:\n%triggerin -- a <= 1\n",
	    "%triggerin -- a = 0:1\n:\n%triggerin -- a = 1\n",
	};
	static const char *const once[] = {
	    "%triggerin -- a = 1-3\n:\n%triggerin -- a = 1-2\n",
	    "%triggerin -- a > 2\n:\n%triggerin -- a < 1\n",
	    "%triggerin -- a\n:\n%triggerun -- a\n",
	    "%triggerin -- a > 1, a < 1\n",
	    "%triggerin -- a = 1:1\n:\n%triggerin -- a = 1\n",
	    "%triggerin -- a > 1:1\n:\n%triggerin -- a = 2\n",
	    "%filetriggerin -- /a\n:\n%filetriggerin -- /a\n",
	};
	char text[512];
	char want[512];
	struct pt t;
	size_t i;

	pt_init(&t);
	for (i = 0; i < KILN_ARRAY_SIZE(twice); i++) {
		const char *last = strrchr(twice[i], '%');
		int len = (int)strcspn(last, "\n");

		snprintf(text, sizeof(text), "%s%s", PT_MAIN, twice[i]);
		snprintf(want, sizeof(want), "%s%.*s", msg, len, last);
		pt_fail(&t, text, KILN_ESYNTAX, 0, want);
	}
	for (i = 0; i < KILN_ARRAY_SIZE(once); i++) {
		snprintf(text, sizeof(text), "%s%s", PT_MAIN, once[i]);
		pt_ok(&t, text);
	}
	pt_release(&t);
}

KILN_TEST(sections_file_triggers)
{
	struct pt t;
	struct spec *s;
	const struct spec_package *pkg;
	char got[256];

	pt_init(&t);
	s = pt_ok(&t, PT_MAIN "%filetriggerin -P 5 -- /a, /b\n:\n%filetriggerun -- /c\n"
	                      "%filetriggerpostun -P -5 -- /d\n%transfiletriggerin -P0x10 -- /e\n"
	                      "%transfiletriggerun -- /f\n%transfiletriggerpostun -- /g\n"
	                      "%filetrigger -- /h\n%transfiletrigger -- /i\n");
	pkg = s->packages[0];
	assert_int_equal(pkg->nscripts, 8);
	assert_int_equal(pkg->scripts[0].kind, SPEC_SCRIPT_FILETRIGGERIN);
	assert_int_equal(pkg->scripts[0].priority, 5);
	/* Commas separate, as in any dependency list. */
	assert_string_equal(conds_str(&pkg->scripts[0].conds, got, sizeof(got)),
	                    "/a|65536|;/b|65536|;");
	assert_int_equal(pkg->scripts[1].priority, 1000000);
	assert_string_equal(conds_str(&pkg->scripts[1].conds, got, sizeof(got)), "/c|131072|;");
	/* popt's integer: any base, negative numbers wrap as rpm stores them. */
	assert_int_equal(pkg->scripts[2].priority, 4294967291u);
	assert_int_equal(pkg->scripts[3].priority, 16);
	assert_int_equal(pkg->scripts[3].kind, SPEC_SCRIPT_TRANSFILETRIGGERIN);
	assert_int_equal(pkg->scripts[6].kind, SPEC_SCRIPT_FILETRIGGERIN);
	assert_int_equal(pkg->scripts[7].kind, SPEC_SCRIPT_TRANSFILETRIGGERIN);
	pt_release(&t);
	pt_expect_fail(PT_MAIN "%filetriggerin -- a\n", KILN_ESYNTAX, 8,
	               "file trigger condition must begin with '/': a");
	pt_expect_fail(PT_MAIN "%filetriggerin -- /a b\n", KILN_ESYNTAX, 8,
	               "file trigger condition must begin with '/': b");
	pt_expect_fail(PT_MAIN "%filetriggerin -- /a > 1\n", KILN_ESYNTAX, 8,
	               "Versioned file name not permitted: %filetriggerin -- /a > 1");
	pt_expect_fail(PT_MAIN "%filetriggerin -P x -- /a\n", KILN_ESYNTAX, 8,
	               "Bad option x: %filetriggerin -P x --");
	pt_expect_fail(PT_MAIN "%filetriggerin -P 99999999999 -- /a\n", KILN_ESYNTAX, 8,
	               "Bad option 99999999999: %filetriggerin -P 99999999999 --");
}

/* ---------------------------------------------------------------------------------------- */
/* %changelog. */

/* The changelog of a spec that must parse, as "time|name|text;" entries. */
static void expect_changelog(struct pt *t, const char *log, const char *want)
{
	char text[2048];
	char got[2048];
	size_t len = 0;
	size_t i;

	snprintf(text, sizeof(text), "%s%%changelog\n%s", PT_MAIN, log);
	pt_ok(t, text);
	got[0] = '\0';
	for (i = 0; i < t->spec->nchangelog && len < sizeof(got); i++) {
		const struct spec_changelog *c = &t->spec->changelog[i];
		int n = snprintf(got + len, sizeof(got) - len, "%lld|%s|%s;", (long long)c->time,
		                 c->name, c->text);

		if (n < 0)
			break;
		len += (size_t)n;
	}
	if (strcmp(got, want))
		print_error("got:  %s\nwant: %s\n", got, want);
	assert_string_equal(got, want);
}

static void expect_changelog_error(const char *log, const char *msg)
{
	char text[1024];

	snprintf(text, sizeof(text), "%s%%changelog\n%s", PT_MAIN, log);
	pt_expect_fail(text, KILN_ESYNTAX, 0, msg);
}

KILN_TEST(sections_changelog_entries)
{
	struct pt t;

	pt_init(&t);
	/* Short dates are 12:00 UTC; names keep what follows the date, trailing blanks
	 * included; texts lose leading and trailing blanks only. */
	expect_changelog(&t,
	                 "* Mon Jan 01 2024 A <a@b.c> - 1:2-3\n- x  \n- y\t\n\n"
	                 "* Sun Dec 31 2023 B   \n\n   - z\n  more\n",
	                 "1704110400|A <a@b.c> - 1:2-3|- x  \n- y;1704024000|B   |- z\n  more;");
	expect_changelog(&t, "* Mon Jan  1 2024 A\n- x\n", "1704110400|A|- x;");
	expect_changelog(&t, "* Thu Feb 29 2024 A\n- x\n", "1709208000|A|- x;");
	/* Equal times are in order; only a newer one is not. */
	expect_changelog(&t, "* Mon Jan 01 2024 A\n- x\n* Mon Jan 01 2024 B\n- y\n",
	                 "1704110400|A|- x;1704110400|B|- y;");
	/* Only a '*' at the start of a line begins an entry. */
	expect_changelog(&t, "\n\n* Mon Jan 01 2024 A\n- x\n  * not an entry\n",
	                 "1704110400|A|- x\n  * not an entry;");
	/* An entry without text takes the next one as its text, as rpm's does. */
	expect_changelog(&t, "* Mon Jan 01 2024 A\n* Sun Dec 31 2023 B\n- x\n",
	                 "1704110400|A|* Sun Dec 31 2023 B\n- x;");
	/* The extended form; kiln takes every zone as UTC (rpm uses the host's zoneinfo). */
	expect_changelog(&t, "* Mon Jan 01 10:11:12 UTC 2024 A\n- x\n", "1704103872|A|- x;");
	expect_changelog(&t, "* Mon Jan 01 1:2:3 XYZ 2024 A\n- x\n", "1704070923|A|- x;");
	/* A second %changelog is an error only once there are entries. */
	pt_ok(&t, PT_MAIN "%changelog\n%changelog\n* Mon Jan 01 2024 A\n- x\n");
	assert_int_equal(t.spec->nchangelog, 1);
	pt_release(&t);
}

KILN_TEST(sections_changelog_bogus_dates_warn)
{
	struct pt t;

	pt_init(&t);
	expect_changelog(&t, "* Tue Jan 01 2024 A\n- x\n", "1704110400|A|- x;");
	pt_assert_log(&t, "warning: bogus date in %changelog: Tue Jan 01 2024 A\n");
	/* Day 0 is the day before the first, and always bogus. */
	expect_changelog(&t, "* Sun Dec 0 2023 A\n- x\n", "1701345600|A|- x;");
	pt_assert_log(&t, "warning: bogus date in %changelog: Sun Dec 0 2023 A\n");
	pt_release(&t);
}

KILN_TEST(sections_changelog_errors)
{
	static const char *const bad_dates[] = {
	    "Mon Jan 01 1989 A",
	    "Mon Jan 01 3000 A",
	    "Mon Jan 32 2024 A",
	    "Fri Feb 30 2024 A",
	    "Mon Foo 01 2024 A",
	    "Monday Jan 01 2024 A",
	    "mon jan 01 2024 A",
	    "Mon Jan 01 2024x A",
	    "Mon Jan 01 25:11:12 UTC 2024 A",
	    "Mon Jan 01 10:11:12 ABCDEFGHI 2024 A",
	    "Mon Jan 01 10:11:12 2024 A",
	    "Mon Jan",
	    "",
	};
	char log[256];
	char msg[256];
	size_t i;

	for (i = 0; i < KILN_ARRAY_SIZE(bad_dates); i++) {
		snprintf(log, sizeof(log), "* %s\n- x\n", bad_dates[i]);
		snprintf(msg, sizeof(msg), "bad date in %%changelog: %s", bad_dates[i]);
		expect_changelog_error(log, msg);
	}
	expect_changelog_error("x\n* Mon Jan 01 2024 A\n- x\n",
	                       "%changelog entries must start with *");
	expect_changelog_error("* Mon Jan 01 2024\n- x\n", "missing name in %changelog");
	/* Six date words: the zone swallowed the year and the year the name. */
	expect_changelog_error("* Mon Jan 01 10:11:12UTC 2024 A\n- x\n",
	                       "missing name in %changelog");
	expect_changelog_error("* Mon Jan 01 2024 A\n\n", "no description in %changelog");
	expect_changelog_error("* Mon Jan 01 2024 A\n- x\n* Tue Jan 02 2024 B\n- y\n",
	                       "%changelog not in descending chronological order");
	pt_expect_fail(PT_MAIN "%changelog\n* Mon Jan 01 2024 A", KILN_ESYNTAX, 0,
	               "incomplete %changelog entry");
	pt_expect_fail(PT_MAIN "%changelog\n* Mon Jan 01 2024 A\n- x\n%changelog\n", KILN_ESYNTAX,
	               11, "second %changelog");
}

KILN_TEST(sections_changelog_errors_are_reported_when_forced)
{
	struct pt t;

	pt_init(&t);
	/* rpmspec reports the error and keeps the entries before it. */
	assert_ok(pt_run(&t,
	                 PT_MAIN "%changelog\n* Mon Jan 01 2024 A\n- x\n* Tue Jan 02 2024 B\n- y\n",
	                 SPEC_PARSE_FORCE),
	          &t.err);
	assert_int_equal(t.spec->nchangelog, 1);
	pt_assert_log(&t, "%changelog not in descending chronological order");
	pt_release(&t);
}

KILN_TEST(sections_changelog_trimming)
{
	static const char log[] = "* Fri Jan 05 2024 A\n- a\n* Thu Jan 04 2024 B\n- b\n"
	                          "* Wed Jan 03 2024 C\n- c\n* Mon Jan 01 2024 D\n- d\n";
	struct pt t;

	pt_init(&t);
	/* %_changelog_trimage counts back from the newest entry. */
	pt_define(&t, "_changelog_trimage 86400");
	expect_changelog(&t, log, "1704456000|A|- a;1704369600|B|- b;");
	pt_define(&t, "_changelog_trimage 0");
	expect_changelog(&t, log,
	                 "1704456000|A|- a;1704369600|B|- b;1704283200|C|- c;1704110400|D|- d;");
	/* rpm turns %_changelog_trimtime into an age from now, counted from the newest
	 * entry: a cut-off in the past keeps these old entries. */
	pt_define(&t, "_changelog_trimtime 1704326400");
	expect_changelog(&t, log,
	                 "1704456000|A|- a;1704369600|B|- b;1704283200|C|- c;1704110400|D|- d;");
	pt_release(&t);
}

/* ---------------------------------------------------------------------------------------- */
/* %sourcelist, %patchlist, %sepolicy. */

KILN_TEST(sections_source_and_patch_lists)
{
	struct pt t;
	struct spec *s;

	pt_init(&t);
	s = pt_ok(&t, PT_HEAD "Source5: z.tgz\n%description\nd\n%sourcelist\na.tar.gz\n  # c\n\n"
	                      "  http://x/b.zip  \n%patchlist\np1.patch\n%sepolicy\nanything\n"
	                      "%build\nls %{SOURCE6} %{SOURCE7} %{PATCH0}\n");
	assert_int_equal(s->nsources, 4);
	/* Numbered after the highest so far, one per non-blank, non-comment line. */
	assert_int_equal(s->sources[1].num, 6);
	assert_string_equal(s->sources[1].file, "a.tar.gz");
	assert_int_equal(s->sources[2].num, 7);
	assert_string_equal(s->sources[2].url, "http://x/b.zip");
	assert_true(s->sources[3].is_patch);
	assert_int_equal(s->sources[3].num, 0);
	assert_string_equal(s->sections[SPEC_SEC_BUILD],
	                    "ls /builddir/build/SOURCES/a.tar.gz /builddir/build/SOURCES/b.zip "
	                    "/builddir/build/SOURCES/p1.patch\n");
	/* %sepolicy's text is skipped. */
	assert_null(strstr(s->sections[SPEC_SEC_BUILD], "anything"));
	pt_release(&t);
}
