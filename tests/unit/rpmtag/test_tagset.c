/*
 * test_tagset.c - spec/tagset.c: typed header tags in an arena.
 */
#include "util/util.h"

#include "rpmtag/rpmtag.h"
#include "tests/unit/harness.h"

struct ts_fixture {
	struct kiln_arena arena;
	struct rpmtag_set *ts;
	struct kiln_err err;
};

static void ts_init(struct ts_fixture *f, size_t max)
{
	memset(f, 0, sizeof(*f));
	kiln_arena_init(&f->arena, max);
	f->ts = rpmtag_set_new(&f->arena);
	assert_non_null(f->ts);
}

static void ts_release(struct ts_fixture *f)
{
	kiln_arena_release(&f->arena);
}

KILN_TEST(tagset_empty)
{
	struct ts_fixture f;
	struct rpmtag_qf_value v;

	ts_init(&f, KILN_MIB);
	assert_int_equal(rpmtag_set_count(f.ts), 0);
	assert_false(rpmtag_set_get(f.ts, RPMTAG_NAME, &v));
	assert_null(rpmtag_set_get_str(f.ts, RPMTAG_NAME));
	/* A NULL set is empty too. */
	assert_false(rpmtag_set_get(NULL, RPMTAG_NAME, &v));
	assert_int_equal(rpmtag_set_count(NULL), 0);
	assert_int_equal(rpmtag_set_tag_at(f.ts, 0), 0);
	rpmtag_set_del(f.ts, RPMTAG_NAME);
	rpmtag_set_sort(f.ts);
	rpmtag_set_sort(NULL);
	ts_release(&f);
}

KILN_TEST(tagset_put_copies_and_replaces)
{
	struct ts_fixture f;
	struct rpmtag_qf_value v;
	char name[8] = "abc";
	const uint16_t shorts[3] = {1, 2, 65535};
	const uint64_t big[1] = {UINT64_C(1) << 40};
	const unsigned char bin[4] = {0, 0xff, 0x10, 0};

	ts_init(&f, KILN_MIB);
	assert_ok(rpmtag_set_put_str(f.ts, RPMTAG_NAME, name, &f.err), &f.err);
	/* The set has its own copy. */
	name[0] = 'x';
	assert_string_equal(rpmtag_set_get_str(f.ts, RPMTAG_NAME), "abc");
	assert_true(rpmtag_set_get(f.ts, RPMTAG_NAME, &v));
	assert_int_equal(v.type, RPMTAG_TYPE_STRING);
	assert_int_equal(v.count, 1);
	/* put replaces value and type, in place. */
	assert_ok(rpmtag_set_put_u32(f.ts, RPMTAG_EPOCH, 7, &f.err), &f.err);
	assert_ok(rpmtag_set_put_str(f.ts, RPMTAG_NAME, "second", &f.err), &f.err);
	assert_string_equal(rpmtag_set_get_str(f.ts, RPMTAG_NAME), "second");
	assert_int_equal(rpmtag_set_count(f.ts), 2);
	assert_ok(rpmtag_set_put(f.ts, RPMTAG_NAME, RPMTAG_TYPE_INT16, shorts, 3, &f.err), &f.err);
	assert_true(rpmtag_set_get(f.ts, RPMTAG_NAME, &v));
	assert_int_equal(v.type, RPMTAG_TYPE_INT16);
	assert_int_equal(v.count, 3);
	assert_int_equal(((const uint16_t *)v.data)[2], 65535);
	/* A number is no string. */
	assert_null(rpmtag_set_get_str(f.ts, RPMTAG_NAME));
	assert_int_equal(rpmtag_set_tag_at(f.ts, 0), RPMTAG_NAME);
	assert_ok(rpmtag_set_put(f.ts, RPMTAG_LONGSIZE, RPMTAG_TYPE_INT64, big, 1, &f.err), &f.err);
	assert_true(rpmtag_set_get(f.ts, RPMTAG_LONGSIZE, &v));
	assert_true(((const uint64_t *)v.data)[0] == UINT64_C(1) << 40);
	assert_ok(rpmtag_set_put(f.ts, RPMTAG_SIGMD5, RPMTAG_TYPE_BIN, bin, 4, &f.err), &f.err);
	assert_true(rpmtag_set_get(f.ts, RPMTAG_SIGMD5, &v));
	assert_int_equal(v.count, 4);
	assert_memory_equal(v.data, bin, 4);
	ts_release(&f);
}

KILN_TEST(tagset_strings)
{
	struct ts_fixture f;
	struct rpmtag_qf_value v;
	const char *arr[3] = {"a", NULL, "c"};

	ts_init(&f, KILN_MIB);
	/* A NULL element is stored as "". */
	assert_ok(
	    rpmtag_set_put(f.ts, RPMTAG_REQUIRENAME, RPMTAG_TYPE_STRING_ARRAY, arr, 3, &f.err),
	    &f.err);
	assert_true(rpmtag_set_get(f.ts, RPMTAG_REQUIRENAME, &v));
	assert_int_equal(v.count, 3);
	assert_string_equal(((const char *const *)v.data)[1], "");
	assert_string_equal(rpmtag_set_get_str(f.ts, RPMTAG_REQUIRENAME), "a");
	assert_ok(rpmtag_set_put(f.ts, RPMTAG_SUMMARY, RPMTAG_TYPE_I18NSTRING, arr, 1, &f.err),
	          &f.err);
	assert_string_equal(rpmtag_set_get_str(f.ts, RPMTAG_SUMMARY), "a");
	/* An empty value reads as absent. */
	assert_ok(rpmtag_set_put(f.ts, RPMTAG_GROUP, RPMTAG_TYPE_STRING_ARRAY, arr, 0, &f.err),
	          &f.err);
	assert_false(rpmtag_set_get(f.ts, RPMTAG_GROUP, &v));
	assert_int_equal(rpmtag_set_count(f.ts), 3);
	ts_release(&f);
}

KILN_TEST(tagset_append_grows)
{
	struct ts_fixture f;
	struct rpmtag_qf_value v;
	char s[16];
	uint32_t i;

	ts_init(&f, KILN_MIB);
	for (i = 0; i < 1000; i++) {
		const char *p = s;

		snprintf(s, sizeof(s), "n%u", i);
		assert_ok(rpmtag_set_append(f.ts, RPMTAG_PROVIDENAME, RPMTAG_TYPE_STRING_ARRAY, &p,
		                            1, &f.err),
		          &f.err);
		assert_ok(
		    rpmtag_set_append(f.ts, RPMTAG_PROVIDEFLAGS, RPMTAG_TYPE_INT32, &i, 1, &f.err),
		    &f.err);
	}
	assert_true(rpmtag_set_get(f.ts, RPMTAG_PROVIDENAME, &v));
	assert_int_equal(v.count, 1000);
	assert_string_equal(((const char *const *)v.data)[0], "n0");
	assert_string_equal(((const char *const *)v.data)[999], "n999");
	assert_true(rpmtag_set_get(f.ts, RPMTAG_PROVIDEFLAGS, &v));
	assert_int_equal(((const uint32_t *)v.data)[777], 777);
	/* Appending several at once, after a put. */
	assert_ok(rpmtag_set_put_u32(f.ts, RPMTAG_FILESIZES, 1, &f.err), &f.err);
	{
		const uint32_t more[2] = {2, 3};

		assert_ok(
		    rpmtag_set_append(f.ts, RPMTAG_FILESIZES, RPMTAG_TYPE_INT32, more, 2, &f.err),
		    &f.err);
	}
	assert_true(rpmtag_set_get(f.ts, RPMTAG_FILESIZES, &v));
	assert_int_equal(v.count, 3);
	assert_int_equal(((const uint32_t *)v.data)[2], 3);
	ts_release(&f);
}

KILN_TEST(tagset_append_type_mismatch)
{
	struct ts_fixture f;
	const char *s = "x";

	ts_init(&f, KILN_MIB);
	assert_ok(rpmtag_set_put_u32(f.ts, RPMTAG_REQUIREFLAGS, 1, &f.err), &f.err);
	assert_int_equal(
	    rpmtag_set_append(f.ts, RPMTAG_REQUIREFLAGS, RPMTAG_TYPE_STRING_ARRAY, &s, 1, &f.err),
	    KILN_EINVAL);
	assert_string_equal(f.err.msg, "tag 1048: type 8 does not match 4");
	ts_release(&f);
}

KILN_TEST(tagset_del_sort_and_order)
{
	struct ts_fixture f;
	static const uint32_t tags[] = {RPMTAG_VERSION, RPMTAG_HEADERI18NTABLE, RPMTAG_NAME,
	                                RPMTAG_RELEASE, RPMTAG_ARCH};
	struct rpmtag_qf_value v;
	size_t i;

	ts_init(&f, KILN_MIB);
	for (i = 0; i < KILN_ARRAY_SIZE(tags); i++)
		assert_ok(rpmtag_set_put_u32(f.ts, tags[i], (uint32_t)i, &f.err), &f.err);
	/* Insertion order until sorted. */
	for (i = 0; i < KILN_ARRAY_SIZE(tags); i++)
		assert_int_equal(rpmtag_set_tag_at(f.ts, i), tags[i]);
	rpmtag_set_del(f.ts, RPMTAG_NAME);
	assert_int_equal(rpmtag_set_count(f.ts), 4);
	assert_false(rpmtag_set_get(f.ts, RPMTAG_NAME, &v));
	assert_int_equal(rpmtag_set_tag_at(f.ts, 2), RPMTAG_RELEASE);
	rpmtag_set_sort(f.ts);
	assert_int_equal(rpmtag_set_tag_at(f.ts, 0), RPMTAG_HEADERI18NTABLE);
	assert_int_equal(rpmtag_set_tag_at(f.ts, 1), RPMTAG_VERSION);
	assert_int_equal(rpmtag_set_tag_at(f.ts, 2), RPMTAG_RELEASE);
	assert_int_equal(rpmtag_set_tag_at(f.ts, 3), RPMTAG_ARCH);
	assert_int_equal(rpmtag_set_tag_at(f.ts, 4), 0);
	/* Values follow their tags. */
	assert_true(rpmtag_set_get(f.ts, RPMTAG_ARCH, &v));
	assert_int_equal(((const uint32_t *)v.data)[0], 4);
	ts_release(&f);
}

KILN_TEST(tagset_arena_limit)
{
	struct ts_fixture f;
	char big[4096];
	const char *p = big;
	kiln_rc rc = KILN_OK;
	int i;

	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	ts_init(&f, 256 * KILN_KIB);
	for (i = 0; i < 256 && !rc; i++)
		rc = rpmtag_set_append(f.ts, RPMTAG_CHANGELOGTEXT, RPMTAG_TYPE_STRING_ARRAY, &p, 1,
		                       &f.err);
	/* The arena's limit is a normal error. */
	assert_int_equal(rc, KILN_ELIMIT);
	assert_true(i < 256);
	ts_release(&f);
}
