/*
 * test_install_order.c - the installer's transaction order (roots/order.c): requirements
 * first, file dependencies, versions, and loops broken at the weak edge whichever order
 * the packages come in.
 */
#include "util/util.h"

#include "tests/unit/roots/install_test.h"

static void order_of(const struct it_pkg *const *d, size_t n, char *out, size_t size)
{
	struct kiln_err err = KILN_ERR_INIT;
	char paths[8][1024];
	const char *pkgs[8];
	struct roots_set set;
	size_t i;

	assert_true(n <= 8);
	for (i = 0; i < n; i++)
		pkgs[i] = it_write(d[i], paths[i], sizeof(paths[i]));
	assert_ok(roots_set_load(&set, pkgs, n, &err), &err);
	assert_ok(roots_set_order(&set, &err), &err);
	out[0] = '\0';
	for (i = 0; i < n; i++) {
		size_t len = strlen(out);

		snprintf(out + len, size - len, "%s%s", i ? " " : "", set.pkgs[set.order[i]].name);
	}
	roots_set_release(&set);
}

static const struct it_file tool[] = {{"/usr/bin/tool", S_IFREG | 0755, "x", 0}};

KILN_TEST(order_requirements_and_files_first)
{
	static const struct it_dep ra[] = {{"b", RPMTAG_DEP_SCRIPT_PRE, NULL}};
	static const struct it_dep rb[] = {{"/usr/bin/tool", 0, NULL}};
	static const struct it_dep rc[] = {
	    {"rpmlib(PayloadFilesHavePrefix)", RPMTAG_DEP_RPMLIB, NULL}};
	struct it_pkg a = {"a", NULL, 0, ra, 1, {NULL}};
	struct it_pkg b = {"b", NULL, 0, rb, 1, {NULL}};
	struct it_pkg c = {"c", tool, 1, rc, 1, {NULL}};
	const struct it_pkg *set1[] = {&a, &b, &c};
	const struct it_pkg *set2[] = {&c, &a, &b};
	char got[256];

	order_of(set1, 3, got, sizeof(got));
	assert_string_equal(got, "c b a");
	order_of(set2, 3, got, sizeof(got));
	assert_string_equal(got, "c b a");
}

KILN_TEST(order_versions_must_match)
{
	/* Both packages are version 1-1: x's "liba >= 2" is not met in the set (no edge),
	 * "libb >= 1" is. */
	static const struct it_dep rx[] = {{"liba", RPMTAG_DEP_GREATER | RPMTAG_DEP_EQUAL, "2"},
	                                   {"libb", RPMTAG_DEP_GREATER | RPMTAG_DEP_EQUAL, "1"}};
	struct it_pkg x = {"x", NULL, 0, rx, 2, {NULL}};
	struct it_pkg liba = {"liba", NULL, 0, NULL, 0, {NULL}};
	struct it_pkg libb = {"libb", NULL, 0, NULL, 0, {NULL}};
	const struct it_pkg *set[] = {&x, &liba, &libb};
	struct roots_dep r = {"lib", "2", RPMTAG_DEP_GREATER | RPMTAG_DEP_EQUAL};
	char got[256];

	order_of(set, 3, got, sizeof(got));
	assert_string_equal(got, "libb x liba");
	assert_true(roots_dep_matches(&r, "lib", RPMTAG_DEP_EQUAL, "2-1"));
	assert_true(roots_dep_matches(&r, "lib", RPMTAG_DEP_EQUAL, "1:1-1"));
	assert_true(roots_dep_matches(&r, "lib", 0, ""));
	assert_false(roots_dep_matches(&r, "lib", RPMTAG_DEP_EQUAL, "1.9-1"));
	assert_false(roots_dep_matches(&r, "lib", RPMTAG_DEP_LESS, "2"));
	assert_false(roots_dep_matches(&r, "other", 0, ""));
}

KILN_TEST(order_loop_breaks_at_the_weak_edge)
{
	/* x needs y at run time only; y needs x for its %pre: x goes first either way. */
	static const struct it_dep rx[] = {{"y", 0, NULL}};
	static const struct it_dep ry[] = {{"x", RPMTAG_DEP_SCRIPT_PRE, NULL}};
	static const struct it_dep rz[] = {{"y", 0, NULL}, {"x", 0, NULL}};
	struct it_pkg x = {"x", NULL, 0, rx, 1, {NULL}};
	struct it_pkg y = {"y", NULL, 0, ry, 1, {NULL}};
	struct it_pkg z = {"z", NULL, 0, rz, 2, {NULL}};
	const struct it_pkg *set1[] = {&z, &y, &x};
	const struct it_pkg *set2[] = {&x, &z, &y};
	char got[256];

	order_of(set1, 3, got, sizeof(got));
	assert_string_equal(got, "x y z");
	order_of(set2, 3, got, sizeof(got));
	assert_string_equal(got, "x y z");
}
