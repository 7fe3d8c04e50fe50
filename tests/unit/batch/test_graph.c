/*
 * test_graph.c - a batch's build graph: edges from BuildRequires to what the batch builds
 * (versions, rich dependencies), levels and order, cycles named with their dependencies,
 * bootstrap breaks, bounds.
 */
#include "util/util.h"

#include "rpmtag/rpmtag.h"
#include "spec/spec.h"
#include "batch/batch.h"
#include "tests/unit/harness.h"

#define DEPS_MAX 8

/* Dependencies from "name", "name OP evr" or "(rich)" strings; NULL ends. */
struct tdeps {
	struct spec_dep v[DEPS_MAX];
	struct spec_deps d;
	char buf[DEPS_MAX][128];
};

static const struct spec_deps *deps(struct tdeps *t, const char *const *items)
{
	size_t i;

	memset(t, 0, sizeof(*t));
	for (i = 0; items && items[i]; i++) {
		char *name = t->buf[i], *op, *evr;

		snprintf(t->buf[i], sizeof(t->buf[i]), "%s", items[i]);
		t->v[i].evr = "";
		op = name[0] == '(' ? NULL : strchr(name, ' ');
		if (op) {
			*op++ = '\0';
			evr = strchr(op, ' ');
			*evr++ = '\0';
			t->v[i].evr = evr;
			t->v[i].flags = (strchr(op, '<') ? RPMTAG_DEP_LESS : 0) |
			                (strchr(op, '>') ? RPMTAG_DEP_GREATER : 0) |
			                (strchr(op, '=') ? RPMTAG_DEP_EQUAL : 0);
		}
		t->v[i].name = name;
	}
	t->d.v = t->v;
	t->d.n = i;
	return &t->d;
}

static size_t add(struct batch_graph *g, const char *name, const char *const *prov,
                  const char *const *req)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct tdeps p, r;
	char label[64];
	size_t idx = 0;

	snprintf(label, sizeof(label), "%s.spec", name);
	assert_ok(batch_graph_add(g, label, name, deps(&p, prov), deps(&r, req), &idx, &err), &err);
	return idx;
}

#define L(...) ((const char *const[]){__VA_ARGS__, NULL})

static const char *order_of(const struct batch_graph *g, char *out, size_t cap)
{
	size_t k, len = 0;

	out[0] = '\0';
	for (k = 0; k < batch_graph_count(g); k++) {
		size_t i = batch_graph_at(g, k);

		len += (size_t)snprintf(out + len, cap - len, "%s%s:%u", k ? " " : "",
		                        batch_graph_name(g, i), batch_graph_level(g, i));
	}
	return out;
}

/* Given in reverse, a three-level chain builds bottom up; an independent package is level 0. */
KILN_TEST(batch_chain_orders_by_levels)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct batch_graph *g = NULL;
	char buf[256];
	size_t n;
	const size_t *d;

	assert_ok(batch_graph_new(&g, &err), &err);
	add(g, "app", L("app = 1-1"), L("libb-devel >= 2", "gcc"));
	add(g, "libb", L("libb = 2-1", "libb-devel = 2-1"), L("liba-devel"));
	add(g, "liba", L("liba = 1-1", "liba-devel = 1-1"), L("make"));
	add(g, "other", L("other = 1-1"), L("gcc"));
	assert_ok(batch_graph_order(g, NULL, 0, &err), &err);
	assert_string_equal(order_of(g, buf, sizeof(buf)), "liba:0 other:0 libb:1 app:2");
	d = batch_graph_deps(g, 0, &n);
	assert_int_equal(n, 1);
	assert_string_equal(batch_graph_name(g, d[0]), "libb");
	assert_string_equal(batch_graph_why(g, 0, d[0]), "BuildRequires: libb-devel >= 2");
	assert_null(batch_graph_why(g, 0, 2));
	batch_graph_free(g);
}

/* A version the batch does not build gives no edge; unversioned sides match; rich
 * dependencies count every name in them. */
KILN_TEST(batch_versions_and_rich_dependencies)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct batch_graph *g = NULL;
	char buf[256];

	assert_ok(batch_graph_new(&g, &err), &err);
	add(g, "a", L("a = 1-1"), L("b-devel >= 3")); /* b builds 2: the root's must serve */
	add(g, "b", L("b-devel = 2-1"), L("c"));
	add(g, "c", L("c"), L("(d-devel >= 1 or zlib-devel)"));
	add(g, "d", L("d-devel = 1:0.1-1"), L("(zlib-devel if e with f)"));
	add(g, "e", L("e = 5-1"), L("x"));
	add(g, "f", L("f = 5-1"), L("x"));
	assert_ok(batch_graph_order(g, NULL, 0, &err), &err);
	assert_string_equal(order_of(g, buf, sizeof(buf)), "a:0 e:0 f:0 d:1 c:2 b:3");
	batch_graph_free(g);
}

KILN_TEST(batch_cycle_names_members_and_edges)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct batch_graph *g = NULL;
	char buf[256];

	assert_ok(batch_graph_new(&g, &err), &err);
	add(g, "gcc", L("gcc = 14-1"), L("glibc-devel"));
	add(g, "glibc", L("glibc-devel = 2.40-1"), L("gcc >= 13"));
	add(g, "self", L("self = 1-1"), L("self")); /* its own packages: no cycle */
	add(g, "x", L("x = 1-1"), L("y"));
	add(g, "y", L("y = 1-1"), L("x"));
	assert_int_equal(batch_graph_order(g, NULL, 0, &err), KILN_ECONFLICT);
	assert_non_null(strstr(err.msg, "build dependency cycle: "));
	assert_non_null(strstr(err.msg, "gcc, glibc (gcc: BuildRequires: glibc-devel, built by "
	                                "glibc; glibc: BuildRequires: gcc >= 13, built by gcc)"));
	assert_non_null(strstr(err.msg, "x, y (x: BuildRequires: y, built by y; y: "
	                                "BuildRequires: x, built by x)"));
	assert_null(strstr(err.msg, "self,"));
	batch_graph_free(g);

	/* Bootstrapping one member of each cycle breaks them. */
	assert_ok(batch_graph_new(&g, &err), &err);
	add(g, "gcc", L("gcc = 14-1"), L("glibc-devel"));
	add(g, "glibc", L("glibc-devel = 2.40-1"), L("gcc >= 13"));
	add(g, "x", L("x = 1-1"), L("y"));
	add(g, "y", L("y = 1-1"), L("x"));
	assert_ok(batch_graph_order(g, L("gcc", "y"), 2, &err), &err);
	assert_string_equal(order_of(g, buf, sizeof(buf)), "gcc:0 y:0 glibc:1 x:1");
	batch_graph_free(g);

	/* Only one cycle broken: the other is still reported; an unknown name is refused. */
	assert_ok(batch_graph_new(&g, &err), &err);
	add(g, "x", L("x = 1-1"), L("y"));
	add(g, "y", L("y = 1-1"), L("x"));
	add(g, "z", L("z = 1-1"), L("w"));
	add(g, "w", L("w = 1-1"), L("z"));
	kiln_err_clear(&err);
	assert_int_equal(batch_graph_order(g, L("nope"), 1, &err), KILN_ENOTFOUND);
	assert_string_equal(err.msg, "bootstrap package nope is not in the batch");
	batch_graph_free(g);
	assert_ok(batch_graph_new(&g, &err), &err);
	add(g, "x", L("x = 1-1"), L("y"));
	add(g, "y", L("y = 1-1"), L("x"));
	add(g, "z", L("z = 1-1"), L("w"));
	add(g, "w", L("w = 1-1"), L("z"));
	kiln_err_clear(&err);
	assert_int_equal(batch_graph_order(g, L("x"), 1, &err), KILN_ECONFLICT);
	assert_non_null(strstr(
	    err.msg, "z, w (z: BuildRequires: w, built by w; w: BuildRequires: z, built by z)"));
	assert_null(strstr(err.msg, "x, y"));
	batch_graph_free(g);
}

KILN_TEST(batch_duplicates_and_a_long_chain)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct batch_graph *g = NULL;
	char name[32], prev[32];
	size_t i;

	assert_ok(batch_graph_new(&g, &err), &err);
	add(g, "a", L("a"), NULL);
	kiln_err_clear(&err);
	assert_int_equal(batch_graph_add(g, "again.spec", "a", NULL, NULL, NULL, &err),
	                 KILN_EEXIST);
	assert_non_null(strstr(err.msg, "a is built by a.spec already"));
	batch_graph_free(g);

	/* 5,000 levels deep, added last first: no recursion to overflow. */
	assert_ok(batch_graph_new(&g, &err), &err);
	for (i = 5000; i-- > 0;) {
		struct tdeps p, r;
		const char *pv[2] = {name, NULL}, *rv[2] = {prev, NULL};

		snprintf(name, sizeof(name), "p%zu", i);
		snprintf(prev, sizeof(prev), "p%zu", i ? i - 1 : 0);
		assert_ok(batch_graph_add(g, name, name, deps(&p, pv), deps(&r, i ? rv : NULL),
		                          NULL, &err),
		          &err);
	}
	assert_ok(batch_graph_order(g, NULL, 0, &err), &err);
	assert_string_equal(batch_graph_name(g, batch_graph_at(g, 0)), "p0");
	assert_int_equal(batch_graph_level(g, batch_graph_at(g, 4999)), 4999);
	batch_graph_free(g);
}
