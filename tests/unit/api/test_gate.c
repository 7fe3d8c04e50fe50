#include "util/util.h"

#include "tests/unit/harness.h"
#include "api/api.h"

static enum api_head scan(const char *s, size_t max)
{
	return api_head_scan(s, strlen(s), max);
}

KILN_TEST(gate_head_complete_at_its_empty_line)
{
	assert_int_equal(scan("GET / HTTP/1.1\r\nHost: x\r\n\r\n", 4096), API_HEAD_COMPLETE);
	assert_int_equal(scan("GET / HTTP/1.1\nHost: x\n\n", 4096), API_HEAD_COMPLETE);
	assert_int_equal(scan("GET / HTTP/1.1\r\n\r\n{\"body\":1}", 4096), API_HEAD_COMPLETE);
	/* a '\r' alone between line ends still makes the empty line */
	assert_int_equal(scan("GET / HTTP/1.1\r\nA: b\n\r\n", 4096), API_HEAD_COMPLETE);
}

KILN_TEST(gate_head_partial_until_max)
{
	assert_int_equal(scan("GET /abc", 4096), API_HEAD_PARTIAL);
	assert_int_equal(scan("GET / HTTP/1.1\r\nHost: x\r\n", 4096), API_HEAD_PARTIAL);
	assert_int_equal(scan("GET / HTTP/1.1\r\nA: b\r\nB: c\r", 4096), API_HEAD_PARTIAL);
}

KILN_TEST(gate_head_too_long_says_which_part)
{
	assert_int_equal(scan("GET /aaaaaaaaaaaa", 8), API_HEAD_LINE_TOO_LONG);
	/* the line end past max: the request line is what is too long */
	assert_int_equal(scan("GET /aaaaaaaaaaaa HTTP/1.1\r\n\r\n", 8), API_HEAD_LINE_TOO_LONG);
	assert_int_equal(scan("GET / HTTP/1.1\r\nA: bbbbbbbbbbbbbbbbbbbb\r\n", 24),
	                 API_HEAD_TOO_LARGE);
	/* the empty line just past max is not looked at */
	assert_int_equal(scan("GET /\r\nA: b\r\n\r\n", 13), API_HEAD_TOO_LARGE);
	assert_int_equal(scan("GET /\r\nA: b\r\n\r\n", 15), API_HEAD_COMPLETE);
}
