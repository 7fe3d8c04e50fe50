#include "util/util.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/unit/harness.h"

KILN_TEST(fs_atomic_write_and_read)
{
	struct kiln_buf b = KILN_BUF_INIT(KILN_MIB);
	struct kiln_err err = KILN_ERR_INIT;
	char path[512];
	struct stat st;

	snprintf(path, sizeof(path), "%s/out.txt", kiln_test_tmpdir());
	assert_ok(util_write_atomic(path, "first", 5, 0640, &err), &err);
	assert_ok(util_write_atomic(path, "second", 6, 0640, &err), &err);
	assert_ok(util_read_file(path, 100, &b, &err), &err);
	assert_string_equal(b.ptr, "second");
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0640);
	kiln_buf_release(&b);
}

KILN_TEST(fs_read_file_limit_and_missing)
{
	struct kiln_buf b = KILN_BUF_INIT(KILN_MIB);
	struct kiln_err err = KILN_ERR_INIT;
	char path[512];

	snprintf(path, sizeof(path), "%s/big", kiln_test_tmpdir());
	assert_ok(util_write_atomic(path, "0123456789", 10, 0644, &err), &err);
	assert_ok(util_read_file(path, 10, &b, &err), &err);
	kiln_buf_reset(&b);
	assert_int_equal(util_read_file(path, 9, &b, &err), KILN_ELIMIT);
	assert_non_null(strstr(err.msg, path));
	kiln_err_clear(&err);
	kiln_buf_reset(&b);
	assert_int_equal(util_read_file("/nonexistent/f", 9, &b, &err), KILN_ENOTFOUND);
	kiln_buf_release(&b);
}

KILN_TEST(fs_atomic_abort_leaves_old_contents)
{
	struct kiln_buf b = KILN_BUF_INIT(KILN_MIB);
	struct kiln_err err = KILN_ERR_INIT;
	struct util_atomic_file f;
	char path[512];

	snprintf(path, sizeof(path), "%s/keep", kiln_test_tmpdir());
	assert_ok(util_write_atomic(path, "old", 3, 0644, &err), &err);
	assert_ok(util_atomic_open(&f, path, 0644, &err), &err);
	assert_ok(util_write_all(f.fd, "new-partial", 11, &err), &err);
	util_atomic_abort(&f);
	assert_ok(util_read_file(path, 100, &b, &err), &err);
	assert_string_equal(b.ptr, "old");
	kiln_buf_release(&b);
}

/* nosync skips only the fsyncs: the file still appears whole under its name, and nothing
 * is left under the temporary one. */
KILN_TEST(fs_atomic_commit_without_sync)
{
	struct kiln_buf b = KILN_BUF_INIT(KILN_MIB);
	struct kiln_err err = KILN_ERR_INIT;
	struct util_atomic_file f;
	char path[512], tmp[600];

	snprintf(path, sizeof(path), "%s/nosync", kiln_test_tmpdir());
	assert_ok(util_write_atomic(path, "old", 3, 0644, &err), &err);
	assert_ok(util_atomic_open(&f, path, 0600, &err), &err);
	assert_false(f.nosync);
	f.nosync = true;
	snprintf(tmp, sizeof(tmp), "%s", f.tmp);
	assert_ok(util_write_all(f.fd, "new", 3, &err), &err);
	assert_ok(util_atomic_commit(&f, &err), &err);
	assert_ok(util_read_file(path, 100, &b, &err), &err);
	assert_string_equal(b.ptr, "new");
	assert_false(util_exists(tmp));
	kiln_buf_release(&b);
}

/* The scratch-file form replaces whole files with the mode asked for, like the synced one. */
KILN_TEST(fs_write_atomic_nosync_replaces)
{
	struct kiln_buf b = KILN_BUF_INIT(KILN_MIB);
	struct kiln_err err = KILN_ERR_INIT;
	struct stat st;
	char path[512];

	snprintf(path, sizeof(path), "%s/scratch.sh", kiln_test_tmpdir());
	assert_ok(util_write_atomic_nosync(path, "first\n", 6, 0755, &err), &err);
	assert_ok(util_write_atomic_nosync(path, "2nd\n", 4, 0755, &err), &err);
	assert_ok(util_read_file(path, 100, &b, &err), &err);
	assert_string_equal(b.ptr, "2nd\n");
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0755);
	assert_int_not_equal(util_write_atomic_nosync("/nonexistent/dir/x", "x", 1, 0644, &err),
	                     KILN_OK);
	assert_non_null(strstr(err.msg, "/nonexistent/dir/x"));
	kiln_err_clear(&err);
	kiln_buf_release(&b);
}

KILN_TEST(fs_mkdir_p_rm_rf_copy)
{
	struct kiln_buf b = KILN_BUF_INIT(KILN_MIB);
	struct kiln_err err = KILN_ERR_INIT;
	const char *dir = kiln_test_tmpdir();
	char p[512];
	char q[512];

	snprintf(p, sizeof(p), "%s/a/b/c", dir);
	assert_ok(util_mkdir_p(p, 0755, &err), &err);
	assert_ok(util_mkdir_p(p, 0755, &err), &err);
	assert_true(util_is_dir(p));
	snprintf(p, sizeof(p), "%s/a/b/c/file", dir);
	assert_ok(util_write_atomic(p, "data", 4, 0644, &err), &err);
	snprintf(q, sizeof(q), "%s/copy", dir);
	assert_ok(util_copy_file(p, q, 0600, &err), &err);
	assert_ok(util_read_file(q, 100, &b, &err), &err);
	assert_string_equal(b.ptr, "data");
	/* A symlink out of the tree must not be followed by rm -rf. */
	snprintf(p, sizeof(p), "%s/a/b/link", dir);
	assert_int_equal(symlink(q, p), 0);
	snprintf(p, sizeof(p), "%s/a/b/c", dir);
	assert_int_equal(chmod(p, 0500), 0);
	snprintf(p, sizeof(p), "%s/a", dir);
	assert_ok(util_rm_rf(p, &err), &err);
	assert_false(util_exists(p));
	assert_true(util_exists(q));
	assert_ok(util_rm_rf(p, &err), &err);
	/* mkdir -p through a regular file fails with a clear error. */
	snprintf(p, sizeof(p), "%s/copy/sub", dir);
	assert_int_equal(util_mkdir_p(p, 0755, &err), KILN_EEXIST);
	kiln_buf_release(&b);
}

KILN_TEST(fs_read_fd_and_write_all)
{
	struct kiln_buf b = KILN_BUF_INIT(KILN_MIB);
	struct kiln_err err = KILN_ERR_INIT;
	char big[200000];
	int fds[2];

	memset(big, 'k', sizeof(big));
	assert_int_equal(pipe(fds), 0);
	if (fork() == 0) {
		close(fds[0]);
		if (util_write_all(fds[1], big, sizeof(big), NULL))
			_exit(1);
		_exit(0);
	}
	close(fds[1]);
	assert_ok(util_read_fd(fds[0], &b, &err), &err);
	assert_int_equal(b.len, sizeof(big));
	close(fds[0]);
	kiln_buf_release(&b);
}
