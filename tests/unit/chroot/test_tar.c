#include "util/util.h"

#include <sys/stat.h>

#include "tests/unit/chroot/chroot_test.h"

KILN_TEST(tar_cache_dir_resolution)
{
	struct kiln_buf b = KILN_BUF_INIT(KILN_LIMIT_PATH);
	struct kiln_err err = KILN_ERR_INIT;

	assert_ok(chroot_cache_dir("/srv/cache", &b, &err), &err);
	assert_string_equal(b.ptr, "/srv/cache");
	setenv("KILN_CACHE_DIR", "/var/cache/kiln-test", 1);
	assert_ok(chroot_cache_dir(NULL, &b, &err), &err);
	assert_string_equal(b.ptr, "/var/cache/kiln-test");
	unsetenv("KILN_CACHE_DIR");
	setenv("XDG_CACHE_HOME", "/xdg", 1);
	assert_ok(chroot_cache_dir(NULL, &b, &err), &err);
	assert_string_equal(b.ptr, "/xdg/kiln");
	unsetenv("XDG_CACHE_HOME");
	kiln_buf_release(&b);
}

static void make_tar(const char *dir, const char *tarfile, const char *member)
{
	struct chroot_config cfg;
	struct chroot_exec *ex = NULL;
	struct kiln_err err = KILN_ERR_INIT;
	struct kiln_buf out = KILN_BUF_INIT(KILN_MIB);
	struct chroot_result res;
	const char *env[] = {NULL};
	const char *argv[] = {"tar", "-cf", tarfile, "-C", dir, member, NULL};

	chroot_config_init(&cfg);
	assert_ok(chroot_exec_new(&cfg, &ex, &err), &err);
	assert_ok(run_capture(ex, argv, env, &out, &res, &err), &err);
	assert_int_equal(res.exit_code, 0);
	chroot_exec_free(ex);
	kiln_buf_release(&out);
}

KILN_TEST(tar_root_unpacks_once_by_digest)
{
	struct kiln_arena a = KILN_ARENA_INIT(KILN_MIB);
	struct kiln_err err = KILN_ERR_INIT;
	const char *t = kiln_test_tmpdir();
	char src[600], tarfile[600], cache[600], path[800];
	char *dir = NULL, *again = NULL;
	struct stat st1, st2;

	SANDBOX_OR_SKIP();
	snprintf(src, sizeof(src), "%s/src/etc", t);
	assert_ok(util_mkdir_p(src, 0755, &err), &err);
	snprintf(path, sizeof(path), "%s/os-release", src);
	assert_ok(util_write_atomic(path, "ID=test\n", 8, 0644, &err), &err);
	snprintf(src, sizeof(src), "%s/src", t);
	snprintf(tarfile, sizeof(tarfile), "%s/image.tar", t);
	snprintf(cache, sizeof(cache), "%s/cache", t);
	make_tar(src, tarfile, ".");
	assert_ok(chroot_tar_root(tarfile, cache, &a, &dir, &err), &err);
	assert_non_null(strstr(dir, "/roots/"));
	assert_int_equal(strlen(util_path_basename(dir)), 64);
	snprintf(path, sizeof(path), "%s/etc/os-release", dir);
	assert_true(util_exists(path));
	assert_int_equal(stat(dir, &st1), 0);
	assert_ok(chroot_tar_root(tarfile, cache, &a, &again, &err), &err);
	assert_string_equal(dir, again);
	assert_int_equal(stat(again, &st2), 0);
	assert_int_equal(st1.st_ino, st2.st_ino);
	kiln_arena_release(&a);
}

KILN_TEST(tar_root_bad_and_missing_images)
{
	struct kiln_arena a = KILN_ARENA_INIT(KILN_MIB);
	struct kiln_err err = KILN_ERR_INIT;
	const char *t = kiln_test_tmpdir();
	char tarfile[700], cache[600];
	char *dir = NULL;

	snprintf(cache, sizeof(cache), "%s/cache", t);
	assert_int_equal(chroot_tar_root("/nonexistent/x.tar", cache, &a, &dir, &err),
	                 KILN_ENOTFOUND);
	kiln_err_clear(&err);
	SANDBOX_OR_SKIP();
	snprintf(tarfile, sizeof(tarfile), "%s/junk.tar", t);
	assert_ok(util_write_atomic(tarfile, "not a tar archive at all\n", 25, 0644, &err), &err);
	assert_int_equal(chroot_tar_root(tarfile, cache, &a, &dir, &err), KILN_EFORMAT);
	assert_non_null(strstr(err.msg, "junk.tar"));
	assert_null(dir);
	/* Nothing half-unpacked is left in the cache. */
	snprintf(tarfile, sizeof(tarfile), "%s/roots", cache);
	assert_true(util_is_dir(tarfile));
	kiln_arena_release(&a);
}
