/*
 * cmd_root.c - `kiln root`: build roots from root configurations. `kiln root lock CONFIG
 * [SPEC|SRPM]` resolves the configuration's base set (plus the build dependencies of a
 * spec or source package) against its repositories and prints the lock.
 */
#include "util/util.h"

#include <fcntl.h>
#include <unistd.h>

#include "chroot/chroot.h"
#include "cli/cli.h"
#include "macro/macro.h"
#include "spec/spec.h"
#include "roots/roots.h"

struct root_opts {
	bool json;
	const char *lock;
	const char *cache;
	bool offline;
	const char *download;
	const char *state_dir;
	bool allow_setid;
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
    {"state-dir", 0, CLI_OPT_STRING, ROFF(state_dir), NULL, "DIR",
     "create, shell: where the sandbox keeps its state (default $TMPDIR)"},
    {"allow-setuid", 0, CLI_OPT_FLAG, ROFF(allow_setid), NULL, NULL,
     "create, shell: accept setuid and setgid files in the root's packages"},
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

/* The options of roots/'s lock and image calls, from the command line. */
static void make_opts(const struct root_opts *o, struct roots_make_opts *mo)
{
	roots_make_opts_init(mo);
	mo->cache_dir = o->cache;
	mo->offline = o->offline;
	mo->progress = isatty(STDERR_FILENO);
	mo->lock_path = o->lock;
	mo->state_dir = o->state_dir;
	mo->install_flags = o->allow_setid ? ROOTS_INSTALL_F_ALLOW_SETID : 0;
	mo->log_fd = STDERR_FILENO;
}

static kiln_rc resolve(struct root_job *j, const struct root_opts *o, struct roots_lock *lock,
                       struct kiln_err *err)
{
	struct roots_make_opts mo;

	make_opts(o, &mo);
	return roots_lock_get(&j->cfg, &j->deps, &j->conflicts, &mo, lock, err);
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
	/* roots/ opens the fetcher's libraries when it fetches (not for a cached resolution) */
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

/* ---------------------------------------------------------------------------------------- */
/* kiln root create, kiln root shell: the image of a lock, made once in the image cache. */

/* Resolve (or take --lock), then get the image of the lock. img is held until released. */
static kiln_rc root_image(const struct root_opts *o, struct root_job *j, struct roots_lock *lock,
                          struct roots_image *img, struct kiln_err *err)
{
	struct roots_make_opts mo;

	make_opts(o, &mo);
	return roots_root_get(&j->cfg, &j->deps, &j->conflicts, &mo, lock, img, err);
}

static kiln_rc shell_run(const struct root_opts *o, const char *root, char **cmd, int ncmd,
                         int *status, struct kiln_err *err)
{
	static const char *const sh[] = {"/bin/sh", "-l", NULL};
	const char *env[3] = {"TERM=dumb", NULL, NULL};
	const char *term = getenv("TERM");
	char termvar[256];
	struct chroot_config cfg;
	struct chroot_exec *ex = NULL;
	struct chroot_result res;
	struct chroot_run run;
	kiln_rc rc;

	if (term && strlen(term) < 200) {
		snprintf(termvar, sizeof(termvar), "TERM=%s", term);
		env[0] = termvar;
	}
	chroot_config_init(&cfg);
	cfg.kind = CHROOT_EXEC_SANDBOX;
	cfg.root = CHROOT_ROOT_DIR;
	cfg.root_path = root;
	cfg.single_run = true; /* a fresh overlay on the image, gone with the run */
	cfg.state_dir = o->state_dir;
	rc = chroot_exec_new(&cfg, &ex, err);
	memset(&run, 0, sizeof(run));
	cmd[ncmd] = NULL;
	run.argv = ncmd ? (const char *const *)cmd : sh;
	run.env = env;
	run.stdin_fd = STDIN_FILENO;
	run.stdout_fd = STDOUT_FILENO;
	run.stderr_fd = STDERR_FILENO;
	if (isatty(STDIN_FILENO))
		run.flags |= CHROOT_RUN_KEEP_SESSION;
	if (!rc)
		rc = chroot_exec_run(ex, &run, &res, err);
	if (!rc)
		*status = res.signal ? 128 + res.signal : res.exit_code;
	chroot_exec_free(ex);
	return rc;
}

/* create: print the image and its key; shell: run CMD (default a shell) on a fresh overlay
 * of it, holding the image (the collector leaves it alone) until CMD ends. */
static int root_create_or_shell(const struct root_opts *o, const char *config, char **cmd, int ncmd,
                                bool shell)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct roots_image img = {NULL, -1, false, 0};
	struct root_job j = {0};
	struct roots_lock lock;
	int status = CLI_EXIT_OK;
	kiln_rc rc;

	roots_config_init(&j.cfg);
	roots_lock_init(&lock);
	kiln_arena_init(&j.arena, KILN_LIMIT_ARENA);
	rc = roots_config_open(&j.cfg, config, &err);
	if (!rc)
		rc = root_image(o, &j, &lock, &img, &err);
	if (!rc && !shell)
		printf("root: %s\nkey: %s\n%s\n", img.root, lock.id, img.made ? "made" : "cached");
	fflush(stdout);
	if (!rc && shell)
		rc = shell_run(o, img.root, cmd, ncmd, &status, &err);
	roots_image_release(&img);
	roots_lock_release(&lock);
	kiln_arena_release(&j.arena);
	roots_config_release(&j.cfg);
	return rc ? cli_fail(&err) : status;
}

/* kiln root list: each configuration found by name, its arch and its file. */
static kiln_rc list_one(void *arg, const char *name, const char *path, struct kiln_err *err)
{
	char msg[KILN_ERR_MSG_MAX + KILN_ERR_INPUT_MAX + 16];
	struct roots_config c;
	kiln_rc rc;

	(void)arg;
	roots_config_init(&c);
	rc = roots_config_load(&c, path, err);
	if (!rc)
		printf("%-32s %-8s %s\n", name, c.arch, path);
	else /* a broken file is listed with its error, the others still */
		printf("%-32s %-8s %s\n", name, "?", kiln_err_format(err, msg, sizeof(msg)));
	kiln_err_clear(err);
	roots_config_release(&c);
	return KILN_OK;
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
	if (!strcmp(argv[1], "list") && nargs == 1)
		return roots_config_list(list_one, NULL, &err) ? cli_fail(&err) : CLI_EXIT_OK;
	if (!strcmp(argv[1], "create") && nargs == 2)
		return root_create_or_shell(&o, argv[2], NULL, 0, false);
	if (!strcmp(argv[1], "shell") && nargs >= 2)
		return root_create_or_shell(&o, argv[2], argv + 3, nargs - 2, true);
	return cli_usage_error(cmd, "use lock CONFIG [SPEC|SRPM], create CONFIG, list or shell "
	                            "CONFIG [-- CMD...]");
}
