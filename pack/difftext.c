/*
 * difftext.c - a unified diff of two texts, line by line: equal lines get one number each
 * (a hash table over both sides), the common prefix and suffix are stripped, and Myers'
 * greedy algorithm finds a shortest edit script for the middle, keeping each step's
 * furthest-reaching diagonals so the script can be traced back. Steps are bounded by
 * edits_max, so memory stays within (edits_max + 1)^2 ints.
 */
#include "util/util.h"

#include "pack/pack.h"

enum op {
	OP_EQ,
	OP_DEL,
	OP_INS,
};

struct line {
	const char *p;
	size_t len; /* with the newline, when there is one */
};

struct side {
	struct line *lines; /* owned */
	uint32_t *id;       /* owned: equal lines have equal ids */
	size_t n;
};

static kiln_rc nomem(struct kiln_err *err)
{
	return kiln_err_set(err, KILN_ENOMEM, "out of memory");
}

static kiln_rc split_lines(const char *s, size_t len, struct side *sd, struct kiln_err *err)
{
	size_t n = 0, i, start = 0;

	for (i = 0; i < len; i++)
		n += s[i] == '\n';
	if (len && s[len - 1] != '\n')
		n++;
	if (n > INT32_MAX / 4)
		return kiln_err_set(err, KILN_ELIMIT, "%zu lines are too many to compare", n);
	sd->lines = kiln_calloc(n ? n : 1, sizeof(*sd->lines));
	sd->id = kiln_calloc(n ? n : 1, sizeof(*sd->id));
	if (!sd->lines || !sd->id)
		return nomem(err);
	sd->n = 0;
	for (i = 0; i < len; i++) {
		if (s[i] != '\n')
			continue;
		sd->lines[sd->n++] = (struct line){s + start, i + 1 - start};
		start = i + 1;
	}
	if (start < len)
		sd->lines[sd->n++] = (struct line){s + start, len - start};
	return KILN_OK;
}

static uint64_t line_hash(const struct line *l)
{
	uint64_t h = 1469598103934665603ull; /* FNV-1a */
	size_t i;

	for (i = 0; i < l->len; i++)
		h = (h ^ (unsigned char)l->p[i]) * 1099511628211ull;
	return h;
}

static bool line_eq(const struct line *x, const struct line *y)
{
	return x->len == y->len && !memcmp(x->p, y->p, x->len);
}

/* Number the lines of both sides: slot[] holds the first line seen with each content. */
static kiln_rc number_lines(struct side *a, struct side *b, struct kiln_err *err)
{
	struct side *sides[2] = {a, b};
	const struct line **slot;
	uint32_t *slot_id;
	size_t size = 16, mask, s, i;
	uint32_t next = 0;

	while (size < 2 * (a->n + b->n))
		size *= 2;
	mask = size - 1;
	slot = kiln_calloc(size, sizeof(*slot));
	slot_id = kiln_calloc(size, sizeof(*slot_id));
	if (!slot || !slot_id) {
		free(slot);
		free(slot_id);
		return nomem(err);
	}
	for (s = 0; s < 2; s++) {
		for (i = 0; i < sides[s]->n; i++) {
			const struct line *l = &sides[s]->lines[i];
			size_t h = (size_t)line_hash(l) & mask;

			while (slot[h] && !line_eq(slot[h], l))
				h = (h + 1) & mask;
			if (!slot[h]) {
				slot[h] = l;
				slot_id[h] = next++;
			}
			sides[s]->id[i] = slot_id[h];
		}
	}
	free(slot);
	free(slot_id);
	return KILN_OK;
}

/* The furthest x on diagonal k at step d, from step d-1's row pv (indexed k + d - 1). */
static bool go_down(const int32_t *pv, int32_t k, int32_t d)
{
	return k == -d || (k != d && pv[k - 1 + d - 1] < pv[k + 1 + d - 1]);
}

struct myers {
	int32_t *trace; /* owned: row d (diagonals -d..d) starts at d * d */
	size_t cap;
	int32_t steps; /* D, the edit distance found */
};

static kiln_rc trace_row(struct myers *my, int32_t d, int32_t **row, struct kiln_err *err)
{
	size_t need = (size_t)(d + 1) * (size_t)(d + 1);

	if (need > my->cap) {
		size_t cap = my->cap ? my->cap * 2 : 64;
		int32_t *t;

		while (cap < need)
			cap *= 2;
		t = kiln_reallocarray(my->trace, cap, sizeof(*t));
		if (!t)
			return nomem(err);
		my->trace = t;
		my->cap = cap;
	}
	*row = my->trace + (size_t)d * (size_t)d;
	return KILN_OK;
}

/* Forward pass over a[0..n) and b[0..m): fills the trace until the end is reached. */
static kiln_rc myers_forward(struct myers *my, const uint32_t *a, int32_t n, const uint32_t *b,
                             int32_t m, int32_t dmax, struct kiln_err *err)
{
	int32_t d, k, x, y;
	int32_t *v = NULL;
	kiln_rc rc;

	for (d = 0; d <= dmax; d++) {
		const int32_t *pv;

		rc = trace_row(my, d, &v, err);
		if (rc)
			return rc;
		/* After trace_row: it may move the trace. */
		pv = d ? my->trace + (size_t)(d - 1) * (size_t)(d - 1) : NULL;
		for (k = -d; k <= d; k += 2) {
			if (!d)
				x = 0;
			else if (go_down(pv, k, d))
				x = pv[k + 1 + d - 1];
			else
				x = pv[k - 1 + d - 1] + 1;
			y = x - k;
			while (x < n && y < m && a[x] == b[y]) {
				x++;
				y++;
			}
			v[k + d] = x;
			if (x >= n && y >= m) {
				my->steps = d;
				return KILN_OK;
			}
		}
	}
	return kiln_err_set(err, KILN_ELIMIT, "more than %" PRId32 " lines changed", dmax);
}

/* Trace back from (n, m), writing the script for the middle into ops[0..(n+m+D)/2). */
static void myers_back(const struct myers *my, int32_t n, int32_t m, unsigned char *ops)
{
	size_t pos = (size_t)(n + m + my->steps) / 2;
	int32_t x = n, y = m, d;

	for (d = my->steps; d > 0; d--) {
		const int32_t *pv = my->trace + (size_t)(d - 1) * (size_t)(d - 1);
		int32_t k = x - y;
		int32_t pk = go_down(pv, k, d) ? k + 1 : k - 1;
		int32_t px = pv[pk + d - 1];
		int32_t sx = pk == k + 1 ? px : px + 1; /* where the snake started */

		while (x > sx) {
			ops[--pos] = OP_EQ;
			x--;
			y--;
		}
		ops[--pos] = pk == k + 1 ? OP_INS : OP_DEL;
		x = px;
		y = px - pk;
	}
	while (x > 0) {
		ops[--pos] = OP_EQ;
		x--;
	}
	KILN_ASSERT(pos == 0);
}

/* Within each run of changes put the deletions first, as diff -u prints them. */
static void group_changes(unsigned char *ops, size_t n)
{
	size_t i = 0, j, dels;

	while (i < n) {
		if (ops[i] == OP_EQ) {
			i++;
			continue;
		}
		for (j = i, dels = 0; j < n && ops[j] != OP_EQ; j++)
			dels += ops[j] == OP_DEL;
		memset(ops + i, OP_DEL, dels);
		memset(ops + i + dels, OP_INS, j - i - dels);
		i = j;
	}
}

/* The whole script: prefix, Myers over the middle, suffix. *ops: OUT, caller frees. */
static kiln_rc edit_script(const struct side *a, const struct side *b, size_t edits_max,
                           unsigned char **ops, size_t *nops, struct kiln_err *err)
{
	struct myers my = {0};
	size_t pre = 0, suf = 0, i, mid;
	int32_t n, m;
	kiln_rc rc;

	while (pre < a->n && pre < b->n && a->id[pre] == b->id[pre])
		pre++;
	while (suf < a->n - pre && suf < b->n - pre &&
	       a->id[a->n - 1 - suf] == b->id[b->n - 1 - suf])
		suf++;
	n = (int32_t)(a->n - pre - suf);
	m = (int32_t)(b->n - pre - suf);
	rc = myers_forward(&my, a->id + pre, n, b->id + pre, m,
	                   (int32_t)(edits_max < (size_t)(n + m) ? edits_max : (size_t)(n + m)),
	                   err);
	if (rc)
		goto out;
	mid = (size_t)(n + m + my.steps) / 2;
	*nops = pre + mid + suf;
	*ops = kiln_malloc(*nops ? *nops : 1);
	if (!*ops) {
		rc = nomem(err);
		goto out;
	}
	for (i = 0; i < pre; i++)
		(*ops)[i] = OP_EQ;
	myers_back(&my, n, m, *ops + pre);
	group_changes(*ops + pre, mid);
	for (i = 0; i < suf; i++)
		(*ops)[pre + mid + i] = OP_EQ;
out:
	free(my.trace);
	return rc;
}

static void add_line(struct kiln_buf *out, char mark, const struct line *l)
{
	kiln_buf_addch(out, mark);
	kiln_buf_add(out, l->p, l->len);
	if (!l->len || l->p[l->len - 1] != '\n')
		kiln_buf_addstr(out, "\n\\ No newline at end of file\n");
}

static void add_range(struct kiln_buf *out, size_t start, size_t count)
{
	/* An empty range names the line before it, as diff -u does. */
	kiln_buf_addf(out, "%zu", count ? start + 1 : start);
	if (count != 1)
		kiln_buf_addf(out, ",%zu", count);
}

struct hunk {
	size_t first, end; /* ops[first..end) */
	size_t a, b;       /* lines of a and b before first */
};

static void emit_hunk(const struct side *a, const struct side *b, const unsigned char *ops,
                      const struct hunk *h, struct kiln_buf *out)
{
	size_t na = 0, nb = 0, i, x = h->a, y = h->b;

	for (i = h->first; i < h->end; i++) {
		na += ops[i] != OP_INS;
		nb += ops[i] != OP_DEL;
	}
	kiln_buf_addstr(out, "@@ -");
	add_range(out, h->a, na);
	kiln_buf_addstr(out, " +");
	add_range(out, h->b, nb);
	kiln_buf_addstr(out, " @@\n");
	for (i = h->first; i < h->end; i++) {
		if (ops[i] == OP_EQ) {
			add_line(out, ' ', &a->lines[x++]);
			y++;
		} else if (ops[i] == OP_DEL) {
			add_line(out, '-', &a->lines[x++]);
		} else {
			add_line(out, '+', &b->lines[y++]);
		}
	}
}

/* Group changes closer than 2 * context equal lines into one hunk each. */
static void emit_hunks(const struct side *a, const struct side *b, const unsigned char *ops,
                       size_t nops, size_t context, struct kiln_buf *out)
{
	size_t i = 0, x = 0, y = 0;

	while (i < nops) {
		struct hunk h;
		size_t c = i, last, e;

		while (c < nops && ops[c] == OP_EQ)
			c++;
		if (c == nops)
			return;
		h.first = c - i > context ? c - context : i;
		h.a = x + (h.first - i);
		h.b = y + (h.first - i);
		for (last = e = c; e < nops; e++) {
			if (ops[e] != OP_EQ)
				last = e;
			else if (e - last > 2 * context)
				break;
		}
		h.end = nops - last - 1 > context ? last + 1 + context : nops;
		emit_hunk(a, b, ops, &h, out);
		for (x = h.a, y = h.b, i = h.first; i < h.end; i++) {
			x += ops[i] != OP_INS;
			y += ops[i] != OP_DEL;
		}
	}
}

kiln_rc pack_diff_text(const char *a, size_t alen, const char *b, size_t blen, const char *label_a,
                       const char *label_b, unsigned context, size_t edits_max,
                       struct kiln_buf *out, struct kiln_err *err)
{
	struct side sa = {0}, sb = {0};
	unsigned char *ops = NULL;
	size_t nops = 0, start = out->len;
	kiln_rc rc;

	if (alen == blen && !memcmp(a, b, alen))
		return KILN_OK;
	rc = split_lines(a, alen, &sa, err);
	if (!rc)
		rc = split_lines(b, blen, &sb, err);
	if (!rc)
		rc = number_lines(&sa, &sb, err);
	if (!rc)
		rc = edit_script(&sa, &sb, edits_max, &ops, &nops, err);
	if (rc)
		goto out;
	if (label_a && label_b)
		kiln_buf_addf(out, "--- %s\n+++ %s\n", label_a, label_b);
	emit_hunks(&sa, &sb, ops, nops, context, out);
	rc = kiln_buf_finish(out, err);
	if (rc)
		kiln_buf_truncate(out, start);
out:
	free(ops);
	free(sa.lines);
	free(sa.id);
	free(sb.lines);
	free(sb.id);
	return rc;
}
