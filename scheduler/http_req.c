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

kiln_rc scheduler_artifact_visible(struct scheduler *s, struct api_req *req, const char *sha,
                                   struct kiln_err *err)
{
	if (scheduler_reads_all(req))
		return KILN_OK;
	return s->store->ops->artifact_owned(s->store, sha, api_req_token_id(req), err);
}
