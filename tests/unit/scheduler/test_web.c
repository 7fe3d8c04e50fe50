#include "util/util.h"

#include "tests/unit/harness.h"
#include "scheduler/scheduler_int.h"

KILN_TEST(web_assets_are_embedded_with_types_and_etags)
{
	const struct scheduler_web_asset *a;
	bool index = false, js = false;

	for (a = scheduler_web_assets; a->path; a++) {
		assert_true(a->len > 0);
		assert_int_equal(strlen(a->etag), 18);
		assert_true(a->etag[0] == '"' && a->etag[17] == '"');
		assert_int_equal(a->data[a->len], 0); /* the generator's terminator */
		if (!strcmp(a->path, "index.html")) {
			index = true;
			assert_string_equal(a->content_type, "text/html; charset=utf-8");
			assert_non_null(strstr((const char *)a->data, "<title>"));
		}
		if (!strcmp(a->path, "app.js")) {
			js = true;
			assert_string_equal(a->content_type, "text/javascript; charset=utf-8");
		}
	}
	assert_true(index && js);
}
