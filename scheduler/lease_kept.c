/*
 * lease_kept.c - the jobs of the leases this scheduler granted or renewed, by lease id.
 *
 * A heartbeat and a completion first read the lease's job to check whose it is and to
 * decide its end. The job as the grant or the last renewal here returned it answers
 * that as well while its lease runs: the worker, attempt and manifest of a generation do
 * not change, and the end is written guarded by what it was decided on (id, lease,
 * generation, an active state, cancel_requested, max_attempts; store_*.c), so a job that
 * changed since (a cancel asked, a renewal or an end on another scheduler) is read again
 * as before. A lease kept past its expiry is not used: the reaper may have ended it.
 * Direct-mapped by lease id: a newer lease replaces an older one in its slot.
 */
#include "util/util.h"

#include <pthread.h>

#include "scheduler/scheduler_int.h"

#define KEPT_SLOTS 256
/* A kept lease is used only while it runs this much longer (clocks of two schedulers). */
#define KEPT_MARGIN_MS 2000

struct kept_slot {
	struct scheduler_job job; /* strings in arena; job.lease_id "" when empty */
	struct kiln_arena arena;
};

struct scheduler_leases {
	pthread_mutex_t lock;
	struct kept_slot slot[KEPT_SLOTS];
};

struct scheduler_leases *scheduler_leases_new(void)
{
	struct scheduler_leases *m = kiln_calloc(1, sizeof(*m));
	size_t i;

	if (!m)
		return NULL;
	pthread_mutex_init(&m->lock, NULL);
	for (i = 0; i < KEPT_SLOTS; i++)
		kiln_arena_init(&m->slot[i].arena, KILN_LIMIT_HTTP_BODY * 4);
	return m;
}

void scheduler_leases_free(struct scheduler_leases *m)
{
	size_t i;

	if (!m)
		return;
	for (i = 0; i < KEPT_SLOTS; i++)
		kiln_arena_release(&m->slot[i].arena);
	pthread_mutex_destroy(&m->lock);
	free(m);
}

static struct kept_slot *kept_slot_of(struct scheduler_leases *m, const char *lid)
{
	return &m->slot[util_hash_str(lid) % KEPT_SLOTS];
}

/* The strings of *j copied into a (dst's point there); false on ENOMEM. */
static bool job_strings_copy(struct scheduler_job *dst, const struct scheduler_job *src,
                             struct kiln_arena *a)
{
	const char **dv[] = {&dst->arch,          &dst->tags,         &dst->spec_name,
	                     &dst->request,       &dst->manifest,     &dst->sign_key,
	                     &dst->idem_key,      &dst->project,      &dst->worker,
	                     &dst->failure_class, &dst->message,      &dst->avoid_worker,
	                     &dst->variations,    &dst->repro_verdict};
	size_t i;

	*dst = *src;
	for (i = 0; i < KILN_ARRAY_SIZE(dv); i++) {
		if (!*dv[i])
			continue;
		*dv[i] = kiln_arena_strdup(a, *dv[i]);
		if (!*dv[i])
			return false;
	}
	return true;
}

void scheduler_leases_keep(struct scheduler_leases *m, const struct scheduler_job *j)
{
	struct kept_slot *sl;

	if (!m || !j->lease_id[0])
		return;
	sl = kept_slot_of(m, j->lease_id);
	pthread_mutex_lock(&m->lock);
	kiln_arena_release(&sl->arena);
	if (!job_strings_copy(&sl->job, j, &sl->arena)) {
		kiln_arena_release(&sl->arena);
		memset(&sl->job, 0, sizeof(sl->job));
	}
	pthread_mutex_unlock(&m->lock);
}

void scheduler_leases_forget(struct scheduler_leases *m, const char *lid)
{
	struct kept_slot *sl;

	if (!m || !*lid)
		return;
	sl = kept_slot_of(m, lid);
	pthread_mutex_lock(&m->lock);
	if (!strcmp(sl->job.lease_id, lid)) {
		kiln_arena_release(&sl->arena);
		memset(&sl->job, 0, sizeof(sl->job));
	}
	pthread_mutex_unlock(&m->lock);
}

bool scheduler_leases_find(struct scheduler_leases *m, const char *lid, int64_t generation,
                           int64_t now_ms, struct kiln_arena *a, struct scheduler_job *out)
{
	struct kept_slot *sl;
	bool found;

	if (!m || !*lid)
		return false;
	sl = kept_slot_of(m, lid);
	pthread_mutex_lock(&m->lock);
	found = !strcmp(sl->job.lease_id, lid) && sl->job.generation == generation &&
	        scheduler_state_active(sl->job.state) &&
	        sl->job.lease_expires_ms > now_ms + KEPT_MARGIN_MS &&
	        job_strings_copy(out, &sl->job, a);
	pthread_mutex_unlock(&m->lock);
	return found;
}
