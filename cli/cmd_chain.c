/*
 * cmd_chain.c - `kiln build --chain --root CONFIG SPEC|SRPM...`: build a set of packages in
 * dependency order, each in a fresh root made from CONFIG plus a local repository holding
 * what the chain built so far (mock --chain --localrepo; Koji's chain builds on one
 * machine).
 *
 * The order comes from the specs (batch/: BuildRequires against what each spec builds),
 * not from the command line; cycles are an error naming them unless --bootstrap names the
 * package to build first. Each package's lock is resolved here against the root's
 * repositories and the local one, written beside the results, and handed to `kiln build
 * --lock`, so the log and the lock say exactly what each build ran on. A failed build
 * leaves its dependents unbuilt (dep_failed, naming what they wait for); independent
 * packages still build. Exit status 0 when every package built, 1 otherwise.
 */
#include "util/util.h"

#include <dirent.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "macro/macro.h"
#include "spec/spec.h"
#include "repo/repo.h"
#include "roots/roots.h"
#include "batch/batch.h"
#include "worker/worker.h"
#include "cli/cli.h"

extern char **environ;

#define CHAIN_REPO "kiln-chain"

enum chain_state { CHAIN_PENDING, CHAIN_BUILT, CHAIN_FAILED, CHAIN_DEP_FAILED };

static const char *const state_names[] = {"pending", "built", "failed", "dep_failed"};

struct chain_pkg {
	const char *input; /* as given */
	bool srpm;
	struct macro_ctx *mc; /* owned: the spec's parse context */
	struct spec *spec;    /* owned */
	enum chain_state state;
	size_t waits_for; /* a failed dependency, with CHAIN_DEP_FAILED */
};

struct chain {
	const struct cli_chain_opts *o;
	struct kiln_arena a;
	char *work;           /* owned: the chain's directory */
	const char *repo;     /* the local repository (o->localrepo or WORK/repo) */
	const char *cfg_path; /* WORK/NAME.cfg: the configuration plus the local repository */
	const char **pass;    /* the command line's options handed to every build */
	size_t npass, cappass;
	struct roots_config cfg; /* CONFIG as given */
	struct chain_pkg *pkgs;
	size_t n;
	struct batch_graph *g;
};

/* ---------------------------------------------------------------------------------------- */
/* The command line */

/* Options the chain sets itself or that make no sense per package. */
static bool refused(const struct cli_opt *o)
{
	static const char *const names[] = {
	    "git",       "ref",          "spec",   "rebuild",
	    "recompile", "lock",         "json",   "verify-reproducible",
	    "eval",      "showrc",       "topdir", "no-sandbox",
	    "nobuild",   "short-circuit"};
	size_t i;

	if (o->sname == 'b' || o->sname == 'r' || o->sname == 't')
		return true;
	for (i = 0; o->lname && i < KILN_ARRAY_SIZE(names); i++)
		if (!strcmp(o->lname, names[i]))
			return true;
	return false;
}

static bool chain_own(const struct cli_opt *o)
{
	return o->lname && (!strcmp(o->lname, "chain") || !strcmp(o->lname, "root") ||
	                    !strcmp(o->lname, "localrepo") || !strcmp(o->lname, "bootstrap"));
}

static kiln_rc pass_add(struct chain *c, const char *word, struct kiln_err *err)
{
	if (!kiln_arena_strv_add(&c->a, &c->pass, &c->npass, &c->cappass, word))
		return kiln_err_set(err, KILN_ENOMEM, "out of memory");
	return KILN_OK;
}

/* Every option of the command line but the chain's own goes to each build. */
static kiln_rc passthrough(struct chain *c, struct kiln_err *err)
{
	const struct cli_chain_opts *o = c->o;
	kiln_rc rc = KILN_OK;
	int i, w, k;

	for (i = 1; !rc && i < o->argc; i += w) {
		const struct cli_opt *opt = NULL;

		if (!strcmp(o->argv[i], "--"))
			break;
		w = cli_opt_words(cli_build_opts, o->argc, o->argv, i, &opt);
		if (!opt || chain_own(opt))
			continue; /* operands, and the chain's own options */
		if (refused(opt))
			return kiln_err_set(err, KILN_EINVAL,
			                    "--chain builds each package itself: "
			                    "not with %s",
			                    o->argv[i]);
		for (k = 0; !rc && k < w; k++)
			rc = pass_add(c, o->argv[i + k], err);
	}
	return rc;
}

/* ---------------------------------------------------------------------------------------- */
/* Set-up: the work directory, the configuration with the local repository */

static kiln_rc chain_dirs(struct chain *c, struct kiln_err *err)
{
	const char *base = getenv("TMPDIR");
	struct kiln_buf p = KILN_BUF_INIT(KILN_LIMIT_PATH);
	kiln_rc rc;

	kiln_buf_addf(&p, "%s/kiln-chain-XXXXXX", base && *base ? base : "/tmp");
	rc = kiln_buf_finish(&p, err);
	if (!rc && !mkdtemp(p.ptr))
		rc = kiln_err_sys(err, KILN_EIO, "cannot make a directory '%s'", p.ptr);
	if (!rc)
		c->work = kiln_buf_take(&p, NULL);
	kiln_buf_release(&p);
	if (!rc)
		c->repo = c->o->localrepo ? c->o->localrepo
		                          : kiln_arena_printf(&c->a, "%s/repo", c->work);
	if (!rc && !c->repo)
		rc = kiln_err_set(err, KILN_ENOMEM, "out of memory");
	if (!rc)
		rc = util_mkdir_p(c->repo, 0755, err);
	return rc;
}

/* WORK/NAME.cfg: CONFIG's text and the local repository, unsigned, preferred (dnf's
 * priority: lower wins), so what the chain built wins over the distribution's. */
static kiln_rc chain_config(struct chain *c, struct kiln_err *err)
{
	struct kiln_buf text = KILN_BUF_INIT(4 * KILN_MIB);
	char *abs = NULL;
	kiln_rc rc;

	rc = roots_config_open(&c->cfg, c->o->root, err);
	if (!rc)
		rc = util_read_file(c->cfg.path, 4 * KILN_MIB, &text, err);
	if (!rc && !(abs = realpath(c->repo, NULL)))
		rc = kiln_err_sys(err, KILN_EIO, "cannot resolve '%s'", c->repo);
	if (!rc) {
		kiln_buf_addf(&text,
		              "\n# kiln build --chain: what the chain built so far\n"
		              "[repo " CHAIN_REPO "]\nbaseurl = file://%s\ngpgcheck = 0\n"
		              "repo_gpgcheck = 0\npriority = 1\n",
		              abs);
		rc = kiln_buf_finish(&text, err);
	}
	if (!rc)
		c->cfg_path = kiln_arena_printf(&c->a, "%s/%s.cfg", c->work, c->cfg.name);
	if (!rc && !c->cfg_path)
		rc = kiln_err_set(err, KILN_ENOMEM, "out of memory");
	if (!rc)
		rc = util_write_atomic(c->cfg_path, text.ptr, text.len, 0644, err);
	free(abs);
	kiln_buf_release(&text);
	return rc;
}

static kiln_rc repo_update(const struct chain *c, struct kiln_err *err)
{
	struct repo_metadata_opts ro;
	struct repo_metadata_result res;

	repo_metadata_opts_init(&ro);
	return repo_metadata_write(c->repo, &ro, &res, err);
}

/* ---------------------------------------------------------------------------------------- */
/* The graph from the specs */

static bool is_srpm(const char *path)
{
	size_t n = strlen(path);

	return n > 8 && !strcmp(path + n - 8, ".src.rpm");
}

/* What the packages a spec builds provide: each name at the spec's EVR, and their
 * Provides. In arena a. */
static kiln_rc spec_provides(struct chain *c, const struct chain_pkg *p, struct spec_deps *out,
                             struct kiln_err *err)
{
	struct kiln_buf evr = KILN_BUF_INIT(4096);
	size_t i, j, cap = 0;
	kiln_rc rc;
	static const char evr_expr[] = "%{?epoch:%{epoch}:}%{version}-%{release}";

	memset(out, 0, sizeof(*out));
	rc = macro_expand(p->mc, evr_expr, sizeof(evr_expr) - 1, &evr, err);
	for (i = 0; !rc && i < p->spec->npackages; i++) {
		const struct spec_package *pk = p->spec->packages[i];
		const struct spec_deps *pv = &pk->deps[SPEC_DEPS_PROVIDES];

		if (!pk->has_files)
			continue;
		for (j = 0; !rc && j <= pv->n; j++) {
			struct spec_dep d = {pk->name, kiln_arena_strdup(&c->a, evr.ptr),
			                     RPMTAG_DEP_EQUAL};

			if (j < pv->n)
				d = pv->v[j];
			if (out->n == cap) {
				struct spec_dep *v =
				    kiln_arena_array(&c->a, cap ? 2 * cap : 8, sizeof(*v));

				if (!v) {
					rc = kiln_err_set(err, KILN_ENOMEM, "out of memory");
					break;
				}
				if (out->n)
					memcpy(v, out->v, out->n * sizeof(*v));
				out->v = v;
				cap = cap ? 2 * cap : 8;
			}
			out->v[out->n++] = d;
		}
	}
	kiln_buf_release(&evr);
	return rc;
}

static kiln_rc pkg_parse(struct chain *c, struct chain_pkg *p, size_t k, struct kiln_err *err)
{
	const char *spec_path = p->input;
	kiln_rc rc;

	rc = roots_macro_ctx_open(&c->cfg, &p->mc, err);
	if (!rc)
		rc = cli_macro_ops_apply(p->mc, c->o->macros, err);
	if (!rc && p->srpm) {
		/* the spec inside: unpacked into a top directory of its own */
		const char *top = kiln_arena_printf(&c->a, "%s/src/%zu", c->work, k);

		rc = top ? macro_define(p->mc, "_topdir", NULL, top, MACRO_LEVEL_CMDLINE, err)
		         : kiln_err_set(err, KILN_ENOMEM, "out of memory");
		if (!rc)
			rc = worker_srpm_install(p->input, p->mc, &c->a, &spec_path, err);
	}
	if (!rc)
		rc = spec_parse_file(spec_path, p->mc, SPEC_PARSE_ANYARCH, &p->spec, err);
	if (rc)
		kiln_err_wrap(err, "%s", p->input);
	return rc;
}

static kiln_rc chain_graph(struct chain *c, int nargs, char **operands, struct kiln_err *err)
{
	const char **boot = NULL;
	size_t nboot = 0, cap = 0, i;
	kiln_rc rc;

	c->pkgs = kiln_calloc((size_t)nargs, sizeof(*c->pkgs));
	if (!c->pkgs)
		return kiln_err_set(err, KILN_ENOMEM, "out of memory");
	rc = batch_graph_new(&c->g, err);
	for (i = 0; !rc && i < (size_t)nargs; i++) {
		struct chain_pkg *p = &c->pkgs[c->n++];
		struct spec_deps prov;

		p->input = operands[i];
		p->srpm = is_srpm(p->input);
		rc = pkg_parse(c, p, i, err);
		if (!rc)
			rc = spec_provides(c, p, &prov, err);
		if (!rc)
			rc = batch_graph_add(c->g, p->input, p->spec->packages[0]->name, &prov,
			                     &p->spec->buildrequires, NULL, err);
	}
	/* --bootstrap a,b */
	for (const char *s = c->o->bootstrap; !rc && s && *s;) {
		size_t len = strcspn(s, ", ");
		const char *t = len ? kiln_arena_strndup(&c->a, s, len) : NULL;

		if (len && (!t || !kiln_arena_strv_add(&c->a, &boot, &nboot, &cap, t)))
			rc = kiln_err_set(err, KILN_ENOMEM, "out of memory");
		s += len + (s[len] != '\0');
	}
	if (!rc)
		rc = batch_graph_order(c->g, boot, nboot, err);
	return rc;
}

static void chain_plan_print(const struct chain *c)
{
	size_t k, n = batch_graph_count(c->g);

	printf("chain: %zu package%s, in this order:\n", n, n == 1 ? "" : "s");
	for (k = 0; k < n; k++) {
		size_t i = batch_graph_at(c->g, k), nd, j;
		const size_t *d = batch_graph_deps(c->g, i, &nd);

		printf("  %zu. %s (level %u, %s)", k + 1, batch_graph_name(c->g, i),
		       batch_graph_level(c->g, i), c->pkgs[i].input);
		for (j = 0; j < nd; j++)
			printf("%s%s", j ? ", " : ": after ", batch_graph_name(c->g, d[j]));
		putchar('\n');
	}
	fflush(stdout);
}

/* ---------------------------------------------------------------------------------------- */
/* Building */

/* The lock of package i on the configuration with the local repository as it is now. */
static kiln_rc pkg_lock(struct chain *c, size_t i, const char *path, struct kiln_err *err)
{
	struct roots_config cfg;
	struct roots_lock lock;
	struct roots_make_opts ro;
	struct kiln_buf out = KILN_BUF_INIT(ROOTS_LOCK_MAX_BYTES);
	kiln_rc rc;

	roots_config_init(&cfg);
	roots_lock_init(&lock);
	roots_make_opts_init(&ro);
	ro.log_fd = STDERR_FILENO;
	rc = roots_config_load(&cfg, c->cfg_path, err);
	if (!rc)
		rc = roots_lock_get(&cfg, &c->pkgs[i].spec->buildrequires,
		                    &c->pkgs[i].spec->buildconflicts, &ro, &lock, err);
	if (!rc) {
		roots_lock_write(&lock, &out);
		rc = kiln_buf_finish(&out, err);
	}
	if (!rc)
		rc = util_write_atomic(path, out.ptr, out.len, 0644, err);
	kiln_buf_release(&out);
	roots_lock_release(&lock);
	roots_config_release(&cfg);
	return rc;
}

/* `kiln build` of package i, as this program: exit status, or -1 when it could not run. */
static int pkg_build(struct chain *c, size_t i, const char *top, const char *lock)
{
	const struct chain_pkg *p = &c->pkgs[i];
	size_t n = 0, k;
	const char **argv = kiln_calloc(c->npass + 12, sizeof(*argv));
	int status = -1;
	pid_t pid;

	if (!argv)
		return -1;
	argv[n++] = "kiln";
	argv[n++] = "build";
	for (k = 0; k < c->npass; k++)
		argv[n++] = c->pass[k];
	argv[n++] = "--root";
	argv[n++] = c->cfg_path;
	argv[n++] = "--topdir";
	argv[n++] = top;
	if (lock) {
		argv[n++] = "--lock";
		argv[n++] = lock;
	}
	argv[n++] = p->srpm ? "--rebuild" : "-ba";
	argv[n++] = p->input;
	argv[n] = NULL;
	fflush(stdout);
	if (!posix_spawn(&pid, "/proc/self/exe", NULL, NULL, (char *const *)argv, environ)) {
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
		status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	}
	free(argv);
	return status;
}

/* The packages a build wrote (TOP/RPMS/ARCH/ *.rpm, TOP/SRPMS/ *.rpm) into the local
 * repository, by hard link where it can. */
static kiln_rc collect_one(const char *src, const char *repo, const char *name,
                           struct kiln_err *err)
{
	struct kiln_buf dst = KILN_BUF_INIT(KILN_LIMIT_PATH);
	kiln_rc rc;

	kiln_buf_addf(&dst, "%s/%s", repo, name);
	rc = kiln_buf_finish(&dst, err);
	if (!rc && unlink(dst.ptr) < 0 && errno != ENOENT)
		rc = kiln_err_sys(err, KILN_EIO, "cannot replace '%s'", dst.ptr);
	if (!rc && link(src, dst.ptr) < 0)
		rc = util_copy_file(src, dst.ptr, 0644, err);
	kiln_buf_release(&dst);
	return rc;
}

static kiln_rc collect_dir(const char *dir, const char *repo, int depth, struct kiln_err *err)
{
	struct kiln_buf p = KILN_BUF_INIT(KILN_LIMIT_PATH);
	struct dirent *e;
	kiln_rc rc = KILN_OK;
	DIR *d = opendir(dir);

	if (!d)
		return KILN_OK; /* -bb writes no SRPMS, noarch-only writes no RPMS/x86_64 */
	while (!rc && (e = readdir(d))) {
		size_t n = strlen(e->d_name);
		struct stat st;

		if (e->d_name[0] == '.')
			continue;
		kiln_buf_reset(&p);
		kiln_buf_addf(&p, "%s/%s", dir, e->d_name);
		rc = kiln_buf_finish(&p, err);
		if (rc || lstat(p.ptr, &st))
			continue;
		if (S_ISDIR(st.st_mode) && depth < 1)
			rc = collect_dir(p.ptr, repo, depth + 1, err);
		else if (S_ISREG(st.st_mode) && n > 4 && !strcmp(e->d_name + n - 4, ".rpm"))
			rc = collect_one(p.ptr, repo, e->d_name, err);
	}
	closedir(d);
	kiln_buf_release(&p);
	return rc;
}

static kiln_rc collect(const struct chain *c, const char *top, struct kiln_err *err)
{
	struct kiln_buf p = KILN_BUF_INIT(KILN_LIMIT_PATH);
	kiln_rc rc;

	kiln_buf_addf(&p, "%s/RPMS", top);
	rc = kiln_buf_finish(&p, err);
	if (!rc)
		rc = collect_dir(p.ptr, c->repo, 0, err);
	kiln_buf_reset(&p);
	kiln_buf_addf(&p, "%s/SRPMS", top);
	if (!rc)
		rc = kiln_buf_finish(&p, err);
	if (!rc)
		rc = collect_dir(p.ptr, c->repo, 1, err);
	if (!rc)
		rc = repo_update(c, err);
	kiln_buf_release(&p);
	return rc;
}

/* A dependency of i that did not build, or NONE. */
static size_t failed_dep(const struct chain *c, size_t i)
{
	size_t nd, j;
	const size_t *d = batch_graph_deps(c->g, i, &nd);

	for (j = 0; j < nd; j++)
		if (c->pkgs[d[j]].state != CHAIN_BUILT)
			return d[j];
	return (size_t)-1;
}

static void pkg_run(struct chain *c, size_t k, size_t i)
{
	struct chain_pkg *p = &c->pkgs[i];
	struct kiln_err err = KILN_ERR_INIT;
	const char *name = batch_graph_name(c->g, i);
	const char *top = kiln_arena_printf(&c->a, "%s/build/%s", c->work, name);
	const char *lock = kiln_arena_printf(&c->a, "%s/locks/%s.lock.json", c->work, name);
	size_t dep = failed_dep(c, i);
	kiln_rc rc;
	int status;

	if (dep != (size_t)-1) {
		p->state = CHAIN_DEP_FAILED;
		p->waits_for = dep;
		printf("chain: [%zu/%zu] %s: not built: it waits for %s, which did not build\n",
		       k + 1, c->n, name, batch_graph_name(c->g, dep));
		return;
	}
	printf("chain: [%zu/%zu] %s (%s)\n", k + 1, c->n, name, p->input);
	fflush(stdout);
	rc = top && lock ? util_mkdir_p(top, 0755, &err)
	                 : kiln_err_set(&err, KILN_ENOMEM, "out of memory");
	if (!rc)
		rc = util_mkdir_p(kiln_arena_printf(&c->a, "%s/locks", c->work), 0755, &err);
	/* %generate_buildrequires asks for more than the spec says: the build's rounds
	 * extend the root, so no lock is handed over then */
	if (!rc && !p->spec->sections[SPEC_SEC_BUILDREQUIRES])
		rc = pkg_lock(c, i, lock, &err);
	else
		lock = NULL;
	status = rc ? -1 : pkg_build(c, i, top, lock);
	if (!rc && status == 0)
		rc = collect(c, top, &err);
	if (rc)
		cli_fail(&err);
	p->state = !rc && status == 0 ? CHAIN_BUILT : CHAIN_FAILED;
	if (p->state == CHAIN_FAILED && status > 0)
		printf("chain: %s: kiln build exited with status %d\n", name, status);
}

static int chain_summary(const struct chain *c)
{
	size_t k, built = 0;

	printf("chain: results in %s (locks and build trees in %s)\n", c->repo, c->work);
	for (k = 0; k < c->n; k++) {
		size_t i = batch_graph_at(c->g, k);
		const struct chain_pkg *p = &c->pkgs[i];

		printf("  %-24s %s", batch_graph_name(c->g, i), state_names[p->state]);
		if (p->state == CHAIN_DEP_FAILED)
			printf(" (waits for %s)", batch_graph_name(c->g, p->waits_for));
		putchar('\n');
		built += p->state == CHAIN_BUILT;
	}
	printf("chain: %zu of %zu built\n", built, c->n);
	return built == c->n ? CLI_EXIT_OK : CLI_EXIT_FAIL;
}

int cli_build_chain(const struct cli_chain_opts *o, int nargs, char **operands)
{
	struct chain c;
	struct kiln_err err = KILN_ERR_INIT;
	int status = CLI_EXIT_FAIL;
	size_t k;
	kiln_rc rc;

	memset(&c, 0, sizeof(c));
	c.o = o;
	kiln_arena_init(&c.a, KILN_LIMIT_ARENA);
	roots_config_init(&c.cfg);
	if (!o->root || !worker_root_is_config(o->root) || nargs < 1) {
		status = cli_usage_error(cli_command_find("build"),
		                         "--chain needs --root CONFIG (a root configuration) and "
		                         "one or more SPEC or SRPM");
		goto out;
	}
	rc = passthrough(&c, &err);
	if (rc) {
		status = cli_usage_error(cli_command_find("build"), "%s", err.msg);
		goto out;
	}
	rc = chain_dirs(&c, &err);
	if (!rc)
		rc = chain_config(&c, &err);
	if (!rc)
		rc = repo_update(&c, &err);
	if (!rc)
		rc = chain_graph(&c, nargs, operands, &err);
	if (rc) {
		status = cli_fail(&err);
		goto out;
	}
	chain_plan_print(&c);
	for (k = 0; k < c.n; k++)
		pkg_run(&c, k, batch_graph_at(c.g, k));
	status = chain_summary(&c);
out:
	for (k = 0; k < c.n; k++) {
		spec_free(c.pkgs[k].spec);
		macro_ctx_free(c.pkgs[k].mc);
	}
	free(c.pkgs);
	batch_graph_free(c.g);
	roots_config_release(&c.cfg);
	free(c.work);
	kiln_arena_release(&c.a);
	return status;
}
