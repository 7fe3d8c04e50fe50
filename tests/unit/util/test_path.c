#include "util/util.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/unit/harness.h"

static void check_norm(const char *in, const char *want)
{
	struct kiln_buf b = KILN_BUF_INIT(KILN_LIMIT_PATH);
	struct kiln_err err = KILN_ERR_INIT;

	assert_ok(util_path_normalize(in, &b, &err), &err);
	assert_string_equal(b.ptr, want);
	kiln_buf_release(&b);
}

KILN_TEST(path_normalize_cases)
{
	check_norm("/", "/");
	check_norm("", ".");
	check_norm(".", ".");
	check_norm("//usr///bin/", "/usr/bin");
	check_norm("/usr/./lib/../bin", "/usr/bin");
	check_norm("/../..", "/");
	check_norm("/a/b/../../..", "/");
	check_norm("a/b/..", "a");
	check_norm("a/..", ".");
	check_norm("./a/./b", "a/b");
}

KILN_TEST(path_normalize_refuses_relative_escape)
{
	struct kiln_buf b = KILN_BUF_INIT(KILN_LIMIT_PATH);
	struct kiln_err err = KILN_ERR_INIT;

	assert_int_equal(util_path_normalize("a/../../etc", &b, &err), KILN_EPRIV);
	assert_non_null(strstr(err.msg, "a/../../etc"));
	kiln_buf_release(&b);
}

KILN_TEST(path_join_stays_below_base)
{
	struct kiln_buf b = KILN_BUF_INIT(KILN_LIMIT_PATH);
	struct kiln_err err = KILN_ERR_INIT;

	assert_ok(util_path_join("/build/root", "usr/../etc/x", &b, &err), &err);
	assert_string_equal(b.ptr, "/build/root/etc/x");
	kiln_buf_reset(&b);
	assert_int_equal(util_path_join("/build/root", "../etc", &b, NULL), KILN_EPRIV);
	kiln_buf_reset(&b);
	assert_int_equal(util_path_join("/build/root", "/etc", &b, NULL), KILN_EPRIV);
	kiln_buf_reset(&b);
	assert_ok(util_path_join(".", "a", &b, &err), &err);
	assert_string_equal(b.ptr, "a");
	kiln_buf_release(&b);
}

KILN_TEST(path_check_relative_for_archive_names)
{
	struct kiln_buf b = KILN_BUF_INIT(KILN_LIMIT_PATH);
	struct kiln_err err = KILN_ERR_INIT;

	assert_ok(util_path_check_relative("./usr/bin/x", 11, &b, &err), &err);
	assert_string_equal(b.ptr, "usr/bin/x");
	kiln_buf_reset(&b);
	assert_int_equal(util_path_check_relative("/etc/passwd", 11, &b, NULL), KILN_EPRIV);
	assert_int_equal(util_path_check_relative("a/../../x", 9, &b, NULL), KILN_EPRIV);
	assert_int_equal(util_path_check_relative("..", 2, &b, NULL), KILN_EPRIV);
	assert_int_equal(util_path_check_relative("a\0b", 3, &b, NULL), KILN_EPRIV);
	assert_int_equal(util_path_check_relative("./", 2, &b, NULL), KILN_EPRIV);
	assert_int_equal(util_path_check_relative("", 0, &b, NULL), KILN_EPRIV);
	kiln_buf_release(&b);
}

KILN_TEST(path_open_in_root_refuses_escapes)
{
	struct kiln_err err = KILN_ERR_INIT;
	const char *dir = kiln_test_tmpdir();
	char p[512];
	int root;
	int fd = -1;

	snprintf(p, sizeof(p), "%s/sub", dir);
	assert_int_equal(mkdir(p, 0755), 0);
	snprintf(p, sizeof(p), "%s/sub/abs", dir);
	assert_int_equal(symlink("/etc/passwd", p), 0);
	snprintf(p, sizeof(p), "%s/sub/up", dir);
	assert_int_equal(symlink("../../..", p), 0);
	snprintf(p, sizeof(p), "%s/sub/rel", dir);
	assert_int_equal(symlink("file", p), 0);
	snprintf(p, sizeof(p), "%s/sub/file", dir);
	assert_ok(util_write_atomic(p, "x", 1, 0644, &err), &err);

	root = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(root >= 0);
	assert_ok(util_path_open_beneath(root, "sub/file", O_RDONLY, 0, 0, &fd, &err), &err);
	util_close(fd);
	assert_ok(util_path_open_beneath(root, "sub/rel", O_RDONLY, 0, 0, &fd, &err), &err);
	util_close(fd);
	assert_int_equal(
	    util_path_open_beneath(root, "sub/rel", O_RDONLY, 0, UTIL_OPEN_NOFOLLOW, &fd, NULL),
	    KILN_EPRIV);
	assert_int_equal(util_path_open_beneath(root, "sub/abs", O_RDONLY, 0, 0, &fd, NULL),
	                 KILN_EPRIV);
	assert_int_equal(util_path_open_beneath(root, "sub/up/etc", O_RDONLY, 0, 0, &fd, NULL),
	                 KILN_EPRIV);
	assert_int_equal(util_path_open_beneath(root, "../x", O_RDONLY, 0, 0, &fd, NULL),
	                 KILN_EPRIV);
	assert_int_equal(util_path_open_beneath(root, "/etc/passwd", O_RDONLY, 0, 0, &fd, NULL),
	                 KILN_EPRIV);
	assert_int_equal(util_path_open_beneath(root, "sub/none", O_RDONLY, 0, 0, &fd, NULL),
	                 KILN_ENOTFOUND);
	assert_ok(util_path_open_beneath(root, "sub/new", O_WRONLY | O_CREAT | O_EXCL, 0600, 0, &fd,
	                                 &err),
	          &err);
	util_close(fd);
	util_close(root);
}

KILN_TEST(path_basename_dirname)
{
	struct kiln_buf b = KILN_BUF_INIT(KILN_LIMIT_PATH);

	assert_string_equal(util_path_basename("/a/b/c.tar.gz"), "c.tar.gz");
	assert_string_equal(util_path_basename("c"), "c");
	util_path_dirname("/a/b/c", &b);
	assert_string_equal(b.ptr, "/a/b");
	kiln_buf_reset(&b);
	util_path_dirname("/a", &b);
	assert_string_equal(b.ptr, "/");
	kiln_buf_reset(&b);
	util_path_dirname("c", &b);
	assert_string_equal(b.ptr, ".");
	kiln_buf_release(&b);
}
