#include "util/util.h"

#include "macro/macro_int.h"
#include "tests/unit/macro/macro_test.h"

KILN_TEST(shell_host_runs_sh)
{
	struct kiln_buf out = KILN_BUF_INIT(KILN_MIB);
	struct kiln_err err = KILN_ERR_INIT;

	assert_ok(macro_shell_host(NULL, "echo a; echo b >&2; exit 3", &out, &err), &err);
	assert_string_equal(out.ptr, "a\n");
	kiln_buf_release(&out);
}

KILN_TEST(shell_output_limit)
{
	struct kiln_buf out = KILN_BUF_INIT(1000);
	struct kiln_err err = KILN_ERR_INIT;

	assert_int_equal(macro_shell_host(NULL, "head -c 5000 /dev/zero", &out, &err), KILN_ELIMIT);
	kiln_buf_release(&out);
}
