/*
 * tagset.c - typed header tags in memory, allocated from an arena.
 */
#include "util/util.h"

#include "rpmtag/rpmtag.h"

struct tag_ent {
	uint32_t tag;
	enum rpmtag_type type;
	uint32_t count;
	void *data; /* in the arena */
	size_t cap; /* elements allocated */
};

struct rpmtag_set {
	struct kiln_arena *arena; /* borrowed */
	struct tag_ent *v;        /* in the arena */
	size_t n, cap;
};

static size_t elem_size(enum rpmtag_type t)
{
	switch (t) {
	case RPMTAG_TYPE_CHAR:
	case RPMTAG_TYPE_INT8:
	case RPMTAG_TYPE_BIN:
	case RPMTAG_TYPE_NULL:
		return 1;
	case RPMTAG_TYPE_INT16:
		return 2;
	case RPMTAG_TYPE_INT32:
		return 4;
	case RPMTAG_TYPE_INT64:
		return 8;
	case RPMTAG_TYPE_STRING:
	case RPMTAG_TYPE_STRING_ARRAY:
	case RPMTAG_TYPE_I18NSTRING:
		return sizeof(char *);
	}
	return 1;
}

static bool is_str(enum rpmtag_type t)
{
	return t == RPMTAG_TYPE_STRING || t == RPMTAG_TYPE_STRING_ARRAY ||
	       t == RPMTAG_TYPE_I18NSTRING;
}

struct rpmtag_set *rpmtag_set_new(struct kiln_arena *a)
{
	struct rpmtag_set *ts = kiln_arena_alloc(a, sizeof(*ts));

	if (ts)
		ts->arena = a;
	return ts;
}

static struct tag_ent *find(const struct rpmtag_set *ts, uint32_t tag)
{
	size_t i;

	for (i = 0; i < ts->n; i++) {
		if (ts->v[i].tag == tag)
			return &ts->v[i];
	}
	return NULL;
}

static kiln_rc oom(struct rpmtag_set *ts, struct kiln_err *err)
{
	kiln_rc rc = kiln_arena_finish(ts->arena, err);

	return rc ? rc : kiln_err_set(err, KILN_ENOMEM, "out of memory");
}

/* Store count elements from data at element offset at, growing the entry as needed. */
static kiln_rc ent_store(struct rpmtag_set *ts, struct tag_ent *e, uint32_t at, const void *data,
                         uint32_t count, struct kiln_err *err)
{
	size_t es = elem_size(e->type);
	size_t need = (size_t)at + count;
	uint32_t i;

	if (need > e->cap) {
		size_t cap = e->cap ? e->cap * 2 : 4;
		void *p;

		while (cap < need)
			cap *= 2;
		p = kiln_arena_array(ts->arena, cap, es);
		if (!p)
			return oom(ts, err);
		if (e->count)
			memcpy(p, e->data, e->count * es);
		e->data = p;
		e->cap = cap;
	}
	if (is_str(e->type)) {
		const char *const *src = data;
		const char **dst = e->data;

		for (i = 0; i < count; i++) {
			dst[at + i] = kiln_arena_strdup(ts->arena, src[i] ? src[i] : "");
			if (!dst[at + i])
				return oom(ts, err);
		}
	} else {
		memcpy((char *)e->data + (size_t)at * es, data, (size_t)count * es);
	}
	e->count = at + count;
	return KILN_OK;
}

static struct tag_ent *ent_new(struct rpmtag_set *ts, uint32_t tag, enum rpmtag_type type)
{
	struct tag_ent *e;

	if (ts->n == ts->cap) {
		size_t cap = ts->cap ? ts->cap * 2 : 16;
		struct tag_ent *v = kiln_arena_array(ts->arena, cap, sizeof(*v));

		if (!v)
			return NULL;
		if (ts->n)
			memcpy(v, ts->v, ts->n * sizeof(*v));
		ts->v = v;
		ts->cap = cap;
	}
	e = &ts->v[ts->n++];
	memset(e, 0, sizeof(*e));
	e->tag = tag;
	e->type = type;
	return e;
}

kiln_rc rpmtag_set_put(struct rpmtag_set *ts, uint32_t tag, enum rpmtag_type type, const void *data,
                       uint32_t count, struct kiln_err *err)
{
	struct tag_ent *e = find(ts, tag);

	if (!e) {
		e = ent_new(ts, tag, type);
		if (!e)
			return oom(ts, err);
	}
	e->type = type;
	e->count = 0;
	e->cap = 0;
	e->data = NULL;
	return ent_store(ts, e, 0, data, count, err);
}

kiln_rc rpmtag_set_append(struct rpmtag_set *ts, uint32_t tag, enum rpmtag_type type,
                          const void *data, uint32_t count, struct kiln_err *err)
{
	struct tag_ent *e = find(ts, tag);

	if (!e) {
		e = ent_new(ts, tag, type);
		if (!e)
			return oom(ts, err);
	} else if (e->type != type) {
		return kiln_err_set(err, KILN_EINVAL, "tag %u: type %d does not match %d", tag,
		                    (int)type, (int)e->type);
	}
	return ent_store(ts, e, e->count, data, count, err);
}

kiln_rc rpmtag_set_put_str(struct rpmtag_set *ts, uint32_t tag, const char *s, struct kiln_err *err)
{
	return rpmtag_set_put(ts, tag, RPMTAG_TYPE_STRING, &s, 1, err);
}

kiln_rc rpmtag_set_put_u32(struct rpmtag_set *ts, uint32_t tag, uint32_t v, struct kiln_err *err)
{
	return rpmtag_set_put(ts, tag, RPMTAG_TYPE_INT32, &v, 1, err);
}

bool rpmtag_set_get(const struct rpmtag_set *ts, uint32_t tag, struct rpmtag_qf_value *v)
{
	const struct tag_ent *e = ts ? find(ts, tag) : NULL;

	if (!e || !e->count)
		return false;
	v->type = e->type;
	v->count = e->count;
	v->data = e->data;
	return true;
}

const char *rpmtag_set_get_str(const struct rpmtag_set *ts, uint32_t tag)
{
	struct rpmtag_qf_value v;

	if (!rpmtag_set_get(ts, tag, &v) || !is_str(v.type))
		return NULL;
	return ((const char *const *)v.data)[0];
}

void rpmtag_set_del(struct rpmtag_set *ts, uint32_t tag)
{
	struct tag_ent *e = find(ts, tag);
	size_t i;

	if (!e)
		return;
	i = (size_t)(e - ts->v);
	memmove(ts->v + i, ts->v + i + 1, (ts->n - i - 1) * sizeof(*e));
	ts->n--;
}

size_t rpmtag_set_count(const struct rpmtag_set *ts)
{
	return ts ? ts->n : 0;
}

uint32_t rpmtag_set_tag_at(const struct rpmtag_set *ts, size_t i)
{
	return i < ts->n ? ts->v[i].tag : 0;
}

static int ent_cmp(const void *a, const void *b)
{
	const struct tag_ent *x = a, *y = b;

	return x->tag < y->tag ? -1 : x->tag > y->tag;
}

void rpmtag_set_sort(struct rpmtag_set *ts)
{
	if (ts && ts->n > 1)
		qsort(ts->v, ts->n, sizeof(*ts->v), ent_cmp);
}
