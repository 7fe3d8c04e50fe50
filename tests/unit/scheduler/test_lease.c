/* Leases and job transitions (scheduler/lease.c) over a store made up here: no database,
 * so the races a real store only shows under load are staged call by call. */
#include "util/util.h"

#include "tests/unit/harness.h"
#include "scheduler/scheduler_int.h"

struct fake {
	struct scheduler_store base;
	struct scheduler_candidate cand[4];
	size_t ncand;
	struct scheduler_worker_info active[2];
	size_t nactive, active_reads;
	int64_t lost[4]; /* ids another grant takes first */
	int64_t taken;   /* the id lease_take leased */
	int takes;       /* lease_take calls */
	struct scheduler_job job;
	int conflicts; /* job_cancel/job_retry: how many to lose before one goes through */
	int writes;
	bool queued;
	int64_t budget;
	struct scheduler_project_run run[2];
	size_t nrun, run_reads;
	int cand_reads;
	bool once;        /* a job taken is taken: a second take of it loses */
	int64_t took[16]; /* ... the ids taken so far */
	size_t ntook;
};

static kiln_rc f_candidates(struct scheduler_store *st, int64_t now_ms, const char *arches,
                            struct kiln_arena *a, struct scheduler_candidate **out, size_t *n,
                            struct kiln_err *err)
{
	struct fake *f = (struct fake *)st;

	(void)now_ms, (void)arches, (void)err;
	f->cand_reads++;
	*out = kiln_arena_array(a, 4, sizeof(**out));
	memcpy(*out, f->cand, sizeof(f->cand));
	*n = f->ncand;
	return KILN_OK;
}

static kiln_rc f_take(struct scheduler_store *st, const int64_t *ids, size_t n,
                      const struct scheduler_lease_query *q, struct kiln_arena *a,
                      struct scheduler_job *out, struct kiln_err *err)
{
	struct fake *f = (struct fake *)st;
	size_t i, k;

	(void)q, (void)a;
	f->takes++;
	for (k = 0; k < n; k++) {
		for (i = 0; i < KILN_ARRAY_SIZE(f->lost); i++)
			if (f->lost[i] == ids[k])
				break;
		if (i < KILN_ARRAY_SIZE(f->lost))
			continue;
		for (i = 0; f->once && i < f->ntook; i++)
			if (f->took[i] == ids[k])
				break;
		if (f->once && i < f->ntook)
			continue;
		if (f->ntook < KILN_ARRAY_SIZE(f->took))
			f->took[f->ntook++] = ids[k];
		f->taken = ids[k];
		out->id = ids[k];
		for (i = 0; i < f->ncand; i++)
			if (f->cand[i].id == ids[k])
				out->project_id = f->cand[i].project_id;
		return KILN_OK;
	}
	return kiln_err_set(err, KILN_ECONFLICT, "jobs are queued no more");
}

static kiln_rc f_active(struct scheduler_store *st, int64_t since_ms, struct kiln_arena *a,
                        struct scheduler_worker_info **out, size_t *n, struct kiln_err *err)
{
	struct fake *f = (struct fake *)st;

	(void)since_ms, (void)a, (void)err;
	f->active_reads++;
	*out = f->active;
	*n = f->nactive;
	return KILN_OK;
}

static kiln_rc f_get(struct scheduler_store *st, int64_t id, struct kiln_arena *a,
                     struct scheduler_job *out, struct kiln_err *err)
{
	struct fake *f = (struct fake *)st;

	(void)a;
	if (id != f->job.id)
		return kiln_err_set(err, KILN_ENOTFOUND, "no job %lld", (long long)id);
	*out = f->job;
	return KILN_OK;
}

/* A guarded write: the first f->conflicts lose, as if the job had moved between the read
 * and the write (leased meanwhile for a cancel, retried by another request for a retry). */
static kiln_rc f_write(struct fake *f, struct kiln_err *err)
{
	f->writes++;
	if (f->conflicts <= 0)
		return KILN_OK;
	f->conflicts--;
	f->job.state = f->job.state == SCHED_QUEUED ? SCHED_LEASED : SCHED_QUEUED;
	return kiln_err_set(err, KILN_ECONFLICT, "moved");
}

static kiln_rc f_cancel(struct scheduler_store *st, int64_t id, int64_t now_ms, bool queued,
                        struct kiln_err *err)
{
	struct fake *f = (struct fake *)st;
	kiln_rc rc = f_write(f, err);

	(void)id, (void)now_ms;
	if (!rc)
		f->queued = queued;
	return rc;
}

static kiln_rc f_retry(struct scheduler_store *st, int64_t id, int64_t now_ms, int64_t budget,
                       struct kiln_err *err)
{
	struct fake *f = (struct fake *)st;
	kiln_rc rc = f_write(f, err);

	(void)id, (void)now_ms;
	if (!rc)
		f->budget = budget;
	return rc;
}

static kiln_rc f_running(struct scheduler_store *st, struct kiln_arena *a,
                         struct scheduler_project_run **out, size_t *n, struct kiln_err *err)
{
	struct fake *f = (struct fake *)st;

	(void)a, (void)err;
	f->run_reads++;
	*out = f->run;
	*n = f->nrun;
	return KILN_OK;
}

static const struct scheduler_store_ops fake_ops = {
    .name = "fake",
    .project_running = f_running,
    .lease_candidates = f_candidates,
    .lease_take = f_take,
    .workers_active = f_active,
    .job_get = f_get,
    .job_cancel = f_cancel,
    .job_retry = f_retry,
};

static const struct scheduler_lease_query q = {
    .worker = "w1", .arches = ",x86_64,", .tags = ",", .now_ms = 10000, .ttl_ms = 1000};

KILN_TEST(lease_grant_passes_over_jobs_another_grant_took)
{
	struct fake f = {.base.ops = &fake_ops};
	struct kiln_arena a = KILN_ARENA_INIT(KILN_MIB);
	struct kiln_err err = KILN_ERR_INIT;
	struct scheduler_job j = {0};

	f.cand[0] =
	    (struct scheduler_candidate){.id = 1, .arch = "", .tags = "", .avoid_worker = ""};
	f.cand[1] = (struct scheduler_candidate){
	    .id = 2, .arch = "aarch64", .tags = "", .avoid_worker = ""};
	f.cand[2] =
	    (struct scheduler_candidate){.id = 3, .arch = "", .tags = "", .avoid_worker = ""};
	f.ncand = 3;
	f.lost[0] = 1;
	assert_ok(scheduler_lease_grant(&f.base, &q, &a, &j, &err), &err);
	assert_int_equal(f.taken, 3);
	assert_int_equal(j.id, 3);
	assert_int_equal(f.takes, 1); /* one take tried both picks, in order */
	/* every fitting one lost: nothing to lease, and no stale error */
	f.lost[1] = 3;
	f.taken = 0;
	kiln_err_clear(&err);
	assert_int_equal(scheduler_lease_grant(&f.base, &q, &a, &j, &err), KILN_ENOTFOUND);
	assert_int_equal(f.taken, 0);
	assert_int_equal(err.code, KILN_OK);
	kiln_arena_release(&a);
}

/* f's candidates: ids 1..n, of project projects[i]. */
static void fake_cands(struct fake *f, size_t n, const int64_t *projects)
{
	size_t i;

	for (i = 0; i < n; i++)
		f->cand[i] = (struct scheduler_candidate){.id = (int64_t)i + 1,
		                                          .arch = "",
		                                          .tags = "",
		                                          .avoid_worker = "",
		                                          .project_id = projects[i],
		                                          .arch_caps = ""};
	f->ncand = n;
}

/* A grant from c's kept candidates that must end with want: the job's id (0 for none). */
static int64_t kept_grant(struct fake *f, struct scheduler_cands *c, kiln_rc want)
{
	struct kiln_arena a = KILN_ARENA_INIT(KILN_MIB);
	struct kiln_err err = KILN_ERR_INIT;
	struct scheduler_job j = {0};

	assert_int_equal(scheduler_lease_grant_kept(&f->base, c, &q, &a, &j, &err), want);
	/* none to lease is no error, and no stale one */
	assert_int_equal(err.code, want == KILN_ENOTFOUND ? KILN_OK : want);
	kiln_arena_release(&a);
	return want ? 0 : j.id;
}

KILN_TEST(lease_grants_share_one_read_of_the_candidates)
{
	struct fake f = {.base.ops = &fake_ops, .once = true};
	struct scheduler_cands *c = scheduler_cands_new();

	assert_true(c != NULL);
	fake_cands(&f, 3, (const int64_t[]){1, 1, 1});
	assert_int_equal(kept_grant(&f, c, KILN_OK), 1);
	/* the picks the first take did not need went back: the next grant takes one */
	assert_int_equal(kept_grant(&f, c, KILN_OK), 2);
	assert_int_equal(f.cand_reads, 1);
	/* another scheduler took 3: what is kept is used up, read again, nothing there */
	f.lost[0] = 3;
	assert_int_equal(kept_grant(&f, c, KILN_ENOTFOUND), 0);
	assert_int_equal(f.cand_reads, 2);
	/* a job queued: the candidates are read again */
	fake_cands(&f, 4, (const int64_t[]){1, 1, 1, 1});
	scheduler_cands_invalidate(c);
	assert_int_equal(kept_grant(&f, c, KILN_OK), 4);
	assert_int_equal(f.cand_reads, 3);
	/* nothing left and read so: no read until something is queued */
	f.ncand = 0;
	scheduler_cands_invalidate(c);
	assert_int_equal(kept_grant(&f, c, KILN_ENOTFOUND), 0);
	assert_int_equal(kept_grant(&f, c, KILN_ENOTFOUND), 0);
	assert_int_equal(f.cand_reads, 4);
	scheduler_cands_free(c);
}

KILN_TEST(lease_grants_from_kept_candidates_take_turns_between_projects)
{
	struct fake f = {.base.ops = &fake_ops, .once = true};
	struct scheduler_cands *c = scheduler_cands_new();

	assert_true(c != NULL);
	fake_cands(&f, 4, (const int64_t[]){1, 1, 2, 2});
	/* as the store's grant does, the kept candidates put the project granted behind */
	assert_int_equal(kept_grant(&f, c, KILN_OK), 1);
	assert_int_equal(kept_grant(&f, c, KILN_OK), 3);
	assert_int_equal(kept_grant(&f, c, KILN_OK), 2);
	assert_int_equal(kept_grant(&f, c, KILN_OK), 4);
	assert_int_equal(f.cand_reads, 1);
	scheduler_cands_free(c);
}

/* A completion's picks for its worker's next job (taken with the end) are out of the kept
 * candidates until the end: a grant meanwhile picks others; picks not taken go back. */
KILN_TEST(lease_picks_for_an_end_are_held_until_it_is_written)
{
	struct fake f = {.base.ops = &fake_ops, .once = true};
	struct scheduler_cands *c = scheduler_cands_new();
	struct kiln_err err = KILN_ERR_INIT;
	struct scheduler_job next = {.id = 1, .project_id = 1};
	struct scheduler_take t = {.q = &q, .out = &next};

	assert_true(c != NULL);
	fake_cands(&f, 3, (const int64_t[]){1, 1, 1});
	assert_ok(scheduler_lease_picks(&f.base, c, &t, &err), &err);
	assert_int_equal(t.n, 3);
	assert_int_equal(t.ids[0], 1);
	assert_int_equal(t.ids[1], 2);
	/* held: a grant meanwhile finds none kept, reads again and takes what is queued */
	assert_int_equal(kept_grant(&f, c, KILN_OK), 1);
	assert_int_equal(f.cand_reads, 2);
	/* the end was not written: its picks go back (into a read since replaced: not) */
	scheduler_lease_picks_done(c, &t);
	/* the end took job 1 with it: 2 and 3 go back into the read they came from */
	fake_cands(&f, 3, (const int64_t[]){1, 1, 1});
	f.ntook = 0;
	scheduler_cands_invalidate(c);
	assert_ok(scheduler_lease_picks(&f.base, c, &t, &err), &err);
	assert_int_equal(f.cand_reads, 3);
	t.tried = true;
	t.rc = KILN_OK;
	f.took[f.ntook++] = 1;
	scheduler_lease_picks_done(c, &t);
	assert_int_equal(kept_grant(&f, c, KILN_OK), 2);
	assert_int_equal(kept_grant(&f, c, KILN_OK), 3);
	assert_int_equal(f.cand_reads, 3);
	/* none left for it: no picks, the grant follows the end */
	assert_int_equal(scheduler_lease_picks(&f.base, c, &t, &err), KILN_ENOTFOUND);
	assert_int_equal(err.code, KILN_OK);
	scheduler_cands_free(c);
}

KILN_TEST(lease_grant_kept_reads_afresh_for_capped_projects)
{
	struct fake f = {.base.ops = &fake_ops};
	struct scheduler_cands *c = scheduler_cands_new();

	assert_true(c != NULL);
	fake_cands(&f, 1, (const int64_t[]){1});
	f.cand[0].max_running = 1;
	assert_int_equal(kept_grant(&f, c, KILN_OK), 1);
	assert_int_equal(f.run_reads, 1);
	assert_int_equal(f.cand_reads, 2); /* the kept read, then the grant's own */
	scheduler_cands_free(c);
}

KILN_TEST(lease_grant_leaves_a_rerun_to_another_worker)
{
	struct fake f = {.base.ops = &fake_ops};
	struct kiln_arena a = KILN_ARENA_INIT(KILN_MIB);
	struct kiln_err err = KILN_ERR_INIT;
	struct scheduler_job j = {0};

	f.cand[0] =
	    (struct scheduler_candidate){.id = 1, .arch = "", .tags = "", .avoid_worker = "w1"};
	f.ncand = 1;
	f.active[0] =
	    (struct scheduler_worker_info){.name = "w2", .arches = ",x86_64,", .tags = ","};
	f.nactive = 1;
	assert_int_equal(scheduler_lease_grant(&f.base, &q, &a, &j, &err), KILN_ENOTFOUND);
	assert_int_equal(f.active_reads, 1);
	/* the other worker went away: the original's worker reruns it */
	f.nactive = 0;
	assert_ok(scheduler_lease_grant(&f.base, &q, &a, &j, &err), &err);
	assert_int_equal(f.taken, 1);
	/* with a job it may take, the other workers are not even read */
	f.active_reads = 0;
	f.cand[1] =
	    (struct scheduler_candidate){.id = 2, .arch = "", .tags = "", .avoid_worker = ""};
	f.ncand = 2;
	assert_ok(scheduler_lease_grant(&f.base, &q, &a, &j, &err), &err);
	assert_int_equal(f.taken, 2);
	assert_int_equal(f.active_reads, 0);
	kiln_arena_release(&a);
}

KILN_TEST(lease_grant_reads_what_runs_only_for_capped_projects)
{
	struct fake f = {.base.ops = &fake_ops};
	struct kiln_arena a = KILN_ARENA_INIT(KILN_MIB);
	struct kiln_err err = KILN_ERR_INIT;
	struct scheduler_job j = {0};

	f.cand[0] = (struct scheduler_candidate){1, "", "", "", 2, 0, 1, 0, ""};
	f.cand[1] = (struct scheduler_candidate){2, "", "", "", 3, 0, 2, 0, ""};
	f.ncand = 2;
	assert_ok(scheduler_lease_grant(&f.base, &q, &a, &j, &err), &err);
	assert_int_equal(f.taken, 1);
	assert_int_equal(f.run_reads, 0);
	/* project 2 capped at 1 with 1 running: project 3's job, though granted later */
	f.cand[0].max_running = 1;
	f.run[0] = (struct scheduler_project_run){2, "", 1};
	f.nrun = 1;
	assert_ok(scheduler_lease_grant(&f.base, &q, &a, &j, &err), &err);
	assert_int_equal(f.taken, 2);
	assert_int_equal(f.run_reads, 1);
	/* both held: nothing */
	f.cand[1].max_running = 1;
	f.run[1] = (struct scheduler_project_run){3, "", 1};
	f.nrun = 2;
	f.taken = 0;
	assert_int_equal(scheduler_lease_grant(&f.base, &q, &a, &j, &err), KILN_ENOTFOUND);
	assert_int_equal(f.taken, 0);
	kiln_arena_release(&a);
}

KILN_TEST(lease_cancel_decides_again_when_the_job_moved)
{
	struct fake f = {.base.ops = &fake_ops};
	struct kiln_err err = KILN_ERR_INIT;
	enum scheduler_state to;

	f.job = (struct scheduler_job){.id = 5, .state = SCHED_QUEUED};
	assert_ok(scheduler_job_cancel(&f.base, 5, 1, &to, &err), &err);
	assert_true(f.queued);
	assert_int_equal(to, SCHED_CANCELLED);
	/* leased between the read and the write: asked to stop instead */
	f.job.state = SCHED_QUEUED;
	f.conflicts = 1;
	f.writes = 0;
	assert_ok(scheduler_job_cancel(&f.base, 5, 1, &to, &err), &err);
	assert_int_equal(f.writes, 2);
	assert_false(f.queued);
	assert_int_equal(to, SCHED_LEASED);
	/* it keeps moving: a conflict in the end */
	f.conflicts = 100;
	f.writes = 0;
	assert_int_equal(scheduler_job_cancel(&f.base, 5, 1, &to, &err), KILN_ECONFLICT);
	assert_int_equal(f.writes, 4);
	/* policy says no: no write at all */
	kiln_err_clear(&err);
	f.conflicts = 0;
	f.writes = 0;
	f.job.state = SCHED_SUCCEEDED;
	assert_int_equal(scheduler_job_cancel(&f.base, 5, 1, &to, &err), KILN_ECONFLICT);
	assert_non_null(strstr(err.msg, "already ended"));
	assert_int_equal(f.writes, 0);
	kiln_err_clear(&err);
	assert_int_equal(scheduler_job_cancel(&f.base, 6, 1, &to, &err), KILN_ENOTFOUND);
}

KILN_TEST(lease_retry_decides_again_when_the_job_moved)
{
	struct fake f = {.base.ops = &fake_ops};
	struct kiln_err err = KILN_ERR_INIT;

	f.job = (struct scheduler_job){
	    .id = 5, .state = SCHED_FAILED, .attempts = 1, .max_attempts = 2};
	assert_ok(scheduler_job_retry(&f.base, 5, 1, &err), &err);
	assert_int_equal(f.budget, 1);
	/* another request retried it first: now queued, so this retry is refused */
	f.conflicts = 1;
	f.writes = 0;
	assert_int_equal(scheduler_job_retry(&f.base, 5, 1, &err), KILN_ECONFLICT);
	assert_int_equal(f.writes, 1);
	assert_non_null(strstr(err.msg, "only failed or cancelled"));
}

/* The leases kept for heartbeats and completions: found only for the same lease and
 * generation, while active and running past the margin; copied out whole; forgotten at
 * an end; a newer lease in the same slot replaces an older. */
KILN_TEST(lease_kept_found_while_it_runs_and_forgotten_at_its_end)
{
	struct scheduler_leases *m = scheduler_leases_new();
	struct kiln_arena a = KILN_ARENA_INIT(KILN_MIB);
	struct scheduler_job j = {.id = 7,
	                          .state = SCHED_LEASED,
	                          .generation = 3,
	                          .lease_expires_ms = 100000,
	                          .worker = "w1",
	                          .manifest = "{\"m\":1}",
	                          .arch = "x86_64"};
	struct scheduler_job got;
	char worker[8] = "w1";
	int i, n;

	assert_non_null(m);
	snprintf(j.lease_id, sizeof(j.lease_id), "%s", "aaaa0001");
	j.worker = worker;
	scheduler_leases_keep(m, &j, true);
	worker[0] = 'X'; /* the kept copy is its own */
	assert_true(scheduler_leases_find(m, "aaaa0001", 3, 1000, &a, &got));
	assert_int_equal(got.id, 7);
	assert_string_equal(got.worker, "w1");
	assert_string_equal(got.manifest, "{\"m\":1}");
	assert_null(got.tags);
	/* another generation, another lease, too close to the expiry, not active */
	assert_false(scheduler_leases_find(m, "aaaa0001", 4, 1000, &a, &got));
	assert_false(scheduler_leases_find(m, "aaaa0002", 3, 1000, &a, &got));
	assert_false(scheduler_leases_find(m, "aaaa0001", 3, 99000, &a, &got));
	assert_false(scheduler_leases_find(m, "", 3, 1000, &a, &got));
	j.state = SCHED_SUCCEEDED;
	worker[0] = 'w';
	scheduler_leases_keep(m, &j, true);
	assert_false(scheduler_leases_find(m, "aaaa0001", 3, 1000, &a, &got));
	/* a renewal replaces what was kept */
	j.state = SCHED_BUILDING;
	j.lease_expires_ms = 200000;
	scheduler_leases_keep(m, &j, false);
	assert_true(scheduler_leases_find(m, "aaaa0001", 3, 150000, &a, &got));
	assert_int_equal(got.state, SCHED_BUILDING);
	scheduler_leases_forget(m, "aaaa0002"); /* another lease: nothing */
	assert_true(scheduler_leases_find(m, "aaaa0001", 3, 1000, &a, &got));
	scheduler_leases_forget(m, "aaaa0001");
	assert_false(scheduler_leases_find(m, "aaaa0001", 3, 1000, &a, &got));
	/* many leases: each found or replaced by a later one in its slot, never another's */
	for (i = 0; i < 1000; i++) {
		snprintf(j.lease_id, sizeof(j.lease_id), "%08x", (unsigned)i * 2654435761u);
		j.id = i;
		scheduler_leases_keep(m, &j, true);
	}
	for (i = 0, n = 0; i < 1000; i++) {
		char lid[33];

		snprintf(lid, sizeof(lid), "%08x", (unsigned)i * 2654435761u);
		if (scheduler_leases_find(m, lid, 3, 1000, &a, &got)) {
			assert_int_equal(got.id, i);
			n++;
		}
	}
	assert_true(n > 100 && n <= 256); /* the last of each slot's */
	/* NULL keeps nothing and finds nothing */
	scheduler_leases_keep(NULL, &j, true);
	assert_false(scheduler_leases_find(NULL, j.lease_id, 3, 1000, &a, &got));
	kiln_arena_release(&a);
	scheduler_leases_free(m);
}

/* A lease granted here keeps the artifacts uploaded here (one of a name replacing the
 * last) with the job's count of uploads; they are known only while every upload since the
 * grant was here, and a renewal here keeps them. */
KILN_TEST(lease_kept_artifacts_are_the_uploads_here_since_the_grant)
{
	struct scheduler_leases *m = scheduler_leases_new();
	struct kiln_arena a = KILN_ARENA_INIT(KILN_MIB);
	struct scheduler_job j = {.id = 7,
	                          .state = SCHED_LEASED,
	                          .generation = 3,
	                          .lease_expires_ms = 100000,
	                          .uploads = 2};
	struct scheduler_artifact art = {.job_id = 7, .attempt = 1, .kind = "binary", .arch = ""};
	struct scheduler_artifact *v = NULL;
	char name[16] = "b.rpm";
	size_t n = 9;
	int64_t up = 0;

	assert_non_null(m);
	snprintf(j.lease_id, sizeof(j.lease_id), "%s", "bbbb0001");
	scheduler_leases_keep(m, &j, true);
	assert_true(scheduler_leases_artifacts(m, "bbbb0001", 3, 1000, &a, &v, &n, &up));
	assert_int_equal(n, 0);
	assert_int_equal(up, 2); /* the job's, from the attempts before */
	art.name = name;
	memcpy(art.sha256, "bb", 3);
	scheduler_leases_artifact_add(m, "bbbb0001", 3, &art, 3);
	art.name = "a.rpm";
	scheduler_leases_artifact_add(m, "bbbb0001", 3, &art, 4);
	art.name = name;
	memcpy(art.sha256, "cc", 3);
	scheduler_leases_artifact_add(m, "bbbb0001", 3, &art, 5);
	name[0] = 'X'; /* the kept copy is its own */
	assert_true(scheduler_leases_artifacts(m, "bbbb0001", 3, 1000, &a, &v, &n, &up));
	assert_int_equal(n, 2);
	assert_int_equal(up, 5);
	assert_string_equal(v[0].name, "a.rpm"); /* by name, as the stores list them */
	assert_string_equal(v[1].name, "b.rpm");
	assert_string_equal(v[1].sha256, "cc");
	/* another generation, a lease close to its expiry: not these */
	assert_false(scheduler_leases_artifacts(m, "bbbb0001", 4, 1000, &a, &v, &n, &up));
	assert_false(scheduler_leases_artifacts(m, "bbbb0001", 3, 99000, &a, &v, &n, &up));
	/* renewed here: still known */
	j.state = SCHED_BUILDING;
	j.lease_expires_ms = 200000;
	scheduler_leases_keep(m, &j, false);
	assert_true(scheduler_leases_artifacts(m, "bbbb0001", 3, 1000, &a, &v, &n, &up));
	assert_int_equal(n, 2);
	/* an upload elsewhere came between (6): unknown here from then on */
	scheduler_leases_artifact_add(m, "bbbb0001", 3, &art, 7);
	assert_false(scheduler_leases_artifacts(m, "bbbb0001", 3, 1000, &a, &v, &n, &up));
	scheduler_leases_artifact_add(m, "bbbb0001", 3, &art, 8);
	assert_false(scheduler_leases_artifacts(m, "bbbb0001", 3, 1000, &a, &v, &n, &up));
	/* granted elsewhere, renewed here: the uploads before are unknown */
	snprintf(j.lease_id, sizeof(j.lease_id), "%s", "cccc0001");
	scheduler_leases_keep(m, &j, false);
	assert_false(scheduler_leases_artifacts(m, "cccc0001", 3, 1000, &a, &v, &n, &up));
	/* granted again here, then forgotten */
	scheduler_leases_keep(m, &j, true);
	assert_true(scheduler_leases_artifacts(m, "cccc0001", 3, 1000, &a, &v, &n, &up));
	scheduler_leases_forget(m, "cccc0001");
	assert_false(scheduler_leases_artifacts(m, "cccc0001", 3, 1000, &a, &v, &n, &up));
	kiln_arena_release(&a);
	scheduler_leases_free(m);
}
