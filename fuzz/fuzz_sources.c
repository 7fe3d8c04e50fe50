/*
 * fuzz_sources.c - worker/'s parsers of outside input: dist-git "sources" checksum files
 * and Source URLs (split and redacted for messages).
 */
#include "util/util.h"

#include "sources/sources.h"
#include "sources/sources_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_sums(const uint8_t *data, size_t size)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct kiln_buf out = KILN_BUF_INIT(KILN_LIMIT_SUMFILE * 4);
	struct sources_sums s, back;
	size_t i;

	sources_sums_init(&s);
	sources_sums_init(&back);
	if (sources_sums_parse(&s, "fuzz", (const char *)data, size, &err))
		goto out;
	for (i = 0; i < s.n; i++) {
		if (strchr(s.v[i].file, '/') || !*s.v[i].file ||
		    strlen(s.v[i].hex) != 2 * util_digest_size(s.v[i].algo))
			KILN_BUG("accepted a bad entry: '%s'", s.v[i].file);
	}
	/* What kiln writes, it reads back the same. */
	sources_sums_format(&s, &out);
	if (!out.err && sources_sums_parse(&back, "again", out.ptr, out.len, &err))
		KILN_BUG("cannot re-read its own output: %s", err.msg);
	if (!out.err && back.n != s.n)
		KILN_BUG("re-read %zu entries of %zu", back.n, s.n);
out:
	sources_sums_release(&back);
	sources_sums_release(&s);
	kiln_buf_release(&out);
}

static void check_url(const uint8_t *data, size_t size)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct kiln_buf red = KILN_BUF_INIT(KILN_LIMIT_URL * 2);
	struct sources_url u;
	char *s;

	if (sources_url_parse((const char *)data, size, &u, &err))
		return;
	if (u.host.len > size || u.path.len > size || u.userinfo.len > size)
		KILN_BUG("URL parts outside the input");
	s = kiln_strndup((const char *)data, size);
	if (!s)
		return;
	sources_url_redact(s, &red);
	if (u.userinfo.len && !red.err && !strstr(red.ptr, "***@"))
		KILN_BUG("credentials survived redaction: %s", red.ptr);
	free(s);
	kiln_buf_release(&red);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	check_sums(data, size);
	check_url(data, size);
	return 0;
}
