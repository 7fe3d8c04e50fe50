/*
 * cmd_sandbox.c - `kiln sandbox`: run one command in the build sandbox, like `mock --shell`
 * or `bwrap`, and exit with its status.
 */
#include "util/util.h"

#include <signal.h>
#include <unistd.h>

#include "chroot/chroot.h"
#include "cli/cli.h"

#define SANDBOX_MAX_LIST 256

/* Exit statuses of kiln itself, as timeout(1) and env(1) use them. */
#define SANDBOX_EXIT_TIMEOUT 124
#define SANDBOX_EXIT_SETUP 125
#define SANDBOX_EXIT_NOTFOUND 127

struct sandbox_opts {
	const char *root;
	struct chroot_bind binds[SANDBOX_MAX_LIST];
	size_t nbinds;
	const char *tmpfs[SANDBOX_MAX_LIST];
	size_t ntmpfs;
	const char *env[SANDBOX_MAX_LIST + 1];
	size_t nenv;
	const char *hostname;
	const char *cwd;
	const char *timeout;
	const char *memory;
	const char *pids;
	const char *cpu;
	const char *state_dir;
	bool network;
	bool userns;
	bool readonly;
	bool no_default_tmpfs;
	char bindbuf[SANDBOX_MAX_LIST][2 * KILN_LIMIT_PATH];
};

static kiln_rc add_bind(void *ctx, const char *arg, struct kiln_err *err)
{
	struct sandbox_opts *o = ctx;
	char *s, *inside, *mode;

	if (o->nbinds >= SANDBOX_MAX_LIST)
		return kiln_err_set(err, KILN_ELIMIT, "too many --bind options");
	s = o->bindbuf[o->nbinds];
	if (strlen(arg) >= sizeof(o->bindbuf[0]))
		return kiln_err_set(err, KILN_ELIMIT, "--bind argument too long");
	snprintf(s, sizeof(o->bindbuf[0]), "%s", arg);
	inside = strchr(s, ':');
	if (!inside || inside == s || !inside[1])
		return kiln_err_set(err, KILN_EINVAL, "bad bind '%s': want HOST:INSIDE[:ro]", arg);
	*inside++ = '\0';
	mode = strchr(inside, ':');
	if (mode) {
		*mode++ = '\0';
		if (strcmp(mode, "ro") && strcmp(mode, "rw"))
			return kiln_err_set(err, KILN_EINVAL, "bad bind mode '%s': want ro or rw",
			                    mode);
	}
	o->binds[o->nbinds++] = (struct chroot_bind){s, inside, mode && !strcmp(mode, "ro")};
	return KILN_OK;
}

static kiln_rc add_tmpfs(void *ctx, const char *arg, struct kiln_err *err)
{
	struct sandbox_opts *o = ctx;

	if (o->ntmpfs >= SANDBOX_MAX_LIST)
		return kiln_err_set(err, KILN_ELIMIT, "too many --tmpfs options");
	o->tmpfs[o->ntmpfs++] = arg;
	return KILN_OK;
}

static kiln_rc add_env(void *ctx, const char *arg, struct kiln_err *err)
{
	struct sandbox_opts *o = ctx;

	if (o->nenv >= SANDBOX_MAX_LIST)
		return kiln_err_set(err, KILN_ELIMIT, "too many --env options");
	if (!strchr(arg, '='))
		return kiln_err_set(err, KILN_EINVAL, "bad --env '%s': want KEY=VALUE", arg);
	o->env[o->nenv++] = arg;
	return KILN_OK;
}

const struct cli_opt cli_sandbox_opts[] = {
    {"root", 0, CLI_OPT_STRING, offsetof(struct sandbox_opts, root), NULL, "ROOT",
     "host (default), dir:PATH or tar:FILE"},
    {"bind", 0, CLI_OPT_CALLBACK, 0, add_bind, "HOST:INSIDE[:ro]",
     "make a host path visible (writable unless :ro); repeatable"},
    {"tmpfs", 0, CLI_OPT_CALLBACK, 0, add_tmpfs, "PATH",
     "a private tmpfs on PATH, besides " CHROOT_DEFAULT_TMPFS "; repeatable"},
    {"no-default-tmpfs", 0, CLI_OPT_FLAG, offsetof(struct sandbox_opts, no_default_tmpfs), NULL,
     NULL, "only the --tmpfs paths are private (not " CHROOT_DEFAULT_TMPFS ")"},
    {"hostname", 0, CLI_OPT_STRING, offsetof(struct sandbox_opts, hostname), NULL, "NAME",
     "the host name inside (default kiln)"},
    {"enable-network", 0, CLI_OPT_FLAG, offsetof(struct sandbox_opts, network), NULL, NULL,
     "share the host's network (no network isolation)"},
    {"timeout", 0, CLI_OPT_STRING, offsetof(struct sandbox_opts, timeout), NULL, "SECONDS",
     "kill everything after SECONDS on the wall clock, then exit 124"},
    {"memory", 0, CLI_OPT_STRING, offsetof(struct sandbox_opts, memory), NULL, "BYTES",
     "cgroup memory limit (suffix k, m or g allowed)"},
    {"pids", 0, CLI_OPT_STRING, offsetof(struct sandbox_opts, pids), NULL, "N",
     "cgroup limit on processes and threads"},
    {"cpu", 0, CLI_OPT_STRING, offsetof(struct sandbox_opts, cpu), NULL, "PERCENT",
     "cgroup CPU bandwidth in percent of one CPU"},
    {"env", 0, CLI_OPT_CALLBACK, 0, add_env, "KEY=VALUE",
     "set a variable (the environment is otherwise empty); repeatable"},
    {"chdir", 0, CLI_OPT_STRING, offsetof(struct sandbox_opts, cwd), NULL, "DIR",
     "working directory inside (default HOME, /builddir)"},
    {"userns", 0, CLI_OPT_FLAG, offsetof(struct sandbox_opts, userns), NULL, NULL,
     "use a user namespace even as root"},
    {"read-only", 0, CLI_OPT_FLAG, offsetof(struct sandbox_opts, readonly), NULL, NULL,
     "dir:/tar: roots without a writable upper layer"},
    {"state-dir", 0, CLI_OPT_STRING, offsetof(struct sandbox_opts, state_dir), NULL, "DIR",
     "where the per-run upper layer goes (default $TMPDIR)"},
    CLI_OPT_END,
};

static kiln_rc parse_size(const char *what, const char *s, uint64_t *out, struct kiln_err *err)
{
	size_t len = strlen(s);
	uint64_t mul = 1;
	uint64_t v;
	kiln_rc rc;

	if (len && strchr("kKmMgG", s[len - 1])) {
		char c = s[len - 1];

		mul = (c == 'k' || c == 'K')   ? 1024
		      : (c == 'm' || c == 'M') ? 1024 * 1024
		                               : 1 << 30;
		len--;
	}
	rc = util_parse_u64(s, len, 10, UINT64_MAX / mul, &v, err);
	if (rc) {
		kiln_err_wrap(err, "%s", what);
		return rc;
	}
	*out = v * mul;
	return KILN_OK;
}

static kiln_rc fill_limits(const struct sandbox_opts *o, struct chroot_limits *l,
                           struct kiln_err *err)
{
	uint64_t v = 0;
	kiln_rc rc = KILN_OK;

	if (o->timeout) {
		rc = util_parse_u64(o->timeout, strlen(o->timeout), 10, INT64_MAX / 1000, &v, err);
		if (rc) {
			kiln_err_wrap(err, "--timeout");
			return rc;
		}
		l->timeout_ms = (int64_t)v * 1000;
	}
	if (o->memory)
		rc = parse_size("--memory", o->memory, &l->memory_bytes, err);
	if (!rc && o->pids)
		rc = parse_size("--pids", o->pids, &l->pids_max, err);
	if (!rc && o->cpu) {
		rc = parse_size("--cpu", o->cpu, &v, err);
		l->cpu_percent = v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
	}
	return rc;
}

static kiln_rc fill_config(struct sandbox_opts *o, struct chroot_config *cfg, struct kiln_arena *a,
                           struct kiln_err *err)
{
	const char **t;
	kiln_rc rc = KILN_OK;
	size_t n = 0;

	chroot_config_init(cfg);
	cfg->kind = CHROOT_EXEC_SANDBOX;
	if (o->root)
		rc = chroot_config_root_parse(cfg, o->root, err);
	if (!rc && !o->no_default_tmpfs)
		rc = chroot_config_tmpfs_parse(cfg, CHROOT_DEFAULT_TMPFS, a, err);
	if (rc)
		return rc;
	t = kiln_arena_array(a, cfg->ntmpfs + o->ntmpfs + 1, sizeof(*t));
	if (!t)
		return kiln_err_set(err, KILN_ENOMEM, "out of memory");
	for (size_t i = 0; i < cfg->ntmpfs; i++)
		t[n++] = cfg->tmpfs[i];
	for (size_t i = 0; i < o->ntmpfs; i++)
		t[n++] = o->tmpfs[i];
	cfg->tmpfs = t;
	cfg->ntmpfs = n;
	cfg->binds = o->binds;
	cfg->nbinds = o->nbinds;
	cfg->hostname = o->hostname;
	cfg->network = o->network;
	cfg->root_readonly = o->readonly;
	cfg->single_run = true; /* one command: its root's writes need no place on disk */
	cfg->state_dir = o->state_dir;
	if (o->userns)
		cfg->userns = CHROOT_USERNS_ALWAYS;
	return fill_limits(o, &cfg->limits, err);
}

static int exit_status(kiln_rc rc, const struct chroot_result *res, const struct kiln_err *err)
{
	if (rc == KILN_ETIMEOUT) {
		cli_fail(err);
		return SANDBOX_EXIT_TIMEOUT;
	}
	if (rc) {
		cli_fail(err);
		return rc == KILN_ENOTFOUND ? SANDBOX_EXIT_NOTFOUND : SANDBOX_EXIT_SETUP;
	}
	if (res->signal)
		return 128 + res->signal;
	return res->exit_code;
}

int cli_cmd_sandbox(int argc, char **argv)
{
	const struct cli_command *self = cli_command_find("sandbox");
	struct kiln_arena a = KILN_ARENA_INIT(KILN_MIB);
	struct kiln_err err = KILN_ERR_INIT;
	struct sandbox_opts *o = kiln_calloc(1, sizeof(*o));
	struct chroot_config cfg;
	struct chroot_exec *ex = NULL;
	struct chroot_result res;
	struct chroot_run run;
	int nargs = 0;
	int rc = SANDBOX_EXIT_SETUP;
	kiln_rc krc;

	if (!o)
		return cli_fail(&err);
	if (cli_opts_parse(cli_sandbox_opts, o, argc, argv, &nargs, &err)) {
		rc = cli_usage_error(self, "%s", err.msg);
		goto out;
	}
	if (!nargs) {
		rc = cli_usage_error(self, "no command given");
		goto out;
	}
	if (fill_config(o, &cfg, &a, &err) || chroot_exec_new(&cfg, &ex, &err)) {
		rc = exit_status(err.code ? err.code : KILN_EIO, NULL, &err);
		goto out;
	}
	memset(&run, 0, sizeof(run));
	argv[1 + nargs] = NULL;
	run.argv = (const char *const *)argv + 1;
	run.env = o->env;
	run.cwd = o->cwd;
	run.stdin_fd = STDIN_FILENO;
	run.stdout_fd = STDOUT_FILENO;
	run.stderr_fd = STDERR_FILENO;
	/* Interactive use keeps the terminal (like mock --shell); otherwise a new session. */
	if (isatty(STDIN_FILENO))
		run.flags |= CHROOT_RUN_KEEP_SESSION;
	krc = chroot_exec_run(ex, &run, &res, &err);
	if (kiln_log_enabled(KILN_LOG_DEBUG))
		kiln_debug("sandbox: cgroup=%s userns=%d network=%d limits: %s", res.cgroup,
		           res.userns, res.network, res.limits);
	rc = exit_status(krc, &res, &err);
out:
	chroot_exec_free(ex);
	kiln_arena_release(&a);
	free(o);
	return rc;
}
