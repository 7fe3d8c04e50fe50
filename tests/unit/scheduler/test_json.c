#include "util/util.h"

#include "tests/unit/harness.h"
#include "scheduler/scheduler_int.h"

KILN_TEST(json_job_and_artifact_records)
{
	struct kiln_buf b = KILN_BUF_INIT(KILN_MIB), c = KILN_BUF_INIT(KILN_MIB);
	struct kiln_err err = KILN_ERR_INIT;
	struct scheduler_job j = {0};
	struct scheduler_artifact art = {0};
	struct api_jw w;

	j.id = 3, j.state = SCHED_BUILDING, j.arch = "", j.tags = ",a,b,", j.spec_name = "x.spec";
	j.request = "{\"r\":1}", j.manifest = "{\"m\":1}", j.sign_key = "", j.worker = "w1";
	j.failure_class = "", j.message = "", j.lease_expires_ms = 77;
	api_jw_init(&w, &b);
	scheduler_job_json(&w, &j);
	assert_ok(api_json_canonical(b.ptr, b.len, &c, &err), &err);
	assert_non_null(strstr(b.ptr, "\"state\":\"building\""));
	assert_non_null(strstr(b.ptr, "\"arch\":null,\"tags\":[\"a\",\"b\"]"));
	assert_non_null(strstr(b.ptr, "\"worker\":\"w1\",\"lease_expires\":77"));
	assert_non_null(strstr(b.ptr, "\"manifest\":{\"m\":1},\"request\":{\"r\":1}"));
	kiln_buf_reset(&b);
	art.name = "a.rpm", art.kind = "binary", art.arch = "noarch", art.size = 5;
	memcpy(art.sha256, "aa", 3);
	memcpy(art.signed_sha256, "bb", 3);
	art.signed_size = 9;
	api_jw_init(&w, &b);
	scheduler_artifact_json(&w, &art);
	assert_non_null(strstr(b.ptr,
	                       "\"sha256\":\"bb\",\"size\":9,\"signed\":true,"
	                       "\"unsigned_sha256\":\"aa\",\"url\":\"/api/v1/artifacts/bb\""));
	kiln_buf_release(&b);
	kiln_buf_release(&c);
}
