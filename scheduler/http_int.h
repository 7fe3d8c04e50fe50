/*
 * http_int.h - the REST handlers of the scheduler (http_*.c) and what they share.
 */
#ifndef KILN_SCHEDULER_HTTP_INT_H
#define KILN_SCHEDULER_HTTP_INT_H

#include "scheduler/scheduler_int.h"

/* Shared by the handlers (http_req.c). The i-th path capture as a job id (KILN_ENOTFOUND when it is not one). */
KILN_MUST_CHECK kiln_rc scheduler_param_id(struct api_req *req, unsigned i, int64_t *id,
                                           struct kiln_err *err);
/* Does the caller read everything (scope read or admin)? A submit-only token reads only
 * the jobs it submitted. */
bool scheduler_reads_all(const struct api_req *req);
/* The job id of the path's first capture, for a caller allowed to see that job (every
 * job with read; a submit-only token only its own): KILN_ENOTFOUND otherwise, the same
 * answer as for no such job. */
KILN_MUST_CHECK kiln_rc scheduler_job_param(struct scheduler *s, struct api_req *req, int64_t *id,
                                            struct kiln_err *err);
/* May the caller download the package of this sha256 (signed or not)? With read, any;
 * a submit-only token, one of its jobs' packages. KILN_ENOTFOUND otherwise. */
KILN_MUST_CHECK kiln_rc scheduler_artifact_visible(struct scheduler *s, struct api_req *req,
                                                   const char *sha, struct kiln_err *err);
/* Finish a JSON body written into resp->body with this status. */
void scheduler_reply_json(struct api_resp *resp, int status);

/* A job from a checked request (submit.c): options and inputs checked, the request
 * and manifest JSON written into reqjson and manifest (which j points into), j filled for
 * job_insert. */
KILN_MUST_CHECK kiln_rc scheduler_job_prepare(struct scheduler *s, struct api_req *req,
                                              const struct scheduler_request *r,
                                              struct scheduler_job *j, struct kiln_buf *reqjson,
                                              struct kiln_buf *manifest, struct kiln_err *err);

/* Git jobs' commits (gitpin.c). A full commit id: 40 or 64 lowercase hex digits. */
bool scheduler_git_commit_valid(const char *c);
/* The commit manifest pins ("" when none: not a git job, or its ref not resolved yet). */
void scheduler_git_commit_get(const char *manifest, char out[65]);
/* Record the commit a worker resolved j's ref to in j's manifest and request and
 * recompute its content key; KILN_EINVAL when j pins another commit or is no git job. */
KILN_MUST_CHECK kiln_rc scheduler_git_pin(struct scheduler *s, const struct scheduler_job *j,
                                          const char *commit, struct kiln_err *err);
/* The content key j had when it was submitted (before its commit was pinned). */
KILN_MUST_CHECK kiln_rc scheduler_git_submitted_key(const struct scheduler_job *j, char key[65],
                                                    struct kiln_err *err);

/* Rebuilds (rebuild.c). */
void scheduler_h_rebuild_create(void *ctx, struct api_req *req, struct api_resp *resp);
void scheduler_h_rebuild_get(void *ctx, struct api_req *req, struct api_resp *resp);

/* Clients (http_jobs.c). */
void scheduler_h_submit(void *ctx, struct api_req *req, struct api_resp *resp);
void scheduler_h_jobs(void *ctx, struct api_req *req, struct api_resp *resp);
void scheduler_h_job(void *ctx, struct api_req *req, struct api_resp *resp);
void scheduler_h_cancel(void *ctx, struct api_req *req, struct api_resp *resp);
void scheduler_h_retry(void *ctx, struct api_req *req, struct api_resp *resp);
void scheduler_h_placement(void *ctx, struct api_req *req, struct api_resp *resp);
void scheduler_h_log_get(void *ctx, struct api_req *req, struct api_resp *resp);
void scheduler_h_artifacts(void *ctx, struct api_req *req, struct api_resp *resp);
void scheduler_h_artifact_get(void *ctx, struct api_req *req, struct api_resp *resp);
void scheduler_h_blob_get(void *ctx, struct api_req *req, struct api_resp *resp);
void scheduler_h_blob_put(void *ctx, struct api_req *req, struct api_resp *resp);

/* Reproducibility (reproduce.c). */
void scheduler_h_reproduce(void *ctx, struct api_req *req, struct api_resp *resp);
void scheduler_h_reproducibility(void *ctx, struct api_req *req, struct api_resp *resp);
void scheduler_h_provenance(void *ctx, struct api_req *req, struct api_resp *resp);

/* Workers (http_workers.c). */
void scheduler_h_worker_register(void *ctx, struct api_req *req, struct api_resp *resp);
void scheduler_h_workers(void *ctx, struct api_req *req, struct api_resp *resp);
void scheduler_h_lease(void *ctx, struct api_req *req, struct api_resp *resp);
void scheduler_h_heartbeat(void *ctx, struct api_req *req, struct api_resp *resp);
void scheduler_h_log_put(void *ctx, struct api_req *req, struct api_resp *resp);
void scheduler_h_artifact_put(void *ctx, struct api_req *req, struct api_resp *resp);
void scheduler_h_complete(void *ctx, struct api_req *req, struct api_resp *resp);

/* The dashboard (web.c). */
void scheduler_h_web(void *ctx, struct api_req *req, struct api_resp *resp);
void scheduler_h_history(void *ctx, struct api_req *req, struct api_resp *resp);
/* Repositories (publish.c). */
void scheduler_h_repos(void *ctx, struct api_req *req, struct api_resp *resp);
void scheduler_h_repo(void *ctx, struct api_req *req, struct api_resp *resp);
void scheduler_h_repo_regenerate(void *ctx, struct api_req *req, struct api_resp *resp);
void scheduler_h_repo_remove(void *ctx, struct api_req *req, struct api_resp *resp);
void scheduler_h_repo_file(void *ctx, struct api_req *req, struct api_resp *resp);
/* Serve rel below the repository directory dir (NULL: 404), with ETag and Range. */
void scheduler_repo_serve(const char *dir, const char *rel, struct api_req *req,
                          struct api_resp *resp);

/* [batches] Batches (batch.c). */
void scheduler_h_batch_create(void *ctx, struct api_req *req, struct api_resp *resp);
void scheduler_h_batches(void *ctx, struct api_req *req, struct api_resp *resp);
void scheduler_h_batch(void *ctx, struct api_req *req, struct api_resp *resp);
void scheduler_h_batch_publish(void *ctx, struct api_req *req, struct api_resp *resp);
void scheduler_h_batch_cancel(void *ctx, struct api_req *req, struct api_resp *resp);
void scheduler_h_batch_repo_file(void *ctx, struct api_req *req, struct api_resp *resp);

/* Forge webhooks (hooks.c). */
void scheduler_h_hook(void *ctx, struct api_req *req, struct api_resp *resp);

/* Service (http_misc.c). */
void scheduler_h_health(void *ctx, struct api_req *req, struct api_resp *resp);
void scheduler_h_metrics(void *ctx, struct api_req *req, struct api_resp *resp);
void scheduler_h_openapi(void *ctx, struct api_req *req, struct api_resp *resp);
void scheduler_h_key(void *ctx, struct api_req *req, struct api_resp *resp);
void scheduler_h_token_create(void *ctx, struct api_req *req, struct api_resp *resp);
void scheduler_h_tokens(void *ctx, struct api_req *req, struct api_resp *resp);
void scheduler_h_token_revoke(void *ctx, struct api_req *req, struct api_resp *resp);

#endif
