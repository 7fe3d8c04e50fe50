/*
 * plan.c - the sandbox's mount plan: which directories, links, binds and fresh filesystems
 * make up the root, built and checked by kiln before it forks anything.
 */
#include "util/util.h"

#include <sys/stat.h>
#include <unistd.h>

#include "chroot/chroot_int.h"

/* The host root's top-level entries: merged-/usr hosts have links, older ones directories. */
static const char *const host_top[] = {"bin", "sbin", "lib", "lib32", "lib64", "libx32"};

/* The /etc subset a build needs and nothing that identifies or configures the host beyond
 * that: accounts (names for %attr and tar), the dynamic linker's cache and configuration,
 * Debian's alternatives (cc is /etc/alternatives/cc), and the distribution's identity. No
 * machine-id, no hostname, no shadow, no resolver (unless the network is shared). */
static const char *const host_etc[] = {
    "passwd",         "group",          "nsswitch.conf", "ld.so.cache",    "ld.so.conf",
    "ld.so.conf.d",   "alternatives",   "os-release",    "debian_version", "redhat-release",
    "system-release", "fedora-release", "protocols",     "services",       "shells",
    "mime.types",     "hosts",
};

/* Only with the host network: name resolution and certificates. */
static const char *const host_etc_net[] = {
    "resolv.conf", "host.conf", "gai.conf", "ssl", "pki", "ca-certificates", "ca-certificates.conf",
};

bool chroot_path_within(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	if (!strcmp(dir, "/"))
		return path[0] == '/';
	return !strncmp(path, dir, n) && (path[n] == '\0' || path[n] == '/');
}

static bool path_is_normal(const char *p)
{
	struct kiln_buf b = KILN_BUF_INIT(KILN_LIMIT_PATH);
	bool ok;

	ok = util_path_normalize(p, &b, NULL) == KILN_OK && !strcmp(b.ptr, p);
	kiln_buf_release(&b);
	return ok;
}

static bool dst_reserved(const char *dst)
{
	return chroot_path_within(dst, "/proc") || chroot_path_within(dst, "/sys") ||
	       chroot_path_within(dst, "/dev");
}

kiln_rc chroot_op_check(const struct chroot_op *op, struct kiln_err *err)
{
	const char *src = op->src ? op->src : ""; /* only binds and symlinks have one */

	if (op->kind < CHROOT_OP_MKDIR || op->kind >= CHROOT_OP_KIND_END)
		return kiln_err_set(err, KILN_EINVAL, "unknown sandbox operation %d",
		                    (int)op->kind);
	if (!op->dst)
		return kiln_err_set(err, KILN_EINVAL, "sandbox operation without a path");
	if (strnlen(op->dst, KILN_LIMIT_PATH) >= KILN_LIMIT_PATH ||
	    strnlen(src, KILN_LIMIT_PATH) >= KILN_LIMIT_PATH)
		return kiln_err_set(err, KILN_ELIMIT, "sandbox path too long");
	if (op->dst[0] != '/' || !strcmp(op->dst, "/") || !path_is_normal(op->dst))
		return kiln_err_set(err, KILN_EINVAL,
		                    "sandbox path '%s' must be absolute, normalised and not '/'",
		                    op->dst);
	if (op->kind == CHROOT_OP_BIND && (src[0] != '/' || !path_is_normal(src)))
		return kiln_err_set(err, KILN_EINVAL,
		                    "bind source '%s' must be an absolute, normalised path", src);
	switch (op->kind) {
	case CHROOT_OP_BIND:
	case CHROOT_OP_TMPFS:
	case CHROOT_OP_MKDIR:
	case CHROOT_OP_SYMLINK:
		if (dst_reserved(op->dst))
			return kiln_err_set(err, KILN_EINVAL,
			                    "'%s' is under /proc, /sys or /dev, which the sandbox "
			                    "provides itself",
			                    op->dst);
		if (op->kind == CHROOT_OP_SYMLINK && !src[0])
			return kiln_err_set(err, KILN_EINVAL, "empty link text for '%s'", op->dst);
		return KILN_OK;
	case CHROOT_OP_PROC:
		return strcmp(op->dst, "/proc")
		           ? kiln_err_set(err, KILN_EINVAL, "proc on '%s'", op->dst)
		           : KILN_OK;
	case CHROOT_OP_SYSFS:
		return strcmp(op->dst, "/sys")
		           ? kiln_err_set(err, KILN_EINVAL, "sysfs on '%s'", op->dst)
		           : KILN_OK;
	case CHROOT_OP_DEV:
		return strcmp(op->dst, "/dev")
		           ? kiln_err_set(err, KILN_EINVAL, "dev on '%s'", op->dst)
		           : KILN_OK;
	case CHROOT_OP_KIND_END:
		break;
	}
	return kiln_err_set(err, KILN_EINVAL, "unknown sandbox operation %d", (int)op->kind);
}

/* The plan's copies of an operation's strings (cast: the struct shows them const). */
static void op_free(struct chroot_op *op)
{
	free((char *)op->src);
	free((char *)op->dst);
	op->src = op->dst = NULL;
}

kiln_rc chroot_plan_add(struct chroot_plan *p, enum chroot_op_kind kind, unsigned flags,
                        unsigned mode, const char *src, const char *dst, struct kiln_err *err)
{
	struct chroot_op *op;

	if (p->n >= 4096)
		return kiln_err_set(err, KILN_ELIMIT, "too many sandbox mounts (4096)");
	if (p->n == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 32;
		struct chroot_op *ops = kiln_reallocarray(p->ops, cap, sizeof(*ops));

		if (!ops)
			return kiln_err_set(err, KILN_ENOMEM, "out of memory");
		p->ops = ops;
		p->cap = cap;
	}
	if (strlen(src ? src : "") >= KILN_LIMIT_PATH || strlen(dst) >= KILN_LIMIT_PATH)
		return kiln_err_set(err, KILN_ELIMIT, "sandbox path too long: '%.200s'", dst);
	op = &p->ops[p->n];
	memset(op, 0, sizeof(*op));
	op->kind = kind;
	op->flags = flags;
	op->mode = mode;
	op->src = kiln_strdup(src ? src : "");
	op->dst = kiln_strdup(dst);
	if (!op->src || !op->dst) {
		op_free(op);
		return kiln_err_set(err, KILN_ENOMEM, "out of memory");
	}
	if (chroot_op_check(op, err)) {
		op_free(op);
		return err ? err->code : KILN_EINVAL;
	}
	p->n++;
	return KILN_OK;
}

void chroot_plan_release(struct chroot_plan *p)
{
	size_t i;

	if (!p)
		return;
	for (i = 0; i < p->n; i++)
		op_free(&p->ops[i]);
	free(p->ops);
	p->ops = NULL;
	p->n = p->cap = 0;
}

/* Component-wise comparison: "/a" < "/a/b" < "/a-b", so every parent precedes its children
 * and a bind under a tmpfs is mounted after (on top of) it. Equal paths (a tmpfs and then a
 * bind on it) keep the order they were added: the sort is stable. */
static int path_cmp(const char *a, const char *b)
{
	for (; *a && *a == *b; a++, b++)
		;
	if (*a == *b)
		return 0;
	if (*a == '/')
		return *b ? -1 : 1;
	if (*b == '/')
		return *a ? 1 : -1;
	return (unsigned char)*a < (unsigned char)*b ? -1 : 1;
}

void chroot_plan_sort(struct chroot_plan *p)
{
	size_t i, j;

	/* Insertion sort: stable, and plans are short (tens of small entries). */
	for (i = 1; i < p->n; i++) {
		struct chroot_op tmp = p->ops[i];

		for (j = i; j > 0 && path_cmp(p->ops[j - 1].dst, tmp.dst) > 0; j--)
			p->ops[j] = p->ops[j - 1];
		p->ops[j] = tmp;
	}
}

static kiln_rc add_host_top(struct chroot_plan *p, struct kiln_err *err)
{
	char dst[64], src[64], link[KILN_LIMIT_PATH];
	struct stat st;
	kiln_rc rc;
	size_t i;

	for (i = 0; i < KILN_ARRAY_SIZE(host_top); i++) {
		ssize_t n;

		snprintf(src, sizeof(src), "/%s", host_top[i]);
		snprintf(dst, sizeof(dst), "/%s", host_top[i]);
		if (lstat(src, &st) < 0)
			continue;
		if (S_ISLNK(st.st_mode)) {
			n = readlink(src, link, sizeof(link) - 1);
			if (n <= 0)
				continue;
			link[n] = '\0';
			rc = chroot_plan_add(p, CHROOT_OP_SYMLINK, 0, 0, link, dst, err);
		} else if (S_ISDIR(st.st_mode)) {
			rc = chroot_plan_add(p, CHROOT_OP_BIND, CHROOT_OPF_RO, 0, src, dst, err);
		} else {
			continue;
		}
		if (rc)
			return rc;
	}
	return KILN_OK;
}

static kiln_rc add_etc_list(struct chroot_plan *p, const char *const *names, size_t n,
                            struct kiln_err *err)
{
	char path[256];
	struct stat st;
	kiln_rc rc;
	size_t i;

	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "/etc/%s", names[i]);
		/* stat follows links: /etc/os-release -> ../usr/lib/os-release and a resolver
		 * link into /run become binds of what they point at. */
		if (stat(path, &st) < 0 || (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)))
			continue;
		rc = chroot_plan_add(p, CHROOT_OP_BIND,
		                     CHROOT_OPF_RO | (S_ISDIR(st.st_mode) ? 0 : CHROOT_OPF_FILE), 0,
		                     path, path, err);
		if (rc)
			return rc;
	}
	return KILN_OK;
}

static kiln_rc add_host_root(struct chroot_plan *p, bool network, struct kiln_err *err)
{
	kiln_rc rc;

	rc = add_host_top(p, err);
	if (!rc)
		rc = chroot_plan_add(p, CHROOT_OP_BIND, CHROOT_OPF_RO, 0, "/usr", "/usr", err);
	if (!rc)
		rc = chroot_plan_add(p, CHROOT_OP_MKDIR, 0, 0755, NULL, "/etc", err);
	if (!rc)
		rc = add_etc_list(p, host_etc, KILN_ARRAY_SIZE(host_etc), err);
	if (!rc && network)
		rc = add_etc_list(p, host_etc_net, KILN_ARRAY_SIZE(host_etc_net), err);
	if (!rc)
		rc = chroot_plan_add(p, CHROOT_OP_MKDIR, 0, 0755, NULL, "/var", err);
	if (!rc)
		rc = chroot_plan_add(p, CHROOT_OP_MKDIR, 0, 0755, NULL, "/run", err);
	return rc;
}

static kiln_rc normalise(const char *what, const char *path, struct kiln_buf *out,
                         struct kiln_err *err)
{
	kiln_buf_reset(out);
	if (!path || path[0] != '/')
		return kiln_err_set(err, KILN_EINVAL, "%s '%s' must be an absolute path", what,
		                    path ? path : "");
	return util_path_normalize(path, out, err);
}

/* Is dst covered by one of the tmpfs paths or binds already in the plan? */
static bool plan_covers(const struct chroot_plan *p, const char *dst)
{
	size_t i;

	for (i = 0; i < p->n; i++) {
		const struct chroot_op *op = &p->ops[i];

		if ((op->kind == CHROOT_OP_TMPFS || op->kind == CHROOT_OP_BIND) &&
		    chroot_path_within(dst, op->dst))
			return true;
	}
	return false;
}

static kiln_rc add_tmpfs_list(struct chroot_plan *p, const struct chroot_config *cfg,
                              struct kiln_err *err)
{
	struct kiln_buf b = KILN_BUF_INIT(KILN_LIMIT_PATH);
	kiln_rc rc = KILN_OK;
	size_t i;

	for (i = 0; !rc && i < cfg->ntmpfs; i++) {
		rc = normalise("tmpfs path", cfg->tmpfs[i], &b, err);
		if (!rc)
			rc = chroot_plan_add(p, CHROOT_OP_TMPFS, 0, 01777, NULL, b.ptr, err);
	}
	kiln_buf_release(&b);
	return rc;
}

static kiln_rc add_binds(struct chroot_plan *p, const struct chroot_config *cfg,
                         struct kiln_err *err)
{
	struct kiln_buf src = KILN_BUF_INIT(KILN_LIMIT_PATH);
	struct kiln_buf dst = KILN_BUF_INIT(KILN_LIMIT_PATH);
	kiln_rc rc = KILN_OK;
	struct stat st;
	size_t i;

	for (i = 0; !rc && i < cfg->nbinds; i++) {
		const struct chroot_bind *b = &cfg->binds[i];

		rc = normalise("bind source", b->host, &src, err);
		if (!rc)
			rc = normalise("bind target", b->inside, &dst, err);
		if (rc)
			break;
		if (stat(src.ptr, &st) < 0) {
			rc = kiln_err_sys(err, errno == ENOENT ? KILN_ENOTFOUND : KILN_EIO,
			                  "bind source '%s'", src.ptr);
			break;
		}
		rc = chroot_plan_add(p, CHROOT_OP_BIND,
		                     (b->readonly ? CHROOT_OPF_RO : 0) |
		                         (S_ISDIR(st.st_mode) ? 0 : CHROOT_OPF_FILE),
		                     0, src.ptr, dst.ptr, err);
	}
	kiln_buf_release(&src);
	kiln_buf_release(&dst);
	return rc;
}

kiln_rc chroot_plan_build(struct chroot_plan *p, const struct chroot_config *cfg, const char *home,
                          struct kiln_err *err)
{
	kiln_rc rc = KILN_OK;

	if (cfg->root == CHROOT_ROOT_HOST)
		rc = add_host_root(p, cfg->network, err);
	if (!rc)
		rc = chroot_plan_add(p, CHROOT_OP_PROC, 0, 0, NULL, "/proc", err);
	/* A fresh sysfs shows the new network namespace (only lo); with the host network it
	 * would need the host's netns, so there is no /sys then. */
	if (!rc && !cfg->network)
		rc = chroot_plan_add(p, CHROOT_OP_SYSFS, CHROOT_OPF_RO, 0, NULL, "/sys", err);
	if (!rc)
		rc = chroot_plan_add(p, CHROOT_OP_DEV, 0, 0755, NULL, "/dev", err);
	if (!rc)
		rc = add_tmpfs_list(p, cfg, err);
	if (!rc)
		rc = add_binds(p, cfg, err);
	/* HOME is writable scratch unless the caller put a tmpfs or a bind on (or above) it. */
	if (!rc && !plan_covers(p, home))
		rc = chroot_plan_add(p, CHROOT_OP_TMPFS, 0, 0755, NULL, home, err);
	if (!rc)
		chroot_plan_sort(p);
	return rc;
}
