#include "util/util.h"

#include "tests/unit/harness.h"
#include "api/api.h"

struct inner {
	const char *name;
	int64_t n;
};

struct outer {
	const char *s;
	int64_t i;
	bool b, has_b;
	struct api_strlist l;
	struct api_strmap m;
	struct inner obj;
	bool has_obj;
	struct api_objlist objs;
	const char *raw;
};

static const struct api_field inner_f[] = {
    {"name", API_F_STR, true, offsetof(struct inner, name), 0, 8, NULL, 0, 0},
    {"n", API_F_INT, false, offsetof(struct inner, n), 0, 10, NULL, 0, 0},
    API_FIELD_END,
};

static const struct api_field outer_f[] = {
    {"s", API_F_STR, true, offsetof(struct outer, s), 0, 16, NULL, 0, 0},
    {"i", API_F_INT, false, offsetof(struct outer, i), -5, 5, NULL, 0, 0},
    {"b", API_F_BOOL, false, offsetof(struct outer, b), 0, 0, NULL, 0,
     offsetof(struct outer, has_b)},
    {"l", API_F_STRLIST, false, offsetof(struct outer, l), 0, 3, NULL, 0, 0},
    {"m", API_F_STRMAP, false, offsetof(struct outer, m), 0, 3, NULL, 0, 0},
    {"obj", API_F_OBJ, false, offsetof(struct outer, obj), 0, 0, inner_f, 0,
     offsetof(struct outer, has_obj)},
    {"objs", API_F_OBJLIST, false, offsetof(struct outer, objs), 0, 4, inner_f,
     sizeof(struct inner), 0},
    {"raw", API_F_RAW, false, offsetof(struct outer, raw), 0, 100, NULL, 0, 0},
    API_FIELD_END,
};

static kiln_rc dec(const char *js, struct outer *o, struct kiln_arena *a, struct kiln_err *err)
{
	memset(o, 0, sizeof(*o));
	kiln_err_clear(err);
	return api_json_decode(js, strlen(js), outer_f, API_DECODE_STRICT, o, a, err);
}

KILN_TEST(json_decodes_every_type)
{
	struct kiln_arena a = KILN_ARENA_INIT(KILN_MIB);
	struct kiln_err err = KILN_ERR_INIT;
	struct outer o;
	const struct inner *in;

	assert_ok(
	    dec("{\"s\":\"hi\",\"i\":-5,\"b\":false,\"l\":[\"x\",\"y\"],\"m\":{\"k\":\"v\"},"
	        "\"obj\":{\"name\":\"n1\",\"n\":3},\"objs\":[{\"name\":\"a\"},{\"name\":\"b\","
	        "\"n\":10}],\"raw\":{\"z\":1,\"a\":[true]}}",
	        &o, &a, &err),
	    &err);
	assert_string_equal(o.s, "hi");
	assert_int_equal(o.i, -5);
	assert_true(o.has_b);
	assert_false(o.b);
	assert_int_equal(o.l.n, 2);
	assert_string_equal(o.l.v[1], "y");
	assert_int_equal(o.m.n, 1);
	assert_string_equal(o.m.keys[0], "k");
	assert_string_equal(o.m.values[0], "v");
	assert_true(o.has_obj);
	assert_string_equal(o.obj.name, "n1");
	assert_int_equal(o.objs.n, 2);
	in = o.objs.v;
	assert_string_equal(in[1].name, "b");
	assert_int_equal(in[1].n, 10);
	assert_string_equal(o.raw, "{\"a\":[true],\"z\":1}");
	kiln_arena_release(&a);
}

KILN_TEST(json_errors_name_the_field_path)
{
	static const struct {
		const char *in, *msg;
		kiln_rc rc;
	} cases[] = {
	    {"{}", "field 's': required", KILN_EINVAL},
	    {"{\"s\":1}", "field 's': expected a string", KILN_EINVAL},
	    {"{\"s\":\"x\",\"i\":6}", "field 'i': 6 is out of range -5..5", KILN_EINVAL},
	    {"{\"s\":\"x\",\"i\":1.5}", "field 'i': expected an integer", KILN_EINVAL},
	    {"{\"s\":\"x\",\"b\":1}", "field 'b': expected true or false", KILN_EINVAL},
	    {"{\"s\":\"x\",\"l\":[\"a\",2]}", "field 'l[1]': expected a string", KILN_EINVAL},
	    {"{\"s\":\"x\",\"l\":[\"a\",\"b\",\"c\",\"d\"]}", "field 'l': too many items",
	     KILN_ELIMIT},
	    {"{\"s\":\"x\",\"m\":{\"k\":[]}}", "field 'm.k': expected a string", KILN_EINVAL},
	    {"{\"s\":\"x\",\"obj\":{}}", "field 'obj.name': required", KILN_EINVAL},
	    {"{\"s\":\"x\",\"objs\":[{\"name\":\"a\"},{\"name\":\"toolongname\"}]}",
	     "field 'objs[1].name': 11 bytes, more than the limit of 8", KILN_ELIMIT},
	    {"{\"s\":\"x\",\"objs\":[{\"name\":\"a\",\"extra\":1}]}",
	     "field 'objs[0].extra': unknown field", KILN_EINVAL},
	    {"{\"s\":\"a\\u0000\"}", "field 's': a NUL byte is not allowed", KILN_EINVAL},
	    {"{\"s\":\"x\",\"s\":\"y\"}", "malformed JSON", KILN_ESYNTAX},
	    {"{\"s\":", "malformed JSON", KILN_ESYNTAX},
	    {"[1]", "expected a JSON object", KILN_EINVAL},
	};
	struct kiln_arena a = KILN_ARENA_INIT(KILN_MIB);
	struct kiln_err err = KILN_ERR_INIT;
	struct outer o;
	size_t i;

	for (i = 0; i < KILN_ARRAY_SIZE(cases); i++) {
		kiln_rc rc = dec(cases[i].in, &o, &a, &err);

		if (rc != cases[i].rc || !strstr(err.msg, cases[i].msg))
			print_error("case %zu: rc %d msg '%s'\n", i, rc, err.msg);
		assert_int_equal(rc, cases[i].rc);
		assert_non_null(strstr(err.msg, cases[i].msg));
	}
	kiln_arena_release(&a);
}

KILN_TEST(json_depth_and_size_limits)
{
	struct kiln_arena a = KILN_ARENA_INIT(KILN_MIB);
	struct kiln_err err = KILN_ERR_INIT;
	struct kiln_buf b = KILN_BUF_INIT(KILN_MIB);
	struct outer o;
	int i;

	for (i = 0; i < KILN_LIMIT_JSON_DEPTH + 1; i++)
		kiln_buf_addch(&b, '[');
	for (i = 0; i < KILN_LIMIT_JSON_DEPTH + 1; i++)
		kiln_buf_addch(&b, ']');
	assert_int_equal(api_json_decode(b.ptr, b.len, outer_f, 0, &o, &a, &err), KILN_ELIMIT);
	/* brackets inside strings do not count */
	kiln_buf_reset(&b);
	kiln_buf_addstr(&b, "{\"s\":\"");
	for (i = 0; i < 200; i++)
		kiln_buf_addch(&b, '[');
	kiln_buf_addstr(&b, "\"}");
	kiln_err_clear(&err);
	assert_int_equal(api_json_decode(b.ptr, b.len, outer_f, 0, &o, &a, &err), KILN_ELIMIT);
	assert_non_null(strstr(err.msg, "field 's'"));
	kiln_err_clear(&err);
	assert_int_equal(api_json_decode("{}", KILN_LIMIT_HTTP_BODY + 1, outer_f, 0, &o, &a, &err),
	                 KILN_ELIMIT);
	/* lenient decoding ignores unknown fields */
	kiln_err_clear(&err);
	assert_ok(api_json_decode("{\"s\":\"x\",\"zz\":1}", 16, outer_f, 0, &o, &a, &err), &err);
	kiln_buf_release(&b);
	kiln_arena_release(&a);
}

KILN_TEST(json_canonical_sorts_keys)
{
	struct kiln_buf b = KILN_BUF_INIT(1024);
	struct kiln_err err = KILN_ERR_INIT;
	const char *in = "{ \"b\" : [1, {\"y\":2, \"x\":1}], \"a\": \"\\u00e9\" }";

	assert_ok(api_json_canonical(in, strlen(in), &b, &err), &err);
	assert_string_equal(b.ptr, "{\"a\":\"\xc3\xa9\",\"b\":[1,{\"x\":1,\"y\":2}]}");
	kiln_buf_release(&b);
}

KILN_TEST(json_number_overflow_names_the_field)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct kiln_buf out = KILN_BUF_INIT(KILN_MIB);
	const char big[] = "{\"a\": 1, \"prio\" :\n 123456789012345678901234}";
	const char arr[] = "{\"v\": [1, 2e999]}";
	const char nokey[] = "[123456789012345678901234]";

	assert_int_equal(api_json_canonical(big, strlen(big), &out, &err), KILN_EINVAL);
	assert_non_null(strstr(err.msg, "field 'prio': number out of range"));
	kiln_err_clear(&err);
	assert_int_equal(api_json_canonical(arr, strlen(arr), &out, &err), KILN_EINVAL);
	assert_non_null(strstr(err.msg, "field 'v'"));
	kiln_err_clear(&err);
	assert_int_equal(api_json_canonical(nokey, strlen(nokey), &out, &err), KILN_ESYNTAX);
	kiln_buf_release(&out);
}
