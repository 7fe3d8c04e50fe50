#include "util/util.h"

#include <stdlib.h>
#include <sys/stat.h>

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

KILN_TEST(vary_names_parse_and_apply)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct worker_build_opts o;
	struct chroot_config cc;
	struct worker_vary_state vs;
	unsigned bit = 0, b;
	mode_t before;

	for (b = 1; b <= WORKER_VARY_ALL; b <<= 1) {
		assert_non_null(worker_vary_name(b));
		assert_ok(worker_vary_parse(worker_vary_name(b), &bit, &err), &err);
		assert_int_equal(bit, b);
	}
	assert_null(worker_vary_name(1u << 8));
	assert_int_equal(worker_vary_parse("moon", &bit, &err), KILN_EINVAL);
	assert_non_null(strstr(err.msg, "file_order"));
	worker_build_opts_init(&o);
	chroot_config_init(&cc);
	cc.kind = CHROOT_EXEC_SANDBOX;
	o.exec = &cc;
	before = umask(022);
	worker_vary_apply(WORKER_VARY_HOSTNAME | WORKER_VARY_CPUS | WORKER_VARY_LOCALE |
	                      WORKER_VARY_UMASK | WORKER_VARY_ENV,
	                  3, &o, &vs);
	assert_ptr_not_equal(o.exec, &cc); /* the caller's config is not changed */
	assert_string_equal(o.exec->hostname, "kiln-rerun-3");
	assert_int_equal(o.exec->limits.cpus, 1);
	assert_string_equal(o.lang, "C");
	assert_non_null(getenv("KILN_VERIFY_NOISE"));
	assert_int_equal(umask(0077), 0077);
	worker_vary_restore(&vs);
	assert_null(getenv("KILN_VERIFY_NOISE"));
	assert_int_equal(umask(before), 022);
	assert_null(cc.hostname);
	/* File order: in the sandbox, where disorderfs can work; never on the host. */
	worker_build_opts_init(&o);
	o.exec = &cc;
	worker_vary_apply(WORKER_VARY_FILE_ORDER, 2, &o, &vs);
	assert_int_equal(o.exec->reverse_order, chroot_reorder_probe(&err) == KILN_OK);
	worker_vary_restore(&vs);
	assert_false(cc.reverse_order);
	cc.kind = CHROOT_EXEC_HOST;
	worker_vary_apply(WORKER_VARY_FILE_ORDER, 2, &o, &vs);
	assert_false(o.exec->reverse_order);
	worker_vary_restore(&vs);
}
