/*
 * test_query.c - spec/query.c: query formats over a parsed spec's packages and its source
 * package, as `kiln spec -q [--srpm] --qf` renders them. Expected values are Debian's
 * `rpmspec -q [--srpm] --qf FORMAT` 4.18 output for the same spec.
 */
#include "util/util.h"

#include "tests/unit/spec/spec_test.h"

static const char query_spec[] =
    "Name: t\nVersion: 1.0\nRelease: 2\nEpoch: 3\nSummary: 100%% %%{name} x\nLicense: MIT\n"
    "Requires: r >= 1, (a or b)\nProvides: p = 1\nConflicts: c < 2\nObsoletes: o <= 3\n"
    "Recommends: rec\n%description\nd\n%package sub\nSummary: sub\nBuildArch: noarch\n"
    "%description sub\nds\n%files\n%files sub\n"
    "%changelog\n* Mon Jan 01 2024 A <a@b> - 3:1.0-2\n- x\n";

/* fmt over every binary package, as rpmspec -q prints them (one after the other). */
static void expect_query(struct pt *t, const char *fmt, const char *want)
{
	char all[4096] = "";
	char one[2048];
	size_t i;

	for (i = 0; i < t->spec->npackages; i++) {
		pt_qf(t, t->spec->packages[i]->tags, fmt, one, sizeof(one));
		snprintf(all + strlen(all), sizeof(all) - strlen(all), "%s", one);
	}
	if (strcmp(all, want))
		print_error("%s\ngot:  %s\nwant: %s\n", fmt, all, want);
	assert_string_equal(all, want);
}

static void expect_srpm_query(struct pt *t, const char *fmt, const char *want)
{
	char got[2048];

	pt_qf(t, t->spec->srctags, fmt, got, sizeof(got));
	assert_string_equal(got, want);
}

KILN_TEST(query_names_and_versions)
{
	struct pt t;

	pt_init(&t);
	pt_ok(&t, query_spec);
	expect_query(&t, "%{NVRA}\n", "t-1.0-2.x86_64\nt-sub-1.0-2.noarch\n");
	expect_query(&t, "%{NEVRA}\n", "t-3:1.0-2.x86_64\nt-sub-3:1.0-2.noarch\n");
	expect_query(&t, "%{NEVR} %{NVR} %{EVR} %{EPOCHNUM}\n",
	             "t-3:1.0-2 t-1.0-2 3:1.0-2 3\nt-sub-3:1.0-2 t-sub-1.0-2 3:1.0-2 3\n");
	expect_query(&t, "%{ARCH} %{OS} %{SOURCERPM} %{SIZE}\n",
	             "x86_64 linux (none) (none)\nnoarch linux (none) (none)\n");
	expect_query(&t, "%{NAME:shescape} %{VERSION:arraysize} %|EPOCH?{e%{EPOCH}}:{none}|\n",
	             "'t' 1 e3\n't-sub' 1 e3\n");
	/* A spec package has no source rpm yet, so rpm's suffix is .src. */
	expect_query(&t, "%{ARCHSUFFIX}|", ".src|.src|");
	expect_srpm_query(&t, "%{NVRA} %{SOURCERPM} %{ARCH}\n", "t-1.0-2.x86_64 (none) x86_64\n");
	pt_release(&t);
}

KILN_TEST(query_dependencies)
{
	struct pt t;

	pt_init(&t);
	pt_ok(&t, query_spec);
	expect_query(&t, "[%{REQUIRENEVRS}|]\n", "(a or b)|r >= 1|\n\n");
	expect_query(&t, "[%{REQUIRENAME} %{REQUIREFLAGS:depflags} %{REQUIREVERSION}|]\n",
	             "(a or b)  |r >= 1|\n\n");
	expect_query(
	    &t, "[%{PROVIDENEVRS}|][%{CONFLICTNEVRS}|][%{OBSOLETENEVRS}|][%{RECOMMENDNEVRS}|]\n",
	    "p = 1|t = 3:1.0-2|t(x86-64) = 3:1.0-2|c < 2|o <= 3|rec|\nt-sub = 3:1.0-2|\n");
	expect_srpm_query(&t, "[%{PROVIDENEVRS}|]", "t = 3:1.0-2|t-sub = 3:1.0-2|");
	pt_release(&t);
}

KILN_TEST(query_expand_uses_the_spec_macros)
{
	struct pt t;

	pt_init(&t);
	pt_ok(&t, query_spec);
	/* The stored text keeps what the parse left; :expand expands it in the spec's
	 * context, where %name is the Name: tag's (%package does not change it). */
	expect_query(&t, "%{SUMMARY}|%{SUMMARY:expand}\n", "100% %{name} x|100% t x\nsub|sub\n");
	expect_query(&t, "[%{CHANGELOGTIME:date}|]\n", "Mon Jan  1 12:00:00 2024|\n\n");
	pt_release(&t);
}

KILN_TEST(query_source_reads_the_tag_set)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct kiln_buf out = KILN_BUF_INIT(KILN_MIB);
	struct rpmtag_qf_source src, other;
	struct rpmtag_qf_value v;
	struct pt t;
	size_t i, n;

	pt_init(&t);
	pt_ok(&t, query_spec);
	assert_ok(spec_qf_source_make(t.spec, t.spec->packages[0]->tags, &src, &err), &err);
	assert_ok(spec_qf_source_make(t.spec, t.spec->packages[1]->tags, &other, &err), &err);
	assert_int_equal(src.flags, 0);
	/* get, and the %{*} iteration, are the tag set's. */
	assert_true(src.ops->get(src.ctx, RPMTAG_NAME, &v));
	assert_string_equal(((const char *const *)v.data)[0], "t");
	assert_false(src.ops->get(src.ctx, RPMTAG_BUGURL, &v));
	assert_true(other.ops->get(other.ctx, RPMTAG_NAME, &v));
	assert_string_equal(((const char *const *)v.data)[0], "t-sub");
	n = src.ops->tag_count(src.ctx);
	assert_int_equal(n, rpmtag_set_count(t.spec->packages[0]->tags));
	for (i = 0; i < n; i++)
		assert_int_equal(src.ops->tag_at(src.ctx, i),
		                 rpmtag_set_tag_at(t.spec->packages[0]->tags, i));
	/* expand appends the expansion. */
	kiln_buf_addstr(&out, ">");
	assert_ok(src.ops->expand(src.ctx, "%{name}-%{?nosuch}%%", &out, &err), &err);
	assert_string_equal(out.ptr, ">t-%");
	kiln_buf_release(&out);
	pt_release(&t);
}

KILN_TEST(query_expand_errors_are_reported)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct kiln_buf out = KILN_BUF_INIT(20);
	struct rpmtag_qf_source src;
	struct pt t;

	pt_init(&t);
	pt_ok(&t, query_spec);
	assert_ok(spec_qf_source_make(t.spec, t.spec->srctags, &src, &err), &err);
	/* The output buffer's limit holds for expansions too. */
	assert_int_not_equal(rpmtag_qf_format("%{SUMMARY:expand}%{SUMMARY:expand}%{SUMMARY:expand}"
	                                      "%{SUMMARY:expand}%{SUMMARY:expand}",
	                                      &src, &out, &err),
	                     KILN_OK);
	assert_int_equal(err.code, KILN_ELIMIT);
	kiln_buf_release(&out);
	pt_release(&t);
}
