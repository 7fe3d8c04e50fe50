#include "util/util.h"

#include "pack/pack.h"
#include "pack/pack_int.h"
#include "tests/unit/harness.h"

KILN_TEST(compress_parse_modes)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct pack_compress c;

	assert_ok(pack_compress_parse("w19.zstdio", &c, &err), &err);
	assert_int_equal(c.kind, PACK_COMP_ZSTD);
	assert_int_equal(c.level, 19);
	assert_string_equal(c.flags, "19");
	assert_string_equal(c.name, "zstd");
	assert_ok(pack_compress_parse("w7T16.xzdio", &c, &err), &err);
	assert_int_equal(c.threads, 16);
	assert_string_equal(c.flags, "7T16");
	assert_ok(pack_compress_parse("w.ufdio", &c, &err), &err);
	assert_int_equal(c.kind, PACK_COMP_NONE);
	assert_string_equal(c.flags, "");
	assert_null(c.name);
	assert_ok(pack_compress_parse("w9T.gzdio", &c, &err), &err);
	assert_true(c.threads >= 1);
	assert_int_equal(pack_compress_parse("x9.gzdio", &c, &err), KILN_EINVAL);
	assert_int_equal(pack_compress_parse("w9.bzdio", &c, &err), KILN_EUNSUPP);
	assert_int_equal(pack_compress_parse("w9x.gzdio", &c, &err), KILN_EINVAL);
}

struct memsink {
	struct pack_sink base;
	struct kiln_buf b;
};

static kiln_rc mem_write(struct pack_sink *s, const void *d, size_t n, struct kiln_err *err)
{
	struct memsink *m = (struct memsink *)s;

	kiln_buf_add(&m->b, d, n);
	return kiln_buf_finish(&m->b, err);
}

struct memsrc {
	struct pack_src base;
	const struct kiln_buf *b;
	size_t pos;
};

static kiln_rc mem_read(struct pack_src *s, void *buf, size_t len, size_t *got,
                        struct kiln_err *err)
{
	struct memsrc *m = (struct memsrc *)s;
	size_t n = m->b->len - m->pos < len ? m->b->len - m->pos : len;

	(void)err;
	memcpy(buf, m->b->ptr + m->pos, n);
	m->pos += n;
	*got = n;
	return KILN_OK;
}

static void compress(const char *mode, const struct kiln_buf *in, struct kiln_buf *out)
{
	struct memsink sink = {{mem_write}, KILN_BUF_INIT(64 * KILN_MIB)};
	struct kiln_err err = KILN_ERR_INIT;
	struct pack_compress c;
	struct pack_comp *comp = NULL;
	size_t i;

	assert_ok(pack_compress_parse(mode, &c, &err), &err);
	assert_ok(pack_comp_new(&c, &sink.base, &comp, &err), &err);
	for (i = 0; i < in->len; i += 70001)
		assert_ok(pack_comp_write(comp, in->ptr + i,
		                          in->len - i < 70001 ? in->len - i : 70001, &err),
		          &err);
	assert_ok(pack_comp_finish(comp, &err), &err);
	pack_comp_free(comp);
	*out = sink.b;
}

static void decompress(const char *name, const struct kiln_buf *in, struct kiln_buf *out)
{
	struct memsrc src = {{mem_read}, in, 0};
	struct kiln_err err = KILN_ERR_INIT;
	struct pack_decomp *d = NULL;
	char buf[10000];
	size_t got = 0;

	assert_ok(pack_decomp_new(name, &src.base, &d, &err), &err);
	do {
		assert_ok(pack_decomp_read(d, buf, sizeof(buf), &got, &err), &err);
		kiln_buf_add(out, buf, got);
	} while (got);
	pack_decomp_free(d);
}

static void sample(struct kiln_buf *b)
{
	size_t i;

	for (i = 0; i < 600000; i++)
		kiln_buf_addf(b, "%zu ", (i * 2654435761u) % 1000);
}

KILN_TEST(compress_roundtrips)
{
	static const char *const modes[] = {"w.ufdio",   "w6.gzdio",    "w1.xzdio",
	                                    "w3.zstdio", "w3T2.zstdio", "w1T2.xzdio"};
	static const char *const names[] = {NULL, "gzip", "xz", "zstd", "zstd", "xz"};
	struct kiln_buf in = KILN_BUF_INIT(64 * KILN_MIB);
	size_t i;

	sample(&in);
	for (i = 0; i < KILN_ARRAY_SIZE(modes); i++) {
		struct kiln_buf c, back = KILN_BUF_INIT(64 * KILN_MIB);

		compress(modes[i], &in, &c);
		decompress(names[i], &c, &back);
		assert_int_equal(back.len, in.len);
		assert_memory_equal(back.ptr, in.ptr, in.len);
		kiln_buf_release(&c);
		kiln_buf_release(&back);
	}
	kiln_buf_release(&in);
}

/* Multi-threaded output must not depend on the thread count. */
KILN_TEST(compress_threads_do_not_change_bytes)
{
	static const char *const pairs[][2] = {{"w3T1.zstdio", "w3T4.zstdio"},
	                                       {"w1T1.xzdio", "w1T3.xzdio"}};
	struct kiln_buf in = KILN_BUF_INIT(64 * KILN_MIB);
	size_t i;

	sample(&in);
	for (i = 0; i < KILN_ARRAY_SIZE(pairs); i++) {
		struct kiln_buf a, b;

		compress(pairs[i][0], &in, &a);
		compress(pairs[i][1], &in, &b);
		assert_int_equal(a.len, b.len);
		assert_memory_equal(a.ptr, b.ptr, a.len);
		kiln_buf_release(&a);
		kiln_buf_release(&b);
	}
	kiln_buf_release(&in);
}

KILN_TEST(decompress_rejects_garbage)
{
	struct kiln_buf in = KILN_BUF_INIT(KILN_MIB);
	struct memsrc src = {{mem_read}, &in, 0};
	struct kiln_err err = KILN_ERR_INIT;
	struct pack_decomp *d = NULL;
	static const char *const names[] = {"gzip", "xz", "zstd"};
	char buf[100];
	size_t got = 0, i;

	kiln_buf_addstr(&in, "definitely not compressed data");
	for (i = 0; i < 3; i++) {
		src.pos = 0;
		assert_ok(pack_decomp_new(names[i], &src.base, &d, &err), &err);
		assert_int_equal(pack_decomp_read(d, buf, sizeof(buf), &got, &err), KILN_EFORMAT);
		pack_decomp_free(d);
		kiln_err_clear(&err);
	}
	assert_int_equal(pack_decomp_new("bzip2", &src.base, &d, &err), KILN_EUNSUPP);
	kiln_buf_release(&in);
}
