/*
 * clock.c - the only file allowed to read the wall clock (shared/STYLE.md rule 17).
 *
 * Anything that ends up inside a package must not come from here directly: the build
 * pipeline derives its build time from SOURCE_DATE_EPOCH and %build_mtime_policy, starting
 * with util_clock_source_date_epoch(). make lint greps for clock calls outside this file.
 */
#include "util/util.h"

#include <time.h>

int64_t util_clock_wall(void)
{
	return (int64_t)time(NULL);
}

int64_t util_clock_wall_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t util_clock_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

kiln_rc util_clock_source_date_epoch(int64_t *out, struct kiln_err *err)
{
	const char *s = getenv("SOURCE_DATE_EPOCH");
	kiln_rc rc;

	if (!s || !*s)
		return KILN_ENOTFOUND;
	rc = util_parse_i64(s, strlen(s), 10, 0, INT64_MAX, out, err);
	if (rc)
		kiln_err_wrap(err, "invalid SOURCE_DATE_EPOCH");
	return rc;
}

/* The format is the caller's (rpm's query formats pass their own), so it cannot be a
 * literal here. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
const char *util_clock_format_utc(int64_t t, const char *fmt, char *dst, size_t size)
{
	time_t tt = (time_t)t;
	struct tm tm;

	if (!size)
		return dst;
	dst[0] = '\0';
	if (!gmtime_r(&tt, &tm) || !strftime(dst, size, fmt, &tm))
		dst[0] = '\0';
	return dst;
}
#pragma GCC diagnostic pop
