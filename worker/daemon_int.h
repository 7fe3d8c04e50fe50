/*
 * daemon_int.h - what the worker daemon's files share (daemon.c runs slots, daemon_job.c
 * carries one lease through, daemon_build.c is the build child).
 */
#ifndef KILN_WORKER_DAEMON_INT_H
#define KILN_WORKER_DAEMON_INT_H

#include "api/api.h"
#include "worker/worker.h"

/* Build caps: cgroup pids, memory bytes, CPU percent of one CPU, log bytes per attempt;
 * 0 = none. */
struct worker_caps {
	int64_t pids, memory, cpu, log;
};

/* The daemon: options and what every slot shares (read-only after start). */
struct worker_daemon {
	const struct worker_daemon_opts *o;
	volatile sig_atomic_t *stop;
	const char *name; /* owned by the daemon (host name or o->name) */
	char arches[512]; /* JSON array text of the arches */
	char tags[512];   /* JSON array text of the tags */
	char work_dir[KILN_LIMIT_PATH];
	bool sandbox; /* stages run in the namespace sandbox */
	int64_t poll_ms;
	struct worker_caps caps; /* the worker's own, defaults filled in */
	int lock_fd;             /* holds the work directory's lock */
	/* the scheduler refused a completion's "next" (one older than it): not asked again
	 * (read and set atomically: the slots share it) */
	int next_refused;
	/* "X-Kiln-Worker-Secret: ..." (API_WORKER_SECRET_HEADER): this worker's own
	 * credential, sent on every call (credential_load() in daemon.c) */
	char secret_header[96];
	/* The root configurations offered (o->root_configs): name and the file it is read
	 * from, in the daemon's arena. */
	struct worker_offer {
		const char *name, *path;
	} * offers;
	size_t noffers;
	struct kiln_arena arena;
};

/* The caps for a job: each of the worker's, lowered to the job's where it asks for less
 * (a job never raises one). */
void worker_caps_for_job(const struct worker_caps *worker, const struct worker_caps *job,
                         struct worker_caps *out);

/* A lease as the scheduler granted it; strings in the job's arena. */
struct worker_ref {
	const char *name, *sha256;
};

struct worker_git_req {
	const char *url, *ref, *spec;
	const char *commit; /* the commit the job's manifest pins, NULL until one is */
};

struct worker_job_req {
	struct worker_git_req git;
	bool has_git;
	struct worker_ref spec;
	bool has_spec;
	struct worker_ref srpm;
	bool has_srpm;
	struct api_objlist sources; /* struct worker_ref */
	struct api_strmap defines;
	struct api_strlist with, without, formats;
	struct api_strlist variations; /* a rerun job's (worker_vary_parse() names) */
	int64_t timeout, source_date_epoch;
	int64_t rerun; /* 0, or the rerun's number (reproducibility reruns) */
	bool has_sde;
	const char *root; /* the root configuration the job names, NULL for the worker's root */
	const char *root_lock;     /* the lock pinned for it (a blob's sha256), NULL until pinned */
	struct worker_caps limits; /* the job's own ("limits"), 0 where not given */
};

struct worker_lease {
	const char *lease_id;
	int64_t generation, ttl_ms, heartbeat_ms, job_id, attempt;
	struct worker_job_req job;
	/* [batches] "/batches/N/repo" on the scheduler: the job's root resolves against it
	 * too (preferred), NULL for a job of no batch */
	const char *batch_repo;
	const char *raw; /* the reply as received (NUL-terminated): the build child parses it */
};

/* Decode a lease reply (lenient: unknown fields are ignored). */
KILN_MUST_CHECK kiln_rc worker_lease_parse(const char *body, size_t len, struct kiln_arena *a,
                                           struct worker_lease *out, struct kiln_err *err);

/* Carry one lease through: inputs, build, log, heartbeats, uploads, completion. Never
 * fails the slot: every problem becomes the job's outcome (or, when the lease was lost,
 * nothing). c is the slot's client. The completion asks for the slot's next job: the
 * lease its reply granted is left in *next (a lease reply's JSON), empty when none; next
 * NULL asks for none. */
void worker_daemon_job(struct worker_daemon *d, struct api_client *c, const struct worker_lease *l,
                       struct kiln_buf *next);

/* At start, before taking work: every job directory an earlier run of this worker left
 * (killed between a build's end and its completion, or during a build) is reported while
 * the scheduler still holds its lease (the kept packages uploaded and the kept completion
 * sent, or an infra failure for a build it died in), else dropped; the directory goes once
 * the scheduler took the report. */
void worker_daemon_recover(struct worker_daemon *d, struct api_client *c);

/* What the build child is asked to do. Strings borrowed. */
struct worker_child_req {
	const char *lease_raw; /* the lease as granted (worker_lease.raw): job is parsed from it */
	const struct worker_job_req *job;
	const char *topdir;    /* %{_topdir}: SPECS/, SOURCES/ prepared */
	const char *spec_path; /* NULL for an SRPM job */
	const char *srpm_path;
	const char *sourcedir;   /* a git job's checkout: %{_sourcedir} (the spec's directory) */
	const char *git_commit;  /* and the commit it is, for NAME-VERSION.tar.gz sources */
	const char *cache_dir;   /* the source cache for URL sources */
	const char *format;      /* "4", "6" or NULL for kiln's default */
	const char *result_path; /* worker_build_result_json() goes here */
	const struct macro_ctx *macros; /* kiln's macro configuration, duplicated per build */
	bool sandbox;
	const char *root;
	const char *root_config;        /* the job's root configuration (a file), NULL for none */
	const char *root_lock_in;       /* the job's pinned lock (a file), NULL: resolve one */
	const char *root_lock_out;      /* where the lock resolved is written (root_lock_in NULL) */
	unsigned vary;                  /* enum worker_vary: a rerun's variations */
	const struct worker_caps *caps; /* the job's caps (worker_caps_for_job()) */
};

/* The variations of a lease's job (unknown names are errors: the scheduler checks them). */
KILN_MUST_CHECK kiln_rc worker_job_vary(const struct worker_job_req *j, unsigned *out,
                                        struct kiln_err *err);

/* In the build child: configure macros, run worker_build(), write the result; returns
 * the exit status (0 when the build succeeded). Output goes to fds 1 and 2. */
int worker_daemon_build_child(const struct worker_child_req *r);

/* The request file the daemon writes for the build child it execs (`kiln worker
 * --build-child FILE`, worker_build_child_main): every field of r but macros and job
 * (the child loads kiln's macro configuration itself and parses job from lease_raw). */
KILN_MUST_CHECK kiln_rc worker_child_req_write(const struct worker_child_req *r, const char *path,
                                               struct kiln_err *err);
/* Read one back: *out's strings and job in a; macros left NULL. */
KILN_MUST_CHECK kiln_rc worker_child_req_read(const char *path, struct kiln_arena *a,
                                              struct worker_child_req *out,
                                              struct worker_lease *lease, struct worker_caps *caps,
                                              struct kiln_err *err);

#endif
