/*
 * autodeps.c - automatic dependencies of a package's files, as rpmbuild's internal
 * dependency generator makes them (worker.h section 2).
 *
 * rpm runs one generator program per file and parses what it prints with the parser it
 * uses for spec dependency tags. kiln keeps that shape: each generator (ELF, #! scripts,
 * pkgconfig) writes the text the real generator would print, and one parser turns text into
 * dependencies, so the odd cases (a soname with a blank, an env line with arguments, a .pc
 * version rpm refuses) come out as they do in rpm, errors included. Then come rpm's
 * filters: %__*_exclude_from on the file's path, %__*_exclude on the dependency, and the
 * rule that an unversioned require is dropped when the same file color requires the same
 * name with a version.
 */
#include "util/util.h"

#include <elf.h>
#include <fcntl.h>
#include <regex.h>
#include <sys/stat.h>
#include <unistd.h>

#include "worker/worker.h"
#include "worker/autodeps_int.h"

#define SENSE (RPMTAG_DEP_LESS | RPMTAG_DEP_GREATER | RPMTAG_DEP_EQUAL)
#define EXEC_BITS (S_IXUSR | S_IXGRP | S_IXOTH)

/* ---------------------------------------------------------------------------------------- */
/* Dependency sets */

static int dep_cmp(const struct worker_dep *a, const char *name, const char *version,
                   uint32_t flags)
{
	int c = strcmp(a->name, name);

	if (c)
		return c;
	if ((a->flags & SENSE) != (flags & SENSE))
		return (a->flags & SENSE) < (flags & SENSE) ? -1 : 1;
	return strcmp(a->version, version);
}

/* Where name/version/flags is or would go; *found when it is there. */
static size_t deps_pos(const struct worker_deps *d, const char *name, const char *version,
                       uint32_t flags, bool *found)
{
	size_t lo = 0;
	size_t hi = d->n;

	*found = false;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = dep_cmp(&d->v[mid], name, version, flags);

		if (!c) {
			*found = true;
			return mid;
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

void worker_deps_init(struct worker_deps *d)
{
	memset(d, 0, sizeof(*d));
	kiln_arena_init(&d->arena, KILN_LIMIT_ARENA);
}

kiln_rc worker_deps_add(struct worker_deps *d, const char *name, const char *version,
                        uint32_t flags, struct kiln_err *err)
{
	struct worker_dep *e;
	bool found;
	size_t at;

	if (!name || !*name)
		return kiln_err_set(err, KILN_EINVAL, "empty dependency name");
	version = version ? version : "";
	if (!d->arena.max && !d->arena.head)
		kiln_arena_init(&d->arena, KILN_LIMIT_ARENA);
	at = deps_pos(d, name, version, flags, &found);
	if (found)
		return KILN_OK;
	if (d->n == d->cap) {
		size_t cap = d->cap ? d->cap * 2 : 16;
		struct worker_dep *v = kiln_reallocarray(d->v, cap, sizeof(*v));

		if (!v)
			return kiln_err_set(err, KILN_ENOMEM, "out of memory");
		d->v = v;
		d->cap = cap;
	}
	e = &d->v[at];
	memmove(e + 1, e, (d->n - at) * sizeof(*e));
	e->name = kiln_arena_strdup(&d->arena, name);
	e->version = kiln_arena_strdup(&d->arena, version);
	e->flags = flags;
	d->n++;
	if (!e->name || !e->version) {
		memmove(e, e + 1, (d->n - at - 1) * sizeof(*e));
		d->n--;
		return kiln_arena_finish(&d->arena, err);
	}
	return KILN_OK;
}

ptrdiff_t worker_deps_find(const struct worker_deps *d, const char *name, const char *version,
                           uint32_t flags)
{
	bool found;
	size_t at = deps_pos(d, name, version ? version : "", flags, &found);

	return found ? (ptrdiff_t)at : -1;
}

void worker_deps_release(struct worker_deps *d)
{
	if (!d)
		return;
	free(d->v);
	kiln_arena_release(&d->arena);
	memset(d, 0, sizeof(*d));
}

static const char *sense_str(uint32_t flags)
{
	switch (flags & SENSE) {
	case RPMTAG_DEP_LESS:
		return "<";
	case RPMTAG_DEP_GREATER:
		return ">";
	case RPMTAG_DEP_EQUAL:
		return "=";
	case RPMTAG_DEP_LESS | RPMTAG_DEP_EQUAL:
		return "<=";
	case RPMTAG_DEP_GREATER | RPMTAG_DEP_EQUAL:
		return ">=";
	case RPMTAG_DEP_LESS | RPMTAG_DEP_GREATER:
		return "<>";
	default:
		return "<>=";
	}
}

static void dep_text(const char *name, const char *version, uint32_t flags, struct kiln_buf *out)
{
	kiln_buf_addstr(out, name);
	if (flags & SENSE)
		kiln_buf_addf(out, " %s %s", sense_str(flags), version);
}

void worker_dep_format(const struct worker_dep *dep, struct kiln_buf *out)
{
	dep_text(dep->name, dep->version, dep->flags, out);
}

/* ---------------------------------------------------------------------------------------- */
/* The collector's state */

enum kind { PROVIDES, REQUIRES, NKINDS };

/* A require of one file, kept until rpm's unversioned-versus-versioned rule has run. */
struct fdep {
	const char *name, *version; /* in the collector's arena */
	uint32_t flags, color;
};

struct excl {
	regex_t re;
	bool set;
};

struct ad {
	const struct worker_autodeps_opts *o;
	struct kiln_err *err;
	struct worker_deps *provides;
	bool on[NKINDS];
	struct excl exclude[NKINDS], from[NKINDS], global_from[NKINDS];
	struct excl elf_path, script_path, pc_path_excl, pc_path;
	bool terminate_bad_version;
	const struct pack_file **byname; /* heap: the files sorted by path */
	size_t n;
	struct fdep *fdeps; /* heap */
	size_t nfdeps, capfdeps;
	struct kiln_arena arena;
	uint32_t cur; /* the index of the file being read, for o->filedeps */
};

/* The macro's expansion (OUT: caller frees), "" when it is undefined. */
static kiln_rc macro_get(struct ad *ad, const char *name, char **out)
{
	char src[128];

	snprintf(src, sizeof(src), "%%{?%s}", name);
	return macro_expand_str(ad->o->macros, src, out, ad->err);
}

/* rpm's rpmExpandNumeric: y/Y is 1, n/N is 0, otherwise the leading number. */
static kiln_rc macro_num(struct ad *ad, const char *name, long dflt, long *out)
{
	char *s = NULL;
	kiln_rc rc = macro_get(ad, name, &s);
	struct kiln_str v;

	if (rc)
		return rc;
	v = kiln_str_trim(kiln_str_from(s));
	if (!v.len)
		*out = dflt;
	else if (*v.ptr == 'y' || *v.ptr == 'Y')
		*out = 1;
	else if (*v.ptr == 'n' || *v.ptr == 'N')
		*out = 0;
	else
		*out = strtol(v.ptr, NULL, 0);
	free(s);
	return KILN_OK;
}

/* Compile a regex the way rpm does (POSIX extended); an invalid one is ignored with rpm's
 * warning. */
static void excl_compile(struct ad *ad, struct excl *x, const char *pattern)
{
	if (!pattern || !*pattern)
		return;
	if (regcomp(&x->re, pattern, REG_EXTENDED | REG_NOSUB)) {
		macro_diag(ad->o->macros, KILN_LOG_WARN, "Ignoring invalid regex %s", pattern);
		return;
	}
	x->set = true;
}

static kiln_rc excl_macro(struct ad *ad, struct excl *x, const char *name)
{
	char *s = NULL;
	kiln_rc rc = macro_get(ad, name, &s);

	if (!rc)
		excl_compile(ad, x, s);
	free(s);
	return rc;
}

static bool excl_match(const struct excl *x, const char *s)
{
	return x->set && !regexec(&x->re, s, 0, NULL, 0);
}

static void excl_free(struct excl *x)
{
	if (x->set)
		regfree(&x->re);
	x->set = false;
}

/* A directory quoted for a POSIX extended regex. */
static void regex_quote(const char *s, struct kiln_buf *out)
{
	for (; *s; s++) {
		if (strchr(".[]()*+?{}|^$\\", *s))
			kiln_buf_addch(out, '\\');
		kiln_buf_addch(out, *s);
	}
}

/* pkgconfig.attr's path: %{_libdir} or %{_datadir} pkgconfig directories, or the tool. */
static kiln_rc pc_path_init(struct ad *ad)
{
	static const char *const dirs[] = {"_libdir", "_datadir", "_bindir"};
	struct kiln_buf re = KILN_BUF_INIT(KILN_LIMIT_LINE);
	char *d[3] = {NULL, NULL, NULL};
	kiln_rc rc = macro_get(ad, "__pkgconfig_path", &d[0]);
	size_t i;

	if (!rc && *d[0]) {
		excl_compile(ad, &ad->pc_path, d[0]);
		free(d[0]);
		return KILN_OK;
	}
	free(d[0]);
	d[0] = NULL;
	for (i = 0; i < 3 && !rc; i++)
		rc = macro_get(ad, dirs[i], &d[i]);
	if (!rc) {
		kiln_buf_addstr(&re, "^((");
		regex_quote(d[0], &re);
		kiln_buf_addch(&re, '|');
		regex_quote(d[1], &re);
		kiln_buf_addstr(&re, ")/pkgconfig/.*\\.pc|");
		regex_quote(d[2], &re);
		kiln_buf_addstr(&re, "/pkg-config)$");
		rc = kiln_buf_finish(&re, ad->err);
	}
	if (!rc)
		excl_compile(ad, &ad->pc_path, re.ptr);
	for (i = 0; i < 3; i++)
		free(d[i]);
	kiln_buf_release(&re);
	return rc;
}

static kiln_rc ad_regexes(struct ad *ad)
{
	static const char *const kname[NKINDS] = {"provides", "requires"};
	char name[64];
	long v = 1;
	kiln_rc rc = KILN_OK;
	int k;

	for (k = 0; k < NKINDS && !rc; k++) {
		snprintf(name, sizeof(name), "__%s_exclude", kname[k]);
		rc = excl_macro(ad, &ad->exclude[k], name);
		snprintf(name, sizeof(name), "__%s_exclude_from", kname[k]);
		if (!rc)
			rc = excl_macro(ad, &ad->from[k], name);
		snprintf(name, sizeof(name), "__global_%s_exclude_from", kname[k]);
		if (!rc)
			rc = excl_macro(ad, &ad->global_from[k], name);
	}
	if (!rc)
		rc = excl_macro(ad, &ad->elf_path, "__elf_exclude_path");
	if (!rc)
		rc = excl_macro(ad, &ad->script_path, "__script_exclude_path");
	if (!rc)
		rc = excl_macro(ad, &ad->pc_path_excl, "__pkgconfig_exclude_path");
	if (!rc)
		rc = pc_path_init(ad);
	if (!rc)
		rc = macro_num(ad, "_wrong_version_format_terminate_build", 1, &v);
	ad->terminate_bad_version = v != 0;
	return rc;
}

static void ad_release(struct ad *ad)
{
	int k;

	for (k = 0; k < NKINDS; k++) {
		excl_free(&ad->exclude[k]);
		excl_free(&ad->from[k]);
		excl_free(&ad->global_from[k]);
	}
	excl_free(&ad->elf_path);
	excl_free(&ad->script_path);
	excl_free(&ad->pc_path_excl);
	excl_free(&ad->pc_path);
	free(ad->byname);
	free(ad->fdeps);
	kiln_arena_release(&ad->arena);
}

/* ---------------------------------------------------------------------------------------- */
/* Per-file dependencies (FILEDEPENDSX/N, DEPENDSDICT) */

void worker_filedeps_init(struct worker_filedeps *fd)
{
	memset(fd, 0, sizeof(*fd));
	kiln_arena_init(&fd->arena, KILN_LIMIT_ARENA);
}

void worker_filedeps_release(struct worker_filedeps *fd)
{
	if (!fd)
		return;
	free(fd->deps);
	free(fd->file);
	free(fd->start);
	free(fd->count);
	kiln_arena_release(&fd->arena);
	memset(fd, 0, sizeof(*fd));
}

/* Record what the current file generated; non-zero when out of memory. */
static int filedep_add(struct ad *ad, enum kind k, const char *name, const char *evr,
                       uint32_t flags)
{
	struct worker_filedeps *fd = ad->o->filedeps;
	struct pack_filedep *d;

	if (fd->n == fd->cap) {
		size_t cap = fd->cap ? fd->cap * 2 : 32;
		struct pack_filedep *v = kiln_reallocarray(fd->deps, cap, sizeof(*v));
		uint32_t *f;

		if (!v)
			return -1;
		fd->deps = v;
		f = kiln_reallocarray(fd->file, cap, sizeof(*f));
		if (!f)
			return -1;
		fd->file = f;
		fd->cap = cap;
	}
	d = &fd->deps[fd->n];
	d->kind = k == PROVIDES ? PACK_DEP_PROVIDE : PACK_DEP_REQUIRE;
	d->name = kiln_arena_strdup(&fd->arena, name);
	d->version = kiln_arena_strdup(&fd->arena, evr);
	d->flags = flags;
	if (!d->name || !d->version)
		return -1;
	fd->file[fd->n++] = ad->cur;
	return 0;
}

/* Group the records by file: rpm sorts them (stably) versioned first, then by file. */
static kiln_rc filedeps_group(struct worker_filedeps *fd, size_t nfiles, struct kiln_err *err)
{
	struct pack_filedep *v = kiln_calloc(fd->n ? fd->n : 1, sizeof(*v));
	size_t *at = kiln_calloc(nfiles ? nfiles : 1, sizeof(*at));
	size_t i, pass, sum = 0;

	fd->start = kiln_calloc(nfiles ? nfiles : 1, sizeof(*fd->start));
	fd->count = kiln_calloc(nfiles ? nfiles : 1, sizeof(*fd->count));
	fd->nfiles = nfiles;
	if (!v || !at || !fd->start || !fd->count) {
		free(v);
		free(at);
		return kiln_err_set(err, KILN_ENOMEM, "out of memory");
	}
	for (i = 0; i < fd->n; i++)
		fd->count[fd->file[i]]++;
	for (i = 0; i < nfiles; i++) {
		fd->start[i] = at[i] = sum;
		sum += fd->count[i];
	}
	for (pass = 0; pass < 2; pass++) {
		for (i = 0; i < fd->n; i++) {
			bool versioned = fd->deps[i].flags & SENSE;

			if (versioned == (pass == 0))
				v[at[fd->file[i]]++] = fd->deps[i];
		}
	}
	free(fd->deps);
	fd->deps = v;
	free(at);
	return KILN_OK;
}

/* ---------------------------------------------------------------------------------------- */
/* One generated dependency: the exclude regex, then the package set (provides) or the
 * file requires that wait for the versioned/unversioned rule. */

static kiln_rc dep_found(struct ad *ad, enum kind k, const char *name, const char *evr,
                         uint32_t flags, uint32_t color)
{
	struct kiln_buf t = KILN_BUF_INIT(KILN_LIMIT_LINE * 2);
	bool skip;
	struct fdep *f;

	dep_text(name, evr, flags, &t);
	skip = excl_match(&ad->exclude[k], t.ptr);
	kiln_buf_release(&t);
	if (skip)
		return KILN_OK;
	if (ad->o->filedeps && filedep_add(ad, k, name, evr, flags))
		return kiln_err_set(ad->err, KILN_ENOMEM, "out of memory");
	if (k == PROVIDES)
		return worker_deps_add(ad->provides, name, evr, flags, ad->err);
	if (ad->nfdeps == ad->capfdeps) {
		size_t cap = ad->capfdeps ? ad->capfdeps * 2 : 64;
		struct fdep *v = kiln_reallocarray(ad->fdeps, cap, sizeof(*v));

		if (!v)
			return kiln_err_set(ad->err, KILN_ENOMEM, "out of memory");
		ad->fdeps = v;
		ad->capfdeps = cap;
	}
	f = &ad->fdeps[ad->nfdeps];
	f->name = kiln_arena_strdup(&ad->arena, name);
	f->version = kiln_arena_strdup(&ad->arena, evr);
	f->flags = flags;
	f->color = color;
	if (!f->name || !f->version)
		return kiln_arena_finish(&ad->arena, ad->err);
	ad->nfdeps++;
	return KILN_OK;
}

/* ---------------------------------------------------------------------------------------- */
/* ELF: what elfdeps --provides / --requires prints */

/* elfdeps' soname sanity filter: lib*, ld.*, ld-*, ld64.*, ld64-* holding ".so". */
static bool soname_ok(const char *s)
{
	static const char *const keep[] = {"lib", "ld.", "ld-", "ld64.", "ld64-"};
	size_t i;

	if (!*s || strspn(s, " \t\n\r\f\v") == strlen(s) || !strstr(s, ".so"))
		return false;
	for (i = 0; i < KILN_ARRAY_SIZE(keep); i++) {
		if (!strncmp(s, keep[i], strlen(keep[i])))
			return true;
	}
	return false;
}

static void so_dep(struct kiln_buf *out, const char *soname, const char *ver, const char *marker)
{
	if (!soname_ok(soname))
		return;
	if (!*ver && !*marker)
		kiln_buf_addf(out, "%s\n", soname);
	else
		kiln_buf_addf(out, "%s(%s)%s\n", soname, ver, marker);
}

static void elf_provides(const struct worker_elf *e, const char *path, const char *marker,
                         struct kiln_buf *out)
{
	const char *soname = NULL;
	uint32_t section = 0;
	size_t i;

	/* Version definitions: the base entry names the file; it is forgotten at the start of
	 * each version definition section. */
	for (i = 0; i < e->nverdefs; i++) {
		const struct worker_elf_verdef *d = &e->verdefs[i];

		if (d->section != section)
			soname = NULL;
		section = d->section;
		if (d->flags & VER_FLG_BASE) {
			if (d->nnames)
				soname = d->names[d->nnames - 1];
		} else if (soname && d->nnames) {
			so_dep(out, soname, d->names[0], marker);
		}
	}
	/* A library's soname, or its file name; DT_DEBUG marks an executable (a PIE). */
	if (e->type == ET_DYN && !(e->flags & WORKER_ELF_DEBUG))
		so_dep(out, e->soname ? e->soname : util_path_basename(path), "", marker);
}

static void elf_requires(const struct worker_elf *e, bool exec, const char *marker,
                         struct kiln_buf *out)
{
	size_t i;

	/* A file that can be run but is not executable here gets no requires. */
	if ((e->flags & WORKER_ELF_INTERP) && !exec)
		return;
	/* elfdeps prints in section order: .gnu.version_r comes before .dynamic. The order
	 * shows only in the per-file dependencies (DEPENDSDICT). */
	for (i = 0; i < e->nverneeds; i++)
		so_dep(out, e->verneeds[i].file, e->verneeds[i].name, marker);
	for (i = 0; i < e->nneeded; i++)
		so_dep(out, e->needed[i], "", marker);
	if ((e->flags & WORKER_ELF_GNU_HASH) && !(e->flags & WORKER_ELF_HASH))
		kiln_buf_addstr(out, "rtld(GNU_HASH)\n");
}

/* ---------------------------------------------------------------------------------------- */
/* Per file */

struct file {
	const struct pack_file *f;
	int fd;
	mode_t disk_mode; /* the buildroot file's mode, as rpm stats it */
	uint32_t color;
	unsigned char head[64];
	size_t nhead;
};

static bool path_excluded(const struct ad *ad, enum kind k, const char *path)
{
	return excl_match(&ad->from[k], path) || excl_match(&ad->global_from[k], path);
}

struct gen {
	struct ad *ad;
	enum kind kind;
	uint32_t color;
};

static kiln_rc gen_dep(void *data, const char *name, const char *evr, uint32_t flags,
                       struct kiln_err *err)
{
	const struct gen *g = data;

	(void)err;
	return dep_found(g->ad, g->kind, name, evr, flags, g->color);
}

/* Feed one generator's text for kind k unless the file's path is excluded for it. */
static kiln_rc gen_run(struct ad *ad, const struct file *fl, enum kind k, struct kiln_buf *text)
{
	struct gen g = {ad, k, fl->color};
	struct worker_depline p = {fl->f->path,   k == PROVIDES, ad->terminate_bad_version,
	                           ad->o->macros, gen_dep,       &g};
	kiln_rc rc = kiln_buf_finish(text, ad->err);

	if (!rc && ad->on[k] && !path_excluded(ad, k, fl->f->path))
		rc = worker_depline_parse(&p, text->ptr, text->len, ad->err);
	kiln_buf_reset(text);
	return rc;
}

static kiln_rc elf_file(struct ad *ad, const struct file *fl)
{
	struct kiln_buf text = KILN_BUF_INIT(KILN_LIMIT_ELF_READ);
	struct kiln_err perr = KILN_ERR_INIT;
	struct worker_elf e;
	const char *marker;
	kiln_rc rc;

	if (worker_elf_read_fd(fl->fd, fl->f->path, &e, &perr)) {
		if (perr.code == KILN_ENOMEM || perr.code == KILN_EIO) {
			kiln_err_merge(ad->err, &perr);
			return perr.code;
		}
		macro_diag(ad->o->macros, KILN_LOG_WARN, "%s; no dependencies generated for it",
		           perr.msg);
		return KILN_OK;
	}
	if (e.type != ET_EXEC && e.type != ET_DYN) {
		worker_elf_release(&e);
		return KILN_OK;
	}
	marker = e.elfclass == ELFCLASS64 && e.machine != EM_ALPHA && e.machine != EM_FAKE_ALPHA
	             ? "(64bit)"
	             : "";
	elf_provides(&e, fl->f->path, marker, &text);
	rc = gen_run(ad, fl, PROVIDES, &text);
	if (!rc) {
		elf_requires(&e, fl->disk_mode & EXEC_BITS, marker, &text);
		rc = gen_run(ad, fl, REQUIRES, &text);
	}
	kiln_buf_release(&text);
	worker_elf_release(&e);
	return rc;
}

static size_t span_space(const char *s, const char *end)
{
	const char *p = s;

	while (p < end && strchr(" \t\v\f\r", *p))
		p++;
	return (size_t)(p - s);
}

static size_t span_word(const char *s, const char *end)
{
	const char *p = s;

	while (p < end && !strchr(" \t\v\f\r", *p))
		p++;
	return (size_t)(p - s);
}

/* script.req's two sed expressions on the first line: "#!", blanks, "/path": prints /path;
 * "#!", blanks, a word ending in /bin/env, blanks, "/path": prints /path and the rest of the
 * line after it. */
static void script_req(const char *line, size_t len, struct kiln_buf *out)
{
	const char *nul = memchr(line, '\0', len);
	const char *end = nul ? nul : line + len;
	const char *p = line + 2;
	size_t w;

	p += span_space(p, end);
	w = span_word(p, end);
	if (w > 1 && *p == '/') {
		kiln_buf_add(out, p, w);
		kiln_buf_addch(out, '\n');
	}
	if (w < 8 || memcmp(p + w - 8, "/bin/env", 8))
		return;
	p += w;
	w = span_space(p, end);
	if (!w)
		return;
	p += w;
	if (span_word(p, end) > 1 && *p == '/') {
		kiln_buf_add(out, p, (size_t)(end - p));
		kiln_buf_addch(out, '\n');
	}
}

static kiln_rc script_file(struct ad *ad, const struct file *fl)
{
	struct kiln_buf text = KILN_BUF_INIT(KILN_LIMIT_LINE * 2);
	char *line = kiln_malloc(KILN_LIMIT_LINE);
	size_t got = 0;
	kiln_rc rc;
	char *nl;

	if (!line)
		return kiln_err_set(ad->err, KILN_ENOMEM, "out of memory");
	/* The first line; a longer one is cut at KILN_LIMIT_LINE bytes. */
	rc = lseek(fl->fd, 0, SEEK_SET) < 0
	         ? kiln_err_sys(ad->err, KILN_EIO, "%s: cannot seek", fl->f->src)
	         : util_read_full(fl->fd, line, KILN_LIMIT_LINE, &got, ad->err);
	if (!rc) {
		nl = memchr(line, '\n', got);
		script_req(line, nl ? (size_t)(nl - line) : got, &text);
		rc = gen_run(ad, fl, REQUIRES, &text);
	}
	free(line);
	kiln_buf_release(&text);
	return rc;
}

/* ---------------------------------------------------------------------------------------- */
/* pkgconfig */

static int byname_cmp(const void *a, const void *b)
{
	return strcmp((*(const struct pack_file *const *)a)->path,
	              (*(const struct pack_file *const *)b)->path);
}

static const struct pack_file *file_lookup(const struct ad *ad, const char *path)
{
	struct pack_file key = {.path = path};
	const struct pack_file *kp = &key;
	const struct pack_file *const *hit =
	    bsearch(&kp, ad->byname, ad->n, sizeof(*ad->byname), byname_cmp);

	return hit ? *hit : NULL;
}

/* Where a symlink in the package points, as an absolute path. */
static kiln_rc link_target(const struct pack_file *f, struct kiln_buf *out, struct kiln_err *err)
{
	struct kiln_buf p = KILN_BUF_INIT(KILN_LIMIT_PATH * 2);
	kiln_rc rc;

	if (f->link[0] != '/') {
		util_path_dirname(f->path, &p);
		kiln_buf_addch(&p, '/');
	}
	kiln_buf_addstr(&p, f->link);
	rc = kiln_buf_finish(&p, err);
	if (!rc)
		rc = util_path_normalize(p.ptr, out, err);
	kiln_buf_release(&p);
	return rc;
}

/* Follow a symlink inside the package's file list (rpm follows it in the buildroot): the
 * regular file it ends at, or NULL. */
static const struct pack_file *link_follow(const struct ad *ad, const struct pack_file *f)
{
	int hops;

	for (hops = 0; f && S_ISLNK(f->mode) && hops < 16; hops++) {
		struct kiln_buf to = KILN_BUF_INIT(KILN_LIMIT_PATH);
		struct kiln_err e = KILN_ERR_INIT;

		if (!f->link || !*f->link || link_target(f, &to, &e))
			f = NULL;
		else
			f = file_lookup(ad, to.ptr);
		kiln_buf_release(&to);
	}
	return f && S_ISREG(f->mode) && f->src ? f : NULL;
}

static kiln_rc pc_text(struct ad *ad, const struct pack_file *f, const struct pack_file *target,
                       struct kiln_buf *pc)
{
	kiln_rc rc = util_read_file(target->src, KILN_LIMIT_PC_FILE, pc, ad->err);

	if (rc == KILN_ELIMIT)
		kiln_err_wrap(ad->err, "%s", f->path);
	return rc;
}

static kiln_rc pc_list(struct ad *ad, const struct file *fl, const struct kiln_buf *pc,
                       const char *id, const char *dir, enum kind k)
{
	struct kiln_buf out = KILN_BUF_INIT(KILN_LIMIT_PC_FILE * 4);
	struct kiln_buf text = KILN_BUF_INIT(KILN_LIMIT_PC_FILE * 8);
	bool loaded = false;
	kiln_rc rc;

	/* pkgconfigdeps.sh names pkg-config as a requirement of every .pc file. */
	if (k == REQUIRES)
		kiln_buf_addstr(&text, "/usr/bin/pkg-config\n");
	rc = worker_pc_print(pc->ptr, pc->len, id, dir,
	                     k == PROVIDES ? WORKER_PC_PROVIDES : WORKER_PC_REQUIRES, &out, &loaded,
	                     ad->err);
	if (!rc) {
		worker_pc_rpm_lines(out.ptr, out.len, &text);
		rc = gen_run(ad, fl, k, &text);
	}
	kiln_buf_release(&out);
	kiln_buf_release(&text);
	return rc;
}

/* ${pcfiledir}: the directory of the .pc file's buildroot path. For a symlink that is the
 * link's directory; the buildroot is what the target's src has in front of its path. */
static void pc_dir(const struct pack_file *f, const struct pack_file *target, struct kiln_buf *dir)
{
	size_t sl, pl;

	if (!target) {
		util_path_dirname(f->path, dir);
		return;
	}
	sl = strlen(target->src);
	pl = strlen(target->path);
	if (f != target && sl > pl && !strcmp(target->src + sl - pl, target->path)) {
		struct kiln_buf d = KILN_BUF_INIT(KILN_LIMIT_PATH);

		util_path_dirname(f->path, &d);
		kiln_buf_add(dir, target->src, sl - pl);
		kiln_buf_addstr(dir, d.ptr);
		kiln_buf_release(&d);
		return;
	}
	util_path_dirname(target->src, dir);
}

static kiln_rc pc_file(struct ad *ad, const struct pack_file *f)
{
	const struct pack_file *target = link_follow(ad, f);
	struct kiln_buf pc = KILN_BUF_INIT(KILN_LIMIT_PC_FILE);
	struct kiln_buf dir = KILN_BUF_INIT(KILN_LIMIT_PATH);
	struct file fl = {.f = f, .fd = -1};
	const char *base = util_path_basename(f->path);
	char *id = kiln_strndup(base, strlen(base) - 3);
	kiln_rc rc = id ? KILN_OK : kiln_err_set(ad->err, KILN_ENOMEM, "out of memory");

	/* pkg-config is given the file's path in the buildroot: its name is the module, its
	 * directory ${pcfiledir}. A file that does not resolve still needs pkg-config. */
	pc_dir(f, target, &dir);
	if (!rc && target)
		rc = pc_text(ad, f, target, &pc);
	if (!rc && target)
		rc = pc_list(ad, &fl, &pc, id, dir.ptr, PROVIDES);
	if (!rc)
		rc = pc_list(ad, &fl, &pc, id, dir.ptr, REQUIRES);
	free(id);
	kiln_buf_release(&pc);
	kiln_buf_release(&dir);
	return rc;
}

static bool pc_candidate(const struct ad *ad, const struct pack_file *f)
{
	size_t len = strlen(f->path);

	return (S_ISREG(f->mode) || S_ISLNK(f->mode)) && !(f->flags & RPMTAG_FILE_GHOST) &&
	       len > 3 && !strcmp(f->path + len - 3, ".pc") && excl_match(&ad->pc_path, f->path) &&
	       !excl_match(&ad->pc_path_excl, f->path);
}

/* ---------------------------------------------------------------------------------------- */
/* Content-based generators: open the file once, look at its first bytes. */

static bool is_dev_path(const char *path)
{
	return !strncmp(path, "/dev/", 5);
}

static kiln_rc file_open(struct ad *ad, struct file *fl)
{
	struct stat st;

	fl->fd = open(fl->f->src, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fl->fd < 0)
		return kiln_err_sys(ad->err, KILN_EIO, "%s: cannot open %s", fl->f->path,
		                    fl->f->src);
	if (fstat(fl->fd, &st) < 0)
		return kiln_err_sys(ad->err, KILN_EIO, "%s: cannot stat %s", fl->f->path,
		                    fl->f->src);
	fl->disk_mode = S_ISREG(st.st_mode) ? st.st_mode : 0;
	if (!fl->disk_mode)
		return KILN_OK;
	return util_read_full(fl->fd, fl->head, sizeof(fl->head), &fl->nhead, ad->err);
}

static kiln_rc content_file(struct ad *ad, const struct pack_file *f)
{
	struct file fl = {.f = f, .fd = -1};
	kiln_rc rc;

	if (!S_ISREG(f->mode) || !f->src || (f->flags & RPMTAG_FILE_GHOST) || is_dev_path(f->path))
		return KILN_OK;
	rc = file_open(ad, &fl);
	fl.color = worker_elf_color_head(fl.head, fl.nhead, f->mode);
	if (!rc && fl.disk_mode && worker_elf_magic(fl.head, fl.nhead) &&
	    !excl_match(&ad->elf_path, f->path))
		rc = elf_file(ad, &fl);
	else if (!rc && fl.disk_mode & EXEC_BITS && fl.nhead >= 2 && !memcmp(fl.head, "#!", 2) &&
	         !excl_match(&ad->script_path, f->path))
		rc = script_file(ad, &fl);
	util_close(fl.fd);
	return rc;
}

/* ---------------------------------------------------------------------------------------- */
/* Package-level dependencies: config() and user()/group() */

static kiln_rc owner_deps(struct ad *ad, const struct pack_file *files, size_t n,
                          struct worker_deps *requires, struct worker_deps *recommends)
{
	const uint32_t flags = RPMTAG_DEP_SCRIPT_PRE | RPMTAG_DEP_SCRIPT_POSTUN;
	struct worker_deps *to = requires;
	long weak = 0;
	kiln_rc rc = macro_num(ad, "_use_weak_usergroup_deps", 0, &weak);
	char dep[KILN_LIMIT_LINE];
	size_t i;

	if (weak)
		to = recommends;
	for (i = 0; i < n && !rc && to; i++) {
		const char *who[2] = {files[i].user, files[i].group};
		int k;

		for (k = 0; k < 2 && !rc; k++) {
			if (!who[k] || !strcmp(who[k], "root"))
				continue;
			snprintf(dep, sizeof(dep), "%s(%s)", k ? "group" : "user", who[k]);
			rc = worker_deps_add(to, dep, "", flags, ad->err);
		}
	}
	return rc;
}

static kiln_rc config_deps(struct ad *ad, const struct pack_file *files, size_t n,
                           struct worker_deps *requires)
{
	const uint32_t flags = RPMTAG_DEP_EQUAL | RPMTAG_DEP_CONFIG;
	char dep[KILN_LIMIT_LINE];
	size_t i;
	kiln_rc rc = KILN_OK;

	for (i = 0; i < n && !(files[i].flags & RPMTAG_FILE_CONFIG); i++)
		;
	if (i == n || !ad->o->name)
		return KILN_OK;
	snprintf(dep, sizeof(dep), "config(%s)", ad->o->name);
	if (ad->on[PROVIDES])
		rc = worker_deps_add(ad->provides, dep, ad->o->evr ? ad->o->evr : "", flags,
		                     ad->err);
	/* rpm 4.19 and later also require it, so that a package's %config files come from
	 * one version (4.18 only provides it). */
	if (!rc && ad->on[REQUIRES])
		rc = worker_deps_add(requires, dep, ad->o->evr ? ad->o->evr : "", flags, ad->err);
	return rc;
}

/* ---------------------------------------------------------------------------------------- */

static int fdep_cmp(const void *a, const void *b)
{
	const struct fdep *x = a;
	const struct fdep *y = b;
	int c = strcmp(x->name, y->name);

	if (c)
		return c;
	if (x->color != y->color)
		return x->color < y->color ? -1 : 1;
	/* versioned ones first */
	return (int)!(x->flags & SENSE) - (int)!(y->flags & SENSE);
}

/* rpm drops a file's unversioned require when a file of the same color requires the same
 * name with a version (rpmfcNormalizeFDeps). */
static kiln_rc requires_flush(struct ad *ad, struct worker_deps *requires)
{
	size_t i;
	bool versioned = false;
	kiln_rc rc = KILN_OK;

	if (ad->nfdeps)
		qsort(ad->fdeps, ad->nfdeps, sizeof(*ad->fdeps), fdep_cmp);
	for (i = 0; i < ad->nfdeps && !rc; i++) {
		const struct fdep *f = &ad->fdeps[i];

		if (!i || strcmp(f->name, f[-1].name) || f->color != f[-1].color)
			versioned = f->flags & SENSE;
		if (!(f->flags & SENSE) && versioned)
			continue;
		rc = worker_deps_add(requires, f->name, f->version, f->flags, ad->err);
	}
	return rc;
}

static kiln_rc ad_init(struct ad *ad, const struct pack_file *files, size_t n)
{
	size_t i;

	ad->byname = kiln_calloc(n ? n : 1, sizeof(*ad->byname));
	if (!ad->byname)
		return kiln_err_set(ad->err, KILN_ENOMEM, "out of memory");
	for (i = 0; i < n; i++)
		ad->byname[i] = &files[i];
	qsort(ad->byname, n, sizeof(*ad->byname), byname_cmp);
	ad->n = n;
	kiln_arena_init(&ad->arena, KILN_LIMIT_ARENA);
	return ad_regexes(ad);
}

kiln_rc worker_autodeps_collect(const struct pack_file *files, size_t n,
                                const struct worker_autodeps_opts *opts,
                                struct worker_deps *provides, struct worker_deps *requires,
                                struct worker_deps *recommends, struct kiln_err *err)
{
	struct ad ad;
	size_t i;
	kiln_rc rc;

	if (!opts || !opts->macros || !provides || !requires)
		return kiln_err_set(err, KILN_EINVAL, "worker_autodeps_collect: missing argument");
	memset(&ad, 0, sizeof(ad));
	ad.o = opts;
	ad.err = err;
	ad.provides = provides;
	ad.on[PROVIDES] = opts->autoprov;
	ad.on[REQUIRES] = opts->autoreq;
	rc = ad_init(&ad, files, n);
	for (i = 0; i < n && !rc && (ad.on[PROVIDES] || ad.on[REQUIRES]); i++) {
		ad.cur = (uint32_t)i;
		rc = content_file(&ad, &files[i]);
		if (!rc && pc_candidate(&ad, &files[i]))
			rc = pc_file(&ad, &files[i]);
	}
	if (!rc && opts->filedeps)
		rc = filedeps_group(opts->filedeps, n, err);
	if (!rc)
		rc = requires_flush(&ad, requires);
	if (!rc)
		rc = config_deps(&ad, files, n, requires);
	if (!rc && ad.on[REQUIRES])
		rc = owner_deps(&ad, files, n, requires, recommends);
	ad_release(&ad);
	return rc;
}
