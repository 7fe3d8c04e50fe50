/*
 * order.c - the install order of a package set, after rpm's transaction ordering
 * (lib/order.c of rpm 4.18, read for its rules):
 *
 *   - p's Requires (and OrderWithRequires) satisfied by another package q of the set make
 *     an edge q -> p: q goes first. rpmlib() and config() dependencies make none, nor do
 *     dependencies satisfied only outside the set or by p itself. A file dependency is
 *     satisfied by the package owning the file.
 *   - The edge is strong when the dependency is needed by a scriptlet: Requires(pre),
 *     Requires(post), Requires(pretrans), Requires(posttrans) and the legacy PreReq (rpm's
 *     install prerequisites); otherwise weak.
 *   - Packages whose predecessors are all placed are taken by the number of packages that
 *     require them (most first, rpm's tsi_qcnt), then by their position in the caller's
 *     list.
 *   - When none is ready, the remaining graph has a loop: the first strongly connected
 *     component (Tarjan) that no other remaining component points into is opened at one
 *     member, chosen by: no strong edge into it from inside the component, then the most
 *     strong edges out of it (the package others prerequire), then the most requirers,
 *     then the caller's order. Its incoming edges from the component are dropped and the
 *     walk goes on. rpm breaks loops the same way in spirit (it zaps the relations farthest
 *     from prerequisites, lib/order.c collectSCC); the exact choice within a loop of
 *     plain Requires can differ, and a loop made only of strong edges is broken anyway,
 *     with a warning in the debug log, as rpm does.
 *
 * Deterministic: the result depends on the headers and the caller's order only.
 */
#include "util/util.h"

#include "roots/install_int.h"

#define ORDER_MAX_PACKAGES 8192

#define EDGE_WEAK 1
#define EDGE_STRONG 2

#define PREREQ_MASK                                                                                \
	(RPMTAG_DEP_SCRIPT_PRE | RPMTAG_DEP_SCRIPT_POST | RPMTAG_DEP_PRETRANS |                    \
	 RPMTAG_DEP_POSTTRANS | RPMTAG_DEP_PREREQ)

struct named {
	const char *name; /* borrowed: a provide name or a file path */
	size_t pkg;
	const struct roots_dep *dep; /* the provide; NULL for a file */
};

struct graph {
	size_t n;
	uint8_t *edge;              /* owned: edge[q * n + p] */
	size_t *npred;              /* owned: remaining predecessors */
	size_t *qcnt;               /* owned: packages requiring this one */
	bool *placed;               /* owned */
	struct named *prov, *files; /* owned, sorted by name */
	size_t nprov, nfiles;
};

static int named_cmp(const void *a, const void *b)
{
	const struct named *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	if (c)
		return c;
	return x->pkg < y->pkg ? -1 : x->pkg > y->pkg;
}

static kiln_rc index_names(struct graph *g, const struct roots_set *set, struct kiln_err *err)
{
	size_t np = 0, nf = 0, i, j;

	for (i = 0; i < set->n; i++) {
		np += set->pkgs[i].nprovides;
		nf += set->pkgs[i].nfiles;
	}
	g->prov = kiln_calloc(np ? np : 1, sizeof(*g->prov));
	g->files = kiln_calloc(nf ? nf : 1, sizeof(*g->files));
	if (!g->prov || !g->files)
		return kiln_err_set(err, KILN_ENOMEM, "out of memory");
	for (i = 0; i < set->n; i++) {
		const struct roots_pkg *p = &set->pkgs[i];

		for (j = 0; j < p->nprovides; j++)
			g->prov[g->nprov++] =
			    (struct named){p->provides[j].name, i, &p->provides[j]};
		for (j = 0; j < p->nfiles; j++)
			g->files[g->nfiles++] = (struct named){p->files[j], i, NULL};
	}
	qsort(g->prov, g->nprov, sizeof(*g->prov), named_cmp);
	qsort(g->files, g->nfiles, sizeof(*g->files), named_cmp);
	return KILN_OK;
}

/* The first entry named name, or NULL. */
static const struct named *first_named(const struct named *v, size_t n, const char *name)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (strcmp(v[mid].name, name) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && !strcmp(v[lo].name, name) ? &v[lo] : NULL;
}

/* The package of the set satisfying r for p: the first in the caller's order (SIZE_MAX:
 * none, or only p itself). */
static size_t provider(const struct graph *g, const struct roots_dep *r, size_t self)
{
	const struct named *e, *end;

	if (r->name[0] == '/') {
		e = first_named(g->files, g->nfiles, r->name);
		end = g->files + g->nfiles;
		for (; e && e < end && !strcmp(e->name, r->name); e++) {
			if (e->pkg != self)
				return e->pkg;
		}
	}
	e = first_named(g->prov, g->nprov, r->name);
	end = g->prov + g->nprov;
	for (; e && e < end && !strcmp(e->name, r->name); e++) {
		if (e->pkg != self &&
		    roots_dep_matches(r, e->dep->name, e->dep->flags, e->dep->version))
			return e->pkg;
	}
	return SIZE_MAX;
}

static void add_edges(struct graph *g, size_t p, const struct roots_dep *deps, size_t n,
                      bool ordering)
{
	size_t i;

	for (i = 0; i < n; i++) {
		const struct roots_dep *r = &deps[i];
		uint8_t w;
		size_t q;

		if ((r->flags & (RPMTAG_DEP_RPMLIB | RPMTAG_DEP_CONFIG)) ||
		    !strncmp(r->name, "rpmlib(", 7))
			continue;
		q = provider(g, r, p);
		if (q == SIZE_MAX)
			continue;
		w = !ordering && (r->flags & PREREQ_MASK) ? EDGE_STRONG : EDGE_WEAK;
		if (!g->edge[q * g->n + p]) {
			g->npred[p]++;
			g->qcnt[q]++;
		}
		if (g->edge[q * g->n + p] < w)
			g->edge[q * g->n + p] = w;
	}
}

static kiln_rc graph_build(struct graph *g, const struct roots_set *set, struct kiln_err *err)
{
	size_t n = set->n, p, nn;
	kiln_rc rc;

	if (n > ORDER_MAX_PACKAGES)
		return kiln_err_set(err, KILN_ELIMIT, "%zu packages exceed %d in one install", n,
		                    ORDER_MAX_PACKAGES);
	g->n = n;
	if (!util_mul_ok(n ? n : 1, n ? n : 1, &nn))
		return kiln_err_set(err, KILN_ELIMIT, "too many packages");
	g->edge = kiln_calloc(nn, 1);
	g->npred = kiln_calloc(n ? n : 1, sizeof(*g->npred));
	g->qcnt = kiln_calloc(n ? n : 1, sizeof(*g->qcnt));
	g->placed = kiln_calloc(n ? n : 1, sizeof(*g->placed));
	if (!g->edge || !g->npred || !g->qcnt || !g->placed)
		return kiln_err_set(err, KILN_ENOMEM, "out of memory");
	rc = index_names(g, set, err);
	for (p = 0; !rc && p < n; p++) {
		add_edges(g, p, set->pkgs[p].requires, set->pkgs[p].nrequires, false);
		add_edges(g, p, set->pkgs[p].orders, set->pkgs[p].norders, true);
	}
	return rc;
}

static void graph_release(struct graph *g)
{
	free(g->edge);
	free(g->npred);
	free(g->qcnt);
	free(g->placed);
	free(g->prov);
	free(g->files);
}

/* The ready package to place next (SIZE_MAX: none is ready). */
static size_t pick_ready(const struct graph *g)
{
	size_t best = SIZE_MAX, i;

	for (i = 0; i < g->n; i++) {
		if (g->placed[i] || g->npred[i])
			continue;
		if (best == SIZE_MAX || g->qcnt[i] > g->qcnt[best])
			best = i;
	}
	return best;
}

static void place(struct graph *g, size_t q)
{
	size_t p;

	g->placed[q] = true;
	for (p = 0; p < g->n; p++) {
		if (g->edge[q * g->n + p] && !g->placed[p]) {
			g->edge[q * g->n + p] = 0;
			g->npred[p]--;
		}
	}
}

/* Tarjan over the unplaced packages: comp[i] = component number (in the order Tarjan
 * completes them, which is a reverse topological order of the component graph). */
struct tarjan {
	const struct graph *g;
	size_t *idx, *low, *stack, *comp;
	bool *on;
	size_t next, sp, ncomp;
};

static void strongconnect(struct tarjan *t, size_t v)
{
	const struct graph *g = t->g;
	size_t w;

	t->idx[v] = t->low[v] = ++t->next;
	t->stack[t->sp++] = v;
	t->on[v] = true;
	for (w = 0; w < g->n; w++) {
		if (g->placed[w] || !g->edge[v * g->n + w])
			continue;
		if (!t->idx[w]) {
			strongconnect(t, w);
			if (t->low[w] < t->low[v])
				t->low[v] = t->low[w];
		} else if (t->on[w] && t->idx[w] < t->low[v]) {
			t->low[v] = t->idx[w];
		}
	}
	if (t->low[v] != t->idx[v])
		return;
	do {
		w = t->stack[--t->sp];
		t->on[w] = false;
		t->comp[w] = t->ncomp;
	} while (w != v);
	t->ncomp++;
}

/* Loop-breaking score of v inside its component c (higher is better). */
static uint64_t break_score(const struct graph *g, const size_t *comp, size_t v)
{
	size_t u, strong_in = 0, strong_out = 0;

	for (u = 0; u < g->n; u++) {
		if (g->placed[u] || comp[u] != comp[v] || u == v)
			continue;
		strong_in += g->edge[u * g->n + v] == EDGE_STRONG;
		strong_out += g->edge[v * g->n + u] == EDGE_STRONG;
	}
	return ((uint64_t)(strong_in == 0) << 62) | ((uint64_t)(strong_out & 0xfffff) << 32) |
	       (uint64_t)(g->qcnt[v] & 0xffffffffu);
}

/* Open the loop: drop the incoming edges of the chosen member from its component. */
static kiln_rc break_loop(struct graph *g, const struct roots_set *set, struct kiln_err *err)
{
	struct tarjan t = {g, NULL, NULL, NULL, NULL, NULL, 0, 0, 0};
	size_t n = g->n, v, u, c, best = SIZE_MAX;
	bool *fed = NULL;
	kiln_rc rc = KILN_OK;

	t.idx = kiln_calloc(n, sizeof(size_t));
	t.low = kiln_calloc(n, sizeof(size_t));
	t.stack = kiln_calloc(n, sizeof(size_t));
	t.comp = kiln_calloc(n, sizeof(size_t));
	t.on = kiln_calloc(n, sizeof(bool));
	fed = kiln_calloc(n + 1, sizeof(bool));
	if (!t.idx || !t.low || !t.stack || !t.comp || !t.on || !fed) {
		rc = kiln_err_set(err, KILN_ENOMEM, "out of memory");
		goto out;
	}
	for (v = 0; v < n; v++) {
		if (!g->placed[v] && !t.idx[v])
			strongconnect(&t, v);
	}
	/* A component is fed when an edge enters it from another unplaced component. */
	for (u = 0; u < n; u++) {
		for (v = 0; !g->placed[u] && v < n; v++) {
			if (!g->placed[v] && g->edge[u * n + v] && t.comp[u] != t.comp[v])
				fed[t.comp[v]] = true;
		}
	}
	/* The first unfed component in the caller's order of its members. */
	for (v = 0, c = SIZE_MAX; v < n && c == SIZE_MAX; v++) {
		if (!g->placed[v] && !fed[t.comp[v]])
			c = t.comp[v];
	}
	for (v = 0; v < n; v++) {
		if (g->placed[v] || t.comp[v] != c)
			continue;
		if (best == SIZE_MAX || break_score(g, t.comp, v) > break_score(g, t.comp, best))
			best = v;
	}
	if (best == SIZE_MAX) {
		rc = kiln_err_set(err, KILN_EINVAL, "install order: no loop to break");
		goto out;
	}
	for (u = 0; u < n; u++) {
		if (g->placed[u] || !g->edge[u * n + best])
			continue;
		kiln_debug("install order: loop broken: %s%s before %s", set->pkgs[best].nevra,
		           g->edge[u * n + best] == EDGE_STRONG ? " (a prerequisite!)" : "",
		           set->pkgs[u].nevra);
		g->edge[u * n + best] = 0;
		g->npred[best]--;
	}
out:
	free(t.idx);
	free(t.low);
	free(t.stack);
	free(t.comp);
	free(t.on);
	free(fed);
	return rc;
}

kiln_rc roots_set_order(struct roots_set *set, struct kiln_err *err)
{
	struct graph g;
	size_t k = 0, q;
	kiln_rc rc;

	memset(&g, 0, sizeof(g));
	rc = graph_build(&g, set, err);
	while (!rc && k < set->n) {
		q = pick_ready(&g);
		if (q == SIZE_MAX) {
			rc = break_loop(&g, set, err);
			continue;
		}
		place(&g, q);
		set->order[k++] = q;
	}
	graph_release(&g);
	return rc;
}
