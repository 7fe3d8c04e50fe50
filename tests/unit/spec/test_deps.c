/*
 * test_deps.c - spec/deps.c: dependency lists, comparisons and versions, rich dependencies
 * (spelling, operator chains, contexts, errors), rpmlib() names, qualifiers, sorted sets.
 *
 * Expected sets and messages come from Debian's rpmspec 4.18 (`rpmspec -q --qf
 * '[%{REQUIRENAME}|%{REQUIREFLAGS}|%{REQUIREVERSION};]'` with rpm's macro files). rpm's
 * macros set %_wrong_version_format_terminate_build to 1; the tests say when they do.
 */
#include "util/util.h"

#include "tests/unit/spec/spec_test.h"

/* A dependency set as "name|flags|evr;..." in set order. */
static const char *deps_str(const struct spec_deps *d, char *dst, size_t size)
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

/* The spec text for one preamble line (line 6). */
static void spec_with(char *dst, size_t size, const char *line)
{
	snprintf(dst, size, PT_HEAD "%s\n%%description\nd\n", line);
}

/* line parses; the main package's (or the spec's build) dependencies of kind are want. */
static void expect_deps(struct pt *t, const char *line, enum spec_dep_kind kind, const char *want)
{
	char text[2048];
	char got[2048];
	struct spec *s;

	spec_with(text, sizeof(text), line);
	s = pt_ok(t, text);
	deps_str(&s->packages[0]->deps[kind], got, sizeof(got));
	if (strcmp(got, want))
		print_error("%s\ngot:  %s\nwant: %s\n", line, got, want);
	assert_string_equal(got, want);
}

static void expect_requires(const char *line, const char *want)
{
	struct pt t;

	pt_init(&t);
	expect_deps(&t, line, SPEC_DEPS_REQUIRES, want);
	pt_release(&t);
}

/* line fails on line 6 with msg. strict defines %_wrong_version_format_terminate_build 1,
 * as rpm's macros do. */
static void expect_dep_error(const char *line, bool strict, const char *msg)
{
	char text[2048];
	struct pt t;

	pt_init(&t);
	if (strict)
		pt_define(&t, "_wrong_version_format_terminate_build 1");
	spec_with(text, sizeof(text), line);
	pt_fail(&t, text, KILN_ESYNTAX, 6, msg);
	pt_release(&t);
}

KILN_TEST(deps_plain_items_and_separators)
{
	expect_requires("Requires: a >= 1, b, c <= 2:3-4", "a|12|1;b|0|;c|10|2:3-4;");
	expect_requires("Requires: a b c", "a|0|;b|0|;c|0|;");
	expect_requires("Requires: a,b", "a|0|;b|0|;");
	expect_requires("Requires: a, , b", "a|0|;b|0|;");
	/* Commas count as blanks everywhere, even between a name and its comparison. */
	expect_requires("Requires: a, >= 1", "a|12|1;");
	expect_requires("Requires: a >= , 1", "a|12|1;");
	expect_requires("Requires: a >= 1 , b", "a|12|1;b|0|;");
	/* A comparison is a word of its own. */
	expect_requires("Requires: a>=1", "a>=1|0|;");
	expect_requires("Requires: a=> 1", "1|0|;a=>|0|;");
	expect_requires("Requires: a(x86-64) >= 1", "a(x86-64)|12|1;");
	/* Only ASCII first characters are judged. */
	expect_requires("Requires: \xc3\xa9", "\xc3\xa9|0|;");
	expect_requires("Requires: a%{x}", "a%{x}|0|;");
}

KILN_TEST(deps_comparison_operators)
{
	expect_requires("Requires: a < 1", "a|2|1;");
	expect_requires("Requires: a <= 1", "a|10|1;");
	expect_requires("Requires: a =< 1", "a|10|1;");
	expect_requires("Requires: a = 1", "a|8|1;");
	expect_requires("Requires: a == 1", "a|8|1;");
	expect_requires("Requires: a >= 1", "a|12|1;");
	expect_requires("Requires: a => 1", "a|12|1;");
	expect_requires("Requires: a > 1", "a|4|1;");
	/* What rpm's version check lets through. */
	expect_requires("Requires: a >= 1~2^3", "a|12|1~2^3;");
	expect_requires("Requires: a >= 1-", "a|12|1-;");
	expect_requires("Requires: a >= -1", "a|12|-1;");
	expect_requires("Requires: a > :1", "a|4|:1;");
	expect_requires("Requires: a > 1:", "a|4|1:;");
	expect_requires("Requires: a > 2:1.0_3+x-4", "a|4|2:1.0_3+x-4;");
}

KILN_TEST(deps_sets_are_sorted_without_duplicates)
{
	expect_requires("Requires: b, a, a > 2, a > 1, a > 1, a >= 1",
	                "a|0|;a|4|1;a|12|1;a|4|2;b|0|;");
	/* The same name with other qualifiers is another dependency. */
	expect_requires("Requires: a\nRequires(pre): a\nRequires(pre): a", "a|0|;a|512|;");
}

KILN_TEST(deps_item_errors)
{
	static const char tokens[] = "Dependency tokens must begin with alpha-numeric, '_' or '/'";
	static const char *const bad_start[] = {
	    "Requires: -a",    "Requires: .a",     "Requires: a,>1",
	    "Requires: a >=1", "Requires: a <> 1", "Requires: %{x}",
	};
	char msg[256];
	size_t i;

	for (i = 0; i < KILN_ARRAY_SIZE(bad_start); i++) {
		snprintf(msg, sizeof(msg), "%s: %s", tokens, bad_start[i]);
		expect_dep_error(bad_start[i], false, msg);
	}
	/* Items are checked in order. */
	expect_dep_error("Requires: a > 1-2-3, -b", true,
	                 "Invalid version (double separator '-'): 1-2-3: Requires: a > 1-2-3, -b");
	expect_dep_error("Requires: a > 1-2-3, -b", false,
	                 "Dependency tokens must begin with alpha-numeric, '_' or '/': "
	                 "Requires: a > 1-2-3, -b");
	expect_dep_error("Requires: a =", false, "Version required: Requires: a =");
	expect_dep_error("Requires: a >", false, "Version required: Requires: a >");
	expect_dep_error("Requires: a > ,", false, "Version required: Requires: a > ,");
	expect_dep_error("Requires: /bin/sh > 1", false,
	                 "Versioned file name not permitted: Requires: /bin/sh > 1");
	expect_requires("Requires: /bin/sh", "/bin/sh|0|;");
}

KILN_TEST(deps_version_characters)
{
	expect_dep_error("Requires: a > 1@2", false,
	                 "Illegal char '@' (0x40) in: Requires: a > 1@2");
	/* rpm names the last bad character, and looks for ".." only when there is none. */
	expect_dep_error("Requires: a > 1@2#3", false,
	                 "Illegal char '#' (0x23) in: Requires: a > 1@2#3");
	expect_dep_error("Requires: a > 1@2..3", false,
	                 "Illegal char '@' (0x40) in: Requires: a > 1@2..3");
	expect_dep_error("Requires: a > 1..2", false,
	                 "Illegal sequence \"..\" in: Requires: a > 1..2");
	expect_dep_error("Requires: a > 1\xc3\xa9", false,
	                 "Illegal char '?' (0xffffffa9) in: Requires: a > 1\xc3\xa9");
	expect_dep_error("Provides: a > 1@2", false,
	                 "Illegal char '@' (0x40) in: Provides: a > 1@2");
}

KILN_TEST(deps_unexpanded_macros_warn_once_per_version)
{
	struct pt t;
	char text[512];

	pt_init(&t);
	expect_deps(&t, "Requires: a > %{x}, b > %{y}", SPEC_DEPS_REQUIRES, "a|4|%{x};b|4|%{y};");
	assert_string_equal(
	    t.log, "warning: line 6: Possible unexpanded macro in: Requires: a > %{x}, b > %{y}\n"
	           "warning: line 6: Possible unexpanded macro in: Requires: a > %{x}, b > "
	           "%{y}\n");
	expect_deps(&t, "Requires: a > 1}", SPEC_DEPS_REQUIRES, "a|4|1};");
	assert_string_equal(t.log,
	                    "warning: line 6: Possible unexpanded macro in: Requires: a > 1}\n");
	/* Names are not looked at. */
	expect_deps(&t, "Requires: a%{x} > 1", SPEC_DEPS_REQUIRES, "a%{x}|4|1;");
	assert_string_equal(t.log, "");
	/* The warning comes before the version's error. */
	pt_define(&t, "_wrong_version_format_terminate_build 1");
	spec_with(text, sizeof(text), "Requires: a > x:%{y}");
	pt_fail(&t, text, KILN_ESYNTAX, 6,
	        "Invalid version (epoch must be unsigned integer): x:%{y}: Requires: a > x:%{y}");
	assert_string_equal(
	    t.log, "warning: line 6: Possible unexpanded macro in: Requires: a > x:%{y}\n");
	pt_release(&t);
}

KILN_TEST(deps_version_format_is_an_error_with_rpms_macros)
{
	expect_dep_error("Requires: a > 1-2-3", true,
	                 "Invalid version (double separator '-'): 1-2-3: Requires: a > 1-2-3");
	expect_dep_error("Requires: a > 1:2:3", true,
	                 "Invalid version (double separator ':'): 1:2:3: Requires: a > 1:2:3");
	expect_dep_error(
	    "Requires: a > x:1", true,
	    "Invalid version (epoch must be unsigned integer): x:1: Requires: a > x:1");
	expect_dep_error("Provides: a > 1:2:3", true,
	                 "Invalid version (double separator ':'): 1:2:3: Provides: a > 1:2:3");
	expect_dep_error("Obsoletes: a > 1-2-3", true,
	                 "Invalid version (double separator '-'): 1-2-3: Obsoletes: a > 1-2-3");
	expect_dep_error("Requires: (a > 1:2:3)", true,
	                 "Invalid version (double separator ':'): 1:2:3: Requires: (a > 1:2:3)");
}

KILN_TEST(deps_version_format_warns_without_rpms_macros)
{
	struct pt t;

	pt_init(&t);
	/* rpmspec --define '_wrong_version_format_terminate_build 0': one warning at the end
	 * of the line, about the last version that deserves it. */
	expect_deps(&t, "Requires: a > 1-2-3, b", SPEC_DEPS_REQUIRES, "a|4|1-2-3;b|0|;");
	assert_string_equal(t.log,
	                    "warning: line 6: Invalid version (double separator '-'): 1-2-3: "
	                    "Requires: a > 1-2-3, b\n");
	expect_deps(&t, "Requires: a > 1-2-3, b > x:1", SPEC_DEPS_REQUIRES, "a|4|1-2-3;b|4|x:1;");
	assert_string_equal(
	    t.log, "warning: line 6: Invalid version (epoch must be unsigned integer): x:1: "
	           "Requires: a > 1-2-3, b > x:1\n");
	expect_deps(&t, "Requires: (a > 1:2:3 or b)", SPEC_DEPS_REQUIRES, "(a > 1:2:3 or b)|0|;");
	assert_string_equal(t.log,
	                    "warning: line 6: Invalid version (double separator ':'): 1:2:3: "
	                    "Requires: (a > 1:2:3 or b)\n");
	/* "no" and 0 are off, like an undefined macro. */
	pt_define(&t, "_wrong_version_format_terminate_build no");
	expect_deps(&t, "Requires: a > 1-2-3", SPEC_DEPS_REQUIRES, "a|4|1-2-3;");
	pt_define(&t, "_wrong_version_format_terminate_build yes");
	pt_fail(&t, PT_HEAD "Requires: a > 1-2-3\n%description\nd\n", KILN_ESYNTAX, 6,
	        "Invalid version (double separator '-'): 1-2-3: Requires: a > 1-2-3");
	pt_release(&t);
}

KILN_TEST(deps_rpmlib_names)
{
	struct pt t;
	struct spec *s;
	char got[512];

	pt_init(&t);
	/* A requirement on rpm itself gets the RPMLIB sense (1 << 24). */
	expect_deps(&t, "Requires: rpmlib(Foo) <= 1", SPEC_DEPS_REQUIRES,
	            "rpmlib(Foo)|16777226|1;");
	expect_deps(&t, "Requires(pre): rpmlib(x)", SPEC_DEPS_REQUIRES, "rpmlib(x)|16777728|;");
	expect_deps(&t, "Conflicts: rpmlib(x)", SPEC_DEPS_CONFLICTS, "rpmlib(x)|16777216|;");
	expect_deps(&t, "Recommends: rpmlib(x)", SPEC_DEPS_RECOMMENDS, "rpmlib(x)|16777216|;");
	expect_deps(&t, "Supplements: rpmlib(x)", SPEC_DEPS_SUPPLEMENTS, "rpmlib(x)|16777216|;");
	expect_deps(&t, "OrderWithRequires: rpmlib(x)", SPEC_DEPS_ORDER, "rpmlib(x)|16777216|;");
	/* Inside a rich dependency the name is the expression's. */
	expect_deps(&t, "Requires: (rpmlib(x) or b)", SPEC_DEPS_REQUIRES, "(rpmlib(x) or b)|0|;");
	s = pt_ok(&t, PT_HEAD
	          "BuildRequires: rpmlib(x) > 1\nBuildConflicts: rpmlib(y)\n%description\nd\n");
	assert_string_equal(deps_str(&s->buildrequires, got, sizeof(got)), "rpmlib(x)|16777220|1;");
	assert_string_equal(deps_str(&s->buildconflicts, got, sizeof(got)), "rpmlib(y)|16777216|;");
	/* Trigger conditions keep their trigger sense only. */
	s = pt_ok(&t, PT_MAIN "%triggerin -- rpmlib(x)\n:\n");
	assert_string_equal(deps_str(&s->packages[0]->scripts[0].conds, got, sizeof(got)),
	                    "rpmlib(x)|65536|;");
	pt_release(&t);
	expect_dep_error("Provides: rpmlib(x)", false, "invalid dependency: Provides: rpmlib(x)");
	/* rpm also says "Only package names are allowed in Obsoletes"; this is its first. */
	expect_dep_error("Obsoletes: rpmlib(x)", false,
	                 "Illegal char ')' (0x29) in: Obsoletes: rpmlib(x)");
}

KILN_TEST(deps_obsoletes_names_are_checked_item_by_item)
{
	expect_dep_error("Obsoletes: a/b, -c", false,
	                 "Illegal char '/' (0x2f) in: Obsoletes: a/b, -c");
	expect_dep_error("Obsoletes: -c, a/b", false,
	                 "Dependency tokens must begin with alpha-numeric, '_' or '/': "
	                 "Obsoletes: -c, a/b");
}

KILN_TEST(deps_qualifiers_apply_to_every_item)
{
	expect_requires("Requires(post): a, (b or c)", "(b or c)|1024|;a|1024|;");
	expect_requires("Requires(pre,postun): a > 1", "a|4612|1;");
	expect_requires("Requires(meta): a", "a|536870912|;");
}

KILN_TEST(deps_rich_spelling)
{
	/* rpm stores the expression rebuilt from its parts. */
	expect_requires("Requires: (a or b)", "(a or b)|0|;");
	expect_requires("Requires: (a  or  b)", "(a or b)|0|;");
	expect_requires("Requires: ( a or b )", "(a or b)|0|;");
	expect_requires("Requires: (a, or b)", "(a or b)|0|;");
	expect_requires("Requires: (a => 1 or b == 2 or c =< 3)",
	                "(a >= 1 or b = 2 or c <= 3)|0|;");
	expect_requires("Requires: (a>=1 or b)", "(a>=1 or b)|0|;");
	expect_requires("Requires: (a(x86-64) >= 1 or b)", "(a(x86-64) >= 1 or b)|0|;");
	expect_requires("Requires: (a)", "(a)|0|;");
	expect_requires("Requires: ((a))", "((a))|0|;");
	/* After an expression a new item begins. */
	expect_requires("Requires: (a or b) c", "(a or b)|0|;c|0|;");
	expect_requires("Requires: c (a or b)", "(a or b)|0|;c|0|;");
	expect_requires("Requires: (a or b) , c", "(a or b)|0|;c|0|;");
	expect_requires("Requires: (a or b)(c)", "(a or b)|0|;(c)|0|;");
	expect_requires("Requires: (a or b) or c", "(a or b)|0|;c|0|;or|0|;");
}

KILN_TEST(deps_rich_operator_chains)
{
	expect_requires("Requires: (a or b or c)", "(a or b or c)|0|;");
	expect_requires("Requires: (a and b and c)", "(a and b and c)|0|;");
	expect_requires("Requires: (a with b with c)", "(a with b with c)|0|;");
	expect_requires("Requires: (a without b)", "(a without b)|0|;");
	expect_requires("Requires: (a if b else c)", "(a if b else c)|0|;");
	expect_requires("Requires: (a if b else (c or d))", "(a if b else (c or d))|0|;");
	expect_requires("Requires: (a or (b and c))", "(a or (b and c))|0|;");
	expect_requires("Requires: ((a or b) with c)", "((a or b) with c)|0|;");
	expect_requires("Requires: (a with (b or c))", "(a with (b or c))|0|;");
	expect_requires("Requires: (a if (b with c))", "(a if (b with c))|0|;");
	expect_requires("Requires: (a > 1 with b)", "(a > 1 with b)|0|;");
	expect_dep_error("Requires: (a or b and c)", false,
	                 "Cannot chain different ops: Requires: (a or b and c)");
	expect_dep_error("Requires: (a with b or c)", false,
	                 "Cannot chain different ops: Requires: (a with b or c)");
	expect_dep_error("Requires: (a if b else c if d)", false,
	                 "Cannot chain different ops: Requires: (a if b else c if d)");
	expect_dep_error("Requires: (a if b if c)", false,
	                 "Can only chain and/or/with ops: Requires: (a if b if c)");
	expect_dep_error("Requires: (a without b without c)", false,
	                 "Can only chain and/or/with ops: Requires: (a without b without c)");
	expect_dep_error("Requires: (a with (b and c))", false,
	                 "Illegal ops in with/without: Requires: (a with (b and c))");
	expect_dep_error("Requires: (a xor b)", false,
	                 "Unknown rich dependency op 'xor': Requires: (a xor b)");
	expect_dep_error("Requires: (a or(b))", false,
	                 "Unknown rich dependency op 'or(b': Requires: (a or(b))");
}

KILN_TEST(deps_rich_syntax_errors)
{
	expect_dep_error("Requires: (a or b", false,
	                 "Unterminated rich dependency: (a or b: Requires: (a or b");
	expect_dep_error("Requires: (a or (b", false,
	                 "Unterminated rich dependency: (b: Requires: (a or (b");
	expect_dep_error("Requires: (a or)", false,
	                 "Missing argument to rich dependency op: Requires: (a or)");
	expect_dep_error("Requires: ()", false, "Empty rich dependency: Requires: ()");
	expect_dep_error("Requires: (a >)", false, "Version required: Requires: (a >)");
	expect_dep_error("Requires: (a or b))", false,
	                 "Dependency tokens must begin with alpha-numeric, '_' or '/': "
	                 "Requires: (a or b))");
	expect_dep_error("Requires: (-a or b)", false,
	                 "Dependency tokens must begin with alpha-numeric, '_' or '/': "
	                 "Requires: (-a or b)");
	expect_dep_error("Requires: (/a > 1 or b)", false,
	                 "Versioned file name not permitted: Requires: (/a > 1 or b)");
	expect_dep_error("Requires: (a > 1@2 or b)", false,
	                 "Illegal char '@' (0x40) in: Requires: (a > 1@2 or b)");
	expect_dep_error(
	    "Requires: (a > 1-2-3 or b)", true,
	    "Invalid version (double separator '-'): 1-2-3: Requires: (a > 1-2-3 or b)");
}

KILN_TEST(deps_rich_contexts)
{
	struct pt t;
	struct spec *s;
	char got[256];

	/* Requirement-like tags refuse a top-level "unless", conflict-like ones an "if";
	 * an "if"/"unless" inside and/or counts as top level. */
	expect_dep_error(
	    "Requires: (a unless b)", false,
	    "Illegal context for 'unless', please use 'or' instead: Requires: (a unless b)");
	expect_dep_error("Requires: (a unless b else c)", false,
	                 "Illegal context for 'unless', please use 'or' instead: "
	                 "Requires: (a unless b else c)");
	expect_dep_error("Requires: (a and (b unless c))", false,
	                 "Illegal context for 'unless', please use 'or' instead: "
	                 "Requires: (a and (b unless c))");
	expect_dep_error("Recommends: (a unless b)", false,
	                 "Illegal context for 'unless', please use 'or' instead: "
	                 "Recommends: (a unless b)");
	expect_dep_error("Requires: (a or (b if c))", false,
	                 "Illegal context for 'if', please use 'and' instead: "
	                 "Requires: (a or (b if c))");
	expect_dep_error("Conflicts: (a if b)", false,
	                 "Illegal context for 'if', please use 'and' instead: Conflicts: (a if b)");
	expect_dep_error(
	    "Supplements: (a if b)", false,
	    "Illegal context for 'if', please use 'and' instead: Supplements: (a if b)");
	expect_dep_error("BuildConflicts: (a if b)", false,
	                 "Illegal context for 'if', please use 'and' instead: "
	                 "BuildConflicts: (a if b)");
	expect_dep_error("BuildRequires: (a unless b)", false,
	                 "Illegal context for 'unless', please use 'or' instead: "
	                 "BuildRequires: (a unless b)");
	pt_init(&t);
	expect_deps(&t, "Conflicts: (a unless b)", SPEC_DEPS_CONFLICTS, "(a unless b)|0|;");
	expect_deps(&t, "Enhances: (a unless b)", SPEC_DEPS_ENHANCES, "(a unless b)|0|;");
	expect_deps(&t, "Suggests: (a if b)", SPEC_DEPS_SUGGESTS, "(a if b)|0|;");
	s = pt_ok(&t, PT_HEAD
	          "BuildRequires: (a if b)\nBuildConflicts: (a unless b)\n%description\nd\n");
	assert_string_equal(deps_str(&s->buildrequires, got, sizeof(got)), "(a if b)|0|;");
	assert_string_equal(deps_str(&s->buildconflicts, got, sizeof(got)), "(a unless b)|0|;");
	pt_release(&t);
	/* Some tags take none at all. */
	expect_dep_error("Provides: (a or b)", false,
	                 "No rich dependencies allowed for this type: Provides: (a or b)");
	expect_dep_error("OrderWithRequires: (a or b)", false,
	                 "No rich dependencies allowed for this type: OrderWithRequires: (a or b)");
}

KILN_TEST(deps_rich_nesting_is_limited)
{
	char line[2048];
	char text[2400];
	struct pt t;
	size_t n = 0;
	int i;

	n += (size_t)snprintf(line, sizeof(line), "Requires: ");
	for (i = 0; i < KILN_LIMIT_EXPR_DEPTH + 1; i++)
		line[n++] = '(';
	line[n++] = 'a';
	for (i = 0; i < KILN_LIMIT_EXPR_DEPTH + 1; i++)
		line[n++] = ')';
	line[n] = '\0';
	spec_with(text, sizeof(text), line);
	pt_init(&t);
	assert_int_equal(pt_run(&t, text, 0), KILN_ELIMIT);
	assert_non_null(strstr(t.err.msg, "rich dependency nested too deeply"));
	/* One level less is fine. */
	memmove(line + 10, line + 11, strlen(line + 11) + 1);
	line[strlen(line) - 1] = '\0';
	spec_with(text, sizeof(text), line);
	pt_ok(&t, text);
	assert_int_equal(t.spec->packages[0]->deps[SPEC_DEPS_REQUIRES].n, 1);
	pt_release(&t);
}
