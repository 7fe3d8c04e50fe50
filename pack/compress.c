/*
 * compress.c - payload compression: rpmio mode strings, and the dispatch to the zstd, xz
 * and gzip codecs (pack/zstd.c, pack/xz.c, pack/gzip.c) or to no compression.
 */
#include "util/util.h"

#include <unistd.h>

#include "pack/pack.h"
#include "pack/pack_int.h"

int pack_compress_cpus(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n > 1 ? (int)(n < 4096 ? n : 4096) : 1;
}

/* "w[LEVEL][T[N]][L<n>].TYPE" (rpm-reference.md section 2.8). */
kiln_rc pack_compress_parse(const char *mode, struct pack_compress *out, struct kiln_err *err)
{
	const char *dot = strrchr(mode, '.'), *p = mode + 1, *type;
	int64_t n;

	memset(out, 0, sizeof(*out));
	out->level = -1;
	if (mode[0] != 'w' || !dot)
		return kiln_err_set(err, KILN_EINVAL,
		                    "payload mode '%s': expected w[LEVEL][T[N]].TYPE", mode);
	type = dot + 1;
	if ((size_t)(dot - p) >= sizeof(out->flags))
		return kiln_err_set(err, KILN_EINVAL, "payload mode '%s': flags too long", mode);
	memcpy(out->flags, p, (size_t)(dot - p));
	if (p < dot && *p >= '0' && *p <= '9') {
		const char *s = p;

		while (p < dot && *p >= '0' && *p <= '9')
			p++;
		if (util_parse_i64(s, (size_t)(p - s), 10, 0, 22, &n, err))
			return kiln_err_set(err, KILN_EINVAL, "payload mode '%s': bad level", mode);
		out->level = (int)n;
	}
	if (p < dot && *p == 'T') {
		const char *s = ++p;

		while (p < dot && *p >= '0' && *p <= '9')
			p++;
		n = 0;
		if (p > s && util_parse_i64(s, (size_t)(p - s), 10, 0, 4096, &n, err))
			return kiln_err_set(err, KILN_EINVAL, "payload mode '%s': bad threads",
			                    mode);
		out->threads = n ? (int)n : pack_compress_cpus();
	}
	if (p < dot && *p == 'L')
		return kiln_err_set(err, KILN_EUNSUPP,
		                    "payload mode '%s': long windows (L) are "
		                    "not supported",
		                    mode);
	if (p != dot)
		return kiln_err_set(err, KILN_EINVAL, "payload mode '%s': bad flags", mode);
	if (!strcmp(type, "ufdio")) {
		out->kind = PACK_COMP_NONE;
	} else if (!strcmp(type, "gzdio")) {
		out->kind = PACK_COMP_GZIP;
		out->name = "gzip";
	} else if (!strcmp(type, "xzdio")) {
		out->kind = PACK_COMP_XZ;
		out->name = "xz";
	} else if (!strcmp(type, "zstdio")) {
		out->kind = PACK_COMP_ZSTD;
		out->name = "zstd";
	} else if (!strcmp(type, "bzdio") || !strcmp(type, "lzdio")) {
		return kiln_err_set(err, KILN_EUNSUPP, "payload mode '%s': kiln does not write %s",
		                    mode, type);
	} else {
		return kiln_err_set(err, KILN_EINVAL, "payload mode '%s': unknown type '%s'", mode,
		                    type);
	}
	return KILN_OK;
}

/* ---------------------------------------------------------------------------------------- */
/* No compression */

static kiln_rc none_write(struct pack_comp *c, const void *data, size_t len, bool end,
                          struct kiln_err *err)
{
	(void)end;
	return len ? c->sink->write(c->sink, data, len, err) : KILN_OK;
}

static void plain_free(struct pack_comp *c)
{
	free(c);
}

static kiln_rc none_read(struct pack_decomp *d, void *buf, size_t len, size_t *got,
                         struct kiln_err *err)
{
	size_t n;
	kiln_rc rc = pack_decomp_fill(d, err);

	if (rc)
		return rc;
	n = d->in_len - d->in_pos;
	if (n > len)
		n = len;
	memcpy(buf, d->in + d->in_pos, n);
	d->in_pos += n;
	*got = n;
	return KILN_OK;
}

static void plain_dfree(struct pack_decomp *d)
{
	free(d);
}

kiln_rc pack_comp_new(const struct pack_compress *c, struct pack_sink *sink, struct pack_comp **out,
                      struct kiln_err *err)
{
	kiln_rc rc;

	*out = NULL;
	switch (c->kind) {
	case PACK_COMP_NONE:
		*out = kiln_calloc(1, sizeof(**out));
		if (!*out)
			return kiln_err_set(err, KILN_ENOMEM, "out of memory");
		(*out)->write = none_write;
		(*out)->free = plain_free;
		rc = KILN_OK;
		break;
	case PACK_COMP_GZIP:
		rc = pack_gzip_comp_new(c->level < 0 ? 6 : c->level, out, err);
		break;
	case PACK_COMP_XZ:
		rc = pack_xz_comp_new(c->level < 0 ? 6 : c->level, c->threads, out, err);
		break;
	case PACK_COMP_ZSTD:
		rc = pack_zstd_comp_new(c->level < 0 ? 3 : c->level, c->threads, out, err);
		break;
	default:
		return kiln_err_set(err, KILN_EINVAL, "unknown compressor %d", (int)c->kind);
	}
	if (!rc)
		(*out)->sink = sink;
	return rc;
}

kiln_rc pack_comp_write(struct pack_comp *c, const void *data, size_t len, struct kiln_err *err)
{
	return c->write(c, data, len, false, err);
}

kiln_rc pack_comp_finish(struct pack_comp *c, struct kiln_err *err)
{
	return c->write(c, NULL, 0, true, err);
}

void pack_comp_free(struct pack_comp *c)
{
	if (c)
		c->free(c);
}

kiln_rc pack_decomp_fill(struct pack_decomp *d, struct kiln_err *err)
{
	size_t got = 0;
	kiln_rc rc;

	if (d->in_pos < d->in_len || d->in_eof)
		return KILN_OK;
	rc = d->src->read(d->src, d->in, sizeof(d->in), &got, err);
	if (rc)
		return rc;
	d->in_pos = 0;
	d->in_len = got;
	d->in_eof = got == 0;
	return KILN_OK;
}

kiln_rc pack_decomp_new(const char *name, struct pack_src *src, struct pack_decomp **out,
                        struct kiln_err *err)
{
	struct pack_decomp *d = NULL;
	kiln_rc rc = KILN_OK;

	*out = NULL;
	if (name && !strcmp(name, "zstd")) {
		rc = pack_zstd_decomp_new(&d, err);
	} else if (name && !strcmp(name, "xz")) {
		rc = pack_xz_decomp_new(&d, err);
	} else if (name && !strcmp(name, "gzip")) {
		rc = pack_gzip_decomp_new(&d, err);
	} else if (name && strcmp(name, "none") && strcmp(name, "ufdio")) {
		return kiln_err_set(err, KILN_EUNSUPP, "payload compressor '%s' is not supported",
		                    name);
	} else {
		d = kiln_calloc(1, sizeof(*d));
		if (!d)
			return kiln_err_set(err, KILN_ENOMEM, "out of memory");
		d->src = src;
		/* No PAYLOADCOMPRESSOR: rpm opens the payload with its gzip reader, which passes
		 * anything that is not gzip through unchanged. */
		rc = pack_decomp_fill(d, err);
		if (!rc && d->in_len >= 2 && d->in[0] == 0x1f && d->in[1] == 0x8b) {
			struct pack_decomp *g = NULL;

			rc = pack_gzip_decomp_new(&g, err);
			if (!rc) {
				memcpy(g->in, d->in, d->in_len);
				g->in_len = d->in_len;
				g->in_pos = 0;
			}
			free(d);
			d = g;
		} else if (d) {
			d->read = none_read;
			d->free = plain_dfree;
		}
	}
	if (rc) {
		pack_decomp_free(d);
		return rc;
	}
	d->src = src;
	*out = d;
	return KILN_OK;
}

kiln_rc pack_decomp_read(struct pack_decomp *d, void *buf, size_t len, size_t *got,
                         struct kiln_err *err)
{
	return d->read(d, buf, len, got, err);
}

void pack_decomp_free(struct pack_decomp *d)
{
	if (d)
		d->free(d);
}
