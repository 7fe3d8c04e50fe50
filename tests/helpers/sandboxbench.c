/*
 * sandboxbench.c - a test-only helper for bench/chroot: time N runs of /bin/true through the
 * chroot/ library (what the build pipeline pays per stage, without kiln's own process start),
 * and print the median and 90th percentile in milliseconds (never installed).
 *
 *   sandboxbench N host|dir:PATH|hostexec [STATE_DIR] [fresh]
 *
 * With "fresh", every run also creates and frees its executor (state directory, plan).
 */
#include "util/util.h"

#include "chroot/chroot.h"

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a;
	int64_t y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

static int fail(const struct kiln_err *err)
{
	char msg[1024];

	fprintf(stderr, "sandboxbench: %s\n", kiln_err_format(err, msg, sizeof(msg)));
	return 1;
}

int main(int argc, char **argv)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct chroot_config cfg;
	struct chroot_exec *ex = NULL;
	struct chroot_result res;
	const char *args[] = {"/bin/true", NULL};
	const char *env[] = {NULL};
	struct chroot_run run = {args, env, NULL, -1, -1, -1, NULL, NULL, NULL, 0, 0};
	int64_t *t;
	bool fresh = argc > 4 && !strcmp(argv[4], "fresh");
	int n, i;

	if (argc < 3 || util_parse_int(argv[1], 1, 100000, &n, &err))
		return fprintf(stderr, "usage: sandboxbench N host|dir:PATH|hostexec [STATE]\n"), 2;
	chroot_config_init(&cfg);
	cfg.kind = strcmp(argv[2], "hostexec") ? CHROOT_EXEC_SANDBOX : CHROOT_EXEC_HOST;
	if (cfg.kind == CHROOT_EXEC_SANDBOX && chroot_config_root_parse(&cfg, argv[2], &err))
		return fail(&err);
	cfg.state_dir = argc > 3 ? argv[3] : NULL;
	t = calloc((size_t)n, sizeof(*t));
	if (!t || chroot_exec_new(&cfg, &ex, &err))
		return fail(&err);
	for (i = -5; i < n; i++) {
		int64_t t0 = util_clock_mono_ns();

		if (fresh) {
			chroot_exec_free(ex);
			ex = NULL;
			if (chroot_exec_new(&cfg, &ex, &err))
				return fail(&err);
		}
		if (chroot_exec_run(ex, &run, &res, &err) || res.exit_code)
			return fail(&err);
		if (i >= 0)
			t[i] = util_clock_mono_ns() - t0;
	}
	qsort(t, (size_t)n, sizeof(*t), cmp_i64);
	printf("%.3f %.3f\n", (double)t[n / 2] / 1e6, (double)t[(n * 9) / 10 - (n >= 10)] / 1e6);
	chroot_exec_free(ex);
	free(t);
	return 0;
}
