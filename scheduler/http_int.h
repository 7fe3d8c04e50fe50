/*
 * http_int.h - the REST handlers of the scheduler (http_*.c) and what they share.
 */
#ifndef KILN_SCHEDULER_HTTP_INT_H
#define KILN_SCHEDULER_HTTP_INT_H

#include "scheduler/scheduler_int.h"

/* Shared by the handlers (http_req.c). The i-th path capture as a job id (KILN_ENOTFOUND when it is not one). */
KILN_MUST_CHECK kiln_rc scheduler_param_id(struct api_req *req, unsigned i, int64_t *id,
                                           struct kiln_err *err);
/* Does the caller read everything (a farm admin)? Other tokens read in their project
 * (api_req_group): with read every job of it, a submit-only token only its own; anonymous
 * readers the jobs of public projects. */
bool scheduler_reads_all(const struct api_req *req);
/* May the caller see job j (as above)? */
bool scheduler_job_visible(struct scheduler *s, struct api_req *req, const struct scheduler_job *j);
/* The project a listing is asked for (name: the "project" query, NULL or "" for none) into
 * *id: for a farm admin the one named (0 for all), for a token its own (naming another is
 * KILN_ENOTFOUND, as for no such project), for an anonymous reader a public one named (0
 * for all: the listing keeps public projects' rows). */
KILN_MUST_CHECK kiln_rc scheduler_project_param(struct scheduler *s, struct api_req *req,
                                                const char *name, int64_t *id,
                                                struct kiln_err *err);
/* The project that owns repository repo (default unless one was given it); -1 with err
 * set when the store fails. */
int64_t scheduler_repo_project(struct scheduler *s, struct kiln_arena *a, const char *repo,
                               struct kiln_err *err);
/* [projects] A job or batch of project publishes only into a repository that project owns:
 * KILN_OK for repo NULL or "", KILN_EINVAL naming field 'repository' otherwise. */
KILN_MUST_CHECK kiln_rc scheduler_repo_owned(struct scheduler *s, struct api_req *req,
                                             const char *repo, int64_t project,
                                             struct kiln_err *err);
/* May the caller read repository repo (its listing, its files under /repos/)? A farm
 * admin any; a token its project's; anyone a public project's. /repos/ is served without
 * auth: a bearer token sent there is looked at all the same. */
bool scheduler_repo_visible(struct scheduler *s, struct api_req *req, const char *repo);
/* Is project_id readable without a token (public_read)? false for no such project. */
bool scheduler_project_public(struct scheduler *s, struct api_req *req, int64_t project_id);
/* The job id of the path's first capture, for a caller allowed to see that job
 * (scheduler_job_visible): KILN_ENOTFOUND otherwise, the same answer as for no such job. */
KILN_MUST_CHECK kiln_rc scheduler_job_param(struct scheduler *s, struct api_req *req, int64_t *id,
                                            struct kiln_err *err);
/* May the caller download the package of this sha256 (signed or not)? A farm admin, any;
 * with read, one of its project's jobs' packages; a submit-only token, one of its own jobs';
 * anonymous, one of a public project's. KILN_ENOTFOUND otherwise. */
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

/* Projects (project.c). */
/* A project's name: 1 to 64 of lowercase letters, digits and (not first) '-', '_', '.';
 * KILN_EINVAL naming the field. */
KILN_MUST_CHECK kiln_rc scheduler_project_name_check(const char *name, struct kiln_err *err);
/* A project's JSON, with the repositories it owns (o: the owners, repo_owners). */
void scheduler_project_json(struct scheduler *s, struct api_jw *w,
                            const struct scheduler_project *p, const struct scheduler_repo_owner *o,
                            size_t n);
void scheduler_h_project_create(void *ctx, struct api_req *req, struct api_resp *resp);
void scheduler_h_projects(void *ctx, struct api_req *req, struct api_resp *resp);
void scheduler_h_project(void *ctx, struct api_req *req, struct api_resp *resp);
void scheduler_h_project_change(void *ctx, struct api_req *req, struct api_resp *resp);
void scheduler_h_project_delete(void *ctx, struct api_req *req, struct api_resp *resp);
void scheduler_h_project_key(void *ctx, struct api_req *req, struct api_resp *resp);
void scheduler_h_project_key_extend(void *ctx, struct api_req *req, struct api_resp *resp);

/* Forge webhooks (hooks.c). */
void scheduler_h_hook(void *ctx, struct api_req *req, struct api_resp *resp);
/* The delivery logs, in and out (http_hooks.c). */
void scheduler_h_hook_deliveries(void *ctx, struct api_req *req, struct api_resp *resp);
void scheduler_h_webhooks(void *ctx, struct api_req *req, struct api_resp *resp);
void scheduler_h_webhook_deliveries(void *ctx, struct api_req *req, struct api_resp *resp);

/* Service (http_misc.c). */
void scheduler_h_health(void *ctx, struct api_req *req, struct api_resp *resp);
void scheduler_h_metrics(void *ctx, struct api_req *req, struct api_resp *resp);
void scheduler_h_openapi(void *ctx, struct api_req *req, struct api_resp *resp);
void scheduler_h_key(void *ctx, struct api_req *req, struct api_resp *resp);
void scheduler_h_token_create(void *ctx, struct api_req *req, struct api_resp *resp);
void scheduler_h_tokens(void *ctx, struct api_req *req, struct api_resp *resp);
void scheduler_h_token_revoke(void *ctx, struct api_req *req, struct api_resp *resp);

#endif
