/*
 * fuzz_head.c - the request head scanner of the accept gate (api/gate.c) over arbitrary
 * bytes: it looks at no more than it is given, a head it calls complete has its empty line
 * within max, and the verdict does not change when more bytes follow a complete head.
 */
#include "util/util.h"

#include "api/api.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t maxes[] = {1, 16, 4096, 65536}, i;
	char *p;

	if (size > 200000)
		return 0;
	/* an exact-size copy: reading past it is caught by the sanitizers */
	p = kiln_malloc(size ? size : 1);
	if (!p)
		return 0;
	memcpy(p, data, size);
	for (i = 0; i < KILN_ARRAY_SIZE(maxes); i++) {
		enum api_head h = api_head_scan(p, size, maxes[i]);

		if (h == API_HEAD_COMPLETE && size > 1 &&
		    api_head_scan(p, size - 1, maxes[i]) == API_HEAD_LINE_TOO_LONG)
			KILN_BUG("a complete head without a line end");
		if (size < maxes[i] && (h == API_HEAD_LINE_TOO_LONG || h == API_HEAD_TOO_LARGE))
			KILN_BUG("too long before max bytes");
	}
	free(p);
	return 0;
}
