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
 *
 * A lease granted here also keeps the artifacts uploaded here for its attempt, and the
 * job's count of uploads they make: a completion checks and signs those without reading
 * them back, and its end is written only while the count is still that (store_*.c), so
 * an upload to another scheduler in between makes it read them. An upload here that
 * finds the count moved by more than itself, or a lease kept from a renewal, leaves the
 * artifacts unknown here.
 */
#include "util/util.h"

#include <pthread.h>

#include "scheduler/scheduler_int.h"

#define KEPT_SLOTS 256
/* A kept lease is used only while it runs this much longer (clocks of two schedulers). */
#define KEPT_MARGIN_MS 2000
/* More artifacts than this in one attempt are read from the store at its completion. */
#define KEPT_ARTS_MAX 1024

struct kept_slot {
	struct scheduler_job job; /* strings in arena; job.lease_id "" when empty */
	struct kiln_arena arena;
	/* with arts_known: the attempt's artifacts uploaded here since its grant here
	 * (arts[0..narts), owned, strings in arts_arena) and the job's uploads they make */
	bool arts_known;
	struct scheduler_artifact *arts;
	size_t narts, cap;
	int64_t uploads;
	struct kiln_arena arts_arena;
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
	for (i = 0; i < KEPT_SLOTS; i++) {
		kiln_arena_init(&m->slot[i].arena, KILN_LIMIT_HTTP_BODY * 4);
		kiln_arena_init(&m->slot[i].arts_arena, KILN_MIB);
	}
	return m;
}

void scheduler_leases_free(struct scheduler_leases *m)
{
	size_t i;

	if (!m)
		return;
	for (i = 0; i < KEPT_SLOTS; i++) {
		kiln_arena_release(&m->slot[i].arena);
		kiln_arena_release(&m->slot[i].arts_arena);
		free(m->slot[i].arts);
	}
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

/* The slot's artifacts unknown (none kept). Under m->lock. */
static void kept_arts_drop(struct kept_slot *sl)
{
	kiln_arena_release(&sl->arts_arena);
	sl->narts = 0;
	sl->arts_known = false;
}

/* The slot empty: no job kept. Under m->lock. */
static void kept_job_drop(struct kept_slot *sl)
{
	kiln_arena_release(&sl->arena);
	memset(&sl->job, 0, sizeof(sl->job));
}

/* Does sl keep lease lid at generation? Under m->lock. */
static bool kept_is(const struct kept_slot *sl, const char *lid, int64_t generation)
{
	return !strcmp(sl->job.lease_id, lid) && sl->job.generation == generation;
}

/* ... and is its job still running, its lease not about to expire at now_ms? */
static bool kept_running(const struct kept_slot *sl, const char *lid, int64_t generation,
                         int64_t now_ms)
{
	return kept_is(sl, lid, generation) && scheduler_state_active(sl->job.state) &&
	       sl->job.lease_expires_ms > now_ms + KEPT_MARGIN_MS;
}

void scheduler_leases_keep(struct scheduler_leases *m, const struct scheduler_job *j, bool granted)
{
	struct kept_slot *sl;
	bool same;

	if (!m || !j->lease_id[0])
		return;
	sl = kept_slot_of(m, j->lease_id);
	pthread_mutex_lock(&m->lock);
	same = kept_is(sl, j->lease_id, j->generation);
	kiln_arena_release(&sl->arena);
	if (!job_strings_copy(&sl->job, j, &sl->arena)) {
		kept_job_drop(sl);
		same = granted = false;
	}
	if (granted) { /* a new attempt: nothing uploaded yet */
		kept_arts_drop(sl);
		sl->arts_known = true;
		sl->uploads = j->uploads;
	} else if (!same) { /* renewed here, granted elsewhere: uploads before are unknown */
		kept_arts_drop(sl);
	}
	pthread_mutex_unlock(&m->lock);
}

/* art's copy in sl (replacing one of its name); false on ENOMEM or past KEPT_ARTS_MAX.
 * Under m->lock. */
static bool kept_art_put(struct kept_slot *sl, const struct scheduler_artifact *art)
{
	struct scheduler_artifact *d = NULL;
	size_t i;

	for (i = 0; i < sl->narts && !d; i++)
		if (!strcmp(sl->arts[i].name, art->name))
			d = &sl->arts[i];
	if (!d && sl->narts == sl->cap) {
		size_t cap = sl->cap ? sl->cap * 2 : 8;
		struct scheduler_artifact *v;

		if (cap > KEPT_ARTS_MAX)
			return false;
		v = realloc(sl->arts, cap * sizeof(*v));
		if (!v)
			return false;
		sl->arts = v;
		sl->cap = cap;
	}
	if (!d)
		d = &sl->arts[sl->narts++];
	*d = *art;
	d->name = kiln_arena_strdup(&sl->arts_arena, art->name);
	d->kind = kiln_arena_strdup(&sl->arts_arena, art->kind ? art->kind : "");
	d->arch = kiln_arena_strdup(&sl->arts_arena, art->arch ? art->arch : "");
	return d->name && d->kind && d->arch;
}

void scheduler_leases_artifact_add(struct scheduler_leases *m, const char *lid, int64_t generation,
                                   const struct scheduler_artifact *art, int64_t uploads)
{
	struct kept_slot *sl;

	if (!m || !*lid)
		return;
	sl = kept_slot_of(m, lid);
	pthread_mutex_lock(&m->lock);
	if (kept_is(sl, lid, generation) && sl->arts_known) {
		/* more than this one since the last: another scheduler took an upload */
		if (uploads != sl->uploads + 1 || !kept_art_put(sl, art))
			kept_arts_drop(sl);
		else
			sl->uploads = uploads;
	}
	pthread_mutex_unlock(&m->lock);
}

/* By name as bytes, as the stores list them (ORDER BY name COLLATE "C"). */
static int art_by_name(const void *a, const void *b)
{
	return strcmp(((const struct scheduler_artifact *)a)->name,
	              ((const struct scheduler_artifact *)b)->name);
}

bool scheduler_leases_artifacts(struct scheduler_leases *m, const char *lid, int64_t generation,
                                int64_t now_ms, struct kiln_arena *a,
                                struct scheduler_artifact **out, size_t *n, int64_t *uploads)
{
	struct scheduler_artifact *v = NULL;
	struct kept_slot *sl;
	bool found;
	size_t i;

	if (!m || !*lid)
		return false;
	sl = kept_slot_of(m, lid);
	pthread_mutex_lock(&m->lock);
	found = kept_running(sl, lid, generation, now_ms) && sl->arts_known;
	if (found && sl->narts) {
		v = kiln_arena_alloc(a, sl->narts * sizeof(*v));
		found = v != NULL;
	}
	for (i = 0; found && i < sl->narts; i++) {
		v[i] = sl->arts[i];
		v[i].name = kiln_arena_strdup(a, sl->arts[i].name);
		v[i].kind = kiln_arena_strdup(a, sl->arts[i].kind);
		v[i].arch = kiln_arena_strdup(a, sl->arts[i].arch);
		found = v[i].name && v[i].kind && v[i].arch;
	}
	if (found) {
		if (v)
			qsort(v, sl->narts, sizeof(*v), art_by_name);
		*out = v;
		*n = sl->narts;
		*uploads = sl->uploads;
	}
	pthread_mutex_unlock(&m->lock);
	return found;
}

void scheduler_leases_forget(struct scheduler_leases *m, const char *lid)
{
	struct kept_slot *sl;

	if (!m || !*lid)
		return;
	sl = kept_slot_of(m, lid);
	pthread_mutex_lock(&m->lock);
	if (!strcmp(sl->job.lease_id, lid)) {
		kept_job_drop(sl);
		kept_arts_drop(sl);
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
	found = kept_running(sl, lid, generation, now_ms) && job_strings_copy(out, &sl->job, a);
	pthread_mutex_unlock(&m->lock);
	return found;
}
