#include "util/util.h"

#include "tests/unit/worker/build_test.h"

#define VERIFY_SPEC(cmd)                                                                           \
	BT_TAGS "BuildArch: noarch\n%description\nd\n%install\nmkdir -p "                          \
	        "%{buildroot}/usr/share/v\n" cmd                                                   \
	        " > %{buildroot}/usr/share/v/f\n%files\n/usr/share/v\n"                            \
	        "%changelog\n* Tue Dec 01 2026 A <a@b> - 1-1\n- x\n"

KILN_TEST(verify_identical_builds)
{
	struct bt t;
	struct worker_verify_result vr;

	bt_init(&t, "same");
	bt_spec(&t, "t.spec", VERIFY_SPEC("echo fixed"));
	t.o.steps = WORKER_STEPS_B;
	assert_ok(worker_build_verify(&t.o, t.mc, 2, &vr, &t.err), &t.err);
	assert_int_equal(vr.runs, 2);
	assert_int_equal(vr.npackages, 1);
	assert_int_equal(vr.ndiffs, 0);
	assert_true(util_exists(vr.first.outputs[0].path));
	worker_verify_result_release(&vr);
	bt_release(&t);
}

KILN_TEST(verify_names_the_differing_file)
{
	struct bt t;
	struct worker_verify_result vr;
	size_t i;
	bool named = false;

	bt_init(&t, "date");
	bt_spec(&t, "t.spec", VERIFY_SPEC("date +%s%N"));
	t.o.steps = WORKER_STEPS_B;
	assert_ok(worker_build_verify(&t.o, t.mc, 2, &vr, &t.err), &t.err);
	assert_true(vr.ndiffs > 0);
	for (i = 0; i < vr.ndiffs; i++) {
		assert_int_equal(vr.diffs[i].run, 2);
		assert_string_equal(vr.diffs[i].package, "RPMS/noarch/t-1-1.noarch.rpm");
		named |= strstr(vr.diffs[i].what, "/usr/share/v/f: contents differ") != NULL;
	}
	assert_true(named);
	worker_verify_result_release(&vr);
	bt_release(&t);
}

KILN_TEST(verify_needs_two_runs)
{
	struct bt t;
	struct worker_verify_result vr;

	bt_init(&t, "one");
	bt_spec(&t, "t.spec", VERIFY_SPEC("echo x"));
	assert_int_equal(worker_build_verify(&t.o, t.mc, 1, &vr, &t.err), KILN_EINVAL);
	worker_verify_result_release(&vr);
	bt_release(&t);
}
