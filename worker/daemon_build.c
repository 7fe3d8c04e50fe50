/*
 * daemon_build.c - the build child of the worker daemon: the job's macros and sandbox
 * through worker_build_prepare() (as `kiln build` assembles them), then the real build
 * pipeline, worker_build().
 *
 * It runs in a process of its own (forked per build), so a crash, a cancel or a timeout
 * takes down only this build: the daemon kills the child's process group, and with it the
 * sandbox (its init has PDEATHSIG).
 */
#include "util/util.h"

#include <unistd.h>

#include "worker/daemon_int.h"

/* The job's macros: the daemon's configuration (loaded once, at start) duplicated, then
 * what the job asks for, through the same assembly as `kiln build`. */
static kiln_rc job_setup(const struct worker_child_req *r, struct kiln_arena *a,
                         struct worker_build_setup *s, struct kiln_err *err)
{
	const struct worker_job_req *j = r->job;
	const char **defs = NULL;
	size_t i;

	worker_build_setup_init(s);
	s->topdir = r->topdir;
	s->rpm_format = r->format;
	/* a git job builds in its checkout: sources beside the spec (dist-git layout) */
	s->sourcedir = r->sourcedir;
	if (j->defines.n && !(defs = kiln_arena_alloc(a, j->defines.n * sizeof(*defs))))
		return kiln_err_set(err, KILN_ENOMEM, "out of memory");
	for (i = 0; i < j->defines.n; i++) {
		defs[i] = kiln_arena_printf(a, "%s %s", j->defines.keys[i], j->defines.values[i]);
		if (!defs[i])
			return kiln_err_set(err, KILN_ENOMEM, "out of memory");
	}
	s->defines = defs;
	s->ndefines = j->defines.n;
	s->with = j->with.v, s->nwith = j->with.n;
	s->without = j->without.v, s->nwithout = j->without.n;
	s->source_date_epoch = j->has_sde ? j->source_date_epoch : -1;
	s->sandbox = r->sandbox;
	s->root = r->sandbox ? r->root : NULL;
	s->limits.timeout_ms = j->timeout * 1000;
	/* the job's caps (worker_caps_for_job): in force through the sandbox's cgroup */
	s->limits.pids_max = (uint64_t)r->caps->pids;
	s->limits.memory_bytes = (uint64_t)r->caps->memory;
	s->limits.cpu_percent = r->caps->cpu > UINT32_MAX ? UINT32_MAX : (uint32_t)r->caps->cpu;
	return KILN_OK;
}

/* The lock resolved, for the daemon to report with the completion. */
static kiln_rc lock_save(const struct roots_lock *l, const char *path, struct kiln_err *err)
{
	struct kiln_buf out = KILN_BUF_INIT(ROOTS_LOCK_MAX_BYTES * 2);
	kiln_rc rc;

	roots_lock_write(l, &out);
	rc = kiln_buf_finish(&out, err);
	if (!rc)
		rc = util_write_atomic(path, out.ptr, out.len, 0644, err);
	kiln_buf_release(&out);
	return rc;
}

/* The job's root: resolved for its spec or source package with the job's macros, made
 * (or taken from the worker's image cache), and the build's sandbox set on it. */
static kiln_rc job_root(const struct worker_child_req *r, struct worker_build_setup *s,
                        struct worker_root *root, struct kiln_err *err)
{
	struct roots_make_opts ro;
	kiln_rc rc;

	roots_make_opts_init(&ro);
	ro.cache_dir = r->cache_dir;
	ro.log_fd = STDOUT_FILENO;
	ro.lock_path = r->root_lock_in; /* pinned by an earlier attempt: exactly those */
	rc = worker_root_open(r->root_config, r->srpm_path ? r->srpm_path : r->spec_path,
	                      r->srpm_path != NULL, &ro, worker_build_setup_macros, s, root, err);
	if (!rc) {
		printf("kiln worker: root %s, lock %s (%zu packages%s)\n", root->cfg.name,
		       root->lock.id, root->lock.n, r->root_lock_in ? ", pinned by the job" : "");
		if (r->root_lock_out)
			rc = lock_save(&root->lock, r->root_lock_out, err);
		fflush(stdout);
		s->sandbox = true;
		s->root = root->root_arg;
	}
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
	struct worker_build_setup setup;
	struct chroot_config cc;
	struct kiln_err err = KILN_ERR_INIT;
	struct kiln_arena a = KILN_ARENA_INIT(KILN_LIMIT_ARENA);
	struct sources_fetch_opts fo = {0};
	struct worker_vary_state vs = {0};
	struct macro_ctx *mc = NULL;
	struct worker_root root = {0};
	char msg[KILN_ERR_MSG_MAX + KILN_ERR_INPUT_MAX + 16];
	kiln_rc rc;

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
	rc = job_setup(r, &a, &setup, &err);
	if (!rc && r->root_config) {
		/* a root made from the job's root configuration, its macros the root's own */
		rc = job_root(r, &setup, &root, &err);
		mc = root.macros;
		root.macros = NULL;
		if (!rc)
			rc = worker_build_prepare(&setup, NULL, &bo, &cc, &err);
	} else {
		if (!rc && !(mc = macro_ctx_dup(r->macros, &err)))
			rc = err.code ? err.code : KILN_ENOMEM;
		if (!rc)
			rc = worker_build_prepare(&setup, mc, &bo, &cc, &err);
	}
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
	worker_root_close(&root);
	kiln_arena_release(&a);
	return rc ? 1 : 0;
}
