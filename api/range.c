/*
 * range.c - the HTTP Range and If-None-Match request headers (RFC 9110 14.2, 13.1.2), for
 * handlers that serve files: one byte range, or the whole file.
 */
#include "util/util.h"

#include "api/api.h"

static const char *skip_ows(const char *p)
{
	while (*p == ' ' || *p == '\t')
		p++;
	return p;
}

/* Decimal digits into *v (at most 19 of them, so no overflow); the end in *end. */
static bool digits(const char *p, uint64_t *v, const char **end)
{
	size_t n = 0;

	*v = 0;
	while (p[n] >= '0' && p[n] <= '9') {
		if (n >= 19)
			return false;
		*v = *v * 10 + (uint64_t)(p[n] - '0');
		n++;
	}
	*end = p + n;
	return n > 0;
}

enum api_range api_range_parse(const char *h, uint64_t size, uint64_t *off, uint64_t *len)
{
	const char *p = skip_ows(h), *e;
	uint64_t first, last;

	*off = 0;
	*len = size;
	if (strncmp(p, "bytes=", 6))
		return API_RANGE_NONE; /* another unit: ignored, the whole file */
	p = skip_ows(p + 6);
	if (strchr(p, ','))
		return API_RANGE_NONE; /* several ranges: answered with the whole file */
	if (*p == '-') {
		/* the last N bytes */
		if (!digits(p + 1, &last, &e) || *skip_ows(e))
			return API_RANGE_NONE;
		if (!last || !size)
			return API_RANGE_UNSATISFIABLE;
		*len = last < size ? last : size;
		*off = size - *len;
		return API_RANGE_PARTIAL;
	}
	if (!digits(p, &first, &e) || *e != '-')
		return API_RANGE_NONE;
	p = e + 1;
	if (!*skip_ows(p)) {
		last = size ? size - 1 : 0;
	} else if (!digits(p, &last, &e) || *skip_ows(e) || last < first) {
		return API_RANGE_NONE;
	}
	if (first >= size)
		return API_RANGE_UNSATISFIABLE;
	if (last >= size)
		last = size - 1;
	*off = first;
	*len = last - first + 1;
	return API_RANGE_PARTIAL;
}

bool api_etag_match(const char *h, const char *etag)
{
	size_t el = strlen(etag);
	const char *p = h;

	while (*p) {
		const char *q;
		size_t l;

		p = skip_ows(p);
		if (*p == ',') {
			p++;
			continue;
		}
		if (*p == '*')
			return true;
		if (!strncmp(p, "W/", 2))
			p += 2; /* weak comparison, as If-None-Match asks */
		q = strchr(p, ',');
		l = q ? (size_t)(q - p) : strlen(p);
		while (l && (p[l - 1] == ' ' || p[l - 1] == '\t'))
			l--;
		if (l == el && !memcmp(p, etag, el))
			return true;
		if (!q)
			break;
		p = q + 1;
	}
	return false;
}
