/*
 * http_jobs.c - the client side of REST API v1: submit, list, show, cancel, retry,
 * placement, logs, artifacts and blobs (docs/api.md).
 */
#include "util/util.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "scheduler/scheduler_int.h"
#include "scheduler/http_int.h"

#define LOG_CHUNK_MAX (1 * KILN_MIB)

/* ---------------------------------------------------------------------------------------- */
/* Helpers shared by the handlers */

kiln_rc scheduler_param_id(struct api_req *req, unsigned i, int64_t *id, struct kiln_err *err)
{
	const char *p = api_req_param(req, i);

	if (!p || util_parse_i64(p, strlen(p), 10, 1, INT64_MAX, id, NULL))
		return kiln_err_set(err, KILN_ENOTFOUND, "no job '%.32s'", p ? p : "");
	return KILN_OK;
}

bool scheduler_reads_all(const struct api_req *req)
{
	return (api_req_scopes(req) & (API_SCOPE_READ | API_SCOPE_ADMIN)) != 0;
}

kiln_rc scheduler_job_param(struct scheduler *s, struct api_req *req, int64_t *id,
                            struct kiln_err *err)
{
	struct scheduler_job j = {0};
	kiln_rc rc;

	rc = scheduler_param_id(req, 0, id, err);
	if (rc || scheduler_reads_all(req))
		return rc;
	rc = s->store->ops->job_get(s->store, *id, api_req_arena(req), &j, err);
	if (!rc && j.token_id != api_req_token_id(req))
		rc = kiln_err_set(err, KILN_ENOTFOUND, "no job %lld", (long long)*id);
	return rc;
}

void scheduler_reply_json(struct api_resp *resp, int status)
{
	resp->status = status;
	kiln_buf_addch(&resp->body, '\n');
	if (resp->body.err)
		api_resp_error(resp, 500, "internal", "response too large");
}

/* Send a file from the blob store. */
static void send_blob(struct scheduler *s, const char *sha, const char *ctype,
                      struct api_resp *resp)
{
	struct kiln_buf p = KILN_BUF_INIT(KILN_LIMIT_PATH);
	struct stat st;
	int fd;

	if (!api_sha256_valid(sha)) {
		api_resp_error(resp, 400, "bad_request", "not a sha256 digest");
		goto out;
	}
	scheduler_blob_path(s, sha, &p);
	fd = open(p.ptr, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0 || fstat(fd, &st) < 0) {
		util_close(fd);
		api_resp_error(resp, 404, "not_found", "no blob %s", sha);
		goto out;
	}
	resp->file_fd = fd;
	resp->file_size = (uint64_t)st.st_size;
	resp->content_type = ctype;
out:
	kiln_buf_release(&p);
}

/* ---------------------------------------------------------------------------------------- */
/* Submitting */

static void jw_source_refs(struct api_jw *w, const struct scheduler_request *r)
{
	const struct scheduler_source_ref *v = r->sources.v;
	size_t i;

	api_jw_arr(w);
	for (i = 0; i < r->sources.n; i++) {
		api_jw_obj(w);
		api_jw_kstr(w, "name", v[i].name);
		api_jw_kstr(w, "sha256", v[i].sha256);
		api_jw_end(w);
	}
	api_jw_end(w);
}

static void jw_strlist(struct api_jw *w, const char *key, const struct api_strlist *l)
{
	size_t i;

	api_jw_key(w, key);
	api_jw_arr(w);
	for (i = 0; i < l->n; i++)
		api_jw_str(w, l->v[i]);
	api_jw_end(w);
}

/* What both the stored request and the manifest say about the build's inputs. */
static void jw_inputs(struct api_jw *w, const struct scheduler_request *r, const char *spec_sha,
                      bool manifest)
{
	size_t i;

	api_jw_kstr(w, "arch", r->arch ? r->arch : "");
	api_jw_key(w, "defines");
	api_jw_obj(w);
	for (i = 0; i < r->defines.n; i++)
		api_jw_kstr(w, r->defines.keys[i], r->defines.values[i]);
	api_jw_end(w);
	jw_strlist(w, "formats", &r->formats);
	api_jw_key(w, "source_date_epoch");
	if (r->has_sde)
		api_jw_int(w, r->source_date_epoch);
	else
		api_jw_null(w);
	api_jw_key(w, "sources");
	jw_source_refs(w, r);
	api_jw_key(w, "spec");
	if (spec_sha) {
		api_jw_obj(w);
		api_jw_kstr(w, "name", r->spec_name);
		api_jw_kstr(w, "sha256", spec_sha);
		api_jw_end(w);
	} else {
		api_jw_null(w);
	}
	api_jw_key(w, "git");
	if (r->has_git) {
		api_jw_obj(w);
		/* a full commit id pins it now; a branch or tag is pinned when a worker
		 * resolved it (gitpin.c): the manifest says null until then */
		if (r->git.ref && scheduler_git_commit_valid(r->git.ref))
			api_jw_kstr(w, "commit", r->git.ref);
		else if (manifest) {
			api_jw_key(w, "commit");
			api_jw_null(w);
		}
		api_jw_kstr(w, "url", r->git.url);
		api_jw_kstr(w, "ref", r->git.ref ? r->git.ref : "");
		api_jw_kstr(w, "spec", r->git.spec);
		api_jw_end(w);
	} else {
		api_jw_null(w);
	}
	api_jw_key(w, "srpm");
	if (r->has_srpm) {
		api_jw_obj(w);
		api_jw_kstr(w, "name", r->srpm.name);
		api_jw_kstr(w, "sha256", r->srpm.sha256);
		api_jw_end(w);
	} else {
		api_jw_null(w);
	}
	jw_strlist(w, "with", &r->with);
	jw_strlist(w, "without", &r->without);
}

/* Only the limits the submitter gave: the worker's own apply to the rest. */
static void jw_limits(struct api_jw *w, const struct scheduler_job_limits *l)
{
	api_jw_key(w, "limits");
	api_jw_obj(w);
	if (l->pids)
		api_jw_kint(w, "pids", l->pids);
	if (l->memory)
		api_jw_kint(w, "memory", l->memory);
	if (l->cpu)
		api_jw_kint(w, "cpu", l->cpu);
	if (l->log)
		api_jw_kint(w, "log", l->log);
	api_jw_end(w);
}

static void request_json(const struct scheduler_request *r, const char *spec_sha,
                         const char *sign_key, int64_t timeout, struct kiln_buf *out)
{
	struct api_jw w;

	api_jw_init(&w, out);
	api_jw_obj(&w);
	jw_inputs(&w, r, spec_sha, false);
	api_jw_kint(&w, "priority", r->priority);
	api_jw_kint(&w, "reruns", r->reruns ? r->reruns : r->reproduce);
	api_jw_kstr(&w, "repository", r->repository ? r->repository : "");
	api_jw_kstr(&w, "sign_key", sign_key);
	jw_strlist(&w, "tags", &r->tags);
	api_jw_kint(&w, "timeout", timeout);
	if (r->root)
		api_jw_kstr(&w, "root", r->root);
	if (r->root_lock)
		api_jw_kstr(&w, "root_lock", r->root_lock);
	if (r->has_limits)
		jw_limits(&w, &r->limits);
	api_jw_end(&w);
}

/* The manifest: every input of the build; its sha256 is the job's content key. The root
 * is the root configuration the job names, else the worker's default root. A git
 * job names its URL, ref and commit here: the commit is null until the first worker that
 * runs it reports what the ref resolved to (gitpin.c), which changes the content key. */
static kiln_rc manifest_json(const struct scheduler_request *r, const char *spec_sha,
                             struct kiln_buf *out, char key[65], struct kiln_err *err)
{
	struct kiln_buf raw = KILN_BUF_INIT(KILN_LIMIT_HTTP_BODY);
	char hex[2 * UTIL_DIGEST_MAX + 1];
	struct api_jw w;
	kiln_rc rc;

	api_jw_init(&w, &raw);
	api_jw_obj(&w);
	jw_inputs(&w, r, spec_sha, true);
	api_jw_kstr(&w, "kiln_version", KILN_VERSION);
	api_jw_kstr(&w, "root", r->root ? r->root : "worker-default");
	if (r->root_lock)
		api_jw_kstr(&w, "root_lock", r->root_lock);
	api_jw_end(&w);
	rc = kiln_buf_finish(&raw, err);
	if (!rc)
		rc = api_json_canonical(raw.ptr, raw.len, out, err);
	if (!rc)
		rc = util_digest_mem_hex(UTIL_DIGEST_SHA256, out->ptr, out->len, hex, err);
	if (!rc)
		memcpy(key, hex, 65);
	kiln_buf_release(&raw);
	return rc;
}

static kiln_rc inputs_present(struct scheduler *s, const struct scheduler_request *r,
                              struct kiln_err *err)
{
	const struct scheduler_source_ref *v = r->sources.v;
	size_t i;

	for (i = 0; i < r->sources.n; i++)
		if (!scheduler_blob_exists(s, v[i].sha256))
			return kiln_err_set(err, KILN_EINVAL,
			                    "field 'sources[%zu]': %s (%s) was not "
			                    "uploaded (PUT /api/v1/blobs/SHA256 first)",
			                    i, v[i].name, v[i].sha256);
	if (r->has_srpm && !scheduler_blob_exists(s, r->srpm.sha256))
		return kiln_err_set(err, KILN_EINVAL,
		                    "field 'srpm': %s was not uploaded (PUT "
		                    "/api/v1/blobs/SHA256 first)",
		                    r->srpm.sha256);
	return KILN_OK;
}

static kiln_rc options_check(struct scheduler *s, const struct scheduler_request *r,
                             const char **sign_key, struct kiln_err *err)
{
	const struct sign_key *k;
	size_t i;

	*sign_key = r->sign_key ? r->sign_key : s->cfg->default_key ? s->cfg->default_key : "";
	if (scheduler_key_find(s, *sign_key, &k, err)) {
		kiln_err_clear(err);
		return kiln_err_set(err, KILN_EINVAL,
		                    "field 'sign_key': no key '%s' on this "
		                    "scheduler",
		                    *sign_key);
	}
	if (!r->repository || !*r->repository)
		return KILN_OK;
	for (i = 0; i < s->cfg->nrepos; i++)
		if (!strcmp(s->cfg->repos[i].name, r->repository))
			return KILN_OK;
	return kiln_err_set(err, KILN_EINVAL,
	                    "field 'repository': no repository '%s' on this "
	                    "scheduler",
	                    r->repository);
}

static kiln_rc idem_key_get(struct api_req *req, const char **out, struct kiln_err *err)
{
	const char *k = api_req_header(req, "Idempotency-Key");
	const char *p;

	*out = "";
	if (!k)
		return KILN_OK;
	if (!*k || strlen(k) > 255)
		return kiln_err_set(err, KILN_EINVAL,
		                    "the Idempotency-Key header must have 1 to 255 "
		                    "bytes");
	for (p = k; *p; p++)
		if ((unsigned char)*p < 0x20 || (unsigned char)*p >= 0x7f)
			return kiln_err_set(err, KILN_EINVAL,
			                    "the Idempotency-Key header must be "
			                    "printable ASCII");
	*out = k;
	return KILN_OK;
}

/* Tags as stored: ",a,b," for the store's subset test. */
static const char *tags_joined(struct kiln_arena *a, const struct api_strlist *l)
{
	struct kiln_buf b = KILN_BUF_INIT(KILN_LIMIT_LINE);
	const char *out;
	size_t i;

	if (!l->n)
		return "";
	for (i = 0; i < l->n; i++)
		kiln_buf_addf(&b, ",%s", l->v[i]);
	kiln_buf_addch(&b, ',');
	out = kiln_arena_strdup(a, b.ptr);
	kiln_buf_release(&b);
	return out ? out : "";
}

/* An existing job for the same Idempotency-Key: the same one again, or a conflict. */
static void submit_again(struct scheduler *s, int64_t id, const char *key, struct api_req *req,
                         struct api_resp *resp)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct scheduler_job j = {0};
	struct api_jw w;
	char submitted[65];

	if (s->store->ops->job_get(s->store, id, api_req_arena(req), &j, &err)) {
		api_resp_from_err(resp, &err);
		return;
	}
	/* a git job's key changed when its commit was pinned: compare the submitted one */
	if (scheduler_git_submitted_key(&j, submitted, &err)) {
		api_resp_from_err(resp, &err);
		return;
	}
	if (strcmp(submitted, key)) {
		api_resp_error(resp, 409, "conflict",
		               "Idempotency-Key was used for job %lld with a "
		               "different request",
		               (long long)id);
		return;
	}
	api_jw_init(&w, &resp->body);
	scheduler_job_json(&w, &j);
	scheduler_reply_json(resp, 200);
}

kiln_rc scheduler_job_prepare(struct scheduler *s, struct api_req *req,
                              const struct scheduler_request *r, struct scheduler_job *j,
                              struct kiln_buf *reqjson, struct kiln_buf *manifest,
                              struct kiln_err *err)
{
	struct kiln_arena *a = api_req_arena(req);
	struct kiln_buf words = KILN_BUF_INIT(KILN_LIMIT_LINE);
	const char *sign_key = "";
	char spec_sha[65] = "";
	kiln_rc rc;

	rc = options_check(s, r, &sign_key, err);
	if (!rc && r->reruns && r->reproduce && r->reruns != r->reproduce)
		rc = kiln_err_set(err, KILN_EINVAL,
		                  "fields 'reruns' and 'reproduce' name the same count: give one");
	if (!rc)
		rc = scheduler_vary_check(&r->variations, &words, err);
	if (!rc)
		j->variations = kiln_arena_strdup(a, words.ptr);
	kiln_buf_release(&words);
	if (!rc && !j->variations)
		rc = kiln_err_set(err, KILN_ENOMEM, "out of memory");
	if (!rc)
		rc = inputs_present(s, r, err);
	if (!rc && r->spec)
		rc = scheduler_blob_put_mem(s, r->spec, strlen(r->spec), spec_sha, err);
	if (!rc)
		rc = idem_key_get(req, &j->idem_key, err);
	if (rc)
		return rc;
	request_json(r, r->spec ? spec_sha : NULL, sign_key, r->timeout ? r->timeout : 3 * 3600,
	             reqjson);
	rc = kiln_buf_finish(reqjson, err);
	if (!rc)
		rc = manifest_json(r, r->spec ? spec_sha : NULL, manifest, j->content_key, err);
	if (rc)
		return rc;
	j->priority = r->priority;
	j->arch = r->arch ? r->arch : "";
	j->tags = tags_joined(a, &r->tags);
	j->spec_name = r->spec      ? r->spec_name
	               : r->has_git ? util_path_basename(r->git.spec)
	                            : r->srpm.name;
	j->request = reqjson->ptr;
	j->manifest = manifest->ptr;
	j->sign_key = sign_key;
	j->token_id = api_req_token_id(req);
	j->created_ms = util_clock_wall_ms();
	j->max_attempts = r->max_attempts ? r->max_attempts : s->cfg->max_attempts;
	j->timeout_s = r->timeout ? r->timeout : 3 * 3600;
	j->reruns = r->reruns ? r->reruns : r->reproduce;
	return KILN_OK;
}

void scheduler_h_submit(void *ctx, struct api_req *req, struct api_resp *resp)
{
	struct scheduler *s = ctx;
	struct kiln_buf reqjson = KILN_BUF_INIT(KILN_LIMIT_HTTP_BODY);
	struct kiln_buf manifest = KILN_BUF_INIT(KILN_LIMIT_HTTP_BODY);
	struct kiln_err err = KILN_ERR_INIT;
	struct scheduler_request r;
	struct scheduler_job j = {0};
	struct api_jw w;
	const char *body;
	char loc[64];
	size_t len;
	int64_t id;
	kiln_rc rc;

	body = api_req_body(req, &len);
	rc = scheduler_request_parse(body, len, api_req_arena(req), &r, &err);
	if (!rc)
		rc = scheduler_job_prepare(s, req, &r, &j, &reqjson, &manifest, &err);
	if (!rc)
		rc = s->store->ops->job_insert(s->store, &j, &id, &err);
	if (rc == KILN_EEXIST) {
		submit_again(s, id, j.content_key, req, resp);
		goto out;
	}
	if (!rc)
		rc = s->store->ops->job_get(s->store, id, api_req_arena(req), &j, &err);
	if (rc) {
		api_resp_from_err(resp, &err);
		goto out;
	}
	api_jw_init(&w, &resp->body);
	scheduler_job_json(&w, &j);
	scheduler_reply_json(resp, 201);
	snprintf(loc, sizeof(loc), "/api/v1/jobs/%lld", (long long)id);
	api_resp_header(resp, "Location", loc);
	api_server_wake(s->http);
out:
	kiln_buf_release(&reqjson);
	kiln_buf_release(&manifest);
}

/* ---------------------------------------------------------------------------------------- */
/* Reading jobs */

void scheduler_h_jobs(void *ctx, struct api_req *req, struct api_resp *resp)
{
	struct scheduler *s = ctx;
	struct kiln_err err = KILN_ERR_INIT;
	struct scheduler_job *v = NULL;
	enum scheduler_state st = SCHED_QUEUED;
	const char *state = api_req_query(req, "state");
	const char *name = api_req_query(req, "name");
	bool all = scheduler_reads_all(req);
	int64_t limit, cursor;
	struct api_jw w;
	size_t n = 0, i;
	kiln_rc rc;

	rc = api_req_query_int(req, "limit", 50, 1, 1000, &limit, &err);
	if (!rc)
		rc = api_req_query_int(req, "cursor", 0, 0, INT64_MAX, &cursor, &err);
	if (!rc && state && *state)
		rc = scheduler_state_parse(state, &st, &err);
	if (!rc && name && strlen(name) > 255)
		rc = kiln_err_set(&err, KILN_EINVAL, "query 'name': longer than 255 bytes");
	if (!rc)
		rc = s->store->ops->job_list(s->store, state && *state ? (int)st : -1,
		                             name ? name : "", cursor, limit, api_req_arena(req),
		                             &v, &n, &err);
	if (rc) {
		api_resp_from_err(resp, &err);
		return;
	}
	api_jw_init(&w, &resp->body);
	api_jw_obj(&w);
	api_jw_key(&w, "jobs");
	api_jw_arr(&w);
	/* a submit-only token lists its own jobs: a page may come out short, the cursor
	 * still pages on through all of them */
	for (i = 0; i < n; i++)
		if (all || v[i].token_id == api_req_token_id(req))
			scheduler_job_json(&w, &v[i]);
	api_jw_end(&w);
	api_jw_key(&w, "next_cursor");
	if (n == (size_t)limit && n)
		api_jw_int(&w, v[n - 1].id);
	else
		api_jw_null(&w);
	api_jw_end(&w);
	scheduler_reply_json(resp, 200);
}

static void artifacts_json(struct api_jw *w, const struct scheduler_artifact *v, size_t n)
{
	size_t i;

	api_jw_arr(w);
	for (i = 0; i < n; i++)
		scheduler_artifact_json(w, &v[i]);
	api_jw_end(w);
}

void scheduler_h_job(void *ctx, struct api_req *req, struct api_resp *resp)
{
	struct scheduler *s = ctx;
	struct kiln_arena *a = api_req_arena(req);
	struct kiln_err err = KILN_ERR_INIT;
	struct scheduler_attempt *att = NULL;
	struct scheduler_artifact *arts = NULL;
	struct scheduler_job j = {0};
	size_t natt = 0, narts = 0, i;
	/* read before the tables: a write after it makes what is built here stale */
	uint64_t version = s->store->ops->version(s->store);
	struct api_jw w;
	int64_t id;
	kiln_rc rc;

	rc = scheduler_job_param(s, req, &id, &err);
	if (!rc && scheduler_jobcache_get(s->jobcache, id, version, &resp->body)) {
		resp->status = 200;
		return;
	}
	if (!rc)
		rc = s->store->ops->job_get(s->store, id, a, &j, &err);
	if (!rc)
		rc = s->store->ops->attempts_list(s->store, id, a, &att, &natt, &err);
	if (!rc)
		rc =
		    s->store->ops->artifacts_list(s->store, id, j.attempts, a, &arts, &narts, &err);
	if (rc) {
		api_resp_from_err(resp, &err);
		return;
	}
	api_jw_init(&w, &resp->body);
	api_jw_obj(&w);
	scheduler_job_json_fields(&w, &j);
	api_jw_key(&w, "attempt_list");
	api_jw_arr(&w);
	for (i = 0; i < natt; i++)
		scheduler_attempt_json(&w, &att[i]);
	api_jw_end(&w);
	api_jw_key(&w, "artifacts");
	artifacts_json(&w, arts, narts);
	api_jw_end(&w);
	scheduler_reply_json(resp, 200);
	if (resp->status == 200)
		scheduler_jobcache_put(s->jobcache, id, version, resp->body.ptr, resp->body.len);
}

/* The state of attempt n of j (an earlier attempt's is not the job's); the job's own
 * before its first attempt. */
static kiln_rc attempt_state(struct scheduler *s, struct api_req *req,
                             const struct scheduler_job *j, int64_t n, const char **state,
                             struct kiln_err *err)
{
	struct scheduler_attempt *v = NULL;
	size_t cnt = 0, i;
	kiln_rc rc;

	*state = scheduler_state_name(j->state);
	if (n == 0 && j->attempts == 0)
		return KILN_OK;
	rc = s->store->ops->attempts_list(s->store, j->id, api_req_arena(req), &v, &cnt, err);
	for (i = 0; !rc && i < cnt; i++) {
		if (v[i].n == n) {
			*state = v[i].state;
			return KILN_OK;
		}
	}
	return rc ? rc
	          : kiln_err_set(err, KILN_ENOTFOUND, "job %lld has no attempt %lld",
	                         (long long)j->id, (long long)n);
}

void scheduler_h_artifacts(void *ctx, struct api_req *req, struct api_resp *resp)
{
	struct scheduler *s = ctx;
	struct kiln_err err = KILN_ERR_INIT;
	struct scheduler_artifact *arts = NULL;
	struct scheduler_job j = {0};
	const char *state = "";
	size_t n = 0;
	struct api_jw w;
	int64_t id, attempt;
	kiln_rc rc;

	rc = scheduler_job_param(s, req, &id, &err);
	if (!rc)
		rc = s->store->ops->job_get(s->store, id, api_req_arena(req), &j, &err);
	if (!rc)
		rc = api_req_query_int(req, "attempt", j.attempts, 0, INT64_MAX, &attempt, &err);
	if (!rc)
		rc = attempt_state(s, req, &j, attempt, &state, &err);
	if (!rc)
		rc = s->store->ops->artifacts_list(s->store, id, attempt, api_req_arena(req), &arts,
		                                   &n, &err);
	if (rc) {
		api_resp_from_err(resp, &err);
		return;
	}
	api_jw_init(&w, &resp->body);
	api_jw_obj(&w);
	api_jw_kint(&w, "job", id);
	api_jw_kint(&w, "attempt", attempt);
	api_jw_kstr(&w, "state", state);
	api_jw_key(&w, "artifacts");
	artifacts_json(&w, arts, n);
	api_jw_end(&w);
	scheduler_reply_json(resp, 200);
}

kiln_rc scheduler_artifact_visible(struct scheduler *s, struct api_req *req, const char *sha,
                                   struct kiln_err *err)
{
	if (scheduler_reads_all(req))
		return KILN_OK;
	return s->store->ops->artifact_owned(s->store, sha, api_req_token_id(req), err);
}

void scheduler_h_artifact_get(void *ctx, struct api_req *req, struct api_resp *resp)
{
	struct kiln_err err = KILN_ERR_INIT;

	if (scheduler_artifact_visible(ctx, req, api_req_param(req, 0), &err)) {
		api_resp_from_err(resp, &err);
		return;
	}
	send_blob(ctx, api_req_param(req, 0), "application/x-rpm", resp);
}

void scheduler_h_blob_get(void *ctx, struct api_req *req, struct api_resp *resp)
{
	send_blob(ctx, api_req_param(req, 0), "application/octet-stream", resp);
}

void scheduler_h_blob_put(void *ctx, struct api_req *req, struct api_resp *resp)
{
	struct scheduler *s = ctx;
	struct kiln_err err = KILN_ERR_INIT;
	const char *sha = api_req_param(req, 0);
	struct api_jw w;

	if (!api_sha256_valid(sha)) {
		api_resp_error(resp, 400, "bad_request",
		               "the path must end in the sha256 of the "
		               "body (64 lowercase hex digits)");
		return;
	}
	if (strcmp(sha, api_req_upload_sha256(req))) {
		api_resp_error(resp, 422, "digest_mismatch", "the body's sha256 is %s, not %s",
		               api_req_upload_sha256(req), sha);
		return;
	}
	if (scheduler_blob_adopt(s, api_req_upload_path(req), sha, &err)) {
		api_resp_from_err(resp, &err);
		return;
	}
	api_jw_init(&w, &resp->body);
	api_jw_obj(&w);
	api_jw_kstr(&w, "sha256", sha);
	api_jw_kint(&w, "size", (int64_t)api_req_upload_size(req));
	api_jw_end(&w);
	scheduler_reply_json(resp, 201);
}

/* ---------------------------------------------------------------------------------------- */
/* Acting on jobs */

void scheduler_h_cancel(void *ctx, struct api_req *req, struct api_resp *resp)
{
	struct scheduler *s = ctx;
	struct kiln_err err = KILN_ERR_INIT;
	enum scheduler_state st;
	struct scheduler_job j = {0};
	struct api_jw w;
	int64_t id;
	kiln_rc rc;

	rc = scheduler_job_param(s, req, &id, &err);
	if (!rc)
		rc = scheduler_job_cancel(s->store, id, util_clock_wall_ms(), &st, &err);
	if (!rc)
		rc = s->store->ops->job_get(s->store, id, api_req_arena(req), &j, &err);
	if (rc) {
		api_resp_from_err(resp, &err);
		return;
	}
	api_server_wake(s->http);
	if (j.state == SCHED_CANCELLED) /* a queued rerun cancelled: rerun_failed */
		scheduler_repro_job_ended(s, id);
	api_jw_init(&w, &resp->body);
	scheduler_job_json(&w, &j);
	scheduler_reply_json(resp, 202);
}

void scheduler_h_retry(void *ctx, struct api_req *req, struct api_resp *resp)
{
	struct scheduler *s = ctx;
	struct kiln_err err = KILN_ERR_INIT;
	struct scheduler_job j = {0};
	struct api_jw w;
	int64_t id;
	kiln_rc rc;

	rc = scheduler_job_param(s, req, &id, &err);
	if (!rc)
		rc = scheduler_job_retry(s->store, id, util_clock_wall_ms(), &err);
	if (!rc)
		rc = s->store->ops->job_get(s->store, id, api_req_arena(req), &j, &err);
	if (rc) {
		api_resp_from_err(resp, &err);
		return;
	}
	api_server_wake(s->http);
	api_jw_init(&w, &resp->body);
	scheduler_job_json(&w, &j);
	scheduler_reply_json(resp, 200);
}

void scheduler_h_placement(void *ctx, struct api_req *req, struct api_resp *resp)
{
	struct scheduler *s = ctx;
	struct kiln_err err = KILN_ERR_INIT;
	struct scheduler_job j = {0};
	struct api_jw w;
	int64_t id;
	kiln_rc rc;

	rc = scheduler_job_param(s, req, &id, &err);
	if (!rc)
		rc = s->store->ops->job_get(s->store, id, api_req_arena(req), &j, &err);
	api_jw_init(&w, &resp->body);
	if (!rc)
		rc = scheduler_placement_json(s, &j, api_req_arena(req), &w, &err);
	if (rc) {
		api_resp_from_err(resp, &err);
		return;
	}
	scheduler_reply_json(resp, 200);
}

/* ---------------------------------------------------------------------------------------- */
/* Logs */

struct log_wait {
	int64_t deadline;
};

/* The attempt n of the job ("latest" or a number), and whether it still runs. */
static kiln_rc find_attempt(struct scheduler *s, struct api_req *req, int64_t job, int64_t *n,
                            bool *active, struct kiln_err *err)
{
	struct scheduler_attempt *v = NULL;
	const char *p = api_req_param(req, 1);
	size_t cnt = 0, i;
	kiln_rc rc;

	rc = s->store->ops->attempts_list(s->store, job, api_req_arena(req), &v, &cnt, err);
	if (rc)
		return rc;
	if (!strcmp(p, "latest")) {
		*n = cnt ? v[cnt - 1].n : 0;
	} else if (util_parse_i64(p, strlen(p), 10, 1, INT64_MAX, n, NULL)) {
		return kiln_err_set(err, KILN_ENOTFOUND, "no attempt '%.32s'", p);
	}
	for (i = 0; i < cnt; i++) {
		if (v[i].n == *n) {
			*active = !strcmp(v[i].state, "leased") || !strcmp(v[i].state, "building");
			return KILN_OK;
		}
	}
	return kiln_err_set(err, KILN_ENOTFOUND, "job %lld has no attempt %s yet", (long long)job,
	                    p);
}

static void log_headers(struct api_resp *resp, int64_t n, int64_t size, bool complete)
{
	char v[32];

	snprintf(v, sizeof(v), "%lld", (long long)size);
	api_resp_header(resp, "X-Kiln-Log-Size", v);
	snprintf(v, sizeof(v), "%lld", (long long)n);
	api_resp_header(resp, "X-Kiln-Attempt", v);
	api_resp_header(resp, "X-Kiln-Log-Complete", complete ? "1" : "0");
	api_resp_header(resp, "Cache-Control", "no-store");
}

/* Answer now with what the log holds past offset, or ask to wait for more. */
static void log_answer(struct scheduler *s, struct api_req *req, struct api_resp *resp, int64_t job,
                       int64_t n, bool active, int64_t offset, bool follow)
{
	struct kiln_buf p = KILN_BUF_INIT(KILN_LIMIT_PATH);
	struct log_wait *lw = api_req_slot_get(req);
	struct stat st;
	int64_t size = 0, now = util_clock_wall_ms();
	int fd;

	scheduler_log_path(s, job, n, &p);
	fd = open(p.ptr, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd >= 0 && fstat(fd, &st) == 0)
		size = (int64_t)st.st_size;
	kiln_buf_release(&p);
	if (offset >= size && follow && active) {
		if (!lw) {
			lw = kiln_arena_alloc(api_req_arena(req), sizeof(*lw));
			if (lw)
				lw->deadline = now + s->cfg->poll_max_ms;
			api_req_slot_set(req, lw, NULL);
		}
		if (lw && now < lw->deadline) {
			util_close(fd);
			resp->wait_until_ms = lw->deadline;
			return;
		}
	}
	resp->content_type = "text/plain; charset=utf-8";
	if (fd >= 0 && offset < size) {
		resp->file_fd = fd;
		resp->file_off = (uint64_t)offset;
		resp->file_size = (uint64_t)(size - offset);
		if (resp->file_size > LOG_CHUNK_MAX)
			resp->file_size = LOG_CHUNK_MAX;
		log_headers(resp, n, size, !active && offset + (int64_t)resp->file_size == size);
		return;
	}
	util_close(fd);
	log_headers(resp, n, size, !active);
}

void scheduler_h_log_get(void *ctx, struct api_req *req, struct api_resp *resp)
{
	struct scheduler *s = ctx;
	struct kiln_err err = KILN_ERR_INIT;
	const char *follow = api_req_query(req, "follow");
	int64_t job, n = 0, offset;
	bool active = false;
	kiln_rc rc;

	rc = scheduler_job_param(s, req, &job, &err);
	if (!rc)
		rc = find_attempt(s, req, job, &n, &active, &err);
	if (!rc)
		rc = api_req_query_int(req, "offset", 0, 0, INT64_MAX, &offset, &err);
	if (rc) {
		api_resp_from_err(resp, &err);
		return;
	}
	log_answer(s, req, resp, job, n, active, offset, follow && !strcmp(follow, "1"));
}
