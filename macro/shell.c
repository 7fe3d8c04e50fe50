/*
 * shell.c - running %(...) commands on the host with /bin/sh.
 */
#include "util/util.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include "macro/macro_int.h"

/* KILN_NO_SHLITE=1 (any value but empty or 0) sends every %(...) to /bin/sh, to compare. */
static bool shlite_disabled(void)
{
	const char *v = getenv("KILN_NO_SHLITE");

	return v && *v && strcmp(v, "0");
}

bool macro_shell_inprocess(const char *cmd, const char *const *env, struct kiln_buf *out)
{
	return !shlite_disabled() && macro_shlite_run(cmd, env, 0, out);
}

kiln_rc macro_shell_host(void *data, const char *cmd, struct kiln_buf *out, struct kiln_err *err)
{
	static char sh[] = "sh", dash_c[] = "-c";
	char *const argv[] = {sh, dash_c, (char *)cmd, NULL};
	posix_spawn_file_actions_t fa;
	int fds[2] = {-1, -1};
	kiln_rc rc;
	pid_t pid;
	int status;
	int e;

	(void)data;
	/* Most %(...) of rpm's macro files only test a variable and echo (no process needed)
	 * or ask a program a yes/no question (no shell needed). */
	if (!shlite_disabled() &&
	    macro_shlite_run(cmd, (const char *const *)environ, MACRO_SHLITE_PROGRAMS, out))
		return KILN_OK;
	fflush(NULL);
	if (pipe2(fds, O_CLOEXEC) < 0)
		return kiln_err_sys(err, KILN_EIO, "cannot run shell command: pipe");
	/* posix_spawn (vfork underneath) does not copy the parent's page tables: %(...) runs
	 * often while a spec is read. stdout goes into the pipe; stdin and stderr are the
	 * caller's, as with popen. */
	e = posix_spawn_file_actions_init(&fa);
	if (!e)
		e = posix_spawn_file_actions_adddup2(&fa, fds[1], STDOUT_FILENO);
	if (!e)
		e = posix_spawn(&pid, "/bin/sh", &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	util_close(fds[1]);
	if (e) {
		util_close(fds[0]);
		errno = e;
		return kiln_err_sys(err, KILN_EIO, "cannot run shell command: /bin/sh");
	}
	rc = util_read_fd(fds[0], out, err);
	util_close(fds[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	/* rpm ignores the exit status of %(...): the output is what counts. */
	return rc;
}
