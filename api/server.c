/*
 * server.c - the HTTP server: libmicrohttpd with a thread pool, kiln's routing, auth, body
 * limits, uploads spooled to disk with their sha256, and suspended long polls.
 *
 * The URL reaches us raw (the unescape callback is a no-op) and each path segment and query
 * value is percent-decoded here, so "a%2Fb" is one segment holding a '/', which the name
 * checks refuse, instead of two segments that silently route elsewhere.
 *
 * Long polls: a handler that sets resp->wait_until_ms has its connection suspended. A
 * wake epoch closes the race between "the handler found nothing" and "the suspension is
 * registered": if api_server_wake() ran in between, the handler runs again at once.
 */
#include "util/util.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <microhttpd.h>
#include "api/libmicrohttpd_int.h"
#include <netinet/in.h>
#include <pthread.h>
#include <sys/socket.h>
#include <unistd.h>

#include "api/api_int.h"

/* Filled on first use (see api/libmicrohttpd_int.h). */
static struct api_libmicrohttpd_fns api_libmicrohttpd;
static struct util_dl api_libmicrohttpd_dl =
    UTIL_DL_INIT(API_LIBMICROHTTPD_SONAME, api_libmicrohttpd_syms, api_libmicrohttpd);

#define MAX_PARAMS 8
#define MAX_SEGMENT 1024
#define MAX_PATH 4096
/* kiln answers too long paths (414) and headers (431) itself, as JSON: here for a head up
 * to API_GATE_HEAD, which libmicrohttpd's connection memory (CONN_MEMORY) holds with room
 * to spare, and in the gate (gate.c) beyond it, so libmicrohttpd's built-in HTML answers
 * to a head over its memory are never reached on a connection's first request */
#define MAX_HEADERS (16 * 1024)
#define CONN_MEMORY (4 * API_GATE_HEAD)
#define DEFAULT_BODY (1 * KILN_MIB)
#define DEFAULT_UPLOAD ((uint64_t)KILN_GIB)
#define REQ_ARENA (8 * KILN_MIB)
#define DISCARD_MAX ((uint64_t)64 * KILN_MIB)
#define DEFAULT_CONNS 1000
#define DEFAULT_CONNS_PER_ADDRESS 64
#define DEFAULT_IDLE_TIMEOUT 30

/* An address served by its own libmicrohttpd daemon: the main one, and the reserved one
 * (cfg.reserved_listen), whose connection limits a flood on the main one cannot fill. */
struct api_listener {
	struct api_server *srv;
	struct MHD_Daemon *d;
	const char *addr;
	int listen_fd;
	unsigned port;
	bool reserved;         /* serves only API_ROUTE_RESERVED routes */
	struct api_gate *gate; /* accepts, and hands connections to d */
};

struct api_server {
	struct api_listener ls[2]; /* main, reserved (addr NULL when none) */
	struct api_server_config cfg;
	char *upload_dir; /* owned */
	char *tls_cert;   /* owned copies: MHD keeps pointers */
	char *tls_key;
	pthread_mutex_t lock;
	uint64_t epoch;          /* bumped by every wake */
	struct api_req *waiters; /* suspended requests (linked by next_waiter) */
	bool stopping;
};

struct api_req {
	struct api_server *srv;
	struct MHD_Connection *conn;
	bool reserved; /* came on the reserved listener */
	const struct api_route *route;
	enum api_method method;
	const char *path; /* raw path, in arena */
	const char *params[MAX_PARAMS];
	unsigned nparams;
	struct kiln_buf body;
	int upload_fd;
	char *upload_path; /* in arena */
	uint64_t upload_size;
	struct util_digest dg;
	bool dg_on;
	char upload_sha[65];
	int64_t token_id;
	int64_t group; /* the token's (api_auth_fn), -1 anonymous */
	unsigned scopes;
	bool resumed, answered, rejected;
	bool nul_param; /* a path capture decoded to a NUL byte */
	int rej_status; /* the error answer once rejected */
	char rej_code[32];
	char rej_msg[KILN_ERR_MSG_MAX];
	uint64_t discarded;
	int64_t wait_until;
	void *slot;
	void (*slot_free)(void *);
	struct kiln_arena arena;
	struct api_req *next_waiter;
};

/* ---------------------------------------------------------------------------------------- */
/* Responses */

static void resp_init(struct api_resp *r)
{
	memset(r, 0, sizeof(*r));
	r->status = 200;
	r->file_fd = -1;
	kiln_buf_init(&r->body, KILN_LIMIT_TEXT_FILE);
}

static void resp_release(struct api_resp *r)
{
	kiln_buf_release(&r->body);
	util_close(r->file_fd);
	r->file_fd = -1;
}

void api_resp_header(struct api_resp *r, const char *name, const char *value)
{
	if (r->nheaders >= (int)KILN_ARRAY_SIZE(r->headers))
		return;
	snprintf(r->headers[r->nheaders][0], sizeof(r->headers[0][0]), "%s", name);
	snprintf(r->headers[r->nheaders][1], sizeof(r->headers[0][1]), "%s", value);
	r->nheaders++;
}

/* Error messages quote what the client sent (a path segment, a query value): bytes that
 * are not UTF-8 become '?', so the answer is valid JSON text and echoes nothing raw. */
static void utf8_scrub(char *s)
{
	unsigned char *p = (unsigned char *)s;

	while (*p) {
		size_t n = *p < 0x80             ? 1
		           : (*p & 0xe0) == 0xc0 ? 2
		           : (*p & 0xf0) == 0xe0 ? 3
		           : (*p & 0xf8) == 0xf0 ? 4
		                                 : 0;
		size_t i;

		for (i = 1; i < n; i++)
			if ((p[i] & 0xc0) != 0x80)
				n = 0;
		/* overlong forms and surrogates are not UTF-8 either */
		if ((n == 2 && *p < 0xc2) || (n == 3 && *p == 0xe0 && p[1] < 0xa0) ||
		    (n == 3 && *p == 0xed && p[1] >= 0xa0) ||
		    (n == 4 && *p == 0xf0 && p[1] < 0x90) ||
		    (n == 4 && (*p > 0xf4 || (*p == 0xf4 && p[1] >= 0x90))))
			n = 0;
		if (!n) {
			*p++ = '?';
			continue;
		}
		p += n;
	}
}

void api_resp_error(struct api_resp *r, int status, const char *code, const char *fmt, ...)
{
	char msg[KILN_ERR_MSG_MAX + 64];
	struct api_jw w;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	utf8_scrub(msg);
	util_close(r->file_fd);
	r->file_fd = -1;
	r->status = status;
	r->content_type = NULL;
	r->wait_until_ms = 0;
	kiln_buf_reset(&r->body);
	api_jw_init(&w, &r->body);
	api_jw_obj(&w);
	api_jw_key(&w, "error");
	api_jw_obj(&w);
	api_jw_kstr(&w, "code", code);
	api_jw_kstr(&w, "message", msg);
	api_jw_end(&w);
	api_jw_end(&w);
	kiln_buf_addch(&r->body, '\n');
}

void api_resp_from_err(struct api_resp *r, const struct kiln_err *err)
{
	char msg[KILN_ERR_MSG_MAX + KILN_ERR_INPUT_MAX + 32];
	int status = 500;
	const char *code = "internal";

	switch (err->code) {
	case KILN_EIO:
		if (err->sys_errno == ENOSPC || err->sys_errno == EDQUOT)
			status = 507, code = "insufficient_storage";
		break;
	case KILN_EINVAL:
	case KILN_ESYNTAX:
		status = 400, code = "bad_request";
		break;
	case KILN_ENOTFOUND:
		status = 404, code = "not_found";
		break;
	case KILN_EAUTH:
		status = 401, code = "unauthorized";
		break;
	case KILN_EPRIV:
		status = 403, code = "forbidden";
		break;
	case KILN_ECONFLICT:
	case KILN_EEXIST:
		status = 409, code = "conflict";
		break;
	case KILN_ELIMIT:
		status = 413, code = "too_large";
		break;
	case KILN_EDIGEST:
		status = 422, code = "digest_mismatch";
		break;
	case KILN_EUNSUPP:
		status = 422, code = "unsupported";
		break;
	default:
		break;
	}
	api_resp_error(r, status, code, "%s", kiln_err_format(err, msg, sizeof(msg)));
}

static enum MHD_Result queue(struct api_req *q, struct api_resp *r)
{
	struct MHD_Response *m;
	enum MHD_Result ret;
	int i;

	if (r->file_fd >= 0) {
		m = MHD_create_response_from_fd_at_offset64(r->file_size, r->file_fd, r->file_off);
		if (m)
			r->file_fd = -1; /* MHD closes it */
	} else {
		size_t len = r->body.len;
		char *p = kiln_buf_take(&r->body, NULL);

		m = p ? MHD_create_response_from_buffer(len, p, MHD_RESPMEM_MUST_FREE) : NULL;
		if (!m)
			free(p);
	}
	if (!m)
		return MHD_NO;
	MHD_add_response_header(m, "Content-Type",
	                        r->content_type ? r->content_type : "application/json");
	for (i = 0; i < r->nheaders; i++)
		MHD_add_response_header(m, r->headers[i][0], r->headers[i][1]);
	ret = MHD_queue_response(q->conn, (unsigned)r->status, m);
	MHD_destroy_response(m);
	q->answered = true;
	return ret;
}

/* Answer with an error. The answer waits until the body has arrived (it is read and thrown
 * away), because a client still sending would otherwise see a broken pipe instead of the
 * status; past DISCARD_MAX bytes it is sent at once and the connection closed. */
static enum MHD_Result reject(struct api_req *q, int status, const char *code, const char *msg)
{
	if (q->rejected)
		return MHD_YES;
	q->rejected = true;
	q->rej_status = status;
	snprintf(q->rej_code, sizeof(q->rej_code), "%s", code);
	snprintf(q->rej_msg, sizeof(q->rej_msg), "%s", msg);
	return MHD_YES;
}

static enum MHD_Result reject_flush(struct api_req *q)
{
	struct api_resp r;
	enum MHD_Result ret;

	if (q->answered)
		return MHD_YES;
	resp_init(&r);
	api_resp_error(&r, q->rej_status, q->rej_code, "%s", q->rej_msg);
	if (q->rej_status == 401)
		api_resp_header(&r, "WWW-Authenticate", "Bearer realm=\"kiln\"");
	ret = queue(q, &r);
	resp_release(&r);
	return ret;
}

/* ---------------------------------------------------------------------------------------- */
/* Decoding and routing */

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Percent-decode s[0..len) into the arena; plus_space for query values. NULL when malformed
 * or out of memory. A decoded NUL is kept, so callers that check names see it. */
static char *pct_decode(struct kiln_arena *a, const char *s, size_t len, bool plus_space,
                        size_t *outlen)
{
	char *out = kiln_arena_alloc(a, len + 1);
	size_t i, o = 0;

	if (!out)
		return NULL;
	for (i = 0; i < len; i++) {
		if (s[i] == '%') {
			int hi = i + 2 < len + 1 ? hexval(s[i + 1]) : -1;
			int lo = hi >= 0 ? hexval(s[i + 2]) : -1;

			if (hi < 0 || lo < 0)
				return NULL;
			out[o++] = (char)(hi * 16 + lo);
			i += 2;
		} else {
			out[o++] = plus_space && s[i] == '+' ? ' ' : s[i];
		}
	}
	out[o] = '\0';
	if (outlen)
		*outlen = o;
	return out;
}

/* Match the raw path against pattern, filling q->params. */
static bool route_match(struct api_req *q, const char *pattern, const char *path)
{
	const char *p = pattern, *u = path;

	q->nparams = 0;
	q->nul_param = false;
	while (*p && *u) {
		const char *pe = strchr(p + 1, '/'), *ue = strchr(u + 1, '/');
		size_t pl = pe ? (size_t)(pe - p) : strlen(p),
		       ul = ue ? (size_t)(ue - u) : strlen(u);

		if (pl == 4 && !memcmp(p, "/{*}", 4) && !p[4]) {
			/* the rest of the path, decoded ('/' kept): the handler checks it */
			size_t rl = strlen(u), dl;

			if (rl < 2 || rl - 1 > KILN_LIMIT_PATH || q->nparams >= MAX_PARAMS)
				return false;
			q->params[q->nparams] = pct_decode(&q->arena, u + 1, rl - 1, false, &dl);
			if (!q->params[q->nparams])
				return false;
			if (strlen(q->params[q->nparams++]) != dl)
				q->nul_param = true;
			return true;
		}
		if (pl == 3 && !memcmp(p, "/{}", 3)) {
			if (ul < 2 || ul - 1 > MAX_SEGMENT || q->nparams >= MAX_PARAMS)
				return false;
			size_t dl;

			q->params[q->nparams] = pct_decode(&q->arena, u + 1, ul - 1, false, &dl);
			if (!q->params[q->nparams])
				return false;
			if (strlen(q->params[q->nparams++]) != dl)
				q->nul_param = true;
		} else if (pl != ul || memcmp(p, u, pl)) {
			return false;
		}
		p += pl;
		u += ul;
	}
	return !*p && (!*u || !strcmp(u, "/"));
}

static enum api_method method_of(const char *m)
{
	static const struct {
		const char *name;
		enum api_method m;
	} names[] = {{"GET", API_GET},
	             {"POST", API_POST},
	             {"PUT", API_PUT},
	             {"DELETE", API_DELETE},
	             {"HEAD", API_HEAD}};
	size_t i;

	for (i = 0; i < KILN_ARRAY_SIZE(names); i++)
		if (!strcmp(m, names[i].name))
			return names[i].m;
	return 0;
}

/* Find the route; *method_ok false when the path exists under another method. */
static const struct api_route *route_find(struct api_req *q, const char *path, bool *method_ok)
{
	const struct api_route *r;
	unsigned m = q->method == API_HEAD ? API_GET | API_HEAD : q->method;

	*method_ok = false;
	for (r = q->srv->cfg.routes; r->pattern; r++) {
		if (q->reserved && !(r->flags & API_ROUTE_RESERVED))
			continue;
		if (!route_match(q, r->pattern, path))
			continue;
		*method_ok = true;
		if (r->methods & m)
			return r;
	}
	return NULL;
}

/* ---------------------------------------------------------------------------------------- */
/* Auth */

static bool authorize(struct api_req *q)
{
	const char *h = MHD_lookup_connection_value(q->conn, MHD_HEADER_KIND, "Authorization");
	struct kiln_err err = KILN_ERR_INIT;
	const struct api_route *r = q->route;
	struct kiln_str tok;
	char msg[128];

	q->token_id = -1;
	q->group = -1;
	if (r->flags & API_ROUTE_NOAUTH)
		return true;
	if (!h) {
		if ((r->flags & API_ROUTE_READ) && q->srv->cfg.anonymous_read) {
			q->scopes = API_SCOPE_READ;
			return true;
		}
		reject(q, 401, "unauthorized", "a bearer token is required");
		return false;
	}
	if (api_bearer_parse(h, &tok, &err) ||
	    q->srv->cfg.auth(q->srv->cfg.ctx, tok.ptr, tok.len, &q->scopes, &q->token_id, &q->group,
	                     &err)) {
		reject(q, 401, "unauthorized", err.msg[0] ? err.msg : "invalid token");
		return false;
	}
	if (!(q->scopes & (r->scope | API_SCOPE_ADMIN))) {
		struct kiln_buf need = KILN_BUF_INIT(64);

		api_scopes_format(r->scope, &need);
		snprintf(msg, sizeof(msg), "this token lacks the scope for this call (%s)",
		         need.ptr);
		kiln_buf_release(&need);
		reject(q, 403, "forbidden", msg);
		return false;
	}
	return true;
}

/* ---------------------------------------------------------------------------------------- */
/* Bodies */

static bool upload_open(struct api_req *q)
{
	struct kiln_err err = KILN_ERR_INIT;

	q->upload_path = kiln_arena_printf(&q->arena, "%s/upload-XXXXXX", q->srv->upload_dir);
	if (!q->upload_path)
		return false;
	q->upload_fd = mkostemp(q->upload_path, O_CLOEXEC);
	if (q->upload_fd < 0) {
		q->upload_path = NULL;
		return false;
	}
	if (util_digest_init(&q->dg, UTIL_DIGEST_SHA256, &err))
		return false;
	q->dg_on = true;
	return true;
}

/* The Content-Length the client declared; 0 when none (or not a number). */
static uint64_t declared_length(struct api_req *q)
{
	const char *cl = MHD_lookup_connection_value(q->conn, MHD_HEADER_KIND, "Content-Length");
	uint64_t n;

	if (!cl || util_parse_u64(cl, strlen(cl), 10, UINT64_MAX, &n, NULL))
		return 0;
	return n;
}

static bool content_length_ok(struct api_req *q, uint64_t max)
{
	return declared_length(q) <= max;
}

/* A refused upload's spool file goes now, not when the connection ends: on a full disk
 * the bytes it holds are the room the client's next request (sent as soon as it has the
 * answer, maybe on another connection) needs. */
static void upload_discard(struct api_req *q)
{
	util_close(q->upload_fd);
	q->upload_fd = -1;
	if (q->upload_path)
		(void)unlink(q->upload_path);
	q->upload_path = NULL;
}

/* An upload that cannot be spooled: 507 naming the directory when its disk is full (the
 * client may try again once there is room), else 500. */
static enum MHD_Result spool_failed(struct api_req *q, int sys_errno)
{
	char msg[KILN_ERR_MSG_MAX - 1];

	upload_discard(q);
	if (sys_errno != ENOSPC && sys_errno != EDQUOT)
		return reject(q, 500, "internal", "cannot spool the upload");
	snprintf(msg, sizeof(msg), "no space left for the upload in %.400s", q->srv->upload_dir);
	return reject(q, 507, "insufficient_storage", msg);
}

static enum MHD_Result body_add(struct api_req *q, const char *data, size_t *size)
{
	struct kiln_err err = KILN_ERR_INIT;
	size_t n = *size;

	*size = 0;
	if (q->rejected) {
		q->discarded += n;
		return q->discarded > DISCARD_MAX ? reject_flush(q) : MHD_YES;
	}
	if (!(q->route->flags & API_ROUTE_UPLOAD)) {
		if (q->body.len + n > q->body.max)
			return reject(q, 413, "too_large", "request body over the size limit");
		kiln_buf_add(&q->body, data, n);
		return q->body.err ? reject(q, 500, "internal", "out of memory") : MHD_YES;
	}
	if (q->upload_size + n > q->srv->cfg.max_upload) {
		upload_discard(q);
		return reject(q, 413, "too_large", "upload over the size limit");
	}
	if (util_write_all(q->upload_fd, data, n, &err))
		return spool_failed(q, err.sys_errno);
	util_digest_update(&q->dg, data, n);
	q->upload_size += n;
	return MHD_YES;
}

static void upload_finish(struct api_req *q)
{
	unsigned char md[UTIL_DIGEST_MAX];

	if (q->dg_on && !util_digest_final(&q->dg, md, NULL))
		util_hex_encode(md, 32, q->upload_sha);
	util_close(q->upload_fd);
	q->upload_fd = -1;
}

/* ---------------------------------------------------------------------------------------- */
/* The access handler */

static struct api_req *req_new(struct api_listener *l, struct MHD_Connection *conn, const char *url,
                               const char *method)
{
	struct api_server *s = l->srv;
	struct api_req *q = kiln_calloc(1, sizeof(*q));

	if (!q)
		return NULL;
	q->srv = s;
	q->reserved = l->reserved;
	q->conn = conn;
	q->upload_fd = -1;
	q->token_id = -1;
	q->group = -1;
	q->method = method_of(method);
	kiln_arena_init(&q->arena, REQ_ARENA);
	kiln_buf_init(&q->body, s->cfg.max_body);
	q->path = kiln_arena_strdup(&q->arena, url);
	return q;
}

static void req_free(struct api_req *q)
{
	if (!q)
		return;
	if (q->slot_free)
		q->slot_free(q->slot);
	util_close(q->upload_fd);
	if (q->upload_path)
		(void)unlink(q->upload_path);
	if (q->dg_on)
		util_digest_release(&q->dg);
	kiln_buf_release(&q->body);
	kiln_arena_release(&q->arena);
	free(q);
}

static enum MHD_Result header_add(void *cls, enum MHD_ValueKind kind, const char *key,
                                  const char *value)
{
	size_t *n = cls;

	(void)kind;
	*n += strlen(key) + (value ? strlen(value) : 0) + 4;
	return MHD_YES;
}

/* What the headers take (names, values, ": " and CRLF). */
static size_t header_bytes(struct api_req *q)
{
	size_t n = 0;

	(void)MHD_get_connection_values(q->conn, MHD_HEADER_KIND, header_add, &n);
	return n;
}

/* First call: route, auth, size checks. False when already answered. */
static bool req_start(struct api_req *q)
{
	bool method_ok;
	uint64_t max;

	if (!q->path || strlen(q->path) > MAX_PATH) {
		reject(q, 414, "too_long", "request path too long");
		return false;
	}
	if (header_bytes(q) > MAX_HEADERS) {
		reject(q, 431, "headers_too_large", "request headers over 16 KiB");
		return false;
	}
	q->route = route_find(q, q->path, &method_ok);
	if (!q->route) {
		reject(q, method_ok ? 405 : 404, method_ok ? "method_not_allowed" : "not_found",
		       method_ok ? "method not allowed here" : "no such API path");
		return false;
	}
	if (!authorize(q))
		return false;
	if (q->nul_param) {
		reject(q, 400, "bad_request", "a path segment may not contain a NUL byte (%00)");
		return false;
	}
	max = q->route->flags & API_ROUTE_UPLOAD ? q->srv->cfg.max_upload : q->srv->cfg.max_body;
	if (!content_length_ok(q, max)) {
		reject(q, 413, "too_large", "request body over the size limit");
		return false;
	}
	if ((q->route->flags & API_ROUTE_UPLOAD) && !upload_open(q)) {
		spool_failed(q, errno);
		return false;
	}
	return true;
}

/* Suspend q until its deadline or a wake; false when a wake raced in (run again). */
static bool req_suspend(struct api_req *q, uint64_t epoch0)
{
	struct api_server *s = q->srv;
	bool ok = false;

	pthread_mutex_lock(&s->lock);
	if (s->epoch == epoch0 && !s->stopping) {
		MHD_suspend_connection(q->conn);
		q->next_waiter = s->waiters;
		s->waiters = q;
		ok = true;
	}
	pthread_mutex_unlock(&s->lock);
	return ok;
}

static enum MHD_Result req_run(struct api_req *q)
{
	struct api_server *s = q->srv;
	struct api_resp r;
	enum MHD_Result ret;
	uint64_t epoch0;
	bool stopping;
	int tries;

	for (tries = 0; tries < 100; tries++) {
		pthread_mutex_lock(&s->lock);
		epoch0 = s->epoch;
		stopping = s->stopping;
		pthread_mutex_unlock(&s->lock);
		resp_init(&r);
		q->route->fn(s->cfg.ctx, q, &r);
		if (r.wait_until_ms > 0 && stopping)
			api_resp_error(&r, 503, "shutting_down", "the server is shutting down");
		if (r.wait_until_ms > 0) {
			q->wait_until = r.wait_until_ms;
			resp_release(&r);
			if (req_suspend(q, epoch0))
				return MHD_YES;
			q->resumed = true;
			continue;
		}
		ret = queue(q, &r);
		resp_release(&r);
		return ret;
	}
	reject(q, 503, "busy", "too many wake-ups");
	return reject_flush(q);
}

/* A request refused before its body: answered at once, without "100 Continue", when the
 * client waits for that (it would send the body only to have it dropped) or declared more
 * than is ever discarded. Otherwise the body is read and discarded first, so a client that
 * sends it without waiting for an answer still gets to read one. MHD closes the connection
 * after an early answer. */
static bool answer_early(struct api_req *q)
{
	const char *e = MHD_lookup_connection_value(q->conn, MHD_HEADER_KIND, "Expect");

	return (e && !strcasecmp(e, "100-continue")) || declared_length(q) > DISCARD_MAX;
}

/* Has the client of a suspended request closed the connection meanwhile? libmicrohttpd
 * does not watch a suspended connection, so a long poll resumed after its client went away
 * would still run: a lease granted into a closed socket is then lost with nobody to hold
 * it, and the job waits out the lease's time to live. An orderly close (FIN) or a reset
 * reads as gone; a client that half-closes after its request is taken for gone too. */
static bool client_gone(struct api_req *q)
{
	const union MHD_ConnectionInfo *ci =
	    MHD_get_connection_info(q->conn, MHD_CONNECTION_INFO_CONNECTION_FD);
	ssize_t n;
	char c;

	if (!ci)
		return false;
	n = recv(ci->connect_fd, &c, 1, MSG_PEEK | MSG_DONTWAIT);
	return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
}

static enum MHD_Result access_cb(void *cls, struct MHD_Connection *conn, const char *url,
                                 const char *method, const char *version, const char *upload_data,
                                 size_t *upload_data_size, void **con_cls)
{
	struct api_listener *l = cls;
	struct api_req *q = *con_cls;

	(void)version;
	if (!q) {
		q = req_new(l, conn, url, method);
		if (!q)
			return MHD_NO;
		*con_cls = q;
		if (!req_start(q) && answer_early(q))
			return reject_flush(q);
		return MHD_YES;
	}
	if (*upload_data_size)
		return body_add(q, upload_data, upload_data_size);
	if (q->rejected)
		return reject_flush(q);
	if (q->answered)
		return MHD_YES;
	if (q->wait_until) {
		if (client_gone(q))
			return MHD_NO; /* nobody to answer: not run again, the connection closes */
		q->resumed = true;
	}
	if (q->upload_fd >= 0)
		upload_finish(q);
	return req_run(q);
}

static void completed_cb(void *cls, struct MHD_Connection *conn, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
	struct api_req *q = *con_cls;

	(void)cls, (void)conn, (void)toe;
	req_free(q);
	*con_cls = NULL;
}

static size_t unescape_cb(void *cls, struct MHD_Connection *c, char *s)
{
	(void)cls, (void)c;
	return strlen(s); /* raw: decoded per segment and per value by kiln */
}

/* ---------------------------------------------------------------------------------------- */
/* Listening */

static kiln_rc parse_listen(const char *listen, struct sockaddr_storage *ss, socklen_t *sl,
                            struct kiln_err *err)
{
	char host[256];
	const char *colon = strrchr(listen, ':');
	uint64_t port;
	size_t hl;

	if (!colon || colon == listen)
		return kiln_err_set(err, KILN_EINVAL, "listen address '%s' is not HOST:PORT",
		                    listen);
	hl = (size_t)(colon - listen);
	if (listen[0] == '[' && hl >= 2 && listen[hl - 1] == ']')
		listen++, hl -= 2;
	if (hl >= sizeof(host) ||
	    util_parse_u64(colon + 1, strlen(colon + 1), 10, 65535, &port, NULL))
		return kiln_err_set(err, KILN_EINVAL, "listen address '%s' is not HOST:PORT",
		                    listen);
	memcpy(host, listen, hl);
	host[hl] = '\0';
	memset(ss, 0, sizeof(*ss));
	if (inet_pton(AF_INET, host, &((struct sockaddr_in *)ss)->sin_addr) == 1) {
		((struct sockaddr_in *)ss)->sin_family = AF_INET;
		((struct sockaddr_in *)ss)->sin_port = htons((uint16_t)port);
		*sl = sizeof(struct sockaddr_in);
		return KILN_OK;
	}
	if (inet_pton(AF_INET6, host, &((struct sockaddr_in6 *)ss)->sin6_addr) == 1) {
		((struct sockaddr_in6 *)ss)->sin6_family = AF_INET6;
		((struct sockaddr_in6 *)ss)->sin6_port = htons((uint16_t)port);
		*sl = sizeof(struct sockaddr_in6);
		return KILN_OK;
	}
	return kiln_err_set(err, KILN_EINVAL, "listen address '%s': '%s' is not a numeric IP",
	                    listen, host);
}

static kiln_rc listen_open(struct api_listener *l, struct kiln_err *err)
{
	struct sockaddr_storage ss;
	socklen_t sl;
	int one = 1, rcvbuf = 4 * API_GATE_HEAD;
	kiln_rc rc;

	rc = parse_listen(l->addr, &ss, &sl, err);
	if (rc)
		return rc;
	l->listen_fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (l->listen_fd < 0)
		return kiln_err_sys(err, KILN_EIO, "socket");
	(void)setsockopt(l->listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	/* room in the kernel for a whole API_GATE_HEAD head: the gate looks at it in place
	 * (set before listen(), so accepted sockets inherit it and the window fits it) */
	(void)setsockopt(l->listen_fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	if (bind(l->listen_fd, (struct sockaddr *)&ss, sl) < 0)
		return kiln_err_sys(err, KILN_EIO, "cannot listen on %s", l->addr);
	/* the kernel's longest accept queue (clamped to net.core.somaxconn): a burst such as
	 * a farm's workers reconnecting after a failover waits there for the gate; past the
	 * queue's end handshakes are dropped and retried seconds later, or lost when the
	 * kernel answered them with SYN cookies */
	if (listen(l->listen_fd, SOMAXCONN) < 0)
		return kiln_err_sys(err, KILN_EIO, "listen on %s", l->addr);
	sl = sizeof(ss);
	if (getsockname(l->listen_fd, (struct sockaddr *)&ss, &sl) < 0)
		return kiln_err_sys(err, KILN_EIO, "getsockname");
	l->port = ntohs(ss.ss_family == AF_INET ? ((struct sockaddr_in *)&ss)->sin_port
	                                        : ((struct sockaddr_in6 *)&ss)->sin6_port);
	return KILN_OK;
}

/* The gate's hand-off: the connection's head has arrived. */
static void gate_handoff(void *ctx, int fd, const struct sockaddr *sa, unsigned salen)
{
	struct api_listener *l = ctx;

	/* on failure (its limits) libmicrohttpd has closed fd */
	(void)MHD_add_connection(l->d, fd, sa, (socklen_t)salen);
}

static kiln_rc gate_start(struct api_server *s, struct api_listener *l, struct kiln_err *err)
{
	struct api_gate_config gc = {0};

	gc.listen_fd = l->listen_fd;
	gc.max_pending = s->cfg.max_conns;
	gc.max_per_address = s->cfg.max_conns_per_address;
	gc.idle_timeout_s = s->cfg.idle_timeout_s;
	gc.peek = !s->tls_cert; /* TLS heads are ciphertext: libmicrohttpd reads them */
	gc.handoff = gate_handoff;
	gc.ctx = l;
	return api_gate_start(&gc, &l->gate, err);
}

/* libmicrohttpd without a listen socket of its own: the gate accepts and adds. */
static kiln_rc daemon_start(struct api_server *s, struct api_listener *l, struct kiln_err *err)
{
	unsigned flags = MHD_USE_AUTO_INTERNAL_THREAD | MHD_ALLOW_SUSPEND_RESUME |
	                 MHD_USE_NO_LISTEN_SOCKET | MHD_USE_ITC;
	bool tls = s->tls_cert && s->tls_key;

	if (util_dl_ready(&api_libmicrohttpd_dl, err))
		return err && err->code ? err->code : KILN_ENOTFOUND;
	if (tls && MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES)
		return kiln_err_set(err, KILN_EUNSUPP, "this libmicrohttpd has no TLS support");
	if (tls)
		flags |= MHD_USE_TLS;
	l->d = MHD_start_daemon(
	    flags, 0, NULL, NULL, access_cb, l, MHD_OPTION_CONNECTION_MEMORY_LIMIT,
	    (size_t)CONN_MEMORY, MHD_OPTION_THREAD_POOL_SIZE, s->cfg.threads ? s->cfg.threads : 4,
	    MHD_OPTION_NOTIFY_COMPLETED, completed_cb, s, MHD_OPTION_UNESCAPE_CALLBACK, unescape_cb,
	    s, MHD_OPTION_CONNECTION_LIMIT, s->cfg.max_conns, MHD_OPTION_PER_IP_CONNECTION_LIMIT,
	    s->cfg.max_conns_per_address, MHD_OPTION_CONNECTION_TIMEOUT, s->cfg.idle_timeout_s,
	    MHD_OPTION_HTTPS_MEM_CERT, tls ? s->tls_cert : NULL, MHD_OPTION_HTTPS_MEM_KEY,
	    tls ? s->tls_key : NULL, MHD_OPTION_END);
	if (!l->d)
		return kiln_err_set(err, KILN_EIO, "cannot start the HTTP server on %s%s", l->addr,
		                    tls ? " (check the TLS certificate and key)" : "");
	return KILN_OK;
}

kiln_rc api_server_new(const struct api_server_config *cfg, struct api_server **out,
                       struct kiln_err *err)
{
	struct api_server *s = kiln_calloc(1, sizeof(*s));
	kiln_rc rc = KILN_ENOMEM;
	size_t i;

	*out = NULL;
	if (!s)
		return kiln_err_set(err, KILN_ENOMEM, "out of memory");
	s->cfg = *cfg;
	for (i = 0; i < KILN_ARRAY_SIZE(s->ls); i++) {
		s->ls[i].srv = s;
		s->ls[i].listen_fd = -1;
	}
	s->ls[0].addr = cfg->listen;
	s->ls[1].addr = cfg->reserved_listen;
	s->ls[1].reserved = true;
	pthread_mutex_init(&s->lock, NULL);
	if (!s->cfg.max_body)
		s->cfg.max_body = DEFAULT_BODY;
	if (!s->cfg.max_upload)
		s->cfg.max_upload = DEFAULT_UPLOAD;
	if (!s->cfg.max_conns)
		s->cfg.max_conns = DEFAULT_CONNS;
	if (!s->cfg.max_conns_per_address)
		s->cfg.max_conns_per_address = DEFAULT_CONNS_PER_ADDRESS;
	if (!s->cfg.idle_timeout_s)
		s->cfg.idle_timeout_s = DEFAULT_IDLE_TIMEOUT;
	s->upload_dir = kiln_strdup(cfg->upload_dir ? cfg->upload_dir : "/tmp");
	s->tls_cert = cfg->tls_cert_pem ? kiln_strdup(cfg->tls_cert_pem) : NULL;
	s->tls_key = cfg->tls_key_pem ? kiln_strdup(cfg->tls_key_pem) : NULL;
	if (!s->upload_dir || (cfg->tls_cert_pem && !s->tls_cert) ||
	    (cfg->tls_key_pem && !s->tls_key)) {
		kiln_err_set(err, KILN_ENOMEM, "out of memory");
		goto out;
	}
	if (!!cfg->tls_cert_pem != !!cfg->tls_key_pem) {
		rc = kiln_err_set(err, KILN_EINVAL, "TLS needs both a certificate and a key");
		goto out;
	}
	rc = KILN_OK;
	for (i = 0; !rc && i < KILN_ARRAY_SIZE(s->ls); i++) {
		if (!s->ls[i].addr)
			continue;
		rc = listen_open(&s->ls[i], err);
		if (!rc)
			rc = daemon_start(s, &s->ls[i], err);
		if (!rc)
			rc = gate_start(s, &s->ls[i], err);
	}
out:
	if (rc) {
		api_server_free(s);
		return rc;
	}
	*out = s;
	return KILN_OK;
}

unsigned api_server_port(const struct api_server *s)
{
	return s->ls[0].port;
}

unsigned api_server_reserved_port(const struct api_server *s)
{
	return s->ls[1].port;
}

/* Resume the waiters that match (all when all is true, else those past their deadline). */
static void resume_waiters(struct api_server *s, bool all)
{
	struct api_req **pp, *q;
	int64_t now = util_clock_wall_ms();

	pthread_mutex_lock(&s->lock);
	if (all)
		s->epoch++;
	pp = &s->waiters;
	while ((q = *pp)) {
		if (all || q->wait_until <= now) {
			*pp = q->next_waiter;
			q->next_waiter = NULL;
			MHD_resume_connection(q->conn);
		} else {
			pp = &q->next_waiter;
		}
	}
	pthread_mutex_unlock(&s->lock);
}

void api_server_wake(struct api_server *s)
{
	resume_waiters(s, true);
}

void api_server_tick(struct api_server *s)
{
	resume_waiters(s, false);
}

static void listener_stop(struct api_listener *l)
{
	if (l->d)
		MHD_stop_daemon(l->d);
	l->d = NULL;
	util_close(l->listen_fd);
	l->listen_fd = -1;
}

void api_server_free(struct api_server *s)
{
	size_t i;

	if (!s)
		return;
	/* no new connections first; then the suspended requests answer, then the daemons */
	for (i = 0; i < KILN_ARRAY_SIZE(s->ls); i++) {
		api_gate_stop(s->ls[i].gate);
		s->ls[i].gate = NULL;
	}
	pthread_mutex_lock(&s->lock);
	s->stopping = true;
	pthread_mutex_unlock(&s->lock);
	resume_waiters(s, true);
	for (i = 0; i < KILN_ARRAY_SIZE(s->ls); i++)
		listener_stop(&s->ls[i]);
	pthread_mutex_destroy(&s->lock);
	free(s->upload_dir);
	free(s->tls_cert);
	if (s->tls_key)
		explicit_bzero(s->tls_key, strlen(s->tls_key));
	free(s->tls_key);
	free(s);
}

/* ---------------------------------------------------------------------------------------- */
/* Request accessors */

enum api_method api_req_method(const struct api_req *r)
{
	return r->method;
}

const char *api_req_path(const struct api_req *r)
{
	return r->path;
}

const char *api_req_param(const struct api_req *r, unsigned i)
{
	return i < r->nparams ? r->params[i] : NULL;
}

const char *api_req_query(const struct api_req *r, const char *name)
{
	const char *raw = MHD_lookup_connection_value(r->conn, MHD_GET_ARGUMENT_KIND, name);

	if (!raw)
		return NULL;
	return pct_decode((struct kiln_arena *)&r->arena, raw, strlen(raw), true, NULL);
}

const char *api_req_header(const struct api_req *r, const char *name)
{
	return MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, name);
}

const char *api_req_body(const struct api_req *r, size_t *len)
{
	*len = r->body.len;
	return r->body.ptr;
}

const char *api_req_upload_path(const struct api_req *r)
{
	return r->upload_path;
}

uint64_t api_req_upload_size(const struct api_req *r)
{
	return r->upload_size;
}

const char *api_req_upload_sha256(const struct api_req *r)
{
	return r->upload_sha;
}

int64_t api_req_token_id(const struct api_req *r)
{
	return r->token_id;
}

int64_t api_req_group(const struct api_req *r)
{
	return r->group;
}

unsigned api_req_scopes(const struct api_req *r)
{
	return r->scopes;
}

bool api_req_resumed(const struct api_req *r)
{
	return r->resumed;
}

void api_req_slot_set(struct api_req *r, void *p, void (*free_fn)(void *))
{
	r->slot = p;
	r->slot_free = free_fn;
}

void *api_req_slot_get(const struct api_req *r)
{
	return r->slot;
}

struct kiln_arena *api_req_arena(struct api_req *r)
{
	return &r->arena;
}

kiln_rc api_req_query_int(const struct api_req *r, const char *name, int64_t def, int64_t min,
                          int64_t max, int64_t *out, struct kiln_err *err)
{
	const char *v = api_req_query(r, name);

	*out = def;
	if (!v)
		return KILN_OK;
	if (util_parse_i64(v, strlen(v), 10, min, max, out, NULL))
		return kiln_err_set(err, KILN_EINVAL,
		                    "query argument '%s': '%.40s' is not a number "
		                    "from %lld to %lld",
		                    name, v, (long long)min, (long long)max);
	return KILN_OK;
}
