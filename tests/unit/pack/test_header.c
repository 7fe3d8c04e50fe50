#include "util/util.h"

#include "pack/pack.h"
#include "tests/unit/harness.h"

static void sample(struct pack_header *h)
{
	struct kiln_err err = KILN_ERR_INIT;
	const char *names[] = {"a", "bb", ""};
	uint16_t modes[] = {0100644, 040755};
	unsigned char md5[16] = {1, 2, 3};

	pack_header_init(h);
	assert_ok(pack_header_put_string(h, RPMTAG_NAME, "demo", &err), &err);
	assert_ok(pack_header_put_i18n(h, RPMTAG_SUMMARY, "sum", &err), &err);
	assert_ok(pack_header_put_u32(h, RPMTAG_BUILDTIME, 1704067200, &err), &err);
	assert_ok(pack_header_put_strings(h, RPMTAG_BASENAMES, names, 3, &err), &err);
	assert_ok(pack_header_put(h, RPMTAG_FILEMODES, RPMTAG_TYPE_INT16, modes, 2, &err), &err);
	assert_ok(pack_header_put_u64(h, RPMTAG_LONGSIZE, 1ull << 40, &err), &err);
	assert_ok(pack_header_put_bin(h, RPMTAG_SIGMD5, md5, 16, &err), &err);
}

KILN_TEST(header_put_get_replace_del)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct pack_header h;
	uint64_t n = 0;

	sample(&h);
	assert_string_equal(pack_header_get_string(&h, RPMTAG_NAME), "demo");
	assert_true(pack_header_get_number(&h, RPMTAG_LONGSIZE, &n));
	assert_true(n == 1ull << 40);
	assert_ok(pack_header_put_string(&h, RPMTAG_NAME, "other", &err), &err);
	assert_string_equal(pack_header_get_string(&h, RPMTAG_NAME), "other");
	pack_header_del(&h, RPMTAG_NAME);
	assert_null(pack_header_get(&h, RPMTAG_NAME));
	assert_int_equal(pack_header_put(&h, 1000, RPMTAG_TYPE_STRING, NULL, 2, &err), KILN_EINVAL);
	pack_header_release(&h);
}

KILN_TEST(header_write_layout_and_roundtrip)
{
	struct kiln_buf a = KILN_BUF_INIT(KILN_MIB), b = KILN_BUF_INIT(KILN_MIB);
	struct kiln_err err = KILN_ERR_INIT;
	struct pack_header h, r;
	const unsigned char *p;
	size_t used = 0;

	sample(&h);
	assert_ok(pack_header_write(&h, RPMTAG_HEADERIMMUTABLE, &a, &err), &err);
	assert_int_equal(a.len, pack_header_size(&h, RPMTAG_HEADERIMMUTABLE));
	p = (const unsigned char *)a.ptr;
	assert_memory_equal(p, "\x8e\xad\xe8\x01\0\0\0\0", 8);
	assert_int_equal(p[11], 8); /* 7 entries + region */
	assert_int_equal(p[16 + 3], 63);
	pack_header_init(&r);
	assert_ok(pack_header_from_mem(&r, a.ptr, a.len, 63, PACK_HDR_F_TYPECHECK, 0, &used, &err),
	          &err);
	assert_int_equal(used, a.len);
	assert_int_equal(r.region, 63);
	assert_int_equal(r.n, 7);
	assert_ok(pack_header_write(&r, 63, &b, &err), &err);
	assert_int_equal(a.len, b.len);
	assert_memory_equal(a.ptr, b.ptr, a.len);
	pack_header_release(&h);
	pack_header_release(&r);
	kiln_buf_release(&a);
	kiln_buf_release(&b);
}

static void put32(char *p, uint32_t v)
{
	p[0] = (char)(v >> 24);
	p[1] = (char)(v >> 16);
	p[2] = (char)(v >> 8);
	p[3] = (char)v;
}

/* Write the sample, apply a corruption, and expect code + a message fragment. */
static void expect_bad(void (*corrupt)(struct kiln_buf *), kiln_rc code, const char *msg)
{
	struct kiln_buf a = KILN_BUF_INIT(KILN_MIB);
	struct kiln_err err = KILN_ERR_INIT;
	struct pack_header h, r;

	sample(&h);
	assert_ok(pack_header_write(&h, 63, &a, &err), &err);
	corrupt(&a);
	pack_header_init(&r);
	assert_int_equal(
	    pack_header_from_mem(&r, a.ptr, a.len, 63, PACK_HDR_F_TYPECHECK, 100, NULL, &err),
	    code);
	if (!strstr(err.msg, msg))
		fail_msg("message '%s' lacks '%s'", err.msg, msg);
	pack_header_release(&h);
	pack_header_release(&r);
	kiln_buf_release(&a);
}

static void c_magic(struct kiln_buf *b)
{
	b->ptr[1] = 0;
}
static void c_truncate(struct kiln_buf *b)
{
	b->len -= 3;
}
static void c_huge_il(struct kiln_buf *b)
{
	put32(b->ptr + 8, 0x7fffffff);
}
static void c_huge_dl(struct kiln_buf *b)
{
	put32(b->ptr + 12, 0x7fffffff);
}
/* Entry 1 is HEADERI18NTABLE-less sample: NAME (1000) string at index 1. */
static void c_offset(struct kiln_buf *b)
{
	put32(b->ptr + 16 + 16 + 8, 0x10000);
}
static void c_negative(struct kiln_buf *b)
{
	put32(b->ptr + 16 + 16 + 8, 0xfffffff0);
}
static void c_count(struct kiln_buf *b)
{
	put32(b->ptr + 16 + 16 + 12, 0xffffffff);
}
static void c_type(struct kiln_buf *b)
{
	put32(b->ptr + 16 + 16 + 4, 42);
}
static void c_typecheck(struct kiln_buf *b)
{
	put32(b->ptr + 16 + 16 + 4, RPMTAG_TYPE_INT32);
}
static void c_region(struct kiln_buf *b)
{
	put32(b->ptr + 16 + 8, 4);
}
static void c_trailer(struct kiln_buf *b)
{
	put32(b->ptr + b->len - 8, (uint32_t)-32);
}
static void c_unterminated(struct kiln_buf *b)
{
	size_t il = (unsigned char)b->ptr[11];

	memset(b->ptr + 16 + il * 16 + 16, 'x', 5); /* NAME "demo\0" after SIGMD5's 16 bytes */
}
static void c_dup(struct kiln_buf *b)
{
	put32(b->ptr + 16 + 48, 1000); /* entry 3 (SUMMARY) becomes NAME too */
}
static void c_lowtag(struct kiln_buf *b)
{
	put32(b->ptr + 16 + 16, 50);
}

static void c_unsorted(struct kiln_buf *b)
{
	put32(b->ptr + 16 + 32, 1005); /* entry 2 NAME -> DESCRIPTION, before SUMMARY (1004) */
}

KILN_TEST(header_hostile_inputs)
{
	expect_bad(c_magic, KILN_EFORMAT, "header: bad magic at offset 100");
	expect_bad(c_truncate, KILN_EFORMAT, "truncated at offset 100");
	expect_bad(c_huge_il, KILN_ELIMIT, "index entries at offset 108");
	expect_bad(c_huge_dl, KILN_ELIMIT, "data bytes at offset 112");
	expect_bad(c_offset, KILN_EFORMAT,
	           "entry 1 (tag 261 type 7 offset 65536 count 16) at offset "
	           "132: data offset out of bounds");
	expect_bad(c_negative, KILN_EFORMAT, "data offset out of bounds");
	expect_bad(c_count, KILN_EFORMAT, "bad count");
	expect_bad(c_type, KILN_EFORMAT, "bad data type");
	expect_bad(c_typecheck, KILN_EFORMAT, "does not match rpm's tag table");
	expect_bad(c_region, KILN_EFORMAT, "region trailer is not at the end");
	expect_bad(c_trailer, KILN_EFORMAT, "covers 2 entries, the header has 8");
	expect_bad(c_unterminated, KILN_EFORMAT, "overlaps the previous entry");
	expect_bad(c_dup, KILN_EFORMAT, "duplicate tag");
	expect_bad(c_lowtag, KILN_EFORMAT, "tag number below 100");
	expect_bad(c_unsorted, KILN_EFORMAT,
	           "entry 3 (tag 1004 type 9 offset 21 count 1) at "
	           "offset 164: index not sorted by tag");
}

static uint32_t get32(const unsigned char *p)
{
	return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

/* Every data type, each after a 1-byte item so that padding is needed: offsets are aligned
 * to the element size (2, 4, 8), nothing else is padded, and the values read back. */
KILN_TEST(header_all_types_aligned)
{
	static const uint32_t tags[] = {1029, 1030, 1031, 1032, 1033, 1034, 1035, 1036, 1037, 1038};
	const unsigned char ch[] = {'a', 'b', 'c'};
	const uint8_t i8[] = {7};
	const uint16_t i16[] = {0x1234, 0xfedc};
	const uint32_t i32[] = {0x89abcdef};
	const uint64_t i64[] = {0x0102030405060708ull, 42};
	const char *strs[] = {"x", "yz"};
	struct kiln_buf a = KILN_BUF_INIT(KILN_MIB);
	struct kiln_err err = KILN_ERR_INIT;
	struct pack_header h, r;
	const unsigned char *p, *store;
	uint32_t il, want_off[] = {0, 2, 6, 7, 16, 32, 33, 35, 36, 40};
	size_t i;

	pack_header_init(&h);
	assert_ok(pack_header_put(&h, tags[0], RPMTAG_TYPE_CHAR, ch, 1, &err), &err);
	assert_ok(pack_header_put(&h, tags[1], RPMTAG_TYPE_INT16, i16, 2, &err), &err);
	assert_ok(pack_header_put(&h, tags[2], RPMTAG_TYPE_INT8, i8, 1, &err), &err);
	assert_ok(pack_header_put(&h, tags[3], RPMTAG_TYPE_CHAR, ch, 3, &err), &err);
	assert_ok(pack_header_put(&h, tags[4], RPMTAG_TYPE_INT64, i64, 2, &err), &err);
	assert_ok(pack_header_put(&h, tags[5], RPMTAG_TYPE_INT8, i8, 1, &err), &err);
	assert_ok(pack_header_put_strings(&h, tags[6], strs, 1, &err), &err);
	assert_ok(pack_header_put(&h, tags[7], RPMTAG_TYPE_INT8, i8, 1, &err), &err);
	assert_ok(pack_header_put(&h, tags[8], RPMTAG_TYPE_INT16, i16, 1, &err), &err);
	assert_ok(pack_header_put(&h, tags[9], RPMTAG_TYPE_INT32, i32, 1, &err), &err);
	assert_ok(pack_header_write(&h, 63, &a, &err), &err);
	p = (const unsigned char *)a.ptr;
	il = get32(p + 8);
	assert_int_equal(il, 11);
	store = p + 16 + 16 * il;
	for (i = 0; i < KILN_ARRAY_SIZE(tags); i++) {
		assert_int_equal(get32(p + 16 + 16 * (i + 1)), tags[i]);
		assert_int_equal(get32(p + 16 + 16 * (i + 1) + 8), want_off[i]);
	}
	assert_int_equal(get32(p + 12), 44 + 16); /* data, then the trailer */
	assert_memory_equal(store + 2, "\x12\x34\xfe\xdc", 4);
	assert_memory_equal(store + 16, "\1\2\3\4\5\6\7\x08", 8);
	assert_memory_equal(store + 40, "\x89\xab\xcd\xef", 4);
	assert_int_equal(store[10] | store[11] | store[14] | store[15] | store[38] | store[39], 0);
	pack_header_init(&r);
	/* No type check: these tag numbers have other types in rpm's table. */
	assert_ok(pack_header_from_mem(&r, a.ptr, a.len, 63, 0, 0, NULL, &err), &err);
	assert_int_equal(((const uint16_t *)pack_header_get(&r, 1030)->data)[1], 0xfedc);
	assert_true(((const uint64_t *)pack_header_get(&r, 1033)->data)[0] == i64[0]);
	assert_int_equal(pack_header_get(&r, 1032)->type, RPMTAG_TYPE_CHAR);
	assert_int_equal(pack_header_get(&r, 1032)->count, 3);
	assert_int_equal(((const uint8_t *)pack_header_get(&r, 1036)->data)[0], 7);
	pack_header_release(&h);
	pack_header_release(&r);
	kiln_buf_release(&a);
}

KILN_TEST(header_legacy_without_region)
{
	static const char blob[] = "\x8e\xad\xe8\x01\0\0\0\0"
	                           "\0\0\0\1\0\0\0\4"
	                           "\0\0\x03\xe8\0\0\0\6\0\0\0\0\0\0\0\1"
	                           "abc";
	struct kiln_err err = KILN_ERR_INIT;
	struct pack_header h;

	pack_header_init(&h);
	assert_ok(pack_header_from_mem(&h, blob, sizeof(blob), 63, 0, 0, NULL, &err), &err);
	assert_int_equal(h.region, 0);
	assert_string_equal(pack_header_get_string(&h, RPMTAG_NAME), "abc");
	pack_header_release(&h);
}

KILN_TEST(header_unterminated_string)
{
	static const char blob[] = "\x8e\xad\xe8\x01\0\0\0\0"
	                           "\0\0\0\1\0\0\0\3"
	                           "\0\0\x03\xe8\0\0\0\6\0\0\0\0\0\0\0\1"
	                           "abc";
	struct kiln_err err = KILN_ERR_INIT;
	struct pack_header h;

	pack_header_init(&h);
	assert_int_equal(pack_header_from_mem(&h, blob, sizeof(blob) - 1, 63, 0, 0, NULL, &err),
	                 KILN_EFORMAT);
	assert_non_null(strstr(err.msg, "string not terminated"));
	pack_header_release(&h);
}
