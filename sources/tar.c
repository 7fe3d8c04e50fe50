/*
 * tar.c - the tar stream of a source tarball made from a git tree, laid out the way
 * `git archive --format=tar` lays it out (ustar headers, pax records only where ustar
 * cannot say it, a pax global header with the commit id, 10240-byte records), so the bytes
 * depend on the tree, the prefix and the commit time only, and git itself is the oracle
 * in the tests. Written from the ustar/pax format description (POSIX pax) and git's
 * documented output, not from git's code.
 */
#include "util/util.h"

#include "sources/sources.h"
#include "sources/sources_int.h"

#define BLOCK 512
#define USTAR_MAX_SIZE 077777777777ULL
#define USTAR_MAX_MTIME 077777777777ULL

/* ustar header field offsets and sizes. */
enum {
	H_NAME = 0,
	H_MODE = 100,
	H_UID = 108,
	H_GID = 116,
	H_SIZE = 124,
	H_MTIME = 136,
	H_CHKSUM = 148,
	H_TYPE = 156,
	H_LINK = 157,
	H_MAGIC = 257,
	H_VERSION = 263,
	H_UNAME = 265,
	H_GNAME = 297,
	H_DEVMAJOR = 329,
	H_DEVMINOR = 337,
	H_PREFIX = 345,
};

void sources_tar_init(struct sources_tar *t, struct sources_tar_sink *sink, uint64_t mtime)
{
	memset(t, 0, sizeof(*t));
	t->sink = sink;
	t->mtime = mtime;
	t->umask = 002;
}

static kiln_rc flush_if_full(struct sources_tar *t, struct kiln_err *err)
{
	if (t->off < sizeof(t->block))
		return KILN_OK;
	t->off = 0;
	return t->sink->write(t->sink, t->block, sizeof(t->block), err);
}

/* Append data, then zero-pad to a whole 512-byte block. */
static kiln_rc put(struct sources_tar *t, const void *data, uint64_t size, struct kiln_err *err)
{
	const unsigned char *p = data;
	size_t tail;

	while (size) {
		size_t n = sizeof(t->block) - t->off;

		if (n > size)
			n = (size_t)size;
		memcpy(t->block + t->off, p, n);
		t->off += n;
		p += n;
		size -= n;
		if (flush_if_full(t, err))
			return err->code;
	}
	tail = t->off % BLOCK;
	if (tail) {
		memset(t->block + t->off, 0, BLOCK - tail);
		t->off += BLOCK - tail;
	}
	return flush_if_full(t, err);
}

static void field_octal(unsigned char *h, size_t off, size_t width, uint64_t v)
{
	size_t i;

	/* width-1 octal digits with leading zeros and a NUL, as git writes them; callers keep
	 * v within the field (sizes and times beyond it go into pax records). */
	for (i = width - 1; i > 0; i--) {
		h[off + i - 1] = (unsigned char)('0' + (v & 7));
		v >>= 3;
	}
	h[off + width - 1] = '\0';
}

static void header_finish(struct sources_tar *t, unsigned char *h, unsigned mode, uint64_t size)
{
	unsigned sum = 0;
	size_t i;

	field_octal(h, H_MODE, 8, mode & 07777);
	field_octal(h, H_SIZE, 12, size);
	field_octal(h, H_MTIME, 12, t->mtime);
	field_octal(h, H_UID, 8, 0);
	field_octal(h, H_GID, 8, 0);
	memcpy(h + H_UNAME, "root", 4);
	memcpy(h + H_GNAME, "root", 4);
	field_octal(h, H_DEVMAJOR, 8, 0);
	field_octal(h, H_DEVMINOR, 8, 0);
	memcpy(h + H_MAGIC, "ustar", 6);
	memcpy(h + H_VERSION, "00", 2);
	/* The checksum counts its own field as eight spaces. */
	for (i = 0; i < BLOCK; i++)
		sum += (i >= H_CHKSUM && i < H_CHKSUM + 8) ? ' ' : h[i];
	field_octal(h, H_CHKSUM, 8, sum);
}

/* One pax record "LEN key=value\n", where LEN counts its own digits. */
static void pax_record(struct kiln_buf *b, const char *key, const void *value, size_t vlen)
{
	size_t len = 1 + 1 + strlen(key) + 1 + vlen + 1;
	size_t scale;

	for (scale = 1; len / 10 >= scale; scale *= 10)
		len++;
	kiln_buf_addf(b, "%zu %s=", len, key);
	kiln_buf_add(b, value, vlen);
	kiln_buf_addch(b, '\n');
}

static kiln_rc put_pax(struct sources_tar *t, char type, const char *name, const struct kiln_buf *b,
                       struct kiln_err *err)
{
	unsigned char h[BLOCK] = {0};

	snprintf((char *)h + H_NAME, 100, "%s", name);
	h[H_TYPE] = (unsigned char)type;
	header_finish(t, h, 0666, b->len);
	if (put(t, h, BLOCK, err))
		return err->code;
	return put(t, b->ptr, b->len, err);
}

kiln_rc sources_tar_global(struct sources_tar *t, const char *commit, struct kiln_err *err)
{
	struct kiln_buf b = KILN_BUF_INIT(4096);
	char num[32];
	kiln_rc rc;

	if (commit && *commit)
		pax_record(&b, "comment", commit, strlen(commit));
	if (t->mtime > USTAR_MAX_MTIME) {
		snprintf(num, sizeof(num), "%" PRIu64, t->mtime);
		pax_record(&b, "mtime", num, strlen(num));
		t->mtime = USTAR_MAX_MTIME;
	}
	rc = kiln_buf_finish(&b, err);
	if (!rc && b.len)
		rc = put_pax(t, 'g', "pax_global_header", &b, err);
	kiln_buf_release(&b);
	return rc;
}

/* Where a long path splits into ustar's prefix and name: the last '/' that leaves at
 * most 155 bytes before it (a trailing '/' of a directory does not count). */
static size_t split_at(const char *path, size_t len)
{
	size_t i = len;

	if (i > 1 && path[i - 1] == '/')
		i--;
	if (i > 155)
		i = 155;
	do
		i--;
	while (i > 0 && path[i] != '/');
	return i;
}

/* The type flag and the mode bits git gives each kind of tree entry. */
static kiln_rc entry_kind(const struct sources_tar *t, unsigned gitmode, char *type, unsigned *mode,
                          struct kiln_err *err)
{
	switch (gitmode & 0170000) {
	case 0040000:
	case 0160000: /* a submodule is an empty directory */
		*type = '5';
		*mode = (gitmode | 0777) & ~t->umask;
		return KILN_OK;
	case 0120000:
		*type = '2';
		*mode = gitmode | 0777;
		return KILN_OK;
	case 0100000:
		*type = '0';
		*mode = (gitmode | ((gitmode & 0100) ? 0777 : 0666)) & ~t->umask;
		return KILN_OK;
	default:
		return kiln_err_set(err, KILN_EFORMAT, "unsupported git file mode %o", gitmode);
	}
}

static void set_name(unsigned char *h, const char *path, size_t len, const char *oid,
                     struct kiln_buf *ext)
{
	size_t pre, rest;

	if (len <= 100) {
		memcpy(h + H_NAME, path, len);
		return;
	}
	pre = split_at(path, len);
	rest = len - pre - 1;
	if (pre > 0 && rest <= 100) {
		memcpy(h + H_PREFIX, path, pre);
		memcpy(h + H_NAME, path + pre + 1, rest);
		return;
	}
	snprintf((char *)h + H_NAME, 100, "%s.data", oid);
	pax_record(ext, "path", path, len);
}

kiln_rc sources_tar_entry(struct sources_tar *t, const char *path, unsigned gitmode,
                          const char *oid, const void *data, size_t size, struct kiln_err *err)
{
	struct kiln_buf full = KILN_BUF_INIT(KILN_LIMIT_PATH + 2);
	struct kiln_buf ext = KILN_BUF_INIT(2 * KILN_LIMIT_PATH + 512);
	unsigned char h[BLOCK] = {0};
	uint64_t hsize = 0;
	unsigned mode = 0;
	char type = 0, name[128];
	kiln_rc rc = entry_kind(t, gitmode, &type, &mode, err);

	if (rc)
		return rc;
	kiln_buf_addstr(&full, path);
	if (type == '5')
		kiln_buf_addch(&full, '/');
	rc = kiln_buf_finish(&full, err);
	if (rc)
		goto out;
	h[H_TYPE] = (unsigned char)type;
	set_name(h, full.ptr, full.len, oid, &ext);
	if (type == '2' && size > 100) {
		snprintf((char *)h + H_LINK, 100, "see %s.paxheader", oid);
		pax_record(&ext, "linkpath", data, size);
	} else if (type == '2') {
		memcpy(h + H_LINK, data, size);
	}
	if (type == '0') {
		char num[32];

		hsize = size;
		if (hsize > USTAR_MAX_SIZE) {
			snprintf(num, sizeof(num), "%zu", size);
			pax_record(&ext, "size", num, strlen(num));
			hsize = 0;
		}
	}
	header_finish(t, h, mode, hsize);
	rc = kiln_buf_finish(&ext, err);
	snprintf(name, sizeof(name), "%s.paxheader", oid);
	if (!rc && ext.len)
		rc = put_pax(t, 'x', name, &ext, err);
	if (!rc)
		rc = put(t, h, BLOCK, err);
	if (!rc && type == '0' && size)
		rc = put(t, data, size, err);
out:
	kiln_buf_release(&ext);
	kiln_buf_release(&full);
	return rc;
}

kiln_rc sources_tar_finish(struct sources_tar *t, struct kiln_err *err)
{
	size_t tail = sizeof(t->block) - t->off;

	/* End of archive: at least two zero blocks, and whole 20-block records. */
	memset(t->block + t->off, 0, tail);
	if (t->sink->write(t->sink, t->block, sizeof(t->block), err))
		return err->code;
	if (tail < 2 * BLOCK) {
		memset(t->block, 0, sizeof(t->block));
		if (t->sink->write(t->sink, t->block, sizeof(t->block), err))
			return err->code;
	}
	t->off = 0;
	return KILN_OK;
}
