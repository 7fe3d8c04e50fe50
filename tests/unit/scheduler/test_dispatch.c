#include "util/util.h"

#include "tests/unit/harness.h"
#include "scheduler/scheduler_int.h"

KILN_TEST(dispatch_matches_arch_and_tags)
{
	struct kiln_arena a = KILN_ARENA_INIT(KILN_MIB);
	struct scheduler_job j = {0};
	const char *why;

	j.arch = "", j.tags = "";
	assert_true(scheduler_worker_matches(&j, ",x86_64,", ",", &a, &why));
	j.arch = "x86_64";
	assert_true(scheduler_worker_matches(&j, ",aarch64,x86_64,", ",", &a, &why));
	assert_false(scheduler_worker_matches(&j, ",x86_64_v2,", ",", &a, &why));
	assert_non_null(strstr(why, "arch x86_64"));
	j.tags = ",gpu,big,";
	assert_true(scheduler_worker_matches(&j, ",x86_64,", ",big,gpu,ssd,", &a, &why));
	assert_false(scheduler_worker_matches(&j, ",x86_64,", ",gpu,bigger,", &a, &why));
	assert_string_equal(why, "the worker lacks tag big");
	kiln_arena_release(&a);
}

KILN_TEST(dispatch_job_fits_says_what_did_not_fit)
{
	struct scheduler_misfit m;

	assert_true(scheduler_job_fits("", "", ",x86_64,", ",", &m));
	assert_int_equal(m.what, SCHED_MISFIT_NONE);
	/* a job's tags with or without the outer commas, empty words ignored */
	assert_true(scheduler_job_fits("x86_64", "gpu,,big", ",x86_64,", ",big,gpu,", &m));
	assert_false(scheduler_job_fits("x86", "", ",x86_64,", ",", &m));
	assert_int_equal(m.what, SCHED_MISFIT_ARCH);
	assert_false(scheduler_job_fits("", ",gpu,ssd,", ",x86_64,", ",gpu,ss,", &m));
	assert_int_equal(m.what, SCHED_MISFIT_TAG);
	assert_int_equal(m.len, 3);
	assert_memory_equal(m.tag, "ssd", 3);
	/* no worker lists at all: only a job asking for nothing fits */
	assert_true(scheduler_job_fits("", "", NULL, NULL, NULL));
	assert_false(scheduler_job_fits("noarch", "", NULL, NULL, NULL));
}
