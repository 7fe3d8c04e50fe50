#include "util/util.h"

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
	assert_true(pack_header_get_number(&p.hdr, SPEC_TAG_SIZE, &n));
	assert_int_equal(n, 6 + 5 + 7); /* file, symlink, the hard-link set once */
	e = pack_header_get(&p.hdr, SPEC_TAG_FILEINODES);
	assert_int_equal(pack_header_get(&p.hdr, SPEC_TAG_BASENAMES)->count, 6);
	/* Sorted paths: /usr/bin 1, /usr/bin/hello 2, /usr/bin/hi 3, /usr/lib/a 4, b 4. */
	assert_int_equal(((const uint32_t *)e->data)[3], 4);
	assert_int_equal(((const uint32_t *)e->data)[4], 4);
	assert_string_equal(pack_header_get_string(&p.hdr, SPEC_TAG_PAYLOADCOMPRESSOR), "gzip");
	assert_string_equal(pack_header_get_string(&p.hdr, SPEC_TAG_PAYLOADFLAGS), "6");
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
	assert_ok(pack_header_put_string(&h, SPEC_TAG_NAME, "n", &err), &err);
	assert_ok(pack_header_put_string(&h, SPEC_TAG_VERSION, "1", &err), &err);
	assert_ok(pack_header_put_string(&h, SPEC_TAG_RELEASE, "1", &err), &err);
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
