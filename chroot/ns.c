/*
 * ns.c - the sandbox's processes: the monitor that creates the namespaces, the init (PID 1)
 * that builds the root and reaps, and the command; plus the host executor's plain child.
 *
 * Why this shape: the PID namespace made by unshare() applies to the unsharer's children, so
 * the first child (monitor) unshares and forks init, which is PID 1 and mounts /proc for its
 * namespace. When init exits the kernel kills everything else in the namespace, and init
 * exits as soon as the command does: no process of a stage can outlive it. The monitor stays
 * in kiln's PID namespace so kiln can wait for it and kill it; init dies with it
 * (PR_SET_PDEATHSIG), and so the whole namespace dies when kiln kills the monitor.
 * Init and the command are started as posix_spawn starts programs (start_vforked): on the
 * starter's memory with the starter asleep, which the monitor (only waiting for init) and
 * init (waiting for the command's exec) can afford; only the monitor is a real fork of kiln.
 */
#include "util/util.h"

#include <fcntl.h>
#include <net/if.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "chroot/chroot_int.h"

#define CHROOT_COMMAND_STACK ((size_t)256 * 1024)   /* the command before exec: PATH search */
#define CHROOT_INIT_STACK ((size_t)2 * 1024 * 1024) /* init: root setup, then reaping */

/* Report err to kiln, then give the exit status to use. */
static int child_failed(int fd, enum chroot_msg_kind kind, const struct kiln_err *err, int code)
{
	chroot_msg_send(fd, kind, err, 0);
	return code;
}

KILN_NORETURN static void child_fail(int fd, enum chroot_msg_kind kind, const struct kiln_err *err,
                                     int code)
{
	_exit(child_failed(fd, kind, err, code));
}

int chroot_ns_flags(const struct chroot_exec *ex)
{
	int flags = CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWUTS | CLONE_NEWIPC;

	if (!ex->cfg.network)
		flags |= CLONE_NEWNET;
	if (ex->userns)
		flags |= CLONE_NEWUSER;
	return flags;
}

static kiln_rc write_file(const char *path, const char *text, struct kiln_err *err)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	size_t len = strlen(text);
	ssize_t w;

	if (fd < 0)
		return kiln_err_sys(err, KILN_EPRIV, "cannot open '%s'", path);
	do
		w = write(fd, text, len);
	while (w < 0 && errno == EINTR);
	if (w != (ssize_t)len) {
		int saved = errno;

		util_close(fd);
		errno = saved;
		return kiln_err_sys(err, KILN_EPRIV, "cannot write '%s'", path);
	}
	util_close(fd);
	return KILN_OK;
}

kiln_rc chroot_ns_write_idmaps(uid_t uid, gid_t gid, struct kiln_err *err)
{
	char map[64];
	kiln_rc rc;

	/* One-line maps of our own ids to root inside: the only maps an unprivileged process
	 * may write for itself, and all a build needs. setgroups must be denied first, or an
	 * unprivileged process could drop supplementary groups that deny it access. */
	rc = write_file("/proc/self/setgroups", "deny", err);
	if (rc && err && err->sys_errno == ENOENT) {
		kiln_err_clear(err);
		rc = KILN_OK;
	}
	if (rc)
		return rc;
	snprintf(map, sizeof(map), "0 %u 1\n", (unsigned)uid);
	rc = write_file("/proc/self/uid_map", map, err);
	if (rc)
		return rc;
	snprintf(map, sizeof(map), "0 %u 1\n", (unsigned)gid);
	return write_file("/proc/self/gid_map", map, err);
}

kiln_rc chroot_ns_lo_up(struct kiln_err *err)
{
	struct ifreq ifr;
	kiln_rc rc = KILN_OK;
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	/* lo of the new network namespace: local test servers work, nothing else is there. */
	if (s < 0)
		return kiln_err_sys(err, KILN_EIO, "cannot open a socket to configure 'lo'");
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "lo");
	if (ioctl(s, SIOCGIFFLAGS, &ifr) < 0) {
		rc = kiln_err_sys(err, KILN_EIO, "cannot read the flags of 'lo'");
		goto out;
	}
	ifr.ifr_flags |= IFF_UP;
	if (ioctl(s, SIOCSIFFLAGS, &ifr) < 0)
		rc = kiln_err_sys(err, KILN_EIO, "cannot bring 'lo' up");
out:
	util_close(s);
	return rc;
}

static kiln_rc set_hostname(const char *name, struct kiln_err *err)
{
	/* Safe: the UTS namespace is our own. */
	if (sethostname(name, strlen(name)) < 0)
		return kiln_err_sys(err, KILN_EIO, "cannot set the sandbox host name '%s'", name);
	if (setdomainname("(none)", 6) < 0)
		return kiln_err_sys(err, KILN_EIO, "cannot set the sandbox domain name");
	return KILN_OK;
}

static kiln_rc build_root(const struct chroot_exec *ex, struct kiln_err *err)
{
	kiln_rc rc;
	int rootfd = -1;
	size_t i;

	rc = chroot_mount_private(err);
	if (rc)
		return rc;
	if (ex->lower && ex->cfg.root_direct)
		rc = chroot_mount_root_bind(ex->lower, ex->mnt, &rootfd, err);
	else if (ex->lower)
		rc = chroot_mount_root_overlay(ex->lower, ex->upper, ex->work, ex->userns, ex->mnt,
		                               &rootfd, err);
	else
		rc = chroot_mount_root_tmpfs(ex->mnt, &rootfd, err);
	for (i = 0; !rc && i < ex->plan.n; i++)
		rc = chroot_op_apply(rootfd, &ex->plan.ops[i], err);
	/* The host root is read-only as a whole; a dir:/tar: root keeps its writable upper
	 * (thrown away with the executor) unless the caller asked for read-only. */
	if (!rc && (!ex->lower || ex->cfg.root_readonly))
		rc = chroot_mount_readonly(rootfd, "/", err);
	if (!rc)
		rc = chroot_mount_pivot(rootfd, err);
	util_close(rootfd);
	return rc;
}

/* The processes below run on stacks of their own inside their parent's memory (CLONE_VM):
 * they end by returning their exit status to clone(), never through a noreturn call, which
 * AddressSanitizer could not follow on such a stack. */

/* The command before exec, on init's memory (start_command): only system calls and the
 * error text on its own stack, no allocation, nothing init reads afterwards. */
static int command_entry(void *arg)
{
	const struct chroot_child *c = arg;
	struct kiln_err err = KILN_ERR_INIT;
	kiln_rc rc;

	rc = chroot_proc_prepare(c, &err);
	if (!rc)
		rc = chroot_proc_drop_caps(&err);
	if (!rc && c->ex->cfg.suppress_sync)
		rc = chroot_proc_suppress_sync(&err);
	if (!rc)
		rc = chroot_proc_cloexec_from(3, &err);
	if (rc)
		return child_failed(c->status_fd, CHROOT_MSG_SETUP, &err, 127);
	(void)chroot_proc_exec(c->argv, c->envp, c->path, &err);
	return child_failed(c->status_fd, CHROOT_MSG_EXEC, &err, 127);
}

/* A process sharing the caller's memory on a stack of its own, with the caller asleep until
 * it execs or exits (CLONE_VM | CLONE_VFORK), as posix_spawn starts programs: no copy of
 * the caller's page tables, no copy-on-write faults (about a millisecond per process on a
 * virtual machine). Its file descriptor table is its own. */
static pid_t start_vforked(int (*fn)(void *), void *arg, size_t stack_size)
{
	char *stack = mmap(NULL, stack_size, PROT_READ | PROT_WRITE,
	                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
	pid_t pid;

	if (stack == MAP_FAILED)
		return -1;
	pid = clone(fn, stack + stack_size, CLONE_VM | CLONE_VFORK | SIGCHLD, arg);
	munmap(stack, stack_size);
	return pid;
}

/* PID 1: reap everything; when the command ends, report and exit, which makes the kernel
 * kill whatever is left in the namespace. */
static int init_reap(pid_t cmd, int status_fd)
{
	int status = 0;

	for (;;) {
		pid_t r = chroot_waitpid(-1, &status, 0);

		if (r == cmd)
			break;
		if (r < 0 && errno == ECHILD)
			return 1;
	}
	chroot_msg_send(status_fd, CHROOT_MSG_EXIT, NULL, status);
	return 0;
}

struct init_args {
	const struct chroot_child *c;
	const int *alive;
};

/* Init, on the monitor's memory (the monitor sleeps until it exits: init never execs). */
static int init_entry(void *arg)
{
	const struct init_args *a = arg;
	const struct chroot_child *c = a->c;
	struct kiln_err err = KILN_ERR_INIT;
	struct pollfd pfd = {a->alive[0], POLLIN, 0};
	kiln_rc rc;
	pid_t cmd;

	util_close(a->alive[1]);
	/* Die with the monitor; and if it is already gone (kiln killed it between the clone
	 * and here), stop now: its end of the alive pipe is closed only when it exits. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || poll(&pfd, 1, 0) != 0)
		return 1;
	util_close(a->alive[0]);
	rc = set_hostname(c->ex->cfg.hostname, &err);
	if (!rc && !c->ex->cfg.network)
		rc = chroot_ns_lo_up(&err);
	if (!rc)
		rc = build_root(c->ex, &err);
	if (rc) {
		kiln_err_wrap(&err, "sandbox setup");
		return child_failed(c->status_fd, CHROOT_MSG_SETUP, &err, 1);
	}
	cmd = start_vforked(command_entry, (void *)c, CHROOT_COMMAND_STACK);
	if (cmd < 0) {
		kiln_err_sys(&err, KILN_EIO, "cannot start the command in the sandbox");
		return child_failed(c->status_fd, CHROOT_MSG_SETUP, &err, 1);
	}
	for (int i = 0; i < 3; i++)
		util_close(c->stdio[i]);
	return init_reap(cmd, c->status_fd);
}

static kiln_rc monitor_setup(const struct chroot_child *c, struct kiln_err *err)
{
	const struct chroot_exec *ex = c->ex;
	kiln_rc rc;

	/* Die with kiln, and not at all if kiln is already gone. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != c->kiln_pid)
		return kiln_err_set(err, KILN_ECANCEL, "kiln exited before the sandbox started");
	rc = chroot_proc_no_new_privs(err);
	/* Join the cgroups while still in the host's user namespace: the files belong to it. */
	if (!rc)
		rc = chroot_proc_join_cgroups(c->cg_procs, c->n_cg, err);
	if (rc)
		return rc;
	if (unshare(chroot_ns_flags(ex)) < 0)
		return kiln_err_sys(err, errno == EPERM ? KILN_EPRIV : KILN_EUNSUPP,
		                    "cannot create the sandbox namespaces (unshare)");
	if (ex->userns)
		return chroot_ns_write_idmaps(ex->uid, ex->gid, err);
	return KILN_OK;
}

void chroot_ns_monitor(const struct chroot_child *c)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct init_args a;
	int alive[2] = {-1, -1};
	int status = 0;
	pid_t init;

	if (monitor_setup(c, &err) || pipe2(alive, O_CLOEXEC) < 0) {
		if (!err.code)
			kiln_err_sys(&err, KILN_EIO, "cannot create a pipe");
		kiln_err_wrap(&err, "sandbox setup");
		child_fail(c->status_fd, CHROOT_MSG_SETUP, &err, 1);
	}
	a.c = c;
	a.alive = alive;
	init = start_vforked(init_entry, &a, CHROOT_INIT_STACK);
	if (init < 0) {
		kiln_err_sys(&err, KILN_EIO, "sandbox setup: cannot start the sandbox init");
		child_fail(c->status_fd, CHROOT_MSG_SETUP, &err, 1);
	}
	/* Here only once init has exited (CLONE_VFORK); what is left is to report it. */
	util_close(alive[0]);
	util_close(c->status_fd);
	for (int i = 0; i < 3; i++)
		util_close(c->stdio[i]);
	if (chroot_waitpid(init, &status, 0) < 0)
		_exit(1);
	_exit(0);
}

void chroot_host_child(const struct chroot_child *c)
{
	struct kiln_err err = KILN_ERR_INIT;
	kiln_rc rc = KILN_OK;

	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != c->kiln_pid)
		_exit(1);
	rc = chroot_proc_no_new_privs(&err);
	if (!rc)
		rc = chroot_proc_join_cgroups(c->cg_procs, c->n_cg, &err);
	if (!rc)
		rc = chroot_proc_prepare(c, &err);
	if (!rc && c->ex->cfg.suppress_sync)
		rc = chroot_proc_suppress_sync(&err);
	if (!rc)
		rc = chroot_proc_cloexec_from(3, &err);
	if (rc)
		child_fail(c->status_fd, CHROOT_MSG_SETUP, &err, 127);
	rc = chroot_proc_exec(c->argv, c->envp, c->path, &err);
	child_fail(c->status_fd, CHROOT_MSG_EXEC, &err, 127);
}
