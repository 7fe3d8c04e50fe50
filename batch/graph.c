/*
 * graph.c - a batch's build graph: edges from BuildRequires to the packages the batch
 * builds, cycles (Tarjan's strongly connected components, without recursion), bootstrap
 * breaks and levels (batch.h has the rules).
 */
#include "util/util.h"

#include "macro/macro.h"
#include "rpmtag/rpmtag.h"
#include "spec/spec.h"
#include "batch/batch.h"

#define MSG_MAX 4096 /* a cycle report; longer ones end with "..." */
#define NONE ((size_t)-1)
#define RICH_NAME_MAX 1024 /* a longer name in a rich dependency gives no edge */

struct dep {
	const char *name;
	const char *evr; /* "" when unversioned */
	uint32_t flags;
};

struct node {
	const char *label, *name;
	struct dep *prov, *req; /* arena */
	size_t nprov, nreq;
	size_t *deps;     /* owned: the nodes this one waits for */
	const char **why; /* owned array, strings in the arena: parallel to deps */
	size_t ndeps, capdeps;
	bool boot;
	unsigned level;
	/* Tarjan */
	size_t index, low, comp;
	bool onstack;
};

/* A provide, for the sorted index of every provide in the batch. */
struct prov_ref {
	const char *name;
	size_t node;
	const struct dep *dep;
};

struct batch_graph {
	struct kiln_arena a;
	struct node *nodes; /* owned */
	size_t n, cap;
	size_t ndeps;      /* BuildRequires and Provides added, for the bound */
	size_t *order;     /* owned: build order, after batch_graph_order() */
	size_t *comp_size; /* owned: members per component */
	size_t ncomp;
	bool ordered;
};

kiln_rc batch_graph_new(struct batch_graph **out, struct kiln_err *err)
{
	struct batch_graph *g = kiln_calloc(1, sizeof(*g));

	*out = NULL;
	if (!g)
		return kiln_err_set(err, KILN_ENOMEM, "out of memory");
	kiln_arena_init(&g->a, KILN_LIMIT_ARENA);
	*out = g;
	return KILN_OK;
}

void batch_graph_free(struct batch_graph *g)
{
	size_t i;

	if (!g)
		return;
	for (i = 0; i < g->n; i++) {
		free(g->nodes[i].deps);
		free(g->nodes[i].why);
	}
	free(g->nodes);
	free(g->order);
	free(g->comp_size);
	kiln_arena_release(&g->a);
	free(g);
}

static struct dep *copy_deps(struct batch_graph *g, const struct spec_deps *d, size_t *n)
{
	struct dep *v;
	size_t i;

	*n = d ? d->n : 0;
	v = kiln_arena_array(&g->a, *n ? *n : 1, sizeof(*v));
	for (i = 0; v && i < *n; i++) {
		v[i].name = kiln_arena_strdup(&g->a, d->v[i].name);
		v[i].evr = kiln_arena_strdup(&g->a, d->v[i].evr ? d->v[i].evr : "");
		v[i].flags = d->v[i].flags;
	}
	return v;
}

kiln_rc batch_graph_add(struct batch_graph *g, const char *label, const char *name,
                        const struct spec_deps *provides, const struct spec_deps *buildrequires,
                        size_t *index, struct kiln_err *err)
{
	size_t i, more = (provides ? provides->n : 0) + (buildrequires ? buildrequires->n : 0);
	struct node *nd;

	if (g->ordered)
		return kiln_err_set(err, KILN_EINVAL, "the batch was ordered already");
	for (i = 0; i < g->n; i++)
		if (!strcmp(g->nodes[i].name, name))
			return kiln_err_set(err, KILN_EEXIST, "%s: %s is built by %s already",
			                    label, name, g->nodes[i].label);
	if (g->n >= BATCH_MAX_NODES || more > BATCH_MAX_DEPS - g->ndeps)
		return kiln_err_set(err, KILN_ELIMIT,
		                    "%s: a batch holds at most %d packages and %d dependencies",
		                    label, BATCH_MAX_NODES, BATCH_MAX_DEPS);
	if (g->n == g->cap) {
		size_t cap = g->cap ? 2 * g->cap : 16;
		struct node *v = kiln_reallocarray(g->nodes, cap, sizeof(*v));

		if (!v)
			return kiln_err_set(err, KILN_ENOMEM, "out of memory");
		g->nodes = v;
		g->cap = cap;
	}
	nd = &g->nodes[g->n];
	memset(nd, 0, sizeof(*nd));
	nd->label = kiln_arena_strdup(&g->a, label);
	nd->name = kiln_arena_strdup(&g->a, name);
	nd->prov = copy_deps(g, provides, &nd->nprov);
	nd->req = copy_deps(g, buildrequires, &nd->nreq);
	if (kiln_arena_finish(&g->a, err))
		return err->code;
	g->ndeps += more;
	if (index)
		*index = g->n;
	g->n++;
	return KILN_OK;
}

/* ---------------------------------------------------------------------------------------- */
/* Edges */

static int prov_cmp(const void *a, const void *b)
{
	const struct prov_ref *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	if (c)
		return c;
	return x->node < y->node ? -1 : x->node > y->node;
}

static struct prov_ref *prov_index(const struct batch_graph *g, size_t *n, struct kiln_err *err)
{
	struct prov_ref *v;
	size_t i, j, k = 0;

	*n = 0;
	for (i = 0; i < g->n; i++)
		*n += g->nodes[i].nprov;
	v = kiln_calloc(*n ? *n : 1, sizeof(*v));
	if (!v) {
		kiln_err_set(err, KILN_ENOMEM, "out of memory");
		return NULL;
	}
	for (i = 0; i < g->n; i++)
		for (j = 0; j < g->nodes[i].nprov; j++) {
			v[k].name = g->nodes[i].prov[j].name;
			v[k].node = i;
			v[k].dep = &g->nodes[i].prov[j];
			k++;
		}
	qsort(v, *n, sizeof(*v), prov_cmp);
	return v;
}

/* Does a provide of that version satisfy the requirement, as rpm compares ranges? */
static bool evr_satisfies(const struct dep *prov, const char *req_evr, uint32_t req_flags)
{
	uint32_t sense = req_flags & (RPMTAG_DEP_LESS | RPMTAG_DEP_GREATER | RPMTAG_DEP_EQUAL);
	struct macro_evr p, r;
	bool ok = true;
	int c;

	if (!req_evr || !req_evr[0] || !sense || !prov->evr[0])
		return true;
	memset(&p, 0, sizeof(p));
	memset(&r, 0, sizeof(r));
	if (macro_evr_parse(prov->evr, &p, NULL) || macro_evr_parse(req_evr, &r, NULL))
		goto out; /* unparsable: order rather than miss an edge */
	c = macro_evr_cmp(&p, &r);
	ok = (c < 0 && (sense & RPMTAG_DEP_LESS)) || (c == 0 && (sense & RPMTAG_DEP_EQUAL)) ||
	     (c > 0 && (sense & RPMTAG_DEP_GREATER));
out:
	macro_evr_release(&p);
	macro_evr_release(&r);
	return ok;
}

static const char *sense_of(uint32_t flags)
{
	switch (flags & (RPMTAG_DEP_LESS | RPMTAG_DEP_GREATER | RPMTAG_DEP_EQUAL)) {
	case RPMTAG_DEP_LESS:
		return "<";
	case RPMTAG_DEP_LESS | RPMTAG_DEP_EQUAL:
		return "<=";
	case RPMTAG_DEP_GREATER:
		return ">";
	case RPMTAG_DEP_GREATER | RPMTAG_DEP_EQUAL:
		return ">=";
	case RPMTAG_DEP_EQUAL:
		return "=";
	default:
		return NULL;
	}
}

static kiln_rc edge_add(struct batch_graph *g, size_t from, size_t to, const struct dep *req,
                        struct kiln_err *err)
{
	struct node *nd = &g->nodes[from];
	const char *op = sense_of(req->flags);
	size_t i;

	if (from == to)
		return KILN_OK; /* a package's own packages are not a reason to wait */
	for (i = 0; i < nd->ndeps; i++)
		if (nd->deps[i] == to)
			return KILN_OK;
	if (nd->ndeps == nd->capdeps) {
		size_t cap = nd->capdeps ? 2 * nd->capdeps : 4;
		size_t *d = kiln_reallocarray(nd->deps, cap, sizeof(*d));
		const char **w = d ? kiln_reallocarray(nd->why, cap, sizeof(*w)) : NULL;

		if (d)
			nd->deps = d;
		if (!d || !w)
			return kiln_err_set(err, KILN_ENOMEM, "out of memory");
		nd->why = w;
		nd->capdeps = cap;
	}
	nd->deps[nd->ndeps] = to;
	nd->why[nd->ndeps] =
	    op && req->evr[0]
	        ? kiln_arena_printf(&g->a, "BuildRequires: %s %s %s", req->name, op, req->evr)
	        : kiln_arena_printf(&g->a, "BuildRequires: %s", req->name);
	nd->ndeps++;
	return kiln_arena_finish(&g->a, err);
}

/* Every node providing name (at a version satisfying evr/flags) gets an edge from. */
static kiln_rc edges_for(struct batch_graph *g, const struct prov_ref *idx, size_t nidx,
                         size_t from, const char *name, const char *evr, uint32_t flags,
                         const struct dep *req, struct kiln_err *err)
{
	size_t lo = 0, hi = nidx;
	kiln_rc rc = KILN_OK;

	while (lo < hi) { /* the first entry not below name */
		size_t mid = lo + (hi - lo) / 2;

		if (strcmp(idx[mid].name, name) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; !rc && lo < nidx && !strcmp(idx[lo].name, name); lo++)
		if (evr_satisfies(idx[lo].dep, evr, flags))
			rc = edge_add(g, from, idx[lo].node, req, err);
	return rc;
}

static bool rich_keyword(const char *t, size_t n)
{
	static const char *const kw[] = {"and", "or", "if", "else", "with", "without", "unless"};
	size_t i;

	for (i = 0; i < KILN_ARRAY_SIZE(kw); i++)
		if (strlen(kw[i]) == n && !strncmp(t, kw[i], n))
			return true;
	return false;
}

/* A rich dependency "(a >= 1 or (b and c))": every package name in it, versions aside. */
static kiln_rc edges_rich(struct batch_graph *g, const struct prov_ref *idx, size_t nidx,
                          size_t from, const struct dep *req, struct kiln_err *err)
{
	const char *s = req->name;
	bool skip_next = false;
	kiln_rc rc = KILN_OK;

	while (!rc && *s) {
		size_t n;

		if (*s == '(' || *s == ')' || *s == ' ' || *s == '\t') {
			s++;
			continue;
		}
		n = strcspn(s, "() \t");
		if (strchr("<>=", s[0]))
			skip_next = true; /* the version follows an operator */
		else if (skip_next)
			skip_next = false;
		else if (!rich_keyword(s, n) && n < RICH_NAME_MAX) {
			char tok[RICH_NAME_MAX];

			memcpy(tok, s, n);
			tok[n] = '\0';
			rc = edges_for(g, idx, nidx, from, tok, NULL, 0, req, err);
		}
		s += n;
	}
	return rc;
}

static kiln_rc edges_find(struct batch_graph *g, struct kiln_err *err)
{
	size_t nidx, i, j;
	struct prov_ref *idx = prov_index(g, &nidx, err);
	kiln_rc rc = idx ? KILN_OK : err->code;

	for (i = 0; !rc && i < g->n; i++)
		for (j = 0; !rc && j < g->nodes[i].nreq; j++) {
			const struct dep *r = &g->nodes[i].req[j];

			if (r->name[0] == '(')
				rc = edges_rich(g, idx, nidx, i, r, err);
			else
				rc = edges_for(g, idx, nidx, i, r->name, r->evr, r->flags, r, err);
		}
	free(idx);
	return rc;
}

/* ---------------------------------------------------------------------------------------- */
/* Components (Tarjan), iteratively: an explicit stack of (node, next edge). */

struct frame {
	size_t v, e;
};

static void strong_connect(struct batch_graph *g, size_t root, size_t *counter, size_t *stack,
                           size_t *sp, struct frame *calls)
{
	size_t cp = 0;

	calls[cp++] = (struct frame){root, 0};
	g->nodes[root].index = g->nodes[root].low = (*counter)++;
	stack[(*sp)++] = root;
	g->nodes[root].onstack = true;
	while (cp) {
		struct frame *f = &calls[cp - 1];
		struct node *v = &g->nodes[f->v];

		if (f->e < v->ndeps) {
			size_t w = v->deps[f->e++];
			struct node *wn = &g->nodes[w];

			if (wn->index == NONE) {
				wn->index = wn->low = (*counter)++;
				stack[(*sp)++] = w;
				wn->onstack = true;
				calls[cp++] = (struct frame){w, 0};
			} else if (wn->onstack && wn->index < v->low) {
				v->low = wn->index;
			}
			continue;
		}
		if (v->low == v->index) {
			size_t w, size = 0;

			do {
				w = stack[--(*sp)];
				g->nodes[w].onstack = false;
				g->nodes[w].comp = g->ncomp;
				size++;
			} while (w != f->v);
			g->comp_size[g->ncomp++] = size;
		}
		cp--;
		if (cp && v->low < g->nodes[calls[cp - 1].v].low)
			g->nodes[calls[cp - 1].v].low = v->low;
	}
}

/* Components numbered in the order they complete: a node's dependencies are in components
 * numbered no higher than its own. */
static kiln_rc components(struct batch_graph *g, struct kiln_err *err)
{
	size_t *stack = kiln_calloc(g->n ? g->n : 1, sizeof(*stack));
	struct frame *calls = kiln_calloc(g->n ? g->n : 1, sizeof(*calls));
	size_t counter = 0, sp = 0, i;

	free(g->comp_size);
	g->comp_size = kiln_calloc(g->n ? g->n : 1, sizeof(*g->comp_size));
	g->ncomp = 0;
	if (!stack || !calls || !g->comp_size) {
		free(stack);
		free(calls);
		return kiln_err_set(err, KILN_ENOMEM, "out of memory");
	}
	for (i = 0; i < g->n; i++) {
		g->nodes[i].index = NONE;
		g->nodes[i].onstack = false;
	}
	for (i = 0; i < g->n; i++)
		if (g->nodes[i].index == NONE)
			strong_connect(g, i, &counter, stack, &sp, calls);
	free(stack);
	free(calls);
	return KILN_OK;
}

static bool has_cycle(const struct batch_graph *g)
{
	size_t c;

	for (c = 0; c < g->ncomp; c++)
		if (g->comp_size[c] > 1)
			return true;
	return false;
}

/* A bootstrap package builds first: its edges inside its own cycle go. */
static void drop_bootstrap_edges(struct batch_graph *g)
{
	size_t i, j, k;

	for (i = 0; i < g->n; i++) {
		struct node *nd = &g->nodes[i];

		if (!nd->boot || g->comp_size[nd->comp] < 2)
			continue;
		for (j = k = 0; j < nd->ndeps; j++) {
			if (g->nodes[nd->deps[j]].comp == nd->comp)
				continue;
			nd->deps[k] = nd->deps[j];
			nd->why[k] = nd->why[j];
			k++;
		}
		nd->ndeps = k;
	}
}

static kiln_rc cycle_error(const struct batch_graph *g, struct kiln_err *err)
{
	struct kiln_buf b = KILN_BUF_INIT(MSG_MAX);
	size_t c, i, j;
	bool first_cycle = true;

	kiln_buf_addstr(&b, "build dependency cycle: ");
	for (c = 0; c < g->ncomp; c++) {
		bool first = true;

		if (g->comp_size[c] < 2)
			continue;
		if (!first_cycle)
			kiln_buf_addstr(&b, "; cycle: ");
		first_cycle = false;
		for (i = 0; i < g->n; i++)
			if (g->nodes[i].comp == c) {
				kiln_buf_addf(&b, "%s%s", first ? "" : ", ", g->nodes[i].name);
				first = false;
			}
		kiln_buf_addstr(&b, " (");
		first = true;
		for (i = 0; i < g->n; i++) {
			const struct node *nd = &g->nodes[i];

			if (nd->comp != c)
				continue;
			for (j = 0; j < nd->ndeps; j++)
				if (g->nodes[nd->deps[j]].comp == c) {
					kiln_buf_addf(&b, "%s%s: %s, built by %s",
					              first ? "" : "; ", nd->name, nd->why[j],
					              g->nodes[nd->deps[j]].name);
					first = false;
				}
		}
		kiln_buf_addstr(&b, ")");
	}
	kiln_buf_addstr(&b, "; name the package to build first with a bootstrap order");
	if (b.err) /* too long for one message */
		kiln_buf_truncate(&b, MSG_MAX > 4 ? MSG_MAX - 4 : 0);
	kiln_err_set(err, KILN_ECONFLICT, "%s%s", b.ptr, b.err ? "..." : "");
	kiln_buf_release(&b);
	return KILN_ECONFLICT;
}

/* ---------------------------------------------------------------------------------------- */
/* Order */

static int order_cmp(const void *a, const void *b, void *ctx)
{
	const struct batch_graph *g = ctx;
	size_t x = *(const size_t *)a, y = *(const size_t *)b;

	if (g->nodes[x].level != g->nodes[y].level)
		return g->nodes[x].level < g->nodes[y].level ? -1 : 1;
	return x < y ? -1 : x > y;
}

static kiln_rc levels_and_order(struct batch_graph *g, struct kiln_err *err)
{
	size_t c, i, j, *by_comp;

	g->order = kiln_calloc(g->n ? g->n : 1, sizeof(*g->order));
	by_comp = kiln_calloc(g->n ? g->n : 1, sizeof(*by_comp));
	if (!g->order || !by_comp) {
		free(by_comp);
		return kiln_err_set(err, KILN_ENOMEM, "out of memory");
	}
	/* Without cycles every component is one node, numbered after its dependencies. */
	for (i = 0; i < g->n; i++)
		by_comp[g->nodes[i].comp] = i;
	for (c = 0; c < g->ncomp; c++) {
		struct node *nd = &g->nodes[by_comp[c]];

		nd->level = 0;
		for (j = 0; j < nd->ndeps; j++)
			if (g->nodes[nd->deps[j]].level + 1 > nd->level)
				nd->level = g->nodes[nd->deps[j]].level + 1;
	}
	free(by_comp);
	for (i = 0; i < g->n; i++)
		g->order[i] = i;
	qsort_r(g->order, g->n, sizeof(*g->order), order_cmp, g);
	return KILN_OK;
}

kiln_rc batch_graph_order(struct batch_graph *g, const char *const *bootstrap, size_t nboot,
                          struct kiln_err *err)
{
	size_t i, j;
	kiln_rc rc;

	if (g->ordered)
		return kiln_err_set(err, KILN_EINVAL, "the batch was ordered already");
	for (i = 0; i < nboot; i++) {
		for (j = 0; j < g->n && strcmp(g->nodes[j].name, bootstrap[i]); j++)
			;
		if (j == g->n)
			return kiln_err_set(err, KILN_ENOTFOUND,
			                    "bootstrap package %s is not in the batch",
			                    bootstrap[i]);
		g->nodes[j].boot = true;
	}
	rc = edges_find(g, err);
	if (!rc)
		rc = components(g, err);
	if (!rc && has_cycle(g) && nboot) {
		drop_bootstrap_edges(g);
		rc = components(g, err);
	}
	if (!rc && has_cycle(g))
		rc = cycle_error(g, err);
	if (!rc)
		rc = levels_and_order(g, err);
	g->ordered = !rc;
	return rc;
}

size_t batch_graph_count(const struct batch_graph *g)
{
	return g->n;
}

size_t batch_graph_at(const struct batch_graph *g, size_t k)
{
	return g->order[k];
}

unsigned batch_graph_level(const struct batch_graph *g, size_t node)
{
	return g->nodes[node].level;
}

const size_t *batch_graph_deps(const struct batch_graph *g, size_t node, size_t *n)
{
	*n = g->nodes[node].ndeps;
	return g->nodes[node].deps;
}

const char *batch_graph_name(const struct batch_graph *g, size_t node)
{
	return g->nodes[node].name;
}

const char *batch_graph_label(const struct batch_graph *g, size_t node)
{
	return g->nodes[node].label;
}

const char *batch_graph_why(const struct batch_graph *g, size_t node, size_t dep)
{
	const struct node *nd = &g->nodes[node];
	size_t i;

	for (i = 0; i < nd->ndeps; i++)
		if (nd->deps[i] == dep)
			return nd->why[i];
	return NULL;
}
