/*
 * vercmp.c - rpm's version comparison (rpmvercmp) and EVR strings.
 *
 * Versions are compared segment by segment: runs of digits compare numerically (leading
 * zeros ignored, longer wins), runs of letters compare as strings, a numeric segment beats
 * an alphabetic one, '~' sorts before anything (even the end), '^' after the end but before
 * anything else, and other characters only separate segments.
 */
#include "util/util.h"

#include "macro/macro_int.h"

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool is_alpha(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static int sign(int v)
{
	return v < 0 ? -1 : v > 0;
}

/* Compare one digit run or letter run each; *done when the caller must return *result. */
static int cmp_segment(const char **pa, const char *ea, const char **pb, const char *eb, bool *done)
{
	const char *a = *pa;
	const char *b = *pb;
	bool num = is_digit(*a);
	const char *sa = a;
	const char *sb = b;
	size_t la, lb;
	int c;

	while (a < ea && (num ? is_digit(*a) : is_alpha(*a)))
		a++;
	while (b < eb && (num ? is_digit(*b) : is_alpha(*b)))
		b++;
	*done = true;
	if (b == sb) /* segments of different kinds: numbers are newer */
		return num ? 1 : -1;
	if (num) {
		while (sa < a && *sa == '0')
			sa++;
		while (sb < b && *sb == '0')
			sb++;
	}
	la = (size_t)(a - sa);
	lb = (size_t)(b - sb);
	if (num && la != lb)
		return la > lb ? 1 : -1;
	c = memcmp(sa, sb, la < lb ? la : lb);
	if (c)
		return sign(c);
	if (la != lb)
		return la > lb ? 1 : -1;
	*done = false;
	*pa = a;
	*pb = b;
	return 0;
}

static bool is_sep(char c)
{
	return !is_digit(c) && !is_alpha(c) && c != '~' && c != '^';
}

int macro_rpmvercmp_n(const char *a, size_t alen, const char *b, size_t blen)
{
	const char *ea = a + alen;
	const char *eb = b + blen;

	if (alen == blen && !memcmp(a, b, alen))
		return 0;
	while (a < ea || b < eb) {
		bool done;
		int c;

		while (a < ea && is_sep(*a))
			a++;
		while (b < eb && is_sep(*b))
			b++;
		if ((a < ea && *a == '~') || (b < eb && *b == '~')) {
			if (a >= ea || *a != '~')
				return 1;
			if (b >= eb || *b != '~')
				return -1;
			a++;
			b++;
			continue;
		}
		if ((a < ea && *a == '^') || (b < eb && *b == '^')) {
			if (a >= ea)
				return -1;
			if (b >= eb)
				return 1;
			if (*a != '^')
				return 1;
			if (*b != '^')
				return -1;
			a++;
			b++;
			continue;
		}
		if (a >= ea || b >= eb)
			break;
		c = cmp_segment(&a, ea, &b, eb, &done);
		if (done)
			return c;
	}
	if (a >= ea && b >= eb)
		return 0;
	return a >= ea ? -1 : 1;
}

int macro_vercmp(const char *a, const char *b)
{
	return macro_rpmvercmp_n(a, strlen(a), b, strlen(b));
}

kiln_rc macro_evr_parse(const char *evr, struct macro_evr *out, struct kiln_err *err)
{
	char *s;
	char *dash;

	memset(out, 0, sizeof(*out));
	out->buf = kiln_strdup(evr);
	if (!out->buf)
		return kiln_err_set(err, KILN_ENOMEM, "out of memory");
	/* rpm's parseEVR: digits then ':' make an epoch; the last '-' after that starts the
	 * release. An empty epoch ("":1.0) counts as 0. */
	for (s = out->buf; is_digit(*s); s++)
		;
	dash = strrchr(s, '-');
	if (*s == ':') {
		*s++ = '\0';
		out->epoch = out->buf[0] ? out->buf : "0";
		out->version = s;
	} else {
		out->version = out->buf;
	}
	if (dash) {
		*dash = '\0';
		out->release = dash + 1;
	}
	return KILN_OK;
}

void macro_evr_release(struct macro_evr *evr)
{
	if (!evr)
		return;
	free(evr->buf);
	memset(evr, 0, sizeof(*evr));
}

int macro_evr_cmp(const struct macro_evr *a, const struct macro_evr *b)
{
	int rc = macro_vercmp(a->epoch ? a->epoch : "0", b->epoch ? b->epoch : "0");

	if (!rc)
		rc = macro_vercmp(a->version, b->version);
	if (!rc && a->release && b->release)
		rc = macro_vercmp(a->release, b->release);
	return rc;
}
