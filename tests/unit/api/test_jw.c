#include "util/util.h"

#include "tests/unit/harness.h"
#include "api/api.h"

KILN_TEST(jw_writes_nested_values_with_commas)
{
	struct kiln_buf b = KILN_BUF_INIT(1024);
	struct api_jw w;

	api_jw_init(&w, &b);
	api_jw_obj(&w);
	api_jw_kstr(&w, "s", "a\"b\\c\n\t\x01");
	api_jw_kint(&w, "i", -42);
	api_jw_kbool(&w, "t", true);
	api_jw_key(&w, "n");
	api_jw_null(&w);
	api_jw_key(&w, "a");
	api_jw_arr(&w);
	api_jw_int(&w, 1);
	api_jw_str(&w, NULL);
	api_jw_obj(&w);
	api_jw_end(&w);
	api_jw_arr(&w);
	api_jw_end(&w);
	api_jw_end(&w);
	api_jw_key(&w, "r");
	api_jw_raw(&w, "{\"x\":1}");
	api_jw_key(&w, "e");
	api_jw_raw(&w, "");
	api_jw_end(&w);
	assert_string_equal(b.ptr, "{\"s\":\"a\\\"b\\\\c\\n\\t\\u0001\",\"i\":-42,\"t\":true,"
	                           "\"n\":null,\"a\":[1,null,{},[]],\"r\":{\"x\":1},\"e\":null}");
	assert_int_equal(w.depth, 0);
	kiln_buf_release(&b);
}

KILN_TEST(jw_output_parses_back)
{
	struct kiln_buf b = KILN_BUF_INIT(4096), c = KILN_BUF_INIT(4096);
	struct kiln_err err = KILN_ERR_INIT;
	char all[256];
	struct api_jw w;
	int i;

	for (i = 1; i < 256; i++)
		all[i - 1] = (char)i;
	all[255] = '\0';
	api_jw_init(&w, &b);
	api_jw_obj(&w);
	api_jw_kstr(&w, "all", all);
	api_jw_end(&w);
	/* bytes that are not UTF-8 pass through the writer as they are, so jansson refuses them */
	assert_int_equal(api_json_canonical(b.ptr, b.len, &c, &err), KILN_ESYNTAX);
	kiln_buf_reset(&b);
	kiln_err_clear(&err);
	api_jw_init(&w, &b);
	api_jw_obj(&w);
	api_jw_kstr(&w, "ascii", "\x01\x1f\x7f ~");
	api_jw_end(&w);
	assert_ok(api_json_canonical(b.ptr, b.len, &c, &err), &err);
	kiln_buf_release(&b);
	kiln_buf_release(&c);
}
