#include "util/util.h"

#include "tests/unit/harness.h"

KILN_TEST(buf_starts_empty_and_terminated)
{
	struct kiln_buf b = KILN_BUF_INIT(100);

	assert_non_null(b.ptr);
	assert_string_equal(b.ptr, "");
	assert_int_equal(b.len, 0);
	kiln_buf_release(&b);
	assert_string_equal(b.ptr, "");
}

KILN_TEST(buf_appends_and_formats)
{
	struct kiln_buf b = KILN_BUF_INIT(1000);
	struct kiln_err err = KILN_ERR_INIT;
	int i;

	kiln_buf_addstr(&b, "abc");
	kiln_buf_addch(&b, '-');
	kiln_buf_addf(&b, "%d/%s", 42, "x");
	assert_string_equal(b.ptr, "abc-42/x");
	for (i = 0; i < 100; i++)
		kiln_buf_addch(&b, 'z');
	assert_int_equal(b.len, 108);
	assert_int_equal(b.ptr[b.len], '\0');
	assert_ok(kiln_buf_finish(&b, &err), &err);
	kiln_buf_release(&b);
}

KILN_TEST(buf_holds_nul_bytes)
{
	struct kiln_buf b = KILN_BUF_INIT(100);

	kiln_buf_add(&b, "a\0b", 3);
	assert_int_equal(b.len, 3);
	assert_memory_equal(b.ptr, "a\0b", 4);
	kiln_buf_release(&b);
}

KILN_TEST(buf_limit_is_sticky)
{
	struct kiln_buf b = KILN_BUF_INIT(5);
	struct kiln_err err = KILN_ERR_INIT;

	kiln_buf_addstr(&b, "12345");
	assert_int_equal(b.err, KILN_OK);
	kiln_buf_addch(&b, '6');
	assert_int_equal(b.err, KILN_ELIMIT);
	kiln_buf_addstr(&b, "7");
	assert_string_equal(b.ptr, "12345");
	assert_int_equal(kiln_buf_finish(&b, &err), KILN_ELIMIT);
	assert_int_equal(err.code, KILN_ELIMIT);
	assert_non_null(strstr(err.msg, "limit of 5"));
	assert_null(kiln_buf_take(&b, NULL));
	kiln_buf_release(&b);
}

KILN_TEST(buf_addf_long_output_grows)
{
	struct kiln_buf b = KILN_BUF_INIT(100000);
	char big[5000];

	memset(big, 'q', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	kiln_buf_addstr(&b, "x");
	kiln_buf_addf(&b, "<%s>", big);
	assert_int_equal(b.len, 1 + 2 + 4999);
	assert_int_equal(b.ptr[b.len - 1], '>');
	kiln_buf_release(&b);
}

KILN_TEST(buf_insert_remove_truncate_rtrim)
{
	struct kiln_buf b = KILN_BUF_INIT(100);

	kiln_buf_addstr(&b, "hello world");
	kiln_buf_insert(&b, 5, ",", 1);
	assert_string_equal(b.ptr, "hello, world");
	kiln_buf_remove(&b, 0, 7);
	assert_string_equal(b.ptr, "world");
	kiln_buf_remove(&b, 3, 99);
	assert_string_equal(b.ptr, "wor");
	kiln_buf_addstr(&b, " \n\n");
	kiln_buf_rtrim(&b, "\n");
	assert_string_equal(b.ptr, "wor ");
	kiln_buf_rtrim(&b, " \t\n");
	assert_string_equal(b.ptr, "wor");
	kiln_buf_truncate(&b, 1);
	assert_string_equal(b.ptr, "w");
	kiln_buf_release(&b);
}

KILN_TEST(buf_take_hands_over_and_resets)
{
	struct kiln_buf b = KILN_BUF_INIT(100);
	size_t len = 0;
	char *s;

	s = kiln_buf_take(&b, &len);
	assert_non_null(s);
	assert_string_equal(s, "");
	free(s);
	kiln_buf_addstr(&b, "data");
	s = kiln_buf_take(&b, &len);
	assert_string_equal(s, "data");
	assert_int_equal(len, 4);
	assert_int_equal(b.len, 0);
	assert_string_equal(b.ptr, "");
	free(s);
	kiln_buf_release(&b);
}

KILN_TEST(buf_reset_clears_error)
{
	struct kiln_buf b = KILN_BUF_INIT(2);

	kiln_buf_addstr(&b, "abc");
	assert_int_equal(b.err, KILN_ELIMIT);
	kiln_buf_reset(&b);
	assert_int_equal(b.err, KILN_OK);
	kiln_buf_addstr(&b, "ab");
	assert_string_equal(b.ptr, "ab");
	kiln_buf_release(&b);
}
