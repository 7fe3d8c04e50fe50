#include "util/util.h"

#include <dirent.h>
#include <stdio.h>

#include "tests/unit/chroot/chroot_test.h"

/* Skip unless disorderfs can mount here (fail instead under KILN_MUST_WORK=1). */
static void reorder_or_skip(void)
{
	struct kiln_err err = KILN_ERR_INIT;

	if (!chroot_reorder_probe(&err))
		return;
	print_message("file order variation unavailable: %s\n", err.msg);
	if (must_work())
		fail_msg("KILN_MUST_WORK=1 but disorderfs does not work");
	skip();
}

/* The names in dir (no dot entries) in readdir order, reversed, one a line. */
static void host_listing_reversed(const char *dir, struct kiln_buf *out)
{
	char names[16][256];
	size_t n = 0;
	struct dirent *e;
	DIR *d = opendir(dir);

	assert_non_null(d);
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		assert_true(n < KILN_ARRAY_SIZE(names));
		snprintf(names[n++], sizeof(names[0]), "%s", e->d_name);
	}
	closedir(d);
	kiln_buf_reset(out);
	while (n--)
		kiln_buf_addf(out, "%s\n", names[n]);
}

KILN_TEST(reorder_lists_writable_binds_in_reverse)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct kiln_buf out = KILN_BUF_INIT(KILN_MIB), want = KILN_BUF_INIT(KILN_MIB);
	struct chroot_config cfg;
	struct chroot_exec *ex = NULL;
	struct chroot_result res;
	const char *env[] = {NULL};
	const char *t = kiln_test_tmpdir();
	char build[600], dir[700], path[800], statedir[800];
	struct chroot_bind b[] = {{build, "/builddir/build", false}};
	const char *ls[] = {"/bin/sh", "-c", "ls -U /builddir/build/d", NULL};
	const char *wr[] = {"/bin/sh", "-c", "echo through > /builddir/build/d/new", NULL};

	SANDBOX_OR_SKIP();
	reorder_or_skip();
	snprintf(build, sizeof(build), "%s/build", t);
	snprintf(dir, sizeof(dir), "%s/d", build);
	assert_ok(util_mkdir_p(dir, 0755, &err), &err);
	for (const char *f = "one\0two\0three\0four\0five\0six\0"; *f; f += strlen(f) + 1) {
		snprintf(path, sizeof(path), "%s/%s", dir, f);
		assert_ok(util_write_atomic(path, "", 0, 0644, &err), &err);
	}
	host_listing_reversed(dir, &want);

	/* Only in the sandbox. */
	chroot_config_init(&cfg);
	cfg.reverse_order = true;
	assert_int_equal(chroot_exec_new(&cfg, &ex, &err), KILN_EINVAL);
	assert_non_null(strstr(err.msg, "sandbox"));

	kiln_err_clear(&err);
	cfg.kind = CHROOT_EXEC_SANDBOX;
	cfg.binds = b;
	cfg.nbinds = KILN_ARRAY_SIZE(b);
	assert_ok(chroot_exec_new(&cfg, &ex, &err), &err);
	snprintf(statedir, sizeof(statedir), "%s", ex->state_dir);
	assert_ok(run_capture(ex, ls, env, &out, &res, &err), &err);
	assert_int_equal(res.exit_code, 0);
	assert_string_equal(out.ptr, want.ptr);
	/* Writes go through to the directory underneath. */
	assert_ok(run_capture(ex, wr, env, &out, &res, &err), &err);
	snprintf(path, sizeof(path), "%s/new", dir);
	assert_true(util_exists(path));
	chroot_exec_free(ex);
	/* The state directory goes only once the mount is gone. */
	assert_false(util_exists(statedir));
	assert_true(util_exists(path));
	kiln_buf_release(&out);
	kiln_buf_release(&want);
}
