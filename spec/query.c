/*
 * query.c - query-format sources over a parsed spec, for `kiln spec -q` (rpmspec -q).
 */
#include "util/util.h"

#include "macro/macro.h"
#include "spec/spec.h"

/* The source's ctx is the tag set; :expand needs the macro context too, so the context
 * struct pairs them. It lives in the spec's arena (one per package, made on demand). */
struct spec_qf_ctx {
	const struct rpmtag_set *tags;
	struct macro_ctx *macros;
};

static bool src_get(void *ctx, uint32_t tag, struct rpmtag_qf_value *v)
{
	const struct spec_qf_ctx *c = ctx;

	return rpmtag_set_get(c->tags, tag, v);
}

static size_t src_count(void *ctx)
{
	const struct spec_qf_ctx *c = ctx;

	return rpmtag_set_count(c->tags);
}

static uint32_t src_tag_at(void *ctx, size_t i)
{
	const struct spec_qf_ctx *c = ctx;

	return rpmtag_set_tag_at(c->tags, i);
}

static kiln_rc src_expand(void *ctx, const char *in, struct kiln_buf *out, struct kiln_err *err)
{
	const struct spec_qf_ctx *c = ctx;

	if (!c->macros) {
		kiln_buf_addstr(out, in);
		return kiln_buf_finish(out, err);
	}
	return macro_expand(c->macros, in, strlen(in), out, err);
}

static const struct rpmtag_qf_source_ops spec_qf_ops = {
    .get = src_get,
    .tag_count = src_count,
    .tag_at = src_tag_at,
    .expand = src_expand,
};

static void source_init(struct spec_qf_ctx *c, struct rpmtag_qf_source *src)
{
	src->ops = &spec_qf_ops;
	src->ctx = c;
	src->flags = 0;
}

kiln_rc spec_qf_source_make(struct spec *spec, const struct rpmtag_set *tags,
                            struct rpmtag_qf_source *src, struct kiln_err *err)
{
	struct spec_qf_ctx *c = kiln_arena_alloc(&spec->arena, sizeof(*c));

	if (!c)
		return kiln_arena_finish(&spec->arena, err);
	c->tags = tags;
	c->macros = spec->macros;
	source_init(c, src);
	return KILN_OK;
}
