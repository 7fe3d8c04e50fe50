/*
 * reorder.c - the "file_order" reproducibility variation: the sandbox sees its writable
 * binds through disorderfs (reproducible-builds.org's FUSE file system, what reprotest's
 * "fileordering" variation runs), which lists every directory in reverse order.
 *
 * Why a file system: ext4 lists a directory in name-hash order and tmpfs in reverse creation
 * order, both the same for every build of the same files, so a build that packages `ls -U`
 * or `find` output, or archives a directory in readdir order, would reproduce by luck.
 * Reversed (not shuffled) so that two runs always differ where order matters and a check
 * never passes by chance. kiln itself reads the build directories on the host, underneath,
 * and sorts what it packages.
 */
#include "util/util.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "chroot/chroot_int.h"

#define REORDER_TIMEOUT_MS 30000
#define REORDER_OUTPUT_MAX 1024

/* Run argv (searched in PATH) with stdin from /dev/null; its first output bytes go to out;
 * *status gets the wait status (127 when it could not be executed). disorderfs forks its
 * daemon, which points its stdio at /dev/null before the foreground process exits, so the
 * pipe ends when the mount is ready. */
static kiln_rc reorder_spawn(const char *const *argv, struct kiln_buf *out, int *status,
                             struct kiln_err *err)
{
	int64_t deadline = util_clock_mono_ns() + (int64_t)REORDER_TIMEOUT_MS * 1000000;
	bool timed_out = false;
	int p[2];
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) < 0)
		return kiln_err_sys(err, KILN_EIO, "cannot create a pipe");
	pid = fork();
	if (pid < 0) {
		util_close(p[0]);
		util_close(p[1]);
		return kiln_err_sys(err, KILN_EIO, "cannot fork for %s", argv[0]);
	}
	if (pid == 0) {
		int null = open("/dev/null", O_RDONLY | O_CLOEXEC);

		if (null < 0 || dup2(null, 0) < 0 || dup2(p[1], 1) < 0 || dup2(p[1], 2) < 0)
			_exit(127);
		execvp(argv[0], (char *const *)argv);
		_exit(127);
	}
	util_close(p[1]);
	for (;;) {
		struct pollfd pfd = {p[0], POLLIN, 0};
		int64_t left = (deadline - util_clock_mono_ns()) / 1000000;
		char buf[512];
		ssize_t n;

		if (left <= 0) {
			timed_out = true;
			(void)kill(pid, SIGKILL);
			break;
		}
		if (poll(&pfd, 1, (int)left) <= 0)
			continue;
		n = read(p[0], buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		if (out->len + (size_t)n < out->max)
			kiln_buf_add(out, buf, (size_t)n);
	}
	util_close(p[0]);
	if (chroot_waitpid(pid, status, 0) != pid)
		return kiln_err_sys(err, KILN_EIO, "cannot wait for %s", argv[0]);
	if (timed_out)
		return kiln_err_set(err, KILN_ETIMEOUT, "%s did not finish in %d s", argv[0],
		                    REORDER_TIMEOUT_MS / 1000);
	while (out->len && (out->ptr[out->len - 1] == '\n' || out->ptr[out->len - 1] == ' '))
		out->len--;
	return kiln_buf_finish(out, err);
}

kiln_rc chroot_reorder_probe(struct kiln_err *err)
{
	const char *argv[] = {"disorderfs", "--version", NULL};
	struct kiln_buf out = KILN_BUF_INIT(REORDER_OUTPUT_MAX);
	int status = 0;
	kiln_rc rc;

	if (access("/dev/fuse", R_OK | W_OK) < 0)
		return kiln_err_sys(err, KILN_EUNSUPP, "no usable /dev/fuse");
	rc = reorder_spawn(argv, &out, &status, err);
	if (!rc && WIFEXITED(status) && WEXITSTATUS(status) == 127)
		rc = kiln_err_set(err, KILN_EUNSUPP, "disorderfs is not installed");
	else if (!rc && !(WIFEXITED(status) && WEXITSTATUS(status) == 0))
		rc = kiln_err_set(err, KILN_EUNSUPP, "disorderfs --version failed: %s", out.ptr);
	kiln_buf_release(&out);
	return rc;
}

/* A mount point is mounted when its device differs from its parent's, or when the FUSE
 * daemon behind it has gone (ENOTCONN). */
static bool reorder_mounted(const char *mnt, const char *parent)
{
	struct stat a, b;

	if (stat(mnt, &a) < 0)
		return errno == ENOTCONN || errno == EIO;
	return stat(parent, &b) == 0 && a.st_dev != b.st_dev;
}

static kiln_rc reorder_mount_one(struct chroot_exec *ex, struct chroot_bind *b, size_t i,
                                 struct kiln_err *err)
{
	struct kiln_buf src = KILN_BUF_INIT(KILN_LIMIT_PATH);
	struct kiln_buf out = KILN_BUF_INIT(REORDER_OUTPUT_MAX);
	char leaf[32];
	const char *argv[8];
	char *mnt;
	int status = 0;
	kiln_rc rc;

	snprintf(leaf, sizeof(leaf), "order-%zu", i);
	mnt = chroot_exec_state_path(ex, leaf, err);
	if (!mnt)
		return err->code ? err->code : KILN_EIO;
	rc = util_path_normalize(b->host, &src, err);
	if (rc)
		goto out;
	argv[0] = "disorderfs";
	argv[1] = "--reverse-dirents=yes";
	argv[2] = "--shuffle-dirents=no";
	/* kiln writes stage scripts underneath while the mount lives: no stale lookups */
	argv[3] = "-o";
	argv[4] = "entry_timeout=0,attr_timeout=0,negative_timeout=0";
	argv[5] = src.ptr;
	argv[6] = mnt;
	argv[7] = NULL;
	/* Remembered first: whatever happens next, chroot_exec_free unmounts it. */
	ex->reorder_mnt[ex->nreorder++] = mnt;
	rc = reorder_spawn(argv, &out, &status, err);
	if (rc)
		goto out;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
		rc = kiln_err_set(
		    err, KILN_EUNSUPP,
		    "the file order variation needs disorderfs, which is not installed");
	else if (!(WIFEXITED(status) && WEXITSTATUS(status) == 0) ||
	         !reorder_mounted(mnt, ex->state_dir))
		rc = kiln_err_set(err, KILN_EUNSUPP, "disorderfs could not mount '%s' on '%s': %s",
		                  src.ptr, mnt, *out.ptr ? out.ptr : "no message");
	if (!rc)
		b->host = mnt;
out:
	kiln_buf_release(&src);
	kiln_buf_release(&out);
	return rc;
}

kiln_rc chroot_reorder_mount(struct chroot_exec *ex, struct kiln_err *err)
{
	struct chroot_bind *b = ex->binds;
	kiln_rc rc = KILN_OK;
	size_t i;

	if (!ex->cfg.reverse_order)
		return KILN_OK;
	ex->reorder_mnt = kiln_arena_array(&ex->arena, ex->cfg.nbinds + 1, sizeof(char *));
	if (!ex->reorder_mnt)
		return kiln_err_set(err, KILN_ENOMEM, "out of memory");
	for (i = 0; !rc && i < ex->cfg.nbinds; i++) {
		if (!b[i].readonly)
			rc = reorder_mount_one(ex, &b[i], i, err);
	}
	return rc;
}

bool chroot_reorder_unmount(struct chroot_exec *ex)
{
	bool all = true;
	size_t i;

	for (i = 0; i < ex->nreorder; i++) {
		const char *mnt = ex->reorder_mnt[i];

		if (!reorder_mounted(mnt, ex->state_dir))
			continue;
		/* Root unmounts directly (the daemon exits when its mount goes); a user needs
		 * the setuid fusermount. Lazily when busy: no process of the build is left. */
		if (umount2(mnt, 0) < 0 && errno == EBUSY)
			(void)umount2(mnt, MNT_DETACH);
		if (reorder_mounted(mnt, ex->state_dir)) {
			const char *argv[] = {"fusermount", "-u", "-z", mnt, NULL};
			struct kiln_buf out = KILN_BUF_INIT(REORDER_OUTPUT_MAX);
			struct kiln_err e = KILN_ERR_INIT;
			int status;

			if (reorder_spawn(argv, &out, &status, &e))
				kiln_log_err(KILN_LOG_WARN, &e);
			kiln_buf_release(&out);
		}
		if (reorder_mounted(mnt, ex->state_dir)) {
			kiln_log(KILN_LOG_WARN, "cannot unmount the file order mount '%s'", mnt);
			all = false;
		}
	}
	ex->nreorder = 0;
	return all;
}
