/*
 * policy.c - the scheduler's decisions, as functions of records and nothing else: which
 * queued job a worker gets (the one job-worker matcher and anti-affinity), what the end of a
 * lease does to its job (retry with backoff, or its final state), which cancels and retries
 * a job's state allows, and how reruns' verdicts roll up into the job's.
 *
 * No store, no clock, no locks here: the store persists what these decide (lease.c and
 * reproduce.c call them and hand the result to the store), so every backend obeys one rule
 * and tests/unit/scheduler/test_policy.c checks each rule without a database.
 */
#include "util/util.h"

#include "scheduler/scheduler_int.h"

/* ---------------------------------------------------------------------------------------- */
/* Matching jobs to workers */

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

/* Fair share: the project granted longest ago first (grant_seq, then id), then priority,
 * then age inside it. */
static bool cand_before(const struct scheduler_candidate *a, const struct scheduler_candidate *b)
{
	if (a->grant_seq != b->grant_seq)
		return a->grant_seq < b->grant_seq;
	if (a->project_id != b->project_id)
		return a->project_id < b->project_id;
	if (a->priority != b->priority)
		return a->priority > b->priority;
	return a->id < b->id;
}

/* The cap of arch in caps ("x86_64=2,aarch64=1"): -1 for none. */
static int64_t arch_cap(const char *caps, const char *arch)
{
	size_t alen = strlen(arch);
	const char *p = caps;

	while (alen && p && *p) {
		size_t len = strcspn(p, ",");
		const char *eq = memchr(p, '=', len);
		int64_t v;

		if (eq && (size_t)(eq - p) == alen && !strncmp(p, arch, alen) &&
		    !util_parse_i64(eq + 1, len - (size_t)(eq - p) - 1, 10, 0, INT64_MAX, &v, NULL))
			return v;
		p += len;
		p += *p == ',';
	}
	return -1;
}

bool scheduler_quota_full(int64_t project_id, int64_t max_running, const char *arch_caps,
                          const char *arch, const struct scheduler_project_run *run, size_t nrun,
                          struct scheduler_quota *why)
{
	int64_t total = 0, in_arch = 0, cap = arch_cap(arch_caps, arch ? arch : "");
	size_t i;

	for (i = 0; i < nrun; i++) {
		if (run[i].project_id != project_id)
			continue;
		total += run[i].n;
		if (arch && !strcmp(run[i].arch, arch))
			in_arch += run[i].n;
	}
	if (why)
		*why = (struct scheduler_quota){total, max_running, ""};
	if (max_running > 0 && total >= max_running)
		return true;
	if (cap < 0 || in_arch < cap)
		return false;
	if (why)
		*why = (struct scheduler_quota){in_arch, cap, arch};
	return true;
}

bool scheduler_candidates_capped(const struct scheduler_candidate *c, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (c[i].max_running > 0 || (c[i].arch_caps && *c[i].arch_caps))
			return true;
	return false;
}

size_t scheduler_lease_pick(const struct scheduler_candidate *c, size_t n,
                            const struct scheduler_lease_query *q,
                            const struct scheduler_project_run *run, size_t nrun, size_t *avoided)
{
	size_t i, best = n;

	*avoided = n;
	for (i = 0; i < n; i++) {
		size_t *slot = &best;

		if (!c[i].id || !scheduler_job_fits(c[i].arch, c[i].tags, q->arches, q->tags, NULL))
			continue;
		/* a rerun of this worker's own build: only when no other worker could take it */
		if (c[i].avoid_worker && *c[i].avoid_worker &&
		    !strcmp(c[i].avoid_worker, q->worker))
			slot = avoided;
		if (*slot != n && !cand_before(&c[i], &c[*slot]))
			continue;
		if (scheduler_quota_full(c[i].project_id, c[i].max_running, c[i].arch_caps,
		                         c[i].arch, run, nrun, NULL))
			continue;
		*slot = i;
	}
	return best;
}

kiln_rc scheduler_arch_caps_check(const char *s, struct kiln_err *err)
{
	const char *p = s;

	while (*p) {
		size_t len = strcspn(p, ","), i;
		const char *eq = memchr(p, '=', len);
		int64_t v;

		if (!eq || eq == p || eq - p > 64)
			return kiln_err_set(err, KILN_EINVAL,
			                    "arch_caps: expected ARCH=N[,ARCH=N...], not '%.64s'",
			                    s);
		for (i = 0; i < (size_t)(eq - p); i++)
			if (!strchr(
			        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-",
			        p[i]))
				return kiln_err_set(err, KILN_EINVAL,
				                    "arch_caps: '%.*s' is not an arch name",
				                    (int)(eq - p), p);
		if (util_parse_i64(eq + 1, len - (size_t)(eq - p) - 1, 10, 1, 1000000, &v, NULL))
			return kiln_err_set(err, KILN_EINVAL,
			                    "arch_caps: the cap of '%.*s' must be 1 to 1000000",
			                    (int)(eq - p), p);
		p += len;
		if (*p == ',' && !p[1])
			return kiln_err_set(err, KILN_EINVAL, "arch_caps: a trailing ','");
		p += *p == ',';
	}
	return KILN_OK;
}

bool scheduler_rerun_elsewhere(const struct scheduler_candidate *c, const char *self,
                               const struct scheduler_worker_info *w, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (strcmp(w[i].name, self) && !w[i].draining &&
		    scheduler_job_fits(c->arch, c->tags, w[i].arches, w[i].tags, NULL))
			return true;
	return false;
}

/* ---------------------------------------------------------------------------------------- */
/* Retries and state transitions */

int64_t scheduler_backoff_ms(const struct scheduler *s, int64_t attempts)
{
	int64_t b = s->cfg->backoff_ms;

	while (--attempts > 0 && b < s->cfg->backoff_max_ms)
		b *= 2;
	return b < s->cfg->backoff_max_ms ? b : s->cfg->backoff_max_ms;
}

static const char *outcome_attempt_state(enum scheduler_outcome o)
{
	static const char *const names[] = {"succeeded", "failed",   "failed",
	                                    "cancelled", "released", "lost"};

	return (unsigned)o < KILN_ARRAY_SIZE(names) ? names[o] : "failed";
}

/* Back to the queue: a hand-back always (unless a cancel was asked), a lost lease or an
 * infrastructure failure while attempts remain; a build failure never. */
static bool outcome_requeues(const struct scheduler_job *j, const struct scheduler_finish *f)
{
	if (j->cancel_requested)
		return false;
	if (f->outcome == SCHED_OUT_RELEASED)
		return true;
	if (f->outcome == SCHED_OUT_INFRA || f->outcome == SCHED_OUT_LOST)
		return j->attempts < j->max_attempts;
	return false;
}

static enum scheduler_state outcome_state(const struct scheduler_job *j,
                                          const struct scheduler_finish *f)
{
	if (f->outcome == SCHED_OUT_SUCCEEDED)
		return SCHED_SUCCEEDED;
	if (j->cancel_requested || f->outcome == SCHED_OUT_CANCELLED)
		return SCHED_CANCELLED;
	return SCHED_FAILED;
}

void scheduler_lease_decide(const struct scheduler_job *j, const struct scheduler_finish *f,
                            struct scheduler_job_end *out)
{
	bool ok = f->outcome == SCHED_OUT_SUCCEEDED;

	memset(out, 0, sizeof(*out));
	out->attempt_state = outcome_attempt_state(f->outcome);
	out->requeue = outcome_requeues(j, f);
	if (out->requeue) {
		out->state = SCHED_QUEUED;
		out->failure_class = f->failure_class;
		out->message = f->message;
		out->not_before_ms = f->now_ms + f->backoff_ms;
		/* a hand-back does not use up an attempt */
		out->attempts_back = f->outcome == SCHED_OUT_RELEASED ? 1 : 0;
		return;
	}
	out->state = outcome_state(j, f);
	out->failure_class = ok ? "" : j->cancel_requested ? "cancel" : f->failure_class;
	out->message = ok ? "" : f->message;
}

kiln_rc scheduler_cancel_decide(const struct scheduler_job *j, enum scheduler_state *to,
                                struct kiln_err *err)
{
	if (scheduler_state_final(j->state))
		return kiln_err_set(err, KILN_ECONFLICT, "job %lld has already ended (%s)",
		                    (long long)j->id, scheduler_state_name(j->state));
	/* a queued job ends now; a running one is asked to stop (its worker ends it) */
	*to = j->state == SCHED_QUEUED ? SCHED_CANCELLED : j->state;
	return KILN_OK;
}

kiln_rc scheduler_retry_decide(const struct scheduler_job *j, int64_t *budget, struct kiln_err *err)
{
	if (j->state != SCHED_FAILED && j->state != SCHED_CANCELLED)
		return kiln_err_set(err, KILN_ECONFLICT,
		                    "job %lld is %s: only failed or cancelled jobs can be retried",
		                    (long long)j->id, scheduler_state_name(j->state));
	/* the same budget again as the job had at first */
	*budget = j->max_attempts > j->attempts ? j->max_attempts - j->attempts : 1;
	return KILN_OK;
}

/* ---------------------------------------------------------------------------------------- */
/* Reproducibility verdicts */

const char *const scheduler_verdict_names[5] = {"pending", "reproducible", "differs",
                                                "rerun_failed", "unknown"};

const char *scheduler_verdict_rollup(const char *const *v, size_t n)
{
	static const char *const order[] = {"differs", "pending", "rerun_failed", "unknown"};
	size_t i, k;

	if (!n)
		return "";
	for (k = 0; k < KILN_ARRAY_SIZE(order); k++)
		for (i = 0; i < n; i++)
			if (!strcmp(v[i], order[k]))
				return order[k];
	for (i = 0; i < n; i++)
		if (strcmp(v[i], "reproducible"))
			return "unknown";
	return "reproducible";
}
