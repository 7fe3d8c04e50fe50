#include "util/util.h"

#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include "tests/unit/harness.h"
#include "tests/unit/api/api_test.h"

KILN_TEST(client_refuses_bad_urls_and_unreachable_servers)
{
	struct api_client_config cc = {.base_url = "ftp://x"};
	struct kiln_err err = KILN_ERR_INIT;
	struct api_client *c = NULL;
	struct api_reply r;
	struct api_call call = {.method = "GET", .path = "/x"};

	assert_int_equal(api_client_new(&cc, &c, &err), KILN_EINVAL);
	kiln_err_clear(&err);
	/* port 1 on loopback: nothing listens there */
	cc.base_url = "http://127.0.0.1:1/";
	assert_ok(api_client_new(&cc, &c, &err), &err);
	api_reply_init(&r, 1024);
	assert_int_equal(api_client_call(c, &call, &r, &err), KILN_ENET);
	assert_non_null(strstr(err.msg, "GET /x"));
	api_reply_release(&r);
	api_client_free(c);
}

KILN_TEST(client_reply_limit_and_file_output)
{
	struct api_test_srv t;
	struct api_client_config cc;
	struct kiln_err err = KILN_ERR_INIT;
	struct api_client *c = NULL;
	struct api_reply r;
	struct api_call call = {.method = "GET", .path = "/echo/0123456789abcdef"};
	char path[256], buf[256];
	ssize_t n;
	int fd;

	api_test_start(&t, true);
	cc = (struct api_client_config){.base_url = t.url};
	assert_ok(api_client_new(&cc, &c, &err), &err);
	api_reply_init(&r, 8);
	assert_int_equal(api_client_call(c, &call, &r, &err), KILN_ELIMIT);
	api_reply_release(&r);
	snprintf(path, sizeof(path), "%s/out.json", kiln_test_tmpdir());
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	assert_true(fd >= 0);
	call.out_fd = fd;
	api_reply_init(&r, 8);
	kiln_err_clear(&err);
	assert_ok(api_client_call(c, &call, &r, &err), &err);
	assert_int_equal(r.status, 200);
	assert_int_equal(r.body.len, 0);
	close(fd);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	assert_true(n > 0);
	buf[n] = '\0';
	assert_non_null(strstr(buf, "\"p0\":\"0123456789abcdef\""));
	api_reply_release(&r);
	api_client_free(c);
	api_test_stop(&t);
}

/* Several scheduler URLs (issue 25): one that cannot be reached is passed over, and the
 * calls after go to the one that answered; an HTTP answer (a 404) is no reason to move. */
KILN_TEST(client_fails_over_to_the_next_url)
{
	struct api_test_srv t;
	struct api_client_config cc = {0};
	struct kiln_err err = KILN_ERR_INIT;
	struct api_client *c = NULL;
	struct api_reply r;
	struct api_call call = {.method = "GET", .path = "/echo/x"};
	char urls[160];

	/* the URL list is checked whole */
	cc.base_url = "http://127.0.0.1:1,ftp://x";
	assert_int_equal(api_client_new(&cc, &c, &err), KILN_EINVAL);
	assert_non_null(strstr(err.msg, "'ftp://x' is not an http://"));
	kiln_err_clear(&err);
	cc.base_url = "http://a,http://a,http://a,http://a,http://a,http://a,http://a,http://a,"
	              "http://a";
	assert_int_equal(api_client_new(&cc, &c, &err), KILN_ELIMIT);
	kiln_err_clear(&err);

	api_test_start(&t, true);
	/* port 1 on loopback: nothing listens there */
	snprintf(urls, sizeof(urls), "http://127.0.0.1:1/,%s/", t.url);
	cc.base_url = urls;
	assert_ok(api_client_new(&cc, &c, &err), &err);
	api_reply_init(&r, 4096);
	assert_ok(api_client_call(c, &call, &r, &err), &err);
	assert_int_equal(r.status, 200);
	assert_non_null(strstr(r.body.ptr, "\"p0\":\"x\""));
	call.path = "/nothing-here";
	assert_ok(api_client_call(c, &call, &r, &err), &err);
	assert_int_equal(r.status, 404);
	call.path = "/echo/y";
	assert_ok(api_client_call(c, &call, &r, &err), &err);
	assert_int_equal(r.status, 200);
	api_test_stop(&t);
	/* both gone: the error of the last one tried */
	kiln_err_clear(&err);
	assert_int_equal(api_client_call(c, &call, &r, &err), KILN_ENET);
	assert_non_null(strstr(err.msg, "GET /echo/y"));
	api_reply_release(&r);
	api_client_free(c);
}

KILN_TEST(client_url_escape)
{
	struct kiln_buf b = KILN_BUF_INIT(128);

	api_url_escape(&b, "a b/c%~.-_Z9\xc3\xa9");
	assert_string_equal(b.ptr, "a%20b%2Fc%25~.-_Z9%C3%A9");
	kiln_buf_release(&b);
}
