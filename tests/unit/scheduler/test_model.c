#include "util/util.h"

#include "tests/unit/harness.h"
#include "scheduler/scheduler_int.h"

KILN_TEST(model_state_names_round_trip)
{
	struct kiln_err err = KILN_ERR_INIT;
	enum scheduler_state s;
	int i;

	for (i = 0; i < SCHED_NSTATES; i++) {
		assert_ok(
		    scheduler_state_parse(scheduler_state_name((enum scheduler_state)i), &s, &err),
		    &err);
		assert_int_equal(s, i);
	}
	assert_int_equal(scheduler_state_parse("done", &s, &err), KILN_EINVAL);
	assert_true(scheduler_state_active(SCHED_BUILDING));
	assert_false(scheduler_state_active(SCHED_QUEUED));
	assert_true(scheduler_state_final(SCHED_CANCELLED));
}
