#include "util/util.h"

#include <sys/stat.h>

#include "tests/unit/chroot/chroot_test.h"

static struct chroot_op make_op(enum chroot_op_kind kind, const char *src, const char *dst)
{
	struct chroot_op op;

	memset(&op, 0, sizeof(op));
	op.kind = kind;
	op.src = src; /* literals: the op outlives no test */
	op.dst = dst;
	return op;
}

static ptrdiff_t find(const struct chroot_plan *p, enum chroot_op_kind kind, const char *dst)
{
	size_t i;

	for (i = 0; i < p->n; i++) {
		if (p->ops[i].kind == kind && !strcmp(p->ops[i].dst, dst))
			return (ptrdiff_t)i;
	}
	return -1;
}

KILN_TEST(plan_op_check_allow_list)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct chroot_op op;

	op = make_op(CHROOT_OP_TMPFS, "", "/tmp");
	assert_ok(chroot_op_check(&op, &err), &err);
	op = make_op(CHROOT_OP_TMPFS, "", "tmp");
	assert_int_equal(chroot_op_check(&op, &err), KILN_EINVAL);
	kiln_err_clear(&err);
	op = make_op(CHROOT_OP_TMPFS, "", "/");
	assert_int_equal(chroot_op_check(&op, &err), KILN_EINVAL);
	kiln_err_clear(&err);
	op = make_op(CHROOT_OP_TMPFS, "", "/a/../etc");
	assert_int_equal(chroot_op_check(&op, &err), KILN_EINVAL);
	kiln_err_clear(&err);
	op = make_op(CHROOT_OP_TMPFS, "", "/proc/sys");
	assert_int_equal(chroot_op_check(&op, &err), KILN_EINVAL);
	kiln_err_clear(&err);
	op = make_op(CHROOT_OP_BIND, "/dev/sda", "/dev/sda");
	assert_int_equal(chroot_op_check(&op, &err), KILN_EINVAL);
	kiln_err_clear(&err);
	op = make_op(CHROOT_OP_BIND, "relative", "/x");
	assert_int_equal(chroot_op_check(&op, &err), KILN_EINVAL);
	kiln_err_clear(&err);
	op = make_op(CHROOT_OP_PROC, "", "/tmp");
	assert_int_equal(chroot_op_check(&op, &err), KILN_EINVAL);
	kiln_err_clear(&err);
	op = make_op(CHROOT_OP_KIND_END, "", "/x");
	assert_int_equal(chroot_op_check(&op, &err), KILN_EINVAL);
	kiln_err_clear(&err);
	op = make_op(CHROOT_OP_SYMLINK, "", "/x");
	assert_int_equal(chroot_op_check(&op, &err), KILN_EINVAL);
}

KILN_TEST(plan_path_within)
{
	assert_true(chroot_path_within("/a/b", "/a"));
	assert_true(chroot_path_within("/a", "/a"));
	assert_false(chroot_path_within("/ab", "/a"));
	assert_true(chroot_path_within("/x", "/"));
}

KILN_TEST(plan_sort_parents_first_and_stable)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct chroot_plan p = {0};

	assert_ok(chroot_plan_add(&p, CHROOT_OP_BIND, 0, 0, "/b", "/a/b", &err), &err);
	assert_ok(chroot_plan_add(&p, CHROOT_OP_TMPFS, 0, 0, NULL, "/a-b", &err), &err);
	assert_ok(chroot_plan_add(&p, CHROOT_OP_TMPFS, 0, 0, NULL, "/a", &err), &err);
	assert_ok(chroot_plan_add(&p, CHROOT_OP_BIND, 0, 0, "/c", "/a", &err), &err);
	chroot_plan_sort(&p);
	assert_string_equal(p.ops[0].dst, "/a");
	assert_int_equal(p.ops[0].kind, CHROOT_OP_TMPFS);
	assert_int_equal(p.ops[1].kind, CHROOT_OP_BIND); /* same path keeps its order */
	assert_string_equal(p.ops[2].dst, "/a/b");
	assert_string_equal(p.ops[3].dst, "/a-b");
	chroot_plan_release(&p);
}

/* The plan keeps its own copies of the paths; over-long and missing ones are refused and
 * leave the plan as it was. */
KILN_TEST(plan_copies_paths_and_bounds_them)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct chroot_plan p = {0};
	struct chroot_op op;
	char dst[64], *big = kiln_malloc(KILN_LIMIT_PATH + 2);

	assert_non_null(big);
	snprintf(dst, sizeof(dst), "/x/y");
	assert_ok(chroot_plan_add(&p, CHROOT_OP_BIND, 0, 0, "/src", dst, &err), &err);
	dst[1] = 'z';
	assert_string_equal(p.ops[0].dst, "/x/y");
	memset(big, 'a', KILN_LIMIT_PATH + 1);
	big[0] = '/';
	big[KILN_LIMIT_PATH + 1] = '\0';
	assert_int_equal(chroot_plan_add(&p, CHROOT_OP_TMPFS, 0, 0, NULL, big, &err), KILN_ELIMIT);
	kiln_err_clear(&err);
	assert_int_equal(chroot_plan_add(&p, CHROOT_OP_BIND, 0, 0, big, "/ok", &err), KILN_ELIMIT);
	kiln_err_clear(&err);
	assert_int_equal(chroot_plan_add(&p, CHROOT_OP_BIND, 0, 0, "rel", "/ok", &err),
	                 KILN_EINVAL);
	kiln_err_clear(&err);
	assert_int_equal(p.n, 1);
	op = make_op(CHROOT_OP_TMPFS, "", "/t");
	op.dst = NULL;
	assert_int_equal(chroot_op_check(&op, &err), KILN_EINVAL);
	kiln_err_clear(&err);
	chroot_plan_release(&p);
	assert_int_equal(p.n, 0);
	free(big);
}

KILN_TEST(plan_host_root)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct chroot_plan p = {0};
	struct chroot_config cfg;
	struct kiln_arena a = KILN_ARENA_INIT(KILN_MIB);
	struct chroot_bind b = {"/usr/share", "/builddir/build", false};
	ptrdiff_t home, build;

	chroot_config_init(&cfg);
	assert_ok(chroot_config_tmpfs_parse(&cfg, CHROOT_DEFAULT_TMPFS, &a, &err), &err);
	cfg.binds = &b;
	cfg.nbinds = 1;
	assert_ok(chroot_plan_build(&p, &cfg, "/builddir", &err), &err);
	assert_true(find(&p, CHROOT_OP_BIND, "/usr") >= 0);
	assert_true(p.ops[find(&p, CHROOT_OP_BIND, "/usr")].flags & CHROOT_OPF_RO);
	assert_true(find(&p, CHROOT_OP_BIND, "/etc/passwd") >= 0);
	assert_true(p.ops[find(&p, CHROOT_OP_BIND, "/etc/passwd")].flags & CHROOT_OPF_FILE);
	assert_true(find(&p, CHROOT_OP_PROC, "/proc") >= 0);
	assert_true(find(&p, CHROOT_OP_SYSFS, "/sys") >= 0);
	assert_true(find(&p, CHROOT_OP_DEV, "/dev") >= 0);
	assert_true(find(&p, CHROOT_OP_TMPFS, "/tmp") >= 0);
	assert_true(find(&p, CHROOT_OP_TMPFS, "/var/tmp") >= 0);
	assert_true(find(&p, CHROOT_OP_TMPFS, "/home") >= 0);
	assert_int_equal(find(&p, CHROOT_OP_BIND, "/etc/resolv.conf"), -1);
	home = find(&p, CHROOT_OP_TMPFS, "/builddir");
	build = find(&p, CHROOT_OP_BIND, "/builddir/build");
	assert_true(home >= 0 && build > home);
	assert_false(p.ops[build].flags & CHROOT_OPF_RO);
	chroot_plan_release(&p);
	kiln_arena_release(&a);
}

KILN_TEST(plan_network_and_dir_root)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct chroot_plan p = {0};
	struct chroot_config cfg;

	chroot_config_init(&cfg);
	cfg.network = true;
	cfg.root = CHROOT_ROOT_DIR;
	assert_ok(chroot_plan_build(&p, &cfg, "/builddir", &err), &err);
	/* No sysfs without a private network namespace; nothing of the host for dir: roots. */
	assert_int_equal(find(&p, CHROOT_OP_SYSFS, "/sys"), -1);
	assert_int_equal(find(&p, CHROOT_OP_BIND, "/usr"), -1);
	assert_int_equal(find(&p, CHROOT_OP_BIND, "/etc/passwd"), -1);
	assert_true(find(&p, CHROOT_OP_TMPFS, "/builddir") >= 0);
	chroot_plan_release(&p);
}

KILN_TEST(plan_home_covered_by_bind_gets_no_tmpfs)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct chroot_plan p = {0};
	struct chroot_config cfg;
	struct chroot_bind b = {kiln_test_tmpdir(), "/builddir", false};

	chroot_config_init(&cfg);
	cfg.binds = &b;
	cfg.nbinds = 1;
	assert_ok(chroot_plan_build(&p, &cfg, "/builddir/sub", &err), &err);
	assert_int_equal(find(&p, CHROOT_OP_TMPFS, "/builddir/sub"), -1);
	chroot_plan_release(&p);
}

KILN_TEST(plan_bad_binds_and_tmpfs)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct chroot_plan p = {0};
	struct chroot_config cfg;
	struct chroot_bind missing = {"/nonexistent/kiln/src", "/x", false};
	struct chroot_bind dev = {"/tmp", "/dev/x", false};
	const char *rel[] = {"tmp"};

	chroot_config_init(&cfg);
	cfg.binds = &missing;
	cfg.nbinds = 1;
	assert_int_equal(chroot_plan_build(&p, &cfg, "/builddir", &err), KILN_ENOTFOUND);
	assert_non_null(strstr(err.msg, "/nonexistent/kiln/src"));
	chroot_plan_release(&p);
	kiln_err_clear(&err);
	cfg.binds = &dev;
	assert_int_equal(chroot_plan_build(&p, &cfg, "/builddir", &err), KILN_EINVAL);
	chroot_plan_release(&p);
	kiln_err_clear(&err);
	cfg.nbinds = 0;
	cfg.tmpfs = rel;
	cfg.ntmpfs = 1;
	assert_int_equal(chroot_plan_build(&p, &cfg, "/builddir", &err), KILN_EINVAL);
	chroot_plan_release(&p);
}
