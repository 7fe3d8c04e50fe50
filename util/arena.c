/*
 * arena.c - struct kiln_arena: bump allocation in chained blocks, freed all at once.
 */
#include "util/util.h"

#define ARENA_ALIGN 16
#define ARENA_BLOCK_MIN (64 * 1024)

struct kiln_arena_block {
	struct kiln_arena_block *next;
	size_t size; /* usable bytes in data[] */
	size_t used;
	_Alignas(ARENA_ALIGN) unsigned char data[];
};

void kiln_arena_init(struct kiln_arena *a, size_t max)
{
	a->head = NULL;
	a->used = 0;
	a->max = max;
	a->err = KILN_OK;
	a->prefault = false;
}

void kiln_arena_release(struct kiln_arena *a)
{
	struct kiln_arena_block *b;
	struct kiln_arena_block *next;
	bool prefault;

	if (!a)
		return;
	for (b = a->head; b; b = next) {
		next = b->next;
		free(b);
	}
	prefault = a->prefault;
	kiln_arena_init(a, a->max);
	a->prefault = prefault;
}

static bool arena_new_block(struct kiln_arena *a, size_t need)
{
	struct kiln_arena_block *b;
	size_t size = need > ARENA_BLOCK_MIN ? need : ARENA_BLOCK_MIN;
	size_t total;

	/* Big requests get a block of their own, so small ones keep filling the current one. */
	if (!util_add_ok(size, sizeof(*b), &total) || !util_add_ok(a->used, total, &a->used) ||
	    a->used > a->max) {
		a->err = KILN_ELIMIT;
		return false;
	}
	b = kiln_malloc(total);
	if (!b) {
		a->err = KILN_ENOMEM;
		return false;
	}
	if (a->prefault)
		util_prefault(b, total);
	b->size = size;
	b->used = 0;
	if (need > ARENA_BLOCK_MIN && a->head) {
		b->next = a->head->next;
		a->head->next = b;
	} else {
		b->next = a->head;
		a->head = b;
	}
	return true;
}

void *kiln_arena_alloc(struct kiln_arena *a, size_t size)
{
	void *p = kiln_arena_alloc_raw(a, size);

	if (p)
		memset(p, 0, size);
	return p;
}

void *kiln_arena_alloc_raw(struct kiln_arena *a, size_t size)
{
	struct kiln_arena_block *b;
	size_t need;
	void *p;

	if (a->err)
		return NULL;
	if (!util_add_ok(size, ARENA_ALIGN - 1, &need)) {
		a->err = KILN_ELIMIT;
		return NULL;
	}
	need &= ~(size_t)(ARENA_ALIGN - 1);
	if (!need)
		need = ARENA_ALIGN;
	b = a->head;
	if (!b || b->size - b->used < need) {
		if (!arena_new_block(a, need))
			return NULL;
		b = a->head;
		if (b->size - b->used < need)
			b = b->next; /* the big block went second */
	}
	p = b->data + b->used;
	b->used += need;
	return p;
}

void *kiln_arena_array(struct kiln_arena *a, size_t n, size_t size)
{
	size_t total;

	if (!util_mul_ok(n, size, &total)) {
		a->err = KILN_ELIMIT;
		return NULL;
	}
	return kiln_arena_alloc(a, total);
}

bool kiln_arena_strv_add(struct kiln_arena *a, const char ***v, size_t *n, size_t *cap,
                         const char *s)
{
	if (*n == *cap) {
		size_t ncap = *cap ? *cap * 2 : 16;
		const char **nv = kiln_arena_array(a, ncap, sizeof(*nv));

		if (!nv)
			return false;
		if (*n)
			memcpy(nv, *v, *n * sizeof(*nv));
		*v = nv;
		*cap = ncap;
	}
	(*v)[(*n)++] = s;
	return true;
}

char *kiln_arena_strndup(struct kiln_arena *a, const char *s, size_t len)
{
	char *p;
	size_t n;

	if (!util_add_ok(len, 1, &n)) {
		a->err = KILN_ELIMIT;
		return NULL;
	}
	p = kiln_arena_alloc(a, n);
	if (p && len)
		memcpy(p, s, len);
	return p;
}

char *kiln_arena_strdup(struct kiln_arena *a, const char *s)
{
	return kiln_arena_strndup(a, s, strlen(s));
}

char *kiln_arena_printf(struct kiln_arena *a, const char *fmt, ...)
{
	va_list ap;
	char *p;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return NULL;
	p = kiln_arena_alloc(a, (size_t)n + 1);
	if (!p)
		return NULL;
	va_start(ap, fmt);
	vsnprintf(p, (size_t)n + 1, fmt, ap);
	va_end(ap);
	return p;
}

kiln_rc kiln_arena_finish(struct kiln_arena *a, struct kiln_err *err)
{
	if (a->err == KILN_ENOMEM)
		return kiln_err_set(err, a->err, "out of memory");
	if (a->err == KILN_ELIMIT)
		return kiln_err_set(err, a->err, "arena would exceed its limit of %zu bytes",
		                    a->max);
	return KILN_OK;
}
