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

static uint32_t be32(const unsigned char *p)
{
	return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

static void put_be32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)(v >> 24);
	p[1] = (unsigned char)(v >> 16);
	p[2] = (unsigned char)(v >> 8);
	p[3] = (unsigned char)v;
}

/* What rpm's headerGet(HEADERIMMUTABLE) returns (lib/header.c copyTdEntry): the region's
 * entry count and data length, its index entries and its data up to and with the trailer,
 * the bytes its header digests cover without the magic. For a header rpmbuild or kiln
 * wrote, the region is the whole header: its bytes on disk after the 8-byte magic. */
static kiln_rc view_region(struct pack_qf_view *v, struct kiln_err *err)
{
	const unsigned char *b = (const unsigned char *)v->pkg->hdr_raw.ptr;
	size_t len = v->pkg->hdr_raw.len;
	const unsigned char *data;
	uint32_t il, dl, off, ril, rdl;

	if (!v->pkg->hdr.region || len < 32)
		return KILN_OK;
	il = be32(b + 8);
	dl = be32(b + 12);
	/* The reader checked the blob; these only guard against a caller's hand-made one. */
	if (il < 1 || il > (len - 16) / 16 || dl != len - 16 - (size_t)il * 16 ||
	    be32(b + 16) != v->pkg->hdr.region)
		return KILN_OK;
	data = b + 16 + (size_t)il * 16;
	off = be32(b + 24);
	if (off > dl || dl - off < 16)
		return KILN_OK;
	ril = (uint32_t)(-(int32_t)be32(data + off + 8)) / 16;
	rdl = off + 16;
	if (ril < 1 || ril > il)
		return KILN_OK;
	if (ril == il && rdl == dl) {
		v->region = b + 8;
		v->region_len = len - 8;
		return KILN_OK;
	}
	/* Entries added after the region (rpm's "dribble" entries) are not part of it. */
	v->region_len = 8 + (size_t)ril * 16 + rdl;
	v->region_owned = kiln_malloc(v->region_len);
	if (!v->region_owned)
		return kiln_err_set(err, KILN_ENOMEM, "out of memory");
	put_be32(v->region_owned, ril);
	put_be32(v->region_owned + 4, rdl);
	memcpy(v->region_owned + 8, b + 16, (size_t)ril * 16);
	memcpy(v->region_owned + 8 + (size_t)ril * 16, data, rdl);
	v->region = v->region_owned;
	return KILN_OK;
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

		/* rpm 6.0 ignores the legacy signature tags (numbered from 1000: SIZE, MD5,
		 * PGP, GPG, PAYLOADSIZE) of a v6 package (lib/package.cc headerMergeLegacySigs). */
		if (p->format >= 6 && p->sig.entries[i].tag >= PACK_SIGTAG_SIZE)
			continue;
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
	if (view_region(v, err)) {
		pack_qf_view_release(v);
		return err->code;
	}
	return KILN_OK;
}

void pack_qf_view_release(struct pack_qf_view *v)
{
	if (!v)
		return;
	free(v->merged);
	free(v->tags);
	free(v->region_owned);
	memset(v, 0, sizeof(*v));
}

static bool view_get(void *ctx, uint32_t tag, struct rpmtag_qf_value *out)
{
	struct pack_qf_view *v = ctx;
	size_t lo = 0, hi = v->n;

	if (tag == RPMTAG_HEADERIMMUTABLE) {
		if (!v->region)
			return false;
		out->type = RPMTAG_TYPE_BIN;
		out->count = (uint32_t)v->region_len;
		out->data = v->region;
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
