/*
 * table.c - the macro table: names to stacks of definitions, call scopes, the graveyard.
 */
#include "util/util.h"

#include "macro/macro_int.h"

#define TABLE_MIN 1024

static uint32_t name_hash(const char *s, size_t len)
{
	uint32_t h = 2166136261u;
	size_t i;

	for (i = 0; i < len; i++) {
		h ^= (unsigned char)s[i];
		h *= 16777619u;
	}
	return h;
}

/* How many freed small blocks a table keeps for the next call's definitions: a parametric
 * call pushes and frees about ten, nested calls a few times that. */
#define SPARE_MAX 128

static void def_free(struct macro_table *t, struct macro_def *d)
{
	if (!d || (d->flags & MACRO_DEF_POOLED))
		return;
	if ((d->flags & MACRO_DEF_SMALL) && t->nspare < SPARE_MAX) {
		d->below = t->spare;
		t->spare = d;
		t->nspare++;
		return;
	}
	free(d);
}

static void def_free_stack(struct macro_table *t, struct macro_def *d)
{
	while (d) {
		struct macro_def *below = d->below;

		def_free(t, d);
		d = below;
	}
}

void macro_table_release(struct macro_table *t)
{
	size_t i;

	if (!t)
		return;
	for (i = 0; i < t->cap; i++) {
		struct macro_slot *s = t->slots[i];

		if (!s)
			continue;
		def_free_stack(t, s->top);
		if (!s->pooled)
			free(s);
	}
	while (t->spare) {
		struct macro_def *next = t->spare->below;

		free(t->spare);
		t->spare = next;
	}
	t->nspare = 0;
	free(t->slots);
	free(t->hashes);
	free(t->pool);
	kiln_arena_release(&t->slots_arena);
	kiln_arena_release(&t->file_defs);
	t->slots = NULL;
	t->hashes = NULL;
	t->pool = NULL;
	t->cap = t->used = 0;
}

struct macro_slot *macro_table_find(const struct macro_table *t, const char *name, size_t len)
{
	uint32_t h;
	size_t i;

	if (!t->cap)
		return NULL;
	h = name_hash(name, len);
	for (i = h & (t->cap - 1);; i = (i + 1) & (t->cap - 1)) {
		struct macro_slot *s = t->slots[i];

		if (!s)
			return NULL;
		if (t->hashes[i] == h && s->name_len == len && !memcmp(s->name, name, len))
			return s;
	}
}

static bool table_grow(struct macro_table *t)
{
	size_t cap = t->cap ? t->cap * 2 : TABLE_MIN;
	struct macro_slot **slots = kiln_calloc(cap, sizeof(*slots));
	uint32_t *hashes = kiln_calloc(cap, sizeof(*hashes));
	size_t i;

	if (!slots || !hashes) {
		free(slots);
		free(hashes);
		return false;
	}
	for (i = 0; i < t->cap; i++) {
		struct macro_slot *s = t->slots[i];
		size_t j;

		if (!s)
			continue;
		for (j = s->hash & (cap - 1); slots[j]; j = (j + 1) & (cap - 1))
			;
		slots[j] = s;
		hashes[j] = s->hash;
	}
	free(t->slots);
	free(t->hashes);
	t->slots = slots;
	t->hashes = hashes;
	t->cap = cap;
	return true;
}

kiln_rc macro_table_slot(struct macro_table *t, const char *name, size_t len,
                         struct macro_slot **out, struct kiln_err *err)
{
	struct macro_slot *s = macro_table_find(t, name, len);
	size_t i;

	if (s) {
		*out = s;
		return KILN_OK;
	}
	/* Keep the load factor under one half so probes stay short. */
	if ((t->used + 1) * 2 > t->cap && !table_grow(t))
		return kiln_err_set(err, KILN_ENOMEM, "out of memory");
	/* Slots are never removed before the table goes, so they come from an arena: kept
	 * together, a lookup's slot is more often in the cache than one among the bodies. */
	if (!t->slots_arena.max)
		kiln_arena_init(&t->slots_arena, SIZE_MAX);
	if (len >= SIZE_MAX - sizeof(*s) ||
	    !(s = kiln_arena_alloc(&t->slots_arena, sizeof(*s) + len + 1)))
		return kiln_err_set(err, KILN_ENOMEM, "out of memory");
	s->pooled = true;
	s->name = (char *)(s + 1);
	memcpy(s->name, name, len);
	s->name[len] = '\0';
	s->name_len = len;
	s->hash = name_hash(name, len);
	for (i = s->hash & (t->cap - 1); t->slots[i]; i = (i + 1) & (t->cap - 1))
		;
	t->slots[i] = s;
	t->hashes[i] = s->hash;
	t->used++;
	*out = s;
	return KILN_OK;
}

static kiln_rc scope_record(struct macro_ctx *ctx, struct macro_slot *slot, struct kiln_err *err)
{
	if (ctx->nscope == ctx->capscope) {
		size_t cap = ctx->capscope ? ctx->capscope * 2 : 64;
		struct macro_slot **p = kiln_reallocarray(ctx->scope, cap, sizeof(*p));

		if (!p)
			return kiln_err_set(err, KILN_ENOMEM, "out of memory");
		ctx->scope = p;
		ctx->capscope = cap;
	}
	ctx->scope[ctx->nscope++] = slot;
	return KILN_OK;
}

/* Definitions from macro files are most of a context's memory (rpm's files, and
 * bench/macro's 1.8 MB workload) and live as long as it does, so they are put side by
 * side in an arena whose blocks are populated in one call: as single allocations they
 * took a page fault per 4 KiB, ~10 us each on a virtual machine. A file definition that
 * is popped leaves its bytes in the arena until the table goes. __file_name and
 * __file_lineno (literal, popped per line) stay on the heap. */
static struct macro_def *def_alloc(struct macro_table *t, size_t size, int level, unsigned *flags)
{
	if (level != MACRO_LEVEL_FILE || (*flags & MACRO_DEF_LITERAL)) {
		struct macro_def *d;

		if (size > MACRO_SMALL_DEF)
			return kiln_malloc(size);
		*flags |= MACRO_DEF_SMALL;
		if (!t->spare)
			return kiln_malloc(MACRO_SMALL_DEF);
		d = t->spare;
		t->spare = d->below;
		t->nspare--;
		return d;
	}
	if (!t->file_defs.max) {
		kiln_arena_init(&t->file_defs, SIZE_MAX);
		t->file_defs.prefault = true;
	}
	*flags |= MACRO_DEF_POOLED;
	/* macro_push sets every field and copies the body: zeroing it first was ~5% of a
	 * large macro file's load (bench/macro) */
	return kiln_arena_alloc_raw(&t->file_defs, size);
}

kiln_rc macro_push(struct macro_ctx *ctx, const char *name, size_t name_len, const char *opts,
                   const char *body, size_t body_len, int level, unsigned flags,
                   struct kiln_err *err)
{
	size_t optlen = opts ? strlen(opts) + 1 : 0;
	struct macro_slot *slot;
	struct macro_def *d;
	size_t total;
	kiln_rc rc;

	rc = macro_table_slot(&ctx->table, name, name_len, &slot, err);
	if (rc)
		return rc;
	if (!util_add_ok(sizeof(*d) + optlen, body_len + 1, &total))
		return kiln_err_set(err, KILN_ELIMIT, "macro body too large");
	d = def_alloc(&ctx->table, total, level, &flags);
	if (!d)
		return kiln_err_set(err, KILN_ENOMEM, "out of memory");
	d->grave = NULL;
	d->body = (char *)(d + 1);
	memcpy(d->body, body, body_len);
	d->body[body_len] = '\0';
	d->body_len = body_len;
	d->opts = NULL;
	if (opts) {
		d->opts = d->body + body_len + 1;
		memcpy(d->opts, opts, optlen);
	}
	d->level = level;
	d->flags = flags;
	if (level > 0 && level >= ctx->level && ctx->level > 0) {
		rc = scope_record(ctx, slot, err);
		if (rc) {
			def_free(&ctx->table, d);
			return rc;
		}
	}
	d->below = slot->top;
	slot->top = d;
	return KILN_OK;
}

void macro_pop(struct macro_ctx *ctx, struct macro_slot *slot)
{
	struct macro_def *d = slot->top;

	if (!d)
		return;
	slot->top = d->below;
	d->below = NULL;
	/* An expansion may still be reading this body (a macro that undefines itself), so
	 * it is freed only once no expansion runs. */
	d->grave = ctx->graveyard;
	ctx->graveyard = d;
}

void macro_pop_free(struct macro_table *t, struct macro_slot *slot)
{
	struct macro_def *d = slot ? slot->top : NULL;

	if (!d)
		return;
	slot->top = d->below;
	def_free(t, d);
}

void macro_graveyard_empty(struct macro_ctx *ctx)
{
	struct macro_def *d = ctx->graveyard;

	while (d) {
		struct macro_def *next = d->grave;

		def_free(&ctx->table, d);
		d = next;
	}
	ctx->graveyard = NULL;
}

void macro_scope_unwind(struct mbuf *mb, size_t mark, int level)
{
	struct macro_ctx *ctx = mb->ctx;

	while (ctx->nscope > mark) {
		struct macro_slot *slot = ctx->scope[--ctx->nscope];

		while (slot->top && slot->top->level >= level) {
			if (!(slot->top->flags & (MACRO_DEF_AUTO | MACRO_DEF_USED))) {
				macro_mb_warn(mb, "Macro %%%s defined but not used within scope",
				              slot->name);
			}
			/* The call is over, so nothing still reads these bodies. */
			macro_pop_free(&ctx->table, slot);
		}
	}
}

struct macro_def *macro_lookup(struct macro_ctx *ctx, struct macro_slot *slot)
{
	struct macro_def *d = slot ? slot->top : NULL;

	if (!d)
		return NULL;
	/* Automatic macros (%1, %*, %-f ...) belong to one call; a nested call must not see
	 * its caller's. */
	if ((d->flags & MACRO_DEF_AUTO) && ctx->level > d->level)
		return NULL;
	d->flags |= MACRO_DEF_USED;
	return d;
}

bool macro_name_valid(const char *name, size_t len)
{
	size_t i;

	if (!len)
		return false;
	if (!((name[0] >= 'a' && name[0] <= 'z') || (name[0] >= 'A' && name[0] <= 'Z') ||
	      (name[0] == '_' && len > 1)))
		return false;
	for (i = 1; i < len; i++) {
		char c = name[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '_'))
			return false;
	}
	return true;
}

/* A copied table keeps its starting slots and definitions in one block (a spec parse copies
 * the loaded configuration, a few thousand definitions, and frees it soon after: one
 * allocation instead of three per macro). Each piece is aligned for struct macro_def. */
#define POOL_ALIGN _Alignof(max_align_t)

static size_t pool_round(size_t n)
{
	return (n + POOL_ALIGN - 1) & ~(size_t)(POOL_ALIGN - 1);
}

static size_t def_size(const struct macro_def *d)
{
	size_t optlen = d->opts ? strlen(d->opts) + 1 : 0;

	return pool_round(sizeof(*d) + d->body_len + 1 + optlen);
}

/* Bytes the pool needs for src; false when that would overflow. */
static bool pool_size(const struct macro_table *src, size_t *out)
{
	size_t total = 0;
	size_t i;

	for (i = 0; i < src->cap; i++) {
		const struct macro_slot *s = src->slots[i];
		const struct macro_def *d;

		if (!s)
			continue;
		if (!util_add_ok(total, pool_round(sizeof(*s)) + pool_round(s->name_len + 1),
		                 &total))
			return false;
		for (d = s->top; d; d = d->below) {
			if (!util_add_ok(total, def_size(d), &total))
				return false;
		}
	}
	*out = total;
	return true;
}

static struct macro_def *def_copy(const struct macro_def *d, char **pool)
{
	size_t optlen = d->opts ? strlen(d->opts) + 1 : 0;
	struct macro_def *c = (struct macro_def *)*pool;

	*pool += def_size(d);
	*c = *d;
	c->below = NULL;
	c->grave = NULL;
	c->flags = (c->flags | MACRO_DEF_POOLED) & ~(unsigned)MACRO_DEF_SMALL;
	c->body = (char *)(c + 1);
	memcpy(c->body, d->body, d->body_len + 1);
	c->opts = NULL;
	if (d->opts) {
		c->opts = c->body + d->body_len + 1;
		memcpy(c->opts, d->opts, optlen);
	}
	return c;
}

static struct macro_slot *slot_copy(const struct macro_slot *s, char **pool)
{
	struct macro_slot *c = (struct macro_slot *)*pool;
	const struct macro_def *d;
	struct macro_def **tail;

	*pool += pool_round(sizeof(*c));
	memset(c, 0, sizeof(*c));
	c->name = *pool;
	*pool += pool_round(s->name_len + 1);
	memcpy(c->name, s->name, s->name_len);
	c->name[s->name_len] = '\0';
	c->name_len = s->name_len;
	c->hash = s->hash;
	c->builtin = s->builtin;
	c->pooled = true;
	tail = &c->top;
	for (d = s->top; d; d = d->below) {
		*tail = def_copy(d, pool);
		tail = &(*tail)->below;
	}
	return c;
}

kiln_rc macro_table_copy(struct macro_table *dst, const struct macro_table *src,
                         struct kiln_err *err)
{
	size_t size;
	char *pool;
	size_t i;

	memset(dst, 0, sizeof(*dst));
	if (!src->cap)
		return KILN_OK;
	if (!pool_size(src, &size))
		return kiln_err_set(err, KILN_ELIMIT, "macro table too large to copy");
	dst->slots = kiln_calloc(src->cap, sizeof(*dst->slots));
	dst->hashes = kiln_malloc(src->cap * sizeof(*dst->hashes));
	dst->pool = kiln_malloc(size ? size : 1);
	if (!dst->slots || !dst->hashes || !dst->pool) {
		macro_table_release(dst);
		return kiln_err_set(err, KILN_ENOMEM, "out of memory");
	}
	dst->cap = src->cap;
	memcpy(dst->hashes, src->hashes, src->cap * sizeof(*dst->hashes));
	pool = dst->pool;
	/* Same capacity, same hash: every slot keeps its position. */
	for (i = 0; i < src->cap; i++) {
		if (!src->slots[i])
			continue;
		dst->slots[i] = slot_copy(src->slots[i], &pool);
		dst->used++;
	}
	return KILN_OK;
}
