/*
 * qfview.c - a package header as a query-format source: the main header plus the
 * signature tags rpm merges into it when it reads a package (rpm-reference.md section 2.3,
 * headerMergeLegacySigs), in main-header numbering and sorted.
 */
#include "util/util.h"

#include "pack/pack.h"
#include "pack/pack_int.h"

uint32_t pack_sigtag_merged(uint32_t sigtag)
{
	switch (sigtag) {
	case PACK_SIGTAG_SIZE:
		return RPMTAG_SIGSIZE;
	case PACK_SIGTAG_MD5:
		return RPMTAG_SIGMD5;
	case PACK_SIGTAG_PGP:
		return RPMTAG_SIGPGP;
	case PACK_SIGTAG_GPG:
		return RPMTAG_SIGGPG;
	case PACK_SIGTAG_PAYLOADSIZE:
		return RPMTAG_ARCHIVESIZE;
	case PACK_SIGTAG_FILESIGNATURES:
		return RPMTAG_FILESIGNATURES;
	case PACK_SIGTAG_FILESIGNATURELENGTH:
		return RPMTAG_FILESIGNATURELENGTH;
	case PACK_SIGTAG_DSA:
	case PACK_SIGTAG_RSA:
	case PACK_SIGTAG_SHA1:
	case PACK_SIGTAG_LONGSIZE:
	case PACK_SIGTAG_LONGARCHIVESIZE:
	case PACK_SIGTAG_SHA256:
	case PACK_SIGTAG_VERITYSIGNATURES:
	case PACK_SIGTAG_VERITYSIGNATUREALGO:
	case PACK_SIGTAG_OPENPGP:
	case PACK_SIGTAG_SHA3_256:
		return sigtag;
	default:
		return 0;
	}
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

kiln_rc pack_qf_view_init(struct pack_qf_view *v, const struct pack_package *p,
                          struct kiln_err *err)
{
	size_t cap = p->hdr.n + p->sig.n, i, k = 0;
	uint64_t *pairs = kiln_calloc(cap ? cap : 1, sizeof(*pairs));

	memset(v, 0, sizeof(*v));
	v->pkg = p;
	v->merged = kiln_calloc(cap ? cap : 1, sizeof(*v->merged));
	v->tags = kiln_calloc(cap ? cap : 1, sizeof(*v->tags));
	if (!pairs || !v->merged || !v->tags) {
		free(pairs);
		pack_qf_view_release(v);
		return kiln_err_set(err, KILN_ENOMEM, "out of memory");
	}
	/* (tag << 32 | slot) pairs sort into main-header order; a main-header tag wins over a
	 * merged signature tag of the same number (rpm would refuse such a package; queries
	 * show the main header's value). */
	for (i = 0; i < p->hdr.n; i++)
		pairs[k++] = (uint64_t)p->hdr.entries[i].tag << 32 | i;
	for (i = 0; i < p->sig.n; i++) {
		uint32_t t = pack_sigtag_merged(p->sig.entries[i].tag);

		if (t && !pack_header_get(&p->hdr, t))
			pairs[k++] = (uint64_t)t << 32 | ((uint64_t)1 << 31) | i;
	}
	qsort(pairs, k, sizeof(*pairs), cmp_u64);
	for (i = 0; i < k; i++) {
		size_t slot = pairs[i] & 0x7fffffff;
		bool from_sig = pairs[i] & ((uint64_t)1 << 31);

		v->tags[i] = (uint32_t)(pairs[i] >> 32);
		v->merged[i] = from_sig ? &p->sig.entries[slot] : &p->hdr.entries[slot];
	}
	v->n = k;
	free(pairs);
	return KILN_OK;
}

void pack_qf_view_release(struct pack_qf_view *v)
{
	if (!v)
		return;
	free(v->merged);
	free(v->tags);
	memset(v, 0, sizeof(*v));
}

static bool view_get(void *ctx, uint32_t tag, struct rpmtag_qf_value *out)
{
	struct pack_qf_view *v = ctx;
	size_t lo = 0, hi = v->n;

	if (tag == RPMTAG_HEADERIMMUTABLE) {
		/* Present when the header has its region (the RPMFORMAT fallback asks). */
		static const unsigned char none[16];

		if (!v->pkg->hdr.region)
			return false;
		out->type = RPMTAG_TYPE_BIN;
		out->count = 16;
		out->data = none;
		return true;
	}
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (v->tags[mid] == tag) {
			out->type = v->merged[mid]->type;
			out->count = v->merged[mid]->count;
			out->data = v->merged[mid]->data;
			return true;
		}
		if (v->tags[mid] < tag)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

static size_t view_count(void *ctx)
{
	return ((struct pack_qf_view *)ctx)->n;
}

static uint32_t view_tag_at(void *ctx, size_t i)
{
	return ((struct pack_qf_view *)ctx)->tags[i];
}

static const struct rpmtag_qf_source_ops view_ops = {view_get, view_count, view_tag_at, NULL};

struct rpmtag_qf_source pack_qf_view_source(struct pack_qf_view *v, unsigned flags)
{
	struct rpmtag_qf_source s = {&view_ops, v, flags};

	return s;
}
