/*
 * test_compfile.c - compressed streams to a file descriptor: gzip output that zlib reads
 * back, with no name and no time in its header, and the same bytes for the same input.
 */
#include "util/util.h"

#include <fcntl.h>
#include <unistd.h>
#include <zlib.h>

#include "pack/pack.h"
#include "tests/unit/harness.h"

static void compress_to(const char *path, const char *mode, const void *data, size_t len)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct pack_compress c;
	struct pack_compfile *f = NULL;
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	assert_true(fd >= 0);
	assert_ok(pack_compress_parse(mode, &c, &err), &err);
	assert_ok(pack_compfile_open(&c, fd, &f, &err), &err);
	assert_ok(pack_compfile_write(f, data, len / 2, &err), &err);
	assert_ok(pack_compfile_write(f, (const char *)data + len / 2, len - len / 2, &err), &err);
	assert_ok(pack_compfile_finish(f, &err), &err);
	pack_compfile_free(f);
	close(fd);
}

KILN_TEST(compfile_gzip_roundtrip_and_header)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct kiln_buf a = KILN_BUF_INIT(KILN_MIB), b = KILN_BUF_INIT(KILN_MIB);
	char pa[512], pb[512], data[100000], back[100000];
	z_stream zs = {0};
	size_t i;

	for (i = 0; i < sizeof(data); i++)
		data[i] = (char)(i * 7 % 251);
	snprintf(pa, sizeof(pa), "%s/a.gz", kiln_test_tmpdir());
	snprintf(pb, sizeof(pb), "%s/b.gz", kiln_test_tmpdir());
	compress_to(pa, "w6.gzdio", data, sizeof(data));
	compress_to(pb, "w6.gzdio", data, sizeof(data));
	assert_ok(util_read_file(pa, KILN_MIB, &a, &err), &err);
	assert_ok(util_read_file(pb, KILN_MIB, &b, &err), &err);
	assert_int_equal(a.len, b.len);
	assert_memory_equal(a.ptr, b.ptr, a.len);
	/* magic, deflate, no flags (no name), mtime 0 */
	assert_memory_equal(a.ptr, "\x1f\x8b\x08\x00\x00\x00\x00\x00", 8);
	assert_int_equal(inflateInit2(&zs, 31), Z_OK);
	zs.next_in = (Bytef *)a.ptr;
	zs.avail_in = (uInt)a.len;
	zs.next_out = (Bytef *)back;
	zs.avail_out = sizeof(back);
	assert_int_equal(inflate(&zs, Z_FINISH), Z_STREAM_END);
	assert_int_equal(zs.total_out, sizeof(data));
	assert_memory_equal(back, data, sizeof(data));
	inflateEnd(&zs);
	kiln_buf_release(&a);
	kiln_buf_release(&b);
}

KILN_TEST(compfile_write_error)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct pack_compress c;
	struct pack_compfile *f = NULL;
	char data[4096] = {0};
	kiln_rc rc = KILN_OK;
	int i;

	/* A read-only descriptor: the first flush fails with errno kept. */
	int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);

	assert_ok(pack_compress_parse("w.ufdio", &c, &err), &err);
	assert_ok(pack_compfile_open(&c, fd, &f, &err), &err);
	for (i = 0; i < 100 && !rc; i++)
		rc = pack_compfile_write(f, data, sizeof(data), &err);
	if (!rc)
		rc = pack_compfile_finish(f, &err);
	assert_int_equal(rc, KILN_EIO);
	assert_int_equal(err.sys_errno, EBADF);
	pack_compfile_free(f);
	close(fd);
}
