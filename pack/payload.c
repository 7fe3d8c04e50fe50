/*
 * payload.c - reading a package's payload: decompression, the cpio newc (070701/070702) and
 * stripped (07070X) archive formats, mapping every entry to its header file, and checking
 * the payload digests (rpm-reference.md sections 2.4 and 3).
 *
 * Everything about a file (mode, owner, size, link target) comes from the header, as in rpm;
 * the archive only has to agree with it. Names are checked with util_path_check_relative
 * before anything else sees them.
 */
#include "util/util.h"

#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pack/pack.h"
#include "pack/pack_int.h"
#include "pack/payload_int.h"

/* Decompressed bytes allowed after the cpio trailer (rpm pads it to 4; more is junk). */
#define TRAILING_MAX (1 * KILN_MIB)

/* ---------------------------------------------------------------------------------------- */
/* Compressed input: an fd or memory, digested as it is read. */

static kiln_rc csrc_read(struct pack_src *s, void *buf, size_t len, size_t *got,
                         struct kiln_err *err)
{
	struct pack_payload *pl =
	    (struct pack_payload *)((char *)s - offsetof(struct pack_payload, csrc));
	size_t i;
	kiln_rc rc = KILN_OK;

	*got = 0;
	if (pl->mem) {
		size_t n = pl->memlen - pl->mempos;

		*got = n < len ? n : len;
		memcpy(buf, pl->mem + pl->mempos, *got);
		pl->mempos += *got;
	} else {
		ssize_t n;

		do
			n = read(pl->fd, buf, len);
		while (n < 0 && errno == EINTR);
		if (n < 0)
			return kiln_err_sys(err, KILN_EIO, "payload: read");
		*got = (size_t)n;
	}
	for (i = 0; i < PACK_PDIG_N; i++) {
		if (pl->cdig[i].on)
			util_digest_update(&pl->cdig[i].d, buf, *got);
	}
	pl->csize += *got;
	return rc;
}

/* One block of the archive into buf: decompressed, held to the declared size, digested. The
 * read-ahead thread runs it while it runs; the caller's thread otherwise. */
static kiln_rc decompress_block(struct pack_payload *pl, unsigned char *buf, size_t *got,
                                struct kiln_err *err)
{
	kiln_rc rc;
	size_t i;

	*got = 0;
	rc = pack_decomp_read(pl->dec, buf, PACK_IOBUF, got, err);
	if (rc)
		return rc;
	if (pl->has_umax && *got > pl->umax - pl->usize)
		return kiln_err_set(err, KILN_EFORMAT,
		                    "payload: the archive grows past the %" PRIu64
		                    " bytes the headers declare",
		                    pl->umax);
	for (i = 0; i < PACK_PDIG_N; i++) {
		if (pl->udig[i].on)
			util_digest_update(&pl->udig[i].d, buf, *got);
	}
	pl->usize += *got;
	return KILN_OK;
}

/* ---------------------------------------------------------------------------------------- */
/* Read-ahead: decompression on a thread of its own, a few blocks ahead of the reader, so
 * inflating the next bytes overlaps with whatever the caller does with the last ones
 * (writing files, for the installer). While it runs the thread alone touches the
 * decompressor, the compressed input, the digests and usize; the reader takes blocks from
 * a ring and joins the thread at the end or on an error, before it looks at any of them. */

#define RA_SLOTS 4

struct pack_readahead {
	pthread_t tid;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	unsigned char (*slot)[PACK_IOBUF]; /* owned: RA_SLOTS blocks */
	size_t len[RA_SLOTS];
	size_t head, count; /* the reader's block is slot[head] when held */
	bool held;          /* the reader is on slot[head] */
	bool eof, stop, joined;
	kiln_rc rc; /* the thread's failure, after the blocks before it */
	struct kiln_err err;
};

static void *readahead_main(void *arg)
{
	struct pack_payload *pl = arg;
	struct pack_readahead *ra = pl->ra;
	size_t slot, got = 0;
	bool stop;
	kiln_rc rc;

	for (;;) {
		pthread_mutex_lock(&ra->mu);
		while (ra->count == RA_SLOTS && !ra->stop)
			pthread_cond_wait(&ra->cv, &ra->mu);
		slot = (ra->head + ra->count) % RA_SLOTS;
		stop = ra->stop;
		pthread_mutex_unlock(&ra->mu);
		if (stop)
			break;
		rc = decompress_block(pl, ra->slot[slot], &got, &ra->err);
		pthread_mutex_lock(&ra->mu);
		if (rc) {
			ra->rc = rc;
		} else {
			ra->len[slot] = got;
			ra->count++;
			ra->eof = got == 0;
		}
		pthread_cond_broadcast(&ra->cv);
		pthread_mutex_unlock(&ra->mu);
		if (rc || !got)
			break;
	}
	return NULL;
}

static void readahead_join(struct pack_readahead *ra)
{
	if (ra->joined)
		return;
	pthread_mutex_lock(&ra->mu);
	ra->stop = true;
	pthread_cond_broadcast(&ra->cv);
	pthread_mutex_unlock(&ra->mu);
	pthread_join(ra->tid, NULL);
	ra->joined = true;
}

static void readahead_free(struct pack_readahead *ra)
{
	if (!ra)
		return;
	readahead_join(ra);
	pthread_cond_destroy(&ra->cv);
	pthread_mutex_destroy(&ra->mu);
	free(ra->slot);
	free(ra);
}

/* The next block from the thread: *got 0 at the end of the archive. */
static kiln_rc readahead_take(struct pack_payload *pl, size_t *got, struct kiln_err *err)
{
	struct pack_readahead *ra = pl->ra;
	kiln_rc rc = KILN_OK;

	pthread_mutex_lock(&ra->mu);
	if (ra->held) {
		ra->head = (ra->head + 1) % RA_SLOTS;
		ra->count--;
		ra->held = false;
		pthread_cond_broadcast(&ra->cv);
	}
	while (!ra->count && !ra->rc)
		pthread_cond_wait(&ra->cv, &ra->mu);
	if (ra->count) {
		ra->held = true;
		*got = ra->len[ra->head];
		pl->ucur = ra->slot[ra->head];
	} else {
		rc = ra->rc;
	}
	pthread_mutex_unlock(&ra->mu);
	if (rc && err)
		*err = ra->err;
	/* At the end or on an error the thread is done: join it before anything reads the
	 * state it wrote. */
	if (rc || !*got)
		readahead_join(ra);
	return rc;
}

kiln_rc pack_payload_readahead(struct pack_payload *pl, struct kiln_err *err)
{
	struct pack_readahead *ra;
	int e;

	if (pl->ra || pl->off || pl->ulen || pl->ueof)
		return kiln_err_set(err, KILN_EINVAL, "payload: read-ahead must start first");
	ra = kiln_calloc(1, sizeof(*ra));
	if (ra)
		ra->slot = kiln_malloc(RA_SLOTS * sizeof(*ra->slot));
	if (!ra || !ra->slot) {
		if (ra)
			free(ra);
		return kiln_err_set(err, KILN_ENOMEM, "out of memory");
	}
	pthread_mutex_init(&ra->mu, NULL);
	pthread_cond_init(&ra->cv, NULL);
	pl->ra = ra;
	e = pthread_create(&ra->tid, NULL, readahead_main, pl);
	if (e) {
		/* Nothing read yet: go on without it. */
		ra->joined = true;
		pl->ra = NULL;
		readahead_free(ra);
	}
	return KILN_OK;
}

/* ---------------------------------------------------------------------------------------- */
/* The uncompressed stream */

static kiln_rc ufill(struct pack_payload *pl, struct kiln_err *err)
{
	size_t got = 0;
	kiln_rc rc;

	if (pl->upos < pl->ulen || pl->ueof)
		return KILN_OK;
	if (pl->ra) {
		rc = readahead_take(pl, &got, err);
	} else {
		pl->ucur = pl->ubuf;
		rc = decompress_block(pl, pl->ubuf, &got, err);
	}
	if (rc)
		return rc;
	pl->upos = 0;
	pl->ulen = got;
	pl->ueof = got == 0;
	return KILN_OK;
}

/* Read exactly len bytes of the archive (buf NULL: skip them). */
kiln_rc pack_payload_uread(struct pack_payload *pl, void *buf, size_t len, const char *what,
                           struct kiln_err *err)
{
	uint64_t start = pl->off;
	kiln_rc rc;

	while (len) {
		size_t n;

		rc = ufill(pl, err);
		if (rc)
			return rc;
		if (pl->ueof)
			return kiln_err_set(err, KILN_EFORMAT,
			                    "payload: truncated in %s at offset %" PRIu64, what,
			                    start);
		n = pl->ulen - pl->upos < len ? pl->ulen - pl->upos : len;
		if (buf) {
			memcpy(buf, pl->ucur + pl->upos, n);
			buf = (char *)buf + n;
		}
		pl->upos += n;
		pl->off += n;
		len -= n;
	}
	return KILN_OK;
}

static kiln_rc skip_pad(struct pack_payload *pl, struct kiln_err *err)
{
	return pack_payload_uread(pl, NULL, (size_t)((4 - pl->off % 4) % 4), "padding", err);
}

/* ---------------------------------------------------------------------------------------- */
/* Header side: per-file arrays, the name index and hard-link sets. */

static const struct pack_entry *arr(const struct pack_header *h, uint32_t tag, uint32_t n,
                                    bool strings)
{
	const struct pack_entry *e = pack_header_get(h, tag);

	if (!e || e->count != n ||
	    (strings ? !rpmtag_type_is_string(e->type) : !rpmtag_type_is_number(e->type)))
		return NULL;
	return e;
}

static const char *strip_slash(const char *s)
{
	while (*s == '/')
		s++;
	return s;
}

static int by_name_ctx_cmp(const void *a, const void *b, void *ctx)
{
	const char *const *names = ctx;

	return strcmp(strip_slash(names[*(const uint32_t *)a]),
	              strip_slash(names[*(const uint32_t *)b]));
}

static kiln_rc index_files(struct pack_payload *pl, struct kiln_err *err)
{
	const struct pack_header *h = &pl->pkg->hdr;
	uint32_t n = pl->fl.n, i;

	pl->modes = arr(h, RPMTAG_FILEMODES, n, false);
	pl->flags = arr(h, RPMTAG_FILEFLAGS, n, false);
	pl->links = arr(h, RPMTAG_FILELINKTOS, n, true);
	pl->users = arr(h, RPMTAG_FILEUSERNAME, n, true);
	pl->groups = arr(h, RPMTAG_FILEGROUPNAME, n, true);
	pl->mtimes = arr(h, RPMTAG_FILEMTIMES, n, false);
	pl->digests = arr(h, RPMTAG_FILEDIGESTS, n, true);
	pl->rdevs = arr(h, RPMTAG_FILERDEVS, n, false);
	pl->inodes = arr(h, RPMTAG_FILEINODES, n, false);
	pl->devices = arr(h, RPMTAG_FILEDEVICES, n, false);
	if (n && !pl->modes)
		return kiln_err_set(err, KILN_EFORMAT,
		                    "header: FILEMODES missing or not one per file");
	pl->sorted = kiln_calloc(n ? n : 1, sizeof(*pl->sorted));
	pl->seen = kiln_calloc(n ? n : 1, 1);
	pl->nlink = kiln_calloc(n ? n : 1, sizeof(*pl->nlink));
	pl->last = kiln_calloc(n ? n : 1, 1);
	if (!pl->sorted || !pl->seen || !pl->nlink || !pl->last)
		return kiln_err_set(err, KILN_ENOMEM, "out of memory");
	for (i = 0; i < n; i++)
		pl->sorted[i] = i;
	qsort_r(pl->sorted, n, sizeof(*pl->sorted), by_name_ctx_cmp, (void *)pl->fl.names);
	for (i = 1; i < n; i++) {
		if (!by_name_ctx_cmp(&pl->sorted[i - 1], &pl->sorted[i], (void *)pl->fl.names))
			return kiln_err_set(err, KILN_EFORMAT, "header: file '%s' is listed twice",
			                    pl->fl.names[pl->sorted[i]]);
	}
	return pack_payload_linksets(pl, err);
}

uint32_t pack_payload_mode(const struct pack_payload *pl, uint32_t i)
{
	return (uint32_t)pack_entry_num(pl->modes, i);
}

bool pack_payload_is_ghost(const struct pack_payload *pl, uint32_t i)
{
	return pl->flags && (pack_entry_num(pl->flags, i) & RPMTAG_FILE_GHOST);
}

static int cmp_key(const void *a, const void *b, void *ctx)
{
	const uint64_t *keys = ctx;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	if (keys[x] != keys[y])
		return keys[x] < keys[y] ? -1 : 1;
	return x < y ? -1 : x > y;
}

/* Hard-link sets: regular non-ghost files with equal (device, inode), inode > 0. The member
 * with the highest index is last in the payload and carries the data. */
kiln_rc pack_payload_linksets(struct pack_payload *pl, struct kiln_err *err)
{
	uint32_t n = pl->fl.n, i, j, k;
	uint64_t *keys;
	uint32_t *order;

	for (i = 0; i < n; i++) {
		pl->nlink[i] = 1;
		pl->last[i] = 1;
	}
	if (!pl->inodes || !n)
		return KILN_OK;
	keys = kiln_calloc(n, sizeof(*keys));
	order = kiln_calloc(n, sizeof(*order));
	if (!keys || !order) {
		free(keys);
		free(order);
		return kiln_err_set(err, KILN_ENOMEM, "out of memory");
	}
	for (i = 0; i < n; i++) {
		uint64_t ino = pack_entry_num(pl->inodes, i);
		uint64_t dev = pl->devices ? pack_entry_num(pl->devices, i) : 0;
		bool linkable =
		    S_ISREG(pack_payload_mode(pl, i)) && !pack_payload_is_ghost(pl, i) && ino;

		keys[i] = linkable ? ((dev & 0xffffffff) << 32) | (ino & 0xffffffff) : 0;
		order[i] = i;
	}
	qsort_r(order, n, sizeof(*order), cmp_key, keys);
	for (i = 0; i < n; i = j) {
		for (j = i + 1; j < n && keys[order[j]] == keys[order[i]]; j++)
			;
		if (!keys[order[i]] || j - i == 1)
			continue;
		for (k = i; k < j; k++) {
			pl->nlink[order[k]] = j - i;
			pl->last[order[k]] = k == j - 1;
		}
	}
	free(keys);
	free(order);
	return KILN_OK;
}

static int64_t find_file(const struct pack_payload *pl, const char *name)
{
	size_t lo = 0, hi = pl->fl.n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(strip_slash(pl->fl.names[pl->sorted[mid]]), name);

		if (!c)
			return pl->sorted[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

/* The data size the header implies for file i in the payload. */
uint64_t pack_payload_data_size(const struct pack_payload *pl, uint32_t i)
{
	uint32_t mode = pack_payload_mode(pl, i);

	if (S_ISREG(mode))
		return pl->last[i] ? pl->fl.sizes[i] : 0;
	if (S_ISLNK(mode))
		return pl->links ? strlen(pack_entry_str(pl->links, i)) : 0;
	return 0;
}

static void fill_info(struct pack_payload *pl, uint32_t i)
{
	struct pack_file_info *fi = &pl->cur;

	memset(fi, 0, sizeof(*fi));
	fi->index = i;
	fi->path = pl->fl.names[i];
	fi->mode = pack_payload_mode(pl, i);
	fi->user = pl->users ? pack_entry_str(pl->users, i) : "root";
	fi->group = pl->groups ? pack_entry_str(pl->groups, i) : "root";
	fi->mtime = pl->mtimes ? (uint32_t)pack_entry_num(pl->mtimes, i) : 0;
	fi->size = pl->fl.sizes[i];
	fi->flags = pl->flags ? (uint32_t)pack_entry_num(pl->flags, i) : 0;
	fi->link = pl->links ? pack_entry_str(pl->links, i) : "";
	fi->digest = pl->digests ? pack_entry_str(pl->digests, i) : "";
	fi->rdev = pl->rdevs ? (uint32_t)pack_entry_num(pl->rdevs, i) : 0;
	fi->inode = pl->inodes ? (uint32_t)pack_entry_num(pl->inodes, i) : 0;
	fi->nlink = pl->nlink[i];
	fi->link_data = pl->last[i];
	fi->data_size = pack_payload_data_size(pl, i);
}

/* ---------------------------------------------------------------------------------------- */
/* Digests */

static const struct {
	uint32_t ctag, utag;
	enum util_digest_algo algo;
	const char *name;
} pdigs[PACK_PDIG_N] = {
    {RPMTAG_PAYLOADSHA256, RPMTAG_PAYLOADSHA256ALT, UTIL_DIGEST_SHA256, "SHA256"},
    {RPMTAG_PAYLOADSHA512, RPMTAG_PAYLOADSHA512ALT, UTIL_DIGEST_SHA512, "SHA512"},
    {RPMTAG_PAYLOADSHA3_256, RPMTAG_PAYLOADSHA3_256ALT, UTIL_DIGEST_SHA3_256, "SHA3-256"},
};

static kiln_rc digests_start(struct pack_payload *pl, struct kiln_err *err)
{
	const struct pack_header *h = &pl->pkg->hdr;
	size_t i;

	for (i = 0; i < PACK_PDIG_N; i++) {
		pl->cdig[i].want = pack_header_get_string(h, pdigs[i].ctag);
		pl->udig[i].want = pack_header_get_string(h, pdigs[i].utag);
		pl->cdig[i].on = pl->cdig[i].want != NULL;
		pl->udig[i].on = pl->udig[i].want != NULL;
		if (pl->cdig[i].on && util_digest_init(&pl->cdig[i].d, pdigs[i].algo, err))
			return err->code;
		if (pl->udig[i].on && util_digest_init(&pl->udig[i].d, pdigs[i].algo, err))
			return err->code;
	}
	return KILN_OK;
}

static kiln_rc digest_check(struct pack_pdig *d, const char *what, const char *name,
                            struct kiln_err *err)
{
	unsigned char md[UTIL_DIGEST_MAX];
	char hex[2 * UTIL_DIGEST_MAX + 1];

	if (!d->on)
		return KILN_OK;
	if (util_digest_final(&d->d, md, err))
		return err->code;
	util_hex_encode(md, util_digest_size(d->d.algo), hex);
	if (strcasecmp(hex, d->want))
		return kiln_err_set(err, KILN_EDIGEST,
		                    "payload: %s %s digest does not match (expected %s, got %s)",
		                    what, name, d->want, hex);
	return KILN_OK;
}

/* The archive's size as the headers state it (v6 PAYLOADSIZEALT, else the signature's
 * LONGARCHIVESIZE or PAYLOADSIZE); false when they do not. */
static bool declared_usize(const struct pack_package *p, uint64_t *out)
{
	return pack_header_get_number(&p->hdr, RPMTAG_PAYLOADSIZEALT, out) ||
	       pack_header_get_number(&p->sig, PACK_SIGTAG_LONGARCHIVESIZE, out) ||
	       pack_header_get_number(&p->sig, PACK_SIGTAG_PAYLOADSIZE, out);
}

/* The sizes the headers state, once both streams are drained: the archive's (v6
 * PAYLOADSIZEALT, else the signature's PAYLOADSIZE or LONGARCHIVESIZE) and the compressed
 * payload's (v6 PAYLOADSIZE). */
static kiln_rc sizes_check(const struct pack_payload *pl, struct kiln_err *err)
{
	const struct pack_package *p = pl->pkg;
	uint64_t want;

	if (pack_header_get_number(&p->hdr, RPMTAG_PAYLOADSIZE, &want) && want != pl->csize)
		return kiln_err_set(err, KILN_EFORMAT,
		                    "payload: %" PRIu64 " compressed bytes, the header's "
		                    "PAYLOADSIZE says %" PRIu64,
		                    pl->csize, want);
	if (declared_usize(p, &want)) {
		if (want != pl->usize)
			return kiln_err_set(err, KILN_EFORMAT,
			                    "payload: archive of %" PRIu64 " bytes, the headers "
			                    "say %" PRIu64,
			                    pl->usize, want);
	}
	return KILN_OK;
}

/* After the trailer: drain both streams to their ends and compare every digest. */
static kiln_rc finish(struct pack_payload *pl, struct kiln_err *err)
{
	unsigned char junk[4096];
	size_t got, i;
	uint64_t extra = 0;
	kiln_rc rc = KILN_OK;

	pl->off += pl->ulen - pl->upos;
	extra = pl->ulen - pl->upos;
	pl->upos = pl->ulen;
	while (!rc && !pl->ueof) {
		rc = ufill(pl, err);
		extra += pl->ulen;
		pl->upos = pl->ulen;
		if (!rc && extra > TRAILING_MAX)
			rc = kiln_err_set(err, KILN_EFORMAT,
			                  "payload: more than %zu bytes after the "
			                  "cpio trailer",
			                  (size_t)TRAILING_MAX);
	}
	/* The compressed stream may have bytes the decompressor did not need. */
	do
		rc = rc ? rc : csrc_read(&pl->csrc, junk, sizeof(junk), &got, err);
	while (!rc && got);
	for (i = 0; !rc && i < PACK_PDIG_N; i++) {
		rc = digest_check(&pl->cdig[i], "compressed", pdigs[i].name, err);
		if (!rc)
			rc = digest_check(&pl->udig[i], "uncompressed", pdigs[i].name, err);
	}
	if (!rc)
		rc = sizes_check(pl, err);
	for (i = 0; !rc && i < pl->fl.n; i++) {
		if (!pl->seen[i] && !pack_payload_is_ghost(pl, i))
			rc = kiln_err_set(err, KILN_EFORMAT, "payload: file '%s' is missing",
			                  pl->fl.names[i]);
	}
	pl->done = true;
	return rc;
}

/* ---------------------------------------------------------------------------------------- */
/* Entries */

static kiln_rc hex_field(const char *p, const char *what, uint64_t off, uint32_t *out,
                         struct kiln_err *err)
{
	uint64_t v;

	if (util_parse_u64(p, 8, 16, UINT32_MAX, &v, NULL))
		return kiln_err_set(err, KILN_EFORMAT,
		                    "payload: bad cpio %s field at offset %" PRIu64, what, off);
	*out = (uint32_t)v;
	return KILN_OK;
}

/* Map a name from the archive to its header file; checks it cannot escape. */
static kiln_rc map_name(struct pack_payload *pl, const char *name, size_t len, uint64_t off,
                        uint32_t *idx, struct kiln_err *err)
{
	struct kiln_buf clean = KILN_BUF_INIT(KILN_LIMIT_CPIO_NAME);
	const char *n = name;
	int64_t i;
	kiln_rc rc;

	while (len && *n == '/') {
		n++;
		len--;
	}
	rc = util_path_check_relative(n, len, &clean, err);
	if (rc) {
		kiln_err_wrap(err, "payload: entry at offset %" PRIu64, off);
		goto out;
	}
	i = find_file(pl, clean.ptr);
	if (i < 0) {
		rc = kiln_err_set(err, KILN_EFORMAT,
		                  "payload: entry '%s' at offset %" PRIu64 " is not in the header",
		                  clean.ptr, off);
		goto out;
	}
	*idx = (uint32_t)i;
out:
	kiln_buf_release(&clean);
	return rc;
}

/* A stripped entry takes its name from the header, which is outside input too: the name
 * must be a clean relative path below "/" (what a newc name is mapped to), so that readers,
 * converters and extraction never see ".." or empty components. */
static kiln_rc check_header_name(struct pack_payload *pl, uint32_t i, uint64_t off,
                                 struct kiln_err *err)
{
	struct kiln_buf clean = KILN_BUF_INIT(KILN_LIMIT_CPIO_NAME);
	const char *n = strip_slash(pl->fl.names[i]);
	kiln_rc rc = util_path_check_relative(n, strlen(n), &clean, err);

	if (!rc && strcmp(clean.ptr, n))
		rc = kiln_err_set(err, KILN_EPRIV, "name '%s' is not a normalised path", n);
	if (rc)
		kiln_err_wrap(err,
		              "payload: stripped entry at offset %" PRIu64 " (file %" PRIu32 ")",
		              off, i);
	kiln_buf_release(&clean);
	return rc;
}

static kiln_rc accept_entry(struct pack_payload *pl, uint32_t i, uint64_t off, struct kiln_err *err)
{
	if (pl->seen[i])
		return kiln_err_set(err, KILN_EFORMAT,
		                    "payload: file '%s' appears twice (again at offset %" PRIu64
		                    ")",
		                    pl->fl.names[i], off);
	if (pack_payload_is_ghost(pl, i))
		return kiln_err_set(err, KILN_EFORMAT,
		                    "payload: ghost file '%s' has an entry at offset %" PRIu64,
		                    pl->fl.names[i], off);
	pl->seen[i] = 1;
	fill_info(pl, i);
	pl->data_left = pl->cur.data_size;
	return KILN_OK;
}

static kiln_rc read_newc(struct pack_payload *pl, uint64_t off, struct pack_file_info *fi,
                         bool *end, struct kiln_err *err)
{
	char h[104], *name = NULL;
	uint32_t mode = 0, fsize = 0, nsize = 0, idx = 0;
	kiln_rc rc = pack_payload_uread(pl, h, sizeof(h), "cpio header", err);

	if (!rc)
		rc = hex_field(h + 8, "mode", off, &mode, err);
	if (!rc)
		rc = hex_field(h + 48, "filesize", off, &fsize, err);
	if (!rc)
		rc = hex_field(h + 88, "namesize", off, &nsize, err);
	if (!rc && (nsize < 2 || nsize > KILN_LIMIT_CPIO_NAME))
		rc = kiln_err_set(err, KILN_EFORMAT,
		                  "payload: bad cpio name size %" PRIu32 " at offset %" PRIu64,
		                  nsize, off);
	if (!rc && !(name = kiln_malloc(nsize)))
		rc = kiln_err_set(err, KILN_ENOMEM, "out of memory");
	if (!rc)
		rc = pack_payload_uread(pl, name, nsize, "cpio name", err);
	if (!rc && name[nsize - 1] != '\0')
		rc =
		    kiln_err_set(err, KILN_EFORMAT,
		                 "payload: cpio name at offset %" PRIu64 " is not terminated", off);
	if (!rc)
		rc = skip_pad(pl, err);
	if (!rc && !strcmp(name, "TRAILER!!!")) {
		*end = true;
		goto out;
	}
	if (!rc)
		rc = map_name(pl, name, nsize - 1, off, &idx, err);
	if (!rc)
		rc = accept_entry(pl, idx, off, err);
	if (!rc && (mode & S_IFMT) != (pl->cur.mode & S_IFMT))
		rc =
		    kiln_err_set(err, KILN_EFORMAT,
		                 "payload: entry '%s' at offset %" PRIu64 ": file type %o does not "
		                 "match the header's %o",
		                 name, off, mode & S_IFMT, pl->cur.mode & S_IFMT);
	if (!rc && fsize != pl->cur.data_size)
		rc = kiln_err_set(err, KILN_EFORMAT,
		                  "payload: entry '%s' at offset %" PRIu64 ": size %" PRIu32
		                  " does not match the header's %" PRIu64,
		                  name, off, fsize, pl->cur.data_size);
	if (!rc)
		*fi = pl->cur;
out:
	free(name);
	return rc;
}

static kiln_rc read_stripped(struct pack_payload *pl, uint64_t off, struct pack_file_info *fi,
                             bool *end, struct kiln_err *err)
{
	char h[8];
	uint32_t idx = 0;
	kiln_rc rc = pack_payload_uread(pl, h, sizeof(h), "stripped cpio header", err);

	if (!rc)
		rc = hex_field(h, "file index", off, &idx, err);
	if (!rc)
		rc = skip_pad(pl, err);
	if (rc)
		return rc;
	if (idx == UINT32_MAX) {
		*end = true;
		return KILN_OK;
	}
	if (idx >= pl->fl.n)
		return kiln_err_set(err, KILN_EFORMAT,
		                    "payload: stripped entry at offset %" PRIu64
		                    " names file %" PRIu32 " of %" PRIu32,
		                    off, idx, pl->fl.n);
	rc = check_header_name(pl, idx, off, err);
	if (!rc)
		rc = accept_entry(pl, idx, off, err);
	if (!rc)
		*fi = pl->cur;
	return rc;
}

kiln_rc pack_payload_next(struct pack_payload *pl, struct pack_file_info *fi, struct kiln_err *err)
{
	char magic[6];
	uint64_t off;
	bool end = false;
	kiln_rc rc = KILN_OK;

	if (pl->done)
		return KILN_ENOTFOUND;
	if (pl->data_left) {
		rc = pack_payload_uread(pl, NULL, pl->data_left, "file data", err);
		pl->data_left = 0;
		if (!rc)
			rc = skip_pad(pl, err);
		if (rc)
			return rc;
	}
	if (++pl->nentries > KILN_LIMIT_CPIO_ENTRIES)
		return kiln_err_set(err, KILN_ELIMIT, "payload: more than %d entries",
		                    (int)KILN_LIMIT_CPIO_ENTRIES);
	off = pl->off;
	rc = pack_payload_uread(pl, magic, sizeof(magic), "cpio magic", err);
	if (rc)
		return rc;
	if (!memcmp(magic, "07070X", 6))
		rc = read_stripped(pl, off, fi, &end, err);
	else if (!memcmp(magic, "070701", 6) || !memcmp(magic, "070702", 6))
		rc = read_newc(pl, off, fi, &end, err);
	else
		rc = kiln_err_set(err, KILN_EFORMAT, "payload: bad cpio magic at offset %" PRIu64,
		                  off);
	if (rc)
		return rc;
	if (end) {
		rc = finish(pl, err);
		return rc ? rc : KILN_ENOTFOUND;
	}
	if (!pl->data_left)
		rc = skip_pad(pl, err);
	return rc;
}

kiln_rc pack_payload_read(struct pack_payload *pl, void *buf, size_t len, size_t *got,
                          struct kiln_err *err)
{
	kiln_rc rc;

	*got = 0;
	if (!pl->data_left)
		return KILN_OK;
	if (len > pl->data_left)
		len = (size_t)pl->data_left;
	rc = pack_payload_uread(pl, buf, len, "file data", err);
	if (rc)
		return rc;
	pl->data_left -= len;
	*got = len;
	return pl->data_left ? KILN_OK : skip_pad(pl, err);
}

/* ---------------------------------------------------------------------------------------- */
/* Set-up */

static kiln_rc payload_new(const struct pack_package *p, int fd, const void *mem, size_t memlen,
                           struct pack_payload **out, struct kiln_err *err)
{
	struct pack_payload *pl = kiln_calloc(1, sizeof(*pl));
	kiln_rc rc;

	*out = NULL;
	if (!pl)
		return kiln_err_set(err, KILN_ENOMEM, "out of memory");
	pl->pkg = p;
	pl->fd = fd;
	pl->mem = mem;
	pl->memlen = memlen;
	pl->ucur = pl->ubuf;
	pl->csrc.read = csrc_read;
	rc = pack_file_list_init(&pl->fl, &p->hdr, err);
	if (!rc)
		rc = index_files(pl, err);
	if (!rc)
		rc = digests_start(pl, err);
	if (!rc)
		rc = pack_decomp_new(pack_header_get_string(&p->hdr, RPMTAG_PAYLOADCOMPRESSOR),
		                     &pl->csrc, &pl->dec, err);
	if (rc) {
		pack_payload_free(pl);
		return rc;
	}
	pl->stripped = pack_header_get(&p->hdr, RPMTAG_LONGFILESIZES) != NULL;
	pl->has_umax = declared_usize(p, &pl->umax);
	*out = pl;
	return KILN_OK;
}

kiln_rc pack_payload_open(const struct pack_package *p, int fd, struct pack_payload **out,
                          struct kiln_err *err)
{
	return payload_new(p, fd, NULL, 0, out, err);
}

kiln_rc pack_payload_from_mem(const struct pack_package *p, const void *data, size_t len,
                              struct pack_payload **out, struct kiln_err *err)
{
	return payload_new(p, -1, data ? data : "", len, out, err);
}

void pack_payload_free(struct pack_payload *pl)
{
	size_t i;

	if (!pl)
		return;
	readahead_free(pl->ra); /* first: the thread uses what follows */
	pack_decomp_free(pl->dec);
	for (i = 0; i < PACK_PDIG_N; i++) {
		util_digest_release(&pl->cdig[i].d);
		util_digest_release(&pl->udig[i].d);
	}
	pack_file_list_release(&pl->fl);
	free(pl->sorted);
	free(pl->seen);
	free(pl->nlink);
	free(pl->last);
	free(pl);
}

/* The whole uncompressed stream to fd unchanged (a newc payload is already what rpm2cpio
 * prints), then the digest checks. */
kiln_rc pack_payload_copy_raw(struct pack_payload *pl, int fd, struct kiln_err *err)
{
	unsigned char junk[4096];
	size_t got = 0, i;
	kiln_rc rc = KILN_OK;

	while (!rc) {
		rc = ufill(pl, err);
		if (rc || pl->ueof)
			break;
		rc = util_write_all(fd, pl->ucur + pl->upos, pl->ulen - pl->upos, err);
		pl->off += pl->ulen - pl->upos;
		pl->upos = pl->ulen;
	}
	do
		rc = rc ? rc : csrc_read(&pl->csrc, junk, sizeof(junk), &got, err);
	while (!rc && got);
	for (i = 0; !rc && i < PACK_PDIG_N; i++) {
		rc = digest_check(&pl->cdig[i], "compressed", pdigs[i].name, err);
		if (!rc)
			rc = digest_check(&pl->udig[i], "uncompressed", pdigs[i].name, err);
	}
	if (!rc)
		rc = sizes_check(pl, err);
	pl->done = true;
	return rc;
}
