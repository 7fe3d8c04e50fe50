/*
 * install.c - roots_install: check, order, scriptlets around unpacking, rpm database
 * (roots.h has the steps and docs/roots.md the reasons).
 */
#include "util/util.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "roots/install_int.h"

void roots_install_opts_init(struct roots_install_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->log_fd = -1;
}

struct install {
	char *image; /* owned: the image's absolute path */
	const struct roots_install_opts *o;
	struct roots_set set;
	struct roots_unpack unpack;
	struct roots_scripts *scripts; /* NULL with ROOTS_INSTALL_F_NOSCRIPTS */
	struct roots_install_report rep;
	int rootfd;
};

static void progress(const struct install *in, const char *what, const char *nevra)
{
	char line[512];
	int n = snprintf(line, sizeof(line), "%s: %s\n", what, nevra);

	if (in->o->log_fd >= 0 && n > 0)
		(void)!write(in->o->log_fd, line,
		             (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1);
}

static kiln_rc run_all(struct install *in, enum roots_script_kind kind, struct kiln_err *err)
{
	kiln_rc rc = KILN_OK;
	size_t i;
	bool ran;

	for (i = 0; !rc && in->scripts && i < in->set.n; i++) {
		rc = roots_scripts_run(in->scripts, &in->set.pkgs[in->set.order[i]], kind, &ran,
		                       &in->rep.warnings, err);
		in->rep.scriptlets += ran;
	}
	return rc;
}

/* One package in rpm's order: %triggerprein, %pre, unpack, %post, %triggerin. */
static kiln_rc install_one(struct install *in, size_t k, struct kiln_err *err)
{
	const struct roots_pkg *p = &in->set.pkgs[in->set.order[k]];
	int64_t t0, t1;
	kiln_rc rc = KILN_OK;
	bool ran = false;

	progress(in, "installing", p->nevra);
	t0 = util_clock_mono_ns();
	if (in->scripts) {
		rc = roots_scripts_triggers(in->scripts, &in->set, in->set.order, k, p, true,
		                            &in->rep.scriptlets, &in->rep.warnings, err);
		if (!rc)
			rc = roots_scripts_run(in->scripts, p, ROOTS_SCRIPT_PRE, &ran,
			                       &in->rep.warnings, err);
		in->rep.scriptlets += ran;
	}
	t1 = util_clock_mono_ns();
	if (!rc)
		rc = roots_unpack_pkg(&in->unpack, p, err);
	t1 = util_clock_mono_ns() - t1;
	in->rep.unpack_ns += t1;
	t0 += t1; /* scriptlet time without the unpacking */
	if (!rc && in->scripts)
		rc = roots_scripts_file_triggers(in->scripts, &in->set, in->set.order, k + 1, 1,
		                                 &in->rep.scriptlets, &in->rep.warnings, err);
	if (!rc && in->scripts) {
		rc = roots_scripts_run(in->scripts, p, ROOTS_SCRIPT_POST, &ran, &in->rep.warnings,
		                       err);
		in->rep.scriptlets += ran;
	}
	if (!rc && in->scripts)
		rc = roots_scripts_triggers(in->scripts, &in->set, in->set.order, k, p, false,
		                            &in->rep.scriptlets, &in->rep.warnings, err);
	if (!rc && in->scripts)
		rc = roots_scripts_file_triggers(in->scripts, &in->set, in->set.order, k + 1, 2,
		                                 &in->rep.scriptlets, &in->rep.warnings, err);
	in->rep.scriptlet_ns += util_clock_mono_ns() - t0;
	if (!rc)
		in->rep.packages++;
	return rc;
}

static bool set_has_rpm(const struct roots_set *set)
{
	size_t i;

	for (i = 0; i < set->n; i++) {
		if (!strcmp(set->pkgs[i].name, "rpm"))
			return true;
	}
	return false;
}

static kiln_rc open_image(struct install *in, const char *image, struct kiln_err *err)
{
	if (mkdir(image, 0755) && errno != EEXIST)
		return kiln_err_sys(err, KILN_EIO, "cannot create the image '%s'", image);
	/* The sandbox takes the image by its absolute path. */
	in->image = realpath(image, NULL);
	if (!in->image)
		return kiln_err_sys(err, KILN_EIO, "cannot resolve the image '%s'", image);
	in->rootfd = open(in->image, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (in->rootfd < 0)
		return kiln_err_sys(err, KILN_EIO, "cannot open the image '%s'", in->image);
	return KILN_OK;
}

static kiln_rc install_all(struct install *in, const char *image, struct kiln_err *err)
{
	kiln_rc rc;
	int64_t t0;
	size_t k;

	rc = open_image(in, image, err);
	if (rc)
		return rc;
	in->unpack.rootfd = in->rootfd;
	if (!(in->o->flags & ROOTS_INSTALL_F_NOSCRIPTS))
		rc = roots_scripts_new(in->image, in->o, &in->scripts, err);
	t0 = util_clock_mono_ns();
	if (!rc)
		rc = run_all(in, ROOTS_SCRIPT_PRETRANS, err);
	in->rep.scriptlet_ns += util_clock_mono_ns() - t0;
	for (k = 0; !rc && k < in->set.n; k++)
		rc = install_one(in, k, err);
	t0 = util_clock_mono_ns();
	if (!rc && in->scripts)
		rc = roots_scripts_run_deferred(in->scripts, &in->rep.scriptlets, &in->rep.warnings,
		                                err);
	if (!rc)
		rc = run_all(in, ROOTS_SCRIPT_POSTTRANS, err);
	if (!rc && in->scripts)
		rc = roots_scripts_file_triggers(in->scripts, &in->set, in->set.order, in->set.n, 0,
		                                 &in->rep.scriptlets, &in->rep.warnings, err);
	in->rep.scriptlet_ns += util_clock_mono_ns() - t0;
	t0 = util_clock_mono_ns();
	if (!rc && !(in->o->flags & ROOTS_INSTALL_F_NORPMDB) && set_has_rpm(&in->set)) {
		rc = roots_rpmdb_write(in->image, &in->set, in->o, err);
		in->rep.rpmdb = !rc;
	}
	in->rep.rpmdb_ns = util_clock_mono_ns() - t0;
	in->rep.files = in->unpack.files;
	in->rep.warnings += in->unpack.warnings;
	return rc;
}

kiln_rc roots_install(const char *image, const char *const *pkgs, size_t n,
                      const struct roots_install_opts *o, struct roots_install_report *rep,
                      struct kiln_err *err)
{
	struct roots_install_opts dflt;
	struct install in;
	int64_t t0 = util_clock_mono_ns();
	kiln_rc rc;

	if (!o) {
		roots_install_opts_init(&dflt);
		o = &dflt;
	}
	memset(&in, 0, sizeof(in));
	in.o = o;
	in.rootfd = -1;
	roots_unpack_init(&in.unpack, -1, o->flags, o->log_fd);
	/* Everything is read and checked before the first byte is written. */
	rc = roots_set_load(&in.set, pkgs, n, err);
	if (!rc)
		rc = roots_set_check(&in.set, o->flags, err);
	if (!rc)
		rc = roots_set_order(&in.set, err);
	in.rep.load_ns = util_clock_mono_ns() - t0;
	if (!rc)
		rc = install_all(&in, image, err);
	if (rep)
		*rep = in.rep;
	roots_scripts_free(in.scripts);
	roots_unpack_release(&in.unpack);
	roots_set_release(&in.set);
	util_close(in.rootfd);
	free(in.image);
	return rc;
}
