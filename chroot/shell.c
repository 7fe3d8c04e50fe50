/*
 * shell.c - %(...) through an executor, with macro/macro.h's macro_shell_fn signature, so a
 * build's shell expansions see the same root, environment and limits as its stages.
 */
#include "util/util.h"

#include "chroot/chroot_int.h"
#include "macro/macro.h"

/* The signature must stay the macro engine's: a mismatch fails here, at compile time. */
static const macro_shell_fn chroot_shell_is_a_macro_shell KILN_UNUSED = chroot_shell_run;

static bool chroot_shell_inprocess(const struct chroot_shell *sh, const char *cmd,
                                   struct kiln_buf *out)
{
	struct kiln_arena a;
	struct kiln_err e = KILN_ERR_INIT;
	char **env = NULL;
	bool ok;

	kiln_arena_init(&a, KILN_LIMIT_ARENA);
	ok = !chroot_exec_env(sh->exec, sh->env, &a, &env, NULL, &e) &&
	     macro_shell_inprocess(cmd, (const char *const *)env, out);
	kiln_arena_release(&a);
	return ok;
}

kiln_rc chroot_shell_run(void *data, const char *cmd, struct kiln_buf *out, struct kiln_err *err)
{
	const struct chroot_shell *sh = data;
	const char *argv[] = {"/bin/sh", "-c", cmd, NULL};
	struct chroot_result res;
	struct chroot_run run;
	kiln_rc rc;

	if (!sh || !sh->exec)
		return kiln_err_set(err, KILN_EINVAL, "shell expansion without an executor");
	/* A body that only tests variables and echoes needs no sandbox: answered here with
	 * the environment the sandbox's shell would get. */
	if (chroot_shell_inprocess(sh, cmd, out))
		return KILN_OK;
	memset(&run, 0, sizeof(run));
	run.argv = argv;
	run.env = sh->env;
	run.cwd = sh->cwd;
	run.stdin_fd = -1;
	run.stdout_fd = -1;
	run.stderr_fd = sh->stderr_fd;
	run.capture = out;
	rc = chroot_exec_run(sh->exec, &run, &res, err);
	if (rc)
		kiln_err_wrap(err, "%%(%.100s)", cmd);
	/* rpm ignores the exit status of %(...): the output is what counts. */
	return rc;
}
