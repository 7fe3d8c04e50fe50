/*
 * daemon_build.c - the build child of the worker daemon: the job's macros and sandbox
 * through worker_build_prepare() (as `kiln build` assembles them), then the real build
 * pipeline, worker_build().
 *
 * It runs in a process of its own (`kiln worker --build-child FILE`, exec'd per build:
 * worker_build_child_main), so a crash, a cancel or a timeout takes down only this build:
 * the daemon kills the child's process group, and with it the sandbox (its init has
 * PDEATHSIG).
 */
#include "util/util.h"

#include <unistd.h>

#include "worker/daemon_int.h"

/* The job's macros: kiln's configuration (loaded by the child) duplicated, then
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

/* ---------------------------------------------------------------------------------------- */
/* The request file: the daemon writes it, the child it execs reads it back */

#define CHILD_REQ_MAX (2 * KILN_MIB) /* a lease reply is at most 1 MiB */

struct child_file {
	const char *lease, *topdir, *spec_path, *srpm_path, *sourcedir, *git_commit;
	const char *cache_dir, *format, *result_path, *root, *root_config, *root_lock_in;
	const char *root_lock_out;
	bool sandbox;
	int64_t vary;
	struct worker_caps caps;
};

#define CF(n, t, req, f, min, max)                                                                 \
	{                                                                                          \
		n, t, req, offsetof(struct child_file, f), min, max, NULL, 0, 0                    \
	}
#define CP(n, f) CF(n, API_F_STR, false, f, 0, KILN_LIMIT_PATH)
#define CC(n, f)                                                                                   \
	{                                                                                          \
		n, API_F_INT, true, offsetof(struct worker_caps, f), 0, INT64_MAX, NULL, 0, 0      \
	}

static const struct api_field caps_fields[] = {
    CC("pids", pids), CC("memory", memory), CC("cpu", cpu), CC("log", log), API_FIELD_END,
};

static const struct api_field child_fields[] = {
    CF("lease", API_F_RAW, true, lease, 0, KILN_MIB),
    CP("topdir", topdir),
    CP("spec_path", spec_path),
    CP("srpm_path", srpm_path),
    CP("sourcedir", sourcedir),
    CF("git_commit", API_F_STR, false, git_commit, 0, 64),
    CP("cache_dir", cache_dir),
    CF("format", API_F_STR, false, format, 0, 8),
    CF("result_path", API_F_STR, true, result_path, 0, KILN_LIMIT_PATH),
    CF("root", API_F_STR, false, root, 0, KILN_LIMIT_PATH + 8),
    CP("root_config", root_config),
    CP("root_lock_in", root_lock_in),
    CP("root_lock_out", root_lock_out),
    CF("sandbox", API_F_BOOL, true, sandbox, 0, 0),
    CF("vary", API_F_INT, true, vary, 0, WORKER_VARY_ALL),
    {"caps", API_F_OBJ, true, offsetof(struct child_file, caps), 0, 0, caps_fields, 0, 0},
    API_FIELD_END,
};

kiln_rc worker_child_req_write(const struct worker_child_req *r, const char *path,
                               struct kiln_err *err)
{
	struct kiln_buf b = KILN_BUF_INIT(CHILD_REQ_MAX);
	struct api_jw w;
	kiln_rc rc;

	api_jw_init(&w, &b);
	api_jw_obj(&w);
	api_jw_key(&w, "lease");
	api_jw_raw(&w, r->lease_raw);
	api_jw_kstr(&w, "topdir", r->topdir);
	api_jw_kstr(&w, "spec_path", r->spec_path);
	api_jw_kstr(&w, "srpm_path", r->srpm_path);
	api_jw_kstr(&w, "sourcedir", r->sourcedir);
	api_jw_kstr(&w, "git_commit", r->git_commit);
	api_jw_kstr(&w, "cache_dir", r->cache_dir);
	api_jw_kstr(&w, "format", r->format);
	api_jw_kstr(&w, "result_path", r->result_path);
	api_jw_kstr(&w, "root", r->root);
	api_jw_kstr(&w, "root_config", r->root_config);
	api_jw_kstr(&w, "root_lock_in", r->root_lock_in);
	api_jw_kstr(&w, "root_lock_out", r->root_lock_out);
	api_jw_kbool(&w, "sandbox", r->sandbox);
	api_jw_kint(&w, "vary", r->vary);
	api_jw_key(&w, "caps");
	api_jw_obj(&w);
	api_jw_kint(&w, "pids", r->caps->pids);
	api_jw_kint(&w, "memory", r->caps->memory);
	api_jw_kint(&w, "cpu", r->caps->cpu);
	api_jw_kint(&w, "log", r->caps->log);
	api_jw_end(&w);
	api_jw_end(&w);
	rc = kiln_buf_finish(&b, err);
	if (!rc)
		rc = util_write_atomic(path, b.ptr, b.len, 0600, err);
	kiln_buf_release(&b);
	return rc;
}

kiln_rc worker_child_req_read(const char *path, struct kiln_arena *a, struct worker_child_req *out,
                              struct worker_lease *lease, struct worker_caps *caps,
                              struct kiln_err *err)
{
	struct kiln_buf raw = KILN_BUF_INIT(CHILD_REQ_MAX);
	struct child_file f = {0};
	kiln_rc rc;

	memset(out, 0, sizeof(*out));
	rc = util_read_file(path, CHILD_REQ_MAX, &raw, err);
	if (!rc)
		rc = api_json_decode(raw.ptr, raw.len, child_fields, 0, &f, a, err);
	if (!rc)
		rc = worker_lease_parse(f.lease, strlen(f.lease), a, lease, err);
	if (rc) {
		kiln_err_wrap(err, "%s", path);
		goto out;
	}
	*caps = f.caps;
	out->lease_raw = lease->raw;
	out->job = &lease->job;
	out->topdir = f.topdir, out->spec_path = f.spec_path, out->srpm_path = f.srpm_path;
	out->sourcedir = f.sourcedir, out->git_commit = f.git_commit;
	out->cache_dir = f.cache_dir, out->format = f.format, out->result_path = f.result_path;
	out->sandbox = f.sandbox, out->root = f.root, out->root_config = f.root_config;
	out->root_lock_in = f.root_lock_in, out->root_lock_out = f.root_lock_out;
	out->vary = (unsigned)f.vary;
	out->caps = caps;
out:
	kiln_buf_release(&raw);
	return rc;
}

int worker_build_child_main(const char *request_path)
{
	struct kiln_arena a = KILN_ARENA_INIT(KILN_LIMIT_ARENA);
	struct kiln_err err = KILN_ERR_INIT;
	struct macro_config cfg = {0};
	struct macro_ctx *mc = NULL;
	struct worker_child_req r;
	struct worker_lease lease;
	struct worker_caps caps;
	char msg[KILN_ERR_MSG_MAX + KILN_ERR_INPUT_MAX + 16];
	int status = 1;

	/* the log is a pipe: say each line as it comes, as the daemon does */
	setvbuf(stdout, NULL, _IONBF, 0);
	if (worker_child_req_read(request_path, &a, &r, &lease, &caps, &err) ||
	    macro_ctx_open_config(&cfg, false, &mc, &err)) {
		fprintf(stderr, "kiln worker: build child: %s\n",
		        kiln_err_format(&err, msg, sizeof(msg)));
		goto out;
	}
	r.macros = mc;
	status = worker_daemon_build_child(&r);
out:
	macro_ctx_free(mc);
	kiln_arena_release(&a);
	return status;
}
