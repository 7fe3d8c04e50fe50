/*
 * cgroup.c - memory, pids and CPU limits through cgroups: v2 where the unified hierarchy has
 * the controller, v1 where the controller is mounted as a v1 hierarchy (hybrid hosts, like
 * the machines kiln is developed on: v1 memory/pids/cpu writable, v2 with hugetlb only).
 *
 * Each run gets its own group under the parent (kiln's own cgroup, or limits.cgroup_dir),
 * named after the executor and the run, joined by the first child before it unshares, killed
 * as a whole when the run is killed, and removed afterwards.
 */
#include "util/util.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "chroot/chroot_int.h"

static const char *const ctl_names[CHROOT_CG_NCTL] = {"memory", "pids", "cpu"};

const char *chroot_cgroup_mode_name(enum chroot_cg_mode m)
{
	switch (m) {
	case CHROOT_CG_V1:
		return "v1";
	case CHROOT_CG_V2:
		return "v2";
	case CHROOT_CG_NONE:
		break;
	}
	return "none";
}

/* Copy the n-th space-separated field of line (0-based) into dst, undoing mountinfo's octal
 * escapes (\040 for a space). */
static bool field(const char *line, size_t len, int n, char *dst, size_t size)
{
	const char *p = line;
	const char *end = line + len;
	size_t o = 0;

	for (; n > 0 && p < end; n--) {
		while (p < end && *p != ' ')
			p++;
		while (p < end && *p == ' ')
			p++;
	}
	if (p >= end)
		return false;
	while (p < end && *p != ' ' && o + 1 < size) {
		if (*p == '\\' && end - p >= 4 && p[1] >= '0' && p[1] <= '3') {
			dst[o++] = (char)(((p[1] - '0') << 6) | ((p[2] - '0') << 3) | (p[3] - '0'));
			p += 4;
		} else {
			dst[o++] = *p++;
		}
	}
	dst[o] = '\0';
	return true;
}

static bool list_has(const char *list, const char *name, char sep)
{
	size_t n = strlen(name);
	const char *p = list;

	if (!p)
		return false;
	while (*p) {
		size_t l = strcspn(p, sep == ' ' ? " \n" : ",");

		if (l == n && !strncmp(p, name, n))
			return true;
		p += l;
		while (*p == sep || *p == '\n')
			p++;
	}
	return false;
}

/* Our path in the hierarchy from /proc/self/cgroup: the v2 line ("0::/x") when v2, else the
 * v1 line that lists ctl. */
static bool proc_path(const char *proc_cgroup, bool v2, const char *ctl, char *dst, size_t size)
{
	const char *p = proc_cgroup;

	while (p && *p) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		const char *c1 = memchr(p, ':', len);
		const char *c2 = c1 ? memchr(c1 + 1, ':', len - (size_t)(c1 + 1 - p)) : NULL;

		if (c2) {
			char ctls[256];
			size_t cl = (size_t)(c2 - c1 - 1);

			snprintf(ctls, sizeof(ctls), "%.*s", (int)cl, c1 + 1);
			if ((v2 && cl == 0 && !strncmp(p, "0:", 2)) ||
			    (!v2 && cl && list_has(ctls, ctl, ','))) {
				snprintf(dst, size, "%.*s", (int)(len - (size_t)(c2 + 1 - p)),
				         c2 + 1);
				return true;
			}
		}
		p = nl ? nl + 1 : NULL;
	}
	return false;
}

/* Join mount point and the cgroup path relative to the mount's root. */
static void hier_dir(const char *mnt, const char *root, const char *path, const char *override,
                     char *dst, size_t size)
{
	const char *rel = override ? override : path;
	size_t rl = strlen(root);

	if (!override && strcmp(root, "/") && !strncmp(path, root, rl) &&
	    (path[rl] == '/' || !path[rl]))
		rel = path + rl;
	while (*rel == '/')
		rel++;
	snprintf(dst, size, "%s%s%s", mnt, *rel ? "/" : "", rel);
}

static bool v2_has(const char *dir, const char *ctl)
{
	char path[KILN_LIMIT_PATH + 32];
	struct kiln_buf b = KILN_BUF_INIT(KILN_LIMIT_LINE);
	bool ok;

	snprintf(path, sizeof(path), "%s/cgroup.controllers", dir);
	ok =
	    util_read_file(path, KILN_LIMIT_LINE, &b, NULL) == KILN_OK && list_has(b.ptr, ctl, ' ');
	kiln_buf_release(&b);
	return ok;
}

struct mount_line {
	char root[KILN_LIMIT_PATH];
	char mnt[KILN_LIMIT_PATH];
	char type[32];
	char opts[512];
};

static bool parse_mount(const char *line, size_t len, struct mount_line *m)
{
	const char *dash = NULL;
	const char *p;

	for (p = line; p + 3 <= line + len; p++) {
		if (!memcmp(p, " - ", 3)) {
			dash = p + 3;
			break;
		}
	}
	if (!dash || !field(line, len, 3, m->root, sizeof(m->root)) ||
	    !field(line, len, 4, m->mnt, sizeof(m->mnt)))
		return false;
	len -= (size_t)(dash - line);
	return field(dash, len, 0, m->type, sizeof(m->type)) &&
	       field(dash, len, 2, m->opts, sizeof(m->opts));
}

static void detect_ctl(struct chroot_cgroup *cg, enum chroot_cg_ctl ctl, const char *mountinfo,
                       const char *proc_cgroup, const char *override)
{
	struct mount_line m;
	char path[KILN_LIMIT_PATH];
	char dir[KILN_LIMIT_PATH];
	const char *p = mountinfo;
	const char *name = ctl_names[ctl];

	while (p && *p) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		const char *line = p;

		p = nl ? nl + 1 : NULL;
		if (!parse_mount(line, len, &m))
			continue;
		if (!strcmp(m.type, "cgroup2") && cg->mode[ctl] == CHROOT_CG_NONE &&
		    proc_path(proc_cgroup, true, name, path, sizeof(path))) {
			hier_dir(m.mnt, m.root, path, override, dir, sizeof(dir));
			if (v2_has(dir, name)) {
				cg->mode[ctl] = CHROOT_CG_V2;
				snprintf(cg->parent[ctl], sizeof(cg->parent[ctl]), "%s", dir);
				return;
			}
		} else if (!strcmp(m.type, "cgroup") && list_has(m.opts, name, ',') &&
		           proc_path(proc_cgroup, false, name, path, sizeof(path))) {
			hier_dir(m.mnt, m.root, path, override, dir, sizeof(dir));
			if (access(dir, W_OK) == 0) {
				cg->mode[ctl] = CHROOT_CG_V1;
				snprintf(cg->parent[ctl], sizeof(cg->parent[ctl]), "%s", dir);
			}
		}
	}
}

void chroot_cgroup_detect_from(struct chroot_cgroup *cg, const char *mountinfo,
                               const char *proc_cgroup, const bool want[CHROOT_CG_NCTL],
                               const char *parent_override)
{
	int ctl;

	memset(cg, 0, sizeof(*cg));
	for (ctl = 0; ctl < CHROOT_CG_NCTL; ctl++) {
		if (!want[ctl])
			continue;
		detect_ctl(cg, (enum chroot_cg_ctl)ctl, mountinfo, proc_cgroup, parent_override);
		if (cg->mode[ctl] == CHROOT_CG_NONE && !cg->why[0])
			snprintf(cg->why, sizeof(cg->why),
			         "no writable cgroup v2 or v1 hierarchy has the %s controller",
			         ctl_names[ctl]);
	}
}

static bool v2_enable(const char *dir, const char *ctl, char *why, size_t size)
{
	char path[KILN_LIMIT_PATH + 32];
	char cmd[32];
	struct kiln_buf b = KILN_BUF_INIT(KILN_LIMIT_LINE);
	bool ok = false;
	int fd = -1;

	snprintf(path, sizeof(path), "%s/cgroup.subtree_control", dir);
	if (util_read_file(path, KILN_LIMIT_LINE, &b, NULL) == KILN_OK &&
	    list_has(b.ptr, ctl, ' ')) {
		ok = true;
		goto out;
	}
	snprintf(cmd, sizeof(cmd), "+%s", ctl);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	ok = fd >= 0 && write(fd, cmd, strlen(cmd)) == (ssize_t)strlen(cmd);
	if (!ok && !why[0])
		snprintf(why, size,
		         "cannot enable the %s controller in '%.120s' (%s); use a delegated cgroup",
		         ctl, path, strerror(errno));
out:
	util_close(fd);
	kiln_buf_release(&b);
	return ok;
}

void chroot_cgroup_detect(struct chroot_cgroup *cg, const struct chroot_limits *lim)
{
	struct kiln_buf mi = KILN_BUF_INIT(16 * KILN_MIB);
	struct kiln_buf pc = KILN_BUF_INIT(KILN_LIMIT_LINE);
	bool want[CHROOT_CG_NCTL] = {lim->memory_bytes > 0, lim->pids_max > 0,
	                             lim->cpu_percent > 0};
	int ctl;

	if (util_read_file("/proc/self/mountinfo", mi.max, &mi, NULL) ||
	    util_read_file("/proc/self/cgroup", pc.max, &pc, NULL)) {
		memset(cg, 0, sizeof(*cg));
		snprintf(cg->why, sizeof(cg->why), "cannot read /proc/self/mountinfo or cgroup");
		goto out;
	}
	chroot_cgroup_detect_from(cg, mi.ptr, pc.ptr, want, lim->cgroup_dir);
	for (ctl = 0; ctl < CHROOT_CG_NCTL; ctl++) {
		if (cg->mode[ctl] == CHROOT_CG_V2 &&
		    !v2_enable(cg->parent[ctl], ctl_names[ctl], cg->why, sizeof(cg->why)))
			cg->mode[ctl] = CHROOT_CG_NONE;
	}
out:
	kiln_buf_release(&mi);
	kiln_buf_release(&pc);
}

void chroot_cgroup_value(enum chroot_cg_ctl ctl, enum chroot_cg_mode mode,
                         const struct chroot_limits *lim, char *dst, size_t size)
{
	switch (ctl) {
	case CHROOT_CG_MEMORY:
		snprintf(dst, size, "%" PRIu64, lim->memory_bytes);
		return;
	case CHROOT_CG_PIDS:
		snprintf(dst, size, "%" PRIu64, lim->pids_max);
		return;
	case CHROOT_CG_CPU:
		/* Period 100 ms; quota = percent of one CPU. */
		if (mode == CHROOT_CG_V2)
			snprintf(dst, size, "%" PRIu64 " 100000",
			         (uint64_t)lim->cpu_percent * 1000);
		else
			snprintf(dst, size, "%" PRIu64, (uint64_t)lim->cpu_percent * 1000);
		return;
	case CHROOT_CG_NCTL:
		break;
	}
	dst[0] = '\0';
}

static kiln_rc cg_write(const char *dir, const char *file, const char *value, bool optional,
                        struct kiln_err *err)
{
	char path[KILN_LIMIT_PATH + 64];
	int fd;
	ssize_t w;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0) {
		if (optional)
			return KILN_OK;
		return kiln_err_sys(err, KILN_EIO, "cannot open '%s'", path);
	}
	do
		w = write(fd, value, strlen(value));
	while (w < 0 && errno == EINTR);
	if (w != (ssize_t)strlen(value) && !optional) {
		int saved = errno;

		util_close(fd);
		errno = saved;
		return kiln_err_sys(err, KILN_EIO, "cannot write '%s' to '%s'", value, path);
	}
	util_close(fd);
	return KILN_OK;
}

static kiln_rc write_limit(const char *dir, enum chroot_cg_ctl ctl, enum chroot_cg_mode mode,
                           const struct chroot_limits *lim, struct kiln_err *err)
{
	char v[64];
	kiln_rc rc;

	chroot_cgroup_value(ctl, mode, lim, v, sizeof(v));
	switch (ctl) {
	case CHROOT_CG_MEMORY:
		if (mode == CHROOT_CG_V2) {
			rc = cg_write(dir, "memory.max", v, false, err);
			/* No swapping around the limit, where swap accounting exists. */
			return rc ? rc : cg_write(dir, "memory.swap.max", "0", true, err);
		}
		rc = cg_write(dir, "memory.limit_in_bytes", v, false, err);
		return rc ? rc : cg_write(dir, "memory.memsw.limit_in_bytes", v, true, err);
	case CHROOT_CG_PIDS:
		return cg_write(dir, "pids.max", v, false, err);
	case CHROOT_CG_CPU:
		if (mode == CHROOT_CG_V2)
			return cg_write(dir, "cpu.max", v, false, err);
		rc = cg_write(dir, "cpu.cfs_period_us", "100000", false, err);
		return rc ? rc : cg_write(dir, "cpu.cfs_quota_us", v, false, err);
	case CHROOT_CG_NCTL:
		break;
	}
	return KILN_OK;
}

static bool wanted(enum chroot_cg_ctl ctl, const struct chroot_limits *lim)
{
	return (ctl == CHROOT_CG_MEMORY && lim->memory_bytes) ||
	       (ctl == CHROOT_CG_PIDS && lim->pids_max) ||
	       (ctl == CHROOT_CG_CPU && lim->cpu_percent);
}

/* The run's directory for ctl, made (and its cgroup.procs opened) once per hierarchy. */
static kiln_rc run_dir(struct chroot_cgroup_run *r, const char *dir, struct kiln_err *err)
{
	char path[KILN_LIMIT_PATH + 32];
	size_t i;

	for (i = 0; i < CHROOT_CG_NCTL; i++) {
		if (!strcmp(r->dir[i], dir))
			return KILN_OK;
	}
	for (i = 0; i < CHROOT_CG_NCTL && r->dir[i][0]; i++)
		;
	if (i == CHROOT_CG_NCTL)
		return kiln_err_set(err, KILN_EINVAL, "too many cgroup hierarchies");
	if (mkdir(dir, 0755) < 0)
		return kiln_err_sys(err, KILN_EIO, "cannot create the cgroup '%s'", dir);
	snprintf(r->dir[i], sizeof(r->dir[i]), "%s", dir);
	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	r->procs[i] = open(path, O_WRONLY | O_CLOEXEC);
	if (r->procs[i] < 0)
		return kiln_err_sys(err, KILN_EIO, "cannot open '%s'", path);
	r->fds[r->nprocs++] = r->procs[i];
	return KILN_OK;
}

kiln_rc chroot_cgroup_run_create(const struct chroot_cgroup *cg, const struct chroot_limits *lim,
                                 const char *name, struct chroot_cgroup_run *r,
                                 struct kiln_err *err)
{
	char dir[KILN_LIMIT_PATH];
	kiln_rc rc = KILN_OK;
	int ctl;

	memset(r, 0, sizeof(*r));
	for (ctl = 0; ctl < CHROOT_CG_NCTL; ctl++)
		r->procs[ctl] = r->fds[ctl] = -1;
	for (ctl = 0; !rc && ctl < CHROOT_CG_NCTL; ctl++) {
		enum chroot_cg_ctl c = (enum chroot_cg_ctl)ctl;

		if (!wanted(c, lim) || cg->mode[ctl] == CHROOT_CG_NONE)
			continue;
		if (snprintf(dir, sizeof(dir), "%s/%s", cg->parent[ctl], name) >= (int)sizeof(dir))
			return kiln_err_set(err, KILN_ELIMIT, "cgroup path too long");
		rc = run_dir(r, dir, err);
		if (!rc)
			rc = write_limit(dir, c, cg->mode[ctl], lim, err);
	}
	if (rc)
		chroot_cgroup_run_destroy(r);
	return rc;
}

/* SIGKILL what cgroup.procs lists; true when it listed nothing. */
static bool kill_listed(const char *dir)
{
	char path[KILN_LIMIT_PATH + 32];
	struct kiln_buf b = KILN_BUF_INIT(KILN_MIB);
	bool empty = true;
	const char *p;

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	if (util_read_file(path, b.max, &b, NULL)) {
		kiln_buf_release(&b);
		return true;
	}
	for (p = b.ptr; *p;) {
		long pid = strtol(p, NULL, 10);

		/* Safe: a pid listed in our own run's group is one of the run's processes (kiln
		 * created the group for this run; nothing else joins it). */
		if (pid > 1) {
			(void)kill((pid_t)pid, SIGKILL);
			empty = false;
		}
		p += strcspn(p, "\n");
		while (*p == '\n')
			p++;
	}
	kiln_buf_release(&b);
	return empty;
}

void chroot_cgroup_run_kill(struct chroot_cgroup_run *r)
{
	size_t i;
	int round;

	for (i = 0; i < CHROOT_CG_NCTL; i++) {
		if (!r->dir[i][0])
			continue;
		/* cgroup.kill (v2, Linux 5.14+) kills atomically, even a forking group; v1
		 * has no such file, so kill what is listed until nothing is. */
		(void)cg_write(r->dir[i], "cgroup.kill", "1", true, NULL);
		for (round = 0; round < 100 && !kill_listed(r->dir[i]); round++)
			;
	}
}

void chroot_cgroup_run_destroy(struct chroot_cgroup_run *r)
{
	struct timespec ms = {0, 1000000};
	size_t i;
	int tries;

	for (i = 0; i < CHROOT_CG_NCTL; i++) {
		util_close(r->procs[i]);
		r->procs[i] = r->fds[i] = -1;
		if (!r->dir[i][0])
			continue;
		/* The last processes are reaped before this runs, but the kernel may take a
		 * moment to let go of the group; a bounded retry, not a wait for a process. */
		for (tries = 0; tries < 500 && rmdir(r->dir[i]) < 0 && errno == EBUSY; tries++) {
			kill_listed(r->dir[i]);
			nanosleep(&ms, NULL);
		}
		r->dir[i][0] = '\0';
	}
	r->nprocs = 0;
}
