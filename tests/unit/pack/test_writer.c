#include "util/util.h"

#include <time.h>

#include "tests/unit/pack/pkgfix.h"

KILN_TEST(writer_output_reads_back)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct pack_package p;
	char path[1024];
	uint64_t n = 0;
	const struct pack_entry *e;

	pkgfix_write("w4", 4, "w6.gzdio", path, sizeof(path));
	assert_ok(pack_package_open(&p, path, NULL, &err), &err);
	assert_int_equal(p.format, 4);
	assert_false(p.source);
	assert_int_equal(p.lead.major, 3);
	assert_string_equal(p.lead.name, "w4-1.0-1");
	assert_true(pack_header_get_number(&p.hdr, RPMTAG_SIZE, &n));
	assert_int_equal(n, 6 + 5 + 7); /* file, symlink, the hard-link set once */
	e = pack_header_get(&p.hdr, RPMTAG_FILEINODES);
	assert_int_equal(pack_header_get(&p.hdr, RPMTAG_BASENAMES)->count, 6);
	/* Sorted paths: /usr/bin 1, /usr/bin/hello 2, /usr/bin/hi 3, /usr/lib/a 4, b 4. */
	assert_int_equal(((const uint32_t *)e->data)[3], 4);
	assert_int_equal(((const uint32_t *)e->data)[4], 4);
	assert_string_equal(pack_header_get_string(&p.hdr, RPMTAG_PAYLOADCOMPRESSOR), "gzip");
	assert_string_equal(pack_header_get_string(&p.hdr, RPMTAG_PAYLOADFLAGS), "6");
	assert_non_null(pack_header_get(&p.sig, PACK_SIGTAG_RESERVEDSPACE));
	pack_package_release(&p);
}

KILN_TEST(writer_is_deterministic)
{
	struct kiln_buf a = KILN_BUF_INIT(KILN_MIB), b = KILN_BUF_INIT(KILN_MIB);
	struct kiln_err err = KILN_ERR_INIT;
	char p1[1024], p2[1024];

	pkgfix_write("same", 6, "w3.zstdio", p1, sizeof(p1));
	assert_ok(util_read_file(p1, KILN_MIB, &a, &err), &err);
	pkgfix_write("same", 6, "w3.zstdio", p2, sizeof(p2));
	assert_ok(util_read_file(p2, KILN_MIB, &b, &err), &err);
	assert_int_equal(a.len, b.len);
	assert_memory_equal(a.ptr, b.ptr, a.len);
	kiln_buf_release(&a);
	kiln_buf_release(&b);
}

KILN_TEST(writer_refuses_bad_input)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct pack_write_opts o;
	struct pack_header h;
	struct pack_file f[2];
	char path[1024];

	snprintf(path, sizeof(path), "%s/bad.rpm", kiln_test_tmpdir());
	pack_header_init(&h);
	pack_write_opts_init(&o);
	memset(f, 0, sizeof(f));
	assert_int_equal(pack_write(path, &h, NULL, 0, &o, &err), KILN_EINVAL); /* no NAME */
	assert_ok(pack_header_put_string(&h, RPMTAG_NAME, "n", &err), &err);
	assert_ok(pack_header_put_string(&h, RPMTAG_VERSION, "1", &err), &err);
	assert_ok(pack_header_put_string(&h, RPMTAG_RELEASE, "1", &err), &err);
	f[0] = (struct pack_file){.path = "/a", .mode = S_IFDIR | 0755};
	f[1] = (struct pack_file){.path = "/a", .mode = S_IFDIR | 0755};
	kiln_err_clear(&err);
	assert_int_equal(pack_write(path, &h, f, 2, &o, &err), KILN_EINVAL);
	o.format = 5;
	kiln_err_clear(&err);
	assert_int_equal(pack_write(path, &h, f, 1, &o, &err), KILN_EINVAL);
	assert_false(util_exists(path));
	pack_header_release(&h);
}

/* pack_write_opts.overlap: the caller's late work (file classes, a dependency) done while
 * the payload is compressed gives the bytes the same input gives without it, also when the
 * payload outgrows the in-memory spill and has to wait for the header. */
struct late_fix {
	struct pack_header *h;
	struct pack_file *f;
	int calls;
	kiln_rc fail;
};

static kiln_rc late_fill(void *arg, struct kiln_err *err)
{
	struct late_fix *l = arg;
	struct timespec ts = {0, 30 * 1000 * 1000};

	l->calls++;
	nanosleep(&ts, NULL); /* let the payload run ahead into the spill and its cap */
	if (l->fail)
		return kiln_err_set(err, l->fail, "late work failed");
	l->f[0].fclass = "ASCII text";
	l->f[0].color = 0;
	l->f[1].fclass = "directory";
	return pack_deps_add(l->h, PACK_DEP_REQUIRE, "late-dep", NULL, 0, err);
}

static void late_write(const char *path, const char *src, bool overlap, size_t spill, kiln_rc fail,
                       struct kiln_err *err, kiln_rc want)
{
	struct pack_write_opts o;
	struct pack_header h;
	struct pack_file f[2];
	struct late_fix l;

	memset(f, 0, sizeof(f));
	f[0] = (struct pack_file){.path = "/usr/share/big.txt",
	                          .src = src,
	                          .mode = S_IFREG | 0644,
	                          .mtime = 1704067200,
	                          .verify = RPMTAG_VERIFY_ALL};
	f[1] = (struct pack_file){.path = "/usr/share",
	                          .mode = S_IFDIR | 0755,
	                          .mtime = 1704067200,
	                          .verify = RPMTAG_VERIFY_ALL};
	pack_header_init(&h);
	assert_ok(pack_header_put_string(&h, RPMTAG_NAME, "late", err), err);
	assert_ok(pack_header_put_string(&h, RPMTAG_VERSION, "1", err), err);
	assert_ok(pack_header_put_string(&h, RPMTAG_RELEASE, "1", err), err);
	l = (struct late_fix){&h, f, 0, fail};
	pack_write_opts_init(&o);
	assert_ok(pack_compress_parse("w1.gzdio", &o.comp, err), err);
	if (overlap) {
		o.overlap = late_fill;
		o.overlap_arg = &l;
		o.overlap_spill_max = spill;
	} else {
		assert_ok(late_fill(&l, err), err);
	}
	assert_int_equal(pack_write(path, &h, f, 2, &o, err), want);
	assert_int_equal(l.calls, 1);
	pack_header_release(&h);
}

KILN_TEST(writer_overlap_same_bytes)
{
	struct kiln_buf a = KILN_BUF_INIT(16 * KILN_MIB), b = KILN_BUF_INIT(16 * KILN_MIB);
	struct kiln_buf text = KILN_BUF_INIT(16 * KILN_MIB);
	struct kiln_err err = KILN_ERR_INIT;
	const char *d = kiln_test_tmpdir();
	char src[1024], p1[1024], p2[1024], p3[1024];
	uint32_t x = 12345;
	size_t i;

	/* ~3 MiB that gzip cannot shrink much: the compressed payload passes the 4 KiB cap. */
	for (i = 0; i < 3u * 1024 * 1024; i++) {
		x = x * 1103515245u + 12345u;
		kiln_buf_addch(&text, (char)('a' + (x >> 16) % 26));
	}
	assert_ok(kiln_buf_finish(&text, &err), &err);
	snprintf(src, sizeof(src), "%s/late.src", d);
	snprintf(p1, sizeof(p1), "%s/late-seq.rpm", d);
	snprintf(p2, sizeof(p2), "%s/late-ovl.rpm", d);
	snprintf(p3, sizeof(p3), "%s/late-cap.rpm", d);
	assert_ok(util_write_atomic(src, text.ptr, text.len, 0644, &err), &err);
	late_write(p1, src, false, 0, KILN_OK, &err, KILN_OK);
	late_write(p2, src, true, 0, KILN_OK, &err, KILN_OK);
	late_write(p3, src, true, 4096, KILN_OK, &err, KILN_OK);
	assert_ok(util_read_file(p1, 16 * KILN_MIB, &a, &err), &err);
	assert_true(a.len > 1024 * 1024);
	assert_ok(util_read_file(p2, 16 * KILN_MIB, &b, &err), &err);
	assert_int_equal(a.len, b.len);
	assert_memory_equal(a.ptr, b.ptr, a.len);
	kiln_buf_reset(&b);
	assert_ok(util_read_file(p3, 16 * KILN_MIB, &b, &err), &err);
	assert_int_equal(a.len, b.len);
	assert_memory_equal(a.ptr, b.ptr, a.len);
	assert_non_null(memmem(a.ptr, a.len, "late-dep", 8));
	kiln_buf_release(&a);
	kiln_buf_release(&b);
	kiln_buf_release(&text);
}

/* A failing callback stops the payload, is pack_write's error and leaves no file. */
KILN_TEST(writer_overlap_failure_leaves_nothing)
{
	struct kiln_err err = KILN_ERR_INIT;
	const char *d = kiln_test_tmpdir();
	char src[1024], path[1024];
	struct kiln_buf text = KILN_BUF_INIT(4 * KILN_MIB);
	size_t i;

	for (i = 0; i < 2u * 1024 * 1024; i++)
		kiln_buf_addch(&text, (char)('a' + (i * 7919u) % 26));
	assert_ok(kiln_buf_finish(&text, &err), &err);
	snprintf(src, sizeof(src), "%s/fail.src", d);
	snprintf(path, sizeof(path), "%s/fail.rpm", d);
	assert_ok(util_write_atomic(src, text.ptr, text.len, 0644, &err), &err);
	late_write(path, src, true, 4096, KILN_EIO, &err, KILN_EIO);
	assert_non_null(strstr(err.msg, "late work failed"));
	assert_non_null(strstr(err.msg, path));
	assert_false(util_exists(path));
	kiln_err_clear(&err);
	kiln_buf_release(&text);
}
