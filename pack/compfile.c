/*
 * compfile.c - a compressed stream written to a file descriptor, for callers outside pack/
 * that compress something other than a payload (worker/'s source tarballs), so that zlib,
 * liblzma and libzstd stay inside pack/'s compressor files.
 */
#include "util/util.h"

#include "pack/pack.h"
#include "pack/pack_int.h"

struct pack_compfile {
	struct pack_sink sink; /* first: the compressor calls back with it */
	struct pack_comp *comp;
	int fd;
};

static kiln_rc fd_write(struct pack_sink *s, const void *data, size_t len, struct kiln_err *err)
{
	struct pack_compfile *f = (struct pack_compfile *)s;

	return util_write_all(f->fd, data, len, err);
}

kiln_rc pack_compfile_open(const struct pack_compress *c, int fd, struct pack_compfile **out,
                           struct kiln_err *err)
{
	struct pack_compfile *f = kiln_calloc(1, sizeof(*f));
	kiln_rc rc;

	*out = NULL;
	if (!f)
		return kiln_err_set(err, KILN_ENOMEM, "out of memory");
	f->sink.write = fd_write;
	f->fd = fd;
	rc = pack_comp_new(c, &f->sink, &f->comp, err);
	if (rc) {
		free(f);
		return rc;
	}
	*out = f;
	return KILN_OK;
}

kiln_rc pack_compfile_write(struct pack_compfile *f, const void *data, size_t len,
                            struct kiln_err *err)
{
	return pack_comp_write(f->comp, data, len, err);
}

kiln_rc pack_compfile_finish(struct pack_compfile *f, struct kiln_err *err)
{
	return pack_comp_finish(f->comp, err);
}

void pack_compfile_free(struct pack_compfile *f)
{
	if (!f)
		return;
	pack_comp_free(f->comp);
	free(f);
}

/* ---- decompressing a file held in memory ------------------------------------------------- */

struct mem_src {
	struct pack_src src; /* first: the decompressor calls back with it */
	const unsigned char *p;
	size_t left;
};

static kiln_rc mem_read(struct pack_src *s, void *buf, size_t len, size_t *got,
                        struct kiln_err *err)
{
	struct mem_src *m = (struct mem_src *)s;
	size_t n = len < m->left ? len : m->left;

	(void)err;
	memcpy(buf, m->p, n);
	m->p += n;
	m->left -= n;
	*got = n;
	return KILN_OK;
}

/* The compressor a file's first bytes announce: gzip, xz or zstd; NULL for none. */
static const char *sniff(const unsigned char *p, size_t len)
{
	static const unsigned char xz[] = {0xfd, '7', 'z', 'X', 'Z', 0x00};
	static const unsigned char zstd[] = {0x28, 0xb5, 0x2f, 0xfd};

	if (len >= 2 && p[0] == 0x1f && p[1] == 0x8b)
		return "gzip";
	if (len >= sizeof(xz) && !memcmp(p, xz, sizeof(xz)))
		return "xz";
	if (len >= sizeof(zstd) && !memcmp(p, zstd, sizeof(zstd)))
		return "zstd";
	return NULL;
}

kiln_rc pack_decompress_mem(const void *data, size_t len, struct kiln_buf *out,
                            struct kiln_err *err)
{
	struct mem_src m = {.src.read = mem_read, .p = data, .left = len};
	struct pack_decomp *d = NULL;
	const char *kind = sniff(data, len);
	unsigned char *chunk = NULL;
	kiln_rc rc;
	size_t got;

	if (!kind) {
		kiln_buf_add(out, data, len);
		return kiln_buf_finish(out, err);
	}
	chunk = kiln_malloc(PACK_IOBUF);
	if (!chunk)
		return kiln_err_set(err, KILN_ENOMEM, "out of memory");
	rc = pack_decomp_new(kind, &m.src, &d, err);
	while (!rc) {
		rc = pack_decomp_read(d, chunk, PACK_IOBUF, &got, err);
		if (rc || !got)
			break;
		kiln_buf_add(out, chunk, got);
		rc = kiln_buf_finish(out, err);
	}
	pack_decomp_free(d);
	free(chunk);
	if (rc)
		kiln_err_wrap(err, "%s data", kind);
	return rc;
}
