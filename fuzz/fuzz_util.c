/*
 * fuzz_util.c - util's parsers of outside input: paths, archive member names, integers,
 * hex and base64.
 */
#include "util/util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* True when p has a ".." component. */
static bool has_dotdot(const char *p)
{
	const char *c = p;

	while ((c = strstr(c, ".."))) {
		bool starts = c == p || c[-1] == '/';
		bool ends = c[2] == '\0' || c[2] == '/';

		if (starts && ends)
			return true;
		c += 2;
	}
	return false;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kiln_buf b = KILN_BUF_INIT(KILN_LIMIT_PATH * 4);
	struct kiln_err err = KILN_ERR_INIT;
	unsigned char raw[64];
	char *s = kiln_strndup((const char *)data, size);
	int64_t v;

	if (!s)
		return 0;
	if (!util_path_normalize(s, &b, &err) && b.ptr[0] != '/' && has_dotdot(b.ptr))
		KILN_BUG("normalised relative path kept '..': %s", b.ptr);
	kiln_buf_reset(&b);
	kiln_err_clear(&err);
	if (!util_path_check_relative((const char *)data, size, &b, &err) &&
	    (b.ptr[0] == '/' || has_dotdot(b.ptr)))
		KILN_BUG("escaping name accepted: %s", b.ptr);
	kiln_buf_reset(&b);
	kiln_err_clear(&err);
	if (!util_parse_i64((const char *)data, size, 0, INT64_MIN, INT64_MAX, &v, &err) &&
	    size > 0 && memchr(data, ' ', size))
		KILN_BUG("number with a space accepted");
	if (!util_hex_decode((const char *)data, size, raw, size / 2 < 64 ? size / 2 : 64, &err) &&
	    size > 128)
		KILN_BUG("hex longer than its output accepted");
	if (util_base64_decode((const char *)data, size, &b, &err) == KILN_OK && b.len > size)
		KILN_BUG("base64 decoded to more bytes than its input");
	kiln_buf_release(&b);
	free(s);
	return 0;
}
