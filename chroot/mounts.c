/*
 * mounts.c - the mount steps of the sandbox, through the fd-based mount API (open_tree,
 * fsopen/fsmount, move_mount, mount_setattr; Linux 5.12+).
 *
 * Everything here runs only in the init child, after unshare(CLONE_NEWNS) and
 * chroot_mount_private(): no mount made here can propagate to the host, and when the last
 * process of the namespace exits the kernel tears all of it down. Targets are always resolved
 * relative to the new root's fd, component by component, without following symlinks, so a
 * hostile dir:/tar: image cannot redirect a mount onto another place (its symlinks point into
 * the namespace's own view anyway, but refusing them keeps the plan exact).
 */
#include "util/util.h"

#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "chroot/chroot_int.h"

/* Device nodes a build may use: data sinks and sources, the controlling terminal. */
static const char *const dev_nodes[] = {"null", "zero", "full", "random", "urandom", "tty"};

static const struct {
	const char *name, *target;
} dev_links[] = {
    {"fd", "/proc/self/fd"},       {"stdin", "/proc/self/fd/0"}, {"stdout", "/proc/self/fd/1"},
    {"stderr", "/proc/self/fd/2"}, {"ptmx", "pts/ptmx"},         {"core", "/proc/kcore"},
};

static kiln_rc set_attr(int fd, const char *path, unsigned flags, uint64_t set, uint64_t clr,
                        const char *what, struct kiln_err *err)
{
	struct mount_attr attr = {.attr_set = set, .attr_clr = clr};

	if (mount_setattr(fd, path, flags, &attr, sizeof(attr)) < 0)
		return kiln_err_sys(err, errno == ENOSYS ? KILN_EUNSUPP : KILN_EIO,
		                    "cannot set mount flags of '%s'", what);
	return KILN_OK;
}

kiln_rc chroot_mount_private(struct kiln_err *err)
{
	/* MS_PRIVATE recursively: events in this namespace never reach the host's mounts and
	 * the host's never reach ours. Safe: it changes only this namespace's copy. */
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		return kiln_err_sys(err, KILN_EIO, "cannot make '/' private in the sandbox");
	return KILN_OK;
}

struct fs_opt {
	const char *key;
	const char *value; /* NULL: a flag (FSCONFIG_SET_FLAG) */
};

/* fsopen + options + fsmount: a detached mount of a fresh filesystem. */
static kiln_rc fs_new(const char *type, const struct fs_opt *opts, size_t nopts, uint64_t attrs,
                      const char *what, int *out, struct kiln_err *err)
{
	kiln_rc rc = KILN_OK;
	int fs = fsopen(type, FSOPEN_CLOEXEC);
	size_t i;

	*out = -1;
	if (fs < 0)
		return kiln_err_sys(err, errno == ENOSYS ? KILN_EUNSUPP : KILN_EIO,
		                    "cannot create a %s for '%s'", type, what);
	for (i = 0; i < nopts; i++) {
		const struct fs_opt *o = &opts[i];
		int r = o->value ? fsconfig(fs, FSCONFIG_SET_STRING, o->key, o->value, 0)
		                 : fsconfig(fs, FSCONFIG_SET_FLAG, o->key, NULL, 0);

		if (r < 0) {
			rc = kiln_err_sys(err, KILN_EIO, "cannot set %s option '%s' for '%s'", type,
			                  o->key, what);
			goto out;
		}
	}
	if (fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0) {
		rc = kiln_err_sys(err, errno == EPERM ? KILN_EPRIV : KILN_EIO,
		                  "cannot create %s for '%s'", type, what);
		goto out;
	}
	*out = fsmount(fs, FSMOUNT_CLOEXEC, (unsigned)attrs);
	if (*out < 0)
		rc = kiln_err_sys(err, KILN_EIO, "cannot mount %s on '%s'", type, what);
out:
	util_close(fs);
	return rc;
}

static kiln_rc attach(int mfd, int dirfd, const char *name, const char *what, struct kiln_err *err)
{
	/* Attach the detached mount on name in dirfd. Safe: dirfd is a directory inside the
	 * new root reached without following links, and name is one component. */
	if (move_mount(mfd, "", dirfd, name, MOVE_MOUNT_F_EMPTY_PATH) < 0)
		return kiln_err_sys(err, KILN_EIO, "cannot mount on '%s'", what);
	return KILN_OK;
}

static kiln_rc root_attach(int mfd, const char *mnt, int *rootfd, struct kiln_err *err)
{
	/* mnt is the empty directory chroot_exec_new made in kiln's state directory; covering
	 * it affects only this namespace. */
	if (move_mount(mfd, "", AT_FDCWD, mnt, MOVE_MOUNT_F_EMPTY_PATH) < 0)
		return kiln_err_sys(err, KILN_EIO, "cannot mount the sandbox root on '%s'", mnt);
	/* mfd now names the root of the attached mount: all further steps are relative to it. */
	*rootfd = mfd;
	return KILN_OK;
}

kiln_rc chroot_mount_root_tmpfs(const char *mnt, int *rootfd, struct kiln_err *err)
{
	static const struct fs_opt opts[] = {
	    {"mode", "0755"}, {"size", "4m"}, {"nr_inodes", "4096"}};
	kiln_rc rc;
	int mfd = -1;

	*rootfd = -1;
	rc = fs_new("tmpfs", opts, KILN_ARRAY_SIZE(opts), MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, "/",
	            &mfd, err);
	if (!rc)
		rc = root_attach(mfd, mnt, rootfd, err);
	if (rc)
		util_close(mfd);
	return rc;
}

kiln_rc chroot_mount_root_bind(const char *dir, const char *mnt, int *rootfd, struct kiln_err *err)
{
	kiln_rc rc;
	int tfd;

	*rootfd = -1;
	/* A clone of the caller's directory in this namespace only; nosuid and nodev before it
	 * becomes visible, so nothing in the image gains privileges by being run from it. */
	tfd = open_tree(AT_FDCWD, dir, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE);
	if (tfd < 0)
		return kiln_err_sys(err, errno == ENOSYS ? KILN_EUNSUPP : KILN_EIO,
		                    "cannot bind the root '%s'", dir);
	rc = set_attr(tfd, "", AT_EMPTY_PATH | AT_RECURSIVE, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV,
	              0, dir, err);
	if (!rc)
		rc = root_attach(tfd, mnt, rootfd, err);
	if (rc)
		util_close(tfd);
	return rc;
}

/* One run's upper and work directories on a tmpfs attached at mnt (the overlay will cover
 * it there); their paths go to upper and work (size bytes each). */
static kiln_rc run_layers(const char *mnt, char *upper, char *work, size_t size,
                          struct kiln_err *err)
{
	static const struct fs_opt opts[] = {{"mode", "0755"}};
	int mfd = -1, dummy = -1;
	kiln_rc rc;

	if ((size_t)snprintf(upper, size, "%s/upper", mnt) >= size ||
	    (size_t)snprintf(work, size, "%s/work", mnt) >= size)
		return kiln_err_set(err, KILN_ELIMIT, "sandbox mount point '%s' is too long", mnt);
	rc = fs_new("tmpfs", opts, KILN_ARRAY_SIZE(opts), MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV,
	            "the root's upper layer", &mfd, err);
	if (!rc)
		rc = root_attach(mfd, mnt, &dummy, err);
	if (!rc && (mkdirat(mfd, "upper", 0755) < 0 || mkdirat(mfd, "work", 0755) < 0))
		rc = kiln_err_sys(err, KILN_EIO, "cannot make the root's upper layer");
	util_close(mfd);
	return rc;
}

kiln_rc chroot_mount_root_overlay(const char *lower, const char *upper, const char *work,
                                  bool userxattr, const char *mnt, int *rootfd,
                                  struct kiln_err *err)
{
	char up[KILN_LIMIT_PATH], wk[KILN_LIMIT_PATH];
	kiln_rc rc = KILN_OK;
	int mfd = -1;

	*rootfd = -1;
	if (!upper) {
		rc = run_layers(mnt, up, wk, sizeof(up), err);
		upper = up;
		work = wk;
	}
	/* userxattr: in a user namespace overlayfs must keep its metadata in user.* xattrs,
	 * trusted.* needs CAP_SYS_ADMIN on the host. */
	const struct fs_opt opts[] = {
	    {"lowerdir", lower}, {"upperdir", upper}, {"workdir", work}, {"userxattr", NULL}};

	if (!rc)
		rc = fs_new("overlay", opts, userxattr ? 4 : 3,
		            MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, "/", &mfd, err);
	if (!rc)
		rc = root_attach(mfd, mnt, rootfd, err);
	if (rc)
		util_close(mfd);
	return rc;
}

/* One step of mkdir -p: open (or create, then open) name in dirfd, refusing symlinks. */
static kiln_rc mkdir_one(int dirfd, const char *name, unsigned mode, const char *full, int *out,
                         struct kiln_err *err)
{
	int fd = openat(dirfd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0 && errno == ENOENT) {
		if (mkdirat(dirfd, name, mode) < 0 && errno != EEXIST)
			return kiln_err_sys(err, errno == EROFS ? KILN_EPRIV : KILN_EIO,
			                    "cannot create '/%s' in the sandbox root", full);
		fd = openat(dirfd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	}
	if (fd < 0) {
		struct stat st;

		if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode))
			return kiln_err_set(err, KILN_EPRIV,
			                    "'/%s' is a symlink in the sandbox root; refusing to "
			                    "mount through it",
			                    full);
		return kiln_err_sys(err, KILN_EIO, "cannot open '/%s' in the sandbox root", full);
	}
	*out = fd;
	return KILN_OK;
}

kiln_rc chroot_mkdir_at(int dirfd, const char *rel, unsigned mode, int *out, struct kiln_err *err)
{
	char name[NAME_MAX + 1];
	const char *p = rel;
	int cur = -1;
	kiln_rc rc = KILN_OK;

	*out = -1;
	cur = fcntl(dirfd, F_DUPFD_CLOEXEC, 3);
	if (cur < 0)
		return kiln_err_sys(err, KILN_EIO, "cannot duplicate the root fd");
	while (*p) {
		size_t n = strcspn(p, "/");
		int next = -1;

		if (n == 0 || n > NAME_MAX) {
			p += n ? n : 1;
			continue;
		}
		memcpy(name, p, n);
		name[n] = '\0';
		p += n;
		rc = mkdir_one(cur, name, mode, rel, &next, err);
		util_close(cur);
		cur = next;
		if (rc)
			return rc;
	}
	*out = cur;
	return KILN_OK;
}

/* Split dst ("/a/b/c") into its parent's fd (created as needed) and its last component. */
static kiln_rc open_parent(int rootfd, const char *dst, char *leaf, size_t leafsize, int *pfd,
                           struct kiln_err *err)
{
	char parent[KILN_LIMIT_PATH];
	const char *slash = strrchr(dst, '/');
	size_t plen;

	if (!slash || strlen(slash + 1) >= leafsize)
		return kiln_err_set(err, KILN_EINVAL, "bad sandbox path '%s'", dst);
	plen = (size_t)(slash - dst);
	if (plen >= sizeof(parent))
		return kiln_err_set(err, KILN_ELIMIT, "sandbox path too long: '%.200s'", dst);
	memcpy(parent, dst, plen);
	parent[plen] = '\0';
	snprintf(leaf, leafsize, "%s", slash + 1);
	return chroot_mkdir_at(rootfd, parent[0] == '/' ? parent + 1 : parent, 0755, pfd, err);
}

/* The mount point for a bind: a directory, or an empty file for a file bind. */
static kiln_rc mount_point(int pfd, const char *leaf, bool file, const char *dst,
                           struct kiln_err *err)
{
	struct stat st;
	int fd;

	if (fstatat(pfd, leaf, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		if (S_ISLNK(st.st_mode))
			return kiln_err_set(
			    err, KILN_EPRIV,
			    "'%s' is a symlink in the sandbox root; refusing to mount "
			    "through it",
			    dst);
		if (file != !S_ISDIR(st.st_mode))
			return kiln_err_set(
			    err, KILN_EINVAL,
			    "'%s' in the sandbox root is a %s, the bind source is not", dst,
			    file ? "directory" : "file");
		return KILN_OK;
	}
	if (!file) {
		if (mkdirat(pfd, leaf, 0755) < 0 && errno != EEXIST)
			return kiln_err_sys(err, KILN_EIO, "cannot create '%s' in the sandbox root",
			                    dst);
		return KILN_OK;
	}
	fd = openat(pfd, leaf, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0 && errno != EEXIST)
		return kiln_err_sys(err, KILN_EIO, "cannot create '%s' in the sandbox root", dst);
	util_close(fd);
	return KILN_OK;
}

static kiln_rc op_bind(int rootfd, const struct chroot_op *op, struct kiln_err *err)
{
	char leaf[NAME_MAX + 1];
	unsigned tflags = OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC;
	kiln_rc rc;
	int pfd = -1;
	int tfd = -1;

	/* A recursive clone of the host source: what is mounted below it comes along. Safe: the
	 * clone lives in this namespace only, and RO is applied to the whole cloned tree before
	 * it becomes visible. */
	if (!(op->flags & CHROOT_OPF_FILE))
		tflags |= AT_RECURSIVE;
	tfd = open_tree(AT_FDCWD, op->src, tflags);
	if (tfd < 0) {
		if (errno == ENOENT && (op->flags & CHROOT_OPF_OPTIONAL))
			return KILN_OK;
		return kiln_err_sys(err, errno == ENOSYS ? KILN_EUNSUPP : KILN_EIO,
		                    "cannot bind '%s' on '%s'", op->src, op->dst);
	}
	rc = set_attr(tfd, "", AT_EMPTY_PATH | AT_RECURSIVE,
	              MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV |
	                  ((op->flags & CHROOT_OPF_RO) ? MOUNT_ATTR_RDONLY : 0),
	              0, op->dst, err);
	if (!rc)
		rc = open_parent(rootfd, op->dst, leaf, sizeof(leaf), &pfd, err);
	if (!rc)
		rc = mount_point(pfd, leaf, op->flags & CHROOT_OPF_FILE, op->dst, err);
	if (!rc)
		rc = attach(tfd, pfd, leaf, op->dst, err);
	util_close(pfd);
	util_close(tfd);
	return rc;
}

static kiln_rc mount_fresh(int rootfd, const char *type, const struct fs_opt *opts, size_t n,
                           uint64_t attrs, const char *dst, int *keep, struct kiln_err *err)
{
	char leaf[NAME_MAX + 1];
	kiln_rc rc;
	int pfd = -1;
	int mfd = -1;

	rc = fs_new(type, opts, n, attrs, dst, &mfd, err);
	if (!rc)
		rc = open_parent(rootfd, dst, leaf, sizeof(leaf), &pfd, err);
	if (!rc)
		rc = mount_point(pfd, leaf, false, dst, err);
	if (!rc)
		rc = attach(mfd, pfd, leaf, dst, err);
	util_close(pfd);
	if (!rc && keep)
		*keep = mfd;
	else
		util_close(mfd);
	return rc;
}

static kiln_rc op_tmpfs(int rootfd, const struct chroot_op *op, struct kiln_err *err)
{
	char mode[16];
	const struct fs_opt opts[] = {{"mode", mode}};

	snprintf(mode, sizeof(mode), "%o", op->mode ? op->mode : 01777);
	return mount_fresh(rootfd, "tmpfs", opts, 1, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, op->dst,
	                   NULL, err);
}

static kiln_rc dev_node(int devfd, const char *name, struct kiln_err *err)
{
	char src[64], what[64];
	kiln_rc rc;
	int tfd;
	int fd;

	snprintf(src, sizeof(src), "/dev/%s", name);
	snprintf(what, sizeof(what), "/dev/%s", name);
	fd = openat(devfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
	if (fd < 0)
		return kiln_err_sys(err, KILN_EIO, "cannot create '%s' in the sandbox", what);
	util_close(fd);
	/* A bind of the host's node, not a mknod: it works in a user namespace, and the node
	 * is one of six harmless character devices. Not nodev, or it would not work. */
	tfd = open_tree(AT_FDCWD, src, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
	if (tfd < 0)
		return kiln_err_sys(err, KILN_EIO, "cannot bind '%s' into the sandbox", src);
	rc = set_attr(tfd, "", AT_EMPTY_PATH, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC, 0, what, err);
	if (!rc)
		rc = attach(tfd, devfd, name, what, err);
	util_close(tfd);
	return rc;
}

static kiln_rc dev_fill(int devfd, struct kiln_err *err)
{
	static const struct fs_opt shm[] = {{"mode", "1777"}};
	static const struct fs_opt pts[] = {
	    {"newinstance", NULL}, {"ptmxmode", "0666"}, {"mode", "0620"}};
	kiln_rc rc = KILN_OK;
	size_t i;

	for (i = 0; !rc && i < KILN_ARRAY_SIZE(dev_nodes); i++)
		rc = dev_node(devfd, dev_nodes[i], err);
	for (i = 0; !rc && i < KILN_ARRAY_SIZE(dev_links); i++) {
		if (symlinkat(dev_links[i].target, devfd, dev_links[i].name) < 0)
			rc = kiln_err_sys(err, KILN_EIO, "cannot create '/dev/%s' in the sandbox",
			                  dev_links[i].name);
	}
	if (!rc)
		rc = mount_fresh(devfd, "tmpfs", shm, 1, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV,
		                 "/shm", NULL, err);
	if (!rc)
		rc = mount_fresh(devfd, "devpts", pts, 3, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC,
		                 "/pts", NULL, err);
	return rc;
}

static kiln_rc op_dev(int rootfd, const struct chroot_op *op, struct kiln_err *err)
{
	static const struct fs_opt opts[] = {
	    {"mode", "0755"}, {"size", "64k"}, {"nr_inodes", "64"}};
	kiln_rc rc;
	int mfd = -1;

	rc = mount_fresh(rootfd, "tmpfs", opts, KILN_ARRAY_SIZE(opts),
	                 MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC, op->dst, &mfd, err);
	if (!rc)
		rc = dev_fill(mfd, err);
	/* Nothing may add nodes to /dev afterwards. */
	if (!rc)
		rc = chroot_mount_readonly(mfd, "/dev", err);
	util_close(mfd);
	return rc;
}

static kiln_rc op_mkdir(int rootfd, const struct chroot_op *op, struct kiln_err *err)
{
	kiln_rc rc;
	int fd = -1;

	rc = chroot_mkdir_at(rootfd, op->dst + 1, op->mode ? op->mode : 0755, &fd, err);
	util_close(fd);
	return rc;
}

static kiln_rc op_symlink(int rootfd, const struct chroot_op *op, struct kiln_err *err)
{
	char leaf[NAME_MAX + 1];
	kiln_rc rc;
	int pfd = -1;

	rc = open_parent(rootfd, op->dst, leaf, sizeof(leaf), &pfd, err);
	if (!rc && symlinkat(op->src, pfd, leaf) < 0 && errno != EEXIST)
		rc = kiln_err_sys(err, KILN_EIO, "cannot create the link '%s' in the sandbox",
		                  op->dst);
	util_close(pfd);
	return rc;
}

/* The kernel-wide knobs under a fresh /proc, read-only as bwrap and container runtimes
 * keep them: as real root the command could otherwise write /proc/sys (a core_pattern pipe
 * runs a program as root on the host) or /proc/sysrq-trigger. Each is covered by a
 * read-only clone of itself; a path this kernel lacks is skipped. */
static kiln_rc proc_protect(int rootfd, struct kiln_err *err)
{
	static const char *const paths[] = {"proc/sys", "proc/sysrq-trigger", "proc/irq",
	                                    "proc/bus"};
	kiln_rc rc = KILN_OK;
	size_t i;

	for (i = 0; !rc && i < KILN_ARRAY_SIZE(paths); i++) {
		int tfd = open_tree(rootfd, paths[i],
		                    OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE |
		                        AT_SYMLINK_NOFOLLOW);

		if (tfd < 0 && errno == ENOENT)
			continue;
		if (tfd < 0)
			return kiln_err_sys(err, KILN_EIO, "cannot protect '/%s'", paths[i]);
		rc = set_attr(tfd, "", AT_EMPTY_PATH | AT_RECURSIVE,
		              MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV |
		                  MOUNT_ATTR_NOEXEC,
		              0, paths[i], err);
		if (!rc && move_mount(tfd, "", rootfd, paths[i], MOVE_MOUNT_F_EMPTY_PATH) < 0)
			rc = kiln_err_sys(err, KILN_EIO, "cannot protect '/%s'", paths[i]);
		util_close(tfd);
	}
	return rc;
}

kiln_rc chroot_op_apply(int rootfd, const struct chroot_op *op, struct kiln_err *err)
{
	static const struct fs_opt sysfs_opts[1] = {{NULL, NULL}};
	kiln_rc rc;

	/* The allow-list check again, on this side of the fork: init executes only operations
	 * of the known kinds on normalised absolute paths outside /proc, /sys and /dev. */
	rc = chroot_op_check(op, err);
	if (rc)
		return rc;
	switch (op->kind) {
	case CHROOT_OP_MKDIR:
		return op_mkdir(rootfd, op, err);
	case CHROOT_OP_SYMLINK:
		return op_symlink(rootfd, op, err);
	case CHROOT_OP_BIND:
		return op_bind(rootfd, op, err);
	case CHROOT_OP_TMPFS:
		return op_tmpfs(rootfd, op, err);
	case CHROOT_OP_PROC:
		/* Our PID namespace's proc (we are its init). hidepid is not needed: only the
		 * sandbox's own processes exist in it. */
		rc = mount_fresh(rootfd, "proc", NULL, 0,
		                 MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC, op->dst,
		                 NULL, err);
		return rc ? rc : proc_protect(rootfd, err);
	case CHROOT_OP_SYSFS:
		return mount_fresh(rootfd, "sysfs", sysfs_opts, 0,
		                   MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV |
		                       MOUNT_ATTR_NOEXEC,
		                   op->dst, NULL, err);
	case CHROOT_OP_DEV:
		return op_dev(rootfd, op, err);
	case CHROOT_OP_KIND_END:
		break;
	}
	return kiln_err_set(err, KILN_EINVAL, "unknown sandbox operation %d", (int)op->kind);
}

kiln_rc chroot_mount_readonly(int dirfd, const char *what, struct kiln_err *err)
{
	return set_attr(dirfd, "", AT_EMPTY_PATH, MOUNT_ATTR_RDONLY, 0, what, err);
}

kiln_rc chroot_mount_pivot(int rootfd, struct kiln_err *err)
{
	/* pivot_root(".", "."): the old root ends up stacked under the new one and is detached
	 * at once, so no path in the sandbox leads back to the host tree. */
	if (fchdir(rootfd) < 0)
		return kiln_err_sys(err, KILN_EIO, "cannot enter the sandbox root");
	if (syscall(SYS_pivot_root, ".", ".") < 0)
		return kiln_err_sys(err, KILN_EIO, "cannot pivot_root into the sandbox");
	if (umount2(".", MNT_DETACH) < 0)
		return kiln_err_sys(err, KILN_EIO, "cannot detach the host root");
	if (chdir("/") < 0)
		return kiln_err_sys(err, KILN_EIO, "cannot chdir to the sandbox root");
	return KILN_OK;
}
