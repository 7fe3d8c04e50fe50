/*
 * shell.c - running %(...) commands on the host with /bin/sh.
 */
#include "util/util.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "macro/macro_int.h"

kiln_rc macro_shell_host(void *data, const char *cmd, struct kiln_buf *out, struct kiln_err *err)
{
	int fds[2] = {-1, -1};
	kiln_rc rc;
	pid_t pid;
	int status;

	(void)data;
	fflush(NULL);
	if (pipe2(fds, O_CLOEXEC) < 0)
		return kiln_err_sys(err, KILN_EIO, "cannot run shell command: pipe");
	pid = fork();
	if (pid < 0) {
		util_close(fds[0]);
		util_close(fds[1]);
		return kiln_err_sys(err, KILN_EIO, "cannot run shell command: fork");
	}
	if (pid == 0) {
		/* Child: stdout into the pipe; stdin and stderr are the caller's, as popen. */
		if (dup2(fds[1], STDOUT_FILENO) < 0)
			_exit(127);
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	util_close(fds[1]);
	rc = util_read_fd(fds[0], out, err);
	util_close(fds[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	/* rpm ignores the exit status of %(...): the output is what counts. */
	return rc;
}
