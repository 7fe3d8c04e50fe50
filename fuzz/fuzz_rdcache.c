/*
 * fuzz_rdcache.c - the repodata description cache reader (scheduler/repodata.c) over
 * arbitrary file contents: every record it hands out lies inside the text, in order and
 * without overlap, and a record is never longer than what was left of the text.
 */
#include "util/util.h"

#include "repo/repo_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct walk {
	const char *text, *end, *last; /* last: where the previous record ended */
	size_t n;
};

static bool inside(const struct walk *w, const char *p, size_t len)
{
	return p >= w->text && p <= w->end && len <= (size_t)(w->end - p);
}

static bool check(void *arg, const struct repo_rdcache_rec *r)
{
	struct walk *w = arg;
	int k;

	if (!r->rel_len || r->rel < w->last || !inside(w, r->rel, r->rel_len))
		__builtin_trap();
	w->last = r->rel + r->rel_len;
	for (k = 0; k < 3; k++) {
		if (r->xml[k] != w->last || !inside(w, r->xml[k], r->xml_len[k]))
			__builtin_trap();
		w->last = r->xml[k] + r->xml_len[k];
	}
	w->n++;
	return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct walk w;
	char *text;

	if (size > 1 << 20)
		return 0;
	/* An exact-size copy, so that reading one byte past the end is caught by ASan. */
	text = kiln_malloc(size ? size : 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	w = (struct walk){text, text + size, text, 0};
	if (repo_rdcache_parse(text, size, check, &w) != w.n)
		__builtin_trap();
	free(text);
	return 0;
}
