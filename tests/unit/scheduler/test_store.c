/*
 * test_store.c - the job store's tests, each run on both stores: sqlite3 (a file in the
 * test's directory) and PostgreSQL (a fresh database on the server the harness starts,
 * tests/pg/pg-harness.sh; skipped, saying why, only when PostgreSQL is not installed).
 */
#include "util/util.h"

#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/unit/harness.h"
#include "scheduler/scheduler_int.h"

/* libpq as store_pg.c opens it, for a listener of the schedulers' notifications */
#include <libpq-fe.h>
#include "scheduler/libpq_int.h"
static struct scheduler_libpq_fns scheduler_libpq;
static struct util_dl test_libpq_dl =
    UTIL_DL_INIT(SCHEDULER_LIBPQ_SONAME, scheduler_libpq_syms, scheduler_libpq);

/* A new empty store of each kind; name names the sqlite3 file. */
typedef struct scheduler_store *store_opener(const char *name);

static struct scheduler_store *open_sqlite(const char *name)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct scheduler_store *st = NULL;
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", kiln_test_tmpdir(), name);
	assert_ok(scheduler_store_open_sqlite(path, &st, &err), &err);
	return st;
}

/* A fresh database's URL; skips the test when PostgreSQL is not installed. */
static void pg_database(char *url, size_t size)
{
	kiln_rc rc = kiln_test_pg_database(url, size);

	if (rc == KILN_ENOTFOUND)
		skip();
	assert_int_equal(rc, KILN_OK);
}

/* A plain libpq session on url (not a store's), for what a test looks at or writes itself. */
static PGconn *pg_connect(const char *url)
{
	struct kiln_err err = KILN_ERR_INIT;
	const char *const keys[] = {"dbname", NULL};
	const char *vals[] = {url, NULL};
	PGconn *c;

	assert_ok(util_dl_ready(&test_libpq_dl, &err), &err);
	c = PQconnectdbParams(keys, vals, 1);
	assert_int_equal(PQstatus(c), CONNECTION_OK);
	return c;
}

static struct scheduler_store *open_pg(const char *name KILN_UNUSED)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct scheduler_store *st = NULL;
	char url[512];

	pg_database(url, sizeof(url));
	assert_ok(scheduler_store_open_pg(url, &st, &err), &err);
	return st;
}

static bool duty_held(struct scheduler_store *st, const char *name);

/* A test of the store interface, registered once per store: its body gets open_store. */
#define STORE_TEST(name)                                                                           \
	static void name(store_opener *open_store);                                                \
	KILN_TEST(name##_sqlite)                                                                   \
	{                                                                                          \
		name(open_sqlite);                                                                 \
	}                                                                                          \
	KILN_TEST(name##_pg)                                                                       \
	{                                                                                          \
		name(open_pg);                                                                     \
	}                                                                                          \
	static void name(store_opener *open_store)

static int64_t insert(struct scheduler_store *st, const char *arch, const char *tags, int64_t prio,
                      const char *idem)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct scheduler_job j = {0};
	int64_t id = 0;

	j.arch = arch, j.tags = tags, j.priority = prio, j.idem_key = idem;
	j.spec_name = "x.spec", j.request = "{}", j.manifest = "{}";
	memcpy(j.content_key, "k", 2);
	j.sign_key = "", j.token_id = 1, j.created_ms = 1000, j.max_attempts = 2;
	assert_ok(st->ops->job_insert(st, &j, &id, &err), &err);
	return id;
}

/* n plain jobs queued, their ids in ids. */
static void insert_some(struct scheduler_store *st, int64_t *ids, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		ids[i] = insert(st, "", "", 0, NULL);
}

static kiln_rc grant(struct scheduler_store *st, const char *worker, const char *arches,
                     const char *tags, int64_t now, const char *lid, struct kiln_arena *a,
                     struct scheduler_job *out)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct scheduler_lease_query q = {worker, arches, tags, now, 1000, lid};

	return scheduler_lease_grant(st, &q, a, out, &err);
}

#define L1 "11111111111111111111111111111111"
#define L2 "22222222222222222222222222222222"
#define L3 "33333333333333333333333333333333"

STORE_TEST(store_leases_by_priority_arch_and_tags)
{
	struct scheduler_store *st = open_store("a.db");
	struct kiln_arena a = KILN_ARENA_INIT(KILN_MIB);
	struct scheduler_job j;
	int64_t low = insert(st, "", "", 0, NULL);
	int64_t high = insert(st, "", "", 5, NULL);
	int64_t arm = insert(st, "aarch64", "", 9, NULL);
	int64_t gpu = insert(st, "", ",gpu,", 9, NULL);

	assert_ok(grant(st, "w", ",x86_64,", ",", 2000, L1, &a, &j), NULL);
	assert_int_equal(j.id, high);
	assert_int_equal(j.state, SCHED_LEASED);
	assert_int_equal(j.generation, 1);
	assert_int_equal(j.attempts, 1);
	assert_string_equal(j.lease_id, L1);
	assert_ok(grant(st, "w", ",x86_64,", ",", 2000, L2, &a, &j), NULL);
	assert_int_equal(j.id, low);
	assert_int_equal(grant(st, "w", ",x86_64,", ",", 2000, "3", &a, &j), KILN_ENOTFOUND);
	assert_ok(grant(st, "w", ",x86_64,", ",gpu,big,", 2000, "4", &a, &j), NULL);
	assert_int_equal(j.id, gpu);
	assert_ok(grant(st, "w", ",aarch64,", ",", 2000, "5", &a, &j), NULL);
	assert_int_equal(j.id, arm);
	kiln_arena_release(&a);
	scheduler_store_close(st);
}

/* [projects] A job of project p. */
static int64_t insert_in(struct scheduler_store *st, int64_t p, int64_t prio, int64_t token)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct scheduler_job j = {0};
	int64_t id = 0;

	j.arch = "", j.tags = "", j.priority = prio, j.project_id = p;
	j.spec_name = "x.spec", j.request = "{}", j.manifest = "{}";
	memcpy(j.content_key, "k", 2);
	j.sign_key = "", j.token_id = token, j.created_ms = 1000, j.max_attempts = 2;
	assert_ok(st->ops->job_insert(st, &j, &id, &err), &err);
	return id;
}

STORE_TEST(store_projects_own_jobs_and_tokens)
{
	struct scheduler_store *st = open_store("proj.db");
	struct kiln_arena a = KILN_ARENA_INIT(KILN_MIB);
	struct kiln_err err = KILN_ERR_INIT;
	struct scheduler_project p = {.name = "ci",
	                              .created_ms = 5,
	                              .public_read = true,
	                              .max_running = 3,
	                              .arch_caps = "x86_64=1",
	                              .key_expires_ms = 99};
	struct scheduler_project *v = NULL, got = {0};
	struct scheduler_token *ts = NULL;
	struct scheduler_repo_owner *owners = NULL;
	struct scheduler_job *jobs = NULL, j;
	struct scheduler_counts c;
	struct scheduler_artifact art = {.attempt = 1, .name = "a.rpm", .kind = "binary"};
	int64_t id = 0, tid = 0, tok = 0, proj = 0, mine, theirs;
	unsigned scopes = 0;
	size_t n = 0;

	/* the migration made default, id 1 */
	assert_ok(st->ops->project_get(st, 1, NULL, &a, &got, &err), &err);
	assert_string_equal(got.name, "default");
	assert_true(got.public_read);
	assert_ok(st->ops->project_insert(st, &p, &id, &err), &err);
	assert_true(id > 1);
	assert_int_equal(st->ops->project_insert(st, &p, &tid, &err), KILN_EEXIST);
	kiln_err_clear(&err);
	assert_ok(st->ops->project_get(st, 0, "ci", &a, &got, &err), &err);
	assert_int_equal(got.id, id);
	assert_int_equal(got.created_ms, 5);
	assert_true(got.public_read);
	assert_int_equal(got.max_running, 3);
	assert_string_equal(got.arch_caps, "x86_64=1");
	assert_int_equal(got.key_expires_ms, 99);
	assert_int_equal(st->ops->project_get(st, 0, "nope", &a, &got, &err), KILN_ENOTFOUND);
	kiln_err_clear(&err);
	assert_ok(st->ops->projects_list(st, &a, &v, &n, &err), &err);
	assert_int_equal(n, 2);
	assert_string_equal(v[0].name, "ci");
	assert_string_equal(v[1].name, "default");
	p.id = id, p.public_read = false, p.max_running = 0, p.arch_caps = "", p.key_expires_ms = 7;
	assert_ok(st->ops->project_update(st, &p, &err), &err);
	assert_ok(st->ops->project_get(st, id, NULL, &a, &got, &err), &err);
	assert_false(got.public_read);
	assert_int_equal(got.key_expires_ms, 7);

	/* tokens and jobs carry their project */
	assert_ok(st->ops->token_insert(st, "hc", API_SCOPE_SUBMIT, "c", id, 10, &tid, &err), &err);
	assert_ok(st->ops->token_lookup(st, "hc", &tok, &scopes, &proj, &err), &err);
	assert_int_equal(proj, id);
	assert_ok(st->ops->tokens_list(st, &a, &ts, &n, &err), &err);
	assert_int_equal(n, 1);
	assert_int_equal(ts[0].project_id, id);
	assert_string_equal(ts[0].project, "ci");
	mine = insert_in(st, id, 0, tid);
	theirs = insert_in(st, 0, 0, 1); /* 0: default */
	assert_ok(st->ops->job_get(st, mine, &a, &j, &err), &err);
	assert_int_equal(j.project_id, id);
	assert_string_equal(j.project, "ci");
	assert_ok(st->ops->job_get(st, theirs, &a, &j, &err), &err);
	assert_int_equal(j.project_id, 1);
	assert_string_equal(j.project, "default");
	assert_ok(st->ops->job_list(st, id, -1, "", 0, 10, &a, &jobs, &n, &err), &err);
	assert_int_equal(n, 1);
	assert_int_equal(jobs[0].id, mine);
	assert_ok(st->ops->job_list(st, 0, -1, "", 0, 10, &a, &jobs, &n, &err), &err);
	assert_int_equal(n, 2);
	assert_ok(st->ops->counts(st, &a, &c, &err), &err);
	assert_int_equal(c.nqueued_project, 2);
	assert_string_equal(c.queued_project[0], "ci");
	assert_int_equal(c.queued_project_n[0], 1);
	art.job_id = mine;
	memcpy(art.sha256, "aa", 3);
	assert_ok(st->ops->artifact_put(st, &art, NULL, &err), &err);
	assert_ok(st->ops->artifact_in_project(st, "aa", id, &err), &err);
	assert_int_equal(st->ops->artifact_in_project(st, "aa", 1, &err), KILN_ENOTFOUND);
	kiln_err_clear(&err);

	/* repositories: default's unless given; back to default with the project */
	assert_ok(st->ops->repo_owner_set(st, "r1", id, &err), &err);
	assert_ok(st->ops->repo_owner_set(st, "r2", id, &err), &err);
	assert_ok(st->ops->repo_owner_set(st, "r2", 1, &err), &err);
	assert_ok(st->ops->repo_owner_set(st, "r3", id, &err), &err);
	assert_ok(st->ops->repo_owner_set(st, "r3", id, &err), &err);
	assert_ok(st->ops->repo_owners(st, &a, &owners, &n, &err), &err);
	assert_int_equal(n, 2);
	assert_string_equal(owners[0].repo, "r1");
	assert_int_equal(owners[0].project_id, id);
	assert_string_equal(owners[1].repo, "r3");

	/* not deleted while it has work queued; then its tokens go with it */
	assert_int_equal(st->ops->project_delete(st, id, &err), KILN_ECONFLICT);
	kiln_err_clear(&err);
	assert_ok(st->ops->job_cancel(st, mine, 20, true, &err), &err);
	assert_ok(st->ops->project_delete(st, id, &err), &err);
	assert_int_equal(st->ops->token_lookup(st, "hc", &tok, &scopes, &proj, &err), KILN_EAUTH);
	kiln_err_clear(&err);
	assert_int_equal(st->ops->project_delete(st, id, &err), KILN_ENOTFOUND);
	kiln_err_clear(&err);
	assert_ok(st->ops->repo_owners(st, &a, &owners, &n, &err), &err);
	assert_int_equal(n, 0);
	/* its ended job stays, its project's name gone */
	assert_ok(st->ops->job_get(st, mine, &a, &j, &err), &err);
	assert_int_equal(j.project_id, id);
	assert_string_equal(j.project, "");
	kiln_arena_release(&a);
	scheduler_store_close(st);
}

/* Each project's best jobs are candidates however long another's queue; a grant sends its
 * project to the back of the grant order; caps count what runs by project and arch. */
STORE_TEST(store_grants_share_between_projects)
{
	struct scheduler_store *st = open_store("fair.db");
	struct kiln_arena a = KILN_ARENA_INIT(KILN_MIB);
	struct kiln_err err = KILN_ERR_INIT;
	struct scheduler_project pa = {.name = "a", .arch_caps = ""},
	                         pb = {.name = "b", .arch_caps = ""};
	struct scheduler_candidate *c = NULL;
	struct scheduler_project_run *run = NULL;
	struct scheduler_job j;
	int64_t ida = 0, idb = 0, b1;
	size_t n = 0, i, from_b = 0;
	char lid[33];

	assert_ok(st->ops->project_insert(st, &pa, &ida, &err), &err);
	assert_ok(st->ops->project_insert(st, &pb, &idb, &err), &err);
	for (i = 0; i < 300; i++)
		insert_in(st, ida, 5, 1);
	b1 = insert_in(st, idb, 0, 1);
	assert_ok(st->ops->lease_candidates(st, 5000, ",x86_64,", &a, &c, &n, &err), &err);
	assert_int_equal(n, 65); /* a's best 64 and b's one */
	for (i = 0; i < n; i++)
		from_b += c[i].project_id == idb;
	assert_int_equal(from_b, 1);
	/* a is granted first (both never were: by id), then b, though its priority is lower */
	assert_ok(grant(st, "w", ",x86_64,", ",", 5000, L1, &a, &j), NULL);
	assert_int_equal(j.project_id, ida);
	assert_ok(grant(st, "w", ",x86_64,", ",", 5000, L2, &a, &j), NULL);
	assert_int_equal(j.id, b1);
	for (i = 0; i < 3; i++) {
		snprintf(lid, sizeof(lid), "%032zu", i + 3);
		assert_ok(grant(st, "w", ",x86_64,", ",", 5000, lid, &a, &j), NULL);
		assert_int_equal(j.project_id, ida);
	}
	assert_ok(st->ops->project_running(st, &a, &run, &n, &err), &err);
	assert_int_equal(n, 2);
	assert_int_equal(run[0].project_id, ida);
	assert_string_equal(run[0].arch, "");
	assert_int_equal(run[0].n, 4);
	assert_int_equal(run[1].project_id, idb);
	assert_int_equal(run[1].n, 1);
	kiln_arena_release(&a);
	scheduler_store_close(st);
}

STORE_TEST(store_generation_guards_every_lease_call)
{
	struct scheduler_store *st = open_store("b.db");
	struct kiln_arena a = KILN_ARENA_INIT(KILN_MIB);
	struct kiln_err err = KILN_ERR_INIT;
	struct scheduler_job j, *exp = NULL, ended = {0};
	struct scheduler_finish f = {.outcome = SCHED_OUT_LOST,
	                             .failure_class = "infra",
	                             .message = "lost",
	                             .now_ms = 5000,
	                             .backoff_ms = 100,
	                             .decide = scheduler_lease_decide,
	                             .ended = &ended,
	                             .ended_arena = &a};
	struct scheduler_attempt *att = NULL;
	size_t n = 0;
	int64_t id = insert(st, "", "", 0, NULL);

	assert_ok(grant(st, "w1", ",x,", ",", 2000, L1, &a, &j), NULL);
	assert_ok(st->ops->lease_touch(st, L1, 1, 2500, 1000, &a, &j, &err), &err);
	assert_int_equal(j.state, SCHED_BUILDING);
	assert_int_equal(st->ops->lease_touch(st, L1, 2, 2500, 1000, &a, &j, &err), KILN_ECONFLICT);
	kiln_err_clear(&err);
	/* expired at 3500: the reaper finds it and ends it as lost; requeued (1 < 2 attempts) */
	assert_ok(st->ops->leases_expired(st, 3400, &a, &exp, &n, &err), &err);
	assert_int_equal(n, 0);
	assert_ok(st->ops->leases_expired(st, 5000, &a, &exp, &n, &err), &err);
	assert_int_equal(n, 1);
	assert_ok(st->ops->lease_finish(st, L1, 1, &f, &err), &err);
	assert_ok(st->ops->job_get(st, id, &a, &j, &err), &err);
	assert_int_equal(j.state, SCHED_QUEUED);
	assert_int_equal(j.not_before_ms, 5100);
	/* a requeue's row comes back as written too */
	assert_int_equal(ended.state, SCHED_QUEUED);
	assert_int_equal(ended.not_before_ms, 5100);
	assert_string_equal(ended.worker, "");
	assert_string_equal(ended.message, j.message);
	assert_int_equal(grant(st, "w2", ",x,", ",", 5050, L2, &a, &j), KILN_ENOTFOUND);
	assert_ok(grant(st, "w2", ",x,", ",", 5100, L2, &a, &j), NULL);
	assert_int_equal(j.generation, 2);
	/* the first worker's lease is dead for good */
	assert_int_equal(st->ops->lease_touch(st, L1, 1, 5200, 1000, &a, &j, &err), KILN_ECONFLICT);
	assert_non_null(strstr(err.msg, "no longer held"));
	kiln_err_clear(&err);
	assert_int_equal(st->ops->lease_touch(st, "ffff", 1, 5200, 0, &a, &j, &err),
	                 KILN_ENOTFOUND);
	kiln_err_clear(&err);
	/* a second loss uses up the attempts: failed */
	f.now_ms = 9000;
	assert_ok(st->ops->lease_finish(st, L2, 2, &f, &err), &err);
	assert_ok(st->ops->job_get(st, id, &a, &j, &err), &err);
	assert_int_equal(j.state, SCHED_FAILED);
	assert_string_equal(j.failure_class, "infra");
	assert_ok(st->ops->attempts_list(st, id, &a, &att, &n, &err), &err);
	assert_int_equal(n, 2);
	assert_string_equal(att[0].state, "lost");
	assert_string_equal(att[0].worker, "w1");
	assert_string_equal(att[1].worker, "w2");
	kiln_arena_release(&a);
	scheduler_store_close(st);
}

/* A take of several picks leases the first still queued, in the order given. */
STORE_TEST(store_take_leases_the_first_pick_still_queued)
{
	struct scheduler_store *st = open_store("t.db");
	struct kiln_arena a = KILN_ARENA_INIT(KILN_MIB);
	struct kiln_err err = KILN_ERR_INIT;
	struct scheduler_lease_query q = {
	    .worker = "w1", .arches = ",x,", .tags = ",", .now_ms = 2000, .ttl_ms = 1000};
	struct scheduler_job j;
	int64_t ids[3];

	insert_some(st, ids, 3);
	q.lease_id = L1;
	assert_ok(st->ops->lease_take(st, &ids[1], 1, &q, &a, &j, &err), &err);
	assert_int_equal(j.id, ids[1]);
	/* ids[1] is gone: the next in the order given, not the lowest id */
	q.lease_id = L2;
	assert_ok(st->ops->lease_take(st, (int64_t[]){ids[1], ids[2], ids[0]}, 3, &q, &a, &j, &err),
	          &err);
	assert_int_equal(j.id, ids[2]);
	assert_int_equal(j.state, SCHED_LEASED);
	assert_string_equal(j.lease_id, L2);
	q.lease_id = L3;
	assert_int_equal(st->ops->lease_take(st, (int64_t[]){ids[1], ids[2]}, 2, &q, &a, &j, &err),
	                 KILN_ECONFLICT);
	kiln_arena_release(&a);
	scheduler_store_close(st);
}

#define L4 "44444444444444444444444444444444"

/* A lease's end with a take (a completion asking for its worker's next job) leases the
 * first pick still queued in the same write, and only when the end is written; a requeue
 * takes as well; with the picks gone the end stands alone. */
STORE_TEST(store_end_takes_the_next_job_with_it)
{
	struct scheduler_store *st = open_store("e.db");
	struct kiln_arena a = KILN_ARENA_INIT(KILN_MIB);
	struct kiln_err err = KILN_ERR_INIT;
	struct scheduler_lease_query q = {
	    .worker = "w1", .arches = ",x,", .tags = ",", .now_ms = 2100, .ttl_ms = 1000};
	struct scheduler_job j, known, ended = {0}, next = {0};
	struct scheduler_take t = {.q = &q, .a = &a, .out = &next};
	struct scheduler_finish f = {.outcome = SCHED_OUT_SUCCEEDED,
	                             .failure_class = "",
	                             .message = "",
	                             .now_ms = 2000,
	                             .decide = scheduler_lease_decide,
	                             .ended = &ended,
	                             .ended_arena = &a,
	                             .take = &t};
	struct scheduler_attempt *att = NULL;
	size_t n = 0;
	int64_t ids[3];

	insert_some(st, ids, 3);
	assert_ok(grant(st, "w1", ",x,", ",", 1500, L1, &a, &j), NULL);
	assert_int_equal(j.id, ids[0]);
	q.lease_id = L2;
	t.ids[0] = ids[1];
	t.n = 1;
	/* an end refused (a stale generation): no take either */
	assert_int_equal(st->ops->lease_finish(st, L1, 2, &f, &err), KILN_ECONFLICT);
	kiln_err_clear(&err);
	assert_false(t.tried);
	assert_ok(st->ops->job_get(st, ids[1], &a, &j, &err), &err);
	assert_int_equal(j.state, SCHED_QUEUED);
	/* the end and the take, the end decided first on the job as known before a cancel
	 * (a store that guards its write by it writes neither then, and both on the job read
	 * again: the take once) */
	assert_ok(st->ops->lease_touch(st, L1, 1, 1600, 0, &a, &known, &err), &err);
	assert_ok(st->ops->job_cancel(st, ids[0], 1700, false, &err), &err);
	f.known = &known;
	assert_ok(st->ops->lease_finish(st, L1, 1, &f, &err), &err);
	f.known = NULL;
	assert_int_equal(ended.id, ids[0]);
	assert_int_equal(ended.state, SCHED_SUCCEEDED); /* built before the cancel */
	assert_int_equal(ended.cancel_requested, 1);
	assert_string_equal(ended.lease_id, "");
	assert_true(t.tried);
	assert_ok(t.rc, &t.err);
	assert_int_equal(next.id, ids[1]);
	assert_int_equal(next.state, SCHED_LEASED);
	assert_string_equal(next.lease_id, L2);
	assert_string_equal(next.worker, "w1");
	assert_int_equal(next.attempts, 1);
	assert_int_equal(next.lease_expires_ms, 3100);
	assert_ok(st->ops->attempts_list(st, ids[1], &a, &att, &n, &err), &err);
	assert_int_equal(n, 1);
	assert_string_equal(att[0].lease_id, L2);
	assert_string_equal(att[0].state, "leased");
	/* its picks gone (ids[1] is leased): the end stands alone; an infra failure with
	 * attempts left requeues */
	f.outcome = SCHED_OUT_INFRA;
	f.failure_class = "infra";
	f.backoff_ms = 100;
	f.now_ms = 2200;
	q.lease_id = L3;
	t.tried = false;
	assert_ok(st->ops->lease_finish(st, L2, 1, &f, &err), &err);
	assert_int_equal(ended.id, ids[1]);
	assert_int_equal(ended.state, SCHED_QUEUED);
	assert_true(t.tried);
	assert_int_equal(t.rc, KILN_ECONFLICT);
	kiln_err_clear(&t.err);
	assert_ok(st->ops->job_get(st, ids[2], &a, &j, &err), &err);
	assert_int_equal(j.state, SCHED_QUEUED);
	/* a requeue takes too: ids[2]'s lease requeued, ids[1] (due again) taken with it */
	assert_ok(grant(st, "w1", ",x,", ",", 2250, L4, &a, &j), NULL);
	assert_int_equal(j.id, ids[2]);
	f.now_ms = 2400;
	q.now_ms = 2400;
	t.tried = false;
	assert_ok(st->ops->lease_finish(st, L4, 1, &f, &err), &err);
	assert_int_equal(ended.id, ids[2]);
	assert_int_equal(ended.state, SCHED_QUEUED);
	assert_true(t.tried);
	assert_ok(t.rc, &t.err);
	assert_int_equal(next.id, ids[1]);
	assert_string_equal(next.lease_id, L3);
	assert_int_equal(next.generation, 2);
	assert_int_equal(next.attempts, 2);
	kiln_arena_release(&a);
	scheduler_store_close(st);
}

/* The end is decided on the job as it is when it is written: a cancel asked after the
 * caller read the job (f.known) turns an infrastructure failure into a cancel, not a
 * retry; ending the same lease again is a conflict. */
STORE_TEST(store_finish_decides_on_the_job_as_it_is)
{
	struct scheduler_store *st = open_store("k.db");
	struct kiln_arena a = KILN_ARENA_INIT(KILN_MIB);
	struct kiln_err err = KILN_ERR_INIT;
	struct scheduler_job j, known, ended = {0};
	bool requeued = true;
	struct scheduler_finish f = {.outcome = SCHED_OUT_INFRA,
	                             .failure_class = "infra",
	                             .message = "disk",
	                             .now_ms = 2300,
	                             .backoff_ms = 100,
	                             .requeued = &requeued,
	                             .decide = scheduler_lease_decide,
	                             .known = &known,
	                             .ended = &ended,
	                             .ended_arena = &a};
	int64_t id = insert(st, "", "", 0, NULL);

	assert_ok(grant(st, "w1", ",x,", ",", 2000, L1, &a, &j), NULL);
	assert_ok(st->ops->lease_touch(st, L1, 1, 2100, 0, &a, &known, &err), &err);
	assert_false(known.cancel_requested);
	assert_ok(st->ops->job_cancel(st, id, 2200, false, &err), &err);
	assert_ok(st->ops->lease_finish(st, L1, 1, &f, &err), &err);
	assert_false(requeued);
	assert_ok(st->ops->job_get(st, id, &a, &j, &err), &err);
	assert_int_equal(j.state, SCHED_CANCELLED);
	assert_string_equal(j.failure_class, "cancel");
	/* the row the end wrote comes back with it, as a read after it would give */
	assert_int_equal(ended.id, id);
	assert_int_equal(ended.state, SCHED_CANCELLED);
	assert_string_equal(ended.failure_class, "cancel");
	assert_string_equal(ended.lease_id, "");
	assert_int_equal(ended.finished_ms, j.finished_ms);
	assert_int_equal(ended.generation, j.generation);
	assert_string_equal(ended.worker, j.worker);
	assert_string_equal(ended.request, j.request);
	assert_int_equal(st->ops->lease_finish(st, L1, 1, &f, &err), KILN_ECONFLICT);
	kiln_err_clear(&err);
	kiln_arena_release(&a);
	scheduler_store_close(st);
}

/* Uploads are counted in their job (a record of a signature is not), and a lease's end
 * decided on a count of them is written only while the job has that many: the guard
 * of a completion that signed the artifacts the scheduler kept from its uploads. Known
 * (the known job as read) and not known (read in the end) both. */
STORE_TEST(store_uploads_guard_a_completions_end)
{
	struct scheduler_store *st = open_store("u.db");
	struct kiln_arena a = KILN_ARENA_INIT(KILN_MIB);
	struct kiln_err err = KILN_ERR_INIT;
	struct scheduler_job j, ended = {0};
	bool changed = false;
	struct scheduler_finish f = {.outcome = SCHED_OUT_SUCCEEDED,
	                             .failure_class = "",
	                             .message = "",
	                             .now_ms = 2300,
	                             .decide = scheduler_lease_decide,
	                             .ended = &ended,
	                             .ended_arena = &a};
	struct scheduler_artifact art = {
	    .attempt = 1, .name = "b.rpm", .kind = "binary", .arch = ""};
	int64_t id = insert(st, "", "", 0, NULL), up = -1;

	assert_ok(grant(st, "w1", ",x,", ",", 2000, L1, &a, &j), NULL);
	assert_int_equal(j.uploads, 0);
	art.job_id = id;
	memcpy(art.sha256, "aa", 3);
	assert_ok(st->ops->artifact_put(st, &art, &up, &err), &err);
	assert_int_equal(up, 1);
	memcpy(art.sha256, "bb", 3); /* the same name again: one more upload */
	assert_ok(st->ops->artifact_put(st, &art, &up, &err), &err);
	assert_int_equal(up, 2);
	memcpy(art.signed_sha256, "cc", 3); /* its signature recorded: no upload */
	assert_ok(st->ops->artifact_put(st, &art, NULL, &err), &err);
	assert_ok(st->ops->lease_touch(st, L1, 1, 2100, 0, &a, &j, &err), &err);
	assert_int_equal(j.uploads, 2);
	/* decided on one upload: refused, the job still leased */
	f.uploads_known = true;
	f.uploads = 1;
	f.uploads_changed = &changed;
	for (int known = 0; known < 2; known++) {
		changed = false;
		f.known = known ? &j : NULL;
		assert_int_equal(st->ops->lease_finish(st, L1, 1, &f, &err), KILN_ECONFLICT);
		assert_true(changed);
		kiln_err_clear(&err);
	}
	assert_ok(st->ops->job_get(st, id, &a, &j, &err), &err);
	assert_int_equal(j.state, SCHED_LEASED);
	/* on both: ended */
	f.uploads = 2;
	changed = false;
	assert_ok(st->ops->lease_finish(st, L1, 1, &f, &err), &err);
	assert_false(changed);
	assert_int_equal(ended.state, SCHED_SUCCEEDED);
	assert_int_equal(ended.uploads, 2);
	kiln_arena_release(&a);
	scheduler_store_close(st);
}

STORE_TEST(store_idempotency_cancel_retry)
{
	struct scheduler_store *st = open_store("c.db");
	struct kiln_arena a = KILN_ARENA_INIT(KILN_MIB);
	struct kiln_err err = KILN_ERR_INIT;
	struct scheduler_job j = {0};
	enum scheduler_state s;
	int64_t id = insert(st, "", "", 0, "key"), again = 0;

	j.arch = "", j.tags = "", j.idem_key = "key", j.request = "{}", j.manifest = "{}";
	j.spec_name = "", j.sign_key = "", j.token_id = 1, j.max_attempts = 1;
	assert_int_equal(st->ops->job_insert(st, &j, &again, &err), KILN_EEXIST);
	assert_int_equal(again, id);
	/* another token may use the same key */
	j.token_id = 2;
	assert_ok(st->ops->job_insert(st, &j, &again, &err), &err);
	assert_int_not_equal(again, id);
	assert_ok(scheduler_job_cancel(st, id, 3000, &s, &err), &err);
	assert_int_equal(s, SCHED_CANCELLED);
	assert_ok(scheduler_job_retry(st, id, 3100, &err), &err);
	assert_ok(st->ops->job_get(st, id, &a, &j, &err), &err);
	assert_int_equal(j.state, SCHED_QUEUED);
	assert_int_equal(scheduler_job_retry(st, id, 3100, &err), KILN_ECONFLICT);
	kiln_err_clear(&err);
	assert_int_equal(st->ops->job_get(st, 999, &a, &j, &err), KILN_ENOTFOUND);
	kiln_arena_release(&a);
	scheduler_store_close(st);
}

STORE_TEST(store_tokens_workers_artifacts_counts)
{
	struct scheduler_store *st = open_store("d.db");
	struct kiln_arena a = KILN_ARENA_INIT(KILN_MIB);
	struct kiln_err err = KILN_ERR_INIT;
	struct scheduler_worker_info w = {"w1",  ",x86_64,", ",", 2,     100, 0,
	                                  "6.1", "0.1",      50,  false, 7};
	struct scheduler_worker_info *ws = NULL;
	struct scheduler_worker_auth wa;
	struct scheduler_artifact art = {0}, *arts = NULL;
	struct scheduler_counts c;
	struct scheduler_token *ts = NULL;
	unsigned scopes = 0;
	int64_t tid = 0, got = 0, project = 0;
	size_t n = 0;

	assert_ok(st->ops->token_insert(st, "h1", API_SCOPE_READ, "ci", 1, 10, &tid, &err), &err);
	assert_ok(st->ops->token_lookup(st, "h1", &got, &scopes, &project, &err), &err);
	assert_int_equal(got, tid);
	assert_int_equal(scopes, API_SCOPE_READ);
	assert_ok(st->ops->token_revoke(st, tid, &err), &err);
	assert_int_equal(st->ops->token_lookup(st, "h1", &got, &scopes, &project, &err),
	                 KILN_EAUTH);
	kiln_err_clear(&err);
	assert_ok(st->ops->tokens_list(st, &a, &ts, &n, &err), &err);
	assert_int_equal(n, 1);
	assert_true(ts[0].revoked);
	assert_ok(st->ops->worker_seen(st, &w, true, &err), &err);
	w.last_seen_ms = 5000;
	assert_ok(st->ops->worker_seen(st, &w, false, &err), &err);
	assert_ok(st->ops->workers_list(st, &a, &ws, &n, &err), &err);
	assert_int_equal(n, 1);
	assert_int_equal(ws[0].last_seen_ms, 5000);
	assert_int_equal(ws[0].slots, 2);
	assert_ok(st->ops->worker_auth(st, "w1", &wa, &err), &err);
	assert_int_equal(wa.token_id, 7);
	assert_int_equal(wa.last_seen_ms, 5000);
	assert_string_equal(wa.hash, "");
	assert_ok(st->ops->worker_credential_set(st, "w1", "c0ffee", &err), &err);
	assert_ok(st->ops->worker_auth(st, "w1", &wa, &err), &err);
	assert_string_equal(wa.hash, "c0ffee");
	assert_int_equal(st->ops->worker_auth(st, "w9", &wa, &err), KILN_ENOTFOUND);
	kiln_err_clear(&err);
	art.job_id = insert(st, "x", "", 0, NULL);
	art.attempt = 1, art.name = "a.rpm", art.size = 3, art.kind = "binary", art.arch = "x";
	memcpy(art.sha256, "aa", 3);
	assert_ok(st->ops->artifact_put(st, &art, NULL, &err), &err);
	memcpy(art.signed_sha256, "bb", 3);
	assert_ok(st->ops->artifact_put(st, &art, NULL, &err), &err);
	assert_ok(st->ops->artifacts_list(st, art.job_id, 1, &a, &arts, &n, &err), &err);
	assert_int_equal(n, 1);
	assert_string_equal(arts[0].signed_sha256, "bb");
	assert_ok(st->ops->counts(st, &a, &c, &err), &err);
	assert_int_equal(c.by_state[SCHED_QUEUED], 1);
	assert_int_equal(c.nqueued, 1);
	assert_string_equal(c.queued_arch[0], "x");
	kiln_arena_release(&a);
	scheduler_store_close(st);
}

KILN_TEST(store_sqlite_refuses_a_newer_schema)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct scheduler_store *st = NULL;
	sqlite3 *db = NULL;
	char path[512];

	snprintf(path, sizeof(path), "%s/new.db", kiln_test_tmpdir());
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, "PRAGMA user_version = 99", NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
	assert_int_equal(scheduler_store_open_sqlite(path, &st, &err), KILN_EUNSUPP);
	assert_non_null(strstr(err.msg, "schema version 99"));
	/* an old one is migrated: version 0 (empty) to the current one */
	snprintf(path, sizeof(path), "%s/old.db", kiln_test_tmpdir());
	kiln_err_clear(&err);
	assert_ok(scheduler_store_open_sqlite(path, &st, &err), &err);
	scheduler_store_close(st);
	assert_true(scheduler_store_sqlite_version() >= 1);
}

/* A rerun avoids the original's worker while another live worker could take it. */
STORE_TEST(store_rerun_anti_affinity_and_verdicts)
{
	struct scheduler_store *st = open_store("rr.db");
	struct kiln_arena a = KILN_ARENA_INIT(KILN_MIB);
	struct kiln_err err = KILN_ERR_INIT;
	struct scheduler_worker_info w2 = {0};
	struct scheduler_rerun_artifact ra = {0};
	struct scheduler_rerun_artifact *av = NULL;
	struct scheduler_rerun *rv = NULL;
	struct scheduler_job j = {0}, got;
	struct scheduler_counts c;
	const char *rollup = NULL;
	int64_t orig = insert(st, "", "", 0, NULL), rr = 0;
	size_t n = 0;

	j.spec_name = "x.spec", j.request = "{}", j.manifest = "{}", j.sign_key = "";
	memcpy(j.content_key, "k", 2);
	j.token_id = 1, j.created_ms = 1000, j.max_attempts = 2;
	j.rerun_of = orig, j.rerun_n = 1, j.avoid_worker = "w1", j.variations = "time umask";
	assert_ok(st->ops->job_insert(st, &j, &rr, &err), &err);
	assert_ok(st->ops->job_get(st, orig, &a, &got, &err), &err);
	assert_string_equal(got.repro_verdict, "pending");
	/* the original first (best and older), then the rerun: w2 is alive, so w1 skips it */
	assert_ok(grant(st, "w1", ",x86_64,", ",", 2000, L1, &a, &got), NULL);
	assert_int_equal(got.id, orig);
	w2.name = "w2", w2.arches = ",x86_64,", w2.tags = ",", w2.slots = 1;
	w2.kernel = "", w2.version = "", w2.last_seen_ms = 1900;
	assert_ok(st->ops->worker_seen(st, &w2, true, &err), &err);
	assert_int_equal(grant(st, "w1", ",x86_64,", ",", 2000, L2, &a, &got), KILN_ENOTFOUND);
	/* w2 gone quiet for more than two TTLs: w1 may run it after all */
	assert_ok(grant(st, "w1", ",x86_64,", ",", 9000, L2, &a, &got), NULL);
	assert_int_equal(got.id, rr);
	assert_int_equal(got.rerun_of, orig);
	assert_string_equal(got.avoid_worker, "w1");
	assert_ok(st->ops->reruns_list(st, orig, &a, &rv, &n, &err), &err);
	assert_int_equal(n, 1);
	assert_int_equal(rv[0].rerun_job, rr);
	assert_string_equal(rv[0].verdict, "pending");
	assert_string_equal(rv[0].original_worker, "w1");
	assert_string_equal(rv[0].variations, "time umask");
	ra.name = "a.rpm", ra.original_sha256 = "aa", ra.rerun_sha256 = "bb";
	ra.verdict = "differs", ra.diff = "{}", ra.text = "t", ra.diffoscope_state = "pending";
	assert_ok(st->ops->rerun_record(st, orig, 1, "differs", &ra, 1, 5, scheduler_verdict_rollup,
	                                &rollup, &err),
	          &err);
	assert_string_equal(rollup, "differs");
	assert_ok(st->ops->job_get(st, orig, &a, &got, &err), &err);
	assert_string_equal(got.repro_verdict, "differs");
	assert_ok(st->ops->diffoscope_next(st, &a, &ra, &err), &err);
	assert_string_equal(ra.name, "a.rpm");
	assert_null(ra.diffoscope);
	assert_ok(st->ops->diffoscope_set(st, orig, 1, "a.rpm", "done", "out", &err), &err);
	assert_int_equal(st->ops->diffoscope_next(st, &a, &ra, &err), KILN_ENOTFOUND);
	assert_ok(st->ops->rerun_artifacts(st, orig, &a, &av, &n, &err), &err);
	assert_int_equal(n, 1);
	assert_string_equal(av[0].diffoscope, "out");
	assert_string_equal(av[0].diff, "{}");
	assert_ok(st->ops->counts(st, &a, &c, &err), &err);
	assert_int_equal(c.verdicts[2], 1); /* differs */
	kiln_arena_release(&a);
	scheduler_store_close(st);
}

/* Work left when the scheduler stopped between a job's end and its reproducibility step. */
STORE_TEST(store_repro_undone_after_a_stop)
{
	struct scheduler_store *st = open_store("undone.db");
	struct kiln_arena a = KILN_ARENA_INIT(KILN_MIB);
	struct kiln_err err = KILN_ERR_INIT;
	struct scheduler_finish f = {.outcome = SCHED_OUT_SUCCEEDED,
	                             .failure_class = "",
	                             .message = "",
	                             .now_ms = 3000,
	                             .decide = scheduler_lease_decide};
	struct scheduler_job j = {0}, got;
	int64_t id = 0, rr = 0, *v = NULL;
	size_t n = 0;

	j.spec_name = "x.spec", j.request = "{}", j.manifest = "{}", j.sign_key = "";
	memcpy(j.content_key, "k", 2);
	j.token_id = 1, j.created_ms = 1000, j.max_attempts = 2, j.reruns = 1;
	assert_ok(st->ops->job_insert(st, &j, &id, &err), &err);
	assert_ok(grant(st, "w1", ",x,", ",", 2000, L1, &a, &got), NULL);
	assert_ok(st->ops->lease_finish(st, L1, 1, &f, &err), &err);
	/* succeeded: its rerun is not made and it has no provenance */
	assert_ok(st->ops->repro_undone(st, 0, &a, &v, &n, &err), &err);
	assert_int_equal(n, 1);
	assert_int_equal(v[0], id);
	/* too old to look at */
	assert_ok(st->ops->repro_undone(st, 3001, &a, &v, &n, &err), &err);
	assert_int_equal(n, 0);
	j.reruns = 0, j.rerun_of = id, j.rerun_n = 1, j.avoid_worker = "w1";
	assert_ok(st->ops->job_insert(st, &j, &rr, &err), &err);
	assert_ok(st->ops->attestation_put(st, id, "build", "{}", 3000, &err), &err);
	assert_ok(st->ops->repro_undone(st, 0, &a, &v, &n, &err), &err);
	assert_int_equal(n, 0);
	/* the rerun ends (on w1: no other worker) and is not compared yet */
	assert_ok(grant(st, "w1", ",x,", ",", 4000, L2, &a, &got), NULL);
	assert_int_equal(got.id, rr);
	f.now_ms = 5000;
	assert_ok(st->ops->lease_finish(st, L2, 1, &f, &err), &err);
	assert_ok(st->ops->repro_undone(st, 0, &a, &v, &n, &err), &err);
	assert_int_equal(n, 1);
	assert_int_equal(v[0], rr);
	kiln_arena_release(&a);
	scheduler_store_close(st);
}

STORE_TEST(store_repository_packages_and_decisions)
{
	struct scheduler_store *st = open_store("repo.db");
	struct kiln_arena a = KILN_ARENA_INIT(KILN_MIB);
	struct kiln_err err = KILN_ERR_INIT;
	struct scheduler_repo_pkg p = {0}, *v = NULL;
	struct scheduler_repo_state *sv = NULL;
	int64_t *ids = NULL;
	const char *dstate = NULL, *msg = NULL;
	size_t n = 0;

	p.repo = "main", p.file = "a-1-1.noarch.rpm", p.name = "a", p.version = "1";
	p.release = "1", p.arch = "noarch", p.epoch = -1, p.size = 10, p.job_id = 7;
	p.buildtime = 1700000000, p.published_ms = 5;
	memset(p.sha256, 'e', 64);
	assert_ok(st->ops->repo_pkg_put(st, &p, &err), &err);
	p.file = "a-2-1.noarch.rpm", p.version = "2", p.epoch = 3;
	assert_ok(st->ops->repo_pkg_put(st, &p, &err), &err);
	p.repo = "main-v6";
	assert_ok(st->ops->repo_pkg_put(st, &p, &err), &err);
	assert_ok(st->ops->repo_pkgs(st, "main", &a, &v, &n, &err), &err);
	assert_int_equal(n, 2);
	assert_string_equal(v[0].file, "a-1-1.noarch.rpm");
	assert_int_equal(v[0].epoch, -1);
	assert_int_equal(v[1].epoch, 3);
	assert_int_equal(v[1].job_id, 7);
	assert_int_equal(strlen(v[1].sha256), 64);
	assert_ok(st->ops->repo_pkgs(st, NULL, &a, &v, &n, &err), &err);
	assert_int_equal(n, 3);
	assert_ok(st->ops->repo_pkg_delete(st, "main", "a-1-1.noarch.rpm", &err), &err);
	assert_int_equal(st->ops->repo_pkg_delete(st, "main", "a-1-1.noarch.rpm", &err),
	                 KILN_ENOTFOUND);
	kiln_err_clear(&err);
	assert_ok(st->ops->repo_pkgs(st, "main", &a, &v, &n, &err), &err);
	assert_int_equal(n, 1);
	assert_ok(st->ops->repo_state_put(st, "main", 1700000000, 99, &err), &err);
	assert_ok(st->ops->repo_state_put(st, "main", 1700000001, 100, &err), &err);
	assert_ok(st->ops->repo_states(st, &a, &sv, &n, &err), &err);
	assert_int_equal(n, 1);
	assert_int_equal(sv[0].revision, 1700000001);
	/* no succeeded job names a repository: nothing to decide */
	assert_ok(st->ops->repo_unpublished(st, 0, &a, &ids, &n, &err), &err);
	assert_int_equal(n, 0);
	assert_int_equal(st->ops->repo_publish_get(st, 7, &a, &dstate, &msg, &err), KILN_ENOTFOUND);
	kiln_err_clear(&err);
	assert_ok(st->ops->repo_publish_mark(st, 7, "main", "skipped", "verdict: differs", 1, &err),
	          &err);
	assert_ok(st->ops->repo_publish_get(st, 7, &a, &dstate, &msg, &err), &err);
	assert_string_equal(dstate, "skipped");
	assert_string_equal(msg, "verdict: differs");
	kiln_arena_release(&a);
	scheduler_store_close(st);
}

/* The placement answer (scheduler_worker_matches) and the grant apply one rule: a tag of
 * 128 characters and an arch of 100 match in both (the grant once cut tags at 127
 * characters and arches at 80 bytes), and a worker that lacks the tag is refused by both. */
STORE_TEST(store_grant_and_placement_agree_on_long_tags_and_arches)
{
	struct scheduler_store *st = open_store("long.db");
	struct kiln_arena a = KILN_ARENA_INIT(KILN_MIB);
	char tag[129], arch[101], jtags[140], wtags[140], warches[120];
	struct scheduler_job j = {0}, got;
	const char *why;
	int64_t id;

	memset(tag, 't', 128), tag[128] = 0;
	memset(arch, 'a', 100), arch[100] = 0;
	snprintf(jtags, sizeof(jtags), ",%s,", tag);
	snprintf(wtags, sizeof(wtags), ",%s,", tag);
	snprintf(warches, sizeof(warches), ",%s,noarch,", arch);
	id = insert(st, arch, jtags, 0, NULL);
	j.arch = arch, j.tags = jtags;

	assert_false(scheduler_worker_matches(&j, warches, ",other,", &a, &why));
	assert_int_equal(grant(st, "w", warches, ",other,", 2000, L1, &a, &got), KILN_ENOTFOUND);
	assert_true(scheduler_worker_matches(&j, warches, wtags, &a, &why));
	assert_ok(grant(st, "w", warches, wtags, 2000, L1, &a, &got), NULL);
	assert_int_equal(got.id, id);
	kiln_arena_release(&a);
	scheduler_store_close(st);
}

/* GET /api/v1/jobs/{id} keeps its body by job and store version (jobcache.c): a body kept
 * before a write must not be served after it. The last check of the pair below is what
 * scheduler_h_job does; reads must leave the version (and so the cache) alone. */
struct bump_check {
	struct scheduler_store *st;
	struct scheduler_jobcache *c;
	int64_t id;
};

static void cache_now(struct bump_check *b)
{
	uint64_t v = b->st->ops->version(b->st);
	struct kiln_buf body = KILN_BUF_INIT(KILN_MIB);
	struct scheduler_job j = {.id = b->id}, who = {0};

	scheduler_jobcache_put(b->c, &j, v, "{\"old\":1}", 9);
	assert_true(scheduler_jobcache_get(b->c, b->id, b->st->ops->version(b->st), &who, &body));
	assert_int_equal(who.id, b->id);
	kiln_buf_release(&body);
}

static bool cache_hits(struct bump_check *b)
{
	struct kiln_buf body = KILN_BUF_INIT(KILN_MIB);
	struct scheduler_job who = {0};
	bool hit = scheduler_jobcache_get(b->c, b->id, b->st->ops->version(b->st), &who, &body);

	kiln_buf_release(&body);
	return hit;
}

/* rc of a write: OK, and the body cached before it is stale. */
#define WROTE(b, call)                                                                             \
	do {                                                                                       \
		cache_now(b);                                                                      \
		assert_ok((call), &err);                                                           \
		assert_false(cache_hits(b));                                                       \
	} while (0)
#define READ(b, call)                                                                              \
	do {                                                                                       \
		cache_now(b);                                                                      \
		assert_ok((call), &err);                                                           \
		assert_true(cache_hits(b));                                                        \
	} while (0)

STORE_TEST(store_every_write_invalidates_cached_job_bodies)
{
	struct scheduler_store *st = open_store("bump.db");
	struct kiln_arena a = KILN_ARENA_INIT(KILN_MIB);
	struct kiln_err err = KILN_ERR_INIT;
	struct bump_check b = {st, scheduler_jobcache_new(), 0};
	struct scheduler_repo_pkg p = {.repo = "main", .file = "a-1-1.noarch.rpm", .name = "a"};
	struct scheduler_artifact art = {
	    .job_id = 1, .attempt = 1, .name = "a.rpm", .kind = "binary"};
	struct scheduler_worker_info w = {.name = "w1", .arches = ",x,", .tags = ","};
	struct scheduler_finish f = {.outcome = SCHED_OUT_SUCCEEDED,
	                             .failure_class = "",
	                             .message = "",
	                             .now_ms = 10,
	                             .decide = scheduler_lease_decide};
	struct scheduler_job j;
	const char *dstate, *msg;
	int64_t tid;

	assert_non_null(b.c);
	b.id = insert(st, "", "", 0, NULL);
	memcpy(art.sha256, "ab", 3);
	memcpy(p.sha256, "ab", 3);
	READ(&b, st->ops->job_get(st, b.id, &a, &j, &err));
	/* the four publishing writes once forgot to bump the version (7ac94ba) */
	WROTE(&b, st->ops->repo_pkg_put(st, &p, &err));
	WROTE(&b, st->ops->repo_pkg_delete(st, "main", p.file, &err));
	WROTE(&b, st->ops->repo_publish_mark(st, b.id, "main", "published", "", 5, &err));
	WROTE(&b, st->ops->repo_state_put(st, "main", 1, 5, &err));
	READ(&b, st->ops->repo_publish_get(st, b.id, &a, &dstate, &msg, &err));
	WROTE(&b, st->ops->artifact_put(st, &art, NULL, &err));
	WROTE(&b, st->ops->worker_seen(st, &w, true, &err));
	WROTE(&b, st->ops->token_insert(st, "h", API_SCOPE_READ, "t", 1, 1, &tid, &err));
	WROTE(&b, st->ops->token_revoke(st, tid, &err));
	WROTE(&b, st->ops->reruns_add(st, b.id, 1, "", &err));
	WROTE(&b, st->ops->repro_verdict_set(st, b.id, "pending", &err));
	WROTE(&b, st->ops->attestation_put(st, b.id, "build", "{}", 5, &err));
	WROTE(&b, st->ops->job_inputs_set(st, b.id, "{}", "{}", "k", &err));
	WROTE(&b, st->ops->rebuild_put(st, b.id, "a.src.rpm", "ab", "[]", 5, &err));
	WROTE(&b, st->ops->rebuild_record(st, b.id, "reproducible", "[]", "", &err));
	WROTE(&b, st->ops->diffoscope_set(st, b.id, 1, "a.rpm", "done", NULL, &err));
	WROTE(&b, st->ops->job_cancel(st, b.id, 6, true, &err));
	WROTE(&b, st->ops->job_retry(st, b.id, 7, 1, &err));
	WROTE(&b, grant(st, "w1", ",x,", ",", 8, L1, &a, &j));
	WROTE(&b, st->ops->lease_touch(st, L1, j.generation, 9, 1000, &a, &j, &err));
	WROTE(&b, st->ops->lease_finish(st, L1, j.generation, &f, &err));
	WROTE(&b, st->ops->job_insert(st, &j, &tid, &err));
	scheduler_jobcache_free(b.c);
	kiln_arena_release(&a);
	scheduler_store_close(st);
}

/* The reads whose columns come from the store's tables, each once (the lease reads are
 * above, through scheduler_lease_grant). */
STORE_TEST(store_reads_fill_every_member)
{
	struct scheduler_store *st = open_store("reads.db");
	struct kiln_arena a = KILN_ARENA_INIT(KILN_MIB);
	struct kiln_err err = KILN_ERR_INIT;
	struct scheduler_artifact art = {.attempt = 1, .name = "a.rpm", .kind = "binary"};
	struct scheduler_job *v = NULL, j;
	struct scheduler_rebuild rb;
	const char *env = NULL;
	int64_t first = insert(st, "", "", 0, NULL), second = insert(st, "", "", 5, NULL);
	int64_t third = insert(st, "", "", 5, NULL), ahead = -1, owner = 0;
	size_t n = 0;

	assert_ok(st->ops->ping(st, &err), &err);
	/* newest first, a page of two, then the rest after the cursor */
	assert_ok(st->ops->job_list(st, 0, -1, "", 0, 2, &a, &v, &n, &err), &err);
	assert_int_equal(n, 2);
	assert_int_equal(v[0].id, third);
	assert_string_equal(v[0].spec_name, "x.spec");
	assert_string_equal(v[0].content_key, "k");
	assert_int_equal(v[0].priority, 5);
	assert_int_equal(v[0].max_attempts, 2);
	assert_ok(st->ops->job_list(st, 0, -1, "X.SP", v[1].id, 10, &a, &v, &n, &err), &err);
	assert_int_equal(n, 1);
	assert_int_equal(v[0].id, first);
	assert_ok(st->ops->job_list(st, 0, SCHED_FAILED, "", 0, 10, &a, &v, &n, &err), &err);
	assert_int_equal(n, 0);
	assert_ok(st->ops->job_list(st, 0, SCHED_QUEUED, "nomatch", 0, 10, &a, &v, &n, &err), &err);
	assert_int_equal(n, 0);
	/* by priority, then age */
	assert_ok(st->ops->job_get(st, first, &a, &j, &err), &err);
	assert_ok(st->ops->queue_position(st, &j, &ahead, &err), &err);
	assert_int_equal(ahead, 2);
	assert_ok(st->ops->job_get(st, third, &a, &j, &err), &err);
	assert_ok(st->ops->queue_position(st, &j, &ahead, &err), &err);
	assert_int_equal(ahead, 1);
	/* a package: owned by the submitting token, found by either digest */
	art.job_id = second;
	memcpy(art.sha256, "aa", 3);
	memcpy(art.signed_sha256, "bb", 3);
	assert_ok(st->ops->artifact_put(st, &art, NULL, &err), &err);
	assert_ok(st->ops->artifact_owned(st, "bb", 1, &err), &err);
	assert_int_equal(st->ops->artifact_owned(st, "bb", 2, &err), KILN_ENOTFOUND);
	kiln_err_clear(&err);
	assert_ok(st->ops->artifact_job(st, "aa", &owner, &err), &err);
	assert_int_equal(owner, second);
	assert_int_equal(st->ops->artifact_job(st, "cc", &owner, &err), KILN_ENOTFOUND);
	kiln_err_clear(&err);
	/* an attestation by a package's digest */
	assert_ok(st->ops->attestation_put(st, second, "build", "{\"e\":1}", 5, &err), &err);
	assert_ok(st->ops->attestation_find(st, "bb", "build", &a, &env, &err), &err);
	assert_string_equal(env, "{\"e\":1}");
	assert_int_equal(st->ops->attestation_find(st, "bb", "rerun", &a, &env, &err),
	                 KILN_ENOTFOUND);
	assert_non_null(strstr(err.msg, "no rerun attestation"));
	kiln_err_clear(&err);
	/* a rebuild, before and after its comparison */
	assert_ok(st->ops->rebuild_put(st, first, "a.src.rpm", "cc", "[]", 7, &err), &err);
	assert_ok(st->ops->rebuild_get(st, first, &a, &rb, &err), &err);
	assert_int_equal(rb.job_id, first);
	assert_string_equal(rb.srpm_name, "a.src.rpm");
	assert_string_equal(rb.srpm_sha256, "cc");
	assert_string_equal(rb.verdict, "pending");
	assert_string_equal(rb.report, "");
	assert_int_equal(rb.created_ms, 7);
	assert_ok(st->ops->rebuild_record(st, first, "differs", "[1]", "t", &err), &err);
	assert_ok(st->ops->rebuild_get(st, first, &a, &rb, &err), &err);
	assert_string_equal(rb.verdict, "differs");
	assert_string_equal(rb.report, "[1]");
	assert_string_equal(rb.text, "t");
	assert_int_equal(st->ops->rebuild_get(st, second, &a, &rb, &err), KILN_ENOTFOUND);
	kiln_arena_release(&a);
	scheduler_store_close(st);
}

/* Webhook deliveries keep their first answer and its status; hook jobs are found by id and
 * by ref, their first status queued with them. */
STORE_TEST(store_hook_deliveries_and_jobs)
{
	struct scheduler_store *st = open_store("hooks.db");
	struct kiln_arena a = KILN_ARENA_INIT(KILN_MIB);
	struct kiln_err err = KILN_ERR_INIT;
	struct scheduler_hook_delivery d = {"gh", "d-1", "push", "o/p", 5, "{\"jobs\":[1]}", 200};
	struct scheduler_hook_delivery got = {0}, *list = NULL;
	struct scheduler_hook_job h = {1, "gh", "o/p", "pull/7", "file:///r", "abc", "kiln/build"};
	struct scheduler_hook_job out = {0};
	struct scheduler_outbox_item it = {.kind = "status",
	                                   .target = "gh:o/p@abc",
	                                   .dedup = "status:1:queued",
	                                   .job_id = 1,
	                                   .body = "{}",
	                                   .created_ms = 7};
	struct scheduler_outbox_item *pend = NULL;
	size_t n = 0;

	assert_int_equal(st->ops->hook_delivery_get(st, "gh", "d-1", &a, &got, &err),
	                 KILN_ENOTFOUND);
	assert_ok(st->ops->hook_delivery_put(st, &d, &err), &err);
	d.result = "{\"ignored\":\"x\"}";
	assert_ok(st->ops->hook_delivery_put(st, &d, &err), &err);
	assert_ok(st->ops->hook_delivery_get(st, "gh", "d-1", &a, &got, &err), &err);
	assert_string_equal(got.result, "{\"jobs\":[1]}");
	assert_int_equal(got.status, 200);
	assert_string_equal(got.event, "push");
	assert_int_equal(st->ops->hook_delivery_get(st, "lab", "d-1", &a, &got, &err),
	                 KILN_ENOTFOUND);
	d = (struct scheduler_hook_delivery){"lab", "d-2", "", "", 9, "{\"error\":{}}", 400};
	assert_ok(st->ops->hook_delivery_put(st, &d, &err), &err);
	assert_ok(st->ops->hook_deliveries(st, "", 10, &a, &list, &n, &err), &err);
	assert_int_equal(n, 2);
	assert_string_equal(list[0].delivery, "d-2"); /* newest first */
	assert_int_equal(list[0].status, 400);
	assert_ok(st->ops->hook_deliveries(st, "gh", 10, &a, &list, &n, &err), &err);
	assert_int_equal(n, 1);
	assert_string_equal(list[0].delivery, "d-1");

	assert_ok(st->ops->hook_job_put(st, &h, &it, &err), &err);
	h.job_id = 2, h.sha = "def";
	assert_ok(st->ops->hook_job_put(st, &h, NULL, &err), &err);
	assert_ok(st->ops->hook_job_get(st, 1, &a, &out, &err), &err);
	assert_string_equal(out.sha, "abc");
	assert_string_equal(out.context, "kiln/build");
	assert_ok(st->ops->hook_job_last(st, "gh", "o/p", "pull/7", &a, &out, &err), &err);
	assert_int_equal(out.job_id, 2);
	assert_string_equal(out.sha, "def");
	assert_string_equal(out.url, "file:///r");
	assert_int_equal(st->ops->hook_job_last(st, "gh", "o/p", "pull/8", &a, &out, &err),
	                 KILN_ENOTFOUND);
	assert_int_equal(st->ops->hook_job_get(st, 3, &a, &out, &err), KILN_ENOTFOUND);
	assert_ok(st->ops->outbox_pending(st, &a, &pend, &n, &err), &err);
	assert_int_equal(n, 1);
	assert_string_equal(pend[0].dedup, "status:1:queued");
	kiln_arena_release(&a);
	scheduler_store_close(st);
}

/* The outbox: deduplicated puts, pending in id order, attempts recorded with the item's new
 * state, lists by target, counts, and the ends no item was queued for. */
STORE_TEST(store_outbox)
{
	struct scheduler_store *st = open_store("outbox.db");
	struct kiln_arena a = KILN_ARENA_INIT(KILN_MIB);
	struct kiln_err err = KILN_ERR_INIT;
	struct scheduler_outbox_item v[3] = {
	    {.kind = "webhook",
	     .target = "chat",
	     .dedup = "webhook:chat:1:end:1",
	     .job_id = 1,
	     .body = "{\"n\":1}",
	     .created_ms = 10},
	    {.kind = "webhook",
	     .target = "chat",
	     .dedup = "webhook:chat:2:end:0",
	     .job_id = 2,
	     .body = "{\"n\":2}",
	     .created_ms = 11},
	    {.kind = "webhook",
	     .target = "ci",
	     .dedup = "webhook:ci:1:end:1",
	     .job_id = 1,
	     .body = "{\"n\":1}",
	     .created_ms = 12},
	};
	struct scheduler_outbox_attempt at = {0, 1, 20, 500, "down"};
	struct scheduler_outbox_item *out = NULL;
	struct scheduler_outbox_attempt *atts = NULL;
	struct scheduler_outbox_count *c = NULL;
	struct scheduler_job j = {0};
	int64_t *ids = NULL, id1, id2;
	size_t n = 0;

	assert_ok(st->ops->outbox_put(st, v, 3, &err), &err);
	assert_ok(st->ops->outbox_put(st, v, 2, &err), &err); /* again: nothing new */
	/* pending: the oldest of each target */
	assert_ok(st->ops->outbox_pending(st, &a, &out, &n, &err), &err);
	assert_int_equal(n, 2);
	assert_true(out[0].id < out[1].id);
	assert_string_equal(out[0].target, "chat");
	assert_string_equal(out[0].state, "pending");
	assert_string_equal(out[0].body, "{\"n\":1}");
	assert_string_equal(out[1].target, "ci");
	id1 = out[0].id;
	assert_ok(st->ops->outbox_list(st, "webhook", "chat", 0, 10, &a, &out, &n, &err), &err);
	assert_int_equal(n, 2);
	assert_string_equal(out[0].body, "{\"n\":2}");
	id2 = out[0].id;

	at.item_id = id1;
	assert_ok(st->ops->outbox_attempt(st, &at, "pending", 500, &err), &err);
	at = (struct scheduler_outbox_attempt){id1, 2, 30, 200, "ok"};
	assert_ok(st->ops->outbox_attempt(st, &at, "delivered", 0, &err), &err);
	assert_ok(st->ops->outbox_pending(st, &a, &out, &n, &err), &err);
	assert_int_equal(n, 2);
	assert_int_equal(out[0].id, id2); /* chat's next, now its oldest pending */
	at = (struct scheduler_outbox_attempt){id2, 1, 40, 410, "gone"};
	assert_ok(st->ops->outbox_attempt(st, &at, "failed", 0, &err), &err);
	assert_ok(st->ops->outbox_pending(st, &a, &out, &n, &err), &err);
	assert_int_equal(n, 1);
	assert_string_equal(out[0].target, "ci");

	assert_ok(st->ops->outbox_list(st, "webhook", "chat", 0, 10, &a, &out, &n, &err), &err);
	assert_int_equal(n, 2);
	assert_int_equal(out[0].id, id2); /* newest first */
	assert_string_equal(out[0].state, "failed");
	assert_int_equal(out[0].last_status, 410);
	assert_string_equal(out[1].state, "delivered");
	assert_int_equal(out[1].attempts, 2);
	assert_int_equal(out[1].updated_ms, 30);
	assert_string_equal(out[1].last_answer, "ok");
	assert_ok(st->ops->outbox_list(st, "webhook", "chat", id2, 10, &a, &out, &n, &err), &err);
	assert_int_equal(n, 1);
	assert_int_equal(out[0].id, id1);
	assert_ok(st->ops->outbox_list(st, "status", "chat", 0, 10, &a, &out, &n, &err), &err);
	assert_int_equal(n, 0);
	assert_ok(st->ops->outbox_attempts(st, id1, &a, &atts, &n, &err), &err);
	assert_int_equal(n, 2);
	assert_int_equal(atts[0].status, 500);
	assert_string_equal(atts[0].answer, "down");
	assert_int_equal(atts[1].at_ms, 30);
	assert_ok(st->ops->outbox_counts(st, "webhook", &a, &c, &n, &err), &err);
	assert_int_equal(n, 3);
	assert_string_equal(c[0].target, "chat");
	assert_string_equal(c[0].state, "delivered");
	assert_int_equal(c[0].n, 1);
	assert_string_equal(c[2].target, "ci");

	/* jobs 1 and 2 end cancelled with no attempt: job 2's end (ID:end:0) has an item,
	 * job 1's has not (the item says attempt 1) */
	assert_int_equal(insert(st, "", "", 0, NULL), 1);
	assert_int_equal(insert(st, "", "", 0, NULL), 2);
	assert_ok(st->ops->job_cancel(st, 1, 50, true, &err), &err);
	assert_ok(st->ops->job_cancel(st, 2, 50, true, &err), &err);
	assert_ok(st->ops->job_get(st, 1, &a, &j, &err), &err);
	assert_int_equal(j.attempts, 0);
	assert_ok(st->ops->outbox_ends_missing(st, 0, "webhook:chat:", false, &a, &ids, &n, &err),
	          &err);
	assert_int_equal(n, 1);
	assert_int_equal(ids[0], 1);
	assert_ok(st->ops->outbox_ends_missing(st, 0, "webhook:ci:", true, &a, &ids, &n, &err),
	          &err);
	assert_int_equal(n, 0); /* no hook jobs */

	/* pruned: what was delivered or failed before 35, never what is pending */
	assert_ok(st->ops->outbox_prune(st, 35, &err), &err);
	assert_ok(st->ops->outbox_list(st, "webhook", "chat", 0, 10, &a, &out, &n, &err), &err);
	assert_int_equal(n, 1);
	assert_int_equal(out[0].id, id2); /* failed at 40 */
	assert_ok(st->ops->outbox_attempts(st, id1, &a, &atts, &n, &err), &err);
	assert_int_equal(n, 0);
	assert_ok(st->ops->outbox_prune(st, 1000, &err), &err);
	assert_ok(st->ops->outbox_pending(st, &a, &out, &n, &err), &err);
	assert_int_equal(n, 1);
	assert_string_equal(out[0].target, "ci");
	kiln_arena_release(&a);
	scheduler_store_close(st);
}

/* ---------------------------------------------------------------------------------------- */
/* The PostgreSQL store's own */

/* A bad URL is refused naming what is wrong, never echoing a password; an unreachable
 * server is an error, not a hang. Needs libpq, not a server. */
KILN_TEST(store_pg_refuses_bad_urls)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct scheduler_store *st = NULL;

	assert_int_equal(scheduler_store_open_pg("mysql://h/db", &st, &err), KILN_EINVAL);
	assert_non_null(strstr(err.msg, "not a postgresql:// URL"));
	kiln_err_clear(&err);
	assert_int_equal(scheduler_store_open_pg("postgresql://u:s3cret@h/db", &st, &err),
	                 KILN_EINVAL);
	assert_non_null(strstr(err.msg, "password file"));
	assert_null(strstr(err.msg, "s3cret"));
	kiln_err_clear(&err);
	assert_int_equal(scheduler_store_open_pg("postgresql://h/db?nosuchparam=1", &st, &err),
	                 KILN_EINVAL);
	assert_non_null(strstr(err.msg, "malformed PostgreSQL URL"));
	assert_non_null(strstr(err.msg, "nosuchparam"));
	kiln_err_clear(&err);
	assert_int_equal(scheduler_store_open_pg(
	                     "postgresql://kiln@/kiln?host=/nonexistent-kiln-dir", &st, &err),
	                 KILN_EIO);
	assert_non_null(strstr(err.msg, "cannot connect to the PostgreSQL server"));
	assert_null(st);
}

/* The client backends of the test's database now. */
static int pg_backends(PGconn *l)
{
	PGresult *r = PQexec(l, "SELECT count(*) FROM pg_stat_activity WHERE datname ="
	                        " current_database() AND backend_type = 'client backend'");
	int64_t n = -1;

	if (PQresultStatus(r) == PGRES_TUPLES_OK)
		assert_ok(util_parse_i64(PQgetvalue(r, 0, 0), strlen(PQgetvalue(r, 0, 0)), 10, 0,
		                         100000, &n, NULL),
		          NULL);
	PQclear(r);
	return (int)n;
}

/* [store] pool: the connections opened are that many pool ones beside the writer's and
 * the listener's, and a store of one grants and ends leases on it; 0 or too many: refused. */
KILN_TEST(store_pg_opens_the_pool_it_is_given)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct kiln_arena a = KILN_ARENA_INIT(KILN_MIB);
	struct scheduler_store *one = NULL, *three = NULL;
	struct scheduler_finish f = {.outcome = SCHED_OUT_SUCCEEDED,
	                             .failure_class = "",
	                             .message = "",
	                             .now_ms = 2500,
	                             .decide = scheduler_lease_decide};
	struct scheduler_job j;
	char url[512];
	PGconn *l;
	int n0, n1, n3;

	pg_database(url, sizeof(url));
	l = pg_connect(url);
	n0 = pg_backends(l);
	assert_ok(scheduler_store_open_pg_pool(url, 1, &one, &err), &err);
	n1 = pg_backends(l);
	assert_ok(scheduler_store_open_pg_pool(url, 3, &three, &err), &err);
	n3 = pg_backends(l);
	assert_true(n0 >= 1);
	assert_int_equal(n3 - n1, n1 - n0 + 2);
	insert(one, "", "", 0, NULL);
	assert_ok(grant(one, "w", ",x,", ",", 2000, L1, &a, &j), NULL);
	assert_ok(one->ops->lease_finish(one, L1, 1, &f, &err), &err);
	assert_int_equal(scheduler_store_open_pg_pool(url, 0, &three, &err), KILN_EINVAL);
	kiln_err_clear(&err);
	assert_int_equal(scheduler_store_open_pg_pool(url, SCHED_STORE_POOL_MAX + 1, &three, &err),
	                 KILN_EINVAL);
	kiln_err_clear(&err);
	scheduler_store_close(one);
	scheduler_store_close(three);
	PQfinish(l);
	kiln_arena_release(&a);
}

/* A database of a newer kiln is refused; reopening one of this kiln's migrates nothing. */
KILN_TEST(store_pg_refuses_a_newer_schema)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct scheduler_store *st = NULL;
	char url[512], out[256];
	const char *psql[] = {"psql", "-q", url, "-c", "UPDATE kiln_schema SET version = 99", NULL};

	pg_database(url, sizeof(url));
	assert_ok(scheduler_store_open_pg(url, &st, &err), &err);
	scheduler_store_close(st);
	assert_ok(scheduler_store_open_pg(url, &st, &err), &err);
	scheduler_store_close(st);
	assert_int_equal(kiln_test_run(psql, out, sizeof(out)), 0);
	assert_int_equal(scheduler_store_open_pg(url, &st, &err), KILN_EUNSUPP);
	assert_non_null(strstr(err.msg, "schema version 99"));
	assert_true(scheduler_store_pg_version() >= 1);
}

/* The server restarted under an open store: the statement that finds its connection
 * broken fails, the next one reconnects, and what was written before is there. */
KILN_TEST(store_pg_reconnects_after_a_server_restart)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct kiln_arena a = KILN_ARENA_INIT(KILN_MIB);
	struct scheduler_store *st = NULL;
	struct scheduler_job j;
	char url[512];
	int64_t id;
	int i;

	pg_database(url, sizeof(url));
	assert_ok(scheduler_store_open_pg(url, &st, &err), &err);
	id = insert(st, "", "", 0, NULL);
	assert_true(duty_held(st, "reaper"));
	assert_ok(kiln_test_pg_restart(), NULL);
	/* the writer's connection: the write that finds it broken fails (nothing is retried
	 * behind the caller's back), the next reaches the server (no job 1000 + id to cancel) */
	assert_int_equal(st->ops->job_cancel(st, 1000 + id, 2000, true, &err), KILN_EIO);
	kiln_err_clear(&err);
	assert_int_equal(st->ops->job_cancel(st, 1000 + id, 2000, true, &err), KILN_ECONFLICT);
	kiln_err_clear(&err);
	/* each reader's (taken round robin) likewise: once each has met the break, all read */
	for (i = 0; i < 8; i++)
		if (st->ops->job_get(st, id, &a, &j, &err))
			kiln_err_clear(&err);
	for (i = 0; i < 8; i++) {
		assert_ok(st->ops->job_get(st, id, &a, &j, &err), &err);
		assert_int_equal(j.state, SCHED_QUEUED);
	}
	assert_ok(st->ops->ping(st, &err), &err);
	/* the duties went with the old connection; the listening thread connects again and
	 * they are taken again (nobody else wants them) */
	for (i = 0; i < 1000; i++) {
		bool held = false;

		kiln_err_clear(&err);
		if (!st->ops->duty(st, "reaper", &held, &err) && held)
			break;
		(void)poll(NULL, 0, 10);
	}
	assert_true(i < 1000);
	kiln_arena_release(&a);
	scheduler_store_close(st);
}

#define RACE_JOBS 120
#define RACE_THREADS 4

struct racer {
	struct scheduler_store *st;
	int who;
	int64_t got[RACE_JOBS];
	size_t n;
	kiln_rc rc;
};

/* Grant until the queue is empty, keeping the ids granted. */
static void *race(void *arg)
{
	struct racer *r = arg;
	struct kiln_arena a = KILN_ARENA_INIT(KILN_MIB);
	struct kiln_err err = KILN_ERR_INIT;
	struct scheduler_job j;
	char lid[33], worker[16];

	snprintf(worker, sizeof(worker), "w%d", r->who);
	for (;;) {
		struct scheduler_lease_query q = {worker, ",x,", ",", 2000, 60000, lid};

		snprintf(lid, sizeof(lid), "%08x%024zx", (unsigned)r->who, r->n);
		r->rc = scheduler_lease_grant(r->st, &q, &a, &j, &err);
		if (r->rc || r->n == RACE_JOBS)
			break;
		r->got[r->n++] = j.id;
		kiln_arena_release(&a);
	}
	kiln_arena_release(&a);
	return NULL;
}

/* Two stores on one database (as two schedulers would be), two granting threads on each:
 * every job is granted once, and none is left. */
KILN_TEST(store_pg_grants_each_job_once_under_concurrency)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct scheduler_store *st[2] = {NULL, NULL};
	static struct racer r[RACE_THREADS];
	pthread_t t[RACE_THREADS];
	int times[RACE_JOBS + 1] = {0};
	char url[512];
	size_t total = 0, i, k;

	pg_database(url, sizeof(url));
	assert_ok(scheduler_store_open_pg(url, &st[0], &err), &err);
	assert_ok(scheduler_store_open_pg(url, &st[1], &err), &err);
	for (i = 0; i < RACE_JOBS; i++)
		assert_int_equal(insert(st[i % 2], "", "", (int64_t)(i % 3), NULL), (int64_t)i + 1);
	for (i = 0; i < RACE_THREADS; i++) {
		memset(&r[i], 0, sizeof(r[i]));
		r[i].st = st[i % 2], r[i].who = (int)i;
		assert_int_equal(pthread_create(&t[i], NULL, race, &r[i]), 0);
	}
	for (i = 0; i < RACE_THREADS; i++) {
		pthread_join(t[i], NULL);
		assert_int_equal(r[i].rc, KILN_ENOTFOUND);
		for (k = 0; k < r[i].n; k++)
			times[r[i].got[k]]++;
		total += r[i].n;
	}
	assert_int_equal(total, RACE_JOBS);
	for (i = 1; i <= RACE_JOBS; i++)
		assert_int_equal(times[i], 1);
	scheduler_store_close(st[0]);
	scheduler_store_close(st[1]);
}

/* ---------------------------------------------------------------------------------------- */
/* Several schedulers on one store (issue 25) */

/* One scheduler opens a sqlite3 file: it holds every duty, and watching or announcing is
 * no error (there is nobody to hear or tell). */
KILN_TEST(store_sqlite_holds_every_duty)
{
	struct scheduler_store *st = open_sqlite("duty.db");
	struct kiln_err err = KILN_ERR_INIT;
	bool held = false;

	assert_ok(st->ops->duty(st, "reaper", &held, &err), &err);
	assert_true(held);
	held = false;
	assert_ok(st->ops->duty(st, "publish:f40", &held, &err), &err);
	assert_true(held);
	assert_ok(st->ops->watch(st, NULL, NULL, &err), &err);
	assert_ok(st->ops->announce(st, "f40", &err), &err);
	scheduler_store_close(st);
}

static bool duty_held(struct scheduler_store *st, const char *name)
{
	struct kiln_err err = KILN_ERR_INIT;
	bool held = false;

	assert_ok(st->ops->duty(st, name, &held, &err), &err);
	return held;
}

/* Two stores on one database: each duty is held by one of them at a time (the first to
 * try), again and again; when its holder goes (a scheduler killed: its connection ends),
 * the other's next try takes it over. */
KILN_TEST(store_pg_duties_are_held_once_and_taken_over)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct scheduler_store *st[2] = {NULL, NULL};
	char url[512], name[64];
	int i;

	pg_database(url, sizeof(url));
	assert_ok(scheduler_store_open_pg(url, &st[0], &err), &err);
	assert_ok(scheduler_store_open_pg(url, &st[1], &err), &err);
	assert_true(duty_held(st[0], "reaper"));
	assert_false(duty_held(st[1], "reaper"));
	assert_true(duty_held(st[1], "publish:f40"));
	assert_false(duty_held(st[0], "publish:f40"));
	for (i = 0; i < 3; i++) {
		assert_true(duty_held(st[0], "reaper"));
		assert_false(duty_held(st[1], "reaper"));
	}
	/* many names, each one holder */
	for (i = 0; i < 40; i++) {
		snprintf(name, sizeof(name), "publish:r%d", i);
		assert_true(duty_held(st[i % 2], name));
		assert_false(duty_held(st[(i + 1) % 2], name));
	}
	{
		char longname[240];
		bool held = true;

		memset(longname, 'x', sizeof(longname) - 1);
		longname[sizeof(longname) - 1] = '\0';
		assert_int_equal(st[0]->ops->duty(st[0], longname, &held, &err), KILN_EINVAL);
		assert_false(held);
		kiln_err_clear(&err);
	}
	/* the server lets go of the locks as the closed connection's backend ends, a moment
	 * after the close */
	scheduler_store_close(st[0]);
	for (i = 0; i < 500 && !duty_held(st[1], "reaper"); i++)
		(void)poll(NULL, 0, 10);
	assert_true(duty_held(st[1], "reaper"));
	assert_true(duty_held(st[1], "publish:f40"));
	scheduler_store_close(st[1]);
}

struct heard_log {
	pthread_mutex_t lock;
	int writes, queued, ended, outbox;
	char repos[256];
};

static void heard_cb(void *arg, enum scheduler_heard what, const char *repo)
{
	struct heard_log *h = arg;

	pthread_mutex_lock(&h->lock);
	h->queued += what == SCHED_HEARD_QUEUED;
	h->ended += what == SCHED_HEARD_ENDED;
	h->outbox += what == SCHED_HEARD_OUTBOX;
	if (what == SCHED_HEARD_QUEUED || what == SCHED_HEARD_ENDED)
		h->writes++;
	else
		snprintf(h->repos + strlen(h->repos), sizeof(h->repos) - strlen(h->repos), "%s;",
		         repo);
	pthread_mutex_unlock(&h->lock);
}

/* Wait (at most 5 s) until h has heard a write (repo NULL) or repo. */
static bool heard_wait(struct heard_log *h, const char *repo)
{
	int i;

	for (i = 0; i < 500; i++) {
		bool got;

		pthread_mutex_lock(&h->lock);
		got = repo ? strstr(h->repos, repo) != NULL : h->writes > 0;
		pthread_mutex_unlock(&h->lock);
		if (got)
			return true;
		(void)poll(NULL, 0, 10);
	}
	return false;
}

/* A store hears the other store's writes (its version moves: cached job bodies are stale)
 * and announcements, not its own; after watch(NULL) nothing is called. */
KILN_TEST(store_pg_hears_the_other_stores_writes_and_announcements)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct scheduler_store *st[2] = {NULL, NULL};
	struct heard_log h = {.lock = PTHREAD_MUTEX_INITIALIZER};
	char url[512];
	uint64_t v;
	int i;

	pg_database(url, sizeof(url));
	assert_ok(scheduler_store_open_pg(url, &st[0], &err), &err);
	assert_ok(scheduler_store_open_pg(url, &st[1], &err), &err);
	assert_ok(st[0]->ops->watch(st[0], heard_cb, &h, &err), &err);
	/* its own write: the version moves, nothing is heard */
	v = st[0]->ops->version(st[0]);
	insert(st[0], "", "", 0, NULL);
	assert_true(st[0]->ops->version(st[0]) != v);
	(void)poll(NULL, 0, 600);
	assert_int_equal(h.writes, 0);
	/* the other's */
	v = st[0]->ops->version(st[0]);
	insert(st[1], "", "", 0, NULL);
	assert_true(heard_wait(&h, NULL));
	assert_true(st[0]->ops->version(st[0]) != v);
	assert_true(h.queued > 0); /* a job queued: the kept candidates are read again */
	/* a write that queues or ends nothing: caches are stale (the version moves), long
	 * polls are left alone */
	h.writes = 0;
	v = st[0]->ops->version(st[0]);
	{
		struct kiln_arena a = KILN_ARENA_INIT(KILN_MIB);
		struct scheduler_job j;

		/* a grant: a job leased, nothing queued or ended */
		assert_ok(grant(st[1], "w", ",x,", ",", 2000, L2, &a, &j), NULL);
		for (i = 0; i < 500 && st[0]->ops->version(st[0]) == v; i++)
			(void)poll(NULL, 0, 10);
		assert_true(st[0]->ops->version(st[0]) != v);
		(void)poll(NULL, 0, 300);
		assert_int_equal(h.writes, 0);
		kiln_arena_release(&a);
	}
	{
		/* a lease's end: heard as an end; a lease's end that requeues: as a job queued */
		struct kiln_arena a = KILN_ARENA_INIT(KILN_MIB);
		struct scheduler_finish f = {.outcome = SCHED_OUT_SUCCEEDED,
		                             .failure_class = "",
		                             .message = "",
		                             .now_ms = 2500,
		                             .decide = scheduler_lease_decide};
		struct scheduler_job j;

		pthread_mutex_lock(&h.lock);
		h.writes = h.queued = h.ended = 0;
		pthread_mutex_unlock(&h.lock);
		assert_ok(st[1]->ops->lease_finish(st[1], L2, 1, &f, &err), &err);
		assert_true(heard_wait(&h, NULL));
		pthread_mutex_lock(&h.lock);
		assert_int_equal(h.ended, 1);
		assert_int_equal(h.queued, 0);
		h.writes = h.ended = 0;
		pthread_mutex_unlock(&h.lock);
		assert_ok(grant(st[1], "w", ",x,", ",", 2600, L3, &a, &j), NULL);
		f.outcome = SCHED_OUT_INFRA;
		f.failure_class = "infra";
		f.now_ms = 2700;
		assert_ok(st[1]->ops->lease_finish(st[1], L3, j.generation, &f, &err), &err);
		assert_true(heard_wait(&h, NULL));
		pthread_mutex_lock(&h.lock);
		assert_int_equal(h.queued, 1);
		assert_int_equal(h.ended, 0);
		h.writes = h.queued = 0;
		pthread_mutex_unlock(&h.lock);
		kiln_arena_release(&a);
	}
	{
		/* a job queued, then cancelled: the end wakes long polls, queues nothing */
		int64_t id = insert(st[1], "", "", 0, NULL);

		assert_true(heard_wait(&h, NULL));
		(void)poll(NULL, 0, 300);
		pthread_mutex_lock(&h.lock);
		h.queued = h.writes = 0;
		pthread_mutex_unlock(&h.lock);
		assert_ok(st[1]->ops->job_cancel(st[1], id, 3000, true, &err), &err);
		assert_true(heard_wait(&h, NULL));
		assert_int_equal(h.queued, 0);
		h.writes = 0;
		assert_int_equal(h.outbox, 0); /* jobs queued and ended: the sender sleeps on */
	}
	{
		/* an outbox item queued: the sender wakes; nothing queued or ended */
		struct scheduler_outbox_item it = {.kind = "webhook",
		                                   .target = "hooked",
		                                   .dedup = "heard-1",
		                                   .job_id = 1,
		                                   .body = "{}",
		                                   .created_ms = 4000};

		assert_ok(st[1]->ops->outbox_put(st[1], &it, 1, &err), &err);
		for (i = 0; i < 500; i++) {
			bool got;

			pthread_mutex_lock(&h.lock);
			got = h.outbox > 0;
			pthread_mutex_unlock(&h.lock);
			if (got)
				break;
			(void)poll(NULL, 0, 10);
		}
		pthread_mutex_lock(&h.lock);
		assert_int_equal(h.outbox, 1);
		assert_int_equal(h.writes, 0);
		assert_int_equal(h.queued, 0);
		pthread_mutex_unlock(&h.lock);
	}
	assert_ok(st[1]->ops->announce(st[1], "f40-v6", &err), &err);
	assert_true(heard_wait(&h, "f40-v6;"));
	assert_ok(st[0]->ops->announce(st[0], "mine", &err), &err);
	/* a duty's statement on the listening connection must not swallow what it read */
	assert_true(duty_held(st[0], "reaper"));
	assert_ok(st[1]->ops->announce(st[1], "after-duty", &err), &err);
	assert_true(duty_held(st[0], "publish:x"));
	assert_true(heard_wait(&h, "after-duty;"));
	assert_null(strstr(h.repos, "mine"));
	assert_ok(st[0]->ops->watch(st[0], NULL, NULL, &err), &err);
	h.writes = 0;
	insert(st[1], "", "", 0, NULL);
	(void)poll(NULL, 0, 600);
	assert_int_equal(h.writes, 0);
	scheduler_store_close(st[0]);
	scheduler_store_close(st[1]);
	pthread_mutex_destroy(&h.lock);
}

/* The notifications a scheduler sent (payload "kiln-scheduler-<id> <letters>") that
 * listener l has received by now; *letters gets every letter they named. */
static int notifications_count(PGconn *l, char letters[16])
{
	PGnotify *n;
	int count = 0;

	(void)PQconsumeInput(l);
	while ((n = PQnotifies(l))) {
		const char *k = strchr(n->extra, ' ');

		if (!strncmp(n->extra, "kiln-scheduler-", 15) && k)
			for (k++; *k && strlen(letters) < 15; k++)
				if (!strchr(letters, *k))
					letters[strlen(letters)] = *k;
		count += !strncmp(n->extra, "kiln-scheduler-", 15);
		PQfreemem(n);
	}
	return count;
}

/* A scheduler's writes reach the others as one notification a few milliseconds (the
 * notes of store_pg.c), naming what was written, not one per commit: 40 jobs queued one
 * by one are told in about as many notifications as 5 ms periods they took. */
KILN_TEST(store_pg_tells_many_writes_in_few_notifications)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct scheduler_store *st = NULL;
	char url[512], letters[16] = "";
	int64_t t0, took_ms;
	PGconn *l;
	int i, count;

	pg_database(url, sizeof(url));
	l = pg_connect(url);
	PQclear(PQexec(l, "LISTEN kiln"));
	assert_ok(scheduler_store_open_pg(url, &st, &err), &err);
	(void)poll(NULL, 0, 300); /* what opening the store wrote, told */
	(void)notifications_count(l, letters);
	letters[0] = '\0';
	t0 = util_clock_mono_ns();
	for (i = 0; i < 40; i++)
		insert(st, "", "", 0, NULL);
	took_ms = (util_clock_mono_ns() - t0) / 1000000;
	(void)poll(NULL, 0, 300);
	count = notifications_count(l, letters);
	assert_true(count >= 1);
	assert_true(count <= took_ms / 5 + 2);
	if (took_ms < 100) /* a machine this slow would need every one */
		assert_true(count < 40);
	assert_non_null(strchr(letters, 'q')); /* jobs queued: the others' grants read again */
	assert_non_null(strchr(letters, 'w'));
	scheduler_store_close(st);
	PQfinish(l);
}

/* The notices a session got ("kiln-notify K" from the triggers), one letter each. */
static void notice_letter(void *arg, const char *msg)
{
	char *got = arg;
	const char *k = strstr(msg, "kiln-notify ");

	if (k && strlen(got) < 15)
		got[strlen(got)] = k[12];
}

/* A session set up as a scheduler's with settings (an older build's or this one's),
 * its notices collected into got. */
static PGconn *session_as(const char *url, const char *settings, char got[16])
{
	PGconn *c = pg_connect(url);

	PQsetNoticeProcessor(c, notice_letter, got);
	PQclear(PQexec(c, settings));
	return c;
}

/* Set job id's state from session c, as a scheduler's write would. */
static void state_set(PGconn *c, int64_t id, int state)
{
	char sql[128];
	PGresult *r;

	snprintf(sql, sizeof(sql), "UPDATE jobs SET state = %d WHERE id = %lld", state,
	         (long long)id);
	r = PQexec(c, sql);
	assert_int_equal(PQresultStatus(r), PGRES_COMMAND_OK);
	PQclear(r);
}

/* A scheduler built before its store noted its own lease ends (kiln.notify = 'notice',
 * no kiln.ends), still running during a rolling upgrade, is told them by the jobs
 * trigger as before and so tells the others; this build's sessions (kiln.ends = 'noted',
 * conn_setup) call no trigger for them. */
KILN_TEST(store_pg_tells_an_older_schedulers_session_its_lease_ends)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct kiln_arena a = KILN_ARENA_INIT(KILN_MIB);
	struct scheduler_store *st = NULL;
	struct scheduler_job j;
	char url[512], older_got[16] = "", now_got[16] = "";
	const char *lids[] = {L1, L2, L3};
	int64_t ids[3];
	PGconn *older, *now;
	size_t i;

	pg_database(url, sizeof(url));
	assert_ok(scheduler_store_open_pg(url, &st, &err), &err);
	insert_some(st, ids, 3);
	for (i = 0; i < 3; i++)
		assert_ok(grant(st, "w", "", "", 2000, lids[i], &a, &j), NULL);
	older = session_as(url, "SET client_min_messages = notice; SET kiln.notify = 'notice'",
	                   older_got);
	now = session_as(url,
	                 "SET client_min_messages = notice; SET kiln.notify = 'notice';"
	                 " SET kiln.ends = 'noted'",
	                 now_got);
	state_set(older, ids[0], 3); /* ended */
	state_set(older, ids[1], 0); /* queued again */
	assert_string_equal(older_got, "eq");
	state_set(now, ids[2], 4);
	assert_string_equal(now_got, "");
	/* a job queued by anyone is still told (not a lease's end) */
	state_set(now, ids[0], 0);
	assert_string_equal(now_got, "q");
	PQfinish(older);
	PQfinish(now);
	kiln_arena_release(&a);
	scheduler_store_close(st);
}

#define END_JOBS 40

struct ender {
	struct scheduler_store *st;
	const char (*lids)[33];
	enum scheduler_outcome outcome;
	int ok;
};

/* End every lease with outcome (as a completion or the reaper would). */
static void *end_all(void *arg)
{
	struct ender *e = arg;
	struct kiln_err err = KILN_ERR_INIT;
	size_t i;

	for (i = 0; i < END_JOBS; i++) {
		struct scheduler_finish f = {.outcome = e->outcome,
		                             .failure_class =
		                                 e->outcome == SCHED_OUT_LOST ? "infra" : "",
		                             .message = "",
		                             .now_ms = 5000,
		                             .decide = scheduler_lease_decide};

		kiln_err_clear(&err);
		if (!e->st->ops->lease_finish(e->st, e->lids[i], 1, &f, &err))
			e->ok++;
	}
	return NULL;
}

/* A completion on one scheduler and the reaper on another end the same leases at once:
 * each lease ends once (one attempt ended, the job in one end state). */
KILN_TEST(store_pg_ends_each_lease_once_across_stores)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct kiln_arena a = KILN_ARENA_INIT(KILN_MIB);
	struct scheduler_store *st[2] = {NULL, NULL};
	static char lids[END_JOBS][33];
	struct ender e[2];
	pthread_t t[2];
	struct scheduler_job j;
	char url[512];
	size_t i;

	pg_database(url, sizeof(url));
	assert_ok(scheduler_store_open_pg(url, &st[0], &err), &err);
	assert_ok(scheduler_store_open_pg(url, &st[1], &err), &err);
	for (i = 0; i < END_JOBS; i++) {
		insert(st[0], "", "", 0, NULL);
		snprintf(lids[i], sizeof(lids[i]), "%032zx", i + 1);
		assert_ok(grant(st[0], "w", ",x,", ",", 2000, lids[i], &a, &j), NULL);
	}
	e[0] = (struct ender){st[0], (const char(*)[33])lids, SCHED_OUT_SUCCEEDED, 0};
	e[1] = (struct ender){st[1], (const char(*)[33])lids, SCHED_OUT_LOST, 0};
	assert_int_equal(pthread_create(&t[0], NULL, end_all, &e[0]), 0);
	assert_int_equal(pthread_create(&t[1], NULL, end_all, &e[1]), 0);
	pthread_join(t[0], NULL);
	pthread_join(t[1], NULL);
	assert_int_equal(e[0].ok + e[1].ok, END_JOBS);
	for (i = 0; i < END_JOBS; i++) {
		struct scheduler_attempt *att = NULL;
		size_t n = 0;

		assert_ok(st[1]->ops->attempts_list(st[1], (int64_t)i + 1, &a, &att, &n, &err),
		          &err);
		assert_int_equal(n, 1);
		assert_true(!strcmp(att[0].state, "succeeded") || !strcmp(att[0].state, "lost"));
		assert_ok(st[1]->ops->job_get(st[1], (int64_t)i + 1, &a, &j, &err), &err);
		assert_int_equal(j.state, !strcmp(att[0].state, "succeeded") ? SCHED_SUCCEEDED
		                                                             : SCHED_QUEUED);
	}
	kiln_arena_release(&a);
	scheduler_store_close(st[0]);
	scheduler_store_close(st[1]);
}

/* kiln store migrate: a sqlite3 store's rows into an empty PostgreSQL one, verified; the
 * ids go on after the copied ones; a second copy into it is refused, nothing merged. */
KILN_TEST(store_migrate_copies_sqlite_into_postgresql)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct kiln_arena a = KILN_ARENA_INIT(KILN_MIB);
	struct scheduler_store *st = NULL;
	struct scheduler_finish f = {.outcome = SCHED_OUT_SUCCEEDED,
	                             .failure_class = "",
	                             .message = "",
	                             .now_ms = 5000,
	                             .decide = scheduler_lease_decide};
	struct scheduler_attempt *att = NULL;
	struct scheduler_job j;
	char dir[512], path[600], url[512];
	unsigned scopes = 0;
	int64_t id = 0, tid = 0, project = 0, first, second;
	size_t n = 0;

	pg_database(url, sizeof(url));
	snprintf(dir, sizeof(dir), "%s/farm", kiln_test_tmpdir());
	assert_ok(util_mkdir_p(dir, 0755, &err), &err);
	snprintf(path, sizeof(path), "%s/kiln.db", dir);
	assert_ok(scheduler_store_open_sqlite(path, &st, &err), &err);
	first = insert(st, "", "", 0, NULL);
	second = insert(st, "x86_64", ",gpu,", 3, "idem-1");
	assert_ok(grant(st, "w", ",x86_64,", ",gpu,", 2000, L1, &a, &j), NULL);
	assert_int_equal(j.id, second);
	assert_ok(st->ops->lease_finish(st, L1, 1, &f, &err), &err);
	assert_ok(st->ops->token_insert(st, "h1", API_SCOPE_READ, "ci", 1, 1000, &tid, &err), &err);
	scheduler_store_close(st);

	assert_ok(scheduler_store_migrate(dir, url, -1, &err), &err);
	assert_ok(scheduler_store_open_pg(url, &st, &err), &err);
	assert_ok(st->ops->job_get(st, second, &a, &j, &err), &err);
	assert_int_equal(j.state, SCHED_SUCCEEDED);
	assert_string_equal(j.arch, "x86_64");
	assert_string_equal(j.idem_key, "idem-1");
	assert_ok(st->ops->job_get(st, first, &a, &j, &err), &err);
	assert_int_equal(j.state, SCHED_QUEUED);
	assert_ok(st->ops->attempts_list(st, second, &a, &att, &n, &err), &err);
	assert_int_equal(n, 1);
	assert_string_equal(att[0].state, "succeeded");
	assert_ok(st->ops->token_lookup(st, "h1", &id, &scopes, &project, &err), &err);
	assert_int_equal(id, tid);
	assert_int_equal(project, 1);
	assert_int_equal(scopes, API_SCOPE_READ);
	assert_int_equal(insert(st, "", "", 0, NULL), second + 1);
	scheduler_store_close(st);
	assert_int_equal(scheduler_store_migrate(dir, url, -1, &err), KILN_EEXIST);
	kiln_err_clear(&err);
	snprintf(path, sizeof(path), "%s/none", kiln_test_tmpdir());
	assert_int_equal(scheduler_store_migrate(path, url, -1, &err), KILN_ENOTFOUND);
	kiln_arena_release(&a);
}

/* Writers at once: each keeps its own result, a failed one (a second use of an
 * idempotency key) undoes only itself, and all are committed when they return. */
#define RACE_THREADS 4
#define RACE_KEYS 40
struct race {
	struct scheduler_store *st;
	int n;
	int ok, dup, other;
};

static void *race_writer(void *arg)
{
	struct race *r = arg;
	char key[32];
	int i;

	for (i = 0; i < 3 * RACE_KEYS; i++) {
		struct kiln_err err = KILN_ERR_INIT;
		struct scheduler_job j = {0};
		int64_t id = 0;
		kiln_rc rc;

		snprintf(key, sizeof(key), "k%d-%d", r->n, i % RACE_KEYS);
		j.arch = "", j.tags = "", j.idem_key = key, j.spec_name = "x.spec";
		j.request = "{}", j.manifest = "{}", j.sign_key = "";
		memcpy(j.content_key, "k", 2);
		j.token_id = 1, j.created_ms = 1000, j.max_attempts = 2;
		rc = r->st->ops->job_insert(r->st, &j, &id, &err);
		if (rc == KILN_OK)
			r->ok++;
		else if (rc == KILN_EEXIST)
			r->dup++;
		else
			r->other++;
	}
	return NULL;
}

STORE_TEST(store_writers_at_once_each_keep_their_result)
{
	struct scheduler_store *st = open_store("race.db");
	struct kiln_arena a = KILN_ARENA_INIT(4 * KILN_MIB);
	struct kiln_err err = KILN_ERR_INIT;
	struct race r[RACE_THREADS];
	pthread_t th[RACE_THREADS];
	struct scheduler_job *v = NULL;
	uint64_t before = st->ops->version(st);
	size_t n = 0;
	int i;

	for (i = 0; i < RACE_THREADS; i++) {
		r[i] = (struct race){.st = st, .n = i};
		assert_int_equal(pthread_create(&th[i], NULL, race_writer, &r[i]), 0);
	}
	for (i = 0; i < RACE_THREADS; i++) {
		pthread_join(th[i], NULL);
		assert_int_equal(r[i].ok, RACE_KEYS);
		assert_int_equal(r[i].dup, 2 * RACE_KEYS);
		assert_int_equal(r[i].other, 0);
	}
	/* committed: another connection sees every one */
	assert_ok(st->ops->job_list(st, 0, -1, "", 0, 1000, &a, &v, &n, &err), &err);
	assert_int_equal(n, RACE_THREADS * RACE_KEYS);
	assert_true(st->ops->version(st) > before);
	kiln_arena_release(&a);
	scheduler_store_close(st);
}

/* sqlite3: the WAL is copied into the database file by the store's checkpointer thread
 * within a few of its 200 ms ticks, not by a commit (the writer's own checkpoint waits
 * for 10,000 pages): the file grows while nothing writes. */
KILN_TEST(store_sqlite_checkpoints_off_the_write_path)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct scheduler_store *st = NULL;
	char path[4096];
	struct stat before, after;
	int i;

	snprintf(path, sizeof(path), "%s/ck.db", kiln_test_tmpdir());
	assert_ok(scheduler_store_open_sqlite(path, &st, &err), &err);
	for (i = 0; i < 300; i++)
		(void)insert(st, "", "", 0, NULL);
	assert_int_equal(stat(path, &before), 0);
	for (i = 0; i < 50 && stat(path, &after) == 0 && after.st_size <= before.st_size; i++)
		usleep(100 * 1000);
	assert_true(after.st_size > before.st_size);
	scheduler_store_close(st);
}

/* PostgreSQL: a burst of jobs gets the planner's statistics from the store itself within
 * a listening round or two, not at autovacuum's next (a minute on). */
KILN_TEST(store_pg_analyzes_jobs_after_a_burst)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct scheduler_store *st = NULL;
	char url[512], out[4096];
	const char *psql[] = {"psql",
	                      "-qtA",
	                      url,
	                      "-c",
	                      "SELECT count(*) FROM pg_stat_user_tables WHERE relname = 'jobs'"
	                      " AND last_analyze IS NOT NULL",
	                      NULL};
	int i;

	pg_database(url, sizeof(url));
	assert_ok(scheduler_store_open_pg(url, &st, &err), &err);
	assert_int_equal(kiln_test_run(psql, out, sizeof(out)), 0);
	assert_string_equal(out, "0\n");
	for (i = 0; i < 1000; i++)
		(void)insert(st, "", "", 0, NULL);
	for (i = 0; i < 50 && !kiln_test_run(psql, out, sizeof(out)) && strcmp(out, "1\n"); i++)
		usleep(100 * 1000);
	assert_string_equal(out, "1\n");
	scheduler_store_close(st);
}
