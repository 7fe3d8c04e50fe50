/*
 * http_req.c - what every file with REST handlers shares (http_int.h): a job id from the
 * path, what the caller's token may read, and a JSON reply. Below the handler files, so
 * the feature files that answer requests (publish.c, reproduce.c, rebuild.c, ...) need not
 * call into one of them.
 */
#include "util/util.h"

#include "scheduler/scheduler_int.h"
#include "scheduler/http_int.h"

kiln_rc scheduler_param_id(struct api_req *req, unsigned i, int64_t *id, struct kiln_err *err)
{
	const char *p = api_req_param(req, i);

	if (!p || util_parse_i64(p, strlen(p), 10, 1, INT64_MAX, id, NULL))
		return kiln_err_set(err, KILN_ENOTFOUND, "no job '%.32s'", p ? p : "");
	return KILN_OK;
}

bool scheduler_reads_all(const struct api_req *req)
{
	return (api_req_scopes(req) & API_SCOPE_ADMIN) != 0;
}

bool scheduler_project_public(struct scheduler *s, struct api_req *req, int64_t project_id)
{
	struct scheduler_project p = {0};
	struct kiln_err err = KILN_ERR_INIT;

	return !s->store->ops->project_get(s->store, project_id, NULL, api_req_arena(req), &p,
	                                   &err) &&
	       p.public_read;
}

bool scheduler_job_visible(struct scheduler *s, struct api_req *req, const struct scheduler_job *j)
{
	if (scheduler_reads_all(req))
		return true;
	if (api_req_token_id(req) < 0)
		return scheduler_project_public(s, req, j->project_id);
	if (j->project_id != api_req_group(req))
		return false;
	return (api_req_scopes(req) & API_SCOPE_READ) || j->token_id == api_req_token_id(req);
}

kiln_rc scheduler_project_param(struct scheduler *s, struct api_req *req, const char *name,
                                int64_t *id, struct kiln_err *err)
{
	struct scheduler_project p = {0};
	bool anon = api_req_token_id(req) < 0 && !scheduler_reads_all(req);
	kiln_rc rc;

	*id = scheduler_reads_all(req) || anon ? 0 : api_req_group(req);
	if (!name || !*name)
		return KILN_OK;
	rc = s->store->ops->project_get(s->store, 0, name, api_req_arena(req), &p, err);
	if (!rc && !scheduler_reads_all(req) && (anon ? !p.public_read : p.id != *id))
		rc = kiln_err_set(err, KILN_ENOTFOUND, "no project '%.64s'", name);
	if (!rc)
		*id = p.id;
	return rc;
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
	if (!rc && !scheduler_job_visible(s, req, &j))
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

kiln_rc scheduler_artifact_visible(struct scheduler *s, struct api_req *req, const char *sha,
                                   struct kiln_err *err)
{
	struct scheduler_project *p = NULL;
	size_t n = 0, i;
	kiln_rc rc;

	if (scheduler_reads_all(req))
		return KILN_OK;
	if (api_req_token_id(req) >= 0 && (api_req_scopes(req) & API_SCOPE_READ))
		return s->store->ops->artifact_in_project(s->store, sha, api_req_group(req), err);
	if (api_req_token_id(req) >= 0)
		return s->store->ops->artifact_owned(s->store, sha, api_req_token_id(req), err);
	/* anonymous: a package of a public project's */
	rc = s->store->ops->projects_list(s->store, api_req_arena(req), &p, &n, err);
	for (i = 0; !rc && i < n; i++) {
		if (!p[i].public_read)
			continue;
		rc = s->store->ops->artifact_in_project(s->store, sha, p[i].id, err);
		if (rc != KILN_ENOTFOUND)
			return rc;
		kiln_err_clear(err);
		rc = KILN_OK;
	}
	return rc ? rc : kiln_err_set(err, KILN_ENOTFOUND, "no such package");
}
