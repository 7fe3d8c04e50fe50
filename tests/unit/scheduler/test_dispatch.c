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
