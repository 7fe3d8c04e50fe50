/*
 * cmd_farm.c - the build farm's commands: `kiln scheduler`, and the client commands
 * `kiln submit`, `jobs`, `job`, `logs`, `cancel`, `retry`, `download`, `workers`, `token`.
 *
 * The client commands read KILN_URL and KILN_TOKEN from the environment (--url and --token
 * override them) and exit 0 only on success; `kiln submit --wait` exits 0 only when the job
 * succeeded, for CI pipelines.
 */
#include "util/util.h"

#include <signal.h>
#include <stdio.h>
#include <unistd.h>

#include "api/api.h"
#include "cli/cli.h"
#include "scheduler/scheduler.h"
#include "worker/worker.h"

#define LIST_MAX 64

/* Repeated options collect into one of these. */
struct cli_list {
	const char *v[LIST_MAX];
	size_t n;
};

static kiln_rc list_add(struct cli_list *l, const char *what, const char *arg, struct kiln_err *err)
{
	if (l->n >= LIST_MAX)
		return kiln_err_set(err, KILN_ELIMIT, "more than %d %s options", LIST_MAX, what);
	l->v[l->n++] = arg;
	return KILN_OK;
}

/* ---------------------------------------------------------------------------------------- */
/* kiln scheduler */

struct sched_cli_opts {
	const char *config, *listen, *worker_listen, *data_dir, *database;
	struct cli_list set;
};

static kiln_rc sched_set_cb(void *ctx, const char *arg, struct kiln_err *err)
{
	return list_add(&((struct sched_cli_opts *)ctx)->set, "--set", arg, err);
}

const struct cli_opt cli_scheduler_opts[] = {
    {"config", 'c', CLI_OPT_STRING, offsetof(struct sched_cli_opts, config), NULL, "FILE",
     "read this INI configuration"},
    {"listen", 0, CLI_OPT_STRING, offsetof(struct sched_cli_opts, listen), NULL, "HOST:PORT",
     "listen here (port 0 picks a free one; default 127.0.0.1:8470)"},
    {"worker-listen", 0, CLI_OPT_STRING, offsetof(struct sched_cli_opts, worker_listen), NULL,
     "HOST:PORT",
     "also listen here, with connections of its own, for workers, health and metrics only"},
    {"data-dir", 0, CLI_OPT_STRING, offsetof(struct sched_cli_opts, data_dir), NULL, "DIR",
     "database, blobs, logs and keys (default ./kiln-data)"},
    {"database", 0, CLI_OPT_STRING, offsetof(struct sched_cli_opts, database), NULL, "URL",
     "keep the job store in PostgreSQL at this postgresql:// URL (default: sqlite3 in the "
     "data directory)"},
    {"set", 0, CLI_OPT_CALLBACK, 0, sched_set_cb, "SECTION.KEY=VALUE",
     "set a configuration key as the file would (repeatable)"},
    CLI_OPT_END,
};

static volatile sig_atomic_t farm_stop;

static void on_stop(int sig)
{
	(void)sig;
	farm_stop = 1;
}

static void signals_install(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sa.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &sa, NULL);
}

static kiln_rc sched_apply_set(struct scheduler_config *cfg, const char *arg, struct kiln_err *err)
{
	const char *dot = strchr(arg, '.'), *eq = strchr(arg, '=');
	char section[64], key[64];

	if (!dot || !eq || dot > eq || dot - arg >= (ptrdiff_t)sizeof(section) ||
	    eq - dot - 1 >= (ptrdiff_t)sizeof(key))
		return kiln_err_set(err, KILN_EINVAL, "--set %s: use SECTION.KEY=VALUE", arg);
	snprintf(section, sizeof(section), "%.*s", (int)(dot - arg), arg);
	snprintf(key, sizeof(key), "%.*s", (int)(eq - dot - 1), dot + 1);
	return scheduler_config_set(cfg, section, key, eq + 1, err);
}

int cli_cmd_scheduler(int argc, char **argv)
{
	const struct cli_command *cmd = cli_command_find("scheduler");
	struct sched_cli_opts o = {0};
	struct scheduler_config cfg;
	struct kiln_err err = KILN_ERR_INIT;
	int nargs, status = CLI_EXIT_OK;
	size_t i;
	kiln_rc rc = KILN_OK;

	if (cli_opts_parse(cli_scheduler_opts, &o, argc, argv, &nargs, &err))
		return cli_usage_error(cmd, "%s", err.msg);
	if (nargs)
		return cli_usage_error(cmd, "unexpected argument '%s'", argv[1]);
	scheduler_config_init(&cfg);
	if (o.config)
		rc = scheduler_config_load(&cfg, o.config, &err);
	if (!rc && o.listen)
		rc = scheduler_config_set(&cfg, "server", "listen", o.listen, &err);
	if (!rc && o.worker_listen)
		rc = scheduler_config_set(&cfg, "server", "worker_listen", o.worker_listen, &err);
	if (!rc && o.data_dir)
		rc = scheduler_config_set(&cfg, "storage", "data_dir", o.data_dir, &err);
	if (!rc && o.database)
		rc = scheduler_config_set(&cfg, "storage", "database", o.database, &err);
	for (i = 0; !rc && i < o.set.n; i++)
		rc = sched_apply_set(&cfg, o.set.v[i], &err);
	/* --set may have made or changed a [forge] or [hook]: checked as the file's are */
	if (!rc && o.set.n)
		rc = scheduler_config_forge_check(&cfg, "--set", &err);
	if (!rc)
		rc = api_global_init(&err);
	/* rebuilds name published packages by URL: the scheduler fetches them */
	if (!rc)
		rc = sources_global_init(&err);
	if (!rc) {
		signals_install();
		setvbuf(stdout, NULL, _IONBF, 0);
		rc = scheduler_run(&cfg, &farm_stop, STDOUT_FILENO, &err);
	}
	if (rc)
		status = cli_fail(&err);
	scheduler_config_release(&cfg);
	return status;
}

/* ---------------------------------------------------------------------------------------- */
/* Client commands */

struct client_cli_opts {
	const char *url, *token;
	bool json;
	/* submit */
	const char *git, *ref, *spec, *arch, *sign_key, *repository, *formats, *idem, *root;
	const char *project; /* submit, jobs, token create */
	/* project create/set */
	bool public_read, private_read;
	int max_running;
	const char *arch_caps, *repositories, *roots;
	int days;
	const char *bootstrap; /* [batches] */
	int priority, reruns, timeout;
	bool wait, follow, batch;
	struct cli_list sources, defines, with, without, tags;
	/* jobs, logs, download, token */
	const char *state, *out, *scopes, *name;
	int limit, attempt, count;
	bool f;
};

#define COFF(f) offsetof(struct client_cli_opts, f)
#define LIST_CB(fn, field, what)                                                                   \
	static kiln_rc fn(void *ctx, const char *arg, struct kiln_err *err)                        \
	{                                                                                          \
		return list_add(&((struct client_cli_opts *)ctx)->field, what, arg, err);          \
	}
LIST_CB(source_cb, sources, "--source")
LIST_CB(define_cb, defines, "--define")
LIST_CB(with_cb, with, "--with")
LIST_CB(without_cb, without, "--without")
LIST_CB(tag_cb, tags, "--tag")

#define CONN_OPTS                                                                                  \
	{"url",                                                                                    \
	 0,                                                                                        \
	 CLI_OPT_STRING,                                                                           \
	 COFF(url),                                                                                \
	 NULL,                                                                                     \
	 "URL[,URL]",                                                                              \
	 "the scheduler, or several to fail over between (default $KILN_URL)"},                    \
	    {"token",                                                                              \
	     0,                                                                                    \
	     CLI_OPT_STRING,                                                                       \
	     COFF(token),                                                                          \
	     NULL,                                                                                 \
	     "TOKEN",                                                                              \
	     "bearer token (default $KILN_TOKEN)"},                                                \
	{                                                                                          \
		"json", 0, CLI_OPT_FLAG, COFF(json), NULL, NULL, "print the server's JSON"         \
	}

const struct cli_opt cli_submit_opts[] = {
    CONN_OPTS,
    {"git", 0, CLI_OPT_STRING, COFF(git), NULL, "URL", "build from a git repository"},
    {"ref", 0, CLI_OPT_STRING, COFF(ref), NULL, "REF", "with --git: branch, tag or commit"},
    {"spec", 0, CLI_OPT_STRING, COFF(spec), NULL, "PATH", "with --git: the spec's path"},
    {"source", 's', CLI_OPT_CALLBACK, 0, source_cb, "FILE", "upload FILE as a source"},
    {"define", 'D', CLI_OPT_CALLBACK, 0, define_cb, "'NAME VALUE'", "define a macro"},
    {"with", 0, CLI_OPT_CALLBACK, 0, with_cb, "OPTION", "enable a build condition"},
    {"without", 0, CLI_OPT_CALLBACK, 0, without_cb, "OPTION", "disable a build condition"},
    {"tag", 0, CLI_OPT_CALLBACK, 0, tag_cb, "TAG", "run only on workers with TAG"},
    {"arch", 0, CLI_OPT_STRING, COFF(arch), NULL, "ARCH", "target architecture"},
    {"rpm-format", 0, CLI_OPT_STRING, COFF(formats), NULL, "4|6|4,6", "package format(s)"},
    {"sign-key", 0, CLI_OPT_STRING, COFF(sign_key), NULL, "NAME", "the scheduler's key"},
    {"repository", 0, CLI_OPT_STRING, COFF(repository), NULL, "NAME", "target repository"},
    {"root", 0, CLI_OPT_STRING, COFF(root), NULL, "CONFIG",
     "build in a root made from this root configuration (a worker offering it takes the job)"},
    {"project", 0, CLI_OPT_STRING, COFF(project), NULL, "NAME",
     "the project the job goes to (default: the token's)"},
    {"priority", 0, CLI_OPT_INT, COFF(priority), NULL, "N", "higher runs first (-1000..1000)"},
    {"reruns", 0, CLI_OPT_INT, COFF(reruns), NULL, "N", "reproducibility reruns"},
    {"reproduce", 0, CLI_OPT_INT, COFF(reruns), NULL, "N", "the same as --reruns"},
    {"timeout", 0, CLI_OPT_INT, COFF(timeout), NULL, "SECONDS", "build time limit"},
    {"idempotency-key", 0, CLI_OPT_STRING, COFF(idem), NULL, "KEY",
     "submitting again with KEY returns the same job"},
    {"wait", 'w', CLI_OPT_FLAG, COFF(wait), NULL, NULL, "wait for the end; exit 0 on success"},
    {"follow", 'f', CLI_OPT_FLAG, COFF(follow), NULL, NULL, "wait and print the build log"},
    {"batch", 0, CLI_OPT_FLAG, COFF(batch), NULL, NULL,
     "submit every spec of the operands (files, package directories) as one batch on --root, "
     "built in dependency order"},
    {"bootstrap", 0, CLI_OPT_STRING, COFF(bootstrap), NULL, "NAME,..",
     "with --batch: build these first, breaking dependency cycles"},
    CLI_OPT_END,
};

const struct cli_opt cli_jobs_opts[] = {
    CONN_OPTS,
    {"state", 0, CLI_OPT_STRING, COFF(state), NULL, "STATE", "only jobs in STATE"},
    {"limit", 'n', CLI_OPT_INT, COFF(limit), NULL, "N", "at most N jobs (default 50)"},
    {"project", 0, CLI_OPT_STRING, COFF(project), NULL, "NAME", "only jobs of project NAME"},
    CLI_OPT_END,
};

const struct cli_opt cli_client_opts[] = {
    CONN_OPTS,
    CLI_OPT_END,
};

const struct cli_opt cli_logs_opts[] = {
    CONN_OPTS,
    {"follow", 'f', CLI_OPT_FLAG, COFF(f), NULL, NULL, "follow the log until the job ends"},
    {"attempt", 0, CLI_OPT_INT, COFF(attempt), NULL, "N", "attempt N (default the latest)"},
    CLI_OPT_END,
};

const struct cli_opt cli_download_opts[] = {
    CONN_OPTS,
    {"output", 'o', CLI_OPT_STRING, COFF(out), NULL, "DIR", "write here (default .)"},
    CLI_OPT_END,
};

const struct cli_opt cli_reproduce_opts[] = {
    CONN_OPTS,
    {"count", 'n', CLI_OPT_INT, COFF(count), NULL, "N", "this many reruns more (default 1)"},
    {"wait", 'w', CLI_OPT_FLAG, COFF(wait), NULL, NULL,
     "wait for the verdict, print the report; exit 0 only when reproducible"},
    CLI_OPT_END,
};

const struct cli_opt cli_rebuild_opts[] = {
    CONN_OPTS,
    {"arch", 0, CLI_OPT_STRING, COFF(arch), NULL, "ARCH", "rebuild on a worker of ARCH"},
    {"wait", 'w', CLI_OPT_FLAG, COFF(wait), NULL, NULL,
     "wait for the verdict, print the report; exit 0 only when every package matches"},
    CLI_OPT_END,
};

const struct cli_opt cli_token_opts[] = {
    CONN_OPTS,
    {"scope", 0, CLI_OPT_STRING, COFF(scopes), NULL, "SCOPES",
     "create: submit,read,worker,admin,project-admin"},
    {"name", 0, CLI_OPT_STRING, COFF(name), NULL, "NAME", "create: a label for the token"},
    {"project", 0, CLI_OPT_STRING, COFF(project), NULL, "NAME",
     "create: the project the token acts in (default: default)"},
    CLI_OPT_END,
};

const struct cli_opt cli_project_opts[] = {
    CONN_OPTS,
    {"public", 0, CLI_OPT_FLAG, COFF(public_read), NULL, NULL,
     "create, set: its repositories and jobs readable without a token"},
    {"private", 0, CLI_OPT_FLAG, COFF(private_read), NULL, NULL,
     "set: readable only with a token of the project"},
    {"max-running", 0, CLI_OPT_INT, COFF(max_running), NULL, "N",
     "create, set: at most N of its jobs running at once (0: no cap)"},
    {"arch-caps", 0, CLI_OPT_STRING, COFF(arch_caps), NULL, "ARCH=N,...",
     "create, set: at most N running per arch (\"\" for none)"},
    {"repositories", 0, CLI_OPT_STRING, COFF(repositories), NULL, "NAME,...",
     "create, set: the [repositories] the project owns (its jobs publish there)"},
    {"roots", 0, CLI_OPT_STRING, COFF(roots), NULL, "NAME,...",
     "create, set: the root configurations its jobs may use (\"\": any)"},
    {"days", 0, CLI_OPT_INT, COFF(days), NULL, "N",
     "create, key extend: the signing key expires in N days (default 730)"},
    CLI_OPT_END,
};

static const struct cli_opt *client_table(const char *name)
{
	if (!strcmp(name, "submit"))
		return cli_submit_opts;
	if (!strcmp(name, "jobs"))
		return cli_jobs_opts;
	if (!strcmp(name, "logs"))
		return cli_logs_opts;
	if (!strcmp(name, "download"))
		return cli_download_opts;
	if (!strcmp(name, "token"))
		return cli_token_opts;
	if (!strcmp(name, "project"))
		return cli_project_opts;
	if (!strcmp(name, "reproduce"))
		return cli_reproduce_opts;
	if (!strcmp(name, "rebuild"))
		return cli_rebuild_opts;
	return cli_client_opts;
}

static void client_init(const struct client_cli_opts *o, struct cli_client *c)
{
	c->url = o->url ? o->url : getenv("KILN_URL");
	c->token = o->token ? o->token : getenv("KILN_TOKEN");
	c->ca_file = getenv("KILN_CA_FILE");
	c->out_fd = STDOUT_FILENO;
	c->progress_fd = isatty(STDERR_FILENO) && !o->json ? STDERR_FILENO : -1;
	c->json = o->json;
}

static int parse_id(const struct cli_command *cmd, const char *s, int64_t *id)
{
	if (util_parse_i64(s, strlen(s), 10, 1, INT64_MAX, id, NULL))
		return cli_usage_error(cmd, "'%s' is not a job id", s);
	return 0;
}

static kiln_rc do_submit(const struct cli_command *cmd, const struct client_cli_opts *o,
                         const struct cli_client *c, int nargs, char **argv, struct kiln_err *err)
{
	struct cli_submit s = {0};
	const char *in = nargs ? argv[1] : NULL;

	(void)cmd;
	if (!o->batch && o->bootstrap)
		return kiln_err_set(err, KILN_EINVAL, "--bootstrap goes with --batch");
	if (o->batch && (o->git || o->sources.n || o->follow || !nargs))
		return kiln_err_set(
		    err, KILN_EINVAL,
		    "--batch takes spec files, SRPMs and package directories (their "
		    "sources beside the spec), not --git, --source or --follow");
	if (!!o->git == !!in && !o->batch)
		return kiln_err_set(err, KILN_EINVAL, "give one SPEC or SRPM, or --git URL");
	if (in && kiln_str_ends(kiln_str_from(in), ".src.rpm"))
		s.srpm_path = in;
	else
		s.spec_path = in;
	s.git_url = o->git, s.git_ref = o->ref, s.git_spec = o->spec;
	s.sources = (const char **)o->sources.v, s.nsources = o->sources.n;
	s.defines = (const char **)o->defines.v, s.ndefines = o->defines.n;
	s.with = (const char **)o->with.v, s.nwith = o->with.n;
	s.without = (const char **)o->without.v, s.nwithout = o->without.n;
	s.tags = (const char **)o->tags.v, s.ntags = o->tags.n;
	s.arch = o->arch, s.sign_key = o->sign_key, s.repository = o->repository;
	s.root = o->root;
	s.project = o->project;
	s.formats = o->formats, s.priority = o->priority, s.reruns = o->reruns;
	s.timeout = o->timeout, s.idempotency_key = o->idem;
	s.wait = o->wait, s.follow = o->follow;
	if (o->batch) {
		struct cli_batch b = {.s = s,
		                      .paths = (const char *const *)argv + 1,
		                      .npaths = (size_t)nargs,
		                      .bootstrap = o->bootstrap};

		b.s.spec_path = b.s.srpm_path = NULL;
		return cli_client_batch(c, &b, err);
	}
	return cli_client_submit(c, &s, err);
}

static kiln_rc do_token(const struct client_cli_opts *o, const struct cli_client *c, int nargs,
                        char **argv, struct kiln_err *err)
{
	int64_t id;

	if (nargs >= 1 && !strcmp(argv[1], "create")) {
		if (!o->scopes)
			return kiln_err_set(err, KILN_EINVAL, "token create needs --scope");
		return cli_client_token_create(c, o->scopes, o->name, o->project, err);
	}
	if (nargs >= 1 && !strcmp(argv[1], "list"))
		return cli_client_tokens(c, err);
	if (nargs == 2 && !strcmp(argv[1], "revoke") &&
	    !util_parse_i64(argv[2], strlen(argv[2]), 10, 1, INT64_MAX, &id, NULL))
		return cli_client_token_revoke(c, id, err);
	return kiln_err_set(err, KILN_EINVAL, "use token create --scope S | list | revoke ID");
}

/* kiln project create|set|show|delete NAME | list | key show|extend NAME */
static kiln_rc do_project(const struct client_cli_opts *o, const struct cli_client *c, int nargs,
                          char **argv, struct kiln_err *err)
{
	struct cli_project_opts po = {o->public_read, o->private_read, o->max_running,
	                              o->arch_caps,   o->repositories, o->days,
	                              o->roots};
	static const char *const named[] = {"create", "set", "show", "delete"};
	size_t i;

	if (o->public_read && o->private_read)
		return kiln_err_set(err, KILN_EINVAL, "give --public or --private, not both");
	if (nargs == 1 && !strcmp(argv[1], "list"))
		return cli_client_project(c, "list", NULL, &po, err);
	if (nargs == 3 && !strcmp(argv[1], "key") && !strcmp(argv[2], "show"))
		return cli_client_project(c, "key", argv[3], &po, err);
	if (nargs == 3 && !strcmp(argv[1], "key") && !strcmp(argv[2], "extend"))
		return cli_client_project(c, "key-extend", argv[3], &po, err);
	for (i = 0; nargs == 2 && i < KILN_ARRAY_SIZE(named); i++)
		if (!strcmp(argv[1], named[i]))
			return cli_client_project(c, named[i], argv[2], &po, err);
	return kiln_err_set(err, KILN_EINVAL,
	                    "give one of: project create|set|show|delete NAME, project list, "
	                    "project key show|extend NAME");
}

/* The client commands with one job id operand. */
static kiln_rc do_job_cmd(const char *name, const struct client_cli_opts *o,
                          const struct cli_client *c, int64_t id, struct kiln_err *err)
{
	if (!strcmp(name, "job"))
		return cli_client_job(c, id, err);
	if (!strcmp(name, "logs"))
		return cli_client_logs(c, id, o->attempt, o->f, err);
	if (!strcmp(name, "download"))
		return cli_client_download(c, id, o->out ? o->out : ".", err);
	if (!strcmp(name, "reproduce"))
		return o->count < 0 || o->count > 10
		           ? kiln_err_set(err, KILN_EINVAL, "--count: 1 to 10")
		           : cli_client_reproduce(c, id, o->count, o->wait, err);
	return cli_client_action(c, id, name, err);
}

int cli_cmd_client(int argc, char **argv)
{
	const struct cli_command *cmd = cli_command_find(argv[0]);
	struct client_cli_opts o = {.max_running = -1};
	struct cli_client c = {0};
	struct kiln_err err = KILN_ERR_INIT;
	int64_t id = 0;
	int nargs, st;
	kiln_rc rc;

	if (cli_opts_parse(client_table(argv[0]), &o, argc, argv, &nargs, &err))
		return cli_usage_error(cmd, "%s", err.msg);
	client_init(&o, &c);
	if (api_global_init(&err))
		return cli_fail(&err);
	signal(SIGPIPE, SIG_IGN);
	if (!strcmp(argv[0], "submit"))
		rc = do_submit(cmd, &o, &c, nargs, argv, &err);
	else if (!strcmp(argv[0], "jobs"))
		rc = nargs ? kiln_err_set(&err, KILN_EINVAL, "jobs takes no operand")
		           : cli_client_jobs(&c, o.state, o.project, o.limit, &err);
	else if (!strcmp(argv[0], "workers"))
		rc = cli_client_workers(&c, &err);
	else if (!strcmp(argv[0], "token"))
		rc = do_token(&o, &c, nargs, argv, &err);
	else if (!strcmp(argv[0], "project"))
		rc = do_project(&o, &c, nargs, argv, &err);
	else if (!strcmp(argv[0], "rebuild") && nargs < 2)
		return cli_usage_error(cmd, "give a source package and its binary packages");
	else if (!strcmp(argv[0], "rebuild"))
		rc = cli_client_rebuild(&c, argv[1], (const char *const *)argv + 2,
		                        (size_t)nargs - 1, o.arch, o.wait, &err);
	else if (nargs != 1)
		return cli_usage_error(cmd, "give one job id");
	else if ((st = parse_id(cmd, argv[1], &id)))
		return st;
	else
		rc = do_job_cmd(argv[0], &o, &c, id, &err);
	if (rc == KILN_EINVAL && !err.input[0] && strstr(err.msg, "give one"))
		return cli_usage_error(cmd, "%s", err.msg);
	return rc ? cli_fail(&err) : CLI_EXIT_OK;
}
