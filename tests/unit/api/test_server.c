#include "util/util.h"

#include <pthread.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "tests/unit/harness.h"
#include "tests/unit/api/api_test.h"

static void h_echo(void *ctx, struct api_req *req, struct api_resp *resp)
{
	size_t len;
	const char *body = api_req_body(req, &len);
	const char *q = api_req_query(req, "q");
	struct api_jw w;

	(void)ctx;
	api_jw_init(&w, &resp->body);
	api_jw_obj(&w);
	api_jw_kstr(&w, "p0", api_req_param(req, 0));
	api_jw_kstr(&w, "q", q);
	api_jw_kint(&w, "len", (int64_t)len);
	api_jw_kint(&w, "token", api_req_token_id(req));
	api_jw_key(&w, "body");
	api_jw_strn(&w, body, len);
	api_jw_end(&w);
}

static void h_upload(void *ctx, struct api_req *req, struct api_resp *resp)
{
	(void)ctx;
	resp->status = 201;
	kiln_buf_addf(&resp->body, "%llu %s", (unsigned long long)api_req_upload_size(req),
	              api_req_upload_sha256(req));
}

/* Waits once for 200 ms (or a wake), then answers how it was woken. */
static void h_wait(void *ctx, struct api_req *req, struct api_resp *resp)
{
	struct api_test_srv *t = ctx;

	t->waits++;
	if (!api_req_resumed(req)) {
		resp->wait_until_ms = util_clock_wall_ms() + t->wait_ms;
		return;
	}
	kiln_buf_addstr(&resp->body, "resumed");
}

static void h_err(void *ctx, struct api_req *req, struct api_resp *resp)
{
	struct kiln_err err = KILN_ERR_INIT;

	(void)ctx, (void)req;
	kiln_err_set(&err, KILN_ECONFLICT, "stale lease");
	api_resp_from_err(resp, &err);
}

static const struct api_route routes[] = {
    {API_GET | API_POST, "/echo/{}", API_SCOPE_READ, API_ROUTE_READ, h_echo},
    {API_PUT, "/up", API_SCOPE_ADMIN, API_ROUTE_UPLOAD, h_upload},
    {API_GET, "/wait", 0, API_ROUTE_NOAUTH, h_wait},
    {API_GET, "/err", 0, API_ROUTE_NOAUTH, h_err},
    {API_POST, "/admin", API_SCOPE_ADMIN, 0, h_echo},
    {0, NULL, 0, 0, NULL},
};

static kiln_rc auth(void *ctx, const char *tok, size_t len, unsigned *scopes, int64_t *id,
                    int64_t *group, struct kiln_err *err)
{
	(void)ctx;
	*group = 3;
	if (len == 4 && !memcmp(tok, "good", 4)) {
		*scopes = API_SCOPE_READ, *id = 7;
		return KILN_OK;
	}
	if (len == 5 && !memcmp(tok, "admin", 5)) {
		*scopes = API_SCOPE_ALL, *id = 1;
		return KILN_OK;
	}
	return kiln_err_set(err, KILN_EAUTH, "invalid token");
}

void api_test_start(struct api_test_srv *t, bool anonymous_read)
{
	struct api_server_config c = {0};
	struct kiln_err err = KILN_ERR_INIT;

	memset(t, 0, sizeof(*t));
	c.listen = "127.0.0.1:0";
	c.threads = 2;
	c.max_body = 1024;
	c.max_upload = 4096;
	c.upload_dir = kiln_test_tmpdir();
	c.anonymous_read = anonymous_read;
	c.routes = routes;
	c.ctx = t;
	c.auth = auth;
	assert_ok(api_server_new(&c, &t->srv, &err), &err);
	snprintf(t->url, sizeof(t->url), "http://127.0.0.1:%u", api_server_port(t->srv));
}

void api_test_stop(struct api_test_srv *t)
{
	api_server_free(t->srv);
}

void api_test_call(struct api_test_srv *t, const char *token, const struct api_call *c,
                   struct api_reply *r)
{
	struct api_client_config cc = {.base_url = t->url, .token = token};
	struct kiln_err err = KILN_ERR_INIT;
	struct api_client *cl = NULL;

	api_reply_init(r, KILN_MIB);
	assert_ok(api_client_new(&cc, &cl, &err), &err);
	assert_ok(api_client_call(cl, c, r, &err), &err);
	api_client_free(cl);
}

KILN_TEST(server_routes_decodes_and_authenticates)
{
	struct api_test_srv t;
	struct api_reply r;
	struct api_call c = {.method = "GET", .path = "/echo/a%20b%2Fc?q=x+y%21"};

	api_test_start(&t, false);
	api_test_call(&t, "good", &c, &r);
	assert_int_equal(r.status, 200);
	assert_non_null(strstr(r.body.ptr, "\"p0\":\"a b/c\",\"q\":\"x y!\""));
	assert_non_null(strstr(r.body.ptr, "\"token\":7"));
	api_reply_release(&r);
	api_test_call(&t, NULL, &c, &r);
	assert_int_equal(r.status, 401);
	api_reply_release(&r);
	api_test_call(&t, "bad", &c, &r);
	assert_int_equal(r.status, 401);
	api_reply_release(&r);
	c.method = "POST", c.path = "/admin", c.body = "{}", c.body_len = 2;
	api_test_call(&t, "good", &c, &r);
	assert_int_equal(r.status, 403);
	api_reply_release(&r);
	c.method = "DELETE", c.path = "/echo/x";
	api_test_call(&t, "good", &c, &r);
	assert_int_equal(r.status, 405);
	api_reply_release(&r);
	c.method = "GET", c.path = "/nope";
	api_test_call(&t, "good", &c, &r);
	assert_int_equal(r.status, 404);
	api_reply_release(&r);
	c.path = "/echo/a%00b";
	api_test_call(&t, "good", &c, &r);
	assert_int_equal(r.status, 400);
	assert_non_null(strstr(r.body.ptr, "NUL"));
	api_reply_release(&r);
	c.path = "/echo/a%zz";
	api_test_call(&t, "good", &c, &r);
	assert_int_equal(r.status, 404);
	api_reply_release(&r);
	api_test_stop(&t);
}

KILN_TEST(server_anonymous_reads_when_allowed)
{
	struct api_test_srv t;
	struct api_reply r;
	struct api_call c = {.method = "GET", .path = "/echo/x"};

	api_test_start(&t, true);
	api_test_call(&t, NULL, &c, &r);
	assert_int_equal(r.status, 200);
	assert_non_null(strstr(r.body.ptr, "\"token\":-1"));
	api_reply_release(&r);
	c.method = "POST", c.path = "/admin";
	api_test_call(&t, NULL, &c, &r);
	assert_int_equal(r.status, 401);
	api_reply_release(&r);
	api_test_stop(&t);
}

KILN_TEST(server_body_and_upload_limits)
{
	struct api_test_srv t;
	struct api_reply r;
	char big[2048], path[64];
	struct api_call c = {.method = "POST", .path = "/echo/x", .body = big};
	FILE *f;

	memset(big, 'a', sizeof(big));
	api_test_start(&t, false);
	c.body_len = 1024;
	api_test_call(&t, "good", &c, &r);
	assert_int_equal(r.status, 200);
	assert_non_null(strstr(r.body.ptr, "\"len\":1024"));
	api_reply_release(&r);
	c.body_len = 1025;
	api_test_call(&t, "good", &c, &r);
	assert_int_equal(r.status, 413);
	assert_non_null(strstr(r.body.ptr, "too_large"));
	api_reply_release(&r);
	snprintf(path, sizeof(path), "%s/up.bin", kiln_test_tmpdir());
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("abc", f);
	fclose(f);
	c.method = "PUT", c.path = "/up", c.body = NULL, c.body_file = path;
	api_test_call(&t, "admin", &c, &r);
	assert_int_equal(r.status, 201);
	assert_string_equal(r.body.ptr,
	                    "3 ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	api_reply_release(&r);
	f = fopen(path, "w");
	assert_non_null(f);
	fwrite(big, 1, sizeof(big), f);
	fwrite(big, 1, sizeof(big), f);
	fwrite(big, 1, 1, f);
	fclose(f);
	api_test_call(&t, "admin", &c, &r);
	assert_int_equal(r.status, 413);
	api_reply_release(&r);
	api_test_stop(&t);
}

struct ticker {
	struct api_server *srv;
	bool wake; /* wake once after 50 ms instead of ticking */
	volatile bool stop;
};

static void *tick_thread(void *p)
{
	struct ticker *k = p;
	struct timespec ts = {0, 20 * 1000 * 1000};
	int n = 0;

	while (!k->stop) {
		nanosleep(&ts, NULL);
		if (k->wake && ++n == 3)
			api_server_wake(k->srv);
		else if (!k->wake)
			api_server_tick(k->srv);
	}
	return NULL;
}

static int64_t timed_wait_call(struct api_test_srv *t, bool wake)
{
	struct ticker k = {.srv = t->srv, .wake = wake};
	struct api_call c = {.method = "GET", .path = "/wait"};
	struct api_reply r;
	pthread_t th;
	int64_t t0 = util_clock_mono_ns(), ms;

	assert_int_equal(pthread_create(&th, NULL, tick_thread, &k), 0);
	api_test_call(t, NULL, &c, &r);
	ms = (util_clock_mono_ns() - t0) / 1000000;
	k.stop = true;
	pthread_join(th, NULL);
	assert_int_equal(r.status, 200);
	assert_string_equal(r.body.ptr, "resumed");
	api_reply_release(&r);
	return ms;
}

KILN_TEST(server_suspends_until_deadline_or_wake)
{
	struct api_test_srv t;
	int64_t ms;

	api_test_start(&t, false);
	t.wait_ms = 200;
	ms = timed_wait_call(&t, false);
	assert_true(ms >= 190); /* never answered before the deadline */
	assert_int_equal(t.waits, 2);
	/* a 30 s wait is cut short by a wake at ~60 ms */
	t.wait_ms = 30000;
	ms = timed_wait_call(&t, true);
	assert_true(ms < 20000);
	assert_int_equal(t.waits, 4);
	api_test_stop(&t);
}

KILN_TEST(server_error_mapping)
{
	struct api_test_srv t;
	struct api_reply r;
	struct api_call c = {.method = "GET", .path = "/err"};
	struct kiln_err err = KILN_ERR_INIT;
	char code[32];

	api_test_start(&t, false);
	api_test_call(&t, NULL, &c, &r);
	assert_int_equal(r.status, 409);
	api_reply_error_code(&r, code, sizeof(code));
	assert_string_equal(code, "conflict");
	assert_int_equal(api_reply_check(&r, "call", &err), KILN_ECONFLICT);
	assert_non_null(strstr(err.msg, "call: stale lease (HTTP 409)"));
	api_reply_release(&r);
	api_test_stop(&t);
}
