#include "util/util.h"

#include <jansson.h>

#include "tests/unit/worker/build_test.h"

KILN_TEST(result_json_of_success_and_failure)
{
	struct bt t;
	struct kiln_buf out = KILN_BUF_INIT(KILN_MIB);
	json_error_t jerr;
	json_t *doc;

	bt_init(&t, "json");
	bt_spec(&t, "t.spec", BT_HEAD "%build\nexit 4\n%files\n");
	assert_int_equal(bt_run(&t, WORKER_STEPS_C), KILN_EBUILD);
	worker_build_result_json(&t.res, false, &t.err, &out);
	assert_ok(kiln_buf_finish(&out, &t.err), &t.err);
	doc = json_loads(out.ptr, 0, &jerr);
	assert_non_null(doc);
	assert_false(json_is_true(json_object_get(doc, "ok")));
	assert_non_null(
	    strstr(json_string_value(json_object_get(doc, "error")), "Bad exit status"));
	assert_int_equal(json_array_size(json_object_get(doc, "outputs")), 0);
	assert_string_equal(json_string_value(json_object_get(
	                        json_array_get(json_object_get(doc, "stages"), 0), "name")),
	                    "build");
	assert_int_equal(json_integer_value(json_object_get(
	                     json_array_get(json_object_get(doc, "stages"), 0), "exit_code")),
	                 4);
	assert_non_null(strstr(json_string_value(json_object_get(doc, "log")), ".build.log"));
	json_decref(doc);
	kiln_buf_release(&out);
	bt_release(&t);
}
