/*
 * cmd_worker.c - `kiln worker`: the build farm's worker daemon (worker_daemon_run()).
 *
 * SIGTERM or SIGINT once: take no more work, finish the running builds, exit. Twice: kill
 * the running builds and hand their leases back to the scheduler.
 */
#include "util/util.h"

#include <signal.h>
#include <stdio.h>
#include <unistd.h>

#include "api/api.h"
#include "cli/cli.h"
#include "worker/worker.h"

#define WLIST_MAX 32

struct worker_cli_opts {
	const char *url, *token, *name, *root, *work_dir;
	const char *memory, *log_max;
	const char *build_child;
	int slots, poll, pids, cpu;
	bool no_sandbox, sandbox;
	const char *arches[WLIST_MAX], *tags[WLIST_MAX], *roots[WLIST_MAX];
	size_t narches, ntags, nroots;
};

static kiln_rc wlist(const char **v, size_t *n, const char *what, const char *arg,
                     struct kiln_err *err)
{
	if (*n >= WLIST_MAX)
		return kiln_err_set(err, KILN_ELIMIT, "more than %d %s options", WLIST_MAX, what);
	v[(*n)++] = arg;
	return KILN_OK;
}

static kiln_rc arch_cb(void *ctx, const char *arg, struct kiln_err *err)
{
	struct worker_cli_opts *o = ctx;

	return wlist(o->arches, &o->narches, "--arch", arg, err);
}

static kiln_rc tag_cb(void *ctx, const char *arg, struct kiln_err *err)
{
	struct worker_cli_opts *o = ctx;

	return wlist(o->tags, &o->ntags, "--tag", arg, err);
}

static kiln_rc root_config_cb(void *ctx, const char *arg, struct kiln_err *err)
{
	struct worker_cli_opts *o = ctx;

	return wlist(o->roots, &o->nroots, "--root-config", arg, err);
}

#define WOFF(f) offsetof(struct worker_cli_opts, f)

const struct cli_opt cli_worker_opts[] = {
    {"scheduler", 0, CLI_OPT_STRING, WOFF(url), NULL, "URL[,URL]",
     "the scheduler, or several to fail over between (default $KILN_URL)"},
    {"token", 0, CLI_OPT_STRING, WOFF(token), NULL, "TOKEN",
     "a token with the worker scope (default $KILN_TOKEN)"},
    {"name", 0, CLI_OPT_STRING, WOFF(name), NULL, "NAME", "this worker's name (default: host)"},
    {"slots", 0, CLI_OPT_INT, WOFF(slots), NULL, "N", "parallel builds (default 1)"},
    {"arch", 0, CLI_OPT_CALLBACK, 0, arch_cb, "ARCH",
     "an architecture this worker builds for (repeatable; default: the host's and noarch)"},
    {"tag", 0, CLI_OPT_CALLBACK, 0, tag_cb, "TAG", "a capability tag (repeatable)"},
    {"root", 0, CLI_OPT_STRING, WOFF(root), NULL, "ROOT", "sandbox root: host, dir:PATH, tar:FILE"},
    {"root-config", 0, CLI_OPT_CALLBACK, 0, root_config_cb, "CONFIG",
     "a root configuration (NAME or PATH.cfg) this worker offers: jobs naming it build in a "
     "root made from its repositories (repeatable; docs/roots.md)"},
    {"work-dir", 0, CLI_OPT_STRING, WOFF(work_dir), NULL, "DIR",
     "where jobs are built and the worker's own credential is kept (worker.secret, mode "
     "0600; default ./kiln-worker)"},
    {"sandbox", 0, CLI_OPT_FLAG, WOFF(sandbox), NULL, NULL,
     "require the namespace sandbox (the default when available)"},
    {"no-sandbox", 0, CLI_OPT_FLAG, WOFF(no_sandbox), NULL, NULL,
     "run build stages as plain host processes"},
    {"poll", 0, CLI_OPT_INT, WOFF(poll), NULL, "SECONDS", "long poll length (default 20)"},
    {"pids-max", 0, CLI_OPT_INT, WOFF(pids), NULL, "N",
     "in the sandbox: at most N processes a build (default 4096)"},
    {"memory", 0, CLI_OPT_STRING, WOFF(memory), NULL, "BYTES",
     "in the sandbox: memory a build (K, M, G; default 3/4 of RAM shared by the slots)"},
    {"cpu", 0, CLI_OPT_INT, WOFF(cpu), NULL, "PERCENT",
     "in the sandbox: CPU a build, percent of one CPU (default the CPUs shared by the slots)"},
    {"log-max", 0, CLI_OPT_STRING, WOFF(log_max), NULL, "BYTES",
     "build log a job attempt; the rest is dropped and the job fails (default 64M)"},
    {"build-child", 0, CLI_OPT_STRING, WOFF(build_child), NULL, "FILE",
     "(the worker's own use) build the one job its request FILE names, as the worker's "
     "build child"},
    CLI_OPT_END,
};

static volatile sig_atomic_t worker_stop;

static void on_signal(int sig)
{
	(void)sig;
	if (worker_stop < 3)
		worker_stop++;
}

int cli_cmd_worker(int argc, char **argv)
{
	const struct cli_command *cmd = cli_command_find("worker");
	struct worker_cli_opts o = {0};
	struct worker_daemon_opts d = {0};
	struct kiln_err err = KILN_ERR_INIT;
	struct sigaction sa;
	int nargs;

	if (cli_opts_parse(cli_worker_opts, &o, argc, argv, &nargs, &err))
		return cli_usage_error(cmd, "%s", err.msg);
	if (nargs)
		return cli_usage_error(cmd, "unexpected argument '%s'", argv[1]);
	if (o.build_child) {
		/* exec'd by the daemon for each build (worker/daemon_job.c child_start) */
		if (api_global_init(&err) || sources_global_init(&err))
			return cli_fail(&err);
		return worker_build_child_main(o.build_child);
	}
	if (o.sandbox && o.no_sandbox)
		return cli_usage_error(cmd, "--sandbox and --no-sandbox exclude each other");
	if (o.slots < 0 || o.poll < 0 || o.pids < 0 || o.cpu < 0)
		return cli_usage_error(cmd, "--slots, --poll, --pids-max and --cpu take positive "
		                            "numbers");
	if ((o.memory && cli_parse_size(o.memory, &d.memory_bytes, &err)) ||
	    (o.log_max && cli_parse_size(o.log_max, &d.log_max, &err)))
		return cli_usage_error(cmd, "%s", err.msg);
	d.pids_max = (uint64_t)o.pids;
	d.cpu_percent = (uint64_t)o.cpu;
	d.scheduler_url = o.url ? o.url : getenv("KILN_URL");
	d.token = o.token ? o.token : getenv("KILN_TOKEN");
	d.ca_file = getenv("KILN_CA_FILE");
	d.name = o.name;
	d.slots = (unsigned)o.slots;
	d.arches = o.arches, d.narches = o.narches;
	d.tags = o.tags, d.ntags = o.ntags;
	d.root_configs = o.roots, d.nroot_configs = o.nroots;
	d.root = o.root;
	d.work_dir = o.work_dir;
	d.sandbox = o.sandbox;
	d.no_sandbox = o.no_sandbox;
	d.poll_ms = (int64_t)o.poll * 1000;
	d.ready_fd = STDOUT_FILENO;
	if (api_global_init(&err) || sources_global_init(&err))
		return cli_fail(&err);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	setvbuf(stdout, NULL, _IONBF, 0);
	if (worker_daemon_run(&d, &worker_stop, &err))
		return cli_fail(&err);
	return CLI_EXIT_OK;
}
