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
	/* a pipe: past what the in-process subset answers, so the executor's shell runs it */
	assert_ok(macro_expand(ctx, "[%(echo $WHO | tr a-z A-Z)]", 27, &out, &err), &err);
	assert_string_equal(out.ptr, "[SANDBOX]");
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

/* Bodies that only test variables and echo are answered in-process with the environment the
 * sandbox's shell gets (TZ forced by the executor, LANG defaulted): the answer must be the
 * shell's, which KILN_NO_SHLITE=1 asks for. */
KILN_TEST(shell_inprocess_answers_as_the_sandbox_shell)
{
	static const char *const bodies[] = {
	    "echo \"$TZ $LANG $X\"",
	    "[ -z \"$RPM_BUILD_NCPUS\" ] && RPM_BUILD_NCPUS=4; echo $RPM_BUILD_NCPUS",
	    "if [ \"$X\" -gt 1 ]; then echo big; else echo small; fi",
	    "echo ${UNSET}x; true || echo no",
	};
	struct chroot_config cfg;
	struct chroot_exec *ex = NULL;
	struct kiln_err err = KILN_ERR_INIT;
	struct kiln_buf fast = KILN_BUF_INIT(KILN_MIB), slow = KILN_BUF_INIT(KILN_MIB);
	const char *env[] = {"X=42", "LANG=C", NULL};
	struct chroot_shell sh = {NULL, env, NULL, -1};
	size_t i;

	SANDBOX_OR_SKIP();
	chroot_config_init(&cfg);
	cfg.kind = CHROOT_EXEC_SANDBOX;
	assert_ok(chroot_exec_new(&cfg, &ex, &err), &err);
	sh.exec = ex;
	for (i = 0; i < KILN_ARRAY_SIZE(bodies); i++) {
		kiln_buf_reset(&fast);
		kiln_buf_reset(&slow);
		/* the fast path takes every one of them */
		assert_true(macro_shell_inprocess(bodies[i], env, &fast));
		kiln_buf_reset(&fast);
		unsetenv("KILN_NO_SHLITE");
		assert_ok(chroot_shell_run(&sh, bodies[i], &fast, &err), &err);
		setenv("KILN_NO_SHLITE", "1", 1);
		assert_ok(chroot_shell_run(&sh, bodies[i], &slow, &err), &err);
		unsetenv("KILN_NO_SHLITE");
		assert_int_equal(kiln_buf_finish(&fast, &err), KILN_OK);
		assert_int_equal(kiln_buf_finish(&slow, &err), KILN_OK);
		assert_string_equal(fast.ptr, slow.ptr);
	}
	/* HOME is the shell's own business: the sandbox's shell answers (the executor's HOME,
	 * which the caller's env does not have). */
	kiln_buf_reset(&fast);
	assert_ok(chroot_shell_run(&sh, "echo $HOME", &fast, &err), &err);
	assert_string_equal(fast.ptr, "/builddir\n");
	chroot_exec_free(ex);
	kiln_buf_release(&fast);
	kiln_buf_release(&slow);
}
