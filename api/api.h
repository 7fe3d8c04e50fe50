/*
 * api.h - the farm's HTTP plumbing: a server (libmicrohttpd) that routes requests to
 * handlers, a client (libcurl), JSON decoding against field tables and a JSON writer
 * (jansson), and bearer-token auth helpers.
 *
 * What this module does not do: know about jobs, leases or workers. The scheduler and the
 * worker daemon give it route tables and field tables; api/ only moves bytes, checks sizes,
 * decodes and authenticates. No libmicrohttpd, jansson or libcurl type appears here.
 *
 * Thread safety: a struct api_server calls handlers from several threads at once (its
 * pool); handlers must be thread-safe with respect to their ctx. A struct api_client is for
 * one thread at a time. The JSON functions are thread-safe on distinct objects.
 */
#ifndef KILN_API_H
#define KILN_API_H

#include "util/util.h"

#include <signal.h>

/* ======================================================================================== */
/* JSON: decoding against a field table                                                     */
/* ======================================================================================== */

enum api_ftype {
	API_F_STR,     /* const char * (in the arena), at most max bytes, no NUL inside */
	API_F_INT,     /* int64_t, between min and max */
	API_F_BOOL,    /* bool */
	API_F_STRLIST, /* struct api_strlist: an array of strings, at most max items */
	API_F_STRMAP,  /* struct api_strmap: an object of string values, at most max keys */
	API_F_OBJ,     /* an embedded struct decoded with sub (a nested object) */
	API_F_OBJLIST, /* struct api_objlist: an array of objects decoded with sub */
	API_F_RAW,     /* const char *: any JSON value, re-encoded compactly (in the arena) */
};

struct api_strlist {
	const char **v; /* in the arena */
	size_t n;
};

struct api_strmap {
	const char **keys; /* in the arena, in the order given */
	const char **values;
	size_t n;
};

struct api_objlist {
	void *v; /* n elements of elem_size bytes, in the arena */
	size_t n;
};

struct api_field {
	const char *name;
	enum api_ftype type;
	bool required;
	size_t off;                  /* offset of the destination in the decoded struct */
	int64_t min, max;            /* API_F_INT bounds; max length or count for the others */
	const struct api_field *sub; /* API_F_OBJ, API_F_OBJLIST: the nested table */
	size_t elem_size;            /* API_F_OBJLIST: sizeof the element struct */
	size_t present_off;          /* offset of a bool set when the field was given, or 0 */
};
#define API_FIELD_END                                                                              \
	{                                                                                          \
		NULL, API_F_STR, false, 0, 0, 0, NULL, 0, 0                                        \
	}

enum api_decode_flags {
	API_DECODE_STRICT = 1 << 0, /* unknown fields are errors (requests); else ignored */
};

/* Decode the JSON object in data (len bytes, at most KILN_LIMIT_HTTP_BODY, nesting at most
 * KILN_LIMIT_JSON_DEPTH) into out according to fields. Strings and arrays go into arena a.
 * Errors name the field by its path ("sources[2].sha256: expected a string"):
 * KILN_ESYNTAX for malformed JSON (with line and column), KILN_EINVAL for a missing,
 * mistyped, unknown or out-of-range field, KILN_ELIMIT for size and depth. */
KILN_MUST_CHECK kiln_rc api_json_decode(const void *data, size_t len,
                                        const struct api_field *fields, unsigned flags, void *out,
                                        struct kiln_arena *a, struct kiln_err *err);

/* The canonical form of a JSON document: keys sorted, no whitespace (jansson's compact
 * dump, so the same document always gives the same bytes). Appended to out. Errors as api_json_decode(). */
KILN_MUST_CHECK kiln_rc api_json_canonical(const void *data, size_t len, struct kiln_buf *out,
                                           struct kiln_err *err);

/* ======================================================================================== */
/* JSON: a streaming writer into a kiln_buf                                                 */
/* ======================================================================================== */

#define API_JW_DEPTH 32

/* Writes compact JSON. Keys and values are escaped; commas are inserted. Misuse (a value
 * without a key inside an object, unbalanced ends) is a bug (KILN_BUG). out is borrowed. */
struct api_jw {
	struct kiln_buf *out;
	int depth;
	bool first[API_JW_DEPTH];
	bool in_obj[API_JW_DEPTH];
	bool after_key;
};

void api_jw_init(struct api_jw *w, struct kiln_buf *out);
void api_jw_obj(struct api_jw *w); /* { */
void api_jw_arr(struct api_jw *w); /* [ */
void api_jw_end(struct api_jw *w); /* } or ] */
void api_jw_key(struct api_jw *w, const char *key);
void api_jw_str(struct api_jw *w, const char *s); /* NULL writes null */
void api_jw_strn(struct api_jw *w, const char *s, size_t len);
void api_jw_int(struct api_jw *w, int64_t v);
void api_jw_bool(struct api_jw *w, bool v);
void api_jw_null(struct api_jw *w);
/* A value that is already JSON (trusted: produced by kiln). */
void api_jw_raw(struct api_jw *w, const char *json);
/* Shorthands for a key and its value. */
void api_jw_kstr(struct api_jw *w, const char *key, const char *s);
void api_jw_kint(struct api_jw *w, const char *key, int64_t v);
void api_jw_kbool(struct api_jw *w, const char *key, bool v);
/* Append s as a JSON string literal (with quotes) to out. */
void api_json_quote(struct kiln_buf *out, const char *s, size_t len);

/* ======================================================================================== */
/* Auth: tokens and scopes                                                                  */
/* ======================================================================================== */

enum api_scope {
	API_SCOPE_SUBMIT = 1 << 0, /* submit, cancel and retry jobs */
	API_SCOPE_READ = 1 << 1,   /* read jobs, logs, artifacts, workers */
	API_SCOPE_WORKER = 1 << 2, /* lease jobs and report on them */
	API_SCOPE_ADMIN = 1 << 3,  /* everything, and tokens */
	/* the admin of one group (the scheduler's project): its tokens and settings; implies
	 * submit and read there */
	API_SCOPE_GROUP_ADMIN = 1 << 4,
};
#define API_SCOPE_ALL (API_SCOPE_SUBMIT | API_SCOPE_READ | API_SCOPE_WORKER | API_SCOPE_ADMIN)

/* "kiln_" and 48 hex digits (24 random bytes). */
#define API_TOKEN_LEN 53

/* A new random token into out (API_TOKEN_LEN + 1 bytes). KILN_EIO if getrandom fails. */
KILN_MUST_CHECK kiln_rc api_token_generate(char out[API_TOKEN_LEN + 1], struct kiln_err *err);
/* The stored form of a token: sha256 hex of its text (out: 65 bytes). Only hashes are
 * stored, so a leaked database does not leak usable tokens. */
KILN_MUST_CHECK kiln_rc api_token_hash(const char *token, size_t len, char out[65],
                                       struct kiln_err *err);
/* Parse "submit,read" (commas or blanks) into enum api_scope bits; KILN_EINVAL naming the
 * unknown word. "admin" implies every scope. */
KILN_MUST_CHECK kiln_rc api_scopes_parse(const char *s, unsigned *out, struct kiln_err *err);
/* "submit,read,worker,admin" order, into out. */
void api_scopes_format(unsigned scopes, struct kiln_buf *out);
/* The token of an Authorization header value "Bearer TOKEN" (case-insensitive scheme, at
 * most 256 bytes of token of visible ASCII); KILN_EAUTH when malformed. *tok points into
 * value. */
KILN_MUST_CHECK kiln_rc api_bearer_parse(const char *value, struct kiln_str *tok,
                                         struct kiln_err *err);

/* ======================================================================================== */
/* Names and query values from outside                                                      */
/* ======================================================================================== */

/* A file name from a request (an artifact or source name): 1..255 bytes, no '/', no NUL,
 * not "." or "..", no control characters. KILN_EINVAL naming what is wrong. */
KILN_MUST_CHECK kiln_rc api_name_check(const char *name, size_t len, struct kiln_err *err);
/* A worker's name: 1..64 bytes of letters, digits, '.', '_' and '-', starting with a letter
 * or digit (a host name fits). KILN_EINVAL naming what is wrong. */
KILN_MUST_CHECK kiln_rc api_worker_name_check(const char *name, struct kiln_err *err);
/* 64 lowercase hex digits. */
bool api_sha256_valid(const char *s);
/* The header in which a worker presents its own credential (64 lowercase hex digits it
 * keeps in its work directory) on registration and every lease call, so workers that
 * share a token cannot act for each other. */
#define API_WORKER_SECRET_HEADER "X-Kiln-Worker-Secret"

/* ======================================================================================== */
/* The server                                                                               */
/* ======================================================================================== */

struct api_req;
struct api_server;

enum api_method {
	API_GET = 1 << 0,
	API_POST = 1 << 1,
	API_PUT = 1 << 2,
	API_DELETE = 1 << 3,
	API_HEAD = 1 << 4,
};

/* What a handler answers. body is a buffer the server owns (initialised with the server's
 * response limit); alternatively file_fd (consumed) sends file_size bytes from file_off.
 * Setting wait_until_ms asks the server to suspend the request without answering and to
 * call the handler again at that time, or earlier when api_server_wake() is called (long
 * polls); the handler sees api_req_resumed() true and its ctx again. */
struct api_resp {
	int status;
	const char *content_type; /* static string; default application/json */
	struct kiln_buf body;
	int file_fd;
	uint64_t file_off, file_size;
	char headers[6][2][192]; /* up to 6 extra headers: name, value */
	int nheaders;
	int64_t wait_until_ms; /* 0: answer now */
};

/* Set status and a JSON error body {"error":{"code":code,"message":...}}. */
void api_resp_error(struct api_resp *r, int status, const char *code, const char *fmt, ...)
    KILN_PRINTF(4, 5);
/* Map an error to a status (KILN_EINVAL/ESYNTAX 400, ENOTFOUND 404, EAUTH 401, EPRIV 403,
 * ECONFLICT 409, ELIMIT 413, EDIGEST 422, EEXIST 409, else 500) and write it as above. */
void api_resp_from_err(struct api_resp *r, const struct kiln_err *err);
void api_resp_header(struct api_resp *r, const char *name, const char *value);

enum api_route_flags {
	API_ROUTE_UPLOAD = 1 << 0,   /* the body streams to a temporary file (big uploads) */
	API_ROUTE_NOAUTH = 1 << 1,   /* no token needed (health, metrics, openapi) */
	API_ROUTE_READ = 1 << 2,     /* a read: anonymous when the server allows anonymous reads */
	API_ROUTE_RESERVED = 1 << 3, /* also served on the reserved listener (reserved_listen) */
};

typedef void (*api_handler_fn)(void *ctx, struct api_req *req, struct api_resp *resp);

/* One route: a method mask and a pattern of literal segments and "{}" captures
 * ("/api/v1/jobs/{}/attempts/{}/log"); a last segment "{*}" captures the rest of the path
 * (decoded, with its '/'s: the handler must check it). scope: the enum api_scope bits of which the token
 * needs at least one (admin always passes). */
struct api_route {
	unsigned methods;
	const char *pattern;
	unsigned scope;
	unsigned flags;
	api_handler_fn fn;
};

/* Look up a token: fill *scopes, *token_id and *group (the group the token acts in, e.g. the
 * scheduler's project; -1 for none) and return KILN_OK, or KILN_EAUTH. */
typedef kiln_rc (*api_auth_fn)(void *ctx, const char *token, size_t len, unsigned *scopes,
                               int64_t *token_id, int64_t *group, struct kiln_err *err);

struct api_server_config {
	const char *listen;       /* "127.0.0.1:8470", "[::1]:0", "0.0.0.0:8470" */
	unsigned threads;         /* worker threads of the pool; 0 = 4 */
	size_t max_body;          /* JSON and small bodies; 0 = 1 MiB (413 above) */
	uint64_t max_upload;      /* API_ROUTE_UPLOAD bodies; 0 = 1 GiB (413 above) */
	const char *upload_dir;   /* where upload bodies are spooled (must exist) */
	const char *tls_cert_pem; /* PEM text of certificate chain and key; both or neither */
	const char *tls_key_pem;
	unsigned max_conns;             /* open connections in all; 0 = 1000 */
	unsigned max_conns_per_address; /* from one client address; 0 = 64. Beyond it a new
	                                 * connection is closed at once, so one client cannot
	                                 * take the server from the others (workers included) */
	unsigned idle_timeout_s;        /* a connection idle this long (mid-headers, mid-body or
	                                 * between requests; not while a long poll waits) is
	                                 * closed; 0 = 30 */
	/* A second address with capacity of its own: its own daemon, threads and connection
	 * limits, serving only the API_ROUTE_RESERVED routes (404 for the others). A flood
	 * that fills the main listener's connections leaves it alone. NULL for none. */
	const char *reserved_listen;
	bool anonymous_read;            /* API_ROUTE_READ routes without a token */
	const struct api_route *routes; /* terminated by a route with pattern NULL; borrowed */
	void *ctx;                      /* for handlers and auth */
	api_auth_fn auth;
};

/* Bind and start serving. *out is the caller's: api_server_free(). KILN_EIO for a bind
 * failure (naming the address), KILN_EINVAL for a malformed listen address, KILN_EUNSUPP
 * when TLS is asked for but libmicrohttpd lacks it. */
KILN_MUST_CHECK kiln_rc api_server_new(const struct api_server_config *cfg, struct api_server **out,
                                       struct kiln_err *err);
/* The bound port (useful with port 0). */
unsigned api_server_port(const struct api_server *s);
/* The reserved listener's bound port; 0 when there is none. */
unsigned api_server_reserved_port(const struct api_server *s);
/* Resume every suspended request now (something they may wait for changed). Thread-safe;
 * cheap when nothing waits. */
void api_server_wake(struct api_server *s);
/* Resume requests whose wait time passed. Call periodically (the scheduler's tick). */
void api_server_tick(struct api_server *s);
/* Stop accepting, answer suspended requests, wait for running handlers, free. NULL ok. */
void api_server_free(struct api_server *s);

/* Request accessors. Strings are borrowed for the duration of the handler call. */
enum api_method api_req_method(const struct api_req *r);
const char *api_req_path(const struct api_req *r);
/* The i-th "{}" capture of the route, percent-decoded; NULL past the end. */
const char *api_req_param(const struct api_req *r, unsigned i);
/* A query argument (decoded) or header, NULL when absent. */
const char *api_req_query(const struct api_req *r, const char *name);
const char *api_req_header(const struct api_req *r, const char *name);
/* The body (non-upload routes): bytes and length; "" when none. */
const char *api_req_body(const struct api_req *r, size_t *len);
/* Upload routes: the spooled body file (the handler may rename it away; the server
 * removes what is left), its size and sha256 hex. */
const char *api_req_upload_path(const struct api_req *r);
uint64_t api_req_upload_size(const struct api_req *r);
const char *api_req_upload_sha256(const struct api_req *r);
/* Who called: the token's id (-1 anonymous) and scopes. */
int64_t api_req_token_id(const struct api_req *r);
/* The caller's token's group (api_auth_fn), -1 anonymous. */
int64_t api_req_group(const struct api_req *r);
unsigned api_req_scopes(const struct api_req *r);
/* True when the handler runs again after a wait. */
bool api_req_resumed(const struct api_req *r);
/* A per-request pointer the handler may keep across waits; free_fn (may be NULL) frees it
 * when the request ends. */
void api_req_slot_set(struct api_req *r, void *p, void (*free_fn)(void *));
void *api_req_slot_get(const struct api_req *r);
/* A per-request arena (released when the request ends). */
struct kiln_arena *api_req_arena(struct api_req *r);

/* A Range request header (RFC 9110 14.2) against a file of size bytes: one byte range
 * ("bytes=A-B", "bytes=A-", "bytes=-N") gives PARTIAL with *off and *len (len >= 1, inside
 * the file); a range starting past the end (or any range of an empty file) is
 * UNSATISFIABLE (416); anything else (another unit, several ranges, malformed) is NONE:
 * the whole file. */
enum api_range {
	API_RANGE_NONE,
	API_RANGE_PARTIAL,
	API_RANGE_UNSATISFIABLE,
};
enum api_range api_range_parse(const char *h, uint64_t size, uint64_t *off, uint64_t *len);
/* Does the If-None-Match header h name etag (a quoted entity tag), or "*"? Weak tags
 * compare as their strong form. */
bool api_etag_match(const char *h, const char *etag);

/* How far a request head (request line, headers, the empty line) has come in the first
 * len bytes received, looking at most max bytes: complete (its empty line is there),
 * still partial, or too long to wait for: no line end in max bytes (the request line,
 * 414) or no empty line in max bytes (the headers, 431). Lines may end in LF or CRLF. */
enum api_head {
	API_HEAD_PARTIAL,
	API_HEAD_COMPLETE,
	API_HEAD_LINE_TOO_LONG,
	API_HEAD_TOO_LARGE,
};
enum api_head api_head_scan(const char *p, size_t len, size_t max);

/* Parse an integer query argument; absent gives def. KILN_EINVAL naming the argument. */
KILN_MUST_CHECK kiln_rc api_req_query_int(const struct api_req *r, const char *name, int64_t def,
                                          int64_t min, int64_t max, int64_t *out,
                                          struct kiln_err *err);

/* ======================================================================================== */
/* The client                                                                               */
/* ======================================================================================== */

struct api_client;

/* libcurl's process-wide set-up; called once from cli/ before any client or thread starts
 * (shared/STYLE.md rule 11). */
KILN_MUST_CHECK kiln_rc api_global_init(struct kiln_err *err);

struct api_client_config {
	const char *base_url; /* "http://127.0.0.1:8470" (no trailing slash needed) */
	const char *token;    /* bearer token, NULL for none */
	long timeout_ms;      /* whole request; 0 = 60 s */
	const char *ca_file;  /* TLS: CA bundle, NULL for the system's */
	const char *header;   /* one more "Name: value" line sent on every call, NULL for none
	                       * (a worker's credential) */
};

/* OUT: api_client_free(). */
KILN_MUST_CHECK kiln_rc api_client_new(const struct api_client_config *cfg, struct api_client **out,
                                       struct kiln_err *err);
void api_client_free(struct api_client *c);

struct api_call {
	const char *method; /* "GET", "POST", "PUT" */
	const char *path;   /* "/api/v1/jobs?state=queued" (already escaped) */
	const void *body;   /* NULL for none */
	size_t body_len;
	const char *body_file;    /* upload this file as the body instead */
	const char *content_type; /* default application/json when a body is given */
	const char *headers[4];   /* extra "Name: value" lines, NULL-terminated */
	long timeout_ms;          /* this call; 0 = the client's */
	int out_fd;               /* write the response body here instead of into resp (2xx) */
	/* borrowed, NULL for none: the call gives up (KILN_ECANCEL) within about a second of
	 * *abort turning non-zero, so a daemon told to stop does not wait out a long poll */
	volatile sig_atomic_t *abort;
};

struct api_reply {
	long status;
	struct kiln_buf body; /* owned; api_reply_release() */
	char header_size[32]; /* X-Kiln-Log-Size, when sent */
	bool complete;        /* X-Kiln-Log-Complete: 1 */
};

void api_reply_init(struct api_reply *r, size_t max);
void api_reply_release(struct api_reply *r);

/* Perform one call. KILN_OK whenever an HTTP answer came back (any status; check
 * reply->status); KILN_ENET when the server could not be reached or the connection broke
 * (with curl's message), KILN_ETIMEOUT when it took too long, KILN_ELIMIT when the body
 * exceeds the reply's max. */
KILN_MUST_CHECK kiln_rc api_client_call(struct api_client *c, const struct api_call *call,
                                        struct api_reply *reply, struct kiln_err *err);
/* Turn a non-2xx reply into an error carrying the server's message and code:
 * 401/403 KILN_EAUTH, 404 KILN_ENOTFOUND, 409 KILN_ECONFLICT, 413 KILN_ELIMIT, 400/422
 * KILN_EINVAL, else KILN_ENET. KILN_OK for 2xx. */
KILN_MUST_CHECK kiln_rc api_reply_check(const struct api_reply *reply, const char *what,
                                        struct kiln_err *err);
/* The "error.code" of an error reply into dst ("" when none). */
void api_reply_error_code(const struct api_reply *reply, char *dst, size_t size);

/* Percent-encode s for a path segment or query value, appended to out. */
void api_url_escape(struct kiln_buf *out, const char *s);

#endif
