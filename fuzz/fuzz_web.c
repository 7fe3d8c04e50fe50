/*
 * fuzz_web.c - the dashboard's If-None-Match matching (scheduler/web.c), a request header.
 */
#include "util/util.h"

#include "scheduler/scheduler_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char tag[] = "\"0123456789abcdef\"";
	char *s = kiln_strndup((const char *)data, size);
	struct kiln_buf b = KILN_BUF_INIT(size + 64);

	if (!s)
		return 0;
	(void)scheduler_etag_match(s, tag);
	/* the tag itself, after any list, always matches */
	kiln_buf_addf(&b, "%s, %s", s, tag);
	if (kiln_buf_finish(&b, NULL) == KILN_OK && !strchr(s, '"') && !strchr(s, '/') &&
	    !scheduler_etag_match(b.ptr, tag))
		KILN_BUG("the listed tag did not match: %s", b.ptr);
	kiln_buf_release(&b);
	free(s);
	return 0;
}
