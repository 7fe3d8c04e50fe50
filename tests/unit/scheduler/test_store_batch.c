/*
 * test_store_batch.c - [batches] the job store's batch records, each test run on both
 * stores (sqlite3 in the test's directory, PostgreSQL on the harness's server; skipped,
 * saying why, only when PostgreSQL is not installed): a batch inserted with its jobs and
 * edges, a job waiting for its dependencies never a lease candidate, the hand-over, a
 * failure's dependents dep_failed through the graph and back in the queue on a retry.
 */
#include "util/util.h"

#include <stdio.h>

#include "tests/unit/harness.h"
#include "scheduler/scheduler_int.h"

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

static struct scheduler_store *open_pg(const char *name KILN_UNUSED)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct scheduler_store *st = NULL;
	char url[512];
	kiln_rc rc = kiln_test_pg_database(url, sizeof(url));

	if (rc == KILN_ENOTFOUND)
		skip();
	assert_int_equal(rc, KILN_OK);
	assert_ok(scheduler_store_open_pg(url, &st, &err), &err);
	return st;
}

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

/* a <- b <- c (c waits for b, b for a) and d alone: ids into ids[4], the batch's into *bid. */
static void chain_insert(struct scheduler_store *st, int64_t *bid, int64_t ids[4])
{
	static const char *const names[4] = {"a", "b", "c", "d"};
	static const int64_t levels[4] = {0, 1, 2, 0}, pending[4] = {0, 1, 1, 0};
	struct kiln_err err = KILN_ERR_INIT;
	struct scheduler_job j[4];
	struct scheduler_batch_member m[4];
	const struct scheduler_batch_edge e[2] = {{1, 0, "BuildRequires: a-devel"},
	                                          {2, 1, "BuildRequires: b-devel >= 2"}};
	struct scheduler_batch b = {0};
	size_t i;

	memset(j, 0, sizeof(j));
	memset(m, 0, sizeof(m));
	for (i = 0; i < 4; i++) {
		j[i].arch = "", j[i].tags = ",root:f40,", j[i].spec_name = names[i];
		j[i].request = "{}", j[i].manifest = "{}", j[i].idem_key = "";
		memcpy(j[i].content_key, "k", 2);
		j[i].sign_key = "", j[i].token_id = 7, j[i].created_ms = 1000;
		j[i].max_attempts = 2, j[i].avoid_worker = "", j[i].variations = "";
		m[i].node = (int64_t)i, m[i].level = levels[i], m[i].pending = pending[i];
		m[i].name = names[i];
	}
	b.token_id = 7, b.root = "f40", b.bootstrap = "", b.repository = "", b.created_ms = 1000;
	assert_ok(st->ops->batch_insert(st, &b, j, m, 4, e, 2, bid, ids, &err), &err);
}

/* The candidates' ids, in order, as "1,4," */
static void candidates(struct scheduler_store *st, char *out, size_t size)
{
	struct kiln_arena a = KILN_ARENA_INIT(KILN_MIB);
	struct kiln_err err = KILN_ERR_INIT;
	struct scheduler_candidate *c = NULL;
	size_t n = 0, i;

	assert_ok(st->ops->lease_candidates(st, 2000, ",x86_64,", &a, &c, &n, &err), &err);
	out[0] = '\0';
	for (i = 0; i < n; i++)
		snprintf(out + strlen(out), size - strlen(out), "%lld,", (long long)c[i].id);
	kiln_arena_release(&a);
}

static void ids_str(char *out, size_t size, const int64_t *v, size_t n)
{
	size_t i;

	out[0] = '\0';
	for (i = 0; i < n; i++)
		snprintf(out + strlen(out), size - strlen(out), "%lld,", (long long)v[i]);
}

STORE_TEST(store_batch_waits_hands_over_and_fails_dependents)
{
	struct scheduler_store *st = open_store("batch.db");
	struct kiln_arena a = KILN_ARENA_INIT(KILN_MIB);
	struct kiln_err err = KILN_ERR_INIT;
	struct scheduler_batch_member *m = NULL, one = {0};
	struct scheduler_batch_edge *e = NULL;
	struct scheduler_batch b = {0};
	struct scheduler_job j = {0};
	int64_t bid = 0, ids[4], want[4], n = 0;
	char got[128], exp[128];
	size_t nm = 0, ne = 0;
	bool first = false;

	chain_insert(st, &bid, ids);
	assert_true(bid > 0);
	/* only what waits for nothing is a candidate */
	candidates(st, got, sizeof(got));
	want[0] = ids[0], want[1] = ids[3];
	ids_str(exp, sizeof(exp), want, 2);
	assert_string_equal(got, exp);
	assert_ok(st->ops->batch_members(st, bid, &a, &m, &nm, &err), &err);
	assert_int_equal(nm, 4);
	assert_int_equal(m[2].job_id, ids[2]);
	assert_int_equal(m[2].level, 2);
	assert_int_equal(m[2].pending, 1);
	assert_string_equal(m[2].name, "c");
	assert_int_equal(m[2].state, SCHED_QUEUED);
	assert_ok(st->ops->batch_edges(st, bid, &a, &e, &ne, &err), &err);
	assert_int_equal(ne, 2);
	assert_int_equal(e[0].job_id, ids[1]);
	assert_int_equal(e[0].dep_id, ids[0]);
	assert_string_equal(e[1].why, "BuildRequires: b-devel >= 2");

	/* a's packages landed: b is a candidate; landing twice hands over once */
	assert_ok(st->ops->batch_landed(st, ids[0], &first, &err), &err);
	assert_true(first);
	assert_ok(st->ops->batch_landed(st, ids[0], &first, &err), &err);
	assert_false(first);
	candidates(st, got, sizeof(got));
	want[0] = ids[0], want[1] = ids[1], want[2] = ids[3];
	ids_str(exp, sizeof(exp), want, 3);
	assert_string_equal(got, exp);

	/* b failed: c (waiting for b) is dep_failed on it, nothing else */
	assert_ok(st->ops->batch_dep_fail(st, ids[1], "waits for b", 3000, &n, &err), &err);
	assert_int_equal(n, 1);
	assert_ok(st->ops->job_get(st, ids[2], &a, &j, &err), &err);
	assert_int_equal(j.state, SCHED_DEP_FAILED);
	assert_string_equal(j.message, "waits for b");
	assert_ok(st->ops->batch_member_of(st, ids[2], &a, &one, &err), &err);
	assert_int_equal(one.wait_on, ids[1]);
	assert_int_equal(one.batch_id, bid);
	assert_ok(st->ops->job_get(st, ids[3], &a, &j, &err), &err);
	assert_int_equal(j.state, SCHED_QUEUED);
	/* a retry of b: c waits again (for b's packages: no candidate yet) */
	assert_ok(st->ops->batch_resume(st, ids[1], 4000, &n, &err), &err);
	assert_int_equal(n, 1);
	assert_ok(st->ops->job_get(st, ids[2], &a, &j, &err), &err);
	assert_int_equal(j.state, SCHED_QUEUED);
	assert_string_equal(j.message, "");
	assert_ok(st->ops->batch_member_of(st, ids[2], &a, &one, &err), &err);
	assert_int_equal(one.wait_on, 0);
	candidates(st, got, sizeof(got));
	assert_string_equal(got, exp);
	/* a job of no batch is no member */
	assert_int_equal(st->ops->batch_member_of(st, ids[3] + 100, &a, &one, &err),
	                 KILN_ENOTFOUND);

	assert_ok(st->ops->batch_publish_set(st, bid, "f40-updates", "refused", "job 2 failed",
	                                     5000, &err),
	          &err);
	assert_ok(st->ops->batch_get(st, bid, &a, &b, &err), &err);
	assert_string_equal(b.root, "f40");
	assert_string_equal(b.repository, "f40-updates");
	assert_string_equal(b.publish_state, "refused");
	assert_int_equal(b.updated_ms, 5000);
	assert_int_equal(st->ops->batch_get(st, bid + 1, &a, &b, &err), KILN_ENOTFOUND);
	kiln_arena_release(&a);
	scheduler_store_close(st);
}

STORE_TEST(store_batch_dep_failed_reaches_through_the_graph)
{
	struct scheduler_store *st = open_store("batch2.db");
	struct kiln_arena a = KILN_ARENA_INIT(KILN_MIB);
	struct kiln_err err = KILN_ERR_INIT;
	struct scheduler_batch *v = NULL;
	struct scheduler_job j = {0};
	int64_t bid = 0, ids[4], n = 0, *ids_u = NULL;
	size_t nv = 0, nu = 0;

	chain_insert(st, &bid, ids);
	/* a failed: b and c (through b) dep_failed on a; d stays */
	assert_ok(st->ops->batch_dep_fail(st, ids[0], "waits for a", 3000, &n, &err), &err);
	assert_int_equal(n, 2);
	assert_ok(st->ops->job_get(st, ids[2], &a, &j, &err), &err);
	assert_int_equal(j.state, SCHED_DEP_FAILED);
	assert_string_equal(j.failure_class, "dependency");
	assert_ok(st->ops->job_get(st, ids[3], &a, &j, &err), &err);
	assert_int_equal(j.state, SCHED_QUEUED);
	/* a second failure does not take them from the first */
	assert_ok(st->ops->batch_dep_fail(st, ids[1], "waits for b", 3000, &n, &err), &err);
	assert_int_equal(n, 0);
	assert_ok(st->ops->batch_resume(st, ids[0], 4000, &n, &err), &err);
	assert_int_equal(n, 2);
	assert_ok(st->ops->batch_list(st, 0, 10, &a, &v, &nv, &err), &err);
	assert_int_equal(nv, 1);
	/* nothing ended: nothing unsettled */
	assert_ok(st->ops->batch_unsettled(st, &a, &ids_u, &nu, &err), &err);
	assert_int_equal(nu, 0);
	kiln_arena_release(&a);
	scheduler_store_close(st);
}

/* A job's end the scheduler did not follow through is found again at start. */
static void end_as(struct scheduler_store *st, int64_t id, enum scheduler_outcome out)
{
	struct kiln_arena a = KILN_ARENA_INIT(KILN_MIB);
	struct kiln_err err = KILN_ERR_INIT;
	struct scheduler_lease_query q = {.worker = "w",
	                                  .arches = ",x86_64,",
	                                  .tags = ",root:f40,",
	                                  .now_ms = 2000,
	                                  .ttl_ms = 1000,
	                                  .lease_id = "l"};
	struct scheduler_finish f = {.outcome = out,
	                             .failure_class = "build",
	                             .message = "",
	                             .now_ms = 2500,
	                             .decide = scheduler_lease_decide};
	struct scheduler_job j = {0};
	char lid[33];

	snprintf(lid, sizeof(lid), "%032lld", (long long)id);
	q.lease_id = lid;
	assert_ok(st->ops->lease_take(st, &id, 1, &q, &a, &j, &err), &err);
	assert_ok(st->ops->lease_finish(st, lid, j.generation, &f, &err), &err);
	kiln_arena_release(&a);
}

STORE_TEST(store_batch_unsettled_ends_are_found_again)
{
	struct scheduler_store *st = open_store("batch3.db");
	struct kiln_arena a = KILN_ARENA_INIT(KILN_MIB);
	struct kiln_err err = KILN_ERR_INIT;
	int64_t bid = 0, ids[4], *v = NULL, n2 = 0;
	size_t n = 0;
	bool first = false;

	chain_insert(st, &bid, ids);
	end_as(st, ids[0], SCHED_OUT_SUCCEEDED); /* a succeeded, not landed */
	end_as(st, ids[3], SCHED_OUT_FAILED);    /* d failed: nobody waits for it */
	assert_ok(st->ops->batch_unsettled(st, &a, &v, &n, &err), &err);
	assert_int_equal(n, 1);
	assert_int_equal(v[0], ids[0]);
	assert_ok(st->ops->batch_landed(st, ids[0], &first, &err), &err);
	end_as(st, ids[1], SCHED_OUT_FAILED); /* b failed with c still queued */
	assert_ok(st->ops->batch_unsettled(st, &a, &v, &n, &err), &err);
	assert_int_equal(n, 1);
	assert_int_equal(v[0], ids[1]);
	assert_ok(st->ops->batch_dep_fail(st, ids[1], "waits for b", 3000, &n2, &err), &err);
	assert_ok(st->ops->batch_unsettled(st, &a, &v, &n, &err), &err);
	assert_int_equal(n, 0);
	kiln_arena_release(&a);
	scheduler_store_close(st);
}

STORE_TEST(store_batch_idempotency_key_gives_the_same_batch)
{
	struct scheduler_store *st = open_store("batch4.db");
	struct kiln_arena a = KILN_ARENA_INIT(KILN_MIB);
	struct kiln_err err = KILN_ERR_INIT;
	struct scheduler_job j = {0};
	struct scheduler_batch_member m = {0};
	struct scheduler_batch b = {0}, got = {0};
	int64_t id = 0, again = 0, jid = 0, other = 0;
	struct scheduler_batch_member *v = NULL;
	size_t n = 0;

	j.arch = "", j.tags = "", j.spec_name = "a.spec", j.request = "{}", j.manifest = "{}";
	j.idem_key = "", j.sign_key = "", j.avoid_worker = "", j.variations = "";
	j.token_id = 7, j.created_ms = 1000, j.max_attempts = 1;
	memcpy(j.content_key, "k", 2);
	m.name = "a";
	b.token_id = 7, b.root = "f40", b.bootstrap = "", b.repository = "", b.created_ms = 1000;
	b.idem_key = "ci-run-12";
	memcpy(b.request_key, "abc", 4);
	assert_ok(st->ops->batch_insert(st, &b, &j, &m, 1, NULL, 0, &id, &jid, &err), &err);
	assert_int_equal(st->ops->batch_insert(st, &b, &j, &m, 1, NULL, 0, &again, &jid, &err),
	                 KILN_EEXIST);
	assert_int_equal(again, id);
	/* nothing more was written: one member */
	assert_ok(st->ops->batch_members(st, id, &a, &v, &n, &err), &err);
	assert_int_equal(n, 1);
	assert_ok(st->ops->batch_get(st, id, &a, &got, &err), &err);
	assert_string_equal(got.request_key, "abc");
	/* another token's key is its own */
	b.token_id = 8;
	assert_ok(st->ops->batch_insert(st, &b, &j, &m, 1, NULL, 0, &other, &jid, &err), &err);
	assert_true(other != id);
	kiln_arena_release(&a);
	scheduler_store_close(st);
}
