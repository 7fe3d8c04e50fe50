#include "util/util.h"

#include <fcntl.h>
#include <sys/stat.h>

#include "tests/unit/chroot/chroot_test.h"

/* Every test body runs in a forked child with its own mount namespace; the exit status says
 * which check failed (0 = all passed), so nothing here can touch the host's mounts. */

static int skip_or_fail(void)
{
	return 77;
}

static int check_tmpfs_root(void *arg)
{
	const char *mnt = arg;
	struct chroot_op op;
	struct stat st;
	int root = -1;
	int fd = -1;

	if (!unshare_mount_ns())
		return skip_or_fail();
	if (chroot_mount_private(NULL) || chroot_mount_root_tmpfs(mnt, &root, NULL))
		return 1;
	memset(&op, 0, sizeof(op));
	op.kind = CHROOT_OP_MKDIR;
	op.mode = 0750;
	op.dst = "/a/b";
	if (chroot_op_apply(root, &op, NULL))
		return 2;
	if (fstatat(root, "a/b", &st, 0) < 0 || !S_ISDIR(st.st_mode))
		return 3;
	op.kind = CHROOT_OP_SYMLINK;
	op.src = "a";
	op.dst = "/link";
	if (chroot_op_apply(root, &op, NULL) ||
	    fstatat(root, "link", &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISLNK(st.st_mode))
		return 4;
	/* A mount through a symlink is refused. */
	if (chroot_mkdir_at(root, "link/c", 0755, &fd, NULL) != KILN_EPRIV)
		return 5;
	op.kind = CHROOT_OP_TMPFS;
	op.mode = 01777;
	op.dst = "/tmp";
	if (chroot_op_apply(root, &op, NULL) || fstatat(root, "tmp", &st, 0) < 0 ||
	    (st.st_mode & 07777) != 01777)
		return 6;
	if (chroot_mount_readonly(root, "/", NULL))
		return 7;
	if (mkdirat(root, "new", 0755) == 0 || errno != EROFS)
		return 8;
	/* The tmpfs under the read-only root stays writable. */
	fd = openat(root, "tmp/f", O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		return 9;
	util_close(fd);
	return 0;
}

KILN_TEST(mounts_tmpfs_root_ops_and_readonly)
{
	char mnt[512], path[600];
	int rc;

	snprintf(mnt, sizeof(mnt), "%s", kiln_test_tmpdir());
	rc = in_child(check_tmpfs_root, mnt);
	if (rc == 77 && !must_work())
		skip();
	assert_int_equal(rc, 0);
	/* Nothing of it is visible on the host's directory. */
	snprintf(path, sizeof(path), "%s/a", mnt);
	assert_false(util_exists(path));
}

static int check_bind(void *arg)
{
	const char *dir = arg;
	char mnt[600], src[600];
	struct chroot_op op;
	int root = -1;
	int fd;

	snprintf(mnt, sizeof(mnt), "%s/mnt", dir);
	snprintf(src, sizeof(src), "%s/src", dir);
	if (!unshare_mount_ns())
		return skip_or_fail();
	if (chroot_mount_private(NULL) || chroot_mount_root_tmpfs(mnt, &root, NULL))
		return 1;
	memset(&op, 0, sizeof(op));
	op.kind = CHROOT_OP_BIND;
	op.flags = CHROOT_OPF_RO;
	op.src = src;
	op.dst = "/ro";
	if (chroot_op_apply(root, &op, NULL))
		return 2;
	op.flags = 0;
	op.dst = "/deep/rw";
	if (chroot_op_apply(root, &op, NULL))
		return 3;
	if (openat(root, "ro/file", O_RDONLY | O_CLOEXEC) < 0)
		return 4;
	if (openat(root, "ro/new", O_WRONLY | O_CREAT | O_CLOEXEC, 0644) >= 0 || errno != EROFS)
		return 5;
	fd = openat(root, "deep/rw/new", O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		return 6;
	util_close(fd);
	/* A missing source fails with the path, unless optional. */
	snprintf(src, sizeof(src), "%s/missing", dir);
	op.src = src;
	op.dst = "/m";
	if (chroot_op_apply(root, &op, NULL) == KILN_OK)
		return 7;
	op.flags = CHROOT_OPF_OPTIONAL;
	if (chroot_op_apply(root, &op, NULL) != KILN_OK)
		return 8;
	return 0;
}

KILN_TEST(mounts_bind_ro_rw_missing)
{
	struct kiln_err err = KILN_ERR_INIT;
	char dir[512], path[600];
	int rc;

	snprintf(dir, sizeof(dir), "%s", kiln_test_tmpdir());
	snprintf(path, sizeof(path), "%s/mnt", dir);
	assert_ok(util_mkdir_p(path, 0755, &err), &err);
	snprintf(path, sizeof(path), "%s/src", dir);
	assert_ok(util_mkdir_p(path, 0755, &err), &err);
	snprintf(path, sizeof(path), "%s/src/file", dir);
	assert_ok(util_write_atomic(path, "x", 1, 0644, &err), &err);
	rc = in_child(check_bind, dir);
	if (rc == 77 && !must_work())
		skip();
	assert_int_equal(rc, 0);
	/* The rw bind wrote through to the host directory. */
	snprintf(path, sizeof(path), "%s/src/new", dir);
	assert_true(util_exists(path));
}
