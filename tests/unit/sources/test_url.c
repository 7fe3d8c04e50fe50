/*
 * test_url.c - the URL checks and redaction.
 */
#include "util/util.h"

#include "tests/unit/sources/sources_test.h"

static struct sources_url parse_ok(const char *url)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct sources_url u;

	assert_ok(sources_url_parse(url, strlen(url), &u, &err), &err);
	return u;
}

KILN_TEST(url_parts)
{
	struct sources_url u = parse_ok("https://user:pw@Example.org:8443/a/b.tar.gz?x=1#frag");

	assert_int_equal(u.scheme, SOURCES_URL_HTTPS);
	assert_true(kiln_str_eq_cstr(u.userinfo, "user:pw"));
	assert_true(kiln_str_eq_cstr(u.host, "Example.org"));
	assert_true(kiln_str_eq_cstr(u.port, "8443"));
	assert_true(kiln_str_eq_cstr(u.path, "/a/b.tar.gz"));
	u = parse_ok("HTTP://[::1]:80/x");
	assert_int_equal(u.scheme, SOURCES_URL_HTTP);
	assert_true(kiln_str_eq_cstr(u.host, "[::1]"));
	u = parse_ok("file:///srv/a.tgz");
	assert_int_equal(u.scheme, SOURCES_URL_FILE);
	assert_int_equal(u.host.len, 0);
	assert_int_equal(parse_ok("ftp://h/p").scheme, SOURCES_URL_FTP);
	assert_int_equal(parse_ok("git+ssh://h/p").scheme, SOURCES_URL_OTHER);
	u = parse_ok("foo-1.0.tar.gz");
	assert_int_equal(u.scheme, SOURCES_URL_NONE);
	assert_int_equal(parse_ok("a:b/c").scheme, SOURCES_URL_NONE);
}

static void bad(const char *url, kiln_rc code)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct sources_url u;

	assert_int_equal(sources_url_parse(url, strlen(url), &u, &err), code);
}

KILN_TEST(url_errors)
{
	char *longurl = kiln_malloc(KILN_LIMIT_URL + 20);

	bad("http:///nohost", KILN_ESYNTAX);
	bad("http://h:99999/", KILN_ESYNTAX);
	bad("http://h:8a/", KILN_ESYNTAX);
	bad("http://a b/", KILN_ESYNTAX);
	bad("http://h/\x01", KILN_ESYNTAX);
	bad("http://[::1/", KILN_ESYNTAX);
	bad("http://[::1]x/", KILN_ESYNTAX);
	assert_non_null(longurl);
	memcpy(longurl, "http://h/", 9);
	memset(longurl + 9, 'a', KILN_LIMIT_URL);
	longurl[KILN_LIMIT_URL + 9] = '\0';
	bad(longurl, KILN_ELIMIT);
	free(longurl);
}

KILN_TEST(url_redact_hides_credentials)
{
	struct kiln_buf b = KILN_BUF_INIT(KILN_LIMIT_URL);

	sources_url_redact("https://tok:secret@h.example/x?y", &b);
	assert_string_equal(b.ptr, "https://***@h.example/x?y");
	kiln_buf_reset(&b);
	sources_url_redact("https://h.example/a@b", &b);
	assert_string_equal(b.ptr, "https://h.example/a@b");
	kiln_buf_release(&b);
}
