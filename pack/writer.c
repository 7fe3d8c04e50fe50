/*
 * writer.c - writing v4 and v6 packages (rpm-reference.md sections 2-4, 12).
 *
 * The header holds the payload's digests and the signature header the header's, so the
 * file is written back to front in one pass: placeholders for the lead, the signature
 * header and the main header (their sizes do not depend on the values still unknown), then
 * the payload streamed through cpio -> digests -> compressor -> digests -> file (computing
 * the file digests on the way), then the real main header, then the signature header, then
 * the lead. Nothing depends on the clock, the host or the order files were given in.
 *
 * With pack_write_opts.overlap the payload starts on a thread of its own while the caller
 * finishes the header's inputs (file classes, dependencies) on its thread; the compressed
 * bytes wait in memory until the header's size, and so the payload's offset, is known.
 */
#include "util/util.h"

#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pack/pack.h"
#include "pack/pack_int.h"

#define RPMLIB_FLAGS (RPMTAG_DEP_RPMLIB | RPMTAG_DEP_LESS | RPMTAG_DEP_EQUAL)
#define RESERVED_DEFAULT 4128 /* 32 + %__gpg_reserved_space 4096, like rpmbuild */
#define U32_LIMIT 0xffffffffull
#define SPILL_MAX_DEFAULT (64 * KILN_MIB) /* pack_write_opts.overlap_spill_max */

void pack_write_opts_init(struct pack_write_opts *o)
{
	struct kiln_err err = KILN_ERR_INIT;

	memset(o, 0, sizeof(*o));
	o->format = 4;
	if (pack_compress_parse("w9.gzdio", &o->comp, &err))
		KILN_BUG("default payload mode rejected");
	o->fdigest = UTIL_DIGEST_SHA256;
	o->archnum = 1;
	o->osnum = 1;
	o->rpmlib_deps = true;
}

/* Per-file state computed by the writer. */
struct wfile {
	const struct pack_file *f; /* borrowed */
	uint64_t size;
	uint32_t inode;
	uint32_t nlink;
	bool last;       /* carries its hard-link set's data */
	uint32_t leader; /* index of the first member of its set (itself when none) */
	char *digest;    /* owned (heap): hex, "" for none */
};

struct writer {
	const struct pack_write_opts *o;
	struct pack_header h;   /* main header being built */
	struct pack_header sig; /* signature header being built */
	struct wfile *files;    /* owned, sorted by path */
	size_t n;
	bool large; /* LONGFILESIZES / stripped payload */
	struct util_atomic_file out;
	uint64_t payload_off;
	/* payload accounting */
	struct pack_sink file_sink; /* compressed bytes -> file + digests */
	struct pack_comp *comp;     /* owned */
	struct util_digest cdig[3], udig[3];
	bool cdig_on[3];
	uint64_t csize, usize;
	struct kiln_buf hbuf;                /* encoded main header */
	char zeros[2 * UTIL_DIGEST_MAX + 1]; /* placeholder file digest */
	struct kiln_err *err;
	/* Overlapped payload (opts->overlap). mu guards ready, stop and spill; flushed is the
	 * payload thread's own. */
	bool overlap, flushed;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool ready; /* out.fd is positioned at payload_off */
	bool stop;  /* the caller failed: end the payload */
	struct kiln_buf spill;
	size_t spill_max;
};

static const enum util_digest_algo pdig_algo[3] = {UTIL_DIGEST_SHA256, UTIL_DIGEST_SHA512,
                                                   UTIL_DIGEST_SHA3_256};

/* rpm's ids for file digest algorithms (FILEDIGESTALGO). */
static uint32_t rpm_algo_id(enum util_digest_algo a)
{
	switch (a) {
	case UTIL_DIGEST_MD5:
		return 1;
	case UTIL_DIGEST_SHA1:
		return 2;
	case UTIL_DIGEST_SHA256:
		return 8;
	case UTIL_DIGEST_SHA384:
		return 9;
	case UTIL_DIGEST_SHA512:
		return 10;
	case UTIL_DIGEST_SHA224:
		return 11;
	case UTIL_DIGEST_SHA3_256:
		return 12;
	case UTIL_DIGEST_SHA3_512:
		return 14;
	}
	return 8;
}

static int cmp_files(const void *a, const void *b)
{
	return strcmp(((const struct wfile *)a)->f->path, ((const struct wfile *)b)->f->path);
}

/* ---------------------------------------------------------------------------------------- */
/* Files: sizes, hard-link sets, inodes */

static kiln_rc stat_file(struct wfile *w, struct kiln_err *err)
{
	const struct pack_file *f = w->f;
	struct stat st;

	if (S_ISLNK(f->mode)) {
		if (!f->link || !*f->link)
			return kiln_err_set(err, KILN_EINVAL, "%s: symlink without a target",
			                    f->path);
		w->size = strlen(f->link);
	} else if (S_ISREG(f->mode) && !(f->flags & RPMTAG_FILE_GHOST)) {
		if (!f->src)
			return kiln_err_set(err, KILN_EINVAL, "%s: no source for a regular file",
			                    f->path);
		if (lstat(f->src, &st))
			return kiln_err_sys(err, KILN_EIO, "%s: stat %s", f->path, f->src);
		if (!S_ISREG(st.st_mode))
			return kiln_err_set(err, KILN_EINVAL, "%s: %s is not a regular file",
			                    f->path, f->src);
		w->size = (uint64_t)st.st_size;
	} else {
		w->size = f->size;
	}
	return KILN_OK;
}

/* Binary packages: absolute, normalised paths ("/usr/bin/x": no "//", ".", ".." and no
 * trailing "/"). Source packages: bare file names. */
static kiln_rc check_path(const char *p, bool source, struct kiln_err *err)
{
	const char *c;

	if (!p || !*p)
		return kiln_err_set(err, KILN_EINVAL, "a file has no path");
	if (source) {
		if (strchr(p, '/') || !strcmp(p, ".") || !strcmp(p, ".."))
			return kiln_err_set(err, KILN_EINVAL,
			                    "%s: source package files are bare names", p);
		return KILN_OK;
	}
	if (p[0] != '/' || !p[1])
		return kiln_err_set(err, KILN_EINVAL, "%s: package paths are absolute", p);
	for (c = p; *c; c++) {
		if (c[0] != '/')
			continue;
		if (c[1] == '/' || c[1] == '\0' || (c[1] == '.' && (c[2] == '/' || !c[2])) ||
		    (c[1] == '.' && c[2] == '.' && (c[3] == '/' || !c[3])))
			return kiln_err_set(err, KILN_EINVAL, "%s: path is not normalised", p);
	}
	return KILN_OK;
}

static kiln_rc prepare_files(struct writer *wr, const struct pack_file *files, size_t n,
                             struct kiln_err *err)
{
	size_t i, j;
	kiln_rc rc = KILN_OK;

	if (n > KILN_LIMIT_PACKAGE_FILES)
		return kiln_err_set(err, KILN_ELIMIT, "%zu files exceed %d", n,
		                    (int)KILN_LIMIT_PACKAGE_FILES);
	wr->files = kiln_calloc(n ? n : 1, sizeof(*wr->files));
	if (!wr->files)
		return kiln_err_set(err, KILN_ENOMEM, "out of memory");
	wr->n = n;
	for (i = 0; i < n; i++) {
		rc = check_path(files[i].path, wr->o->source, err);
		if (rc)
			return rc;
		wr->files[i].f = &files[i];
	}
	qsort(wr->files, n, sizeof(*wr->files), cmp_files);
	for (i = 0; !rc && i < n; i++) {
		struct wfile *w = &wr->files[i];

		if (i && !strcmp(wr->files[i - 1].f->path, w->f->path))
			return kiln_err_set(err, KILN_EINVAL, "%s is listed twice", w->f->path);
		rc = stat_file(w, err);
		w->inode = (uint32_t)i + 1;
		w->nlink = 1;
		w->last = true;
		w->leader = (uint32_t)i;
		if (w->size >= U32_LIMIT)
			wr->large = true;
	}
	/* Hard-link sets: the caller's non-zero ids; members share the first one's inode, the
	 * last member carries the data. Sets are small, so a scan per set is fine. */
	for (i = 0; !rc && i < n; i++) {
		struct wfile *w = &wr->files[i];

		if (!w->f->hardlink || w->leader != i)
			continue;
		for (j = i + 1; j < n; j++) {
			struct wfile *m = &wr->files[j];

			if (m->f->hardlink != w->f->hardlink)
				continue;
			if (!S_ISREG(m->f->mode) || !S_ISREG(w->f->mode) ||
			    ((m->f->flags ^ w->f->flags) & RPMTAG_FILE_GHOST))
				return kiln_err_set(
				    err, KILN_EINVAL,
				    "%s and %s: a hard-link set must be regular files", w->f->path,
				    m->f->path);
			m->leader = (uint32_t)i;
			m->inode = w->inode;
		}
	}
	for (i = 0; i < n; i++) {
		struct wfile *w = &wr->files[i];
		size_t cnt = 0, lastj = i;

		if (!w->f->hardlink || w->leader != i)
			continue;
		for (j = i; j < n; j++) {
			if (wr->files[j].leader == i) {
				cnt++;
				lastj = j;
			}
		}
		for (j = i; j < n; j++) {
			if (wr->files[j].leader == i) {
				wr->files[j].nlink = (uint32_t)cnt;
				wr->files[j].last = j == lastj;
			}
		}
	}
	return rc;
}

static bool in_payload(const struct wfile *w)
{
	return !(w->f->flags & RPMTAG_FILE_GHOST);
}

/* ---------------------------------------------------------------------------------------- */
/* Header tags */

static const char *or_empty(const char *s)
{
	return s ? s : "";
}

static kiln_rc put_u32s(struct pack_header *h, uint32_t tag, const uint32_t *v, size_t n,
                        struct kiln_err *err)
{
	return pack_header_put(h, tag, RPMTAG_TYPE_INT32, v, (uint32_t)n, err);
}

/* A string dictionary in order of first appearance, for CLASSDICT / MIMEDICT. */
static kiln_rc dict_tags(struct writer *wr, uint32_t idx_tag, uint32_t dict_tag, bool mime,
                         struct kiln_err *err)
{
	const char **dict = kiln_calloc(wr->n + 1, sizeof(*dict));
	uint32_t *idx = kiln_calloc(wr->n + 1, sizeof(*idx));
	size_t nd = 0, i, j;
	kiln_rc rc;

	if (!dict || !idx) {
		free(dict);
		free(idx);
		return kiln_err_set(err, KILN_ENOMEM, "out of memory");
	}
	for (i = 0; i < wr->n; i++) {
		const char *s = or_empty(mime ? wr->files[i].f->mime : wr->files[i].f->fclass);

		for (j = 0; j < nd && strcmp(dict[j], s); j++)
			;
		if (j == nd)
			dict[nd++] = s;
		idx[i] = (uint32_t)j;
	}
	rc = put_u32s(&wr->h, idx_tag, idx, wr->n, err);
	if (!rc)
		rc = pack_header_put_strings(&wr->h, dict_tag, dict, (uint32_t)nd, err);
	free(dict);
	free(idx);
	return rc;
}

/* DIRNAMES (with trailing '/', in order of first appearance), BASENAMES, DIRINDEXES. */
static kiln_rc name_tags(struct writer *wr, struct kiln_err *err)
{
	const char **base = kiln_calloc(wr->n, sizeof(*base));
	char **dirs = kiln_calloc(wr->n, sizeof(*dirs));
	uint32_t *idx = kiln_calloc(wr->n, sizeof(*idx));
	size_t nd = 0, i, j;
	kiln_rc rc = KILN_OK;

	if (!base || !dirs || !idx)
		rc = kiln_err_set(err, KILN_ENOMEM, "out of memory");
	for (i = 0; !rc && i < wr->n; i++) {
		const char *p = wr->files[i].f->path, *slash = strrchr(p, '/');
		size_t dl = slash ? (size_t)(slash - p) + 1 : 0;

		base[i] = slash ? slash + 1 : p;
		for (j = 0; j < nd && (strlen(dirs[j]) != dl || strncmp(dirs[j], p, dl)); j++)
			;
		if (j == nd && !(dirs[nd++] = kiln_strndup(p, dl)))
			rc = kiln_err_set(err, KILN_ENOMEM, "out of memory");
		idx[i] = (uint32_t)j;
	}
	if (!rc)
		rc = pack_header_put_strings(&wr->h, RPMTAG_BASENAMES, base, (uint32_t)wr->n, err);
	if (!rc)
		rc = pack_header_put_strings(&wr->h, RPMTAG_DIRNAMES, (const char *const *)dirs,
		                             (uint32_t)nd, err);
	if (!rc)
		rc = put_u32s(&wr->h, RPMTAG_DIRINDEXES, idx, wr->n, err);
	for (i = 0; dirs && i < nd; i++)
		free(dirs[i]);
	free(dirs);
	free(base);
	free(idx);
	return rc;
}

/* Every per-file array. Digests are placeholders of the final length until the payload has
 * been written (the header's size does not change when they are filled in). */
static kiln_rc file_tags(struct writer *wr, struct kiln_err *err)
{
	size_t n = wr->n, i;
	uint16_t *modes = kiln_calloc(n, sizeof(*modes)), *rdevs = kiln_calloc(n, sizeof(*rdevs));
	uint32_t *u32[7];
	uint64_t *sizes = kiln_calloc(n, sizeof(*sizes));
	const char **s[6];
	bool caps = false;
	kiln_rc rc = KILN_OK;
	size_t k;

	for (k = 0; k < 7; k++)
		u32[k] = kiln_calloc(n, sizeof(*u32[k]));
	for (k = 0; k < 6; k++)
		s[k] = kiln_calloc(n, sizeof(*s[k]));
	for (k = 0; k < 7; k++)
		rc = rc || !u32[k] ? KILN_ENOMEM : KILN_OK;
	for (k = 0; k < 6; k++)
		rc = rc || !s[k] ? KILN_ENOMEM : KILN_OK;
	if (rc || !modes || !rdevs || !sizes) {
		rc = kiln_err_set(err, KILN_ENOMEM, "out of memory");
		goto out;
	}
	for (i = 0; i < n; i++) {
		const struct wfile *w = &wr->files[i];
		const struct pack_file *f = w->f;
		bool digest = S_ISREG(f->mode) && in_payload(w);

		modes[i] = (uint16_t)f->mode;
		rdevs[i] = (uint16_t)f->rdev;
		sizes[i] = w->size;
		u32[0][i] = (uint32_t)w->size;
		u32[1][i] = f->mtime;
		u32[2][i] = f->flags & 0xffff;
		u32[3][i] = f->verify;
		u32[4][i] = f->absent && (f->flags & RPMTAG_FILE_GHOST) ? 0 : 1; /* FILEDEVICES */
		u32[5][i] = w->inode;
		u32[6][i] = f->color;
		(void)digest;
		s[1][i] = S_ISLNK(f->mode) ? f->link : "";
		s[2][i] = f->user ? f->user : "root";
		s[3][i] = f->group ? f->group : "root";
		s[4][i] = or_empty(f->lang);
		s[5][i] = or_empty(f->caps);
		caps |= f->caps && *f->caps;
	}
	if (wr->large || wr->o->format == 6)
		rc = pack_header_put(&wr->h, RPMTAG_LONGFILESIZES, RPMTAG_TYPE_INT64, sizes,
		                     (uint32_t)n, err);
	else
		rc = put_u32s(&wr->h, RPMTAG_FILESIZES, u32[0], n, err);
	if (!rc)
		rc = pack_header_put(&wr->h, RPMTAG_FILEMODES, RPMTAG_TYPE_INT16, modes,
		                     (uint32_t)n, err);
	if (!rc)
		rc = pack_header_put(&wr->h, RPMTAG_FILERDEVS, RPMTAG_TYPE_INT16, rdevs,
		                     (uint32_t)n, err);
	if (!rc)
		rc = put_u32s(&wr->h, RPMTAG_FILEMTIMES, u32[1], n, err);
	if (!rc)
		rc = put_u32s(&wr->h, RPMTAG_FILEFLAGS, u32[2], n, err);
	if (!rc)
		rc = put_u32s(&wr->h, RPMTAG_FILEVERIFYFLAGS, u32[3], n, err);
	if (!rc)
		rc = put_u32s(&wr->h, RPMTAG_FILEDEVICES, u32[4], n, err);
	if (!rc)
		rc = put_u32s(&wr->h, RPMTAG_FILEINODES, u32[5], n, err);
	/* rpmbuild classifies the files of binary packages only (colors, class or MIME). */
	if (!rc && !wr->o->source)
		rc = put_u32s(&wr->h, RPMTAG_FILECOLORS, u32[6], n, err);
	if (!rc)
		rc = pack_header_put_strings(&wr->h, RPMTAG_FILELINKTOS, s[1], (uint32_t)n, err);
	if (!rc)
		rc = pack_header_put_strings(&wr->h, RPMTAG_FILEUSERNAME, s[2], (uint32_t)n, err);
	if (!rc)
		rc = pack_header_put_strings(&wr->h, RPMTAG_FILEGROUPNAME, s[3], (uint32_t)n, err);
	if (!rc)
		rc = pack_header_put_strings(&wr->h, RPMTAG_FILELANGS, s[4], (uint32_t)n, err);
	if (!rc && caps)
		rc = pack_header_put_strings(&wr->h, RPMTAG_FILECAPS, s[5], (uint32_t)n, err);
	if (!rc)
		rc = name_tags(wr, err);
	if (!rc && !wr->o->source && wr->o->format == 6)
		rc = dict_tags(wr, RPMTAG_FILEMIMEINDEX, RPMTAG_MIMEDICT, true, err);
	else if (!rc && !wr->o->source)
		rc = dict_tags(wr, RPMTAG_FILECLASS, RPMTAG_CLASSDICT, false, err);
out:
	free(modes);
	free(rdevs);
	free(sizes);
	for (k = 0; k < 7; k++)
		free(u32[k]);
	for (k = 0; k < 6; k++)
		free(s[k]);
	return rc;
}

/* Where dependency d is in the header's set of its kind, -1 when it is not. */
static long dep_index(const struct pack_header *h, const struct pack_filedep *d)
{
	static const uint32_t tags[][3] = {
	    [PACK_DEP_REQUIRE] = {RPMTAG_REQUIRENAME, RPMTAG_REQUIREFLAGS, RPMTAG_REQUIREVERSION},
	    [PACK_DEP_PROVIDE] = {RPMTAG_PROVIDENAME, RPMTAG_PROVIDEFLAGS, RPMTAG_PROVIDEVERSION},
	};
	const uint32_t sense = RPMTAG_DEP_LESS | RPMTAG_DEP_GREATER | RPMTAG_DEP_EQUAL;
	const struct pack_entry *en, *ef, *ev;
	uint32_t i;

	if (d->kind != PACK_DEP_REQUIRE && d->kind != PACK_DEP_PROVIDE)
		return -1;
	en = pack_header_get(h, tags[d->kind][0]);
	ef = pack_header_get(h, tags[d->kind][1]);
	ev = pack_header_get(h, tags[d->kind][2]);
	if (!en || !ef || !ev || ef->count != en->count || ev->count != en->count)
		return -1;
	for (i = 0; i < en->count; i++) {
		if (!strcmp(pack_entry_str(en, i), d->name) &&
		    ((uint32_t)pack_entry_num(ef, i) & sense) == (d->flags & sense) &&
		    !strcmp(pack_entry_str(ev, i), d->version ? d->version : ""))
			return (long)i;
	}
	return -1;
}

/* rpmbuild's per-file dependency index: DEPENDSDICT holds (kind letter << 24 | index into
 * the header's dependencies of that kind), FILEDEPENDSX/N each file's first entry and
 * count. Written for every binary package with files, the dictionary only when it is not
 * empty, as rpmbuild does. */
static kiln_rc filedep_tags(struct writer *wr, struct kiln_err *err)
{
	uint32_t *x = kiln_calloc(wr->n, sizeof(*x)), *cnt = kiln_calloc(wr->n, sizeof(*cnt));
	uint32_t *dict = NULL;
	size_t i, k, total = 0, nd = 0, last;
	kiln_rc rc = KILN_OK;

	for (i = 0; i < wr->n; i++)
		total += wr->files[i].f->ndeps;
	dict = kiln_calloc(total ? total : 1, sizeof(*dict));
	if (!x || !cnt || !dict) {
		rc = kiln_err_set(err, KILN_ENOMEM, "out of memory");
		goto out;
	}
	for (i = 0; i < wr->n; i++) {
		const struct pack_file *f = wr->files[i].f;

		/* A file without dependencies keeps index 0, as rpmbuild leaves it. */
		for (k = 0; k < f->ndeps; k++) {
			long at = dep_index(&wr->h, &f->deps[k]);
			uint32_t letter = f->deps[k].kind == PACK_DEP_REQUIRE ? 'R' : 'P';

			if (at < 0 || at > 0xffffff)
				continue;
			if (!cnt[i])
				x[i] = (uint32_t)nd;
			dict[nd++] = letter << 24 | (uint32_t)at;
			cnt[i]++;
		}
	}
	/* rpmbuild leaves all three out when no file has a dependency (a noarch package of
	 * data and scripts without automatic dependencies); otherwise every file has an entry. */
	last = nd ? wr->n : 0;
	if (last)
		rc = put_u32s(&wr->h, RPMTAG_FILEDEPENDSX, x, last, err);
	if (!rc && last)
		rc = put_u32s(&wr->h, RPMTAG_FILEDEPENDSN, cnt, last, err);
	if (!rc && nd)
		rc = put_u32s(&wr->h, RPMTAG_DEPENDSDICT, dict, nd, err);
out:
	free(x);
	free(cnt);
	free(dict);
	return rc;
}

/* FILEDIGESTS from the digests computed while writing the payload, or (placeholders) zeros
 * of the final length: the payload may be running on another thread then. */
static kiln_rc digest_tag(struct writer *wr, bool placeholders, struct kiln_err *err)
{
	const char **d = kiln_calloc(wr->n ? wr->n : 1, sizeof(*d));
	size_t i;
	kiln_rc rc;

	if (!d)
		return kiln_err_set(err, KILN_ENOMEM, "out of memory");
	for (i = 0; i < wr->n; i++) {
		const struct wfile *w = &wr->files[i];
		const char *dg = placeholders ? NULL : wr->files[w->leader].digest;

		if (!dg && S_ISREG(w->f->mode) && in_payload(w))
			dg = wr->zeros;
		d[i] = or_empty(dg);
	}
	rc = pack_header_put_strings(&wr->h, RPMTAG_FILEDIGESTS, d, (uint32_t)wr->n, err);
	free(d);
	return rc;
}

static uint64_t total_size(const struct writer *wr)
{
	uint64_t sum = 0;
	size_t i;

	for (i = 0; i < wr->n; i++) {
		const struct wfile *w = &wr->files[i];

		if ((S_ISREG(w->f->mode) && w->leader == i) || S_ISLNK(w->f->mode))
			sum += w->size;
	}
	return sum;
}

static bool has_hardlinks(const struct writer *wr)
{
	size_t i;

	for (i = 0; i < wr->n; i++) {
		if (wr->files[i].nlink > 1)
			return true;
	}
	return false;
}

static bool has_caps(const struct writer *wr)
{
	return pack_header_get(&wr->h, RPMTAG_FILECAPS) != NULL;
}

/* The rpmlib() requirements that follow from what the writer itself decides. */
static kiln_rc rpmlib_deps(struct writer *wr, struct kiln_err *err)
{
	const struct pack_compress *c = &wr->o->comp;
	bool v4 = wr->o->format == 4;
	struct {
		bool when;
		const char *name, *version;
	} deps[] = {
	    /* rpmbuild adds these three to every v4 package, with files or not. */
	    {v4, "rpmlib(CompressedFileNames)", "3.0.4-1"},
	    {v4 && wr->o->fdigest != UTIL_DIGEST_MD5, "rpmlib(FileDigests)", "4.6.0-1"},
	    {v4 && !wr->o->source, "rpmlib(PayloadFilesHavePrefix)", "4.0-1"},
	    {wr->large || !v4, "rpmlib(LargeFiles)", "4.12.0-1"},
	    {has_hardlinks(wr), "rpmlib(PartialHardlinkSets)", "4.0.4-1"},
	    {has_caps(wr), "rpmlib(FileCaps)", "4.6.1-1"},
	    {c->kind == PACK_COMP_XZ, "rpmlib(PayloadIsXz)", "5.2-1"},
	    {c->kind == PACK_COMP_ZSTD, "rpmlib(PayloadIsZstd)", "5.4.18-1"},
	};
	size_t i;
	kiln_rc rc = KILN_OK;

	for (i = 0; !rc && i < KILN_ARRAY_SIZE(deps); i++) {
		if (deps[i].when)
			rc = pack_deps_add(&wr->h, PACK_DEP_REQUIRE, deps[i].name, deps[i].version,
			                   RPMLIB_FLAGS, err);
	}
	return rc;
}

static bool utf8_valid(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	while (*p) {
		int n = *p < 0x80             ? 0
		        : (*p & 0xe0) == 0xc0 ? 1
		        : (*p & 0xf0) == 0xe0 ? 2
		        : (*p & 0xf8) == 0xf0 ? 3
		                              : -1;

		if (n < 0 || (n == 1 && *p < 0xc2))
			return false;
		for (p++; n > 0; n--, p++) {
			if ((*p & 0xc0) != 0x80)
				return false;
		}
	}
	return true;
}

static bool header_utf8(const struct pack_header *h)
{
	size_t i;
	uint32_t k;

	for (i = 0; i < h->n; i++) {
		const struct pack_entry *e = &h->entries[i];

		for (k = 0; rpmtag_type_is_string(e->type) && k < e->count; k++) {
			if (!utf8_valid(pack_entry_str(e, k)))
				return false;
		}
	}
	return true;
}

/* Payload description, sizes, format tags, with placeholder digests. */
static kiln_rc payload_tags(struct writer *wr, struct kiln_err *err)
{
	static const char zeros[129] = "00000000000000000000000000000000000000000000000000000000"
	                               "000000000000000000000000000000000000000000000000000000"
	                               "000000000000000000";
	const char *z64 = zeros + 64, *z128 = zeros;
	const struct pack_compress *c = &wr->o->comp;
	bool v6 = wr->o->format == 6;
	uint64_t size = total_size(wr);
	kiln_rc rc = pack_header_put_string(&wr->h, RPMTAG_PAYLOADFORMAT, "cpio", err);

	if (!rc && c->name)
		rc = pack_header_put_string(&wr->h, RPMTAG_PAYLOADCOMPRESSOR, c->name, err);
	if (!rc)
		rc = pack_header_put_string(&wr->h, RPMTAG_PAYLOADFLAGS, c->flags, err);
	if (!rc && (v6 || size >= U32_LIMIT))
		rc = pack_header_put_u64(&wr->h, RPMTAG_LONGSIZE, size, err);
	else if (!rc)
		rc = pack_header_put_u32(&wr->h, RPMTAG_SIZE, (uint32_t)size, err);
	if (!rc)
		rc = pack_header_put_strings(&wr->h, RPMTAG_PAYLOADSHA256, &z64, 1, err);
	if (!rc)
		rc = pack_header_put_strings(&wr->h, RPMTAG_PAYLOADSHA256ALT, &z64, 1, err);
	if (!rc && !v6)
		rc = pack_header_put_u32(&wr->h, RPMTAG_PAYLOADSHA256ALGO, 8, err);
	if (v6) {
		if (!rc)
			rc = pack_header_put_string(&wr->h, RPMTAG_PAYLOADSHA512, z128, err);
		if (!rc)
			rc = pack_header_put_string(&wr->h, RPMTAG_PAYLOADSHA512ALT, z128, err);
		if (!rc)
			rc = pack_header_put_string(&wr->h, RPMTAG_PAYLOADSHA3_256, z64, err);
		if (!rc)
			rc = pack_header_put_string(&wr->h, RPMTAG_PAYLOADSHA3_256ALT, z64, err);
		if (!rc)
			rc = pack_header_put_u64(&wr->h, RPMTAG_PAYLOADSIZE, 0, err);
		if (!rc)
			rc = pack_header_put_u64(&wr->h, RPMTAG_PAYLOADSIZEALT, 0, err);
		if (!rc)
			rc = pack_header_put_u32(&wr->h, RPMTAG_RPMFORMAT, 6, err);
	}
	return rc;
}

static kiln_rc build_header(struct writer *wr, const struct pack_header *in, struct kiln_err *err)
{
	static const uint32_t required[] = {RPMTAG_NAME, RPMTAG_VERSION, RPMTAG_RELEASE};
	size_t i;
	kiln_rc rc;

	for (i = 0; i < KILN_ARRAY_SIZE(required); i++) {
		if (!pack_header_get_string(in, required[i]))
			return kiln_err_set(err, KILN_EINVAL, "package header lacks tag %" PRIu32,
			                    required[i]);
	}
	rc = pack_header_copy(&wr->h, in, err);
	if (!rc && !pack_header_get(&wr->h, RPMTAG_HEADERI18NTABLE)) {
		const char *c = "C";

		rc = pack_header_put_strings(&wr->h, RPMTAG_HEADERI18NTABLE, &c, 1, err);
	}
	if (!rc && wr->n)
		rc = file_tags(wr, err);
	if (!rc && wr->n)
		rc = digest_tag(wr, true, err);
	/* Also without files, as rpmbuild does. */
	if (!rc && (wr->o->format == 6 || wr->o->fdigest != UTIL_DIGEST_MD5))
		rc = pack_header_put_u32(&wr->h, RPMTAG_FILEDIGESTALGO, rpm_algo_id(wr->o->fdigest),
		                         err);
	if (!rc)
		rc = payload_tags(wr, err);
	if (!rc && wr->o->rpmlib_deps)
		rc = rpmlib_deps(wr, err);
	if (!rc && wr->n && !wr->o->source)
		rc = filedep_tags(wr, err);
	if (!rc && !pack_header_get(&wr->h, RPMTAG_ENCODING)) {
		if (header_utf8(&wr->h))
			rc = pack_header_put_string(&wr->h, RPMTAG_ENCODING, "utf-8", err);
		else if (wr->o->format == 6)
			rc = kiln_err_set(err, KILN_EINVAL, "v6 packages need UTF-8 strings");
	}
	return rc;
}

/* ---------------------------------------------------------------------------------------- */
/* Payload */

/* The payload thread's output while overlapped: kept until the caller has positioned the
 * file, then the kept bytes and everything after go to the file. */
static kiln_rc spill_write(struct writer *wr, const void *data, size_t len, struct kiln_err *err)
{
	kiln_rc rc = KILN_OK;
	bool ready;

	pthread_mutex_lock(&wr->mu);
	while (!wr->ready && !wr->stop && wr->spill.len + len > wr->spill_max)
		pthread_cond_wait(&wr->cv, &wr->mu);
	ready = wr->ready;
	if (wr->stop) {
		rc = kiln_err_set(err, KILN_ECANCEL, "payload stopped");
	} else if (!ready) {
		kiln_buf_add(&wr->spill, data, len);
		rc = kiln_buf_finish(&wr->spill, err);
	}
	pthread_mutex_unlock(&wr->mu);
	if (rc || !ready)
		return rc;
	/* ready is set once and spill is no longer touched by the caller's thread. */
	wr->flushed = true;
	rc = util_write_all(wr->out.fd, wr->spill.ptr, wr->spill.len, err);
	kiln_buf_reset(&wr->spill);
	return rc ? rc : util_write_all(wr->out.fd, data, len, err);
}

static kiln_rc file_sink_write(struct pack_sink *s, const void *data, size_t len,
                               struct kiln_err *err)
{
	struct writer *wr = (struct writer *)((char *)s - offsetof(struct writer, file_sink));
	size_t i;

	for (i = 0; i < 3; i++) {
		if (wr->cdig_on[i])
			util_digest_update(&wr->cdig[i], data, len);
	}
	wr->csize += len;
	if (wr->overlap && !wr->flushed)
		return spill_write(wr, data, len, err);
	return util_write_all(wr->out.fd, data, len, err);
}

/* Uncompressed archive bytes: digested, counted, compressed. */
static kiln_rc uwrite(struct writer *wr, const void *data, size_t len, struct kiln_err *err)
{
	size_t i;

	for (i = 0; i < 3; i++) {
		if (wr->cdig_on[i])
			util_digest_update(&wr->udig[i], data, len);
	}
	wr->usize += len;
	return pack_comp_write(wr->comp, data, len, err);
}

static kiln_rc upad(struct writer *wr, struct kiln_err *err)
{
	static const char zeros[4];
	size_t pad = (size_t)((4 - wr->usize % 4) % 4);

	return pad ? uwrite(wr, zeros, pad, err) : KILN_OK;
}

static kiln_rc entry_header(struct writer *wr, size_t i, uint64_t data_size, struct kiln_err *err)
{
	struct kiln_buf b = KILN_BUF_INIT(2 * KILN_LIMIT_CPIO_NAME + 256);
	const struct wfile *w = &wr->files[i];
	const char *path = w->f->path;
	kiln_rc rc;

	if (wr->large || wr->o->format == 6) {
		kiln_buf_addf(&b, "07070X%08zx", i);
	} else {
		/* "./usr/bin/x" in binary packages, bare names in source packages. */
		size_t nlen = strlen(path) + (path[0] == '/' ? 2 : 1);

		pack_cpio_newc_header(&b, w->inode, w->f->mode, w->nlink, w->f->mtime,
		                      (uint32_t)data_size, w->f->rdev, (uint32_t)nlen);
		if (path[0] == '/')
			kiln_buf_addch(&b, '.');
		kiln_buf_add(&b, path, strlen(path) + 1);
	}
	rc = kiln_buf_finish(&b, err);
	if (!rc)
		rc = uwrite(wr, b.ptr, b.len, err);
	kiln_buf_release(&b);
	return rc ? rc : upad(wr, err);
}

/* Stream a regular file's contents into the archive, digesting it for FILEDIGESTS. */
static kiln_rc entry_data(struct writer *wr, struct wfile *w, struct kiln_err *err)
{
	struct util_digest d = {NULL, wr->o->fdigest};
	unsigned char md[UTIL_DIGEST_MAX], *buf = NULL;
	uint64_t left = w->size;
	int fd = open(w->f->src, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	kiln_rc rc = fd < 0 ? kiln_err_sys(err, KILN_EIO, "%s: open %s", w->f->path, w->f->src)
	                    : util_digest_init(&d, wr->o->fdigest, err);

	if (!rc && !(buf = kiln_malloc(PACK_IOBUF)))
		rc = kiln_err_set(err, KILN_ENOMEM, "out of memory");
	while (!rc && left) {
		size_t got = 0, want = left < PACK_IOBUF ? (size_t)left : PACK_IOBUF;

		rc = util_read_full(fd, buf, want, &got, err);
		if (!rc && got < want)
			rc = kiln_err_set(err, KILN_EIO, "%s: %s shrank while being packed",
			                  w->f->path, w->f->src);
		if (!rc) {
			util_digest_update(&d, buf, got);
			rc = uwrite(wr, buf, got, err);
			left -= got;
		}
	}
	if (!rc)
		rc = util_digest_final(&d, md, err);
	if (!rc && !(w->digest = kiln_malloc(2 * UTIL_DIGEST_MAX + 1)))
		rc = kiln_err_set(err, KILN_ENOMEM, "out of memory");
	if (!rc)
		util_hex_encode(md, util_digest_size(wr->o->fdigest), w->digest);
	free(buf);
	util_digest_release(&d);
	util_close(fd);
	return rc ? rc : upad(wr, err);
}

static kiln_rc write_entry(struct writer *wr, size_t i, struct kiln_err *err)
{
	struct wfile *w = &wr->files[i];
	uint32_t mode = w->f->mode;
	uint64_t data = S_ISREG(mode) ? (w->last ? w->size : 0) : S_ISLNK(mode) ? w->size : 0;
	kiln_rc rc = entry_header(wr, i, data, err);

	if (rc)
		return rc;
	if (S_ISLNK(mode)) {
		rc = uwrite(wr, w->f->link, w->size, err);
		return rc ? rc : upad(wr, err);
	}
	/* One hard-link set, one content: its digest is kept with the set's first member. */
	if (S_ISREG(mode) && w->last)
		rc = entry_data(wr, &wr->files[w->leader], err);
	return rc;
}

static kiln_rc write_payload(struct writer *wr, struct kiln_err *err)
{
	struct pack_compress comp = wr->o->comp;
	struct kiln_buf t = KILN_BUF_INIT(256);
	size_t i, j;
	kiln_rc rc = KILN_OK;

	for (i = 0; !rc && i < 3; i++) {
		wr->cdig_on[i] = i == 0 || wr->o->format == 6;
		if (wr->cdig_on[i])
			rc = util_digest_init(&wr->cdig[i], pdig_algo[i], err);
		if (!rc && wr->cdig_on[i])
			rc = util_digest_init(&wr->udig[i], pdig_algo[i], err);
	}
	wr->file_sink.write = file_sink_write;
	if (comp.kind == PACK_COMP_ZSTD && !comp.threads && total_size(wr) >= PACK_ZSTD_MT_MIN)
		comp.threads = pack_compress_cpus();
	if (!rc)
		rc = pack_comp_new(&comp, &wr->file_sink, &wr->comp, err);
	/* rpm's order: files outside hard-link sets in header order, then each set. */
	for (i = 0; !rc && i < wr->n; i++) {
		if (in_payload(&wr->files[i]) && wr->files[i].nlink == 1)
			rc = write_entry(wr, i, err);
	}
	for (i = 0; !rc && i < wr->n; i++) {
		if (wr->files[i].nlink == 1 || wr->files[i].leader != i ||
		    !in_payload(&wr->files[i]))
			continue;
		for (j = i; !rc && j < wr->n; j++) {
			if (wr->files[j].leader == i)
				rc = write_entry(wr, j, err);
		}
	}
	if (!rc) {
		pack_cpio_newc_header(&t, 0, 0, 1, 0, 0, 0, 11);
		kiln_buf_add(&t, "TRAILER!!!", 11);
		rc = kiln_buf_finish(&t, err);
	}
	if (!rc)
		rc = uwrite(wr, t.ptr, t.len, err);
	if (!rc)
		rc = upad(wr, err);
	if (!rc)
		rc = pack_comp_finish(wr->comp, err);
	kiln_buf_release(&t);
	return rc;
}

/* ---------------------------------------------------------------------------------------- */
/* Finishing: real payload digests into the header, header digests into the signature. */

static kiln_rc hex_final(struct util_digest *d, char *hex, struct kiln_err *err)
{
	unsigned char md[UTIL_DIGEST_MAX];

	if (util_digest_final(d, md, err))
		return err->code;
	util_hex_encode(md, util_digest_size(d->algo), hex);
	return KILN_OK;
}

static kiln_rc fill_payload_digests(struct writer *wr, struct kiln_err *err)
{
	static const uint32_t ctags[3] = {RPMTAG_PAYLOADSHA256, RPMTAG_PAYLOADSHA512,
	                                  RPMTAG_PAYLOADSHA3_256};
	static const uint32_t utags[3] = {RPMTAG_PAYLOADSHA256ALT, RPMTAG_PAYLOADSHA512ALT,
	                                  RPMTAG_PAYLOADSHA3_256ALT};
	char hex[2 * UTIL_DIGEST_MAX + 1];
	const char *p = hex;
	size_t i;
	kiln_rc rc = KILN_OK;

	for (i = 0; !rc && i < 3; i++) {
		if (!wr->cdig_on[i])
			continue;
		rc = hex_final(&wr->cdig[i], hex, err);
		/* SHA256 digests are string arrays (rpm requires type 8), the v6 ones strings. */
		if (!rc)
			rc = i ? pack_header_put_string(&wr->h, ctags[i], hex, err)
			       : pack_header_put_strings(&wr->h, ctags[i], &p, 1, err);
		if (!rc)
			rc = hex_final(&wr->udig[i], hex, err);
		if (!rc)
			rc = i ? pack_header_put_string(&wr->h, utags[i], hex, err)
			       : pack_header_put_strings(&wr->h, utags[i], &p, 1, err);
	}
	if (!rc && wr->o->format == 6)
		rc = pack_header_put_u64(&wr->h, RPMTAG_PAYLOADSIZE, wr->csize, err);
	if (!rc && wr->o->format == 6)
		rc = pack_header_put_u64(&wr->h, RPMTAG_PAYLOADSIZEALT, wr->usize, err);
	if (!rc && wr->n)
		rc = digest_tag(wr, false, err);
	return rc;
}

/* The signature header with values (or placeholders of the same size). */
static kiln_rc build_sig(struct writer *wr, const char *sha1, const char *sha256, const char *sha3,
                         const unsigned char *md5, uint64_t size, uint64_t usize,
                         struct kiln_err *err)
{
	size_t reserve = wr->o->reserved_space ? wr->o->reserved_space : RESERVED_DEFAULT;
	unsigned char *zeros = kiln_calloc(reserve, 1);
	kiln_rc rc = zeros ? KILN_OK : kiln_err_set(err, KILN_ENOMEM, "out of memory");

	if (!rc)
		rc = pack_header_put_string(&wr->sig, PACK_SIGTAG_SHA256, sha256, err);
	if (wr->o->format == 6) {
		if (!rc)
			rc = pack_header_put_string(&wr->sig, PACK_SIGTAG_SHA3_256, sha3, err);
		if (!rc)
			rc = pack_header_put_bin(&wr->sig, PACK_SIGTAG_RESERVED, zeros, reserve,
			                         err);
		free(zeros);
		return rc;
	}
	if (!rc)
		rc = pack_header_put_string(&wr->sig, PACK_SIGTAG_SHA1, sha1, err);
	if (!rc)
		rc = pack_header_put_bin(&wr->sig, PACK_SIGTAG_MD5, md5, 16, err);
	/* Sizes of 4 GiB and more go in the 64-bit tags instead (section 2.3). */
	pack_header_del(&wr->sig, PACK_SIGTAG_SIZE);
	pack_header_del(&wr->sig, PACK_SIGTAG_LONGSIZE);
	pack_header_del(&wr->sig, PACK_SIGTAG_PAYLOADSIZE);
	pack_header_del(&wr->sig, PACK_SIGTAG_LONGARCHIVESIZE);
	if (!rc)
		rc = size >= U32_LIMIT
		         ? pack_header_put_u64(&wr->sig, PACK_SIGTAG_LONGSIZE, size, err)
		         : pack_header_put_u32(&wr->sig, PACK_SIGTAG_SIZE, (uint32_t)size, err);
	if (!rc)
		rc = usize >= U32_LIMIT
		         ? pack_header_put_u64(&wr->sig, PACK_SIGTAG_LONGARCHIVESIZE, usize, err)
		         : pack_header_put_u32(&wr->sig, PACK_SIGTAG_PAYLOADSIZE, (uint32_t)usize,
		                               err);
	if (!rc && !pack_header_get(&wr->sig, PACK_SIGTAG_RESERVEDSPACE))
		rc = pack_header_put_bin(&wr->sig, PACK_SIGTAG_RESERVEDSPACE, zeros, reserve, err);
	free(zeros);
	return rc;
}

static kiln_rc pwrite_all(int fd, const void *data, size_t len, uint64_t off, struct kiln_err *err)
{
	const char *p = data;

	while (len) {
		ssize_t n = pwrite(fd, p, len, (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return kiln_err_sys(err, KILN_EIO, "write");
		p += n;
		len -= (size_t)n;
		off += (uint64_t)n;
	}
	return KILN_OK;
}

/* MD5 over header + payload: the payload is read back from the file (the header that
 * precedes it was only known once the payload had been written). */
static kiln_rc md5_all(struct writer *wr, unsigned char *md, struct kiln_err *err)
{
	struct util_digest d = {NULL, UTIL_DIGEST_MD5};
	unsigned char *buf = kiln_malloc(PACK_IOBUF);
	uint64_t off = wr->payload_off;
	kiln_rc rc = buf ? util_digest_init(&d, UTIL_DIGEST_MD5, err)
	                 : kiln_err_set(err, KILN_ENOMEM, "out of memory");

	if (!rc)
		util_digest_update(&d, wr->hbuf.ptr, wr->hbuf.len);
	while (!rc) {
		ssize_t n = pread(wr->out.fd, buf, PACK_IOBUF, (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			rc = kiln_err_sys(err, KILN_EIO, "read back the payload");
		if (n <= 0)
			break;
		util_digest_update(&d, buf, (size_t)n);
		off += (uint64_t)n;
	}
	if (!rc)
		rc = util_digest_final(&d, md, err);
	util_digest_release(&d);
	free(buf);
	return rc;
}

static void lead_bytes(const struct writer *wr, unsigned char *l)
{
	const char *n = pack_header_get_string(&wr->h, RPMTAG_NAME);
	const char *v = pack_header_get_string(&wr->h, RPMTAG_VERSION);
	const char *r = pack_header_get_string(&wr->h, RPMTAG_RELEASE);
	uint64_t epoch = 0;
	char epochs[24] = "";
	bool v6 = wr->o->format == 6;
	uint16_t arch = v6 ? 0 : wr->o->archnum, os = v6 ? 0 : wr->o->osnum;

	if (pack_header_get_number(&wr->h, RPMTAG_EPOCH, &epoch))
		snprintf(epochs, sizeof(epochs), "%" PRIu64 ":", epoch);
	memset(l, 0, PACK_LEAD_SIZE);
	memcpy(l, "\xed\xab\xee\xdb", 4);
	l[4] = v6 ? 4 : 3;
	l[7] = wr->o->source ? 1 : 0;
	l[8] = (unsigned char)(arch >> 8);
	l[9] = (unsigned char)arch;
	snprintf((char *)l + 10, 66, "%s-%s%s-%s", n, epochs, v, r);
	l[76] = (unsigned char)(os >> 8);
	l[77] = (unsigned char)os;
	l[79] = 5;
}

static kiln_rc finish_file(struct writer *wr, size_t sig_size, struct kiln_err *err)
{
	char sha1[41], sha256[65], sha3[65];
	unsigned char md5[16], lead[PACK_LEAD_SIZE];
	struct kiln_buf sbuf = KILN_BUF_INIT(KILN_LIMIT_SIG_DATA + 1024);
	size_t hsize = wr->hbuf.len;
	kiln_rc rc = fill_payload_digests(wr, err);

	kiln_buf_reset(&wr->hbuf);
	if (!rc)
		rc = pack_header_write(&wr->h, RPMTAG_HEADERIMMUTABLE, &wr->hbuf, err);
	if (!rc && wr->hbuf.len != hsize)
		KILN_BUG("main header changed size from %zu to %zu", hsize, wr->hbuf.len);
	if (!rc)
		rc = pwrite_all(wr->out.fd, wr->hbuf.ptr, wr->hbuf.len, wr->payload_off - hsize,
		                err);
	if (!rc)
		rc = util_digest_mem_hex(UTIL_DIGEST_SHA1, wr->hbuf.ptr, wr->hbuf.len, sha1, err);
	if (!rc)
		rc = util_digest_mem_hex(UTIL_DIGEST_SHA256, wr->hbuf.ptr, wr->hbuf.len, sha256,
		                         err);
	if (!rc)
		rc = util_digest_mem_hex(UTIL_DIGEST_SHA3_256, wr->hbuf.ptr, wr->hbuf.len, sha3,
		                         err);
	memset(md5, 0, sizeof(md5));
	if (!rc && wr->o->format == 4)
		rc = md5_all(wr, md5, err);
	if (!rc && wr->o->pkgid_out)
		memcpy(wr->o->pkgid_out, md5, 16);
	if (!rc)
		rc = build_sig(wr, sha1, sha256, sha3, md5, hsize + wr->csize, wr->usize, err);
	if (!rc)
		rc = pack_sigheader_fit(&wr->sig, sig_size, &sbuf, err);
	if (!rc)
		rc = pwrite_all(wr->out.fd, sbuf.ptr, sbuf.len, PACK_LEAD_SIZE, err);
	lead_bytes(wr, lead);
	if (!rc)
		rc = pwrite_all(wr->out.fd, lead, sizeof(lead), 0, err);
	kiln_buf_release(&sbuf);
	return rc;
}

static kiln_rc check_opts(const struct pack_write_opts *o, struct kiln_err *err)
{
	if (o->format != 4 && o->format != 6)
		return kiln_err_set(err, KILN_EINVAL, "package format %d: only 4 and 6 exist",
		                    o->format);
	if (o->format == 6 && (o->fdigest == UTIL_DIGEST_MD5 || o->fdigest == UTIL_DIGEST_SHA1 ||
	                       o->fdigest == UTIL_DIGEST_SHA224))
		return kiln_err_set(err, KILN_EINVAL,
		                    "v6 packages need SHA256 or stronger file digests");
	return KILN_OK;
}

/* The main header with placeholders, the signature header with placeholders, and where
 * the payload starts. */
static kiln_rc plan_headers(struct writer *wr, const struct pack_header *hdr, size_t *sig_size,
                            struct kiln_err *err)
{
	char z40[41], z64[65];
	unsigned char z16[16];
	kiln_rc rc;

	memset(z40, '0', 40);
	z40[40] = '\0';
	memset(z64, '0', 64);
	z64[64] = '\0';
	memset(z16, 0, sizeof(z16));
	rc = build_header(wr, hdr, err);
	/* Placeholders fix the sizes of both headers before the payload is placed. */
	if (!rc)
		rc = build_sig(wr, z40, z64, z64, z16, 0, 0, err);
	if (!rc)
		rc = pack_header_write(&wr->h, RPMTAG_HEADERIMMUTABLE, &wr->hbuf, err);
	if (rc)
		return rc;
	*sig_size = pack_header_size(&wr->sig, PACK_SIGTAG_HEADERSIGNATURES);
	wr->payload_off = PACK_LEAD_SIZE + *sig_size + (8 - *sig_size % 8) % 8 + wr->hbuf.len;
	if (lseek(wr->out.fd, (off_t)wr->payload_off, SEEK_SET) < 0)
		return kiln_err_sys(err, KILN_EIO, "seek");
	return KILN_OK;
}

struct payload_job {
	struct writer *wr;
	struct kiln_err err;
	kiln_rc rc;
};

static void *payload_main(void *arg)
{
	struct payload_job *j = arg;

	j->rc = write_payload(j->wr, &j->err);
	return NULL;
}

/* The payload on a thread of its own while the caller's overlap work and the headers run
 * here; its bytes are kept in wr->spill until the file is positioned. */
static kiln_rc write_overlapped(struct writer *wr, const struct pack_header *hdr, size_t *sig_size,
                                struct kiln_err *err)
{
	struct payload_job job = {wr, KILN_ERR_INIT, KILN_OK};
	pthread_t t;
	kiln_rc rc;
	int e;

	wr->overlap = true;
	wr->spill_max = wr->o->overlap_spill_max ? wr->o->overlap_spill_max : SPILL_MAX_DEFAULT;
	kiln_buf_init(&wr->spill, wr->spill_max); /* spill_write waits rather than pass it */
	if (pthread_mutex_init(&wr->mu, NULL))
		return kiln_err_set(err, KILN_ENOMEM, "cannot make a mutex");
	if (pthread_cond_init(&wr->cv, NULL)) {
		pthread_mutex_destroy(&wr->mu);
		return kiln_err_set(err, KILN_ENOMEM, "cannot make a condition variable");
	}
	e = pthread_create(&t, NULL, payload_main, &job);
	if (e) {
		errno = e;
		rc = kiln_err_sys(err, KILN_EIO, "cannot start the payload thread");
		goto out;
	}
	rc = wr->o->overlap(wr->o->overlap_arg, err);
	if (!rc)
		rc = plan_headers(wr, hdr, sig_size, err);
	pthread_mutex_lock(&wr->mu);
	if (rc)
		wr->stop = true;
	else
		wr->ready = true;
	pthread_cond_broadcast(&wr->cv);
	pthread_mutex_unlock(&wr->mu);
	pthread_join(t, NULL);
	if (!rc && job.rc) {
		kiln_err_merge(err, &job.err);
		rc = job.rc;
	}
	/* A payload that ended before the file was positioned is still all in memory. */
	if (!rc && wr->spill.len)
		rc = util_write_all(wr->out.fd, wr->spill.ptr, wr->spill.len, err);
out:
	kiln_err_clear(&job.err);
	kiln_buf_release(&wr->spill);
	pthread_cond_destroy(&wr->cv);
	pthread_mutex_destroy(&wr->mu);
	return rc;
}

kiln_rc pack_write(const char *path, const struct pack_header *hdr, const struct pack_file *files,
                   size_t n, const struct pack_write_opts *opts, struct kiln_err *err)
{
	struct writer wr;
	size_t sig_size = 0, i;
	kiln_rc rc = check_opts(opts, err);

	memset(&wr, 0, sizeof(wr));
	wr.o = opts;
	wr.out.fd = -1;
	wr.err = err;
	pack_header_init(&wr.h);
	pack_header_init(&wr.sig);
	kiln_buf_init(&wr.hbuf, KILN_LIMIT_HEADER_DATA + 16 * KILN_LIMIT_HEADER_TAGS + 16);
	memset(wr.zeros, '0', 2 * util_digest_size(opts->fdigest));
	if (!rc)
		rc = prepare_files(&wr, files, n, err);
	if (!rc)
		rc = util_atomic_open(&wr.out, path, 0644, err);
	wr.out.nosync = opts->nosync;
	if (!rc && opts->overlap) {
		rc = write_overlapped(&wr, hdr, &sig_size, err);
	} else if (!rc) {
		rc = plan_headers(&wr, hdr, &sig_size, err);
		if (!rc)
			rc = write_payload(&wr, err);
	}
	if (!rc)
		rc = finish_file(&wr, sig_size, err);
	if (!rc)
		rc = util_atomic_commit(&wr.out, err);
	if (rc)
		kiln_err_wrap(err, "write %s", path);
	util_atomic_abort(&wr.out);
	pack_comp_free(wr.comp);
	for (i = 0; i < 3; i++) {
		util_digest_release(&wr.cdig[i]);
		util_digest_release(&wr.udig[i]);
	}
	for (i = 0; wr.files && i < wr.n; i++)
		free(wr.files[i].digest);
	free(wr.files);
	pack_header_release(&wr.h);
	pack_header_release(&wr.sig);
	kiln_buf_release(&wr.hbuf);
	return rc;
}
