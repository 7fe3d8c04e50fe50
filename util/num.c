/*
 * num.c - strict integer parsing: whole string, explicit range, no silent truncation;
 * integer formatting without printf.
 */
#include "util/util.h"

static kiln_rc num_copy(const char *s, size_t len, char *tmp, size_t size, struct kiln_err *err)
{
	if (!len)
		return kiln_err_set(err, KILN_ESYNTAX, "empty number");
	if (len >= size)
		return kiln_err_set(err, KILN_ELIMIT, "number too long: '%.32s...'", s);
	if (memchr(s, '\0', len))
		return kiln_err_set(err, KILN_ESYNTAX, "NUL byte in number");
	memcpy(tmp, s, len);
	tmp[len] = '\0';
	/* strto* accept leading white space and '+'; kiln does not. */
	if (tmp[0] == '+' || tmp[0] == ' ' || (tmp[0] >= '\t' && tmp[0] <= '\r'))
		return kiln_err_set(err, KILN_ESYNTAX, "not a number: '%s'", tmp);
	return KILN_OK;
}

kiln_rc util_parse_i64(const char *s, size_t len, int base, int64_t min, int64_t max, int64_t *out,
                       struct kiln_err *err)
{
	char tmp[80];
	char *end = NULL;
	long long v;
	kiln_rc rc;

	rc = num_copy(s, len, tmp, sizeof(tmp), err);
	if (rc)
		return rc;
	errno = 0;
	v = strtoll(tmp, &end, base);
	if (end == tmp || *end)
		return kiln_err_set(err, KILN_ESYNTAX, "not a number: '%s'", tmp);
	if (errno == ERANGE || v < min || v > max)
		return kiln_err_set(err, KILN_ELIMIT,
		                    "number out of range [%" PRId64 ", %" PRId64 "]: '%s'", min,
		                    max, tmp);
	*out = v;
	return KILN_OK;
}

kiln_rc util_parse_u64(const char *s, size_t len, int base, uint64_t max, uint64_t *out,
                       struct kiln_err *err)
{
	char tmp[80];
	char *end = NULL;
	unsigned long long v;
	kiln_rc rc;

	rc = num_copy(s, len, tmp, sizeof(tmp), err);
	if (rc)
		return rc;
	if (tmp[0] == '-')
		return kiln_err_set(err, KILN_ESYNTAX, "negative number not allowed: '%s'", tmp);
	errno = 0;
	v = strtoull(tmp, &end, base);
	if (end == tmp || *end)
		return kiln_err_set(err, KILN_ESYNTAX, "not a number: '%s'", tmp);
	if (errno == ERANGE || v > max)
		return kiln_err_set(err, KILN_ELIMIT, "number out of range [0, %" PRIu64 "]: '%s'",
		                    max, tmp);
	*out = v;
	return KILN_OK;
}

kiln_rc util_parse_int(const char *s, int min, int max, int *out, struct kiln_err *err)
{
	int64_t v;
	kiln_rc rc;

	rc = util_parse_i64(s, strlen(s), 10, min, max, &v, err);
	if (!rc)
		*out = (int)v;
	return rc;
}

size_t util_fmt_int(char *dst, long long v)
{
	/* Digits of the magnitude, taken as unsigned so that LLONG_MIN works too. */
	unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;
	char tmp[UTIL_INT_MAX_TEXT];
	size_t n = 0;
	size_t len = 0;

	do {
		tmp[n++] = (char)('0' + u % 10);
		u /= 10;
	} while (u);
	if (v < 0)
		dst[len++] = '-';
	while (n)
		dst[len++] = tmp[--n];
	dst[len] = '\0';
	return len;
}
