/*
 * xz.c - xz payloads (liblzma). With threads, the multi-threaded encoder is used with a
 * block size fixed by the preset, so the output is the same for any number of threads.
 * Streams carry a SHA-256 check as rpm's do, so kiln's payloads are rpmbuild's bytes.
 */
#include "util/util.h"

#include <lzma.h>

#include "pack/pack.h"
#include "pack/pack_int.h"

/* Memory a hostile payload's decoder may use. */
#define XZ_MEMLIMIT (1024 * KILN_MIB)

struct xcomp {
	struct pack_comp base;
	lzma_stream strm;
};

static kiln_rc xerr(struct kiln_err *err, const char *what, lzma_ret r)
{
	return kiln_err_set(err, r == LZMA_MEM_ERROR ? KILN_ENOMEM : KILN_EFORMAT,
	                    "xz %s: error %d", what, (int)r);
}

static kiln_rc xc_write(struct pack_comp *c, const void *data, size_t len, bool end,
                        struct kiln_err *err)
{
	struct xcomp *x = (struct xcomp *)c;
	lzma_ret r;

	x->strm.next_in = data;
	x->strm.avail_in = len;
	do {
		x->strm.next_out = c->out;
		x->strm.avail_out = sizeof(c->out);
		r = lzma_code(&x->strm, end ? LZMA_FINISH : LZMA_RUN);
		if (r != LZMA_OK && r != LZMA_STREAM_END)
			return xerr(err, "compression", r);
		if (sizeof(c->out) - x->strm.avail_out &&
		    c->sink->write(c->sink, c->out, sizeof(c->out) - x->strm.avail_out, err))
			return err->code;
	} while (x->strm.avail_in || (end && r != LZMA_STREAM_END));
	return KILN_OK;
}

static void xc_free(struct pack_comp *c)
{
	struct xcomp *x = (struct xcomp *)c;

	lzma_end(&x->strm);
	free(x);
}

static void *xc_alloc(void *opaque, size_t nmemb, size_t size)
{
	size_t total;

	(void)opaque;
	return util_mul_ok(nmemb, size, &total) ? util_bigmem_alloc(total) : NULL;
}

static void xc_mfree(void *opaque, void *ptr)
{
	(void)opaque;
	util_bigmem_free(ptr);
}

/* The encoder's dictionary and match finder (~94 MiB at -6) in huge pages where the kernel
 * has them: the same bytes out, a fraction of the page faults (util_bigmem_alloc). */
static const lzma_allocator xc_allocator = {xc_alloc, xc_mfree, NULL};

kiln_rc pack_xz_comp_new(int level, int threads, struct pack_comp **out, struct kiln_err *err)
{
	struct xcomp *x = kiln_calloc(1, sizeof(*x));
	lzma_stream init = LZMA_STREAM_INIT;
	lzma_ret r;

	*out = NULL;
	if (!x)
		return kiln_err_set(err, KILN_ENOMEM, "out of memory");
	x->strm = init;
	x->strm.allocator = &xc_allocator;
	x->base.write = xc_write;
	x->base.free = xc_free;
	if (level > 9)
		level = 9;
	if (threads > 0) {
		lzma_mt mt;

		memset(&mt, 0, sizeof(mt));
		mt.threads = (uint32_t)threads;
		mt.preset = (uint32_t)level;
		mt.check = LZMA_CHECK_SHA256;
		mt.block_size = 0; /* the preset's default: independent of the thread count */
		r = lzma_stream_encoder_mt(&x->strm, &mt);
	} else {
		r = lzma_easy_encoder(&x->strm, (uint32_t)level, LZMA_CHECK_SHA256);
	}
	if (r != LZMA_OK) {
		xc_free(&x->base);
		return xerr(err, "setup", r);
	}
	*out = &x->base;
	return KILN_OK;
}

struct xdecomp {
	struct pack_decomp base;
	lzma_stream strm;
	bool ended;
};

static kiln_rc xd_read(struct pack_decomp *d, void *buf, size_t len, size_t *got,
                       struct kiln_err *err)
{
	struct xdecomp *x = (struct xdecomp *)d;
	lzma_ret r;
	kiln_rc rc;

	*got = 0;
	x->strm.next_out = buf;
	x->strm.avail_out = len;
	while (x->strm.avail_out == len && !x->ended) {
		rc = pack_decomp_fill(d, err);
		if (rc)
			return rc;
		x->strm.next_in = d->in + d->in_pos;
		x->strm.avail_in = d->in_len - d->in_pos;
		r = lzma_code(&x->strm, d->in_eof ? LZMA_FINISH : LZMA_RUN);
		d->in_pos = d->in_len - x->strm.avail_in;
		if (r == LZMA_STREAM_END)
			x->ended = true;
		else if (r != LZMA_OK)
			return xerr(err, "payload", r);
		else if (d->in_eof && x->strm.avail_out == len)
			return kiln_err_set(err, KILN_EFORMAT, "xz: truncated payload");
	}
	*got = len - x->strm.avail_out;
	return KILN_OK;
}

static void xd_free(struct pack_decomp *d)
{
	struct xdecomp *x = (struct xdecomp *)d;

	lzma_end(&x->strm);
	free(x);
}

kiln_rc pack_xz_decomp_new(struct pack_decomp **out, struct kiln_err *err)
{
	struct xdecomp *x = kiln_calloc(1, sizeof(*x));
	lzma_stream init = LZMA_STREAM_INIT;
	lzma_ret r;

	*out = NULL;
	if (!x)
		return kiln_err_set(err, KILN_ENOMEM, "out of memory");
	x->strm = init;
	x->base.read = xd_read;
	x->base.free = xd_free;
	r = lzma_stream_decoder(&x->strm, XZ_MEMLIMIT, LZMA_CONCATENATED);
	if (r != LZMA_OK) {
		xd_free(&x->base);
		return xerr(err, "setup", r);
	}
	*out = &x->base;
	return KILN_OK;
}
