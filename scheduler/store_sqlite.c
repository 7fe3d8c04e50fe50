/*
 * store_sqlite.c - the job store on sqlite3: WAL mode, a busy timeout, versioned schema
 * migrations (PRAGMA user_version), prepared statements cached per connection.
 *
 * This is the only file with SQL in it. One writer connection serves every write behind a
 * mutex (sqlite serialises writers anyway, and every call here is a handful of indexed
 * statements, so the lock is held for microseconds); reads go to a small pool of read-only
 * connections, which WAL runs beside the writer. Every write bumps the store's version as it
 * lets go of the writer's lock (sq_unlock), which the job JSON cache compares. The store
 * keeps no policy: which job a worker may take is the scheduler's rule, passed in with the
 * lease query (scheduler_job_fits). synchronous=NORMAL in WAL mode loses nothing when the
 * process dies (a committed transaction is in the WAL); only a power loss may drop the last
 * transactions.
 */
#include "util/util.h"

#include <pthread.h>
#include <sqlite3.h>
#include "scheduler/libsqlite3_int.h"

#include "scheduler/scheduler_int.h"

/* Filled on first use (see scheduler/libsqlite3_int.h). */
static struct scheduler_libsqlite3_fns scheduler_libsqlite3;
static struct util_dl scheduler_libsqlite3_dl =
    UTIL_DL_INIT(SCHEDULER_LIBSQLITE3_SONAME, scheduler_libsqlite3_syms, scheduler_libsqlite3);

/* Each entry upgrades the schema from version i to i + 1. Append only. */
static const char *const migrations[] = {
    /* 0 -> 1 */
    "CREATE TABLE jobs("
    " id INTEGER PRIMARY KEY AUTOINCREMENT, state INTEGER NOT NULL,"
    " priority INTEGER NOT NULL DEFAULT 0, arch TEXT NOT NULL DEFAULT '',"
    " tags TEXT NOT NULL DEFAULT '', spec_name TEXT NOT NULL DEFAULT '',"
    " request TEXT NOT NULL, manifest TEXT NOT NULL, content_key TEXT NOT NULL,"
    " sign_key TEXT NOT NULL DEFAULT '', idem_key TEXT, token_id INTEGER NOT NULL,"
    " created_ms INTEGER NOT NULL, updated_ms INTEGER NOT NULL,"
    " started_ms INTEGER NOT NULL DEFAULT 0, finished_ms INTEGER NOT NULL DEFAULT 0,"
    " not_before_ms INTEGER NOT NULL DEFAULT 0, attempts INTEGER NOT NULL DEFAULT 0,"
    " max_attempts INTEGER NOT NULL, timeout_s INTEGER NOT NULL DEFAULT 0,"
    " cancel_requested INTEGER NOT NULL DEFAULT 0, lease_id TEXT,"
    " generation INTEGER NOT NULL DEFAULT 0, worker TEXT NOT NULL DEFAULT '',"
    " lease_expires_ms INTEGER NOT NULL DEFAULT 0, failure_class TEXT NOT NULL DEFAULT '',"
    " message TEXT NOT NULL DEFAULT '');"
    "CREATE UNIQUE INDEX jobs_idem ON jobs(token_id, idem_key) WHERE idem_key IS NOT NULL;"
    "CREATE INDEX jobs_queue ON jobs(state, priority DESC, id);"
    "CREATE UNIQUE INDEX jobs_lease ON jobs(lease_id) WHERE lease_id IS NOT NULL;"
    "CREATE TABLE attempts(job_id INTEGER NOT NULL, n INTEGER NOT NULL, worker TEXT NOT NULL,"
    " lease_id TEXT NOT NULL, generation INTEGER NOT NULL, state TEXT NOT NULL,"
    " failure_class TEXT NOT NULL DEFAULT '', message TEXT NOT NULL DEFAULT '',"
    " started_ms INTEGER NOT NULL, ended_ms INTEGER NOT NULL DEFAULT 0,"
    " PRIMARY KEY(job_id, n));"
    "CREATE INDEX attempts_lease ON attempts(lease_id);"
    "CREATE TABLE artifacts(job_id INTEGER NOT NULL, attempt INTEGER NOT NULL,"
    " name TEXT NOT NULL, sha256 TEXT NOT NULL, size INTEGER NOT NULL,"
    " signed_sha256 TEXT NOT NULL DEFAULT '', signed_size INTEGER NOT NULL DEFAULT 0,"
    " kind TEXT NOT NULL, arch TEXT NOT NULL, PRIMARY KEY(job_id, attempt, name));"
    "CREATE TABLE workers(name TEXT PRIMARY KEY, arches TEXT NOT NULL, tags TEXT NOT NULL,"
    " slots INTEGER NOT NULL, free_disk INTEGER NOT NULL, kernel TEXT NOT NULL,"
    " version TEXT NOT NULL, last_seen_ms INTEGER NOT NULL, draining INTEGER NOT NULL);"
    "CREATE TABLE tokens(id INTEGER PRIMARY KEY AUTOINCREMENT, hash TEXT NOT NULL UNIQUE,"
    " scopes INTEGER NOT NULL, name TEXT NOT NULL, created_ms INTEGER NOT NULL,"
    " revoked INTEGER NOT NULL DEFAULT 0);",
    /* 1 -> 2: reproducibility reruns (issue 12). A rerun is a job of its own (rerun_of
     * names the original, avoid_worker its worker); reruns and rerun_artifacts keep the
     * comparison, jobs.repro_verdict the original's rolled-up verdict. */
    "ALTER TABLE jobs ADD COLUMN reruns INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE jobs ADD COLUMN rerun_of INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE jobs ADD COLUMN rerun_n INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE jobs ADD COLUMN avoid_worker TEXT NOT NULL DEFAULT '';"
    "ALTER TABLE jobs ADD COLUMN variations TEXT NOT NULL DEFAULT '';"
    "ALTER TABLE jobs ADD COLUMN repro_verdict TEXT NOT NULL DEFAULT '';"
    "CREATE TABLE reruns(job_id INTEGER NOT NULL, n INTEGER NOT NULL,"
    " rerun_job INTEGER NOT NULL, variations TEXT NOT NULL, original_worker TEXT NOT NULL,"
    " verdict TEXT NOT NULL DEFAULT 'pending', created_ms INTEGER NOT NULL,"
    " updated_ms INTEGER NOT NULL, PRIMARY KEY(job_id, n));"
    "CREATE INDEX reruns_job ON reruns(rerun_job);"
    "CREATE TABLE rerun_artifacts(job_id INTEGER NOT NULL, n INTEGER NOT NULL,"
    " name TEXT NOT NULL, original_sha256 TEXT NOT NULL, rerun_sha256 TEXT NOT NULL,"
    " verdict TEXT NOT NULL, diff TEXT NOT NULL DEFAULT '', text TEXT NOT NULL DEFAULT '',"
    " diffoscope TEXT, diffoscope_state TEXT NOT NULL DEFAULT '',"
    " PRIMARY KEY(job_id, n, name));"
    "CREATE INDEX rerun_artifacts_dfs ON rerun_artifacts(diffoscope_state)"
    " WHERE diffoscope_state = 'pending';",
    /* 2 -> 3: signed attestations (provenance, rerun attestation) by job, found by a
     * package's digest */
    "CREATE TABLE attestations(job_id INTEGER NOT NULL, kind TEXT NOT NULL,"
    " envelope TEXT NOT NULL, created_ms INTEGER NOT NULL, PRIMARY KEY(job_id, kind));"
    "CREATE INDEX artifacts_sha ON artifacts(sha256);"
    "CREATE INDEX artifacts_signed_sha ON artifacts(signed_sha256) WHERE signed_sha256 != '';",
    /* 3 -> 4: rebuilder mode: the rebuild job, the published packages, the comparison */
    "CREATE TABLE rebuilds(job_id INTEGER PRIMARY KEY, srpm_name TEXT NOT NULL,"
    " srpm_sha256 TEXT NOT NULL, published TEXT NOT NULL,"
    " verdict TEXT NOT NULL DEFAULT 'pending', report TEXT NOT NULL DEFAULT '',"
    " text TEXT NOT NULL DEFAULT '', created_ms INTEGER NOT NULL);",
    /* 4 -> 5: publishing (issue 11): what each repository holds, the job publishing
     * decisions, the last publish of each repository */
    "CREATE TABLE repo_packages(repo TEXT NOT NULL, file TEXT NOT NULL, name TEXT NOT NULL,"
    " epoch INTEGER NOT NULL, version TEXT NOT NULL, release TEXT NOT NULL,"
    " arch TEXT NOT NULL, sha256 TEXT NOT NULL, size INTEGER NOT NULL,"
    " job_id INTEGER NOT NULL, buildtime INTEGER NOT NULL, published_ms INTEGER NOT NULL,"
    " PRIMARY KEY(repo, file));"
    "CREATE TABLE repo_publishes(job_id INTEGER PRIMARY KEY, repo TEXT NOT NULL,"
    " state TEXT NOT NULL, message TEXT NOT NULL, updated_ms INTEGER NOT NULL);"
    "CREATE TABLE repos(name TEXT PRIMARY KEY, revision INTEGER NOT NULL,"
    " published_ms INTEGER NOT NULL);",
    /* 5 -> 6: a worker's name belongs to the token that registered it (-1: none yet) */
    "ALTER TABLE workers ADD COLUMN token_id INTEGER NOT NULL DEFAULT -1;",
    /* 6 -> 7: each worker's own credential (sha256 hex of its secret; '' until bound), so
     * workers sharing a token cannot act for each other */
    "ALTER TABLE workers ADD COLUMN secret_hash TEXT NOT NULL DEFAULT '';",
};

#define JOB_COLS                                                                                   \
	"id, state, priority, arch, tags, spec_name, request, manifest, content_key, sign_key,"    \
	" coalesce(idem_key, ''), token_id, created_ms, updated_ms, started_ms, finished_ms,"      \
	" not_before_ms, attempts, max_attempts, timeout_s, cancel_requested,"                     \
	" coalesce(lease_id, ''), generation, worker, lease_expires_ms, failure_class, message,"   \
	" reruns, rerun_of, rerun_n, avoid_worker, variations, repro_verdict"

enum q {
	Q_JOB_INSERT,
	Q_JOB_BY_IDEM,
	Q_JOB_GET,
	Q_JOB_LIST,
	Q_JOB_LIST_STATE,
	Q_QUEUE_AHEAD,
	Q_CANDIDATES,
	Q_LEASE_TAKE,
	Q_ATTEMPT_INSERT,
	Q_JOB_BY_LEASE,
	Q_ATTEMPT_BY_LEASE,
	Q_LEASE_RENEW,
	Q_ATTEMPT_STATE,
	Q_JOB_END,
	Q_JOB_REQUEUE,
	Q_EXPIRED,
	Q_CANCEL_QUEUED,
	Q_CANCEL_ACTIVE,
	Q_RETRY,
	Q_ATTEMPTS,
	Q_ARTIFACT_PUT,
	Q_ARTIFACTS,
	Q_ARTIFACTS_ALL,
	Q_WORKER_FULL,
	Q_WORKER_SEEN,
	Q_WORKERS,
	Q_WORKER_OWNER,
	Q_WORKER_CRED,
	Q_WORKER_CRED_SET,
	Q_ARTIFACT_OWNED,
	Q_ARTIFACT_JOB,
	Q_TOKEN_INSERT,
	Q_TOKEN_LOOKUP,
	Q_TOKENS,
	Q_TOKEN_REVOKE,
	Q_COUNT_STATES,
	Q_COUNT_QUEUED_ARCH,
	Q_PING,
	Q_OTHER_WORKERS,
	Q_RERUN_ROW,
	Q_RERUNS_ADD,
	Q_RERUNS,
	Q_RERUN_ARTS_DEL,
	Q_RERUN_ART_PUT,
	Q_RERUN_VERDICT,
	Q_RERUN_VERDICTS,
	Q_REPRO_VERDICT,
	Q_RERUN_ARTS,
	Q_DFS_NEXT,
	Q_DFS_SET,
	Q_COUNT_VERDICTS,
	Q_ATT_PUT,
	Q_ATT_FIND,
	Q_REPO_PKG_PUT,
	Q_REPO_PKGS,
	Q_REPO_PKGS_ALL,
	Q_REPO_PKG_DEL,
	Q_REPO_MARK,
	Q_REPO_DECISION,
	Q_REPO_UNPUB,
	Q_REPO_STATE_PUT,
	Q_REPO_STATES,
	Q_RB_PUT,
	Q_RB_GET,
	Q_RB_RECORD,
	Q_REPRO_UNDONE,
	Q_JOB_INPUTS,
	Q_BEGIN,
	Q_COMMIT,
	Q_ROLLBACK,
	Q_COUNT,
};

static const char *const sql[Q_COUNT] = {
    [Q_JOB_INSERT] = "INSERT INTO jobs(state, priority, arch, tags, spec_name, request, manifest,"
                     " content_key, sign_key, idem_key, token_id, created_ms, updated_ms,"
                     " max_attempts, timeout_s, reruns, rerun_of, rerun_n, avoid_worker,"
                     " variations, repro_verdict) VALUES(0,?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,"
                     "?11,?12,?13,?14,?15,?16,?17,?18,?19)",
    [Q_JOB_BY_IDEM] = "SELECT id FROM jobs WHERE token_id = ?1 AND idem_key = ?2",
    [Q_JOB_GET] = "SELECT " JOB_COLS " FROM jobs WHERE id = ?1",
    [Q_JOB_LIST] = "SELECT " JOB_COLS " FROM jobs WHERE id < ?1"
                   " AND instr(lower(spec_name), lower(?4)) > 0 ORDER BY id DESC LIMIT ?2",
    [Q_JOB_LIST_STATE] = "SELECT " JOB_COLS " FROM jobs WHERE id < ?1 AND state = ?3"
                         " AND instr(lower(spec_name), lower(?4)) > 0"
                         " ORDER BY id DESC LIMIT ?2",
    [Q_QUEUE_AHEAD] = "SELECT count(*) FROM jobs WHERE state = 0 AND (priority > ?1 OR"
                      " (priority = ?1 AND id < ?2))",
    [Q_CANDIDATES] = "SELECT " JOB_COLS " FROM jobs WHERE state = 0 AND not_before_ms <= ?1"
                     " AND (arch = '' OR instr(?2, ',' || arch || ',') > 0)"
                     " ORDER BY priority DESC, id ASC LIMIT 256",
    [Q_LEASE_TAKE] = "UPDATE jobs SET state = 1, lease_id = ?2, generation = generation + 1,"
                     " worker = ?3, lease_expires_ms = ?4, attempts = attempts + 1,"
                     " started_ms = CASE WHEN started_ms = 0 THEN ?5 ELSE started_ms END,"
                     " updated_ms = ?5 WHERE id = ?1 AND state = 0",
    [Q_ATTEMPT_INSERT] = "INSERT INTO attempts(job_id, n, worker, lease_id, generation, state,"
                         " started_ms) SELECT id, attempts, worker, lease_id, generation,"
                         " 'leased', ?2 FROM jobs WHERE id = ?1",
    [Q_JOB_BY_LEASE] = "SELECT " JOB_COLS " FROM jobs WHERE lease_id = ?1",
    [Q_ATTEMPT_BY_LEASE] = "SELECT job_id, state FROM attempts WHERE lease_id = ?1",
    [Q_LEASE_RENEW] = "UPDATE jobs SET lease_expires_ms = ?2, state = 2, updated_ms = ?3"
                      " WHERE id = ?1",
    [Q_ATTEMPT_STATE] = "UPDATE attempts SET state = ?3, failure_class = ?4, message = ?5,"
                        " ended_ms = ?6 WHERE job_id = ?1 AND n = ?2",
    [Q_JOB_END] = "UPDATE jobs SET state = ?2, lease_id = NULL, lease_expires_ms = 0,"
                  " failure_class = ?3, message = ?4, finished_ms = ?5, updated_ms = ?5"
                  " WHERE id = ?1",
    [Q_JOB_REQUEUE] = "UPDATE jobs SET state = 0, lease_id = NULL, worker = '',"
                      " lease_expires_ms = 0, not_before_ms = ?2, updated_ms = ?3,"
                      " failure_class = ?4, message = ?5, max_attempts = max_attempts + ?6"
                      " WHERE id = ?1",
    [Q_EXPIRED] = "SELECT " JOB_COLS " FROM jobs WHERE state IN (1, 2) AND"
                  " lease_expires_ms < ?1",
    [Q_CANCEL_QUEUED] = "UPDATE jobs SET state = 5, cancel_requested = 1, finished_ms = ?2,"
                        " updated_ms = ?2, failure_class = 'cancel', message = 'cancelled"
                        " before it started' WHERE id = ?1 AND state = 0",
    [Q_CANCEL_ACTIVE] = "UPDATE jobs SET cancel_requested = 1, updated_ms = ?2"
                        " WHERE id = ?1 AND state IN (1, 2)",
    [Q_RETRY] = "UPDATE jobs SET state = 0, cancel_requested = 0, failure_class = '',"
                " message = '', not_before_ms = 0, finished_ms = 0, updated_ms = ?2,"
                " max_attempts = attempts + ?3 WHERE id = ?1 AND state IN (4, 5)",
    [Q_ATTEMPTS] = "SELECT job_id, n, worker, lease_id, generation, state, failure_class,"
                   " message, started_ms, ended_ms FROM attempts WHERE job_id = ?1"
                   " ORDER BY n",
    [Q_ARTIFACT_PUT] = "INSERT OR REPLACE INTO artifacts(job_id, attempt, name, sha256, size,"
                       " signed_sha256, signed_size, kind, arch)"
                       " VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9)",
    [Q_ARTIFACTS] = "SELECT job_id, attempt, name, sha256, size, signed_sha256, signed_size,"
                    " kind, arch FROM artifacts WHERE job_id = ?1 AND attempt = ?2"
                    " ORDER BY name",
    [Q_ARTIFACTS_ALL] = "SELECT job_id, attempt, name, sha256, size, signed_sha256,"
                        " signed_size, kind, arch FROM artifacts WHERE job_id = ?1"
                        " ORDER BY attempt, name",
    /* an upsert, not a replace: the row's credential (secret_hash) stays */
    [Q_WORKER_FULL] = "INSERT INTO workers(name, arches, tags, slots, free_disk,"
                      " kernel, version, last_seen_ms, draining, token_id)"
                      " VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10) ON CONFLICT(name) DO UPDATE SET"
                      " arches = ?2, tags = ?3, slots = ?4, free_disk = ?5, kernel = ?6,"
                      " version = ?7, last_seen_ms = ?8, draining = ?9, token_id = ?10",
    [Q_WORKER_OWNER] = "SELECT token_id FROM workers WHERE name = ?1",
    [Q_WORKER_CRED] = "SELECT secret_hash, last_seen_ms FROM workers WHERE name = ?1",
    [Q_WORKER_CRED_SET] = "UPDATE workers SET secret_hash = ?2 WHERE name = ?1",
    [Q_ARTIFACT_JOB] = "SELECT job_id FROM artifacts WHERE sha256 = ?1 OR signed_sha256 = ?1"
                       " ORDER BY job_id LIMIT 1",
    [Q_ARTIFACT_OWNED] = "SELECT 1 FROM artifacts a JOIN jobs j ON j.id = a.job_id"
                         " WHERE (a.sha256 = ?1 OR a.signed_sha256 = ?1) AND j.token_id = ?2"
                         " LIMIT 1",
    /* at most one write a second per worker: polls and heartbeats come often */
    [Q_WORKER_SEEN] = "UPDATE workers SET last_seen_ms = ?2, draining = ?3 WHERE name = ?1"
                      " AND (last_seen_ms < ?2 - 1000 OR draining != ?3)",
    [Q_WORKERS] = "SELECT w.name, w.arches, w.tags, w.slots, w.free_disk, w.kernel, w.version,"
                  " w.last_seen_ms, w.draining, (SELECT count(*) FROM jobs j WHERE"
                  " j.state IN (1, 2) AND j.worker = w.name) FROM workers w ORDER BY w.name",
    [Q_TOKEN_INSERT] = "INSERT INTO tokens(hash, scopes, name, created_ms) VALUES(?1,?2,?3,?4)",
    [Q_TOKEN_LOOKUP] = "SELECT id, scopes FROM tokens WHERE hash = ?1 AND revoked = 0",
    [Q_TOKENS] = "SELECT id, name, scopes, created_ms, revoked FROM tokens ORDER BY id",
    [Q_TOKEN_REVOKE] = "UPDATE tokens SET revoked = 1 WHERE id = ?1",
    [Q_COUNT_STATES] = "SELECT state, count(*) FROM jobs GROUP BY state",
    [Q_PING] = "SELECT count(*) FROM tokens WHERE id = 1",
    [Q_COUNT_QUEUED_ARCH] = "SELECT arch, count(*) FROM jobs WHERE state = 0 GROUP BY arch"
                            " ORDER BY arch",
    /* workers other than ?1 seen since ?2 and not draining: could they take the job? */
    [Q_OTHER_WORKERS] = "SELECT arches, tags FROM workers WHERE name != ?1 AND"
                        " last_seen_ms >= ?2 AND draining = 0",
    [Q_RERUN_ROW] = "INSERT INTO reruns(job_id, n, rerun_job, variations, original_worker,"
                    " created_ms, updated_ms) VALUES(?1,?2,?3,?4,?5,?6,?6)",
    [Q_RERUNS_ADD] = "UPDATE jobs SET reruns = reruns + ?2, repro_verdict = 'pending',"
                     " variations = CASE WHEN ?3 = '' THEN variations ELSE ?3 END"
                     " WHERE id = ?1",
    [Q_RERUNS] = "SELECT r.job_id, r.n, r.rerun_job, r.variations, r.original_worker,"
                 " r.verdict, j.state, j.worker FROM reruns r JOIN jobs j ON j.id = r.rerun_job"
                 " WHERE r.job_id = ?1 ORDER BY r.n",
    [Q_RERUN_ARTS_DEL] = "DELETE FROM rerun_artifacts WHERE job_id = ?1 AND n = ?2",
    [Q_RERUN_ART_PUT] = "INSERT OR REPLACE INTO rerun_artifacts(job_id, n, name,"
                        " original_sha256, rerun_sha256, verdict, diff, text, diffoscope,"
                        " diffoscope_state) VALUES(?1,?2,?3,?4,?5,?6,?7,?8,NULL,?9)",
    [Q_RERUN_VERDICT] = "UPDATE reruns SET verdict = ?3, updated_ms = ?4 WHERE job_id = ?1"
                        " AND n = ?2",
    [Q_RERUN_VERDICTS] = "SELECT verdict FROM reruns WHERE job_id = ?1",
    [Q_REPRO_VERDICT] = "UPDATE jobs SET repro_verdict = ?2 WHERE id = ?1",
    [Q_RERUN_ARTS] = "SELECT job_id, n, name, original_sha256, rerun_sha256, verdict, diff,"
                     " text, diffoscope, diffoscope_state FROM rerun_artifacts"
                     " WHERE job_id = ?1 ORDER BY n, name",
    [Q_DFS_NEXT] = "SELECT job_id, n, name, original_sha256, rerun_sha256, verdict, '', '',"
                   " NULL, diffoscope_state FROM rerun_artifacts WHERE diffoscope_state ="
                   " 'pending' LIMIT 1",
    [Q_DFS_SET] = "UPDATE rerun_artifacts SET diffoscope = ?4, diffoscope_state = ?5"
                  " WHERE job_id = ?1 AND n = ?2 AND name = ?3",
    [Q_ATT_PUT] = "INSERT OR REPLACE INTO attestations(job_id, kind, envelope, created_ms)"
                  " VALUES(?1,?2,?3,?4)",
    /* the newest job with a package of this digest (signed, or unsigned: a rerun's
     * packages are unsigned and have no attestation, so its original answers) */
    [Q_ATT_FIND] = "SELECT t.envelope FROM attestations t WHERE t.kind = ?2 AND t.job_id IN"
                   " (SELECT job_id FROM artifacts WHERE sha256 = ?1 UNION"
                   " SELECT job_id FROM artifacts WHERE signed_sha256 = ?1)"
                   " ORDER BY t.job_id DESC LIMIT 1",
    [Q_RB_PUT] = "INSERT INTO rebuilds(job_id, srpm_name, srpm_sha256, published, created_ms)"
                 " VALUES(?1,?2,?3,?4,?5)",
    [Q_RB_GET] = "SELECT job_id, srpm_name, srpm_sha256, published, verdict, report, text,"
                 " created_ms FROM rebuilds WHERE job_id = ?1",
    [Q_RB_RECORD] = "UPDATE rebuilds SET verdict = ?2, report = ?3, text = ?4 WHERE job_id = ?1",
    /* jobs ended since ?1 whose reproducibility work was not done (the scheduler stopped
     * between a job's end and it): reruns to make, a provenance to sign, a rerun or a
     * rebuild to compare */
    [Q_REPRO_UNDONE] =
        "SELECT id FROM jobs j WHERE finished_ms >= ?1 AND state >= 3 AND ("
        " (j.rerun_of = 0 AND j.state = 3 AND (j.reruns > (SELECT count(*) FROM reruns r"
        "   WHERE r.job_id = j.id) OR (NOT EXISTS(SELECT 1 FROM attestations t"
        "   WHERE t.job_id = j.id AND t.kind = 'build') AND EXISTS(SELECT 1 FROM artifacts a"
        "   WHERE a.job_id = j.id AND a.attempt = j.attempts AND a.kind IN ('binary', 'source')"
        "   AND a.name LIKE '%.rpm'))))"
        " OR (j.rerun_of != 0 AND EXISTS(SELECT 1 FROM reruns r WHERE r.rerun_job = j.id"
        "   AND r.verdict = 'pending'))"
        " OR EXISTS(SELECT 1 FROM rebuilds b WHERE b.job_id = j.id AND b.verdict = 'pending'))"
        " ORDER BY id LIMIT ?2",
    [Q_REPO_PKG_PUT] = "INSERT OR REPLACE INTO repo_packages(repo, file, name, epoch, version,"
                       " release, arch, sha256, size, job_id, buildtime, published_ms)"
                       " VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12)",
#define REPO_PKG_COLS                                                                              \
	"repo, file, name, epoch, version, release, arch, sha256, size, job_id, buildtime,"        \
	" published_ms"
    [Q_REPO_PKGS] = "SELECT " REPO_PKG_COLS " FROM repo_packages WHERE repo = ?1 ORDER BY file",
    [Q_REPO_PKGS_ALL] = "SELECT " REPO_PKG_COLS " FROM repo_packages ORDER BY repo, file",
    [Q_REPO_PKG_DEL] = "DELETE FROM repo_packages WHERE repo = ?1 AND file = ?2",
    [Q_REPO_MARK] = "INSERT OR REPLACE INTO repo_publishes(job_id, repo, state, message,"
                    " updated_ms) VALUES(?1,?2,?3,?4,?5)",
    [Q_REPO_DECISION] = "SELECT state, message FROM repo_publishes WHERE job_id = ?1",
    /* succeeded originals with a repository and no publishing decision yet */
    [Q_REPO_UNPUB] = "SELECT id FROM jobs j WHERE finished_ms >= ?1 AND state = 3 AND"
                     " rerun_of = 0 AND instr(request, '\"repository\":\"\"') = 0 AND"
                     " NOT EXISTS(SELECT 1 FROM repo_publishes p WHERE p.job_id = j.id)"
                     " ORDER BY id LIMIT ?2",
    [Q_REPO_STATE_PUT] = "INSERT OR REPLACE INTO repos(name, revision, published_ms)"
                         " VALUES(?1,?2,?3)",
    [Q_REPO_STATES] = "SELECT name, revision, published_ms FROM repos ORDER BY name",
    [Q_COUNT_VERDICTS] = "SELECT repro_verdict, count(*) FROM jobs WHERE repro_verdict != ''"
                         " GROUP BY repro_verdict",
    [Q_JOB_INPUTS] = "UPDATE jobs SET request = ?2, manifest = ?3, content_key = ?4 WHERE id = ?1",
    /* prepared once like the rest: sqlite3_exec would parse them on every transaction */
    [Q_BEGIN] = "BEGIN IMMEDIATE",
    [Q_COMMIT] = "COMMIT",
    [Q_ROLLBACK] = "ROLLBACK",
};

#define NREADERS 4
#define TOKEN_SLOTS 64
#define TOKEN_TTL_MS 5000

/* One connection with its statement cache and lock. The store's own is the writer; reads
 * go to a small pool of read-only connections, which WAL lets run beside the writer and
 * each other, so GETs and token checks do not queue behind one mutex. */
struct sq {
	struct scheduler_store base;
	sqlite3 *db;
	sqlite3_stmt *st[Q_COUNT];
	pthread_mutex_t lock;
	struct sq *readers[NREADERS]; /* owned by the writer; NULL in readers */
	unsigned next;                /* round robin over readers */
	/* Token lookups seen lately (every request checks one): a revoke clears them, and
	 * an entry is trusted TOKEN_TTL_MS at most. The writer's only. */
	struct tok_ent {
		char hash[65];
		int64_t id, until_ms;
		unsigned scopes;
	} tokens[TOKEN_SLOTS];
	unsigned tok_gen; /* bumped by each revoke: a lookup begun before it is not kept */
	uint64_t version; /* the writer's: bumped as each write lets go of the lock */
	pthread_mutex_t tok_lock;
};

/* The connection for a read-only call. */
static struct sq *reader(struct sq *s)
{
	unsigned i = __atomic_fetch_add(&s->next, 1, __ATOMIC_RELAXED) % NREADERS;

	return s->readers[i] ? s->readers[i] : s;
}

static kiln_rc db_err(struct sq *s, struct kiln_err *err, const char *what)
{
	int code = sqlite3_errcode(s->db);

	if (code == SQLITE_FULL) {
		/* the disk, not a request, is too full: the API answers 507 */
		errno = ENOSPC;
		return kiln_err_sys(err, KILN_EIO, "job store: %s: %s", what,
		                    sqlite3_errmsg(s->db));
	}
	return kiln_err_set(err, KILN_EIO, "job store: %s: %s", what, sqlite3_errmsg(s->db));
}

static sqlite3_stmt *stmt(struct sq *s, enum q id, struct kiln_err *err)
{
	if (!s->st[id] && sqlite3_prepare_v3(s->db, sql[id], -1, SQLITE_PREPARE_PERSISTENT,
	                                     &s->st[id], NULL) != SQLITE_OK) {
		db_err(s, err, "prepare");
		return NULL;
	}
	sqlite3_reset(s->st[id]);
	sqlite3_clear_bindings(s->st[id]);
	return s->st[id];
}

static void bind_text(sqlite3_stmt *st, int i, const char *v)
{
	sqlite3_bind_text(st, i, v ? v : "", -1, SQLITE_STATIC);
}

static const char *col_text(sqlite3_stmt *st, int i, struct kiln_arena *a)
{
	const unsigned char *t = sqlite3_column_text(st, i);
	const char *d = kiln_arena_strdup(a, t ? (const char *)t : "");

	return d ? d : "";
}

static void col_copy(sqlite3_stmt *st, int i, char *dst, size_t size)
{
	const unsigned char *t = sqlite3_column_text(st, i);

	snprintf(dst, size, "%s", t ? (const char *)t : "");
}

/* Run a statement that returns no rows. */
static kiln_rc step_done(struct sq *s, sqlite3_stmt *st, struct kiln_err *err, const char *what)
{
	int rc = sqlite3_step(st);

	sqlite3_reset(st);
	if (rc != SQLITE_DONE)
		return db_err(s, err, what);
	return KILN_OK;
}

static kiln_rc exec(struct sq *s, const char *q, struct kiln_err *err)
{
	char *msg = NULL;

	if (sqlite3_exec(s->db, q, NULL, NULL, &msg) != SQLITE_OK) {
		kiln_err_set(err, KILN_EIO, "job store: %s: %s", q, msg ? msg : "failed");
		sqlite3_free(msg);
		return KILN_EIO;
	}
	return KILN_OK;
}

/* Every write holds the writer's lock: releasing it bumps the store's version, which read
 * caches (the job JSON, scheduler/jobcache.c) compare with the one they were built at. */
static void sq_unlock(struct sq *s)
{
	if (s->readers[0])
		__atomic_add_fetch(&s->version, 1, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&s->lock);
}

/* A cached transaction statement (BEGIN, COMMIT, ROLLBACK). */
static kiln_rc tx_step(struct sq *s, enum q id, struct kiln_err *err)
{
	sqlite3_stmt *st = stmt(s, id, err);
	int r;

	if (!st)
		return KILN_EIO;
	r = sqlite3_step(st);
	sqlite3_reset(st);
	if (r != SQLITE_DONE)
		return err ? db_err(s, err, sql[id]) : KILN_EIO;
	return KILN_OK;
}

static kiln_rc tx_begin(struct sq *s, struct kiln_err *err)
{
	pthread_mutex_lock(&s->lock);
	if (tx_step(s, Q_BEGIN, err)) {
		sq_unlock(s);
		return KILN_EIO;
	}
	return KILN_OK;
}

static kiln_rc tx_end(struct sq *s, kiln_rc rc, struct kiln_err *err)
{
	if (rc == KILN_OK)
		rc = tx_step(s, Q_COMMIT, err);
	if (rc)
		(void)tx_step(s, Q_ROLLBACK, NULL);
	sq_unlock(s);
	return rc;
}

static void read_job(sqlite3_stmt *st, struct kiln_arena *a, struct scheduler_job *j)
{
	memset(j, 0, sizeof(*j));
	j->id = sqlite3_column_int64(st, 0);
	j->state = (enum scheduler_state)sqlite3_column_int(st, 1);
	j->priority = sqlite3_column_int64(st, 2);
	j->arch = col_text(st, 3, a);
	j->tags = col_text(st, 4, a);
	j->spec_name = col_text(st, 5, a);
	j->request = col_text(st, 6, a);
	j->manifest = col_text(st, 7, a);
	col_copy(st, 8, j->content_key, sizeof(j->content_key));
	j->sign_key = col_text(st, 9, a);
	j->idem_key = col_text(st, 10, a);
	j->token_id = sqlite3_column_int64(st, 11);
	j->created_ms = sqlite3_column_int64(st, 12);
	j->updated_ms = sqlite3_column_int64(st, 13);
	j->started_ms = sqlite3_column_int64(st, 14);
	j->finished_ms = sqlite3_column_int64(st, 15);
	j->not_before_ms = sqlite3_column_int64(st, 16);
	j->attempts = sqlite3_column_int64(st, 17);
	j->max_attempts = sqlite3_column_int64(st, 18);
	j->timeout_s = sqlite3_column_int64(st, 19);
	j->cancel_requested = sqlite3_column_int(st, 20) != 0;
	col_copy(st, 21, j->lease_id, sizeof(j->lease_id));
	j->generation = sqlite3_column_int64(st, 22);
	j->worker = col_text(st, 23, a);
	j->lease_expires_ms = sqlite3_column_int64(st, 24);
	j->failure_class = col_text(st, 25, a);
	j->message = col_text(st, 26, a);
	j->reruns = sqlite3_column_int64(st, 27);
	j->rerun_of = sqlite3_column_int64(st, 28);
	j->rerun_n = sqlite3_column_int64(st, 29);
	j->avoid_worker = col_text(st, 30, a);
	j->variations = col_text(st, 31, a);
	j->repro_verdict = col_text(st, 32, a);
}

/* ---------------------------------------------------------------------------------------- */
/* Jobs */

static kiln_rc idem_lookup(struct sq *s, const struct scheduler_job *job, int64_t *id,
                           struct kiln_err *err)
{
	sqlite3_stmt *st = stmt(s, Q_JOB_BY_IDEM, err);
	int r;

	if (!st)
		return KILN_EIO;
	sqlite3_bind_int64(st, 1, job->token_id);
	bind_text(st, 2, job->idem_key);
	r = sqlite3_step(st);
	if (r == SQLITE_ROW) {
		*id = sqlite3_column_int64(st, 0);
		sqlite3_reset(st);
		return KILN_EEXIST;
	}
	sqlite3_reset(st);
	return r == SQLITE_DONE ? KILN_OK : db_err(s, err, "idempotency lookup");
}

static kiln_rc job_insert(struct scheduler_store *base, struct scheduler_job *job, int64_t *id,
                          struct kiln_err *err)
{
	struct sq *s = (struct sq *)base;
	sqlite3_stmt *st;
	kiln_rc rc;

	rc = tx_begin(s, err);
	if (rc)
		return rc;
	if (job->idem_key && *job->idem_key) {
		rc = idem_lookup(s, job, id, err);
		if (rc == KILN_EEXIST) {
			tx_end(s, KILN_OK, NULL);
			return KILN_EEXIST;
		}
		if (rc)
			return tx_end(s, rc, err);
	}
	st = stmt(s, Q_JOB_INSERT, err);
	if (!st)
		return tx_end(s, KILN_EIO, err);
	sqlite3_bind_int64(st, 1, job->priority);
	bind_text(st, 2, job->arch);
	bind_text(st, 3, job->tags);
	bind_text(st, 4, job->spec_name);
	bind_text(st, 5, job->request);
	bind_text(st, 6, job->manifest);
	bind_text(st, 7, job->content_key);
	bind_text(st, 8, job->sign_key);
	if (job->idem_key && *job->idem_key)
		bind_text(st, 9, job->idem_key);
	else
		sqlite3_bind_null(st, 9);
	sqlite3_bind_int64(st, 10, job->token_id);
	sqlite3_bind_int64(st, 11, job->created_ms);
	sqlite3_bind_int64(st, 12, job->max_attempts);
	sqlite3_bind_int64(st, 13, job->timeout_s);
	sqlite3_bind_int64(st, 14, job->reruns);
	sqlite3_bind_int64(st, 15, job->rerun_of);
	sqlite3_bind_int64(st, 16, job->rerun_n);
	bind_text(st, 17, job->avoid_worker);
	bind_text(st, 18, job->variations);
	bind_text(st, 19, job->reruns > 0 ? "pending" : "");
	rc = step_done(s, st, err, "insert job");
	if (!rc)
		*id = sqlite3_last_insert_rowid(s->db);
	/* a rerun: its row beside the original's */
	st = rc || !job->rerun_of ? NULL : stmt(s, Q_RERUN_ROW, err);
	if (st) {
		sqlite3_bind_int64(st, 1, job->rerun_of);
		sqlite3_bind_int64(st, 2, job->rerun_n);
		sqlite3_bind_int64(st, 3, *id);
		bind_text(st, 4, job->variations);
		bind_text(st, 5, job->avoid_worker);
		sqlite3_bind_int64(st, 6, job->created_ms);
		rc = step_done(s, st, err, "record the rerun");
	} else if (!rc && job->rerun_of) {
		rc = KILN_EIO;
	}
	st = rc || !job->rerun_of ? NULL : stmt(s, Q_REPRO_VERDICT, err);
	if (st) {
		sqlite3_bind_int64(st, 1, job->rerun_of);
		bind_text(st, 2, "pending");
		rc = step_done(s, st, err, "record the verdict");
	}
	return tx_end(s, rc, err);
}

static kiln_rc job_get_locked(struct sq *s, int64_t id, struct kiln_arena *a,
                              struct scheduler_job *out, struct kiln_err *err)
{
	sqlite3_stmt *st = stmt(s, Q_JOB_GET, err);
	int r;

	if (!st)
		return KILN_EIO;
	sqlite3_bind_int64(st, 1, id);
	r = sqlite3_step(st);
	if (r == SQLITE_ROW)
		read_job(st, a, out);
	sqlite3_reset(st);
	if (r == SQLITE_DONE)
		return kiln_err_set(err, KILN_ENOTFOUND, "no job %lld", (long long)id);
	return r == SQLITE_ROW ? KILN_OK : db_err(s, err, "read job");
}

static kiln_rc job_get(struct scheduler_store *base, int64_t id, struct kiln_arena *a,
                       struct scheduler_job *out, struct kiln_err *err)
{
	struct sq *s = reader((struct sq *)base);
	kiln_rc rc;

	pthread_mutex_lock(&s->lock);
	rc = job_get_locked(s, id, a, out, err);
	sq_unlock(s);
	return rc;
}

/* Collect rows of job columns into an arena array. */
static kiln_rc read_jobs(struct sq *s, sqlite3_stmt *st, size_t max, struct kiln_arena *a,
                         struct scheduler_job **out, size_t *n, struct kiln_err *err)
{
	struct scheduler_job *v = kiln_arena_array(a, max ? max : 1, sizeof(*v));
	int r = SQLITE_DONE;

	*n = 0;
	if (!v)
		return kiln_err_set(err, KILN_ENOMEM, "out of memory");
	while (*n < max && (r = sqlite3_step(st)) == SQLITE_ROW)
		read_job(st, a, &v[(*n)++]);
	sqlite3_reset(st);
	*out = v;
	if (r != SQLITE_DONE && r != SQLITE_ROW)
		return db_err(s, err, "list jobs");
	return kiln_arena_finish(a, err);
}

static kiln_rc job_list(struct scheduler_store *base, int state, const char *name,
                        int64_t before_id, int64_t limit, struct kiln_arena *a,
                        struct scheduler_job **out, size_t *n, struct kiln_err *err)
{
	struct sq *s = reader((struct sq *)base);
	sqlite3_stmt *st;
	kiln_rc rc = KILN_EIO;

	pthread_mutex_lock(&s->lock);
	st = stmt(s, state < 0 ? Q_JOB_LIST : Q_JOB_LIST_STATE, err);
	if (st) {
		sqlite3_bind_int64(st, 1, before_id > 0 ? before_id : INT64_MAX);
		sqlite3_bind_int64(st, 2, limit);
		if (state >= 0)
			sqlite3_bind_int(st, 3, state);
		bind_text(st, 4, name);
		rc = read_jobs(s, st, (size_t)limit, a, out, n, err);
	}
	sq_unlock(s);
	return rc;
}

static kiln_rc queue_position(struct scheduler_store *base, const struct scheduler_job *job,
                              int64_t *ahead, struct kiln_err *err)
{
	struct sq *s = reader((struct sq *)base);
	sqlite3_stmt *st;
	kiln_rc rc = KILN_EIO;

	pthread_mutex_lock(&s->lock);
	st = stmt(s, Q_QUEUE_AHEAD, err);
	if (st) {
		sqlite3_bind_int64(st, 1, job->priority);
		sqlite3_bind_int64(st, 2, job->id);
		rc = sqlite3_step(st) == SQLITE_ROW ? KILN_OK : db_err(s, err, "queue position");
		*ahead = rc ? 0 : sqlite3_column_int64(st, 0);
		sqlite3_reset(st);
	}
	sq_unlock(s);
	return rc;
}

/* ---------------------------------------------------------------------------------------- */
/* Leases */

/* Anti-affinity of a rerun: could a worker other than q's, seen within two lease TTLs and
 * not draining, take a job of this arch and tags? Then q's worker leaves it to that one. */
static bool other_worker_fits(struct sq *s, const struct scheduler_lease_query *q, const char *arch,
                              const char *tags)
{
	struct kiln_err err = KILN_ERR_INIT;
	sqlite3_stmt *st = stmt(s, Q_OTHER_WORKERS, &err);
	bool fits = false;

	if (!st)
		return false;
	bind_text(st, 1, q->worker);
	sqlite3_bind_int64(st, 2, q->now_ms - 2 * q->ttl_ms);
	while (!fits && sqlite3_step(st) == SQLITE_ROW) {
		const unsigned char *ar = sqlite3_column_text(st, 0);
		const unsigned char *tg = sqlite3_column_text(st, 1);

		fits = q->fits(arch, tags, ar ? (const char *)ar : "", tg ? (const char *)tg : "",
		               NULL);
	}
	sqlite3_reset(st);
	return fits;
}

static kiln_rc pick_candidate(struct sq *s, const struct scheduler_lease_query *q,
                              struct kiln_arena *a, int64_t *id, struct kiln_err *err)
{
	sqlite3_stmt *st = stmt(s, Q_CANDIDATES, err);
	struct scheduler_job avoided = {0};
	int r;

	*id = 0;
	if (!st)
		return KILN_EIO;
	sqlite3_bind_int64(st, 1, q->now_ms);
	bind_text(st, 2, q->arches);
	while ((r = sqlite3_step(st)) == SQLITE_ROW) {
		const unsigned char *arch = sqlite3_column_text(st, 3);
		const unsigned char *tags = sqlite3_column_text(st, 4);
		const unsigned char *avoid = sqlite3_column_text(st, 30);

		if (!q->fits(arch ? (const char *)arch : "", tags ? (const char *)tags : "",
		             q->arches, q->tags, NULL))
			continue;
		if (avoid && *avoid && !strcmp((const char *)avoid, q->worker)) {
			/* a rerun of this worker's build: decided once the others are seen */
			if (!avoided.id)
				read_job(st, a, &avoided);
			continue;
		}
		*id = sqlite3_column_int64(st, 0); /* lease_grant reads it once leased */
		break;
	}
	sqlite3_reset(st);
	if (r != SQLITE_ROW && r != SQLITE_DONE)
		return db_err(s, err, "pick a job");
	/* Anti-affinity: a rerun goes to another worker when one could take it; with none,
	 * the original's worker runs it (a rerun on the same machine still varies the rest). */
	if (!*id && avoided.id && !other_worker_fits(s, q, avoided.arch, avoided.tags))
		*id = avoided.id;
	return *id ? KILN_OK : KILN_ENOTFOUND;
}

static kiln_rc lease_grant(struct scheduler_store *base, const struct scheduler_lease_query *q,
                           struct kiln_arena *a, struct scheduler_job *out, struct kiln_err *err)
{
	struct sq *s = (struct sq *)base;
	sqlite3_stmt *st;
	int64_t id;
	kiln_rc rc;

	rc = tx_begin(s, err);
	if (rc)
		return rc;
	rc = pick_candidate(s, q, a, &id, err);
	if (rc == KILN_ENOTFOUND) {
		tx_end(s, KILN_OK, NULL);
		return KILN_ENOTFOUND;
	}
	st = rc ? NULL : stmt(s, Q_LEASE_TAKE, err);
	if (st) {
		sqlite3_bind_int64(st, 1, id);
		bind_text(st, 2, q->lease_id);
		bind_text(st, 3, q->worker);
		sqlite3_bind_int64(st, 4, q->now_ms + q->ttl_ms);
		sqlite3_bind_int64(st, 5, q->now_ms);
		rc = step_done(s, st, err, "lease a job");
	} else if (!rc) {
		rc = KILN_EIO;
	}
	st = rc ? NULL : stmt(s, Q_ATTEMPT_INSERT, err);
	if (st) {
		sqlite3_bind_int64(st, 1, id);
		sqlite3_bind_int64(st, 2, q->now_ms);
		rc = step_done(s, st, err, "record the attempt");
	} else if (!rc) {
		rc = KILN_EIO;
	}
	if (!rc)
		rc = job_get_locked(s, id, a, out, err);
	return tx_end(s, rc, err);
}

/* The job a lease holds, or why it does not. */
static kiln_rc lease_lookup(struct sq *s, const char *lease_id, int64_t generation,
                            struct kiln_arena *a, struct scheduler_job *out, struct kiln_err *err)
{
	sqlite3_stmt *st = stmt(s, Q_JOB_BY_LEASE, err);
	int r;

	if (!st)
		return KILN_EIO;
	bind_text(st, 1, lease_id);
	r = sqlite3_step(st);
	if (r == SQLITE_ROW)
		read_job(st, a, out);
	sqlite3_reset(st);
	if (r == SQLITE_ROW && out->generation == generation && scheduler_state_active(out->state))
		return KILN_OK;
	if (r == SQLITE_ROW)
		return kiln_err_set(err, KILN_ECONFLICT,
		                    "lease %s: generation %lld is stale (now %lld)", lease_id,
		                    (long long)generation, (long long)out->generation);
	if (r != SQLITE_DONE)
		return db_err(s, err, "find lease");
	st = stmt(s, Q_ATTEMPT_BY_LEASE, err);
	if (!st)
		return KILN_EIO;
	bind_text(st, 1, lease_id);
	r = sqlite3_step(st);
	sqlite3_reset(st);
	if (r == SQLITE_ROW)
		return kiln_err_set(err, KILN_ECONFLICT,
		                    "lease %s is no longer held (it expired or the job ended)",
		                    lease_id);
	return kiln_err_set(err, KILN_ENOTFOUND, "no lease %s", lease_id);
}

static kiln_rc lease_touch(struct scheduler_store *base, const char *lease_id, int64_t generation,
                           int64_t now_ms, int64_t ttl_ms, struct kiln_arena *a,
                           struct scheduler_job *out, struct kiln_err *err)
{
	struct sq *s = (struct sq *)base;
	sqlite3_stmt *st;
	kiln_rc rc;

	rc = tx_begin(s, err);
	if (rc)
		return rc;
	rc = lease_lookup(s, lease_id, generation, a, out, err);
	if (!rc && ttl_ms > 0) {
		st = stmt(s, Q_LEASE_RENEW, err);
		if (!st)
			return tx_end(s, KILN_EIO, err);
		sqlite3_bind_int64(st, 1, out->id);
		sqlite3_bind_int64(st, 2, now_ms + ttl_ms);
		sqlite3_bind_int64(st, 3, now_ms);
		rc = step_done(s, st, err, "renew lease");
		st = rc ? NULL : stmt(s, Q_ATTEMPT_STATE, err);
		if (st && out->state == SCHED_LEASED) {
			sqlite3_bind_int64(st, 1, out->id);
			sqlite3_bind_int64(st, 2, out->attempts);
			bind_text(st, 3, "building");
			bind_text(st, 4, "");
			bind_text(st, 5, "");
			sqlite3_bind_int64(st, 6, 0);
			rc = step_done(s, st, err, "attempt state");
		}
		out->state = SCHED_BUILDING;
		out->lease_expires_ms = now_ms + ttl_ms;
	}
	return tx_end(s, rc, err);
}

static const char *outcome_attempt_state(enum scheduler_outcome o)
{
	static const char *const names[] = {"succeeded", "failed",   "failed",
	                                    "cancelled", "released", "lost"};

	return names[o];
}

/* Where the job goes after this outcome. */
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

static kiln_rc finish_job(struct sq *s, const struct scheduler_job *j,
                          const struct scheduler_finish *f, struct kiln_err *err)
{
	bool requeue = outcome_requeues(j, f);
	sqlite3_stmt *st = stmt(s, Q_ATTEMPT_STATE, err);
	const char *fc =
	    j->cancel_requested && f->outcome != SCHED_OUT_SUCCEEDED ? "cancel" : f->failure_class;
	kiln_rc rc;

	if (!st)
		return KILN_EIO;
	sqlite3_bind_int64(st, 1, j->id);
	sqlite3_bind_int64(st, 2, j->attempts);
	bind_text(st, 3, outcome_attempt_state(f->outcome));
	bind_text(st, 4, f->failure_class);
	bind_text(st, 5, f->message);
	sqlite3_bind_int64(st, 6, f->now_ms);
	rc = step_done(s, st, err, "attempt state");
	st = rc ? NULL : stmt(s, requeue ? Q_JOB_REQUEUE : Q_JOB_END, err);
	if (!st)
		return rc ? rc : KILN_EIO;
	sqlite3_bind_int64(st, 1, j->id);
	if (requeue) {
		sqlite3_bind_int64(st, 2, f->now_ms + f->backoff_ms);
		sqlite3_bind_int64(st, 3, f->now_ms);
		bind_text(st, 4, f->failure_class);
		bind_text(st, 5, f->message);
		/* A hand-back does not use up an attempt. */
		sqlite3_bind_int64(st, 6, f->outcome == SCHED_OUT_RELEASED ? 1 : 0);
	} else {
		sqlite3_bind_int(st, 2, (int)outcome_state(j, f));
		bind_text(st, 3, f->outcome == SCHED_OUT_SUCCEEDED ? "" : fc);
		bind_text(st, 4, f->outcome == SCHED_OUT_SUCCEEDED ? "" : f->message);
		sqlite3_bind_int64(st, 5, f->now_ms);
	}
	if (f->requeued)
		*f->requeued = requeue;
	return step_done(s, st, err, "end the job's lease");
}

static kiln_rc lease_finish(struct scheduler_store *base, const char *lease_id, int64_t generation,
                            const struct scheduler_finish *f, struct kiln_err *err)
{
	struct sq *s = (struct sq *)base;
	struct kiln_arena a = KILN_ARENA_INIT(KILN_LIMIT_HTTP_BODY * 4);
	struct scheduler_job j = {0};
	kiln_rc rc;

	rc = tx_begin(s, err);
	if (rc)
		goto out;
	rc = lease_lookup(s, lease_id, generation, &a, &j, err);
	if (!rc)
		rc = finish_job(s, &j, f, err);
	rc = tx_end(s, rc, err);
out:
	kiln_arena_release(&a);
	return rc;
}

static kiln_rc leases_expired(struct scheduler_store *base, int64_t now_ms, struct kiln_arena *a,
                              struct scheduler_job **out, size_t *n, struct kiln_err *err)
{
	struct sq *s = reader((struct sq *)base);
	sqlite3_stmt *st;
	kiln_rc rc = KILN_EIO;

	pthread_mutex_lock(&s->lock);
	st = stmt(s, Q_EXPIRED, err);
	if (st) {
		sqlite3_bind_int64(st, 1, now_ms);
		rc = read_jobs(s, st, 1024, a, out, n, err);
	}
	sq_unlock(s);
	return rc;
}

static kiln_rc job_cancel(struct scheduler_store *base, int64_t id, int64_t now_ms,
                          enum scheduler_state *state, struct kiln_err *err)
{
	struct sq *s = (struct sq *)base;
	struct kiln_arena a = KILN_ARENA_INIT(KILN_LIMIT_HTTP_BODY * 4);
	struct scheduler_job j = {0};
	sqlite3_stmt *st;
	kiln_rc rc;

	rc = tx_begin(s, err);
	if (rc)
		goto out;
	rc = job_get_locked(s, id, &a, &j, err);
	if (!rc && scheduler_state_final(j.state))
		rc = kiln_err_set(err, KILN_ECONFLICT, "job %lld has already ended (%s)",
		                  (long long)id, scheduler_state_name(j.state));
	st = rc ? NULL : stmt(s, j.state == SCHED_QUEUED ? Q_CANCEL_QUEUED : Q_CANCEL_ACTIVE, err);
	if (st) {
		sqlite3_bind_int64(st, 1, id);
		sqlite3_bind_int64(st, 2, now_ms);
		rc = step_done(s, st, err, "cancel");
	}
	if (!rc)
		*state = j.state == SCHED_QUEUED ? SCHED_CANCELLED : j.state;
	rc = tx_end(s, rc, err);
out:
	kiln_arena_release(&a);
	return rc;
}

static kiln_rc job_retry(struct scheduler_store *base, int64_t id, int64_t now_ms,
                         struct kiln_err *err)
{
	struct sq *s = (struct sq *)base;
	struct kiln_arena a = KILN_ARENA_INIT(KILN_LIMIT_HTTP_BODY * 4);
	struct scheduler_job j = {0};
	sqlite3_stmt *st;
	kiln_rc rc;

	rc = tx_begin(s, err);
	if (rc)
		goto out;
	rc = job_get_locked(s, id, &a, &j, err);
	if (!rc && j.state != SCHED_FAILED && j.state != SCHED_CANCELLED)
		rc = kiln_err_set(err, KILN_ECONFLICT,
		                  "job %lld is %s: only failed or cancelled jobs "
		                  "can be retried",
		                  (long long)id, scheduler_state_name(j.state));
	st = rc ? NULL : stmt(s, Q_RETRY, err);
	if (st) {
		sqlite3_bind_int64(st, 1, id);
		sqlite3_bind_int64(st, 2, now_ms);
		/* The same budget again as the job had at first. */
		sqlite3_bind_int64(st, 3,
		                   j.max_attempts > j.attempts ? j.max_attempts - j.attempts : 1);
		rc = step_done(s, st, err, "retry");
	}
	rc = tx_end(s, rc, err);
out:
	kiln_arena_release(&a);
	return rc;
}

/* ---------------------------------------------------------------------------------------- */
/* Attempts and artifacts */

static kiln_rc attempts_list(struct scheduler_store *base, int64_t job_id, struct kiln_arena *a,
                             struct scheduler_attempt **out, size_t *n, struct kiln_err *err)
{
	struct sq *s = reader((struct sq *)base);
	struct scheduler_attempt *v = NULL;
	size_t cap = 0;
	sqlite3_stmt *st;
	int r = SQLITE_ERROR;

	*n = 0;
	pthread_mutex_lock(&s->lock);
	st = stmt(s, Q_ATTEMPTS, err);
	if (st) {
		sqlite3_bind_int64(st, 1, job_id);
		while ((r = sqlite3_step(st)) == SQLITE_ROW) {
			struct scheduler_attempt *t;

			if (*n == cap) {
				cap = cap ? cap * 2 : 8;
				t = kiln_arena_array(a, cap, sizeof(*t));
				if (!t)
					break;
				if (*n)
					memcpy(t, v, *n * sizeof(*t));
				v = t;
			}
			t = &v[(*n)++];
			t->job_id = sqlite3_column_int64(st, 0);
			t->n = sqlite3_column_int64(st, 1);
			t->worker = col_text(st, 2, a);
			col_copy(st, 3, t->lease_id, sizeof(t->lease_id));
			t->generation = sqlite3_column_int64(st, 4);
			t->state = col_text(st, 5, a);
			t->failure_class = col_text(st, 6, a);
			t->message = col_text(st, 7, a);
			t->started_ms = sqlite3_column_int64(st, 8);
			t->ended_ms = sqlite3_column_int64(st, 9);
		}
		sqlite3_reset(st);
	}
	sq_unlock(s);
	*out = v;
	if (r != SQLITE_DONE)
		return st ? (r == SQLITE_ROW ? kiln_arena_finish(a, err)
		                             : db_err(s, err, "attempts"))
		          : KILN_EIO;
	return kiln_arena_finish(a, err);
}

static kiln_rc artifact_put(struct scheduler_store *base, const struct scheduler_artifact *art,
                            struct kiln_err *err)
{
	struct sq *s = (struct sq *)base;
	sqlite3_stmt *st;
	kiln_rc rc = KILN_EIO;

	pthread_mutex_lock(&s->lock);
	st = stmt(s, Q_ARTIFACT_PUT, err);
	if (st) {
		sqlite3_bind_int64(st, 1, art->job_id);
		sqlite3_bind_int64(st, 2, art->attempt);
		bind_text(st, 3, art->name);
		bind_text(st, 4, art->sha256);
		sqlite3_bind_int64(st, 5, art->size);
		bind_text(st, 6, art->signed_sha256);
		sqlite3_bind_int64(st, 7, art->signed_size);
		bind_text(st, 8, art->kind);
		bind_text(st, 9, art->arch);
		rc = step_done(s, st, err, "record artifact");
	}
	sq_unlock(s);
	return rc;
}

static kiln_rc artifacts_list(struct scheduler_store *base, int64_t job_id, int64_t attempt,
                              struct kiln_arena *a, struct scheduler_artifact **out, size_t *n,
                              struct kiln_err *err)
{
	struct sq *s = reader((struct sq *)base);
	struct scheduler_artifact *v = NULL, *t;
	size_t cap = 0;
	sqlite3_stmt *st;
	int r = SQLITE_ERROR;

	*n = 0;
	pthread_mutex_lock(&s->lock);
	st = stmt(s, attempt < 0 ? Q_ARTIFACTS_ALL : Q_ARTIFACTS, err);
	if (st) {
		sqlite3_bind_int64(st, 1, job_id);
		if (attempt >= 0)
			sqlite3_bind_int64(st, 2, attempt);
		while ((r = sqlite3_step(st)) == SQLITE_ROW && *n < 100000) {
			if (*n == cap) {
				cap = cap ? cap * 2 : 16;
				t = kiln_arena_array(a, cap, sizeof(*t));
				if (!t)
					break;
				if (*n)
					memcpy(t, v, *n * sizeof(*t));
				v = t;
			}
			t = &v[(*n)++];
			t->job_id = sqlite3_column_int64(st, 0);
			t->attempt = sqlite3_column_int64(st, 1);
			t->name = col_text(st, 2, a);
			col_copy(st, 3, t->sha256, sizeof(t->sha256));
			t->size = sqlite3_column_int64(st, 4);
			col_copy(st, 5, t->signed_sha256, sizeof(t->signed_sha256));
			t->signed_size = sqlite3_column_int64(st, 6);
			t->kind = col_text(st, 7, a);
			t->arch = col_text(st, 8, a);
		}
		sqlite3_reset(st);
	}
	sq_unlock(s);
	*out = v;
	if (!st)
		return KILN_EIO;
	if (r != SQLITE_DONE && r != SQLITE_ROW)
		return db_err(s, err, "artifacts");
	return kiln_arena_finish(a, err);
}

/* ---------------------------------------------------------------------------------------- */
/* Workers and tokens */

static kiln_rc worker_seen(struct scheduler_store *base, const struct scheduler_worker_info *w,
                           bool full, struct kiln_err *err)
{
	struct sq *s = (struct sq *)base;
	sqlite3_stmt *st;
	kiln_rc rc = KILN_EIO;

	pthread_mutex_lock(&s->lock);
	st = stmt(s, full ? Q_WORKER_FULL : Q_WORKER_SEEN, err);
	if (st && full) {
		bind_text(st, 1, w->name);
		bind_text(st, 2, w->arches);
		bind_text(st, 3, w->tags);
		sqlite3_bind_int64(st, 4, w->slots);
		sqlite3_bind_int64(st, 5, w->free_disk);
		bind_text(st, 6, w->kernel);
		bind_text(st, 7, w->version);
		sqlite3_bind_int64(st, 8, w->last_seen_ms);
		sqlite3_bind_int(st, 9, w->draining);
		sqlite3_bind_int64(st, 10, w->token_id);
	} else if (st) {
		bind_text(st, 1, w->name);
		sqlite3_bind_int64(st, 2, w->last_seen_ms);
		sqlite3_bind_int(st, 3, w->draining);
	}
	if (st)
		rc = step_done(s, st, err, "record worker");
	sq_unlock(s);
	return rc;
}

static kiln_rc worker_owner(struct scheduler_store *base, const char *name, int64_t *token_id,
                            struct kiln_err *err)
{
	struct sq *s = reader((struct sq *)base);
	sqlite3_stmt *st;
	kiln_rc rc = KILN_EIO;
	int r;

	pthread_mutex_lock(&s->lock);
	st = stmt(s, Q_WORKER_OWNER, err);
	if (st) {
		bind_text(st, 1, name);
		r = sqlite3_step(st);
		if (r == SQLITE_ROW)
			*token_id = sqlite3_column_int64(st, 0), rc = KILN_OK;
		else if (r == SQLITE_DONE)
			rc = kiln_err_set(err, KILN_ENOTFOUND, "no worker '%s'", name);
		else
			rc = db_err(s, err, "worker owner");
		sqlite3_reset(st);
	}
	sq_unlock(s);
	return rc;
}

static kiln_rc worker_credential(struct scheduler_store *base, const char *name, char hash[65],
                                 int64_t *last_seen_ms, struct kiln_err *err)
{
	struct sq *s = reader((struct sq *)base);
	sqlite3_stmt *st;
	kiln_rc rc = KILN_EIO;
	int r;

	pthread_mutex_lock(&s->lock);
	st = stmt(s, Q_WORKER_CRED, err);
	if (st) {
		bind_text(st, 1, name);
		r = sqlite3_step(st);
		if (r == SQLITE_ROW) {
			const unsigned char *h = sqlite3_column_text(st, 0);

			snprintf(hash, 65, "%s", h ? (const char *)h : "");
			*last_seen_ms = sqlite3_column_int64(st, 1);
			rc = KILN_OK;
		} else if (r == SQLITE_DONE) {
			rc = kiln_err_set(err, KILN_ENOTFOUND, "no worker '%s'", name);
		} else {
			rc = db_err(s, err, "worker credential");
		}
		sqlite3_reset(st);
	}
	sq_unlock(s);
	return rc;
}

static kiln_rc worker_credential_set(struct scheduler_store *base, const char *name,
                                     const char *hash, struct kiln_err *err)
{
	struct sq *s = (struct sq *)base;
	sqlite3_stmt *st;
	kiln_rc rc = KILN_EIO;

	pthread_mutex_lock(&s->lock);
	st = stmt(s, Q_WORKER_CRED_SET, err);
	if (st) {
		bind_text(st, 1, name);
		bind_text(st, 2, hash);
		rc = step_done(s, st, err, "bind worker credential");
	}
	sq_unlock(s);
	return rc;
}

static kiln_rc artifact_owned(struct scheduler_store *base, const char *sha256, int64_t token_id,
                              struct kiln_err *err)
{
	struct sq *s = reader((struct sq *)base);
	sqlite3_stmt *st;
	kiln_rc rc = KILN_EIO;
	int r;

	pthread_mutex_lock(&s->lock);
	st = stmt(s, Q_ARTIFACT_OWNED, err);
	if (st) {
		bind_text(st, 1, sha256);
		sqlite3_bind_int64(st, 2, token_id);
		r = sqlite3_step(st);
		if (r == SQLITE_ROW)
			rc = KILN_OK;
		else if (r == SQLITE_DONE)
			rc = kiln_err_set(err, KILN_ENOTFOUND, "no artifact %.64s", sha256);
		else
			rc = db_err(s, err, "artifact owner");
		sqlite3_reset(st);
	}
	sq_unlock(s);
	return rc;
}

static kiln_rc artifact_job(struct scheduler_store *base, const char *sha256, int64_t *job_id,
                            struct kiln_err *err)
{
	struct sq *s = reader((struct sq *)base);
	sqlite3_stmt *st;
	kiln_rc rc = KILN_EIO;
	int r;

	pthread_mutex_lock(&s->lock);
	st = stmt(s, Q_ARTIFACT_JOB, err);
	if (st) {
		bind_text(st, 1, sha256);
		r = sqlite3_step(st);
		if (r == SQLITE_ROW) {
			*job_id = sqlite3_column_int64(st, 0);
			rc = KILN_OK;
		} else if (r == SQLITE_DONE) {
			rc = kiln_err_set(err, KILN_ENOTFOUND, "no artifact %.64s", sha256);
		} else {
			rc = db_err(s, err, "artifact's job");
		}
		sqlite3_reset(st);
	}
	pthread_mutex_unlock(&s->lock); /* a read: the store version stays */
	return rc;
}

static kiln_rc workers_list(struct scheduler_store *base, struct kiln_arena *a,
                            struct scheduler_worker_info **out, size_t *n, struct kiln_err *err)
{
	struct sq *s = reader((struct sq *)base);
	struct scheduler_worker_info *v = NULL, *t;
	size_t cap = 0;
	sqlite3_stmt *st;
	int r = SQLITE_ERROR;

	*n = 0;
	pthread_mutex_lock(&s->lock);
	st = stmt(s, Q_WORKERS, err);
	while (st && *n < 10000 && (r = sqlite3_step(st)) == SQLITE_ROW) {
		if (*n == cap) {
			cap = cap ? cap * 2 : 16;
			t = kiln_arena_array(a, cap, sizeof(*t));
			if (!t)
				break;
			if (*n)
				memcpy(t, v, *n * sizeof(*t));
			v = t;
		}
		t = &v[(*n)++];
		t->name = col_text(st, 0, a);
		t->arches = col_text(st, 1, a);
		t->tags = col_text(st, 2, a);
		t->slots = sqlite3_column_int64(st, 3);
		t->free_disk = sqlite3_column_int64(st, 4);
		t->kernel = col_text(st, 5, a);
		t->version = col_text(st, 6, a);
		t->last_seen_ms = sqlite3_column_int64(st, 7);
		t->draining = sqlite3_column_int(st, 8) != 0;
		t->busy = sqlite3_column_int64(st, 9);
	}
	if (st)
		sqlite3_reset(st);
	sq_unlock(s);
	*out = v;
	if (!st)
		return KILN_EIO;
	if (r != SQLITE_DONE && r != SQLITE_ROW)
		return db_err(s, err, "workers");
	return kiln_arena_finish(a, err);
}

static kiln_rc token_insert(struct scheduler_store *base, const char *hash, unsigned scopes,
                            const char *name, int64_t now_ms, int64_t *id, struct kiln_err *err)
{
	struct sq *s = (struct sq *)base;
	sqlite3_stmt *st;
	kiln_rc rc = KILN_EIO;

	pthread_mutex_lock(&s->lock);
	st = stmt(s, Q_TOKEN_INSERT, err);
	if (st) {
		bind_text(st, 1, hash);
		sqlite3_bind_int(st, 2, (int)scopes);
		bind_text(st, 3, name);
		sqlite3_bind_int64(st, 4, now_ms);
		rc = step_done(s, st, err, "insert token");
		if (!rc)
			*id = sqlite3_last_insert_rowid(s->db);
	}
	sq_unlock(s);
	return rc;
}

static struct tok_ent *token_slot(struct sq *w, const char *hash)
{
	unsigned h = 0;
	size_t i;

	for (i = 0; i < 8 && hash[i]; i++)
		h = h * 31 + (unsigned char)hash[i];
	return &w->tokens[h % TOKEN_SLOTS];
}

static bool token_cached(struct sq *w, const char *hash, int64_t *id, unsigned *scopes,
                         unsigned *gen)
{
	struct tok_ent *e = token_slot(w, hash);
	bool hit;

	pthread_mutex_lock(&w->tok_lock);
	hit = !strcmp(e->hash, hash) && e->until_ms > util_clock_mono_ns() / 1000000;
	if (hit)
		*id = e->id, *scopes = e->scopes;
	*gen = w->tok_gen;
	pthread_mutex_unlock(&w->tok_lock);
	return hit;
}

static void token_remember(struct sq *w, unsigned gen, const char *hash, int64_t id,
                           unsigned scopes)
{
	struct tok_ent *e = token_slot(w, hash);

	if (strlen(hash) >= sizeof(e->hash))
		return;
	pthread_mutex_lock(&w->tok_lock);
	if (gen != w->tok_gen) {
		pthread_mutex_unlock(&w->tok_lock);
		return;
	}
	memcpy(e->hash, hash, strlen(hash) + 1);
	e->id = id;
	e->scopes = scopes;
	e->until_ms = util_clock_mono_ns() / 1000000 + TOKEN_TTL_MS;
	pthread_mutex_unlock(&w->tok_lock);
}

static kiln_rc token_lookup(struct scheduler_store *base, const char *hash, int64_t *id,
                            unsigned *scopes, struct kiln_err *err)
{
	struct sq *w = (struct sq *)base, *s = reader(w);
	sqlite3_stmt *st;
	kiln_rc rc = KILN_EIO;
	unsigned gen;
	int r;

	if (token_cached(w, hash, id, scopes, &gen))
		return KILN_OK;
	pthread_mutex_lock(&s->lock);
	st = stmt(s, Q_TOKEN_LOOKUP, err);
	if (st) {
		bind_text(st, 1, hash);
		r = sqlite3_step(st);
		if (r == SQLITE_ROW) {
			*id = sqlite3_column_int64(st, 0);
			*scopes = (unsigned)sqlite3_column_int(st, 1);
			rc = KILN_OK;
			token_remember(w, gen, hash, *id, *scopes);
		} else {
			rc = r == SQLITE_DONE ? kiln_err_set(err, KILN_EAUTH, "invalid token")
			                      : db_err(s, err, "token lookup");
		}
		sqlite3_reset(st);
	}
	sq_unlock(s);
	return rc;
}

static kiln_rc tokens_list(struct scheduler_store *base, struct kiln_arena *a,
                           struct scheduler_token **out, size_t *n, struct kiln_err *err)
{
	struct sq *s = reader((struct sq *)base);
	struct scheduler_token *v = NULL, *t;
	size_t cap = 0;
	sqlite3_stmt *st;
	int r = SQLITE_ERROR;

	*n = 0;
	pthread_mutex_lock(&s->lock);
	st = stmt(s, Q_TOKENS, err);
	while (st && *n < 100000 && (r = sqlite3_step(st)) == SQLITE_ROW) {
		if (*n == cap) {
			cap = cap ? cap * 2 : 16;
			t = kiln_arena_array(a, cap, sizeof(*t));
			if (!t)
				break;
			if (*n)
				memcpy(t, v, *n * sizeof(*t));
			v = t;
		}
		t = &v[(*n)++];
		t->id = sqlite3_column_int64(st, 0);
		t->name = col_text(st, 1, a);
		t->scopes = (unsigned)sqlite3_column_int(st, 2);
		t->created_ms = sqlite3_column_int64(st, 3);
		t->revoked = sqlite3_column_int(st, 4) != 0;
	}
	if (st)
		sqlite3_reset(st);
	sq_unlock(s);
	*out = v;
	if (!st)
		return KILN_EIO;
	if (r != SQLITE_DONE && r != SQLITE_ROW)
		return db_err(s, err, "tokens");
	return kiln_arena_finish(a, err);
}

static kiln_rc token_revoke(struct scheduler_store *base, int64_t id, struct kiln_err *err)
{
	struct sq *s = (struct sq *)base;
	sqlite3_stmt *st;
	kiln_rc rc = KILN_EIO;

	pthread_mutex_lock(&s->lock);
	st = stmt(s, Q_TOKEN_REVOKE, err);
	if (st) {
		sqlite3_bind_int64(st, 1, id);
		rc = step_done(s, st, err, "revoke token");
		if (!rc && sqlite3_changes(s->db) == 0)
			rc = kiln_err_set(err, KILN_ENOTFOUND, "no token %lld", (long long)id);
	}
	sq_unlock(s);
	pthread_mutex_lock(&s->tok_lock);
	memset(s->tokens, 0, sizeof(s->tokens));
	s->tok_gen++;
	pthread_mutex_unlock(&s->tok_lock);
	return rc;
}

static kiln_rc counts(struct scheduler_store *base, struct kiln_arena *a,
                      struct scheduler_counts *out, struct kiln_err *err)
{
	struct sq *s = reader((struct sq *)base);
	sqlite3_stmt *st;
	size_t cap = 64;
	int r = SQLITE_ERROR;

	memset(out, 0, sizeof(*out));
	out->queued_arch = kiln_arena_array(a, cap, sizeof(*out->queued_arch));
	out->queued_n = kiln_arena_array(a, cap, sizeof(*out->queued_n));
	if (!out->queued_arch || !out->queued_n)
		return kiln_err_set(err, KILN_ENOMEM, "out of memory");
	pthread_mutex_lock(&s->lock);
	st = stmt(s, Q_COUNT_STATES, err);
	while (st && (r = sqlite3_step(st)) == SQLITE_ROW) {
		int state = sqlite3_column_int(st, 0);

		if (state >= 0 && state < SCHED_NSTATES)
			out->by_state[state] = sqlite3_column_int64(st, 1);
	}
	st = st && r == SQLITE_DONE ? stmt(s, Q_COUNT_QUEUED_ARCH, err) : NULL;
	while (st && out->nqueued < cap && (r = sqlite3_step(st)) == SQLITE_ROW) {
		out->queued_arch[out->nqueued] = col_text(st, 0, a);
		out->queued_n[out->nqueued++] = sqlite3_column_int64(st, 1);
	}
	st = st && (r == SQLITE_DONE || r == SQLITE_ROW) ? stmt(s, Q_COUNT_VERDICTS, err) : st;
	while (st && (r = sqlite3_step(st)) == SQLITE_ROW) {
		const unsigned char *v = sqlite3_column_text(st, 0);
		size_t i;

		for (i = 0; v && i < KILN_ARRAY_SIZE(out->verdicts); i++)
			if (!strcmp((const char *)v, scheduler_verdict_names[i]))
				out->verdicts[i] = sqlite3_column_int64(st, 1);
	}
	if (st)
		sqlite3_reset(st);
	sq_unlock(s);
	if (!st || (r != SQLITE_DONE && r != SQLITE_ROW))
		return st ? db_err(s, err, "counts") : KILN_EIO;
	return kiln_arena_finish(a, err);
}

/* ---------------------------------------------------------------------------------------- */
/* Reproducibility */

static kiln_rc reruns_add(struct scheduler_store *base, int64_t id, int64_t count,
                          const char *variations, struct kiln_err *err)
{
	struct sq *s = (struct sq *)base;
	sqlite3_stmt *st;
	kiln_rc rc = KILN_EIO;

	pthread_mutex_lock(&s->lock);
	st = stmt(s, Q_RERUNS_ADD, err);
	if (st) {
		sqlite3_bind_int64(st, 1, id);
		sqlite3_bind_int64(st, 2, count);
		bind_text(st, 3, variations);
		rc = step_done(s, st, err, "add reruns");
	}
	sq_unlock(s);
	return rc;
}

static kiln_rc reruns_list(struct scheduler_store *base, int64_t id, struct kiln_arena *a,
                           struct scheduler_rerun **out, size_t *n, struct kiln_err *err)
{
	struct sq *s = reader((struct sq *)base);
	struct scheduler_rerun *v = NULL, *t;
	size_t cap = 0;
	sqlite3_stmt *st;
	int r = SQLITE_ERROR;

	*n = 0;
	pthread_mutex_lock(&s->lock);
	st = stmt(s, Q_RERUNS, err);
	if (st)
		sqlite3_bind_int64(st, 1, id);
	while (st && *n < 1000 && (r = sqlite3_step(st)) == SQLITE_ROW) {
		if (*n == cap) {
			cap = cap ? cap * 2 : 8;
			t = kiln_arena_array(a, cap, sizeof(*t));
			if (!t)
				break;
			if (*n)
				memcpy(t, v, *n * sizeof(*t));
			v = t;
		}
		t = &v[(*n)++];
		t->job_id = sqlite3_column_int64(st, 0);
		t->n = sqlite3_column_int64(st, 1);
		t->rerun_job = sqlite3_column_int64(st, 2);
		t->variations = col_text(st, 3, a);
		t->original_worker = col_text(st, 4, a);
		t->verdict = col_text(st, 5, a);
		t->state = (enum scheduler_state)sqlite3_column_int(st, 6);
		t->worker = col_text(st, 7, a);
	}
	if (st)
		sqlite3_reset(st);
	sq_unlock(s);
	*out = v;
	if (!st)
		return KILN_EIO;
	if (r != SQLITE_DONE && r != SQLITE_ROW)
		return db_err(s, err, "reruns");
	return kiln_arena_finish(a, err);
}

static kiln_rc rerun_art_put(struct sq *s, int64_t id, int64_t n,
                             const struct scheduler_rerun_artifact *ra, struct kiln_err *err)
{
	sqlite3_stmt *st = stmt(s, Q_RERUN_ART_PUT, err);

	if (!st)
		return KILN_EIO;
	sqlite3_bind_int64(st, 1, id);
	sqlite3_bind_int64(st, 2, n);
	bind_text(st, 3, ra->name);
	bind_text(st, 4, ra->original_sha256);
	bind_text(st, 5, ra->rerun_sha256);
	bind_text(st, 6, ra->verdict);
	bind_text(st, 7, ra->diff);
	bind_text(st, 8, ra->text);
	bind_text(st, 9, ra->diffoscope_state);
	return step_done(s, st, err, "record a compared artifact");
}

/* The verdicts of a job's reruns rolled up into jobs.repro_verdict. */
static kiln_rc rollup_store(struct sq *s, int64_t id, const char **rollup, struct kiln_err *err)
{
	const char *v[1000];
	char *mem[1000];
	size_t n = 0, i;
	sqlite3_stmt *st = stmt(s, Q_RERUN_VERDICTS, err);
	const char *r;
	kiln_rc rc;

	if (!st)
		return KILN_EIO;
	sqlite3_bind_int64(st, 1, id);
	while (n < 1000 && sqlite3_step(st) == SQLITE_ROW) {
		const unsigned char *t = sqlite3_column_text(st, 0);

		mem[n] = kiln_strdup(t ? (const char *)t : "");
		v[n] = mem[n] ? mem[n] : "unknown";
		n++;
	}
	sqlite3_reset(st);
	r = scheduler_verdict_rollup(v, n);
	for (i = 0; i < n; i++)
		free(mem[i]);
	st = stmt(s, Q_REPRO_VERDICT, err);
	if (!st)
		return KILN_EIO;
	sqlite3_bind_int64(st, 1, id);
	bind_text(st, 2, r);
	rc = step_done(s, st, err, "record the verdict");
	if (!rc && rollup)
		*rollup = r;
	return rc;
}

static kiln_rc rerun_record(struct scheduler_store *base, int64_t id, int64_t n,
                            const char *verdict, const struct scheduler_rerun_artifact *arts,
                            size_t narts, int64_t now_ms, const char **rollup, struct kiln_err *err)
{
	struct sq *s = (struct sq *)base;
	sqlite3_stmt *st;
	size_t i;
	kiln_rc rc;

	rc = tx_begin(s, err);
	if (rc)
		return rc;
	st = stmt(s, Q_RERUN_ARTS_DEL, err);
	if (!st)
		return tx_end(s, KILN_EIO, err);
	sqlite3_bind_int64(st, 1, id);
	sqlite3_bind_int64(st, 2, n);
	rc = step_done(s, st, err, "clear compared artifacts");
	for (i = 0; !rc && i < narts; i++)
		rc = rerun_art_put(s, id, n, &arts[i], err);
	st = rc ? NULL : stmt(s, Q_RERUN_VERDICT, err);
	if (st) {
		sqlite3_bind_int64(st, 1, id);
		sqlite3_bind_int64(st, 2, n);
		bind_text(st, 3, verdict);
		sqlite3_bind_int64(st, 4, now_ms);
		rc = step_done(s, st, err, "record the rerun's verdict");
	} else if (!rc) {
		rc = KILN_EIO;
	}
	if (!rc)
		rc = rollup_store(s, id, rollup, err);
	return tx_end(s, rc, err);
}

static void read_rerun_art(sqlite3_stmt *st, struct kiln_arena *a,
                           struct scheduler_rerun_artifact *t)
{
	t->job_id = sqlite3_column_int64(st, 0);
	t->n = sqlite3_column_int64(st, 1);
	t->name = col_text(st, 2, a);
	t->original_sha256 = col_text(st, 3, a);
	t->rerun_sha256 = col_text(st, 4, a);
	t->verdict = col_text(st, 5, a);
	t->diff = col_text(st, 6, a);
	t->text = col_text(st, 7, a);
	t->diffoscope = sqlite3_column_type(st, 8) == SQLITE_NULL ? NULL : col_text(st, 8, a);
	t->diffoscope_state = col_text(st, 9, a);
}

static kiln_rc rerun_artifacts(struct scheduler_store *base, int64_t id, struct kiln_arena *a,
                               struct scheduler_rerun_artifact **out, size_t *n,
                               struct kiln_err *err)
{
	struct sq *s = reader((struct sq *)base);
	struct scheduler_rerun_artifact *v = NULL, *t;
	size_t cap = 0;
	sqlite3_stmt *st;
	int r = SQLITE_ERROR;

	*n = 0;
	pthread_mutex_lock(&s->lock);
	st = stmt(s, Q_RERUN_ARTS, err);
	if (st)
		sqlite3_bind_int64(st, 1, id);
	while (st && *n < 100000 && (r = sqlite3_step(st)) == SQLITE_ROW) {
		if (*n == cap) {
			cap = cap ? cap * 2 : 16;
			t = kiln_arena_array(a, cap, sizeof(*t));
			if (!t)
				break;
			if (*n)
				memcpy(t, v, *n * sizeof(*t));
			v = t;
		}
		read_rerun_art(st, a, &v[(*n)++]);
	}
	if (st)
		sqlite3_reset(st);
	sq_unlock(s);
	*out = v;
	if (!st)
		return KILN_EIO;
	if (r != SQLITE_DONE && r != SQLITE_ROW)
		return db_err(s, err, "compared artifacts");
	return kiln_arena_finish(a, err);
}

static kiln_rc diffoscope_next(struct scheduler_store *base, struct kiln_arena *a,
                               struct scheduler_rerun_artifact *out, struct kiln_err *err)
{
	struct sq *s = reader((struct sq *)base);
	sqlite3_stmt *st;
	kiln_rc rc = KILN_EIO;
	int r;

	pthread_mutex_lock(&s->lock);
	st = stmt(s, Q_DFS_NEXT, err);
	if (st) {
		r = sqlite3_step(st);
		if (r == SQLITE_ROW)
			read_rerun_art(st, a, out);
		rc = r == SQLITE_ROW    ? KILN_OK
		     : r == SQLITE_DONE ? KILN_ENOTFOUND
		                        : db_err(s, err, "diffoscope queue");
		sqlite3_reset(st);
	}
	sq_unlock(s);
	return rc ? rc : kiln_arena_finish(a, err);
}

static kiln_rc diffoscope_set(struct scheduler_store *base, int64_t id, int64_t n, const char *name,
                              const char *state, const char *output, struct kiln_err *err)
{
	struct sq *s = (struct sq *)base;
	sqlite3_stmt *st;
	kiln_rc rc = KILN_EIO;

	pthread_mutex_lock(&s->lock);
	st = stmt(s, Q_DFS_SET, err);
	if (st) {
		sqlite3_bind_int64(st, 1, id);
		sqlite3_bind_int64(st, 2, n);
		bind_text(st, 3, name);
		if (output)
			bind_text(st, 4, output);
		else
			sqlite3_bind_null(st, 4);
		bind_text(st, 5, state);
		rc = step_done(s, st, err, "record diffoscope's output");
	}
	sq_unlock(s);
	return rc;
}

static kiln_rc attestation_put(struct scheduler_store *base, int64_t id, const char *kind,
                               const char *envelope, int64_t now_ms, struct kiln_err *err)
{
	struct sq *s = (struct sq *)base;
	sqlite3_stmt *st;
	kiln_rc rc = KILN_EIO;

	pthread_mutex_lock(&s->lock);
	st = stmt(s, Q_ATT_PUT, err);
	if (st) {
		sqlite3_bind_int64(st, 1, id);
		bind_text(st, 2, kind);
		bind_text(st, 3, envelope);
		sqlite3_bind_int64(st, 4, now_ms);
		rc = step_done(s, st, err, "record an attestation");
	}
	sq_unlock(s);
	return rc;
}

static kiln_rc attestation_find(struct scheduler_store *base, const char *sha256, const char *kind,
                                struct kiln_arena *a, const char **out, struct kiln_err *err)
{
	struct sq *s = reader((struct sq *)base);
	sqlite3_stmt *st;
	kiln_rc rc = KILN_EIO;
	int r;

	*out = NULL;
	pthread_mutex_lock(&s->lock);
	st = stmt(s, Q_ATT_FIND, err);
	if (st) {
		bind_text(st, 1, sha256);
		bind_text(st, 2, kind);
		r = sqlite3_step(st);
		if (r == SQLITE_ROW)
			*out = col_text(st, 0, a);
		rc = r == SQLITE_ROW ? kiln_arena_finish(a, err)
		     : r == SQLITE_DONE
		         ? kiln_err_set(err, KILN_ENOTFOUND,
		                        "no %s attestation for a package with sha256 %s", kind,
		                        sha256)
		         : db_err(s, err, "attestation");
		sqlite3_reset(st);
	}
	sq_unlock(s);
	return rc;
}

/* Up to 10,000 job ids from a query taking (since_ms, limit), into an array from a; what
 * names the list in an error. */
static kiln_rc ids_since(struct scheduler_store *base, enum q id, int64_t since_ms,
                         struct kiln_arena *a, int64_t **out, size_t *n, const char *what,
                         struct kiln_err *err)
{
	struct sq *s = reader((struct sq *)base);
	size_t max = 10000;
	int64_t *v = kiln_arena_array(a, max, sizeof(*v));
	sqlite3_stmt *st;
	int r = SQLITE_ERROR;

	*n = 0;
	*out = v;
	if (!v)
		return kiln_err_set(err, KILN_ENOMEM, "out of memory");
	pthread_mutex_lock(&s->lock);
	st = stmt(s, id, err);
	if (st) {
		sqlite3_bind_int64(st, 1, since_ms);
		sqlite3_bind_int64(st, 2, (int64_t)max);
		while (*n < max && (r = sqlite3_step(st)) == SQLITE_ROW)
			v[(*n)++] = sqlite3_column_int64(st, 0);
		sqlite3_reset(st);
	}
	pthread_mutex_unlock(&s->lock); /* a read: the store version stays */
	if (!st)
		return KILN_EIO;
	if (r != SQLITE_DONE && r != SQLITE_ROW)
		return db_err(s, err, what);
	return KILN_OK;
}

static kiln_rc repro_undone(struct scheduler_store *base, int64_t since_ms, struct kiln_arena *a,
                            int64_t **out, size_t *n, struct kiln_err *err)
{
	return ids_since(base, Q_REPRO_UNDONE, since_ms, a, out, n,
	                 "unfinished reproducibility work", err);
}

static kiln_rc repro_verdict_set(struct scheduler_store *base, int64_t id, const char *verdict,
                                 struct kiln_err *err)
{
	struct sq *s = (struct sq *)base;
	sqlite3_stmt *st;
	kiln_rc rc = KILN_EIO;

	pthread_mutex_lock(&s->lock);
	st = stmt(s, Q_REPRO_VERDICT, err);
	if (st) {
		sqlite3_bind_int64(st, 1, id);
		bind_text(st, 2, verdict);
		rc = step_done(s, st, err, "record the verdict");
	}
	sq_unlock(s);
	return rc;
}

static kiln_rc job_inputs_set(struct scheduler_store *base, int64_t id, const char *request,
                              const char *manifest, const char *content_key, struct kiln_err *err)
{
	struct sq *s = (struct sq *)base;
	sqlite3_stmt *st;
	kiln_rc rc = KILN_EIO;

	pthread_mutex_lock(&s->lock);
	st = stmt(s, Q_JOB_INPUTS, err);
	if (st) {
		sqlite3_bind_int64(st, 1, id);
		bind_text(st, 2, request);
		bind_text(st, 3, manifest);
		bind_text(st, 4, content_key);
		rc = step_done(s, st, err, "record the job's inputs");
	}
	sq_unlock(s);
	return rc;
}

static kiln_rc rebuild_put(struct scheduler_store *base, int64_t id, const char *srpm_name,
                           const char *srpm_sha256, const char *published, int64_t now_ms,
                           struct kiln_err *err)
{
	struct sq *s = (struct sq *)base;
	sqlite3_stmt *st;
	kiln_rc rc = KILN_EIO;

	pthread_mutex_lock(&s->lock);
	st = stmt(s, Q_RB_PUT, err);
	if (st) {
		sqlite3_bind_int64(st, 1, id);
		bind_text(st, 2, srpm_name);
		bind_text(st, 3, srpm_sha256);
		bind_text(st, 4, published);
		sqlite3_bind_int64(st, 5, now_ms);
		rc = step_done(s, st, err, "record a rebuild");
	}
	sq_unlock(s);
	return rc;
}

static kiln_rc rebuild_get(struct scheduler_store *base, int64_t id, struct kiln_arena *a,
                           struct scheduler_rebuild *out, struct kiln_err *err)
{
	struct sq *s = reader((struct sq *)base);
	sqlite3_stmt *st;
	kiln_rc rc = KILN_EIO;
	int r;

	memset(out, 0, sizeof(*out));
	pthread_mutex_lock(&s->lock);
	st = stmt(s, Q_RB_GET, err);
	if (st) {
		sqlite3_bind_int64(st, 1, id);
		r = sqlite3_step(st);
		if (r == SQLITE_ROW) {
			out->job_id = sqlite3_column_int64(st, 0);
			out->srpm_name = col_text(st, 1, a);
			out->srpm_sha256 = col_text(st, 2, a);
			out->published = col_text(st, 3, a);
			out->verdict = col_text(st, 4, a);
			out->report = col_text(st, 5, a);
			out->text = col_text(st, 6, a);
			out->created_ms = sqlite3_column_int64(st, 7);
		}
		rc = r == SQLITE_ROW ? kiln_arena_finish(a, err)
		     : r == SQLITE_DONE
		         ? kiln_err_set(err, KILN_ENOTFOUND, "no rebuild %lld", (long long)id)
		         : db_err(s, err, "rebuild");
		sqlite3_reset(st);
	}
	sq_unlock(s);
	return rc;
}

static kiln_rc rebuild_record(struct scheduler_store *base, int64_t id, const char *verdict,
                              const char *report, const char *text, struct kiln_err *err)
{
	struct sq *s = (struct sq *)base;
	sqlite3_stmt *st;
	kiln_rc rc = KILN_EIO;

	pthread_mutex_lock(&s->lock);
	st = stmt(s, Q_RB_RECORD, err);
	if (st) {
		sqlite3_bind_int64(st, 1, id);
		bind_text(st, 2, verdict);
		bind_text(st, 3, report);
		bind_text(st, 4, text);
		rc = step_done(s, st, err, "record a rebuild's comparison");
	}
	sq_unlock(s);
	return rc;
}

static kiln_rc ping(struct scheduler_store *base, struct kiln_err *err)
{
	struct sq *s = reader((struct sq *)base);
	sqlite3_stmt *st;
	kiln_rc rc = KILN_EIO;

	pthread_mutex_lock(&s->lock);
	st = stmt(s, Q_PING, err);
	if (st) {
		rc = sqlite3_step(st) == SQLITE_ROW ? KILN_OK : db_err(s, err, "ping");
		sqlite3_reset(st);
	}
	sq_unlock(s);
	return rc;
}

/* ---------------------------------------------------------------------------------------- */
/* Opening and migrations */

static void sq_close(struct scheduler_store *base)
{
	struct sq *s = (struct sq *)base;
	size_t i;

	for (i = 0; i < NREADERS; i++)
		if (s->readers[i])
			sq_close(&s->readers[i]->base);
	for (i = 0; i < Q_COUNT; i++)
		sqlite3_finalize(s->st[i]);
	sqlite3_close(s->db);
	pthread_mutex_destroy(&s->lock);
	pthread_mutex_destroy(&s->tok_lock);
	free(s);
}

static uint64_t store_version(struct scheduler_store *base)
{
	return __atomic_load_n(&((struct sq *)base)->version, __ATOMIC_ACQUIRE);
}

/* ---------------------------------------------------------------------------------------- */
/* Publishing (publish.c) */

static kiln_rc repo_pkg_put(struct scheduler_store *base, const struct scheduler_repo_pkg *p,
                            struct kiln_err *err)
{
	struct sq *s = (struct sq *)base;
	sqlite3_stmt *st;
	kiln_rc rc = KILN_EIO;

	pthread_mutex_lock(&s->lock);
	st = stmt(s, Q_REPO_PKG_PUT, err);
	if (st) {
		bind_text(st, 1, p->repo);
		bind_text(st, 2, p->file);
		bind_text(st, 3, p->name);
		sqlite3_bind_int64(st, 4, p->epoch);
		bind_text(st, 5, p->version);
		bind_text(st, 6, p->release);
		bind_text(st, 7, p->arch);
		bind_text(st, 8, p->sha256);
		sqlite3_bind_int64(st, 9, p->size);
		sqlite3_bind_int64(st, 10, p->job_id);
		sqlite3_bind_int64(st, 11, p->buildtime);
		sqlite3_bind_int64(st, 12, p->published_ms);
		rc = step_done(s, st, err, "publish a package");
	}
	sq_unlock(s);
	return rc;
}

static kiln_rc repo_pkgs(struct scheduler_store *base, const char *repo, struct kiln_arena *a,
                         struct scheduler_repo_pkg **out, size_t *n, struct kiln_err *err)
{
	struct sq *s = reader((struct sq *)base);
	struct scheduler_repo_pkg *v = NULL, *t;
	size_t cap = 0;
	sqlite3_stmt *st;
	int r = SQLITE_ERROR;

	*n = 0;
	pthread_mutex_lock(&s->lock);
	st = stmt(s, repo ? Q_REPO_PKGS : Q_REPO_PKGS_ALL, err);
	if (st && repo)
		bind_text(st, 1, repo);
	while (st && *n < 1000000 && (r = sqlite3_step(st)) == SQLITE_ROW) {
		if (*n == cap) {
			cap = cap ? cap * 2 : 64;
			t = kiln_arena_array(a, cap, sizeof(*t));
			if (!t)
				break;
			if (*n)
				memcpy(t, v, *n * sizeof(*t));
			v = t;
		}
		t = &v[(*n)++];
		memset(t, 0, sizeof(*t));
		t->repo = col_text(st, 0, a);
		t->file = col_text(st, 1, a);
		t->name = col_text(st, 2, a);
		t->epoch = sqlite3_column_int64(st, 3);
		t->version = col_text(st, 4, a);
		t->release = col_text(st, 5, a);
		t->arch = col_text(st, 6, a);
		col_copy(st, 7, t->sha256, sizeof(t->sha256));
		t->size = sqlite3_column_int64(st, 8);
		t->job_id = sqlite3_column_int64(st, 9);
		t->buildtime = sqlite3_column_int64(st, 10);
		t->published_ms = sqlite3_column_int64(st, 11);
	}
	if (st)
		sqlite3_reset(st);
	pthread_mutex_unlock(&s->lock); /* a read: the store version stays */
	*out = v;
	if (!st)
		return KILN_EIO;
	if (r != SQLITE_DONE && r != SQLITE_ROW)
		return db_err(s, err, "repository packages");
	return kiln_arena_finish(a, err);
}

static kiln_rc repo_pkg_delete(struct scheduler_store *base, const char *repo, const char *file,
                               struct kiln_err *err)
{
	struct sq *s = (struct sq *)base;
	sqlite3_stmt *st;
	kiln_rc rc = KILN_EIO;

	pthread_mutex_lock(&s->lock);
	st = stmt(s, Q_REPO_PKG_DEL, err);
	if (st) {
		bind_text(st, 1, repo);
		bind_text(st, 2, file);
		rc = step_done(s, st, err, "remove a package");
		if (!rc && !sqlite3_changes(s->db))
			rc = kiln_err_set(err, KILN_ENOTFOUND, "repository %s has no %s", repo,
			                  file);
	}
	sq_unlock(s);
	return rc;
}

static kiln_rc repo_publish_mark(struct scheduler_store *base, int64_t job_id, const char *repo,
                                 const char *state, const char *message, int64_t now_ms,
                                 struct kiln_err *err)
{
	struct sq *s = (struct sq *)base;
	sqlite3_stmt *st;
	kiln_rc rc = KILN_EIO;

	pthread_mutex_lock(&s->lock);
	st = stmt(s, Q_REPO_MARK, err);
	if (st) {
		sqlite3_bind_int64(st, 1, job_id);
		bind_text(st, 2, repo);
		bind_text(st, 3, state);
		bind_text(st, 4, message);
		sqlite3_bind_int64(st, 5, now_ms);
		rc = step_done(s, st, err, "record a publishing decision");
	}
	sq_unlock(s);
	return rc;
}

static kiln_rc repo_publish_get(struct scheduler_store *base, int64_t job_id, struct kiln_arena *a,
                                const char **state, const char **message, struct kiln_err *err)
{
	struct sq *s = (struct sq *)base;
	sqlite3_stmt *st;
	kiln_rc rc = KILN_EIO;
	int r;

	pthread_mutex_lock(&s->lock);
	st = stmt(s, Q_REPO_DECISION, err);
	if (st) {
		sqlite3_bind_int64(st, 1, job_id);
		r = sqlite3_step(st);
		if (r == SQLITE_ROW) {
			*state = col_text(st, 0, a);
			*message = col_text(st, 1, a);
		}
		rc = r == SQLITE_ROW ? kiln_arena_finish(a, err)
		     : r == SQLITE_DONE
		         ? kiln_err_set(err, KILN_ENOTFOUND, "job %lld has no publishing decision",
		                        (long long)job_id)
		         : db_err(s, err, "publishing decision");
		sqlite3_reset(st);
	}
	pthread_mutex_unlock(&s->lock); /* a read: the store version stays */
	return rc;
}

static kiln_rc repo_unpublished(struct scheduler_store *base, int64_t since_ms,
                                struct kiln_arena *a, int64_t **out, size_t *n,
                                struct kiln_err *err)
{
	return ids_since(base, Q_REPO_UNPUB, since_ms, a, out, n, "jobs to publish", err);
}

static kiln_rc repo_state_put(struct scheduler_store *base, const char *name, int64_t revision,
                              int64_t published_ms, struct kiln_err *err)
{
	struct sq *s = (struct sq *)base;
	sqlite3_stmt *st;
	kiln_rc rc = KILN_EIO;

	pthread_mutex_lock(&s->lock);
	st = stmt(s, Q_REPO_STATE_PUT, err);
	if (st) {
		bind_text(st, 1, name);
		sqlite3_bind_int64(st, 2, revision);
		sqlite3_bind_int64(st, 3, published_ms);
		rc = step_done(s, st, err, "record a publish");
	}
	sq_unlock(s);
	return rc;
}

static kiln_rc repo_states(struct scheduler_store *base, struct kiln_arena *a,
                           struct scheduler_repo_state **out, size_t *n, struct kiln_err *err)
{
	struct sq *s = reader((struct sq *)base);
	struct scheduler_repo_state *v = NULL, *t;
	size_t cap = 0;
	sqlite3_stmt *st;
	int r = SQLITE_ERROR;

	*n = 0;
	pthread_mutex_lock(&s->lock);
	st = stmt(s, Q_REPO_STATES, err);
	while (st && *n < 100000 && (r = sqlite3_step(st)) == SQLITE_ROW) {
		if (*n == cap) {
			cap = cap ? cap * 2 : 16;
			t = kiln_arena_array(a, cap, sizeof(*t));
			if (!t)
				break;
			if (*n)
				memcpy(t, v, *n * sizeof(*t));
			v = t;
		}
		t = &v[(*n)++];
		t->name = col_text(st, 0, a);
		t->revision = sqlite3_column_int64(st, 1);
		t->published_ms = sqlite3_column_int64(st, 2);
	}
	if (st)
		sqlite3_reset(st);
	pthread_mutex_unlock(&s->lock); /* a read: the store version stays */
	*out = v;
	if (!st)
		return KILN_EIO;
	if (r != SQLITE_DONE && r != SQLITE_ROW)
		return db_err(s, err, "repositories");
	return kiln_arena_finish(a, err);
}

static const struct scheduler_store_ops sqlite_ops = {
    .name = "sqlite3",
    .close = sq_close,
    .job_insert = job_insert,
    .job_get = job_get,
    .job_list = job_list,
    .queue_position = queue_position,
    .lease_grant = lease_grant,
    .lease_touch = lease_touch,
    .lease_finish = lease_finish,
    .leases_expired = leases_expired,
    .job_cancel = job_cancel,
    .job_retry = job_retry,
    .attempts_list = attempts_list,
    .artifact_put = artifact_put,
    .artifacts_list = artifacts_list,
    .worker_seen = worker_seen,
    .workers_list = workers_list,
    .worker_owner = worker_owner,
    .worker_credential = worker_credential,
    .worker_credential_set = worker_credential_set,
    .artifact_owned = artifact_owned,
    .artifact_job = artifact_job,
    .token_insert = token_insert,
    .token_lookup = token_lookup,
    .tokens_list = tokens_list,
    .token_revoke = token_revoke,
    .counts = counts,
    .ping = ping,
    .reruns_add = reruns_add,
    .reruns_list = reruns_list,
    .rerun_record = rerun_record,
    .rerun_artifacts = rerun_artifacts,
    .diffoscope_next = diffoscope_next,
    .diffoscope_set = diffoscope_set,
    .attestation_put = attestation_put,
    .attestation_find = attestation_find,
    .repro_verdict_set = repro_verdict_set,
    .repro_undone = repro_undone,
    .rebuild_put = rebuild_put,
    .rebuild_get = rebuild_get,
    .rebuild_record = rebuild_record,
    .job_inputs_set = job_inputs_set,
    .version = store_version,
    .repo_pkg_put = repo_pkg_put,
    .repo_pkgs = repo_pkgs,
    .repo_pkg_delete = repo_pkg_delete,
    .repo_publish_mark = repo_publish_mark,
    .repo_publish_get = repo_publish_get,
    .repo_unpublished = repo_unpublished,
    .repo_state_put = repo_state_put,
    .repo_states = repo_states,
};

int scheduler_store_sqlite_version(void)
{
	return (int)KILN_ARRAY_SIZE(migrations);
}

static kiln_rc user_version(struct sq *s, int *v, struct kiln_err *err)
{
	sqlite3_stmt *st = NULL;

	if (sqlite3_prepare_v2(s->db, "PRAGMA user_version", -1, &st, NULL) != SQLITE_OK ||
	    sqlite3_step(st) != SQLITE_ROW) {
		sqlite3_finalize(st);
		return db_err(s, err, "schema version");
	}
	*v = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	return KILN_OK;
}

static kiln_rc migrate(struct sq *s, const char *path, struct kiln_err *err)
{
	char q[64];
	int v = 0, i;
	kiln_rc rc;

	rc = user_version(s, &v, err);
	if (rc)
		return rc;
	if (v > scheduler_store_sqlite_version())
		return kiln_err_set(err, KILN_EUNSUPP,
		                    "%s has schema version %d, newer than this "
		                    "kiln's %d",
		                    path, v, scheduler_store_sqlite_version());
	for (i = v; i < scheduler_store_sqlite_version(); i++) {
		rc = exec(s, "BEGIN IMMEDIATE", err);
		if (!rc)
			rc = exec(s, migrations[i], err);
		snprintf(q, sizeof(q), "PRAGMA user_version = %d", i + 1);
		if (!rc)
			rc = exec(s, q, err);
		if (!rc)
			rc = exec(s, "COMMIT", err);
		if (rc) {
			(void)exec(s, "ROLLBACK", NULL);
			kiln_err_wrap(err, "%s: migrating the schema to version %d", path, i + 1);
			return rc;
		}
	}
	return KILN_OK;
}

static kiln_rc readers_open(struct sq *s, const char *path, struct kiln_err *err)
{
	size_t i;

	for (i = 0; i < NREADERS; i++) {
		struct sq *r = kiln_calloc(1, sizeof(*r));

		if (!r)
			return kiln_err_set(err, KILN_ENOMEM, "out of memory");
		r->base.ops = s->base.ops;
		pthread_mutex_init(&r->lock, NULL);
		pthread_mutex_init(&r->tok_lock, NULL);
		s->readers[i] = r;
		if (sqlite3_open_v2(path, &r->db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX,
		                    NULL) != SQLITE_OK)
			return kiln_err_set(err, KILN_EIO, "cannot open the job store %s: %s", path,
			                    r->db ? sqlite3_errmsg(r->db) : "out of memory");
		sqlite3_busy_timeout(r->db, 5000);
	}
	return KILN_OK;
}

kiln_rc scheduler_store_open_sqlite(const char *path, struct scheduler_store **out,
                                    struct kiln_err *err)
{
	struct sq *s;
	kiln_rc rc;

	*out = NULL;
	if (util_dl_ready(&scheduler_libsqlite3_dl, err))
		return err && err->code ? err->code : KILN_ENOTFOUND;
	s = kiln_calloc(1, sizeof(*s));
	if (!s)
		return kiln_err_set(err, KILN_ENOMEM, "out of memory");
	s->base.ops = &sqlite_ops;
	pthread_mutex_init(&s->lock, NULL);
	pthread_mutex_init(&s->tok_lock, NULL);
	if (sqlite3_open_v2(path, &s->db,
	                    SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
	                    NULL) != SQLITE_OK) {
		rc = kiln_err_set(err, KILN_EIO, "cannot open the job store %s: %s", path,
		                  s->db ? sqlite3_errmsg(s->db) : "out of memory");
		goto fail;
	}
	sqlite3_busy_timeout(s->db, 5000);
	rc = exec(s, "PRAGMA journal_mode = WAL", err);
	if (!rc)
		rc = exec(s, "PRAGMA synchronous = NORMAL", err);
	if (!rc)
		rc = migrate(s, path, err);
	if (!rc)
		rc = readers_open(s, path, err);
	if (rc)
		goto fail;
	*out = &s->base;
	return KILN_OK;
fail:
	sq_close(&s->base);
	return rc;
}

void scheduler_store_close(struct scheduler_store *st)
{
	if (st)
		st->ops->close(st);
}
