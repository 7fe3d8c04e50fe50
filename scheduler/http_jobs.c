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
	scheduler_webhook_job_state(s, &j); /* queued */
	api_jw_init(&w, &resp->body);
	scheduler_job_json(&w, &j);
	scheduler_reply_json(resp, 201);
	snprintf(loc, sizeof(loc), "/api/v1/jobs/%lld", (long long)id);
	api_resp_header(resp, "Location", loc);
	scheduler_queue_changed(s);
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
	int64_t limit, cursor, project = 0;
	struct api_jw w;
	size_t n = 0, i;
	kiln_rc rc;

	rc = scheduler_project_param(s, req, api_req_query(req, "project"), &project, &err);
	if (!rc)
		rc = api_req_query_int(req, "limit", 50, 1, 1000, &limit, &err);
	if (!rc)
		rc = api_req_query_int(req, "cursor", 0, 0, INT64_MAX, &cursor, &err);
	if (!rc && state && *state)
		rc = scheduler_state_parse(state, &st, &err);
	if (!rc && name && strlen(name) > 255)
		rc = kiln_err_set(&err, KILN_EINVAL, "query 'name': longer than 255 bytes");
	if (!rc)
		rc = s->store->ops->job_list(s->store, project, state && *state ? (int)st : -1,
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
	/* a submit-only token lists its own jobs, an anonymous reader public projects': a
	 * page may come out short, the cursor still pages on through all of them */
	for (i = 0; i < n; i++)
		if (scheduler_job_visible(s, req, &v[i]))
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

	/* who may see the job is kept with its body: a hit reads no table (CI polls a job
	 * with its project's read token) */
	rc = scheduler_param_id(req, 0, &id, &err);
	if (!rc && scheduler_jobcache_get(s->jobcache, id, version, &j, &resp->body)) {
		if (scheduler_job_visible(s, req, &j)) {
			resp->status = 200;
			return;
		}
		kiln_buf_reset(&resp->body);
		rc = kiln_err_set(&err, KILN_ENOTFOUND, "no job %lld", (long long)id);
	}
	if (!rc)
		rc = s->store->ops->job_get(s->store, id, a, &j, &err);
	if (!rc && !scheduler_job_visible(s, req, &j))
		rc = kiln_err_set(&err, KILN_ENOTFOUND, "no job %lld", (long long)id);
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
	scheduler_batch_job_json(s, &w, id, a); /* [batches] */
	api_jw_end(&w);
	scheduler_reply_json(resp, 200);
	if (resp->status == 200)
		scheduler_jobcache_put(s->jobcache, &j, version, resp->body.ptr, resp->body.len);
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
	struct kiln_err err = KILN_ERR_INIT;
	const char *sha = api_req_param(req, 0);

	/* [projects] workers fetch any input; a reader only its project's packages */
	if (!(api_req_scopes(req) & (API_SCOPE_ADMIN | API_SCOPE_WORKER)) &&
	    api_sha256_valid(sha) && scheduler_artifact_visible(ctx, req, sha, &err)) {
		api_resp_error(resp, 404, "not_found", "no blob %s", sha);
		return;
	}
	send_blob(ctx, sha, "application/octet-stream", resp);
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
	scheduler_queue_changed(s);
	if (j.state == SCHED_CANCELLED) /* a queued rerun cancelled: rerun_failed */
		scheduler_job_ended(s, id);
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
		rc = s->store->ops->job_get(s->store, id, api_req_arena(req), &j, &err);
	if (!rc && j.state == SCHED_DEP_FAILED) { /* [batches] */
		api_resp_error(resp, 409, "conflict", "job %lld %s", (long long)id, j.message);
		return;
	}
	if (!rc)
		rc = scheduler_job_retry(s->store, id, util_clock_wall_ms(), &err);
	if (!rc)
		scheduler_batch_job_retried(s, id); /* [batches] its dependents wait again */
	if (!rc)
		rc = s->store->ops->job_get(s->store, id, api_req_arena(req), &j, &err);
	if (rc) {
		api_resp_from_err(resp, &err);
		return;
	}
	scheduler_queue_changed(s);
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
