/*
 * fuzz_range.c - the HTTP Range and If-None-Match parsers (api/range.c) over arbitrary
 * header values: the range they give is always inside the file, and a tag listed in
 * If-None-Match always matches.
 */
#include "util/util.h"

#include "api/api.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Any header value, then the tag itself appended to the list, always matches. */
static void etag_listed_matches(const char *h)
{
	static const char tag[] = "\"0123456789abcdef\"";
	struct kiln_buf b = KILN_BUF_INIT(strlen(h) + 64);

	(void)api_etag_match(h, tag);
	kiln_buf_addf(&b, "%s, %s", h, tag);
	if (kiln_buf_finish(&b, NULL) == KILN_OK && !strchr(h, '"') && !strchr(h, '/') &&
	    !api_etag_match(b.ptr, tag))
		KILN_BUG("the listed tag did not match: %s", b.ptr);
	kiln_buf_release(&b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *h;
	uint64_t sizes[] = {0, 1, 100, 1ULL << 40}, off, len;
	size_t i;

	if (size > 4096)
		return 0;
	h = kiln_strndup((const char *)data, size);
	if (!h)
		return 0;
	for (i = 0; i < KILN_ARRAY_SIZE(sizes); i++) {
		enum api_range r = api_range_parse(h, sizes[i], &off, &len);

		if (r == API_RANGE_PARTIAL && (len == 0 || off >= sizes[i] || len > sizes[i] - off))
			__builtin_trap();
	}
	etag_listed_matches(h);
	free(h);
	return 0;
}
