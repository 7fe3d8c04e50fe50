/*
 * cmd_root.c - `kiln root`: build roots from root configurations. `kiln root lock CONFIG
 * [SPEC|SRPM]` resolves the configuration's base set (plus the build dependencies of a
 * spec or source package) against its repositories and prints the lock.
 */
#include "util/util.h"

#include <fcntl.h>
#include <unistd.h>

#include "cli/cli.h"
#include "macro/macro.h"
#include "spec/spec.h"
#include "sources/sources.h"
#include "roots/roots.h"

struct root_opts {
	bool json;
	const char *lock;
	const char *cache;
	bool offline;
	const char *download;
};

#define ROFF(f) offsetof(struct root_opts, f)

const struct cli_opt cli_root_opts[] = {
    {"json", 0, CLI_OPT_FLAG, ROFF(json), NULL, NULL, "print the lock (JSON) instead of a table"},
    {"lock", 0, CLI_OPT_STRING, ROFF(lock), NULL, "FILE",
     "use this lock instead of resolving: its packages must be in the repositories as locked"},
    {"cache", 0, CLI_OPT_STRING, ROFF(cache), NULL, "DIR",
     "the source cache (default $KILN_CACHE_DIR, ~/.cache/kiln)"},
    {"offline", 0, CLI_OPT_FLAG, ROFF(offline), NULL, NULL,
     "no network: local repositories and the cache only"},
    {"download", 0, CLI_OPT_STRING, ROFF(download), NULL, "DIR",
     "also fetch every locked package into DIR, verified by sha256 and signature"},
    CLI_OPT_END,
};

/* What a root is resolved for: the base set and a spec's or source package's build deps. */
struct root_job {
	struct roots_config cfg;
	struct macro_ctx *macros;
	struct spec *spec;
	struct kiln_arena arena; /* a source package's dependencies */
	struct spec_deps deps, conflicts;
};

static bool is_package(const char *path)
{
	unsigned char magic[4] = {0};
	size_t got = 0;
	struct kiln_err ignored = KILN_ERR_INIT;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	bool yes;

	if (fd < 0)
		return false;
	yes = !util_read_full(fd, magic, sizeof(magic), &got, &ignored) && got == 4 &&
	      magic[0] == 0xed && magic[1] == 0xab && magic[2] == 0xee && magic[3] == 0xdb;
	util_close(fd);
	return yes;
}

static kiln_rc load_build_deps(struct root_job *j, const char *path, struct kiln_err *err)
{
	kiln_rc rc;

	if (is_package(path))
		return roots_srpm_deps(path, &j->arena, &j->deps, &j->conflicts, err);
	rc = roots_macro_ctx_open(&j->cfg, &j->macros, err);
	if (!rc)
		rc = spec_parse_file(path, j->macros, SPEC_PARSE_ANYARCH, &j->spec, err);
	if (!rc) {
		j->deps = j->spec->buildrequires;
		j->conflicts = j->spec->buildconflicts;
	}
	return rc;
}

static kiln_rc resolve(struct root_job *j, const struct root_opts *o, struct roots_lock *lock,
                       struct kiln_err *err)
{
	struct roots_fetch_opts fo = {.cache_dir = o->cache, .offline = o->offline};
	struct roots_pool *pool = NULL;
	kiln_rc rc;

	fo.progress = isatty(STDERR_FILENO);
	rc = roots_pool_new(j->cfg.arch, j->cfg.weak_deps, &pool, err);
	if (!rc)
		rc = roots_pool_load(pool, &j->cfg, &fo, &j->deps, err);
	if (!rc && o->lock) {
		rc = roots_lock_read(lock, o->lock, err);
		if (!rc)
			rc = roots_lock_check(pool, lock, err);
	} else if (!rc) {
		rc = roots_pool_resolve(pool, j->cfg.install, j->cfg.ninstall, &j->deps,
		                        &j->conflicts, lock, err);
		if (rc && roots_pool_problems(pool)[0])
			fputs(roots_pool_problems(pool), stderr);
	}
	roots_pool_free(pool);
	return rc;
}

static kiln_rc download(struct root_job *j, const struct root_opts *o,
                        const struct roots_lock *lock, struct kiln_err *err)
{
	struct roots_fetch_opts fo = {.cache_dir = o->cache, .offline = o->offline};
	char **paths = kiln_calloc(lock->n ? lock->n : 1, sizeof(*paths));
	kiln_rc rc;
	size_t i;

	if (!paths)
		return kiln_err_set(err, KILN_ENOMEM, "out of memory");
	rc = roots_lock_fetch(&j->cfg, lock, &fo, o->download, paths, err);
	for (i = 0; !rc && i < lock->n; i++)
		fprintf(stderr, "%s\n", paths[i]);
	for (i = 0; i < lock->n; i++)
		free(paths[i]);
	free(paths);
	return rc;
}

static kiln_rc root_lock(const struct root_opts *o, const char *config, const char *input,
                         struct kiln_err *err)
{
	struct root_job j = {0};
	struct roots_lock lock;
	struct kiln_buf out = KILN_BUF_INIT(ROOTS_LOCK_MAX_BYTES * 2);
	kiln_rc rc;

	roots_config_init(&j.cfg);
	roots_lock_init(&lock);
	kiln_arena_init(&j.arena, KILN_LIMIT_ARENA);
	rc = roots_config_open(&j.cfg, config, err);
	if (!rc && input)
		rc = load_build_deps(&j, input, err);
	if (!rc)
		rc = sources_global_init(err);
	if (!rc)
		rc = resolve(&j, o, &lock, err);
	if (!rc && o->download)
		rc = download(&j, o, &lock, err);
	if (!rc) {
		if (o->json)
			roots_lock_write(&lock, &out);
		else
			roots_lock_format_text(&lock, &out);
		rc = kiln_buf_finish(&out, err);
	}
	if (!rc)
		rc = util_write_all(STDOUT_FILENO, out.ptr, out.len, err);
	kiln_buf_release(&out);
	roots_lock_release(&lock);
	spec_free(j.spec);
	macro_ctx_free(j.macros);
	kiln_arena_release(&j.arena);
	roots_config_release(&j.cfg);
	return rc;
}

int cli_cmd_root(int argc, char **argv)
{
	const struct cli_command *cmd = cli_command_find("root");
	struct root_opts o = {0};
	struct kiln_err err = KILN_ERR_INIT;
	int nargs;

	if (cli_opts_parse(cli_root_opts, &o, argc, argv, &nargs, &err))
		return cli_usage_error(cmd, "%s", err.msg);
	if (nargs < 1)
		return cli_usage_error(cmd, "give lock");
	if (!strcmp(argv[1], "lock") && (nargs == 2 || nargs == 3))
		return root_lock(&o, argv[2], nargs == 3 ? argv[3] : NULL, &err) ? cli_fail(&err)
		                                                                 : CLI_EXIT_OK;
	return cli_usage_error(cmd, "use lock CONFIG [SPEC|SRPM]");
}
