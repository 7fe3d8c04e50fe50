/*
 * daemon_build.c - the build child of the worker daemon: the job's macros, then the real
 * build pipeline, worker_build(), exactly as `kiln build` runs it.
 *
 * It runs in a process of its own (forked per build), so a crash, a cancel or a timeout
 * takes down only this build: the daemon kills the child's process group, and with it the
 * sandbox (its init has PDEATHSIG).
 */
#include "util/util.h"

#include <stdlib.h>
#include <unistd.h>

#include "worker/daemon_int.h"

static kiln_rc define(struct macro_ctx *mc, const char *name, const char *value,
                      struct kiln_err *err)
{
	return macro_define(mc, name, NULL, value, MACRO_LEVEL_CMDLINE, err);
}

/* rpmbuild's --with X / --without X: %_with_X "--with-X" (popt aliases). */
static kiln_rc conditions(struct macro_ctx *mc, const struct worker_job_req *j,
                          struct kiln_err *err)
{
	char name[200], value[200];
	size_t i;
	kiln_rc rc = KILN_OK;

	for (i = 0; !rc && i < j->with.n; i++) {
		snprintf(name, sizeof(name), "_with_%s", j->with.v[i]);
		snprintf(value, sizeof(value), "--with-%s", j->with.v[i]);
		rc = define(mc, name, value, err);
	}
	for (i = 0; !rc && i < j->without.n; i++) {
		snprintf(name, sizeof(name), "_without_%s", j->without.v[i]);
		snprintf(value, sizeof(value), "--without-%s", j->without.v[i]);
		rc = define(mc, name, value, err);
	}
	return rc;
}

static kiln_rc macros_open(const struct worker_child_req *r, struct macro_ctx **out,
                           struct kiln_err *err)
{
	struct kiln_buf confdir = KILN_BUF_INIT(KILN_LIMIT_PATH);
	struct macro_config cfg = {0};
	struct macro_ctx *mc = NULL;
	size_t i;
	kiln_rc rc;

	rc = util_configdir_find(&confdir, err);
	if (!rc && !(mc = macro_ctx_new(err)))
		rc = err ? err->code : KILN_ENOMEM;
	cfg.confdir = confdir.ptr;
	if (!rc)
		rc = macro_config_load(mc, &cfg, err);
	if (!rc)
		rc = define(mc, "_topdir", r->topdir, err);
	if (!rc && r->format)
		rc = define(mc, "_rpmformat", r->format, err);
	/* a git job builds in its checkout: sources beside the spec (dist-git layout) */
	if (!rc && r->sourcedir)
		rc = define(mc, "_sourcedir", r->sourcedir, err);
	for (i = 0; !rc && i < r->job->defines.n; i++)
		rc = define(mc, r->job->defines.keys[i], r->job->defines.values[i], err);
	if (!rc)
		rc = conditions(mc, r->job, err);
	kiln_buf_release(&confdir);
	if (rc) {
		macro_ctx_free(mc);
		mc = NULL;
	}
	*out = mc;
	return rc;
}

static void result_write(const struct worker_child_req *r, const struct worker_build_result *res,
                         bool ok, const struct kiln_err *err)
{
	struct kiln_buf out = KILN_BUF_INIT(KILN_LIMIT_TEXT_FILE);

	worker_build_result_json(res, ok, err, &out);
	if (!kiln_buf_finish(&out, NULL) &&
	    util_write_atomic(r->result_path, out.ptr, out.len, 0644, NULL))
		fprintf(stderr, "kiln worker: cannot write %s\n", r->result_path);
	kiln_buf_release(&out);
}

int worker_daemon_build_child(const struct worker_child_req *r)
{
	struct worker_build_result res = {0};
	struct worker_build_opts bo;
	struct chroot_config cc;
	struct kiln_err err = KILN_ERR_INIT;
	struct kiln_arena a = KILN_ARENA_INIT(KILN_LIMIT_ARENA);
	struct sources_fetch_opts fo = {0};
	struct worker_vary_state vs = {0};
	struct macro_ctx *mc = NULL;
	char sde[32], msg[KILN_ERR_MSG_MAX + KILN_ERR_INPUT_MAX + 16];
	kiln_rc rc;

	if (r->job->has_sde) {
		snprintf(sde, sizeof(sde), "%lld", (long long)r->job->source_date_epoch);
		setenv("SOURCE_DATE_EPOCH", sde, 1);
	}
	worker_build_opts_init(&bo);
	bo.steps = r->srpm_path ? WORKER_STEPS_B : WORKER_STEPS_A;
	bo.out_fd = STDOUT_FILENO;
	/* URL sources come through the worker's cache; a git job's NAME-VERSION.tar.gz is
	 * made from its commit when the repository does not hold it */
	fo.cache_dir = r->cache_dir;
	fo.retries = -1;
	fo.git_url = r->git_commit ? r->job->git.url : NULL;
	fo.git_commit = r->git_commit;
	bo.fetch = &fo;
	chroot_config_init(&cc);
	if (r->sandbox) {
		cc.kind = CHROOT_EXEC_SANDBOX;
		cc.limits.timeout_ms = r->job->timeout * 1000;
		bo.exec = &cc;
	}
	rc = r->root && r->sandbox ? chroot_config_root_parse(&cc, r->root, &err) : KILN_OK;
	if (!rc)
		rc = macros_open(r, &mc, &err);
	if (!rc && r->srpm_path)
		rc = worker_srpm_install(r->srpm_path, mc, &a, &bo.spec_path, &err);
	else
		bo.spec_path = r->spec_path;
	if (!rc && r->srpm_path)
		rc = worker_srpm_pkgid(r->srpm_path, &bo, &err);
	if (!rc && r->vary) {
		/* a rerun: its variations, said in the log (the build path is the daemon's) */
		char names[256] = "";
		unsigned bit;

		for (bit = 1; bit && bit <= WORKER_VARY_ALL; bit <<= 1)
			if ((r->vary & bit) && worker_vary_name(bit))
				snprintf(names + strlen(names), sizeof(names) - strlen(names),
				         "%s%s", *names ? " " : "", worker_vary_name(bit));
		printf("kiln worker: rerun %lld with variations: %s\n", (long long)r->job->rerun,
		       names);
		fflush(stdout);
		worker_vary_apply(r->vary, (unsigned)r->job->rerun, &bo, &vs);
	}
	if (!rc)
		rc = worker_build(&bo, mc, &res, &err);
	worker_vary_restore(&vs);
	result_write(r, &res, rc == KILN_OK, &err);
	if (rc)
		fprintf(stderr, "error: %s\n", kiln_err_format(&err, msg, sizeof(msg)));
	worker_build_result_release(&res);
	macro_ctx_free(mc);
	kiln_arena_release(&a);
	return rc ? 1 : 0;
}
