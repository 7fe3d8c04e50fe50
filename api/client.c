/*
 * client.c - HTTP calls to a kiln server with libcurl: JSON bodies, file uploads and
 * downloads, bearer auth, bounded replies, the server's error message carried into
 * kiln_err.
 *
 * One easy handle per client, reused across calls so connections stay alive (a worker
 * long-polls and heartbeats on the same connection). curl_global_init is the caller's
 * (cli/), as shared/STYLE.md rule 11 says.
 */
#include "util/util.h"

#include <curl/curl.h>
#include "api/libcurl_int.h"
#include <fcntl.h>
#include <jansson.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api/api.h"
#include "api/api_int.h"

/* Filled on first use (see api/libcurl_int.h). */
static struct api_libcurl_fns api_libcurl;
static struct util_dl api_libcurl_dl =
    UTIL_DL_INIT(API_LIBCURL_SONAME, api_libcurl_syms, api_libcurl);

#define CLIENT_URLS_MAX 8

struct api_client {
	CURL *h;
	char *base;                        /* owned: the URLs given, each without a trailing slash,
	                                * with NULs for the commas */
	const char *urls[CLIENT_URLS_MAX]; /* into base: the schedulers, tried in turn */
	size_t nurls, cur;                 /* cur: the one calls go to */
	char *auth;                        /* owned: "Authorization: Bearer ..." */
	char *header;                      /* owned: cfg->header */
	char *ca_file;
	long timeout_ms;
};

kiln_rc api_global_init(struct kiln_err *err)
{
	if (util_dl_ready(&api_libcurl_dl, err))
		return err && err->code ? err->code : KILN_ENOTFOUND;
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
		return kiln_err_set(err, KILN_EIO, "cannot initialise libcurl");
	return KILN_OK;
}

/* c->base, "URL[,URL]...", into c->urls (commas and trailing slashes cut off). */
static kiln_rc urls_split(struct api_client *c, struct kiln_err *err)
{
	char *p = c->base, *next;

	for (; p; p = next) {
		size_t bl;

		next = strchr(p, ',');
		if (next)
			*next++ = '\0';
		bl = strlen(p);
		while (bl && p[bl - 1] == '/')
			p[--bl] = '\0';
		if (strncmp(p, "http://", 7) && strncmp(p, "https://", 8))
			return kiln_err_set(err, KILN_EINVAL,
			                    "'%.200s' is not an http:// or https:// URL", p);
		if (c->nurls >= CLIENT_URLS_MAX)
			return kiln_err_set(err, KILN_ELIMIT, "more than %d scheduler URLs",
			                    CLIENT_URLS_MAX);
		c->urls[c->nurls++] = p;
	}
	return KILN_OK;
}

kiln_rc api_client_new(const struct api_client_config *cfg, struct api_client **out,
                       struct kiln_err *err)
{
	struct api_client *c;
	kiln_rc rc;

	*out = NULL;
	if (util_dl_ready(&api_libcurl_dl, err))
		return err && err->code ? err->code : KILN_ENOTFOUND;
	c = kiln_calloc(1, sizeof(*c));
	if (!c)
		return kiln_err_set(err, KILN_ENOMEM, "out of memory");
	if (!cfg->base_url) {
		free(c);
		return kiln_err_set(err, KILN_EINVAL, "no scheduler URL");
	}
	c->base = kiln_strdup(cfg->base_url);
	if (cfg->token) {
		size_t n = strlen(cfg->token) + 32;

		c->auth = kiln_malloc(n);
		if (c->auth)
			snprintf(c->auth, n, "Authorization: Bearer %s", cfg->token);
	}
	c->ca_file = cfg->ca_file ? kiln_strdup(cfg->ca_file) : NULL;
	c->header = cfg->header ? kiln_strdup(cfg->header) : NULL;
	c->h = curl_easy_init();
	c->timeout_ms = cfg->timeout_ms ? cfg->timeout_ms : 60000;
	if (!c->base || (cfg->token && !c->auth) || !c->h || (cfg->ca_file && !c->ca_file) ||
	    (cfg->header && !c->header)) {
		api_client_free(c);
		return kiln_err_set(err, KILN_ENOMEM, "out of memory");
	}
	rc = urls_split(c, err);
	if (rc) {
		api_client_free(c);
		return rc;
	}
	*out = c;
	return KILN_OK;
}

void api_client_free(struct api_client *c)
{
	if (!c)
		return;
	if (c->h)
		curl_easy_cleanup(c->h);
	free(c->base);
	if (c->auth)
		explicit_bzero(c->auth, strlen(c->auth));
	free(c->auth);
	if (c->header)
		explicit_bzero(c->header, strlen(c->header));
	free(c->header);
	free(c->ca_file);
	free(c);
}

void api_reply_init(struct api_reply *r, size_t max)
{
	memset(r, 0, sizeof(*r));
	kiln_buf_init(&r->body, max);
}

void api_reply_release(struct api_reply *r)
{
	kiln_buf_release(&r->body);
}

struct sink {
	struct api_reply *reply;
	CURL *h;
	int fd;
	bool write_failed;
};

static size_t on_body(char *p, size_t size, size_t n, void *ud)
{
	struct sink *s = ud;
	size_t len = size * n;
	long status = 0;

	curl_easy_getinfo(s->h, CURLINFO_RESPONSE_CODE, &status);
	if (s->fd >= 0 && status >= 200 && status < 300) {
		if (util_write_all(s->fd, p, len, NULL)) {
			s->write_failed = true;
			return 0;
		}
		return len;
	}
	kiln_buf_add(&s->reply->body, p, len);
	return s->reply->body.err ? 0 : len;
}

static size_t on_header(char *p, size_t size, size_t n, void *ud)
{
	struct api_reply *r = ud;
	size_t len = size * n;

	if (len > 16 && !strncasecmp(p, "X-Kiln-Log-Size:", 16)) {
		size_t i = 16, o = 0;

		while (i < len && p[i] == ' ')
			i++;
		while (i < len && p[i] >= '0' && p[i] <= '9' && o + 1 < sizeof(r->header_size))
			r->header_size[o++] = p[i++];
		r->header_size[o] = '\0';
	} else if (len > 20 && !strncasecmp(p, "X-Kiln-Log-Complete:", 20)) {
		r->complete = memchr(p + 20, '1', len - 20) != NULL;
	}
	return len;
}

static kiln_rc map_curl(CURLcode cc, const char *errbuf, const struct api_call *call,
                        struct kiln_err *err)
{
	const char *m = errbuf[0] ? errbuf : curl_easy_strerror(cc);

	if (cc == CURLE_OPERATION_TIMEDOUT)
		return kiln_err_set(err, KILN_ETIMEOUT, "%s %s: %s", call->method, call->path, m);
	if (cc == CURLE_WRITE_ERROR)
		return kiln_err_set(err, KILN_ELIMIT, "%s %s: reply too large or not writable",
		                    call->method, call->path);
	return kiln_err_set(err, KILN_ENET, "%s %s: %s", call->method, call->path, m);
}

/* libcurl calls this at least once a second, also while waiting for an answer. */
static int on_progress(void *p, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
                       curl_off_t ulnow)
{
	volatile sig_atomic_t *abort = p;

	(void)dltotal, (void)dlnow, (void)ultotal, (void)ulnow;
	return *abort ? 1 : 0;
}

static struct curl_slist *call_headers(struct api_client *c, const struct api_call *call)
{
	struct curl_slist *h = NULL, *t;
	char ct[160];
	size_t i;

	if (c->auth && !(h = curl_slist_append(h, c->auth)))
		return NULL;
	if (c->header) {
		t = curl_slist_append(h, c->header);
		if (!t)
			goto fail;
		h = t;
	}
	if (call->body || call->body_file) {
		snprintf(ct, sizeof(ct), "Content-Type: %s",
		         call->content_type ? call->content_type : "application/json");
		t = curl_slist_append(h, ct);
		if (!t)
			goto fail;
		h = t;
	}
	t = curl_slist_append(h, "Expect:"); /* no 100-continue round trip */
	if (!t)
		goto fail;
	h = t;
	for (i = 0; i < KILN_ARRAY_SIZE(call->headers) && call->headers[i]; i++) {
		t = curl_slist_append(h, call->headers[i]);
		if (!t)
			goto fail;
		h = t;
	}
	return h;
fail:
	curl_slist_free_all(h);
	return NULL;
}

static void setup_body(CURL *h, const struct api_call *call, FILE *upload, curl_off_t usize)
{
	if (upload) {
		curl_easy_setopt(h, CURLOPT_UPLOAD, 1L);
		curl_easy_setopt(h, CURLOPT_READDATA, upload);
		curl_easy_setopt(h, CURLOPT_INFILESIZE_LARGE, usize);
		curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, call->method);
	} else if (call->body) {
		curl_easy_setopt(h, CURLOPT_POSTFIELDS, call->body);
		curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)call->body_len);
		curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, call->method);
	} else if (!strcmp(call->method, "GET")) {
		curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
	} else {
		curl_easy_setopt(h, CURLOPT_POSTFIELDS, "");
		curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)0);
		curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, call->method);
	}
}

static kiln_rc open_upload(const struct api_call *call, FILE **f, curl_off_t *size,
                           struct kiln_err *err)
{
	struct stat st;

	*f = NULL;
	if (!call->body_file)
		return KILN_OK;
	*f = fopen(call->body_file, "rbe");
	if (!*f)
		return kiln_err_sys(err, KILN_EIO, "cannot open %s", call->body_file);
	if (fstat(fileno(*f), &st) < 0) {
		fclose(*f);
		*f = NULL;
		return kiln_err_sys(err, KILN_EIO, "stat %s", call->body_file);
	}
	*size = (curl_off_t)st.st_size;
	return KILN_OK;
}

/* One call to the scheduler at base; *cc gets curl's result. */
static kiln_rc call_once(struct api_client *c, const char *base, const struct api_call *call,
                         struct api_reply *reply, CURLcode *ccp, struct kiln_err *err)
{
	char errbuf[CURL_ERROR_SIZE] = "";
	struct sink s = {.reply = reply, .h = c->h, .fd = call->out_fd > 0 ? call->out_fd : -1};
	struct kiln_buf url = KILN_BUF_INIT(KILN_LIMIT_PATH * 2);
	struct curl_slist *hdrs = NULL;
	FILE *upload = NULL;
	curl_off_t usize = 0;
	CURLcode cc;
	kiln_rc rc;

	curl_easy_reset(c->h);
	reply->status = 0;
	reply->header_size[0] = '\0';
	reply->complete = false;
	kiln_buf_reset(&reply->body);
	kiln_buf_addstr(&url, base);
	kiln_buf_addstr(&url, call->path);
	rc = kiln_buf_finish(&url, err);
	if (!rc)
		rc = open_upload(call, &upload, &usize, err);
	if (rc)
		goto out;
	hdrs = call_headers(c, call);
	if (!hdrs) {
		rc = kiln_err_set(err, KILN_ENOMEM, "out of memory");
		goto out;
	}
	curl_easy_setopt(c->h, CURLOPT_URL, url.ptr);
	curl_easy_setopt(c->h, CURLOPT_HTTPHEADER, hdrs);
	curl_easy_setopt(c->h, CURLOPT_ERRORBUFFER, errbuf);
	curl_easy_setopt(c->h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c->h, CURLOPT_PATH_AS_IS, 1L);
	curl_easy_setopt(c->h, CURLOPT_TIMEOUT_MS,
	                 call->timeout_ms ? call->timeout_ms : c->timeout_ms);
	curl_easy_setopt(c->h, CURLOPT_CONNECTTIMEOUT_MS, 10000L);
	curl_easy_setopt(c->h, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(c->h, CURLOPT_WRITEDATA, &s);
	curl_easy_setopt(c->h, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(c->h, CURLOPT_HEADERDATA, reply);
	curl_easy_setopt(c->h, CURLOPT_PROTOCOLS_STR, "http,https");
	if (c->ca_file)
		curl_easy_setopt(c->h, CURLOPT_CAINFO, c->ca_file);
	if (call->abort) {
		curl_easy_setopt(c->h, CURLOPT_NOPROGRESS, 0L);
		curl_easy_setopt(c->h, CURLOPT_XFERINFOFUNCTION, on_progress);
		curl_easy_setopt(c->h, CURLOPT_XFERINFODATA, (void *)call->abort);
	}
	setup_body(c->h, call, upload, usize);
	cc = curl_easy_perform(c->h);
	*ccp = cc;
	curl_easy_getinfo(c->h, CURLINFO_RESPONSE_CODE, &reply->status);
	if (cc == CURLE_ABORTED_BY_CALLBACK) {
		rc = kiln_err_set(err, KILN_ECANCEL, "%s %s: stopped", call->method, call->path);
		goto out;
	}
	if (cc != CURLE_OK) {
		rc = reply->body.err ? kiln_err_set(err, KILN_ELIMIT, "%s %s: reply over %zu bytes",
		                                    call->method, call->path, reply->body.max)
		                     : map_curl(cc, errbuf, call, err);
		goto out;
	}
	rc = KILN_OK;
out:
	curl_slist_free_all(hdrs);
	if (upload)
		fclose(upload);
	kiln_buf_release(&url);
	return rc;
}

/* No connection was made: the request never reached that scheduler. */
static bool never_sent(CURLcode cc)
{
	return cc == CURLE_COULDNT_CONNECT || cc == CURLE_COULDNT_RESOLVE_HOST ||
	       cc == CURLE_COULDNT_RESOLVE_PROXY;
}

/* With several URLs, a scheduler that cannot be reached is passed over for the next (and
 * calls go on to that one). A connection that broke once the request was sent is not
 * retried here (it may have been carried out: the caller knows whether it may repeat it),
 * but the next call goes to the next scheduler. An HTTP answer, 4xx or 5xx, is an answer. */
kiln_rc api_client_call(struct api_client *c, const struct api_call *call, struct api_reply *reply,
                        struct kiln_err *err)
{
	struct kiln_err e = KILN_ERR_INIT;
	size_t tries;
	kiln_rc rc = KILN_OK;

	for (tries = 0; tries < c->nurls; tries++) {
		CURLcode cc = CURLE_OK;

		kiln_err_clear(&e);
		rc = call_once(c, c->urls[c->cur], call, reply, &cc, &e);
		if (rc != KILN_ENET && rc != KILN_ETIMEOUT)
			break;
		if (c->nurls > 1)
			kiln_log(KILN_LOG_INFO, "%s unreachable (%s): trying %s next",
			         c->urls[c->cur], e.msg, c->urls[(c->cur + 1) % c->nurls]);
		c->cur = (c->cur + 1) % c->nurls;
		if (!never_sent(cc))
			break;
	}
	if (rc && err)
		kiln_err_set(err, rc, "%s", e.msg);
	return rc;
}

void api_reply_error_code(const struct api_reply *reply, char *dst, size_t size)
{
	void *doc = NULL;
	json_t *e, *code;

	dst[0] = '\0';
	if (api_json_load(reply->body.ptr, reply->body.len, &doc, NULL))
		return;
	e = json_object_get(doc, "error");
	code = json_is_object(e) ? json_object_get(e, "code") : NULL;
	if (json_is_string(code))
		snprintf(dst, size, "%s", json_string_value(code));
	api_json_unload(doc);
}

static const char *reply_message(const struct api_reply *reply, char *dst, size_t size)
{
	void *doc = NULL;
	json_t *e, *m;

	snprintf(dst, size, "HTTP %ld", reply->status);
	if (api_json_load(reply->body.ptr, reply->body.len, &doc, NULL))
		return dst;
	e = json_object_get(doc, "error");
	m = json_is_object(e) ? json_object_get(e, "message") : NULL;
	if (json_is_string(m))
		snprintf(dst, size, "%s (HTTP %ld)", json_string_value(m), reply->status);
	api_json_unload(doc);
	return dst;
}

kiln_rc api_reply_check(const struct api_reply *reply, const char *what, struct kiln_err *err)
{
	char msg[KILN_ERR_MSG_MAX];
	kiln_rc rc;

	if (reply->status >= 200 && reply->status < 300)
		return KILN_OK;
	switch (reply->status) {
	case 401:
	case 403:
		rc = KILN_EAUTH;
		break;
	case 404:
		rc = KILN_ENOTFOUND;
		break;
	case 409:
		rc = KILN_ECONFLICT;
		break;
	case 413:
		rc = KILN_ELIMIT;
		break;
	case 400:
	case 422:
		rc = KILN_EINVAL;
		break;
	default:
		rc = KILN_ENET;
	}
	return kiln_err_set(err, rc, "%s: %s", what, reply_message(reply, msg, sizeof(msg)));
}

void api_url_escape(struct kiln_buf *out, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";

	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		    c == '-' || c == '_' || c == '.' || c == '~') {
			kiln_buf_addch(out, (char)c);
		} else {
			kiln_buf_addch(out, '%');
			kiln_buf_addch(out, hex[c >> 4]);
			kiln_buf_addch(out, hex[c & 15]);
		}
	}
}
