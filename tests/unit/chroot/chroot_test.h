/*
 * chroot_test.h - helpers for chroot/'s unit tests: skip (or, with KILN_MUST_WORK=1, fail)
 * when namespaces are unavailable, and run a command capturing its output.
 */
#ifndef KILN_TESTS_CHROOT_TEST_H
#define KILN_TESTS_CHROOT_TEST_H

#include "util/util.h"

#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include "chroot/chroot_int.h"
#include "tests/unit/harness.h"

static inline bool must_work(void)
{
	const char *v = getenv("KILN_MUST_WORK");

	return v && !strcmp(v, "1");
}

/* Skip the test unless a sandbox works here (fail instead under KILN_MUST_WORK=1). */
#define SANDBOX_OR_SKIP()                                                                          \
	do {                                                                                       \
		struct chroot_config pc_;                                                          \
		struct kiln_err pe_ = KILN_ERR_INIT;                                               \
		chroot_config_init(&pc_);                                                          \
		if (chroot_sandbox_probe(&pc_, &pe_)) {                                            \
			print_message("sandbox unavailable: %s\n", pe_.msg);                       \
			if (must_work())                                                           \
				fail_msg("KILN_MUST_WORK=1 but the sandbox does not work");        \
			skip();                                                                    \
		}                                                                                  \
	} while (0)

/* Fork; run fn in the child (its return value is the exit status); wait; return it. */
static inline int in_child(int (*fn)(void *), void *arg)
{
	int status = 0;
	pid_t pid = fork();

	if (pid == 0)
		_exit(fn(arg));
	assert_true(pid > 0);
	assert_int_equal(chroot_waitpid(pid, &status, 0), pid);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* In a child: new mount namespace, and a user namespace (root inside) when not root. */
static inline bool unshare_mount_ns(void)
{
	uid_t uid = geteuid();
	gid_t gid = getegid();

	if (uid == 0)
		return unshare(CLONE_NEWNS) == 0;
	if (unshare(CLONE_NEWUSER | CLONE_NEWNS) < 0)
		return false;
	return chroot_ns_write_idmaps(uid, gid, NULL) == KILN_OK;
}

/* Run argv through ex with stdout captured into out; returns the rc. */
static inline kiln_rc run_capture(struct chroot_exec *ex, const char *const *argv,
                                  const char *const *env, struct kiln_buf *out,
                                  struct chroot_result *res, struct kiln_err *err)
{
	struct chroot_run run;

	memset(&run, 0, sizeof(run));
	run.argv = argv;
	run.env = env;
	run.stdin_fd = -1;
	run.stdout_fd = -1;
	run.stderr_fd = -1;
	run.capture = out;
	return chroot_exec_run(ex, &run, res, err);
}

#endif
