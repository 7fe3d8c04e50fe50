#include "util/util.h"

#include <sys/stat.h>

#include "tests/unit/chroot/chroot_test.h"

static void mkfile(const char *dir, const char *name, const char *text)
{
	struct kiln_err err = KILN_ERR_INIT;
	char path[1024];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	assert_ok(util_write_atomic(path, text, strlen(text), 0644, &err), &err);
}

static void mkdirs(const char *path)
{
	struct kiln_err err = KILN_ERR_INIT;

	assert_ok(util_mkdir_p(path, 0755, &err), &err);
}

/* A hybrid host as kiln's development machines: v1 memory/pids/cpu, v2 with hugetlb only. */
KILN_TEST(cgroup_detect_hybrid_v1)
{
	const char *t = kiln_test_tmpdir();
	char mi[4096], mem[600], pids[600], cpu[600], uni[600];
	const char *pc = "9:name=systemd:/\n8:pids:/\n4:memory:/process_api/abc\n"
	                 "1:cpu,cpuacct:/\n0::/\n";
	bool want[CHROOT_CG_NCTL] = {true, true, true};
	struct chroot_cgroup cg;

	snprintf(mem, sizeof(mem), "%s/memory/process_api/abc", t);
	snprintf(pids, sizeof(pids), "%s/pids", t);
	snprintf(cpu, sizeof(cpu), "%s/cpu", t);
	snprintf(uni, sizeof(uni), "%s/unified", t);
	mkdirs(mem);
	mkdirs(pids);
	mkdirs(cpu);
	mkdirs(uni);
	mkfile(uni, "cgroup.controllers", "hugetlb\n");
	snprintf(mi, sizeof(mi),
	         "30 25 0:26 / %s/unified rw,relatime - cgroup2 cgroup2 rw\n"
	         "31 25 0:27 / %s/memory rw,relatime - cgroup cgroup rw,memory\n"
	         "32 25 0:28 / %s/pids rw,relatime - cgroup cgroup rw,pids\n"
	         "33 25 0:29 / %s/cpu rw,relatime - cgroup cgroup rw,cpu,cpuacct\n",
	         t, t, t, t);
	chroot_cgroup_detect_from(&cg, mi, pc, want, NULL);
	assert_int_equal(cg.mode[CHROOT_CG_MEMORY], CHROOT_CG_V1);
	assert_int_equal(cg.mode[CHROOT_CG_PIDS], CHROOT_CG_V1);
	assert_int_equal(cg.mode[CHROOT_CG_CPU], CHROOT_CG_V1);
	assert_string_equal(cg.parent[CHROOT_CG_MEMORY], mem);
	assert_string_equal(cg.parent[CHROOT_CG_PIDS], pids);
	assert_string_equal(cg.parent[CHROOT_CG_CPU], cpu);
}

KILN_TEST(cgroup_detect_pure_v2_with_escapes_and_override)
{
	const char *t = kiln_test_tmpdir();
	char mi[4096], dir[800], mnt[600];
	const char *pc = "0::/user.slice/session-1.scope\n";
	bool want[CHROOT_CG_NCTL] = {true, true, false};
	struct chroot_cgroup cg;

	/* A mount point with a space, escaped as \040 in mountinfo. */
	snprintf(mnt, sizeof(mnt), "%s/cg root", t);
	snprintf(dir, sizeof(dir), "%s/user.slice/session-1.scope", mnt);
	mkdirs(dir);
	mkfile(dir, "cgroup.controllers", "cpuset cpu io memory pids\n");
	snprintf(mi, sizeof(mi), "30 25 0:26 / %s/cg\\040root rw - cgroup2 cgroup2 rw\n", t);
	chroot_cgroup_detect_from(&cg, mi, pc, want, NULL);
	assert_int_equal(cg.mode[CHROOT_CG_MEMORY], CHROOT_CG_V2);
	assert_int_equal(cg.mode[CHROOT_CG_PIDS], CHROOT_CG_V2);
	assert_int_equal(cg.mode[CHROOT_CG_CPU], CHROOT_CG_NONE); /* not wanted */
	assert_string_equal(cg.parent[CHROOT_CG_MEMORY], dir);
	/* An override names a delegated group instead of ours. */
	snprintf(dir, sizeof(dir), "%s/kiln.slice", mnt);
	mkdirs(dir);
	mkfile(dir, "cgroup.controllers", "memory pids\n");
	chroot_cgroup_detect_from(&cg, mi, pc, want, "/kiln.slice");
	assert_string_equal(cg.parent[CHROOT_CG_PIDS], dir);
}

KILN_TEST(cgroup_detect_nothing_usable)
{
	const char *t = kiln_test_tmpdir();
	char mi[1024], uni[600];
	bool want[CHROOT_CG_NCTL] = {true, false, false};
	struct chroot_cgroup cg;

	snprintf(uni, sizeof(uni), "%s/unified", t);
	mkdirs(uni);
	mkfile(uni, "cgroup.controllers", "hugetlb\n");
	snprintf(mi, sizeof(mi), "30 25 0:26 / %s rw - cgroup2 cgroup2 rw\n", uni);
	chroot_cgroup_detect_from(&cg, mi, "0::/\n", want, NULL);
	assert_int_equal(cg.mode[CHROOT_CG_MEMORY], CHROOT_CG_NONE);
	assert_non_null(strstr(cg.why, "memory"));
	/* Container-style mount root: the hierarchy's root is our own group. */
	snprintf(mi, sizeof(mi), "30 25 0:26 /docker/x %s rw - cgroup cgroup rw,memory\n", uni);
	chroot_cgroup_detect_from(&cg, mi, "4:memory:/docker/x\n", want, NULL);
	assert_int_equal(cg.mode[CHROOT_CG_MEMORY], CHROOT_CG_V1);
	assert_string_equal(cg.parent[CHROOT_CG_MEMORY], uni);
}

KILN_TEST(cgroup_values)
{
	struct chroot_limits l = {.memory_bytes = 1 << 20, .pids_max = 64, .cpu_percent = 150};
	char v[64];

	chroot_cgroup_value(CHROOT_CG_CPU, CHROOT_CG_V2, &l, v, sizeof(v));
	assert_string_equal(v, "150000 100000");
	chroot_cgroup_value(CHROOT_CG_CPU, CHROOT_CG_V1, &l, v, sizeof(v));
	assert_string_equal(v, "150000");
	chroot_cgroup_value(CHROOT_CG_MEMORY, CHROOT_CG_V1, &l, v, sizeof(v));
	assert_string_equal(v, "1048576");
	chroot_cgroup_value(CHROOT_CG_PIDS, CHROOT_CG_V2, &l, v, sizeof(v));
	assert_string_equal(v, "64");
	assert_string_equal(chroot_cgroup_mode_name(CHROOT_CG_V1), "v1");
	assert_string_equal(chroot_cgroup_mode_name(CHROOT_CG_NONE), "none");
}

/* On the live host: create a run group with a pids limit, read it back, remove it. */
KILN_TEST(cgroup_live_run_group)
{
	struct chroot_limits l = {.pids_max = 17};
	struct kiln_buf b = KILN_BUF_INIT(256);
	struct kiln_err err = KILN_ERR_INIT;
	struct chroot_cgroup_run r;
	struct chroot_cgroup cg;
	char path[KILN_LIMIT_PATH + 64];
	char dir[KILN_LIMIT_PATH];

	chroot_cgroup_detect(&cg, &l);
	if (cg.mode[CHROOT_CG_PIDS] == CHROOT_CG_NONE) {
		print_message("no pids controller here: %s\n", cg.why);
		skip();
	}
	assert_ok(chroot_cgroup_run_create(&cg, &l, "kiln-unit-test", &r, &err), &err);
	assert_int_equal(r.nprocs, 1);
	snprintf(dir, sizeof(dir), "%s", r.dir[0]);
	snprintf(path, sizeof(path), "%s/pids.max", dir);
	assert_ok(util_read_file(path, 256, &b, &err), &err);
	assert_string_equal(b.ptr, "17\n");
	chroot_cgroup_run_kill(&r);
	chroot_cgroup_run_destroy(&r);
	assert_false(util_exists(dir));
	kiln_buf_release(&b);
}
