/*
 * dispatch.c - which workers can take which job, and the answer to "why isn't my job
 * starting?" (GET /api/v1/jobs/{id}/placement): every known worker with the reason it
 * matches or does not, the jobs ahead in the queue, and a backoff still running.
 *
 * The placement answer and the lease grant (lease.c) use one rule, scheduler_job_fits()
 * in policy.c (the job's arch among the worker's, its tags a subset).
 */
#include "util/util.h"

#include "scheduler/scheduler_int.h"

#define OFFLINE_MS 90000

bool scheduler_worker_matches(const struct scheduler_job *j, const char *arches, const char *tags,
                              struct kiln_arena *a, const char **why)
{
	struct scheduler_misfit m;

	*why = "";
	if (scheduler_job_fits(j->arch, j->tags, arches, tags, &m))
		return true;
	if (m.what == SCHED_MISFIT_ARCH)
		*why = kiln_arena_printf(a, "arch %s is not among the worker's (%s)", j->arch,
		                         arches ? arches : "");
	else if (m.len > 5 && !strncmp(m.tag, "root:", 5))
		*why = kiln_arena_printf(a, "the worker does not offer root %.*s", (int)m.len - 5,
		                         m.tag + 5);
	else
		*why = kiln_arena_printf(a, "the worker lacks tag %.*s", (int)m.len, m.tag);
	if (!*why)
		*why = "does not match";
	return false;
}

static void worker_verdict(struct api_jw *w, const struct scheduler_job *j,
                           const struct scheduler_worker_info *wi, int64_t now,
                           struct kiln_arena *a, bool *any)
{
	const char *why = "";
	bool ok = scheduler_worker_matches(j, wi->arches, wi->tags, a, &why);

	api_jw_obj(w);
	api_jw_kstr(w, "worker", wi->name);
	if (ok && now - wi->last_seen_ms >= OFFLINE_MS)
		ok = false, why = kiln_arena_printf(a, "offline (last seen %llds ago)",
		                                    (long long)((now - wi->last_seen_ms) / 1000));
	else if (ok && wi->draining)
		ok = false, why = "draining (shutting down)";
	api_jw_kbool(w, "matches", ok);
	if (ok && wi->busy >= wi->slots)
		why = kiln_arena_printf(a, "matches, but all %lld slots are busy",
		                        (long long)wi->slots);
	api_jw_kstr(w, "reason", why && *why ? why : "matches, with a free slot");
	api_jw_kint(w, "busy", wi->busy);
	api_jw_kint(w, "slots", wi->slots);
	api_jw_end(w);
	*any |= ok;
}

/* The root configuration a job names ("root:NAME" among its tags). */
static bool root_tag(const char *tags, const char **root, size_t *len)
{
	const char *p = tags;

	while (p && *p) {
		size_t l = strcspn(p, ",");

		if (l > 5 && !strncmp(p, "root:", 5)) {
			*root = p + 5;
			*len = l - 5;
			return true;
		}
		p += l;
		p += *p == ',';
	}
	return false;
}

/* Does any known worker, online or not, offer that root? */
static bool root_offered(const struct scheduler_worker_info *v, size_t n, const char *root,
                         size_t len)
{
	size_t i;

	for (i = 0; i < n; i++) {
		const char *p = v[i].tags;

		while (p && *p) {
			size_t l = strcspn(p, ",");

			if (l == len + 5 && !strncmp(p, "root:", 5) && !strncmp(p + 5, root, len))
				return true;
			p += l;
			p += *p == ',';
		}
	}
	return false;
}

/* [projects] Is j held by its project's cap? *held gets the figures. */
static kiln_rc quota_held(struct scheduler *s, const struct scheduler_job *j, struct kiln_arena *a,
                          struct scheduler_quota *held, bool *full, struct kiln_err *err)
{
	struct scheduler_project p = {0};
	struct scheduler_project_run *run = NULL;
	size_t n = 0;
	kiln_rc rc;

	*full = false;
	if (j->state != SCHED_QUEUED)
		return KILN_OK;
	rc = s->store->ops->project_get(s->store, j->project_id, NULL, a, &p, err);
	if (rc == KILN_ENOTFOUND) {
		kiln_err_clear(err);
		return KILN_OK;
	}
	if (rc || (!p.max_running && !*p.arch_caps))
		return rc;
	rc = s->store->ops->project_running(s->store, a, &run, &n, err);
	if (!rc)
		*full =
		    scheduler_quota_full(p.id, p.max_running, p.arch_caps, j->arch, run, n, held);
	return rc;
}

static const char *summary(struct kiln_arena *a, const struct scheduler_job *j, bool any,
                           int64_t ahead, int64_t now, const struct scheduler_worker_info *workers,
                           size_t n, const struct scheduler_quota *held)
{
	const char *root = NULL;
	size_t rlen = 0;

	if (j->state != SCHED_QUEUED)
		return kiln_arena_printf(a, "the job is %s, not waiting",
		                         scheduler_state_name(j->state));
	if (held)
		return kiln_arena_printf(a, "project quota %s%s%lld/%lld running", held->arch,
		                         *held->arch ? " " : "", (long long)held->running,
		                         (long long)held->cap);
	if (j->not_before_ms > now)
		return kiln_arena_printf(a, "waiting %llds more before retry %lld (backoff)",
		                         (long long)((j->not_before_ms - now + 999) / 1000),
		                         (long long)j->attempts + 1);
	if (!any && root_tag(j->tags, &root, &rlen) && !root_offered(workers, n, root, rlen))
		return kiln_arena_printf(a, "no worker offers %.*s", (int)rlen, root);
	if (!any)
		return "no online worker matches this job";
	if (ahead)
		return kiln_arena_printf(a, "%lld job%s ahead in the queue", (long long)ahead,
		                         ahead == 1 ? "" : "s");
	return "next in line: a matching worker will take it at its next poll";
}

kiln_rc scheduler_placement_json(struct scheduler *s, const struct scheduler_job *j,
                                 struct kiln_arena *a, struct api_jw *w, struct kiln_err *err)
{
	struct scheduler_worker_info *v = NULL;
	int64_t now = util_clock_wall_ms(), ahead = 0;
	struct scheduler_quota held = {0};
	bool any = false, full = false;
	size_t n = 0, i;
	kiln_rc rc;

	rc = s->store->ops->workers_list(s->store, a, &v, &n, err);
	if (!rc && j->state == SCHED_QUEUED)
		rc = s->store->ops->queue_position(s->store, j, &ahead, err);
	if (!rc)
		rc = quota_held(s, j, a, &held, &full, err);
	if (rc)
		return rc;
	api_jw_obj(w);
	api_jw_kint(w, "job", j->id);
	api_jw_kstr(w, "project", j->project ? j->project : "");
	api_jw_kstr(w, "state", scheduler_state_name(j->state));
	api_jw_kint(w, "queued_ahead", ahead);
	api_jw_key(w, "workers");
	api_jw_arr(w);
	for (i = 0; i < n; i++)
		worker_verdict(w, j, &v[i], now, a, &any);
	api_jw_end(w);
	api_jw_kstr(w, "summary", summary(a, j, any, ahead, now, v, n, full ? &held : NULL));
	api_jw_end(w);
	return KILN_OK;
}
