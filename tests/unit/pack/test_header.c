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
	assert_ok(pack_header_put_string(h, SPEC_TAG_NAME, "demo", &err), &err);
	assert_ok(pack_header_put_i18n(h, SPEC_TAG_SUMMARY, "sum", &err), &err);
	assert_ok(pack_header_put_u32(h, SPEC_TAG_BUILDTIME, 1704067200, &err), &err);
	assert_ok(pack_header_put_strings(h, SPEC_TAG_BASENAMES, names, 3, &err), &err);
	assert_ok(pack_header_put(h, SPEC_TAG_FILEMODES, SPEC_TYPE_INT16, modes, 2, &err), &err);
	assert_ok(pack_header_put_u64(h, SPEC_TAG_LONGSIZE, 1ull << 40, &err), &err);
	assert_ok(pack_header_put_bin(h, SPEC_TAG_SIGMD5, md5, 16, &err), &err);
}

KILN_TEST(header_put_get_replace_del)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct pack_header h;
	uint64_t n = 0;

	sample(&h);
	assert_string_equal(pack_header_get_string(&h, SPEC_TAG_NAME), "demo");
	assert_true(pack_header_get_number(&h, SPEC_TAG_LONGSIZE, &n));
	assert_true(n == 1ull << 40);
	assert_ok(pack_header_put_string(&h, SPEC_TAG_NAME, "other", &err), &err);
	assert_string_equal(pack_header_get_string(&h, SPEC_TAG_NAME), "other");
	pack_header_del(&h, SPEC_TAG_NAME);
	assert_null(pack_header_get(&h, SPEC_TAG_NAME));
	assert_int_equal(pack_header_put(&h, 1000, SPEC_TYPE_STRING, NULL, 2, &err), KILN_EINVAL);
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
	assert_ok(pack_header_write(&h, SPEC_TAG_HEADERIMMUTABLE, &a, &err), &err);
	assert_int_equal(a.len, pack_header_size(&h, SPEC_TAG_HEADERIMMUTABLE));
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
	put32(b->ptr + 16 + 16 + 4, SPEC_TYPE_INT32);
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
	assert_string_equal(pack_header_get_string(&h, SPEC_TAG_NAME), "abc");
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
