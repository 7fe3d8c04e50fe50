/*
 * gzip.c - gzip payloads (zlib). The gzip header zlib writes carries no name and a zero
 * mtime, so the output depends on the input and level only.
 */
#include "util/util.h"

#include <zlib.h>

#include "pack/pack.h"
#include "pack/pack_int.h"

struct gcomp {
	struct pack_comp base;
	z_stream zs;
};

static kiln_rc gc_write(struct pack_comp *c, const void *data, size_t len, bool end,
                        struct kiln_err *err)
{
	struct gcomp *g = (struct gcomp *)c;
	int r;

	g->zs.next_in = (Bytef *)(uintptr_t)data;
	g->zs.avail_in = (uInt)len;
	do {
		g->zs.next_out = c->out;
		g->zs.avail_out = sizeof(c->out);
		r = deflate(&g->zs, end ? Z_FINISH : Z_NO_FLUSH);
		if (r == Z_STREAM_ERROR)
			return kiln_err_set(err, KILN_EIO, "gzip compression failed");
		if (sizeof(c->out) - g->zs.avail_out &&
		    c->sink->write(c->sink, c->out, sizeof(c->out) - g->zs.avail_out, err))
			return err->code;
	} while (g->zs.avail_in || (end && r != Z_STREAM_END));
	return KILN_OK;
}

static void gc_free(struct pack_comp *c)
{
	struct gcomp *g = (struct gcomp *)c;

	deflateEnd(&g->zs);
	free(g);
}

kiln_rc pack_gzip_comp_new(int level, struct pack_comp **out, struct kiln_err *err)
{
	struct gcomp *g = kiln_calloc(1, sizeof(*g));

	*out = NULL;
	if (!g)
		return kiln_err_set(err, KILN_ENOMEM, "out of memory");
	g->base.write = gc_write;
	g->base.free = gc_free;
	if (level > 9)
		level = 9;
	if (deflateInit2(&g->zs, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
		free(g);
		return kiln_err_set(err, KILN_ENOMEM, "gzip setup failed");
	}
	*out = &g->base;
	return KILN_OK;
}

struct gdecomp {
	struct pack_decomp base;
	z_stream zs;
	bool ended;
};

static kiln_rc gd_read(struct pack_decomp *d, void *buf, size_t len, size_t *got,
                       struct kiln_err *err)
{
	struct gdecomp *g = (struct gdecomp *)d;
	kiln_rc rc;
	int r;

	*got = 0;
	if (len > UINT_MAX)
		len = UINT_MAX;
	g->zs.next_out = buf;
	g->zs.avail_out = (uInt)len;
	while (g->zs.avail_out == len && !g->ended) {
		rc = pack_decomp_fill(d, err);
		if (rc)
			return rc;
		if (d->in_eof)
			return kiln_err_set(err, KILN_EFORMAT, "gzip: truncated payload");
		g->zs.next_in = d->in + d->in_pos;
		g->zs.avail_in = (uInt)(d->in_len - d->in_pos);
		r = inflate(&g->zs, Z_NO_FLUSH);
		d->in_pos = d->in_len - g->zs.avail_in;
		if (r == Z_STREAM_END)
			g->ended = true;
		else if (r != Z_OK && r != Z_BUF_ERROR)
			return kiln_err_set(err, KILN_EFORMAT, "gzip payload: %s",
			                    g->zs.msg ? g->zs.msg : "corrupt data");
	}
	*got = len - g->zs.avail_out;
	return KILN_OK;
}

static void gd_free(struct pack_decomp *d)
{
	struct gdecomp *g = (struct gdecomp *)d;

	inflateEnd(&g->zs);
	free(g);
}

kiln_rc pack_gzip_decomp_new(struct pack_decomp **out, struct kiln_err *err)
{
	struct gdecomp *g = kiln_calloc(1, sizeof(*g));

	*out = NULL;
	if (!g)
		return kiln_err_set(err, KILN_ENOMEM, "out of memory");
	g->base.read = gd_read;
	g->base.free = gd_free;
	if (inflateInit2(&g->zs, 15 + 16) != Z_OK) {
		free(g);
		return kiln_err_set(err, KILN_ENOMEM, "gzip setup failed");
	}
	*out = &g->base;
	return KILN_OK;
}
