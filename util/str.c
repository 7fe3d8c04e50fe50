/*
 * str.c - struct kiln_str, a borrowed (ptr, len) view for lexers and parsers.
 */
#include "util/util.h"

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

struct kiln_str kiln_str_from(const char *s)
{
	return (struct kiln_str){s, s ? strlen(s) : 0};
}

struct kiln_str kiln_str_make(const char *ptr, size_t len)
{
	return (struct kiln_str){ptr, len};
}

bool kiln_str_eq(struct kiln_str a, struct kiln_str b)
{
	return a.len == b.len && (!a.len || !memcmp(a.ptr, b.ptr, a.len));
}

bool kiln_str_eq_cstr(struct kiln_str a, const char *s)
{
	return kiln_str_eq(a, kiln_str_from(s));
}

bool kiln_str_starts(struct kiln_str s, const char *prefix)
{
	size_t n = strlen(prefix);

	return s.len >= n && !memcmp(s.ptr, prefix, n);
}

bool kiln_str_ends(struct kiln_str s, const char *suffix)
{
	size_t n = strlen(suffix);

	return s.len >= n && !memcmp(s.ptr + s.len - n, suffix, n);
}

uint32_t util_hash_str(const char *s)
{
	uint32_t h = 2166136261u;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

struct kiln_str kiln_str_ltrim(struct kiln_str s)
{
	while (s.len && is_space(*s.ptr)) {
		s.ptr++;
		s.len--;
	}
	return s;
}

struct kiln_str kiln_str_rtrim(struct kiln_str s)
{
	while (s.len && is_space(s.ptr[s.len - 1]))
		s.len--;
	return s;
}

struct kiln_str kiln_str_trim(struct kiln_str s)
{
	return kiln_str_rtrim(kiln_str_ltrim(s));
}

ptrdiff_t kiln_str_chr(struct kiln_str s, char c)
{
	const char *p = s.len ? memchr(s.ptr, c, s.len) : NULL;

	return p ? p - s.ptr : -1;
}

struct kiln_str kiln_str_split(struct kiln_str s, char c, struct kiln_str *head, bool *found)
{
	ptrdiff_t i = kiln_str_chr(s, c);

	if (i < 0) {
		*head = s;
		if (found)
			*found = false;
		return (struct kiln_str){s.ptr + s.len, 0};
	}
	*head = (struct kiln_str){s.ptr, (size_t)i};
	if (found)
		*found = true;
	return (struct kiln_str){s.ptr + i + 1, s.len - (size_t)i - 1};
}

char *kiln_str_dup(struct kiln_str s)
{
	return kiln_strndup(s.len ? s.ptr : "", s.len);
}
