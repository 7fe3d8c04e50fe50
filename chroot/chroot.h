/*
 * chroot.h - run build commands through an executor: on the host, or in a namespace sandbox.
 *
 * The build pipeline runs every stage (%prep, %build, %install, ...) and every %(...) shell
 * expansion of a build through one struct chroot_exec. Two kinds exist behind the same call:
 *
 *   CHROOT_EXEC_HOST     plain fork/exec on the host, no isolation (the fallback when the
 *                        sandbox is disabled or unavailable). Output cap, timeout, rlimits,
 *                        cgroup limits and the explicit environment still apply; when the
 *                        command exits, what is left of its process group is killed.
 *   CHROOT_EXEC_SANDBOX  new mount, PID, UTS, IPC and network namespaces (only `lo`, up),
 *                        plus a user namespace when kiln is not root (or on request); a PID 1
 *                        that reaps and takes the whole namespace down with the command; a
 *                        fresh /proc, a minimal /dev, tmpfs on the private paths, a read-only
 *                        root (host subset, a dir: image under an overlay, or a tar: image
 *                        unpacked once into a cache), and writable only the caller's binds.
 *
 * What this module does not do: build the environment (the caller passes it whole; the
 * sandbox forces TZ=UTC and HOME, and fills PATH and LANG when absent), decide stage order,
 * or write logs (output streams into the caller's fds and optional sink). docs/sandbox.md
 * says what is isolated on which hosts.
 *
 * Typical use (the pipeline):
 *
 *     struct chroot_bind b[] = {{topdir, "/builddir/build", false}};
 *     struct chroot_config cfg;
 *     chroot_config_init(&cfg);
 *     cfg.kind = CHROOT_EXEC_SANDBOX;
 *     cfg.binds = b; cfg.nbinds = 1; cfg.hostname = buildhost;
 *     rc = chroot_exec_new(&cfg, &ex, &err);          once per build
 *     rc = chroot_exec_run(ex, &run, &res, &err);     once per stage
 *     chroot_exec_free(ex);
 *
 * Thread safety: one struct chroot_exec may be used by one thread at a time; different
 * executors may run in parallel threads (each run forks; the parent side keeps no global
 * state). Runs block the calling thread until the command and everything it started are gone.
 */
#ifndef KILN_CHROOT_H
#define KILN_CHROOT_H

#include "util/util.h"

enum chroot_exec_kind {
	CHROOT_EXEC_HOST = 0,
	CHROOT_EXEC_SANDBOX = 1,
};

enum chroot_root_kind {
	CHROOT_ROOT_HOST = 0, /* a read-only subset of the host: /usr, /bin, /lib*, /sbin, /etc */
	CHROOT_ROOT_DIR = 1,  /* root_path: a prepared tree, read-only lower of an overlay */
	CHROOT_ROOT_TAR = 2,  /* root_path: a tar image, unpacked once into cache_dir */
};

enum chroot_userns {
	CHROOT_USERNS_AUTO = 0,   /* a user namespace when kiln is not root */
	CHROOT_USERNS_ALWAYS = 1, /* also as root: capabilities confined to the namespace */
	CHROOT_USERNS_NEVER = 2,  /* only as root; an unprivileged caller gets KILN_EPRIV */
};

/* A host path made visible in the sandbox. */
struct chroot_bind {
	const char *host; /* borrowed: an existing host file or directory */
	const char
	    *inside; /* borrowed: absolute path in the sandbox, not "/" or under /proc,/dev */
	bool readonly;
};

struct chroot_limits {
	int64_t timeout_ms;     /* wall clock per run; 0 = none. The whole sandbox is killed */
	uint64_t output_max;    /* bytes of stdout+stderr streamed per run; 0 = unlimited */
	uint64_t memory_bytes;  /* cgroup memory limit; 0 = none */
	uint64_t pids_max;      /* cgroup pids limit (counts kiln's own 2 helpers); 0 = none */
	uint32_t cpu_percent;   /* cgroup CPU bandwidth, percent of one CPU (150 = 1.5); 0 = none */
	uint64_t nofile;        /* RLIMIT_NOFILE (soft and hard); 0 = inherit */
	uint64_t nproc;         /* RLIMIT_NPROC (soft and hard); 0 = inherit */
	bool core;              /* allow core dumps; default RLIMIT_CORE = 0 */
	unsigned cpus;          /* pin to the first N allowed CPUs, so nproc says N; 0 = all */
	bool require_cgroup;    /* KILN_EUNSUPP when a cgroup limit cannot be put in force */
	const char *cgroup_dir; /* borrowed: parent cgroup (v2 path or v1 relative path);
	                         * NULL = the cgroup kiln runs in */
};

struct chroot_config {
	enum chroot_exec_kind kind;
	enum chroot_root_kind root;
	const char *root_path; /* borrowed: dir: or tar: path; NULL for the host root */
	bool root_readonly;    /* dir:/tar: roots: no writable upper layer (host is always ro) */
	/* A dir: root used in place: the directory itself is the sandbox's writable root (a
	 * bind, no overlay), so what the command writes lands in it. For the one writer of a
	 * root being made (roots/'s installer running scriptlets); the plan's mount points
	 * (/proc, /sys, /dev, the tmpfs paths, HOME, the binds' targets) are created in it
	 * as empty directories when missing. Not with root_readonly or reverse_order. */
	bool root_direct;
	/* The executor serves one run (`kiln sandbox`): a dir:/tar: root's upper layer is a
	 * tmpfs made inside that run's mount namespace, so nothing is written to or removed from
	 * the host's disk. Without it the upper layer is a state directory that keeps what one
	 * stage wrote into the root for the next (a build). Not with a user namespace (tmpfs
	 * has user.* xattrs, which overlayfs needs there, only since Linux 6.6) or with
	 * reverse_order. */
	bool single_run;
	/* sync(2), syncfs(2), fsync(2), fdatasync(2) and sync_file_range(2) succeed without
	 * doing anything in the command (a seccomp filter; systemd-nspawn's --suppress-sync,
	 * mock's nosync). For writers whose output is thrown away unless whole, such as an
	 * image being made: the image's rpm otherwise syncs the whole host filesystem. Native
	 * system calls on x86_64 and aarch64 only; elsewhere, and for 32-bit programs, the calls
	 * are real. */
	bool suppress_sync;
	const struct chroot_bind *binds; /* borrowed array of nbinds */
	size_t nbinds;
	const char *const *tmpfs; /* borrowed array of ntmpfs absolute paths; NULL = the default
	                           * CHROOT_DEFAULT_TMPFS (rpm 4.20's unshare plugin analogue) */
	size_t ntmpfs;
	const char *hostname; /* borrowed; NULL = "kiln" */
	const char *home;     /* borrowed: HOME inside the sandbox; NULL = "/builddir" */
	bool network;         /* share the host network namespace (no network isolation) */
	bool reverse_order;   /* sandbox: the writable binds are seen through disorderfs (FUSE),
	                       * every directory listed in reverse order (the "file_order"
	                       * reproducibility variation); chroot_exec_new fails with
	                       * KILN_EUNSUPP when it cannot be mounted */
	enum chroot_userns userns;
	const char *state_dir; /* borrowed: where the executor keeps its upper layer and mount
	                        * point (a fresh subdirectory is made; the host root needs only
	                        * a mount point: kiln-sandbox-mnt-UID there, shared and kept);
	                        * NULL = $TMPDIR or /tmp */
	const char *cache_dir; /* borrowed: where tar: roots are unpacked; NULL = $KILN_CACHE_DIR,
	                        * else $XDG_CACHE_HOME/kiln, else ~/.cache/kiln (…/roots/SHA256) */
	struct chroot_limits limits;
};

/* The private paths when the caller gives none, `:`-separated like %_build_unshare_paths. */
#define CHROOT_DEFAULT_TMPFS "/tmp:/var/tmp:/home"

/* Zero everything: host executor, host root, default tmpfs list, no limits. */
void chroot_config_init(struct chroot_config *cfg);

/* Split a `:`-separated path list (e.g. the value of %_build_unshare_paths) into cfg's tmpfs
 * list. The strings live in arena a; the array replaces cfg->tmpfs. An empty list means no
 * private paths. KILN_EINVAL for a relative path. */
KILN_MUST_CHECK kiln_rc chroot_config_tmpfs_parse(struct chroot_config *cfg, const char *list,
                                                  struct kiln_arena *a, struct kiln_err *err);

/* Parse a --root argument: "host", "dir:PATH" or "tar:FILE" into cfg->root/root_path
 * (root_path borrows from arg). KILN_EINVAL otherwise. */
KILN_MUST_CHECK kiln_rc chroot_config_root_parse(struct chroot_config *cfg, const char *arg,
                                                 struct kiln_err *err);

struct chroot_exec;

/* Check cfg (paths absolute, binds existing, limits sane), copy everything it needs, and
 * prepare what is shared by all runs: for dir: and tar: roots the per-build upper layer in
 * state_dir, for tar: roots the unpacked image (cached by sha256), and the cgroup mode.
 * OUT: *out, free with chroot_exec_free(). Errors: KILN_EINVAL (bad config, naming the
 * field), KILN_ENOTFOUND (a bind source or root is missing), KILN_EUNSUPP (the sandbox cannot
 * work here: namespaces refused, kernel lacks the mount API; the message says which, and the
 * pipeline may fall back to CHROOT_EXEC_HOST), KILN_EPRIV, KILN_EIO. */
KILN_MUST_CHECK kiln_rc chroot_exec_new(const struct chroot_config *cfg, struct chroot_exec **out,
                                        struct kiln_err *err);
/* Remove the upper layer and the state directory; NULL is a no-op. */
void chroot_exec_free(struct chroot_exec *ex);
enum chroot_exec_kind chroot_exec_kind(const struct chroot_exec *ex);

/* Sink for a copy of everything streamed (e.g. the build log); stream is 1 or 2. */
typedef void (*chroot_sink_fn)(void *data, int stream, const char *buf, size_t len);

enum chroot_run_flags {
	/* Keep the caller's session and controlling terminal (interactive `kiln sandbox` on a
	 * tty). Builds never set it: a new session keeps a build from injecting input into the
	 * caller's terminal (TIOCSTI). */
	CHROOT_RUN_KEEP_SESSION = 1 << 0,
};

struct chroot_run {
	const char *const *argv;  /* borrowed, NULL-terminated; argv[0] without '/' is searched
	                          * in the PATH of env (inside the sandbox) */
	const char *const *env;   /* borrowed, NULL-terminated "KEY=VALUE": the WHOLE environment;
	                          * kiln's own environment is never passed on */
	const char *cwd;          /* borrowed: working directory (inside); NULL = HOME for the
	                          * sandbox, the current directory for the host */
	int stdin_fd;             /* -1 = /dev/null */
	int stdout_fd;            /* -1 = discard (or capture below) */
	int stderr_fd;            /* -1 = discard; may equal stdout_fd */
	struct kiln_buf *capture; /* borrowed, optional: stdout is appended here instead of
	                           * stdout_fd (bounded by capture->max: KILN_ELIMIT beyond) */
	chroot_sink_fn sink;      /* optional copy of all output */
	void *sink_data;
	int64_t timeout_ms; /* > 0 overrides limits.timeout_ms for this run */
	unsigned flags;     /* enum chroot_run_flags */
};

/* What happened, and which isolation and limits were in force (for the build log and the
 * build's metadata). */
struct chroot_result {
	int exit_code;         /* 0..255 when the command exited, else -1 */
	int signal;            /* the signal that ended it, else 0 */
	bool timed_out;        /* killed at the wall-clock limit */
	bool output_truncated; /* killed at the output cap */
	uint64_t output_bytes; /* stdout+stderr bytes seen */
	int64_t elapsed_ns;    /* fork to last reap (monotonic) */
	bool sandboxed;        /* namespaces in force */
	bool network;          /* the host network was reachable (not isolated) */
	bool userns;           /* a user namespace was used */
	char cgroup[8];        /* "v2", "v1", "mixed" or "none" */
	char limits[512];      /* the limits in force, e.g. "timeout=60s pids=64(cgroup v1)
	                         * memory=1073741824(cgroup v1) nofile=1024 core=0" */
};

/* Run one command and wait for it and everything it started. The result is filled whenever
 * the command started. Returns:
 *   KILN_OK        the command ran; see res->exit_code / res->signal (non-zero exit is not
 *                  an error here: the pipeline prints "Bad exit status")
 *   KILN_ETIMEOUT  killed at the time limit ("killed after N s")
 *   KILN_ELIMIT    killed at the output cap, or capture overflowed
 *   KILN_ENOTFOUND the command does not exist (exec failed: exit_code 127)
 *   KILN_EUNSUPP / KILN_EPRIV / KILN_EIO  setup failed; the message names the step and path
 *   KILN_EINVAL    a bad run (empty argv, bad env entry, relative cwd)
 * Thread-safe for distinct executors. */
KILN_MUST_CHECK kiln_rc chroot_exec_run(struct chroot_exec *ex, const struct chroot_run *run,
                                        struct chroot_result *res, struct kiln_err *err);

/* Can a sandbox with this config work here (namespaces allowed, mount API present)? Runs a
 * throw-away `unshare` in a child; KILN_OK or the reason (KILN_EUNSUPP / KILN_EPRIV). */
KILN_MUST_CHECK kiln_rc chroot_sandbox_probe(const struct chroot_config *cfg, struct kiln_err *err);

/* Can reverse_order work here (a usable /dev/fuse, disorderfs installed)? KILN_OK or
 * KILN_EUNSUPP saying what is missing; runs `disorderfs --version`. */
KILN_MUST_CHECK kiln_rc chroot_reorder_probe(struct kiln_err *err);

/* ---------------------------------------------------------------------------------------- */
/* %(...) through an executor: chroot_shell_run has macro/macro.h's macro_shell_fn signature:
 *
 *     struct chroot_shell sh = {ex, env, "/builddir/build/BUILD", STDERR_FILENO};
 *     macro_ctx_set_shell(ctx, chroot_shell_run, &sh);
 *
 * It runs `/bin/sh -c CMD` through sh->exec and appends stdout to out. Like rpm, a non-zero
 * exit status is not an error (stderr passes through); a timeout, an output overflow or a
 * setup failure is. */
struct chroot_shell {
	struct chroot_exec *exec; /* borrowed */
	const char *const *env;   /* borrowed, as chroot_run.env */
	const char *cwd;          /* borrowed, may be NULL */
	int stderr_fd;            /* -1 = discard */
};

KILN_MUST_CHECK kiln_rc chroot_shell_run(void *data, const char *cmd, struct kiln_buf *out,
                                         struct kiln_err *err);

#endif
