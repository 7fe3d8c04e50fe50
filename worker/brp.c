/*
 * brp.c - the post-install policy (%{__os_install_post}) in process.
 *
 * %install ends with %{__spec_install_post}: kiln's brp scripts (configs/brp-*), each
 * on a line of its own, and whatever else a spec or a distribution's macros put there.
 * The scripts look at every file of the buildroot with a process or two per file (od,
 * readelf), which for a package of many small files is most of the build. Here kiln
 * recognises the lines that call its own scripts with plain arguments, and does what the
 * script would do: it walks the buildroot once per step, reads the few bytes and ELF
 * section headers it needs itself, and runs the real tools (strip, gzip, eu-elfclassify,
 * chmod) only on the files that need them, from one sandboxed script per step, `xargs -P`
 * over the build's CPUs. Every other line runs as the shell it is, in order.
 *
 * The script of %install runs its body and the lines before the first recognised step,
 * then writes its environment (export -p, and RPM_BUILD_ROOT, COMPRESS, COMPRESS_EXT and
 * the directory it ended in) to the build directory. A later shell line runs with that
 * environment restored, in that directory. A body that exits early writes nothing, and
 * then nothing after it runs, as in rpmbuild's single script. %_kiln_brp_inprocess 0
 * runs every line as shell. tests/integration/test_build_upstream.py compares the two
 * file by file on the same buildroots (and kiln's scripts with rpm's).
 */
#include "util/util.h"

#include <dirent.h>
#include <fcntl.h>
#include <glob.h>
#include <sys/stat.h>
#include <unistd.h>

#include "worker/brp_int.h"

/* How deep a buildroot's directories may nest, and how many entries a step looks at. */
#define BRP_DEPTH_MAX 256
#define BRP_ENTRIES_MAX (8 * 1024 * 1024)

struct brp_script {
	const char *name; /* configs/brp-NAME */
	enum worker_brp_kind kind;
	size_t max_args;
};

static const struct brp_script brp_scripts[] = {
    {"brp-compress", WORKER_BRP_COMPRESS, 1},
    {"brp-elfperms", WORKER_BRP_ELFPERMS, 0},
    {"brp-strip", WORKER_BRP_STRIP, 1},
    {"brp-strip-static-archive", WORKER_BRP_STRIP_STATIC, 1},
    {"brp-strip-comment-note", WORKER_BRP_STRIP_COMMENT, 2},
    {"brp-remove-la-files", WORKER_BRP_REMOVE_LA, 0},
};

/* ---------------------------------------------------------------------------------------- */
/* The plan: %{__spec_install_post} in steps */

/* A word the shell takes as it is: no quoting, expansion or operator in it. */
bool worker_brp_word_plain(const char *w, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (!strchr(
		        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_./@%+=:,-",
		        w[i]) ||
		    !w[i])
			return false;
	return len > 0;
}

/* One logical line (continuations joined): a call of one of kiln's scripts with plain
 * words, or not. */
static bool brp_line_recognise(struct kiln_arena *a, const char *line, const char *helperdir,
                               struct worker_brp_step *st)
{
	const char *words[4];
	size_t lens[4], n = 0, hl = strlen(helperdir), i;
	const char *p = line;

	while (*p) {
		size_t len;

		while (*p == ' ' || *p == '\t')
			p++;
		if (!*p)
			break;
		len = strcspn(p, " \t");
		if (n == KILN_ARRAY_SIZE(words) || !worker_brp_word_plain(p, len))
			return false;
		words[n] = p;
		lens[n++] = len;
		p += len;
	}
	if (!n || !hl || lens[0] <= hl + 1 || strncmp(words[0], helperdir, hl) ||
	    words[0][hl] != '/')
		return false;
	for (i = 0; i < KILN_ARRAY_SIZE(brp_scripts); i++) {
		const char *nm = brp_scripts[i].name;

		if (lens[0] - hl - 1 == strlen(nm) && !strncmp(words[0] + hl + 1, nm, strlen(nm)))
			break;
	}
	if (i == KILN_ARRAY_SIZE(brp_scripts) || n - 1 > brp_scripts[i].max_args)
		return false;
	st->kind = brp_scripts[i].kind;
	st->nargs = n - 1;
	for (i = 1; i < n; i++) {
		st->args[i - 1] = kiln_arena_strndup(a, words[i], lens[i]);
		if (!st->args[i - 1])
			return false;
	}
	return true;
}

static kiln_rc brp_step_add(struct build *b, struct worker_brp_plan *p,
                            const struct worker_brp_step *st, size_t *cap, struct kiln_err *err)
{
	if (p->nsteps == *cap) {
		size_t ncap = *cap ? 2 * *cap : 8;
		struct worker_brp_step *nv = kiln_arena_array(&b->arena, ncap, sizeof(*nv));

		if (!nv)
			return kiln_err_set(err, KILN_ENOMEM, "out of memory");
		if (p->nsteps)
			memcpy(nv, p->steps, p->nsteps * sizeof(*nv));
		p->steps = nv;
		*cap = ncap;
	}
	p->steps[p->nsteps++] = *st;
	return KILN_OK;
}

kiln_rc worker_brp_plan_make(struct build *b, const char *post, struct worker_brp_plan *p,
                             struct kiln_err *err)
{
	struct kiln_buf lead = KILN_BUF_INIT(KILN_LIMIT_TEXT_FILE);
	struct kiln_buf shell = KILN_BUF_INIT(KILN_LIMIT_TEXT_FILE);
	const char *helperdir, *fdi, *on, *q = post;
	size_t cap = 0;
	bool any = false;
	kiln_rc rc = KILN_OK;

	memset(p, 0, sizeof(*p));
	on = worker_build_expand(b, "%{?_kiln_brp_inprocess}", err);
	helperdir = on ? worker_build_expand(b, "%{?_kiln_helperdir}", err) : NULL;
	fdi = helperdir ? worker_build_expand(b, "%{?__find_debuginfo}", err) : NULL;
	if (!fdi)
		return err->code ? err->code : KILN_ENOMEM;
	if (!strcmp(on, "0") || !*helperdir)
		return KILN_OK;
	while (*q && !rc) {
		struct kiln_buf line = KILN_BUF_INIT(KILN_LIMIT_TEXT_FILE);
		struct worker_brp_step st;
		const char *s = q;

		/* a logical line: physical lines joined at a trailing backslash */
		for (;;) {
			const char *nl = strchr(q, '\n');
			size_t len = nl ? (size_t)(nl - q) : strlen(q);

			q += len + (nl ? 1 : 0);
			if (!nl || !len || q[-2] != '\\')
				break;
		}
		kiln_buf_add(&line, s, (size_t)(q - s));
		rc = kiln_buf_finish(&line, err);
		memset(&st, 0, sizeof(st));
		if (!rc) {
			char *t = kiln_arena_strndup(&b->arena, line.ptr, line.len);
			size_t tl = t ? strlen(t) : 0;

			while (tl && (t[tl - 1] == '\n' || t[tl - 1] == ' ' || t[tl - 1] == '\t'))
				t[--tl] = '\0';
			if (!t) {
				rc = kiln_err_set(err, KILN_ENOMEM, "out of memory");
			} else if (brp_line_recognise(&b->arena, t, helperdir, &st) ||
			           worker_brp_fdi_recognise(&b->arena, t, fdi, &st)) {
				any = true;
				if (shell.len) {
					struct worker_brp_step sh = {.kind = WORKER_BRP_SHELL};

					rc = kiln_buf_finish(&shell, err);
					sh.line = rc ? NULL
					             : kiln_arena_strndup(&b->arena, shell.ptr,
					                                  shell.len);
					if (!rc)
						rc = sh.line ? brp_step_add(b, p, &sh, &cap, err)
						             : kiln_err_set(err, KILN_ENOMEM,
						                            "out of memory");
					shell.len = 0;
				}
				st.line = t;
				while (*st.line == ' ' || *st.line == '\t')
					st.line++;
				if (!rc)
					rc = brp_step_add(b, p, &st, &cap, err);
			} else {
				kiln_buf_add(any ? &shell : &lead, line.ptr, line.len);
			}
		}
		kiln_buf_release(&line);
	}
	if (!rc && shell.len) {
		struct worker_brp_step sh = {.kind = WORKER_BRP_SHELL};

		rc = kiln_buf_finish(&shell, err);
		sh.line = rc ? NULL : kiln_arena_strndup(&b->arena, shell.ptr, shell.len);
		if (!rc)
			rc = sh.line ? brp_step_add(b, p, &sh, &cap, err)
			             : kiln_err_set(err, KILN_ENOMEM, "out of memory");
	}
	if (!rc)
		rc = kiln_buf_finish(&lead, err);
	if (!rc) {
		const char *name = rpmtag_set_get_str(b->spec->packages[0]->tags, RPMTAG_NAME);

		p->lead = kiln_arena_strndup(&b->arena, lead.ptr ? lead.ptr : "", lead.len);
		p->env_file =
		    kiln_arena_printf(&b->arena, "%s/.kiln-%s-brp.env", b->in_builddir, name);
		p->export_file =
		    kiln_arena_printf(&b->arena, "%s/.kiln-%s-brp.export", b->in_builddir, name);
		if (!p->lead || !p->env_file || !p->export_file)
			rc = kiln_err_set(err, KILN_ENOMEM, "out of memory");
		else /* a file of an earlier build would read as this one's */
			(void)unlink(worker_build_host_path(b, p->env_file));
	}
	if (rc || !any)
		p->nsteps = 0;
	kiln_buf_release(&lead);
	kiln_buf_release(&shell);
	return rc;
}

void worker_brp_env_capture(const struct worker_brp_plan *p, struct kiln_buf *text)
{
	kiln_buf_addstr(text, "{ set +x; } 2>/dev/null\nexport -p > ");
	kiln_buf_add_shquoted(text, p->export_file);
	kiln_buf_addstr(text, "\nprintf '%s\\0' \"${RPM_BUILD_ROOT-}\" \"${COMPRESS-}\" "
	                      "\"${COMPRESS_EXT-}\" \"$PWD\" > ");
	kiln_buf_add_shquoted(text, p->env_file);
	kiln_buf_addch(text, '\n');
}

/* ---------------------------------------------------------------------------------------- */
/* The buildroot, walked as find walks it (directory order, symbolic links not followed) */

static kiln_rc brp_ent_add(struct brp_walk *w, const char *rel, const struct stat *st,
                           struct kiln_err *err)
{
	struct brp_ent *e;
	const char *slash;

	if (w->n == BRP_ENTRIES_MAX)
		return kiln_err_set(err, KILN_ELIMIT, "%s: more than %d files", w->top,
		                    BRP_ENTRIES_MAX);
	if (w->n == w->cap) {
		size_t ncap = w->cap ? 2 * w->cap : 256;
		struct brp_ent *nv = kiln_realloc(w->v, ncap * sizeof(*nv));

		if (!nv)
			return kiln_err_set(err, KILN_ENOMEM, "out of memory");
		w->v = nv;
		w->cap = ncap;
	}
	e = &w->v[w->n];
	e->rel = kiln_arena_strdup(w->a, rel);
	if (!e->rel)
		return kiln_err_set(err, KILN_ENOMEM, "out of memory");
	slash = strrchr(e->rel, '/');
	e->base = slash ? slash + 1 : e->rel;
	e->mode = st->st_mode;
	e->size = st->st_size;
	e->dev = st->st_dev;
	e->ino = st->st_ino;
	e->nlink = st->st_nlink;
	w->n++;
	return KILN_OK;
}

static kiln_rc brp_walk_dir(struct brp_walk *w, int dfd, struct kiln_buf *rel, int depth,
                            struct kiln_err *err)
{
	DIR *d;
	struct dirent *de;
	kiln_rc rc = KILN_OK;

	if (depth > BRP_DEPTH_MAX)
		return kiln_err_set(err, KILN_ELIMIT, "%s/%s: directories nest deeper than %d",
		                    w->top, rel->ptr, BRP_DEPTH_MAX);
	d = fdopendir(dfd);
	if (!d) {
		close(dfd);
		return kiln_err_sys(err, KILN_EIO, "%s/%s: cannot read the directory", w->top,
		                    rel->ptr);
	}
	while (!rc && (errno = 0, de = readdir(d))) {
		size_t keep = rel->len;
		struct stat st;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (rel->len)
			kiln_buf_addch(rel, '/');
		kiln_buf_addstr(rel, de->d_name);
		rc = kiln_buf_finish(rel, err);
		if (!rc && fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			rc = kiln_err_sys(err, KILN_EIO, "%s/%s: cannot stat", w->top, rel->ptr);
		if (!rc && S_ISDIR(st.st_mode) && w->dirs)
			rc = brp_ent_add(w, rel->ptr, &st, err);
		if (!rc && S_ISDIR(st.st_mode)) {
			int sub = openat(dirfd(d), de->d_name,
			                 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

			if (sub < 0)
				rc = kiln_err_sys(err, KILN_EIO, "%s/%s: cannot open", w->top,
				                  rel->ptr);
			else
				rc = brp_walk_dir(w, sub, rel, depth + 1, err);
		} else if (!rc) {
			rc = brp_ent_add(w, rel->ptr, &st, err);
		}
		rel->len = keep;
		if (rel->ptr)
			rel->ptr[keep] = '\0';
	}
	if (!rc && errno)
		rc = kiln_err_sys(err, KILN_EIO, "%s/%s: cannot read the directory", w->top,
		                  rel->ptr);
	closedir(d);
	return rc;
}

/* Every file below top that is not a directory. w->v is the caller's to free(). */
static kiln_rc brp_walk_top(struct build *b, const char *top, bool dirs, struct brp_walk *w,
                            struct kiln_err *err)
{
	struct kiln_buf rel = KILN_BUF_INIT(PATH_MAX * 4);
	int fd;
	kiln_rc rc;

	memset(w, 0, sizeof(*w));
	w->a = &b->arena;
	w->top = top;
	w->dirs = dirs;
	fd = open(top, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return kiln_err_sys(err, KILN_EIO, "%s: cannot open the buildroot", top);
	rc = kiln_buf_finish(&rel, err);
	if (!rc)
		rc = brp_walk_dir(w, fd, &rel, 0, err);
	else
		close(fd);
	kiln_buf_release(&rel);
	return rc;
}

kiln_rc worker_brp_walk(struct build *b, const char *top, struct brp_walk *w, struct kiln_err *err)
{
	return brp_walk_top(b, top, false, w, err);
}

kiln_rc worker_brp_walk_all(struct build *b, const char *top, struct brp_walk *w,
                            struct kiln_err *err)
{
	return brp_walk_top(b, top, true, w, err);
}

/* find's -path "$root/usr/lib/debug" -prune */
static bool brp_in_debug(const struct brp_ent *e)
{
	return !strncmp(e->rel, "usr/lib/debug", 13) && (!e->rel[13] || e->rel[13] == '/');
}

static bool brp_has_suffix(const char *s, const char *suf)
{
	size_t n = strlen(s), m = strlen(suf);

	return n >= m && !strcmp(s + n - m, suf);
}

/* The first len bytes of a file below root (fewer when it is shorter). */
static ssize_t brp_head(int rootfd, const char *rel, void *buf, size_t len)
{
	int fd = openat(rootfd, rel, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = pread(fd, buf, len, 0);
	close(fd);
	return n;
}

bool worker_brp_elf_head(int rootfd, const struct brp_ent *e)
{
	unsigned char h[4];

	return brp_head(rootfd, e->rel, h, sizeof(h)) == 4 && !memcmp(h, "\177ELF", 4);
}

enum worker_brp_elf worker_brp_elf_read(int rootfd, const struct brp_ent *e,
                                        struct worker_elf_sections *s)
{
	struct kiln_err err = KILN_ERR_INIT;
	int fd = openat(rootfd, e->rel, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	enum worker_brp_elf kind = WORKER_BRP_NOT_ELF;
	unsigned char h[4];

	memset(s, 0, sizeof(*s));
	if (fd < 0)
		return kind;
	if (pread(fd, h, sizeof(h), 0) == 4 && !memcmp(h, "\177ELF", 4)) {
		kind = worker_elf_sections_fd(fd, e->rel, s, &err) ? WORKER_BRP_ELF_UNREADABLE
		                                                   : WORKER_BRP_ELF;
		if (kind == WORKER_BRP_ELF_UNREADABLE)
			memset(s, 0, sizeof(*s));
	}
	close(fd);
	return kind;
}

/* ---------------------------------------------------------------------------------------- */
/* Running the tools: one sandboxed script per step */

/* A NUL-separated list of root-relative files, as the stages name them, in a file of the
 * build directory; its path as the stages see it. */
static const char *brp_list_write(struct brp_run *r, const char *const *rel, size_t n,
                                  struct kiln_err *err)
{
	struct kiln_buf out = KILN_BUF_INIT(SIZE_MAX / 2);
	const char *name = rpmtag_set_get_str(r->b->spec->packages[0]->tags, RPMTAG_NAME);
	const char *path, *hpath;
	size_t i;

	path = kiln_arena_printf(&r->b->arena, "%s/.kiln-%s-brp.list%zu", r->b->in_builddir, name,
	                         r->nscripts);
	hpath = path ? worker_build_host_path(r->b, path) : NULL;
	if (!hpath) {
		kiln_err_set(err, KILN_ENOMEM, "out of memory");
		return NULL;
	}
	for (i = 0; i < n; i++) {
		kiln_buf_addf(&out, "%s/%s", r->root, rel[i]);
		kiln_buf_addch(&out, '\0');
	}
	if (kiln_buf_finish(&out, err) ||
	    util_write_atomic_nosync(hpath, out.ptr ? out.ptr : "", out.len, 0644, err))
		path = NULL;
	kiln_buf_release(&out);
	return path;
}

/* Run body (shell lines) in the sandbox after the build's environment. */
kiln_rc worker_brp_script(struct brp_run *r, const char *body, int *code, struct kiln_err *err)
{
	struct kiln_buf text = KILN_BUF_INIT(KILN_LIMIT_TEXT_FILE);
	char suffix[32];
	int ignored;
	kiln_rc rc;

	kiln_buf_addstr(&text, r->pre);
	kiln_buf_addstr(&text, body);
	rc = kiln_buf_finish(&text, err);
	snprintf(suffix, sizeof(suffix), "-post%zu", r->nscripts++);
	if (!rc)
		rc = worker_build_script_run(r->b, "install", suffix, text.ptr, text.len, r->cmd,
		                             NULL, code ? code : &ignored, err);
	kiln_buf_release(&text);
	return rc;
}

/* xargs -0 -P NCPUS TOOL ARGS... over the files; failures of the tool fail the build
 * unless tolerate (the script's "|| :"). */
static kiln_rc brp_xargs(struct brp_run *r, const char *const *rel, size_t n, const char *tool,
                         const char *args, bool tolerate, struct kiln_err *err)
{
	struct kiln_buf body = KILN_BUF_INIT(KILN_LIMIT_TEXT_FILE);
	const char *list;
	kiln_rc rc;

	if (!n)
		return KILN_OK;
	list = brp_list_write(r, rel, n, err);
	if (!list)
		return err->code;
	kiln_buf_addf(&body, "xargs -0 -r -P %s -n %d ", r->ncpus, BRP_BATCH);
	kiln_buf_add_shquoted(&body, tool);
	kiln_buf_addf(&body, " %s < ", args);
	kiln_buf_add_shquoted(&body, list);
	kiln_buf_addstr(&body, tolerate ? " || :\n" : "\n");
	rc = kiln_buf_finish(&body, err);
	if (!rc)
		rc = worker_brp_script(r, body.ptr, NULL, err);
	kiln_buf_release(&body);
	return rc;
}

kiln_rc worker_brp_names_add(struct brp_names *l, const char *rel, struct kiln_err *err)
{
	if (l->n == l->cap) {
		size_t ncap = l->cap ? 2 * l->cap : 64;
		const char **nv = kiln_realloc(l->v, ncap * sizeof(*nv));

		if (!nv)
			return kiln_err_set(err, KILN_ENOMEM, "out of memory");
		l->v = nv;
		l->cap = ncap;
	}
	l->v[l->n++] = rel;
	return KILN_OK;
}

/* ---------------------------------------------------------------------------------------- */
/* The steps (each as its script in configs/ says) */

/* brp-strip [STRIP]: strip -g every ELF file with a symbol table, outside /usr/lib/debug,
 * not *.go, over 51 bytes. brp-strip-static-archive [STRIP]: strip -g every ar archive
 * over 7 bytes outside /usr/lib/debug. */
static kiln_rc brp_strip(struct brp_run *r, int rootfd, const struct brp_walk *w,
                         const struct worker_brp_step *st, struct kiln_err *err)
{
	struct brp_names l = {0};
	bool archive = st->kind == WORKER_BRP_STRIP_STATIC;
	size_t i;
	kiln_rc rc = KILN_OK;

	for (i = 0; i < w->n && !rc; i++) {
		const struct brp_ent *e = &w->v[i];
		struct worker_elf_sections s;
		unsigned char h[8];

		if (!S_ISREG(e->mode) || brp_in_debug(e))
			continue;
		if (archive) {
			if (e->size > 7 && brp_head(rootfd, e->rel, h, 8) == 8 &&
			    !memcmp(h, "!<arch>\n", 8))
				rc = worker_brp_names_add(&l, e->rel, err);
		} else if (e->size > 51 && !brp_has_suffix(e->base, ".go") &&
		           worker_brp_elf_read(rootfd, e, &s) == WORKER_BRP_ELF && s.symtab) {
			rc = worker_brp_names_add(&l, e->rel, err);
		}
	}
	if (!rc)
		rc = brp_xargs(r, l.v, l.n, st->nargs ? st->args[0] : "strip", "-g", false, err);
	free(l.v);
	return rc;
}

/* brp-strip-comment-note [STRIP [OBJDUMP]]: an executable ELF file without a symbol table
 * loses .comment, and .note unless that is loaded (ALLOC); failures are ignored. */
static kiln_rc brp_strip_comment(struct brp_run *r, int rootfd, const struct brp_walk *w,
                                 const struct worker_brp_step *st, struct kiln_err *err)
{
	struct brp_names keep = {0}, drop = {0};
	const char *strip = st->nargs ? st->args[0] : "strip";
	size_t i;
	kiln_rc rc = KILN_OK;

	for (i = 0; i < w->n && !rc; i++) {
		const struct brp_ent *e = &w->v[i];
		struct worker_elf_sections s;

		/* an unreadable ELF file: readelf and objdump see nothing (s is zeroed) */
		if (!S_ISREG(e->mode) || !(e->mode & 0111) || e->size <= 51 || brp_in_debug(e) ||
		    worker_brp_elf_read(rootfd, e, &s) == WORKER_BRP_NOT_ELF)
			continue;
		if (!s.symtab)
			rc = worker_brp_names_add(s.note_alloc ? &keep : &drop, e->rel, err);
	}
	if (!rc)
		rc = brp_xargs(r, keep.v, keep.n, strip, "-R .comment", true, err);
	if (!rc)
		rc = brp_xargs(r, drop.v, drop.n, strip, "-R .comment -R .note", true, err);
	free(keep.v);
	free(drop.v);
	return rc;
}

/* brp-elfperms: shared objects (eu-elfclassify --shared, when installed) lose their execute
 * bits. Only executable ELF files can be one, so only those are asked about. */
static kiln_rc brp_elfperms(struct brp_run *r, int rootfd, const struct brp_walk *w,
                            struct kiln_err *err)
{
	struct brp_names l = {0};
	struct kiln_buf body = KILN_BUF_INIT(KILN_LIMIT_TEXT_FILE);
	const char *list;
	size_t i;
	kiln_rc rc = KILN_OK;

	for (i = 0; i < w->n && !rc; i++) {
		const struct brp_ent *e = &w->v[i];

		if (S_ISREG(e->mode) && (e->mode & 0111) && worker_brp_elf_head(rootfd, e))
			rc = worker_brp_names_add(&l, e->rel, err);
	}
	if (rc || !l.n)
		goto out;
	list = brp_list_write(r, l.v, l.n, err);
	if (!list) {
		rc = err->code;
		goto out;
	}
	kiln_buf_addstr(&body, "if [ -x /usr/bin/eu-elfclassify ]; then\n"
	                       "  /usr/bin/eu-elfclassify --shared --stdin0 --print0 < ");
	kiln_buf_add_shquoted(&body, list);
	kiln_buf_addstr(&body, " | xargs -0 -r chmod a-x\nfi\n");
	rc = kiln_buf_finish(&body, err);
	if (!rc)
		rc = worker_brp_script(r, body.ptr, NULL, err);
out:
	kiln_buf_release(&body);
	free(l.v);
	return rc;
}

/* Does the file contain needle? Read in blocks, with the needle's length of overlap. */
static bool brp_file_contains(int rootfd, const char *rel, const char *needle)
{
	size_t nl = strlen(needle), have = 0;
	char buf[65536];
	int fd = openat(rootfd, rel, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	bool found = false;

	if (fd < 0)
		return false;
	for (;;) {
		ssize_t n = read(fd, buf + have, sizeof(buf) - have);

		if (n <= 0)
			break;
		have += (size_t)n;
		if (memmem(buf, have, needle, nl)) {
			found = true;
			break;
		}
		if (have >= nl) {
			memmove(buf, buf + have - (nl - 1), nl - 1);
			have = nl - 1;
		}
	}
	close(fd);
	return found;
}

/* brp-remove-la-files: libtool's .la files (by its header line) are removed. */
static kiln_rc brp_remove_la(int rootfd, const struct brp_walk *w, struct kiln_err *err)
{
	size_t i;

	for (i = 0; i < w->n; i++) {
		const struct brp_ent *e = &w->v[i];

		if (S_ISREG(e->mode) && brp_has_suffix(e->base, ".la") &&
		    brp_file_contains(rootfd, e->rel, ".la - a libtool library file") &&
		    unlinkat(rootfd, e->rel, 0) < 0 && errno != ENOENT)
			return kiln_err_sys(err, KILN_EIO, "%s/%s: cannot remove", w->top, e->rel);
	}
	return KILN_OK;
}

/* ---- brp-compress [PREFIX] ---- */

static const char *const brp_man_globs[] = {
    "man/man*",           "man/*/man*",           "info",           "share/man/man*",
    "share/man/*/man*",   "share/info",           "kerberos/man",   "X11R6/man/man*",
    "lib/perl5/man/man*", "share/doc/*/man/man*", "lib/*/man/man*", "share/fish/man/man*",
};

static const char *const brp_zsuffixes[] = {".gz", ".Z", ".bz2", ".xz", ".lzma", ".zst", ".zstd"};

/* The length of s without a compression suffix. */
static size_t brp_unzipped_len(const char *s)
{
	size_t i, n = strlen(s);

	for (i = 0; i < KILN_ARRAY_SIZE(brp_zsuffixes); i++)
		if (brp_has_suffix(s, brp_zsuffixes[i]))
			return n - strlen(brp_zsuffixes[i]);
	return n;
}

/* s's first len bytes and ".gz", on the heap (caller frees); NULL on ENOMEM. */
static char *brp_gz(const char *s, size_t len)
{
	char *out = kiln_malloc(len + 4);

	if (out) {
		memcpy(out, s, len);
		memcpy(out + len, ".gz", 4);
	}
	return out;
}

static int brp_cmp_str(const void *x, const void *y)
{
	return strcmp(*(const char *const *)x, *(const char *const *)y);
}

struct brp_mandir {
	const char *rel; /* relative to the buildroot */
	struct brp_walk w;
};

/* The directories the script's loop visits, in its order (each pattern's matches sorted
 * as the shell sorts them with LANG=C). */
static kiln_rc brp_mandirs(struct build *b, const char *hroot, const char *prefix,
                           struct brp_mandir **out, size_t *nout, struct kiln_err *err)
{
	struct brp_mandir *v = NULL;
	size_t n = 0, cap = 0, i, j;
	kiln_rc rc = KILN_OK;

	for (i = 0; i < KILN_ARRAY_SIZE(brp_man_globs) && !rc; i++) {
		const char *pat =
		    kiln_arena_printf(&b->arena, "%s/.%s/%s", hroot, prefix, brp_man_globs[i]);
		glob_t g;
		int grc;

		if (!pat)
			return kiln_err_set(err, KILN_ENOMEM, "out of memory");
		grc = glob(pat, GLOB_NOSORT, NULL, &g);
		if (grc == GLOB_NOMATCH)
			continue;
		if (grc) {
			rc = kiln_err_set(err, KILN_EIO, "%s: cannot list", pat);
			break;
		}
		qsort(g.gl_pathv, g.gl_pathc, sizeof(char *), brp_cmp_str);
		for (j = 0; j < g.gl_pathc && !rc; j++) {
			struct stat st;

			if (stat(g.gl_pathv[j], &st) < 0 || !S_ISDIR(st.st_mode))
				continue;
			if (n == cap) {
				size_t ncap = cap ? 2 * cap : 16;
				struct brp_mandir *nv = kiln_realloc(v, ncap * sizeof(*nv));

				if (!nv) {
					rc = kiln_err_set(err, KILN_ENOMEM, "out of memory");
					break;
				}
				v = nv;
				cap = ncap;
			}
			memset(&v[n], 0, sizeof(v[n]));
			v[n].rel = kiln_arena_strdup(&b->arena, g.gl_pathv[j] + strlen(hroot) + 1);
			if (!v[n].rel)
				rc = kiln_err_set(err, KILN_ENOMEM, "out of memory");
			n++;
		}
		globfree(&g);
	}
	*out = v;
	*nout = n;
	return rc;
}

/* Can kiln do this directory itself? Not when a page is compressed already (the script
 * decompresses it with the tool of its suffix), when the directory is a symbolic link
 * (find lists the link itself), when a name the script makes is taken, or when the
 * directories overlap. The script does those. */
static bool brp_mandir_simple(int rootfd, const struct brp_mandir *md, const struct brp_mandir *all,
                              size_t nall)
{
	struct stat st;
	size_t i, ml = strlen(md->rel);
	bool ok = true;
	int dfd;

	for (i = 0; i < nall; i++)
		if (&all[i] != md && !strncmp(all[i].rel, md->rel, ml) &&
		    (!all[i].rel[ml] || all[i].rel[ml] == '/'))
			return false;
	dfd = openat(rootfd, md->rel, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0)
		return false;
	for (i = 0; i < md->w.n && ok; i++) {
		const struct brp_ent *e = &md->w.v[i];
		char *gz;

		if (S_ISREG(e->mode) && !strcmp(e->base, "dir"))
			continue;
		if (!S_ISREG(e->mode) && !S_ISLNK(e->mode))
			continue;
		if (brp_unzipped_len(e->rel) != strlen(e->rel)) {
			ok = !S_ISREG(e->mode); /* a link NAME.gz stays NAME.gz */
			continue;
		}
		gz = brp_gz(e->rel, strlen(e->rel));
		ok = gz && fstatat(dfd, gz, &st, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT;
		free(gz);
	}
	close(dfd);
	return ok;
}

/* After gzip -f of the first name of each file: the file's other names in the directory
 * become names of the compressed file, and every symbolic link is renamed NAME.gz and
 * points at TARGET.gz (a compression suffix of either replaced), as the script does. */
static kiln_rc brp_mandir_links(int rootfd, const char *top, const struct brp_mandir *md,
                                const char *const *first, struct kiln_err *err)
{
	char buf[PATH_MAX];
	size_t i;

	for (i = 0; i < md->w.n; i++) {
		const struct brp_ent *e = &md->w.v[i];
		char *gz, *fgz;

		if (!S_ISREG(e->mode) || !first[i] || first[i] == e->rel)
			continue;
		gz = brp_gz(e->rel, strlen(e->rel));
		fgz = brp_gz(first[i], strlen(first[i]));
		if (!gz || !fgz || unlinkat(rootfd, e->rel, 0) < 0 ||
		    linkat(rootfd, fgz, rootfd, gz, 0) < 0) {
			free(gz);
			free(fgz);
			return gz && fgz
			           ? kiln_err_sys(err, KILN_EIO, "%s/%s: cannot link", top, e->rel)
			           : kiln_err_set(err, KILN_ENOMEM, "out of memory");
		}
		free(gz);
		free(fgz);
	}
	for (i = 0; i < md->w.n; i++) {
		const struct brp_ent *e = &md->w.v[i];
		size_t tl, bl = brp_unzipped_len(e->rel);
		ssize_t n;
		char *target, *name;
		kiln_rc rc = KILN_OK;

		if (!S_ISLNK(e->mode))
			continue;
		n = readlinkat(rootfd, e->rel, buf, sizeof(buf) - 1);
		if (n < 0)
			return kiln_err_sys(err, KILN_EIO, "%s/%s: cannot read the link", top,
			                    e->rel);
		buf[n] = '\0';
		tl = brp_unzipped_len(buf);
		target = brp_gz(buf, tl);
		name = brp_gz(e->rel, bl);
		if (!target || !name) {
			rc = kiln_err_set(err, KILN_ENOMEM, "out of memory");
		} else {
			if (unlinkat(rootfd, e->rel, 0) < 0 ||
			    (unlinkat(rootfd, name, 0) < 0 && errno != ENOENT) ||
			    symlinkat(target, rootfd, name) < 0)
				rc = kiln_err_sys(err, KILN_EIO, "%s/%s: cannot relink", top,
				                  e->rel);
		}
		free(target);
		free(name);
		if (rc)
			return rc;
	}
	return KILN_OK;
}

/* The first name of each file of the directory in find's order (first[i] for entry i:
 * its own name, another's, or NULL for what is not a page) into l, as the buildroot names
 * it. */
static kiln_rc brp_compress_list(struct brp_run *r, const struct brp_mandir *md, const char **first,
                                 struct brp_names *l, struct kiln_err *err)
{
	size_t i, j;
	kiln_rc rc = KILN_OK;

	for (i = 0; i < md->w.n && !rc; i++) {
		const struct brp_ent *e = &md->w.v[i];

		if (!S_ISREG(e->mode) || !strcmp(e->base, "dir"))
			continue;
		for (j = 0; j < i && !first[i]; j++)
			if (first[j] && md->w.v[j].ino == e->ino && md->w.v[j].dev == e->dev)
				first[i] = first[j];
		if (!first[i]) {
			first[i] = e->rel;
			rc = worker_brp_names_add(
			    l, kiln_arena_printf(&r->b->arena, "%s/%s", md->rel, e->rel), err);
		}
	}
	return rc;
}

/* The pages of every directory in one gzip run (the directories are apart), then each
 * directory's other names and links. */
static kiln_rc brp_compress_dirs(struct brp_run *r, int rootfd, const struct brp_mandir *md,
                                 size_t n, struct kiln_err *err)
{
	const char ***first = kiln_calloc(n ? n : 1, sizeof(*first));
	struct brp_names l = {0};
	size_t i;
	kiln_rc rc = first ? KILN_OK : kiln_err_set(err, KILN_ENOMEM, "out of memory");

	for (i = 0; i < n && !rc; i++) {
		first[i] = kiln_calloc(md[i].w.n ? md[i].w.n : 1, sizeof(**first));
		rc = first[i] ? brp_compress_list(r, &md[i], first[i], &l, err)
		              : kiln_err_set(err, KILN_ENOMEM, "out of memory");
	}
	if (!rc)
		rc = brp_xargs(r, l.v, l.n, "gzip", "-9 -n -f --", false, err);
	for (i = 0; i < n && !rc; i++) {
		int dfd =
		    openat(rootfd, md[i].rel, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

		if (dfd < 0) {
			rc = kiln_err_sys(err, KILN_EIO, "%s/%s: cannot open", r->hroot, md[i].rel);
			break;
		}
		rc = brp_mandir_links(dfd, md[i].w.top, &md[i], first[i], err);
		close(dfd);
	}
	for (i = 0; first && i < n; i++)
		free(first[i]);
	free(first);
	free(l.v);
	return rc;
}

/* Whether kiln compresses these pages itself: the default COMPRESS and COMPRESS_EXT only
 * (gzip -9 -n writes the same bytes from a file as from its input), and every directory
 * simple. Otherwise *simple is false and nothing has been touched. */
static kiln_rc brp_compress(struct brp_run *r, int rootfd, const struct worker_brp_step *st,
                            const char *compress, const char *ext, bool *simple,
                            struct kiln_err *err)
{
	const char *prefix = st->nargs && *st->args[0] ? st->args[0] : "/usr";
	struct brp_mandir *md = NULL;
	size_t n = 0, i;
	kiln_rc rc;

	*simple = (!*compress || !strcmp(compress, "gzip -9 -n")) && (!*ext || !strcmp(ext, ".gz"));
	if (!*simple)
		return KILN_OK;
	rc = brp_mandirs(r->b, r->hroot, prefix, &md, &n, err);
	for (i = 0; i < n && !rc; i++) {
		const char *top = kiln_arena_printf(&r->b->arena, "%s/%s", r->hroot, md[i].rel);

		rc = top ? worker_brp_walk(r->b, top, &md[i].w, err)
		         : kiln_err_set(err, KILN_ENOMEM, "out of memory");
	}
	for (i = 0; i < n && !rc && *simple; i++)
		*simple = brp_mandir_simple(rootfd, &md[i], md, n);
	if (!rc && *simple)
		rc = brp_compress_dirs(r, rootfd, md, n, err);
	for (i = 0; i < n; i++)
		free(md[i].w.v);
	free(md);
	return rc;
}

/* ---------------------------------------------------------------------------------------- */

static kiln_rc brp_shell(struct brp_run *r, const char *lines, const char *pwd,
                         struct kiln_err *err)
{
	struct kiln_buf body = KILN_BUF_INIT(KILN_LIMIT_TEXT_FILE);
	kiln_rc rc;

	kiln_buf_addstr(&body, "{ set +x; } 2>/dev/null\n. ");
	kiln_buf_add_shquoted(&body, r->p->export_file);
	kiln_buf_addstr(&body, "\ncd ");
	kiln_buf_add_shquoted(&body, pwd);
	kiln_buf_addstr(&body, "\n");
	if (strstr(r->pre, "set -x"))
		kiln_buf_addstr(&body, "set -x\n");
	kiln_buf_addstr(&body, lines);
	kiln_buf_addch(&body, '\n');
	rc = kiln_buf_finish(&body, err);
	if (!rc)
		rc = worker_brp_script(r, body.ptr, NULL, err);
	kiln_buf_release(&body);
	return rc;
}

/* The values the script of %install wrote (worker_brp_env_capture), in order. */
static kiln_rc brp_env_read(struct build *b, const struct worker_brp_plan *p, const char *v[4],
                            bool *ran, struct kiln_err *err)
{
	struct kiln_buf in = KILN_BUF_INIT(64 * KILN_KIB);
	const char *path = worker_build_host_path(b, p->env_file);
	size_t off = 0, i;
	kiln_rc rc;

	*ran = false;
	if (!path)
		return kiln_err_set(err, KILN_ENOMEM, "out of memory");
	rc = util_read_file(path, 64 * KILN_KIB, &in, err);
	if (rc == KILN_ENOTFOUND) {
		kiln_err_clear(err);
		return KILN_OK; /* the script ended before its post-install lines */
	}
	for (i = 0; !rc && i < 4; i++) {
		const char *nul = off < in.len ? memchr(in.ptr + off, '\0', in.len - off) : NULL;

		if (!nul) {
			rc = kiln_err_set(err, KILN_EFORMAT, "%s: truncated", path);
			break;
		}
		v[i] = kiln_arena_strdup(&b->arena, in.ptr + off);
		if (!v[i])
			rc = kiln_err_set(err, KILN_ENOMEM, "out of memory");
		off = (size_t)(nul - in.ptr) + 1;
	}
	*ran = !rc;
	(void)unlink(path);
	kiln_buf_release(&in);
	return rc;
}

/* A logical line on one line: its escaped newlines and their indentation as one blank. */
static const char *brp_line_flat(struct build *b, const char *line)
{
	char *out = kiln_arena_strdup(&b->arena, line), *o = out;
	const char *p = line;

	if (!out)
		return line;
	while (*p) {
		if (p[0] == '\\' && p[1] == '\n') {
			while (o > out && (o[-1] == ' ' || o[-1] == '\t'))
				o--;
			*o++ = ' ';
			for (p += 2; *p == ' ' || *p == '\t'; p++)
				;
			continue;
		}
		*o++ = *p++;
	}
	*o = '\0';
	return out;
}

static kiln_rc brp_step_run(struct brp_run *r, const struct worker_brp_step *st,
                            const char *const env[4], struct kiln_err *err)
{
	struct brp_walk w;
	bool simple = true;
	int rootfd;
	kiln_rc rc;

	if (st->kind == WORKER_BRP_SHELL)
		return st->line[strspn(st->line, " \t\n")] ? brp_shell(r, st->line, env[3], err)
		                                           : KILN_OK;
	/* the scripts' first line: no buildroot, nothing to do (find-debuginfo: an error) */
	if ((!*r->root || !strcmp(r->root, "/")) && st->kind != WORKER_BRP_FIND_DEBUGINFO)
		return KILN_OK;
	/* a buildroot the sandbox keeps to itself (outside the top directory): the script */
	if (!*r->root || !strcmp(r->root, "/") ||
	    (r->b->in_top && worker_build_host_path(r->b, r->root) == r->root))
		return brp_shell(r, st->line, env[3], err);
	worker_build_log(r->b, "+ %s   (in kiln)\n", brp_line_flat(r->b, st->line));
	rootfd = open(r->hroot, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0)
		return kiln_err_sys(err, KILN_EIO, "%s: %s: cannot open the buildroot", st->line,
		                    r->hroot);
	memset(&w, 0, sizeof(w));
	if (st->kind == WORKER_BRP_COMPRESS) {
		rc = brp_compress(r, rootfd, st, env[1], env[2], &simple, err);
	} else {
		rc = worker_brp_walk(r->b, r->hroot, &w, err);
		if (!rc && (st->kind == WORKER_BRP_STRIP || st->kind == WORKER_BRP_STRIP_STATIC))
			rc = brp_strip(r, rootfd, &w, st, err);
		else if (!rc && st->kind == WORKER_BRP_STRIP_COMMENT)
			rc = brp_strip_comment(r, rootfd, &w, st, err);
		else if (!rc && st->kind == WORKER_BRP_ELFPERMS)
			rc = brp_elfperms(r, rootfd, &w, err);
		else if (!rc && st->kind == WORKER_BRP_FIND_DEBUGINFO)
			rc = worker_brp_fdi_run(r, rootfd, &w, st, env[3], &simple, err);
		else if (!rc)
			rc = brp_remove_la(rootfd, &w, err);
	}
	free(w.v);
	close(rootfd);
	if (!rc && !simple)
		rc = brp_shell(r, st->line, env[3], err);
	return rc;
}

kiln_rc worker_brp_plan_run(struct build *b, const struct worker_brp_plan *p, const char *cmd,
                            struct kiln_err *err)
{
	struct brp_run r;
	const char *env[4] = {"", "", "", ""};
	size_t i;
	bool ran;
	kiln_rc rc;

	rc = brp_env_read(b, p, env, &ran, err);
	if (rc || !ran)
		return rc;
	memset(&r, 0, sizeof(r));
	r.b = b;
	r.p = p;
	r.cmd = cmd;
	r.root = env[0];
	r.hroot = worker_build_host_path(b, env[0]);
	r.pre = worker_build_expand(b, "%{___build_template}", err);
	r.ncpus = r.pre ? worker_build_expand(b, "%{?_smp_build_ncpus}", err) : NULL;
	if (!r.ncpus || !r.hroot)
		return err->code ? err->code : kiln_err_set(err, KILN_ENOMEM, "out of memory");
	if (!*r.ncpus || strspn(r.ncpus, "0123456789") != strlen(r.ncpus) || !strcmp(r.ncpus, "0"))
		r.ncpus = "1";
	for (i = 0; i < p->nsteps && !rc; i++)
		rc = brp_step_run(&r, &p->steps[i], env, err);
	(void)unlink(worker_build_host_path(b, p->export_file));
	for (i = 0; i < r.nscripts; i++) {
		const char *name = rpmtag_set_get_str(b->spec->packages[0]->tags, RPMTAG_NAME);
		const char *l = kiln_arena_printf(&b->arena, "%s/.kiln-%s-brp.list%zu",
		                                  b->in_builddir, name, i);

		if (l)
			(void)unlink(worker_build_host_path(b, l));
	}
	return rc;
}
