/*
 * lease.c - leases and job transitions: the decisions of policy.c carried out through the
 * store. A grant reads the candidates, picks one by the scheduler's rule and takes it (a
 * take that lost to another grant passes to the next candidate); the end of a lease, a
 * cancel and a retry write what policy.c decides, and the reaper ends leases that expired.
 */
#include "util/util.h"

#include "scheduler/scheduler_int.h"

/* How often a cancel or retry decides again when the job changed under it. */
#define TRANSITION_TRIES 4
/* How many picks, in order, one take tries: grants racing for the head of the queue pass
 * to the next pick inside the store instead of coming back for another try. */
#define TAKE_PICKS 8

/* Anti-affinity: may q's worker take the rerun c of its own build (no other could)? */
static kiln_rc rerun_here(struct scheduler_store *st, const struct scheduler_lease_query *q,
                          const struct scheduler_candidate *c, struct kiln_arena *a, bool *here,
                          struct kiln_err *err)
{
	struct scheduler_worker_info *w = NULL;
	size_t n = 0;
	kiln_rc rc;

	rc = st->ops->workers_active(st, q->now_ms - 2 * q->ttl_ms, a, &w, &n, err);
	*here = !rc && !scheduler_rerun_elsewhere(c, q->worker, w, n);
	return rc;
}

kiln_rc scheduler_lease_grant(struct scheduler_store *st, const struct scheduler_lease_query *q,
                              struct kiln_arena *a, struct scheduler_job *out, struct kiln_err *err)
{
	struct scheduler_candidate *c = NULL;
	struct scheduler_project_run *run = NULL;
	size_t n = 0, nrun = 0, i, avoided, k;
	int64_t ids[TAKE_PICKS];
	bool here = false;
	kiln_rc rc;

	rc = st->ops->lease_candidates(st, q->now_ms, q->arches, a, &c, &n, err);
	/* what runs is read only when a project has caps: most farms have none */
	if (!rc && scheduler_candidates_capped(c, n))
		rc = st->ops->project_running(st, a, &run, &nrun, err);
	while (!rc) {
		i = scheduler_lease_pick(c, n, q, run, nrun, &avoided);
		if (i == n && avoided < n)
			rc = rerun_here(st, q, &c[avoided], a, &here, err);
		if (!rc && i == n && avoided < n && here)
			i = avoided;
		if (rc || i == n)
			break;
		/* this pick, then the ones that would follow were it gone */
		for (k = 0; k < TAKE_PICKS && i < n; k++) {
			ids[k] = c[i].id;
			c[i].id = 0;
			i = scheduler_lease_pick(c, n, q, run, nrun, &avoided);
		}
		rc = st->ops->lease_take(st, ids, k, q, a, out, err);
		if (rc != KILN_ECONFLICT)
			return rc;
		/* other grants took them all first: the picks after them */
		kiln_err_clear(err);
		rc = KILN_OK;
	}
	return rc ? rc : KILN_ENOTFOUND;
}

kiln_rc scheduler_lease_end(struct scheduler *s, const char *lease_id, int64_t generation,
                            struct scheduler_finish *f, struct kiln_err *err)
{
	bool requeued = false;
	kiln_rc rc;

	f->requeued = &requeued;
	f->decide = scheduler_lease_decide;
	rc = s->store->ops->lease_finish(s->store, lease_id, generation, f, err);
	f->requeued = NULL;
	if (rc)
		return rc;
	pthread_mutex_lock(&s->stats_lock);
	if (requeued && f->outcome == SCHED_OUT_LOST)
		s->retries_lost++;
	else if (requeued && f->outcome == SCHED_OUT_INFRA)
		s->retries_infra++;
	if (f->outcome == SCHED_OUT_LOST)
		s->lease_expiries++;
	pthread_mutex_unlock(&s->stats_lock);
	api_server_wake(s->http);
	return KILN_OK;
}

void scheduler_reap(struct scheduler *s)
{
	struct kiln_arena a = KILN_ARENA_INIT(KILN_LIMIT_ARENA);
	struct kiln_err err = KILN_ERR_INIT;
	struct scheduler_job *v = NULL;
	int64_t now = util_clock_wall_ms();
	size_t n = 0, i;

	if (s->store->ops->leases_expired(s->store, now, &a, &v, &n, &err)) {
		kiln_log_err(KILN_LOG_WARN, &err);
		goto out;
	}
	for (i = 0; i < n; i++) {
		char msg[256];
		struct kiln_arena ea = KILN_ARENA_INIT(KILN_LIMIT_HTTP_BODY * 4);
		struct scheduler_job ended = {0};
		struct scheduler_finish f = {
		    .outcome = SCHED_OUT_LOST,
		    .failure_class = "infra",
		    .message = msg,
		    .now_ms = now,
		    .backoff_ms = scheduler_backoff_ms(s, v[i].attempts),
		    .known = &v[i],
		    .ended = &ended,
		    .ended_arena = &ea, /* one row a job: the list's arena would grow */
		};

		snprintf(msg, sizeof(msg), "worker %s lost: lease expired", v[i].worker);
		kiln_err_clear(&err);
		if (scheduler_lease_end(s, v[i].lease_id, v[i].generation, &f, &err)) {
			kiln_log_err(KILN_LOG_WARN, &err);
			kiln_arena_release(&ea);
			continue;
		}
		kiln_log(KILN_LOG_INFO, "job %lld: %s (attempt %lld)", (long long)v[i].id, msg,
		         (long long)v[i].attempts);
		scheduler_job_ended_as(s, &(struct scheduler_ended){.job = &ended});
		kiln_arena_release(&ea);
	}
out:
	kiln_arena_release(&a);
}

/* One transition of a job: decide on j as read (policy.c), then write; *moved when the
 * store's guarded write found the job in another state than j's. */
typedef kiln_rc (*transition_fn)(struct scheduler_store *st, const struct scheduler_job *j,
                                 int64_t now_ms, void *out, bool *moved, struct kiln_err *err);

/* The store's writes are guarded by the state they were decided for: KILN_ECONFLICT from
 * the store means the job moved meanwhile (a worker ended it, another request changed it),
 * so the decision is taken again on what it is now, a few times at most. */
static kiln_rc transition(struct scheduler_store *st, int64_t id, int64_t now_ms,
                          transition_fn step, void *out, struct kiln_err *err)
{
	struct kiln_arena a = KILN_ARENA_INIT(KILN_LIMIT_HTTP_BODY * 4);
	struct scheduler_job j = {0};
	bool moved = true;
	kiln_rc rc = KILN_OK;
	int i;

	for (i = 0; moved && i < TRANSITION_TRIES; i++) {
		moved = false;
		kiln_err_clear(err);
		kiln_arena_release(&a);
		rc = st->ops->job_get(st, id, &a, &j, err);
		if (!rc)
			rc = step(st, &j, now_ms, out, &moved, err);
	}
	kiln_arena_release(&a);
	return rc;
}

static kiln_rc cancel_step(struct scheduler_store *st, const struct scheduler_job *j,
                           int64_t now_ms, void *state, bool *moved, struct kiln_err *err)
{
	kiln_rc rc = scheduler_cancel_decide(j, state, err);

	if (!rc) {
		rc = st->ops->job_cancel(st, j->id, now_ms, j->state == SCHED_QUEUED, err);
		*moved = rc == KILN_ECONFLICT;
	}
	return rc;
}

static kiln_rc retry_step(struct scheduler_store *st, const struct scheduler_job *j, int64_t now_ms,
                          void *unused, bool *moved, struct kiln_err *err)
{
	int64_t budget;
	kiln_rc rc = scheduler_retry_decide(j, &budget, err);

	(void)unused;
	if (!rc) {
		rc = st->ops->job_retry(st, j->id, now_ms, budget, err);
		*moved = rc == KILN_ECONFLICT;
	}
	return rc;
}

kiln_rc scheduler_job_cancel(struct scheduler_store *st, int64_t id, int64_t now_ms,
                             enum scheduler_state *state, struct kiln_err *err)
{
	return transition(st, id, now_ms, cancel_step, state, err);
}

kiln_rc scheduler_job_retry(struct scheduler_store *st, int64_t id, int64_t now_ms,
                            struct kiln_err *err)
{
	return transition(st, id, now_ms, retry_step, NULL, err);
}
