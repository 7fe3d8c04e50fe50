/*
 * prepare.c - one assembly of a build's inputs for both ways kiln builds: `kiln build`
 * (cli/cmd_build.c) and the worker daemon's build child (daemon_build.c). Macros go
 * through macro/'s command-line definitions (rpm's --define name rewrite, rpmbuild's
 * --with/--without aliases), SOURCE_DATE_EPOCH is an option of the build rather than the
 * process environment, and the sandbox is configured from one set of settings.
 */
#include "util/util.h"

#include "worker/worker.h"

void worker_build_setup_init(struct worker_build_setup *s)
{
	memset(s, 0, sizeof(*s));
	s->source_date_epoch = -1;
}

static kiln_rc define(struct macro_ctx *mc, const char *name, const char *value,
                      struct kiln_err *err)
{
	return value ? macro_define(mc, name, NULL, value, MACRO_LEVEL_CMDLINE, err) : KILN_OK;
}

static kiln_rc macros_apply(const struct worker_build_setup *s, struct macro_ctx *mc,
                            struct kiln_err *err)
{
	kiln_rc rc;
	size_t i;

	rc = define(mc, "_topdir", s->topdir, err);
	if (!rc)
		rc = define(mc, "buildroot", s->buildroot, err);
	if (!rc)
		rc = define(mc, "_rpmformat", s->rpm_format, err);
	if (!rc)
		rc = define(mc, "_sourcedir", s->sourcedir, err);
	for (i = 0; !rc && i < s->ndefines; i++)
		rc = macro_define_cmdline(mc, s->defines[i], err);
	for (i = 0; !rc && i < s->nwith; i++)
		rc = macro_define_bcond(mc, true, s->with[i], err);
	for (i = 0; !rc && i < s->nwithout; i++)
		rc = macro_define_bcond(mc, false, s->without[i], err);
	return rc;
}

kiln_rc worker_build_prepare(const struct worker_build_setup *s, struct macro_ctx *mc,
                             struct worker_build_opts *bo, struct chroot_config *cc,
                             struct kiln_err *err)
{
	kiln_rc rc;

	rc = macros_apply(s, mc, err);
	if (rc)
		return rc;
	bo->source_date_epoch = s->source_date_epoch;
	bo->exec = NULL;
	if (!s->sandbox)
		return KILN_OK;
	chroot_config_init(cc);
	cc->kind = CHROOT_EXEC_SANDBOX;
	cc->network = s->network;
	cc->limits = s->limits;
	rc = s->root ? chroot_config_root_parse(cc, s->root, err) : KILN_OK;
	if (rc)
		return rc;
	bo->exec = cc;
	return KILN_OK;
}

/* ---------------------------------------------------------------------------------------- */
/* Roots made from root configurations */

bool worker_root_is_config(const char *root)
{
	return root && *root && strcmp(root, "host") && strncmp(root, "dir:", 4) &&
	       strncmp(root, "tar:", 4);
}

/* The build dependencies the root must hold: a spec parsed with the root's configuration
 * (its arch and [macros]) and the caller's defines, or a source package's requires. The
 * spec and its macro context (*mc) hold the dependencies: the caller frees both after. */
static kiln_rc root_deps(struct worker_root *r, const char *input, bool srpm,
                         kiln_rc (*configure)(void *, struct macro_ctx *, struct kiln_err *),
                         void *arg, struct kiln_arena *a, struct macro_ctx **mc, struct spec **spec,
                         struct spec_deps *deps, struct spec_deps *conflicts, struct kiln_err *err)
{
	kiln_rc rc;

	if (srpm)
		return roots_srpm_deps(input, a, deps, conflicts, err);
	rc = roots_macro_ctx_open(&r->cfg, mc, err);
	if (!rc && configure)
		rc = configure(arg, *mc, err);
	if (!rc)
		rc = spec_parse_file(input, *mc, SPEC_PARSE_ANYARCH, spec, err);
	if (!rc) {
		*deps = (*spec)->buildrequires;
		*conflicts = (*spec)->buildconflicts;
		r->dynamic = (*spec)->sections[SPEC_SEC_BUILDREQUIRES] != NULL;
	}
	return rc;
}

kiln_rc
worker_root_open(const char *config, const char *input, bool srpm, const struct roots_make_opts *o,
                 kiln_rc (*configure)(void *arg, struct macro_ctx *mc, struct kiln_err *err),
                 void *arg, struct worker_root *out, struct kiln_err *err)
{
	struct kiln_arena a = KILN_ARENA_INIT(KILN_LIMIT_ARENA);
	struct kiln_buf dir = KILN_BUF_INIT(KILN_LIMIT_PATH + 8);
	struct spec_deps deps = {0}, conflicts = {0};
	struct macro_ctx *pmc = NULL;
	struct spec *spec = NULL;
	kiln_rc rc;

	memset(out, 0, sizeof(*out));
	roots_config_init(&out->cfg);
	roots_lock_init(&out->lock);
	out->img.lock_fd = -1;
	rc = roots_config_open(&out->cfg, config, err);
	if (!rc)
		rc = root_deps(out, input, srpm, configure, arg, &a, &pmc, &spec, &deps, &conflicts,
		               err);
	if (!rc)
		rc = roots_root_get(&out->cfg, &deps, &conflicts, o, &out->lock, &out->img, err);
	if (!rc)
		rc = roots_macro_ctx_open_image(&out->cfg, out->img.root, &out->macros, err);
	if (!rc && configure)
		rc = configure(arg, out->macros, err);
	if (!rc) {
		kiln_buf_addf(&dir, "dir:%s", out->img.root);
		rc = kiln_buf_finish(&dir, err);
	}
	if (!rc && !(out->root_arg = kiln_strdup(dir.ptr)))
		rc = kiln_err_set(err, KILN_ENOMEM, "out of memory");
	spec_free(spec);
	macro_ctx_free(pmc);
	kiln_buf_release(&dir);
	kiln_arena_release(&a);
	return rc;
}

void worker_root_close(struct worker_root *r)
{
	free(r->root_arg);
	r->root_arg = NULL;
	macro_ctx_free(r->macros);
	r->macros = NULL;
	roots_image_release(&r->img);
	roots_lock_release(&r->lock);
	roots_config_release(&r->cfg);
}
