#include "util/util.h"

#include <fcntl.h>
#include <unistd.h>

#include "tests/unit/worker/build_test.h"

KILN_TEST(srpm_install_puts_spec_and_sources_in_place)
{
	struct bt t, u;
	struct kiln_arena a = KILN_ARENA_INIT(KILN_LIMIT_ARENA);
	struct kiln_err err = KILN_ERR_INIT;
	const char *spec = NULL;
	char path[2200], *text;

	bt_init(&t, "from");
	snprintf(path, sizeof(path), "%s/SOURCES", t.top);
	assert_ok(util_mkdir_p(path, 0755, &err), &err);
	snprintf(path, sizeof(path), "%s/SOURCES/s.txt", t.top);
	assert_ok(util_write_atomic(path, "S\n", 2, 0644, &err), &err);
	bt_spec(&t, "t.spec", BT_TAGS "Source0: s.txt\n%description\nd\n%files\n");
	assert_ok(bt_run(&t, WORKER_STEPS_S), &t.err);

	bt_init(&u, "to");
	assert_ok(worker_srpm_install(t.res.outputs[0].path, u.mc, &a, &spec, &err), &err);
	snprintf(path, sizeof(path), "%s/SPECS/t.spec", u.top);
	assert_string_equal(spec, path);
	text = bt_read(&u, "SOURCES/s.txt");
	assert_string_equal(text, "S\n");
	free(text);
	/* A binary package or a non-package is refused. */
	assert_int_not_equal(worker_srpm_install(spec, u.mc, &a, &spec, &err), KILN_OK);
	kiln_arena_release(&a);
	bt_release(&t);
	bt_release(&u);
}

/* Run a shell command on the host; its exit status. */
static int sh(const char *cmd)
{
	const char *argv[] = {"/bin/sh", "-c", cmd, NULL};
	const char *env[] = {"PATH=/usr/bin:/bin", NULL};
	struct chroot_config cfg;
	struct chroot_exec *ex = NULL;
	struct chroot_run run = {0};
	struct chroot_result res;
	struct kiln_err err = KILN_ERR_INIT;

	chroot_config_init(&cfg);
	assert_ok(chroot_exec_new(&cfg, &ex, &err), &err);
	run.argv = argv;
	run.env = env;
	run.stdin_fd = run.stdout_fd = run.stderr_fd = -1;
	assert_ok(chroot_exec_run(ex, &run, &res, &err), &err);
	chroot_exec_free(ex);
	return res.exit_code;
}

KILN_TEST(srpm_tarball_spec_is_found_one_level_down)
{
	struct bt t;
	struct kiln_arena a = KILN_ARENA_INIT(KILN_LIMIT_ARENA);
	struct kiln_err err = KILN_ERR_INIT;
	const char *spec = NULL;
	char cmd[4600], path[2200], *text;

	bt_init(&t, "tar");
	snprintf(cmd, sizeof(cmd),
	         "cd %s && mkdir -p p-1/deep/er && printf 'Name: p\\n' > p-1/p.spec && "
	         "printf x > p-1/deep/er/no.spec && tar -czf p-1.tar.gz p-1",
	         t.top);
	assert_int_equal(sh(cmd), 0);
	snprintf(path, sizeof(path), "%s/p-1.tar.gz", t.top);
	assert_ok(worker_tarball_spec(path, t.mc, &a, &spec, &err), &err);
	text = bt_read(&t, "SPECS/p.spec");
	assert_string_equal(text, "Name: p\n");
	free(text);
	assert_true(util_exists(spec));
	snprintf(path, sizeof(path), "%s/SOURCES/p-1.tar.gz", t.top);
	assert_true(util_exists(path));
	/* No spec: rpmbuild's message. */
	snprintf(cmd, sizeof(cmd), "cd %s && mkdir -p q && tar -czf q.tar.gz q", t.top);
	assert_int_equal(sh(cmd), 0);
	snprintf(path, sizeof(path), "%s/q.tar.gz", t.top);
	assert_int_equal(worker_tarball_spec(path, t.mc, &a, &spec, &err), KILN_ENOTFOUND);
	assert_non_null(strstr(err.msg, "Failed to read spec file from"));
	kiln_arena_release(&a);
	bt_release(&t);
}
