/*
 * json.c - JSON of the scheduler's records (jobs, attempts, artifacts, workers), the one
 * place that says how they look on the wire (docs/api.md).
 */
#include "util/util.h"

#include "scheduler/scheduler_int.h"

static void kms(struct api_jw *w, const char *key, int64_t ms)
{
	api_jw_key(w, key);
	if (ms > 0)
		api_jw_int(w, ms);
	else
		api_jw_null(w);
}

static void kopt(struct api_jw *w, const char *key, const char *s)
{
	api_jw_key(w, key);
	if (s && *s)
		api_jw_str(w, s);
	else
		api_jw_null(w);
}

/* ",a,b," as ["a","b"]. */
static void kwords(struct api_jw *w, const char *key, const char *joined)
{
	const char *p = joined;

	api_jw_key(w, key);
	api_jw_arr(w);
	while (p && *p) {
		const char *e;

		if (*p == ',') {
			p++;
			continue;
		}
		e = strchr(p, ',');
		api_jw_strn(w, p, e ? (size_t)(e - p) : strlen(p));
		p = e;
	}
	api_jw_end(w);
}

void scheduler_job_json_fields(struct api_jw *w, const struct scheduler_job *j)
{
	api_jw_kint(w, "id", j->id);
	api_jw_kstr(w, "state", scheduler_state_name(j->state));
	api_jw_kint(w, "priority", j->priority);
	api_jw_kstr(w, "project", j->project ? j->project : "");
	kopt(w, "arch", j->arch);
	kwords(w, "tags", j->tags);
	api_jw_kstr(w, "spec_name", j->spec_name);
	api_jw_kstr(w, "content_key", j->content_key);
	kopt(w, "sign_key", j->sign_key);
	kms(w, "created", j->created_ms);
	kms(w, "updated", j->updated_ms);
	kms(w, "started", j->started_ms);
	kms(w, "finished", j->finished_ms);
	kms(w, "not_before", j->not_before_ms);
	api_jw_kint(w, "attempts", j->attempts);
	api_jw_kint(w, "max_attempts", j->max_attempts);
	api_jw_kint(w, "timeout", j->timeout_s);
	api_jw_kbool(w, "cancel_requested", j->cancel_requested);
	kopt(w, "worker", scheduler_state_active(j->state) ? j->worker : "");
	kms(w, "lease_expires", scheduler_state_active(j->state) ? j->lease_expires_ms : 0);
	kopt(w, "failure_class", j->failure_class);
	kopt(w, "message", j->message);
	api_jw_kint(w, "reruns", j->reruns);
	if (j->rerun_of) {
		api_jw_kint(w, "rerun_of", j->rerun_of);
		api_jw_kint(w, "rerun_n", j->rerun_n);
	}
	api_jw_key(w, "reproducibility");
	api_jw_str(w, j->repro_verdict && *j->repro_verdict ? j->repro_verdict : NULL);
	api_jw_key(w, "manifest");
	api_jw_raw(w, j->manifest);
	api_jw_key(w, "request");
	api_jw_raw(w, j->request);
}

void scheduler_job_json(struct api_jw *w, const struct scheduler_job *j)
{
	api_jw_obj(w);
	scheduler_job_json_fields(w, j);
	api_jw_end(w);
}

void scheduler_attempt_json(struct api_jw *w, const struct scheduler_attempt *a)
{
	char log[96];

	snprintf(log, sizeof(log), "/api/v1/jobs/%lld/attempts/%lld/log", (long long)a->job_id,
	         (long long)a->n);
	api_jw_obj(w);
	api_jw_kint(w, "n", a->n);
	api_jw_kstr(w, "worker", a->worker);
	api_jw_kint(w, "generation", a->generation);
	api_jw_kstr(w, "state", a->state);
	kopt(w, "failure_class", a->failure_class);
	kopt(w, "message", a->message);
	kms(w, "started", a->started_ms);
	kms(w, "ended", a->ended_ms);
	api_jw_kstr(w, "log", log);
	api_jw_end(w);
}

void scheduler_artifact_json(struct api_jw *w, const struct scheduler_artifact *a)
{
	bool sig = a->signed_sha256[0] != '\0';
	char url[96];

	snprintf(url, sizeof(url), "/api/v1/artifacts/%s", sig ? a->signed_sha256 : a->sha256);
	api_jw_obj(w);
	api_jw_kstr(w, "name", a->name);
	api_jw_kstr(w, "kind", a->kind);
	kopt(w, "arch", a->arch);
	api_jw_kint(w, "attempt", a->attempt);
	api_jw_kstr(w, "sha256", sig ? a->signed_sha256 : a->sha256);
	api_jw_kint(w, "size", sig ? a->signed_size : a->size);
	api_jw_kbool(w, "signed", sig);
	api_jw_kstr(w, "unsigned_sha256", a->sha256);
	api_jw_kstr(w, "url", url);
	api_jw_end(w);
}

/* A worker is offline when it has not polled or beaten for this long. */
#define WORKER_OFFLINE_MS 90000

void scheduler_worker_json(struct api_jw *w, const struct scheduler_worker_info *wi, int64_t now_ms)
{
	bool online = now_ms - wi->last_seen_ms < WORKER_OFFLINE_MS;

	api_jw_obj(w);
	api_jw_kstr(w, "name", wi->name);
	api_jw_kstr(w, "state", !online ? "offline" : wi->draining ? "draining" : "online");
	kwords(w, "arches", wi->arches);
	kwords(w, "tags", wi->tags);
	api_jw_kint(w, "slots", wi->slots);
	api_jw_kint(w, "busy", wi->busy);
	api_jw_kint(w, "free_disk", wi->free_disk);
	api_jw_kstr(w, "kernel", wi->kernel);
	api_jw_kstr(w, "version", wi->version);
	kms(w, "last_seen", wi->last_seen_ms);
	api_jw_end(w);
}
