#include "util/util.h"

#include "macro/macro_int.h"
#include "tests/unit/macro/macro_test.h"

KILN_TEST(table_stacks_definitions)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct macro_ctx *ctx = ctx_new(NULL);

	define(ctx, "s one");
	define(ctx, "s two");
	expect(ctx, "%s", "two");
	assert_ok(macro_undefine(ctx, "s", &err), &err);
	expect(ctx, "%s", "one");
	assert_ok(macro_undefine(ctx, "s", &err), &err);
	expect(ctx, "%s", "%s");
	macro_ctx_free(ctx);
}

KILN_TEST(table_grows_to_many_names)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct macro_ctx *ctx = ctx_new(NULL);
	char name[32];
	char body[32];
	int i;

	for (i = 0; i < 20000; i++) {
		snprintf(name, sizeof(name), "m%d", i);
		snprintf(body, sizeof(body), "v%d", i);
		assert_ok(macro_define(ctx, name, NULL, body, 0, &err), &err);
	}
	expect(ctx, "%m0 %m12345 %m19999", "v0 v12345 v19999");
	macro_ctx_free(ctx);
}

KILN_TEST(table_name_validity)
{
	assert_true(macro_name_valid("a", 1));
	assert_true(macro_name_valid("_a", 2));
	assert_true(macro_name_valid("A_9", 3));
	assert_false(macro_name_valid("_", 1));
	assert_false(macro_name_valid("9a", 2));
	assert_false(macro_name_valid("a-b", 3));
	assert_false(macro_name_valid("", 0));
}
