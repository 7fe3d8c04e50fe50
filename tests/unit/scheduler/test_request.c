#include "util/util.h"

#include "tests/unit/harness.h"
#include "scheduler/scheduler_int.h"

#define SHA "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"

static kiln_rc parse(const char *js, struct scheduler_request *r, struct kiln_arena *a,
                     struct kiln_err *err)
{
	kiln_err_clear(err);
	return scheduler_request_parse(js, strlen(js), a, r, err);
}

KILN_TEST(request_accepts_a_full_job)
{
	struct kiln_arena a = KILN_ARENA_INIT(KILN_MIB);
	struct kiln_err err = KILN_ERR_INIT;
	struct scheduler_request r;
	const struct scheduler_source_ref *src;

	assert_ok(parse("{\"spec\":\"Name: x\\n\",\"spec_name\":\"x.spec\",\"sources\":[{\"name\":"
	                "\"x-1.tar.gz\",\"sha256\":\"" SHA
	                "\"}],\"defines\":{\"_smp_mflags\":\"-j2\"},"
	                "\"with\":[\"docs\"],\"without\":[\"tests\"],\"formats\":[\"v6\"],"
	                "\"tags\":[\"big\"],\"arch\":\"x86_64\",\"priority\":10,\"reruns\":1,"
	                "\"timeout\":600,\"source_date_epoch\":0,\"max_attempts\":2,"
	                "\"sign_key\":\"release\",\"repository\":\"f40\"}",
	                &r, &a, &err),
	          &err);
	assert_string_equal(r.spec_name, "x.spec");
	assert_int_equal(r.sources.n, 1);
	src = r.sources.v;
	assert_string_equal(src[0].sha256, SHA);
	assert_true(r.has_sde);
	assert_int_equal(r.source_date_epoch, 0);
	assert_int_equal(r.formats.n, 1);
	assert_string_equal(r.defines.values[0], "-j2");
	kiln_arena_release(&a);
}

KILN_TEST(request_git_jobs)
{
	struct kiln_arena a = KILN_ARENA_INIT(KILN_MIB);
	struct kiln_err err = KILN_ERR_INIT;
	struct scheduler_request r;

	assert_ok(parse("{\"git\":{\"url\":\"git@example.org:p/x.git\",\"ref\":\"main\","
	                "\"spec\":\"rpm/x.spec\"}}",
	                &r, &a, &err),
	          &err);
	assert_true(r.has_git);
	assert_string_equal(r.git.spec, "rpm/x.spec");
	assert_ok(parse("{\"git\":{\"url\":\"file:///srv/x\",\"spec\":\"x.spec\"}}", &r, &a, &err),
	          &err);
	kiln_arena_release(&a);
}

KILN_TEST(request_defaults_and_srpm)
{
	struct kiln_arena a = KILN_ARENA_INIT(KILN_MIB);
	struct kiln_err err = KILN_ERR_INIT;
	struct scheduler_request r;

	assert_ok(parse("{\"spec\":\"x\"}", &r, &a, &err), &err);
	assert_string_equal(r.spec_name, "job.spec");
	assert_false(r.has_sde);
	assert_ok(
	    parse("{\"srpm\":{\"name\":\"x-1-1.src.rpm\",\"sha256\":\"" SHA "\"}}", &r, &a, &err),
	    &err);
	assert_true(r.has_srpm);
	assert_null(r.spec_name);
	kiln_arena_release(&a);
}

KILN_TEST(request_validation_names_the_field)
{
	static const struct {
		const char *in, *msg;
		kiln_rc rc;
	} cases[] = {
	    {"{}", "exactly one of the fields", KILN_EINVAL},
	    {"{\"spec\":\"x\",\"git\":{\"url\":\"u\"}}", "exactly one of the fields", KILN_EINVAL},
	    {"{\"git\":{\"url\":\"https://x/y.git\"}}", "field 'git.spec'", KILN_EINVAL},
	    {"{\"git\":{\"url\":\"gopher://x/y\",\"spec\":\"a.spec\"}}", "field 'git.url'",
	     KILN_EINVAL},
	    {"{\"git\":{\"url\":\"https://x/y\",\"spec\":\"a/../../b.spec\"}}", "field 'git.spec'",
	     KILN_EINVAL},
	    {"{\"spec\":\"x\",\"spec_name\":\"x.txt\"}", "field 'spec_name'", KILN_EINVAL},
	    {"{\"spec\":\"x\",\"spec_name\":\"a/x.spec\"}", "field 'spec_name'", KILN_EINVAL},
	    {"{\"spec\":\"x\",\"sources\":[{\"name\":\"a\",\"sha256\":\"abc\"}]}",
	     "field 'sources[0].sha256'", KILN_EINVAL},
	    {"{\"spec\":\"x\",\"sources\":[{\"name\":\"a\",\"sha256\":\"" SHA "\"},{\"name\":\"a\","
	     "\"sha256\":\"" SHA "\"}]}",
	     "field 'sources[1].name': 'a' given twice", KILN_EINVAL},
	    {"{\"spec\":\"x\",\"defines\":{\"1x\":\"v\"}}", "field 'defines.1x'", KILN_EINVAL},
	    {"{\"spec\":\"x\",\"defines\":{\"x\":\"a\\nb\"}}", "may not contain a newline",
	     KILN_EINVAL},
	    {"{\"spec\":\"x\",\"with\":[\"a b\"]}", "field 'with[0]'", KILN_EINVAL},
	    {"{\"spec\":\"x\",\"formats\":[\"v4\",\"v6\"]}", "one format per job", KILN_EINVAL},
	    {"{\"spec\":\"x\",\"formats\":[\"v4\",\"v6\",\"v4\"]}", "field 'formats': too many",
	     KILN_ELIMIT},
	    {"{\"spec\":\"x\",\"arch\":\"x86-64!\"}", "field 'arch'", KILN_EINVAL},
	    {"{\"spec\":\"x\",\"timeout\":0}", "field 'timeout'", KILN_EINVAL},
	    {"{\"spec\":\"x\",\"source_date_epoch\":-1}", "field 'source_date_epoch'", KILN_EINVAL},
	    {"{\"spec\":\"x\",\"srpm\":{\"name\":\"a\"}}", "field 'srpm.sha256': required",
	     KILN_EINVAL},
	};
	struct kiln_arena a = KILN_ARENA_INIT(KILN_MIB);
	struct kiln_err err = KILN_ERR_INIT;
	struct scheduler_request r;
	size_t i;

	for (i = 0; i < KILN_ARRAY_SIZE(cases); i++) {
		kiln_rc rc = parse(cases[i].in, &r, &a, &err);

		if (rc != cases[i].rc || !strstr(err.msg, cases[i].msg))
			print_error("case %zu: %d %s\n", i, rc, err.msg);
		assert_int_equal(rc, cases[i].rc);
		assert_non_null(strstr(err.msg, cases[i].msg));
	}
	kiln_arena_release(&a);
}
