/*
 * brp_debuginfo.c - find-debuginfo's work (%{__debug_install_post}) with few processes.
 *
 * find-debuginfo (debugedit's script) spends most of a small package's time on the shell
 * around its tools: file(1) over the buildroot, stat, dirname, basename, dd and sed for every
 * ELF file, find and sed for every list. kiln picks the files itself (the walk brp.c makes:
 * executable regular files outside /usr/lib/debug/ *.debug that are ELF with a symbol table,
 * "not stripped" to file(1), in the script's sorted order, hard links once) and writes one
 * sandboxed script that runs only the tools the script would run on them, in as many
 * parallel jobs as -j says: debugedit (paths, build-id, source list), objcopy --merge-notes,
 * eu-strip -f into /usr/lib/debug, readlink -m for the symbolic links, and sort, grep and
 * cpio for the sources. The rest (directories, modes, hard and symbolic .debug links, the
 * file lists) kiln does as the script does. A call with options kiln does not know (-g,
 * -m, -i, -o, dwz, ...) runs as the script; so does a buildroot the script would treat
 * differently (names with newlines or backslashes, two files with one .debug name).
 * tests/integration/test_build_upstream.py compares the buildroots, file by file.
 *
 * Unlike the script with -j, a job that fails fails the build (the script's parallel mode
 * loses a failed job's status).
 */
#include "util/util.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "worker/brp_int.h"

/* How many jobs a -j may ask for. */
#define FDI_JOBS_MAX 256
/* The script's exit when the find-debuginfo it would stand for is not the one kiln
 * follows: then that one runs. */
#define FDI_NOT_MINE 97
/* What `find-debuginfo --version` prints in the version kiln follows (debugedit 5.0). */
#define FDI_VERSION_LINE "echo \"find-debuginfo 5.0\""

/* ---------------------------------------------------------------------------------------- */
/* The call */

/* The next word of the line: plain, or in double quotes with plain characters inside;
 * blanks and escaped newlines between words. 1: *out is the word, 0: no more words, -1: a
 * word kiln does not take as it is. */
static int fdi_word_next(struct kiln_arena *a, const char **pp, const char **out)
{
	const char *p = *pp, *s;
	size_t len;
	bool quoted = false;

	for (;;) {
		if (*p == ' ' || *p == '\t')
			p++;
		else if (p[0] == '\\' && p[1] == '\n')
			p += 2;
		else
			break;
	}
	if (!*p)
		return 0;
	if (*p == '"') {
		quoted = true;
		p++;
	}
	s = p;
	len = strcspn(p, quoted ? "\"" : " \t\\");
	if ((quoted && !p[len]) || (!quoted && !len) || (len && !worker_brp_word_plain(s, len)))
		return -1;
	p += len + (quoted ? 1 : 0);
	if (*p && *p != ' ' && *p != '\t' && !(p[0] == '\\' && p[1] == '\n'))
		return -1;
	*out = kiln_arena_strndup(a, s, len);
	*pp = p;
	return *out ? 1 : -1;
}

/* -j's value as the script's arithmetic reads it: digits only here. */
static bool fdi_jobs_parse(const char *v, unsigned *jobs)
{
	unsigned long n;
	char *end;

	if (!*v || strspn(v, "0123456789") != strlen(v))
		return false;
	n = strtoul(v, &end, 10);
	*jobs = n > FDI_JOBS_MAX ? FDI_JOBS_MAX : (unsigned)n;
	return true;
}

/* An option that takes the next word and keeps it: where. */
static const char **fdi_value_slot(struct worker_brp_fdi *f, const char *w)
{
	if (!strcmp(w, "--build-id-seed"))
		return &f->seed;
	if (!strcmp(w, "--unique-debug-suffix"))
		return &f->suffix;
	if (!strcmp(w, "--unique-debug-src-base"))
		return &f->srcbase;
	if (!strcmp(w, "-S"))
		return &f->srcout;
	return NULL;
}

bool worker_brp_fdi_recognise(struct kiln_arena *a, const char *line, const char *tool,
                              struct worker_brp_step *st)
{
	struct worker_brp_fdi *f;
	const char *p = line, *w, *jobs = "1", *keep = "";
	bool reloc = false;
	int k;

	if (!tool || tool[0] != '/' || fdi_word_next(a, &p, &w) != 1 || strcmp(w, tool))
		return false;
	f = kiln_arena_alloc(a, sizeof(*f));
	if (!f)
		return false;
	f->tool = w;
	f->suffix = "";
	f->builddir = ".";
	while ((k = fdi_word_next(a, &p, &w)) == 1) {
		const char **slot = fdi_value_slot(f, w), *v;

		if (slot) {
			if (fdi_word_next(a, &p, slot) != 1)
				return false;
		} else if (!strcmp(w, "--keep-section") || !strcmp(w, "--remove-section")) {
			/* the script's keep_remove_args, passed to eu-strip as they come */
			if (fdi_word_next(a, &p, &v) != 1)
				return false;
			keep = kiln_arena_printf(a, "%s %s %s", keep, w, v);
			if (!keep)
				return false;
		} else if (!strcmp(w, "--strict-build-id")) {
			f->strict = true;
		} else if (!strcmp(w, "-n")) {
			f->no_recompute = true;
		} else if (!strcmp(w, "-r")) {
			reloc = true;
		} else if (!strcmp(w, "-j") || !strcmp(w, "--jobs")) {
			if (fdi_word_next(a, &p, &jobs) != 1)
				return false;
		} else if (!strncmp(w, "-j", 2)) {
			jobs = w + 2;
		} else if (w[0] == '-') {
			return false; /* -g, --g-libs, -m, -i, -o, -l, -p, dwz, ...: the script */
		} else {
			f->builddir = w; /* the script ignores what follows */
			while ((k = fdi_word_next(a, &p, &w)) == 1)
				;
			break;
		}
	}
	if (k < 0 || !fdi_jobs_parse(jobs, &f->jobs))
		return false;
	if (f->seed && !*f->seed)
		f->seed = NULL;
	if (f->srcout && !*f->srcout)
		f->srcout = NULL;
	/* -n with a seed is the script's error; without a source base it copies sources from
	 * $RPM_BUILD_DIR, which kiln does not follow here */
	if ((f->seed && f->no_recompute) || !f->srcbase || !*f->srcbase)
		return false;
	f->strip_args = kiln_arena_printf(a, "%s%s", reloc ? " --reloc-debug-sections" : "", keep);
	if (!f->strip_args)
		return false;
	st->kind = WORKER_BRP_FIND_DEBUGINFO;
	st->fdi = f;
	return true;
}

/* ---------------------------------------------------------------------------------------- */
/* The files */

struct fdi_file {
	const struct brp_ent *e;
	const char *debug_rel; /* its .debug file, relative to the buildroot */
	bool strip;            /* not below /usr/lib/debug/: stripped into debug_rel */
	bool skip;             /* debug_rel is there already: the script leaves it */
	size_t first_link;     /* its other names: links[first_link..] while same inode */
	size_t nlinks;
	unsigned job;
};

struct fdi {
	struct brp_run *r;
	const struct worker_brp_fdi *o;
	int rootfd;
	const char *builddir;  /* as the stages see it, absolute */
	const char *hbuilddir; /* as kiln sees it */
	const char *tmp;       /* the build directory's prefix for this step's files */
	struct fdi_file *files;
	size_t nfiles;
	const struct brp_ent **links; /* other names of files' inodes, by file */
	size_t nlinks;
	struct brp_names symlinks; /* outside /usr/lib/debug/ */
};

static int fdi_ent_cmp(const void *x, const void *y)
{
	return strcmp((*(const struct brp_ent *const *)x)->rel,
	              (*(const struct brp_ent *const *)y)->rel);
}

/* basename NAME .debug, then the suffix and .debug; under usr/lib/debug, beside the file. */
static const char *fdi_debug_rel(struct kiln_arena *a, const struct brp_ent *e, const char *suffix)
{
	size_t bl = strlen(e->base), dl = (size_t)(e->base - e->rel);

	if (bl > 6 && !strcmp(e->base + bl - 6, ".debug"))
		bl -= 6;
	return kiln_arena_printf(a, "usr/lib/debug/%.*s%.*s%s.debug", (int)dl, e->rel, (int)bl,
	                         e->base, suffix);
}

/* A name the script's read loops and patterns take as kiln does. */
static bool fdi_name_plain(const char *rel)
{
	size_t n = strlen(rel);

	return !strpbrk(rel, "\\\n") && n && rel[n - 1] != ' ' && rel[n - 1] != '\t';
}

/* The ELF files with symbol tables, sorted, each inode once (its other names apart), and
 * the symbolic links. *plain is false when the script would see them otherwise. */
static kiln_rc fdi_files_pick(struct fdi *d, const struct brp_walk *w, bool *plain,
                              struct kiln_err *err)
{
	struct kiln_arena *a = &d->r->b->arena;
	const struct brp_ent **v = kiln_calloc(w->n ? w->n : 1, sizeof(*v));
	size_t n = 0, i, j;
	kiln_rc rc = KILN_OK;

	if (!v)
		return kiln_err_set(err, KILN_ENOMEM, "out of memory");
	for (i = 0; i < w->n && !rc; i++) {
		const struct brp_ent *e = &w->v[i];
		bool in_debug = !strncmp(e->rel, "usr/lib/debug/", 14);
		struct worker_elf_sections s;

		if (S_ISLNK(e->mode) && !in_debug) {
			*plain = *plain && fdi_name_plain(e->rel);
			rc = worker_brp_names_add(&d->symlinks, e->rel, err);
			continue;
		}
		if (!S_ISREG(e->mode) || !(e->mode & 0111) ||
		    (in_debug && strlen(e->base) >= 6 &&
		     !strcmp(e->base + strlen(e->base) - 6, ".debug")))
			continue;
		if (worker_brp_elf_read(d->rootfd, e, &s) == WORKER_BRP_ELF && s.symtab) {
			*plain = *plain && fdi_name_plain(e->rel);
			v[n++] = e;
		}
	}
	if (rc)
		goto out;
	qsort(v, n, sizeof(*v), fdi_ent_cmp);
	d->files = kiln_arena_array(a, n ? n : 1, sizeof(*d->files));
	d->links = kiln_arena_array(a, n ? n : 1, sizeof(*d->links));
	if (!d->files || !d->links) {
		rc = kiln_err_set(err, KILN_ENOMEM, "out of memory");
		goto out;
	}
	for (i = 0; i < n; i++) {
		const struct brp_ent *e = v[i];
		bool linked = false;

		for (j = 0; j < d->nfiles && e->nlink > 1 && !linked; j++)
			linked = d->files[j].e->ino == e->ino && d->files[j].e->dev == e->dev;
		if (!linked) {
			d->files[d->nfiles++].e = e;
			continue;
		}
		d->files[j - 1].nlinks++;
	}
	/* other names in sorted order, grouped by file */
	for (i = 0; i < d->nfiles; i++) {
		struct fdi_file *f = &d->files[i];
		size_t want = f->nlinks;

		f->first_link = d->nlinks;
		for (j = 0; j < n && want; j++)
			if (v[j] != f->e && v[j]->ino == f->e->ino && v[j]->dev == f->e->dev) {
				d->links[d->nlinks++] = v[j];
				want--;
			}
	}
out:
	free(v);
	return rc;
}

/* Where each file's debug information goes, which are there already, and whether two
 * files would share a .debug name (then the script's order decides: *plain false). */
static kiln_rc fdi_files_place(struct fdi *d, bool *plain, struct kiln_err *err)
{
	struct kiln_arena *a = &d->r->b->arena;
	size_t i, j;

	for (i = 0; i < d->nfiles; i++) {
		struct fdi_file *f = &d->files[i];
		struct stat st;

		f->debug_rel = fdi_debug_rel(a, f->e, d->o->suffix);
		if (!f->debug_rel)
			return kiln_err_set(err, KILN_ENOMEM, "out of memory");
		f->strip =
		    strncmp(f->e->rel, "usr/lib/debug/", 14) != 0 || !strchr(f->e->rel + 14, '/');
		/* `case $dn in /usr/lib/debug/ *)`: a file right in usr/lib/debug is stripped */
		f->skip = fstatat(d->rootfd, f->debug_rel, &st, 0) == 0 && S_ISREG(st.st_mode);
		for (j = 0; j < i; j++)
			if (!strcmp(d->files[j].debug_rel, f->debug_rel))
				*plain = false;
	}
	return KILN_OK;
}

static int fdi_file_size_cmp(const void *x, const void *y)
{
	off_t a = (*(const struct fdi_file *const *)x)->e->size;
	off_t b = (*(const struct fdi_file *const *)y)->e->size;

	return a < b ? 1 : a > b ? -1 : 0;
}

/* Spread the files over the jobs, largest first to the least loaded (kiln knows the
 * sizes; the script hands them out as its jobs ask). *jobs: how many run. */
static kiln_rc fdi_jobs_assign(struct fdi *d, unsigned *jobs, struct kiln_err *err)
{
	struct fdi_file **v = kiln_calloc(d->nfiles ? d->nfiles : 1, sizeof(*v));
	off_t load[FDI_JOBS_MAX] = {0};
	size_t i, n = 0;
	unsigned j;

	if (!v)
		return kiln_err_set(err, KILN_ENOMEM, "out of memory");
	for (i = 0; i < d->nfiles; i++)
		if (!d->files[i].skip)
			v[n++] = &d->files[i];
	*jobs = d->o->jobs ? d->o->jobs : 1;
	if (*jobs > n)
		*jobs = n ? (unsigned)n : 1;
	qsort(v, n, sizeof(*v), fdi_file_size_cmp);
	for (i = 0; i < n; i++) {
		unsigned least = 0;

		for (j = 1; j < *jobs; j++)
			if (load[j] < load[least])
				least = j;
		v[i]->job = least;
		load[least] += v[i]->e->size;
	}
	free(v);
	return KILN_OK;
}

/* ---------------------------------------------------------------------------------------- */
/* The script */

/* A word of the script: v quoted, or nothing when the arena could not make it (its sticky
 * error ends fdi_script_write). */
static void fdi_quote(struct kiln_buf *s, const char *v)
{
	if (v)
		kiln_buf_add_shquoted(s, v);
}

static void fdi_function_write(struct fdi *d, struct kiln_buf *s)
{
	const struct worker_brp_fdi *o = d->o;
	const char *slash = strrchr(o->tool, '/');
	const char *edit =
	    kiln_arena_printf(&d->r->b->arena, "%.*s/debugedit", (int)(slash - o->tool), o->tool);
	const char *dest = kiln_arena_printf(&d->r->b->arena, "/usr/src/debug/%s", o->srcbase);

	/* a tool's failure ends the job with its status, never the one that says "not the
	 * find-debuginfo kiln follows" */
	kiln_buf_addf(s, "kiln_fdi_exit() {\n\t[ \"$1\" != %d ] || exit 1\n\texit \"$1\"\n}\n",
	              FDI_NOT_MINE);
	/* kiln_fdi FILE SOURCELIST [DEBUGFILE]: the script's do_file for one file */
	kiln_buf_addstr(s, "kiln_fdi() {\n\tid=$(");
	fdi_quote(s, edit);
	kiln_buf_addstr(s, " -b ");
	kiln_buf_add_shquoted(s, o->builddir);
	kiln_buf_addstr(s, " -d ");
	fdi_quote(s, dest);
	kiln_buf_addstr(s, o->no_recompute ? " -n -i" : " -i");
	if (o->seed) {
		kiln_buf_addstr(s, " --build-id-seed=");
		kiln_buf_add_shquoted(s, o->seed);
	}
	kiln_buf_addstr(s, " -l \"$2\" \"$1\") || kiln_fdi_exit $?\n\tif [ -z \"$id\" ]; then\n");
	kiln_buf_addf(s, "\t\techo >&2 \"*** %s: No build ID note found in $1\"\n",
	              o->strict ? "ERROR" : "WARNING");
	if (o->strict)
		kiln_buf_addstr(s, "\t\texit 2\n");
	kiln_buf_addstr(s, "\tfi\n\tobjcopy --merge-notes \"$1\" 2>/dev/null || true\n"
	                   "\t[ -n \"${3-}\" ] || return 0\n\tif test -w \"$1\"; then\n");
	kiln_buf_addf(s, "\t\teu-strip --remove-comment%s -f \"$3\" \"$1\" || kiln_fdi_exit $?\n",
	              o->strip_args);
	kiln_buf_addstr(s, "\telse\n\t\tchmod u+w \"$1\" || :\n");
	kiln_buf_addf(s, "\t\teu-strip --remove-comment%s -f \"$3\" \"$1\" || kiln_fdi_exit $?\n",
	              o->strip_args);
	kiln_buf_addstr(s, "\t\tchmod u-w \"$1\" || :\n\tfi\n}\n");
}

static const char *fdi_tmp(struct fdi *d, const char *what, unsigned n)
{
	return kiln_arena_printf(&d->r->b->arena, "%s.%s%u", d->tmp, what, n);
}

/* The jobs in the background, each its files in turn; then the links' targets and the
 * sources. */
static kiln_rc fdi_script_write(struct fdi *d, unsigned jobs, const char *pwd, struct kiln_buf *s,
                                struct kiln_err *err)
{
	struct kiln_arena *a = &d->r->b->arena;
	const char *root = d->r->root;
	const char *srcfile = kiln_arena_printf(a, "%s/debugsources.list", d->builddir);
	const char *dest = kiln_arena_printf(a, "%s/usr/src/debug/%s", root, d->o->srcbase);
	unsigned j;
	size_t i;
	kiln_rc rc;

	kiln_buf_addstr(s, "{ set +x; } 2>/dev/null\n. ");
	fdi_quote(s, d->r->p->export_file);
	kiln_buf_addstr(s, "\ncd ");
	fdi_quote(s, pwd);
	/* the script kiln follows, not another version of it */
	kiln_buf_addstr(s, "\ngrep -q -F -e ");
	fdi_quote(s, FDI_VERSION_LINE);
	kiln_buf_addch(s, ' ');
	fdi_quote(s, d->o->tool);
	kiln_buf_addf(s, " || exit %d\n", FDI_NOT_MINE);
	fdi_function_write(d, s);
	for (j = 0; j < jobs; j++) {
		const char *list = fdi_tmp(d, "sources", j);

		kiln_buf_addstr(s, ": > ");
		fdi_quote(s, list);
		kiln_buf_addstr(s, "\n{ :");
		for (i = 0; i < d->nfiles; i++) {
			const struct fdi_file *f = &d->files[i];

			if (f->skip || f->job != j)
				continue;
			kiln_buf_addstr(s, " && kiln_fdi ");
			fdi_quote(s, kiln_arena_printf(a, "%s/%s", root, f->e->rel));
			kiln_buf_addch(s, ' ');
			fdi_quote(s, list);
			if (f->strip) {
				kiln_buf_addch(s, ' ');
				fdi_quote(s, kiln_arena_printf(a, "%s/%s", root, f->debug_rel));
			}
		}
		kiln_buf_addf(s, "; } &\nkiln_fdi_%u=$!\n", j);
	}
	kiln_buf_addstr(s, "kiln_fdi_rc=0\n");
	for (j = 0; j < jobs; j++)
		kiln_buf_addf(s, "wait $kiln_fdi_%u || kiln_fdi_rc=$?\n", j);
	kiln_buf_addstr(s, "[ $kiln_fdi_rc = 0 ] || exit $kiln_fdi_rc\n");
	if (d->symlinks.n) {
		kiln_buf_addstr(s, "for kiln_fdi_l in");
		for (i = 0; i < d->symlinks.n; i++) {
			kiln_buf_addch(s, ' ');
			fdi_quote(s, kiln_arena_printf(a, "%s/%s", root, d->symlinks.v[i]));
		}
		kiln_buf_addstr(s, "; do\n\tprintf '%s\\0' \"$(readlink -m \"$kiln_fdi_l\")\"\n"
		                   "done > ");
		fdi_quote(s, fdi_tmp(d, "links", 0));
		kiln_buf_addch(s, '\n');
	}
	kiln_buf_addstr(s, "cat");
	for (j = 0; j < jobs; j++) {
		kiln_buf_addch(s, ' ');
		fdi_quote(s, fdi_tmp(d, "sources", j));
	}
	kiln_buf_addstr(s, " > ");
	fdi_quote(s, srcfile);
	kiln_buf_addstr(s, "\nif [ -s ");
	fdi_quote(s, srcfile);
	kiln_buf_addstr(s, " ]; then\n\tmkdir -p ");
	fdi_quote(s, dest);
	kiln_buf_addstr(s, " || :\n\tLC_ALL=C sort -z -u ");
	fdi_quote(s, srcfile);
	kiln_buf_addstr(s, " | grep -E -v -z '(^|/)<[a-z _-]+>$' |\n\t(cd ");
	fdi_quote(s, d->o->builddir);
	kiln_buf_addstr(s, "; cpio -pd0mL ");
	fdi_quote(s, dest);
	kiln_buf_addstr(s, ") || :\nfi\n");
	rc = kiln_arena_finish(a, err);
	return rc ? rc : kiln_buf_finish(s, err);
}

/* ---------------------------------------------------------------------------------------- */
/* What kiln does after the tools */

static kiln_rc fdi_mkdirs(struct fdi *d, const char *rel, struct kiln_err *err)
{
	const char *slash = strrchr(rel, '/');
	const char *dir = slash ? kiln_arena_printf(&d->r->b->arena, "%s/%.*s", d->r->hroot,
	                                            (int)(slash - rel), rel)
	                        : d->r->hroot;

	if (!dir)
		return kiln_err_set(err, KILN_ENOMEM, "out of memory");
	return util_mkdir_p(dir, 0755, err);
}

/* ln -nf: the other names of a stripped file get its .debug file's inode. */
static kiln_rc fdi_hardlinks(struct fdi *d, const struct fdi_file *f, struct kiln_err *err)
{
	size_t i;

	for (i = f->first_link; i < f->first_link + f->nlinks; i++) {
		const char *rel = fdi_debug_rel(&d->r->b->arena, d->links[i], d->o->suffix);
		kiln_rc rc;

		if (!rel)
			return kiln_err_set(err, KILN_ENOMEM, "out of memory");
		worker_build_log(d->r->b, "hard linked %s/%s to %s/%s\n", d->r->root, f->debug_rel,
		                 d->r->root, rel);
		rc = fdi_mkdirs(d, rel, err);
		if (rc)
			return rc;
		if ((unlinkat(d->rootfd, rel, 0) < 0 && errno != ENOENT) ||
		    linkat(d->rootfd, f->debug_rel, d->rootfd, rel, 0) < 0)
			return kiln_err_sys(err, KILN_EIO, "%s/%s: cannot link", d->r->hroot, rel);
	}
	return KILN_OK;
}

/* link_relative: the target t as seen from the directory of l (both absolute, in the
 * buildroot), the leading components they share left out as the script leaves them out. */
static const char *fdi_relative(struct kiln_arena *a, const char *t, const char *l)
{
	struct kiln_buf out = KILN_BUF_INIT(PATH_MAX * 4);
	const char *fn = l + (*l == '/'), *tn = t + (*t == '/'), *p;
	const char *res;

	for (;;) {
		size_t fl = strcspn(fn, "/"), tl = strcspn(tn, "/");

		if (fl != tl || strncmp(fn, tn, fl) || (!fn[fl] && !tn[tl]))
			break;
		/* ${fn#*\/}: a last component stays as it is */
		fn += fn[fl] ? fl + 1 : 0;
		tn += tn[tl] ? tl + 1 : 0;
	}
	for (p = strchr(fn, '/'); p; p = strchr(p + 1, '/'))
		kiln_buf_addstr(&out, "../");
	kiln_buf_addstr(&out, tn);
	res = kiln_buf_finish(&out, NULL) ? NULL : kiln_arena_strndup(a, out.ptr, out.len);
	kiln_buf_release(&out);
	return res;
}

/* mkdir -p "$(dirname L)" && ln -snf TN L; failures are the script's messages, not its
 * end. */
static void fdi_symlink_make(struct fdi *d, const char *tn, const char *l)
{
	struct kiln_err e = KILN_ERR_INIT;
	struct stat st;

	if (fdi_mkdirs(d, l, &e)) {
		worker_build_log(d->r->b, "%s\n", e.msg);
		kiln_err_clear(&e);
		return;
	}
	if (fstatat(d->rootfd, l, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode))
		l = kiln_arena_printf(&d->r->b->arena, "%s/%s", l,
		                      strrchr(tn, '/') ? strrchr(tn, '/') + 1 : tn);
	if (!l || (unlinkat(d->rootfd, l, 0) < 0 && errno != ENOENT) ||
	    symlinkat(tn, d->rootfd, l) < 0)
		worker_build_log(d->r->b, "ln: %s/%s: %s\n", d->r->root, l ? l : "",
		                 strerror(errno));
}

/* For each symbolic link whose target has a .debug file, a .debug link to that file. */
static kiln_rc fdi_symlinks(struct fdi *d, struct kiln_buf *linksfile, struct kiln_err *err)
{
	struct kiln_buf in = KILN_BUF_INIT(SIZE_MAX / 2);
	const char *path = fdi_tmp(d, "links", 0), *hpath;
	size_t off = 0, i, rl = strlen(d->r->root);
	kiln_rc rc;

	if (!d->symlinks.n)
		return KILN_OK;
	hpath = path ? worker_build_host_path(d->r->b, path) : NULL;
	if (!hpath)
		return kiln_err_set(err, KILN_ENOMEM, "out of memory");
	rc = util_read_file(hpath, SIZE_MAX / 2, &in, err);
	for (i = 0; !rc && i < d->symlinks.n; i++) {
		const char *nul = off < in.len ? memchr(in.ptr + off, '\0', in.len - off) : NULL;
		const char *t, *l, *tn;
		struct stat st;

		if (!nul) {
			rc = kiln_err_set(err, KILN_EFORMAT, "%s: truncated", hpath);
			break;
		}
		t = in.ptr + off;
		off = (size_t)(nul - in.ptr) + 1;
		if (!strncmp(t, d->r->root, rl))
			t += rl;
		t = kiln_arena_printf(&d->r->b->arena, "/usr/lib/debug%s.debug", t);
		l = kiln_arena_printf(&d->r->b->arena, "/usr/lib/debug/%s.debug", d->symlinks.v[i]);
		if (!t || !l) {
			rc = kiln_err_set(err, KILN_ENOMEM, "out of memory");
			break;
		}
		if (fstatat(d->rootfd, t + 1, &st, 0) < 0 || !S_ISREG(st.st_mode))
			continue;
		worker_build_log(d->r->b, "symlinked %s to %s\n", t, l);
		kiln_buf_addf(linksfile, "%s %s\n", l, t);
		tn = fdi_relative(&d->r->b->arena, t, l);
		if (!tn) {
			rc = kiln_err_set(err, KILN_ENOMEM, "out of memory");
			break;
		}
		fdi_symlink_make(d, tn, l + 1);
	}
	kiln_buf_release(&in);
	return rc;
}

static bool fdi_isdir(int dfd, const char *rel)
{
	struct stat st;

	return fstatat(dfd, rel, &st, 0) == 0 && S_ISDIR(st.st_mode);
}

/* find TOP (below the buildroot) as find -P walks it: *kind is 0 when TOP is not there,
 * 'd' for a directory (w: what is below it, directories too), 'f' for anything else (find
 * lists it as itself, a symbolic link included). w->v is the caller's to free(). */
static kiln_rc fdi_find(struct fdi *d, const char *top, struct brp_walk *w, char *kind,
                        struct kiln_err *err)
{
	const char *h;
	struct stat st;

	memset(w, 0, sizeof(*w));
	*kind = 0;
	if (fstatat(d->rootfd, top, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return KILN_OK;
	*kind = S_ISDIR(st.st_mode) ? 'd' : 'f';
	if (*kind != 'd')
		return KILN_OK;
	h = kiln_arena_printf(&d->r->b->arena, "%s/%s", d->r->hroot, top);
	return h ? worker_brp_walk_all(d->r->b, h, w, err)
	         : kiln_err_set(err, KILN_ENOMEM, "out of memory");
}

/* find src/debug -mindepth 1 -maxdepth 1, as /usr/src/debug/NAME lines. */
static kiln_rc fdi_src_list(struct fdi *d, struct kiln_buf *out, struct kiln_err *err)
{
	struct brp_walk w;
	char kind;
	size_t i;
	kiln_rc rc = fdi_find(d, "usr/src/debug", &w, &kind, err);

	for (i = 0; !rc && i < w.n; i++)
		if (!strchr(w.v[i].rel, '/'))
			kiln_buf_addf(out, "/usr/src/debug/%s\n", w.v[i].rel);
	free(w.v);
	return rc;
}

/* The script's debugfiles.list (%dir lines for usr/lib/debug and what is in it, then its
 * other files, then the sources' top directories unless -S lists them apart) and, with
 * -S, its source list. */
static kiln_rc fdi_lists(struct fdi *d, struct kiln_buf *list, struct kiln_buf *src,
                         struct kiln_err *err)
{
	struct brp_walk w = {0};
	char kind = 0;
	size_t i;
	kiln_rc rc = KILN_OK;

	if (fdi_isdir(d->rootfd, "usr/lib") || fdi_isdir(d->rootfd, "usr/src")) {
		if (fdi_isdir(d->rootfd, "usr/lib"))
			rc = fdi_find(d, "usr/lib/debug", &w, &kind, err);
		if (!rc && kind == 'd') {
			kiln_buf_addstr(list, "%dir /usr/lib/debug\n");
			for (i = 0; i < w.n; i++)
				if (S_ISDIR(w.v[i].mode))
					kiln_buf_addf(list, "%%dir /usr/lib/debug/%s\n",
					              w.v[i].rel);
		}
		if (!rc && fdi_isdir(d->rootfd, "usr/lib/debug")) {
			if (kind == 'f')
				kiln_buf_addstr(list, "/usr/lib/debug\n");
			for (i = 0; i < w.n; i++)
				if (!S_ISDIR(w.v[i].mode))
					kiln_buf_addf(list, "/usr/lib/debug/%s\n", w.v[i].rel);
		}
		if (!rc && fdi_isdir(d->rootfd, "usr/src/debug") && !d->o->srcout)
			rc = fdi_src_list(d, list, err);
	}
	if (!rc && d->o->srcout && fdi_isdir(d->rootfd, "usr/src/debug"))
		rc = fdi_src_list(d, src, err);
	free(w.v);
	return rc;
}

/* find DEST -type d | xargs chmod 0755: cpio made them 0700 or kept the sources' modes. */
static kiln_rc fdi_src_dirs_open(struct fdi *d, const char *dest, struct kiln_err *err)
{
	struct brp_walk w;
	char kind;
	size_t i;
	kiln_rc rc = fdi_find(d, dest, &w, &kind, err);

	if (!rc && kind == 'd')
		(void)fchmodat(d->rootfd, dest, 0755, 0);
	for (i = 0; !rc && i < w.n; i++) {
		const char *rel = S_ISDIR(w.v[i].mode) ? kiln_arena_printf(&d->r->b->arena, "%s/%s",
		                                                           dest, w.v[i].rel)
		                                       : NULL;

		if (rel)
			(void)fchmodat(d->rootfd, rel, 0755, 0);
	}
	free(w.v);
	return rc;
}

static kiln_rc fdi_write(struct fdi *d, const char *name, struct kiln_buf *text,
                         struct kiln_err *err)
{
	const char *path = kiln_arena_printf(&d->r->b->arena, "%s/%s", d->hbuilddir, name);
	kiln_rc rc = kiln_buf_finish(text, err);

	if (!rc && !path)
		rc = kiln_err_set(err, KILN_ENOMEM, "out of memory");
	if (!rc)
		rc = util_write_atomic_nosync(path, text->ptr ? text->ptr : "", text->len, 0644,
		                              err);
	return rc;
}

/* After the tools: modes, links, the sources' directories and the lists. */
static kiln_rc fdi_finish(struct fdi *d, struct kiln_err *err)
{
	struct kiln_buf elfbins = KILN_BUF_INIT(SIZE_MAX / 2), links = KILN_BUF_INIT(SIZE_MAX / 2);
	struct kiln_buf list = KILN_BUF_INIT(SIZE_MAX / 2), src = KILN_BUF_INIT(SIZE_MAX / 2);
	const char *dest = kiln_arena_printf(&d->r->b->arena, "usr/src/debug/%s", d->o->srcbase);
	size_t i;
	kiln_rc rc = dest ? KILN_OK : kiln_err_set(err, KILN_ENOMEM, "out of memory");

	for (i = 0; i < d->nfiles && !rc; i++) {
		const struct fdi_file *f = &d->files[i];

		if (f->skip || !f->strip)
			continue;
		if (fchmodat(d->rootfd, f->debug_rel, 0444, 0) < 0)
			rc = kiln_err_sys(err, KILN_EIO, "%s/%s: cannot change the mode",
			                  d->r->hroot, f->debug_rel);
		kiln_buf_addf(&elfbins, ".//%s\n", f->e->rel);
		if (!rc)
			rc = fdi_hardlinks(d, f, err);
	}
	if (!rc)
		rc = fdi_symlinks(d, &links, err);
	if (!rc)
		rc = fdi_src_dirs_open(d, dest, err);
	if (!rc)
		rc = fdi_lists(d, &list, &src, err);
	if (!rc)
		rc = fdi_write(d, "elfbins.list", &elfbins, err);
	if (!rc)
		rc = fdi_write(d, "debuglinks.list", &links, err);
	if (!rc)
		rc = fdi_write(d, "debugfiles.list", &list, err);
	if (!rc && d->o->srcout)
		rc = fdi_write(d, d->o->srcout, &src, err);
	kiln_buf_release(&elfbins);
	kiln_buf_release(&links);
	kiln_buf_release(&list);
	kiln_buf_release(&src);
	return rc;
}

/* ---------------------------------------------------------------------------------------- */

/* Paths the script would take apart as patterns or words: kiln leaves those to it. */
static bool fdi_root_plain(const char *root)
{
	size_t n = strlen(root);

	return root[0] == '/' && n > 1 && root[n - 1] != '/' && !strpbrk(root, "*?[\\\n");
}

static kiln_rc fdi_prepare(struct fdi *d, const struct brp_walk *w, const char *pwd, bool *plain,
                           struct kiln_err *err)
{
	struct build *b = d->r->b;
	const char *name = rpmtag_set_get_str(b->spec->packages[0]->tags, RPMTAG_NAME);
	size_t i;
	kiln_rc rc;

	d->builddir = d->o->builddir[0] == '/'
	                  ? d->o->builddir
	                  : kiln_arena_printf(&b->arena, "%s/%s", pwd, d->o->builddir);
	d->hbuilddir = d->builddir ? worker_build_host_path(b, d->builddir) : NULL;
	d->tmp = kiln_arena_printf(&b->arena, "%s/.kiln-%s-fdi", b->in_builddir, name);
	if (!d->hbuilddir || !d->tmp)
		return kiln_err_set(err, KILN_ENOMEM, "out of memory");
	/* a build directory the sandbox keeps to itself: the script */
	if ((b->in_top && d->hbuilddir == d->builddir) || !fdi_root_plain(d->r->root) ||
	    !fdi_root_plain(d->builddir)) {
		*plain = false;
		return KILN_OK;
	}
	rc = fdi_files_pick(d, w, plain, err);
	if (!rc && *plain)
		rc = fdi_files_place(d, plain, err);
	for (i = 0; !rc && *plain && i < d->nfiles; i++)
		if (d->files[i].strip && !d->files[i].skip)
			rc = fdi_mkdirs(d, d->files[i].debug_rel, err);
	return rc;
}

static void fdi_cleanup(struct fdi *d, unsigned jobs)
{
	unsigned j;

	for (j = 0; j < jobs; j++) {
		const char *p = fdi_tmp(d, "sources", j);

		if (p)
			(void)unlink(worker_build_host_path(d->r->b, p));
	}
	if (d->symlinks.n) {
		const char *p = fdi_tmp(d, "links", 0);

		if (p)
			(void)unlink(worker_build_host_path(d->r->b, p));
	}
}

kiln_rc worker_brp_fdi_run(struct brp_run *r, int rootfd, const struct brp_walk *w,
                           const struct worker_brp_step *st, const char *pwd, bool *done,
                           struct kiln_err *err)
{
	struct kiln_buf script = KILN_BUF_INIT(KILN_LIMIT_TEXT_FILE);
	struct fdi d;
	bool plain = true;
	unsigned jobs = 0;
	int code = 0;
	size_t i;
	kiln_rc rc;

	memset(&d, 0, sizeof(d));
	d.r = r;
	d.o = st->fdi;
	d.rootfd = rootfd;
	*done = false;
	rc = fdi_prepare(&d, w, pwd, &plain, err);
	if (rc || !plain)
		goto out;
	rc = fdi_jobs_assign(&d, &jobs, err);
	if (!rc)
		rc = fdi_script_write(&d, jobs, pwd, &script, err);
	if (!rc)
		rc = worker_brp_script(r, script.ptr, &code, err);
	if (rc == KILN_EBUILD && code == FDI_NOT_MINE) {
		kiln_err_clear(err);
		rc = KILN_OK;
		worker_build_log(r->b, "%s is not debugedit 5.0's find-debuginfo: it runs itself\n",
		                 d.o->tool);
		goto out;
	}
	*done = true;
	for (i = 0; !rc && i < d.nfiles; i++)
		if (!d.files[i].skip)
			worker_build_log(r->b, "extracting debug info from %s/%s\n", r->root,
			                 d.files[i].e->rel);
	if (!rc)
		rc = fdi_finish(&d, err);
out:
	fdi_cleanup(&d, jobs);
	kiln_buf_release(&script);
	free(d.symlinks.v);
	return rc;
}
