/*
 * spec_test.h - helpers shared by the spec parser's unit tests.
 *
 * Each test parses a spec from memory in a fresh macro context holding only the macros the
 * parser itself expands (directories, target, %setup/%patch tools), pinned to the values
 * Debian's rpm 4.18 has on x86_64 with the corpus's --define's (tests/data/specs/README.md),
 * so expected values can be checked with rpmspec and do not depend on the host or on
 * configs/. The context's diagnostics (rpm's warnings, errors rpmspec reports and goes on)
 * are collected in the test's log.
 */
#ifndef KILN_TESTS_SPEC_TEST_H
#define KILN_TESTS_SPEC_TEST_H

#include "util/util.h"

#include "macro/macro.h"
#include "spec/spec.h"
#include "tests/unit/harness.h"

/* The tags every package needs. */
#define PT_HEAD "Name: t\nVersion: 1\nRelease: 1\nSummary: s\nLicense: MIT\n"
/* ... and a description, so %files sections may follow. */
#define PT_MAIN PT_HEAD "%description\nd\n"

static const char *const pt_base_macros[] = {
    "_topdir /builddir/build",
    "_sourcedir /builddir/build/SOURCES",
    "_builddir %{_topdir}/BUILD",
    "_target_cpu x86_64",
    "_target_os linux",
    "_target_platform x86_64-debian-linux",
    "_isa (x86-64)",
    "optflags -O2 -g",
    "__rpmuncompress /usr/lib/rpm/rpmuncompress",
    "_fixperms /bin/chmod -Rf a+rX,u+w,g-w,o-w",
    "__mkdir_p /bin/mkdir -p",
    "__patch /usr/bin/patch",
    "_default_patch_flags --no-backup-if-mismatch -f",
    "_default_patch_fuzz 0",
    "_prefix /usr",
    "_datadir %{_prefix}/share",
    "_defaultdocdir %{_datadir}/doc",
    "_defaultlicensedir %{_datadir}/licenses",
};

struct pt {
	struct macro_ctx *ctx;
	struct spec *spec;
	struct kiln_err err;
	kiln_rc rc;
	char log[8192]; /* diagnostics of the last parse, "warning: ..." lines */
	size_t loglen;
};

static inline void pt_diag(void *data, enum kiln_log_level level, const char *msg)
{
	struct pt *t = data;
	int n = snprintf(t->log + t->loglen, sizeof(t->log) - t->loglen, "%s%s\n",
	                 level == KILN_LOG_WARN    ? "warning: "
	                 : level == KILN_LOG_ERROR ? "error: "
	                                           : "",
	                 msg);

	if (n > 0)
		t->loglen += (size_t)n;
	if (t->loglen >= sizeof(t->log))
		t->loglen = sizeof(t->log) - 1;
}

static inline void pt_define(struct pt *t, const char *line)
{
	struct kiln_err err = KILN_ERR_INIT;

	assert_ok(macro_define_line(t->ctx, line, MACRO_LEVEL_CMDLINE, &err), &err);
}

static inline void pt_init(struct pt *t)
{
	struct kiln_err err = KILN_ERR_INIT;
	size_t i;

	memset(t, 0, sizeof(*t));
	t->ctx = macro_ctx_new(&err);
	assert_non_null(t->ctx);
	/* No shell, no Lua io: the tests depend on nothing outside the text. */
	macro_ctx_set_restricted(t->ctx, true);
	macro_ctx_set_diag(t->ctx, pt_diag, t);
	for (i = 0; i < KILN_ARRAY_SIZE(pt_base_macros); i++)
		pt_define(t, pt_base_macros[i]);
}

static inline void pt_release(struct pt *t)
{
	spec_free(t->spec);
	t->spec = NULL;
	macro_ctx_free(t->ctx);
	t->ctx = NULL;
}

/* Parse text as NAME, collecting diagnostics in t->log; the spec of an earlier parse is
 * freed first. */
static inline kiln_rc pt_run_named(struct pt *t, const char *name, const char *text, unsigned flags)
{
	spec_free(t->spec);
	t->spec = NULL;
	kiln_err_clear(&t->err);
	t->log[0] = '\0';
	t->loglen = 0;
	t->rc = spec_parse_mem(name, text, strlen(text), t->ctx, flags, &t->spec, &t->err);
	return t->rc;
}

static inline kiln_rc pt_run(struct pt *t, const char *text, unsigned flags)
{
	return pt_run_named(t, "t.spec", text, flags);
}

/* Parse text, which must succeed; returns the spec (owned by t). */
static inline struct spec *pt_ok(struct pt *t, const char *text)
{
	assert_ok(pt_run(t, text, 0), &t->err);
	assert_non_null(t->spec);
	return t->spec;
}

/* Parse text, which must fail with code, on line (0: do not check), with exactly msg. */
static inline void pt_fail(struct pt *t, const char *text, kiln_rc code, int line, const char *msg)
{
	kiln_rc rc = pt_run(t, text, 0);

	if (rc != code || strcmp(t->err.msg, msg) || (line && t->err.line != line))
		print_error("got rc %d line %d: '%s'\nwant rc %d line %d: '%s'\n", (int)rc,
		            t->err.line, t->err.msg, (int)code, line, msg);
	assert_int_equal(rc, code);
	assert_string_equal(t->err.msg, msg);
	if (line)
		assert_int_equal(t->err.line, line);
	assert_null(t->spec);
}

/* One-shot forms: a fresh context per call. */
static inline void pt_expect_fail(const char *text, kiln_rc code, int line, const char *msg)
{
	struct pt t;

	pt_init(&t);
	pt_fail(&t, text, code, line, msg);
	pt_release(&t);
}

/* The parsed text (rpmspec -P) of a spec that must parse. */
static inline void pt_expect_parsed(const char *text, const char *want)
{
	struct pt t;

	pt_init(&t);
	pt_ok(&t, text);
	if (strcmp(t.spec->parsed.ptr, want))
		print_error("parsed:\n%s\n--- want:\n%s\n", t.spec->parsed.ptr, want);
	assert_string_equal(t.spec->parsed.ptr, want);
	pt_release(&t);
}

/* The warnings of the last parse must contain want. */
static inline void pt_assert_log(const struct pt *t, const char *want)
{
	if (!strstr(t->log, want))
		print_error("log:\n%s\nlacks: %s\n", t->log, want);
	assert_non_null(strstr(t->log, want));
}

static inline const char *pt_tag_str(const struct spec_package *pkg, uint32_t tag)
{
	return rpmtag_set_get_str(pkg->tags, tag);
}

/* Element i of a string-class tag, or NULL. */
static inline const char *pt_tag_stri(const struct rpmtag_set *ts, uint32_t tag, uint32_t i)
{
	struct rpmtag_qf_value v;

	if (!rpmtag_set_get(ts, tag, &v) || i >= v.count)
		return NULL;
	return ((const char *const *)v.data)[i];
}

/* Element i of an INT32 tag; fails the test when absent. */
static inline uint32_t pt_tag_u32(const struct rpmtag_set *ts, uint32_t tag, uint32_t i)
{
	struct rpmtag_qf_value v;

	assert_true(rpmtag_set_get(ts, tag, &v));
	assert_int_equal(v.type, RPMTAG_TYPE_INT32);
	assert_true(i < v.count);
	return ((const uint32_t *)v.data)[i];
}

static inline uint32_t pt_tag_count(const struct rpmtag_set *ts, uint32_t tag)
{
	struct rpmtag_qf_value v;

	return rpmtag_set_get(ts, tag, &v) ? v.count : 0;
}

/* Render a query format over a tag set of t's spec. */
static inline const char *pt_qf(struct pt *t, const struct rpmtag_set *ts, const char *fmt,
                                char *dst, size_t size)
{
	struct kiln_buf out = KILN_BUF_INIT(KILN_MIB);
	struct kiln_err err = KILN_ERR_INIT;
	struct rpmtag_qf_source src;

	assert_ok(spec_qf_source_make(t->spec, ts, &src, &err), &err);
	assert_ok(rpmtag_qf_format(fmt, &src, &out, &err), &err);
	snprintf(dst, size, "%s", out.ptr);
	kiln_buf_release(&out);
	return dst;
}

#endif
