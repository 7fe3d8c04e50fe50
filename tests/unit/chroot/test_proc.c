#include "util/util.h"

#include <fcntl.h>
#include <linux/capability.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>

#include "tests/unit/chroot/chroot_test.h"

static int exec_search(void *arg)
{
	char *argv[] = {(char *)"sh", (char *)"-c", (char *)"exit 7", NULL};
	char *envp[] = {NULL};

	(void)arg;
	/* The first PATH entry does not exist; the search goes on. */
	(void)chroot_proc_exec(argv, envp, "/nonexistent/kiln:/bin", NULL);
	return 100;
}

static int exec_missing(void *arg)
{
	char *argv[] = {(char *)"kiln-no-such-command", NULL};
	char *envp[] = {NULL};
	struct kiln_err err = KILN_ERR_INIT;

	(void)arg;
	if (chroot_proc_exec(argv, envp, "/bin:/usr/bin", &err) != KILN_ENOTFOUND)
		return 1;
	return strstr(err.msg, "kiln-no-such-command") ? 0 : 2;
}

KILN_TEST(proc_exec_searches_the_given_path)
{
	assert_int_equal(in_child(exec_search, NULL), 7);
	assert_int_equal(in_child(exec_missing, NULL), 0);
}

static int limits_apply(void *arg)
{
	struct chroot_limits lim = {.nofile = 64};
	struct rlimit rl;

	(void)arg;
	if (chroot_proc_rlimits(&lim, NULL))
		return 1;
	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur != 64 || rl.rlim_max != 64)
		return 2;
	if (getrlimit(RLIMIT_CORE, &rl) < 0 || rl.rlim_cur != 0)
		return 3;
	/* Above the hard limit is clamped, not an error (no CAP_SYS_RESOURCE assumed). */
	lim.nofile = 1u << 30;
	if (chroot_proc_rlimits(&lim, NULL))
		return 4;
	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur > 64)
		return 5;
	return 0;
}

KILN_TEST(proc_rlimits)
{
	struct chroot_limits lim = {.nofile = 100, .cpus = 1};
	struct kiln_buf b = KILN_BUF_INIT(1024);

	assert_int_equal(in_child(limits_apply, NULL), 0);
	chroot_proc_describe_rlimits(&lim, &b);
	assert_non_null(strstr(b.ptr, "nofile=100"));
	assert_non_null(strstr(b.ptr, "core=0"));
	assert_non_null(strstr(b.ptr, "cpus=1"));
	kiln_buf_release(&b);
}

static int cpus_pin(void *arg)
{
	cpu_set_t set;

	(void)arg;
	if (chroot_proc_cpus(1, NULL))
		return 1;
	if (sched_getaffinity(0, sizeof(set), &set) < 0)
		return 2;
	return CPU_COUNT(&set) == 1 ? 0 : 3;
}

KILN_TEST(proc_cpus)
{
	assert_int_equal(in_child(cpus_pin, NULL), 0);
}

static int caps_drop(void *arg)
{
	(void)arg;
	if (chroot_proc_no_new_privs(NULL) || prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 1)
		return 1;
	if (chroot_proc_drop_caps(NULL))
		return 2;
	/* CAP_SYS_ADMIN is gone: no mounting; CAP_CHOWN is kept. */
	if (prctl(PR_CAPBSET_READ, CAP_SYS_ADMIN, 0, 0, 0) != 0)
		return 3;
	if (prctl(PR_CAPBSET_READ, CAP_CHOWN, 0, 0, 0) != 1)
		return 4;
	if (mount("none", "/", NULL, MS_REMOUNT | MS_BIND | MS_RDONLY, NULL) == 0 || errno != EPERM)
		return 5;
	return 0;
}

KILN_TEST(proc_drop_caps_as_root)
{
	if (geteuid() != 0)
		skip();
	assert_int_equal(in_child(caps_drop, NULL), 0);
}

KILN_TEST(proc_cloexec_and_stdio)
{
	struct kiln_err err = KILN_ERR_INIT;
	int fd = open("/dev/null", O_RDONLY);

	assert_true(fd >= 3);
	assert_int_equal(fcntl(fd, F_GETFD) & FD_CLOEXEC, 0);
	assert_ok(chroot_proc_cloexec_from(fd, &err), &err);
	assert_int_equal(fcntl(fd, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
	util_close(fd);
}

static int stdio_swap(void *arg)
{
	int p[2];
	int fds[3];
	char c = 0;

	(void)arg;
	if (pipe(p) < 0)
		return 1;
	/* 1 and 2 both become the pipe's write end; 0 its read end. */
	fds[0] = p[0];
	fds[1] = p[1];
	fds[2] = p[1];
	if (chroot_proc_stdio(fds, NULL))
		return 2;
	if (write(2, "z", 1) != 1 || read(0, &c, 1) != 1)
		return 3;
	return c == 'z' ? 0 : 4;
}

KILN_TEST(proc_stdio_installs_fds)
{
	assert_int_equal(in_child(stdio_swap, NULL), 0);
}

KILN_TEST(proc_msg_roundtrip)
{
	struct kiln_err in = KILN_ERR_INIT;
	struct kiln_err out = KILN_ERR_INIT;
	struct chroot_msg m;
	size_t got = 0;
	int p[2];

	assert_int_equal(pipe(p), 0);
	errno = ENOENT;
	kiln_err_sys(&in, KILN_ENOTFOUND, "cannot execute '%s'", "x");
	chroot_msg_send(p[1], CHROOT_MSG_EXEC, &in, 0);
	assert_ok(util_read_full(p[0], &m, sizeof(m), &got, &out), &out);
	assert_int_equal(got, sizeof(m));
	assert_int_equal(m.kind, CHROOT_MSG_EXEC);
	assert_int_equal(chroot_msg_to_err(&m, &out), KILN_ENOTFOUND);
	assert_int_equal(out.sys_errno, ENOENT);
	assert_non_null(strstr(out.msg, "cannot execute 'x'"));
	/* A garbage code becomes KILN_EIO rather than passing through. */
	m.rc = 999;
	kiln_err_clear(&out);
	assert_int_equal(chroot_msg_to_err(&m, &out), KILN_EIO);
	util_close(p[0]);
	util_close(p[1]);
}
