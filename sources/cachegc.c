/*
 * cachegc.c - statistics and garbage collection of the source cache: leftovers of crashed
 * downloads, index entries whose object is gone, corrupt objects (on request), and the
 * size cap, which evicts the least recently used objects and git mirrors first.
 */
#include "util/util.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sources/sources.h"
#include "sources/sources_int.h"

#define TMP_MAX_AGE (24 * 3600) /* a download left this long is from a dead process */

/* One evictable unit: an object file or a whole mirror directory. */
struct gc_item {
	char *path; /* owned */
	uint64_t bytes;
	int64_t mtime_ns;
	bool mirror;
};

struct gc_list {
	struct gc_item *v;
	size_t n, cap;
};

static void list_release(struct gc_list *l)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		free(l->v[i].path);
	free(l->v);
	memset(l, 0, sizeof(*l));
}

static kiln_rc list_add(struct gc_list *l, const char *path, const struct stat *st, uint64_t bytes,
                        bool mirror, struct kiln_err *err)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 64;
		struct gc_item *v = kiln_reallocarray(l->v, cap, sizeof(*v));

		if (!v)
			return kiln_err_set(err, KILN_ENOMEM, "out of memory");
		l->v = v;
		l->cap = cap;
	}
	l->v[l->n].path = kiln_strdup(path);
	if (!l->v[l->n].path)
		return kiln_err_set(err, KILN_ENOMEM, "out of memory");
	l->v[l->n].bytes = bytes;
	l->v[l->n].mtime_ns = (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec;
	l->v[l->n].mirror = mirror;
	l->n++;
	return KILN_OK;
}

/* Call fn for every entry of dir (not "." or ".."); a missing dir has no entries. */
typedef kiln_rc (*entry_fn)(void *ctx, const char *path, const char *name, struct kiln_err *err);

static kiln_rc each_entry(const char *dir, entry_fn fn, void *ctx, struct kiln_err *err)
{
	struct kiln_buf p = KILN_BUF_INIT(KILN_LIMIT_PATH);
	DIR *d = opendir(dir);
	struct dirent *de;
	kiln_rc rc = KILN_OK;

	if (!d)
		return errno == ENOENT ? KILN_OK
		                       : kiln_err_sys(err, KILN_EIO, "cannot read '%s'", dir);
	while (!rc && (de = readdir(d)) != NULL) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		kiln_buf_reset(&p);
		kiln_buf_addf(&p, "%s/%s", dir, de->d_name);
		rc = kiln_buf_finish(&p, err);
		if (!rc)
			rc = fn(ctx, p.ptr, de->d_name, err);
	}
	closedir(d);
	kiln_buf_release(&p);
	return rc;
}

/* Bytes used below path (files' sizes), not following symlinks. */
static uint64_t du(const char *path, int depth)
{
	struct kiln_buf p = KILN_BUF_INIT(KILN_LIMIT_PATH);
	struct stat st;
	struct dirent *de;
	uint64_t total = 0;
	DIR *d;

	if (lstat(path, &st) < 0)
		return 0;
	if (!S_ISDIR(st.st_mode) || depth > KILN_LIMIT_GIT_DEPTH)
		return S_ISREG(st.st_mode) ? (uint64_t)st.st_size : 0;
	d = opendir(path);
	while (d && (de = readdir(d)) != NULL) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		kiln_buf_reset(&p);
		kiln_buf_addf(&p, "%s/%s", path, de->d_name);
		if (!p.err)
			total += du(p.ptr, depth + 1);
	}
	if (d)
		closedir(d);
	kiln_buf_release(&p);
	return total;
}

struct gc_ctx {
	struct sources_cache c;
	struct sources_cache_stats st;
	struct sources_cache_gc res;
	struct gc_list items;
	unsigned flags;
	bool collect; /* false: statistics only */
	int64_t now;
};

static kiln_rc verify_object(struct gc_ctx *g, const char *path, const char *name, bool *bad,
                             struct kiln_err *err)
{
	char hex[2 * UTIL_DIGEST_MAX + 1];
	struct kiln_err e = KILN_ERR_INIT;

	*bad = false;
	if (util_digest_file_hex(UTIL_DIGEST_SHA256, path, hex, &e)) {
		if (e.code == KILN_ENOTFOUND)
			return KILN_OK; /* evicted meanwhile */
		kiln_err_merge(err, &e);
		return err->code;
	}
	if (strcmp(hex, name)) {
		*bad = true;
		kiln_warn("cache object %s is corrupt (its sha256 is %s): removed", path, hex);
		(void)g;
	}
	return KILN_OK;
}

static kiln_rc object_entry(void *ctx, const char *path, const char *name, struct kiln_err *err)
{
	struct gc_ctx *g = ctx;
	struct stat st;
	bool bad = false;

	if (lstat(path, &st) < 0 || !S_ISREG(st.st_mode) || strlen(name) != 64)
		return KILN_OK;
	if (g->collect && (g->flags & SOURCES_CACHE_GC_VERIFY)) {
		if (verify_object(g, path, name, &bad, err))
			return err->code;
		if (bad) {
			unlink(path);
			g->res.corrupt++;
			return KILN_OK;
		}
	}
	g->st.objects++;
	g->st.object_bytes += (uint64_t)st.st_size;
	return g->collect ? list_add(&g->items, path, &st, (uint64_t)st.st_size, false, err)
	                  : KILN_OK;
}

static kiln_rc object_fanout(void *ctx, const char *path, const char *name, struct kiln_err *err)
{
	(void)name;
	return each_entry(path, object_entry, ctx, err);
}

static kiln_rc mirror_entry(void *ctx, const char *path, const char *name, struct kiln_err *err)
{
	struct gc_ctx *g = ctx;
	size_t len = strlen(name);
	struct stat st;
	uint64_t bytes;

	if (len < 5 || strcmp(name + len - 4, ".git") || lstat(path, &st) < 0 ||
	    !S_ISDIR(st.st_mode))
		return KILN_OK;
	bytes = du(path, 0);
	g->st.mirrors++;
	g->st.mirror_bytes += bytes;
	return g->collect ? list_add(&g->items, path, &st, bytes, true, err) : KILN_OK;
}

static kiln_rc tmp_entry(void *ctx, const char *path, const char *name, struct kiln_err *err)
{
	struct gc_ctx *g = ctx;
	struct stat st;

	(void)name;
	(void)err;
	if (lstat(path, &st) < 0 || !S_ISREG(st.st_mode))
		return KILN_OK;
	if (g->collect && st.st_mtim.tv_sec + TMP_MAX_AGE < g->now && !unlink(path)) {
		g->res.tmp_files++;
		g->res.tmp_bytes += (uint64_t)st.st_size;
		return KILN_OK;
	}
	g->st.tmp_files++;
	g->st.tmp_bytes += (uint64_t)st.st_size;
	return KILN_OK;
}

/* An index entry (url/ or alias/) whose object is gone is dropped when collecting. */
static kiln_rc index_entry(void *ctx, const char *path, const char *name, struct kiln_err *err)
{
	struct gc_ctx *g = ctx;
	struct kiln_err e = KILN_ERR_INIT;
	struct kiln_buf b = KILN_BUF_INIT(KILN_LIMIT_URL + 256);
	struct kiln_buf obj = KILN_BUF_INIT(KILN_LIMIT_PATH);
	bool dangling = true;
	const char *p;

	(void)name;
	(void)err;
	if (!util_read_file(path, KILN_LIMIT_URL + 256, &b, &e)) {
		p = !strncmp(b.ptr, "sha256 ", 7) ? b.ptr + 7 : b.ptr;
		if (strlen(p) >= 64) {
			kiln_buf_addf(&obj, "%s/sha256/%.2s/%.64s", g->c.dir, p, p);
			dangling = !obj.err && access(obj.ptr, F_OK) < 0;
		}
	}
	if (g->collect && dangling && !unlink(path))
		g->res.index++;
	else if (!strncmp(path + strlen(g->c.dir), "/url/", 5))
		g->st.urls++;
	kiln_buf_release(&obj);
	kiln_buf_release(&b);
	return KILN_OK;
}

static kiln_rc index_fanout(void *ctx, const char *path, const char *name, struct kiln_err *err)
{
	(void)name;
	return each_entry(path, index_entry, ctx, err);
}

static kiln_rc alias_algo(void *ctx, const char *path, const char *name, struct kiln_err *err)
{
	(void)name;
	return each_entry(path, index_fanout, ctx, err);
}

static kiln_rc scan(struct gc_ctx *g, struct kiln_err *err)
{
	struct kiln_buf p = KILN_BUF_INIT(KILN_LIMIT_PATH);
	static const struct {
		const char *sub;
		entry_fn fn;
	} parts[] = {
	    {"tmp", tmp_entry},    {"sha256", object_fanout}, {"git", mirror_entry},
	    {"url", index_fanout}, {"alias", alias_algo},
	};
	kiln_rc rc = KILN_OK;
	size_t i;

	for (i = 0; i < KILN_ARRAY_SIZE(parts) && !rc; i++) {
		kiln_buf_reset(&p);
		kiln_buf_addf(&p, "%s/%s", g->c.dir, parts[i].sub);
		rc = kiln_buf_finish(&p, err);
		if (!rc)
			rc = each_entry(p.ptr, parts[i].fn, g, err);
	}
	kiln_buf_release(&p);
	return rc;
}

static int by_mtime(const void *a, const void *b)
{
	const struct gc_item *x = a, *y = b;

	if (x->mtime_ns != y->mtime_ns)
		return x->mtime_ns < y->mtime_ns ? -1 : 1;
	return strcmp(x->path, y->path); /* a stable order for equal times */
}

/* A mirror is evicted only when nobody holds its lock (a fetch in progress). */
static bool mirror_evict(struct gc_ctx *g, const char *path)
{
	struct kiln_err e = KILN_ERR_INIT;
	const char *base = util_path_basename(path);
	char key[80];
	bool ok;
	int fd;

	snprintf(key, sizeof(key), "%.64s", base);
	if (sources_cache_lock(&g->c, "git", key, false, &fd, &e))
		return false;
	ok = !util_rm_rf(path, &e);
	if (!ok)
		kiln_log_err(KILN_LOG_WARN, &e);
	sources_cache_unlock(fd);
	return ok;
}

static void evict(struct gc_ctx *g, uint64_t max)
{
	uint64_t total = g->st.object_bytes + g->st.mirror_bytes;
	size_t i;

	qsort(g->items.v, g->items.n, sizeof(*g->items.v), by_mtime);
	for (i = 0; i < g->items.n && total > max; i++) {
		struct gc_item *it = &g->items.v[i];

		if (it->mirror ? !mirror_evict(g, it->path) : unlink(it->path) < 0)
			continue;
		total -= it->bytes;
		if (it->mirror) {
			g->res.mirrors++;
			g->res.mirror_bytes += it->bytes;
		} else {
			g->res.objects++;
			g->res.object_bytes += it->bytes;
		}
	}
}

kiln_rc sources_cache_stats(const char *dir, struct sources_cache_stats *st, struct kiln_err *err)
{
	struct gc_ctx g = {.collect = false};
	kiln_rc rc;

	g.c.dir = (char *)(uintptr_t)dir; /* borrowed: never freed here */
	rc = scan(&g, err);
	*st = g.st;
	return rc;
}

kiln_rc sources_cache_collect(const char *dir, uint64_t max_bytes, unsigned flags,
                              struct sources_cache_gc *res, struct kiln_err *err)
{
	struct gc_ctx g = {.collect = true, .flags = flags};
	int lock = -1;
	kiln_rc rc;

	g.now = util_clock_wall();
	rc = sources_cache_open(&g.c, dir, 0, err);
	if (rc)
		return rc;
	rc = sources_cache_lock(&g.c, "gc", "", true, &lock, err);
	/* Objects first (evicting them makes index entries dangle), then the indexes. */
	if (!rc)
		rc = scan(&g, err);
	if (!rc && max_bytes)
		evict(&g, max_bytes);
	if (!rc && (g.res.objects || g.res.corrupt)) {
		struct gc_list keep = g.items;

		memset(&g.items, 0, sizeof(g.items));
		g.flags &= ~(unsigned)SOURCES_CACHE_GC_VERIFY;
		memset(&g.st, 0, sizeof(g.st));
		rc = scan(&g, err); /* second pass drops what the evictions left dangling */
		list_release(&keep);
	}
	sources_cache_unlock(lock);
	if (res)
		*res = g.res;
	list_release(&g.items);
	sources_cache_close(&g.c);
	return rc;
}
