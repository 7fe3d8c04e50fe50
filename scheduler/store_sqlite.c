/*
 * store_sqlite.c - the job store on sqlite3: WAL mode, a busy timeout, versioned schema
 * migrations (PRAGMA user_version), prepared statements cached per connection.
 *
 * This is the only file with SQL in it. One writer connection serves every write behind a
 * mutex (sqlite serialises writers anyway, and every call here is a handful of indexed
 * statements, so the lock is held for microseconds); reads go to a small pool of read-only
 * connections, which WAL runs beside the writer. Every write of an open store (the
 * migrations run before) goes through wr_begin/wr_end, which bump the store's version
 * (the job JSON cache compares it), every read through rd_begin/rd_end; statements take
 * their parameters and give their columns through tables (ARGS, struct rowmap).
 *
 * The scheduler's decisions are not made here: the store offers lease candidates (best
 * first: priority, then age) and takes the one the scheduler picked (lease.c), writes the
 * end of a lease its finish's decide() chose and the verdict roll-up with the rule its
 * caller passes (policy.c), and guards cancel and retry by the state they were decided
 * for. synchronous=NORMAL in WAL mode loses nothing when the process dies (a committed
 * transaction is in the WAL); only a power loss may drop the last transactions.
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
    /* 7 -> 8: forge webhooks (issue 26): every delivery and the answer it got, so a
     * redelivery gets the same; and the commit each hook job builds, for its statuses */
    "CREATE TABLE hook_deliveries(forge TEXT NOT NULL, delivery TEXT NOT NULL,"
    " event TEXT NOT NULL, project TEXT NOT NULL, received_ms INTEGER NOT NULL,"
    " result TEXT NOT NULL, PRIMARY KEY(forge, delivery));"
    "CREATE TABLE hook_jobs(job_id INTEGER PRIMARY KEY, forge TEXT NOT NULL,"
    " project TEXT NOT NULL, ref TEXT NOT NULL, url TEXT NOT NULL, sha TEXT NOT NULL,"
    " context TEXT NOT NULL);"
    "CREATE INDEX hook_jobs_ref ON hook_jobs(forge, project, ref);",
    /* 8 -> 9: [ci] the durable outbox (issue 26): commit statuses and outgoing webhook events,
     * delivered at least once in id order per target, and every attempt to deliver one */
    "CREATE TABLE outbox(id INTEGER PRIMARY KEY AUTOINCREMENT, kind TEXT NOT NULL,"
    " target TEXT NOT NULL, dedup TEXT NOT NULL UNIQUE, job_id INTEGER NOT NULL,"
    " body TEXT NOT NULL, created_ms INTEGER NOT NULL, state TEXT NOT NULL,"
    " attempts INTEGER NOT NULL DEFAULT 0, next_ms INTEGER NOT NULL DEFAULT 0,"
    " updated_ms INTEGER NOT NULL, last_status INTEGER NOT NULL DEFAULT 0,"
    " last_answer TEXT NOT NULL DEFAULT '');"
    "CREATE INDEX outbox_pending ON outbox(id) WHERE state = 'pending';"
    "CREATE INDEX outbox_target ON outbox(kind, target, id);"
    "CREATE TABLE outbox_attempts(item_id INTEGER NOT NULL, n INTEGER NOT NULL,"
    " at_ms INTEGER NOT NULL, status INTEGER NOT NULL, answer TEXT NOT NULL,"
    " PRIMARY KEY(item_id, n));",
    /* 9 -> 10: [ci] the HTTP status each webhook delivery was answered with (a delivery that
     * verifies but does not parse is kept with its 400), for redeliveries and the log */
    "ALTER TABLE hook_deliveries ADD COLUMN status INTEGER NOT NULL DEFAULT 200;"
    "CREATE INDEX hook_deliveries_received ON hook_deliveries(received_ms);",
    /* 10 -> 11: [projects] projects own jobs and tokens (issue 27); what a farm had goes into
     * "default" (id 1), whose repositories stay public as they were. grant_seq orders the
     * projects for fair share; the index lets the grant read each project's best jobs. */
    "CREATE TABLE projects(id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT NOT NULL UNIQUE,"
    " created_ms INTEGER NOT NULL, public_read INTEGER NOT NULL DEFAULT 0,"
    " max_running INTEGER NOT NULL DEFAULT 0, arch_caps TEXT NOT NULL DEFAULT '',"
    " grant_seq INTEGER NOT NULL DEFAULT 0, key_expires_ms INTEGER NOT NULL DEFAULT 0,"
    " roots TEXT NOT NULL DEFAULT '');"
    "INSERT INTO projects(id, name, created_ms, public_read)"
    " VALUES(1, 'default', CAST(strftime('%s', 'now') AS INTEGER) * 1000, 1);"
    "ALTER TABLE jobs ADD COLUMN project_id INTEGER NOT NULL DEFAULT 1;"
    "ALTER TABLE tokens ADD COLUMN project_id INTEGER NOT NULL DEFAULT 1;"
    "CREATE INDEX jobs_project_queue ON jobs(state, project_id, priority DESC, id);",
    /* 11 -> 12: [projects] the repositories a project owns; those not listed are default's */
    "CREATE TABLE project_repos(repo TEXT PRIMARY KEY, project_id INTEGER NOT NULL);",
    /* 12 -> 13: [batches] dependency-ordered batch builds (issue 28): a batch on one root; each member
     * job's place in the graph, the dependencies whose packages it still waits for and the
     * failed job it waits for (dep_failed); the graph's edges */
    "CREATE TABLE batches(id INTEGER PRIMARY KEY AUTOINCREMENT, token_id INTEGER NOT NULL,"
    " root TEXT NOT NULL, bootstrap TEXT NOT NULL, repository TEXT NOT NULL,"
    " publish_state TEXT NOT NULL DEFAULT '', publish_message TEXT NOT NULL DEFAULT '',"
    " created_ms INTEGER NOT NULL, updated_ms INTEGER NOT NULL, idem_key TEXT,"
    " request_key TEXT NOT NULL DEFAULT '', project_id INTEGER NOT NULL DEFAULT 1);"
    "CREATE UNIQUE INDEX batches_idem ON batches(token_id, idem_key) WHERE idem_key IS NOT NULL;"
    "CREATE TABLE batch_jobs(job_id INTEGER PRIMARY KEY, batch_id INTEGER NOT NULL,"
    " node INTEGER NOT NULL, level INTEGER NOT NULL, name TEXT NOT NULL,"
    " pending INTEGER NOT NULL, landed INTEGER NOT NULL DEFAULT 0,"
    " wait_on INTEGER NOT NULL DEFAULT 0);"
    "CREATE INDEX batch_jobs_batch ON batch_jobs(batch_id, node);"
    "CREATE INDEX batch_jobs_wait ON batch_jobs(wait_on) WHERE wait_on != 0;"
    "CREATE TABLE job_deps(job_id INTEGER NOT NULL, dep_id INTEGER NOT NULL,"
    " why TEXT NOT NULL, PRIMARY KEY(job_id, dep_id));"
    "CREATE INDEX job_deps_dep ON job_deps(dep_id);",
    /* 13 -> 14: the jobs' state indexes only where the lease path reads them (queued: the
     * candidates, a queue position; active: the reaper, the running counts). A full index
     * led by state had two of its pages written at every transition, in each of the two
     * that existed: a grant and its end rewrote ten index pages where they now write five
     * (the writer's commit time is most of a grant's). Counts and lists by state scan (an
     * index on state alone cost a fifth of the grants: bench/RESULTS.md). */
    "DROP INDEX jobs_queue;"
    "DROP INDEX jobs_project_queue;"
    "CREATE INDEX jobs_queued ON jobs(project_id, priority DESC, id) WHERE state = 0;"
    "CREATE INDEX jobs_active ON jobs(lease_expires_ms) WHERE state IN (1, 2);",
    /* 14 -> 15: the uploads of each job (a count of puts): a completion that checked and
     * signed the artifacts the scheduler kept from the uploads it took ends the lease only
     * if no other came since (lease_finish), so it need not read them again */
    "ALTER TABLE jobs ADD COLUMN uploads INTEGER NOT NULL DEFAULT 0;",
};

#define JOB_COLS                                                                                   \
	"id, state, priority, arch, tags, spec_name, request, manifest, content_key, sign_key,"    \
	" coalesce(idem_key, ''), token_id, created_ms, updated_ms, started_ms, finished_ms,"      \
	" not_before_ms, attempts, max_attempts, timeout_s, cancel_requested,"                     \
	" coalesce(lease_id, ''), generation, worker, lease_expires_ms, failure_class, message,"   \
	" reruns, rerun_of, rerun_n, avoid_worker, variations, repro_verdict, project_id,"         \
	" coalesce((SELECT p.name FROM projects p WHERE p.id = project_id), ''),"                  \
	" (EXISTS(SELECT 1 FROM batch_jobs b WHERE b.job_id ="                                     \
	" CASE WHEN rerun_of > 0 THEN rerun_of ELSE id END)),"                                     \
	" (EXISTS(SELECT 1 FROM rebuilds r WHERE r.job_id = id)), uploads"

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
	Q_JOB_UPLOADED,
	Q_ARTIFACTS,
	Q_ARTIFACTS_ALL,
	Q_WORKER_FULL,
	Q_WORKER_SEEN,
	Q_WORKERS,
	Q_WORKER_AUTH,
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
	Q_WORKERS_ACTIVE,
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
	Q_HOOK_DELIVERY_GET,
	Q_HOOK_DELIVERY_PUT,
	Q_HOOK_JOB_PUT,
	Q_HOOK_JOB_GET,
	Q_HOOK_JOB_LAST,
	/* [batches] */
	Q_BATCH_INSERT,
	Q_BATCH_BY_IDEM,
	Q_BATCH_JOB_INSERT,
	Q_BATCH_DEP_INSERT,
	Q_BATCH_GET,
	Q_BATCH_LIST,
	Q_BATCH_MEMBERS,
	Q_BATCH_MEMBER_OF,
	Q_BATCH_EDGES,
	Q_BATCH_LAND,
	Q_BATCH_PENDING_DEC,
	Q_BATCH_WAIT_SET,
	Q_BATCH_DEP_FAIL,
	Q_BATCH_RESUME_JOBS,
	Q_BATCH_RESUME_WAIT,
	Q_BATCH_PUBLISH,
	Q_BATCH_UNSETTLED,
	Q_HOOK_DELIVERIES,
	Q_OUTBOX_PUT,
	Q_OUTBOX_PENDING,
	Q_OUTBOX_ATTEMPT,
	Q_OUTBOX_MARK,
	Q_OUTBOX_LIST,
	Q_OUTBOX_ATTEMPTS,
	Q_OUTBOX_COUNTS,
	Q_OUTBOX_ENDS_MISSING,
	Q_OUTBOX_PRUNE_ATTEMPTS,
	Q_OUTBOX_PRUNE,
	Q_PROJECT_INSERT,
	Q_PROJECT_GET,
	Q_PROJECT_BY_NAME,
	Q_PROJECTS,
	Q_PROJECT_UPDATE,
	Q_PROJECT_ACTIVE,
	Q_PROJECT_DELETE,
	Q_PROJECT_TOKENS_REVOKE,
	Q_PROJECT_RUNNING,
	Q_PROJECT_GRANT,
	Q_ARTIFACT_IN_PROJECT,
	Q_COUNT_QUEUED_PROJECT,
	Q_REPO_OWNER_SET,
	Q_REPO_OWNER_DEFAULT,
	Q_REPO_OWNERS,
	Q_PROJECT_REPOS_FREE,
	Q_BEGIN,
	Q_COMMIT,
	Q_ROLLBACK,
	Q_TAKE_SAVEPOINT,
	Q_TAKE_RELEASE,
	Q_TAKE_ROLLBACK,
	Q_COUNT,
};

static const char *const sql[Q_COUNT] = {
    [Q_JOB_INSERT] = "INSERT INTO jobs(state, priority, arch, tags, spec_name, request, manifest,"
                     " content_key, sign_key, idem_key, token_id, created_ms, updated_ms,"
                     " max_attempts, timeout_s, reruns, rerun_of, rerun_n, avoid_worker,"
                     " variations, repro_verdict, project_id) VALUES(0,?1,?2,?3,?4,?5,?6,?7,?8,"
                     "?9,?10,?11,?11,?12,?13,?14,?15,?16,?17,?18,?19,?20)",
    [Q_JOB_BY_IDEM] = "SELECT id FROM jobs WHERE token_id = ?1 AND idem_key = ?2",
    [Q_JOB_GET] = "SELECT " JOB_COLS " FROM jobs WHERE id = ?1",
    [Q_JOB_LIST] = "SELECT " JOB_COLS " FROM jobs WHERE id < ?1"
                   " AND (?5 = 0 OR project_id = ?5)"
                   " AND instr(lower(spec_name), lower(?4)) > 0 ORDER BY id DESC LIMIT ?2",
    [Q_JOB_LIST_STATE] = "SELECT " JOB_COLS " FROM jobs WHERE id < ?1 AND state = ?3"
                         " AND (?5 = 0 OR project_id = ?5)"
                         " AND instr(lower(spec_name), lower(?4)) > 0"
                         " ORDER BY id DESC LIMIT ?2",
    [Q_QUEUE_AHEAD] = "SELECT count(*) FROM jobs WHERE state = 0 AND project_id = ?3 AND"
                      " (priority > ?1 OR (priority = ?1 AND id < ?2))",
    /* each project's best 64 through jobs_queued (a correlated LIMIT per project),
     * so one project's long queue cannot hide another's jobs from the grant */
    [Q_CANDIDATES] = "SELECT j.id, j.arch, j.tags, j.avoid_worker, j.project_id, j.priority,"
                     " p.grant_seq, p.max_running, p.arch_caps FROM projects p JOIN jobs j"
                     " ON j.id IN (SELECT x.id FROM jobs x WHERE x.state = 0"
                     " AND x.project_id = p.id AND x.not_before_ms <= ?1"
                     " AND (x.arch = '' OR instr(?2, ',' || x.arch || ',') > 0)"
                     /* [batches] a batch job waits for its dependencies' packages */
                     " AND NOT EXISTS(SELECT 1 FROM batch_jobs b WHERE b.job_id = x.id"
                     " AND b.pending > 0)"
                     " ORDER BY x.priority DESC, x.id ASC LIMIT 64)"
                     " ORDER BY p.grant_seq, p.id, j.priority DESC, j.id",
    [Q_LEASE_TAKE] = "UPDATE jobs SET state = 1, lease_id = ?2, generation = generation + 1,"
                     " worker = ?3, lease_expires_ms = ?4, attempts = attempts + 1,"
                     " started_ms = CASE WHEN started_ms = 0 THEN ?5 ELSE started_ms END,"
                     " updated_ms = ?5 WHERE id = ?1 AND state = 0 AND not_before_ms <= ?5",
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
    /* cancel and retry are guarded by the state they were decided for (lease.c) */
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
    [Q_JOB_UPLOADED] = "UPDATE jobs SET uploads = uploads + 1 WHERE id = ?1 RETURNING uploads",
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
    [Q_WORKER_AUTH] = "SELECT token_id, secret_hash, last_seen_ms FROM workers WHERE name = ?1",
    [Q_WORKER_CRED_SET] = "UPDATE workers SET secret_hash = ?2 WHERE name = ?1",
    [Q_ARTIFACT_JOB] = "SELECT job_id FROM artifacts WHERE sha256 = ?1 OR signed_sha256 = ?1"
                       " ORDER BY job_id LIMIT 1",
    [Q_ARTIFACT_IN_PROJECT] = "SELECT 1 FROM artifacts a JOIN jobs j ON j.id = a.job_id"
                              " WHERE (a.sha256 = ?1 OR a.signed_sha256 = ?1)"
                              " AND j.project_id = ?2 LIMIT 1",
    [Q_ARTIFACT_OWNED] = "SELECT 1 FROM artifacts a JOIN jobs j ON j.id = a.job_id"
                         " WHERE (a.sha256 = ?1 OR a.signed_sha256 = ?1) AND j.token_id = ?2"
                         " LIMIT 1",
    /* at most one write a second per worker: polls and heartbeats come often */
    [Q_WORKER_SEEN] = "UPDATE workers SET last_seen_ms = ?2, draining = ?3 WHERE name = ?1"
                      " AND (last_seen_ms < ?2 - 1000 OR draining != ?3)",
    [Q_WORKERS] = "SELECT w.name, w.arches, w.tags, w.slots, w.free_disk, w.kernel, w.version,"
                  " w.last_seen_ms, w.draining, (SELECT count(*) FROM jobs j WHERE"
                  " j.state IN (1, 2) AND j.worker = w.name) FROM workers w ORDER BY w.name",
    [Q_TOKEN_INSERT] = "INSERT INTO tokens(hash, scopes, name, created_ms, project_id)"
                       " VALUES(?1,?2,?3,?4,?5)",
    [Q_TOKEN_LOOKUP] = "SELECT id, scopes, project_id FROM tokens WHERE hash = ?1"
                       " AND revoked = 0",
    [Q_TOKENS] = "SELECT t.id, t.name, t.scopes, t.created_ms, t.revoked, t.project_id,"
                 " coalesce(p.name, '') FROM tokens t LEFT JOIN projects p"
                 " ON p.id = t.project_id ORDER BY t.id",
    [Q_TOKEN_REVOKE] = "UPDATE tokens SET revoked = 1 WHERE id = ?1",
    [Q_COUNT_STATES] = "SELECT state, count(*) FROM jobs GROUP BY state",
    [Q_PING] = "SELECT count(*) FROM tokens WHERE id = 1",
    [Q_COUNT_QUEUED_ARCH] = "SELECT arch, count(*) FROM jobs WHERE state = 0 GROUP BY arch"
                            " ORDER BY arch",
    [Q_WORKERS_ACTIVE] = "SELECT name, arches, tags FROM workers WHERE last_seen_ms >= ?1"
                         " AND draining = 0",
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
#define HOOK_DELIVERY_COLS "forge, delivery, event, project, received_ms, result, status"
    [Q_HOOK_DELIVERY_GET] = "SELECT " HOOK_DELIVERY_COLS " FROM hook_deliveries"
                            " WHERE forge = ?1 AND delivery = ?2",
    [Q_HOOK_DELIVERIES] = "SELECT " HOOK_DELIVERY_COLS " FROM hook_deliveries"
                          " WHERE (?1 = '' OR forge = ?1) ORDER BY received_ms DESC LIMIT ?2",
    [Q_HOOK_DELIVERY_PUT] =
        "INSERT OR IGNORE INTO hook_deliveries(forge, delivery, event,"
        " project, received_ms, result, status) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7)",
    [Q_HOOK_JOB_PUT] = "INSERT OR REPLACE INTO hook_jobs(job_id, forge, project, ref, url, sha,"
                       " context) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7)",
    [Q_HOOK_JOB_GET] = "SELECT job_id, forge, project, ref, url, sha, context FROM hook_jobs"
                       " WHERE job_id = ?1",
    [Q_HOOK_JOB_LAST] = "SELECT job_id, forge, project, ref, url, sha, context FROM hook_jobs"
                        " WHERE forge = ?1 AND project = ?2 AND ref = ?3"
                        " ORDER BY job_id DESC LIMIT 1",
#define OUTBOX_COLS                                                                                \
	"id, kind, target, dedup, job_id, body, created_ms, state, attempts, next_ms, updated_ms," \
	" last_status, last_answer"
    [Q_OUTBOX_PUT] = "INSERT OR IGNORE INTO outbox(kind, target, dedup, job_id, body, created_ms,"
                     " state, updated_ms) VALUES(?1, ?2, ?3, ?4, ?5, ?6, 'pending', ?6)",
    /* the oldest pending item of each target: a target with many cannot hide the others */
    [Q_OUTBOX_PENDING] = "SELECT " OUTBOX_COLS " FROM outbox WHERE id IN (SELECT min(id)"
                         " FROM outbox WHERE state = 'pending' GROUP BY kind, target)"
                         " ORDER BY id LIMIT 1000",
    [Q_OUTBOX_ATTEMPT] = "INSERT OR REPLACE INTO outbox_attempts(item_id, n, at_ms, status,"
                         " answer) VALUES(?1, ?2, ?3, ?4, ?5)",
    [Q_OUTBOX_MARK] = "UPDATE outbox SET state = ?2, attempts = ?3, next_ms = ?4,"
                      " updated_ms = ?5, last_status = ?6, last_answer = ?7 WHERE id = ?1",
    [Q_OUTBOX_LIST] = "SELECT " OUTBOX_COLS " FROM outbox WHERE kind = ?1 AND target = ?2"
                      " AND (?3 = 0 OR id < ?3) ORDER BY id DESC LIMIT ?4",
    [Q_OUTBOX_ATTEMPTS] = "SELECT item_id, n, at_ms, status, answer FROM outbox_attempts"
                          " WHERE item_id = ?1 ORDER BY n",
    [Q_OUTBOX_COUNTS] = "SELECT target, state, count(*) FROM outbox WHERE kind = ?1"
                        " GROUP BY target, state ORDER BY target, state",
    [Q_OUTBOX_PRUNE_ATTEMPTS] = "DELETE FROM outbox_attempts WHERE item_id IN (SELECT id FROM"
                                " outbox WHERE state != 'pending' AND updated_ms < ?1)",
    [Q_OUTBOX_PRUNE] = "DELETE FROM outbox WHERE state != 'pending' AND updated_ms < ?1",
    [Q_OUTBOX_ENDS_MISSING] =
        "SELECT id FROM jobs j WHERE finished_ms >= ?1 AND state >= 3"
        " AND (?3 = 0 OR EXISTS(SELECT 1 FROM hook_jobs h WHERE h.job_id = j.id))"
        " AND NOT EXISTS(SELECT 1 FROM outbox o"
        "  WHERE o.dedup = ?2 || j.id || ':end:' || j.attempts)"
        " ORDER BY id LIMIT ?4",
    [Q_COUNT_VERDICTS] = "SELECT repro_verdict, count(*) FROM jobs WHERE repro_verdict != ''"
                         " GROUP BY repro_verdict",
    [Q_JOB_INPUTS] = "UPDATE jobs SET request = ?2, manifest = ?3, content_key = ?4 WHERE id = ?1",
    /* [batches] */
    [Q_BATCH_INSERT] = "INSERT INTO batches(token_id, root, bootstrap, repository, created_ms,"
                       " updated_ms, idem_key, request_key, project_id)"
                       " VALUES(?1,?2,?3,?4,?5,?5,?6,?7,?8)",
    [Q_BATCH_BY_IDEM] = "SELECT id FROM batches WHERE token_id = ?1 AND idem_key = ?2",
    [Q_BATCH_JOB_INSERT] = "INSERT INTO batch_jobs(job_id, batch_id, node, level, name, pending)"
                           " VALUES(?1,?2,?3,?4,?5,?6)",
    [Q_BATCH_DEP_INSERT] = "INSERT INTO job_deps(job_id, dep_id, why) VALUES(?1,?2,?3)",
#define BATCH_COLS                                                                                 \
	"id, token_id, created_ms, updated_ms, root, bootstrap, repository, publish_state,"        \
	" publish_message, request_key, project_id"
    [Q_BATCH_GET] = "SELECT " BATCH_COLS " FROM batches WHERE id = ?1",
    [Q_BATCH_LIST] = "SELECT " BATCH_COLS " FROM batches WHERE id < ?1 ORDER BY id DESC"
                     " LIMIT ?2",
#define MEMBER_COLS                                                                                \
	"b.batch_id, b.job_id, b.node, b.level, b.pending, b.landed, b.wait_on, b.name, j.state,"  \
	" j.spec_name, j.message, j.reruns, j.repro_verdict FROM batch_jobs b JOIN jobs j"         \
	" ON j.id = b.job_id"
    [Q_BATCH_MEMBERS] = "SELECT " MEMBER_COLS " WHERE b.batch_id = ?1 ORDER BY b.node",
    [Q_BATCH_MEMBER_OF] = "SELECT " MEMBER_COLS " WHERE b.job_id = ?1",
    [Q_BATCH_EDGES] = "SELECT d.job_id, d.dep_id, d.why FROM job_deps d JOIN batch_jobs b"
                      " ON b.job_id = d.job_id WHERE b.batch_id = ?1 ORDER BY b.node, d.dep_id",
    [Q_BATCH_LAND] = "UPDATE batch_jobs SET landed = 1 WHERE job_id = ?1 AND landed = 0",
    [Q_BATCH_PENDING_DEC] = "UPDATE batch_jobs SET pending = pending - 1 WHERE job_id IN"
                            " (SELECT job_id FROM job_deps WHERE dep_id = ?1)",
    /* every queued job that waits for ?1, through any number of others */
    [Q_BATCH_WAIT_SET] = "WITH RECURSIVE d(id) AS (SELECT job_id FROM job_deps WHERE dep_id = ?1"
                         " UNION SELECT x.job_id FROM job_deps x JOIN d ON x.dep_id = d.id)"
                         " UPDATE batch_jobs SET wait_on = ?1 WHERE job_id IN (SELECT id FROM d)"
                         " AND job_id IN (SELECT id FROM jobs WHERE state = 0)",
    [Q_BATCH_DEP_FAIL] = "UPDATE jobs SET state = 6, failure_class = 'dependency', message = ?2,"
                         " finished_ms = ?3, updated_ms = ?3 WHERE state = 0 AND id IN"
                         " (SELECT job_id FROM batch_jobs WHERE wait_on = ?1)",
    [Q_BATCH_RESUME_JOBS] = "UPDATE jobs SET state = 0, failure_class = '', message = '',"
                            " finished_ms = 0, updated_ms = ?2 WHERE state = 6 AND id IN"
                            " (SELECT job_id FROM batch_jobs WHERE wait_on = ?1)",
    [Q_BATCH_RESUME_WAIT] = "UPDATE batch_jobs SET wait_on = 0 WHERE wait_on = ?1",
    [Q_BATCH_PUBLISH] = "UPDATE batches SET repository = ?2, publish_state = ?3,"
                        " publish_message = ?4, updated_ms = ?5 WHERE id = ?1",
    /* ends not followed through: succeeded and not landed, or failed or cancelled with a
     * dependent still queued */
    [Q_BATCH_UNSETTLED] = "SELECT b.job_id FROM batch_jobs b JOIN jobs j ON j.id = b.job_id"
                          " WHERE (j.state = 3 AND b.landed = 0) OR (j.state IN (4, 5) AND"
                          " EXISTS(SELECT 1 FROM job_deps d JOIN jobs x ON x.id = d.job_id"
                          " WHERE d.dep_id = b.job_id AND x.state = 0))"
                          " ORDER BY b.job_id LIMIT 10000",
#define PROJECT_COLS                                                                               \
	"id, name, created_ms, public_read, max_running, arch_caps, grant_seq, key_expires_ms,"    \
	" roots"
    [Q_PROJECT_INSERT] = "INSERT INTO projects(name, created_ms, public_read, max_running,"
                         " arch_caps, key_expires_ms, roots) VALUES(?1,?2,?3,?4,?5,?6,?7)",
    [Q_PROJECT_GET] = "SELECT " PROJECT_COLS " FROM projects WHERE id = ?1",
    [Q_PROJECT_BY_NAME] = "SELECT " PROJECT_COLS " FROM projects WHERE name = ?1",
    [Q_PROJECTS] = "SELECT " PROJECT_COLS " FROM projects ORDER BY name",
    [Q_PROJECT_UPDATE] = "UPDATE projects SET public_read = ?2, max_running = ?3,"
                         " arch_caps = ?4, key_expires_ms = ?5, roots = ?6 WHERE id = ?1",
    [Q_PROJECT_ACTIVE] = "SELECT count(*) FROM jobs WHERE state IN (0, 1, 2)"
                         " AND project_id = ?1",
    [Q_PROJECT_DELETE] = "DELETE FROM projects WHERE id = ?1",
    [Q_PROJECT_TOKENS_REVOKE] = "UPDATE tokens SET revoked = 1 WHERE project_id = ?1",
    [Q_PROJECT_RUNNING] = "SELECT project_id, arch, count(*) FROM jobs WHERE state IN (1, 2)"
                          " GROUP BY project_id, arch ORDER BY project_id, arch",
    /* the grant order: the project granted last goes to the back */
    /* a project already granted last (no other at or after its grant_seq) keeps its
     * place: the order is the same, and the row is not written (see store_pg.c) */
    [Q_PROJECT_GRANT] = "UPDATE projects SET grant_seq = (SELECT max(grant_seq) FROM projects)"
                        " + 1 WHERE id = (SELECT project_id FROM jobs WHERE id = ?1)"
                        " AND EXISTS(SELECT 1 FROM projects o WHERE o.id != projects.id"
                        " AND o.grant_seq >= projects.grant_seq)",
    [Q_REPO_OWNER_SET] = "INSERT OR REPLACE INTO project_repos(repo, project_id) VALUES(?1, ?2)",
    [Q_REPO_OWNER_DEFAULT] = "DELETE FROM project_repos WHERE repo = ?1",
    [Q_REPO_OWNERS] = "SELECT repo, project_id FROM project_repos ORDER BY repo",
    [Q_PROJECT_REPOS_FREE] = "DELETE FROM project_repos WHERE project_id = ?1",
    [Q_COUNT_QUEUED_PROJECT] = "SELECT p.name, count(*) FROM jobs j JOIN projects p"
                               " ON p.id = j.project_id WHERE j.state = 0 GROUP BY p.name"
                               " ORDER BY p.name",
    /* prepared once like the rest: sqlite3_exec would parse them on every transaction */
    [Q_BEGIN] = "BEGIN IMMEDIATE",
    [Q_COMMIT] = "COMMIT",
    [Q_ROLLBACK] = "ROLLBACK",
    /* a take inside a lease's end: undone alone when it fails, the end stands */
    [Q_TAKE_SAVEPOINT] = "SAVEPOINT take",
    [Q_TAKE_RELEASE] = "RELEASE take",
    [Q_TAKE_ROLLBACK] = "ROLLBACK TO take",
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
		int64_t id, until_ms, project_id;
		unsigned scopes;
	} tokens[TOKEN_SLOTS];
	unsigned tok_gen; /* bumped by each revoke: a lookup begun before it is not kept */
	uint64_t version; /* the writer's: bumped as each write lets go of the lock */
	pthread_mutex_t tok_lock;
	/* The writer's checkpointer: WAL frames copied into the database file from a thread
	 * and connection of its own every CHECKPOINT_MS, so the fsyncs of a checkpoint are
	 * off the write path (a commit that ran one held every writer for milliseconds). */
	sqlite3 *ck_db;
	pthread_t ck_th;
	pthread_mutex_t ck_lock;
	pthread_cond_t ck_cond;
	bool ck_running, ck_stop;
};

/* The connection for a read-only call, locked: the writer when it is idle (its page cache
 * is warm: a reader's is dropped whenever another connection has written, so after each
 * write a reader reads its pages again), else the first idle reader from a round-robin
 * start, else that start's (waited for). */
static struct sq *reader_lock(struct sq *s)
{
	unsigned i = __atomic_fetch_add(&s->next, 1, __ATOMIC_RELAXED), k;
	struct sq *c;

	if (!pthread_mutex_trylock(&s->lock))
		return s;
	for (k = 0; k < NREADERS; k++) {
		c = s->readers[(i + k) % NREADERS];
		if (c && !pthread_mutex_trylock(&c->lock))
			return c;
	}
	c = s->readers[i % NREADERS] ? s->readers[i % NREADERS] : s;
	pthread_mutex_lock(&c->lock);
	return c;
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

/* ---------------------------------------------------------------------------------------- */
/* Statements: parameters and columns from tables */

/* A statement's parameters, ?1, ?2, ... in order. */
enum arg_kind { ARG_INT, ARG_TEXT, ARG_TEXT_OR_NULL };
struct arg {
	enum arg_kind kind;
	int64_t i;
	const char *s; /* ARG_TEXT: NULL binds ""; ARG_TEXT_OR_NULL: NULL binds NULL */
};
#define I64(v)                                                                                     \
	{                                                                                          \
		ARG_INT, (int64_t)(v), NULL                                                        \
	}
#define TXT(v)                                                                                     \
	{                                                                                          \
		ARG_TEXT, 0, (v)                                                                   \
	}
#define TXT_OR_NULL(v)                                                                             \
	{                                                                                          \
		ARG_TEXT_OR_NULL, 0, (v)                                                           \
	}
#define ARGS(...)                                                                                  \
	(const struct arg[]){__VA_ARGS__}, KILN_ARRAY_SIZE(((const struct arg[]){__VA_ARGS__}))
#define NO_ARGS NULL, 0

/* A result column read into a member of a record. */
enum col_kind { COL_I64, COL_BOOL, COL_STATE, COL_UINT, COL_TEXT, COL_TEXT_OR_NULL, COL_COPY };
struct col {
	enum col_kind kind;
	size_t off;  /* of the member */
	size_t size; /* of the member (COL_COPY: of the char array) */
};
/* Column kind k (COL_k) read into member m of record type T. */
#define COL(k, T, m)                                                                               \
	{                                                                                          \
		COL_##k, offsetof(T, m), sizeof(((T *)0)->m)                                       \
	}

/* How rows become records: the columns in the statement's order, the record's size and
 * how many rows a list keeps at most. */
struct rowmap {
	const struct col *cols;
	size_t ncols, size, max;
};
#define ROWMAP(T, cols, max)                                                                       \
	{                                                                                          \
		cols, KILN_ARRAY_SIZE(cols), sizeof(T), max                                        \
	}

static void bind_args(sqlite3_stmt *st, const struct arg *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		int at = (int)i + 1;

		if (v[i].kind == ARG_INT)
			sqlite3_bind_int64(st, at, v[i].i);
		else if (v[i].s || v[i].kind == ARG_TEXT)
			sqlite3_bind_text(st, at, v[i].s ? v[i].s : "", -1, SQLITE_STATIC);
		else
			sqlite3_bind_null(st, at);
	}
}

/* The cached statement id with v bound; NULL (err set) when it cannot be prepared. */
static sqlite3_stmt *prep(struct sq *s, enum q id, const struct arg *v, size_t n,
                          struct kiln_err *err)
{
	sqlite3_stmt *st = stmt(s, id, err);

	if (st)
		bind_args(st, v, n);
	return st;
}

static const char *col_text(sqlite3_stmt *st, int i, struct kiln_arena *a)
{
	const unsigned char *t = sqlite3_column_text(st, i);
	const char *d = kiln_arena_strdup(a, t ? (const char *)t : "");

	return d ? d : "";
}

static void col_read(sqlite3_stmt *st, int i, const struct col *c, struct kiln_arena *a, char *rec)
{
	void *m = rec + c->off;
	const unsigned char *t;

	switch (c->kind) {
	case COL_I64:
		*(int64_t *)m = sqlite3_column_int64(st, i);
		break;
	case COL_BOOL:
		*(bool *)m = sqlite3_column_int(st, i) != 0;
		break;
	case COL_STATE:
		*(enum scheduler_state *)m = (enum scheduler_state)sqlite3_column_int(st, i);
		break;
	case COL_UINT:
		*(unsigned *)m = (unsigned)sqlite3_column_int(st, i);
		break;
	case COL_TEXT_OR_NULL:
	case COL_TEXT:
		if (c->kind == COL_TEXT_OR_NULL && sqlite3_column_type(st, i) == SQLITE_NULL)
			*(const char **)m = NULL;
		else
			*(const char **)m = col_text(st, i, a);
		break;
	case COL_COPY:
		t = sqlite3_column_text(st, i);
		snprintf(m, c->size, "%s", t ? (const char *)t : "");
		break;
	}
}

/* The current row into the record rec (zeroed first: members without a column are 0). */
static void row_read(sqlite3_stmt *st, const struct rowmap *m, struct kiln_arena *a, void *rec)
{
	size_t i;

	memset(rec, 0, m->size);
	for (i = 0; i < m->ncols; i++)
		col_read(st, (int)i, &m->cols[i], a, rec);
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

/* Statement id with v, which returns no rows; what names it in an error. */
static kiln_rc run(struct sq *s, enum q id, const struct arg *v, size_t n, const char *what,
                   struct kiln_err *err)
{
	sqlite3_stmt *st = prep(s, id, v, n, err);

	return st ? step_done(s, st, err, what) : KILN_EIO;
}

/* The first row of statement id into rec: KILN_ENOTFOUND (err untouched: the caller names
 * what is missing) when there is none. */
static kiln_rc one(struct sq *s, enum q id, const struct arg *v, size_t n, const struct rowmap *m,
                   struct kiln_arena *a, void *rec, const char *what, struct kiln_err *err)
{
	sqlite3_stmt *st = prep(s, id, v, n, err);
	int r;

	if (!st)
		return KILN_EIO;
	r = sqlite3_step(st);
	if (r == SQLITE_ROW)
		row_read(st, m, a, rec);
	sqlite3_reset(st);
	if (r == SQLITE_DONE)
		return KILN_ENOTFOUND;
	if (r != SQLITE_ROW)
		return db_err(s, err, what);
	return a ? kiln_arena_finish(a, err) : KILN_OK;
}

/* Grow the arena array *v of *cap records of size to hold one more (false: out of memory,
 * which the arena remembers). */
static bool grow(struct kiln_arena *a, void **v, size_t n, size_t *cap, size_t size)
{
	void *t;

	if (n < *cap)
		return true;
	t = kiln_arena_array(a, *cap ? *cap * 2 : 16, size);
	if (!t)
		return false;
	if (n)
		memcpy(t, *v, n * size);
	*v = t;
	*cap = *cap ? *cap * 2 : 16;
	return true;
}

/* Every row of statement id (m->max at most) as an arena array of records in *out. */
static kiln_rc rows(struct sq *s, enum q id, const struct arg *v, size_t nv, const struct rowmap *m,
                    struct kiln_arena *a, void **out, size_t *n, const char *what,
                    struct kiln_err *err)
{
	sqlite3_stmt *st = prep(s, id, v, nv, err);
	size_t cap = 0;
	int r = SQLITE_DONE;

	*out = NULL;
	*n = 0;
	if (!st)
		return KILN_EIO;
	while (*n < m->max && (r = sqlite3_step(st)) == SQLITE_ROW) {
		if (!grow(a, out, *n, &cap, m->size))
			break;
		row_read(st, m, a, (char *)*out + *n * m->size);
		(*n)++;
	}
	sqlite3_reset(st);
	if (r != SQLITE_DONE && r != SQLITE_ROW)
		return db_err(s, err, what);
	return kiln_arena_finish(a, err);
}

/* ---------------------------------------------------------------------------------------- */
/* Reads and writes: the only ways to take a connection's lock */

/* A reader's connection, locked. Reads never change the store's version. */
static struct sq *rd_begin(struct sq *w)
{
	return reader_lock(w);
}

static kiln_rc rd_end(struct sq *s, kiln_rc rc)
{
	pthread_mutex_unlock(&s->lock);
	return rc;
}

/* The writer, locked. wr_end bumps the store's version as it lets go: read caches (the job
 * JSON, scheduler/jobcache.c) compare it with the one they were built at, so every write
 * goes through this pair and none can forget to invalidate them. */
static void wr_begin(struct sq *w)
{
	pthread_mutex_lock(&w->lock);
}

static kiln_rc wr_end(struct sq *w, kiln_rc rc)
{
	__atomic_add_fetch(&w->version, 1, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&w->lock);
	return rc;
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

/* A write of several statements: wr_begin and BEGIN IMMEDIATE. */
static kiln_rc tx_begin(struct sq *w, struct kiln_err *err)
{
	wr_begin(w);
	if (tx_step(w, Q_BEGIN, err))
		return wr_end(w, KILN_EIO);
	return KILN_OK;
}

/* COMMIT when rc is KILN_OK, else ROLLBACK; then wr_end. */
static kiln_rc tx_end(struct sq *w, kiln_rc rc, struct kiln_err *err)
{
	if (rc == KILN_OK)
		rc = tx_step(w, Q_COMMIT, err);
	if (rc)
		(void)tx_step(w, Q_ROLLBACK, NULL);
	return wr_end(w, rc);
}

/* One statement as a write of its own. */
static kiln_rc write1(struct sq *w, enum q id, const struct arg *v, size_t n, const char *what,
                      struct kiln_err *err)
{
	wr_begin(w);
	return wr_end(w, run(w, id, v, n, what, err));
}

/* One statement as a write that must change a row: KILN_ENOTFOUND (err untouched) when it
 * changed none. */
static kiln_rc write1_changed(struct sq *w, enum q id, const struct arg *v, size_t n,
                              const char *what, struct kiln_err *err)
{
	kiln_rc rc;

	wr_begin(w);
	rc = run(w, id, v, n, what, err);
	if (!rc && !sqlite3_changes(w->db))
		rc = KILN_ENOTFOUND;
	return wr_end(w, rc);
}

/* One row as a read of its own (see one()). */
static kiln_rc read1(struct sq *w, enum q id, const struct arg *v, size_t n, const struct rowmap *m,
                     struct kiln_arena *a, void *rec, const char *what, struct kiln_err *err)
{
	struct sq *s = rd_begin(w);

	return rd_end(s, one(s, id, v, n, m, a, rec, what, err));
}

/* Rows as a read of their own (see rows()). */
static kiln_rc read_rows(struct sq *w, enum q id, const struct arg *v, size_t nv,
                         const struct rowmap *m, struct kiln_arena *a, void **out, size_t *n,
                         const char *what, struct kiln_err *err)
{
	struct sq *s = rd_begin(w);

	return rd_end(s, rows(s, id, v, nv, m, a, out, n, what, err));
}

/* ---------------------------------------------------------------------------------------- */
/* Records */

#define J struct scheduler_job
/* In JOB_COLS order. */
static const struct col job_cols[] = {
    COL(I64, J, id),
    COL(STATE, J, state),
    COL(I64, J, priority),
    COL(TEXT, J, arch),
    COL(TEXT, J, tags),
    COL(TEXT, J, spec_name),
    COL(TEXT, J, request),
    COL(TEXT, J, manifest),
    COL(COPY, J, content_key),
    COL(TEXT, J, sign_key),
    COL(TEXT, J, idem_key),
    COL(I64, J, token_id),
    COL(I64, J, created_ms),
    COL(I64, J, updated_ms),
    COL(I64, J, started_ms),
    COL(I64, J, finished_ms),
    COL(I64, J, not_before_ms),
    COL(I64, J, attempts),
    COL(I64, J, max_attempts),
    COL(I64, J, timeout_s),
    COL(BOOL, J, cancel_requested),
    COL(COPY, J, lease_id),
    COL(I64, J, generation),
    COL(TEXT, J, worker),
    COL(I64, J, lease_expires_ms),
    COL(TEXT, J, failure_class),
    COL(TEXT, J, message),
    COL(I64, J, reruns),
    COL(I64, J, rerun_of),
    COL(I64, J, rerun_n),
    COL(TEXT, J, avoid_worker),
    COL(TEXT, J, variations),
    COL(TEXT, J, repro_verdict),
    COL(I64, J, project_id),
    COL(TEXT, J, project),
    COL(BOOL, J, batch_member),
    COL(BOOL, J, rebuild),
    COL(I64, J, uploads),
};
#undef J
static const struct rowmap job_map = ROWMAP(struct scheduler_job, job_cols, 1024);

#define A struct scheduler_attempt
static const struct col attempt_cols[] = {
    COL(I64, A, job_id),         COL(I64, A, n),          COL(TEXT, A, worker),
    COL(COPY, A, lease_id),      COL(I64, A, generation), COL(TEXT, A, state),
    COL(TEXT, A, failure_class), COL(TEXT, A, message),   COL(I64, A, started_ms),
    COL(I64, A, ended_ms),
};
#undef A
static const struct rowmap attempt_map = ROWMAP(struct scheduler_attempt, attempt_cols, 100000);

#define A struct scheduler_artifact
static const struct col artifact_cols[] = {
    COL(I64, A, job_id),      COL(I64, A, attempt), COL(TEXT, A, name),
    COL(COPY, A, sha256),     COL(I64, A, size),    COL(COPY, A, signed_sha256),
    COL(I64, A, signed_size), COL(TEXT, A, kind),   COL(TEXT, A, arch),
};
#undef A
static const struct rowmap artifact_map = ROWMAP(struct scheduler_artifact, artifact_cols, 100000);

#define W struct scheduler_worker_info
static const struct col worker_cols[] = {
    COL(TEXT, W, name),     COL(TEXT, W, arches), COL(TEXT, W, tags),    COL(I64, W, slots),
    COL(I64, W, free_disk), COL(TEXT, W, kernel), COL(TEXT, W, version), COL(I64, W, last_seen_ms),
    COL(BOOL, W, draining), COL(I64, W, busy),
};
#undef W
static const struct rowmap worker_map = ROWMAP(struct scheduler_worker_info, worker_cols, 10000);

#define T struct scheduler_token
static const struct col token_cols[] = {
    COL(I64, T, id),       COL(TEXT, T, name),      COL(UINT, T, scopes),  COL(I64, T, created_ms),
    COL(BOOL, T, revoked), COL(I64, T, project_id), COL(TEXT, T, project),
};
/* Q_TOKEN_LOOKUP: id, scopes and project */
static const struct col token_lookup_cols[] = {COL(I64, T, id), COL(UINT, T, scopes),
                                               COL(I64, T, project_id)};
#undef T
static const struct rowmap token_map = ROWMAP(struct scheduler_token, token_cols, 100000);
static const struct rowmap token_lookup_map = ROWMAP(struct scheduler_token, token_lookup_cols, 1);

#define R struct scheduler_rerun
static const struct col rerun_cols[] = {
    COL(I64, R, job_id),           COL(I64, R, n),
    COL(I64, R, rerun_job),        COL(TEXT, R, variations),
    COL(TEXT, R, original_worker), COL(TEXT, R, verdict),
    COL(STATE, R, state),          COL(TEXT, R, worker),
};
#undef R
static const struct rowmap rerun_map = ROWMAP(struct scheduler_rerun, rerun_cols, 1000);

#define R struct scheduler_rerun_artifact
static const struct col rerun_art_cols[] = {
    COL(I64, R, job_id),
    COL(I64, R, n),
    COL(TEXT, R, name),
    COL(TEXT, R, original_sha256),
    COL(TEXT, R, rerun_sha256),
    COL(TEXT, R, verdict),
    COL(TEXT, R, diff),
    COL(TEXT, R, text),
    COL(TEXT_OR_NULL, R, diffoscope),
    COL(TEXT, R, diffoscope_state),
};
#undef R
static const struct rowmap rerun_art_map =
    ROWMAP(struct scheduler_rerun_artifact, rerun_art_cols, 100000);

#define B struct scheduler_rebuild
static const struct col rebuild_cols[] = {
    COL(I64, B, job_id),     COL(TEXT, B, srpm_name), COL(TEXT, B, srpm_sha256),
    COL(TEXT, B, published), COL(TEXT, B, verdict),   COL(TEXT, B, report),
    COL(TEXT, B, text),      COL(I64, B, created_ms),
};
#undef B
static const struct rowmap rebuild_map = ROWMAP(struct scheduler_rebuild, rebuild_cols, 1);

#define P struct scheduler_repo_pkg
static const struct col repo_pkg_cols[] = {
    COL(TEXT, P, repo),    COL(TEXT, P, file),    COL(TEXT, P, name),     COL(I64, P, epoch),
    COL(TEXT, P, version), COL(TEXT, P, release), COL(TEXT, P, arch),     COL(COPY, P, sha256),
    COL(I64, P, size),     COL(I64, P, job_id),   COL(I64, P, buildtime), COL(I64, P, published_ms),
};
#undef P
static const struct rowmap repo_pkg_map = ROWMAP(struct scheduler_repo_pkg, repo_pkg_cols, 1000000);

#define S struct scheduler_repo_state
static const struct col repo_state_cols[] = {
    COL(TEXT, S, name),
    COL(I64, S, revision),
    COL(I64, S, published_ms),
};
#undef S
static const struct rowmap repo_state_map =
    ROWMAP(struct scheduler_repo_state, repo_state_cols, 100000);

/* Single values: a row of one column read into a struct of one member. */
struct v_i64 {
	int64_t v;
};
static const struct col v_i64_cols[] = {COL(I64, struct v_i64, v)};
static const struct rowmap v_i64_map = ROWMAP(struct v_i64, v_i64_cols, 10000);

struct v_text {
	const char *v;
};
static const struct col v_text_cols[] = {COL(TEXT, struct v_text, v)};
static const struct rowmap v_text_map = ROWMAP(struct v_text, v_text_cols, 1000);

/* ---------------------------------------------------------------------------------------- */
/* Jobs */

static kiln_rc idem_lookup(struct sq *s, const struct scheduler_job *job, int64_t *id,
                           struct kiln_err *err)
{
	struct v_i64 r = {0};
	kiln_rc rc;

	rc = one(s, Q_JOB_BY_IDEM, ARGS(I64(job->token_id), TXT(job->idem_key)), &v_i64_map, NULL,
	         &r, "idempotency lookup", err);
	if (rc == KILN_ENOTFOUND)
		return KILN_OK;
	if (!rc) {
		*id = r.v;
		return KILN_EEXIST;
	}
	return rc;
}

static kiln_rc job_row_insert(struct sq *s, const struct scheduler_job *job, struct kiln_err *err)
{
	bool idem = job->idem_key && *job->idem_key;

	return run(s, Q_JOB_INSERT,
	           ARGS(I64(job->priority), TXT(job->arch), TXT(job->tags), TXT(job->spec_name),
	                TXT(job->request), TXT(job->manifest), TXT(job->content_key),
	                TXT(job->sign_key), TXT_OR_NULL(idem ? job->idem_key : NULL),
	                I64(job->token_id), I64(job->created_ms), I64(job->max_attempts),
	                I64(job->timeout_s), I64(job->reruns), I64(job->rerun_of),
	                I64(job->rerun_n), TXT(job->avoid_worker), TXT(job->variations),
	                TXT(job->reruns > 0 ? "pending" : ""),
	                I64(job->project_id > 0 ? job->project_id : SCHED_PROJECT_DEFAULT)),
	           "insert job", err);
}

/* A rerun: its row beside the original's, and the original's verdict pending. */
static kiln_rc rerun_row_insert(struct sq *s, const struct scheduler_job *job, int64_t id,
                                struct kiln_err *err)
{
	kiln_rc rc;

	rc = run(s, Q_RERUN_ROW,
	         ARGS(I64(job->rerun_of), I64(job->rerun_n), I64(id), TXT(job->variations),
	              TXT(job->avoid_worker), I64(job->created_ms)),
	         "record the rerun", err);
	if (!rc)
		rc = run(s, Q_REPRO_VERDICT, ARGS(I64(job->rerun_of), TXT("pending")),
		         "record the verdict", err);
	return rc;
}

static kiln_rc job_insert(struct scheduler_store *base, struct scheduler_job *job, int64_t *id,
                          struct kiln_err *err)
{
	struct sq *s = (struct sq *)base;
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
	}
	if (!rc)
		rc = job_row_insert(s, job, err);
	if (!rc)
		*id = sqlite3_last_insert_rowid(s->db);
	if (!rc && job->rerun_of)
		rc = rerun_row_insert(s, job, *id, err);
	return tx_end(s, rc, err);
}

static kiln_rc job_get_locked(struct sq *s, int64_t id, struct kiln_arena *a,
                              struct scheduler_job *out, struct kiln_err *err)
{
	kiln_rc rc = one(s, Q_JOB_GET, ARGS(I64(id)), &job_map, a, out, "read job", err);

	if (rc == KILN_ENOTFOUND)
		return kiln_err_set(err, KILN_ENOTFOUND, "no job %lld", (long long)id);
	return rc;
}

static kiln_rc job_get(struct scheduler_store *base, int64_t id, struct kiln_arena *a,
                       struct scheduler_job *out, struct kiln_err *err)
{
	struct sq *s = rd_begin((struct sq *)base);

	return rd_end(s, job_get_locked(s, id, a, out, err));
}

static kiln_rc job_list(struct scheduler_store *base, int64_t project_id, int state,
                        const char *name, int64_t before_id, int64_t limit, struct kiln_arena *a,
                        struct scheduler_job **out, size_t *n, struct kiln_err *err)
{
	struct rowmap m = job_map;
	void *v = NULL;
	kiln_rc rc;

	m.max = (size_t)limit;
	rc = read_rows((struct sq *)base, state < 0 ? Q_JOB_LIST : Q_JOB_LIST_STATE,
	               ARGS(I64(before_id > 0 ? before_id : INT64_MAX), I64(limit), I64(state),
	                    TXT(name), I64(project_id)),
	               &m, a, &v, n, "list jobs", err);
	*out = v;
	return rc;
}

static kiln_rc queue_position(struct scheduler_store *base, const struct scheduler_job *job,
                              int64_t *ahead, struct kiln_err *err)
{
	struct v_i64 r = {0};
	kiln_rc rc;

	rc = read1((struct sq *)base, Q_QUEUE_AHEAD,
	           ARGS(I64(job->priority), I64(job->id), I64(job->project_id)), &v_i64_map, NULL,
	           &r, "queue position", err);
	*ahead = rc ? 0 : r.v;
	return rc;
}

/* ---------------------------------------------------------------------------------------- */
/* Leases */

#define C struct scheduler_candidate
static const struct col cand_cols[] = {
    COL(I64, C, id),         COL(TEXT, C, arch),
    COL(TEXT, C, tags),      COL(TEXT, C, avoid_worker),
    COL(I64, C, project_id), COL(I64, C, priority),
    COL(I64, C, grant_seq),  COL(I64, C, max_running),
    COL(TEXT, C, arch_caps),
};
#undef C
/* 64 of each project's; past 64 projects with work queued, the first in the grant order */
static const struct rowmap cand_map = ROWMAP(struct scheduler_candidate, cand_cols, 4096);

static kiln_rc lease_candidates(struct scheduler_store *base, int64_t now_ms, const char *arches,
                                struct kiln_arena *a, struct scheduler_candidate **out, size_t *n,
                                struct kiln_err *err)
{
	void *v = NULL;
	kiln_rc rc;

	rc = read_rows((struct sq *)base, Q_CANDIDATES, ARGS(I64(now_ms), TXT(arches)), &cand_map,
	               a, &v, n, "lease candidates", err);
	*out = v;
	return rc;
}

/* lease_take's writes, inside the caller's transaction. */
static kiln_rc take_locked(struct sq *s, const int64_t *ids, size_t n,
                           const struct scheduler_lease_query *q, struct kiln_arena *a,
                           struct scheduler_job *out, struct kiln_err *err)
{
	int64_t id = 0;
	kiln_rc rc = KILN_OK;
	size_t k;

	for (k = 0; !rc && !id && k < n; k++) {
		rc = run(s, Q_LEASE_TAKE,
		         ARGS(I64(ids[k]), TXT(q->lease_id), TXT(q->worker),
		              I64(q->now_ms + q->ttl_ms), I64(q->now_ms)),
		         "lease a job", err);
		if (!rc && sqlite3_changes(s->db))
			id = ids[k];
	}
	if (!rc && !id)
		rc = kiln_err_set(err, KILN_ECONFLICT, "jobs %lld.. are queued no more",
		                  n ? (long long)ids[0] : 0LL);
	if (!rc)
		rc = run(s, Q_ATTEMPT_INSERT, ARGS(I64(id), I64(q->now_ms)), "record the attempt",
		         err);
	if (!rc)
		rc = run(s, Q_PROJECT_GRANT, ARGS(I64(id)), "record the project's grant", err);
	if (!rc)
		rc = job_get_locked(s, id, a, out, err);
	return rc;
}

static kiln_rc lease_take(struct scheduler_store *base, const int64_t *ids, size_t n,
                          const struct scheduler_lease_query *q, struct kiln_arena *a,
                          struct scheduler_job *out, struct kiln_err *err)
{
	struct sq *s = (struct sq *)base;
	kiln_rc rc;

	rc = tx_begin(s, err);
	if (rc)
		return rc;
	return tx_end(s, take_locked(s, ids, n, q, a, out, err), err);
}

/* The take that goes with a lease's end, once the end is written in the same transaction:
 * in a savepoint, so a take that fails writes nothing and the end stands. */
static void take_with_end(struct sq *s, struct scheduler_take *t)
{
	t->tried = true;
	t->rc = tx_step(s, Q_TAKE_SAVEPOINT, &t->err);
	if (!t->rc)
		t->rc = take_locked(s, t->ids, t->n, t->q, t->a, t->out, &t->err);
	if (t->rc)
		(void)tx_step(s, Q_TAKE_ROLLBACK, NULL);
	(void)tx_step(s, Q_TAKE_RELEASE, NULL);
}

/* The job a lease holds, or why it does not. */
static kiln_rc lease_lookup(struct sq *s, const char *lease_id, int64_t generation,
                            struct kiln_arena *a, struct scheduler_job *out, struct kiln_err *err)
{
	struct v_i64 att = {0};
	kiln_rc rc;

	rc = one(s, Q_JOB_BY_LEASE, ARGS(TXT(lease_id)), &job_map, a, out, "find lease", err);
	if (!rc && out->generation == generation && scheduler_state_active(out->state))
		return KILN_OK;
	if (!rc)
		return kiln_err_set(err, KILN_ECONFLICT,
		                    "lease %s: generation %lld is stale (now %lld)", lease_id,
		                    (long long)generation, (long long)out->generation);
	if (rc != KILN_ENOTFOUND)
		return rc;
	rc = one(s, Q_ATTEMPT_BY_LEASE, ARGS(TXT(lease_id)), &v_i64_map, NULL, &att, "find lease",
	         err);
	if (!rc)
		return kiln_err_set(err, KILN_ECONFLICT,
		                    "lease %s is no longer held (it expired or the job ended)",
		                    lease_id);
	if (rc != KILN_ENOTFOUND)
		return rc;
	return kiln_err_set(err, KILN_ENOTFOUND, "no lease %s", lease_id);
}

static kiln_rc lease_touch(struct scheduler_store *base, const char *lease_id, int64_t generation,
                           int64_t now_ms, int64_t ttl_ms, struct kiln_arena *a,
                           struct scheduler_job *out, struct kiln_err *err)
{
	struct sq *s = (struct sq *)base, *r;
	kiln_rc rc;

	/* a check only (a completion's, a log's): a read, off the one writer; the finish
	 * that may follow looks the lease up again inside its own write */
	if (ttl_ms <= 0) {
		r = rd_begin(s);
		return rd_end(r, lease_lookup(r, lease_id, generation, a, out, err));
	}
	rc = tx_begin(s, err);
	if (rc)
		return rc;
	rc = lease_lookup(s, lease_id, generation, a, out, err);
	if (rc)
		return tx_end(s, rc, err);
	rc = run(s, Q_LEASE_RENEW, ARGS(I64(out->id), I64(now_ms + ttl_ms), I64(now_ms)),
	         "renew lease", err);
	if (!rc && out->state == SCHED_LEASED)
		rc = run(s, Q_ATTEMPT_STATE,
		         ARGS(I64(out->id), I64(out->attempts), TXT("building"), TXT(""), TXT(""),
		              I64(0)),
		         "attempt state", err);
	out->state = SCHED_BUILDING;
	out->lease_expires_ms = now_ms + ttl_ms;
	return tx_end(s, rc, err);
}

/* Write the end f->decide chose for job j: its attempt's row, then the job's. */
static kiln_rc job_end_write(struct sq *s, const struct scheduler_job *j,
                             const struct scheduler_finish *f, struct kiln_err *err)
{
	struct scheduler_job_end e;
	kiln_rc rc;

	f->decide(j, f, &e);
	rc = run(s, Q_ATTEMPT_STATE,
	         ARGS(I64(j->id), I64(j->attempts), TXT(e.attempt_state), TXT(f->failure_class),
	              TXT(f->message), I64(f->now_ms)),
	         "attempt state", err);
	if (!rc && e.requeue)
		rc = run(s, Q_JOB_REQUEUE,
		         ARGS(I64(j->id), I64(e.not_before_ms), I64(f->now_ms),
		              TXT(e.failure_class), TXT(e.message), I64(e.attempts_back)),
		         "end the job's lease", err);
	else if (!rc)
		rc = run(s, Q_JOB_END,
		         ARGS(I64(j->id), I64(e.state), TXT(e.failure_class), TXT(e.message),
		              I64(f->now_ms)),
		         "end the job's lease", err);
	if (!rc && f->requeued)
		*f->requeued = e.requeue;
	return rc;
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
	if (!rc && f->uploads_known && j.uploads != f->uploads) {
		*f->uploads_changed = true;
		rc = kiln_err_set(
		    err, KILN_ECONFLICT,
		    "lease %s: artifacts were uploaded since its completion was decided", lease_id);
	}
	if (!rc)
		rc = job_end_write(s, &j, f, err);
	if (!rc && f->ended)
		rc = job_get_locked(s, j.id, f->ended_arena, f->ended, err);
	if (!rc && f->take)
		take_with_end(s, f->take);
	rc = tx_end(s, rc, err);
	if (rc && f->take)
		f->take->tried = false; /* not committed: neither was written */
out:
	kiln_arena_release(&a);
	return rc;
}

static kiln_rc leases_expired(struct scheduler_store *base, int64_t now_ms, struct kiln_arena *a,
                              struct scheduler_job **out, size_t *n, struct kiln_err *err)
{
	void *v = NULL;
	kiln_rc rc;

	rc = read_rows((struct sq *)base, Q_EXPIRED, ARGS(I64(now_ms)), &job_map, a, &v, n,
	               "list jobs", err);
	*out = v;
	return rc;
}

static kiln_rc job_cancel(struct scheduler_store *base, int64_t id, int64_t now_ms, bool queued,
                          struct kiln_err *err)
{
	kiln_rc rc;

	rc = write1_changed((struct sq *)base, queued ? Q_CANCEL_QUEUED : Q_CANCEL_ACTIVE,
	                    ARGS(I64(id), I64(now_ms)), "cancel", err);
	if (rc == KILN_ENOTFOUND)
		return kiln_err_set(err, KILN_ECONFLICT, "job %lld is %s no more", (long long)id,
		                    queued ? "queued" : "running");
	return rc;
}

static kiln_rc job_retry(struct scheduler_store *base, int64_t id, int64_t now_ms, int64_t budget,
                         struct kiln_err *err)
{
	kiln_rc rc;

	rc = write1_changed((struct sq *)base, Q_RETRY, ARGS(I64(id), I64(now_ms), I64(budget)),
	                    "retry", err);
	if (rc == KILN_ENOTFOUND)
		return kiln_err_set(err, KILN_ECONFLICT,
		                    "job %lld is neither failed nor cancelled (any more)",
		                    (long long)id);
	return rc;
}

/* ---------------------------------------------------------------------------------------- */
/* Attempts and artifacts */

static kiln_rc attempts_list(struct scheduler_store *base, int64_t job_id, struct kiln_arena *a,
                             struct scheduler_attempt **out, size_t *n, struct kiln_err *err)
{
	void *v = NULL;
	kiln_rc rc;

	rc = read_rows((struct sq *)base, Q_ATTEMPTS, ARGS(I64(job_id)), &attempt_map, a, &v, n,
	               "attempts", err);
	*out = v;
	return rc;
}

/* Q_ARTIFACT_PUT's parameters (and the upload's) of artifact a. */
#define ART_ARGS(a)                                                                                \
	ARGS(I64((a)->job_id), I64((a)->attempt), TXT((a)->name), TXT((a)->sha256),                \
	     I64((a)->size), TXT((a)->signed_sha256), I64((a)->signed_size), TXT((a)->kind),       \
	     TXT((a)->arch))

static kiln_rc artifact_put(struct scheduler_store *base, const struct scheduler_artifact *art,
                            int64_t *uploads, struct kiln_err *err)
{
	struct sq *w = (struct sq *)base;
	struct v_i64 up = {0};
	kiln_rc rc;

	if (!uploads)
		return write1(w, Q_ARTIFACT_PUT, ART_ARGS(art), "record artifact", err);
	rc = tx_begin(w, err);
	if (rc)
		return rc;
	rc = run(w, Q_ARTIFACT_PUT, ART_ARGS(art), "record artifact", err);
	if (!rc)
		rc = one(w, Q_JOB_UPLOADED, ARGS(I64(art->job_id)), &v_i64_map, NULL, &up,
		         "count the upload", err);
	if (rc == KILN_ENOTFOUND)
		rc = kiln_err_set(err, KILN_ENOTFOUND, "no job %lld", (long long)art->job_id);
	*uploads = up.v;
	return tx_end(w, rc, err);
}

static kiln_rc artifacts_list(struct scheduler_store *base, int64_t job_id, int64_t attempt,
                              struct kiln_arena *a, struct scheduler_artifact **out, size_t *n,
                              struct kiln_err *err)
{
	void *v = NULL;
	kiln_rc rc;

	rc = read_rows((struct sq *)base, attempt < 0 ? Q_ARTIFACTS_ALL : Q_ARTIFACTS,
	               ARGS(I64(job_id), I64(attempt)), &artifact_map, a, &v, n, "artifacts", err);
	*out = v;
	return rc;
}

/* ---------------------------------------------------------------------------------------- */
/* Workers and tokens */

static kiln_rc worker_seen(struct scheduler_store *base, const struct scheduler_worker_info *w,
                           bool full, struct kiln_err *err)
{
	if (!full)
		return write1((struct sq *)base, Q_WORKER_SEEN,
		              ARGS(TXT(w->name), I64(w->last_seen_ms), I64(w->draining)),
		              "record worker", err);
	return write1((struct sq *)base, Q_WORKER_FULL,
	              ARGS(TXT(w->name), TXT(w->arches), TXT(w->tags), I64(w->slots),
	                   I64(w->free_disk), TXT(w->kernel), TXT(w->version), I64(w->last_seen_ms),
	                   I64(w->draining), I64(w->token_id)),
	              "record worker", err);
}

#define W struct scheduler_worker_auth
static const struct col worker_auth_cols[] = {COL(I64, W, token_id), COL(COPY, W, hash),
                                              COL(I64, W, last_seen_ms)};
#undef W
static const struct rowmap worker_auth_map =
    ROWMAP(struct scheduler_worker_auth, worker_auth_cols, 1);

static kiln_rc worker_auth(struct scheduler_store *base, const char *name,
                           struct scheduler_worker_auth *out, struct kiln_err *err)
{
	kiln_rc rc;

	memset(out, 0, sizeof(*out));
	rc = read1((struct sq *)base, Q_WORKER_AUTH, ARGS(TXT(name)), &worker_auth_map, NULL, out,
	           "worker", err);
	if (rc == KILN_ENOTFOUND)
		return kiln_err_set(err, KILN_ENOTFOUND, "no worker '%s'", name);
	return rc;
}

static kiln_rc worker_credential_set(struct scheduler_store *base, const char *name,
                                     const char *hash, struct kiln_err *err)
{
	return write1((struct sq *)base, Q_WORKER_CRED_SET, ARGS(TXT(name), TXT(hash)),
	              "bind worker credential", err);
}

static kiln_rc artifact_owned(struct scheduler_store *base, const char *sha256, int64_t token_id,
                              struct kiln_err *err)
{
	struct v_i64 r = {0};
	kiln_rc rc;

	rc = read1((struct sq *)base, Q_ARTIFACT_OWNED, ARGS(TXT(sha256), I64(token_id)),
	           &v_i64_map, NULL, &r, "artifact owner", err);
	if (rc == KILN_ENOTFOUND)
		return kiln_err_set(err, KILN_ENOTFOUND, "no artifact %.64s", sha256);
	return rc;
}

static kiln_rc artifact_job(struct scheduler_store *base, const char *sha256, int64_t *job_id,
                            struct kiln_err *err)
{
	struct v_i64 r = {0};
	kiln_rc rc;

	rc = read1((struct sq *)base, Q_ARTIFACT_JOB, ARGS(TXT(sha256)), &v_i64_map, NULL, &r,
	           "artifact's job", err);
	if (rc == KILN_ENOTFOUND)
		return kiln_err_set(err, KILN_ENOTFOUND, "no artifact %.64s", sha256);
	if (!rc)
		*job_id = r.v;
	return rc;
}

static kiln_rc workers_list(struct scheduler_store *base, struct kiln_arena *a,
                            struct scheduler_worker_info **out, size_t *n, struct kiln_err *err)
{
	void *v = NULL;
	kiln_rc rc;

	rc =
	    read_rows((struct sq *)base, Q_WORKERS, NO_ARGS, &worker_map, a, &v, n, "workers", err);
	*out = v;
	return rc;
}

#define W struct scheduler_worker_info
static const struct col worker_active_cols[] = {COL(TEXT, W, name), COL(TEXT, W, arches),
                                                COL(TEXT, W, tags)};
#undef W
static const struct rowmap worker_active_map =
    ROWMAP(struct scheduler_worker_info, worker_active_cols, 10000);

static kiln_rc workers_active(struct scheduler_store *base, int64_t since_ms, struct kiln_arena *a,
                              struct scheduler_worker_info **out, size_t *n, struct kiln_err *err)
{
	void *v = NULL;
	kiln_rc rc;

	rc = read_rows((struct sq *)base, Q_WORKERS_ACTIVE, ARGS(I64(since_ms)), &worker_active_map,
	               a, &v, n, "active workers", err);
	*out = v;
	return rc;
}

static kiln_rc token_insert(struct scheduler_store *base, const char *hash, unsigned scopes,
                            const char *name, int64_t project_id, int64_t now_ms, int64_t *id,
                            struct kiln_err *err)
{
	struct sq *s = (struct sq *)base;
	kiln_rc rc;

	wr_begin(s);
	rc = run(s, Q_TOKEN_INSERT,
	         ARGS(TXT(hash), I64(scopes), TXT(name), I64(now_ms), I64(project_id)),
	         "insert token", err);
	if (!rc)
		*id = sqlite3_last_insert_rowid(s->db);
	return wr_end(s, rc);
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
                         int64_t *project_id, unsigned *gen)
{
	struct tok_ent *e = token_slot(w, hash);
	bool hit;

	pthread_mutex_lock(&w->tok_lock);
	hit = !strcmp(e->hash, hash) && e->until_ms > util_clock_mono_ns() / 1000000;
	if (hit)
		*id = e->id, *scopes = e->scopes, *project_id = e->project_id;
	*gen = w->tok_gen;
	pthread_mutex_unlock(&w->tok_lock);
	return hit;
}

static void token_remember(struct sq *w, unsigned gen, const char *hash,
                           const struct scheduler_token *t)
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
	e->id = t->id;
	e->scopes = t->scopes;
	e->project_id = t->project_id;
	e->until_ms = util_clock_mono_ns() / 1000000 + TOKEN_TTL_MS;
	pthread_mutex_unlock(&w->tok_lock);
}

static kiln_rc token_lookup(struct scheduler_store *base, const char *hash, int64_t *id,
                            unsigned *scopes, int64_t *project_id, struct kiln_err *err)
{
	struct sq *w = (struct sq *)base;
	struct scheduler_token t = {0};
	unsigned gen;
	kiln_rc rc;

	if (token_cached(w, hash, id, scopes, project_id, &gen))
		return KILN_OK;
	rc = read1(w, Q_TOKEN_LOOKUP, ARGS(TXT(hash)), &token_lookup_map, NULL, &t, "token lookup",
	           err);
	if (rc == KILN_ENOTFOUND)
		return kiln_err_set(err, KILN_EAUTH, "invalid token");
	if (rc)
		return rc;
	*id = t.id;
	*scopes = t.scopes;
	*project_id = t.project_id;
	token_remember(w, gen, hash, &t);
	return KILN_OK;
}

static kiln_rc tokens_list(struct scheduler_store *base, struct kiln_arena *a,
                           struct scheduler_token **out, size_t *n, struct kiln_err *err)
{
	void *v = NULL;
	kiln_rc rc;

	rc = read_rows((struct sq *)base, Q_TOKENS, NO_ARGS, &token_map, a, &v, n, "tokens", err);
	*out = v;
	return rc;
}

static kiln_rc token_revoke(struct scheduler_store *base, int64_t id, struct kiln_err *err)
{
	struct sq *s = (struct sq *)base;
	kiln_rc rc;

	rc = write1_changed(s, Q_TOKEN_REVOKE, ARGS(I64(id)), "revoke token", err);
	if (rc == KILN_ENOTFOUND)
		rc = kiln_err_set(err, KILN_ENOTFOUND, "no token %lld", (long long)id);
	pthread_mutex_lock(&s->tok_lock);
	memset(s->tokens, 0, sizeof(s->tokens));
	s->tok_gen++;
	pthread_mutex_unlock(&s->tok_lock);
	return rc;
}

/* A count by state: (state, n) rows. */
struct state_n {
	int64_t state, n;
};
static const struct col state_n_cols[] = {COL(I64, struct state_n, state),
                                          COL(I64, struct state_n, n)};
static const struct rowmap state_n_map = ROWMAP(struct state_n, state_n_cols, 64);

/* A count by a text key: (key, n) rows. */
struct keyed_n {
	const char *key;
	int64_t n;
};
static const struct col keyed_n_cols[] = {COL(TEXT, struct keyed_n, key),
                                          COL(I64, struct keyed_n, n)};
static const struct rowmap keyed_n_map = ROWMAP(struct keyed_n, keyed_n_cols, 64);

static void counts_fill(struct scheduler_counts *out, const struct state_n *st, size_t nst,
                        const struct keyed_n *ar, size_t nar, const struct keyed_n *vd, size_t nvd)
{
	size_t i, k;

	for (i = 0; i < nst; i++) {
		if (st[i].state >= 0 && st[i].state < SCHED_NSTATES)
			out->by_state[st[i].state] = st[i].n;
	}
	for (i = 0; i < nar; i++) {
		out->queued_arch[i] = ar[i].key;
		out->queued_n[i] = ar[i].n;
	}
	out->nqueued = nar;
	for (i = 0; i < nvd; i++)
		for (k = 0; k < KILN_ARRAY_SIZE(out->verdicts); k++)
			if (!strcmp(vd[i].key, scheduler_verdict_names[k]))
				out->verdicts[k] = vd[i].n;
}

/* [projects] queued jobs by project name */
static kiln_rc counts_projects(struct scheduler_counts *out, const struct keyed_n *pr, size_t n,
                               struct kiln_arena *a, struct kiln_err *err)
{
	size_t i;

	out->queued_project = kiln_arena_array(a, n ? n : 1, sizeof(*out->queued_project));
	out->queued_project_n = kiln_arena_array(a, n ? n : 1, sizeof(*out->queued_project_n));
	if (!out->queued_project || !out->queued_project_n)
		return kiln_err_set(err, KILN_ENOMEM, "out of memory");
	for (i = 0; i < n; i++) {
		out->queued_project[i] = pr[i].key;
		out->queued_project_n[i] = pr[i].n;
	}
	out->nqueued_project = n;
	return KILN_OK;
}

static kiln_rc counts(struct scheduler_store *base, struct kiln_arena *a,
                      struct scheduler_counts *out, struct kiln_err *err)
{
	struct sq *s;
	void *st = NULL, *ar = NULL, *vd = NULL, *pr = NULL;
	size_t nst = 0, nar = 0, nvd = 0, npr = 0;
	kiln_rc rc;

	memset(out, 0, sizeof(*out));
	s = rd_begin((struct sq *)base);
	rc = rows(s, Q_COUNT_STATES, NO_ARGS, &state_n_map, a, &st, &nst, "counts", err);
	if (!rc)
		rc = rows(s, Q_COUNT_QUEUED_ARCH, NO_ARGS, &keyed_n_map, a, &ar, &nar, "counts",
		          err);
	if (!rc)
		rc = rows(s, Q_COUNT_VERDICTS, NO_ARGS, &keyed_n_map, a, &vd, &nvd, "counts", err);
	if (!rc)
		rc = rows(s, Q_COUNT_QUEUED_PROJECT, NO_ARGS, &keyed_n_map, a, &pr, &npr, "counts",
		          err);
	rd_end(s, rc);
	if (!rc)
		rc = counts_projects(out, pr, npr, a, err);
	out->queued_arch = kiln_arena_array(a, nar ? nar : 1, sizeof(*out->queued_arch));
	out->queued_n = kiln_arena_array(a, nar ? nar : 1, sizeof(*out->queued_n));
	if (!rc && (!out->queued_arch || !out->queued_n))
		rc = kiln_err_set(err, KILN_ENOMEM, "out of memory");
	if (!rc)
		counts_fill(out, st, nst, ar, nar, vd, nvd);
	return rc;
}

/* ---------------------------------------------------------------------------------------- */
/* Reproducibility */

static kiln_rc reruns_add(struct scheduler_store *base, int64_t id, int64_t count,
                          const char *variations, struct kiln_err *err)
{
	return write1((struct sq *)base, Q_RERUNS_ADD, ARGS(I64(id), I64(count), TXT(variations)),
	              "add reruns", err);
}

static kiln_rc reruns_list(struct scheduler_store *base, int64_t id, struct kiln_arena *a,
                           struct scheduler_rerun **out, size_t *n, struct kiln_err *err)
{
	void *v = NULL;
	kiln_rc rc;

	rc = read_rows((struct sq *)base, Q_RERUNS, ARGS(I64(id)), &rerun_map, a, &v, n, "reruns",
	               err);
	*out = v;
	return rc;
}

static kiln_rc rerun_art_put(struct sq *s, int64_t id, int64_t n,
                             const struct scheduler_rerun_artifact *ra, struct kiln_err *err)
{
	return run(s, Q_RERUN_ART_PUT,
	           ARGS(I64(id), I64(n), TXT(ra->name), TXT(ra->original_sha256),
	                TXT(ra->rerun_sha256), TXT(ra->verdict), TXT(ra->diff), TXT(ra->text),
	                TXT(ra->diffoscope_state)),
	           "record a compared artifact", err);
}

/* The verdicts of a job's reruns rolled up (by the scheduler's rule) into
 * jobs.repro_verdict. */
static kiln_rc rollup_store(struct sq *s, int64_t id,
                            const char *(*rollup)(const char *const *v, size_t n), const char **out,
                            struct kiln_err *err)
{
	struct kiln_arena a = KILN_ARENA_INIT(KILN_MIB);
	const char *v[1000];
	void *rv = NULL;
	size_t n = 0, i;
	const char *r;
	kiln_rc rc;

	rc = rows(s, Q_RERUN_VERDICTS, ARGS(I64(id)), &v_text_map, &a, &rv, &n, "verdicts", err);
	for (i = 0; !rc && i < n; i++)
		v[i] = ((struct v_text *)rv)[i].v;
	r = rollup(v, rc ? 0 : n);
	if (!rc)
		rc = run(s, Q_REPRO_VERDICT, ARGS(I64(id), TXT(r)), "record the verdict", err);
	if (!rc && out)
		*out = r;
	kiln_arena_release(&a);
	return rc;
}

static kiln_rc rerun_record(struct scheduler_store *base, int64_t id, int64_t n,
                            const char *verdict, const struct scheduler_rerun_artifact *arts,
                            size_t narts, int64_t now_ms,
                            const char *(*rollup)(const char *const *v, size_t n), const char **out,
                            struct kiln_err *err)
{
	struct sq *s = (struct sq *)base;
	size_t i;
	kiln_rc rc;

	rc = tx_begin(s, err);
	if (rc)
		return rc;
	rc = run(s, Q_RERUN_ARTS_DEL, ARGS(I64(id), I64(n)), "clear compared artifacts", err);
	for (i = 0; !rc && i < narts; i++)
		rc = rerun_art_put(s, id, n, &arts[i], err);
	if (!rc)
		rc = run(s, Q_RERUN_VERDICT, ARGS(I64(id), I64(n), TXT(verdict), I64(now_ms)),
		         "record the rerun's verdict", err);
	if (!rc)
		rc = rollup_store(s, id, rollup, out, err);
	return tx_end(s, rc, err);
}

static kiln_rc rerun_artifacts(struct scheduler_store *base, int64_t id, struct kiln_arena *a,
                               struct scheduler_rerun_artifact **out, size_t *n,
                               struct kiln_err *err)
{
	void *v = NULL;
	kiln_rc rc;

	rc = read_rows((struct sq *)base, Q_RERUN_ARTS, ARGS(I64(id)), &rerun_art_map, a, &v, n,
	               "compared artifacts", err);
	*out = v;
	return rc;
}

static kiln_rc diffoscope_next(struct scheduler_store *base, struct kiln_arena *a,
                               struct scheduler_rerun_artifact *out, struct kiln_err *err)
{
	return read1((struct sq *)base, Q_DFS_NEXT, NO_ARGS, &rerun_art_map, a, out,
	             "diffoscope queue", err);
}

static kiln_rc diffoscope_set(struct scheduler_store *base, int64_t id, int64_t n, const char *name,
                              const char *state, const char *output, struct kiln_err *err)
{
	return write1((struct sq *)base, Q_DFS_SET,
	              ARGS(I64(id), I64(n), TXT(name), TXT_OR_NULL(output), TXT(state)),
	              "record diffoscope's output", err);
}

static kiln_rc attestation_put(struct scheduler_store *base, int64_t id, const char *kind,
                               const char *envelope, int64_t now_ms, struct kiln_err *err)
{
	return write1((struct sq *)base, Q_ATT_PUT,
	              ARGS(I64(id), TXT(kind), TXT(envelope), I64(now_ms)), "record an attestation",
	              err);
}

static kiln_rc attestation_find(struct scheduler_store *base, const char *sha256, const char *kind,
                                struct kiln_arena *a, const char **out, struct kiln_err *err)
{
	struct v_text r = {0};
	kiln_rc rc;

	*out = NULL;
	rc = read1((struct sq *)base, Q_ATT_FIND, ARGS(TXT(sha256), TXT(kind)), &v_text_map, a, &r,
	           "attestation", err);
	if (rc == KILN_ENOTFOUND)
		return kiln_err_set(err, KILN_ENOTFOUND,
		                    "no %s attestation for a package with sha256 %s", kind, sha256);
	*out = r.v;
	return rc;
}

/* Up to 10,000 job ids from a query taking (since_ms, limit), into an array from a; what
 * names the list in an error. */
static kiln_rc ids_since(struct scheduler_store *base, enum q id, int64_t since_ms,
                         struct kiln_arena *a, int64_t **out, size_t *n, const char *what,
                         struct kiln_err *err)
{
	void *v = NULL;
	kiln_rc rc;

	rc = read_rows((struct sq *)base, id, ARGS(I64(since_ms), I64(v_i64_map.max)), &v_i64_map,
	               a, &v, n, what, err);
	*out = v; /* struct v_i64 is one int64_t */
	return rc;
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
	return write1((struct sq *)base, Q_REPRO_VERDICT, ARGS(I64(id), TXT(verdict)),
	              "record the verdict", err);
}

static kiln_rc job_inputs_set(struct scheduler_store *base, int64_t id, const char *request,
                              const char *manifest, const char *content_key, struct kiln_err *err)
{
	return write1((struct sq *)base, Q_JOB_INPUTS,
	              ARGS(I64(id), TXT(request), TXT(manifest), TXT(content_key)),
	              "record the job's inputs", err);
}

static kiln_rc rebuild_put(struct scheduler_store *base, int64_t id, const char *srpm_name,
                           const char *srpm_sha256, const char *published, int64_t now_ms,
                           struct kiln_err *err)
{
	return write1((struct sq *)base, Q_RB_PUT,
	              ARGS(I64(id), TXT(srpm_name), TXT(srpm_sha256), TXT(published), I64(now_ms)),
	              "record a rebuild", err);
}

static kiln_rc rebuild_get(struct scheduler_store *base, int64_t id, struct kiln_arena *a,
                           struct scheduler_rebuild *out, struct kiln_err *err)
{
	kiln_rc rc;

	memset(out, 0, sizeof(*out));
	rc =
	    read1((struct sq *)base, Q_RB_GET, ARGS(I64(id)), &rebuild_map, a, out, "rebuild", err);
	if (rc == KILN_ENOTFOUND)
		return kiln_err_set(err, KILN_ENOTFOUND, "no rebuild %lld", (long long)id);
	return rc;
}

static kiln_rc rebuild_record(struct scheduler_store *base, int64_t id, const char *verdict,
                              const char *report, const char *text, struct kiln_err *err)
{
	return write1((struct sq *)base, Q_RB_RECORD,
	              ARGS(I64(id), TXT(verdict), TXT(report), TXT(text)),
	              "record a rebuild's comparison", err);
}

static kiln_rc ping(struct scheduler_store *base, struct kiln_err *err)
{
	struct v_i64 r = {0};

	return read1((struct sq *)base, Q_PING, NO_ARGS, &v_i64_map, NULL, &r, "ping", err);
}

/* ---------------------------------------------------------------------------------------- */
/* Opening and migrations */

static void checkpointer_stop(struct sq *s)
{
	if (s->ck_running) {
		pthread_mutex_lock(&s->ck_lock);
		s->ck_stop = true;
		pthread_cond_signal(&s->ck_cond);
		pthread_mutex_unlock(&s->ck_lock);
		pthread_join(s->ck_th, NULL);
		s->ck_running = false;
	}
	if (s->ck_db)
		sqlite3_close(s->ck_db);
	s->ck_db = NULL;
}

static void sq_close(struct scheduler_store *base)
{
	struct sq *s = (struct sq *)base;
	size_t i;

	checkpointer_stop(s);
	for (i = 0; i < NREADERS; i++)
		if (s->readers[i])
			sq_close(&s->readers[i]->base);
	for (i = 0; i < Q_COUNT; i++)
		sqlite3_finalize(s->st[i]);
	sqlite3_close(s->db);
	pthread_mutex_destroy(&s->lock);
	pthread_mutex_destroy(&s->tok_lock);
	pthread_mutex_destroy(&s->ck_lock);
	pthread_cond_destroy(&s->ck_cond);
	free(s);
}

static uint64_t store_version(struct scheduler_store *base)
{
	return __atomic_load_n(&((struct sq *)base)->version, __ATOMIC_ACQUIRE);
}

/* One scheduler opens a sqlite3 file (the file's locks are no lease between hosts): it
 * holds every duty, hears of no other scheduler and has none to tell. */
static kiln_rc duty(struct scheduler_store *base KILN_UNUSED, const char *name KILN_UNUSED,
                    bool *held, struct kiln_err *err KILN_UNUSED)
{
	*held = true;
	return KILN_OK;
}

static kiln_rc watch(struct scheduler_store *base KILN_UNUSED,
                     void (*changed)(void *arg, enum scheduler_heard what, const char *repo)
                         KILN_UNUSED,
                     void *arg KILN_UNUSED, struct kiln_err *err KILN_UNUSED)
{
	return KILN_OK;
}

static kiln_rc announce(struct scheduler_store *base KILN_UNUSED, const char *repo KILN_UNUSED,
                        struct kiln_err *err KILN_UNUSED)
{
	return KILN_OK;
}

/* ---------------------------------------------------------------------------------------- */
/* Publishing (publish.c) */

static kiln_rc repo_pkg_put(struct scheduler_store *base, const struct scheduler_repo_pkg *p,
                            struct kiln_err *err)
{
	return write1((struct sq *)base, Q_REPO_PKG_PUT,
	              ARGS(TXT(p->repo), TXT(p->file), TXT(p->name), I64(p->epoch), TXT(p->version),
	                   TXT(p->release), TXT(p->arch), TXT(p->sha256), I64(p->size),
	                   I64(p->job_id), I64(p->buildtime), I64(p->published_ms)),
	              "publish a package", err);
}

static kiln_rc repo_pkgs(struct scheduler_store *base, const char *repo, struct kiln_arena *a,
                         struct scheduler_repo_pkg **out, size_t *n, struct kiln_err *err)
{
	void *v = NULL;
	kiln_rc rc;

	rc = read_rows((struct sq *)base, repo ? Q_REPO_PKGS : Q_REPO_PKGS_ALL, ARGS(TXT(repo)),
	               &repo_pkg_map, a, &v, n, "repository packages", err);
	*out = v;
	return rc;
}

static kiln_rc repo_pkg_delete(struct scheduler_store *base, const char *repo, const char *file,
                               struct kiln_err *err)
{
	kiln_rc rc;

	rc = write1_changed((struct sq *)base, Q_REPO_PKG_DEL, ARGS(TXT(repo), TXT(file)),
	                    "remove a package", err);
	if (rc == KILN_ENOTFOUND)
		return kiln_err_set(err, KILN_ENOTFOUND, "repository %s has no %s", repo, file);
	return rc;
}

static kiln_rc repo_publish_mark(struct scheduler_store *base, int64_t job_id, const char *repo,
                                 const char *state, const char *message, int64_t now_ms,
                                 struct kiln_err *err)
{
	return write1((struct sq *)base, Q_REPO_MARK,
	              ARGS(I64(job_id), TXT(repo), TXT(state), TXT(message), I64(now_ms)),
	              "record a publishing decision", err);
}

struct decision {
	const char *state, *message;
};
static const struct col decision_cols[] = {COL(TEXT, struct decision, state),
                                           COL(TEXT, struct decision, message)};
static const struct rowmap decision_map = ROWMAP(struct decision, decision_cols, 1);

static kiln_rc repo_publish_get(struct scheduler_store *base, int64_t job_id, struct kiln_arena *a,
                                const char **state, const char **message, struct kiln_err *err)
{
	struct decision d = {0};
	kiln_rc rc;

	rc = read1((struct sq *)base, Q_REPO_DECISION, ARGS(I64(job_id)), &decision_map, a, &d,
	           "publishing decision", err);
	if (rc == KILN_ENOTFOUND)
		return kiln_err_set(err, KILN_ENOTFOUND, "job %lld has no publishing decision",
		                    (long long)job_id);
	if (!rc)
		*state = d.state, *message = d.message;
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
	return write1((struct sq *)base, Q_REPO_STATE_PUT,
	              ARGS(TXT(name), I64(revision), I64(published_ms)), "record a publish", err);
}

static kiln_rc repo_states(struct scheduler_store *base, struct kiln_arena *a,
                           struct scheduler_repo_state **out, size_t *n, struct kiln_err *err)
{
	void *v = NULL;
	kiln_rc rc;

	rc = read_rows((struct sq *)base, Q_REPO_STATES, NO_ARGS, &repo_state_map, a, &v, n,
	               "repositories", err);
	*out = v;
	return rc;
}

/* ---------------------------------------------------------------------------------------- */
/* Forge webhooks */

#define D struct scheduler_hook_delivery
static const struct col hook_delivery_cols[] = {
    COL(TEXT, D, forge),      COL(TEXT, D, delivery), COL(TEXT, D, event), COL(TEXT, D, project),
    COL(I64, D, received_ms), COL(TEXT, D, result),   COL(I64, D, status)};
static const struct rowmap hook_delivery_map = ROWMAP(D, hook_delivery_cols, 1000);
#undef D

static kiln_rc hook_delivery_get(struct scheduler_store *base, const char *forge,
                                 const char *delivery, struct kiln_arena *a,
                                 struct scheduler_hook_delivery *out, struct kiln_err *err)
{
	return read1((struct sq *)base, Q_HOOK_DELIVERY_GET, ARGS(TXT(forge), TXT(delivery)),
	             &hook_delivery_map, a, out, "webhook delivery", err);
}

static kiln_rc hook_deliveries(struct scheduler_store *base, const char *forge, int64_t limit,
                               struct kiln_arena *a, struct scheduler_hook_delivery **out,
                               size_t *n, struct kiln_err *err)
{
	void *v = NULL;
	kiln_rc rc;

	rc = read_rows((struct sq *)base, Q_HOOK_DELIVERIES, ARGS(TXT(forge), I64(limit)),
	               &hook_delivery_map, a, &v, n, "webhook deliveries", err);
	*out = v;
	return rc;
}

static kiln_rc hook_delivery_put(struct scheduler_store *base,
                                 const struct scheduler_hook_delivery *d, struct kiln_err *err)
{
	return write1((struct sq *)base, Q_HOOK_DELIVERY_PUT,
	              ARGS(TXT(d->forge), TXT(d->delivery), TXT(d->event), TXT(d->project),
	                   I64(d->received_ms), TXT(d->result), I64(d->status)),
	              "record webhook delivery", err);
}

static kiln_rc outbox_put1(struct sq *w, const struct scheduler_outbox_item *it,
                           struct kiln_err *err)
{
	return run(w, Q_OUTBOX_PUT,
	           ARGS(TXT(it->kind), TXT(it->target), TXT(it->dedup), I64(it->job_id),
	                TXT(it->body), I64(it->created_ms)),
	           "queue an outgoing message", err);
}

static kiln_rc hook_job_put(struct scheduler_store *base, const struct scheduler_hook_job *h,
                            const struct scheduler_outbox_item *status, struct kiln_err *err)
{
	struct sq *w = (struct sq *)base;
	kiln_rc rc = tx_begin(w, err);

	if (rc)
		return rc;
	rc = run(w, Q_HOOK_JOB_PUT,
	         ARGS(I64(h->job_id), TXT(h->forge), TXT(h->project), TXT(h->ref), TXT(h->url),
	              TXT(h->sha), TXT(h->context)),
	         "record hook job", err);
	if (!rc && status)
		rc = outbox_put1(w, status, err);
	return tx_end(w, rc, err);
}

#define H struct scheduler_hook_job
static const struct col hook_job_cols[] = {
    COL(I64, H, job_id), COL(TEXT, H, forge), COL(TEXT, H, project), COL(TEXT, H, ref),
    COL(TEXT, H, url),   COL(TEXT, H, sha),   COL(TEXT, H, context)};
static const struct rowmap hook_job_map = ROWMAP(H, hook_job_cols, 1);
#undef H

static kiln_rc hook_job_get(struct scheduler_store *base, int64_t job_id, struct kiln_arena *a,
                            struct scheduler_hook_job *out, struct kiln_err *err)
{
	return read1((struct sq *)base, Q_HOOK_JOB_GET, ARGS(I64(job_id)), &hook_job_map, a, out,
	             "hook job", err);
}

static kiln_rc hook_job_last(struct scheduler_store *base, const char *forge, const char *project,
                             const char *ref, struct kiln_arena *a, struct scheduler_hook_job *out,
                             struct kiln_err *err)
{
	return read1((struct sq *)base, Q_HOOK_JOB_LAST, ARGS(TXT(forge), TXT(project), TXT(ref)),
	             &hook_job_map, a, out, "hook job", err);
}

/* ---------------------------------------------------------------------------------------- */
/* [batches] */

#define B struct scheduler_batch
static const struct col batch_cols[] = {
    COL(I64, B, id),           COL(I64, B, token_id),       COL(I64, B, created_ms),
    COL(I64, B, updated_ms),   COL(TEXT, B, root),          COL(TEXT, B, bootstrap),
    COL(TEXT, B, repository),  COL(TEXT, B, publish_state), COL(TEXT, B, publish_message),
    COL(COPY, B, request_key), COL(I64, B, project_id),
};
#undef B
static const struct rowmap batch_map = ROWMAP(struct scheduler_batch, batch_cols, 1000);

#define M struct scheduler_batch_member
static const struct col member_cols[] = {
    COL(I64, M, batch_id),       COL(I64, M, job_id),   COL(I64, M, node),
    COL(I64, M, level),          COL(I64, M, pending),  COL(BOOL, M, landed),
    COL(I64, M, wait_on),        COL(TEXT, M, name),    COL(STATE, M, state),
    COL(TEXT, M, spec_name),     COL(TEXT, M, message), COL(I64, M, reruns),
    COL(TEXT, M, repro_verdict),
};
#undef M
static const struct rowmap member_map =
    ROWMAP(struct scheduler_batch_member, member_cols, SCHED_BATCH_MAX);

#define E struct scheduler_batch_edge
static const struct col edge_cols[] = {COL(I64, E, job_id), COL(I64, E, dep_id), COL(TEXT, E, why)};
#undef E
static const struct rowmap edge_map = ROWMAP(struct scheduler_batch_edge, edge_cols, 1000000);

static kiln_rc batch_rows_insert(struct sq *s, const struct scheduler_batch *b,
                                 struct scheduler_job *jobs, const struct scheduler_batch_member *m,
                                 size_t n, const struct scheduler_batch_edge *e, size_t ne,
                                 int64_t *id, int64_t *job_ids, struct kiln_err *err)
{
	bool idem = b->idem_key && *b->idem_key;
	kiln_rc rc;
	size_t i;

	rc = run(s, Q_BATCH_INSERT,
	         ARGS(I64(b->token_id), TXT(b->root), TXT(b->bootstrap), TXT(b->repository),
	              I64(b->created_ms), TXT_OR_NULL(idem ? b->idem_key : NULL),
	              TXT(b->request_key), I64(b->project_id)),
	         "insert batch", err);
	if (!rc)
		*id = sqlite3_last_insert_rowid(s->db);
	for (i = 0; !rc && i < n; i++) {
		rc = job_row_insert(s, &jobs[i], err);
		if (!rc)
			job_ids[i] = sqlite3_last_insert_rowid(s->db);
		if (!rc)
			rc = run(s, Q_BATCH_JOB_INSERT,
			         ARGS(I64(job_ids[i]), I64(*id), I64(m[i].node), I64(m[i].level),
			              TXT(m[i].name), I64(m[i].pending)),
			         "insert batch job", err);
	}
	for (i = 0; !rc && i < ne; i++) {
		if (e[i].job_id < 0 || (size_t)e[i].job_id >= n || e[i].dep_id < 0 ||
		    (size_t)e[i].dep_id >= n)
			return kiln_err_set(err, KILN_EINVAL, "batch edge %zu: no such member", i);
		rc = run(s, Q_BATCH_DEP_INSERT,
		         ARGS(I64(job_ids[e[i].job_id]), I64(job_ids[e[i].dep_id]), TXT(e[i].why)),
		         "insert batch edge", err);
	}
	return rc;
}

static kiln_rc batch_insert(struct scheduler_store *base, const struct scheduler_batch *b,
                            struct scheduler_job *jobs, const struct scheduler_batch_member *m,
                            size_t n, const struct scheduler_batch_edge *e, size_t ne, int64_t *id,
                            int64_t *job_ids, struct kiln_err *err)
{
	struct sq *s = (struct sq *)base;
	struct v_i64 r = {0};
	kiln_rc rc;

	rc = tx_begin(s, err);
	if (rc)
		return rc;
	if (b->idem_key && *b->idem_key) {
		rc = one(s, Q_BATCH_BY_IDEM, ARGS(I64(b->token_id), TXT(b->idem_key)), &v_i64_map,
		         NULL, &r, "idempotency lookup", err);
		if (!rc) { /* submitted before: that batch */
			*id = r.v;
			tx_end(s, KILN_OK, NULL);
			return KILN_EEXIST;
		}
		if (rc != KILN_ENOTFOUND)
			return tx_end(s, rc, err);
	}
	rc = batch_rows_insert(s, b, jobs, m, n, e, ne, id, job_ids, err);
	return tx_end(s, rc, err);
}

static kiln_rc batch_get(struct scheduler_store *base, int64_t id, struct kiln_arena *a,
                         struct scheduler_batch *out, struct kiln_err *err)
{
	kiln_rc rc = read1((struct sq *)base, Q_BATCH_GET, ARGS(I64(id)), &batch_map, a, out,
	                   "read batch", err);

	if (rc == KILN_ENOTFOUND)
		return kiln_err_set(err, KILN_ENOTFOUND, "no batch %lld", (long long)id);
	return rc;
}

static kiln_rc batch_list(struct scheduler_store *base, int64_t before_id, int64_t limit,
                          struct kiln_arena *a, struct scheduler_batch **out, size_t *n,
                          struct kiln_err *err)
{
	struct rowmap m = batch_map;
	void *v = NULL;
	kiln_rc rc;

	m.max = (size_t)limit;
	rc = read_rows((struct sq *)base, Q_BATCH_LIST,
	               ARGS(I64(before_id > 0 ? before_id : INT64_MAX), I64(limit)), &m, a, &v, n,
	               "list batches", err);
	*out = v;
	return rc;
}

static kiln_rc batch_members(struct scheduler_store *base, int64_t id, struct kiln_arena *a,
                             struct scheduler_batch_member **out, size_t *n, struct kiln_err *err)
{
	void *v = NULL;
	kiln_rc rc;

	rc = read_rows((struct sq *)base, Q_BATCH_MEMBERS, ARGS(I64(id)), &member_map, a, &v, n,
	               "batch members", err);
	*out = v;
	return rc;
}

static kiln_rc batch_edges(struct scheduler_store *base, int64_t id, struct kiln_arena *a,
                           struct scheduler_batch_edge **out, size_t *n, struct kiln_err *err)
{
	void *v = NULL;
	kiln_rc rc;

	rc = read_rows((struct sq *)base, Q_BATCH_EDGES, ARGS(I64(id)), &edge_map, a, &v, n,
	               "batch edges", err);
	*out = v;
	return rc;
}

static kiln_rc batch_member_of(struct scheduler_store *base, int64_t job_id, struct kiln_arena *a,
                               struct scheduler_batch_member *out, struct kiln_err *err)
{
	return read1((struct sq *)base, Q_BATCH_MEMBER_OF, ARGS(I64(job_id)), &member_map, a, out,
	             "batch member", err);
}

static kiln_rc batch_landed(struct scheduler_store *base, int64_t job_id, bool *first,
                            struct kiln_err *err)
{
	struct sq *s = (struct sq *)base;
	kiln_rc rc;

	*first = false;
	rc = tx_begin(s, err);
	if (rc)
		return rc;
	rc = run(s, Q_BATCH_LAND, ARGS(I64(job_id)), "batch job landed", err);
	if (!rc && sqlite3_changes(s->db)) {
		*first = true;
		rc = run(s, Q_BATCH_PENDING_DEC, ARGS(I64(job_id)), "batch dependents", err);
	}
	return tx_end(s, rc, err);
}

static kiln_rc batch_dep_fail(struct scheduler_store *base, int64_t job_id, const char *message,
                              int64_t now_ms, int64_t *n, struct kiln_err *err)
{
	struct sq *s = (struct sq *)base;
	kiln_rc rc;

	*n = 0;
	rc = tx_begin(s, err);
	if (rc)
		return rc;
	rc = run(s, Q_BATCH_WAIT_SET, ARGS(I64(job_id)), "batch dependents", err);
	if (!rc)
		rc = run(s, Q_BATCH_DEP_FAIL, ARGS(I64(job_id), TXT(message), I64(now_ms)),
		         "batch dependents", err);
	if (!rc)
		*n = sqlite3_changes(s->db);
	return tx_end(s, rc, err);
}

static kiln_rc batch_resume(struct scheduler_store *base, int64_t job_id, int64_t now_ms,
                            int64_t *n, struct kiln_err *err)
{
	struct sq *s = (struct sq *)base;
	kiln_rc rc;

	*n = 0;
	rc = tx_begin(s, err);
	if (rc)
		return rc;
	rc = run(s, Q_BATCH_RESUME_JOBS, ARGS(I64(job_id), I64(now_ms)), "batch dependents", err);
	if (!rc)
		*n = sqlite3_changes(s->db);
	if (!rc)
		rc = run(s, Q_BATCH_RESUME_WAIT, ARGS(I64(job_id)), "batch dependents", err);
	return tx_end(s, rc, err);
}

static kiln_rc batch_unsettled(struct scheduler_store *base, struct kiln_arena *a, int64_t **out,
                               size_t *n, struct kiln_err *err)
{
	struct v_i64 *v = NULL;
	kiln_rc rc;
	size_t i;

	*out = NULL;
	rc = read_rows((struct sq *)base, Q_BATCH_UNSETTLED, NO_ARGS, &v_i64_map, a, (void **)&v, n,
	               "unsettled batch jobs", err);
	if (!rc && *n && !(*out = kiln_arena_array(a, *n, sizeof(**out))))
		rc = kiln_err_set(err, KILN_ENOMEM, "out of memory");
	for (i = 0; !rc && i < *n; i++)
		(*out)[i] = v[i].v;
	return rc;
}

static kiln_rc batch_publish_set(struct scheduler_store *base, int64_t id, const char *repository,
                                 const char *state, const char *message, int64_t now_ms,
                                 struct kiln_err *err)
{
	return write1((struct sq *)base, Q_BATCH_PUBLISH,
	              ARGS(I64(id), TXT(repository), TXT(state), TXT(message), I64(now_ms)),
	              "batch publish", err);
}

/* ---------------------------------------------------------------------------------------- */
/* The outbox */

#define O struct scheduler_outbox_item
static const struct col outbox_cols[] = {
    COL(I64, O, id),          COL(TEXT, O, kind),      COL(TEXT, O, target),
    COL(TEXT, O, dedup),      COL(I64, O, job_id),     COL(TEXT, O, body),
    COL(I64, O, created_ms),  COL(TEXT, O, state),     COL(I64, O, attempts),
    COL(I64, O, next_ms),     COL(I64, O, updated_ms), COL(I64, O, last_status),
    COL(TEXT, O, last_answer)};
static const struct rowmap outbox_map = ROWMAP(O, outbox_cols, 1000);
#undef O
#define T struct scheduler_outbox_attempt
static const struct col outbox_attempt_cols[] = {COL(I64, T, item_id), COL(I64, T, n),
                                                 COL(I64, T, at_ms), COL(I64, T, status),
                                                 COL(TEXT, T, answer)};
static const struct rowmap outbox_attempt_map = ROWMAP(T, outbox_attempt_cols, 10000);
#undef T
#define C struct scheduler_outbox_count
static const struct col outbox_count_cols[] = {COL(TEXT, C, target), COL(TEXT, C, state),
                                               COL(I64, C, n)};
static const struct rowmap outbox_count_map = ROWMAP(C, outbox_count_cols, 10000);
#undef C

static kiln_rc outbox_put(struct scheduler_store *base, const struct scheduler_outbox_item *v,
                          size_t n, struct kiln_err *err)
{
	struct sq *w = (struct sq *)base;
	kiln_rc rc;
	size_t i;

	if (!n)
		return KILN_OK;
	rc = tx_begin(w, err);
	if (rc)
		return rc;
	for (i = 0; i < n && !rc; i++)
		rc = outbox_put1(w, &v[i], err);
	return tx_end(w, rc, err);
}

static kiln_rc outbox_pending(struct scheduler_store *base, struct kiln_arena *a,
                              struct scheduler_outbox_item **out, size_t *n, struct kiln_err *err)
{
	void *v = NULL;
	kiln_rc rc;

	rc = read_rows((struct sq *)base, Q_OUTBOX_PENDING, NO_ARGS, &outbox_map, a, &v, n,
	               "outbox", err);
	*out = v;
	return rc;
}

static kiln_rc outbox_attempt(struct scheduler_store *base,
                              const struct scheduler_outbox_attempt *at, const char *state,
                              int64_t next_ms, struct kiln_err *err)
{
	struct sq *w = (struct sq *)base;
	kiln_rc rc = tx_begin(w, err);

	if (rc)
		return rc;
	rc = run(
	    w, Q_OUTBOX_ATTEMPT,
	    ARGS(I64(at->item_id), I64(at->n), I64(at->at_ms), I64(at->status), TXT(at->answer)),
	    "record a delivery attempt", err);
	if (!rc)
		rc = run(w, Q_OUTBOX_MARK,
		         ARGS(I64(at->item_id), TXT(state), I64(at->n), I64(next_ms),
		              I64(at->at_ms), I64(at->status), TXT(at->answer)),
		         "record a delivery attempt", err);
	return tx_end(w, rc, err);
}

static kiln_rc outbox_list(struct scheduler_store *base, const char *kind, const char *target,
                           int64_t before_id, int64_t limit, struct kiln_arena *a,
                           struct scheduler_outbox_item **out, size_t *n, struct kiln_err *err)
{
	void *v = NULL;
	kiln_rc rc;

	rc = read_rows((struct sq *)base, Q_OUTBOX_LIST,
	               ARGS(TXT(kind), TXT(target), I64(before_id), I64(limit)), &outbox_map, a, &v,
	               n, "outbox", err);
	*out = v;
	return rc;
}

static kiln_rc outbox_attempts(struct scheduler_store *base, int64_t item_id, struct kiln_arena *a,
                               struct scheduler_outbox_attempt **out, size_t *n,
                               struct kiln_err *err)
{
	void *v = NULL;
	kiln_rc rc;

	rc = read_rows((struct sq *)base, Q_OUTBOX_ATTEMPTS, ARGS(I64(item_id)),
	               &outbox_attempt_map, a, &v, n, "delivery attempts", err);
	*out = v;
	return rc;
}

static kiln_rc outbox_counts(struct scheduler_store *base, const char *kind, struct kiln_arena *a,
                             struct scheduler_outbox_count **out, size_t *n, struct kiln_err *err)
{
	void *v = NULL;
	kiln_rc rc;

	rc = read_rows((struct sq *)base, Q_OUTBOX_COUNTS, ARGS(TXT(kind)), &outbox_count_map, a,
	               &v, n, "outbox", err);
	*out = v;
	return rc;
}

static kiln_rc outbox_prune(struct scheduler_store *base, int64_t before_ms, struct kiln_err *err)
{
	struct sq *w = (struct sq *)base;
	kiln_rc rc = tx_begin(w, err);

	if (rc)
		return rc;
	rc = run(w, Q_OUTBOX_PRUNE_ATTEMPTS, ARGS(I64(before_ms)), "prune the outbox", err);
	if (!rc)
		rc = run(w, Q_OUTBOX_PRUNE, ARGS(I64(before_ms)), "prune the outbox", err);
	return tx_end(w, rc, err);
}

static kiln_rc outbox_ends_missing(struct scheduler_store *base, int64_t since_ms,
                                   const char *prefix, bool hook_only, struct kiln_arena *a,
                                   int64_t **out, size_t *n, struct kiln_err *err)
{
	void *v = NULL;
	kiln_rc rc;

	rc = read_rows((struct sq *)base, Q_OUTBOX_ENDS_MISSING,
	               ARGS(I64(since_ms), TXT(prefix), I64(hook_only), I64(v_i64_map.max)),
	               &v_i64_map, a, &v, n, "unreported job ends", err);
	*out = v; /* struct v_i64 is one int64_t */
	return rc;
}

/* ---------------------------------------------------------------------------------------- */
/* Projects */

#define P struct scheduler_project
static const struct col project_cols[] = {
    COL(I64, P, id),           COL(TEXT, P, name),          COL(I64, P, created_ms),
    COL(BOOL, P, public_read), COL(I64, P, max_running),    COL(TEXT, P, arch_caps),
    COL(I64, P, grant_seq),    COL(I64, P, key_expires_ms), COL(TEXT, P, roots),
};
#undef P
static const struct rowmap project_map = ROWMAP(struct scheduler_project, project_cols, 100000);

#define P struct scheduler_project_run
static const struct col project_run_cols[] = {COL(I64, P, project_id), COL(TEXT, P, arch),
                                              COL(I64, P, n)};
#undef P
static const struct rowmap project_run_map =
    ROWMAP(struct scheduler_project_run, project_run_cols, 100000);

static kiln_rc project_insert(struct scheduler_store *base, const struct scheduler_project *p,
                              int64_t *id, struct kiln_err *err)
{
	struct sq *s = (struct sq *)base;
	struct v_i64 r = {0};
	kiln_rc rc;

	rc = tx_begin(s, err);
	if (rc)
		return rc;
	rc = one(s, Q_PROJECT_BY_NAME, ARGS(TXT(p->name)), &v_i64_map, NULL, &r, "read project",
	         err);
	if (!rc)
		rc = kiln_err_set(err, KILN_EEXIST, "project '%s' exists", p->name);
	else if (rc == KILN_ENOTFOUND)
		rc = KILN_OK;
	if (!rc)
		rc = run(s, Q_PROJECT_INSERT,
		         ARGS(TXT(p->name), I64(p->created_ms), I64(p->public_read),
		              I64(p->max_running), TXT(p->arch_caps), I64(p->key_expires_ms),
		              TXT(p->roots ? p->roots : "")),
		         "insert project", err);
	if (!rc)
		*id = sqlite3_last_insert_rowid(s->db);
	return tx_end(s, rc, err);
}

static kiln_rc project_get(struct scheduler_store *base, int64_t id, const char *name,
                           struct kiln_arena *a, struct scheduler_project *out,
                           struct kiln_err *err)
{
	kiln_rc rc;

	if (name)
		rc = read1((struct sq *)base, Q_PROJECT_BY_NAME, ARGS(TXT(name)), &project_map, a,
		           out, "read project", err);
	else
		rc = read1((struct sq *)base, Q_PROJECT_GET, ARGS(I64(id)), &project_map, a, out,
		           "read project", err);
	if (rc == KILN_ENOTFOUND && name)
		return kiln_err_set(err, KILN_ENOTFOUND, "no project '%.64s'", name);
	if (rc == KILN_ENOTFOUND)
		return kiln_err_set(err, KILN_ENOTFOUND, "no project %lld", (long long)id);
	return rc;
}

static kiln_rc projects_list(struct scheduler_store *base, struct kiln_arena *a,
                             struct scheduler_project **out, size_t *n, struct kiln_err *err)
{
	void *v = NULL;
	kiln_rc rc;

	rc = read_rows((struct sq *)base, Q_PROJECTS, NO_ARGS, &project_map, a, &v, n, "projects",
	               err);
	*out = v;
	return rc;
}

static kiln_rc project_update(struct scheduler_store *base, const struct scheduler_project *p,
                              struct kiln_err *err)
{
	kiln_rc rc;

	rc = write1_changed((struct sq *)base, Q_PROJECT_UPDATE,
	                    ARGS(I64(p->id), I64(p->public_read), I64(p->max_running),
	                         TXT(p->arch_caps), I64(p->key_expires_ms),
	                         TXT(p->roots ? p->roots : "")),
	                    "update project", err);
	if (rc == KILN_ENOTFOUND)
		rc = kiln_err_set(err, KILN_ENOTFOUND, "no project %lld", (long long)p->id);
	return rc;
}

static kiln_rc project_delete(struct scheduler_store *base, int64_t id, struct kiln_err *err)
{
	struct sq *s = (struct sq *)base;
	struct v_i64 r = {0};
	kiln_rc rc;

	rc = tx_begin(s, err);
	if (rc)
		return rc;
	rc = one(s, Q_PROJECT_ACTIVE, ARGS(I64(id)), &v_i64_map, NULL, &r, "count jobs", err);
	if (!rc && r.v)
		rc = kiln_err_set(err, KILN_ECONFLICT,
		                  "the project has %lld queued or running jobs (cancel them first)",
		                  (long long)r.v);
	if (!rc)
		rc = run(s, Q_PROJECT_DELETE, ARGS(I64(id)), "delete project", err);
	if (!rc && !sqlite3_changes(s->db))
		rc = kiln_err_set(err, KILN_ENOTFOUND, "no project %lld", (long long)id);
	if (!rc)
		rc = run(s, Q_PROJECT_TOKENS_REVOKE, ARGS(I64(id)), "revoke tokens", err);
	if (!rc)
		rc = run(s, Q_PROJECT_REPOS_FREE, ARGS(I64(id)), "free repositories", err);
	rc = tx_end(s, rc, err);
	pthread_mutex_lock(&s->tok_lock);
	memset(s->tokens, 0, sizeof(s->tokens));
	s->tok_gen++;
	pthread_mutex_unlock(&s->tok_lock);
	return rc;
}

static kiln_rc project_running(struct scheduler_store *base, struct kiln_arena *a,
                               struct scheduler_project_run **out, size_t *n, struct kiln_err *err)
{
	void *v = NULL;
	kiln_rc rc;

	rc = read_rows((struct sq *)base, Q_PROJECT_RUNNING, NO_ARGS, &project_run_map, a, &v, n,
	               "running jobs by project", err);
	*out = v;
	return rc;
}

#define O struct scheduler_repo_owner
static const struct col repo_owner_cols[] = {COL(TEXT, O, repo), COL(I64, O, project_id)};
#undef O
static const struct rowmap repo_owner_map =
    ROWMAP(struct scheduler_repo_owner, repo_owner_cols, 100000);

static kiln_rc repo_owner_set(struct scheduler_store *base, const char *repo, int64_t project_id,
                              struct kiln_err *err)
{
	if (project_id == SCHED_PROJECT_DEFAULT)
		return write1((struct sq *)base, Q_REPO_OWNER_DEFAULT, ARGS(TXT(repo)),
		              "give the repository back", err);
	return write1((struct sq *)base, Q_REPO_OWNER_SET, ARGS(TXT(repo), I64(project_id)),
	              "give the repository", err);
}

static kiln_rc repo_owners(struct scheduler_store *base, struct kiln_arena *a,
                           struct scheduler_repo_owner **out, size_t *n, struct kiln_err *err)
{
	void *v = NULL;
	kiln_rc rc;

	rc = read_rows((struct sq *)base, Q_REPO_OWNERS, NO_ARGS, &repo_owner_map, a, &v, n,
	               "repository owners", err);
	*out = v;
	return rc;
}

static kiln_rc artifact_in_project(struct scheduler_store *base, const char *sha256,
                                   int64_t project_id, struct kiln_err *err)
{
	struct v_i64 r = {0};
	kiln_rc rc;

	rc = read1((struct sq *)base, Q_ARTIFACT_IN_PROJECT, ARGS(TXT(sha256), I64(project_id)),
	           &v_i64_map, NULL, &r, "package lookup", err);
	if (rc == KILN_ENOTFOUND)
		return kiln_err_set(err, KILN_ENOTFOUND, "no such package");
	return rc;
}

static const struct scheduler_store_ops sqlite_ops = {
    .name = "sqlite3",
    .close = sq_close,
    .job_insert = job_insert,
    .job_get = job_get,
    .job_list = job_list,
    .queue_position = queue_position,
    .lease_candidates = lease_candidates,
    .lease_take = lease_take,
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
    .workers_active = workers_active,
    .worker_auth = worker_auth,
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
    .duty = duty,
    .watch = watch,
    .announce = announce,
    .repo_pkg_put = repo_pkg_put,
    .repo_pkgs = repo_pkgs,
    .repo_pkg_delete = repo_pkg_delete,
    .repo_publish_mark = repo_publish_mark,
    .repo_publish_get = repo_publish_get,
    .repo_unpublished = repo_unpublished,
    .repo_state_put = repo_state_put,
    .repo_states = repo_states,
    .hook_delivery_get = hook_delivery_get,
    .hook_delivery_put = hook_delivery_put,
    .hook_deliveries = hook_deliveries,
    .hook_job_put = hook_job_put,
    .hook_job_get = hook_job_get,
    .hook_job_last = hook_job_last,
    .batch_insert = batch_insert,
    .batch_get = batch_get,
    .batch_list = batch_list,
    .batch_members = batch_members,
    .batch_edges = batch_edges,
    .batch_member_of = batch_member_of,
    .batch_landed = batch_landed,
    .batch_dep_fail = batch_dep_fail,
    .batch_resume = batch_resume,
    .batch_publish_set = batch_publish_set,
    .batch_unsettled = batch_unsettled,
    .outbox_put = outbox_put,
    .outbox_pending = outbox_pending,
    .outbox_attempt = outbox_attempt,
    .outbox_list = outbox_list,
    .outbox_attempts = outbox_attempts,
    .outbox_counts = outbox_counts,
    .outbox_ends_missing = outbox_ends_missing,
    .outbox_prune = outbox_prune,
    .project_insert = project_insert,
    .project_get = project_get,
    .projects_list = projects_list,
    .project_update = project_update,
    .project_delete = project_delete,
    .project_running = project_running,
    .artifact_in_project = artifact_in_project,
    .repo_owner_set = repo_owner_set,
    .repo_owners = repo_owners,
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

/* Often enough that the WAL is copied back while it is short (a checkpoint every 200 ms
 * let it grow to tens of MiB under load: 4-6% fewer grants a second, bench/RESULTS.md) */
#define CHECKPOINT_MS 50
/* Past this many WAL pages the writer checkpoints itself (sqlite3's own rule), should the
 * checkpointer fall behind: the WAL stays bounded either way. */
#define CHECKPOINT_WRITER_PAGES 10000

static void *checkpointer(void *arg)
{
	struct sq *s = arg;
	struct timespec until;
	int64_t end;

	pthread_mutex_lock(&s->ck_lock);
	while (!s->ck_stop) {
		/* timedwait takes a CLOCK_REALTIME deadline: the wall clock in ms is that */
		end = util_clock_wall_ms() + CHECKPOINT_MS;
		until = (struct timespec){(time_t)(end / 1000), (long)(end % 1000) * 1000000};
		while (!s->ck_stop && !pthread_cond_timedwait(&s->ck_cond, &s->ck_lock, &until))
			;
		if (s->ck_stop)
			break;
		pthread_mutex_unlock(&s->ck_lock);
		/* PASSIVE: copies what no reader still needs, waits for no one, takes no
		 * writer's lock; a busy or failed one is tried again at the next tick */
		(void)sqlite3_wal_checkpoint_v2(s->ck_db, NULL, SQLITE_CHECKPOINT_PASSIVE, NULL,
		                                NULL);
		pthread_mutex_lock(&s->ck_lock);
	}
	pthread_mutex_unlock(&s->ck_lock);
	return NULL;
}

static kiln_rc checkpointer_start(struct sq *s, const char *path, struct kiln_err *err)
{
	char pragma[64];
	kiln_rc rc;

	if (sqlite3_open_v2(path, &s->ck_db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL) !=
	    SQLITE_OK)
		return kiln_err_set(err, KILN_EIO, "cannot open the job store %s: %s", path,
		                    s->ck_db ? sqlite3_errmsg(s->ck_db) : "out of memory");
	/* a connection learns the file is in WAL mode when it first reads it: until then a
	 * checkpoint on it does nothing */
	if (sqlite3_exec(s->ck_db, "PRAGMA journal_mode = WAL", NULL, NULL, NULL) != SQLITE_OK)
		return kiln_err_set(err, KILN_EIO, "job store %s: %s", path,
		                    sqlite3_errmsg(s->ck_db));
	snprintf(pragma, sizeof(pragma), "PRAGMA wal_autocheckpoint = %d", CHECKPOINT_WRITER_PAGES);
	rc = exec(s, pragma, err);
	if (rc)
		return rc;
	rc = (kiln_rc)pthread_create(&s->ck_th, NULL, checkpointer, s);
	if (rc) {
		errno = (int)rc;
		return kiln_err_sys(err, KILN_EIO, "cannot start the job store's checkpointer");
	}
	s->ck_running = true;
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
		pthread_mutex_init(&r->ck_lock, NULL);
		pthread_cond_init(&r->ck_cond, NULL);
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
	pthread_mutex_init(&s->ck_lock, NULL);
	pthread_cond_init(&s->ck_cond, NULL);
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
	if (!rc)
		rc = checkpointer_start(s, path, err);
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

/* ---------------------------------------------------------------------------------------- */
/* Dump (kiln store migrate, migrate.c) */

/* Every row of table name (its columns as SELECT * gives them) into t, strings in a. */
static kiln_rc dump_table(sqlite3 *db, const char *name, struct kiln_arena *a,
                          struct scheduler_table *t, struct kiln_err *err)
{
	char *q = kiln_arena_printf(a, "SELECT * FROM \"%s\"", name);
	sqlite3_stmt *st = NULL;
	size_t cap = 0, i;
	int src = SQLITE_DONE;
	kiln_rc rc = KILN_OK;

	memset(t, 0, sizeof(*t));
	t->name = name;
	if (!q || strchr(name, '"'))
		return kiln_err_set(err, KILN_EINVAL, "table name '%s'", name);
	if (sqlite3_prepare_v2(db, q, -1, &st, NULL) != SQLITE_OK)
		return kiln_err_set(err, KILN_EIO, "%s: %s", name, sqlite3_errmsg(db));
	t->ncols = (size_t)sqlite3_column_count(st);
	t->cols = kiln_arena_array(a, t->ncols + 1, sizeof(*t->cols));
	for (i = 0; t->cols && i < t->ncols; i++)
		t->cols[i] = kiln_arena_strdup(a, sqlite3_column_name(st, (int)i));
	while (t->cols && (src = sqlite3_step(st)) == SQLITE_ROW) {
		if ((t->nrows + 1) * t->ncols > cap) {
			size_t ncap = cap ? cap * 2 : t->ncols * 64;
			const char **v = kiln_arena_array(a, ncap, sizeof(*v));

			if (!v)
				break;
			if (t->nrows)
				memcpy(v, t->vals, t->nrows * t->ncols * sizeof(*v));
			t->vals = v, cap = ncap;
		}
		for (i = 0; i < t->ncols; i++) {
			const char *v = (const char *)sqlite3_column_text(st, (int)i);

			t->vals[t->nrows * t->ncols + i] =
			    sqlite3_column_type(st, (int)i) == SQLITE_NULL
			        ? NULL
			        : kiln_arena_strdup(a, v ? v : "");
		}
		t->nrows++;
	}
	/* SQLITE_ROW: the arena ran out (kiln_arena_finish says so) */
	if (src != SQLITE_DONE && src != SQLITE_ROW)
		rc = kiln_err_set(err, KILN_EIO, "%s: %s", name, sqlite3_errmsg(db));
	sqlite3_finalize(st);
	return rc ? rc : kiln_arena_finish(a, err);
}

kiln_rc scheduler_store_sqlite_dump(const char *path,
                                    kiln_rc (*fn)(void *arg, const struct scheduler_table *t,
                                                  struct kiln_err *err),
                                    void *arg, struct kiln_err *err)
{
	struct kiln_arena names = KILN_ARENA_INIT(KILN_MIB);
	struct scheduler_store *st = NULL;
	const char *tabs[256];
	sqlite3_stmt *q = NULL;
	sqlite3 *db = NULL;
	size_t n = 0, i;
	kiln_rc rc;

	/* opened as a store first: brought to this build's schema */
	rc = scheduler_store_open_sqlite(path, &st, err);
	scheduler_store_close(st);
	if (rc)
		return rc;
	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL) !=
	        SQLITE_OK ||
	    sqlite3_prepare_v2(db,
	                       "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT "
	                       "LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name",
	                       -1, &q, NULL) != SQLITE_OK) {
		rc = kiln_err_set(err, KILN_EIO, "%s: %s", path,
		                  db ? sqlite3_errmsg(db) : "no memory");
		goto out;
	}
	while (sqlite3_step(q) == SQLITE_ROW && n < KILN_ARRAY_SIZE(tabs))
		tabs[n++] = kiln_arena_strdup(&names, (const char *)sqlite3_column_text(q, 0));
	if ((rc = kiln_arena_finish(&names, err)))
		goto out;
	for (i = 0; !rc && i < n; i++) {
		struct kiln_arena a = KILN_ARENA_INIT(KILN_LIMIT_ARENA);
		struct scheduler_table t;

		rc = dump_table(db, tabs[i], &a, &t, err);
		if (!rc)
			rc = fn(arg, &t, err);
		kiln_arena_release(&a);
	}
out:
	sqlite3_finalize(q);
	sqlite3_close(db);
	kiln_arena_release(&names);
	return rc;
}
