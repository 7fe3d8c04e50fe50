/*
 * lock.c - the lock: a resolved root as canonical JSON, its sha256 the root's identity.
 *
 * The canonical bytes are what roots_lock_write() prints: keys in a fixed order, packages
 * sorted (name, then rpm's EVR order, then arch), one package per line so that two locks
 * diff readably. A lock read back is re-written before hashing, so its identity does not
 * depend on how the file was formatted, only on what it says.
 */
#include "util/util.h"

#include "api/api.h"
#include "macro/macro.h"
#include "roots/roots.h"
#include "roots/roots_int.h"

#include <ctype.h>

#define LOCK_FORMAT 1
#define LOCK_MAX_FIELD 1024

void roots_lock_init(struct roots_lock *l)
{
	memset(l, 0, sizeof(*l));
	kiln_arena_init(&l->arena, 4 * (size_t)ROOTS_LOCK_MAX_BYTES);
}

void roots_lock_release(struct roots_lock *l)
{
	if (!l)
		return;
	kiln_arena_release(&l->arena);
	free(l->pkgs);
	memset(l, 0, sizeof(*l));
}

kiln_rc roots_lock_add(struct roots_lock *l, const struct roots_lock_pkg *pkg, struct kiln_err *err)
{
	struct roots_lock_pkg *dst;

	if (l->n >= ROOTS_LOCK_MAX_PACKAGES)
		return kiln_err_set(err, KILN_ELIMIT, "over %d packages in a lock",
		                    ROOTS_LOCK_MAX_PACKAGES);
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 64;
		struct roots_lock_pkg *nv = kiln_reallocarray(l->pkgs, cap, sizeof(*nv));

		if (!nv)
			return kiln_err_set(err, KILN_ENOMEM, "out of memory");
		l->pkgs = nv;
		l->cap = cap;
	}
	dst = &l->pkgs[l->n];
	*dst = *pkg;
	dst->name = kiln_arena_strdup(&l->arena, pkg->name);
	dst->version = kiln_arena_strdup(&l->arena, pkg->version);
	dst->release = kiln_arena_strdup(&l->arena, pkg->release);
	dst->arch = kiln_arena_strdup(&l->arena, pkg->arch);
	dst->repo = kiln_arena_strdup(&l->arena, pkg->repo);
	dst->location = kiln_arena_strdup(&l->arena, pkg->location);
	if (kiln_arena_finish(&l->arena, err))
		return err ? err->code : KILN_ENOMEM;
	l->n++;
	return KILN_OK;
}

static int pkg_cmp(const void *a, const void *b)
{
	const struct roots_lock_pkg *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	if (c)
		return c;
	if (x->epoch != y->epoch)
		return x->epoch < y->epoch ? -1 : 1;
	c = macro_vercmp(x->version, y->version);
	if (!c)
		c = macro_vercmp(x->release, y->release);
	if (!c)
		c = strcmp(x->arch, y->arch);
	return c;
}

kiln_rc roots_lock_finish(struct roots_lock *l, struct kiln_err *err)
{
	struct kiln_buf b = KILN_BUF_INIT(ROOTS_LOCK_MAX_BYTES);
	kiln_rc rc = KILN_OK;
	size_t i;

	if (l->n)
		qsort(l->pkgs, l->n, sizeof(*l->pkgs), pkg_cmp);
	for (i = 1; i < l->n; i++) {
		const struct roots_lock_pkg *a = &l->pkgs[i - 1], *c = &l->pkgs[i];

		if (!strcmp(a->name, c->name) && !strcmp(a->arch, c->arch))
			return kiln_err_set(
			    err, KILN_EINVAL, "the lock has %s.%s twice (%s-%s and %s-%s)", a->name,
			    a->arch, a->version, a->release, c->version, c->release);
	}
	roots_lock_write(l, &b);
	rc = kiln_buf_finish(&b, err);
	if (!rc)
		rc = util_digest_mem_hex(UTIL_DIGEST_SHA256, b.ptr, b.len, l->id, err);
	kiln_buf_release(&b);
	return rc;
}

/* ---- writing ----------------------------------------------------------------------------- */

static void kstr(struct kiln_buf *out, const char *key, const char *v, bool comma)
{
	kiln_buf_addf(out, "%s\"%s\":", comma ? "," : "", key);
	api_json_quote(out, v, strlen(v));
}

void roots_lock_write(const struct roots_lock *l, struct kiln_buf *out)
{
	size_t i;

	kiln_buf_addf(out, "{\"kiln_root_lock\":%d,", LOCK_FORMAT);
	kstr(out, "arch", l->arch ? l->arch : "", false);
	kiln_buf_addstr(out, ",\"packages\":[\n");
	for (i = 0; i < l->n; i++) {
		const struct roots_lock_pkg *p = &l->pkgs[i];

		kiln_buf_addch(out, '{');
		kstr(out, "name", p->name, false);
		kiln_buf_addf(out, ",\"epoch\":%" PRIu32, p->epoch);
		kstr(out, "version", p->version, true);
		kstr(out, "release", p->release, true);
		kstr(out, "arch", p->arch, true);
		kstr(out, "sha256", p->sha256, true);
		kstr(out, "repo", p->repo, true);
		kstr(out, "location", p->location, true);
		kiln_buf_addf(out, ",\"size\":%" PRIu64 "}%s\n", p->size, i + 1 < l->n ? "," : "");
	}
	kiln_buf_addstr(out, "]}\n");
}

void roots_lock_format_text(const struct roots_lock *l, struct kiln_buf *out)
{
	size_t i, wn = 7, we = 7, wa = 4;

	for (i = 0; i < l->n; i++) {
		const struct roots_lock_pkg *p = &l->pkgs[i];
		size_t e = strlen(p->version) + strlen(p->release) + 1 + (p->epoch ? 11 : 0);

		wn = strlen(p->name) > wn ? strlen(p->name) : wn;
		we = e > we ? e : we;
		wa = strlen(p->arch) > wa ? strlen(p->arch) : wa;
	}
	kiln_buf_addf(out, "%-*s  %-*s  %-*s  %s\n", (int)wn, "Package", (int)we, "Version",
	              (int)wa, "Arch", "Repository");
	for (i = 0; i < l->n; i++) {
		const struct roots_lock_pkg *p = &l->pkgs[i];
		char evr[LOCK_MAX_FIELD * 2 + 16];

		if (p->epoch)
			snprintf(evr, sizeof(evr), "%" PRIu32 ":%s-%s", p->epoch, p->version,
			         p->release);
		else
			snprintf(evr, sizeof(evr), "%s-%s", p->version, p->release);
		kiln_buf_addf(out, "%-*s  %-*s  %-*s  %s\n", (int)wn, p->name, (int)we, evr,
		              (int)wa, p->arch, p->repo);
	}
	kiln_buf_addf(out, "%zu packages for %s, lock sha256 %s\n", l->n, l->arch ? l->arch : "",
	              l->id);
}

/* ---- reading ----------------------------------------------------------------------------- */

struct lock_pkg_json {
	const char *name, *version, *release, *arch, *sha256, *repo, *location;
	int64_t epoch, size;
};

struct lock_json {
	int64_t format;
	const char *arch;
	struct api_objlist packages;
};

#define PF(n, t, req, min, max)                                                                    \
	{                                                                                          \
#n, t, req, offsetof(struct lock_pkg_json, n), min, max, NULL, 0, 0                \
	}

static const struct api_field pkg_fields[] = {
    PF(name, API_F_STR, true, 0, LOCK_MAX_FIELD),
    PF(epoch, API_F_INT, true, 0, UINT32_MAX),
    PF(version, API_F_STR, true, 0, LOCK_MAX_FIELD),
    PF(release, API_F_STR, true, 0, LOCK_MAX_FIELD),
    PF(arch, API_F_STR, true, 0, 64),
    PF(sha256, API_F_STR, true, 0, 64),
    PF(repo, API_F_STR, true, 0, 128),
    PF(location, API_F_STR, true, 0, KILN_LIMIT_PATH),
    PF(size, API_F_INT, false, 0, INT64_MAX),
    API_FIELD_END,
};

static const struct api_field lock_fields[] = {
    {"kiln_root_lock", API_F_INT, true, offsetof(struct lock_json, format), LOCK_FORMAT,
     LOCK_FORMAT, NULL, 0, 0},
    {"arch", API_F_STR, true, offsetof(struct lock_json, arch), 0, 64, NULL, 0, 0},
    {"packages", API_F_OBJLIST, true, offsetof(struct lock_json, packages), 0,
     ROOTS_LOCK_MAX_PACKAGES, pkg_fields, sizeof(struct lock_pkg_json), 0},
    API_FIELD_END,
};

/* rpm's NEVRA parts: printable, no whitespace; version and release without '-'. */
static bool word_ok(const char *s, bool dash_ok)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!isgraph((unsigned char)*s) || *s == '/' || (*s == '-' && !dash_ok))
			return false;
	return true;
}

static bool hex64_ok(const char *s)
{
	size_t i;

	for (i = 0; s[i]; i++)
		if (!isxdigit((unsigned char)s[i]) || isupper((unsigned char)s[i]))
			return false;
	return i == 64;
}

static kiln_rc pkg_check(const struct lock_pkg_json *j, size_t i, struct kiln_err *err)
{
	struct kiln_buf clean = KILN_BUF_INIT(KILN_LIMIT_PATH);
	struct kiln_err e = KILN_ERR_INIT;
	const char *bad = NULL;

	if (!word_ok(j->name, true))
		bad = "name";
	else if (!word_ok(j->version, false))
		bad = "version";
	else if (!word_ok(j->release, false))
		bad = "release";
	else if (!roots_name_ok(kiln_str_from(j->arch), "_"))
		bad = "arch";
	else if (!hex64_ok(j->sha256))
		bad = "sha256";
	else if (!roots_name_ok(kiln_str_from(j->repo), "-_.:"))
		bad = "repo";
	else if (strstr(j->location, "://") || j->location[0] == '/' ||
	         util_path_check_relative(j->location, strlen(j->location), &clean, &e))
		bad = "location";
	kiln_buf_release(&clean);
	if (bad)
		return kiln_err_set(err, KILN_EINVAL, "packages[%zu].%s: malformed value", i, bad);
	return KILN_OK;
}

kiln_rc roots_lock_from_mem(struct roots_lock *l, const char *name, const char *data, size_t len,
                            struct kiln_err *err)
{
	struct kiln_arena a = KILN_ARENA_INIT(4 * (size_t)ROOTS_LOCK_MAX_BYTES);
	struct lock_json j = {0};
	kiln_rc rc;
	size_t i;

	if (len > ROOTS_LOCK_MAX_BYTES) {
		rc = kiln_err_set(err, KILN_ELIMIT, "over %zu bytes", (size_t)ROOTS_LOCK_MAX_BYTES);
		goto out;
	}
	rc = api_json_decode(data, len, lock_fields, API_DECODE_STRICT, &j, &a, err);
	/* api/ names its input "body" (a request's); here it is the lock file, line and column
	 * kept. */
	if (rc && err)
		snprintf(err->input, sizeof(err->input), "%s", name);
	if (!rc && !roots_name_ok(kiln_str_from(j.arch), "_"))
		rc = kiln_err_set(err, KILN_EINVAL, "arch: malformed value");
	if (!rc)
		l->arch = kiln_arena_strdup(&l->arena, j.arch);
	for (i = 0; !rc && i < j.packages.n; i++) {
		const struct lock_pkg_json *pj = (const struct lock_pkg_json *)j.packages.v + i;
		struct roots_lock_pkg pkg = {
		    .name = pj->name,
		    .epoch = (uint32_t)pj->epoch,
		    .version = pj->version,
		    .release = pj->release,
		    .arch = pj->arch,
		    .repo = pj->repo,
		    .location = pj->location,
		    .size = (uint64_t)pj->size,
		};

		rc = pkg_check(pj, i, err);
		if (!rc) {
			memcpy(pkg.sha256, pj->sha256, 65);
			rc = roots_lock_add(l, &pkg, err);
		}
	}
	if (!rc)
		rc = kiln_arena_finish(&l->arena, err);
	if (!rc)
		rc = roots_lock_finish(l, err);
out:
	if (rc)
		kiln_err_locate(err, name, 0, 0);
	kiln_arena_release(&a);
	return rc;
}

kiln_rc roots_lock_read(struct roots_lock *l, const char *path, struct kiln_err *err)
{
	struct kiln_buf b = KILN_BUF_INIT(ROOTS_LOCK_MAX_BYTES);
	kiln_rc rc = util_read_file(path, ROOTS_LOCK_MAX_BYTES, &b, err);

	if (!rc)
		rc = roots_lock_from_mem(l, path, b.ptr, b.len, err);
	else
		kiln_err_locate(err, path, 0, 0);
	kiln_buf_release(&b);
	return rc;
}
