#include "util/util.h"

#include "macro/macro.h"
#include "tests/unit/chroot/chroot_test.h"

KILN_TEST(shell_captures_stdout_and_ignores_status)
{
	struct chroot_config cfg;
	struct chroot_exec *ex = NULL;
	struct kiln_err err = KILN_ERR_INIT;
	struct kiln_buf out = KILN_BUF_INIT(KILN_MIB);
	const char *env[] = {"X=42", NULL};
	struct chroot_shell sh = {NULL, env, "/", -1};

	chroot_config_init(&cfg);
	assert_ok(chroot_exec_new(&cfg, &ex, &err), &err);
	sh.exec = ex;
	assert_ok(chroot_shell_run(&sh, "echo $X; pwd; exit 3", &out, &err), &err);
	assert_string_equal(out.ptr, "42\n/\n");
	chroot_exec_free(ex);
	kiln_buf_release(&out);
}

KILN_TEST(shell_through_the_macro_engine)
{
	struct chroot_config cfg;
	struct chroot_exec *ex = NULL;
	struct kiln_err err = KILN_ERR_INIT;
	struct kiln_buf out = KILN_BUF_INIT(KILN_MIB);
	const char *env[] = {"WHO=sandbox", NULL};
	struct chroot_shell sh = {NULL, env, NULL, -1};
	struct macro_ctx *ctx = macro_ctx_new(&err);

	assert_non_null(ctx);
	chroot_config_init(&cfg);
	assert_ok(chroot_exec_new(&cfg, &ex, &err), &err);
	sh.exec = ex;
	macro_ctx_set_shell(ctx, chroot_shell_run, &sh);
	assert_ok(macro_expand(ctx, "[%(echo $WHO)]", 14, &out, &err), &err);
	assert_string_equal(out.ptr, "[sandbox]");
	macro_ctx_free(ctx);
	chroot_exec_free(ex);
	kiln_buf_release(&out);
}

KILN_TEST(shell_limits_are_errors)
{
	struct chroot_config cfg;
	struct chroot_exec *ex = NULL;
	struct kiln_err err = KILN_ERR_INIT;
	struct kiln_buf out = KILN_BUF_INIT(8);
	const char *env[] = {NULL};
	struct chroot_shell sh = {NULL, env, NULL, -1};

	chroot_config_init(&cfg);
	cfg.limits.timeout_ms = 200;
	assert_ok(chroot_exec_new(&cfg, &ex, &err), &err);
	sh.exec = ex;
	/* More output than the buffer takes. */
	assert_int_equal(chroot_shell_run(&sh, "yes", &out, &err), KILN_ELIMIT);
	assert_non_null(strstr(err.msg, "%(yes)"));
	kiln_err_clear(&err);
	kiln_buf_reset(&out);
	assert_int_equal(chroot_shell_run(&sh, "sleep 5", &out, &err), KILN_ETIMEOUT);
	assert_non_null(strstr(err.msg, "killed after 0.200 s"));
	kiln_err_clear(&err);
	assert_int_equal(chroot_shell_run(NULL, "true", &out, &err), KILN_EINVAL);
	chroot_exec_free(ex);
	kiln_buf_release(&out);
}

KILN_TEST(shell_in_the_sandbox)
{
	struct chroot_config cfg;
	struct chroot_exec *ex = NULL;
	struct kiln_err err = KILN_ERR_INIT;
	struct kiln_buf out = KILN_BUF_INIT(KILN_MIB);
	const char *env[] = {NULL};
	struct chroot_shell sh = {NULL, env, NULL, -1};

	SANDBOX_OR_SKIP();
	chroot_config_init(&cfg);
	cfg.kind = CHROOT_EXEC_SANDBOX;
	cfg.hostname = "shellhost";
	assert_ok(chroot_exec_new(&cfg, &ex, &err), &err);
	sh.exec = ex;
	assert_ok(chroot_shell_run(&sh, "hostname; echo $HOME", &out, &err), &err);
	assert_string_equal(out.ptr, "shellhost\n/builddir\n");
	chroot_exec_free(ex);
	kiln_buf_release(&out);
}
