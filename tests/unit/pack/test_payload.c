#include "util/util.h"

#include <fcntl.h>
#include <unistd.h>

#include "tests/unit/pack/pkgfix.h"

static void walk_mode(const char *path, bool readahead, size_t stop_after, size_t *entries,
                      uint64_t *bytes, kiln_rc *end)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct pack_payload *pl = NULL;
	struct pack_file_info fi;
	struct pack_package p;
	char buf[3];
	size_t got = 0;
	int fd = -1;

	*entries = 0;
	*bytes = 0;
	assert_ok(pack_package_open(&p, path, &fd, &err), &err);
	assert_ok(pack_payload_open(&p, fd, &pl, &err), &err);
	if (readahead)
		assert_ok(pack_payload_readahead(pl, &err), &err);
	while (!(*end = pack_payload_next(pl, &fi, &err))) {
		if (stop_after && *entries == stop_after)
			break; /* freed while the read-ahead thread may still run */
		(*entries)++;
		do {
			assert_ok(pack_payload_read(pl, buf, sizeof(buf), &got, &err), &err);
			*bytes += got;
		} while (got);
	}
	pack_payload_free(pl);
	pack_package_release(&p);
	close(fd);
}

/* Every walk twice: decompressing on this thread and on the read-ahead thread. */
static void walk(const char *path, size_t *entries, uint64_t *bytes, kiln_rc *end)
{
	size_t n2;
	uint64_t b2;
	kiln_rc e2;

	walk_mode(path, false, 0, entries, bytes, end);
	walk_mode(path, true, 0, &n2, &b2, &e2);
	assert_int_equal(n2, *entries);
	assert_int_equal(b2, *bytes);
	assert_int_equal(e2, *end);
	walk_mode(path, true, 1, &n2, &b2, &e2);
	assert_int_equal(n2, 1);
}

KILN_TEST(payload_walks_v4_and_v6)
{
	static const char *const modes[] = {"w.ufdio", "w9.gzdio", "w2.xzdio", "w3.zstdio"};
	char path[1024];
	size_t n, i;
	uint64_t bytes;
	kiln_rc end;

	for (i = 0; i < KILN_ARRAY_SIZE(modes); i++) {
		pkgfix_write(i % 2 ? "pl4" : "pl6", i % 2 ? 4 : 6, modes[i], path, sizeof(path));
		walk(path, &n, &bytes, &end);
		assert_int_equal(end, KILN_ENOTFOUND);
		assert_int_equal(n, 5); /* the ghost is not in the payload */
		assert_int_equal(bytes, 6 + 5 + 7);
	}
}

KILN_TEST(payload_detects_corruption)
{
	struct kiln_buf b = KILN_BUF_INIT(KILN_MIB);
	struct kiln_err err = KILN_ERR_INIT;
	char path[1024];
	size_t n;
	uint64_t bytes;
	kiln_rc end;

	pkgfix_write("corrupt", 4, "w.ufdio", path, sizeof(path));
	assert_ok(util_read_file(path, KILN_MIB, &b, &err), &err);
	/* Flip a byte of a file's data: the cpio structure stays valid, the digests do not. */
	{
		char *hit = memmem(b.ptr, b.len, "linked\n", 7);

		assert_non_null(hit);
		hit[0] ^= 1;
	}
	assert_ok(util_write_atomic(path, b.ptr, b.len, 0644, &err), &err);
	walk(path, &n, &bytes, &end);
	assert_int_equal(end, KILN_EDIGEST);
	kiln_buf_release(&b);
}
