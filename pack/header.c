/*
 * header.c - rpm's header structure in memory and on disk (rpm-reference.md section 2.2).
 *
 * On disk: magic(8) il(4) dl(4) index[il] data[dl], big-endian. The reader applies the
 * checks rpm's hdrblobVerifyInfo/hdrblobVerifyRegion apply (types, counts, alignment, bounds,
 * NUL-terminated strings, no overlap, the region and its trailer, size limits) and names the
 * failing entry and its file offset. The writer lays data out in index order with rpm's
 * alignment and the region trailer last, which is exactly what rpmbuild produces.
 */
#include "util/util.h"

#include "pack/pack.h"
#include "pack/pack_int.h"

static const unsigned char header_magic[8] = {0x8e, 0xad, 0xe8, 0x01, 0, 0, 0, 0};

void pack_header_init(struct pack_header *h)
{
	memset(h, 0, sizeof(*h));
	kiln_arena_init(&h->arena, KILN_LIMIT_ARENA);
}

void pack_header_release(struct pack_header *h)
{
	if (!h)
		return;
	kiln_arena_release(&h->arena);
	free(h->entries);
	memset(h, 0, sizeof(*h));
}

static size_t find_pos(const struct pack_header *h, uint32_t tag, bool *found)
{
	size_t lo = 0, hi = h->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (h->entries[mid].tag == tag) {
			*found = true;
			return mid;
		}
		if (h->entries[mid].tag < tag)
			lo = mid + 1;
		else
			hi = mid;
	}
	*found = false;
	return lo;
}

const struct pack_entry *pack_header_get(const struct pack_header *h, uint32_t tag)
{
	bool found;
	size_t i = find_pos(h, tag, &found);

	return found ? &h->entries[i] : NULL;
}

const char *pack_header_get_string(const struct pack_header *h, uint32_t tag)
{
	const struct pack_entry *e = pack_header_get(h, tag);

	if (!e || !rpmtag_type_is_string(e->type) || !e->count)
		return NULL;
	return ((const char *const *)e->data)[0];
}

bool pack_header_get_number(const struct pack_header *h, uint32_t tag, uint64_t *out)
{
	const struct pack_entry *e = pack_header_get(h, tag);
	struct rpmtag_qf_value v;

	if (!e || !rpmtag_type_is_number(e->type) || !e->count)
		return false;
	v.type = e->type;
	v.count = e->count;
	v.data = e->data;
	*out = pack_value_num(&v, 0);
	return true;
}

void pack_header_del(struct pack_header *h, uint32_t tag)
{
	bool found;
	size_t i = find_pos(h, tag, &found);

	if (!found)
		return;
	memmove(&h->entries[i], &h->entries[i + 1], (h->n - i - 1) * sizeof(*h->entries));
	h->n--;
}

/* Insert or replace an entry whose data already lives in h's arena. */
static kiln_rc header_set(struct pack_header *h, const struct pack_entry *e, struct kiln_err *err)
{
	bool found;
	size_t i = find_pos(h, e->tag, &found);
	struct pack_entry *grown;

	if (found) {
		h->entries[i] = *e;
		return KILN_OK;
	}
	if (h->n == h->cap) {
		size_t cap = h->cap ? h->cap * 2 : 64;

		grown = kiln_reallocarray(h->entries, cap, sizeof(*grown));
		if (!grown)
			return kiln_err_set(err, KILN_ENOMEM, "out of memory");
		h->entries = grown;
		h->cap = cap;
	}
	memmove(&h->entries[i + 1], &h->entries[i], (h->n - i) * sizeof(*h->entries));
	h->entries[i] = *e;
	h->n++;
	return KILN_OK;
}

size_t pack_type_size(enum rpmtag_type t)
{
	switch (t) {
	case RPMTAG_TYPE_CHAR:
	case RPMTAG_TYPE_INT8:
	case RPMTAG_TYPE_BIN:
		return 1;
	case RPMTAG_TYPE_INT16:
		return 2;
	case RPMTAG_TYPE_INT32:
		return 4;
	case RPMTAG_TYPE_INT64:
		return 8;
	case RPMTAG_TYPE_NULL:
	case RPMTAG_TYPE_STRING:
	case RPMTAG_TYPE_STRING_ARRAY:
	case RPMTAG_TYPE_I18NSTRING:
		break;
	}
	return 0;
}

static size_t type_align(enum rpmtag_type t)
{
	size_t s = pack_type_size(t);

	return s ? s : 1;
}

uint64_t pack_value_num(const struct rpmtag_qf_value *v, uint32_t i)
{
	switch (v->type) {
	case RPMTAG_TYPE_CHAR:
	case RPMTAG_TYPE_INT8:
		return ((const uint8_t *)v->data)[i];
	case RPMTAG_TYPE_INT16:
		return ((const uint16_t *)v->data)[i];
	case RPMTAG_TYPE_INT32:
		return ((const uint32_t *)v->data)[i];
	case RPMTAG_TYPE_INT64:
		return ((const uint64_t *)v->data)[i];
	case RPMTAG_TYPE_NULL:
	case RPMTAG_TYPE_STRING:
	case RPMTAG_TYPE_BIN:
	case RPMTAG_TYPE_STRING_ARRAY:
	case RPMTAG_TYPE_I18NSTRING:
		break;
	}
	return 0;
}

kiln_rc pack_header_put(struct pack_header *h, uint32_t tag, enum rpmtag_type type,
                        const void *data, uint32_t count, struct kiln_err *err)
{
	struct pack_entry e = {tag, type, count, NULL};
	size_t size = 0, i;

	if (!count || type < RPMTAG_TYPE_CHAR || type > RPMTAG_TYPE_MAX ||
	    (type == RPMTAG_TYPE_STRING && count != 1))
		return kiln_err_set(err, KILN_EINVAL,
		                    "tag %" PRIu32 ": bad type %d or count %" PRIu32, tag,
		                    (int)type, count);
	if (rpmtag_type_is_string(type)) {
		const char *const *src = data;
		char **dst = kiln_arena_array(&h->arena, count, sizeof(*dst));

		for (i = 0; dst && i < count; i++)
			dst[i] = kiln_arena_strdup(&h->arena, src[i] ? src[i] : "");
		e.data = dst;
	} else {
		if (!util_mul_ok(pack_type_size(type), count, &size))
			return kiln_err_set(err, KILN_ELIMIT, "tag %" PRIu32 ": too large", tag);
		e.data = kiln_arena_alloc(&h->arena, size);
		if (e.data)
			memcpy(e.data, data, size);
	}
	if (kiln_arena_finish(&h->arena, err))
		return err ? err->code : KILN_ENOMEM;
	return header_set(h, &e, err);
}

kiln_rc pack_header_put_string(struct pack_header *h, uint32_t tag, const char *s,
                               struct kiln_err *err)
{
	return pack_header_put(h, tag, RPMTAG_TYPE_STRING, &s, 1, err);
}

kiln_rc pack_header_put_i18n(struct pack_header *h, uint32_t tag, const char *s,
                             struct kiln_err *err)
{
	return pack_header_put(h, tag, RPMTAG_TYPE_I18NSTRING, &s, 1, err);
}

kiln_rc pack_header_put_strings(struct pack_header *h, uint32_t tag, const char *const *s,
                                uint32_t count, struct kiln_err *err)
{
	return pack_header_put(h, tag, RPMTAG_TYPE_STRING_ARRAY, s, count, err);
}

kiln_rc pack_header_put_u32(struct pack_header *h, uint32_t tag, uint32_t v, struct kiln_err *err)
{
	return pack_header_put(h, tag, RPMTAG_TYPE_INT32, &v, 1, err);
}

kiln_rc pack_header_put_u64(struct pack_header *h, uint32_t tag, uint64_t v, struct kiln_err *err)
{
	return pack_header_put(h, tag, RPMTAG_TYPE_INT64, &v, 1, err);
}

kiln_rc pack_header_put_bin(struct pack_header *h, uint32_t tag, const void *p, size_t len,
                            struct kiln_err *err)
{
	if (len > UINT32_MAX)
		return kiln_err_set(err, KILN_ELIMIT, "tag %" PRIu32 ": blob too large", tag);
	return pack_header_put(h, tag, RPMTAG_TYPE_BIN, p, (uint32_t)len, err);
}

kiln_rc pack_header_copy(struct pack_header *dst, const struct pack_header *src,
                         struct kiln_err *err)
{
	size_t i;
	kiln_rc rc = KILN_OK;

	for (i = 0; !rc && i < src->n; i++) {
		const struct pack_entry *e = &src->entries[i];

		rc = pack_header_put(dst, e->tag, e->type, e->data, e->count, err);
	}
	return rc;
}

/* ---------------------------------------------------------------------------------------- */
/* Reading */

static uint32_t be32(const unsigned char *p)
{
	return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

struct raw_entry {
	uint32_t tag, type, count;
	int32_t offset;
};

struct blob {
	const unsigned char *store; /* data area */
	size_t dl;
	uint64_t store_off; /* file offset of the data area, for messages */
	uint64_t index_off; /* file offset of the index */
	const char *what;   /* "header" or "signature header" */
	struct kiln_err *err;
};

static kiln_rc bad_entry(const struct blob *b, size_t i, const struct raw_entry *e, const char *why)
{
	return kiln_err_set(b->err, KILN_EFORMAT,
	                    "%s: entry %zu (tag %" PRIu32 " type %" PRIu32 " offset %" PRId32
	                    " count %" PRIu32 ") at offset %" PRIu64 ": %s",
	                    b->what, i, e->tag, e->type, e->offset, e->count,
	                    b->index_off + 16 * (uint64_t)i, why);
}

/* Bytes an entry occupies starting at its offset, within limit (the data area, or the
 * region trailer's start). 0 when it does not fit. */
static size_t entry_size(const struct blob *b, const struct raw_entry *e, size_t limit)
{
	size_t off = (size_t)e->offset, size, i, n;
	const unsigned char *p;

	if (e->type == RPMTAG_TYPE_STRING || e->type == RPMTAG_TYPE_STRING_ARRAY ||
	    e->type == RPMTAG_TYPE_I18NSTRING) {
		for (i = 0, size = 0; i < e->count; i++) {
			if (off + size >= limit)
				return 0;
			p = memchr(b->store + off + size, '\0', limit - off - size);
			if (!p)
				return 0;
			n = (size_t)(p - (b->store + off + size)) + 1;
			size += n;
		}
		return size;
	}
	size = pack_type_size(e->type) * (size_t)e->count;
	return size <= limit - off ? size : 0;
}

static bool types_compatible(uint32_t tag, enum rpmtag_type have)
{
	const struct rpmtag_info *ti = rpmtag_by_num(tag);

	if (!ti || (ti->flags & RPMTAG_F_EXT))
		return true;
	if (rpmtag_type_is_string(ti->type))
		return rpmtag_type_is_string(have);
	return ti->type == have;
}

static kiln_rc check_entry(const struct blob *b, size_t i, const struct raw_entry *e, size_t limit,
                           unsigned flags, size_t *prev_end, size_t *size)
{
	if (e->tag < RPMTAG_HEADERI18NTABLE)
		return bad_entry(b, i, e, "tag number below 100 outside the region");
	if (e->type < RPMTAG_TYPE_CHAR || e->type > RPMTAG_TYPE_MAX)
		return bad_entry(b, i, e, "bad data type");
	if (e->count < 1 || (e->type != RPMTAG_TYPE_BIN && e->count > KILN_LIMIT_HEADER_COUNT) ||
	    e->count > b->dl)
		return bad_entry(b, i, e, "bad count");
	if (e->type == RPMTAG_TYPE_STRING && e->count != 1)
		return bad_entry(b, i, e, "string with count other than 1");
	if (e->offset < 0 || (size_t)e->offset >= limit)
		return bad_entry(b, i, e, "data offset out of bounds");
	if ((size_t)e->offset % type_align(e->type))
		return bad_entry(b, i, e, "misaligned data");
	if ((size_t)e->offset < *prev_end)
		return bad_entry(b, i, e, "data overlaps the previous entry");
	if ((flags & PACK_HDR_F_TYPECHECK) && !types_compatible(e->tag, e->type))
		return bad_entry(b, i, e, "data type does not match rpm's tag table");
	*size = entry_size(b, e, limit);
	if (!*size)
		return bad_entry(b, i, e, "data out of bounds or string not terminated");
	*prev_end = (size_t)e->offset + *size;
	return KILN_OK;
}

/* Decode an entry's data (checked) into the arena. */
static kiln_rc decode_entry(struct pack_header *h, const struct blob *b, const struct raw_entry *e,
                            const char *strcopy, struct pack_entry *out)
{
	const unsigned char *p = b->store + e->offset;
	size_t es = pack_type_size(e->type), i;

	out->tag = e->tag;
	out->type = e->type;
	out->count = e->count;
	if (rpmtag_type_is_string(e->type)) {
		const char *s = strcopy + e->offset;
		const char **arr = kiln_arena_array(&h->arena, e->count, sizeof(*arr));

		for (i = 0; arr && i < e->count; i++) {
			arr[i] = s;
			s += strlen(s) + 1;
		}
		out->data = arr;
	} else if (es == 1) {
		out->data = kiln_arena_alloc(&h->arena, e->count);
		if (out->data)
			memcpy(out->data, p, e->count);
	} else {
		out->data = kiln_arena_array(&h->arena, e->count, es);
		for (i = 0; out->data && i < e->count; i++, p += es) {
			if (es == 2)
				((uint16_t *)out->data)[i] = (uint16_t)((p[0] << 8) | p[1]);
			else if (es == 4)
				((uint32_t *)out->data)[i] = be32(p);
			else
				((uint64_t *)out->data)[i] =
				    ((uint64_t)be32(p) << 32) | be32(p + 4);
		}
	}
	if (!out->data)
		return kiln_err_set(b->err, KILN_ENOMEM, "out of memory");
	return KILN_OK;
}

static void raw_at(const unsigned char *p, struct raw_entry *e)
{
	e->tag = be32(p);
	e->type = be32(p + 4);
	e->offset = (int32_t)be32(p + 8);
	e->count = be32(p + 12);
}

/* The region entry and its trailer; *limit gets where ordinary data must end. */
static kiln_rc check_region(const struct blob *b, const struct raw_entry *r, uint32_t il,
                            uint32_t want, size_t *limit)
{
	struct raw_entry t;

	if (r->tag != want &&
	    !(want == PACK_SIGTAG_HEADERSIGNATURES && r->tag == RPMTAG_HEADERIMAGE))
		return bad_entry(b, 0, r, "wrong region tag");
	if (r->type != RPMTAG_TYPE_BIN || r->count != 16)
		return bad_entry(b, 0, r, "region entry is not a 16-byte blob");
	if (r->offset < 0 || (size_t)r->offset + 16 != b->dl)
		return bad_entry(b, 0, r, "region trailer is not at the end of the data");
	raw_at(b->store + r->offset, &t);
	if ((t.tag != r->tag && t.tag != RPMTAG_HEADERIMAGE) || t.type != RPMTAG_TYPE_BIN ||
	    t.count != 16)
		return kiln_err_set(b->err, KILN_EFORMAT,
		                    "%s: bad region trailer at offset %" PRIu64, b->what,
		                    b->store_off + (uint64_t)r->offset);
	if ((int64_t)t.offset != -(int64_t)il * 16)
		return kiln_err_set(b->err, KILN_EFORMAT,
		                    "%s: region trailer at offset %" PRIu64 " covers %" PRId64
		                    " entries, the header has %" PRIu32,
		                    b->what, b->store_off + (uint64_t)r->offset,
		                    -(int64_t)t.offset / 16, il);
	*limit = (size_t)r->offset;
	return KILN_OK;
}

/* Check and decode the entries of an index. */
static kiln_rc read_entries(struct pack_header *h, const struct blob *b, const unsigned char *index,
                            uint32_t il, uint32_t region, unsigned flags)
{
	struct raw_entry e;
	size_t limit = b->dl, prev_end = 0, size, i, first = 0;
	char *strcopy;
	kiln_rc rc = KILN_OK;

	raw_at(index, &e);
	if (e.tag >= RPMTAG_HEADERIMAGE && e.tag < RPMTAG_HEADERREGIONS) {
		rc = check_region(b, &e, il, region, &limit);
		if (rc)
			return rc;
		h->region = e.tag;
		first = 1;
	}
	/* One copy of the data area gives every decoded string a stable home. */
	strcopy = kiln_arena_alloc(&h->arena, b->dl + 1);
	if (!strcopy)
		return kiln_err_set(b->err, KILN_ENOMEM, "out of memory");
	memcpy(strcopy, b->store, b->dl);
	for (i = first; !rc && i < il; i++) {
		struct pack_entry pe;

		raw_at(index + 16 * i, &e);
		rc = check_entry(b, i, &e, limit, flags, &prev_end, &size);
		/* rpm writes indexes sorted and format_v6 requires it; rpm 4.18 would sort an
		 * unsorted one on import, but no rpm ever wrote one, so it is refused. */
		if (!rc && h->n && e.tag == h->entries[h->n - 1].tag)
			rc = bad_entry(b, i, &e, "duplicate tag");
		if (!rc && h->n && e.tag < h->entries[h->n - 1].tag)
			rc = bad_entry(b, i, &e, "index not sorted by tag");
		if (!rc)
			rc = decode_entry(h, b, &e, strcopy, &pe);
		if (!rc)
			rc = header_set(h, &pe, b->err);
	}
	return rc;
}

kiln_rc pack_header_intro(const void *data, unsigned flags, uint64_t base_off, size_t *need,
                          struct kiln_err *err)
{
	const unsigned char *p = data;
	bool sig = flags & PACK_HDR_F_SIG;
	const char *what = sig ? "signature header" : "header";
	size_t max_il = sig ? KILN_LIMIT_SIG_TAGS : KILN_LIMIT_HEADER_TAGS;
	size_t max_dl = sig ? KILN_LIMIT_SIG_DATA : KILN_LIMIT_HEADER_DATA;
	uint32_t il, dl;

	if (memcmp(p, header_magic, sizeof(header_magic)))
		return kiln_err_set(err, KILN_EFORMAT, "%s: bad magic at offset %" PRIu64, what,
		                    base_off);
	il = be32(p + 8);
	dl = be32(p + 12);
	if (il < 1 || il > max_il)
		return kiln_err_set(err, il ? KILN_ELIMIT : KILN_EFORMAT,
		                    "%s: %" PRIu32 " index entries at offset %" PRIu64
		                    " (allowed 1 to %zu)",
		                    what, il, base_off + 8, max_il);
	if (dl > max_dl)
		return kiln_err_set(err, KILN_ELIMIT,
		                    "%s: %" PRIu32 " data bytes at offset %" PRIu64 " exceed %zu",
		                    what, dl, base_off + 12, max_dl);
	*need = 16 + (size_t)il * 16 + dl;
	return KILN_OK;
}

kiln_rc pack_header_from_mem(struct pack_header *h, const void *data, size_t len, uint32_t region,
                             unsigned flags, uint64_t base_off, size_t *used, struct kiln_err *err)
{
	const unsigned char *p = data;
	const char *what = (flags & PACK_HDR_F_SIG) ? "signature header" : "header";
	uint32_t il;
	size_t need = 0;
	struct blob b;
	kiln_rc rc;

	if (len < 16)
		return kiln_err_set(err, KILN_EFORMAT,
		                    "%s: truncated at offset %" PRIu64 " (%zu of 16 bytes)", what,
		                    base_off, len);
	rc = pack_header_intro(p, flags, base_off, &need, err);
	if (rc)
		return rc;
	if (len < need)
		return kiln_err_set(err, KILN_EFORMAT,
		                    "%s: truncated at offset %" PRIu64 " (%zu of %zu bytes)", what,
		                    base_off, len, need);
	il = be32(p + 8);
	b.store = p + 16 + (size_t)il * 16;
	b.dl = be32(p + 12);
	b.index_off = base_off + 16;
	b.store_off = base_off + 16 + (uint64_t)il * 16;
	b.what = what;
	b.err = err;
	if (used)
		*used = need;
	return read_entries(h, &b, p + 16, il, region, flags);
}

/* ---------------------------------------------------------------------------------------- */
/* Writing */

static size_t entry_data_size(const struct pack_entry *e)
{
	size_t size = 0, i;

	if (rpmtag_type_is_string(e->type)) {
		for (i = 0; i < e->count; i++)
			size += strlen(((const char *const *)e->data)[i]) + 1;
		return size;
	}
	return pack_type_size(e->type) * (size_t)e->count;
}

static bool is_region(uint32_t tag)
{
	return tag >= RPMTAG_HEADERIMAGE && tag <= RPMTAG_HEADERREGIONS;
}

/* Data size with alignment, before the trailer; *il gets the index count with the region. */
static size_t layout(const struct pack_header *h, size_t *il)
{
	size_t off = 0, i, a;

	*il = 1;
	for (i = 0; i < h->n; i++) {
		if (is_region(h->entries[i].tag))
			continue;
		a = type_align(h->entries[i].type);
		off = (off + a - 1) / a * a;
		off += entry_data_size(&h->entries[i]);
		(*il)++;
	}
	return off;
}

size_t pack_header_size(const struct pack_header *h, uint32_t region)
{
	size_t il, dl = layout(h, &il) + 16;

	(void)region;
	return 16 + il * 16 + dl;
}

static void put32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)(v >> 24);
	p[1] = (unsigned char)(v >> 16);
	p[2] = (unsigned char)(v >> 8);
	p[3] = (unsigned char)v;
}

static void put_index(unsigned char *p, uint32_t tag, uint32_t type, uint32_t off, uint32_t cnt)
{
	put32(p, tag);
	put32(p + 4, type);
	put32(p + 8, off);
	put32(p + 12, cnt);
}

static void encode_data(const struct pack_entry *e, unsigned char *p)
{
	size_t es = pack_type_size(e->type), i, n;

	if (rpmtag_type_is_string(e->type)) {
		for (i = 0; i < e->count; i++) {
			n = strlen(((const char *const *)e->data)[i]) + 1;
			memcpy(p, ((const char *const *)e->data)[i], n);
			p += n;
		}
		return;
	}
	if (es == 1) {
		memcpy(p, e->data, e->count);
		return;
	}
	for (i = 0; i < e->count; i++, p += es) {
		if (es == 2) {
			uint16_t v = ((const uint16_t *)e->data)[i];

			p[0] = (unsigned char)(v >> 8);
			p[1] = (unsigned char)v;
		} else if (es == 4) {
			put32(p, ((const uint32_t *)e->data)[i]);
		} else {
			uint64_t v = ((const uint64_t *)e->data)[i];

			put32(p, (uint32_t)(v >> 32));
			put32(p + 4, (uint32_t)v);
		}
	}
}

kiln_rc pack_header_write(const struct pack_header *h, uint32_t region, struct kiln_buf *out,
                          struct kiln_err *err)
{
	size_t il, data = layout(h, &il), dl = data + 16, total = 16 + il * 16 + dl;
	size_t off = 0, i, a, k = 1;
	unsigned char *base, *index, *store;

	if (il > KILN_LIMIT_HEADER_TAGS || dl > KILN_LIMIT_HEADER_DATA)
		return kiln_err_set(err, KILN_ELIMIT,
		                    "header: %zu entries and %zu data bytes exceed rpm's limits",
		                    il, dl);
	if (!kiln_buf_grow(out, total))
		return kiln_buf_finish(out, err);
	base = (unsigned char *)out->ptr + out->len;
	memset(base, 0, total);
	memcpy(base, header_magic, sizeof(header_magic));
	put32(base + 8, (uint32_t)il);
	put32(base + 12, (uint32_t)dl);
	index = base + 16;
	store = index + il * 16;
	put_index(index, region, RPMTAG_TYPE_BIN, (uint32_t)data, 16);
	for (i = 0; i < h->n; i++) {
		const struct pack_entry *e = &h->entries[i];

		if (is_region(e->tag))
			continue;
		a = type_align(e->type);
		off = (off + a - 1) / a * a;
		put_index(index + 16 * k++, e->tag, e->type, (uint32_t)off, e->count);
		encode_data(e, store + off);
		off += entry_data_size(e);
	}
	put_index(store + data, region, RPMTAG_TYPE_BIN, (uint32_t)(-(int64_t)il * 16), 16);
	out->len += total;
	out->ptr[out->len] = '\0';
	return KILN_OK;
}
