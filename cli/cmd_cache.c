/*
 * cmd_cache.c - `kiln cache`: statistics and garbage collection of the source cache.
 */
#include "util/util.h"

#include "cli/cli.h"
#include "roots/roots.h"
#include "worker/worker.h"

struct cache_cli {
	const char *cache;
	bool stats, gc, verify;
	const char *max_size;
};

const struct cli_opt cli_cache_opts[] = {
    {"cache", 0, CLI_OPT_STRING, offsetof(struct cache_cli, cache), NULL, "DIR",
     "the source cache (default $KILN_CACHE_DIR, else ~/.cache/kiln)"},
    {"stats", 0, CLI_OPT_FLAG, offsetof(struct cache_cli, stats), NULL, NULL,
     "print what the cache holds (the default)"},
    {"gc", 0, CLI_OPT_FLAG, offsetof(struct cache_cli, gc), NULL, NULL,
     "remove leftovers and dangling entries; with --max-size, evict least recently used"},
    {"max-size", 0, CLI_OPT_STRING, offsetof(struct cache_cli, max_size), NULL, "SIZE",
     "with --gc: shrink the cache to SIZE (default $KILN_CACHE_MAX, else no cap)"},
    {"verify", 0, CLI_OPT_FLAG, offsetof(struct cache_cli, verify), NULL, NULL,
     "with --gc: re-hash every object and remove the corrupt ones"},
    CLI_OPT_END,
};

static void print_stats(const char *dir, const struct sources_cache_stats *st)
{
	printf("cache: %s\n", dir);
	printf("objects: %" PRIu64 " (%" PRIu64 " bytes)\n", st->objects, st->object_bytes);
	printf("urls: %" PRIu64 "\n", st->urls);
	printf("git mirrors: %" PRIu64 " (%" PRIu64 " bytes)\n", st->mirrors, st->mirror_bytes);
	printf("temporary: %" PRIu64 " (%" PRIu64 " bytes)\n", st->tmp_files, st->tmp_bytes);
	printf("total: %" PRIu64 " bytes\n", st->object_bytes + st->mirror_bytes + st->tmp_bytes);
}

static void print_gc(const struct sources_cache_gc *g)
{
	printf("removed: %" PRIu64 " objects (%" PRIu64 " bytes), %" PRIu64 " git mirrors (%" PRIu64
	       " bytes), %" PRIu64 " index entries, %" PRIu64 " temporary files (%" PRIu64
	       " bytes), %" PRIu64 " corrupt objects\n",
	       g->objects, g->object_bytes, g->mirrors, g->mirror_bytes, g->index, g->tmp_files,
	       g->tmp_bytes, g->corrupt);
}

static void print_image_gc(const struct roots_image_gc *g)
{
	printf("images removed: %" PRIu64 " (%" PRIu64 " bytes), kept: %" PRIu64 " (%" PRIu64
	       " bytes), in use: %" PRIu64 ", unfinished removed: %" PRIu64 "\n",
	       g->images, g->image_bytes, g->kept, g->kept_bytes, g->busy, g->tmp);
}

static kiln_rc run(const struct cache_cli *c, const char *dir, struct kiln_err *err)
{
	const char *env_max = getenv("KILN_CACHE_MAX");
	const char *max = c->max_size ? c->max_size : env_max && *env_max ? env_max : NULL;
	struct sources_cache_stats st;
	struct sources_cache_gc g;
	struct roots_image_gc ig;
	uint64_t cap = 0;
	kiln_rc rc = KILN_OK;

	if (c->gc && max)
		rc = cli_parse_size(max, &cap, err);
	if (!rc && c->gc)
		rc = sources_cache_collect(dir, cap, c->verify ? SOURCES_CACHE_GC_VERIFY : 0, &g,
		                           err);
	if (!rc && c->gc)
		print_gc(&g);
	/* Build-root images (roots/) age out under the same cap, in their own LRU order. */
	if (!rc && c->gc)
		rc = roots_image_collect(dir, cap, &ig, err);
	if (!rc && c->gc)
		print_image_gc(&ig);
	if (!rc)
		rc = sources_cache_stats(dir, &st, err);
	if (!rc)
		print_stats(dir, &st);
	return rc;
}

int cli_cmd_cache(int argc, char **argv)
{
	const struct cli_command *self = cli_command_find("cache");
	struct kiln_buf dir = KILN_BUF_INIT(KILN_LIMIT_PATH);
	struct kiln_err err = KILN_ERR_INIT;
	struct cache_cli c = {0};
	int nargs = 0, status = CLI_EXIT_OK;
	kiln_rc rc;

	if (cli_opts_parse(cli_cache_opts, &c, argc, argv, &nargs, &err))
		return cli_usage_error(self, "%s", err.msg);
	if (nargs)
		return cli_usage_error(self, "unexpected argument '%s'", argv[1]);
	if (!c.gc && (c.max_size || c.verify))
		return cli_usage_error(self, "--max-size and --verify go with --gc");
	if (c.cache)
		kiln_buf_addstr(&dir, c.cache);
	rc = c.cache ? kiln_buf_finish(&dir, &err) : sources_cache_default_dir(&dir, &err);
	if (!rc)
		rc = run(&c, dir.ptr, &err);
	fflush(stdout);
	if (rc)
		status = cli_fail(&err);
	kiln_buf_release(&dir);
	return status;
}
