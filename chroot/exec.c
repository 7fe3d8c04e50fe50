/*
 * exec.c - the executor: configuration, per-build state, and one run (fork, stream the
 * output, enforce the time and output limits, reap, report).
 */
#include "util/util.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/pidfd.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "chroot/chroot_int.h"

#define RUN_ARENA (64 * KILN_MIB)
#define PUMP_CHUNK (64 * 1024)

void chroot_config_init(struct chroot_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
}

kiln_rc chroot_config_tmpfs_parse(struct chroot_config *cfg, const char *list, struct kiln_arena *a,
                                  struct kiln_err *err)
{
	const char **v;
	size_t n = 1;
	size_t i = 0;
	const char *p;

	for (p = list; *p; p++)
		n += *p == ':';
	v = kiln_arena_array(a, n, sizeof(*v));
	if (!v)
		return kiln_err_set(err, KILN_ENOMEM, "out of memory");
	for (p = list; *p;) {
		size_t len = strcspn(p, ":");

		if (len) {
			if (p[0] != '/')
				return kiln_err_set(err, KILN_EINVAL,
				                    "private path '%.*s' must be absolute",
				                    (int)len, p);
			v[i] = kiln_arena_strndup(a, p, len);
			if (!v[i++])
				return kiln_err_set(err, KILN_ENOMEM, "out of memory");
		}
		p += len;
		if (*p == ':')
			p++;
	}
	cfg->tmpfs = v;
	cfg->ntmpfs = i;
	return KILN_OK;
}

kiln_rc chroot_config_root_parse(struct chroot_config *cfg, const char *arg, struct kiln_err *err)
{
	if (!strcmp(arg, "host")) {
		cfg->root = CHROOT_ROOT_HOST;
		cfg->root_path = NULL;
	} else if (!strncmp(arg, "dir:", 4) && arg[4]) {
		cfg->root = CHROOT_ROOT_DIR;
		cfg->root_path = arg + 4;
	} else if (!strncmp(arg, "tar:", 4) && arg[4]) {
		cfg->root = CHROOT_ROOT_TAR;
		cfg->root_path = arg + 4;
	} else {
		return kiln_err_set(err, KILN_EINVAL,
		                    "bad root '%s': want host, dir:PATH or tar:FILE", arg);
	}
	return KILN_OK;
}

enum chroot_exec_kind chroot_exec_kind(const struct chroot_exec *ex)
{
	return ex->kind;
}

/* ---------------------------------------------------------------------------------------- */
/* Creating an executor. */

static kiln_rc dup_str(struct kiln_arena *a, const char *s, const char **out, struct kiln_err *err)
{
	*out = NULL;
	if (!s)
		return KILN_OK;
	*out = kiln_arena_strdup(a, s);
	return *out ? KILN_OK : kiln_err_set(err, KILN_ENOMEM, "out of memory");
}

static kiln_rc copy_config(struct chroot_exec *ex, const struct chroot_config *cfg,
                           struct kiln_err *err)
{
	struct kiln_arena *a = &ex->arena;
	struct chroot_config *c = &ex->cfg;
	struct chroot_bind *b = NULL;
	const char **t = NULL;
	kiln_rc rc = KILN_OK;
	size_t i;

	*c = *cfg;
	if (cfg->nbinds) {
		b = kiln_arena_array(a, cfg->nbinds, sizeof(*b));
		if (!b)
			return kiln_err_set(err, KILN_ENOMEM, "out of memory");
	}
	for (i = 0; !rc && i < cfg->nbinds; i++) {
		b[i].readonly = cfg->binds[i].readonly;
		rc = dup_str(a, cfg->binds[i].host, &b[i].host, err);
		if (!rc)
			rc = dup_str(a, cfg->binds[i].inside, &b[i].inside, err);
	}
	c->binds = b;
	ex->binds = b;
	if (!rc && cfg->tmpfs && cfg->ntmpfs) {
		t = kiln_arena_array(a, cfg->ntmpfs, sizeof(*t));
		if (!t)
			return kiln_err_set(err, KILN_ENOMEM, "out of memory");
		for (i = 0; !rc && i < cfg->ntmpfs; i++)
			rc = dup_str(a, cfg->tmpfs[i], &t[i], err);
		c->tmpfs = t;
	}
	if (!rc && !cfg->tmpfs)
		rc = chroot_config_tmpfs_parse(c, CHROOT_DEFAULT_TMPFS, a, err);
	if (!rc)
		rc = dup_str(a, cfg->hostname ? cfg->hostname : "kiln", &c->hostname, err);
	if (!rc)
		rc = dup_str(a, cfg->home ? cfg->home : "/builddir", &c->home, err);
	if (!rc)
		rc = dup_str(a, cfg->root_path, &c->root_path, err);
	if (!rc)
		rc = dup_str(a, cfg->state_dir, &c->state_dir, err);
	if (!rc)
		rc = dup_str(a, cfg->cache_dir, &c->cache_dir, err);
	if (!rc)
		rc = dup_str(a, cfg->limits.cgroup_dir, &c->limits.cgroup_dir, err);
	return rc;
}

static kiln_rc check_hostname(const char *h, struct kiln_err *err)
{
	size_t i, n = strlen(h);

	if (!n || n > 64)
		return kiln_err_set(err, KILN_EINVAL, "host name '%s' must be 1 to 64 characters",
		                    h);
	for (i = 0; i < n; i++) {
		char c = h[i];

		if (!(c == '-' || c == '.' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9')))
			return kiln_err_set(err, KILN_EINVAL, "host name '%s' has a bad character",
			                    h);
	}
	return KILN_OK;
}

static kiln_rc check_limits(const struct chroot_limits *l, struct kiln_err *err)
{
	if (l->timeout_ms < 0)
		return kiln_err_set(err, KILN_EINVAL, "negative timeout");
	if (l->cpu_percent > 100000)
		return kiln_err_set(err, KILN_EINVAL, "cpu limit %u%% is too large",
		                    l->cpu_percent);
	if (l->pids_max && l->pids_max < 4)
		return kiln_err_set(err, KILN_EINVAL,
		                    "pids limit %" PRIu64 " is too small (kiln needs 3 processes)",
		                    l->pids_max);
	if (l->cgroup_dir && l->cgroup_dir[0] != '/')
		return kiln_err_set(err, KILN_EINVAL, "cgroup directory '%s' must start with '/'",
		                    l->cgroup_dir);
	return KILN_OK;
}

static kiln_rc decide_userns(struct chroot_exec *ex, struct kiln_err *err)
{
	ex->uid = geteuid();
	ex->gid = getegid();
	switch (ex->cfg.userns) {
	case CHROOT_USERNS_AUTO:
		ex->userns = ex->uid != 0;
		return KILN_OK;
	case CHROOT_USERNS_ALWAYS:
		ex->userns = true;
		return KILN_OK;
	case CHROOT_USERNS_NEVER:
		ex->userns = false;
		if (ex->uid != 0)
			return kiln_err_set(err, KILN_EPRIV,
			                    "a sandbox without a user namespace needs root");
		return KILN_OK;
	}
	return kiln_err_set(err, KILN_EINVAL, "bad user namespace mode %d", (int)ex->cfg.userns);
}

char *chroot_exec_state_path(struct chroot_exec *ex, const char *leaf, struct kiln_err *err)
{
	char *p = kiln_arena_printf(&ex->arena, "%s/%s", ex->state_dir, leaf);

	if (!p) {
		kiln_err_set(err, KILN_ENOMEM, "out of memory");
		return NULL;
	}
	if (mkdir(p, 0755) < 0) {
		kiln_err_sys(err, KILN_EIO, "cannot create '%s'", p);
		return NULL;
	}
	return p;
}

/* The host root's tmpfs needs only a mount point, and the run mounts it in its own mount
 * namespace: so one directory per user serves every executor at once and stays, and a
 * sandbox on the host root creates and removes nothing on the host's disk (a journaled
 * mkdir + rmdir pair is a millisecond on a busy disk). Used only when it is ours and no one
 * else can write it; otherwise the executor makes its own state directory. */
static bool shared_mount_point(struct chroot_exec *ex, const char *base)
{
	uid_t uid = geteuid();
	struct stat st;
	char *p =
	    kiln_arena_printf(&ex->arena, "%s/kiln-sandbox-mnt-%lu", base, (unsigned long)uid);

	if (!p)
		return false;
	if (lstat(p, &st) < 0 &&
	    (errno != ENOENT || (mkdir(p, 0755) < 0 && errno != EEXIST) || lstat(p, &st) < 0))
		return false;
	if (!S_ISDIR(st.st_mode) || st.st_uid != uid || (st.st_mode & 022))
		return false;
	/* a user namespace's root must reach it (the mkdir may have met a strict umask) */
	if ((st.st_mode & 0555) != 0555 && chmod(p, 0755) < 0)
		return false;
	ex->mnt = p;
	return true;
}

/* A dir:/tar: root whose upper layer lives and dies with its one run (chroot_config
 * .single_run). */
static bool upper_in_run(const struct chroot_exec *ex)
{
	return ex->cfg.root != CHROOT_ROOT_HOST && (ex->cfg.single_run || ex->cfg.root_direct) &&
	       !ex->userns && !ex->cfg.reverse_order;
}

static kiln_rc make_state(struct chroot_exec *ex, struct kiln_err *err)
{
	const char *base = ex->cfg.state_dir;
	char *tmpl;

	if (!base)
		base = getenv("TMPDIR");
	if (!base || !*base)
		base = "/tmp";
	if ((ex->cfg.root == CHROOT_ROOT_HOST || upper_in_run(ex) || ex->cfg.root_direct) &&
	    !ex->cfg.reverse_order && shared_mount_point(ex, base))
		return KILN_OK;
	tmpl = kiln_arena_printf(&ex->arena, "%s/kiln-sandbox-XXXXXX", base);
	if (!tmpl)
		return kiln_err_set(err, KILN_ENOMEM, "out of memory");
	if (!mkdtemp(tmpl))
		return kiln_err_sys(err, KILN_EIO,
		                    "cannot create a sandbox state directory in '%s'", base);
	ex->state_dir = tmpl;
	/* 0755 so that, with a user namespace, the mapped root can still reach the layers. */
	if (chmod(tmpl, 0755) < 0)
		return kiln_err_sys(err, KILN_EIO, "cannot chmod '%s'", tmpl);
	ex->mnt = chroot_exec_state_path(ex, "root", err);
	if (!ex->mnt)
		return err ? err->code : KILN_EIO;
	return KILN_OK;
}

static kiln_rc prepare_lower(struct chroot_exec *ex, struct kiln_err *err)
{
	struct kiln_buf b = KILN_BUF_INIT(KILN_LIMIT_PATH);
	kiln_rc rc = KILN_OK;

	if (ex->cfg.root == CHROOT_ROOT_HOST)
		return KILN_OK;
	if (!ex->cfg.root_path || ex->cfg.root_path[0] != '/')
		return kiln_err_set(err, KILN_EINVAL, "root path '%s' must be absolute",
		                    ex->cfg.root_path ? ex->cfg.root_path : "");
	if (ex->cfg.root == CHROOT_ROOT_TAR) {
		rc = chroot_tar_root(ex->cfg.root_path, ex->cfg.cache_dir, &ex->arena, &ex->lower,
		                     err);
	} else {
		rc = util_path_normalize(ex->cfg.root_path, &b, err);
		if (!rc && !util_is_dir(b.ptr))
			rc = kiln_err_set(err, KILN_ENOTFOUND, "root directory '%s' does not exist",
			                  b.ptr);
		if (!rc) {
			ex->lower = kiln_arena_strdup(&ex->arena, b.ptr);
			if (!ex->lower)
				rc = kiln_err_set(err, KILN_ENOMEM, "out of memory");
		}
	}
	/* Overlay metacharacters would split lowerdir into several layers. */
	if (!rc && (strchr(ex->lower, ',') || strchr(ex->lower, ':')))
		rc = kiln_err_set(err, KILN_EINVAL, "root path '%s' may not contain ',' or ':'",
		                  ex->lower);
	/* Without a state directory (upper_in_run) the run makes its layers on a tmpfs; a root
	 * used in place has none. */
	if (!rc && ex->state_dir && !ex->cfg.root_direct) {
		ex->upper = chroot_exec_state_path(ex, "upper", err);
		ex->work = ex->upper ? chroot_exec_state_path(ex, "work", err) : NULL;
		if (!ex->work)
			rc = err ? err->code : KILN_EIO;
	}
	kiln_buf_release(&b);
	return rc;
}

static kiln_rc make_id(struct chroot_exec *ex, struct kiln_err *err)
{
	unsigned char r[8];

	if (getrandom(r, sizeof(r), 0) != (ssize_t)sizeof(r))
		return kiln_err_sys(err, KILN_EIO, "cannot read random bytes");
	util_hex_encode(r, sizeof(r), ex->id);
	return KILN_OK;
}

static bool want_cgroup(const struct chroot_limits *l)
{
	return l->memory_bytes || l->pids_max || l->cpu_percent;
}

static kiln_rc setup_cgroup(struct chroot_exec *ex, struct kiln_err *err)
{
	const struct chroot_limits *l = &ex->cfg.limits;
	bool want[CHROOT_CG_NCTL] = {l->memory_bytes > 0, l->pids_max > 0, l->cpu_percent > 0};
	int c;

	if (!want_cgroup(l))
		return KILN_OK;
	chroot_cgroup_detect(&ex->cgroup, l);
	for (c = 0; c < CHROOT_CG_NCTL; c++) {
		if (want[c] && ex->cgroup.mode[c] == CHROOT_CG_NONE && l->require_cgroup)
			return kiln_err_set(err, KILN_EUNSUPP, "cgroup limits unavailable: %s",
			                    ex->cgroup.why);
	}
	return KILN_OK;
}

static kiln_rc exec_setup(struct chroot_exec *ex, const struct chroot_config *cfg,
                          struct kiln_err *err)
{
	struct kiln_buf home = KILN_BUF_INIT(KILN_LIMIT_PATH);
	kiln_rc rc;

	rc = copy_config(ex, cfg, err);
	if (!rc)
		rc = check_limits(&ex->cfg.limits, err);
	if (!rc)
		rc = make_id(ex, err);
	if (!rc)
		rc = setup_cgroup(ex, err);
	if (!rc && ex->kind == CHROOT_EXEC_HOST && ex->cfg.reverse_order)
		rc = kiln_err_set(err, KILN_EINVAL, "the file order variation needs the sandbox");
	if (!rc && ex->cfg.root_direct &&
	    (ex->kind != CHROOT_EXEC_SANDBOX || ex->cfg.root != CHROOT_ROOT_DIR ||
	     ex->cfg.root_readonly || ex->cfg.reverse_order))
		rc = kiln_err_set(
		    err, KILN_EINVAL,
		    "a root used in place must be a dir: root in the sandbox, writable, "
		    "without the file order variation");
	if (rc || ex->kind == CHROOT_EXEC_HOST)
		goto out;
	rc = check_hostname(ex->cfg.hostname, err);
	if (!rc && ex->cfg.home[0] != '/')
		rc = kiln_err_set(err, KILN_EINVAL, "home '%s' must be absolute", ex->cfg.home);
	if (!rc)
		rc = util_path_normalize(ex->cfg.home, &home, err);
	if (!rc) {
		ex->home = kiln_arena_strdup(&ex->arena, home.ptr);
		if (!ex->home)
			rc = kiln_err_set(err, KILN_ENOMEM, "out of memory");
	}
	if (!rc)
		rc = decide_userns(ex, err);
	if (!rc)
		rc = make_state(ex, err);
	if (!rc)
		rc = chroot_reorder_mount(ex, err);
	if (!rc)
		rc = chroot_plan_build(&ex->plan, &ex->cfg, ex->home, err);
	if (!rc)
		rc = prepare_lower(ex, err);
out:
	kiln_buf_release(&home);
	return rc;
}

kiln_rc chroot_exec_new(const struct chroot_config *cfg, struct chroot_exec **out,
                        struct kiln_err *err)
{
	struct chroot_exec *ex;
	kiln_rc rc;

	*out = NULL;
	if (cfg->kind != CHROOT_EXEC_HOST && cfg->kind != CHROOT_EXEC_SANDBOX)
		return kiln_err_set(err, KILN_EINVAL, "bad executor kind %d", (int)cfg->kind);
	ex = kiln_calloc(1, sizeof(*ex));
	if (!ex)
		return kiln_err_set(err, KILN_ENOMEM, "out of memory");
	kiln_arena_init(&ex->arena, 16 * KILN_MIB);
	ex->kind = cfg->kind;
	rc = exec_setup(ex, cfg, err);
	if (rc) {
		chroot_exec_free(ex);
		return rc;
	}
	*out = ex;
	return KILN_OK;
}

void chroot_exec_free(struct chroot_exec *ex)
{
	struct kiln_err err = KILN_ERR_INIT;

	if (!ex)
		return;
	/* The upper layer belongs to this build alone: what a build wrote into its root goes.
	 * Never through a file order mount that stayed: it shows the build's own directories. */
	if (ex->state_dir && !chroot_reorder_unmount(ex))
		kiln_log(KILN_LOG_WARN, "left %s in place: a mount in it could not be removed",
		         ex->state_dir);
	else if (ex->state_dir && util_rm_rf(ex->state_dir, &err))
		kiln_log_err(KILN_LOG_WARN, &err);
	chroot_plan_release(&ex->plan);
	kiln_arena_release(&ex->arena);
	free(ex);
}

/* ---------------------------------------------------------------------------------------- */
/* One run. */

struct stream {
	int rd;   /* read end of the pipe, -1 when closed */
	int dst;  /* the caller's fd, -1 = none */
	int id;   /* 1 or 2 for the sink */
	bool cap; /* stdout captured into run->capture */
};

struct runstate {
	const struct chroot_exec *ex;
	const struct chroot_run *run;
	struct chroot_result *res;
	struct stream s[2];
	size_t ns;
	int status_rd;
	int pidfd;
	pid_t pid;
	bool exited;   /* the child we forked has been reaped */
	bool killed;   /* we sent SIGKILL */
	bool got_exit; /* init reported the command's wait status */
	int exit_status;
	uint64_t max;
	struct chroot_msg fail; /* the first setup/exec failure message */
	struct chroot_cgroup_run cg;
	bool have_cg;
};

static void run_kill(struct runstate *st)
{
	if (st->killed || st->exited)
		return;
	st->killed = true;
	/* Safe: st->pid is our own unreaped child, so the pid cannot have been reused. For the
	 * sandbox it is the monitor: init dies with it (PDEATHSIG), and with init every process
	 * of the PID namespace. For the host executor it leads its own process group. */
	(void)kill(st->pid, SIGKILL);
	if (st->ex->kind == CHROOT_EXEC_HOST)
		(void)kill(-st->pid, SIGKILL);
	if (st->have_cg)
		chroot_cgroup_run_kill(&st->cg);
}

static void stream_write(struct runstate *st, struct stream *s, const char *buf, size_t len)
{
	const struct chroot_run *run = st->run;
	size_t off = 0;

	if (run->sink)
		run->sink(run->sink_data, s->id, buf, len);
	if (s->cap && run->capture) {
		kiln_buf_add(run->capture, buf, len);
		if (run->capture->err)
			run_kill(st);
		return;
	}
	while (s->dst >= 0 && off < len) {
		ssize_t w = write(s->dst, buf + off, len - off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			/* The reader went away: keep draining so the command is not blocked. */
			s->dst = -1;
			break;
		}
		off += (size_t)w;
	}
}

static void stream_read(struct runstate *st, struct stream *s)
{
	char buf[PUMP_CHUNK];
	ssize_t n;
	size_t len;

	do
		n = read(s->rd, buf, sizeof(buf));
	while (n < 0 && errno == EINTR);
	if (n < 0 && errno == EAGAIN)
		return;
	if (n <= 0) {
		util_close(s->rd);
		s->rd = -1;
		return;
	}
	len = (size_t)n;
	if (st->max && st->res->output_bytes + len > st->max) {
		len = (size_t)(st->max - st->res->output_bytes);
		st->res->output_truncated = true;
		run_kill(st);
	}
	st->res->output_bytes += len;
	if (len)
		stream_write(st, s, buf, len);
}

static void status_read(struct runstate *st)
{
	struct chroot_msg m;
	size_t got = 0;

	if (util_read_full(st->status_rd, &m, sizeof(m), &got, NULL) || got != sizeof(m)) {
		util_close(st->status_rd);
		st->status_rd = -1;
		return;
	}
	if (m.kind == CHROOT_MSG_EXIT) {
		st->got_exit = true;
		st->exit_status = m.status;
	} else if (!st->fail.kind) {
		st->fail = m;
	}
}

static void reap(struct runstate *st)
{
	int status = 0;

	if (chroot_waitpid(st->pid, &status, 0) == st->pid && st->ex->kind == CHROOT_EXEC_HOST) {
		st->got_exit = true;
		st->exit_status = status;
	}
	st->exited = true;
	util_close(st->pidfd);
	st->pidfd = -1;
	/* Host executor: what the command left in its process group goes with it (the sandbox
	 * needs no such step: its namespace is gone already). */
	if (st->ex->kind == CHROOT_EXEC_HOST)
		(void)kill(-st->pid, SIGKILL);
	if (st->have_cg)
		chroot_cgroup_run_kill(&st->cg);
}

static int poll_timeout(const struct runstate *st, int64_t deadline)
{
	int64_t left;

	if (st->exited)
		/* Sandbox: every writer is dead, EOF comes at once; host: only take what is
		 * already there (an escaped background process may hold the pipe). */
		return st->ex->kind == CHROOT_EXEC_SANDBOX ? 5000 : 0;
	if (!deadline || st->killed)
		return -1;
	left = (deadline - util_clock_mono_ns()) / 1000000;
	if (left < 0)
		return 0;
	return left >= INT32_MAX ? INT32_MAX : (int)(left + 1);
}

static bool pump_done(const struct runstate *st)
{
	size_t i;

	if (!st->exited || st->status_rd >= 0)
		return false;
	for (i = 0; i < st->ns; i++) {
		if (st->s[i].rd >= 0)
			return false;
	}
	return true;
}

static void pump(struct runstate *st, int64_t deadline)
{
	struct pollfd pfd[4];
	struct stream *who[4];
	size_t n, i;
	int r;

	while (!pump_done(st)) {
		n = 0;
		for (i = 0; i < st->ns; i++) {
			if (st->s[i].rd >= 0) {
				who[n] = &st->s[i];
				pfd[n++] = (struct pollfd){st->s[i].rd, POLLIN, 0};
			}
		}
		if (st->status_rd >= 0) {
			who[n] = NULL;
			pfd[n++] = (struct pollfd){st->status_rd, POLLIN, 0};
		}
		if (st->pidfd >= 0) {
			who[n] = NULL;
			pfd[n++] = (struct pollfd){st->pidfd, POLLIN, 0};
		}
		r = poll(pfd, n, poll_timeout(st, deadline));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			if (st->exited)
				break;
			st->res->timed_out = true;
			run_kill(st);
			continue;
		}
		for (i = 0; i < n; i++) {
			if (!pfd[i].revents)
				continue;
			if (who[i])
				stream_read(st, who[i]);
			else if (pfd[i].fd == st->status_rd)
				status_read(st);
			else
				reap(st);
		}
	}
}

static kiln_rc make_pipe(int fds[2], struct kiln_err *err)
{
	if (pipe2(fds, O_CLOEXEC) < 0)
		return kiln_err_sys(err, KILN_EIO, "cannot create a pipe");
	return KILN_OK;
}

/* The child's fd for one output stream: a pipe when kiln must see the bytes (cap, capture,
 * sink), else the caller's fd itself, else /dev/null. */
struct fdset {
	int devnull;
	int child[3]; /* what the child installs as 0, 1, 2 */
	int wr[2];    /* write ends kiln closes after fork */
};

static kiln_rc setup_streams(struct runstate *st, struct fdset *fs, struct kiln_err *err)
{
	const struct chroot_run *run = st->run;
	bool pumped = run->capture || run->sink || st->max;
	bool merged = run->stdout_fd >= 0 && run->stdout_fd == run->stderr_fd && !run->capture;
	int p[2];
	int i;
	kiln_rc rc;

	fs->devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (fs->devnull < 0)
		return kiln_err_sys(err, KILN_EIO, "cannot open '/dev/null'");
	fs->child[0] = run->stdin_fd >= 0 ? run->stdin_fd : fs->devnull;
	for (i = 1; i <= 2; i++) {
		int dst = i == 1 ? run->stdout_fd : run->stderr_fd;
		bool cap = i == 1 && run->capture;

		if (i == 2 && merged && pumped) {
			fs->child[2] = fs->child[1];
			continue;
		}
		if (!pumped) {
			fs->child[i] = dst >= 0 ? dst : fs->devnull;
			continue;
		}
		rc = make_pipe(p, err);
		if (rc)
			return rc;
		st->s[st->ns++] = (struct stream){p[0], cap ? -1 : dst, i, cap};
		fs->child[i] = fs->wr[i - 1] = p[1];
	}
	return KILN_OK;
}

static void describe_limits(const struct runstate *st, int64_t timeout_ms)
{
	const struct chroot_exec *ex = st->ex;
	const struct chroot_limits *l = &ex->cfg.limits;
	struct chroot_result *res = st->res;
	struct kiln_buf b = KILN_BUF_INIT(sizeof(res->limits) - 1);
	static const char *const names[CHROOT_CG_NCTL] = {"memory", "pids", "cpu"};
	uint64_t vals[CHROOT_CG_NCTL] = {l->memory_bytes, l->pids_max, l->cpu_percent};
	int used[3] = {0, 0, 0};
	int c;

	if (timeout_ms)
		kiln_buf_addf(&b, " timeout=%" PRId64 "ms", timeout_ms);
	if (l->output_max)
		kiln_buf_addf(&b, " output=%" PRIu64, l->output_max);
	for (c = 0; c < CHROOT_CG_NCTL; c++) {
		enum chroot_cg_mode m = ex->cgroup.mode[c];

		if (!vals[c])
			continue;
		used[m]++;
		if (m == CHROOT_CG_NONE)
			kiln_buf_addf(&b, " %s=%" PRIu64 "%s(not in force)", names[c], vals[c],
			              c == CHROOT_CG_CPU ? "%" : "");
		else
			kiln_buf_addf(&b, " %s=%" PRIu64 "%s(cgroup %s)", names[c], vals[c],
			              c == CHROOT_CG_CPU ? "%" : "", chroot_cgroup_mode_name(m));
	}
	chroot_proc_describe_rlimits(l, &b);
	snprintf(res->limits, sizeof(res->limits), "%s", b.len ? b.ptr + 1 : "");
	snprintf(res->cgroup, sizeof(res->cgroup), "%s",
	         used[1] && used[2] ? "mixed"
	         : used[1]          ? "v1"
	         : used[2]          ? "v2"
	                            : "none");
	kiln_buf_release(&b);
}

static void close_fds(struct fdset *fs)
{
	util_close(fs->devnull);
	util_close(fs->wr[0]);
	util_close(fs->wr[1]);
	fs->devnull = fs->wr[0] = fs->wr[1] = -1;
}

static kiln_rc start_child(struct runstate *st, struct chroot_child *c, struct kiln_err *err)
{
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return kiln_err_sys(err, KILN_EIO, "cannot fork");
	if (pid == 0) {
		for (size_t i = 0; i < st->ns; i++)
			util_close(st->s[i].rd);
		if (st->ex->kind == CHROOT_EXEC_SANDBOX)
			chroot_ns_monitor(c);
		chroot_host_child(c);
	}
	st->pid = pid;
	st->pidfd = pidfd_open(pid, 0);
	if (st->pidfd < 0) {
		kiln_err_sys(err, KILN_EUNSUPP, "cannot watch the child (pidfd_open)");
		(void)kill(pid, SIGKILL);
		(void)chroot_waitpid(pid, NULL, 0);
		st->exited = true;
		return KILN_EUNSUPP;
	}
	return KILN_OK;
}

static void format_secs(int64_t ms, char *dst, size_t size)
{
	if (ms % 1000)
		snprintf(dst, size, "%" PRId64 ".%03" PRId64, ms / 1000, ms % 1000);
	else
		snprintf(dst, size, "%" PRId64, ms / 1000);
}

static kiln_rc finish(struct runstate *st, int64_t timeout_ms, struct kiln_err *err)
{
	struct chroot_result *res = st->res;
	const char *cmd = st->run->argv[0];
	char secs[32];

	if (st->got_exit && WIFEXITED(st->exit_status)) {
		res->exit_code = WEXITSTATUS(st->exit_status);
	} else if (st->got_exit && WIFSIGNALED(st->exit_status)) {
		res->signal = WTERMSIG(st->exit_status);
	} else if (st->killed) {
		res->signal = SIGKILL;
	}
	if (res->timed_out) {
		format_secs(timeout_ms, secs, sizeof(secs));
		return kiln_err_set(err, KILN_ETIMEOUT, "'%s' killed after %s s (time limit)", cmd,
		                    secs);
	}
	if (res->output_truncated)
		return kiln_err_set(err, KILN_ELIMIT,
		                    "'%s' killed: output exceeded %" PRIu64 " bytes", cmd, st->max);
	if (st->run->capture && st->run->capture->err)
		return kiln_buf_finish(st->run->capture, err);
	if (st->fail.kind)
		return chroot_msg_to_err(&st->fail, err);
	if (!st->got_exit)
		return kiln_err_set(err, KILN_EIO, "'%s': the sandbox ended without a status", cmd);
	return KILN_OK;
}

kiln_rc chroot_exec_env(const struct chroot_exec *ex, const char *const *env, struct kiln_arena *a,
                        char ***out, const char **path_out, struct kiln_err *err)
{
	const char *path;

	return chroot_env_build(env, ex->kind == CHROOT_EXEC_SANDBOX ? ex->home : NULL, a, out,
	                        path_out ? path_out : &path, err);
}

static kiln_rc run_prepare(struct runstate *st, struct kiln_arena *a, struct chroot_child *c,
                           struct kiln_err *err)
{
	const struct chroot_exec *ex = st->ex;
	const struct chroot_run *run = st->run;
	kiln_rc rc;
	char name[64];

	if (run->cwd && run->cwd[0] != '/')
		return kiln_err_set(err, KILN_EINVAL, "working directory '%s' must be absolute",
		                    run->cwd);
	rc = chroot_argv_copy(run->argv, a, (char ***)&c->argv, err);
	if (!rc)
		rc = chroot_exec_env(ex, run->env, a, (char ***)&c->envp, &c->path, err);
	if (rc || !want_cgroup(&ex->cfg.limits))
		return rc;
	snprintf(name, sizeof(name), "kiln-%s-%u", ex->id, ex->runs);
	rc = chroot_cgroup_run_create(&ex->cgroup, &ex->cfg.limits, name, &st->cg, err);
	st->have_cg = rc == KILN_OK;
	return rc;
}

kiln_rc chroot_exec_run(struct chroot_exec *ex, const struct chroot_run *run,
                        struct chroot_result *res, struct kiln_err *err)
{
	struct kiln_arena a = KILN_ARENA_INIT(RUN_ARENA);
	struct fdset fs = {-1, {-1, -1, -1}, {-1, -1}};
	struct runstate st;
	struct chroot_child c;
	int status[2] = {-1, -1};
	int64_t timeout_ms = run->timeout_ms > 0 ? run->timeout_ms : ex->cfg.limits.timeout_ms;
	int64_t start = util_clock_mono_ns();
	kiln_rc rc;

	memset(res, 0, sizeof(*res));
	memset(&st, 0, sizeof(st));
	memset(&c, 0, sizeof(c));
	res->exit_code = -1;
	res->sandboxed = ex->kind == CHROOT_EXEC_SANDBOX;
	res->network = !res->sandboxed || ex->cfg.network;
	res->userns = res->sandboxed && ex->userns;
	st = (struct runstate){.ex = ex, .run = run, .res = res, .status_rd = -1, .pidfd = -1};
	st.max = ex->cfg.limits.output_max;
	ex->runs++;
	describe_limits(&st, timeout_ms);
	rc = run_prepare(&st, &a, &c, err);
	if (!rc)
		rc = setup_streams(&st, &fs, err);
	if (!rc)
		rc = make_pipe(status, err);
	if (rc)
		goto out;
	c.ex = ex;
	c.cwd = run->cwd ? run->cwd : (res->sandboxed ? ex->home : NULL);
	memcpy(c.stdio, fs.child, sizeof(c.stdio));
	c.status_fd = status[1];
	c.cg_procs = st.cg.fds;
	c.n_cg = st.cg.nprocs;
	c.keep_session = run->flags & CHROOT_RUN_KEEP_SESSION;
	c.kiln_pid = getpid();
	rc = start_child(&st, &c, err);
	util_close(status[1]);
	status[1] = -1;
	st.status_rd = status[0];
	status[0] = -1;
	close_fds(&fs);
	if (rc)
		goto out;
	pump(&st, timeout_ms ? start + timeout_ms * 1000000 : 0);
	if (!st.exited)
		reap(&st);
	res->elapsed_ns = util_clock_mono_ns() - start;
	rc = finish(&st, timeout_ms, err);
out:
	for (size_t i = 0; i < st.ns; i++)
		util_close(st.s[i].rd);
	util_close(st.status_rd);
	util_close(status[0]);
	util_close(status[1]);
	close_fds(&fs);
	if (st.have_cg)
		chroot_cgroup_run_destroy(&st.cg);
	kiln_arena_release(&a);
	return rc;
}

kiln_rc chroot_sandbox_probe(const struct chroot_config *cfg, struct kiln_err *err)
{
	struct chroot_config c = *cfg;
	struct chroot_exec *ex = NULL;
	struct chroot_result res;
	const char *argv[] = {"/bin/true", NULL};
	const char *env[] = {NULL};
	struct chroot_run run = {argv, env, NULL, -1, -1, -1, NULL, NULL, NULL, 10000, 0};
	kiln_rc rc;

	/* The real thing on the cheapest root: it answers for this kernel, these privileges
	 * and this config's namespaces, which no static check can. */
	c.kind = CHROOT_EXEC_SANDBOX;
	c.root = CHROOT_ROOT_HOST;
	c.root_path = NULL;
	c.nbinds = 0;
	memset(&c.limits, 0, sizeof(c.limits));
	rc = chroot_exec_new(&c, &ex, err);
	if (!rc)
		rc = chroot_exec_run(ex, &run, &res, err);
	if (!rc && res.exit_code != 0)
		rc = kiln_err_set(err, KILN_EUNSUPP, "the sandbox probe exited with status %d",
		                  res.exit_code);
	chroot_exec_free(ex);
	return rc;
}
