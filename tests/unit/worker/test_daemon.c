#include "util/util.h"

#include "tests/unit/harness.h"
#include "worker/daemon_int.h"

KILN_TEST(daemon_job_caps_only_lower_the_workers)
{
	struct worker_caps mine = {4096, 1000, 200, 64}, out;
	struct worker_caps none = {0, 0, 0, 0};
	struct worker_caps lower = {100, 500, 50, 1};
	struct worker_caps higher = {100000, 5000, 800, 1 << 30};
	struct worker_caps unset = {0, 0, 0, 0};

	worker_caps_for_job(&mine, &none, &out);
	assert_memory_equal(&out, &mine, sizeof(out));
	worker_caps_for_job(&mine, &lower, &out);
	assert_memory_equal(&out, &lower, sizeof(out));
	worker_caps_for_job(&mine, &higher, &out);
	assert_memory_equal(&out, &mine, sizeof(out));
	/* a cap the worker does not set (0) takes the job's */
	worker_caps_for_job(&unset, &lower, &out);
	assert_memory_equal(&out, &lower, sizeof(out));
}

KILN_TEST(daemon_lease_carries_the_jobs_limits)
{
	struct kiln_arena a = KILN_ARENA_INIT(KILN_MIB);
	struct kiln_err err = KILN_ERR_INIT;
	struct worker_lease l;
	const char *body =
	    "{\"lease_id\":\"0123456789abcdef0123456789abcdef\",\"generation\":1,\"ttl_ms\":60000,"
	    "\"heartbeat_ms\":20000,\"job_id\":7,\"attempt\":1,\"job\":{\"spec\":{\"name\":\"t."
	    "spec\","
	    "\"sha256\":\"0000000000000000000000000000000000000000000000000000000000000000\"},"
	    "\"limits\":{\"pids\":50,\"log\":1048576}}}";
	const char *bad = "{\"lease_id\":\"x\",\"generation\":1,\"ttl_ms\":1,\"heartbeat_ms\":1,"
	                  "\"job_id\":7,\"attempt\":1,\"job\":{\"limits\":{\"pids\":0}}}";

	assert_ok(worker_lease_parse(body, strlen(body), &a, &l, &err), &err);
	assert_int_equal(l.job.limits.pids, 50);
	assert_int_equal(l.job.limits.log, 1048576);
	assert_int_equal(l.job.limits.memory, 0);
	assert_int_equal(worker_lease_parse(bad, strlen(bad), &a, &l, &err), KILN_EINVAL);
	assert_non_null(strstr(err.msg, "pids"));
	kiln_arena_release(&a);
}
