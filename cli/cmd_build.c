/*
 * cmd_build.c - `kiln build`: rpmbuild's command line over the build pipeline (worker/).
 */
#include "util/util.h"

#include <stdio.h>
#include <unistd.h>

#include "cli/cli.h"
#include "macro/macro.h"
#include "worker/worker.h"

struct build_cli_opts {
	struct cli_macro_opts macros; /* first member: CLI_MACRO_OPTS */
	struct cli_fetch_opts net;
	bool fetch;
	const char *git, *ref, *spec_rel;
	const char *b, *r, *t; /* -bX, -rX, -tX: the stage letter */
	const char *rebuild, *recompile;
	bool nodeps, noclean, nocheck, noprep, short_circuit, clean, rmsource, rmspec, quiet;
	bool json, sandbox, no_sandbox, network;
	int cpus, timeout, pids, cpu;
	const char *memory;
	const char *buildroot, *topdir, *sign, *rpm_format, *root, *verify, *lock;
	const char *evals[64]; /* -E/--eval EXPR, in order */
	int nevals;
	bool showrc, nobuild, nodebuginfo, build_in_place;
	bool chain;                        /* --chain: cmd_chain.c */
	const char *localrepo, *bootstrap; /* with --chain */
};

static kiln_rc build_eval_add(void *ctx, const char *arg, struct kiln_err *err)
{
	struct build_cli_opts *o = ctx;

	if (o->nevals >= (int)KILN_ARRAY_SIZE(o->evals))
		return kiln_err_set(err, KILN_ELIMIT, "too many --eval options");
	o->evals[o->nevals++] = arg;
	return KILN_OK;
}

/* rpmbuild's --trace is an alias of --eval '%trace' (rpmpopt): traced from there on. */
static kiln_rc build_trace_add(void *ctx, const char *arg, struct kiln_err *err)
{
	(void)arg;
	return build_eval_add(ctx, "%trace", err);
}

#define BFLAG(l, field, help)                                                                      \
	{                                                                                          \
		l, 0, CLI_OPT_FLAG, offsetof(struct build_cli_opts, field), NULL, NULL, help       \
	}
#define BSTR(l, s, field, arg, help)                                                               \
	{                                                                                          \
		l, s, CLI_OPT_STRING, offsetof(struct build_cli_opts, field), NULL, arg, help      \
	}

const struct cli_opt cli_build_opts[] = {
    CLI_MACRO_OPTS(struct build_cli_opts, macros),
    CLI_FETCH_OPTS(struct build_cli_opts, net),
    BFLAG("fetch", fetch,
          "fetch missing sources (URLs, git) through the cache before building "
          "(rpmbuild's --define '_disable_source_fetch 0')"),
    BSTR("git", 0, git, "URL",
         "build from a dist-git style repository (spec, sources file, patches) at --ref"),
    BSTR("ref", 0, ref, "REF", "with --git: the branch, tag or commit (default HEAD)"),
    BSTR("spec", 0, spec_rel, "PATH", "with --git: the spec inside the repository"),
    BSTR(NULL, 'b', b, "STAGE",
         "build from SPEC through STAGE: p prep, f conf, c build, i install, l file check, "
         "b binary, s source, a all, r buildrequires"),
    BSTR(NULL, 'r', r, "STAGE", "the same from a source package (-ra, -rb, -rs, ...)"),
    BSTR(NULL, 't', t, "STAGE", "the same from a tarball holding the spec (-ta, -tb, ...)"),
    BSTR("rebuild", 0, rebuild, "SRPM", "rebuild the binary packages of SRPM (-rb)"),
    BSTR("recompile", 0, recompile, "SRPM", "build SRPM through %install (-ri)"),
    BFLAG("nodeps", nodeps, "do not check build dependencies"),
    BFLAG("noclean", noclean, "do not run %clean (keep the buildroot)"),
    BFLAG("nocheck", nocheck, "do not run %check"),
    BFLAG("noprep", noprep, "do not run %prep"),
    BFLAG("short-circuit", short_circuit, "run only the named stage"),
    BFLAG("clean", clean, "remove the build directory afterwards"),
    BFLAG("rmsource", rmsource, "remove the sources afterwards"),
    BFLAG("rmspec", rmspec, "remove the spec file afterwards"),
    BFLAG("quiet", quiet, "print stage output only when a stage fails"),
    BFLAG("json", json, "print a JSON summary (outputs with sha256, stages, warnings)"),
    BFLAG("sandbox", sandbox,
          "run the stages in kiln's namespace sandbox (the default; an error if it cannot)"),
    BFLAG("no-sandbox", no_sandbox, "run the stages as plain host processes, like rpmbuild"),
    {"cpus", 0, CLI_OPT_INT, offsetof(struct build_cli_opts, cpus), NULL, "N",
     "in the sandbox: the build sees N CPUs (for reproducible %{_smp_build_ncpus})"},
    {"pids-max", 0, CLI_OPT_INT, offsetof(struct build_cli_opts, pids), NULL, "N",
     "in the sandbox: at most N processes (cgroup pids limit)"},
    BSTR("memory", 0, memory, "BYTES", "in the sandbox: cgroup memory limit (K, M, G allowed)"),
    {"cpu", 0, CLI_OPT_INT, offsetof(struct build_cli_opts, cpu), NULL, "PERCENT",
     "in the sandbox: cgroup CPU bandwidth, percent of one CPU"},
    {"timeout", 0, CLI_OPT_INT, offsetof(struct build_cli_opts, timeout), NULL, "SECONDS",
     "in the sandbox: kill a stage after SECONDS"},
    BFLAG("enable-network", network, "with --sandbox: keep the host network"),
    BSTR("root", 0, root, "ROOT",
         "with --sandbox: host, dir:PATH, tar:FILE, or a root configuration (NAME or "
         "PATH.cfg, mock's -r): a fresh root from its repositories with the build "
         "dependencies installed (docs/roots.md)"),
    BSTR("lock", 0, lock, "FILE",
         "with --root CONFIG: build on exactly the packages of this lock (kiln root lock)"),
    {"verify-reproducible", 0, CLI_OPT_OPTIONAL, offsetof(struct build_cli_opts, verify), NULL, "N",
     "build N times (default 2) with variations and compare every package"},
    BSTR("buildroot", 0, buildroot, "DIR", "override %{buildroot}"),
    BSTR("topdir", 0, topdir, "DIR", "override %{_topdir}"),
    BSTR("sign", 0, sign, "KEYFILE", "sign every package with this secret key"),
    BSTR("rpm-format", 0, rpm_format, "4|6", "package format (%_rpmformat)"),
    {"eval", 'E', CLI_OPT_CALLBACK, 0, build_eval_add, "EXPR",
     "print the expansion of EXPR first (without a SPEC: only that)"},
    {"trace", 0, CLI_OPT_CALLBACK, 0, build_trace_add, NULL,
     "trace macro expansion on stderr, as rpmbuild --trace (--eval '%trace')"},
    BFLAG("showrc", showrc,
          "print the architecture and every macro defined (without a SPEC: "
          "only that)"),
    BFLAG("nobuild", nobuild, "parse the spec and run no stage"),
    BFLAG("nodebuginfo", nodebuginfo, "make no -debuginfo packages (%debug_package is empty)"),
    BFLAG("build-in-place", build_in_place,
          "build the sources in the current directory: no %prep, %{_builddir}/NAME-VERSION "
          "links here (rpmbuild 4.20's --build-in-place, %_build_in_place)"),
    BFLAG("chain", chain,
          "with --root CONFIG: build every SPEC and SRPM given, in the order their build "
          "dependencies ask, each seeing what the earlier ones built (mock --chain)"),
    BSTR("localrepo", 0, localrepo, "DIR",
         "with --chain: the repository the chain's packages go to (default: a new one)"),
    BSTR("bootstrap", 0, bootstrap, "NAME[,NAME]",
         "with --chain: build these first, breaking the dependency cycles they are in"),
    CLI_OPT_END,
};

/* %{?name} set, not empty and not 0 (rpmExpandNumeric > 0 for rpm's flags). */
static bool build_macro_on(struct macro_ctx *mc, const char *name)
{
	struct kiln_err err = KILN_ERR_INIT;
	char expr[96];
	char *v = NULL;
	bool on;

	snprintf(expr, sizeof(expr), "%%{?%s}", name);
	if (macro_expand_str(mc, expr, &v, &err))
		return false;
	on = strtol(v, NULL, 10) > 0;
	free(v);
	return on;
}

/* The steps of a stage letter (rpmbuild's -bX), with --short-circuit only the last. */
static kiln_rc build_steps(char c, bool sc, unsigned *steps, bool *anyarch, struct kiln_err *err)
{
	*anyarch = false;
	switch (c) {
	case 'p':
		*steps = WORKER_STEPS_P;
		return KILN_OK;
	case 'f':
		*steps = sc ? WORKER_STEP_CONF : WORKER_STEPS_F;
		return KILN_OK;
	case 'c':
		*steps = sc ? WORKER_STEP_BUILD : WORKER_STEPS_C;
		return KILN_OK;
	case 'i':
		*steps = sc ? WORKER_STEP_INSTALL | WORKER_STEP_CHECK : WORKER_STEPS_I;
		return KILN_OK;
	case 'l':
		*steps = WORKER_STEPS_L;
		return KILN_OK;
	case 'b':
		*steps = sc ? WORKER_STEP_BINARY | WORKER_STEP_CLEAN : WORKER_STEPS_B;
		return KILN_OK;
	case 'a':
		*steps = sc ? WORKER_STEP_BINARY | WORKER_STEP_SOURCE | WORKER_STEP_CLEAN
		            : WORKER_STEPS_A;
		return KILN_OK;
	case 's':
		*steps = WORKER_STEPS_S;
		*anyarch = true;
		return KILN_OK;
	case 'r':
		*steps = WORKER_STEPS_R;
		return KILN_OK;
	default:
		return kiln_err_set(err, KILN_EINVAL, "unknown stage '%c' (use one of pfcilbasr)",
		                    c);
	}
}

static void build_print_json(const struct worker_build_result *res, bool ok,
                             const struct kiln_err *err)
{
	struct kiln_buf out = KILN_BUF_INIT(KILN_LIMIT_TEXT_FILE);

	worker_build_result_json(res, ok, err, &out);
	kiln_buf_addch(&out, '\n');
	if (!kiln_buf_finish(&out, NULL))
		fwrite(out.ptr, 1, out.len, stdout);
	kiln_buf_release(&out);
}

static void build_showrc_line(void *data, enum kiln_log_level level, const char *msg)
{
	(void)data;
	if (level == KILN_LOG_DEBUG)
		printf("%s\n", msg);
	else
		kiln_log(level, "%s", msg);
}

/* -E and --showrc, before anything is built: what the configured context says. */
static int build_print_macros(const struct build_cli_opts *o, struct macro_ctx *mc)
{
	static const char *const rc_lines[] = {
	    "ARCHITECTURE AND OS:\nbuild arch            : %{_arch}\n"
	    "build os              : %{_os}\ninstall arch          : %{_arch}\n"
	    "install os            : %{_os}\n\noptflags              : %{optflags}\n",
	    "%dump",
	};
	struct kiln_err err = KILN_ERR_INIT;
	char *out = NULL;
	size_t i;
	kiln_rc rc = KILN_OK;

	for (i = 0; !rc && i < (size_t)o->nevals; i++) {
		rc = macro_expand_str(mc, o->evals[i], &out, &err);
		if (!rc)
			printf("%s\n", out);
		free(out);
		out = NULL;
	}
	/* %dump writes through the context's diagnostics: to standard output here. */
	macro_ctx_set_diag(mc, build_showrc_line, NULL);
	for (i = 0; !rc && o->showrc && i < KILN_ARRAY_SIZE(rc_lines); i++) {
		rc = macro_expand_str(mc, rc_lines[i], &out, &err);
		if (!rc && *out)
			fputs(out, stdout);
		free(out);
		out = NULL;
	}
	macro_ctx_set_diag(mc, NULL, NULL);
	fflush(stdout);
	return rc ? cli_fail(&err) : CLI_EXIT_OK;
}

/* rpmbuild's closing summary of a failed build: the heading on standard output, then each
 * warning and the error, indented, on standard error. rpmbuild prints it only once the spec
 * is being built (rpm's build/build.c buildSpec); a spec that does not parse or whose
 * ExclusiveArch/ExcludeArch rules out --target's arch fails with the error line alone. */
static int build_fail(const struct worker_build_result *res, const struct kiln_err *err)
{
	int status = cli_fail(err);
	size_t i;

	if (!res->building)
		return status;
	fflush(stderr);
	fputs("\nRPM build errors:\n", stdout);
	fflush(stdout);
	for (i = 0; i < res->nwarnings; i++)
		fprintf(stderr, "    %s\n", res->warnings[i]);
	fprintf(stderr, "    %s\n", err->msg);
	return status;
}

/* --verify-reproducible: the report, plain or inside the JSON summary. */
static void build_verify_print(const struct worker_verify_result *vr, bool json, bool ok,
                               const struct kiln_err *err)
{
	size_t i;

	if (json) {
		struct kiln_buf out = KILN_BUF_INIT(KILN_LIMIT_TEXT_FILE);

		worker_verify_result_json(vr, ok, err, &out);
		kiln_buf_addch(&out, '\n');
		if (!kiln_buf_finish(&out, NULL))
			fwrite(out.ptr, 1, out.len, stdout);
		kiln_buf_release(&out);
		return;
	}
	if (!ok)
		return;
	printf("Varied in the rebuilds: %s\n", vr->varied ? vr->varied : "");
	for (i = 0; i + 2 <= vr->runs; i++) {
		if (vr->kept[i])
			printf("Packages of build %zu kept in %s\n", i + 2, vr->kept[i]);
	}
	if (!vr->ndiffs) {
		printf("Reproducible: %u builds, %zu package%s identical\n", vr->runs,
		       vr->npackages, vr->npackages == 1 ? "" : "s");
		return;
	}
	printf("NOT reproducible (%u builds):\n", vr->runs);
	for (i = 0; i < vr->ndiffs; i++)
		printf("  %s (build %u): %s\n", vr->diffs[i].package, vr->diffs[i].run,
		       vr->diffs[i].what);
	/* What `kiln diff FIRST RERUN` says about each package that differs. */
	for (i = 0; i < vr->nreports; i++)
		printf("\n%s (build 1 vs build %u):\n%s", vr->reports[i].package,
		       vr->reports[i].run, vr->reports[i].text);
}

static int build_verify(const struct build_cli_opts *o, const struct worker_build_opts *bo,
                        struct macro_ctx *mc)
{
	struct worker_verify_result vr;
	struct kiln_err err = KILN_ERR_INIT;
	int runs = 2;
	kiln_rc rc;
	int status;

	if (*o->verify && (util_parse_int(o->verify, 2, 100, &runs, &err))) {
		fprintf(stderr, "error: --verify-reproducible: a number of builds from 2 to 100\n");
		return CLI_EXIT_USAGE;
	}
	rc = worker_build_verify(bo, mc, (unsigned)runs, &vr, &err);
	build_verify_print(&vr, o->json, rc == KILN_OK, &err);
	if (rc)
		status = o->json ? CLI_EXIT_FAIL : cli_fail(&err);
	else
		status = vr.ndiffs ? CLI_EXIT_FAIL : CLI_EXIT_OK;
	worker_verify_result_release(&vr);
	return status;
}

/* --git: check the repository out under %{_topdir}/GIT (visible in the sandbox), make it
 * the source directory, and let the fetcher make NAME-VERSION.tar.gz from the commit. */
static kiln_rc build_from_git(const struct build_cli_opts *o, struct macro_ctx *mc,
                              struct sources_fetch_opts *fo, struct kiln_arena *a,
                              struct sources_git_rev *rev, const char **spec_path,
                              struct kiln_err *err)
{
	struct sources *s = NULL;
	struct kiln_buf dir = KILN_BUF_INIT(KILN_LIMIT_PATH), spec = KILN_BUF_INIT(KILN_LIMIT_PATH);
	char *top = NULL;
	const char *where;
	kiln_rc rc;

	rc = macro_expand_str(mc, "%{_topdir}/GIT", &top, err);
	if (!rc)
		rc = util_rm_rf(top, err);
	if (!rc)
		rc = sources_global_init(err);
	if (!rc)
		rc = sources_new(fo, &s, err);
	if (!rc)
		rc = sources_checkout(s, o->git, o->ref, top, o->spec_rel, rev, &dir, &spec, err);
	if (!rc)
		rc = macro_define(mc, "_sourcedir", NULL, "%{_topdir}/GIT", MACRO_LEVEL_CMDLINE,
		                  err);
	where = rc ? NULL : kiln_arena_strdup(a, spec.ptr);
	if (!rc && !where)
		rc = kiln_err_set(err, KILN_ENOMEM, "out of memory");
	if (!rc) {
		*spec_path = where;
		fo->git_url = o->git;
		fo->git_commit = kiln_arena_strdup(a, rev->commit);
		fprintf(stderr, "Building %s at %s (commit %s)\n", o->git, o->ref ? o->ref : "HEAD",
		        rev->commit);
		if (rev->moved)
			kiln_log(KILN_LOG_WARN, "%s moved from %s to %s", o->ref ? o->ref : "HEAD",
			         rev->previous, rev->commit);
	}
	sources_free(s);
	kiln_buf_release(&dir);
	kiln_buf_release(&spec);
	free(top);
	return rc;
}

/* Which stage letter and where the spec comes from. */
struct build_source {
	char kind; /* 'b' spec, 'r' source package, 't' tarball */
	char stage;
};

static int build_pick(const struct cli_command *cmd, const struct build_cli_opts *o, int nargs,
                      char **argv, struct build_source *s)
{
	int given = !!o->b + !!o->r + !!o->t + !!o->rebuild + !!o->recompile;
	const char *letter = o->b ? o->b : o->r ? o->r : o->t;

	/* rpmbuild -E EXPR / --showrc alone print and build nothing. */
	if (!given && !nargs && !o->git && (o->nevals || o->showrc)) {
		s->kind = 0;
		s->stage = 'a';
		return 0;
	}
	if (given > 1)
		return cli_usage_error(cmd, "give one of -b, -r, -t, --rebuild, --recompile");
	s->kind = o->r || o->rebuild || o->recompile ? 'r' : o->t ? 't' : 'b';
	s->stage = o->rebuild ? 'b' : o->recompile ? 'i' : letter ? letter[0] : 'a';
	if (letter && letter[1])
		return cli_usage_error(cmd, "one stage letter after -%c, not '%s'", s->kind,
		                       letter);
	if ((o->ref || o->spec_rel) && !o->git)
		return cli_usage_error(cmd, "--ref and --spec need --git");
	if ((o->rebuild || o->recompile || o->git) ? nargs != 0 : nargs != 1)
		return cli_usage_error(cmd, "%s",
		                       o->rebuild || o->recompile || o->git
		                           ? "no operand with --rebuild, --recompile or --git"
		                           : "exactly one SPEC, SRPM or TARBALL");
	(void)argv;
	return 0;
}

static kiln_rc build_root_configure(void *arg, struct macro_ctx *mc, struct kiln_err *err)
{
	return cli_macro_ops_apply(mc, arg, err);
}

/* --root CONFIG: the root for SPEC or SRPM, made (or taken from the image cache) before
 * the build; *usage is set for a usage error. */
static kiln_rc build_root_open(const struct build_cli_opts *o, const struct build_source *src,
                               const char *input, struct worker_root *root, bool *usage,
                               const char *const *extra, size_t nextra, struct kiln_err *err)
{
	struct roots_make_opts ro;

	*usage = true;
	if (o->no_sandbox)
		return kiln_err_set(err, KILN_EINVAL,
		                    "--root %s builds in the sandbox: not with "
		                    "--no-sandbox",
		                    o->root);
	if (o->git || src->kind == 't')
		return kiln_err_set(err, KILN_EINVAL,
		                    "--root %s takes a SPEC or an SRPM (not --git or -t)", o->root);
	if (o->macros.macros || o->macros.rcfile || o->macros.target)
		return kiln_err_set(err, KILN_EINVAL,
		                    "--root %s: the root's configuration sets the macro files, "
		                    "rpmrc and target",
		                    o->root);
	*usage = false;
	roots_make_opts_init(&ro);
	ro.lock_path = o->lock;
	ro.progress = isatty(STDERR_FILENO);
	ro.log_fd = STDERR_FILENO;
	ro.extra = extra;
	ro.nextra = nextra;
	return worker_root_open(o->root, input, src->kind == 'r', &ro, build_root_configure,
	                        (void *)&o->macros, root, err);
}

/* At most this many %generate_buildrequires rounds (mock's limit too). */
#define BUILD_ROOT_ROUNDS 10

/* %generate_buildrequires in a root made from a configuration, as mock runs it: build -br
 * in the root; while it asks for packages the root lacks, resolve them into the lock, make
 * that image, and try again; at most BUILD_ROOT_ROUNDS rounds, each said. On return the
 * root (and *mc, bo's executor) is the one the build can run in. */
static kiln_rc build_root_rounds(const struct build_cli_opts *o, const struct build_source *src,
                                 const char *input, struct worker_root *root,
                                 struct worker_build_setup *setup, struct worker_build_opts *bo,
                                 struct chroot_config *cc, struct macro_ctx **mc,
                                 struct kiln_arena *a, struct kiln_err *err)
{
	const char **extra = NULL;
	size_t nextra = 0, cap = 0, i;
	kiln_rc rc = KILN_OK;
	unsigned round;

	for (round = 1; !rc; round++) {
		struct worker_build_result res = {0};
		struct worker_build_opts br = *bo;
		struct macro_ctx *bmc = macro_ctx_dup(*mc, err);
		bool usage;

		if (!bmc)
			return err->code ? err->code : KILN_ENOMEM;
		br.steps = WORKER_STEPS_R;
		br.fetch = bo->fetch;
		rc = worker_build(&br, bmc, &res, err);
		macro_ctx_free(bmc);
		if (!rc && !res.buildreqs_unmet) {
			fprintf(stderr,
			        "root %s: %%generate_buildrequires satisfied after %u round%s\n",
			        root->cfg.name, round, round == 1 ? "" : "s");
			worker_build_result_release(&res);
			break;
		}
		if (!rc) {
			fprintf(stderr, "root %s: round %u: %%generate_buildrequires asks for",
			        root->cfg.name, round);
			for (i = 0; i < res.ngenreqs; i++)
				fprintf(stderr, " %s", res.genreqs[i]);
			fputc('\n', stderr);
		}
		if (!rc && round == BUILD_ROOT_ROUNDS)
			rc = kiln_err_set(
			    err, KILN_EBUILD,
			    "%%generate_buildrequires still asks for packages after %u "
			    "rounds: giving up",
			    BUILD_ROOT_ROUNDS);
		for (i = 0; !rc && i < res.ngenreqs; i++) {
			const char *d = kiln_arena_strdup(a, res.genreqs[i]);

			if (!d || !kiln_arena_strv_add(a, &extra, &nextra, &cap, d))
				rc = kiln_err_set(err, KILN_ENOMEM, "out of memory");
		}
		worker_build_result_release(&res);
		if (rc)
			break;
		/* the next root: the lock extended by what was asked for */
		macro_ctx_free(*mc);
		*mc = NULL;
		worker_root_close(root);
		rc = build_root_open(o, src, input, root, &usage, extra, nextra, err);
		if (!rc) {
			*mc = root->macros;
			root->macros = NULL;
			setup->root = root->root_arg;
			rc = worker_build_prepare(setup, *mc, bo, cc, err);
		}
	}
	return rc;
}

int cli_cmd_build(int argc, char **argv)
{
	const struct cli_command *cmd = cli_command_find("build");
	struct build_cli_opts o = {0};
	struct worker_build_opts bo;
	struct worker_build_setup setup;
	struct worker_root root = {0};
	struct worker_build_result res = {0};
	struct chroot_config cc;
	struct sources_fetch_opts fo;
	struct sources_git_rev rev;
	struct kiln_err err = KILN_ERR_INIT;
	struct macro_ctx *mc = NULL;
	struct sign_key *key = NULL;
	struct kiln_arena a = KILN_ARENA_INIT(KILN_LIMIT_ARENA);
	struct build_source src = {0};
	const char *input;
	char **given = kiln_calloc((size_t)argc + 1, sizeof(*given));
	int nargs, status;
	kiln_rc rc;

	if (!given) {
		kiln_err_set(&err, KILN_ENOMEM, "out of memory");
		return cli_fail(&err);
	}
	memcpy(given, argv, (size_t)argc * sizeof(*given)); /* the parse reorders argv */
	if (cli_opts_parse(cli_build_opts, &o, argc, argv, &nargs, &err)) {
		status = cli_usage_error(cmd, "%s", err.msg);
		goto out;
	}
	if (o.chain || o.localrepo || o.bootstrap) {
		struct cli_chain_opts co = {o.root,    o.localrepo, o.bootstrap,
		                            &o.macros, argc,        given};

		status = o.chain
		             ? cli_build_chain(&co, nargs, argv + 1)
		             : cli_usage_error(cmd, "--localrepo and --bootstrap go with --chain");
		goto out;
	}
	status = build_pick(cmd, &o, nargs, argv, &src);
	if (status)
		goto out;
	input = o.rebuild ? o.rebuild : o.recompile ? o.recompile : o.git ? o.git : argv[1];
	worker_build_opts_init(&bo);
	/* Only the JSON summary uses the outputs' sha256 (the reproducibility check asks for
	 * it itself). */
	bo.output_digests = o.json;
	rc = build_steps(src.stage, o.short_circuit, &bo.steps, &bo.anyarch, &err);
	if (rc) {
		status = cli_usage_error(cmd, "%s", err.msg);
		goto out;
	}
	if (o.sandbox && o.no_sandbox) {
		status = cli_usage_error(cmd, "--sandbox and --no-sandbox exclude each other");
		goto out;
	}
	/* --define, --with and --without were applied in command-line order by
	 * cli_macro_ctx_open(), through the same macro/ calls a farm job's go through */
	worker_build_setup_init(&setup);
	setup.topdir = o.topdir;
	setup.buildroot = o.buildroot;
	setup.rpm_format = o.rpm_format;
	setup.sandbox = !o.no_sandbox;
	setup.root = o.root;
	setup.network = o.network;
	setup.limits.cpus = o.cpus > 0 ? (unsigned)o.cpus : 0;
	setup.limits.timeout_ms = o.timeout > 0 ? (int64_t)o.timeout * 1000 : 0;
	setup.limits.pids_max = o.pids > 0 ? (uint64_t)o.pids : 0;
	setup.limits.cpu_percent = o.cpu > 0 ? (uint32_t)o.cpu : 0;
	if (o.memory && cli_parse_size(o.memory, &setup.limits.memory_bytes, &err)) {
		status = cli_usage_error(cmd, "--memory: %s", err.msg);
		goto out;
	}
	if (worker_root_is_config(o.root)) {
		bool usage;

		rc = build_root_open(&o, &src, input, &root, &usage, NULL, 0, &err);
		if (rc && usage) {
			status = cli_usage_error(cmd, "%s", err.msg);
			goto out;
		}
		mc = root.macros; /* the root's own macro configuration, with the command line's */
		root.macros = NULL;
		setup.root = root.root_arg;
		setup.sandbox = true;
	} else {
		if (o.lock) {
			status = cli_usage_error(cmd, "--lock goes with --root CONFIG");
			goto out;
		}
		rc = cli_macro_ctx_open(&o.macros, &mc, &err);
	}
	if (!rc)
		rc = worker_build_prepare(&setup, mc, &bo, &cc, &err);
	/* As rpmbuild --nodebuginfo: the macro specs and distributions expand is empty. */
	if (!rc && o.nodebuginfo)
		rc = macro_define(mc, "debug_package", NULL, "%{nil}", MACRO_LEVEL_CMDLINE, &err);
	/* As rpmbuild --build-in-place (rpmpopt: --define '_build_in_place 1'); the define
	 * alone does the same, as in rpmbuild. */
	if (!rc && o.build_in_place)
		rc = macro_define(mc, "_build_in_place", NULL, "1", MACRO_LEVEL_CMDLINE, &err);
	if (!rc)
		bo.build_in_place = build_macro_on(mc, "_build_in_place");
	if (!rc && (o.nevals || o.showrc)) {
		status = build_print_macros(&o, mc);
		if (status || !src.kind)
			goto out;
	}
	if (!rc && o.macros.target)
		printf("Building target platforms: %s\nBuilding for target %s\n", o.macros.target,
		       o.macros.target);
	fflush(stdout); /* before the stages write to the same descriptor */
	if (!rc && o.sign)
		rc = sign_key_load_secret(o.sign, &key, &err);
	if (!rc && o.git) {
		memset(&fo, 0, sizeof(fo));
		fo.retries = -1;
		rc = cli_fetch_opts_apply(&o.net, &fo, &err);
		if (!rc)
			rc = build_from_git(&o, mc, &fo, &a, &rev, &bo.spec_path, &err);
	} else if (!rc && src.kind == 'r')
		rc = worker_srpm_install(input, mc, &a, &bo.spec_path, &err);
	else if (!rc && src.kind == 't')
		rc = worker_tarball_spec(input, mc, &a, &bo.spec_path, &err);
	else
		bo.spec_path = input;
	if (!rc && src.kind == 'r' && !o.git)
		rc = worker_srpm_pkgid(input, &bo, &err);
	if (rc) {
		status =
		    o.json ? (build_print_json(&res, false, &err), CLI_EXIT_FAIL) : cli_fail(&err);
		goto out;
	}
	if (src.kind == 'r')
		bo.steps |= WORKER_STEP_RMSOURCE | WORKER_STEP_RMSPEC; /* as rpmbuild -r does */
	bo.steps |= (o.clean ? WORKER_STEP_RMBUILD : 0) | (o.rmsource ? WORKER_STEP_RMSOURCE : 0) |
	            (o.rmspec ? WORKER_STEP_RMSPEC : 0);
	if (o.nobuild)
		bo.steps = 0; /* rpmbuild --nobuild: the spec is parsed, nothing runs */
	bo.nodeps = o.nodeps;
	bo.noclean = o.noclean;
	bo.nocheck = o.nocheck;
	bo.noprep = o.noprep;
	bo.quiet = o.quiet;
	bo.sign_key = key;
	if (o.git) {
		bo.fetch = &fo; /* NAME-VERSION.tar.gz from the commit, the rest by URL */
	} else if (o.fetch) {
		memset(&fo, 0, sizeof(fo));
		fo.retries = -1;
		if (cli_fetch_opts_apply(&o.net, &fo, &err)) {
			status = cli_usage_error(cmd, "%s", err.msg);
			goto out;
		}
		bo.fetch = &fo;
	}
	bo.out_fd = o.json ? STDERR_FILENO : STDOUT_FILENO;
	if (bo.exec) {
		/* Without the privileges for namespaces, a local build falls back to the host
		 * (as rpmbuild runs) unless the sandbox was asked for explicitly. */
		if (chroot_sandbox_probe(&cc, &err)) {
			if (o.sandbox || root.root_arg) {
				status = cli_fail(&err);
				goto out;
			}
			kiln_log(KILN_LOG_WARN,
			         "the sandbox is not available (%s): building on the host",
			         err.msg);
			kiln_err_clear(&err);
			bo.exec = NULL;
		}
	}
	if (!rc && root.dynamic && !o.nodeps && !(bo.steps & WORKER_STEP_BUILDREQS))
		rc = build_root_rounds(&o, &src, input, &root, &setup, &bo, &cc, &mc, &a, &err);
	if (rc) {
		status =
		    o.json ? (build_print_json(&res, false, &err), CLI_EXIT_FAIL) : cli_fail(&err);
		goto out;
	}
	if (o.verify) {
		status = build_verify(&o, &bo, mc);
		goto out;
	}
	rc = worker_build(&bo, mc, &res, &err);
	if (o.json)
		build_print_json(&res, rc == KILN_OK, &err);
	if (rc)
		status = o.json ? CLI_EXIT_FAIL : build_fail(&res, &err);
	else if (res.buildreqs_unmet)
		status = 11; /* rpmbuild -br: missing build dependencies */
	else
		status = CLI_EXIT_OK;
out:
	free(given);
	worker_root_close(&root);
	worker_build_result_release(&res);
	sign_key_free(key);
	macro_ctx_free(mc);
	kiln_arena_release(&a);
	cli_macro_opts_release(&o.macros);
	return status;
}
