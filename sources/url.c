/*
 * url.c - the parts of a Source URL kiln needs: which scheme fetches it, and a form that is
 * safe to print (no password). Specs and jobs are outside input, so this is bounded and
 * fuzzed; libcurl parses the URL again for the transfer itself.
 */
#include "util/util.h"

#include <strings.h>

#include "sources/sources.h"
#include "sources/sources_int.h"

static const struct {
	const char *name;
	enum sources_url_scheme scheme;
} schemes[] = {
    {"http", SOURCES_URL_HTTP}, {"https", SOURCES_URL_HTTPS}, {"ftp", SOURCES_URL_FTP},
    {"ftps", SOURCES_URL_FTPS}, {"file", SOURCES_URL_FILE},
};

static bool scheme_char(char c, bool first)
{
	if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))
		return true;
	return !first && ((c >= '0' && c <= '9') || c == '+' || c == '-' || c == '.');
}

static enum sources_url_scheme scheme_of(struct kiln_str name)
{
	size_t i;

	for (i = 0; i < KILN_ARRAY_SIZE(schemes); i++) {
		if (strlen(schemes[i].name) == name.len &&
		    !strncasecmp(schemes[i].name, name.ptr, name.len))
			return schemes[i].scheme;
	}
	return SOURCES_URL_OTHER;
}

/* Where "scheme://" ends, or 0 when s does not start with one. */
static size_t scheme_end(const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < len && i < 32; i++) {
		if (s[i] == ':')
			break;
		if (!scheme_char(s[i], i == 0))
			return 0;
	}
	if (i == 0 || i + 3 > len || memcmp(s + i, "://", 3))
		return 0;
	return i;
}

static kiln_rc parse_port(struct kiln_str port, struct kiln_err *err)
{
	uint64_t v;

	if (!port.len)
		return KILN_OK;
	if (util_parse_u64(port.ptr, port.len, 10, 65535, &v, err))
		return kiln_err_set(err, KILN_ESYNTAX, "bad port");
	return KILN_OK;
}

/* host[:port] or [v6]:port; userinfo already removed. */
static kiln_rc parse_hostport(struct kiln_str hp, struct sources_url *out, struct kiln_err *err)
{
	const char *colon;

	if (hp.len && hp.ptr[0] == '[') {
		const char *rb = memchr(hp.ptr, ']', hp.len);

		if (!rb)
			return kiln_err_set(err, KILN_ESYNTAX, "unterminated '[' in host");
		out->host = kiln_str_make(hp.ptr, (size_t)(rb - hp.ptr) + 1);
		if ((size_t)(rb + 1 - hp.ptr) < hp.len && rb[1] != ':')
			return kiln_err_set(err, KILN_ESYNTAX, "junk after ']' in host");
		colon = (size_t)(rb + 1 - hp.ptr) < hp.len ? rb + 1 : NULL;
	} else {
		colon = memchr(hp.ptr, ':', hp.len);
		out->host = kiln_str_make(hp.ptr, colon ? (size_t)(colon - hp.ptr) : hp.len);
	}
	if (colon)
		out->port = kiln_str_make(colon + 1, hp.len - (size_t)(colon + 1 - hp.ptr));
	if (out->scheme != SOURCES_URL_FILE && !out->host.len)
		return kiln_err_set(err, KILN_ESYNTAX, "no host");
	return parse_port(out->port, err);
}

static kiln_rc check_chars(const char *url, size_t len, struct kiln_err *err)
{
	size_t i;

	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)url[i];

		if (c <= ' ' || c == 0x7f)
			return kiln_err_set(err, KILN_ESYNTAX,
			                    "space or control character at offset %zu", i);
	}
	return KILN_OK;
}

kiln_rc sources_url_parse(const char *url, size_t len, struct sources_url *out,
                          struct kiln_err *err)
{
	struct kiln_str auth, rest;
	size_t se, i;
	const char *at;

	memset(out, 0, sizeof(*out));
	if (len > KILN_LIMIT_URL)
		return kiln_err_set(err, KILN_ELIMIT, "URL longer than %zu bytes", KILN_LIMIT_URL);
	se = scheme_end(url, len);
	if (!se) {
		out->scheme = SOURCES_URL_NONE;
		out->path = kiln_str_make(url, len);
		return memchr(url, '\0', len) ? kiln_err_set(err, KILN_ESYNTAX, "NUL in name")
		                              : KILN_OK;
	}
	if (check_chars(url, len, err))
		return err->code;
	out->scheme_name = kiln_str_make(url, se);
	out->scheme = scheme_of(out->scheme_name);
	rest = kiln_str_make(url + se + 3, len - se - 3);
	for (i = 0; i < rest.len && rest.ptr[i] != '/' && rest.ptr[i] != '?' && rest.ptr[i] != '#';
	     i++)
		;
	auth = kiln_str_make(rest.ptr, i);
	out->path = kiln_str_make(rest.ptr + i, rest.len - i);
	for (i = 0; i < out->path.len && out->path.ptr[i] != '?' && out->path.ptr[i] != '#'; i++)
		;
	out->path.len = i;
	at = NULL;
	for (i = auth.len; i > 0 && !at; i--) {
		if (auth.ptr[i - 1] == '@')
			at = auth.ptr + i - 1;
	}
	if (at) {
		out->userinfo = kiln_str_make(auth.ptr, (size_t)(at - auth.ptr));
		auth = kiln_str_make(at + 1, auth.len - (size_t)(at + 1 - auth.ptr));
	}
	return parse_hostport(auth, out, err);
}

void sources_url_redact(const char *url, struct kiln_buf *out)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct sources_url u;
	size_t len = strnlen(url, KILN_LIMIT_URL + 1);

	if (sources_url_parse(url, len, &u, &err) || !u.userinfo.len) {
		kiln_buf_add(out, url, len);
		return;
	}
	/* Keep everything but the credentials, which may hold a token. */
	kiln_buf_add(out, url, (size_t)(u.userinfo.ptr - url));
	kiln_buf_addstr(out, "***");
	kiln_buf_addstr(out, u.userinfo.ptr + u.userinfo.len);
}
