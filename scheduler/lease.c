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

/* Pick i of v[0..n) and the picks that would follow were it gone, up to SCHED_TAKE_PICKS,
 * taken out of v (ids 0) so that grants at once pick others: their ids in ids, their places
 * in idx (may be NULL); how many. */
static size_t picks_take_out(struct scheduler_candidate *v, size_t n,
                             const struct scheduler_lease_query *q,
                             const struct scheduler_project_run *run, size_t nrun, size_t i,
                             size_t *idx, int64_t *ids)
{
	size_t k, avoided;

	for (k = 0; k < SCHED_TAKE_PICKS && i < n; k++) {
		if (idx)
			idx[k] = i;
		ids[k] = v[i].id;
		v[i].id = 0;
		i = scheduler_lease_pick(v, n, q, run, nrun, &avoided);
	}
	return k;
}

kiln_rc scheduler_lease_grant(struct scheduler_store *st, const struct scheduler_lease_query *q,
                              struct kiln_arena *a, struct scheduler_job *out, struct kiln_err *err)
{
	struct scheduler_candidate *c = NULL;
	struct scheduler_project_run *run = NULL;
	size_t n = 0, nrun = 0, i, avoided, k;
	int64_t ids[SCHED_TAKE_PICKS];
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
		k = picks_take_out(c, n, q, run, nrun, i, NULL, ids);
		rc = st->ops->lease_take(st, ids, k, q, a, out, err);
		if (rc != KILN_ECONFLICT)
			return rc;
		/* other grants took them all first: the picks after them */
		kiln_err_clear(err);
		rc = KILN_OK;
	}
	return rc ? rc : KILN_ENOTFOUND;
}

/* ---------------------------------------------------------------------------------------- */
/* Candidates kept between grants */

struct cands_slot {
	char *arches;    /* owned; NULL: an empty slot */
	uint64_t gen;    /* scheduler_cands.gen when read */
	uint64_t epoch;  /* which read this is: picks go back only into the read they came from */
	int64_t read_ns; /* monotonic */
	uint64_t used;   /* the slot least used lately is read over */
	struct kiln_arena arena; /* v and its strings */
	struct scheduler_candidate *v;
	size_t n;
};

struct scheduler_cands {
	pthread_mutex_t lock; /* the slots; a read from the store happens under it */
	uint64_t gen;         /* bumped (atomically) by scheduler_cands_invalidate */
	uint64_t tick, epochs;
	uint64_t reads; /* from the store, for /metrics (read atomically) */
	struct cands_slot slot[SCHED_CANDS_SLOTS];
};

struct scheduler_cands *scheduler_cands_new(void)
{
	struct scheduler_cands *c = kiln_calloc(1, sizeof(*c));
	size_t i;

	if (!c)
		return NULL;
	pthread_mutex_init(&c->lock, NULL);
	for (i = 0; i < SCHED_CANDS_SLOTS; i++)
		kiln_arena_init(&c->slot[i].arena, 64 * KILN_MIB);
	return c;
}

void scheduler_cands_free(struct scheduler_cands *c)
{
	size_t i;

	if (!c)
		return;
	for (i = 0; i < SCHED_CANDS_SLOTS; i++) {
		free(c->slot[i].arches);
		kiln_arena_release(&c->slot[i].arena);
	}
	pthread_mutex_destroy(&c->lock);
	free(c);
}

void scheduler_cands_invalidate(struct scheduler_cands *c)
{
	if (c)
		__atomic_add_fetch(&c->gen, 1, __ATOMIC_RELEASE);
}

uint64_t scheduler_cands_reads(struct scheduler_cands *c)
{
	return c ? __atomic_load_n(&c->reads, __ATOMIC_RELAXED) : 0;
}

void scheduler_queue_changed(struct scheduler *s)
{
	scheduler_cands_invalidate(s->cands);
	api_server_wake(s->http);
}

/* The slot for these arches, read from the store when it is not, is out of date or
 * (force) whatever it holds. Under c->lock. *fresh: read now. */
static kiln_rc cands_slot_get(struct scheduler_cands *c, struct scheduler_store *st,
                              const struct scheduler_lease_query *q, bool force,
                              struct cands_slot **out, bool *fresh, struct kiln_err *err)
{
	uint64_t gen = __atomic_load_n(&c->gen, __ATOMIC_ACQUIRE);
	int64_t now = util_clock_mono_ns();
	struct cands_slot *sl = NULL;
	size_t i;
	kiln_rc rc;

	for (i = 0; i < SCHED_CANDS_SLOTS && !sl; i++)
		if (c->slot[i].arches && !strcmp(c->slot[i].arches, q->arches))
			sl = &c->slot[i];
	*fresh = false;
	if (sl && !force && sl->gen == gen &&
	    now - sl->read_ns < (int64_t)SCHED_CANDS_TTL_MS * 1000000) {
		sl->used = ++c->tick;
		*out = sl;
		return KILN_OK;
	}
	if (!sl) {
		sl = &c->slot[0];
		for (i = 1; i < SCHED_CANDS_SLOTS; i++)
			if (c->slot[i].used < sl->used)
				sl = &c->slot[i];
		free(sl->arches);
		sl->arches = kiln_strdup(q->arches);
		if (!sl->arches)
			return kiln_err_set(err, KILN_ENOMEM, "out of memory");
	}
	kiln_arena_release(&sl->arena);
	sl->v = NULL;
	sl->n = 0;
	sl->epoch = ++c->epochs;
	rc = st->ops->lease_candidates(st, q->now_ms, q->arches, &sl->arena, &sl->v, &sl->n, err);
	if (rc) {
		free(sl->arches);
		sl->arches = NULL; /* read again next time */
		return rc;
	}
	__atomic_add_fetch(&c->reads, 1, __ATOMIC_RELAXED);
	sl->gen = gen;
	sl->read_ns = now;
	sl->used = ++c->tick;
	*fresh = true;
	*out = sl;
	return KILN_OK;
}

/* After a take: the picks it did not try go back into the read they came from; the taken
 * job's project goes behind the others, as the store's grant does (Q_PROJECT_GRANT). */
static void cands_after_take(struct scheduler_cands *c, struct cands_slot *sl, uint64_t epoch,
                             const size_t *idx, const int64_t *ids, size_t k, kiln_rc rc,
                             const struct scheduler_job *taken)
{
	size_t i, j, from = k;

	if (rc == KILN_OK) {
		for (i = 0; i < k && from == k; i++)
			if (ids[i] == taken->id)
				from = i + 1;
	} else if (rc != KILN_ECONFLICT) {
		from = 0; /* nothing was taken */
	}
	if (sl->epoch == epoch)
		for (i = from; i < k; i++)
			sl->v[idx[i]].id = ids[i];
	if (rc)
		return;
	for (j = 0; j < SCHED_CANDS_SLOTS; j++) {
		struct cands_slot *o = &c->slot[j];
		int64_t max = INT64_MIN, mine = INT64_MIN;
		bool behind = false;

		for (i = 0; o->arches && i < o->n; i++)
			if (o->v[i].project_id == taken->project_id)
				mine = o->v[i].grant_seq;
		for (i = 0; o->arches && i < o->n; i++) {
			if (o->v[i].grant_seq > max)
				max = o->v[i].grant_seq;
			if (o->v[i].project_id != taken->project_id && o->v[i].grant_seq >= mine)
				behind = true;
		}
		for (i = 0; behind && mine != INT64_MIN && i < o->n; i++)
			if (o->v[i].project_id == taken->project_id)
				o->v[i].grant_seq = max + 1;
	}
}

kiln_rc scheduler_lease_picks(struct scheduler_store *st, struct scheduler_cands *c,
                              struct scheduler_take *t, struct kiln_err *err)
{
	struct cands_slot *sl = NULL;
	size_t i = 0, avoided = 0;
	bool fresh;
	kiln_rc rc;

	t->n = 0;
	t->slot = NULL;
	t->tried = false;
	if (!c)
		return KILN_ENOTFOUND;
	pthread_mutex_lock(&c->lock);
	rc = cands_slot_get(c, st, t->q, false, &sl, &fresh, err);
	if (!rc)
		i = scheduler_lease_pick(sl->v, sl->n, t->q, NULL, 0, &avoided);
	/* as scheduler_lease_grant_kept: caps and a rerun kept from its worker read afresh,
	 * and kept candidates used up may hide new ones; those grants come after the end */
	if (!rc && (i == sl->n || scheduler_candidates_capped(sl->v, sl->n)))
		rc = KILN_ENOTFOUND;
	if (!rc) {
		t->n = picks_take_out(sl->v, sl->n, t->q, NULL, 0, i, t->idx, t->ids);
		t->slot = sl;
		t->epoch = sl->epoch;
	}
	pthread_mutex_unlock(&c->lock);
	return rc;
}

void scheduler_lease_picks_done(struct scheduler_cands *c, struct scheduler_take *t)
{
	if (!c || !t->slot)
		return;
	pthread_mutex_lock(&c->lock);
	/* not tried: nothing taken, every pick goes back */
	cands_after_take(c, t->slot, t->epoch, t->idx, t->ids, t->n,
	                 t->tried ? t->rc : KILN_ENOTFOUND, t->out);
	pthread_mutex_unlock(&c->lock);
	t->slot = NULL;
}

kiln_rc scheduler_lease_grant_kept(struct scheduler_store *st, struct scheduler_cands *c,
                                   const struct scheduler_lease_query *q, struct kiln_arena *a,
                                   struct scheduler_job *out, struct kiln_err *err)
{
	bool force = false, read_here = false;

	if (!c)
		return scheduler_lease_grant(st, q, a, out, err);
	for (;;) {
		struct cands_slot *sl = NULL;
		size_t i, k, avoided, idx[SCHED_TAKE_PICKS];
		int64_t ids[SCHED_TAKE_PICKS];
		uint64_t epoch;
		bool fresh;
		kiln_rc rc;

		pthread_mutex_lock(&c->lock);
		rc = cands_slot_get(c, st, q, force, &sl, &fresh, err);
		if (rc) {
			pthread_mutex_unlock(&c->lock);
			return rc;
		}
		read_here = read_here || fresh;
		force = false;
		i = scheduler_lease_pick(sl->v, sl->n, q, NULL, 0, &avoided);
		/* caps need what runs now, a rerun kept from its worker needs who is active:
		 * those grants read afresh */
		if (scheduler_candidates_capped(sl->v, sl->n) || (i == sl->n && avoided < sl->n)) {
			pthread_mutex_unlock(&c->lock);
			return scheduler_lease_grant(st, q, a, out, err);
		}
		if (i == sl->n) {
			bool empty = !sl->n;

			pthread_mutex_unlock(&c->lock);
			/* read empty and nothing queued since: no need to ask again */
			if (read_here || empty)
				return KILN_ENOTFOUND;
			force = true; /* what was kept is used up: is there more? */
			continue;
		}
		k = picks_take_out(sl->v, sl->n, q, NULL, 0, i, idx, ids);
		epoch = sl->epoch;
		pthread_mutex_unlock(&c->lock);
		rc = st->ops->lease_take(st, ids, k, q, a, out, err);
		pthread_mutex_lock(&c->lock);
		cands_after_take(c, sl, epoch, idx, ids, k, rc, out);
		pthread_mutex_unlock(&c->lock);
		if (rc != KILN_ECONFLICT)
			return rc;
		/* another scheduler took them: the next picks */
		kiln_err_clear(err);
	}
}

kiln_rc scheduler_lease_end(struct scheduler *s, const char *lease_id, int64_t generation,
                            struct scheduler_finish *f, struct kiln_err *err)
{
	bool requeued = false;
	kiln_rc rc;

	f->requeued = &requeued;
	f->decide = scheduler_lease_decide;
	rc = s->store->ops->lease_finish(s->store, lease_id, generation, f, err);
	scheduler_leases_forget(s->leases, lease_id); /* ended, or no longer as kept */
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
	if (requeued)
		scheduler_queue_changed(s);
	else
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
