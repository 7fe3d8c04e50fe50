#include "util/util.h"

#include <fcntl.h>
#include <unistd.h>

#include "tests/unit/worker/build_test.h"
#include "worker/build_int.h"

#define STAGES_SPEC                                                                                \
	BT_HEAD "%prep\necho prep >> ../order\n%build\necho build >> ../order\n"                   \
	        "%install\necho install >> ../order\n%check\necho check >> ../order\n%files\n"

KILN_TEST(build_runs_the_stages_in_rpmbuild_order)
{
	struct bt t;
	char *order;

	bt_init(&t, "order");
	bt_spec(&t, "t.spec",
	        BT_HEAD "%prep\n%setup -q -c -T\necho prep >> ../order\n"
	                "%build\necho build >> ../order\n"
	                "%install\necho install >> ../order\n"
	                "%check\necho check >> ../order\n%files\n");
	assert_ok(bt_run(&t, WORKER_STEPS_I), &t.err);
	order = bt_read(&t, "BUILD/order");
	assert_string_equal(order, "prep\nbuild\ninstall\ncheck\n");
	free(order);
	assert_int_equal(t.res.nstages, 4);
	assert_string_equal(t.res.stages[0].name, "prep");
	assert_string_equal(t.res.stages[3].name, "check");
	bt_release(&t);
}

KILN_TEST(build_nocheck_and_short_circuit)
{
	struct bt t;
	char *order;

	bt_init(&t, "sc");
	bt_spec(&t, "t.spec", STAGES_SPEC);
	t.o.nocheck = true;
	assert_ok(bt_run(&t, WORKER_STEPS_I), &t.err);
	assert_ok(bt_run(&t, WORKER_STEP_BUILD), &t.err);
	order = bt_read(&t, "order");
	assert_string_equal(order, "prep\nbuild\ninstall\nbuild\n");
	free(order);
	bt_release(&t);
}

KILN_TEST(build_failing_stage_says_bad_exit_status)
{
	struct bt t;

	bt_init(&t, "fail");
	bt_spec(&t, "t.spec", BT_HEAD "%build\necho out; exit 7\n%files\n");
	assert_int_equal(bt_run(&t, WORKER_STEPS_C), KILN_EBUILD);
	assert_non_null(strstr(t.err.msg, "Bad exit status from "));
	assert_non_null(strstr(t.err.msg, "/BUILD/.kiln-t-build.sh (%build)"));
	assert_int_equal(t.res.stages[t.res.nstages - 1].exit_code, 7);
	assert_int_equal(t.res.noutputs, 0);
	bt_release(&t);
}

KILN_TEST(build_source_date_epoch_from_changelog_env_and_zero)
{
	struct bt t;
	const char *spec = BT_HEAD "%build\necho \"$SOURCE_DATE_EPOCH\" > sde\n%files\n"
	                           "%changelog\n* Tue Dec 01 2026 A <a@b> - 1-1\n- x\n";
	char *v;

	bt_init(&t, "sde");
	bt_spec(&t, "t.spec", spec);
	unsetenv("SOURCE_DATE_EPOCH");
	assert_ok(bt_run(&t, WORKER_STEPS_C), &t.err);
	assert_int_equal(t.res.source_date_epoch, 1796126400); /* 12:00 UTC of the date */
	assert_int_equal(t.res.buildtime, 1796126400);
	v = bt_read(&t, "BUILD/sde");
	assert_string_equal(v, "1796126400\n");
	free(v);
	/* The environment wins; 0 is a real time, not "unset". */
	setenv("SOURCE_DATE_EPOCH", "0", 1);
	assert_ok(bt_run(&t, WORKER_STEPS_C), &t.err);
	assert_int_equal(t.res.source_date_epoch, 0);
	assert_int_equal(t.res.buildtime, 0);
	setenv("SOURCE_DATE_EPOCH", "12x", 1);
	assert_int_equal(bt_run(&t, WORKER_STEPS_C), KILN_ESYNTAX);
	unsetenv("SOURCE_DATE_EPOCH");
	/* Without the changelog switch there is none, and the build time is now. */
	bt_define(&t, "source_date_epoch_from_changelog 0");
	assert_ok(bt_run(&t, WORKER_STEPS_C), &t.err);
	assert_int_equal(t.res.source_date_epoch, -1);
	assert_true(t.res.buildtime > 1700000000);
	bt_release(&t);
}

KILN_TEST(build_buildtime_macro_overrides)
{
	struct bt t;

	bt_init(&t, "bt");
	bt_spec(&t, "t.spec", BT_HEAD "%files\n");
	bt_define(&t, "_buildtime 1234567");
	assert_ok(bt_run(&t, WORKER_STEPS_C), &t.err);
	assert_int_equal(t.res.buildtime, 1234567);
	bt_define(&t, "_buildtime soon");
	assert_int_equal(bt_run(&t, WORKER_STEPS_C), KILN_ESYNTAX);
	bt_release(&t);
}

KILN_TEST(build_missing_build_requires)
{
	struct bt t;

	bt_init(&t, "br");
	bt_spec(&t, "t.spec",
	        BT_TAGS "BuildRequires: /no/such/kiln/file\nBuildRequires: /bin/sh\n"
	                "BuildConflicts: /bin/sh\n%description\nd\n%files\n");
	assert_int_equal(bt_run(&t, WORKER_STEPS_C), KILN_EBUILD);
	assert_non_null(strstr(t.err.msg, "Failed build dependencies:"));
	assert_non_null(strstr(t.err.msg, "\t/no/such/kiln/file is needed by t-1-1"));
	assert_non_null(strstr(t.err.msg, "\t/bin/sh conflicts with t-1-1"));
	assert_null(strstr(t.err.msg, "/bin/sh is needed"));
	t.o.nodeps = true;
	assert_ok(bt_run(&t, WORKER_STEPS_C), &t.err);
	bt_release(&t);
}

KILN_TEST(build_unchecked_build_requires_warn)
{
	struct bt t;
	size_t i;
	bool seen = false;

	bt_init(&t, "unchecked");
	bt_spec(&t, "t.spec", BT_TAGS "BuildRequires: gcc >= 4\n%description\nd\n%files\n");
	assert_ok(bt_run(&t, WORKER_STEPS_P), &t.err);
	for (i = 0; i < t.res.nwarnings; i++)
		seen |=
		    strstr(t.res.warnings[i], "not checked") && strstr(t.res.warnings[i], "gcc");
	assert_true(seen);
	bt_release(&t);
}

KILN_TEST(build_generate_buildrequires)
{
	struct bt t;

	bt_init(&t, "gen");
	bt_spec(&t, "t.spec",
	        BT_HEAD "%generate_buildrequires\necho /no/such/gen\necho /bin/sh\n"
	                "%build\n%files\n");
	assert_ok(bt_run(&t, WORKER_STEPS_R), &t.err);
	assert_true(t.res.buildreqs_unmet);
	assert_int_equal(bt_run(&t, WORKER_STEPS_C), KILN_EBUILD);
	assert_non_null(strstr(t.err.msg, "/no/such/gen is needed by t-1-1"));
	bt_release(&t);
}

KILN_TEST(build_mtime_policy)
{
	struct bt t;
	struct build b;
	bool clamp;
	uint32_t to;

	bt_init(&t, "mtime");
	memset(&b, 0, sizeof(b));
	kiln_arena_init(&b.arena, KILN_LIMIT_ARENA);
	b.mc = t.mc;
	b.res = &t.res;
	b.o = &t.o;
	b.log_fd = -1;
	t.res.buildtime = 2000;
	t.res.source_date_epoch = 1000;
	assert_ok(worker_build_mtime_clamp(&b, &clamp, &to, &t.err), &t.err);
	assert_true(clamp);
	assert_int_equal(to, 1000); /* kiln's default: clamp_to_source_date_epoch */
	bt_define(&t, "build_mtime_policy clamp_to_buildtime");
	assert_ok(worker_build_mtime_clamp(&b, &clamp, &to, &t.err), &t.err);
	assert_true(clamp);
	assert_int_equal(to, 2000);
	t.res.source_date_epoch = -1;
	bt_define(&t, "build_mtime_policy clamp_to_source_date_epoch");
	assert_ok(worker_build_mtime_clamp(&b, &clamp, &to, &t.err), &t.err);
	assert_false(clamp);
	kiln_arena_release(&b.arena);
	bt_release(&t);
}

KILN_TEST(build_line_splitting)
{
	char text[] = "\na\n\nbc\nd";
	char *rest = text, *l;

	l = build_line_next(&rest);
	assert_string_equal(l, "a");
	l = build_line_next(&rest);
	assert_string_equal(l, "bc");
	l = build_line_next(&rest);
	assert_string_equal(l, "d");
	assert_null(build_line_next(&rest));
}

KILN_TEST(build_clean_removes_build_dir_and_spec)
{
	struct bt t;
	char path[2200];

	bt_init(&t, "clean");
	bt_spec(&t, "t.spec", BT_HEAD "%prep\n%setup -q -c -T\ntouch x\n%files\n");
	assert_ok(bt_run(&t, WORKER_STEPS_P | WORKER_STEP_RMBUILD | WORKER_STEP_RMSPEC), &t.err);
	snprintf(path, sizeof(path), "%s/BUILD/t-1", t.top);
	assert_false(util_exists(path));
	assert_false(util_exists(t.spec));
	bt_release(&t);
}

KILN_TEST(build_parse_errors_name_the_spec)
{
	struct bt t;

	bt_init(&t, "parse");
	bt_spec(&t, "bad.spec", "Name: t\nBogus: 1\n");
	assert_int_equal(bt_run(&t, WORKER_STEPS_C), KILN_ESYNTAX);
	assert_non_null(strstr(t.err.input, "bad.spec"));
	bt_release(&t);
}

/* --build-in-place is the command line's: a %_build_in_place defined any other way (a farm
 * job's defines) neither skips %prep nor links the worker's directory into the build. */
KILN_TEST(build_in_place_only_from_the_option)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct bt t;
	char link[1200], src[1200], target[1300], *order;
	int back = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ssize_t n;

	assert_true(back >= 0);
	bt_init(&t, "inplace");
	bt_define(&t, "_build_in_place 1");
	bt_spec(&t, "t.spec",
	        BT_HEAD "%prep\n%setup -q -c -T\necho prep >> %{_builddir}/order\n"
	                "%build\necho build >> %{_builddir}/order\ntouch built\n%files\n");
	assert_ok(bt_run(&t, WORKER_STEPS_C), &t.err);
	order = bt_read(&t, "BUILD/order");
	assert_string_equal(order, "prep\nbuild\n");
	free(order);
	snprintf(link, sizeof(link), "%s/BUILD/t-1", t.top);
	assert_true(util_is_dir(link) && access(link, F_OK) == 0); /* %setup's, no link */
	/* With the option, from a source directory: no %prep, a link to it. */
	snprintf(src, sizeof(src), "%s/src", t.top);
	assert_ok(util_mkdir_p(src, 0755, &err), &err);
	assert_int_equal(chdir(src), 0);
	t.o.build_in_place = true;
	assert_ok(bt_run(&t, WORKER_STEPS_C), &t.err);
	assert_int_equal(fchdir(back), 0);
	close(back);
	order = bt_read(&t, "BUILD/order");
	assert_string_equal(order, "prep\nbuild\nbuild\n");
	free(order);
	n = readlink(link, target, sizeof(target) - 1);
	assert_true(n > 0);
	target[n] = '\0';
	assert_string_equal(target, src);
	assert_int_equal(access("built", F_OK), -1); /* built in the sources, not here */
	snprintf(target, sizeof(target), "%s/built", src);
	assert_int_equal(access(target, F_OK), 0);
	bt_release(&t);
}
