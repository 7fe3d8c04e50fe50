/*
 * macro_test.h - helpers shared by the macro unit tests.
 */
#ifndef KILN_TESTS_MACRO_TEST_H
#define KILN_TESTS_MACRO_TEST_H

#include "util/util.h"

#include "macro/macro.h"
#include "tests/unit/harness.h"

/* Diagnostics collected instead of printed. */
struct diag_log {
	struct kiln_buf text;
};

static inline void diag_collect(void *data, enum kiln_log_level level, const char *msg)
{
	struct diag_log *d = data;

	kiln_buf_addf(&d->text, "%s%s\n",
	              level == KILN_LOG_WARN    ? "warning: "
	              : level == KILN_LOG_ERROR ? "error: "
	              : level == KILN_LOG_INFO  ? "info: "
	                                        : "",
	              msg);
}

static inline struct macro_ctx *ctx_new(struct diag_log *d)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct macro_ctx *ctx = macro_ctx_new(&err);

	assert_non_null(ctx);
	if (d) {
		kiln_buf_init(&d->text, KILN_MIB);
		macro_ctx_set_diag(ctx, diag_collect, d);
	}
	return ctx;
}

/* Expand src; on success compare with want, on failure return the error message. */
static inline void expect(struct macro_ctx *ctx, const char *src, const char *want)
{
	struct kiln_buf out = KILN_BUF_INIT(KILN_MIB * 16);
	struct kiln_err err = KILN_ERR_INIT;

	assert_ok(macro_expand(ctx, src, strlen(src), &out, &err), &err);
	if (strcmp(out.ptr, want))
		print_error("expanding '%s'\n", src);
	assert_string_equal(out.ptr, want);
	kiln_buf_release(&out);
}

static inline void expect_error(struct macro_ctx *ctx, const char *src, kiln_rc code,
                                const char *msg_part)
{
	struct kiln_buf out = KILN_BUF_INIT(KILN_MIB * 16);
	struct kiln_err err = KILN_ERR_INIT;

	assert_int_equal(macro_expand(ctx, src, strlen(src), &out, &err), code);
	assert_string_equal(out.ptr, "");
	if (!strstr(err.msg, msg_part))
		print_error("message '%s' lacks '%s'\n", err.msg, msg_part);
	assert_non_null(strstr(err.msg, msg_part));
	kiln_buf_release(&out);
}

static inline void define(struct macro_ctx *ctx, const char *line)
{
	struct kiln_err err = KILN_ERR_INIT;

	assert_ok(macro_define_line(ctx, line, MACRO_LEVEL_CMDLINE, &err), &err);
}

#endif
