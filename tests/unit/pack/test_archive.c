#include "util/util.h"

#include <fcntl.h>
#include <unistd.h>

#include "tests/unit/pack/pkgfix.h"

enum conv {
	CONV_CPIO,
	CONV_TAR,
};

/* Convert the payload of the package at path into out (read back from a temp file). */
static void convert(const char *path, enum conv how, struct kiln_buf *out)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct pack_payload *pl = NULL;
	struct pack_package p;
	char tmp[1024];
	int fd = -1, ofd;

	snprintf(tmp, sizeof(tmp), "%s/conv.out", kiln_test_tmpdir());
	ofd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	assert_true(ofd >= 0);
	assert_ok(pack_package_open(&p, path, &fd, &err), &err);
	assert_ok(pack_payload_open(&p, fd, &pl, &err), &err);
	if (how == CONV_CPIO)
		assert_ok(pack_payload_to_cpio(pl, ofd, &err), &err);
	else
		assert_ok(pack_payload_to_tar(pl, ofd, false, &err), &err);
	pack_payload_free(pl);
	pack_package_release(&p);
	close(fd);
	close(ofd);
	assert_ok(util_read_file(tmp, KILN_MIB, out, &err), &err);
}

static uint64_t tar_octal(const char *p, size_t n)
{
	char f[16];

	memcpy(f, p, n);
	f[n] = '\0';
	return strtoull(f, NULL, 8);
}

/* ustar members of a stripped (v6) payload: names and metadata from the header, the last
 * member of a hard-link set carries the data and the earlier ones link to it, no ghost. */
KILN_TEST(archive_tar_from_stripped_payload)
{
	static const struct {
		const char *name;
		char type;
		uint64_t size;
		const char *link;
	} want[] = {
	    {"./usr/bin/", '5', 0, ""},
	    {"./usr/bin/hello", '0', 6, ""},
	    {"./usr/bin/hi", '2', 0, "hello"},
	    {"./usr/lib/b", '0', 7, ""},
	    {"./usr/lib/a", '1', 0, "./usr/lib/b"},
	};
	struct kiln_buf tar = KILN_BUF_INIT(KILN_MIB);
	char path[1024];
	size_t off = 0, i;

	pkgfix_write("tar6", 6, "w3.zstdio", path, sizeof(path));
	convert(path, CONV_TAR, &tar);
	assert_int_equal(tar.len % 512, 0);
	for (i = 0; i < KILN_ARRAY_SIZE(want); i++) {
		const char *h = tar.ptr + off;
		uint64_t size = tar_octal(h + 124, 11);

		assert_true(off + 512 <= tar.len);
		assert_string_equal(h, want[i].name);
		assert_int_equal(h[156], want[i].type);
		assert_int_equal(size, want[i].size);
		assert_string_equal(h + 157, want[i].link);
		assert_memory_equal(h + 257,
		                    "ustar\0"
		                    "00",
		                    8);
		assert_string_equal(h + 265, "root");
		off += 512 + (size + 511) / 512 * 512;
	}
	assert_memory_equal(tar.ptr + off - 1024, "linked\n", 7); /* b data, then a */
	assert_int_equal(tar.len, off + 1024);                    /* two zero blocks end it */
	assert_int_equal(tar_octal(tar.ptr + 100, 7), 0755);
	assert_int_equal(tar_octal(tar.ptr + 136, 11), 1704067200);
	kiln_buf_release(&tar);
}

/* A stripped payload becomes newc with the header's inode numbers, names and sizes. */
KILN_TEST(archive_cpio_from_stripped_payload)
{
	struct kiln_buf a = KILN_BUF_INIT(KILN_MIB), b = KILN_BUF_INIT(KILN_MIB);
	char path[1024];

	pkgfix_write("cpio6", 6, "w.ufdio", path, sizeof(path));
	convert(path, CONV_CPIO, &a);
	assert_memory_equal(a.ptr, "070701", 6);
	assert_non_null(memmem(a.ptr, a.len, "./usr/bin/hello\0", 16));
	assert_null(memmem(a.ptr, a.len, "x.log", 5)); /* the ghost */
	assert_memory_equal(a.ptr + a.len - 124 + 110, "TRAILER!!!\0", 11);
	assert_int_equal(a.len % 4, 0);
	/* v4 with the same files: the writer's newc is what the converter produces. */
	pkgfix_write("cpio6", 4, "w.ufdio", path, sizeof(path));
	convert(path, CONV_CPIO, &b);
	assert_int_equal(a.len, b.len);
	assert_memory_equal(a.ptr, b.ptr, a.len);
	kiln_buf_release(&a);
	kiln_buf_release(&b);
}
