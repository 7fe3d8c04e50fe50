/*
 * batch.c - [batches] dependency-ordered batch builds (issue 28, docs/batches.md): a set of
 * specs submitted together on one root, built in the order their BuildRequires and the
 * packages they build give (batch/), each job resolving its root against the root's
 * repositories plus the batch's own repository, where the packages of the batch's finished
 * jobs land (a side tag).
 *
 * The scheduler decides here; the store keeps each member's count of dependencies whose
 * packages have not landed (a job with one is never a lease candidate), the edges, and the
 * failed job a dep_failed member waits for. The hand-over: a dependency's packages are
 * linked into DATA/batches/N/repo, its metadata rewritten from the description cache
 * repo/ keeps (only the new packages are read), then the count drops and waiting long
 * polls wake, all in the completion's request.
 */
#include "util/util.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <unistd.h>

#include "macro/macro.h"
#include "spec/spec.h"
#include "sources/sources.h"
#include "roots/roots.h"
#include "batch/batch.h"
#include "worker/worker.h"
#include "scheduler/http_int.h"

/* ---------------------------------------------------------------------------------------- */
/* The request */

static const struct api_field batch_fields[] = {
    {"root", API_F_STR, true, offsetof(struct scheduler_batch_body, root), 0, 128, NULL, 0, 0},
    {"members", API_F_OBJLIST, true, offsetof(struct scheduler_batch_body, members), 0,
     SCHED_BATCH_MAX, scheduler_request_fields, sizeof(struct scheduler_request), 0},
    {"bootstrap", API_F_STRLIST, false, offsetof(struct scheduler_batch_body, bootstrap), 0, 256,
     NULL, 0, 0},
    {"repository", API_F_STR, false, offsetof(struct scheduler_batch_body, repository), 0, 128,
     NULL, 0, 0},
    API_FIELD_END,
};

/* One submission being checked: the members' jobs, the graph, what the store gets. */
struct batch_sub {
	struct scheduler *s;
	struct api_req *req;
	struct kiln_arena *a;
	struct scheduler_batch_body body;
	struct macro_ctx *base; /* owned: the root's macros, or kiln's */
	struct batch_graph *g;  /* owned */
	size_t n;
	struct scheduler_job *jobs;       /* n, in a */
	struct scheduler_batch_member *m; /* n, in a */
	struct kiln_buf *bufs;            /* owned: 2n (each job's request and manifest) */
	struct scheduler_batch_edge *e;   /* in a */
	size_t ne;
	int64_t *ids;                  /* n, in a */
	int64_t t0, read_ms, blobs_ms; /* where a submission's time goes, for the log */
};

/* The macros the members' specs are read with: the root configuration's when this host has
 * it (/etc/kiln/roots), else kiln's own; the specs come from outside, so restricted. */
static kiln_rc base_macros(struct batch_sub *b, struct kiln_err *err)
{
	struct macro_config mcfg = {0};
	struct roots_config cfg;
	kiln_rc rc;

	roots_config_init(&cfg);
	rc = roots_config_open(&cfg, b->body.root, err);
	if (!rc)
		rc = roots_macro_ctx_open(&cfg, &b->base, err);
	roots_config_release(&cfg);
	if (rc) {
		kiln_err_clear(err);
		rc = macro_ctx_open_config(&mcfg, false, &b->base, err);
	}
	if (rc) {
		kiln_err_clear(err);
		b->base = macro_ctx_new(err);
		rc = b->base ? KILN_OK : KILN_ENOMEM;
	}
	return rc;
}

/* What the packages a spec builds provide: each name at the spec's EVR, and their
 * Provides (in b's arena). */
static kiln_rc spec_provides(struct batch_sub *b, struct macro_ctx *mc, const struct spec *sp,
                             struct spec_deps *out, struct kiln_err *err)
{
	static const char evr_expr[] = "%{?epoch:%{epoch}:}%{version}-%{release}";
	struct kiln_buf evr = KILN_BUF_INIT(4096);
	const char *evr_s = NULL;
	size_t i, j, total = 0;
	kiln_rc rc;

	memset(out, 0, sizeof(*out));
	rc = macro_expand(mc, evr_expr, sizeof(evr_expr) - 1, &evr, err);
	if (!rc && !(evr_s = kiln_arena_strdup(b->a, evr.ptr)))
		rc = kiln_err_set(err, KILN_ENOMEM, "out of memory");
	for (i = 0; !rc && i < sp->npackages; i++)
		if (sp->packages[i]->has_files)
			total += sp->packages[i]->deps[SPEC_DEPS_PROVIDES].n + 1;
	if (!rc && total && !(out->v = kiln_arena_array(b->a, total, sizeof(*out->v))))
		rc = kiln_err_set(err, KILN_ENOMEM, "out of memory");
	for (i = 0; !rc && i < sp->npackages; i++) {
		const struct spec_package *pk = sp->packages[i];
		const struct spec_deps *pv = &pk->deps[SPEC_DEPS_PROVIDES];

		if (!pk->has_files)
			continue;
		out->v[out->n++] = (struct spec_dep){pk->name, evr_s, RPMTAG_DEP_EQUAL};
		for (j = 0; j < pv->n; j++)
			out->v[out->n++] = pv->v[j];
	}
	out->cap = out->n;
	kiln_buf_release(&evr);
	return rc;
}

/* The job's own macros over the base: its defines and --with/--without. */
static kiln_rc member_macros(struct macro_ctx *mc, const struct scheduler_request *r,
                             struct kiln_err *err)
{
	kiln_rc rc = KILN_OK;
	size_t i;

	macro_ctx_set_restricted(mc, true);
	for (i = 0; !rc && i < r->defines.n; i++)
		rc = macro_define(mc, r->defines.keys[i], NULL, r->defines.values[i],
		                  MACRO_LEVEL_CMDLINE, err);
	for (i = 0; !rc && i < r->with.n; i++)
		rc = macro_define_bcond(mc, true, r->with.v[i], err);
	for (i = 0; !rc && i < r->without.n; i++)
		rc = macro_define_bcond(mc, false, r->without.v[i], err);
	return rc;
}

/* An SRPM member's spec: the package unpacked (as rpm -i does) into a directory of its own
 * under tmp_dir, its spec read there with NO_FILES like an inline one; dir (removed by the
 * caller) gets the directory. */
static kiln_rc srpm_spec(struct batch_sub *b, const struct scheduler_request *r,
                         struct macro_ctx *mc, struct kiln_buf *dir, struct spec **sp,
                         struct kiln_err *err)
{
	struct kiln_buf blob = KILN_BUF_INIT(KILN_LIMIT_PATH);
	struct kiln_buf text = KILN_BUF_INIT(KILN_LIMIT_HTTP_BODY);
	const char *spec_path = NULL;
	kiln_rc rc;

	kiln_buf_addf(dir, "%s/batch-srpm-XXXXXX", b->s->tmp_dir);
	rc = kiln_buf_finish(dir, err);
	if (!rc && !mkdtemp(dir->ptr))
		rc = kiln_err_sys(err, KILN_EIO, "cannot make a directory in %s", b->s->tmp_dir);
	if (!rc)
		rc = macro_define(mc, "_topdir", NULL, dir->ptr, MACRO_LEVEL_CMDLINE, err);
	if (!rc) {
		scheduler_blob_path(b->s, r->srpm.sha256, &blob);
		rc = kiln_buf_finish(&blob, err);
	}
	if (!rc)
		rc = worker_srpm_install(blob.ptr, mc, b->a, &spec_path, err);
	if (!rc)
		rc = util_read_file(spec_path, KILN_LIMIT_HTTP_BODY, &text, err);
	if (!rc)
		rc = spec_parse_mem(util_path_basename(spec_path), text.ptr, text.len, mc,
		                    SPEC_PARSE_ANYARCH | SPEC_PARSE_NO_FILES, sp, err);
	kiln_buf_release(&blob);
	kiln_buf_release(&text);
	return rc;
}

/* A git member's spec: its ref resolved in the scheduler's own mirror of the repository
 * (data_dir/git-cache, as the hooks' spec check), the commit's tree exported into a
 * directory of its own under tmp_dir (dir, removed by the caller), its spec read there.
 * The member is pinned to that commit (r->git.ref), so its job builds what was ordered. */
static kiln_rc git_spec(struct batch_sub *b, struct scheduler_request *r, struct macro_ctx *mc,
                        struct kiln_buf *dir, struct spec **sp, struct kiln_err *err)
{
	struct sources_fetch_opts o = {.connect_timeout = 10, .low_speed_time = 20, .retries = 1};
	struct kiln_buf cache = KILN_BUF_INIT(KILN_LIMIT_PATH);
	struct kiln_buf tree = KILN_BUF_INIT(KILN_LIMIT_PATH);
	struct kiln_buf abs = KILN_BUF_INIT(KILN_LIMIT_PATH);
	struct kiln_buf spec_path = KILN_BUF_INIT(KILN_LIMIT_PATH);
	struct kiln_buf text = KILN_BUF_INIT(KILN_LIMIT_HTTP_BODY);
	struct sources_git_rev rev;
	struct sources *src = NULL;
	kiln_rc rc;

	kiln_buf_addf(&cache, "%s/git-cache", b->s->cfg->data_dir);
	kiln_buf_addf(dir, "%s/batch-git-XXXXXX", b->s->tmp_dir);
	rc = kiln_buf_finish(&cache, err);
	if (!rc)
		rc = kiln_buf_finish(dir, err);
	if (!rc && !mkdtemp(dir->ptr))
		rc = kiln_err_sys(err, KILN_EIO, "cannot make a directory in %s", b->s->tmp_dir);
	if (!rc) {
		kiln_buf_addf(&tree, "%s/tree", dir->ptr);
		rc = kiln_buf_finish(&tree, err);
	}
	o.cache_dir = cache.ptr;
	if (!rc)
		rc = sources_new(&o, &src, err);
	if (!rc) {
		rc = sources_checkout(src, r->git.url, r->git.ref ? r->git.ref : "HEAD", tree.ptr,
		                      r->git.spec, &rev, &abs, &spec_path, err);
		if (rc &&
		    rc != KILN_ENOMEM) { /* the member's ref cannot be read: its request's fault */
			char why[KILN_ERR_MSG_MAX];

			snprintf(why, sizeof(why), "%s", err->msg);
			kiln_err_clear(err);
			rc = kiln_err_set(err, KILN_EINVAL, "%s", why);
		}
	}
	if (!rc)
		rc = macro_define(mc, "_topdir", NULL, dir->ptr, MACRO_LEVEL_CMDLINE, err);
	if (!rc)
		rc = macro_define(mc, "_sourcedir", NULL, abs.ptr, MACRO_LEVEL_CMDLINE, err);
	if (!rc)
		rc = util_read_file(spec_path.ptr, KILN_LIMIT_HTTP_BODY, &text, err);
	if (!rc)
		rc = spec_parse_mem(util_path_basename(r->git.spec), text.ptr, text.len, mc,
		                    SPEC_PARSE_ANYARCH | SPEC_PARSE_NO_FILES, sp, err);
	if (!rc) {
		r->git.ref = kiln_arena_strdup(b->a, rev.commit);
		if (!r->git.ref)
			rc = kiln_err_set(err, KILN_ENOMEM, "out of memory");
	}
	sources_free(src);
	kiln_buf_release(&cache);
	kiln_buf_release(&tree);
	kiln_buf_release(&abs);
	kiln_buf_release(&spec_path);
	kiln_buf_release(&text);
	return rc;
}

/* Member i's spec read into the graph. */
static kiln_rc member_graph_add(struct batch_sub *b, size_t i, struct scheduler_request *r,
                                struct kiln_err *err)
{
	struct macro_ctx *mc = macro_ctx_dup(b->base, err);
	struct kiln_buf dir = KILN_BUF_INIT(KILN_LIMIT_PATH);
	struct spec *sp = NULL;
	struct spec_deps prov;
	const char *label = r->has_srpm ? r->srpm.name : r->has_git ? r->git.spec : r->spec_name;
	kiln_rc rc = mc ? KILN_OK : KILN_ENOMEM;

	if (!rc)
		rc = member_macros(mc, r, err);
	if (!rc && r->has_srpm)
		rc = srpm_spec(b, r, mc, &dir, &sp, err);
	else if (!rc && r->has_git)
		rc = git_spec(b, r, mc, &dir, &sp, err);
	else if (!rc)
		rc = spec_parse_mem(r->spec_name, r->spec, strlen(r->spec), mc,
		                    SPEC_PARSE_ANYARCH | SPEC_PARSE_NO_FILES, &sp, err);
	if (!rc && !sp->npackages)
		rc = kiln_err_set(err, KILN_EINVAL, "no package in the spec");
	if (!rc)
		rc = spec_provides(b, mc, sp, &prov, err);
	if (!rc)
		rc = batch_graph_add(b->g, label, sp->packages[0]->name, &prov, &sp->buildrequires,
		                     NULL, err);
	if (!rc) {
		b->m[i].name = kiln_arena_strdup(b->a, sp->packages[0]->name);
		if (!b->m[i].name)
			rc = kiln_err_set(err, KILN_ENOMEM, "out of memory");
	}
	if (rc)
		kiln_err_wrap(err, "field 'members[%zu]' (%s)", i, label);
	spec_free(sp);
	macro_ctx_free(mc);
	if (dir.ptr && dir.len && util_rm_rf(dir.ptr, NULL))
		kiln_log(KILN_LOG_WARN, "cannot remove %s", dir.ptr);
	kiln_buf_release(&dir);
	return rc;
}

/* What a member may not say: the batch decides its root, lock and repository. */
static kiln_rc member_parse(const struct scheduler_batch_body *b, size_t i,
                            struct scheduler_request *r, struct kiln_arena *a, struct kiln_err *err)
{
	kiln_rc rc;

	if (r->root && *r->root && strcmp(r->root, b->root))
		return kiln_err_set(err, KILN_EINVAL,
		                    "field 'members[%zu].root': every member builds on the batch's "
		                    "root '%s'",
		                    i, b->root);
	if (r->root_lock)
		return kiln_err_set(err, KILN_EINVAL,
		                    "field 'members[%zu].root_lock': a batch member's lock is "
		                    "resolved when it builds",
		                    i);
	if (r->repository && *r->repository)
		return kiln_err_set(err, KILN_EINVAL,
		                    "field 'members[%zu].repository': a batch is published as a "
		                    "whole (the batch's field 'repository')",
		                    i);
	r->root = b->root;
	rc = scheduler_request_check(r, a, err);
	if (rc)
		kiln_err_wrap(err, "members[%zu]", i);
	return rc;
}

kiln_rc scheduler_batch_parse(const void *body, size_t len, struct kiln_arena *a,
                              struct scheduler_batch_body *out, struct kiln_err *err)
{
	struct scheduler_request *r;
	kiln_rc rc;
	size_t i;

	memset(out, 0, sizeof(*out));
	rc = api_json_decode(body, len, batch_fields, API_DECODE_STRICT, out, a, err);
	if (rc)
		return rc;
	if (!*out->root)
		return kiln_err_set(err, KILN_EINVAL, "field 'root': name a root configuration");
	if (!out->members.n)
		return kiln_err_set(err, KILN_EINVAL, "field 'members': at least one");
	/* the same name check as a job's root */
	rc = scheduler_request_root(&(struct scheduler_request){0}, out->root, NULL, a, err);
	r = out->members.v;
	for (i = 0; !rc && i < out->members.n; i++)
		rc = member_parse(out, i, &r[i], a, err);
	return rc;
}

/* fsync files from a few threads at once: the disk gets their writes together rather
 * than one round trip each (and, unlike syncfs, nobody else's dirty data). */
#define SYNC_THREADS 8

struct sync_work {
	const char *const *paths;
	size_t n, next;
	pthread_mutex_t lock;
	int err_no;
	const char *failed;
};

static void *sync_thread(void *arg)
{
	struct sync_work *w = arg;

	for (;;) {
		size_t i;
		int fd, e = 0;

		pthread_mutex_lock(&w->lock);
		i = w->next++;
		pthread_mutex_unlock(&w->lock);
		if (i >= w->n)
			return NULL;
		fd = open(w->paths[i], O_RDONLY | O_CLOEXEC);
		if (fd < 0 || fsync(fd) < 0)
			e = errno ? errno : EIO;
		util_close(fd);
		pthread_mutex_lock(&w->lock);
		if (e && !w->err_no)
			w->err_no = e, w->failed = w->paths[i];
		pthread_mutex_unlock(&w->lock);
	}
}

static kiln_rc files_sync(const char *const *paths, size_t n, struct kiln_err *err)
{
	struct sync_work w = {.paths = paths, .n = n};
	pthread_t th[SYNC_THREADS];
	size_t i, nth = 0;

	pthread_mutex_init(&w.lock, NULL);
	for (i = 0; i < SYNC_THREADS && i < n; i++)
		if (!pthread_create(&th[nth], NULL, sync_thread, &w))
			nth++;
	if (!nth) /* no thread: this one does it all */
		(void)sync_thread(&w);
	for (i = 0; i < nth; i++)
		pthread_join(th[i], NULL);
	pthread_mutex_destroy(&w.lock);
	if (w.err_no) {
		errno = w.err_no;
		return kiln_err_sys(err, KILN_EIO, "fsync %s", w.failed);
	}
	return KILN_OK;
}

/* The members' specs into the blob store before each job is prepared (which then finds
 * them there): all written, then fsynced together (files_sync; a thousand fsyncs one
 * after the other were most of a big batch's submission), then each renamed into place, so
 * a blob's name never points at bytes not yet on disk. */
static kiln_rc specs_store(struct batch_sub *b, struct kiln_err *err)
{
	const struct scheduler_request *r = b->body.members.v;
	const char **tmp = kiln_arena_array(b->a, b->n, sizeof(*tmp));
	char(*sha)[65] = kiln_arena_array(b->a, b->n, 65);
	struct kiln_buf path = KILN_BUF_INIT(KILN_LIMIT_PATH);
	char hex[2 * UTIL_DIGEST_MAX + 1];
	size_t i, nt = 0;
	int fd = -1;
	kiln_rc rc = tmp && sha ? KILN_OK : kiln_err_set(err, KILN_ENOMEM, "out of memory");

	for (i = 0; !rc && i < b->n; i++) {
		const char *t = r[i].spec;

		if (!t) /* an SRPM member: its blob is there already */
			continue;
		rc = util_digest_mem_hex(UTIL_DIGEST_SHA256, t, strlen(t), hex, err);
		if (rc || scheduler_blob_exists(b->s, hex))
			continue;
		kiln_buf_reset(&path);
		rc = scheduler_tmp_file(b->s, "spec", &path, &fd, err);
		if (!rc) {
			memcpy(sha[nt], hex, 65);
			tmp[nt] = kiln_arena_strdup(b->a, path.ptr);
			rc = tmp[nt++] ? util_write_all(fd, t, strlen(t), err)
			               : kiln_err_set(err, KILN_ENOMEM, "out of memory");
		}
		util_close(fd);
		fd = -1;
	}
	if (!rc)
		rc = files_sync(tmp, nt, err);
	for (i = 0; i < nt; i++) {
		if (!rc && tmp[i])
			rc = scheduler_blob_adopt(b->s, tmp[i], sha[i], err);
		else if (tmp[i])
			(void)unlink(tmp[i]);
	}
	kiln_buf_release(&path);
	return rc;
}

static kiln_rc sub_alloc(struct batch_sub *b, struct kiln_err *err)
{
	size_t i;

	b->jobs = kiln_arena_array(b->a, b->n, sizeof(*b->jobs));
	b->m = kiln_arena_array(b->a, b->n, sizeof(*b->m));
	b->ids = kiln_arena_array(b->a, b->n, sizeof(*b->ids));
	b->bufs = kiln_calloc(2 * b->n, sizeof(*b->bufs));
	if (!b->jobs || !b->m || !b->ids || !b->bufs)
		return kiln_err_set(err, KILN_ENOMEM, "out of memory");
	memset(b->jobs, 0, b->n * sizeof(*b->jobs));
	memset(b->m, 0, b->n * sizeof(*b->m));
	for (i = 0; i < 2 * b->n; i++)
		b->bufs[i] = (struct kiln_buf)KILN_BUF_INIT(KILN_LIMIT_HTTP_BODY);
	return KILN_OK;
}

/* The order: levels, dependencies and the edges with their reasons. */
static kiln_rc sub_order(struct batch_sub *b, struct kiln_err *err)
{
	size_t i, j, nd, total = 0;
	const size_t *d;
	kiln_rc rc;

	rc = batch_graph_order(b->g, b->body.bootstrap.v, b->body.bootstrap.n, err);
	if (rc == KILN_ENOTFOUND) { /* a bootstrap name no member builds: the request's fault */
		char msg[KILN_ERR_MSG_MAX];

		snprintf(msg, sizeof(msg), "%s", err->msg);
		kiln_err_clear(err);
		return kiln_err_set(err, KILN_EINVAL, "field 'bootstrap': %s", msg);
	}
	if (rc)
		return rc;
	for (i = 0; i < b->n; i++) {
		(void)batch_graph_deps(b->g, i, &nd);
		total += nd;
	}
	b->e = total ? kiln_arena_array(b->a, total, sizeof(*b->e)) : NULL;
	if (total && !b->e)
		return kiln_err_set(err, KILN_ENOMEM, "out of memory");
	for (i = 0; i < b->n; i++) {
		d = batch_graph_deps(b->g, i, &nd);
		b->m[i].node = (int64_t)i;
		b->m[i].level = batch_graph_level(b->g, i);
		b->m[i].pending = (int64_t)nd;
		for (j = 0; j < nd; j++) {
			const char *why = batch_graph_why(b->g, i, d[j]);

			b->e[b->ne++] = (struct scheduler_batch_edge){(int64_t)i, (int64_t)d[j],
			                                              why ? why : ""};
		}
	}
	return KILN_OK;
}

/* [projects] Who sees a batch sees its jobs: its project's readers, its submitter, admins,
 * and anyone where the project's repositories are public. */
static bool batch_visible(struct scheduler *s, struct api_req *req, const struct scheduler_batch *b)
{
	struct scheduler_job j = {0};

	j.project_id = b->project_id;
	j.token_id = b->token_id;
	return scheduler_job_visible(s, req, &j);
}

static kiln_rc sub_check(struct batch_sub *b, struct kiln_err *err)
{
	struct scheduler_request *r = b->body.members.v;
	kiln_rc rc;
	size_t i;

	b->n = b->body.members.n;
	if (b->body.repository && *b->body.repository) {
		for (i = 0; i < b->s->cfg->nrepos; i++)
			if (!strcmp(b->s->cfg->repos[i].name, b->body.repository))
				break;
		if (i == b->s->cfg->nrepos)
			return kiln_err_set(err, KILN_EINVAL,
			                    "field 'repository': no repository '%s' on this "
			                    "scheduler",
			                    b->body.repository);
		/* [projects] only into a repository of its submitter's project */
		rc = scheduler_repo_owned(
		    b->s, b->req, b->body.repository,
		    api_req_group(b->req) > 0 ? api_req_group(b->req) : SCHED_PROJECT_DEFAULT, err);
		if (rc)
			return rc;
	}
	for (i = 0; i < b->n; i++)
		if (r[i].has_srpm && !scheduler_blob_exists(b->s, r[i].srpm.sha256))
			return kiln_err_set(err, KILN_EINVAL,
			                    "field 'members[%zu].srpm': %s was not uploaded (PUT "
			                    "/api/v1/blobs/SHA256 first)",
			                    i, r[i].srpm.sha256);
	rc = sub_alloc(b, err);
	if (!rc)
		rc = base_macros(b, err);
	if (!rc)
		rc = batch_graph_new(&b->g, err);
	for (i = 0; !rc && i < b->n; i++)
		rc = member_graph_add(b, i, &r[i], err);
	if (!rc)
		rc = sub_order(b, err);
	b->read_ms = (util_clock_mono_ns() - b->t0) / 1000000;
	if (!rc)
		rc = specs_store(b, err);
	b->blobs_ms = (util_clock_mono_ns() - b->t0) / 1000000 - b->read_ms;
	for (i = 0; !rc && i < b->n; i++) {
		rc = scheduler_job_prepare(b->s, b->req, &r[i], &b->jobs[i], &b->bufs[2 * i],
		                           &b->bufs[2 * i + 1], err);
		b->jobs[i].idem_key = ""; /* the batch's, not each job's */
		if (rc)
			kiln_err_wrap(err, "members[%zu]", i);
	}
	return rc;
}

static void sub_release(struct batch_sub *b)
{
	size_t i;

	for (i = 0; b->bufs && i < 2 * b->n; i++)
		kiln_buf_release(&b->bufs[i]);
	free(b->bufs);
	batch_graph_free(b->g);
	macro_ctx_free(b->base);
}

static kiln_rc repo_init(struct scheduler *s, int64_t batch, struct kiln_err *err);

/* ---------------------------------------------------------------------------------------- */
/* Answers */

/* The batch's state from its jobs': building while any is queued or running, or succeeded
 * with its packages not in the batch repository yet (a moment after its end); succeeded
 * when all did; else failed. */
static const char *batch_state(const struct scheduler_batch_member *m, size_t n)
{
	bool ok = true;
	size_t i;

	for (i = 0; i < n; i++) {
		if (!scheduler_state_final(m[i].state) ||
		    (m[i].state == SCHED_SUCCEEDED && !m[i].landed))
			return "building";
		ok = ok && m[i].state == SCHED_SUCCEEDED;
	}
	return ok ? "succeeded" : "failed";
}

static void member_json(struct api_jw *w, const struct scheduler_batch_member *m,
                        const struct scheduler_batch_edge *e, size_t ne)
{
	size_t i;

	api_jw_obj(w);
	api_jw_kint(w, "id", m->job_id);
	api_jw_kstr(w, "name", m->name);
	api_jw_kstr(w, "spec_name", m->spec_name);
	api_jw_kint(w, "level", m->level);
	api_jw_kstr(w, "state", scheduler_state_name(m->state));
	api_jw_kint(w, "pending", m->pending);
	api_jw_kbool(w, "landed", m->landed);
	api_jw_key(w, "waiting_for");
	if (m->wait_on)
		api_jw_int(w, m->wait_on);
	else
		api_jw_null(w);
	api_jw_kstr(w, "message", m->message);
	api_jw_key(w, "depends_on");
	api_jw_arr(w);
	for (i = 0; i < ne; i++)
		if (e[i].job_id == m->job_id)
			api_jw_int(w, e[i].dep_id);
	api_jw_end(w);
	api_jw_end(w);
}

static void levels_json(struct api_jw *w, const struct scheduler_batch_member *m, size_t n)
{
	int64_t top = -1, l;
	size_t i;

	for (i = 0; i < n; i++)
		top = m[i].level > top ? m[i].level : top;
	api_jw_key(w, "levels");
	api_jw_arr(w);
	for (l = 0; l <= top; l++) {
		api_jw_arr(w);
		for (i = 0; i < n; i++)
			if (m[i].level == l)
				api_jw_int(w, m[i].job_id);
		api_jw_end(w);
	}
	api_jw_end(w);
}

static void batch_json(struct api_jw *w, const struct scheduler_batch *b,
                       const struct scheduler_batch_member *m, size_t n,
                       const struct scheduler_batch_edge *e, size_t ne, struct kiln_arena *a)
{
	int64_t by_state[SCHED_NSTATES] = {0};
	size_t i;

	for (i = 0; i < n; i++)
		if ((unsigned)m[i].state < SCHED_NSTATES)
			by_state[m[i].state]++;
	api_jw_obj(w);
	api_jw_kint(w, "id", b->id);
	api_jw_kstr(w, "root", b->root);
	api_jw_kstr(w, "bootstrap", b->bootstrap);
	api_jw_kstr(w, "repository", b->repository);
	api_jw_kstr(w, "state", batch_state(m, n));
	api_jw_kint(w, "created", b->created_ms);
	api_jw_kint(w, "updated", b->updated_ms);
	api_jw_kstr(w, "repo_url", kiln_arena_printf(a, "/batches/%lld/repo/", (long long)b->id));
	api_jw_key(w, "publish");
	api_jw_obj(w);
	api_jw_kstr(w, "state", b->publish_state);
	api_jw_kstr(w, "message", b->publish_message);
	api_jw_end(w);
	api_jw_key(w, "counts");
	api_jw_obj(w);
	for (i = 0; i < SCHED_NSTATES; i++)
		api_jw_kint(w, scheduler_state_name((enum scheduler_state)i), by_state[i]);
	api_jw_end(w);
	levels_json(w, m, n);
	api_jw_key(w, "jobs");
	api_jw_arr(w);
	for (i = 0; i < n; i++)
		member_json(w, &m[i], e, ne);
	api_jw_end(w);
	api_jw_key(w, "edges");
	api_jw_arr(w);
	for (i = 0; i < ne; i++) {
		api_jw_obj(w);
		api_jw_kint(w, "job", e[i].job_id);
		api_jw_kint(w, "dep", e[i].dep_id);
		api_jw_kstr(w, "why", e[i].why);
		api_jw_end(w);
	}
	api_jw_end(w);
	api_jw_end(w);
}

void scheduler_batch_job_json(struct scheduler *s, struct api_jw *w, int64_t id,
                              struct kiln_arena *a)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct scheduler_batch_member m = {0};
	struct scheduler_batch_edge *e = NULL;
	size_t ne = 0, i;

	if (s->store->ops->batch_member_of(s->store, id, a, &m, &err))
		return; /* a job of no batch (or unreadable: the job's answer stands) */
	if (s->store->ops->batch_edges(s->store, m.batch_id, a, &e, &ne, &err))
		ne = 0;
	api_jw_key(w, "batch");
	api_jw_obj(w);
	api_jw_kint(w, "id", m.batch_id);
	api_jw_kint(w, "level", m.level);
	api_jw_kint(w, "pending", m.pending);
	api_jw_key(w, "waiting_for");
	if (m.wait_on)
		api_jw_int(w, m.wait_on);
	else
		api_jw_null(w);
	api_jw_key(w, "depends_on");
	api_jw_arr(w);
	for (i = 0; i < ne; i++)
		if (e[i].job_id == id)
			api_jw_int(w, e[i].dep_id);
	api_jw_end(w);
	api_jw_end(w);
}

/* Batch id as the caller may see it (a submit-only token: only its own). */
static kiln_rc batch_read(struct scheduler *s, struct api_req *req, int64_t id,
                          struct scheduler_batch *b, struct scheduler_batch_member **m, size_t *n,
                          struct scheduler_batch_edge **e, size_t *ne, struct kiln_err *err)
{
	struct kiln_arena *a = api_req_arena(req);
	kiln_rc rc;

	rc = s->store->ops->batch_get(s->store, id, a, b, err);
	if (!rc && !batch_visible(s, req, b))
		rc = kiln_err_set(err, KILN_ENOTFOUND, "no batch %lld", (long long)id);
	if (!rc)
		rc = s->store->ops->batch_members(s->store, id, a, m, n, err);
	if (!rc)
		rc = s->store->ops->batch_edges(s->store, id, a, e, ne, err);
	return rc;
}

static void batch_reply(struct scheduler *s, struct api_req *req, struct api_resp *resp, int64_t id,
                        int status)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct scheduler_batch b = {0};
	struct scheduler_batch_member *m = NULL;
	struct scheduler_batch_edge *e = NULL;
	size_t n = 0, ne = 0;
	struct api_jw w;

	if (batch_read(s, req, id, &b, &m, &n, &e, &ne, &err)) {
		api_resp_from_err(resp, &err);
		return;
	}
	api_jw_init(&w, &resp->body);
	batch_json(&w, &b, m, n, e, ne, api_req_arena(req));
	scheduler_reply_json(resp, status);
}

static const char *words_joined(struct kiln_arena *a, const struct api_strlist *l)
{
	struct kiln_buf b = KILN_BUF_INIT(KILN_LIMIT_LINE);
	const char *out;
	size_t i;

	for (i = 0; i < l->n; i++)
		kiln_buf_addf(&b, "%s%s", i ? " " : "", l->v[i]);
	out = kiln_arena_strdup(a, b.ptr ? b.ptr : "");
	kiln_buf_release(&b);
	return out ? out : "";
}

/* What an Idempotency-Key's request is compared by: the sha256 of its canonical JSON. */
static kiln_rc request_key(const char *body, size_t len, char key[65], struct kiln_err *err)
{
	struct kiln_buf c = KILN_BUF_INIT(KILN_LIMIT_HTTP_BODY * 2);
	char hex[2 * UTIL_DIGEST_MAX + 1];
	kiln_rc rc;

	rc = api_json_canonical(body, len, &c, err);
	if (!rc)
		rc = util_digest_mem_hex(UTIL_DIGEST_SHA256, c.ptr, c.len, hex, err);
	if (!rc)
		memcpy(key, hex, 65);
	kiln_buf_release(&c);
	return rc;
}

/* The same Idempotency-Key again: the batch it made when the request is the same (a
 * client's retry), else a conflict. */
static void submit_again(struct scheduler *s, struct api_req *req, struct api_resp *resp,
                         int64_t id, const char *key)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct scheduler_batch b = {0};

	if (s->store->ops->batch_get(s->store, id, api_req_arena(req), &b, &err)) {
		api_resp_from_err(resp, &err);
		return;
	}
	if (strcmp(b.request_key, key)) {
		api_resp_error(resp, 409, "conflict",
		               "Idempotency-Key was used for batch %lld with a different request",
		               (long long)id);
		return;
	}
	batch_reply(s, req, resp, id, 200);
}

void scheduler_h_batch_create(void *ctx, struct api_req *req, struct api_resp *resp)
{
	struct scheduler *s = ctx;
	struct kiln_err err = KILN_ERR_INIT;
	struct batch_sub b = {
	    .s = s, .req = req, .a = api_req_arena(req), .t0 = util_clock_mono_ns()};
	struct scheduler_batch rec = {0};
	const char *body;
	char loc[64];
	size_t len;
	int64_t id = 0;
	kiln_rc rc;

	body = api_req_body(req, &len);
	rc = scheduler_batch_parse(body, len, b.a, &b.body, &err);
	if (!rc)
		rc = sub_check(&b, &err);
	if (rc == KILN_ECONFLICT) { /* a cycle the bootstrap order does not break */
		api_resp_error(resp, 422, "dependency_cycle", "%s", err.msg);
		goto out;
	}
	rec.token_id = api_req_token_id(req);
	/* [projects] the batch is its jobs' project's (each member's job_prepare chose it) */
	rec.project_id = !rc && b.n && b.jobs ? b.jobs[0].project_id : SCHED_PROJECT_DEFAULT;
	rec.root = b.body.root;
	rec.bootstrap = words_joined(b.a, &b.body.bootstrap);
	rec.repository = b.body.repository ? b.body.repository : "";
	rec.created_ms = util_clock_wall_ms();
	rec.idem_key = api_req_header(req, "Idempotency-Key"); /* checked by job_prepare */
	if (!rc)
		rc = request_key(body, len, rec.request_key, &err);
	if (!rc)
		rc = s->store->ops->batch_insert(s->store, &rec, b.jobs, b.m, b.n, b.e, b.ne, &id,
		                                 b.ids, &err);
	if (rc == KILN_EEXIST) {
		submit_again(s, req, resp, id, rec.request_key);
		goto out;
	}
	if (rc) {
		api_resp_from_err(resp, &err);
		goto out;
	}
	kiln_log(KILN_LOG_INFO,
	         "batch %lld: %zu jobs (%lld..%lld) on root %s (specs read and ordered in %lld ms, "
	         "stored in %lld ms, jobs in %lld ms)",
	         (long long)id, b.n, (long long)b.ids[0], (long long)b.ids[b.n - 1], rec.root,
	         (long long)b.read_ms, (long long)b.blobs_ms,
	         (long long)((util_clock_mono_ns() - b.t0) / 1000000 - b.read_ms - b.blobs_ms));
	if (repo_init(s, id, &err)) /* its workers would fail to read it: say so, loudly */
		kiln_log_err(KILN_LOG_ERROR, &err);
	batch_reply(s, req, resp, id, 201);
	snprintf(loc, sizeof(loc), "/api/v1/batches/%lld", (long long)id);
	api_resp_header(resp, "Location", loc);
	scheduler_queue_changed(s);
out:
	sub_release(&b);
}

void scheduler_h_batch(void *ctx, struct api_req *req, struct api_resp *resp)
{
	struct kiln_err err = KILN_ERR_INIT;
	int64_t id;

	if (scheduler_param_id(req, 0, &id, &err)) {
		api_resp_from_err(resp, &err);
		return;
	}
	batch_reply(ctx, req, resp, id, 200);
}

void scheduler_h_batches(void *ctx, struct api_req *req, struct api_resp *resp)
{
	struct scheduler *s = ctx;
	struct kiln_err err = KILN_ERR_INIT;
	struct kiln_arena *a = api_req_arena(req);
	struct scheduler_batch *v = NULL;
	int64_t limit, cursor;
	size_t n = 0, i;
	struct api_jw w;
	kiln_rc rc;

	rc = api_req_query_int(req, "limit", 50, 1, 1000, &limit, &err);
	if (!rc)
		rc = api_req_query_int(req, "cursor", 0, 0, INT64_MAX, &cursor, &err);
	if (!rc)
		rc = s->store->ops->batch_list(s->store, cursor, limit, a, &v, &n, &err);
	if (rc) {
		api_resp_from_err(resp, &err);
		return;
	}
	api_jw_init(&w, &resp->body);
	api_jw_obj(&w);
	api_jw_key(&w, "batches");
	api_jw_arr(&w);
	for (i = 0; i < n; i++) {
		struct scheduler_batch_member *m = NULL;
		size_t nm = 0;

		if (!batch_visible(s, req, &v[i]))
			continue;
		if (s->store->ops->batch_members(s->store, v[i].id, a, &m, &nm, &err)) {
			kiln_log_err(KILN_LOG_WARN, &err);
			kiln_err_clear(&err);
		}
		api_jw_obj(&w);
		api_jw_kint(&w, "id", v[i].id);
		api_jw_kstr(&w, "root", v[i].root);
		api_jw_kstr(&w, "state", batch_state(m, nm));
		api_jw_kint(&w, "jobs", (int64_t)nm);
		api_jw_kint(&w, "created", v[i].created_ms);
		api_jw_kstr(&w, "publish_state", v[i].publish_state);
		api_jw_end(&w);
	}
	api_jw_end(&w);
	api_jw_key(&w, "next_cursor");
	if (n == (size_t)limit)
		api_jw_int(&w, v[n - 1].id);
	else
		api_jw_null(&w);
	api_jw_end(&w);
	scheduler_reply_json(resp, 200);
}

/* ---------------------------------------------------------------------------------------- */
/* The batch repository */

static void repo_dir(const struct scheduler *s, int64_t batch, struct kiln_buf *out)
{
	kiln_buf_reset(out);
	kiln_buf_addf(out, "%s/batches/%lld/repo", s->cfg->data_dir, (long long)batch);
}

const char *scheduler_batch_repo_of(struct scheduler *s, int64_t id, struct kiln_arena *a)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct scheduler_batch_member m = {0};

	if (s->store->ops->batch_member_of(s->store, id, a, &m, &err))
		return NULL;
	return kiln_arena_printf(a, "/batches/%lld/repo", (long long)m.batch_id);
}

void scheduler_h_batch_repo_file(void *ctx, struct api_req *req, struct api_resp *resp)
{
	struct scheduler *s = ctx;
	struct kiln_buf dir = KILN_BUF_INIT(KILN_LIMIT_PATH);
	struct kiln_err err = KILN_ERR_INIT;
	int64_t id;

	if (scheduler_param_id(req, 0, &id, &err)) {
		api_resp_from_err(resp, &err);
		return;
	}
	repo_dir(s, id, &dir);
	scheduler_repo_serve(dir.err ? NULL : dir.ptr, api_req_param(req, 1), req, resp);
	kiln_buf_release(&dir);
}

/* dir/name the blob sha (a hard link, else a copy), replaced atomically. */
static kiln_rc repo_place(struct scheduler *s, const char *dir, const char *name, const char *sha,
                          struct kiln_err *err)
{
	struct kiln_buf blob = KILN_BUF_INIT(KILN_LIMIT_PATH), tmp = KILN_BUF_INIT(KILN_LIMIT_PATH);
	struct kiln_buf dst = KILN_BUF_INIT(KILN_LIMIT_PATH);
	kiln_rc rc;

	scheduler_blob_path(s, sha, &blob);
	kiln_buf_addf(&tmp, "%s/.tmp-%s", dir, name);
	kiln_buf_addf(&dst, "%s/%s", dir, name);
	rc = kiln_buf_finish(&blob, err);
	if (!rc)
		rc = kiln_buf_finish(&tmp, err);
	if (!rc)
		rc = kiln_buf_finish(&dst, err);
	if (!rc) {
		(void)unlink(tmp.ptr);
		if (link(blob.ptr, tmp.ptr) < 0)
			rc = util_copy_file(blob.ptr, tmp.ptr, 0644, err);
	}
	if (!rc && rename(tmp.ptr, dst.ptr) < 0)
		rc = kiln_err_sys(err, KILN_EIO, "cannot rename '%s'", tmp.ptr);
	kiln_buf_release(&blob);
	kiln_buf_release(&tmp);
	kiln_buf_release(&dst);
	return rc;
}

/* The batch repository's first, empty metadata: the first level's roots read it too. */
static kiln_rc repo_init(struct scheduler *s, int64_t batch, struct kiln_err *err)
{
	struct kiln_buf dir = KILN_BUF_INIT(KILN_LIMIT_PATH);
	struct repo_metadata_opts ro;
	struct repo_metadata_result res;
	kiln_rc rc;

	repo_dir(s, batch, &dir);
	rc = kiln_buf_finish(&dir, err);
	pthread_mutex_lock(&s->batch_lock);
	if (!rc)
		rc = util_mkdir_p(dir.ptr, 0755, err);
	if (!rc) {
		repo_metadata_opts_init(&ro);
		ro.workers = 1;
		ro.keep = 2;
		rc = repo_metadata_write(dir.ptr, &ro, &res, err);
	}
	pthread_mutex_unlock(&s->batch_lock);
	kiln_buf_release(&dir);
	if (rc)
		kiln_err_wrap(err, "batch %lld: its repository", (long long)batch);
	return rc;
}

/* Job j's binary packages (signed when signed) into its batch's repository, and the
 * repository's metadata rewritten: only the new packages are read (repo/'s description
 * cache), the swap is one rename. */
static kiln_rc repo_land(struct scheduler *s, const struct scheduler_job *j, int64_t batch,
                         struct kiln_arena *a, size_t *count, struct kiln_err *err)
{
	struct kiln_buf dir = KILN_BUF_INIT(KILN_LIMIT_PATH);
	struct scheduler_artifact *arts = NULL;
	struct repo_metadata_opts ro;
	struct repo_metadata_result res;
	size_t n = 0, i;
	kiln_rc rc;

	*count = 0;
	repo_dir(s, batch, &dir);
	rc = kiln_buf_finish(&dir, err);
	if (!rc)
		rc = s->store->ops->artifacts_list(s->store, j->id, j->attempts, a, &arts, &n, err);
	pthread_mutex_lock(&s->batch_lock);
	if (!rc)
		rc = util_mkdir_p(dir.ptr, 0755, err);
	for (i = 0; !rc && i < n; i++) {
		if (strcmp(arts[i].kind, "binary") ||
		    !kiln_str_ends(kiln_str_from(arts[i].name), ".rpm") ||
		    api_name_check(arts[i].name, strlen(arts[i].name), NULL))
			continue;
		rc = repo_place(s, dir.ptr, arts[i].name,
		                *arts[i].signed_sha256 ? arts[i].signed_sha256 : arts[i].sha256,
		                err);
		(*count)++;
	}
	if (!rc && *count) { /* none landed: the metadata stands as it is */
		repo_metadata_opts_init(&ro);
		ro.workers = 1; /* a job's few packages: no thread per CPU */
		ro.keep = 2;
		rc = repo_metadata_write(dir.ptr, &ro, &res, err);
	}
	pthread_mutex_unlock(&s->batch_lock);
	kiln_buf_release(&dir);
	return rc;
}

/* ---------------------------------------------------------------------------------------- */
/* Transitions */

/* Publish batch id when it names a repository, every job succeeded (and, with reruns, was
 * found reproducible) and it was not published yet. *why (in a) says why not when it may
 * not be; NULL while it is still building or when it was published. */
static kiln_rc batch_publish(struct scheduler *s, int64_t id, const char *repo,
                             struct kiln_arena *a, const char **why, struct kiln_err *err)
{
	struct scheduler_batch_member *m = NULL;
	struct scheduler_batch b = {0};
	int64_t *ids;
	size_t n = 0, i;
	kiln_rc rc;

	*why = NULL;
	rc = s->store->ops->batch_get(s->store, id, a, &b, err);
	if (!rc)
		rc = s->store->ops->batch_members(s->store, id, a, &m, &n, err);
	if (rc)
		return rc;
	if (!strcmp(b.publish_state, "published")) {
		*why = "the batch was published already";
		return KILN_OK;
	}
	/* the job that failed, rather than one of those that wait for it */
	for (i = 0; i < n && !*why; i++)
		if (m[i].state == SCHED_FAILED || m[i].state == SCHED_CANCELLED)
			*why = kiln_arena_printf(a, "job %lld (%s) is %s", (long long)m[i].job_id,
			                         m[i].name, scheduler_state_name(m[i].state));
	for (i = 0; i < n && !*why; i++) {
		if (m[i].state != SCHED_SUCCEEDED)
			*why = kiln_arena_printf(a, "job %lld (%s) is %s", (long long)m[i].job_id,
			                         m[i].name, scheduler_state_name(m[i].state));
		else if (m[i].reruns > 0 && strcmp(m[i].repro_verdict, "reproducible"))
			*why = kiln_arena_printf(a, "job %lld (%s): reproducibility verdict %s",
			                         (long long)m[i].job_id, m[i].name,
			                         *m[i].repro_verdict ? m[i].repro_verdict : "none");
	}
	if (*why)
		return KILN_OK;
	if (!(ids = kiln_arena_array(a, n, sizeof(*ids))))
		return kiln_err_set(err, KILN_ENOMEM, "out of memory");
	for (i = 0; i < n; i++)
		ids[i] = m[i].job_id;
	rc = scheduler_publish_jobs(s, ids, n, repo, err);
	if (!rc)
		rc = s->store->ops->batch_publish_set(s->store, id, repo, "published", "",
		                                      util_clock_wall_ms(), err);
	if (!rc)
		kiln_log(KILN_LOG_INFO, "batch %lld: %zu jobs published to %s", (long long)id, n,
		         repo);
	return rc;
}

/* After a member's end: the batch published when it names a repository and every job
 * ended; when one did not succeed the refusal is recorded (a retry may still succeed and
 * publish it). */
static void batch_maybe_publish(struct scheduler *s, int64_t batch, struct kiln_arena *a)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct scheduler_batch_member *m = NULL;
	struct scheduler_batch b = {0};
	const char *why = NULL;
	size_t n = 0, i;

	if (s->store->ops->batch_get(s->store, batch, a, &b, &err) || !*b.repository ||
	    !strcmp(b.publish_state, "published") ||
	    s->store->ops->batch_members(s->store, batch, a, &m, &n, &err))
		goto out;
	for (i = 0; i < n; i++)
		if (!scheduler_state_final(m[i].state) ||
		    (m[i].reruns > 0 && !strcmp(m[i].repro_verdict, "pending")))
			goto out; /* decided when the last one ends */
	if (!batch_publish(s, batch, b.repository, a, &why, &err) && why) {
		kiln_log(KILN_LOG_INFO, "batch %lld: not published to %s (%s)", (long long)batch,
		         b.repository, why);
		(void)s->store->ops->batch_publish_set(s->store, batch, b.repository, "refused",
		                                       why, util_clock_wall_ms(), &err);
	}
out:
	if (err.code) {
		kiln_err_wrap(&err, "batch %lld: publishing", (long long)batch);
		kiln_log_err(KILN_LOG_WARN, &err);
	}
}

static void job_landed(struct scheduler *s, const struct scheduler_job *j,
                       const struct scheduler_batch_member *m, struct kiln_arena *a)
{
	struct kiln_err err = KILN_ERR_INIT;
	size_t count = 0;
	bool first = false;

	if (m->landed)
		return;
	if (repo_land(s, j, m->batch_id, a, &count, &err) ||
	    s->store->ops->batch_landed(s->store, j->id, &first, &err)) {
		kiln_err_wrap(&err, "batch %lld: job %lld's packages", (long long)m->batch_id,
		              (long long)j->id);
		kiln_log_err(KILN_LOG_WARN, &err);
		return;
	}
	if (first) {
		kiln_log(KILN_LOG_INFO,
		         "batch %lld: job %lld (%s): %zu packages in the batch "
		         "repository",
		         (long long)m->batch_id, (long long)j->id, m->name, count);
		scheduler_queue_changed(s);
	}
}

static void job_failed(struct scheduler *s, const struct scheduler_job *j,
                       const struct scheduler_batch_member *m, struct kiln_arena *a)
{
	struct kiln_err err = KILN_ERR_INIT;
	const char *msg;
	int64_t n = 0;

	msg = kiln_arena_printf(a, "waits for job %lld (%s), which %s: retry it to build this",
	                        (long long)j->id, m->name,
	                        j->state == SCHED_CANCELLED ? "was cancelled" : "failed");
	if (!msg ||
	    s->store->ops->batch_dep_fail(s->store, j->id, msg, util_clock_wall_ms(), &n, &err)) {
		kiln_err_wrap(&err, "batch %lld: dependents of job %lld", (long long)m->batch_id,
		              (long long)j->id);
		kiln_log_err(KILN_LOG_WARN, &err);
		return;
	}
	if (n)
		kiln_log(KILN_LOG_INFO, "batch %lld: %lld jobs dep_failed on job %lld (%s)",
		         (long long)m->batch_id, (long long)n, (long long)j->id, m->name);
}

void scheduler_batch_job_ended(struct scheduler *s, const struct scheduler_job *j)
{
	struct kiln_arena a = KILN_ARENA_INIT(KILN_LIMIT_ARENA);
	struct kiln_err err = KILN_ERR_INIT;
	struct scheduler_batch_member m = {0};
	int64_t member = j->rerun_of ? j->rerun_of : j->id;

	if (!j->batch_member || s->store->ops->batch_member_of(s->store, member, &a, &m, &err))
		goto out; /* a job of no batch */
	if (!j->rerun_of && j->state == SCHED_SUCCEEDED)
		job_landed(s, j, &m, &a);
	else if (!j->rerun_of && (j->state == SCHED_FAILED || j->state == SCHED_CANCELLED))
		job_failed(s, j, &m, &a);
	/* after a rerun too: its verdict may be the last thing the batch waited for */
	batch_maybe_publish(s, m.batch_id, &a);
out:
	kiln_arena_release(&a);
}

void scheduler_batch_recover(struct scheduler *s)
{
	struct kiln_arena a = KILN_ARENA_INIT(KILN_LIMIT_ARENA);
	struct kiln_err err = KILN_ERR_INIT;
	int64_t *ids = NULL;
	size_t n = 0, i;

	if (s->store->ops->batch_unsettled(s->store, &a, &ids, &n, &err)) {
		kiln_log_err(KILN_LOG_WARN, &err);
		goto out;
	}
	if (n)
		kiln_log(KILN_LOG_INFO, "finishing the hand-over of %zu batch jobs", n);
	for (i = 0; i < n; i++) {
		struct scheduler_job j = {0};

		kiln_err_clear(&err);
		if (s->store->ops->job_get(s->store, ids[i], &a, &j, &err))
			kiln_log_err(KILN_LOG_WARN, &err);
		else
			scheduler_batch_job_ended(s, &j);
	}
out:
	kiln_arena_release(&a);
}

void scheduler_batch_job_retried(struct scheduler *s, int64_t id)
{
	struct kiln_arena a = KILN_ARENA_INIT(KILN_LIMIT_ARENA);
	struct kiln_err err = KILN_ERR_INIT;
	struct scheduler_batch_member self = {0}, *m = NULL;
	int64_t n = 0;
	size_t nm = 0, i;

	if (s->store->ops->batch_member_of(s->store, id, &a, &self, &err))
		goto out;
	if (s->store->ops->batch_resume(s->store, id, util_clock_wall_ms(), &n, &err))
		goto out;
	/* a job back in the queue may still wait for another failed one: dep_failed on that */
	if (s->store->ops->batch_members(s->store, self.batch_id, &a, &m, &nm, &err))
		goto out;
	for (i = 0; i < nm; i++) {
		struct scheduler_job j = {0};

		if (m[i].job_id == id ||
		    (m[i].state != SCHED_FAILED && m[i].state != SCHED_CANCELLED))
			continue;
		j.id = m[i].job_id;
		j.state = m[i].state;
		job_failed(s, &j, &m[i], &a);
	}
	kiln_log(KILN_LOG_INFO, "batch %lld: job %lld retried, %lld dependents wait again",
	         (long long)self.batch_id, (long long)id, (long long)n);
out:
	if (err.code != KILN_OK && err.code != KILN_ENOTFOUND)
		kiln_log_err(KILN_LOG_WARN, &err);
	kiln_arena_release(&a);
}

void scheduler_h_batch_cancel(void *ctx, struct api_req *req, struct api_resp *resp)
{
	struct scheduler *s = ctx;
	struct kiln_err err = KILN_ERR_INIT;
	struct kiln_arena *a = api_req_arena(req);
	struct scheduler_batch_member *m = NULL;
	struct scheduler_batch b = {0};
	int64_t id, level, top = 0, now = util_clock_wall_ms();
	size_t n = 0, i;
	kiln_rc rc;

	rc = scheduler_param_id(req, 0, &id, &err);
	if (!rc)
		rc = s->store->ops->batch_get(s->store, id, a, &b, &err);
	if (!rc && !batch_visible(s, req, &b))
		rc = kiln_err_set(&err, KILN_ENOTFOUND, "no batch %lld", (long long)id);
	if (!rc)
		rc = s->store->ops->batch_members(s->store, id, a, &m, &n, &err);
	if (rc) {
		api_resp_from_err(resp, &err);
		return;
	}
	for (i = 0; i < n; i++)
		top = m[i].level > top ? m[i].level : top;
	/* the last level first: a job is cancelled before what it waits for, so each ends
	 * cancelled rather than dep_failed on a dependency cancelled a moment earlier */
	for (level = top; level >= 0; level--) {
		for (i = 0; i < n; i++) {
			enum scheduler_state st;

			if (m[i].level != level || scheduler_state_final(m[i].state))
				continue;
			kiln_err_clear(&err);
			if (scheduler_job_cancel(s->store, m[i].job_id, now, &st, &err)) {
				if (err.code !=
				    KILN_ECONFLICT) /* ended meanwhile: nothing to cancel */
					kiln_log_err(KILN_LOG_WARN, &err);
				continue;
			}
			if (st == SCHED_CANCELLED)
				scheduler_job_ended(s, m[i].job_id);
		}
	}
	scheduler_queue_changed(s);
	batch_reply(s, req, resp, id, 202);
}

void scheduler_h_batch_publish(void *ctx, struct api_req *req, struct api_resp *resp)
{
	struct scheduler *s = ctx;
	struct kiln_err err = KILN_ERR_INIT;
	struct kiln_arena *a = api_req_arena(req);
	struct scheduler_batch b = {0};
	struct req_pub {
		const char *repository;
	} rp = {0};
	static const struct api_field fields[] = {
	    {"repository", API_F_STR, false, offsetof(struct req_pub, repository), 0, 128, NULL, 0,
	     0},
	    API_FIELD_END,
	};
	const char *body, *repo, *why = NULL;
	size_t len;
	int64_t id;
	kiln_rc rc;

	body = api_req_body(req, &len);
	rc = scheduler_param_id(req, 0, &id, &err);
	if (!rc)
		rc = s->store->ops->batch_get(s->store, id, a, &b, &err);
	if (!rc && !batch_visible(s, req, &b))
		rc = kiln_err_set(&err, KILN_ENOTFOUND, "no batch %lld", (long long)id);
	if (!rc && len)
		rc = api_json_decode(body, len, fields, API_DECODE_STRICT, &rp, a, &err);
	repo = rp.repository && *rp.repository ? rp.repository : b.repository;
	if (!rc && !*repo)
		rc = kiln_err_set(&err, KILN_EINVAL,
		                  "field 'repository': the batch names none: say which");
	if (!rc)
		rc = batch_publish(s, id, repo, a, &why, &err);
	if (!rc && why) {
		api_resp_error(resp, 409, "conflict", "batch %lld is not published: %s",
		               (long long)id, why);
		return;
	}
	if (rc) {
		api_resp_from_err(resp, &err);
		return;
	}
	batch_reply(s, req, resp, id, 200);
}
