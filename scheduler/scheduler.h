/*
 * scheduler.h - the build farm's scheduler: jobs submitted over the REST API are kept in a
 * job store (sqlite3 today), leased to workers with a TTL and a generation, their logs and
 * artifacts received and checked, their packages signed with the job's key; and the client
 * side of that API for `kiln submit`, `kiln jobs` and friends.
 *
 * It also publishes succeeded jobs' packages into dnf/zypper repositories whose metadata
 * it writes itself (docs/publish.md) and reruns jobs for reproducibility. What it does not
 * do: build (workers do, worker/). docs/api.md is the API's reference.
 *
 * Thread safety: scheduler_run() owns its threads; the client functions are for one thread.
 */
#ifndef KILN_SCHEDULER_H
#define KILN_SCHEDULER_H

#include <signal.h>

#include "util/util.h"

/* ======================================================================================== */
/* Configuration (INI; docs/api.md lists every key)                                         */
/* ======================================================================================== */

struct scheduler_key_cfg {
	const char *name; /* job option "sign_key" */
	const char *path; /* secret key file (kiln keygen) */
};

struct scheduler_repo_cfg {
	const char *name; /* job option "repository" */
	const char *path; /* its directory ("" for DATA/repos/NAME); v6 packages go to PATH-v6 */
};

/* Every string lives in the config's arena. */
/* [tokens] NAME = SCOPES sha256:HEX: a token the configuration declares by its digest (the
 * secret is never in the file); added at start when the store does not have it. */
struct scheduler_token_cfg {
	const char *name;
	unsigned scopes; /* enum api_scope bits */
	char sha256[65];
};

/* [forge NAME]: a forge that sends webhooks and takes commit statuses (docs/api.md). */
enum scheduler_forge_kind { SCHED_FORGE_GITHUB, SCHED_FORGE_GITLAB, SCHED_FORGE_FORGEJO };
struct scheduler_forge_cfg {
	const char *name;
	enum scheduler_forge_kind kind;
	bool has_kind;
	const char *api_url;     /* where statuses are posted; "" for none */
	const char *secret_file; /* the webhook secret */
	const char *token_file;  /* the token for status calls; "" for none */
	int line;                /* of the section header, for errors found at the end */
};

/* What a [hook] reacts to. */
enum scheduler_hook_event {
	SCHED_HOOK_PUSH = 1u << 0,         /* a push to a branch */
	SCHED_HOOK_TAG = 1u << 1,          /* a tag pushed */
	SCHED_HOOK_PULL_REQUEST = 1u << 2, /* opened, synchronised or reopened (GitLab: MR) */
	SCHED_HOOK_COMMENT = 1u << 3,      /* "/kiln retry" on a pull request */
};

/* [hook OWNER/PROJECT]: a repository of a forge and what to build on its events. */
struct scheduler_hook_cfg {
	const char *project;     /* "owner/project" as the forge names it */
	const char *forge;       /* a [forge] name */
	const char *spec;        /* spec paths in the repository, blank-separated: a job each */
	unsigned events;         /* enum scheduler_hook_event bits */
	const char *branches;    /* blank-separated branch names; "" for every branch */
	const char *root, *arch; /* build options, NULL for the defaults */
	int64_t reruns;
	const char *format;  /* the package format (v4 or v6; one per job), NULL for the default */
	const char *publish; /* a [repositories] name pushes and tags publish into, or NULL */
	const char *kiln_project; /* [projects] the farm project its jobs belong to (key
	                           * "project"), NULL for default */
	int line;
};

/* What a [webhook] is sent. */
enum scheduler_webhook_event {
	SCHED_WEBHOOK_JOB_STATE = 1u << 0, /* "job.state": a job queued, building or ended */
	SCHED_WEBHOOK_PUBLISH = 1u << 1,   /* "publish": a repository's new revision */
};

/* [webhook NAME]: a URL that receives signed JSON events (docs/ci.md). */
struct scheduler_webhook_cfg {
	const char *name;
	const char *url;         /* http(s) */
	const char *secret_file; /* the HMAC-SHA256 key of X-Kiln-Signature-256 */
	unsigned events;         /* enum scheduler_webhook_event bits; default all */
	int line;
};

/* The PostgreSQL store's pool ([store] pool): four connections by default. Fewer keep
 * each backend busier and warmer where commits do not wait for the disk (a 2-core host
 * with synchronous_commit off: +20% grants/s with two); more let more commits wait for
 * their flush at once (bench/RESULTS.md). */
#define SCHED_STORE_POOL_DEFAULT 4
#define SCHED_STORE_POOL_MAX 8

struct scheduler_config {
	const char *listen; /* default 127.0.0.1:8470 */
	/* [server] worker_listen: a second address with connections of its own for workers
	 * (and health, metrics), which a flood on listen cannot fill; NULL for none */
	const char *worker_listen;
	const char *data_dir; /* default ./kiln-data */
	/* [storage] database: a postgresql:// URL for the PostgreSQL store; NULL for the
	 * sqlite3 store in data_dir/kiln.db (the default) */
	const char *database;
	/* [store] pool: the PostgreSQL store's connections for the lease path and reads
	 * (SCHED_STORE_POOL_DEFAULT; 1 to SCHED_STORE_POOL_MAX) */
	int64_t store_pool;
	unsigned threads;               /* HTTP pool threads, default 4 */
	int64_t max_conns;              /* [server] max_connections, default 1000 */
	int64_t max_conns_per_address;  /* max_connections_per_address, default 64 */
	int64_t idle_timeout_ms;        /* idle_timeout, default 30 s */
	const char *tls_cert, *tls_key; /* PEM files, both or neither */
	bool anonymous_read;
	uint64_t max_body, max_upload;
	int64_t lease_ttl_ms;   /* default 60 s */
	int64_t poll_max_ms;    /* longest long poll, default 25 s */
	int64_t backoff_ms;     /* first retry delay, doubled per attempt, default 5 s */
	int64_t backoff_max_ms; /* default 10 min */
	int64_t max_attempts;   /* default 3 */
	int64_t tick_ms;        /* reaper period, default 250 ms */
	int64_t history_ms;     /* dashboard time series sampling period, default 30 s */
	uint64_t log_max;       /* bytes of one attempt's log, default 256 MiB (workers cap their
	                         * own at 64 MiB; this holds against one that does not) */
	uint64_t min_free;      /* health says degraded below these free bytes in data_dir,
	                         * default 512 MiB */
	struct scheduler_key_cfg *keys;
	size_t nkeys;
	const char *default_key; /* key name used when a job names none; "" for none */
	struct scheduler_repo_cfg *repos;
	size_t nrepos;
	/* [publish] (docs/publish.md) */
	bool publish_zstd;             /* compress = zstd (default gzip) */
	int64_t publish_keep_versions; /* keep_versions: per package name and arch (3; 0: all) */
	int64_t publish_generations;   /* generations: metadata generations kept (3) */
	int64_t publish_retire_ms;     /* retire_after: how long a package file no longer published
	                                * stays on disk for clients holding older metadata
	                                * (1 day; 0: removed once the new metadata is in) */
	const char *publish_key;       /* key: signs repomd.xml (default: default_key) */
	const char *publish_base_url;  /* base_url: for .repo files (default: the listen address) */
	struct scheduler_token_cfg *tokens;
	size_t ntokens;
	/* [forge NAME] and [hook OWNER/PROJECT] (forgecfg.c) */
	struct scheduler_forge_cfg *forges;
	size_t nforges;
	struct scheduler_hook_cfg *hooks;
	size_t nhooks;
	/* [webhook NAME] (forgecfg.c) */
	struct scheduler_webhook_cfg *webhooks;
	size_t nwebhooks;
	struct kiln_arena arena;
};

/* Defaults as listed above. */
void scheduler_config_init(struct scheduler_config *cfg);
void scheduler_config_release(struct scheduler_config *cfg);
/* Read an INI file into cfg (over the defaults). Errors name the file, line and key:
 * KILN_ESYNTAX for malformed lines, KILN_EINVAL for unknown sections or keys and bad values,
 * KILN_ELIMIT for an oversize file (1 MiB) or line (4 KiB), KILN_EIO when unreadable. */
KILN_MUST_CHECK kiln_rc scheduler_config_load(struct scheduler_config *cfg, const char *path,
                                              struct kiln_err *err);
/* The same from memory; name is used in messages. */
KILN_MUST_CHECK kiln_rc scheduler_config_from_mem(struct scheduler_config *cfg, const char *data,
                                                  size_t len, const char *name,
                                                  struct kiln_err *err);
/* Forge sections (forgecfg.c): is name a "forge NAME", "hook OWNER/PROJECT" or
 * "webhook NAME" header? */
bool scheduler_config_forge_section(const char *name, size_t len);
/* Set a key of such a section, or with key NULL declare the section at its header (line:
 * the header's, for errors found at the end); KILN_ENOTFOUND for an unknown key. */
KILN_MUST_CHECK kiln_rc scheduler_config_forge_set(struct scheduler_config *cfg,
                                                   const char *section, const char *key,
                                                   const char *value, int line,
                                                   struct kiln_err *err);
/* After the file: every [forge] has a kind and secret_file, every [hook] a known forge and a
 * spec, every [webhook] a url and secret_file; errors name the section's line. */
KILN_MUST_CHECK kiln_rc scheduler_config_forge_check(const struct scheduler_config *cfg,
                                                     const char *name, struct kiln_err *err);
/* Is word one of the blank-separated words of list? */
bool scheduler_config_word_in(const char *list, const char *word);
/* The [forge] and [hook] of a name (NULL when none). */
const struct scheduler_forge_cfg *scheduler_config_forge(const struct scheduler_config *cfg,
                                                         const char *name);
const struct scheduler_hook_cfg *scheduler_config_hook(const struct scheduler_config *cfg,
                                                       const char *project);
const struct scheduler_webhook_cfg *scheduler_config_webhook(const struct scheduler_config *cfg,
                                                             const char *name);
/* Set one key ("server.listen", "limits.lease_ttl", ...) as the file would. */
KILN_MUST_CHECK kiln_rc scheduler_config_set(struct scheduler_config *cfg, const char *section,
                                             const char *key, const char *value,
                                             struct kiln_err *err);

/* ======================================================================================== */
/* Running                                                                                  */
/* ======================================================================================== */

/* Open (or create) the data directory and store, load the signing keys (generating the
 * "default" key on first start when none is configured), create an admin token on first
 * start, serve until *stop becomes non-zero (a signal handler's flag), then shut down
 * gracefully: stop accepting, answer long polls, finish running requests. Writes lines to
 * ready_fd (-1 for none): "admin token: TOKEN" on first start, then
 * "listening on http://HOST:PORT". */
KILN_MUST_CHECK kiln_rc scheduler_run(const struct scheduler_config *cfg,
                                      volatile sig_atomic_t *stop, int ready_fd,
                                      struct kiln_err *err);

/* kiln store migrate: copy the sqlite3 job store of data directory data_dir (its kiln.db,
 * brought to this build's schema first) into the empty PostgreSQL store at url, every table
 * in one transaction, committed only when each table's row count and digest (sha256 of
 * its rows, sorted) read back from PostgreSQL match sqlite3's. One line a table to out_fd
 * (-1: none). Blobs, logs and keys stay in data_dir, which the schedulers keep using.
 * KILN_EEXIST when the PostgreSQL store has jobs already, KILN_EDIGEST when a table did
 * not come across whole (nothing is committed then). */
KILN_MUST_CHECK kiln_rc scheduler_store_migrate(const char *data_dir, const char *url, int out_fd,
                                                struct kiln_err *err);

/* ======================================================================================== */
/* Provenance                                                                               */
/* ======================================================================================== */

/* What scheduler_provenance_check() found. */
struct scheduler_provenance_check {
	char signer[65];          /* the fingerprint of the key whose signature verified */
	char signer_uid[256];     /* its user ID */
	char predicate_type[256]; /* the statement's */
	char subject[256];        /* the name of the subject with the package's digest */
};
struct sign_keyring;
/* Check one DSSE envelope (data, len: JSON) of an in-toto Statement v1: a signature over
 * its PAE by a key of kr, then that sha256 (hex) is the digest of one of its subjects.
 * KILN_ESIG / KILN_ENOTFOUND (no key) for the signature, KILN_EDIGEST when the package is
 * not a subject, KILN_ESYNTAX / KILN_EINVAL / KILN_EFORMAT for a malformed envelope. */
KILN_MUST_CHECK kiln_rc scheduler_provenance_check(const void *data, size_t len,
                                                   const struct sign_keyring *kr,
                                                   const char *sha256,
                                                   struct scheduler_provenance_check *out,
                                                   struct kiln_err *err);

/* kiln provenance verify: check every envelope of file (one JSON object, or JSON lines)
 * against the package at rpm with the keys of key_file (armored or binary certificates),
 * or kiln's keyring when NULL; a line per envelope to out_fd. Errors name the file and
 * the envelope. */
KILN_MUST_CHECK kiln_rc scheduler_provenance_verify_file(const char *file, const char *rpm,
                                                         const char *key_file, int out_fd,
                                                         struct kiln_err *err);

#endif
