/*
 * build.c - the build pipeline: parse the spec, check build dependencies, run the stages
 * (%prep %generate_buildrequires %conf %build %install %check %clean) as scripts through an
 * executor, then hand over to package.c for the packages.
 *
 * Stage scripts are what rpmbuild writes: %{__spec_STAGE_template}, a "cd" into the build
 * subdirectory, the section body, %{__spec_STAGE_post}; they run as %{__spec_STAGE_cmd}
 * SCRIPT. The environment is not the caller's: it is rebuilt from a fixed list so that two
 * builds of the same spec see the same variables wherever they run.
 *
 * SOURCE_DATE_EPOCH: taken from the environment when set and non-empty, else (with
 * %source_date_epoch_from_changelog) from the newest %changelog entry. A value of 0 is a
 * real timestamp (1970-01-01) and is honoured like any other: the reproducible-builds
 * specification defines the variable as a UNIX time and only an unset or empty variable as
 * absent, so kiln does not treat 0 as "unset" (some tools do, which makes 0 silently mean
 * "now" and breaks reproducibility).
 */
#include "util/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "worker/build_int.h"

#define BUILD_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

void worker_build_opts_init(struct worker_build_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->steps = WORKER_STEPS_A;
	o->out_fd = STDOUT_FILENO;
	o->output_digests = true;
	o->source_date_epoch = -1;
}

const char *worker_build_expand(struct build *b, const char *s, struct kiln_err *err)
{
	char *out = NULL;
	const char *r;

	if (macro_expand_str(b->mc, s, &out, err))
		return NULL;
	r = kiln_arena_strdup(&b->arena, out);
	free(out);
	if (!r)
		kiln_err_set(err, KILN_ENOMEM, "out of memory");
	return r;
}

const char *worker_build_host_path(struct build *b, const char *path)
{
	size_t n;

	if (!b->in_top)
		return path;
	n = strlen(b->in_top);
	if (strncmp(path, b->in_top, n) != 0 || (path[n] != '/' && path[n] != '\0'))
		return path;
	return kiln_arena_printf(&b->arena, "%s%s", b->topdir, path + n);
}

/* The macro as a boolean the way rpm reads %{?name} flags: set, non-empty, not "0". */
static bool build_macro_true(struct build *b, const char *name)
{
	const char *v = macro_body_get(b->mc, name);
	struct kiln_err err = KILN_ERR_INIT;
	char *x = NULL;
	bool yes;

	if (!v)
		return false;
	if (macro_expand_str(b->mc, v, &x, &err))
		return false;
	yes = x[0] && strcmp(x, "0") != 0;
	free(x);
	return yes;
}

static kiln_rc build_strv_add(struct kiln_arena *a, const char ***v, size_t *n, size_t *cap,
                              const char *s, struct kiln_err *err)
{
	if (*n + 1 >= *cap) {
		size_t ncap = *cap ? 2 * *cap : 16;
		const char **nv = kiln_arena_array(a, ncap, sizeof(*nv));

		if (!nv)
			return kiln_err_set(err, KILN_ENOMEM, "out of memory");
		if (*n)
			memcpy(nv, *v, *n * sizeof(*nv));
		*v = nv;
		*cap = ncap;
	}
	(*v)[(*n)++] = s;
	(*v)[*n] = NULL;
	return KILN_OK;
}

static void build_out_write(struct build *b, const char *s, size_t len)
{
	if (b->log_fd >= 0 && util_write_all(b->log_fd, s, len, NULL))
		b->log_fd = -1; /* a full disk must not fail the build twice */
	if (!b->o->quiet && b->o->out_fd >= 0)
		(void)!write(b->o->out_fd, s, len);
}

void worker_build_log(struct build *b, const char *fmt, ...)
{
	char line[1024];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	build_out_write(b, line, (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1);
}

void worker_build_warn(struct build *b, const char *fmt, ...)
{
	struct worker_build_result *r = b->res;
	char msg[1024];
	va_list ap;
	const char *s;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	kiln_log(KILN_LOG_WARN, "%s", msg);
	if (b->log_fd >= 0)
		dprintf(b->log_fd, "warning: %s\n", msg);
	s = kiln_arena_strdup(&r->arena, msg);
	if (s)
		(void)kiln_arena_strv_add(&r->arena, &r->warnings, &r->nwarnings, &r->capwarnings,
		                          s);
}

kiln_rc worker_build_output_add(struct build *b, const char *path, const char *kind,
                                const char *name, const char *arch, struct kiln_err *err)
{
	struct worker_build_result *r = b->res;
	struct worker_build_output *o;
	kiln_rc rc;

	rc = build_strv_add(&b->arena, &b->written, &b->nwritten, &b->capwritten,
	                    kiln_arena_strdup(&b->arena, path), err);
	if (rc)
		return rc;
	if (r->noutputs == r->capoutputs) {
		size_t ncap = r->capoutputs ? 2 * r->capoutputs : 8;
		struct worker_build_output *nv = kiln_arena_array(&r->arena, ncap, sizeof(*nv));

		if (!nv)
			return kiln_err_set(err, KILN_ENOMEM, "out of memory");
		if (r->noutputs)
			memcpy(nv, r->outputs, r->noutputs * sizeof(*nv));
		r->outputs = nv;
		r->capoutputs = ncap;
	}
	o = &r->outputs[r->noutputs];
	memset(o, 0, sizeof(*o));
	o->path = kiln_arena_strdup(&r->arena, path);
	o->kind = kind;
	o->name = kiln_arena_strdup(&r->arena, name);
	o->arch = kiln_arena_strdup(&r->arena, arch);
	if (!o->path || !o->name || !o->arch)
		return kiln_err_set(err, KILN_ENOMEM, "out of memory");
	if (b->o->output_digests) {
		rc = util_digest_file_hex(UTIL_DIGEST_SHA256, path, o->sha256, err);
		if (rc)
			return rc;
	}
	r->noutputs++;
	return KILN_OK; /* "Wrote:" once the build has succeeded (worker_build) */
}

static void build_stage_record(struct build *b, const char *name, int64_t ms, int code)
{
	struct worker_build_result *r = b->res;

	if (r->nstages == r->capstages) {
		size_t ncap = r->capstages ? 2 * r->capstages : 8;
		struct worker_build_stage *nv = kiln_arena_array(&r->arena, ncap, sizeof(*nv));

		if (!nv)
			return;
		if (r->nstages)
			memcpy(nv, r->stages, r->nstages * sizeof(*nv));
		r->stages = nv;
		r->capstages = ncap;
	}
	r->stages[r->nstages].name = name;
	r->stages[r->nstages].ms = ms;
	r->stages[r->nstages].exit_code = code;
	r->nstages++;
}

/* ---------------------------------------------------------------------------------------- */
/* Time: SOURCE_DATE_EPOCH, the build time and the mtime policy. */

static kiln_rc build_times(struct build *b, struct kiln_err *err)
{
	struct worker_build_result *r = b->res;
	const char *bt;
	int64_t v;
	kiln_rc rc;

	r->source_date_epoch = -1;
	rc = b->o->source_date_epoch >= 0 ? KILN_OK : util_clock_source_date_epoch(&v, err);
	if (rc == KILN_OK && b->o->source_date_epoch >= 0) {
		r->source_date_epoch = b->o->source_date_epoch; /* the job's, not the process's */
	} else if (rc == KILN_OK) {
		r->source_date_epoch = v;
	} else if (rc == KILN_ENOTFOUND) {
		kiln_err_clear(err);
		if (build_macro_true(b, "source_date_epoch_from_changelog") &&
		    b->spec->nchangelog > 0)
			r->source_date_epoch = b->spec->changelog[0].time;
	} else {
		return rc;
	}
	r->buildtime = util_clock_wall();
	if (r->source_date_epoch >= 0 && build_macro_true(b, "use_source_date_epoch_as_buildtime"))
		r->buildtime = r->source_date_epoch;
	/* rpm 4.20's %_buildtime overrides both. */
	bt = macro_body_get(b->mc, "_buildtime");
	if (bt) {
		const char *x = worker_build_expand(b, bt, err);

		if (!x)
			return KILN_ENOMEM;
		if (util_parse_i64(x, strlen(x), 10, 0, INT64_C(0xffffffff), &v, err))
			return kiln_err_set(err, KILN_ESYNTAX, "%%_buildtime: not a time: %s", x);
		r->buildtime = v;
	}
	return KILN_OK;
}

/* %build_mtime_policy (rpm 4.20): clamp_to_buildtime, clamp_to_source_date_epoch, or
 * nothing; without it, rpm 4.18's %clamp_mtime_to_source_date_epoch. */
kiln_rc worker_build_mtime_clamp(struct build *b, bool *clamp, uint32_t *to, struct kiln_err *err)
{
	const struct worker_build_result *r = b->res;
	const char *policy = worker_build_expand(b, "%{?build_mtime_policy}", err);

	*clamp = false;
	*to = 0;
	if (!policy)
		return KILN_ENOMEM;
	if (!strcmp(policy, "clamp_to_buildtime")) {
		*clamp = true;
		*to = (uint32_t)r->buildtime;
	} else if (!strcmp(policy, "clamp_to_source_date_epoch") ||
	           (!*policy && build_macro_true(b, "clamp_mtime_to_source_date_epoch"))) {
		if (r->source_date_epoch >= 0) {
			*clamp = true;
			*to = (uint32_t)r->source_date_epoch;
		}
	} else if (*policy) {
		worker_build_warn(b, "unknown %%build_mtime_policy: %s (mtimes are not clamped)",
		                  policy);
	}
	return KILN_OK;
}

/* ---------------------------------------------------------------------------------------- */
/* The stage environment and executor. */

static kiln_rc build_env_make(struct build *b, struct kiln_err *err)
{
	const char *home = getenv("HOME");
	const char *user = getenv("USER");
	size_t n = 0, cap = 0;
	kiln_rc rc = KILN_OK;
	const char *add[8];
	size_t i, nadd = 0;

	if (b->o->exec && b->o->exec->kind == CHROOT_EXEC_SANDBOX)
		home = b->o->exec->home ? b->o->exec->home : "/builddir";
	add[nadd++] = "PATH=" BUILD_PATH;
	add[nadd++] = kiln_arena_printf(&b->arena, "HOME=%s", home && *home ? home : "/");
	add[nadd++] = kiln_arena_printf(&b->arena, "LANG=%s", b->o->lang ? b->o->lang : "C.UTF-8");
	add[nadd++] = "TZ=UTC";
	add[nadd++] = "SHELL=/bin/sh";
	if (user && *user)
		add[nadd++] = kiln_arena_printf(&b->arena, "USER=%s", user);
	if (b->res->source_date_epoch >= 0)
		add[nadd++] = kiln_arena_printf(&b->arena, "SOURCE_DATE_EPOCH=%lld",
		                                (long long)b->res->source_date_epoch);
	for (i = 0; i < nadd && !rc; i++) {
		if (!add[i])
			return kiln_err_set(err, KILN_ENOMEM, "out of memory");
		rc = build_strv_add(&b->arena, &b->env, &n, &cap, add[i], err);
	}
	return rc;
}

/* The sandbox sees the host's top directory at BUILD_SANDBOX_TOPDIR, writable, and gets
 * its host name, private paths and network from the build's macros. */
static kiln_rc build_exec_open(struct build *b, struct kiln_err *err)
{
	struct chroot_config cfg;
	struct chroot_bind *binds;
	const char *host, *paths, *nonet, *confdir;
	kiln_rc rc;

	if (!b->o->exec || b->o->exec->kind != CHROOT_EXEC_SANDBOX) {
		chroot_config_init(&cfg);
		if (b->o->exec)
			cfg = *b->o->exec;
		return chroot_exec_new(&cfg, &b->ex, err);
	}
	cfg = *b->o->exec;
	binds = kiln_arena_array(&b->arena, cfg.nbinds + 3, sizeof(*binds));
	host = worker_build_expand(b, "%{?_buildhost}", err);
	paths = host ? worker_build_expand(b, "%{?_build_unshare_paths}", err) : NULL;
	nonet = paths ? worker_build_expand(b, "%{?_build_unshare_nonet}", err) : NULL;
	if (!binds || !nonet)
		return err->code ? err->code : kiln_err_set(err, KILN_ENOMEM, "out of memory");
	if (cfg.nbinds)
		memcpy(binds, cfg.binds, cfg.nbinds * sizeof(*binds));
	binds[cfg.nbinds++] = (struct chroot_bind){b->topdir, BUILD_SANDBOX_TOPDIR, false};
	/* In place: the sources at their own path, so the link to them works on both sides. */
	if (b->inplace)
		binds[cfg.nbinds++] = (struct chroot_bind){b->inplace, b->inplace, false};
	/* kiln's helper scripts (rpmuncompress, find-lang.sh) at a fixed path. */
	confdir = worker_build_expand(b, "%{?_kiln_confdir}", err);
	if (!confdir)
		return KILN_ENOMEM;
	if (confdir[0] == '/' && util_is_dir(confdir)) {
		binds[cfg.nbinds++] = (struct chroot_bind){confdir, BUILD_SANDBOX_HELPERDIR, true};
		rc = macro_define(b->mc, "_kiln_helperdir", NULL, BUILD_SANDBOX_HELPERDIR,
		                  MACRO_LEVEL_CMDLINE, err);
		if (rc)
			return rc;
	}
	cfg.binds = binds;
	if (*host && !cfg.hostname)
		cfg.hostname = host;
	if (*paths && !cfg.tmpfs) {
		rc = chroot_config_tmpfs_parse(&cfg, paths, &b->arena, err);
		if (rc)
			return rc;
	}
	if (!strcmp(nonet, "0"))
		cfg.network = true;
	/* A fixed CPU count also caps %{_smp_build_ncpus}, which %{getncpus} computes in
	 * kiln's own process. */
	if (cfg.limits.cpus) {
		char n[16];

		snprintf(n, sizeof(n), "%u", cfg.limits.cpus);
		rc = macro_define(b->mc, "_smp_ncpus_max", NULL, n, MACRO_LEVEL_CMDLINE, err);
		if (rc)
			return rc;
	}
	rc = chroot_exec_new(&cfg, &b->ex, err);
	if (!rc) {
		b->res->sandboxed = true;
		b->res->network = cfg.network;
	}
	return rc;
}

static void build_sink(void *data, int stream, const char *buf, size_t len)
{
	struct build *b = data;
	size_t i;

	(void)stream;
	build_out_write(b, buf, len);
	for (i = 0; i < len; i++) {
		b->tail[b->tail_pos] = buf[i];
		b->tail_pos = (b->tail_pos + 1) % BUILD_TAIL_MAX;
		if (b->tail_len < BUILD_TAIL_MAX)
			b->tail_len++;
	}
}

/* Split a command line at blanks (the %__spec_*_cmd macros are plain words). */
static kiln_rc build_argv_split(struct build *b, const char *cmd, const char *script,
                                const char ***argv, struct kiln_err *err)
{
	size_t n = 0, cap = 0;
	const char *p = cmd;
	kiln_rc rc = KILN_OK;

	*argv = NULL;
	while (*p && !rc) {
		size_t len;

		while (*p == ' ' || *p == '\t' || *p == '\n')
			p++;
		len = strcspn(p, " \t\n");
		if (!len)
			break;
		rc = build_strv_add(&b->arena, argv, &n, &cap,
		                    kiln_arena_strndup(&b->arena, p, len), err);
		p += len;
	}
	if (!rc && !n)
		return kiln_err_set(err, KILN_EINVAL, "empty build command: %s", cmd);
	if (!rc)
		rc = build_strv_add(&b->arena, argv, &n, &cap, script, err);
	return rc;
}

/* The last lines of the stage output, for the error report. */
static void build_tail_copy(struct build *b, struct kiln_buf *out)
{
	size_t start = (b->tail_pos + BUILD_TAIL_MAX - b->tail_len) % BUILD_TAIL_MAX;
	size_t i;

	for (i = 0; i < b->tail_len; i++)
		kiln_buf_addch(out, b->tail[(start + i) % BUILD_TAIL_MAX]);
}

kiln_rc worker_build_script_run(struct build *b, const char *stage, const char *suffix,
                                const char *text, size_t len, const char *cmd,
                                struct kiln_buf *capture, int *code, struct kiln_err *err)
{
	struct chroot_result cres;
	struct chroot_run run;
	const char *script, *hscript, **argv;
	kiln_rc rc;

	*code = -1;
	script = kiln_arena_printf(&b->arena, "%s/.kiln-%s-%s%s.sh", b->in_builddir,
	                           rpmtag_set_get_str(b->spec->packages[0]->tags, RPMTAG_NAME),
	                           stage, suffix ? suffix : "");
	hscript = script ? worker_build_host_path(b, script) : NULL;
	if (!hscript)
		return kiln_err_set(err, KILN_ENOMEM, "out of memory");
	/* Made again by every run, like rpmbuild's mkstemp scripts: no fsync. */
	rc = util_write_atomic_nosync(hscript, text, len, 0755, err);
	if (!rc)
		rc = build_argv_split(b, cmd, script, &argv, err);
	if (rc)
		return rc;
	worker_build_log(b, "Executing(%%%s): %s %s\n", stage, cmd, script);
	memset(&run, 0, sizeof(run));
	run.argv = argv;
	run.env = b->env;
	run.cwd = b->in_builddir;
	run.stdin_fd = -1;
	run.stdout_fd = -1;
	run.stderr_fd = -1;
	run.capture = capture;
	run.sink = build_sink;
	run.sink_data = b;
	b->tail_len = b->tail_pos = 0;
	rc = chroot_exec_run(b->ex, &run, &cres, err);
	if (rc == KILN_ETIMEOUT) {
		char why[KILN_ERR_MSG_MAX];

		snprintf(why, sizeof(why), "%s", err->msg);
		kiln_err_clear(err);
		return kiln_err_set(err, KILN_ETIMEOUT, "Stage timed out: %s (%%%s): %s", script,
		                    stage, why);
	}
	if (rc)
		return rc;
	*code = cres.exit_code;
	if (cres.exit_code != 0 || cres.signal || cres.timed_out) {
		struct kiln_buf tail = KILN_BUF_INIT(KILN_LIMIT_TEXT_FILE);

		build_tail_copy(b, &tail);
		if (b->o->quiet && tail.len && b->o->out_fd >= 0)
			(void)!write(b->o->out_fd, tail.ptr, tail.len);
		kiln_buf_release(&tail);
		if (cres.timed_out)
			return kiln_err_set(err, KILN_ETIMEOUT, "Stage timed out: %s (%%%s)",
			                    script, stage);
		return kiln_err_set(err, KILN_EBUILD, "Bad exit status from %s (%%%s)", script,
		                    stage);
	}
	(void)unlink(hscript);
	return KILN_OK;
}

/* Run one stage: sec's body (NULL for an absent section: nothing runs) with its template.
 * capture (optional) receives the script's stdout instead of the log (%generate_buildrequires).
 * %install's post-install policy goes through brp.c, which does the steps it knows itself. */
static kiln_rc build_stage_run(struct build *b, enum spec_section sec, const char *body,
                               struct kiln_buf *capture, struct kiln_err *err)
{
	const char *name = spec_section_name(sec);
	const char *mname = sec == SPEC_SEC_BUILDREQUIRES ? "buildrequires" : name;
	const char *tmpl, *post, *cmd;
	struct kiln_buf text = KILN_BUF_INIT(KILN_LIMIT_TEXT_FILE);
	struct worker_brp_plan plan;
	int64_t t0 = util_clock_mono_ns();
	int code = -1;
	kiln_rc rc;

	memset(&plan, 0, sizeof(plan));
	tmpl = worker_build_expand(b, kiln_arena_printf(&b->arena, "%%{__spec_%s_template}", mname),
	                           err);
	post = tmpl ? worker_build_expand(
	                  b, kiln_arena_printf(&b->arena, "%%{__spec_%s_post}", mname), err)
	            : NULL;
	cmd = post ? worker_build_expand(
	                 b, kiln_arena_printf(&b->arena, "%%{__spec_%s_cmd}", mname), err)
	           : NULL;
	if (!cmd)
		return err->code ? err->code : KILN_ENOMEM;
	if (sec == SPEC_SEC_INSTALL) {
		rc = worker_brp_plan_make(b, post, &plan, err);
		if (rc)
			return rc;
		if (plan.nsteps)
			post = plan.lead;
	}
	kiln_buf_addstr(&text, tmpl);
	if (sec != SPEC_SEC_PREP && b->subdir)
		kiln_buf_addf(&text, "cd '%s'\n", b->subdir);
	kiln_buf_addstr(&text, body);
	if (text.len && text.ptr[text.len - 1] != '\n')
		kiln_buf_addch(&text, '\n');
	kiln_buf_addstr(&text, post);
	if (plan.nsteps)
		worker_brp_env_capture(&plan, &text);
	rc = kiln_buf_finish(&text, err);
	if (!rc)
		rc = worker_build_script_run(b, name, NULL, text.ptr, text.len, cmd, capture, &code,
		                             err);
	if (!rc && plan.nsteps)
		rc = worker_brp_plan_run(b, &plan, cmd, err);
	build_stage_record(b, name, (util_clock_mono_ns() - t0) / 1000000,
	                   rc == KILN_ETIMEOUT ? -1
	                   : rc && code == 0   ? 1
	                                       : code);
	kiln_buf_release(&text);
	return rc;
}

/* ---------------------------------------------------------------------------------------- */
/* Build dependencies. */

static const char *build_dep_op(uint32_t flags)
{
	switch (flags & (RPMTAG_DEP_LESS | RPMTAG_DEP_GREATER | RPMTAG_DEP_EQUAL)) {
	case RPMTAG_DEP_LESS:
		return "<";
	case RPMTAG_DEP_GREATER:
		return ">";
	case RPMTAG_DEP_EQUAL:
		return "=";
	case RPMTAG_DEP_LESS | RPMTAG_DEP_EQUAL:
		return "<=";
	case RPMTAG_DEP_GREATER | RPMTAG_DEP_EQUAL:
		return ">=";
	default:
		return NULL;
	}
}

/* ---- rich dependencies as a shell condition ---------------------------------------------
 * rpm -q --whatprovides takes no rich dependency, so "(a >= 1 or (b and c))" becomes
 * { q 'a' || { q 'b' && q 'c'; }; } with q asking the root's rpm database of one name:
 * and, or, if [else], unless [else] as rpm's rpmrichParse defines them; with and without
 * (which rpm applies to one package) as "and" and "and not". */

#define RICH_DEPTH_MAX 32

struct rich {
	const char *p;
	struct kiln_buf *out;
	bool bad;
};

static void rich_skip(struct rich *r)
{
	while (*r->p == ' ' || *r->p == '\t')
		r->p++;
}

/* The next word (not a parenthesis), length in *n. */
static const char *rich_word(struct rich *r, size_t *n)
{
	rich_skip(r);
	*n = strcspn(r->p, " \t()");
	return r->p;
}

static bool rich_is(const char *w, size_t n, const char *kw)
{
	return strlen(kw) == n && !strncmp(w, kw, n);
}

static void rich_expr(struct rich *r, int depth);

/* A term: "(expr)" or NAME [OP EVR], as a shell condition. */
static void rich_term(struct rich *r, int depth)
{
	struct kiln_buf leaf = KILN_BUF_INIT(KILN_LIMIT_LINE);
	const char *w;
	size_t n;

	rich_skip(r);
	if (*r->p == '(') {
		r->p++;
		rich_expr(r, depth + 1);
		rich_skip(r);
		if (*r->p != ')')
			r->bad = true;
		else
			r->p++;
		return;
	}
	w = rich_word(r, &n);
	if (!n) {
		r->bad = true;
		return;
	}
	kiln_buf_add(&leaf, w, n);
	r->p += n;
	w = rich_word(r, &n);
	/* The version is read past, not compared: rpm -q --whatprovides takes a name only,
	 * as for the other dependencies here (a root's resolution compared versions). */
	if (n && n <= 2 && strchr("<>=", w[0])) {
		r->p += n;
		w = rich_word(r, &n);
		r->bad = r->bad || !n;
		r->p += n;
	}
	kiln_buf_addstr(r->out, "q ");
	kiln_buf_add_shquoted(r->out, leaf.ptr ? leaf.ptr : "");
	kiln_buf_release(&leaf);
}

static void rich_expr(struct rich *r, int depth)
{
	struct kiln_buf a = KILN_BUF_INIT(KILN_LIMIT_LINE), b = KILN_BUF_INIT(KILN_LIMIT_LINE);
	struct kiln_buf c = KILN_BUF_INIT(KILN_LIMIT_LINE);
	struct kiln_buf *out = r->out;
	const char *w;
	size_t n;

	if (depth > RICH_DEPTH_MAX) {
		r->bad = true;
		return;
	}
	r->out = &a;
	rich_term(r, depth);
	w = rich_word(r, &n);
	if (rich_is(w, n, "and") || rich_is(w, n, "or") || rich_is(w, n, "with")) {
		const char *join = rich_is(w, n, "or") ? " || " : " && ";
		char op[8];

		snprintf(op, sizeof(op), "%.*s", (int)n, w);
		kiln_buf_addf(out, "{ %s", a.ptr);
		while (!r->bad && (w = rich_word(r, &n)) && rich_is(w, n, op)) {
			r->p += n;
			kiln_buf_reset(&b);
			r->out = &b;
			rich_term(r, depth);
			kiln_buf_addf(out, "%s%s", join, b.ptr);
		}
		kiln_buf_addstr(out, "; }");
	} else if (rich_is(w, n, "without")) {
		r->p += n;
		r->out = &b;
		rich_term(r, depth);
		kiln_buf_addf(out, "{ %s && ! %s; }", a.ptr, b.ptr);
	} else if (rich_is(w, n, "if") || rich_is(w, n, "unless")) {
		bool unless = rich_is(w, n, "unless"), has_else;

		r->p += n;
		r->out = &b;
		rich_term(r, depth);
		w = rich_word(r, &n);
		has_else = rich_is(w, n, "else");
		if (has_else) {
			r->p += n;
			r->out = &c;
			rich_term(r, depth);
		}
		/* A if B [else C]: B decides which of A and C is needed; unless the other way */
		kiln_buf_addf(out, "{ if %s%s; then %s; else %s; fi; }", unless ? "! " : "", b.ptr,
		              a.ptr, has_else ? c.ptr : "true");
	} else {
		kiln_buf_addstr(out, a.ptr ? a.ptr : "false");
	}
	r->out = out;
	kiln_buf_release(&a);
	kiln_buf_release(&b);
	kiln_buf_release(&c);
}

/* The shell condition for a rich dependency; false when it cannot be read (the check then
 * says "unchecked"). */
static bool build_rich_cond(const char *dep, struct kiln_buf *out)
{
	struct rich r = {dep, out, false};

	rich_term(&r, 0);
	rich_skip(&r);
	return !r.bad && !*r.p && !out->err;
}

/* One shell test per dependency; it prints "missing DEP", "present DEP" or "unchecked DEP".
 * Paths, pkgconfig() and cmake() are looked up in the root itself; anything else through
 * the root's rpm database when it has one. */
static void build_dep_test(struct kiln_buf *s, const char *what, const struct spec_dep *d)
{
	const char *op = build_dep_op(d->flags);
	size_t nlen = strlen(d->name);

	kiln_buf_addstr(s, "r=");
	if (d->name[0] == '/') {
		kiln_buf_addstr(s, "$( [ -e ");
		kiln_buf_add_shquoted(s, d->name);
		kiln_buf_addstr(s, " ] && echo present || echo missing)");
	} else if (!strncmp(d->name, "pkgconfig(", 10) && d->name[nlen - 1] == ')') {
		struct kiln_buf q = KILN_BUF_INIT(KILN_LIMIT_TEXT_FILE);

		kiln_buf_add(&q, d->name + 10, nlen - 11);
		if (op && *d->evr)
			kiln_buf_addf(&q, " %s %s", op, d->evr);
		kiln_buf_addstr(s, "$(if ! command -v pkg-config >/dev/null; then echo unchecked; "
		                   "elif pkg-config --exists ");
		kiln_buf_add_shquoted(s, q.ptr ? q.ptr : "");
		kiln_buf_addstr(s, " 2>/dev/null; then echo present; else echo missing; fi)");
		kiln_buf_release(&q);
	} else if (!strncmp(d->name, "cmake(", 6) && d->name[nlen - 1] == ')') {
		struct kiln_buf q = KILN_BUF_INIT(KILN_LIMIT_TEXT_FILE);

		kiln_buf_add(&q, d->name + 6, nlen - 7);
		kiln_buf_addstr(s, "$(n=");
		kiln_buf_add_shquoted(s, q.ptr ? q.ptr : "");
		kiln_buf_addstr(s, "; l=$(printf %s \"$n\" | tr A-Z a-z); r=missing; "
		                   "for d in /usr/lib/cmake /usr/lib64/cmake /usr/share/cmake "
		                   "/usr/lib/*/cmake /usr/local/lib/cmake; do for f in "
		                   "\"$d\"/*/\"$n\"Config.cmake \"$d\"/*/\"$l\"-config.cmake; do "
		                   "[ -e \"$f\" ] && r=present; done; done; echo $r)");
		kiln_buf_release(&q);
	} else if (d->name[0] == '(') {
		struct kiln_buf cond = KILN_BUF_INIT(KILN_LIMIT_TEXT_FILE);

		if (build_rich_cond(d->name, &cond))
			kiln_buf_addf(s,
			              "$(if [ -z \"$rpmdb\" ]; then echo unchecked; elif %s; "
			              "then echo present; else echo missing; fi)",
			              cond.ptr);
		else
			kiln_buf_addstr(s, "unchecked");
		kiln_buf_release(&cond);
	} else {
		kiln_buf_addstr(s, "$(if [ -z \"$rpmdb\" ]; then echo unchecked; "
		                   "elif rpm -q --whatprovides ");
		kiln_buf_add_shquoted(s, d->name);
		kiln_buf_addstr(s, " >/dev/null 2>&1; then echo present; else echo missing; fi)");
	}
	kiln_buf_addf(s, "; echo \"$r %s ", what);
	kiln_buf_addstr(s, "\"");
	kiln_buf_add_shquoted(s, d->name);
	if (op && *d->evr) {
		kiln_buf_addf(s, "' %s '", op);
		kiln_buf_add_shquoted(s, d->evr);
	}
	kiln_buf_addstr(s, "\n");
}

/* Check deps (BuildRequires, or what %generate_buildrequires printed) and conflicts in
 * the build root. *unmet counts the missing ones (reported as rpm does). */
static kiln_rc build_deps_check(struct build *b, const struct spec_deps *req,
                                const struct spec_deps *conf, size_t *unmet, struct kiln_err *err)
{
	struct kiln_buf s = KILN_BUF_INIT(KILN_LIMIT_TEXT_FILE), out = KILN_BUF_INIT(1 << 20);
	struct kiln_buf report = KILN_BUF_INIT(KILN_LIMIT_TEXT_FILE);
	const char *argv[] = {"/bin/sh", "-c", NULL, NULL};
	const char *nvr;
	struct chroot_result cres;
	struct chroot_run run;
	char *line, *rest;
	size_t i;
	kiln_rc rc;

	*unmet = 0;
	if (!req->n && !conf->n)
		return KILN_OK;
	nvr = worker_build_expand(b, "%{NAME}-%{VERSION}-%{RELEASE}", err);
	if (!nvr)
		return KILN_ENOMEM;
	kiln_buf_addstr(&s, "rpmdb=; if command -v rpm >/dev/null && { [ -e "
	                    "/var/lib/rpm/rpmdb.sqlite ] || [ -e /var/lib/rpm/Packages ] || "
	                    "[ -e /var/lib/rpm/Packages.db ]; }; then rpmdb=1; fi\n"
	                    "q() { rpm -q --whatprovides \"$1\" >/dev/null 2>&1; }\n");
	for (i = 0; i < req->n; i++)
		build_dep_test(&s, "R", &req->v[i]);
	for (i = 0; i < conf->n; i++)
		build_dep_test(&s, "C", &conf->v[i]);
	rc = kiln_buf_finish(&s, err);
	if (rc)
		goto out;
	argv[2] = s.ptr;
	memset(&run, 0, sizeof(run));
	run.argv = argv;
	run.env = b->env;
	run.stdin_fd = run.stdout_fd = run.stderr_fd = -1;
	run.capture = &out;
	rc = chroot_exec_run(b->ex, &run, &cres, err);
	if (!rc && cres.exit_code != 0)
		rc = kiln_err_set(err, KILN_EBUILD, "build dependency check failed (exit %d)",
		                  cres.exit_code);
	if (!rc)
		rc = kiln_buf_finish(&out, err);
	if (rc)
		goto out;
	for (rest = out.ptr; (line = build_line_next(&rest)) != NULL;) {
		bool conflict =
		    !strncmp(line, "present C ", 10) || !strncmp(line, "missing C ", 10);
		const char *dep = line + 10;

		if (strlen(line) < 10)
			continue;
		if (!strncmp(line, "missing R ", 10)) {
			kiln_buf_addf(&report, "\n\t%s is needed by %s", dep, nvr);
			(*unmet)++;
		} else if (!strncmp(line, "present C ", 10)) {
			kiln_buf_addf(&report, "\n\t%s conflicts with %s", dep, nvr);
			(*unmet)++;
		} else if (!strncmp(line, "unchecked ", 10)) {
			worker_build_warn(
			    b,
			    "build dependency not checked (no rpm database in the build "
			    "root): %s",
			    line + 12);
		}
		(void)conflict;
	}
	if (*unmet) {
		rc = kiln_buf_finish(&report, err);
		if (!rc)
			rc = kiln_err_set(err, KILN_EBUILD, "Failed build dependencies:%s",
			                  report.ptr);
	}
out:
	kiln_buf_release(&s);
	kiln_buf_release(&out);
	kiln_buf_release(&report);
	return rc;
}

/* What %generate_buildrequires printed: one dependency per line ("name" or
 * "name OP version"), as rpm reads it. */
static kiln_rc build_genreqs_parse(struct build *b, char *text, struct spec_deps *out,
                                   struct kiln_err *err)
{
	struct worker_build_result *r = b->res;
	char *line, *rest;

	for (rest = text; (line = build_line_next(&rest)) != NULL;) {
		const char *keep;
		kiln_rc rc;

		while (*line == ' ' || *line == '\t')
			line++;
		if (!*line)
			continue;
		/* kept for a caller that installs them (a root's next round) */
		keep = kiln_arena_strdup(&r->arena, line);
		if (!keep || !kiln_arena_strv_add(&r->arena, &r->genreqs, &r->ngenreqs,
		                                  &r->capgenreqs, keep))
			return kiln_err_set(err, KILN_ENOMEM, "out of memory");
		rc = spec_deps_add_text(b->spec, out, line, err);
		if (rc)
			return rc;
	}
	return KILN_OK;
}

/* ---------------------------------------------------------------------------------------- */
/* The pipeline. */

/* The build's directories as the host sees them (b->topdir was set before the parse). */
static kiln_rc build_dirs(struct build *b, struct kiln_err *err)
{
	struct {
		const char **dst;
		const char *expr;
	} d[] = {
	    {&b->builddir, "%{_builddir}"},   {&b->buildroot, "%{buildroot}"},
	    {&b->sourcedir, "%{_sourcedir}"}, {&b->specdir, "%{_specdir}"},
	    {&b->rpmdir, "%{_rpmdir}"},       {&b->srcrpmdir, "%{_srcrpmdir}"},
	};
	const char *sub, *v;
	size_t i;

	for (i = 0; i < KILN_ARRAY_SIZE(d); i++) {
		v = worker_build_expand(b, d[i].expr, err);
		if (!v)
			return err->code ? err->code : KILN_ENOMEM;
		if (v[0] != '/')
			return kiln_err_set(err, KILN_EINVAL, "%s is not an absolute path: %s",
			                    d[i].expr, v);
		if (i == 0)
			b->in_builddir = v;
		*d[i].dst = worker_build_host_path(b, v);
		if (b->in_top && *d[i].dst == v)
			return kiln_err_set(err, KILN_EINVAL,
			                    "in the sandbox %s must be under %%{_topdir} (%s): %s",
			                    d[i].expr, b->in_top, v);
	}
	sub = macro_body_get(b->mc, "buildsubdir");
	b->subdir = sub ? worker_build_expand(b, sub, err) : NULL;
	if (sub && !b->subdir)
		return KILN_ENOMEM;
	return KILN_OK;
}

/* Before the parse: the host's top directory, and with the sandbox the fixed one the
 * macros will use from now on. */
static kiln_rc build_topdir(struct build *b, struct kiln_err *err)
{
	b->topdir = worker_build_expand(b, "%{_topdir}", err);
	if (!b->topdir)
		return err->code ? err->code : KILN_ENOMEM;
	if (b->topdir[0] != '/')
		return kiln_err_set(err, KILN_EINVAL, "%%{_topdir} is not an absolute path: %s",
		                    b->topdir);
	if (!b->o->exec || b->o->exec->kind != CHROOT_EXEC_SANDBOX)
		return KILN_OK;
	b->in_top = BUILD_SANDBOX_TOPDIR;
	if (macro_ctx_set_path_map(b->mc, b->in_top, b->topdir, err))
		return err->code;
	return macro_define(b->mc, "_topdir", NULL, b->in_top, MACRO_LEVEL_CMDLINE, err);
}

static kiln_rc build_log_open(struct build *b, struct kiln_err *err)
{
	const char *path;
	kiln_rc rc = util_mkdir_p(b->builddir, 0755, err);

	if (rc)
		return rc;
	path = worker_build_expand(b, "%{_builddir}/%{NAME}-%{VERSION}-%{RELEASE}.build.log", err);
	path = path ? worker_build_host_path(b, path) : NULL;
	if (!path)
		return KILN_ENOMEM;
	b->log_fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (b->log_fd < 0)
		return kiln_err_sys(err, KILN_EIO, "cannot create the build log %s", path);
	b->res->log_path = kiln_arena_strdup(&b->res->arena, path);
	return KILN_OK;
}

/* Make the spec's sources present before %prep or the source package: the fetcher works
 * on host paths, the spec's are the stages' (the sandbox's), so they are swapped for the
 * call. */
static kiln_rc build_fetch(struct build *b, struct kiln_err *err)
{
	struct sources_fetch_opts def;
	const struct sources_fetch_opts *fo = b->o->fetch;
	const char **saved;
	size_t i, n = b->spec->nsources;
	kiln_rc rc;

	if (!fo) {
		const char *off = worker_build_expand(b, "%{?_disable_source_fetch}", err);

		if (!off)
			return KILN_ENOMEM;
		if (strcmp(off, "0") != 0)
			return KILN_OK;
		memset(&def, 0, sizeof(def));
		def.retries = -1;
		fo = &def;
	}
	saved = kiln_arena_array(&b->arena, n ? n : 1, sizeof(*saved));
	if (!saved)
		return kiln_err_set(err, KILN_ENOMEM, "out of memory");
	for (i = 0; i < n; i++) {
		saved[i] = b->spec->sources[i].path;
		b->spec->sources[i].path = worker_build_host_path(b, saved[i]);
	}
	rc = sources_global_init(err);
	if (!rc)
		rc = sources_fetch(b->spec, fo, NULL, err);
	for (i = 0; i < n; i++)
		b->spec->sources[i].path = saved[i];
	return rc;
}

static bool build_wants_root(unsigned steps)
{
	return steps & (WORKER_STEP_PREP | WORKER_STEP_CONF | WORKER_STEP_BUILD |
	                WORKER_STEP_INSTALL | WORKER_STEP_CHECK | WORKER_STEP_BUILDREQS);
}

static kiln_rc build_buildreqs(struct build *b, struct kiln_err *err)
{
	struct kiln_buf out = KILN_BUF_INIT(1 << 20);
	struct spec_deps gen = {0}, none = {0};
	size_t unmet = 0;
	kiln_rc rc;

	rc = build_stage_run(b, SPEC_SEC_BUILDREQUIRES, b->spec->sections[SPEC_SEC_BUILDREQUIRES],
	                     &out, err);
	if (!rc)
		rc = kiln_buf_finish(&out, err);
	if (!rc)
		rc = build_genreqs_parse(b, out.ptr, &gen, err);
	if (!rc && !b->o->nodeps)
		rc = build_deps_check(b, &gen, &none, &unmet, err);
	if (rc == KILN_EBUILD && unmet && (b->o->steps & WORKER_STEP_BUILDREQS)) {
		/* -br: report and let the caller exit 11 as rpmbuild does. */
		kiln_log(KILN_LOG_ERROR, "%s", err->msg);
		kiln_err_clear(err);
		b->res->buildreqs_unmet = true;
		rc = KILN_OK;
	}
	kiln_buf_release(&out);
	return rc;
}

static kiln_rc build_clean(struct build *b, struct kiln_err *err)
{
	const char *body = b->spec->sections[SPEC_SEC_CLEAN];

	if (body)
		return build_stage_run(b, SPEC_SEC_CLEAN, body, NULL, err);
	/* rpm's implicit %clean removes the buildroot. */
	return util_rm_rf(b->buildroot, err);
}

static kiln_rc build_remove_after(struct build *b, struct kiln_err *err)
{
	unsigned steps = b->o->steps;
	kiln_rc rc = KILN_OK;
	size_t i;

	/* In place the build directory is the sources: --clean leaves it (rpm 4.20). */
	if ((steps & WORKER_STEP_RMBUILD) && b->subdir && !b->inplace) {
		const char *p = kiln_arena_printf(&b->arena, "%s/%s", b->builddir, b->subdir);

		rc = p ? util_rm_rf(p, err) : KILN_ENOMEM;
	}
	for (i = 0; !rc && (steps & WORKER_STEP_RMSOURCE) && i < b->spec->nsources; i++) {
		const char *src = worker_build_host_path(b, b->spec->sources[i].path);

		if (src && unlink(src) && errno != ENOENT)
			rc = kiln_err_sys(err, KILN_EIO, "cannot remove %s",
			                  b->spec->sources[i].path);
	}
	if (!rc && (steps & WORKER_STEP_RMSPEC) && unlink(b->o->spec_path) && errno != ENOENT)
		rc = kiln_err_sys(err, KILN_EIO, "cannot remove %s", b->o->spec_path);
	return rc;
}

static kiln_rc build_stages(struct build *b, struct kiln_err *err)
{
	const struct worker_build_opts *o = b->o;
	const char *const *sec = (const char *const *)b->spec->sections;
	kiln_rc rc = KILN_OK;

	/* Absent sections do not run, as in rpmbuild. */
	/* In place there is nothing to unpack: %prep does not run (rpm 4.20). */
	if ((o->steps & WORKER_STEP_PREP) && !o->noprep && !b->inplace && sec[SPEC_SEC_PREP])
		rc = build_stage_run(b, SPEC_SEC_PREP, sec[SPEC_SEC_PREP], NULL, err);
	if (!rc && (o->steps & (WORKER_STEP_CONF | WORKER_STEP_BUILDREQS)) &&
	    sec[SPEC_SEC_BUILDREQUIRES])
		rc = build_buildreqs(b, err);
	if (rc || (o->steps & WORKER_STEP_BUILDREQS))
		return rc;
	if ((o->steps & WORKER_STEP_CONF) && sec[SPEC_SEC_CONF])
		rc = build_stage_run(b, SPEC_SEC_CONF, sec[SPEC_SEC_CONF], NULL, err);
	if (!rc && (o->steps & WORKER_STEP_BUILD) && sec[SPEC_SEC_BUILD])
		rc = build_stage_run(b, SPEC_SEC_BUILD, sec[SPEC_SEC_BUILD], NULL, err);
	if (!rc && (o->steps & WORKER_STEP_INSTALL) && sec[SPEC_SEC_INSTALL])
		rc = build_stage_run(b, SPEC_SEC_INSTALL, sec[SPEC_SEC_INSTALL], NULL, err);
	if (!rc && (o->steps & WORKER_STEP_CHECK) && !o->nocheck && sec[SPEC_SEC_CHECK])
		rc = build_stage_run(b, SPEC_SEC_CHECK, sec[SPEC_SEC_CHECK], NULL, err);
	return rc;
}

/* --build-in-place (rpm 4.20's build/build.c buildSpec and doBuildDir): the sources are
 * the directory kiln runs in. Before the parse: remember it. */
static kiln_rc build_inplace_init(struct build *b, struct kiln_err *err)
{
	char cwd[PATH_MAX];

	if (!b->o->build_in_place)
		return KILN_OK;
	if (!getcwd(cwd, sizeof(cwd)))
		return kiln_err_sys(err, KILN_EIO,
		                    "--build-in-place: cannot get the current directory");
	if (!strcmp(cwd, "/"))
		return kiln_err_set(err, KILN_EINVAL, "--build-in-place: not from /");
	b->inplace = kiln_arena_strdup(&b->arena, cwd);
	return b->inplace ? KILN_OK : kiln_err_set(err, KILN_ENOMEM, "out of memory");
}

/* After the parse: rpm 4.20 always has %{buildsubdir} %{NAME}-%{VERSION} in place (what
 * %setup of the spec said does not count: %prep does not run). */
static kiln_rc build_inplace_subdir(struct build *b, struct kiln_err *err)
{
	const char *sub = worker_build_expand(b, "%{NAME}-%{VERSION}", err);

	if (!sub)
		return err->code ? err->code : KILN_ENOMEM;
	return macro_define(b->mc, "buildsubdir", NULL, sub, MACRO_LEVEL_SPEC, err);
}

/* path is dir or below it. */
static bool path_within(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	return !strncmp(path, dir, n) && (path[n] == '\0' || path[n] == '/');
}

/* rpm 4.20's %mkbuilddir in place: %{_builddir}/%{buildsubdir} becomes a symbolic link to
 * the sources, replacing what was there (an unpacked tree or an older link). rpm 4.18
 * instead made %{_builddir} itself the current directory and ran %prep with a %setup
 * that did nothing; kiln follows 4.20, whose stages see the usual layout. */
static kiln_rc build_inplace_link(struct build *b, struct kiln_err *err)
{
	const char *link = kiln_arena_printf(&b->arena, "%s/%s", b->builddir, b->subdir);
	kiln_rc rc;

	if (!link)
		return kiln_err_set(err, KILN_ENOMEM, "out of memory");
	/* The link replaces link's tree: never the sources themselves. */
	if (path_within(b->inplace, link) || path_within(link, b->inplace))
		return kiln_err_set(err, KILN_EINVAL,
		                    "--build-in-place: %s is inside the build directory %s",
		                    b->inplace, link);
	rc = util_mkdir_p(b->builddir, 0755, err);
	if (!rc)
		rc = util_rm_rf(link, err);
	if (!rc && symlink(b->inplace, link) < 0)
		rc = kiln_err_sys(err, KILN_EIO, "cannot link %s to %s", link, b->inplace);
	return rc;
}

static kiln_rc build_run(struct build *b, struct kiln_err *err)
{
	const struct worker_build_opts *o = b->o;
	unsigned flags = o->anyarch ? SPEC_PARSE_ANYARCH : 0;
	size_t unmet = 0;
	int64_t t0;
	kiln_rc rc;

	rc = build_topdir(b, err);
	if (!rc)
		rc = util_mkdir_p(b->topdir, 0755, err);
	if (!rc)
		rc = build_inplace_init(b, err);
	/* The executor comes first: the parse's %(...) run in the sandbox too. */
	if (!rc)
		rc = build_exec_open(b, err);
	if (!rc)
		rc = build_env_make(b, err);
	if (rc)
		return rc;
	if (b->in_top) {
		b->shell.exec = b->ex;
		b->shell.env = b->env;
		b->shell.stderr_fd = STDERR_FILENO;
		macro_ctx_set_shell(b->mc, chroot_shell_run, &b->shell);
	}
	rc = spec_parse_file(o->spec_path, b->mc, flags, &b->spec, err);
	if (!rc && b->inplace)
		rc = build_inplace_subdir(b, err);
	if (!rc)
		rc = build_dirs(b, err);
	if (!rc)
		rc = build_times(b, err);
	if (!rc)
		rc = build_log_open(b, err);
	if (!rc)
		rc = build_env_make(b, err); /* again, now with SOURCE_DATE_EPOCH */
	b->shell.env = b->env;
	if (rc)
		return rc;
	if (o->steps & (WORKER_STEP_PREP | WORKER_STEP_SOURCE)) {
		rc = build_fetch(b, err);
		if (rc)
			return rc;
	}
	if (build_wants_root(o->steps) && !o->nodeps)
		rc = build_deps_check(b, &b->spec->buildrequires, &b->spec->buildconflicts, &unmet,
		                      err);
	b->res->building = rc == KILN_OK;
	if (!rc && b->inplace &&
	    (o->steps &
	     (WORKER_STEP_PREP | WORKER_STEP_CONF | WORKER_STEP_BUILD | WORKER_STEP_INSTALL)))
		rc = build_inplace_link(b, err);
	if (!rc)
		rc = build_stages(b, err);
	if (rc || b->res->buildreqs_unmet || (o->steps & WORKER_STEP_BUILDREQS))
		return rc;
	t0 = util_clock_mono_ns();
	if (o->steps & WORKER_STEP_SOURCE)
		rc = worker_build_source(b, err);
	if (!rc && (o->steps & (WORKER_STEP_BINARY | WORKER_STEP_FILECHECK)))
		rc = worker_build_binaries(b, (o->steps & WORKER_STEP_BINARY) != 0, err);
	if (o->steps & (WORKER_STEP_SOURCE | WORKER_STEP_BINARY | WORKER_STEP_FILECHECK))
		build_stage_record(b, "package", (util_clock_mono_ns() - t0) / 1000000, rc ? 1 : 0);
	if (!rc && (o->steps & WORKER_STEP_CLEAN) && !o->noclean)
		rc = build_clean(b, err);
	if (!rc)
		rc = build_remove_after(b, err);
	return rc;
}

kiln_rc worker_build(const struct worker_build_opts *o, struct macro_ctx *mc,
                     struct worker_build_result *res, struct kiln_err *err)
{
	struct build b;
	kiln_rc rc;
	size_t i;

	memset(res, 0, sizeof(*res));
	kiln_arena_init(&res->arena, KILN_LIMIT_ARENA);
	res->source_date_epoch = -1;
	memset(&b, 0, sizeof(b));
	b.o = o;
	b.mc = mc;
	b.res = res;
	b.log_fd = -1;
	kiln_arena_init(&b.arena, KILN_LIMIT_ARENA);
	if (o->has_source_pkgid) {
		memcpy(b.srcpkgid, o->source_pkgid, sizeof(b.srcpkgid));
		b.has_srcpkgid = true;
	}

	rc = build_run(&b, err);
	if (b.in_top) {
		macro_ctx_set_shell(mc, NULL, NULL); /* b.shell goes out of scope */
		if (macro_ctx_set_path_map(mc, NULL, NULL, NULL))
			KILN_BUG("clearing the path map cannot fail");
	}
	if (rc) {
		/* Nothing half-done stays in the output directories. */
		for (i = 0; i < b.nwritten; i++)
			(void)unlink(b.written[i]);
		res->noutputs = 0;
		if (err->input[0] == '\0' && b.spec)
			kiln_err_locate(err, o->spec_path, 0, 0);
		if (b.log_fd >= 0)
			dprintf(b.log_fd, "error: %s\n", err->msg);
	}
	if (!rc)
		rc = kiln_arena_finish(&b.arena, err);
	/* rpmbuild names each package it wrote; a failed build removed them, so it names none. */
	for (i = 0; !rc && i < res->noutputs; i++)
		worker_build_log(&b, "Wrote: %s\n", res->outputs[i].path);
	if (b.log_fd >= 0)
		close(b.log_fd);
	chroot_exec_free(b.ex);
	spec_free(b.spec);
	kiln_arena_release(&b.arena);
	return rc;
}

void worker_build_result_release(struct worker_build_result *res)
{
	kiln_arena_release(&res->arena);
	memset(res, 0, sizeof(*res));
}
