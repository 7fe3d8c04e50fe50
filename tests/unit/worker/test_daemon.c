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

KILN_TEST(daemon_build_child_request_round_trips)
{
	struct kiln_arena a = KILN_ARENA_INIT(KILN_MIB);
	struct kiln_err err = KILN_ERR_INIT;
	struct worker_lease l, back_lease;
	struct worker_caps caps = {50, 1 << 20, 150, 4096}, back_caps;
	struct worker_child_req r = {0}, back;
	char path[KILN_LIMIT_PATH];
	const char *body =
	    "{\"lease_id\":\"0123456789abcdef0123456789abcdef\",\"generation\":3,\"ttl_ms\":60000,"
	    "\"heartbeat_ms\":20000,\"job_id\":7,\"attempt\":2,\"job\":{\"spec\":{\"name\":\"t."
	    "spec\",\"sha256\":\"00000000000000000000000000000000000000000000000000000000000000"
	    "00\"},\"defines\":{\"dist\":\".x\"},\"with\":[\"docs\"],\"source_date_epoch\":42,"
	    "\"rerun\":1,\"variations\":[\"umask\"]}}";

	assert_ok(worker_lease_parse(body, strlen(body), &a, &l, &err), &err);
	assert_string_equal(l.raw, body);
	r.lease_raw = l.raw;
	r.job = &l.job;
	r.topdir = "/w/job/top";
	r.spec_path = "/w/job/top/SPECS/t.spec";
	r.cache_dir = "/w/cache";
	r.format = "6";
	r.result_path = "/w/job/result.json";
	r.sandbox = true;
	r.root = "dir:/srv/root";
	r.root_lock_out = "/w/job/lock.out";
	r.vary = 5;
	r.caps = &caps;
	snprintf(path, sizeof(path), "%s/child.json", kiln_test_tmpdir());
	assert_ok(worker_child_req_write(&r, path, &err), &err);
	assert_ok(worker_child_req_read(path, &a, &back, &back_lease, &back_caps, &err), &err);
	assert_string_equal(back.topdir, r.topdir);
	assert_string_equal(back.spec_path, r.spec_path);
	assert_null(back.srpm_path);
	assert_null(back.sourcedir);
	assert_null(back.root_config);
	assert_null(back.root_lock_in);
	assert_string_equal(back.cache_dir, r.cache_dir);
	assert_string_equal(back.format, "6");
	assert_string_equal(back.result_path, r.result_path);
	assert_true(back.sandbox);
	assert_string_equal(back.root, r.root);
	assert_string_equal(back.root_lock_out, r.root_lock_out);
	assert_int_equal(back.vary, 5);
	assert_memory_equal(back.caps, &caps, sizeof(caps));
	/* the job, parsed from the lease as granted */
	assert_int_equal(back_lease.job_id, 7);
	assert_int_equal(back_lease.attempt, 2);
	assert_int_equal(back.job->source_date_epoch, 42);
	assert_int_equal(back.job->rerun, 1);
	assert_string_equal(back.job->spec.name, "t.spec");
	assert_string_equal(back.job->defines.values[0], ".x");
	assert_string_equal(back.job->with.v[0], "docs");
	/* a damaged file is an error naming it */
	assert_ok(util_write_atomic(path, "{\"lease\":{}}", 12, 0600, &err), &err);
	assert_int_not_equal(worker_child_req_read(path, &a, &back, &back_lease, &back_caps, &err),
	                     KILN_OK);
	assert_non_null(strstr(err.msg, "child.json"));
	kiln_arena_release(&a);
}
