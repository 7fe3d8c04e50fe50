#include "util/util.h"

#include <fcntl.h>
#include <unistd.h>

#include "tests/unit/harness.h"

static void capture_log(enum kiln_log_level lvl, unsigned flags, const char *msg,
                        struct kiln_buf *out)
{
	struct kiln_err err = KILN_ERR_INIT;
	int fds[2];
	int saved;

	assert_int_equal(pipe(fds), 0);
	saved = dup(2);
	dup2(fds[1], 2);
	close(fds[1]);
	kiln_log_setup(KILN_LOG_INFO, flags);
	kiln_log(lvl, "%s", msg);
	kiln_log(KILN_LOG_DEBUG, "hidden");
	dup2(saved, 2);
	close(saved);
	assert_ok(util_read_fd(fds[0], out, &err), &err);
	close(fds[0]);
	kiln_log_setup(KILN_LOG_INFO, 0);
}

KILN_TEST(log_plain_prefixes_like_rpm)
{
	struct kiln_buf b = KILN_BUF_INIT(KILN_MIB);

	capture_log(KILN_LOG_ERROR, 0, "boom", &b);
	assert_string_equal(b.ptr, "error: boom\n");
	kiln_buf_reset(&b);
	capture_log(KILN_LOG_WARN, 0, "careful", &b);
	assert_string_equal(b.ptr, "warning: careful\n");
	kiln_buf_release(&b);
}

KILN_TEST(log_json_lines)
{
	struct kiln_buf b = KILN_BUF_INIT(KILN_MIB);

	capture_log(KILN_LOG_INFO, KILN_LOG_F_JSON, "say \"hi\"\n", &b);
	assert_non_null(strstr(b.ptr, "\"level\":\"info\",\"msg\":\"say \\\"hi\\\"\\n\"}\n"));
	assert_int_equal(strncmp(b.ptr, "{\"ts\":", 6), 0);
	kiln_buf_release(&b);
}

KILN_TEST(log_level_parse)
{
	enum kiln_log_level l;

	assert_int_equal(kiln_log_level_parse("debug", &l), KILN_OK);
	assert_int_equal(l, KILN_LOG_DEBUG);
	assert_int_equal(kiln_log_level_parse("loud", &l), KILN_EINVAL);
}
