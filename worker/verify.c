/*
 * verify.c - kiln build --verify-reproducible: build N times with deliberate variations
 * and compare every package, naming what differs (pack_diff_files()).
 *
 * The variations are the ones rebuilders and reprotest use: the top directory's path
 * outside the sandbox, the wall clock, the umask outside, the sandbox's host name and CPU
 * count, noise in kiln's environment, and the order directories list in (the sandbox sees
 * the top directory through disorderfs, reversed, as reprotest's fileordering does); and
 * where kiln is installed (its helper scripts copied to another directory).
 * Build paths inside the sandbox never vary (/builddir/build), so a package that embeds
 * them is still reproducible, as in mock and Koji.
 */
#include "util/util.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "worker/worker.h"

static kiln_rc verify_diff_add(struct worker_verify_result *vr, unsigned run, const char *pkg,
                               const char *what, struct kiln_err *err)
{
	struct worker_verify_diff *d;

	if (vr->ndiffs == vr->capdiffs) {
		size_t ncap = vr->capdiffs ? 2 * vr->capdiffs : 16;
		struct worker_verify_diff *nv = kiln_arena_array(&vr->arena, ncap, sizeof(*nv));

		if (!nv)
			return kiln_err_set(err, KILN_ENOMEM, "out of memory");
		if (vr->ndiffs)
			memcpy(nv, vr->diffs, vr->ndiffs * sizeof(*nv));
		vr->diffs = nv;
		vr->capdiffs = ncap;
	}
	d = &vr->diffs[vr->ndiffs];
	d->run = run;
	d->package = kiln_arena_strdup(&vr->arena, pkg);
	d->what = kiln_arena_strdup(&vr->arena, what);
	if (!d->package || !d->what)
		return kiln_err_set(err, KILN_ENOMEM, "out of memory");
	vr->ndiffs++;
	return KILN_OK;
}

/* `kiln diff`'s report of one differing package, kept for the caller to print. */
static kiln_rc verify_report_add(struct worker_verify_result *vr, unsigned run, const char *pkg,
                                 const struct pack_diff *d, const char *old_path,
                                 const char *new_path, struct kiln_err *err)
{
	struct kiln_buf text = KILN_BUF_INIT(KILN_LIMIT_TEXT_FILE);
	struct worker_verify_report *r;
	kiln_rc rc = pack_diff_format(d, old_path, new_path, 0, &text, err);

	if (rc == KILN_ELIMIT) { /* a huge report: what fits is still worth reading */
		kiln_err_clear(err);
		rc = KILN_OK;
	}
	if (!rc && vr->nreports == vr->capreports) {
		size_t ncap = vr->capreports ? 2 * vr->capreports : 8;
		struct worker_verify_report *nv = kiln_arena_array(&vr->arena, ncap, sizeof(*nv));

		if (!nv)
			rc = kiln_err_set(err, KILN_ENOMEM, "out of memory");
		else if (vr->nreports)
			memcpy(nv, vr->reports, vr->nreports * sizeof(*nv));
		if (nv) {
			vr->reports = nv;
			vr->capreports = ncap;
		}
	}
	if (!rc) {
		r = &vr->reports[vr->nreports];
		r->run = run;
		r->package = kiln_arena_strdup(&vr->arena, pkg);
		r->text = kiln_arena_strdup(&vr->arena, text.ptr);
		if (!r->package || !r->text)
			rc = kiln_err_set(err, KILN_ENOMEM, "out of memory");
		else
			vr->nreports++;
	}
	kiln_buf_release(&text);
	return rc;
}

/* One line per difference, the way a packager wants to read it. */
static void verify_item_text(const struct pack_diff_item *it, char *dst, size_t size)
{
	const char *o = it->old_v.count ? it->old_v.elems[0] : "(none)";
	const char *n = it->new_v.count ? it->new_v.elems[0] : "(none)";

	switch (it->kind) {
	case PACK_DIFF_LEAD:
		snprintf(dst, size, "lead %s: %s != %s", it->name, o, n);
		break;
	case PACK_DIFF_TAG:
		snprintf(dst, size, "tag %s: %s != %s", it->name, o, n);
		break;
	case PACK_DIFF_FILE_ADDED:
		snprintf(dst, size, "%s: only in the rerun", it->path);
		break;
	case PACK_DIFF_FILE_REMOVED:
		snprintf(dst, size, "%s: missing in the rerun", it->path);
		break;
	case PACK_DIFF_FILE_ATTR:
		snprintf(dst, size, "%s: %s %s != %s", it->path, it->name, o, n);
		break;
	case PACK_DIFF_FILE_CONTENT:
		snprintf(dst, size, "%s: contents differ (sha256 %.12s != %.12s)", it->path,
		         it->old_sha256, it->new_sha256);
		break;
	case PACK_DIFF_BYTES:
	default:
		snprintf(dst, size, "%s bytes differ", it->name ? it->name : "package");
		break;
	}
}

static const char *verify_rel(const char *top, const char *path)
{
	size_t n = strlen(top);

	if (!strncmp(path, top, n) && path[n] == '/')
		return path + n + 1;
	return path;
}

/* Compare the first run's packages with a rerun's. */
static kiln_rc verify_compare(struct worker_verify_result *vr, unsigned run, const char *top1,
                              const char *topk, const struct worker_build_result *rk,
                              struct kiln_err *err)
{
	const struct worker_build_result *r1 = &vr->first;
	char what[1024];
	kiln_rc rc = KILN_OK;
	size_t i, j;

	for (i = 0; i < r1->noutputs && !rc; i++) {
		const char *rel = verify_rel(top1, r1->outputs[i].path);
		const struct worker_build_output *other = NULL;
		struct pack_diff d = {0};

		for (j = 0; j < rk->noutputs; j++) {
			if (!strcmp(rel, verify_rel(topk, rk->outputs[j].path)))
				other = &rk->outputs[j];
		}
		if (!other) {
			rc = verify_diff_add(vr, run, rel, "not written by the rerun", err);
			continue;
		}
		if (!strcmp(r1->outputs[i].sha256, other->sha256))
			continue;
		rc = pack_diff_files(r1->outputs[i].path, other->path, NULL, &d, err);
		for (j = 0; !rc && j < d.n; j++) {
			verify_item_text(&d.items[j], what, sizeof(what));
			rc = verify_diff_add(vr, run, rel, what, err);
		}
		if (!rc && d.n)
			rc = verify_report_add(vr, run, rel, &d, r1->outputs[i].path, other->path,
			                       err);
		/* Only the signature headers differ (signed in the first run only). */
		pack_diff_release(&d);
	}
	for (j = 0; j < rk->noutputs && !rc; j++) {
		const char *rel = verify_rel(topk, rk->outputs[j].path);
		bool known = false;

		for (i = 0; i < r1->noutputs; i++)
			known |= !strcmp(rel, verify_rel(top1, r1->outputs[i].path));
		if (!known)
			rc = verify_diff_add(vr, run, rel, "written only by the rerun", err);
	}
	return rc;
}

/* Copy the regular files directly in from_dir (none when it does not exist) into the
 * existing directory to_dir. */
static kiln_rc verify_copy_files(const char *from_dir, const char *to_dir, struct kiln_err *err)
{
	struct kiln_buf from = KILN_BUF_INIT(KILN_LIMIT_PATH), to = KILN_BUF_INIT(KILN_LIMIT_PATH);
	kiln_rc rc = KILN_OK;
	struct dirent *e;
	DIR *d = opendir(from_dir);

	if (!d && errno == ENOENT)
		return KILN_OK;
	if (!d)
		return kiln_err_sys(err, KILN_EIO, "cannot read '%s'", from_dir);
	while (!rc && (e = readdir(d)) != NULL) {
		struct stat st;

		kiln_buf_reset(&from);
		kiln_buf_addf(&from, "%s/%s", from_dir, e->d_name);
		if (e->d_name[0] == '.' || kiln_buf_finish(&from, err) || stat(from.ptr, &st) ||
		    !S_ISREG(st.st_mode))
			continue;
		kiln_buf_reset(&to);
		kiln_buf_addf(&to, "%s/%s", to_dir, e->d_name);
		rc = kiln_buf_finish(&to, err);
		if (!rc)
			rc = util_copy_file(from.ptr, to.ptr, st.st_mode & 07777, err);
	}
	closedir(d);
	kiln_buf_release(&from);
	kiln_buf_release(&to);
	return rc;
}

/* A fresh top directory with a copy of the sources. */
static kiln_rc verify_topdir(struct macro_ctx *mc, const char *srcdir, unsigned run, char *top,
                             size_t size, struct kiln_err *err)
{
	const char *tmp = getenv("TMPDIR");
	struct kiln_buf to = KILN_BUF_INIT(KILN_LIMIT_PATH);
	kiln_rc rc;

	snprintf(top, size, "%s/kiln-verify-%u-XXXXXX", tmp && *tmp ? tmp : "/tmp", run);
	if (!mkdtemp(top))
		return kiln_err_sys(err, KILN_EIO, "cannot create a directory for rerun %u", run);
	rc = macro_define(mc, "_topdir", NULL, top, MACRO_LEVEL_CMDLINE, err);
	if (!rc)
		rc = macro_define(mc, "_sourcedir", NULL, "%{_topdir}/SOURCES", MACRO_LEVEL_CMDLINE,
		                  err);
	kiln_buf_addf(&to, "%s/SOURCES", top);
	if (!rc)
		rc = kiln_buf_finish(&to, err);
	if (!rc)
		rc = util_mkdir_p(to.ptr, 0755, err);
	if (!rc)
		rc = verify_copy_files(srcdir, to.ptr, err);
	kiln_buf_release(&to);
	return rc;
}

/* kiln installed somewhere else: its helper scripts (what %_kiln_confdir holds besides the
 * macro files, which are already loaded) copied to conf, which the rerun's %_kiln_confdir
 * names. A package that records where kiln is installed differs. */
static kiln_rc verify_confdir(struct macro_ctx *mc, const char *top, char *conf, size_t size,
                              struct kiln_err *err)
{
	char *orig = NULL;
	kiln_rc rc;

	if (!macro_is_defined(mc, "_kiln_confdir"))
		return KILN_OK;
	if ((size_t)snprintf(conf, size, "%s/kiln-conf", top) >= size)
		return kiln_err_set(err, KILN_ELIMIT, "path too long: '%.200s'", top);
	rc = macro_expand_str(mc, "%{_kiln_confdir}", &orig, err);
	if (!rc)
		rc = util_mkdir_p(conf, 0755, err);
	if (!rc)
		rc = verify_copy_files(orig, conf, err);
	if (!rc)
		rc = macro_define(mc, "_kiln_confdir", NULL, conf, MACRO_LEVEL_CMDLINE, err);
	free(orig);
	return rc;
}

/* ---------------------------------------------------------------------------------------- */
/* Variations (shared with the farm's rerun jobs) */

static const char *const vary_names[] = {"time",  "build_path", "hostname",   "cpus",
                                         "umask", "locale",     "file_order", "env"};

const char *worker_vary_name(unsigned bit)
{
	size_t i;

	for (i = 0; i < KILN_ARRAY_SIZE(vary_names); i++)
		if (bit == 1u << i)
			return vary_names[i];
	return NULL;
}

kiln_rc worker_vary_parse(const char *name, unsigned *bit, struct kiln_err *err)
{
	size_t i;

	for (i = 0; i < KILN_ARRAY_SIZE(vary_names); i++) {
		if (!strcmp(name, vary_names[i])) {
			*bit = 1u << i;
			return KILN_OK;
		}
	}
	return kiln_err_set(err, KILN_EINVAL,
	                    "'%.64s' is not a variation (time, build_path, hostname, cpus, "
	                    "umask, locale, file_order, env)",
	                    name);
}

/* The file order variation lists the sandbox's build directories in reverse (disorderfs);
 * where FUSE or disorderfs is missing the rerun goes on without it, and says so. */
static bool verify_order_usable(void)
{
	struct kiln_err e = KILN_ERR_INIT;

	if (!chroot_reorder_probe(&e))
		return true;
	kiln_log(KILN_LOG_WARN, "file_order variation not applied: %s", e.msg);
	return false;
}

void worker_vary_apply(unsigned vary, unsigned run, struct worker_build_opts *o,
                       struct worker_vary_state *st)
{
	memset(st, 0, sizeof(*st));
	if (o->exec && o->exec->kind == CHROOT_EXEC_SANDBOX &&
	    (vary & (WORKER_VARY_HOSTNAME | WORKER_VARY_CPUS | WORKER_VARY_FILE_ORDER))) {
		st->cfg = *o->exec;
		if (vary & WORKER_VARY_HOSTNAME) {
			snprintf(st->host, sizeof(st->host), "kiln-rerun-%u", run);
			st->cfg.hostname = st->host;
		}
		if (vary & WORKER_VARY_CPUS)
			st->cfg.limits.cpus = run % 2 ? 1 : 2;
		if (vary & WORKER_VARY_FILE_ORDER)
			st->cfg.reverse_order = verify_order_usable();
		st->applied |= vary & (WORKER_VARY_HOSTNAME | WORKER_VARY_CPUS);
		st->applied |= st->cfg.reverse_order ? WORKER_VARY_FILE_ORDER : 0;
		o->exec = &st->cfg;
	} else if (vary & WORKER_VARY_FILE_ORDER) {
		kiln_log(KILN_LOG_WARN, "file_order variation not applied: it needs the sandbox");
	}
	st->applied |= vary & (WORKER_VARY_LOCALE | WORKER_VARY_ENV | WORKER_VARY_UMASK |
	                       WORKER_VARY_TIME | WORKER_VARY_BUILD_PATH);
	if (vary & WORKER_VARY_LOCALE)
		o->lang = "C";
	if (vary & WORKER_VARY_ENV) {
		snprintf(st->noise, sizeof(st->noise), "%u-%ld", run, (long)getpid());
		setenv("KILN_VERIFY_NOISE", st->noise, 1);
		st->env_set = true;
	}
	if (vary & WORKER_VARY_UMASK) {
		st->old_umask = umask(run % 2 ? 0077 : 0002);
		st->umask_set = true;
	}
	if (vary & WORKER_VARY_TIME)
		sleep(1); /* another wall-clock second for `date` and friends */
}

void worker_vary_restore(struct worker_vary_state *st)
{
	if (st->umask_set)
		umask(st->old_umask);
	if (st->env_set)
		unsetenv("KILN_VERIFY_NOISE");
	st->umask_set = st->env_set = false;
}

/* The names of what a rerun varied; the top directory's path always differs. */
static kiln_rc verify_varied(struct worker_verify_result *vr, unsigned applied,
                             struct kiln_err *err)
{
	struct kiln_buf names = KILN_BUF_INIT(KILN_LIMIT_LINE);
	unsigned bit;
	kiln_rc rc;

	applied |= WORKER_VARY_BUILD_PATH;
	for (bit = 1; bit && bit <= WORKER_VARY_ALL; bit <<= 1) {
		if ((applied & bit) && worker_vary_name(bit))
			kiln_buf_addf(&names, "%s%s", names.len ? ", " : "", worker_vary_name(bit));
	}
	rc = kiln_buf_finish(&names, err);
	vr->varied = rc ? NULL : kiln_arena_strdup(&vr->arena, names.ptr);
	if (!rc && !vr->varied)
		rc = kiln_err_set(err, KILN_ENOMEM, "out of memory");
	kiln_buf_release(&names);
	return rc;
}

/* A rerun's top directory keeps only its packages (RPMS/, SRPMS/). */
static void verify_prune(const char *top)
{
	static const char *const gone[] = {"BUILD", "BUILDROOT", "SOURCES", "SPECS"};
	char path[4200];
	size_t i;

	for (i = 0; i < KILN_ARRAY_SIZE(gone); i++) {
		snprintf(path, sizeof(path), "%s/%s", top, gone[i]);
		if (util_rm_rf(path, NULL))
			kiln_log(KILN_LOG_WARN, "cannot remove %s", path);
	}
}

/* One rerun with its variations. */
static kiln_rc verify_rerun(struct worker_verify_result *vr, const struct worker_build_opts *o,
                            const struct macro_ctx *mc, const char *top1, const char *srcdir,
                            unsigned run, struct kiln_err *err)
{
	struct worker_build_opts ko = *o;
	struct worker_build_result rk = {0};
	struct worker_vary_state vs;
	struct macro_ctx *kmc = macro_ctx_dup(mc, err);
	char top[4096];
	char conf[4096 + 16];
	kiln_rc rc;

	if (!kmc)
		return err->code ? err->code : KILN_ENOMEM;
	rc = verify_topdir(kmc, srcdir, run, top, sizeof(top), err);
	if (!rc)
		rc = verify_confdir(kmc, top, conf, sizeof(conf), err);
	if (rc)
		goto out;
	ko.sign_key = NULL; /* signatures are not what is compared */
	ko.output_digests = true;
	ko.steps &= ~(unsigned)(WORKER_STEP_RMSOURCE | WORKER_STEP_RMSPEC);
	ko.quiet = true;
	/* the locale stays: a local check keeps the packager's own output readable */
	worker_vary_apply(WORKER_VARY_ALL & ~(unsigned)WORKER_VARY_LOCALE, run, &ko, &vs);
	rc = worker_build(&ko, kmc, &rk, err);
	worker_vary_restore(&vs);
	if (!rc && run == 2)
		rc = verify_varied(vr, vs.applied, err);
	if (rc)
		kiln_err_wrap(err, "rerun %u", run);
	else
		rc = verify_compare(vr, run, top1, top, &rk, err);
	worker_build_result_release(&rk);
	if (!rc) {
		vr->kept[run - 2] = kiln_arena_strdup(&vr->arena, top);
		verify_prune(top);
	} else if (util_rm_rf(top, NULL)) {
		kiln_log(KILN_LOG_WARN, "cannot remove %s", top);
	}
out:
	macro_ctx_free(kmc);
	return rc;
}

kiln_rc worker_build_verify(const struct worker_build_opts *o, const struct macro_ctx *mc,
                            unsigned runs, struct worker_verify_result *vr, struct kiln_err *err)
{
	struct macro_ctx *first = NULL;
	char *top1 = NULL, *srcdir = NULL;
	struct worker_build_opts o1 = *o;
	unsigned run;
	kiln_rc rc;

	memset(vr, 0, sizeof(*vr));
	kiln_arena_init(&vr->arena, KILN_LIMIT_ARENA);
	vr->runs = runs;
	if (runs < 2)
		return kiln_err_set(err, KILN_EINVAL,
		                    "--verify-reproducible needs 2 or more builds");
	first = macro_ctx_dup(mc, err);
	if (!first)
		return err->code ? err->code : KILN_ENOMEM;
	rc = macro_expand_str(first, "%{_topdir}", &top1, err);
	if (!rc)
		rc = macro_expand_str(first, "%{_sourcedir}", &srcdir, err);
	/* The reruns must not clean up what the first run needs, nor the first what they do. */
	o1.steps &= ~(unsigned)(WORKER_STEP_RMSOURCE | WORKER_STEP_RMSPEC);
	o1.output_digests = true; /* the comparison starts with each package's sha256 */
	if (!rc)
		rc = worker_build(&o1, first, &vr->first, err);
	vr->npackages = vr->first.noutputs;
	vr->kept = rc ? NULL : kiln_arena_array(&vr->arena, runs, sizeof(*vr->kept));
	if (!rc && !vr->kept)
		rc = kiln_err_set(err, KILN_ENOMEM, "out of memory");
	else if (!rc)
		memset(vr->kept, 0, runs * sizeof(*vr->kept));
	for (run = 2; !rc && run <= runs; run++)
		rc = verify_rerun(vr, o, mc, top1, srcdir, run, err);
	macro_ctx_free(first);
	free(top1);
	free(srcdir);
	if (!rc)
		rc = kiln_arena_finish(&vr->arena, err);
	return rc;
}

void worker_verify_result_release(struct worker_verify_result *vr)
{
	worker_build_result_release(&vr->first);
	kiln_arena_release(&vr->arena);
	memset(vr, 0, sizeof(*vr));
}
