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
