/*
 * fetchopts.c - the options every command that fetches sources shares (kiln fetch, kiln
 * build --fetch): where the cache is, network limits, TLS, offline mode; and sizes with
 * K/M/G suffixes.
 */
#include "util/util.h"

#include <unistd.h>

#include "cli/cli.h"
#include "worker/worker.h"

static unsigned size_shift(char c)
{
	switch (c) {
	case 'K':
	case 'k':
		return 10;
	case 'M':
	case 'm':
		return 20;
	case 'G':
	case 'g':
		return 30;
	case 'T':
	case 't':
		return 40;
	default:
		return 0;
	}
}

kiln_rc cli_parse_size(const char *s, uint64_t *out, struct kiln_err *err)
{
	size_t len = strlen(s);
	unsigned shift = len ? size_shift(s[len - 1]) : 0;
	uint64_t v;

	if (shift)
		len--;
	if (util_parse_u64(s, len, 10, UINT64_MAX >> shift, &v, err)) {
		kiln_err_wrap(err, "invalid size '%s' (bytes, or a number with K, M, G or T)", s);
		return err->code;
	}
	*out = v << shift;
	return KILN_OK;
}

static kiln_rc int_arg(const char *s, int min, int max, int *out, const char *what,
                       struct kiln_err *err)
{
	if (util_parse_int(s, min, max, out, err)) {
		kiln_err_wrap(err, "invalid %s '%s'", what, s);
		return err->code;
	}
	return KILN_OK;
}

static kiln_rc apply_limits(const struct cli_fetch_opts *c, struct sources_fetch_opts *o,
                            struct kiln_err *err)
{
	int v;

	if (c->retries && int_arg(c->retries, 0, 100, &o->retries, "--retries", err))
		return err->code;
	if (c->retry_delay && int_arg(c->retry_delay, 1, 3600000, &v, "--retry-delay", err))
		return err->code;
	if (c->retry_delay)
		o->retry_delay_ms = v;
	if (c->connect_timeout &&
	    int_arg(c->connect_timeout, 1, 3600, &v, "--connect-timeout", err))
		return err->code;
	if (c->connect_timeout)
		o->connect_timeout = v;
	if (c->low_speed_time && int_arg(c->low_speed_time, 1, 3600, &v, "--low-speed-time", err))
		return err->code;
	if (c->low_speed_time)
		o->low_speed_time = v;
	if (c->low_speed_limit &&
	    int_arg(c->low_speed_limit, 1, INT_MAX, &v, "--low-speed-limit", err))
		return err->code;
	if (c->low_speed_limit)
		o->low_speed_limit = v;
	if (c->max_redirs && int_arg(c->max_redirs, 0, 100, &v, "--max-redirs", err))
		return err->code;
	if (c->max_redirs)
		o->max_redirects = v ? v : -1;
	return KILN_OK;
}

kiln_rc cli_fetch_opts_apply(const struct cli_fetch_opts *c, struct sources_fetch_opts *o,
                             struct kiln_err *err)
{
	const char *env_max = getenv("KILN_CACHE_MAX");
	const char *cache_max = c->cache_max ? c->cache_max : env_max && *env_max ? env_max : NULL;

	o->cache_dir = c->cache;
	o->offline = c->offline;
	o->insecure = c->insecure;
	o->ca_file = c->ca_file;
	o->retries = -1;
	o->progress = c->progress || (!c->no_progress && isatty(STDERR_FILENO));
	if (cache_max && cli_parse_size(cache_max, &o->cache_max, err))
		return err->code;
	if (c->max_size && cli_parse_size(c->max_size, &o->max_size, err))
		return err->code;
	return apply_limits(c, o, err);
}
