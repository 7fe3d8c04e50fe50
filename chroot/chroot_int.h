/*
 * chroot_int.h - private to chroot/: the mount plan, the child-process steps, cgroups, the
 * environment and the status protocol between the sandbox's processes and kiln.
 *
 * Process tree of one sandboxed run (docs/sandbox.md has the picture):
 *
 *   kiln (caller's thread) --fork--> monitor (host PID ns; joins the cgroups, unshares the
 *   namespaces, writes the id maps) --fork--> init (PID 1 of the new PID ns; builds the root
 *   from the plan, pivots, reaps) --fork--> command (drops capabilities, rlimits, exec).
 *
 * The plan is built and validated by kiln before any fork (plan.c) as an array of
 * fixed-layout operations with bounded paths, and re-checked by init against the allow-list
 * of operation kinds before it acts (rule 15's privsep protocol, without a separate
 * privileged process: the only privileged code is the init child, and it executes nothing
 * but the plan).
 */
#ifndef KILN_CHROOT_INT_H
#define KILN_CHROOT_INT_H

#include "chroot/chroot.h"

#include <signal.h>

/* ---------------------------------------------------------------------------------------- */
/* The mount plan (plan.c builds it, mounts.c executes it inside the new mount namespace). */

enum chroot_op_kind {
	CHROOT_OP_MKDIR = 1, /* dst: a directory (mode) */
	CHROOT_OP_SYMLINK,   /* dst -> src (the link text, copied from the host's link) */
	CHROOT_OP_BIND,      /* host src on dst; CHROOT_OPF_RO makes it (recursively) read-only */
	CHROOT_OP_TMPFS,     /* a fresh tmpfs on dst (mode) */
	CHROOT_OP_PROC,      /* a fresh procfs of the new PID namespace on dst */
	CHROOT_OP_SYSFS,     /* a fresh read-only sysfs of the new network namespace on dst */
	CHROOT_OP_DEV,       /* a minimal /dev on dst: tmpfs, device binds, shm, pts, links */
	CHROOT_OP_KIND_END,
};

enum chroot_op_flags {
	CHROOT_OPF_RO = 1 << 0,       /* read-only (bind: recursively) */
	CHROOT_OPF_FILE = 1 << 1,     /* bind: the source is not a directory */
	CHROOT_OPF_OPTIONAL = 1 << 2, /* bind: skip when the source has gone */
};

struct chroot_op {
	enum chroot_op_kind kind;
	unsigned flags;
	unsigned mode;
	/* Both shorter than KILN_LIMIT_PATH. In a plan, owned by it (chroot_plan_release). */
	const char *src; /* host path (bind) or link text (symlink); "" for none */
	const char *dst; /* absolute, normalised path inside the sandbox */
};

struct chroot_plan {
	struct chroot_op *ops; /* owned: chroot_plan_release() */
	size_t n, cap;
};

/* Build the plan for cfg (root skeleton, /proc, /sys, /dev, tmpfs list, HOME, binds), sorted
 * so parents come before children. home is HOME inside. */
KILN_MUST_CHECK kiln_rc chroot_plan_build(struct chroot_plan *p, const struct chroot_config *cfg,
                                          const char *home, struct kiln_err *err);
void chroot_plan_release(struct chroot_plan *p);
/* Append one operation (validated with chroot_op_check). */
KILN_MUST_CHECK kiln_rc chroot_plan_add(struct chroot_plan *p, enum chroot_op_kind kind,
                                        unsigned flags, unsigned mode, const char *src,
                                        const char *dst, struct kiln_err *err);
/* The allow-list check init repeats before acting: a known kind, dst absolute and normalised
 * and not "/", bind sources absolute, tmpfs/bind never on /proc, /sys or /dev (only the
 * plan's own PROC/SYSFS/DEV go there). */
KILN_MUST_CHECK kiln_rc chroot_op_check(const struct chroot_op *op, struct kiln_err *err);
/* Sort parents before children (component-wise order). */
void chroot_plan_sort(struct chroot_plan *p);
/* Is path (normalised, absolute) equal to or below dir? */
bool chroot_path_within(const char *path, const char *dir);

/* ---------------------------------------------------------------------------------------- */
/* Mounts (mounts.c): every step one function returning kiln_rc with the failing path. They
 * run only in the init child, inside the new mount namespace. */

/* Make every mount in this namespace private, so nothing propagates back to the host. */
KILN_MUST_CHECK kiln_rc chroot_mount_private(struct kiln_err *err);
/* A fresh tmpfs attached at mnt (a host directory kiln made); *rootfd gets its root. */
KILN_MUST_CHECK kiln_rc chroot_mount_root_tmpfs(const char *mnt, int *rootfd, struct kiln_err *err);
/* An overlay of lower (read-only) with upper/work (per-build, on the host) at mnt; with
 * upper NULL, upper and work are made on a tmpfs mounted at mnt first (one run's root). */
KILN_MUST_CHECK kiln_rc chroot_mount_root_overlay(const char *lower, const char *upper,
                                                  const char *work, bool userxattr, const char *mnt,
                                                  int *rootfd, struct kiln_err *err);
/* The host directory dir itself (a recursive bind, nosuid, nodev, writable) attached at mnt
 * as the root (chroot_config.root_direct). */
KILN_MUST_CHECK kiln_rc chroot_mount_root_bind(const char *dir, const char *mnt, int *rootfd,
                                               struct kiln_err *err);
/* Execute one (checked) operation relative to rootfd. */
KILN_MUST_CHECK kiln_rc chroot_op_apply(int rootfd, const struct chroot_op *op,
                                        struct kiln_err *err);
/* mkdir -p of rel under dirfd without following symlinks; *out gets an O_PATH fd of the
 * last directory (the caller closes it). KILN_EPRIV when a component is a symlink. */
KILN_MUST_CHECK kiln_rc chroot_mkdir_at(int dirfd, const char *rel, unsigned mode, int *out,
                                        struct kiln_err *err);
/* Make the mount at dirfd read-only (not recursive). */
KILN_MUST_CHECK kiln_rc chroot_mount_readonly(int dirfd, const char *what, struct kiln_err *err);
/* pivot_root into rootfd and detach the old root. */
KILN_MUST_CHECK kiln_rc chroot_mount_pivot(int rootfd, struct kiln_err *err);

/* ---------------------------------------------------------------------------------------- */
/* Namespaces and the child processes (ns.c, proc.c). */

/* Messages from the children to kiln on the status pipe. One write each (< PIPE_BUF, so
 * atomic); kiln reads whole records. */
enum chroot_msg_kind {
	CHROOT_MSG_SETUP = 1, /* setup failed: rc, sys_errno, msg */
	CHROOT_MSG_EXEC,      /* the command could not be executed */
	CHROOT_MSG_EXIT,      /* the command ended: status is its wait status */
};

struct chroot_msg {
	int32_t kind;
	int32_t rc;
	int32_t sys_errno;
	int32_t status;
	char msg[KILN_ERR_MSG_MAX];
};

/* Everything the children need, prepared by kiln before fork (no allocation after fork). */
struct chroot_child {
	const struct chroot_exec *ex;
	char *const *argv;   /* borrowed from the run's arena */
	char *const *envp;   /* borrowed from the run's arena */
	const char *path;    /* PATH value from envp (for the search), or a default */
	const char *cwd;     /* inside (sandbox) or host (host executor) */
	int stdio[3];        /* fds to install as 0, 1, 2 */
	int status_fd;       /* write end of the status pipe */
	const int *cg_procs; /* cgroup.procs fds to join, n_cg of them */
	size_t n_cg;
	bool keep_session;
	pid_t kiln_pid;
};

/* Report an error to kiln on the status pipe (best effort, async-signal-safe). */
void chroot_msg_send(int fd, enum chroot_msg_kind kind, const struct kiln_err *err, int status);
/* Turn a setup/exec message back into err. */
kiln_rc chroot_msg_to_err(const struct chroot_msg *m, struct kiln_err *err);

/* The monitor: runs in the forked child, never returns. */
KILN_NORETURN void chroot_ns_monitor(const struct chroot_child *c);
/* The host executor's child: never returns. */
KILN_NORETURN void chroot_host_child(const struct chroot_child *c);
/* The namespace flags a config needs (CLONE_NEW*). */
int chroot_ns_flags(const struct chroot_exec *ex);
/* Write "0 OUTER 1" id maps for the current process after unshare(CLONE_NEWUSER). */
KILN_MUST_CHECK kiln_rc chroot_ns_write_idmaps(uid_t uid, gid_t gid, struct kiln_err *err);
/* Bring the loopback interface of the current network namespace up. */
KILN_MUST_CHECK kiln_rc chroot_ns_lo_up(struct kiln_err *err);

/* Command-child hygiene (proc.c). */
KILN_MUST_CHECK kiln_rc chroot_proc_stdio(const int stdio[3], struct kiln_err *err);
KILN_MUST_CHECK kiln_rc chroot_proc_rlimits(const struct chroot_limits *lim, struct kiln_err *err);
KILN_MUST_CHECK kiln_rc chroot_proc_cpus(unsigned n, struct kiln_err *err);
/* Keep only the capabilities a build needs as (namespace) root: chown, fowner, dac, fsetid,
 * kill, setuid/gid, setfcap, net_bind_service; everything else leaves the bounding set too,
 * so no mount, mknod, module, raw I/O, time, ptrace or admin power survives the exec. */
KILN_MUST_CHECK kiln_rc chroot_proc_drop_caps(struct kiln_err *err);
KILN_MUST_CHECK kiln_rc chroot_proc_no_new_privs(struct kiln_err *err);
/* Make the sync family of system calls succeed without effect (chroot_config.suppress_sync)
 * for this process and its children. Needs no_new_privs. */
KILN_MUST_CHECK kiln_rc chroot_proc_suppress_sync(struct kiln_err *err);
/* Mark every fd >= 3 close-on-exec (no stray fds reach the command). */
KILN_MUST_CHECK kiln_rc chroot_proc_cloexec_from(int lowfd, struct kiln_err *err);
/* execve argv[0], searched in path when it has no '/'; returns only on failure. */
kiln_rc chroot_proc_exec(char *const *argv, char *const *envp, const char *path,
                         struct kiln_err *err);
/* Join each cgroup (write our pid to the open cgroup.procs fds). */
KILN_MUST_CHECK kiln_rc chroot_proc_join_cgroups(const int *fds, size_t n, struct kiln_err *err);
/* The common part of both children: cgroups, session, stdio, cwd, umask, limits. */
KILN_MUST_CHECK kiln_rc chroot_proc_prepare(const struct chroot_child *c, struct kiln_err *err);
/* Text of the rlimits that will be in force, appended to out. */
void chroot_proc_describe_rlimits(const struct chroot_limits *lim, struct kiln_buf *out);
/* waitpid that retries EINTR. */
pid_t chroot_waitpid(pid_t pid, int *status, int flags);

/* ---------------------------------------------------------------------------------------- */
/* The environment (env.c). */

/* Build the child's environment from the caller's complete list: entries must be KEY=VALUE
 * with a shell-name KEY, no duplicates; TZ=UTC and (sandbox) HOME=home are forced; PATH and
 * LANG get defaults when absent. The array and strings live in a. *path_out borrows PATH's
 * value. */
#define CHROOT_DEFAULT_PATH "/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin"
#define CHROOT_ENV_MAX 4096
KILN_MUST_CHECK kiln_rc chroot_env_build(const char *const *env, const char *home,
                                         struct kiln_arena *a, char ***out, const char **path_out,
                                         struct kiln_err *err);
/* The environment ex gives a command run with env (chroot_env_build with ex's HOME): the one
 * place that decides it, for runs and for in-process %(...) answers. OUT: the
 * NULL-terminated list and (path_out, may be NULL) its PATH, in a. */
KILN_MUST_CHECK kiln_rc chroot_exec_env(const struct chroot_exec *ex, const char *const *env,
                                        struct kiln_arena *a, char ***out, const char **path_out,
                                        struct kiln_err *err);
/* Copy a NULL-terminated argv into a (KILN_EINVAL when empty). */
KILN_MUST_CHECK kiln_rc chroot_argv_copy(const char *const *argv, struct kiln_arena *a, char ***out,
                                         struct kiln_err *err);

/* ---------------------------------------------------------------------------------------- */
/* cgroups (cgroup.c). */

enum chroot_cg_ctl {
	CHROOT_CG_MEMORY = 0,
	CHROOT_CG_PIDS = 1,
	CHROOT_CG_CPU = 2,
	CHROOT_CG_NCTL = 3,
};

enum chroot_cg_mode {
	CHROOT_CG_NONE = 0,
	CHROOT_CG_V1 = 1,
	CHROOT_CG_V2 = 2,
};

/* Where each controller can be used, found once per executor. */
struct chroot_cgroup {
	enum chroot_cg_mode mode[CHROOT_CG_NCTL];
	char parent[CHROOT_CG_NCTL][KILN_LIMIT_PATH]; /* the directory run groups go under */
	char why[256];                                /* why a wanted controller is missing */
};

/* One run's groups. */
struct chroot_cgroup_run {
	char dir[CHROOT_CG_NCTL][KILN_LIMIT_PATH]; /* "" when not created */
	int procs[CHROOT_CG_NCTL];                 /* cgroup.procs, O_WRONLY; -1 if none */
	size_t nprocs;
	int fds[CHROOT_CG_NCTL]; /* the procs fds, packed, for chroot_proc_join_cgroups */
};

/* Find the hierarchies from the text of /proc/self/mountinfo and /proc/self/cgroup (kept
 * separate so tests can feed made-up hosts). want[] says which controllers are needed;
 * parent_override is limits.cgroup_dir. Never fails: a controller that cannot be used stays
 * CHROOT_CG_NONE with the reason in cg->why. */
void chroot_cgroup_detect_from(struct chroot_cgroup *cg, const char *mountinfo,
                               const char *proc_cgroup, const bool want[CHROOT_CG_NCTL],
                               const char *parent_override);
/* The same from the live /proc, then for v2 makes sure the controllers are enabled for
 * children of the parent (cgroup.subtree_control). */
void chroot_cgroup_detect(struct chroot_cgroup *cg, const struct chroot_limits *lim);
/* Create the run's groups (name is unique per executor and run) and write the limits. */
KILN_MUST_CHECK kiln_rc chroot_cgroup_run_create(const struct chroot_cgroup *cg,
                                                 const struct chroot_limits *lim, const char *name,
                                                 struct chroot_cgroup_run *r, struct kiln_err *err);
/* SIGKILL every process still in the run's groups. */
void chroot_cgroup_run_kill(struct chroot_cgroup_run *r);
/* Close the fds and remove the groups (after everything in them has been reaped). */
void chroot_cgroup_run_destroy(struct chroot_cgroup_run *r);
/* The limit text for one controller, e.g. "v1" / "v2" / "none". */
const char *chroot_cgroup_mode_name(enum chroot_cg_mode m);
/* Render a limit value as the controller file wants it. */
void chroot_cgroup_value(enum chroot_cg_ctl ctl, enum chroot_cg_mode mode,
                         const struct chroot_limits *lim, char *dst, size_t size);

/* ---------------------------------------------------------------------------------------- */
/* The executor (exec.c). */

struct chroot_exec {
	enum chroot_exec_kind kind;
	struct kiln_arena arena;  /* copies of the config strings */
	struct chroot_config cfg; /* strings point into arena */
	struct chroot_plan plan;  /* sandbox only */
	char *state_dir;          /* owned (arena): made by chroot_exec_new, removed by _free */
	char *mnt;                /* arena: state_dir/root, the root's mount point */
	char *upper, *work;       /* arena: overlay layers (dir:/tar: roots); NULL with a
	                           * dir:/tar: root = a tmpfs upper made by the run */
	char *lower;              /* arena: the dir: path or the unpacked tar: image */
	const char *home;         /* arena */
	bool userns;
	uid_t uid;
	gid_t gid;
	struct chroot_cgroup cgroup;
	char id[17];               /* random hex, names cgroups */
	unsigned runs;             /* counter for cgroup names */
	struct chroot_bind *binds; /* arena: cfg.binds, writable (reorder.c points them at its
	                            * mounts) */
	char **reorder_mnt;        /* arena: disorderfs mount points in state_dir */
	size_t nreorder;
};

/* mkdir state_dir/leaf (0755); the path lives in the executor's arena. NULL with err set. */
char *chroot_exec_state_path(struct chroot_exec *ex, const char *leaf, struct kiln_err *err);

/* reverse_order (reorder.c): mount disorderfs over each writable bind's source in state_dir
 * and bind that instead. Before the plan is built. */
KILN_MUST_CHECK kiln_rc chroot_reorder_mount(struct chroot_exec *ex, struct kiln_err *err);
/* Unmount them; false when one stays mounted (then state_dir must not be removed: it would
 * reach through into the build's own directories). */
bool chroot_reorder_unmount(struct chroot_exec *ex);

/* Unpack a tar: image once into cache_dir/roots/SHA256 (tar.c); *dir gets the path (arena). */
KILN_MUST_CHECK kiln_rc chroot_tar_root(const char *tarfile, const char *cache_dir,
                                        struct kiln_arena *a, char **dir, struct kiln_err *err);
/* The cache directory the config names or the default. */
KILN_MUST_CHECK kiln_rc chroot_cache_dir(const char *configured, struct kiln_buf *out,
                                         struct kiln_err *err);

#endif
