#include "util/util.h"

#include "tests/unit/harness.h"
#include "api/api.h"

KILN_TEST(auth_tokens_are_random_and_hashed)
{
	struct kiln_err err = KILN_ERR_INIT;
	char a[API_TOKEN_LEN + 1], b[API_TOKEN_LEN + 1], h[65];

	assert_ok(api_token_generate(a, &err), &err);
	assert_ok(api_token_generate(b, &err), &err);
	assert_int_equal(strlen(a), API_TOKEN_LEN);
	assert_memory_equal(a, "kiln_", 5);
	assert_string_not_equal(a, b);
	assert_ok(api_token_hash("abc", 3, h, &err), &err);
	assert_string_equal(h, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

KILN_TEST(auth_scopes_parse_and_format)
{
	struct kiln_buf b = KILN_BUF_INIT(128);
	struct kiln_err err = KILN_ERR_INIT;
	unsigned s;

	assert_ok(api_scopes_parse("read, submit", &s, &err), &err);
	assert_int_equal(s, API_SCOPE_READ | API_SCOPE_SUBMIT);
	api_scopes_format(s, &b);
	assert_string_equal(b.ptr, "submit,read");
	assert_ok(api_scopes_parse("admin", &s, &err), &err);
	assert_int_equal(s, API_SCOPE_ALL);
	assert_int_equal(api_scopes_parse("read,root", &s, &err), KILN_EINVAL);
	assert_non_null(strstr(err.msg, "unknown scope 'root'"));
	kiln_err_clear(&err);
	assert_int_equal(api_scopes_parse(" , ", &s, &err), KILN_EINVAL);
	kiln_err_clear(&err);
	/* a group's admin also submits and reads there */
	assert_ok(api_scopes_parse("project-admin", &s, &err), &err);
	assert_int_equal(s, API_SCOPE_GROUP_ADMIN | API_SCOPE_SUBMIT | API_SCOPE_READ);
	kiln_buf_reset(&b);
	api_scopes_format(s, &b);
	assert_string_equal(b.ptr, "submit,read,project-admin");
	kiln_buf_release(&b);
}

KILN_TEST(auth_bearer_header)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct kiln_str t;
	char big[300];

	assert_ok(api_bearer_parse("Bearer abc", &t, &err), &err);
	assert_true(kiln_str_eq_cstr(t, "abc"));
	assert_ok(api_bearer_parse("bearer   xyz  ", &t, &err), &err);
	assert_true(kiln_str_eq_cstr(t, "xyz"));
	assert_int_equal(api_bearer_parse("Basic eDp5", &t, &err), KILN_EAUTH);
	kiln_err_clear(&err);
	assert_int_equal(api_bearer_parse("Bearer a b", &t, &err), KILN_EAUTH);
	kiln_err_clear(&err);
	assert_int_equal(api_bearer_parse("Bearer ", &t, &err), KILN_EAUTH);
	memset(big, 'a', sizeof(big));
	memcpy(big, "Bearer ", 7);
	big[sizeof(big) - 1] = '\0';
	kiln_err_clear(&err);
	assert_int_equal(api_bearer_parse(big, &t, &err), KILN_EAUTH);
}

KILN_TEST(auth_names_and_digests)
{
	struct kiln_err err = KILN_ERR_INIT;

	assert_ok(api_name_check("a-1.0.x86_64.rpm", 16, &err), &err);
	assert_int_equal(api_name_check("a/b", 3, &err), KILN_EINVAL);
	kiln_err_clear(&err);
	assert_int_equal(api_name_check("..", 2, &err), KILN_EINVAL);
	kiln_err_clear(&err);
	assert_int_equal(api_name_check(".", 1, &err), KILN_EINVAL);
	kiln_err_clear(&err);
	assert_int_equal(api_name_check("a\0b", 3, &err), KILN_EINVAL);
	assert_non_null(strstr(err.msg, "NUL"));
	kiln_err_clear(&err);
	assert_int_equal(api_name_check("a\nb", 3, &err), KILN_EINVAL);
	kiln_err_clear(&err);
	assert_int_equal(api_name_check("", 0, &err), KILN_EINVAL);
	assert_true(
	    api_sha256_valid("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"));
	assert_false(
	    api_sha256_valid("BA7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"));
	assert_false(api_sha256_valid("ba7816bf"));
}

KILN_TEST(auth_worker_names)
{
	struct kiln_err err = KILN_ERR_INIT;
	char long_name[70];

	assert_ok(api_worker_name_check("build-01.example.com", &err), &err);
	assert_ok(api_worker_name_check("w_2", &err), &err);
	assert_int_equal(api_worker_name_check("", &err), KILN_EINVAL);
	kiln_err_clear(&err);
	assert_int_equal(api_worker_name_check("-w", &err), KILN_EINVAL);
	kiln_err_clear(&err);
	assert_int_equal(api_worker_name_check("w 1", &err), KILN_EINVAL);
	assert_non_null(strstr(err.msg, "byte 2"));
	kiln_err_clear(&err);
	assert_int_equal(api_worker_name_check("w/../x", &err), KILN_EINVAL);
	kiln_err_clear(&err);
	assert_int_equal(api_worker_name_check("w\xc3\xa9", &err), KILN_EINVAL);
	kiln_err_clear(&err);
	memset(long_name, 'a', sizeof(long_name) - 1);
	long_name[sizeof(long_name) - 1] = '\0';
	assert_int_equal(api_worker_name_check(long_name, &err), KILN_EINVAL);
	long_name[64] = '\0';
	kiln_err_clear(&err);
	assert_ok(api_worker_name_check(long_name, &err), &err);
}
