/*
 * fetch.c - downloads with libcurl (the only file that sees libcurl): http, https, ftp,
 * ftps and file URLs, with connect and low-speed timeouts, retries with exponential backoff
 * on transient failures (Retry-After honoured), resume with a Range request after a cut,
 * a limited number of redirects (never from https down to http, never to file:), verified
 * TLS unless the caller asked for --insecure, a size limit, and progress on a terminal.
 *
 * Farms fail here most often, so every error says which URL and what failed: the DNS name,
 * the connection, TLS, the HTTP status with its reason, a cut transfer and how much came.
 */
#include "util/util.h"

#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>
#include "sources/libcurl_int.h"

#include "sources/sources.h"
#include "sources/sources_int.h"

/* Filled on first use (see sources/libcurl_int.h). */
static struct sources_libcurl_fns sources_libcurl;
static struct util_dl sources_libcurl_dl =
    UTIL_DL_INIT(SOURCES_LIBCURL_SONAME, sources_libcurl_syms, sources_libcurl);

#define PROGRESS_MIN_BYTES (1024 * 1024) /* smaller files print no progress */
#define PROGRESS_EVERY_NS (500 * 1000000LL)

/* One download: the state callbacks see. */
struct xfer {
	struct sources *s;
	const char *shown; /* the URL as messages show it (no password) */
	const char *label; /* file name for progress lines */
	int fd;
	struct sources_hashes *h;
	uint64_t written; /* bytes in the file, kept across resumed attempts */
	uint64_t max;
	bool too_big;
	bool http_error; /* a status >= 400 arrived: its body is not the file */
	bool cancelled;
	struct kiln_err werr; /* a failed write(2) */
	char reason[128];     /* reason phrase of the last HTTP status line */
	int64_t start_ns, last_ns;
	bool progress_shown;
};

static long lpos(long v, long def)
{
	return v > 0 ? v : def;
}

/* ---- callbacks --------------------------------------------------------------------------- */

static bool is_http(CURL *c)
{
	char *scheme = NULL;

	curl_easy_getinfo(c, CURLINFO_SCHEME, &scheme);
	return scheme && (!strcasecmp(scheme, "http") || !strcasecmp(scheme, "https"));
}

static size_t on_body(char *data, size_t size, size_t n, void *ctx)
{
	struct xfer *x = ctx;
	CURL *c = x->s->curl;
	size_t len = size * n;
	long status = 0;

	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
	if (status >= 400 && is_http(c)) {
		x->http_error = true; /* an error page, not the source: stop reading it */
		return 0;
	}
	if (x->written + len > x->max) {
		x->too_big = true;
		return 0;
	}
	if (util_write_all(x->fd, data, len, &x->werr))
		return 0;
	sources_hashes_update(x->h, data, len);
	x->written += len;
	return len;
}

/* Keep the reason phrase of each status line ("HTTP/1.1 404 Not Found"). */
static size_t on_header(char *data, size_t size, size_t n, void *ctx)
{
	struct xfer *x = ctx;
	size_t len = size * n, i = 0, sp = 0;

	if (len < 12 || strncmp(data, "HTTP/", 5))
		return len;
	for (i = 0; i < len && sp < 2; i++) {
		if (data[i] == ' ')
			sp++;
	}
	len -= i;
	while (len && (data[i + len - 1] == '\r' || data[i + len - 1] == '\n'))
		len--;
	if (len >= sizeof(x->reason))
		len = sizeof(x->reason) - 1;
	memcpy(x->reason, data + i, len);
	x->reason[len] = '\0';
	return size * n;
}

static void human(double v, char *out, size_t size)
{
	static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
	size_t u = 0;

	while (v >= 1024 && u + 1 < KILN_ARRAY_SIZE(units)) {
		v /= 1024;
		u++;
	}
	snprintf(out, size, u ? "%.1f %s" : "%.0f %s", v, units[u]);
}

static void progress_line(struct xfer *x, curl_off_t total, curl_off_t now, bool final)
{
	double secs = (double)(util_clock_mono_ns() - x->start_ns) / 1e9;
	double rate = secs > 0 ? (double)now / secs : 0;
	char a[32], b[32], r[32], eta[32] = "";

	human((double)now, a, sizeof(a));
	human((double)total, b, sizeof(b));
	human(rate, r, sizeof(r));
	if (total > 0 && rate > 0 && !final) {
		long left = (long)((double)(total - now) / rate);

		snprintf(eta, sizeof(eta), "  ETA %ld:%02ld", left / 60, left % 60);
	}
	fprintf(stderr, "\r  %s: %s%s%s  %s/s%s%s", x->label, a, total > 0 ? " / " : "",
	        total > 0 ? b : "", r, eta, final ? "\n" : "   ");
	fflush(stderr);
	x->progress_shown = true;
}

static int on_progress(void *ctx, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
                       curl_off_t ulnow)
{
	struct xfer *x = ctx;
	int64_t t = util_clock_mono_ns();

	(void)ultotal;
	(void)ulnow;
	if (x->s->o.cancel && *x->s->o.cancel) {
		x->cancelled = true;
		return 1;
	}
	if (!x->s->o.progress || (dltotal < PROGRESS_MIN_BYTES && dlnow < PROGRESS_MIN_BYTES))
		return 0;
	if (!dlnow || t - x->last_ns < PROGRESS_EVERY_NS)
		return 0;
	x->last_ns = t;
	progress_line(x, dltotal ? dltotal + (curl_off_t)(x->written - (uint64_t)dlnow) : 0,
	              (curl_off_t)x->written, false);
	return 0;
}

/* ---- one attempt --------------------------------------------------------------------------- */

static const char *redirect_protocols(const char *url)
{
	/* Never downgrade: a source asked for over https stays on https. */
	if (!strncasecmp(url, "https:", 6))
		return "https";
	if (!strncasecmp(url, "http:", 5))
		return "http,https";
	if (!strncasecmp(url, "ftps:", 5))
		return "ftps";
	return "ftp,ftps";
}

static void set_options(struct xfer *x, const char *url, char *errbuf)
{
	const struct sources_fetch_opts *o = &x->s->o;
	CURL *c = x->s->curl;
	int redirs = o->max_redirects ? o->max_redirects : KILN_LIMIT_REDIRECTS;

	curl_easy_reset(c); /* keeps the connection cache */
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_USERAGENT, "kiln/" KILN_VERSION);
	/* Large receive chunks: fewer callbacks, writes and digest updates per megabyte. */
	curl_easy_setopt(c, CURLOPT_BUFFERSIZE, 1024L * 1024L);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https,ftp,ftps,file");
	curl_easy_setopt(c, CURLOPT_REDIR_PROTOCOLS_STR, redirect_protocols(url));
	curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, redirs > 0 ? 1L : 0L);
	curl_easy_setopt(c, CURLOPT_MAXREDIRS, (long)(redirs > 0 ? redirs : 0));
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, lpos(o->connect_timeout, 30));
	curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME, lpos(o->low_speed_time, 60));
	curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, lpos(o->low_speed_limit, 1024));
	curl_easy_setopt(c, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)x->max);
	curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, o->insecure ? 0L : 1L);
	curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, o->insecure ? 0L : 2L);
	if (o->ca_file)
		curl_easy_setopt(c, CURLOPT_CAINFO, o->ca_file);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, x);
	curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(c, CURLOPT_HEADERDATA, x);
	curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, on_progress);
	curl_easy_setopt(c, CURLOPT_XFERINFODATA, x);
	curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(c, CURLOPT_RESUME_FROM_LARGE, (curl_off_t)x->written);
}

enum outcome {
	OUT_DONE,
	OUT_RETRY,   /* transient: try again after the backoff */
	OUT_RESTART, /* the server ignored the range: start again from byte 0 */
	OUT_FAIL,
};

static bool status_transient(long status)
{
	return status == 408 || status == 429 || status == 500 || status == 502 || status == 503 ||
	       status == 504;
}

static bool code_transient(CURLcode rc)
{
	switch (rc) {
	case CURLE_COULDNT_CONNECT:
	case CURLE_OPERATION_TIMEDOUT:
	case CURLE_PARTIAL_FILE:
	case CURLE_RECV_ERROR:
	case CURLE_SEND_ERROR:
	case CURLE_GOT_NOTHING:
	case CURLE_HTTP2:
	case CURLE_HTTP2_STREAM:
		return true;
	default:
		return false;
	}
}

static const char *host_of(const char *url, char *out, size_t size)
{
	struct kiln_err e = KILN_ERR_INIT;
	struct sources_url u;

	if (sources_url_parse(url, strlen(url), &u, &e) || !u.host.len)
		snprintf(out, size, "?");
	else if (u.port.len)
		snprintf(out, size, KILN_STR_FMT ":" KILN_STR_FMT, KILN_STR_ARG(u.host),
		         KILN_STR_ARG(u.port));
	else
		snprintf(out, size, KILN_STR_FMT, KILN_STR_ARG(u.host));
	return out;
}

static bool is_tls_error(CURLcode rc)
{
	return rc == CURLE_SSL_CONNECT_ERROR || rc == CURLE_PEER_FAILED_VERIFICATION ||
	       rc == CURLE_SSL_CERTPROBLEM || rc == CURLE_SSL_CIPHER ||
	       rc == CURLE_SSL_CACERT_BADFILE || rc == CURLE_SSL_ISSUER_ERROR ||
	       rc == CURLE_SSL_PINNEDPUBKEYNOTMATCH || rc == CURLE_SSL_INVALIDCERTSTATUS ||
	       rc == CURLE_SSL_SHUTDOWN_FAILED || rc == CURLE_SSL_CRL_BADFILE ||
	       rc == CURLE_SSL_ENGINE_NOTFOUND || rc == CURLE_SSL_ENGINE_SETFAILED ||
	       rc == CURLE_USE_SSL_FAILED || rc == CURLE_SSL_ENGINE_INITFAILED ||
	       rc == CURLE_SSL_CLIENTCERT;
}

/* The message for a failed attempt: what failed, in words, plus curl's detail. */
static kiln_rc describe(struct xfer *x, CURLcode rc, long status, const char *errbuf,
                        struct kiln_err *err)
{
	const struct sources_fetch_opts *o = &x->s->o;
	const char *detail = *errbuf ? errbuf : curl_easy_strerror(rc);
	char host[300];
	double connect = 0;

	curl_easy_getinfo(x->s->curl, CURLINFO_CONNECT_TIME, &connect);
	if (x->cancelled)
		return kiln_err_set(err, KILN_ECANCEL, "cancelled");
	if (x->too_big || rc == CURLE_FILESIZE_EXCEEDED)
		return kiln_err_set(err, KILN_ELIMIT, "larger than the limit of %" PRIu64 " bytes",
		                    x->max);
	if (x->werr.code) {
		kiln_err_merge(err, &x->werr);
		return err->code;
	}
	if (x->http_error || (rc == CURLE_OK && status >= 400))
		return kiln_err_set(err, KILN_ENET, "HTTP status %ld%s%s", status,
		                    *x->reason ? " " : "", x->reason);
	switch (rc) {
	case CURLE_COULDNT_RESOLVE_HOST:
		return kiln_err_set(err, KILN_ENET, "cannot resolve host '%s' (DNS): %s",
		                    host_of(x->shown, host, sizeof(host)), detail);
	case CURLE_COULDNT_RESOLVE_PROXY:
		return kiln_err_set(err, KILN_ENET, "cannot resolve the proxy (DNS): %s", detail);
	case CURLE_COULDNT_CONNECT:
		return kiln_err_set(err, KILN_ENET, "cannot connect to %s: %s",
		                    host_of(x->shown, host, sizeof(host)), detail);
	case CURLE_OPERATION_TIMEDOUT:
		if (connect <= 0 && !x->written)
			return kiln_err_set(err, KILN_ETIMEOUT, "connecting to %s timed out: %s",
			                    host_of(x->shown, host, sizeof(host)), detail);
		return kiln_err_set(err, KILN_ETIMEOUT,
		                    "transfer too slow (below %ld bytes/s for %ld s) after %" PRIu64
		                    " bytes: %s",
		                    lpos(o->low_speed_limit, 1024), lpos(o->low_speed_time, 60),
		                    x->written, detail);
	case CURLE_TOO_MANY_REDIRECTS:
		return kiln_err_set(err, KILN_ENET, "too many redirects (the limit is %d): %s",
		                    o->max_redirects > 0 ? o->max_redirects : KILN_LIMIT_REDIRECTS,
		                    detail);
	case CURLE_UNSUPPORTED_PROTOCOL:
		return kiln_err_set(err, KILN_ENET,
		                    "redirected to a protocol kiln does not follow: %s", detail);
	case CURLE_PARTIAL_FILE:
	case CURLE_RECV_ERROR:
	case CURLE_GOT_NOTHING:
	case CURLE_SEND_ERROR:
		return kiln_err_set(err, KILN_ENET, "connection cut after %" PRIu64 " bytes: %s",
		                    x->written, detail);
	case CURLE_FILE_COULDNT_READ_FILE:
	case CURLE_REMOTE_FILE_NOT_FOUND:
		return kiln_err_set(err, KILN_ENOTFOUND, "no such file: %s", detail);
	default:
		break;
	}
	if (is_tls_error(rc))
		return kiln_err_set(err, KILN_ENET, "TLS: %s", detail);
	return kiln_err_set(err, KILN_ENET, "%s", detail);
}

static enum outcome classify(struct xfer *x, CURLcode rc, long status)
{
	if (x->cancelled || x->too_big || x->werr.code)
		return OUT_FAIL;
	if (rc == CURLE_RANGE_ERROR || (x->written && status == 416))
		return OUT_RESTART;
	if (x->http_error || (rc == CURLE_OK && status >= 400))
		return status_transient(status) ? OUT_RETRY : OUT_FAIL;
	if (rc == CURLE_OK)
		return OUT_DONE;
	return code_transient(rc) ? OUT_RETRY : OUT_FAIL;
}

static kiln_rc restart(struct xfer *x, struct kiln_err *err)
{
	if (ftruncate(x->fd, 0) < 0 || lseek(x->fd, 0, SEEK_SET) < 0)
		return kiln_err_sys(err, KILN_EIO, "cannot truncate a download");
	x->written = 0;
	return sources_hashes_reset(x->h, err);
}

/* Sleep ms, in slices so a cancel request is seen. */
static bool backoff_sleep(const struct sources_fetch_opts *o, long ms)
{
	while (ms > 0) {
		long slice = ms > 100 ? 100 : ms;
		struct timespec ts = {slice / 1000, (slice % 1000) * 1000000L};

		if (o->cancel && *o->cancel)
			return false;
		while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
			;
		ms -= slice;
	}
	return !(o->cancel && *o->cancel);
}

static long next_delay(struct sources *s, long delay)
{
	curl_off_t after = 0;
	long max = lpos(s->o.retry_max_ms, 60000);

	curl_easy_getinfo(s->curl, CURLINFO_RETRY_AFTER, &after);
	if (after > 0 && after * 1000 > delay)
		delay = after > max / 1000 ? max : (long)after * 1000;
	return delay > max ? max : delay;
}

/* ---- the download loop ----------------------------------------------------------------- */

static kiln_rc attempt(struct xfer *x, const char *url, enum outcome *out, struct kiln_err *err)
{
	char errbuf[CURL_ERROR_SIZE] = "";
	long status = 0;
	CURLcode rc;

	set_options(x, url, errbuf);
	x->http_error = false;
	x->reason[0] = '\0';
	x->start_ns = util_clock_mono_ns();
	x->last_ns = 0;
	rc = curl_easy_perform(x->s->curl);
	curl_easy_getinfo(x->s->curl, CURLINFO_RESPONSE_CODE, &status);
	if (x->progress_shown) {
		progress_line(x, (curl_off_t)x->written, (curl_off_t)x->written, true);
		x->progress_shown = false;
	}
	*out = classify(x, rc, status);
	if (*out == OUT_DONE)
		return KILN_OK;
	return describe(x, rc, status, errbuf, err);
}

kiln_rc sources_curl_download(struct sources *s, const char *url, int fd, struct sources_hashes *h,
                              struct kiln_err *err)
{
	struct kiln_buf shown = KILN_BUF_INIT(KILN_LIMIT_URL + 16);
	struct xfer x = {.s = s, .fd = fd, .h = h};
	int tries = s->o.retries < 0 ? 4 : s->o.retries;
	long delay = lpos(s->o.retry_delay_ms, 1000);
	enum outcome out = OUT_FAIL;
	kiln_rc rc = KILN_OK;
	int n;

	x.max = s->o.max_size ? s->o.max_size : KILN_LIMIT_SOURCE_FILE;
	sources_url_redact(url, &shown);
	x.shown = shown.err ? url : shown.ptr;
	x.label = util_path_basename(x.shown);
	if (s->o.insecure && !strncasecmp(url, "https", 5))
		kiln_warn("%s: TLS certificate checks are OFF (--insecure)", x.shown);
	for (n = 0; n <= tries; n++) {
		kiln_err_clear(err);
		rc = attempt(&x, url, &out, err);
		if (out == OUT_DONE || out == OUT_FAIL)
			break;
		if (out == OUT_RESTART && restart(&x, err))
			break;
		if (n == tries)
			break;
		kiln_warn("%s: %s; trying again (attempt %d of %d)%s", x.shown, err->msg, n + 2,
		          tries + 1, x.written ? ", resuming" : "");
		if (out == OUT_RETRY && !backoff_sleep(&s->o, next_delay(s, delay))) {
			kiln_err_clear(err);
			rc = kiln_err_set(err, KILN_ECANCEL, "cancelled");
			break;
		}
		delay = delay > lpos(s->o.retry_max_ms, 60000) / 2 ? lpos(s->o.retry_max_ms, 60000)
		                                                   : 2 * delay;
	}
	if (rc && n > 0 && out != OUT_FAIL)
		kiln_err_wrap(err, "after %d attempts", n + 1);
	if (rc)
		kiln_err_wrap(err, "cannot fetch '%s'", x.shown);
	kiln_buf_release(&shown);
	return rc;
}

/* ---- set-up ------------------------------------------------------------------------------ */

kiln_rc sources_curl_global_init(struct kiln_err *err)
{
	if (util_dl_ready(&sources_libcurl_dl, err))
		return err && err->code ? err->code : KILN_ENOTFOUND;
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
		return kiln_err_set(err, KILN_ENOMEM, "cannot initialise libcurl");
	return KILN_OK;
}

kiln_rc sources_curl_open(struct sources *s, struct kiln_err *err)
{
	s->curl = curl_easy_init();
	if (!s->curl)
		return kiln_err_set(err, KILN_ENOMEM, "cannot create a libcurl handle");
	return KILN_OK;
}

void sources_curl_close(struct sources *s)
{
	if (s && s->curl)
		curl_easy_cleanup(s->curl);
	if (s)
		s->curl = NULL;
}
