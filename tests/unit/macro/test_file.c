#include "util/util.h"

#include "tests/unit/macro/macro_test.h"

static char *write_tmp(const char *name, const char *text)
{
	struct kiln_err err = KILN_ERR_INIT;
	char *path = kiln_malloc(512);

	snprintf(path, 512, "%s/%s", kiln_test_tmpdir(), name);
	assert_ok(util_write_atomic(path, text, strlen(text), 0644, &err), &err);
	return path;
}

KILN_TEST(file_logical_lines)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct macro_ctx *ctx = ctx_new(NULL);
	char *path = write_tmp("m", "# comment\n%t1 a\n  %t2 indented\nnot a definition\n"
	                            "%t3 one \\\n  two\n%t4 %{lua:\nx = 1\n\nprint(x)}\n"
	                            "%e1 a \\\n\n%e2 b\n");

	assert_ok(macro_load_file(ctx, path, MACRO_LEVEL_FILE, &err), &err);
	expect(ctx, "[%t1][%t2][%t3][%t4][%e1][%e2]", "[a][indented][one \n  two][1][a][b]");
	/* __file_name and __file_lineno exist only while loading. */
	expect(ctx, "%{?__file_name}", "");
	free(path);
	macro_ctx_free(ctx);
}

KILN_TEST(file_errors_are_located_and_counted)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct diag_log d;
	struct macro_ctx *ctx = ctx_new(&d);
	char *path = write_tmp("bad", "%bad1 {open\n%ok1 fine\n%1bad x\n%ok2 fine\n");
	char want[600];

	assert_int_equal(macro_load_file(ctx, path, MACRO_LEVEL_FILE, &err), KILN_ESYNTAX);
	snprintf(want, sizeof(want), "error: %s: line 1: Macro %%bad1 has unterminated body", path);
	assert_non_null(strstr(d.text.ptr, want));
	snprintf(want, sizeof(want), "error: %s: line 3: Macro %%1bad has illegal name", path);
	assert_non_null(strstr(d.text.ptr, want));
	expect(ctx, "%ok1 %ok2", "fine fine");
	free(path);
	kiln_buf_release(&d.text);
	macro_ctx_free(ctx);
}

KILN_TEST(file_missing_is_not_found)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct macro_ctx *ctx = ctx_new(NULL);

	assert_int_equal(macro_load_file(ctx, "/nonexistent/macros", MACRO_LEVEL_FILE, &err),
	                 KILN_ENOTFOUND);
	macro_ctx_free(ctx);
}

KILN_TEST(file_path_lists_glob_and_expand)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct macro_ctx *ctx = ctx_new(NULL);
	const char *dir = kiln_test_tmpdir();
	char p[600];
	char list[1400];

	snprintf(p, sizeof(p), "%s/macros.a", dir);
	assert_ok(util_write_atomic(p, "%x a\n%y a\n", 10, 0644, &err), &err);
	snprintf(p, sizeof(p), "%s/macros.b", dir);
	assert_ok(util_write_atomic(p, "%y b\n", 5, 0644, &err), &err);
	snprintf(p, sizeof(p), "%s/sub-t1", dir);
	assert_ok(util_mkdir_p(p, 0755, &err), &err);
	snprintf(p, sizeof(p), "%s/sub-t1/macros", dir);
	assert_ok(util_write_atomic(p, "%z t\n", 5, 0644, &err), &err);
	define(ctx, "which t1");
	snprintf(list, sizeof(list), "%s/macros.*:%s/none:%s/sub-%%{which}/macros", dir, dir, dir);
	assert_ok(macro_load_path(ctx, list, &err), &err);
	/* Later files override earlier ones. */
	expect(ctx, "%x %y %z", "a b t");
	macro_ctx_free(ctx);
}

/* A file several times the size of the window it is read through: definitions cut by a
 * chunk boundary (CRLF ends included), a logical line longer than a chunk, and line
 * numbers counted across the chunks. */
KILN_TEST(file_read_in_chunks)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct kiln_buf text = KILN_BUF_INIT(16 * KILN_MIB);
	struct kiln_buf want = KILN_BUF_INIT(16 * KILN_MIB);
	struct diag_log d;
	struct macro_ctx *ctx = ctx_new(&d);
	char msg[600];
	char *path;
	int i;

	for (i = 0; i < 5000; i++)
		kiln_buf_addf(&text, "%%m%d value-%d%s\n", i, i, i % 3 ? "" : "\r");
	kiln_buf_addstr(&text, "%long ");
	for (i = 0; i < 20000; i++) {
		kiln_buf_addf(&text, "w%d \\\n", i);
		kiln_buf_addf(&want, "w%d \n", i);
	}
	kiln_buf_addstr(&text, "end\n%1bad x\n%last %{lua:\n\nprint('l')}");
	kiln_buf_addstr(&want, "end");
	path = kiln_malloc(512);
	snprintf(path, 512, "%s/big", kiln_test_tmpdir());
	assert_ok(util_write_atomic(path, text.ptr, text.len, 0644, &err), &err);
	assert_int_equal(macro_load_file(ctx, path, MACRO_LEVEL_FILE, &err), KILN_ESYNTAX);
	snprintf(msg, sizeof(msg), "error: %s: line 25002: Macro %%1bad has illegal name", path);
	assert_non_null(strstr(d.text.ptr, msg));
	expect(ctx, "%m0|%m1|%m2999|%m4999|%last", "value-0|value-1|value-2999|value-4999|l");
	expect(ctx, "%long", want.ptr);
	free(path);
	kiln_buf_release(&text);
	kiln_buf_release(&want);
	kiln_buf_release(&d.text);
	macro_ctx_free(ctx);
}
