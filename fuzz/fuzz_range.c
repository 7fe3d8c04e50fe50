/*
 * fuzz_range.c - the HTTP Range and If-None-Match parsers (api/range.c) over arbitrary
 * header values: the range they give is always inside the file.
 */
#include "util/util.h"

#include "api/api.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

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
	(void)api_etag_match(h, "\"1-2-3\"");
	free(h);
	return 0;
}
