#include "util/util.h"

#include "tests/unit/harness.h"
#include "scheduler/scheduler_int.h"

KILN_TEST(reproduce_variations_are_checked)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct kiln_buf out = KILN_BUF_INIT(1024);
	const char *good[] = {"umask", "time", "umask"};
	const char *bad[] = {"time", "moon"};
	struct api_strlist l = {good, 3};

	assert_ok(scheduler_vary_check(&l, &out, &err), &err);
	assert_string_equal(out.ptr, "time umask"); /* canonical order, once each */
	kiln_buf_reset(&out);
	l.v = bad, l.n = 2;
	assert_int_equal(scheduler_vary_check(&l, &out, &err), KILN_EINVAL);
	assert_non_null(strstr(err.msg, "variations[1]"));
	assert_non_null(strstr(err.msg, "moon"));
	kiln_buf_release(&out);
}
