#include "util/util.h"

#include "pack/pack.h"
#include "tests/unit/harness.h"

#define DEMO "tests/data/pack/demo-4.18.rpm"

KILN_TEST(sigheader_fit_keeps_the_size_and_restores_bytes)
{
	struct kiln_buf file = KILN_BUF_INIT(KILN_MIB), blob = KILN_BUF_INIT(KILN_MIB);
	struct kiln_err err = KILN_ERR_INIT;
	unsigned char fake[382];
	struct pack_package p;
	const struct pack_entry *e;

	memset(fake, 0x5a, sizeof(fake));
	assert_ok(util_read_file(DEMO, KILN_MIB, &file, &err), &err);
	assert_ok(pack_package_open(&p, DEMO, NULL, &err), &err);
	assert_ok(pack_header_put_bin(&p.sig, PACK_SIGTAG_RSA, fake, sizeof(fake), &err), &err);
	assert_ok(pack_sigheader_fit(&p.sig, p.sig_size, &blob, &err), &err);
	assert_int_equal(blob.len, p.sig_size + p.sig_pad);
	e = pack_header_get(&p.sig, PACK_SIGTAG_RESERVEDSPACE);
	/* 16 index bytes and 382 data bytes, minus the 2 alignment bytes SIZE no longer needs. */
	assert_int_equal(e->count, 4128 - 16 - 382 + 2);
	/* Removing the signature again gives the original bytes. */
	pack_header_del(&p.sig, PACK_SIGTAG_RSA);
	kiln_buf_reset(&blob);
	assert_ok(pack_sigheader_fit(&p.sig, p.sig_size, &blob, &err), &err);
	assert_memory_equal(blob.ptr, file.ptr + p.sig_off, blob.len);
	pack_package_release(&p);
	kiln_buf_release(&file);
	kiln_buf_release(&blob);
}

KILN_TEST(sigheader_fit_refuses_what_does_not_fit)
{
	struct kiln_buf blob = KILN_BUF_INIT(KILN_MIB);
	struct kiln_err err = KILN_ERR_INIT;
	struct pack_package p;
	unsigned char *big = kiln_calloc(8192, 1);

	assert_ok(pack_package_open(&p, DEMO, NULL, &err), &err);
	assert_ok(pack_header_put_bin(&p.sig, PACK_SIGTAG_RSA, big, 8192, &err), &err);
	assert_int_equal(pack_sigheader_fit(&p.sig, p.sig_size, &blob, &err), KILN_ELIMIT);
	pack_header_del(&p.sig, PACK_SIGTAG_RESERVEDSPACE);
	kiln_err_clear(&err);
	assert_int_equal(pack_sigheader_fit(&p.sig, p.sig_size, &blob, &err), KILN_EINVAL);
	free(big);
	pack_package_release(&p);
	kiln_buf_release(&blob);
}

KILN_TEST(sigheader_replace_in_place)
{
	struct kiln_buf a = KILN_BUF_INIT(KILN_MIB), b = KILN_BUF_INIT(KILN_MIB);
	struct kiln_buf path = KILN_BUF_INIT(KILN_LIMIT_PATH);
	struct kiln_err err = KILN_ERR_INIT;
	struct pack_package p, q;
	unsigned char fake[100];

	memset(fake, 7, sizeof(fake));
	kiln_buf_addf(&path, "%s/pkg.rpm", kiln_test_tmpdir());
	assert_ok(util_copy_file(DEMO, path.ptr, 0644, &err), &err);
	assert_ok(pack_package_open(&p, path.ptr, NULL, &err), &err);
	assert_ok(pack_header_put_bin(&p.sig, PACK_SIGTAG_DSA, fake, sizeof(fake), &err), &err);
	assert_ok(pack_sigheader_replace(path.ptr, &p.sig, &err), &err);
	assert_ok(pack_package_open(&q, path.ptr, NULL, &err), &err);
	assert_int_equal(q.hdr_off, p.hdr_off);
	assert_int_equal(pack_header_get(&q.sig, PACK_SIGTAG_DSA)->count, 100);
	assert_ok(util_read_file(DEMO, KILN_MIB, &a, &err), &err);
	assert_ok(util_read_file(path.ptr, KILN_MIB, &b, &err), &err);
	assert_int_equal(a.len, b.len);
	assert_memory_equal(a.ptr + p.hdr_off, b.ptr + p.hdr_off, a.len - p.hdr_off);
	pack_package_release(&p);
	pack_package_release(&q);
	kiln_buf_release(&a);
	kiln_buf_release(&b);
	kiln_buf_release(&path);
}
