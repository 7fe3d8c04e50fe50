#include "util/util.h"

#include <fcntl.h>
#include <unistd.h>

#include "tests/unit/pack/pkgfix.h"

static void read_file(const char *path, struct kiln_buf *b)
{
	struct kiln_err err = KILN_ERR_INIT;

	assert_ok(util_read_file(path, KILN_MIB, b, &err), &err);
}

/* Where everything is: the lead, the signature header padded to 8, the main header, the
 * payload; memory and file readers agree. */
KILN_TEST(package_layout_v4_and_v6)
{
	struct kiln_buf file = KILN_BUF_INIT(KILN_MIB);
	struct kiln_err err = KILN_ERR_INIT;
	struct pack_package p, m;
	char path[1024];
	int fmt, fd = -1;

	for (fmt = 4; fmt <= 6; fmt += 2) {
		pkgfix_write(fmt == 4 ? "lay4" : "lay6", fmt, "w3.zstdio", path, sizeof(path));
		kiln_buf_reset(&file);
		read_file(path, &file);
		assert_ok(pack_package_open(&p, path, &fd, &err), &err);
		assert_int_equal(p.format, fmt);
		assert_int_equal(p.lead.major, fmt == 6 ? 4 : 3);
		assert_int_equal(p.lead.sigtype, 5);
		assert_false(p.source);
		assert_int_equal(p.sig_off, 96);
		assert_int_equal((p.sig_off + p.sig_size + p.sig_pad) % 8, 0);
		assert_true(p.sig_pad < 8);
		assert_int_equal(p.hdr_off, p.sig_off + p.sig_size + p.sig_pad);
		assert_int_equal(p.payload_off, p.hdr_off + p.hdr_raw.len);
		assert_memory_equal(p.hdr_raw.ptr, file.ptr + p.hdr_off, p.hdr_raw.len);
		assert_int_equal(p.file_size, file.len);
		/* The fd is left at the payload. */
		assert_int_equal(lseek(fd, 0, SEEK_CUR), (off_t)p.payload_off);
		assert_ok(pack_package_from_mem(&m, file.ptr, file.len, &err), &err);
		assert_int_equal(m.payload_off, p.payload_off);
		assert_int_equal(m.hdr.n, p.hdr.n);
		assert_int_equal(m.sig.n, p.sig.n);
		pack_package_release(&m);
		pack_package_release(&p);
		close(fd);
	}
	kiln_buf_release(&file);
}

/* Cut or damage a package and expect the structure and offset in the message. */
static void expect_bad(const struct kiln_buf *good, size_t cut, size_t flip, const char *msg)
{
	struct kiln_buf b = KILN_BUF_INIT(KILN_MIB);
	struct kiln_err err = KILN_ERR_INIT;
	struct pack_package p;

	kiln_buf_add(&b, good->ptr, cut);
	if (flip < cut)
		b.ptr[flip] ^= 0x5a;
	assert_int_equal(pack_package_from_mem(&p, b.ptr, b.len, &err), KILN_EFORMAT);
	if (!strstr(err.msg, msg))
		fail_msg("cut %zu flip %zu: message '%s' lacks '%s'", cut, flip, err.msg, msg);
	pack_package_release(&p);
	kiln_buf_release(&b);
}

KILN_TEST(package_refuses_damage_with_offsets)
{
	struct kiln_buf file = KILN_BUF_INIT(KILN_MIB);
	struct kiln_err err = KILN_ERR_INIT;
	struct pack_package p;
	char path[1024], msg[128];
	size_t hdr;

	pkgfix_write("bad4", 4, "w.ufdio", path, sizeof(path));
	read_file(path, &file);
	assert_ok(pack_package_from_mem(&p, file.ptr, file.len, &err), &err);
	hdr = p.hdr_off;
	pack_package_release(&p);
	expect_bad(&file, 0, SIZE_MAX, "lead: truncated at offset 0 (0 of 96 bytes)");
	expect_bad(&file, 95, SIZE_MAX, "lead: truncated at offset 0 (95 of 96 bytes)");
	expect_bad(&file, file.len, 1, "lead: bad magic at offset 0");
	expect_bad(&file, file.len, 79, "lead: signature type");
	expect_bad(&file, 100, SIZE_MAX, "signature header: truncated at offset 96");
	expect_bad(&file, file.len, 97, "signature header: bad magic at offset 96");
	expect_bad(&file, hdr - 3, SIZE_MAX, "signature header padding: truncated");
	snprintf(msg, sizeof(msg), "header: bad magic at offset %zu", hdr);
	expect_bad(&file, file.len, hdr + 2, msg);
	/* The rest of the header is read after its 16-byte intro. */
	snprintf(msg, sizeof(msg), "header: truncated at offset %zu (24 of", hdr + 16);
	expect_bad(&file, hdr + 40, SIZE_MAX, msg);
	kiln_buf_release(&file);
}

KILN_TEST(package_open_errors)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct pack_package p;
	char path[1024];
	int fd = 42;

	snprintf(path, sizeof(path), "%s/missing.rpm", kiln_test_tmpdir());
	assert_int_equal(pack_package_open(&p, path, &fd, &err), KILN_EIO);
	assert_int_equal(fd, -1);
	assert_non_null(strstr(err.msg, "missing.rpm"));
	pack_package_release(&p);
	kiln_err_clear(&err);
	snprintf(path, sizeof(path), "%s/short.rpm", kiln_test_tmpdir());
	assert_ok(util_write_atomic(path, "\xed\xab\xee\xdb", 4, 0644, &err), &err);
	assert_int_equal(pack_package_open(&p, path, NULL, &err), KILN_EFORMAT);
	assert_non_null(strstr(err.msg, "short.rpm: lead: truncated at offset 0 (4 of 96 bytes)"));
	pack_package_release(&p);
}
