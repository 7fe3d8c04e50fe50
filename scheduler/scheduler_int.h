/*
 * scheduler_int.h - the scheduler's insides: the job store interface (one vtable, sqlite3
 * behind it today, a PostgreSQL sibling later), the context, and what the REST handlers
 * share.
 *
 * No SQL outside the store's implementation file (store_sqlite.c): everything else calls
 * the store's ops below. Store calls are thread-safe (the implementation serialises them);
 * strings they return live in the arena the caller passes. The store persists what the
 * scheduler decides: retries and final states, which job a worker gets, which cancels and
 * retries a state allows and the verdict roll-up are policy.c's, carried out through the
 * store by lease.c.
 */
#ifndef KILN_SCHEDULER_INT_H
#define KILN_SCHEDULER_INT_H

#include <pthread.h>

#include "api/api.h"
#include "repo/repo.h"
#include "scheduler/scheduler.h"
#include "sign/sign.h"

/* ---------------------------------------------------------------------------------------- */
/* Records */

enum scheduler_state {
	SCHED_QUEUED = 0,
	SCHED_LEASED = 1,
	SCHED_BUILDING = 2,
	SCHED_SUCCEEDED = 3,
	SCHED_FAILED = 4,
	SCHED_CANCELLED = 5,
	/* [batches] a batch job whose dependency failed: never leased, ended until a retry of
	 * the job it waits for puts it back in the queue (batch.c) */
	SCHED_DEP_FAILED = 6,
};
#define SCHED_NSTATES 7

/* A state's name, "unknown" for no state (model.c). */
const char *scheduler_state_name(enum scheduler_state s);
/* KILN_EINVAL naming the word when it is not a state. */
KILN_MUST_CHECK kiln_rc scheduler_state_parse(const char *s, enum scheduler_state *out,
                                              struct kiln_err *err);
static inline bool scheduler_state_active(enum scheduler_state s)
{
	return s == SCHED_LEASED || s == SCHED_BUILDING;
}
static inline bool scheduler_state_final(enum scheduler_state s)
{
	return s >= SCHED_SUCCEEDED;
}

/* A job as stored. Strings in the arena of the call that filled it. */
struct scheduler_job {
	int64_t id;
	enum scheduler_state state;
	int64_t priority;
	const char *arch;      /* "" = any worker */
	const char *tags;      /* ",tag1,tag2," ("" for none): tags a worker must have */
	const char *spec_name; /* for listings */
	const char *request;   /* canonical request JSON (what the worker gets) */
	const char *manifest;  /* canonical manifest JSON */
	char content_key[65];  /* sha256 of manifest */
	const char *sign_key;  /* key name, "" = none */
	const char *idem_key;  /* Idempotency-Key, "" = none */
	int64_t token_id;      /* who submitted */
	int64_t project_id;    /* the project it belongs to (1: default) */
	const char *project;   /* its name ("" when the project was deleted) */
	int64_t created_ms, updated_ms, started_ms, finished_ms, not_before_ms;
	int64_t attempts, max_attempts, timeout_s;
	bool cancel_requested;
	char lease_id[33]; /* "" when not leased */
	int64_t generation;
	const char *worker; /* "" when not leased */
	int64_t lease_expires_ms;
	const char *failure_class; /* "" / "build" / "infra" / "cancel" / "sign" */
	const char *message;       /* "" or why it failed */
	/* Reproducibility (issue 12, scheduler/reproduce.c) */
	int64_t reruns;            /* reruns asked of this job (made when it succeeds) */
	int64_t rerun_of, rerun_n; /* a rerun: the original job and its number (1..); else 0 */
	const char *avoid_worker;  /* a rerun: the original's worker (anti-affinity) */
	const char *variations;    /* space-separated worker_vary names ("" = all) */
	const char *repro_verdict; /* the original's rolled-up verdict: "" (no reruns),
	                            * "pending", "reproducible", "differs", "rerun_failed",
	                            * "unknown" */
	/* What else the store holds of it, read with the row so the steps after a lease or
	 * an end skip a read for most jobs: it (a rerun: its original) is a batch member
	 * (scheduler/batch.c); it is a rebuild (rebuild.c). */
	bool batch_member, rebuild;
	/* Artifacts uploaded for it (a count of puts, every attempt's): a completion decided
	 * on the uploads it knew ends the lease only if there was none since (store's guard). */
	int64_t uploads;
};

/* One rerun of a job, as GET /api/v1/jobs/{id}/reproducibility shows it. */
struct scheduler_rerun {
	int64_t job_id, n, rerun_job;
	const char *variations;      /* space-separated */
	const char *original_worker; /* the original build's worker */
	const char *worker;          /* the rerun's ("" before its lease) */
	enum scheduler_state state;  /* the rerun job's */
	const char *verdict;         /* "pending" until compared */
};

/* A rebuild (rebuilder mode): its job has the same id. */
struct scheduler_rebuild {
	int64_t job_id, created_ms;
	const char *srpm_name, *srpm_sha256;
	const char *published; /* JSON array: [{name, sha256, buildtime, buildhost,
	                        * changelogtime}] */
	const char *verdict;   /* pending, reproducible, differs, rebuild_failed, unknown */
	const char *report;    /* JSON array of per-package results ("" while pending) */
	const char *text;      /* the readable report ("" while pending) */
};

/* One package compared between the original and a rerun. */
struct scheduler_rerun_artifact {
	int64_t job_id, n;
	const char *name;
	const char *original_sha256, *rerun_sha256; /* unsigned bytes; "" = absent */
	const char *verdict;          /* reproducible, differs, rerun_failed, unknown */
	const char *diff;             /* kiln diff --json object, "" = none */
	const char *text;             /* kiln diff's text, or why there is no diff ("" = none) */
	const char *diffoscope;       /* its output, NULL while none */
	const char *diffoscope_state; /* "" (not asked), pending, done, timeout, skipped,
	                               * missing, failed */
};

/* [batches] A batch (batch.c): source packages built in dependency order on one root, with
 * a repository of its own that later jobs resolve against. Strings in the caller's arena. */
struct scheduler_batch {
	int64_t id, token_id, created_ms, updated_ms;
	int64_t project_id;          /* [projects] its submitter's project, as its jobs' */
	const char *root;            /* the root configuration every member builds on */
	const char *bootstrap;       /* the bootstrap packages, blank-separated ("" none) */
	const char *repository;      /* publish into it when every job succeeded ("" keep) */
	const char *publish_state;   /* "" (not asked), "published", "refused" */
	const char *publish_message; /* why refused; "" */
	const char *idem_key;        /* Idempotency-Key ("" none; insert only) */
	char request_key[65];        /* sha256 of the canonical request ("" none) */
};

/* The most members a submitted batch may have (the body's size bounds it too). */
#define SCHED_BATCH_MAX 5000

/* A member of a batch: its job, place in the graph and what it waits for. */
struct scheduler_batch_member {
	int64_t batch_id, job_id;
	int64_t node;     /* in the order of submission (0..) */
	int64_t level;    /* batch_graph_level */
	int64_t pending;  /* dependencies whose packages are not in the batch repository yet */
	bool landed;      /* its own packages are in the batch repository */
	int64_t wait_on;  /* SCHED_DEP_FAILED: the failed job it waits for; else 0 */
	const char *name; /* the source package's */
	enum scheduler_state state; /* the job's (reads only) */
	const char *spec_name;      /* the job's (reads only) */
	const char *message;        /* the job's (reads only) */
	int64_t reruns;             /* the job's (reads only) */
	const char *repro_verdict;  /* the job's (reads only) */
};

/* An edge of a batch's graph: job_id waits for dep_id (at insert: member indexes). */
struct scheduler_batch_edge {
	int64_t job_id, dep_id;
	const char *why; /* "BuildRequires: libx-devel >= 1" */
};

/* A package published into a repository (publish.c). Strings in the caller's arena. */
struct scheduler_repo_pkg {
	const char *repo; /* "fedora-40", or "fedora-40-v6" for v6 packages */
	const char *file; /* "hello-1.0-1.x86_64.rpm" */
	const char *name, *version, *release;
	const char *arch; /* "src" for a source package */
	int64_t epoch;    /* -1: none */
	char sha256[65];  /* the signed bytes' (a blob) */
	int64_t size, job_id, buildtime, published_ms;
};

/* The last publish of a repository. */
struct scheduler_repo_state {
	const char *name;
	int64_t revision, published_ms;
};

struct scheduler_attempt {
	int64_t job_id, n;
	const char *worker;
	char lease_id[33];
	int64_t generation;
	const char *state; /* "leased", "building", "succeeded", "failed", "lost", "cancelled",
	                    * "released" */
	const char *failure_class, *message;
	int64_t started_ms, ended_ms;
};

struct scheduler_artifact {
	int64_t job_id, attempt;
	const char *name;
	char sha256[65];        /* as uploaded by the worker */
	char signed_sha256[65]; /* after the scheduler signed it; "" when not signed */
	int64_t size, signed_size;
	const char *kind; /* "binary", "source", "log", "result" */
	const char *arch;
};

struct scheduler_worker_info {
	const char *name;
	const char *arches; /* ",x86_64,noarch," */
	const char *tags;   /* ",a,b," */
	int64_t slots, free_disk, busy;
	const char *kernel, *version;
	int64_t last_seen_ms;
	bool draining;
	int64_t token_id; /* the token the name belongs to (register), -1 for none */
};

/* What a worker's calls are checked against: the token its name belongs to (-1: none), its
 * credential (its secret's sha256 hex, "" while none is bound) and when it was last seen. */
struct scheduler_worker_auth {
	int64_t token_id;
	char hash[65];
	int64_t last_seen_ms;
};

struct scheduler_token {
	int64_t id;
	const char *name;
	unsigned scopes;
	int64_t created_ms;
	bool revoked;
	int64_t project_id;  /* the project it acts in (1: default) */
	const char *project; /* its name */
};

/* A project (issue 27): it owns jobs, tokens and repositories; the grant shares workers
 * between projects (policy.c). Strings in the caller's arena. */
#define SCHED_PROJECT_DEFAULT 1 /* the id of "default", which the migration made */
struct scheduler_project {
	int64_t id;
	const char *name;
	int64_t created_ms;
	bool public_read;       /* repositories and dashboard readable without a token */
	int64_t max_running;    /* at most this many leased or building jobs (0: no cap) */
	const char *arch_caps;  /* "x86_64=2,aarch64=1": per-arch caps ("" for none) */
	int64_t grant_seq;      /* the farm's grant count at its last grant (0: never) */
	int64_t key_expires_ms; /* its signing key's expiry (0: no key of its own) */
	const char *roots;      /* "a,b": the root configurations its jobs may use ("": any) */
};

/* A repository a project owns (repositories no project owns are default's). */
struct scheduler_repo_owner {
	const char *repo;
	int64_t project_id;
};

/* Leased or building jobs of a project in one arch ("" for jobs of any arch). */
struct scheduler_project_run {
	int64_t project_id;
	const char *arch;
	int64_t n;
};

/* What a lease grant looks for. */
struct scheduler_misfit;
struct scheduler_lease_query {
	const char *worker;
	const char *arches; /* ",x86_64,noarch," */
	const char *tags;   /* ",a,b," */
	int64_t now_ms, ttl_ms;
	const char *lease_id; /* the new lease's id (random, 32 hex) */
};

/* A queued job a lease could take: what the grant's choice reads of it (lease_candidates;
 * strings in the caller's arena). */
struct scheduler_candidate {
	int64_t id;
	const char *arch, *tags;
	const char *avoid_worker; /* a rerun: its original's worker ("" else) */
	int64_t project_id, priority;
	/* its project's: the grant order and caps (struct scheduler_project) */
	int64_t grant_seq, max_running;
	const char *arch_caps;
};

struct scheduler_job_end;

/* How a lease ends. */
enum scheduler_outcome {
	SCHED_OUT_SUCCEEDED,
	SCHED_OUT_FAILED,    /* class "build": never retried */
	SCHED_OUT_INFRA,     /* class "infra": retried with backoff while attempts remain */
	SCHED_OUT_CANCELLED, /* the worker stopped it on request */
	SCHED_OUT_RELEASED,  /* the worker handed it back (shutting down): requeued, no penalty */
	SCHED_OUT_LOST,      /* the lease expired (reaper) */
};

struct scheduler_finish {
	enum scheduler_outcome outcome;
	const char *failure_class; /* stored as given ("build", "infra", "sign", ...) */
	const char *message;
	int64_t now_ms;
	int64_t backoff_ms; /* for a requeue: not before now + backoff */
	bool *requeued;     /* OUT (may be NULL) */
	/* The scheduler's rule (scheduler_lease_decide), which the store applies to the job
	 * the lease holds as it is when the end is written (read in the same transaction,
	 * or the write guarded by what was read); required. */
	void (*decide)(const struct scheduler_job *j, const struct scheduler_finish *f,
	               struct scheduler_job_end *out);
	/* The job as the caller read it for this lease (may be NULL; borrowed): a store that
	 * guards its write by what the decision read may decide on it first. */
	const struct scheduler_job *known;
	/* OUT (may be NULL): the job as the end left it, read back by the write itself (its
	 * strings in ended_arena, required with it), so the caller's hooks and its reply need
	 * not read it again */
	struct scheduler_job *ended;
	struct kiln_arena *ended_arena;
	/* With uploads_known, the end is written only while the job's uploads are still
	 * uploads (the artifacts signed and checked were all there were); else KILN_ECONFLICT
	 * with *uploads_changed set (required with it). */
	bool uploads_known;
	int64_t uploads;
	bool *uploads_changed;
	/* May be NULL: the next job to lease with the end (struct scheduler_take) */
	struct scheduler_take *take;
};

/* How many picks, in order, one take tries: grants racing for the head of the queue pass
 * to the next pick inside the store instead of coming back for another try. */
#define SCHED_TAKE_PICKS 8
/* The next job a lease's end also leases (a completion asking for its worker's next job):
 * the store writes the take with the end, in the same write, and only when it writes the
 * end. The picks are lease_take's ids (lease.c makes them); the caller owns it all. */
struct scheduler_take {
	const struct scheduler_lease_query *q;
	int64_t ids[SCHED_TAKE_PICKS];
	size_t n;
	struct kiln_arena *a; /* out's strings */
	struct scheduler_job *out;
	/* OUT: tried is set when the end was written with the take; rc is then lease_take's
	 * (KILN_ECONFLICT: none of the picks was queued still), with err for any other */
	bool tried;
	kiln_rc rc;
	struct kiln_err err;
	/* lease.c's: where the picks came from, to give back what was not taken */
	struct cands_slot *slot;
	uint64_t epoch;
	size_t idx[SCHED_TAKE_PICKS];
};

/* What the end of a lease does to its job and attempt: all the store writes. */
struct scheduler_job_end {
	const char *attempt_state;           /* succeeded, failed, cancelled, released, lost */
	bool requeue;                        /* back to the queue, not before not_before_ms */
	enum scheduler_state state;          /* SCHED_QUEUED when requeued, else the final state */
	const char *failure_class, *message; /* the job's ("" on success) */
	int64_t not_before_ms;
	int64_t attempts_back; /* added to max_attempts: a hand-back costs no attempt */
};

/* Counts for /metrics and placement. */
struct scheduler_counts {
	int64_t by_state[SCHED_NSTATES];
	const char **queued_arch; /* arch of each group ("" = any) */
	int64_t *queued_n;
	size_t nqueued;
	int64_t verdicts[5];         /* jobs by repro_verdict, in scheduler_verdict_names order */
	const char **queued_project; /* queued jobs by project name (projects with none left out) */
	int64_t *queued_project_n;
	size_t nqueued_project;
};

/* ---------------------------------------------------------------------------------------- */
/* The store interface */

struct scheduler_store;

/* A webhook delivery as stored (hook_deliveries). */
struct scheduler_hook_delivery {
	const char *forge, *delivery, *event, *project;
	int64_t received_ms;
	const char *result; /* the JSON answer */
	int64_t status;     /* its HTTP status: 200, or 400 for a body that did not parse */
};

/* A job made by a webhook: the forge and commit its statuses go to (hook_jobs). */
struct scheduler_hook_job {
	int64_t job_id;
	const char *forge, *project;
	const char *ref;     /* "refs/heads/main", "refs/tags/v1", "pull/12" */
	const char *url;     /* the clone URL */
	const char *sha;     /* the commit built */
	const char *context; /* the status context, "kiln/<root or arch or spec>" */
};

/* A message in the durable outbox (outbox.c): a commit status or an outgoing webhook event,
 * delivered at least once, in id order per target. Strings in the arena of the read. */
struct scheduler_outbox_item {
	int64_t id;         /* set by the store */
	const char *kind;   /* "status" or "webhook" */
	const char *target; /* what orders delivery: "forge:owner/project@sha" or a webhook name */
	const char *dedup;  /* unique: putting an item with a key already stored adds nothing */
	int64_t job_id;     /* the job it is about; 0 for none */
	const char *body;   /* JSON: the status, or the event as sent */
	int64_t created_ms;
	const char *state; /* "pending", "delivered", "failed" (refused, or given up) */
	int64_t attempts, next_ms, updated_ms;
	int64_t last_status;     /* the HTTP status of the last attempt; 0: none or no answer */
	const char *last_answer; /* its answer or error, at most 512 bytes */
};

/* One attempt to deliver an outbox item. */
struct scheduler_outbox_attempt {
	int64_t item_id, n, at_ms;
	int64_t status;     /* HTTP status; 0: no answer */
	const char *answer; /* the answer's start or the error, at most 512 bytes */
};

/* How many items of a target are in each state. */
struct scheduler_outbox_count {
	const char *target, *state;
	int64_t n;
};

/* A forge's webhook delivery, decoded (hooks.c). */
struct scheduler_hook_payload {
	unsigned kind;       /* an enum scheduler_hook_event bit; 0 when nothing is built */
	const char *ignored; /* why, when kind is 0 */
	const char *project; /* "owner/project" */
	const char *url;     /* the clone URL of the commit's repository */
	const char *sha;     /* the commit ("" for a retrigger comment on GitHub or Forgejo,
	                      * whose payload names none: the pull request's last is rebuilt) */
	const char *ref;     /* "refs/heads/main", "refs/tags/v1", "pull/12" */
	const char *branch;  /* the branch pushed, or the pull request's target; "" for tags */
	int64_t number;      /* the pull request's */
};

/* Decode the body of a delivery of forge kind (event: the X-GitHub-Event, X-Gitea-Event or
 * X-Forgejo-Event header; GitLab's is read from object_kind). Bounded by api_json_decode
 * (size and depth); strings in a. KILN_EINVAL / KILN_ESYNTAX / KILN_ELIMIT naming the
 * field for a malformed body; an event kiln does not build is no error (out->ignored). */
KILN_MUST_CHECK kiln_rc scheduler_hook_parse(enum scheduler_forge_kind kind, const char *event,
                                             const void *body, size_t len, struct kiln_arena *a,
                                             struct scheduler_hook_payload *out,
                                             struct kiln_err *err);

/* What another scheduler on the store did (the store's watch). */
enum scheduler_heard {
	SCHED_HEARD_QUEUED, /* queued or requeued a job (or reordered one) */
	SCHED_HEARD_ENDED,  /* a job ended */
	SCHED_HEARD_REPO,   /* announced a repository */
	SCHED_HEARD_OUTBOX, /* queued an outbox item (a commit status, a webhook event) */
};

struct scheduler_store_ops {
	const char *name;
	void (*close)(struct scheduler_store *st);
	/* Insert job (id, created set by the store). With an idem_key that (token_id, key)
	 * already used: KILN_EEXIST and *id the existing job's. */
	kiln_rc (*job_insert)(struct scheduler_store *st, struct scheduler_job *job, int64_t *id,
	                      struct kiln_err *err);
	kiln_rc (*job_get)(struct scheduler_store *st, int64_t id, struct kiln_arena *a,
	                   struct scheduler_job *out, struct kiln_err *err);
	/* Newest first; project_id 0 for every project's; state < 0 for all; before_id 0 for
	 * the start; name "" for all, else jobs whose spec_name contains it (ASCII
	 * case-insensitive). */
	kiln_rc (*job_list)(struct scheduler_store *st, int64_t project_id, int state,
	                    const char *name, int64_t before_id, int64_t limit,
	                    struct kiln_arena *a, struct scheduler_job **out, size_t *n,
	                    struct kiln_err *err);
	/* Queued jobs of the job's project ahead of it, best first (for placement). */
	kiln_rc (*queue_position)(struct scheduler_store *st, const struct scheduler_job *job,
	                          int64_t *ahead, struct kiln_err *err);
	/* Queued jobs that may run now on one of arches (",x86_64,"; a job of any arch too): of
	 * each project with such jobs its best 64 (priority, then age), with the project's grant
	 * order and caps: what a grant chooses from (scheduler_lease_pick). Taking one records
	 * the grant in its project's grant_seq. */
	kiln_rc (*lease_candidates)(struct scheduler_store *st, int64_t now_ms, const char *arches,
	                            struct kiln_arena *a, struct scheduler_candidate **out,
	                            size_t *n, struct kiln_err *err);
	/* Lease the first of ids[0..n) still queued and due at q->now_ms to q's worker (a new
	 * attempt) and read it into out: one write, so grants racing for the same jobs pass
	 * to the next without another round trip; KILN_ECONFLICT when none is. */
	kiln_rc (*lease_take)(struct scheduler_store *st, const int64_t *ids, size_t n,
	                      const struct scheduler_lease_query *q, struct kiln_arena *a,
	                      struct scheduler_job *out, struct kiln_err *err);
	/* Check that lease_id/generation hold the job (KILN_ECONFLICT otherwise, KILN_ENOTFOUND
	 * for an unknown lease); with ttl_ms > 0 renew it and mark the job building. */
	kiln_rc (*lease_touch)(struct scheduler_store *st, const char *lease_id, int64_t generation,
	                       int64_t now_ms, int64_t ttl_ms, struct kiln_arena *a,
	                       struct scheduler_job *out, struct kiln_err *err);
	kiln_rc (*lease_finish)(struct scheduler_store *st, const char *lease_id,
	                        int64_t generation, const struct scheduler_finish *f,
	                        struct kiln_err *err);
	/* Leases that expired before now_ms, as ids of their jobs (to finish as LOST). */
	kiln_rc (*leases_expired)(struct scheduler_store *st, int64_t now_ms, struct kiln_arena *a,
	                          struct scheduler_job **out, size_t *n, struct kiln_err *err);
	/* queued: a queued job cancelled; else an active job's cancel_requested set.
	 * KILN_ECONFLICT when the job is not in that state (any more). */
	kiln_rc (*job_cancel)(struct scheduler_store *st, int64_t id, int64_t now_ms, bool queued,
	                      struct kiln_err *err);
	/* A failed or cancelled job queued again with budget more attempts; KILN_ECONFLICT when
	 * it is neither (any more). */
	kiln_rc (*job_retry)(struct scheduler_store *st, int64_t id, int64_t now_ms, int64_t budget,
	                     struct kiln_err *err);
	kiln_rc (*attempts_list)(struct scheduler_store *st, int64_t job_id, struct kiln_arena *a,
	                         struct scheduler_attempt **out, size_t *n, struct kiln_err *err);
	/* uploads not NULL: the put is an upload, counted in the job's uploads, whose new
	 * value it gets; NULL: a record of what the scheduler did to one (its signature). */
	kiln_rc (*artifact_put)(struct scheduler_store *st, const struct scheduler_artifact *art,
	                        int64_t *uploads, struct kiln_err *err);
	/* attempt < 0: every attempt's. */
	kiln_rc (*artifacts_list)(struct scheduler_store *st, int64_t job_id, int64_t attempt,
	                          struct kiln_arena *a, struct scheduler_artifact **out, size_t *n,
	                          struct kiln_err *err);
	kiln_rc (*worker_seen)(struct scheduler_store *st, const struct scheduler_worker_info *w,
	                       bool full, struct kiln_err *err);
	kiln_rc (*workers_list)(struct scheduler_store *st, struct kiln_arena *a,
	                        struct scheduler_worker_info **out, size_t *n,
	                        struct kiln_err *err);
	/* Workers seen since since_ms and not draining: name, arches and tags only. */
	kiln_rc (*workers_active)(struct scheduler_store *st, int64_t since_ms,
	                          struct kiln_arena *a, struct scheduler_worker_info **out,
	                          size_t *n, struct kiln_err *err);
	/* KILN_OK when a job token_id submitted has a package of this sha256 (signed or
	 * unsigned), else KILN_ENOTFOUND. */
	kiln_rc (*artifact_owned)(struct scheduler_store *st, const char *sha256, int64_t token_id,
	                          struct kiln_err *err);
	/* The first job that made a package of this sha256 (signed or unsigned);
	 * KILN_ENOTFOUND when none did. */
	kiln_rc (*artifact_job)(struct scheduler_store *st, const char *sha256, int64_t *job_id,
	                        struct kiln_err *err);
	/* What a worker's calls are checked against (one read); KILN_ENOTFOUND for no such
	 * worker. Read on every worker call: the scheduler keeps them a moment
	 * (scheduler_worker_auth). */
	kiln_rc (*worker_auth)(struct scheduler_store *st, const char *name,
	                       struct scheduler_worker_auth *out, struct kiln_err *err);
	/* Bind a worker's credential (its secret's sha256 hex). */
	kiln_rc (*worker_credential_set)(struct scheduler_store *st, const char *name,
	                                 const char *hash, struct kiln_err *err);
	kiln_rc (*token_insert)(struct scheduler_store *st, const char *hash, unsigned scopes,
	                        const char *name, int64_t project_id, int64_t now_ms, int64_t *id,
	                        struct kiln_err *err);
	/* A live token's id, scopes and project; KILN_EAUTH for none. */
	kiln_rc (*token_lookup)(struct scheduler_store *st, const char *hash, int64_t *id,
	                        unsigned *scopes, int64_t *project_id, struct kiln_err *err);
	kiln_rc (*tokens_list)(struct scheduler_store *st, struct kiln_arena *a,
	                       struct scheduler_token **out, size_t *n, struct kiln_err *err);
	kiln_rc (*token_revoke)(struct scheduler_store *st, int64_t id, struct kiln_err *err);
	kiln_rc (*counts)(struct scheduler_store *st, struct kiln_arena *a,
	                  struct scheduler_counts *out, struct kiln_err *err);
	/* Projects (issue 27). insert: KILN_EEXIST for a name taken; *id the new one's. */
	kiln_rc (*project_insert)(struct scheduler_store *st, const struct scheduler_project *p,
	                          int64_t *id, struct kiln_err *err);
	/* By name (id 0) or by id (name NULL); KILN_ENOTFOUND for none. */
	kiln_rc (*project_get)(struct scheduler_store *st, int64_t id, const char *name,
	                       struct kiln_arena *a, struct scheduler_project *out,
	                       struct kiln_err *err);
	kiln_rc (*projects_list)(struct scheduler_store *st, struct kiln_arena *a,
	                         struct scheduler_project **out, size_t *n, struct kiln_err *err);
	/* Set p->id's settings: public_read, max_running, arch_caps, key_expires_ms. */
	kiln_rc (*project_update)(struct scheduler_store *st, const struct scheduler_project *p,
	                          struct kiln_err *err);
	/* Delete project id, revoke its tokens and give its repositories back to default (its
	 * ended jobs stay, readable by farm admins); KILN_ECONFLICT while it has queued or
	 * running jobs. */
	kiln_rc (*project_delete)(struct scheduler_store *st, int64_t id, struct kiln_err *err);
	/* Leased and building jobs by project and arch (what caps count). */
	kiln_rc (*project_running)(struct scheduler_store *st, struct kiln_arena *a,
	                           struct scheduler_project_run **out, size_t *n,
	                           struct kiln_err *err);
	/* Give repository repo to project_id (SCHED_PROJECT_DEFAULT: back to default). */
	kiln_rc (*repo_owner_set)(struct scheduler_store *st, const char *repo, int64_t project_id,
	                          struct kiln_err *err);
	/* The repositories owned by a project other than default, by name. */
	kiln_rc (*repo_owners)(struct scheduler_store *st, struct kiln_arena *a,
	                       struct scheduler_repo_owner **out, size_t *n, struct kiln_err *err);
	/* KILN_OK when a job of project_id has a package of this sha256 (signed or unsigned),
	 * else KILN_ENOTFOUND. */
	kiln_rc (*artifact_in_project)(struct scheduler_store *st, const char *sha256,
	                               int64_t project_id, struct kiln_err *err);
	/* A cheap check that the store answers (health). */
	kiln_rc (*ping)(struct scheduler_store *st, struct kiln_err *err);
	/* Reproducibility. job_insert with rerun_of set also records the rerun's row and
	 * marks the original pending. */
	/* More reruns for a job (made when it succeeds); variations "" keeps the job's. */
	kiln_rc (*reruns_add)(struct scheduler_store *st, int64_t id, int64_t count,
	                      const char *variations, struct kiln_err *err);
	kiln_rc (*reruns_list)(struct scheduler_store *st, int64_t id, struct kiln_arena *a,
	                       struct scheduler_rerun **out, size_t *n, struct kiln_err *err);
	/* Store a rerun's comparison (replacing any) and its verdict; the original's
	 * rolled-up verdict is recomputed with rollup (scheduler_verdict_rollup) from its
	 * reruns' verdicts in the same transaction, into *out (may be NULL; rollup's string). */
	kiln_rc (*rerun_record)(struct scheduler_store *st, int64_t id, int64_t n,
	                        const char *verdict, const struct scheduler_rerun_artifact *arts,
	                        size_t narts, int64_t now_ms,
	                        const char *(*rollup)(const char *const *v, size_t n),
	                        const char **out, struct kiln_err *err);
	kiln_rc (*rerun_artifacts)(struct scheduler_store *st, int64_t id, struct kiln_arena *a,
	                           struct scheduler_rerun_artifact **out, size_t *n,
	                           struct kiln_err *err);
	/* A differing artifact waiting for diffoscope: KILN_ENOTFOUND when none. */
	kiln_rc (*diffoscope_next)(struct scheduler_store *st, struct kiln_arena *a,
	                           struct scheduler_rerun_artifact *out, struct kiln_err *err);
	kiln_rc (*diffoscope_set)(struct scheduler_store *st, int64_t id, int64_t n,
	                          const char *name, const char *state, const char *output,
	                          struct kiln_err *err);
	/* Signed attestations (provenance.c): kind "build" or "rerun", one of each per job. */
	kiln_rc (*attestation_put)(struct scheduler_store *st, int64_t id, const char *kind,
	                           const char *envelope, int64_t now_ms, struct kiln_err *err);
	/* The newest job's attestation of kind for a package of this sha256 (signed or
	 * unsigned): KILN_ENOTFOUND when none. */
	kiln_rc (*attestation_find)(struct scheduler_store *st, const char *sha256,
	                            const char *kind, struct kiln_arena *a, const char **out,
	                            struct kiln_err *err);
	/* Set a job's repro_verdict ("" when its build failed before any rerun). */
	kiln_rc (*repro_verdict_set)(struct scheduler_store *st, int64_t id, const char *verdict,
	                             struct kiln_err *err);
	/* Jobs ended since since_ms whose reproducibility work is not done: reruns not made,
	 * no build provenance, a rerun or rebuild not compared (at most 10000, oldest first). */
	kiln_rc (*repro_undone)(struct scheduler_store *st, int64_t since_ms, struct kiln_arena *a,
	                        int64_t **out, size_t *n, struct kiln_err *err);
	/* Rebuilder mode (rebuild.c): the rebuild job id's published packages and result. */
	kiln_rc (*rebuild_put)(struct scheduler_store *st, int64_t id, const char *srpm_name,
	                       const char *srpm_sha256, const char *published, int64_t now_ms,
	                       struct kiln_err *err);
	/* KILN_ENOTFOUND when job id is no rebuild. */
	kiln_rc (*rebuild_get)(struct scheduler_store *st, int64_t id, struct kiln_arena *a,
	                       struct scheduler_rebuild *out, struct kiln_err *err);
	kiln_rc (*rebuild_record)(struct scheduler_store *st, int64_t id, const char *verdict,
	                          const char *report, const char *text, struct kiln_err *err);
	/* Replace a job's request, manifest and content key (a git job's resolved commit,
	 * scheduler/gitpin.c). */
	kiln_rc (*job_inputs_set)(struct scheduler_store *st, int64_t id, const char *request,
	                          const char *manifest, const char *content_key,
	                          struct kiln_err *err);
	/* Changes (at least) whenever a write ended: what read caches are valid for. With
	 * several schedulers on one store, also when another scheduler's write is heard of
	 * (watch). */
	uint64_t (*version)(struct scheduler_store *st);
	/* Several schedulers on one store (issue 25). Try to hold, or keep holding, the duty
	 * called name ("reaper", "publish:REPO") among the schedulers sharing the store: *held
	 * says whether this one holds it now. A scheduler that dies lets go of its duties, and
	 * the next try elsewhere takes them over. A store only one scheduler opens (sqlite3's)
	 * always holds every duty. */
	kiln_rc (*duty)(struct scheduler_store *st, const char *name, bool *held,
	                struct kiln_err *err);
	/* Call changed, from a thread of the store's, when another scheduler queued a job
	 * (SCHED_HEARD_QUEUED: a grant may have a new candidate, long polls an answer), ended
	 * one (SCHED_HEARD_ENDED: long polls may have an answer) or announced repository repo
	 * (SCHED_HEARD_REPO); any other scheduler's write moves version. changed NULL stops
	 * the calls and returns once none runs. Nothing is heard on a store only one
	 * scheduler opens. */
	kiln_rc (*watch)(struct scheduler_store *st,
	                 void (*changed)(void *arg, enum scheduler_heard what, const char *repo),
	                 void *arg, struct kiln_err *err);
	/* Tell the other schedulers that repository repo has something to publish. */
	kiln_rc (*announce)(struct scheduler_store *st, const char *repo, struct kiln_err *err);
	/* Publishing (publish.c): a repository's packages (replacing one of the same file). */
	kiln_rc (*repo_pkg_put)(struct scheduler_store *st, const struct scheduler_repo_pkg *p,
	                        struct kiln_err *err);
	/* repo NULL: every repository's, by repository then file. */
	kiln_rc (*repo_pkgs)(struct scheduler_store *st, const char *repo, struct kiln_arena *a,
	                     struct scheduler_repo_pkg **out, size_t *n, struct kiln_err *err);
	/* KILN_ENOTFOUND when repo has no such file. */
	kiln_rc (*repo_pkg_delete)(struct scheduler_store *st, const char *repo, const char *file,
	                           struct kiln_err *err);
	/* A job's publishing decision: state "published" or "skipped" (message: why). */
	kiln_rc (*repo_publish_mark)(struct scheduler_store *st, int64_t job_id, const char *repo,
	                             const char *state, const char *message, int64_t now_ms,
	                             struct kiln_err *err);
	/* The decision taken for a job (strings in a); KILN_ENOTFOUND when none yet. */
	kiln_rc (*repo_publish_get)(struct scheduler_store *st, int64_t job_id,
	                            struct kiln_arena *a, const char **state, const char **message,
	                            struct kiln_err *err);
	/* Succeeded original jobs since since_ms naming a repository, without a decision
	 * (at most 10000, oldest first). */
	kiln_rc (*repo_unpublished)(struct scheduler_store *st, int64_t since_ms,
	                            struct kiln_arena *a, int64_t **out, size_t *n,
	                            struct kiln_err *err);
	kiln_rc (*repo_state_put)(struct scheduler_store *st, const char *name, int64_t revision,
	                          int64_t published_ms, struct kiln_err *err);
	kiln_rc (*repo_states)(struct scheduler_store *st, struct kiln_arena *a,
	                       struct scheduler_repo_state **out, size_t *n, struct kiln_err *err);
	/* Forge webhooks (hooks.c): a delivery and the answer it got (in a; KILN_ENOTFOUND for
	 * a new one), recording one (the first recording of a delivery id wins), and the
	 * newest of a forge ("" for every forge), limit at most 1000. */
	kiln_rc (*hook_delivery_get)(struct scheduler_store *st, const char *forge,
	                             const char *delivery, struct kiln_arena *a,
	                             struct scheduler_hook_delivery *out, struct kiln_err *err);
	kiln_rc (*hook_delivery_put)(struct scheduler_store *st,
	                             const struct scheduler_hook_delivery *d, struct kiln_err *err);
	kiln_rc (*hook_deliveries)(struct scheduler_store *st, const char *forge, int64_t limit,
	                           struct kiln_arena *a, struct scheduler_hook_delivery **out,
	                           size_t *n, struct kiln_err *err);
	/* The commit a hook job builds, for its statuses; KILN_ENOTFOUND for no hook job. */
	/* With its first status (status: NULL for none) in the same transaction. */
	kiln_rc (*hook_job_put)(struct scheduler_store *st, const struct scheduler_hook_job *h,
	                        const struct scheduler_outbox_item *status, struct kiln_err *err);
	kiln_rc (*hook_job_get)(struct scheduler_store *st, int64_t job_id, struct kiln_arena *a,
	                        struct scheduler_hook_job *out, struct kiln_err *err);
	/* The newest hook job of a ref ("pull/12"): what a retrigger comment builds again. */
	kiln_rc (*hook_job_last)(struct scheduler_store *st, const char *forge, const char *project,
	                         const char *ref, struct kiln_arena *a,
	                         struct scheduler_hook_job *out, struct kiln_err *err);
	/* The durable outbox (outbox.c, issue 26). put: n items in one transaction, each
	 * skipped when its dedup key is stored already. pending: the oldest pending item of
	 * each target, oldest first (at most 1000). attempt: record an attempt and the item's new state, attempts
	 * (at->n), next_ms and last answer, together. list: items of kind and target, newest
	 * first, ids below before_id (0: from the newest), limit at most 1000. attempts: an
	 * item's, oldest first. counts: items of kind by target and state. */
	kiln_rc (*outbox_put)(struct scheduler_store *st, const struct scheduler_outbox_item *v,
	                      size_t n, struct kiln_err *err);
	kiln_rc (*outbox_pending)(struct scheduler_store *st, struct kiln_arena *a,
	                          struct scheduler_outbox_item **out, size_t *n,
	                          struct kiln_err *err);
	kiln_rc (*outbox_attempt)(struct scheduler_store *st,
	                          const struct scheduler_outbox_attempt *at, const char *state,
	                          int64_t next_ms, struct kiln_err *err);
	kiln_rc (*outbox_list)(struct scheduler_store *st, const char *kind, const char *target,
	                       int64_t before_id, int64_t limit, struct kiln_arena *a,
	                       struct scheduler_outbox_item **out, size_t *n, struct kiln_err *err);
	kiln_rc (*outbox_attempts)(struct scheduler_store *st, int64_t item_id,
	                           struct kiln_arena *a, struct scheduler_outbox_attempt **out,
	                           size_t *n, struct kiln_err *err);
	kiln_rc (*outbox_counts)(struct scheduler_store *st, const char *kind, struct kiln_arena *a,
	                         struct scheduler_outbox_count **out, size_t *n,
	                         struct kiln_err *err);
	/* Jobs ended since since_ms (hook jobs only when hook_only) with no outbox item whose
	 * dedup key is prefix, the job id, ":end:", its attempts: the ends a stop cut off
	 * before they were queued (at most 10000, oldest first). */
	kiln_rc (*outbox_ends_missing)(struct scheduler_store *st, int64_t since_ms,
	                               const char *prefix, bool hook_only, struct kiln_arena *a,
	                               int64_t **out, size_t *n, struct kiln_err *err);
	/* Remove the items delivered or failed before before_ms, with their attempts. */
	kiln_rc (*outbox_prune)(struct scheduler_store *st, int64_t before_ms,
	                        struct kiln_err *err);
	/* [batches] Insert batch b with its n jobs (their ids into job_ids) and members (node,
	 * level, name, pending), and the edges between them (job_id and dep_id given as member
	 * indexes), all in one transaction; *id gets the batch's. With an idem_key that
	 * (token_id, key) used already: KILN_EEXIST, nothing written, *id that batch's. */
	kiln_rc (*batch_insert)(struct scheduler_store *st, const struct scheduler_batch *b,
	                        struct scheduler_job *jobs, const struct scheduler_batch_member *m,
	                        size_t n, const struct scheduler_batch_edge *e, size_t ne,
	                        int64_t *id, int64_t *job_ids, struct kiln_err *err);
	/* KILN_ENOTFOUND when there is no such batch. */
	kiln_rc (*batch_get)(struct scheduler_store *st, int64_t id, struct kiln_arena *a,
	                     struct scheduler_batch *out, struct kiln_err *err);
	/* Newest first, before_id 0 for the start, at most limit. */
	kiln_rc (*batch_list)(struct scheduler_store *st, int64_t before_id, int64_t limit,
	                      struct kiln_arena *a, struct scheduler_batch **out, size_t *n,
	                      struct kiln_err *err);
	/* A batch's members by node, with their jobs' state; and its edges (job ids). */
	kiln_rc (*batch_members)(struct scheduler_store *st, int64_t id, struct kiln_arena *a,
	                         struct scheduler_batch_member **out, size_t *n,
	                         struct kiln_err *err);
	kiln_rc (*batch_edges)(struct scheduler_store *st, int64_t id, struct kiln_arena *a,
	                       struct scheduler_batch_edge **out, size_t *n, struct kiln_err *err);
	/* The member a job is (KILN_ENOTFOUND for a job of no batch). */
	kiln_rc (*batch_member_of)(struct scheduler_store *st, int64_t job_id, struct kiln_arena *a,
	                           struct scheduler_batch_member *out, struct kiln_err *err);
	/* Job job_id's packages are in its batch repository: its dependents wait for one
	 * dependency less. Once per job: *first false when it had landed already. */
	kiln_rc (*batch_landed)(struct scheduler_store *st, int64_t job_id, bool *first,
	                        struct kiln_err *err);
	/* Job job_id failed: every queued job that waits for it, directly or through others,
	 * becomes SCHED_DEP_FAILED with wait_on job_id and message; *n how many. */
	kiln_rc (*batch_dep_fail)(struct scheduler_store *st, int64_t job_id, const char *message,
	                          int64_t now_ms, int64_t *n, struct kiln_err *err);
	/* Job job_id was queued again: the jobs SCHED_DEP_FAILED on it are queued again. */
	kiln_rc (*batch_resume)(struct scheduler_store *st, int64_t job_id, int64_t now_ms,
	                        int64_t *n, struct kiln_err *err);
	/* Batch jobs whose end was not followed through (the scheduler stopped in between):
	 * succeeded without their packages landed, or failed or cancelled with dependents
	 * still queued (at most 10000, oldest first). */
	kiln_rc (*batch_unsettled)(struct scheduler_store *st, struct kiln_arena *a, int64_t **out,
	                           size_t *n, struct kiln_err *err);
	/* Record the publishing of a batch (state "published" or "refused", message why). */
	kiln_rc (*batch_publish_set)(struct scheduler_store *st, int64_t id, const char *repository,
	                             const char *state, const char *message, int64_t now_ms,
	                             struct kiln_err *err);
};

struct scheduler_store {
	const struct scheduler_store_ops *ops;
};

/* The sqlite3 store at path (created with its schema when new; migrated when older).
 * OUT: scheduler_store_close(). */
KILN_MUST_CHECK kiln_rc scheduler_store_open_sqlite(const char *path, struct scheduler_store **out,
                                                    struct kiln_err *err);
void scheduler_store_close(struct scheduler_store *st);
/* The schema version this build writes. */
int scheduler_store_sqlite_version(void);
/* The PostgreSQL store at url (postgresql://...; libpq opened on first use), its schema
 * created or migrated. KILN_EINVAL for a malformed URL or one holding a password (libpq
 * takes it from ~/.pgpass, PGPASSFILE or PGPASSWORD), KILN_EIO for a server it cannot
 * reach. OUT: scheduler_store_close(). */
KILN_MUST_CHECK kiln_rc scheduler_store_open_pg(const char *url, struct scheduler_store **out,
                                                struct kiln_err *err);
/* The same with pool connections (1 to SCHED_STORE_POOL_MAX) for the lease path's writes
 * and the reads, beside the writer's and the listener's. */
KILN_MUST_CHECK kiln_rc scheduler_store_open_pg_pool(const char *url, unsigned pool,
                                                     struct scheduler_store **out,
                                                     struct kiln_err *err);
int scheduler_store_pg_version(void);

/* Moving a farm's job store from sqlite3 to PostgreSQL (migrate.c, kiln store migrate). A
 * table's rows as text: nrows * ncols values, row after row (NULL: SQL NULL). */
struct scheduler_table {
	const char *name;
	const char **cols;
	size_t ncols;
	const char **vals;
	size_t nrows;
};
/* Every table of the sqlite3 store at path (brought to this build's schema first), to fn
 * one at a time (its strings live until fn returns); fn's error stops the dump. */
KILN_MUST_CHECK kiln_rc scheduler_store_sqlite_dump(const char *path,
                                                    kiln_rc (*fn)(void *arg,
                                                                  const struct scheduler_table *t,
                                                                  struct kiln_err *err),
                                                    void *arg, struct kiln_err *err);
struct scheduler_pg_import;
/* The PostgreSQL store at url (created or migrated) with a transaction begun for an
 * import. OUT: scheduler_pg_import_end(). */
KILN_MUST_CHECK kiln_rc scheduler_pg_import_begin(const char *url, struct scheduler_pg_import **out,
                                                  struct kiln_err *err);
/* Insert t's rows into its table, then read back what the table holds of t's columns into
 * back (strings in a). KILN_EINVAL naming a table or column PostgreSQL's schema lacks,
 * KILN_EEXIST when the table had rows already (an import goes into an empty store). */
KILN_MUST_CHECK kiln_rc scheduler_pg_import_table(struct scheduler_pg_import *im,
                                                  const struct scheduler_table *t,
                                                  struct kiln_arena *a,
                                                  struct scheduler_table *back,
                                                  struct kiln_err *err);
/* commit: every identity column's sequence moved past the ids imported, then COMMIT;
 * else ROLLBACK. Frees im (NULL: nothing). */
KILN_MUST_CHECK kiln_rc scheduler_pg_import_end(struct scheduler_pg_import *im, bool commit,
                                                struct kiln_err *err);

struct scheduler;

/* The verdicts, and the roll-up of reruns' verdicts into the job's (policy.c): any
 * differs wins (more reruns cannot undo it), then pending, rerun_failed, unknown; all
 * reproducible is reproducible. n == 0 is "". */
extern const char *const scheduler_verdict_names[5];
const char *scheduler_verdict_rollup(const char *const *v, size_t n);
/* Check variation names (worker_vary_parse) into "time build_path ..." (empty list:
 * empty). KILN_EINVAL naming the field. */
KILN_MUST_CHECK kiln_rc scheduler_vary_check(const struct api_strlist *l, struct kiln_buf *out,
                                             struct kiln_err *err);
/* The "a job ended" hook (ended.c): call when job id may have ended (completion, reaper,
 * cancel). Rebuild comparison, reproducibility (provenance, reruns, comparison) and
 * publishing follow; problems are logged (the job's own outcome stands). */
void scheduler_job_ended(struct scheduler *s, int64_t id);
/* What the caller of the hook already holds of a job that ended (all borrowed): the job as
 * its end left it, and, when arts_known, its last attempt's artifacts as the store holds
 * them now (a completion's, signed), so the steps do not read them again. */
struct scheduler_ended {
	const struct scheduler_job *job;
	const struct scheduler_artifact *arts;
	size_t narts;
	bool arts_known;
};
/* scheduler_job_ended on what the caller read (e->job required). */
void scheduler_job_ended_as(struct scheduler *s, const struct scheduler_ended *e);
/* At start: the jobs that ended in the last week whose reproducibility work (reruns,
 * provenance, a comparison) was not done while the scheduler was stopping, through
 * scheduler_job_ended; then, with repositories, the succeeded jobs without a publishing
 * decision, through scheduler_publish_job_ended. */
void scheduler_job_ended_recover(struct scheduler *s);
/* The reproducibility step of scheduler_job_ended for j, which has ended (reproduce.c): an
 * original that succeeded gets its provenance and reruns; a rerun is compared with its
 * original. */
void scheduler_repro_job_ended(struct scheduler *s, const struct scheduler_ended *e);
/* Provenance (provenance.c): the signed SLSA statement of a succeeded job, and the rerun
 * attestation of a reproducible one; stored with the job. No key: nothing (KILN_OK).
 * e->job's artifacts are e's when it knows them, else read. */
KILN_MUST_CHECK kiln_rc scheduler_provenance_make(struct scheduler *s,
                                                  const struct scheduler_ended *e,
                                                  const char *worker, struct kiln_err *err);
KILN_MUST_CHECK kiln_rc scheduler_rerun_attestation_make(struct scheduler *s,
                                                         const struct scheduler_job *j,
                                                         const char *worker,
                                                         const struct scheduler_rerun *rv,
                                                         size_t rn, struct kiln_err *err);
/* A rebuild job ended: compare what it built with the published packages (rebuild.c);
 * nothing for other jobs. */
void scheduler_rebuild_job_ended(struct scheduler *s, const struct scheduler_job *j);
/* The thread that runs diffoscope on differing packages; stop joins it. */
KILN_MUST_CHECK kiln_rc scheduler_diffoscope_start(struct scheduler *s, struct kiln_err *err);
void scheduler_diffoscope_stop(struct scheduler *s);

/* ---------------------------------------------------------------------------------------- */
/* Job requests */

struct scheduler_source_ref {
	const char *name;
	const char *sha256;
};

struct scheduler_git_ref {
	const char *url, *ref, *spec;
};

/* A job's own build limits: each only lowers the worker's (0 = the worker's). */
struct scheduler_job_limits {
	int64_t pids, memory, cpu, log;
};

struct scheduler_request {
	const char *spec;           /* inline spec text, or NULL */
	const char *spec_name;      /* "hello.spec" */
	struct api_objlist sources; /* struct scheduler_source_ref */
	struct scheduler_source_ref srpm;
	bool has_srpm;
	struct scheduler_git_ref git;
	bool has_git;
	/* [projects] set by the scheduler itself for its own jobs (a [hook]'s project), never
	 * from a request body: the job's project, 0 for the caller's */
	int64_t project_id;
	struct api_strmap defines;
	struct api_strlist with, without, formats, tags;
	const char *arch;
	int64_t priority, reruns, reproduce, timeout, source_date_epoch, max_attempts;
	struct api_strlist variations;
	bool has_sde;
	const char *sign_key;
	const char *repository;
	const char *project;   /* the project it goes to (NULL: the token's); not in the manifest */
	const char *root;      /* a root configuration's name (workers offering it take the job) */
	const char *root_lock; /* its lock's identity once pinned (rootpin.c), else NULL */
	struct scheduler_job_limits limits;
	bool has_limits;
};

/* Name root configuration root (and its pinned lock, NULL for none) in r, with the
 * "root:NAME" tag that places it; KILN_EINVAL for a malformed name. */
KILN_MUST_CHECK kiln_rc scheduler_request_root(struct scheduler_request *r, const char *root,
                                               const char *lock, struct kiln_arena *a,
                                               struct kiln_err *err);

/* [batches] The fields of a job request (a batch's members are decoded with them), and the
 * checks scheduler_request_parse() makes after decoding (r decoded into a). */
extern const struct api_field scheduler_request_fields[];
KILN_MUST_CHECK kiln_rc scheduler_request_check(struct scheduler_request *r, struct kiln_arena *a,
                                                struct kiln_err *err);

/* [batches] A POST /api/v1/batches body (batch.c). */
struct scheduler_batch_body {
	const char *root;
	struct api_objlist members; /* struct scheduler_request */
	struct api_strlist bootstrap;
	const char *repository;
};
/* Decode and check one (strict): a root, at least one member, each as
 * scheduler_request_check() on the batch's root, naming no other root, no lock, no
 * repository and no git; strings in a. KILN_EINVAL/ESYNTAX/ELIMIT naming the field. */
KILN_MUST_CHECK kiln_rc scheduler_batch_parse(const void *body, size_t len, struct kiln_arena *a,
                                              struct scheduler_batch_body *out,
                                              struct kiln_err *err);

/* [batches] Batches (batch.c, docs/batches.md). A job ended (scheduler_job_ended): a batch
 * job that succeeded has its binary packages added to the batch repository, and its
 * dependents wait for one dependency less; one that failed or was cancelled makes its
 * dependents dep_failed; a batch whose jobs all succeeded is published when it names a
 * repository. Problems are logged. */
void scheduler_batch_job_ended(struct scheduler *s, const struct scheduler_job *j);
/* At start: the batch jobs whose end a stop cut off (batch_unsettled) through
 * scheduler_batch_job_ended, so no dependent waits for a hand-over that never comes. */
void scheduler_batch_recover(struct scheduler *s);
/* Job id was queued again (a retry): the jobs dep_failed on it wait again. */
void scheduler_batch_job_retried(struct scheduler *s, int64_t id);
/* A batch job's "batch": {id, level, pending, waiting_for, depends_on} member for its JSON
 * (GET /api/v1/jobs/{id}); nothing for a job of no batch. */
void scheduler_batch_job_json(struct scheduler *s, struct api_jw *w, int64_t id,
                              struct kiln_arena *a);
/* The batch repository a lease of job id resolves its root against ("/batches/N/repo",
 * in a), NULL for a job of no batch. */
const char *scheduler_batch_repo_of(struct scheduler *s, int64_t id, struct kiln_arena *a);

/* Decode and validate a POST /api/v1/jobs body (strict: unknown fields are errors); strings
 * in a. KILN_EINVAL/ESYNTAX/ELIMIT naming the field. */
KILN_MUST_CHECK kiln_rc scheduler_request_parse(const void *body, size_t len, struct kiln_arena *a,
                                                struct scheduler_request *out,
                                                struct kiln_err *err);

/* ---------------------------------------------------------------------------------------- */
/* The context */

struct scheduler_hist {
	int64_t buckets[12]; /* cumulative counts are computed when printed */
	int64_t count;
	double sum;
};

/* The dashboard's time series (web.c): a ring of samples taken every history_interval. */
#define SCHED_HISTORY_MAX 720

struct scheduler_sample {
	int64_t t_ms;
	int64_t queued, running, succeeded, failed;
	int64_t verdicts[5]; /* jobs by rolled-up verdict, scheduler_verdict_names order */
};

struct scheduler_history {
	pthread_mutex_t lock;
	struct scheduler_sample v[SCHED_HISTORY_MAX];
	size_t head, n; /* v[head] is the oldest of n */
	int64_t next_ms;
};

#define SCHED_SEEN_SLOTS 64
#define SCHED_AUTH_SLOTS 64
/* How long a worker's owner and credential read here are trusted (scheduler.auth) */
#define SCHED_AUTH_TTL_MS 2000

struct scheduler {
	const struct scheduler_config *cfg;
	struct scheduler_store *store;
	struct api_server *http;
	char *blob_dir, *log_dir, *tmp_dir; /* owned */
	struct sign_key **keys;             /* owned; by cfg->keys index */
	pthread_mutex_t log_lock;           /* appends to log files */
	pthread_mutex_t stats_lock;
	int64_t lease_grants, lease_expiries, retries_lost, retries_infra, signed_packages;
	int64_t lease_grants_next;     /* of lease_grants: in a completion's reply ("next") */
	int64_t lease_grants_with_end; /* of lease_grants_next: taken in the end's write */
	/* The workers' caches (http_workers.c), in slots by util_hash_str of the name, under
	 * workers_lock (off stats_lock, which every grant's counters take). seen: when each
	 * worker's last_seen was last written from here; a lease or heartbeat within a second
	 * of it writes nothing. auth: owners and credentials read lately (every worker call
	 * checks them), trusted SCHED_AUTH_TTL_MS at most and forgotten as this scheduler
	 * registers the name; another scheduler's new binding is seen within that time. */
	pthread_mutex_t workers_lock;
	struct scheduler_seen {
		char name[65];
		int64_t ms;
		bool draining;
	} seen[SCHED_SEEN_SLOTS];
	struct scheduler_auth_ent {
		char name[65];
		struct scheduler_worker_auth v;
		int64_t until_ms; /* monotonic */
	} auth[SCHED_AUTH_SLOTS];
	int64_t publish_failures;
	struct scheduler_hist wait_hist, build_hist, publish_hist;
	struct scheduler_publisher *publisher; /* owned (publish.c); NULL without repositories */
	char public_host[256];                 /* the listening host, for .repo files */
	unsigned port;                         /* the bound port */
	pthread_t dfs_thread;                  /* diffoscope runs (reproduce.c) */
	bool dfs_running;
	volatile int dfs_stop;
	struct scheduler_history history;
	struct scheduler_jobcache *jobcache; /* owned (jobcache.c) */
	struct scheduler_cands *cands;       /* owned (lease.c) */
	struct scheduler_leases *leases;     /* owned (lease_kept.c) */
	struct scheduler_outbox *outbox; /* owned (outbox.c); NULL without [hook]s, [webhook]s */
	bool
	    reaper; /* this scheduler holds the "reaper" duty (the serve loop's; read atomically) */
	pthread_mutex_t batch_lock; /* [batches] writes of batch repositories (batch.c) */
};

/* The durable outbox (outbox.c): its sender thread (none without [hook]s and [webhook]s),
 * started after the ends a stop cut off were queued; put queues items (store, then wakes
 * the sender; problems are logged); kick wakes the sender. */
KILN_MUST_CHECK kiln_rc scheduler_outbox_start(struct scheduler *s, struct kiln_err *err);
void scheduler_outbox_stop(struct scheduler *s);
void scheduler_outbox_put(struct scheduler *s, const struct scheduler_outbox_item *v, size_t n);
void scheduler_outbox_kick(struct scheduler *s);
/* How a try went: taken (2xx), refused for good (another 4xx), or to try again (no answer,
 * 408, 429, 5xx). */
enum scheduler_send { SCHED_SEND_OK, SCHED_SEND_REFUSED, SCHED_SEND_RETRY };
/* POST body to base_url + path (token: a bearer token or NULL; headers: NULL-terminated
 * "Name: value" lines, 4 at most, or NULL); the status (0: no answer) and the answer's
 * first 500 bytes or the error into answer. */
enum scheduler_send scheduler_outbox_http(const char *base_url, const char *path, const char *token,
                                          const char *const *headers, const char *body,
                                          int64_t *status, struct kiln_buf *answer);
/* The dashboard page of a job, for links sent out. */
void scheduler_job_url(const struct scheduler *s, int64_t job_id, char *out, size_t size);

/* Commit statuses of hook jobs (hookstatus.c), through the outbox. item: the outbox item of
 * a status of hook job h (strings in a; key tells it from the job's other statuses),
 * KILN_ENOTFOUND when its forge has no api_url. status: queue one for a job (pending,
 * running, success, failure, error), nothing unless it is a hook's; job_ended: the one a
 * job's end calls for; send: post an item (the outbox's sender). */
KILN_MUST_CHECK kiln_rc scheduler_hook_status_item(
    const struct scheduler *s, const struct scheduler_hook_job *h, const char *state,
    const char *desc, bool verdict, const char *key, struct kiln_arena *a,
    struct scheduler_outbox_item *out, struct kiln_err *err);
void scheduler_hook_status(struct scheduler *s, int64_t job_id, const char *state, const char *desc,
                           const char *key);
void scheduler_hook_job_ended(struct scheduler *s, const struct scheduler_job *j);
enum scheduler_send scheduler_hook_status_send(struct scheduler *s,
                                               const struct scheduler_outbox_item *it,
                                               int64_t *status, struct kiln_buf *answer);

/* Outgoing webhooks (webhook.c), through the outbox: a job's state change (queued,
 * building, its end) and a repository's publish, queued for each [webhook] taking them;
 * send: post an item, signed (the outbox's sender). */
void scheduler_webhook_job_state(struct scheduler *s, const struct scheduler_job *j);
void scheduler_webhook_publish(struct scheduler *s, const char *repo, int64_t revision,
                               int64_t published_ms);
enum scheduler_send scheduler_webhook_send(struct scheduler *s,
                                           const struct scheduler_outbox_item *it, int64_t *status,
                                           struct kiln_buf *answer);

/* GET /api/v1/jobs/{id} bodies by job and store version (jobcache.c). Without a cache
 * (NULL: out of memory) get misses and put does nothing. */
struct scheduler_jobcache *scheduler_jobcache_new(void);
void scheduler_jobcache_free(struct scheduler_jobcache *c);
/* Append the body kept for id at version to out and set who's id, project_id and token_id
 * (what scheduler_job_visible reads) from it: false, who and out untouched, when there is
 * none. */
bool scheduler_jobcache_get(struct scheduler_jobcache *c, int64_t id, uint64_t version,
                            struct scheduler_job *who, struct kiln_buf *out);
/* Keep body as j's (its id, project and submitter) at version; body is copied. */
void scheduler_jobcache_put(struct scheduler_jobcache *c, const struct scheduler_job *j,
                            uint64_t version, const char *body, size_t len);
/* Publishing (publish.c, docs/publish.md). start: the publisher threads (none without
 * [repositories]), every repository marked for a publish; stop joins them. */
KILN_MUST_CHECK kiln_rc scheduler_publish_start(struct scheduler *s, struct kiln_err *err);
void scheduler_publish_stop(struct scheduler *s);
/* A job (or its reproducibility verdict) ended: publish its packages into the repository
 * it names when it succeeded and, with reruns, was found reproducible; record the
 * decision. Problems are logged. */
void scheduler_publish_job_ended(struct scheduler *s, int64_t id);
/* The same for original j (rerun_of 0) as the caller read it after its end. */
void scheduler_publish_original_ended(struct scheduler *s, const struct scheduler_job *j);
/* Ask for a publish of repository name (KILN_ENOTFOUND when there is none). */
KILN_MUST_CHECK kiln_rc scheduler_publish_regenerate(struct scheduler *s, const char *name,
                                                     struct kiln_err *err);
/* Remove the package what (a file name, or NAME-[E:]V-R.ARCH) from repository repo and
 * republish; *removed gets how many went. */
KILN_MUST_CHECK kiln_rc scheduler_publish_remove(struct scheduler *s, const char *repo,
                                                 const char *what, int64_t *removed,
                                                 struct kiln_err *err);
/* Several schedulers on one store: take or keep the duty of publishing each repository
 * (the serve loop calls it each tick; a repository taken over is published); and a publish
 * another scheduler announced for repository name ("": every one). */
void scheduler_publish_duties(struct scheduler *s);
void scheduler_publish_heard(struct scheduler *s, const char *name);
/* The kiln_duties_held lines of the repositories' duties (metrics.c). */
void scheduler_publish_duties_text(struct scheduler *s, struct kiln_buf *o);
/* [batches] Publish the packages of the n jobs ids into repository repo together: every
 * package recorded before the repository is marked for its (one) publish. KILN_ENOTFOUND
 * when repo is not configured. */
KILN_MUST_CHECK kiln_rc scheduler_publish_jobs(struct scheduler *s, const int64_t *ids, size_t n,
                                               const char *repo, struct kiln_err *err);
/* Wait (at most timeout_ms) until no publish is pending or running here. */
void scheduler_publish_wait(struct scheduler *s, int64_t timeout_ms);

/* Routes (http_*.c). */
extern const struct api_route scheduler_routes[];

/* Comparing two packages (compare.c): reproducibility reruns and rebuilds judge alike. */
struct pack_diff_item;
struct scheduler_compare_opts {
	const char *old_label, *new_label; /* name the two sides in the rendered diff */
	size_t json_max, text_max;         /* bounds of the rendered diff; past them: NULL */
	/* A difference to set aside (it counts neither as payload nor as metadata): true with
	 * the reason in why (size bytes). NULL: none is set aside. */
	bool (*ignore)(void *arg, const struct pack_diff_item *it, char *why, size_t size);
	void *ignore_arg;
};
/* Labels "old"/"new", 4 MiB of JSON, 1 MiB of text, nothing set aside. */
void scheduler_compare_opts_init(struct scheduler_compare_opts *o);

/* What scheduler_compare_blobs() found; strings in the caller's arena. */
struct scheduler_compare {
	bool compared;        /* false: error says why the packages could not be read */
	const char *error;    /* kiln_err text, when !compared */
	size_t nitems;        /* differences pack_diff_files() found, the ignored included */
	size_t ndiffs;        /* those not set aside */
	bool payload_match;   /* no difference (not set aside) in the payload */
	bool metadata_match;  /* nor in the header's other tags */
	const char **ignored; /* the reasons of the differences set aside */
	size_t nignored;
	const char *json, *text; /* every difference rendered (pack_diff_format); NULL when
	                          * identical or too large to render */
};
/* Compare the blobs old_sha256 and new_sha256 (the signature headers set aside). */
void scheduler_compare_blobs(const struct scheduler *s, const char *old_sha256,
                             const char *new_sha256, const struct scheduler_compare_opts *o,
                             struct kiln_arena *a, struct scheduler_compare *out);

/* The lock a job's root was resolved to (rootpin.c): *out the identity pinned in the
 * manifest ("root_lock"), "" when none is yet. */
void scheduler_root_lock_get(const char *manifest, char out[65]);
/* Pin the lock a worker reports (its JSON text, checked as roots/ reads a lock): kept as a
 * blob of its canonical bytes, its identity written into the job's manifest and request,
 * the content key recomputed. The same lock again is fine; another is KILN_EINVAL. */
KILN_MUST_CHECK kiln_rc scheduler_root_pin(struct scheduler *s, const struct scheduler_job *j,
                                           const char *text, struct kiln_err *err);

/* The root configuration (*root, NULL for the worker's default) and pinned lock (lock, ""
 * for none) of the job that made the package sha256, so a rebuild of a published package
 * builds on the same root; a package this farm did not make has none. */
KILN_MUST_CHECK kiln_rc scheduler_root_of_artifact(struct scheduler *s, const char *sha256,
                                                   struct kiln_arena *a, const char **root,
                                                   char lock[65], struct kiln_err *err);

/* The data directory (datadir.c): its blobs/, logs/, tmp/ and keys/ made, their paths in s
 * (freed by scheduler_datadir_release, which also frees the keys). */
KILN_MUST_CHECK kiln_rc scheduler_datadir_open(struct scheduler *s,
                                               const struct scheduler_config *cfg,
                                               struct kiln_err *err);
void scheduler_datadir_release(struct scheduler *s);
/* The configured keys into s->keys, or the default key (made in DATA/keys/ on first
 * start), which is added to cfg's key table: cfg is written here, before serving starts. */
KILN_MUST_CHECK kiln_rc scheduler_keys_load(struct scheduler *s, struct scheduler_config *cfg,
                                            struct kiln_err *err);

/* Blobs: content-addressed files under blob_dir/ab/abcd... */
void scheduler_blob_path(const struct scheduler *s, const char *sha256, struct kiln_buf *out);
/* Move the file at tmp (sha256 already checked) into the blob store. */
KILN_MUST_CHECK kiln_rc scheduler_blob_adopt(struct scheduler *s, const char *tmp,
                                             const char *sha256, struct kiln_err *err);
bool scheduler_blob_exists(const struct scheduler *s, const char *sha256);
/* A new file prefix-XXXXXX in tmp_dir, open (O_CLOEXEC) in *fd with its name in path; the
 * caller closes it and removes or adopts it. */
KILN_MUST_CHECK kiln_rc scheduler_tmp_file(struct scheduler *s, const char *prefix,
                                           struct kiln_buf *path, int *fd, struct kiln_err *err);
/* Store data as a blob; sha256 (65 bytes) gets its digest. */
KILN_MUST_CHECK kiln_rc scheduler_blob_put_mem(struct scheduler *s, const void *data, size_t len,
                                               char sha256[65], struct kiln_err *err);

/* Log files: log_dir/JOB/ATTEMPT.log */
void scheduler_log_path(const struct scheduler *s, int64_t job, int64_t attempt,
                        struct kiln_buf *out);

/* Projects' own keys (projkey.c): DATA/keys/project-NAME.key. make: a new key for p
 * expiring in days, p->key_expires_ms set (replacing the file of a deleted project of the
 * same name); load: *out the caller's, KILN_ENOTFOUND when the project has none; extend: a
 * new self-signature on the same key, expiring days from now (p->key_expires_ms set);
 * remove: the file gone with its project (problems logged). */
KILN_MUST_CHECK kiln_rc scheduler_project_key_make(struct scheduler *s, struct scheduler_project *p,
                                                   int64_t days, struct kiln_err *err);
KILN_MUST_CHECK kiln_rc scheduler_project_key_load(const struct scheduler *s, const char *name,
                                                   struct sign_key **out, struct kiln_err *err);
KILN_MUST_CHECK kiln_rc scheduler_project_key_extend(struct scheduler *s,
                                                     struct scheduler_project *p, int64_t days,
                                                     struct kiln_err *err);
void scheduler_project_key_remove(struct scheduler *s, const char *name);

/* Sign every package of arts (n: the artifacts of the job's current attempt, as the caller
 * read them; each signed one is updated in place and stored) with the job's key
 * (signing.c): a job of a project with a key of its own, with that key. */
KILN_MUST_CHECK kiln_rc scheduler_sign_artifacts(struct scheduler *s,
                                                 const struct scheduler_job *job,
                                                 struct scheduler_artifact *arts, size_t n,
                                                 struct kiln_err *err);
/* The key of a name ("" = none: NULL and KILN_OK; unknown: KILN_ENOTFOUND). */
KILN_MUST_CHECK kiln_rc scheduler_key_find(const struct scheduler *s, const char *name,
                                           const struct sign_key **out, struct kiln_err *err);

/* ---------------------------------------------------------------------------------------- */
/* Leases and job transitions (lease.c): the decisions of policy.c applied through the store */

/* Lease the best queued job that fits q's worker (scheduler_lease_pick) into out;
 * KILN_ENOTFOUND when none does. A job another grant took meanwhile is passed over. */
KILN_MUST_CHECK kiln_rc scheduler_lease_grant(struct scheduler_store *st,
                                              const struct scheduler_lease_query *q,
                                              struct kiln_arena *a, struct scheduler_job *out,
                                              struct kiln_err *err);
/* The candidates a scheduler keeps between grants (lease.c): read once for many grants
 * while no job was queued, requeued or reordered (scheduler_cands_invalidate) and for at
 * most SCHED_CANDS_TTL_MS (a job whose backoff ends is seen within that). Each grant picks
 * from them and takes its picks out, so grants at once pick different jobs; a pick that
 * was not tried goes back. A candidate another scheduler took is passed over by the take
 * (KILN_ECONFLICT), as with fresh candidates. Caps and anti-affinity read afresh. */
#define SCHED_CANDS_SLOTS 4 /* by the workers' arches */
#define SCHED_CANDS_TTL_MS 500
struct scheduler_cands;
/* NULL on ENOMEM; free with scheduler_cands_free(). */
struct scheduler_cands *scheduler_cands_new(void);
void scheduler_cands_free(struct scheduler_cands *c);
/* Something may have queued, requeued or reordered jobs: read them again. */
void scheduler_cands_invalidate(struct scheduler_cands *c);
/* How many times the kept candidates were read from the store (0 for NULL). */
uint64_t scheduler_cands_reads(struct scheduler_cands *c);
/* scheduler_lease_grant() from the candidates kept in c (NULL: read them now). */
KILN_MUST_CHECK kiln_rc scheduler_lease_grant_kept(struct scheduler_store *st,
                                                   struct scheduler_cands *c,
                                                   const struct scheduler_lease_query *q,
                                                   struct kiln_arena *a, struct scheduler_job *out,
                                                   struct kiln_err *err);
/* A grant's picks made from the candidates kept in c for t->q, ahead of the end that takes
 * them (struct scheduler_take): taken out of c until scheduler_lease_picks_done().
 * KILN_ENOTFOUND when the kept candidates do not decide it (none left for q, caps): the
 * grant is then made after the end (scheduler_lease_grant_kept). */
KILN_MUST_CHECK kiln_rc scheduler_lease_picks(struct scheduler_store *st, struct scheduler_cands *c,
                                              struct scheduler_take *t, struct kiln_err *err);
/* After the end that carried t: the picks not taken go back into c. */
void scheduler_lease_picks_done(struct scheduler_cands *c, struct scheduler_take *t);
/* The jobs of the leases granted or renewed here, by lease id (lease_kept.c): a heartbeat
 * or a completion checks and decides on the kept job instead of reading it, while its
 * lease runs (the end's write is guarded by what it was decided on). */
struct scheduler_leases;
/* NULL on ENOMEM; free with scheduler_leases_free(). */
struct scheduler_leases *scheduler_leases_new(void);
void scheduler_leases_free(struct scheduler_leases *m);
/* Keep a copy of j, a lease just granted (granted: its attempt has no artifact yet) or
 * renewed (m NULL: nothing). */
void scheduler_leases_keep(struct scheduler_leases *m, const struct scheduler_job *j, bool granted);
/* Artifact art was uploaded here for lease lid at generation, after which the job's
 * uploads were uploads: kept with the lease's others, or (an upload elsewhere came
 * between) they are no longer known here. */
void scheduler_leases_artifact_add(struct scheduler_leases *m, const char *lid, int64_t generation,
                                   const struct scheduler_artifact *art, int64_t uploads);
/* Every artifact of the attempt of lease lid at generation, as uploaded here since its
 * grant here, copied into *out, *n (strings in a), and the job's uploads they make: when
 * known (the lease kept, active, running past now_ms by a margin, no upload elsewhere
 * seen); false otherwise. */
bool scheduler_leases_artifacts(struct scheduler_leases *m, const char *lid, int64_t generation,
                                int64_t now_ms, struct kiln_arena *a,
                                struct scheduler_artifact **out, size_t *n, int64_t *uploads);
/* The lease lid ended (or may have): forget it. */
void scheduler_leases_forget(struct scheduler_leases *m, const char *lid);
/* The job of lease lid at generation, copied into out (strings in a), when it is kept, is
 * active and its lease runs past now_ms by a margin; false otherwise. */
bool scheduler_leases_find(struct scheduler_leases *m, const char *lid, int64_t generation,
                           int64_t now_ms, struct kiln_arena *a, struct scheduler_job *out);
/* A job was queued, requeued or reordered: the kept candidates go, long polls wake. */
void scheduler_queue_changed(struct scheduler *s);
/* Finish a lease (scheduler_lease_decide) and keep the metrics; wakes long polls. */
KILN_MUST_CHECK kiln_rc scheduler_lease_end(struct scheduler *s, const char *lease_id,
                                            int64_t generation, struct scheduler_finish *f,
                                            struct kiln_err *err);
/* One pass of the reaper: expire lost leases. */
void scheduler_reap(struct scheduler *s);
/* Cancel job id (scheduler_cancel_decide); *state gets its new state. KILN_ECONFLICT when
 * it has ended, KILN_ENOTFOUND when there is none. */
KILN_MUST_CHECK kiln_rc scheduler_job_cancel(struct scheduler_store *st, int64_t id, int64_t now_ms,
                                             enum scheduler_state *state, struct kiln_err *err);
/* Queue a failed or cancelled job again (scheduler_retry_decide); KILN_ECONFLICT else. */
KILN_MUST_CHECK kiln_rc scheduler_job_retry(struct scheduler_store *st, int64_t id, int64_t now_ms,
                                            struct kiln_err *err);

/* ---------------------------------------------------------------------------------------- */
/* Policy (policy.c): the scheduler's decisions, functions of records only (no store, no
 * clock), so one rule holds for every store and each is tested without a database. */

/* Backoff before attempt n+1 after n attempts: [scheduler] backoff doubled per attempt,
 * at most backoff_max. */
int64_t scheduler_backoff_ms(const struct scheduler *s, int64_t attempts);
/* What the end of a lease with f does to job j (its lease's holder): a hand-back is
 * requeued without using an attempt, a lost lease or an infra failure is requeued after
 * f->backoff_ms while attempts remain, anything else ends the job (cancelled when a cancel
 * was asked). */
void scheduler_lease_decide(const struct scheduler_job *j, const struct scheduler_finish *f,
                            struct scheduler_job_end *out);
/* A cancel of j: *to is cancelled for a queued job, its own state for a running one (its
 * worker is asked to stop); KILN_ECONFLICT when j has ended. */
KILN_MUST_CHECK kiln_rc scheduler_cancel_decide(const struct scheduler_job *j,
                                                enum scheduler_state *to, struct kiln_err *err);
/* A retry of j: *budget more attempts (those j had left, at least one); KILN_ECONFLICT
 * unless j failed or was cancelled. */
KILN_MUST_CHECK kiln_rc scheduler_retry_decide(const struct scheduler_job *j, int64_t *budget,
                                               struct kiln_err *err);
/* The candidate (of n) worker q gets: of those that fit it (scheduler_job_fits), are no
 * rerun of its own build and whose project is under its caps (scheduler_quota_full over
 * run), the first in the fair-share order: the project granted longest ago (grant_seq, then
 * project id), then priority, then age. n when none is. *avoided gets the first such rerun
 * of q's own build (n for none), which q gets only when no other worker could take it
 * (scheduler_rerun_elsewhere). Candidates with id 0 are passed over. */
size_t scheduler_lease_pick(const struct scheduler_candidate *c, size_t n,
                            const struct scheduler_lease_query *q,
                            const struct scheduler_project_run *run, size_t nrun, size_t *avoided);
/* Does any candidate's project have a cap (so the grant must read what runs)? */
bool scheduler_candidates_capped(const struct scheduler_candidate *c, size_t n);
/* Why a project's job waits: running of cap, in arch ("" for the overall cap). */
struct scheduler_quota {
	int64_t running, cap;
	const char *arch;
};
/* Is project_id's cap reached for a job of arch: max_running (0: none) leased or building
 * jobs in all, or its arch's cap in arch_caps ("x86_64=2,aarch64=1")? run: leased and
 * building jobs by project and arch. why (may be NULL) gets the figures. */
bool scheduler_quota_full(int64_t project_id, int64_t max_running, const char *arch_caps,
                          const char *arch, const struct scheduler_project_run *run, size_t nrun,
                          struct scheduler_quota *why);
/* Check a project's arch_caps ("ARCH=N,..." with N 1..1000000; "" for none): KILN_EINVAL
 * naming the field. */
KILN_MUST_CHECK kiln_rc scheduler_arch_caps_check(const char *s, struct kiln_err *err);
/* Anti-affinity: could a worker of w (active ones: seen within two lease TTLs, not draining)
 * other than self take c? */
bool scheduler_rerun_elsewhere(const struct scheduler_candidate *c, const char *self,
                               const struct scheduler_worker_info *w, size_t n);

/* Count seconds into histogram h (metrics.c); thread-safe (stats_lock). */
void scheduler_hist_add(struct scheduler *s, struct scheduler_hist *h, double seconds);

/* JSON of records (http_json.c). */
void scheduler_job_json(struct api_jw *w, const struct scheduler_job *j);
/* The same members without the enclosing braces (to add more). */
void scheduler_job_json_fields(struct api_jw *w, const struct scheduler_job *j);
void scheduler_attempt_json(struct api_jw *w, const struct scheduler_attempt *a);
void scheduler_artifact_json(struct api_jw *w, const struct scheduler_artifact *a);
void scheduler_worker_json(struct api_jw *w, const struct scheduler_worker_info *wi,
                           int64_t now_ms);

/* Placement explanation for a job (dispatch.c). */
KILN_MUST_CHECK kiln_rc scheduler_placement_json(struct scheduler *s, const struct scheduler_job *j,
                                                 struct kiln_arena *a, struct api_jw *w,
                                                 struct kiln_err *err);
/* Why a job does not fit a worker (scheduler_job_fits). */
enum scheduler_misfit_what { SCHED_MISFIT_NONE, SCHED_MISFIT_ARCH, SCHED_MISFIT_TAG };
struct scheduler_misfit {
	enum scheduler_misfit_what what;
	const char *tag; /* SCHED_MISFIT_TAG: the tag the worker lacks, len bytes, in job_tags */
	size_t len;
};
/* The one rule that matches jobs to workers (policy.c), for the grant (scheduler_lease_pick)
 * and for placement answers alike: the job's arch ("" for any) is one of the
 * worker's arches, and every job tag is one of the worker's tags. Word lists are joined
 * with commas (",x86_64,noarch,"; a job's tags may be "a,b" or ",a,b,"); any length. why
 * (may be NULL) says what did not fit. */
bool scheduler_job_fits(const char *job_arch, const char *job_tags, const char *arches,
                        const char *tags, struct scheduler_misfit *why);
/* True when a worker with these arches and tags could run job j; *why gets the reason
 * when not (static or arena string). */
bool scheduler_worker_matches(const struct scheduler_job *j, const char *arches, const char *tags,
                              struct kiln_arena *a, const char **why);

/* Metrics text (metrics.c). */
KILN_MUST_CHECK kiln_rc scheduler_metrics_text(struct scheduler *s, struct kiln_buf *out,
                                               struct kiln_err *err);

/* The dashboard (web.c): files of web/ embedded at build time (scripts/web-embed.sh writes
 * them into BUILD/gen/web_assets.c), terminated by an entry with path NULL. */
struct scheduler_web_asset {
	const char *path;         /* "index.html", "app.js" */
	const char *content_type; /* by extension */
	const char *etag;         /* "\"<16 hex digits of sha256>\"" */
	const unsigned char *data;
	size_t len;
};
extern const struct scheduler_web_asset scheduler_web_assets[];
/* Take a sample of queue depth and verdicts when history_interval has passed (the serve
 * loop calls it); problems are logged and the sample skipped. */
void scheduler_history_tick(struct scheduler *s, int64_t now_ms);

/* The OpenAPI document (openapi.c). */
extern const char scheduler_openapi_json[];

#endif
