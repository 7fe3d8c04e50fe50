/*
 * dispatch.c - which workers can take which job, and the answer to "why isn't my job
 * starting?" (GET /api/v1/jobs/{id}/placement): every known worker with the reason it
 * matches or does not, the jobs ahead in the queue, and a backoff still running.
 *
 * The lease grant itself happens in the store (one transaction picks and leases), which asks
 * scheduler_job_fits() of each candidate: the placement answer and the grant use one rule
 * (the job's arch among the worker's, its tags a subset), with no length of its own.
 */
#include "util/util.h"

#include "scheduler/scheduler_int.h"

#define OFFLINE_MS 90000

/* Is w[0..len) one of the words of joined (",a,b,")? Any length: no copy, no cut. */
static bool has_word(const char *joined, const char *w, size_t len)
{
	const char *p = joined;

	if (!joined || !len)
		return false;
	while ((p = strstr(p, ","))) {
		if (!strncmp(p + 1, w, len) && p[1 + len] == ',')
			return true;
		p++;
	}
	return false;
}

bool scheduler_job_fits(const char *job_arch, const char *job_tags, const char *arches,
                        const char *tags, struct scheduler_misfit *why)
{
	const char *p = job_tags;

	if (why)
		*why = (struct scheduler_misfit){0};
	if (job_arch && *job_arch && !has_word(arches, job_arch, strlen(job_arch))) {
		if (why)
			why->what = SCHED_MISFIT_ARCH;
		return false;
	}
	while (p && *p) {
		size_t len = strcspn(p, ",");

		if (len && !has_word(tags, p, len)) {
			if (why)
				*why = (struct scheduler_misfit){SCHED_MISFIT_TAG, p, len};
			return false;
		}
		p += len;
		p += *p == ',';
	}
	return true;
}

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

static const char *summary(struct kiln_arena *a, const struct scheduler_job *j, bool any,
                           int64_t ahead, int64_t now)
{
	if (j->state != SCHED_QUEUED)
		return kiln_arena_printf(a, "the job is %s, not waiting",
		                         scheduler_state_name(j->state));
	if (j->not_before_ms > now)
		return kiln_arena_printf(a, "waiting %llds more before retry %lld (backoff)",
		                         (long long)((j->not_before_ms - now + 999) / 1000),
		                         (long long)j->attempts + 1);
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
	bool any = false;
	size_t n = 0, i;
	kiln_rc rc;

	rc = s->store->ops->workers_list(s->store, a, &v, &n, err);
	if (!rc && j->state == SCHED_QUEUED)
		rc = s->store->ops->queue_position(s->store, j, &ahead, err);
	if (rc)
		return rc;
	api_jw_obj(w);
	api_jw_kint(w, "job", j->id);
	api_jw_kstr(w, "state", scheduler_state_name(j->state));
	api_jw_kint(w, "queued_ahead", ahead);
	api_jw_key(w, "workers");
	api_jw_arr(w);
	for (i = 0; i < n; i++)
		worker_verdict(w, j, &v[i], now, a, &any);
	api_jw_end(w);
	api_jw_kstr(w, "summary", summary(a, j, any, ahead, now));
	api_jw_end(w);
	return KILN_OK;
}
