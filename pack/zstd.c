/*
 * zstd.c - zstd payloads (libzstd). With threads, libzstd's multi-threaded mode is used:
 * it cuts the input into jobs whose size follows from the level (the window log), never
 * from the number of workers, and nothing else depends on it, so w19T1 and w19T16 give the
 * same bytes (single-threaded mode, without T, gives other bytes, as in rpm). The writer
 * also takes the multi-threaded mode for large payloads (PACK_ZSTD_MT_MIN). Like rpm,
 * frames carry no checksum (the payload digests cover the bytes), so kiln's payloads are
 * rpmbuild's bytes for the same input and the same mode.
 */
#include "util/util.h"

/* ZSTD_createCCtx_advanced (custom allocator) is in the experimental part of the API, exported
 * by the shared library; its ZSTD_customMem has kept its layout since zstd 1.0. */
#define ZSTD_STATIC_LINKING_ONLY
#include <zstd.h>

#include "pack/libzstd_int.h"
#include "pack/pack.h"
#include "pack/pack_int.h"

/* Filled on first use (see pack/libzstd_int.h). */
static struct pack_libzstd_fns pack_libzstd;
static struct util_dl pack_libzstd_dl =
    UTIL_DL_INIT(PACK_LIBZSTD_SONAME, pack_libzstd_syms, pack_libzstd);

struct zcomp {
	struct pack_comp base;
	ZSTD_CCtx *cctx;
};

static kiln_rc zerr(struct kiln_err *err, const char *what, size_t code)
{
	return kiln_err_set(err, KILN_EFORMAT, "zstd %s: %s", what, ZSTD_getErrorName(code));
}

static kiln_rc zc_write(struct pack_comp *c, const void *data, size_t len, bool end,
                        struct kiln_err *err)
{
	struct zcomp *z = (struct zcomp *)c;
	ZSTD_inBuffer in = {data, len, 0};
	size_t left;

	do {
		ZSTD_outBuffer out = {c->out, sizeof(c->out), 0};

		left = ZSTD_compressStream2(z->cctx, &out, &in, end ? ZSTD_e_end : ZSTD_e_continue);
		if (ZSTD_isError(left))
			return zerr(err, "compression", left);
		if (out.pos && c->sink->write(c->sink, c->out, out.pos, err))
			return err->code;
	} while (in.pos < in.size || (end && left));
	return KILN_OK;
}

static void zc_free(struct pack_comp *c)
{
	struct zcomp *z = (struct zcomp *)c;

	ZSTD_freeCCtx(z->cctx);
	free(z);
}

static void *zc_alloc(void *opaque, size_t size)
{
	(void)opaque;
	return util_bigmem_alloc(size);
}

static void zc_mfree(void *opaque, void *ptr)
{
	(void)opaque;
	util_bigmem_free(ptr);
}

kiln_rc pack_zstd_comp_new(int level, int threads, struct pack_comp **out, struct kiln_err *err)
{
	struct zcomp *z = kiln_calloc(1, sizeof(*z));
	kiln_rc rc;
	size_t r;

	/* Tables and buffers in huge pages where the kernel has them: the same bytes out,
	 * a fraction of the page faults (util_bigmem_alloc). */
	static const ZSTD_customMem mem = {zc_alloc, zc_mfree, NULL};

	*out = NULL;
	if ((rc = util_dl_ready(&pack_libzstd_dl, err))) {
		free(z);
		return rc;
	}
	if (!z || !(z->cctx = ZSTD_createCCtx_advanced(mem))) {
		free(z);
		return kiln_err_set(err, KILN_ENOMEM, "out of memory");
	}
	z->base.write = zc_write;
	z->base.free = zc_free;
	r = ZSTD_CCtx_setParameter(z->cctx, ZSTD_c_compressionLevel, level);
	if (!ZSTD_isError(r) && threads > 0)
		r = ZSTD_CCtx_setParameter(z->cctx, ZSTD_c_nbWorkers, threads);
	if (ZSTD_isError(r)) {
		zc_free(&z->base);
		return zerr(err, "setup", r);
	}
	*out = &z->base;
	return KILN_OK;
}

struct zdecomp {
	struct pack_decomp base;
	ZSTD_DCtx *dctx;
	bool ended;
};

static kiln_rc zd_read(struct pack_decomp *d, void *buf, size_t len, size_t *got,
                       struct kiln_err *err)
{
	struct zdecomp *z = (struct zdecomp *)d;
	ZSTD_outBuffer out = {buf, len, 0};
	size_t r;
	kiln_rc rc;

	*got = 0;
	while (out.pos == 0) {
		ZSTD_inBuffer in;

		rc = pack_decomp_fill(d, err);
		if (rc)
			return rc;
		if (d->in_eof) {
			if (!z->ended)
				return kiln_err_set(err, KILN_EFORMAT, "zstd: truncated payload");
			return KILN_OK;
		}
		in.src = d->in;
		in.size = d->in_len;
		in.pos = d->in_pos;
		r = ZSTD_decompressStream(z->dctx, &out, &in);
		if (ZSTD_isError(r))
			return zerr(err, "payload", r);
		z->ended = r == 0;
		d->in_pos = in.pos;
	}
	*got = out.pos;
	return KILN_OK;
}

static void zd_free(struct pack_decomp *d)
{
	struct zdecomp *z = (struct zdecomp *)d;

	ZSTD_freeDCtx(z->dctx);
	free(z);
}

kiln_rc pack_zstd_decomp_new(struct pack_decomp **out, struct kiln_err *err)
{
	struct zdecomp *z = kiln_calloc(1, sizeof(*z));
	kiln_rc rc;

	*out = NULL;
	if ((rc = util_dl_ready(&pack_libzstd_dl, err))) {
		free(z);
		return rc;
	}
	if (!z || !(z->dctx = ZSTD_createDCtx())) {
		free(z);
		return kiln_err_set(err, KILN_ENOMEM, "out of memory");
	}
	/* Bound the window a hostile payload may ask for (rpm's zstd reader uses the
	 * library default of 2^27). */
	ZSTD_DCtx_setParameter(z->dctx, ZSTD_d_windowLogMax, 27);
	z->base.read = zd_read;
	z->base.free = zd_free;
	*out = &z->base;
	return KILN_OK;
}
