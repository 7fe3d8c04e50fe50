/*
 * proc.c - the hygiene of a command child before exec: cgroups, session, stdio, working
 * directory, umask, rlimits, CPU pinning, capabilities, no_new_privs, fds; the exec itself;
 * and the status messages children send to kiln.
 *
 * These run between fork and exec. They do not allocate; errors go into a caller's
 * struct kiln_err and from there onto the status pipe.
 */
#include "util/util.h"

#include <fcntl.h>
#include <linux/audit.h>
#include <linux/capability.h>
#include <linux/close_range.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "chroot/chroot_int.h"

/* What a build may keep as (namespace) root. Enough to install files with any owner and
 * mode, to run a test server on a low port, and to signal its own processes; nothing that
 * changes mounts, devices, the kernel, time, other processes' memory, or the network setup.
 * Not CAP_DAC_READ_SEARCH: with it open_by_handle_at() opens any inode of a filesystem the
 * sandbox has a mount of (the host's /usr is one), the host's / included ("shocker");
 * CAP_DAC_OVERRIDE already lets root read every file it can reach. */
static const int keep_caps[] = {
    CAP_CHOWN,  CAP_DAC_OVERRIDE, CAP_FOWNER,           CAP_FSETID,  CAP_KILL,
    CAP_SETGID, CAP_SETUID,       CAP_NET_BIND_SERVICE, CAP_SETFCAP, CAP_AUDIT_WRITE,
};

pid_t chroot_waitpid(pid_t pid, int *status, int flags)
{
	pid_t r;

	do
		r = waitpid(pid, status, flags);
	while (r < 0 && errno == EINTR);
	return r;
}

void chroot_msg_send(int fd, enum chroot_msg_kind kind, const struct kiln_err *err, int status)
{
	struct chroot_msg m;
	ssize_t n;

	memset(&m, 0, sizeof(m));
	m.kind = (int32_t)kind;
	m.status = status;
	if (err) {
		m.rc = (int32_t)err->code;
		m.sys_errno = err->sys_errno;
		snprintf(m.msg, sizeof(m.msg), "%s", err->msg);
	}
	/* One write below PIPE_BUF: atomic, so kiln never sees half a message. */
	do
		n = write(fd, &m, sizeof(m));
	while (n < 0 && errno == EINTR);
}

kiln_rc chroot_msg_to_err(const struct chroot_msg *m, struct kiln_err *err)
{
	kiln_rc rc = (kiln_rc)m->rc;
	char msg[KILN_ERR_MSG_MAX];

	if (rc <= KILN_OK || rc > KILN_EMACRO)
		rc = KILN_EIO;
	memcpy(msg, m->msg, sizeof(msg));
	msg[sizeof(msg) - 1] = '\0';
	kiln_err_set(err, rc, "%s", msg);
	if (err && err->code == rc && !err->sys_errno)
		err->sys_errno = m->sys_errno;
	return rc;
}

kiln_rc chroot_proc_join_cgroups(const int *fds, size_t n, struct kiln_err *err)
{
	char pid[32];
	int len = snprintf(pid, sizeof(pid), "%d\n", (int)getpid());
	size_t i;

	for (i = 0; i < n; i++) {
		ssize_t w;

		do
			w = write(fds[i], pid, (size_t)len);
		while (w < 0 && errno == EINTR);
		if (w != len)
			return kiln_err_sys(err, KILN_EIO, "cannot join the run's cgroup");
	}
	return KILN_OK;
}

kiln_rc chroot_proc_stdio(const int stdio[3], struct kiln_err *err)
{
	int fds[3];
	int i;

	/* First move every source above 2, so installing one cannot clobber another. */
	for (i = 0; i < 3; i++) {
		fds[i] = fcntl(stdio[i], F_DUPFD_CLOEXEC, 3);
		if (fds[i] < 0)
			return kiln_err_sys(err, KILN_EIO, "cannot set up fd %d of the command", i);
	}
	for (i = 0; i < 3; i++) {
		if (dup2(fds[i], i) < 0)
			return kiln_err_sys(err, KILN_EIO, "cannot set up fd %d of the command", i);
	}
	return KILN_OK;
}

static rlim_t clamp_hard(int res, uint64_t want, struct rlimit *cur)
{
	if (getrlimit(res, cur) < 0)
		return (rlim_t)want;
	/* Raising above the hard limit needs CAP_SYS_RESOURCE, which kiln does not assume
	 * (root here lacks it): the most we can promise is the hard limit. */
	if (cur->rlim_max != RLIM_INFINITY && (rlim_t)want > cur->rlim_max)
		return cur->rlim_max;
	return (rlim_t)want;
}

static kiln_rc set_limit(int res, const char *name, uint64_t want, struct kiln_err *err)
{
	struct rlimit cur;
	struct rlimit rl;

	rl.rlim_cur = rl.rlim_max = clamp_hard(res, want, &cur);
	if (setrlimit(res, &rl) < 0)
		return kiln_err_sys(err, KILN_EIO, "cannot set %s to %" PRIu64, name, want);
	return KILN_OK;
}

kiln_rc chroot_proc_rlimits(const struct chroot_limits *lim, struct kiln_err *err)
{
	kiln_rc rc = KILN_OK;

	if (lim->nofile)
		rc = set_limit(RLIMIT_NOFILE, "RLIMIT_NOFILE", lim->nofile, err);
	if (!rc && lim->nproc)
		rc = set_limit(RLIMIT_NPROC, "RLIMIT_NPROC", lim->nproc, err);
	if (!rc && !lim->core)
		rc = set_limit(RLIMIT_CORE, "RLIMIT_CORE", 0, err);
	return rc;
}

void chroot_proc_describe_rlimits(const struct chroot_limits *lim, struct kiln_buf *out)
{
	struct rlimit cur;

	if (lim->nofile)
		kiln_buf_addf(out, " nofile=%llu",
		              (unsigned long long)clamp_hard(RLIMIT_NOFILE, lim->nofile, &cur));
	if (lim->nproc)
		kiln_buf_addf(out, " nproc=%llu%s",
		              (unsigned long long)clamp_hard(RLIMIT_NPROC, lim->nproc, &cur),
		              geteuid() == 0 ? "(not enforced for root outside a user namespace)"
		                             : "");
	kiln_buf_addstr(out, lim->core ? " core=inherited" : " core=0");
	if (lim->cpus)
		kiln_buf_addf(out, " cpus=%u", lim->cpus);
}

kiln_rc chroot_proc_cpus(unsigned n, struct kiln_err *err)
{
	cpu_set_t have, want;
	unsigned kept = 0;
	int cpu;

	if (!n)
		return KILN_OK;
	if (sched_getaffinity(0, sizeof(have), &have) < 0)
		return kiln_err_sys(err, KILN_EIO, "cannot read the CPU affinity");
	CPU_ZERO(&want);
	for (cpu = 0; cpu < CPU_SETSIZE && kept < n; cpu++) {
		if (CPU_ISSET(cpu, &have)) {
			CPU_SET(cpu, &want);
			kept++;
		}
	}
	/* Fewer CPUs than asked: keep them all; nproc then says fewer, which the caller's
	 * %_smp_build_ncpus must not depend on (it passes RPM_BUILD_NCPUS itself). */
	if (sched_setaffinity(0, sizeof(want), &want) < 0)
		return kiln_err_sys(err, KILN_EIO, "cannot pin the command to %u CPUs", n);
	return KILN_OK;
}

static bool cap_kept(int cap)
{
	size_t i;

	for (i = 0; i < KILN_ARRAY_SIZE(keep_caps); i++) {
		if (keep_caps[i] == cap)
			return true;
	}
	return false;
}

kiln_rc chroot_proc_drop_caps(struct kiln_err *err)
{
	struct __user_cap_header_struct hdr = {_LINUX_CAPABILITY_VERSION_3, 0};
	struct __user_cap_data_struct data[2];
	int cap;

	memset(data, 0, sizeof(data));
	for (cap = 0; cap <= 63; cap++) {
		if (cap_kept(cap)) {
			data[cap / 32].effective |= 1u << (cap % 32);
			data[cap / 32].permitted |= 1u << (cap % 32);
			continue;
		}
		/* EINVAL: the kernel does not know this capability number; nothing to drop. */
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0 && errno != EINVAL)
			return kiln_err_sys(err, KILN_EPRIV, "cannot drop capability %d", cap);
	}
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
		return kiln_err_sys(err, KILN_EPRIV, "cannot clear ambient capabilities");
	if (syscall(SYS_capset, &hdr, data) < 0)
		return kiln_err_sys(err, KILN_EPRIV, "cannot drop capabilities");
	return KILN_OK;
}

kiln_rc chroot_proc_no_new_privs(struct kiln_err *err)
{
	/* Always: no setuid binary, file capability or LSM transition can give the command
	 * more than it starts with. */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return kiln_err_sys(err, KILN_EPRIV, "cannot set no_new_privs");
	return KILN_OK;
}

#if defined(__x86_64__)
#define NATIVE_AUDIT_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define NATIVE_AUDIT_ARCH AUDIT_ARCH_AARCH64
#endif

#ifdef NATIVE_AUDIT_ARCH
/* A jump to the final "return 0" from the comparison at index i of a filter whose last
 * index is last. */
#define SYNC_CALL(nr, i, last) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), (last) - (i)-1, 0)

kiln_rc chroot_proc_suppress_sync(struct kiln_err *err)
{
	/* Another architecture's calls (a 32-bit program) have other numbers: allowed as they
	 * are. x32 calls carry bit 30 over the same numbers, so it is masked off. */
	struct sock_filter f[] = {
	    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
	    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, NATIVE_AUDIT_ARCH, 1, 0),
	    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
	    BPF_STMT(BPF_ALU | BPF_AND | BPF_K, ~0x40000000u),
	    SYNC_CALL(SYS_sync, 5, 11),
	    SYNC_CALL(SYS_syncfs, 6, 11),
	    SYNC_CALL(SYS_fsync, 7, 11),
	    SYNC_CALL(SYS_fdatasync, 8, 11),
	    SYNC_CALL(SYS_sync_file_range, 9, 11),
	    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	    /* 11: errno 0, that is, the call returns 0 without running */
	    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | 0),
	};
	struct sock_fprog prog = {(unsigned short)KILN_ARRAY_SIZE(f), f};

	if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) < 0)
		return kiln_err_sys(err, KILN_EPRIV, "cannot install the filter suppressing sync");
	return KILN_OK;
}
#else
kiln_rc chroot_proc_suppress_sync(struct kiln_err *err)
{
	(void)err;
	return KILN_OK; /* documented: the calls stay real on other architectures */
}
#endif

kiln_rc chroot_proc_cloexec_from(int lowfd, struct kiln_err *err)
{
	/* close_range(CLOEXEC) rather than closing: the status pipe must stay usable until
	 * exec succeeds, so a failure can still be reported. */
	if (syscall(SYS_close_range, (unsigned)lowfd, ~0u, CLOSE_RANGE_CLOEXEC) == 0)
		return KILN_OK;
	if (errno != ENOSYS && errno != EINVAL)
		return kiln_err_sys(err, KILN_EIO, "cannot mark fds close-on-exec");
	/* Older kernels: walk the fd table by number. */
	for (int fd = lowfd; fd < 65536; fd++) {
		int fl = fcntl(fd, F_GETFD);

		if (fl >= 0 && !(fl & FD_CLOEXEC))
			(void)fcntl(fd, F_SETFD, fl | FD_CLOEXEC);
	}
	return KILN_OK;
}

kiln_rc chroot_proc_exec(char *const *argv, char *const *envp, const char *path,
                         struct kiln_err *err)
{
	char full[KILN_LIMIT_PATH];
	int saved = ENOENT;
	const char *p = path;

	if (strchr(argv[0], '/')) {
		execve(argv[0], argv, envp);
		saved = errno;
		return kiln_err_sys(err, saved == ENOENT ? KILN_ENOTFOUND : KILN_EIO,
		                    "cannot execute '%s'", argv[0]);
	}
	/* PATH from the command's own environment (execvpe would use kiln's). */
	while (p && *p) {
		size_t n = strcspn(p, ":");
		int len =
		    snprintf(full, sizeof(full), "%.*s/%s", (int)(n ? n : 1), n ? p : ".", argv[0]);

		if (len > 0 && (size_t)len < sizeof(full)) {
			execve(full, argv, envp);
			if (errno != ENOENT && errno != ENOTDIR)
				saved = errno;
		}
		p += n;
		if (*p == ':')
			p++;
	}
	errno = saved;
	return kiln_err_sys(err, saved == ENOENT ? KILN_ENOTFOUND : KILN_EIO, "cannot execute '%s'",
	                    argv[0]);
}

kiln_rc chroot_proc_prepare(const struct chroot_child *c, struct kiln_err *err)
{
	const struct chroot_limits *lim = &c->ex->cfg.limits;
	kiln_rc rc;

	/* A new session: no controlling terminal, so nothing can push input into the caller's
	 * terminal (TIOCSTI), and kiln can kill the process group as a whole. */
	if (!c->keep_session && setsid() < 0)
		return kiln_err_sys(err, KILN_EIO, "cannot start a new session");
	if (c->keep_session && setpgid(0, 0) < 0 && errno != EPERM)
		return kiln_err_sys(err, KILN_EIO, "cannot start a process group");
	rc = chroot_proc_stdio(c->stdio, err);
	if (rc)
		return rc;
	if (c->cwd && chdir(c->cwd) < 0)
		return kiln_err_sys(err, errno == ENOENT ? KILN_ENOTFOUND : KILN_EIO,
		                    "cannot change to the working directory '%s'", c->cwd);
	umask(022);
	rc = chroot_proc_rlimits(lim, err);
	if (!rc)
		rc = chroot_proc_cpus(lim->cpus, err);
	return rc;
}
