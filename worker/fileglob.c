/*
 * fileglob.c - the paths %files names: GNU glob braces, rpm's rpmIsGlob, and globs matched
 * component by component beneath the buildroot's descriptor, never leaving it.
 */
#include "util/util.h"

#include <dirent.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <sys/stat.h>
#include <unistd.h>

#include "macro/macro.h"
#include "spec/spec.h"
#include "pack/pack.h"
#include "worker/worker.h"
#include "worker/filelist_int.h"

/* ---------------------------------------------------------------------------------------- */
/* String lists, paths */

kiln_rc worker_strv_add(struct worker_strv *sv, struct kiln_arena *a, const char *s,
                        struct kiln_err *err)
{
	if (!kiln_arena_strv_add(a, &sv->v, &sv->n, &sv->cap, s))
		return kiln_arena_finish(a, err);
	return KILN_OK;
}

int worker_str_cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

bool worker_path_clean(const char *path, bool keep_slash, struct kiln_buf *out)
{
	const char *p = path;
	size_t len = strlen(path);
	bool slash = len > 1 && path[len - 1] == '/';

	kiln_buf_reset(out);
	while (*p) {
		size_t n;

		while (*p == '/')
			p++;
		n = strcspn(p, "/");
		if (!n)
			break;
		if (n == 2 && p[0] == '.' && p[1] == '.') {
			char *last;

			if (!out->len)
				return false;
			last = strrchr(out->ptr, '/');
			kiln_buf_truncate(out, (size_t)(last - out->ptr));
		} else if (!(n == 1 && p[0] == '.')) {
			kiln_buf_addch(out, '/');
			kiln_buf_add(out, p, n);
		}
		p += n;
	}
	if (!out->len)
		kiln_buf_addch(out, '/');
	else if (slash && keep_slash)
		kiln_buf_addch(out, '/');
	return !out->err;
}

/* ---------------------------------------------------------------------------------------- */
/* Globs: brace expansion, then a component-wise walk beneath a directory descriptor. */

/* The "}" closing the "{" at p, with the position of its first top-level comma. */
static const char *brace_close(const char *p, const char **comma)
{
	int depth = 0;

	*comma = NULL;
	for (; *p; p++) {
		if (*p == '\\' && p[1]) {
			p++;
		} else if (*p == '{') {
			depth++;
		} else if (*p == '}') {
			if (--depth == 0)
				return p;
		} else if (*p == ',' && depth == 1 && !*comma) {
			*comma = p;
		}
	}
	return NULL;
}

static const char *brace_open(const char *p)
{
	for (; *p; p++) {
		if (*p == '\\' && p[1])
			p++;
		else if (*p == '{')
			return p;
	}
	return NULL;
}

static kiln_rc braces_rec(const char *pat, int depth, struct kiln_arena *a, struct worker_strv *out,
                          struct kiln_err *err)
{
	const char *open = brace_open(pat);
	const char *comma, *close, *alt;
	kiln_rc rc = KILN_OK;

	if (depth > KILN_LIMIT_MACRO_DEPTH)
		return kiln_err_set(err, KILN_ELIMIT, "glob braces nest too deep: %s", pat);
	close = open ? brace_close(open, &comma) : NULL;
	if (!close) {
		char *s = kiln_arena_strdup(a, pat);

		return s ? worker_strv_add(out, a, s, err) : kiln_arena_finish(a, err);
	}
	for (alt = open + 1; !rc && alt <= close;) {
		const char *end = alt;
		int d = 0;
		char *s;

		for (; end < close && !(*end == ',' && d == 0); end++) {
			if (*end == '\\' && end + 1 < close)
				end++;
			else if (*end == '{')
				d++;
			else if (*end == '}')
				d--;
		}
		s = kiln_arena_printf(a, "%.*s%.*s%s", (int)(open - pat), pat, (int)(end - alt),
		                      alt, close + 1);
		rc = s ? braces_rec(s, depth + 1, a, out, err) : kiln_arena_finish(a, err);
		alt = end + 1;
	}
	return rc;
}

kiln_rc worker_glob_braces(const char *pat, struct kiln_arena *a, struct worker_strv *out,
                           struct kiln_err *err)
{
	return braces_rec(pat, 0, a, out, err);
}

static bool comp_is_magic(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (s[i] == '\\' && i + 1 < n)
			i++;
		else if (s[i] == '*' || s[i] == '?' || s[i] == '[')
			return true;
	}
	return false;
}

bool worker_glob_is_magic(const char *pat)
{
	const char *open, *comma;

	if (strpbrk(pat, "*?["))
		return true;
	for (open = brace_open(pat); open; open = brace_open(open + 1)) {
		if (brace_close(open, &comma) && comma)
			return true;
	}
	return false;
}

void worker_fl_unescape(const char *s, size_t n, struct kiln_buf *out)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (s[i] == '\\' && i + 1 < n)
			i++;
		kiln_buf_addch(out, s[i]);
	}
}

struct gwalk {
	int rootfd;
	struct kiln_arena *a;
	struct worker_strv *out;
	bool only_dir;
	struct kiln_err *err;
};

static bool is_dir_at(int dfd, const char *name)
{
	struct stat st;

	return fstatat(dfd, name, &st, 0) == 0 && S_ISDIR(st.st_mode);
}

static kiln_rc gwalk_rec(struct gwalk *g, struct kiln_buf *prefix, const char *rest);

/* The component [c, c+n) holds glob characters: match it against the directory's names. */
static kiln_rc gwalk_magic(struct gwalk *g, struct kiln_buf *prefix, const char *c, size_t n)
{
	char pat[NAME_MAX * 4 + 1];
	const char *rest = c[n] ? c + n + 1 : NULL;
	struct kiln_err e2 = KILN_ERR_INIT;
	struct dirent *de;
	size_t keep = prefix->len;
	kiln_rc rc = KILN_OK;
	DIR *d;
	int fd;

	if (n >= sizeof(pat))
		return KILN_OK; /* no name can match */
	memcpy(pat, c, n);
	pat[n] = '\0';
	if (util_path_open_beneath(g->rootfd, prefix->len ? prefix->ptr + 1 : ".",
	                           O_RDONLY | O_DIRECTORY, 0, 0, &fd, &e2))
		return e2.code == KILN_EPRIV ? (kiln_err_merge(g->err, &e2), KILN_EPRIV) : KILN_OK;
	d = fdopendir(fd);
	if (!d) {
		util_close(fd);
		return KILN_OK;
	}
	while (!rc && (de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (fnmatch(pat, de->d_name, FNM_PERIOD))
			continue;
		if ((rest || g->only_dir) && !is_dir_at(dirfd(d), de->d_name))
			continue;
		kiln_buf_addch(prefix, '/');
		kiln_buf_addstr(prefix, de->d_name);
		rc = gwalk_rec(g, prefix, rest);
		kiln_buf_truncate(prefix, keep);
	}
	closedir(d);
	return rc;
}

/* prefix: the absolute path matched so far ("" for "/"); rest: what is left, or NULL. */
static kiln_rc gwalk_rec(struct gwalk *g, struct kiln_buf *prefix, const char *rest)
{
	size_t keep = prefix->len;
	struct stat st;
	kiln_rc rc;
	size_t n;

	if (prefix->err)
		return kiln_err_set(g->err, KILN_ENOMEM, "out of memory");
	while (rest && *rest == '/')
		rest++;
	if (!rest || !*rest) {
		char *s;

		if (!prefix->len)
			return KILN_OK;
		if (fstatat(g->rootfd, prefix->ptr + 1, &st, AT_SYMLINK_NOFOLLOW))
			return KILN_OK;
		s = kiln_arena_printf(g->a, "%s%s", prefix->ptr, g->only_dir ? "/" : "");
		return s ? worker_strv_add(g->out, g->a, s, g->err)
		         : kiln_arena_finish(g->a, g->err);
	}
	n = strcspn(rest, "/");
	if (comp_is_magic(rest, n))
		return gwalk_magic(g, prefix, rest, n);
	kiln_buf_addch(prefix, '/');
	worker_fl_unescape(rest, n, prefix);
	rc = gwalk_rec(g, prefix, rest[n] ? rest + n + 1 : NULL);
	kiln_buf_truncate(prefix, keep);
	return rc;
}

kiln_rc worker_glob_in_root(int rootfd, const char *pat, struct kiln_arena *a,
                            struct worker_strv *out, struct kiln_err *err)
{
	struct worker_strv alts = {0};
	struct kiln_buf prefix = KILN_BUF_INIT(KILN_LIMIT_PATH * 2);
	size_t first = out->n, i;
	kiln_rc rc = worker_glob_braces(pat, a, &alts, err);
	struct gwalk g = {.rootfd = rootfd, .a = a, .out = out, .err = err};

	for (i = 0; !rc && i < alts.n; i++) {
		size_t len = strlen(alts.v[i]);

		g.only_dir = len > 1 && alts.v[i][len - 1] == '/';
		kiln_buf_reset(&prefix);
		rc = gwalk_rec(&g, &prefix, alts.v[i]);
	}
	kiln_buf_release(&prefix);
	if (!rc && out->n - first > KILN_LIMIT_PACKAGE_FILES)
		rc = kiln_err_set(err, KILN_ELIMIT, "%s: more than %d matches", pat,
		                  (int)KILN_LIMIT_PACKAGE_FILES);
	if (!rc && out->n > first)
		qsort(out->v + first, out->n - first, sizeof(*out->v), worker_str_cmp);
	return rc;
}
