/*
 * test_tar.c - the tar layout of source tarballs: ustar fields, checksums, padding to
 * 512-byte blocks and 10240-byte records, prefix splits and pax records for long names.
 */
#include "util/util.h"

#include "tests/unit/sources/sources_test.h"

struct memsink {
	struct sources_tar_sink base;
	struct kiln_buf out;
};

static kiln_rc mem_write(struct sources_tar_sink *s, const void *data, size_t len,
                         struct kiln_err *err)
{
	struct memsink *m = (struct memsink *)s;

	kiln_buf_add(&m->out, data, len);
	return kiln_buf_finish(&m->out, err);
}

static void sink_init(struct memsink *m)
{
	m->base.write = mem_write;
	kiln_buf_init(&m->out, 64 * KILN_MIB);
}

static unsigned long octal(const unsigned char *h, size_t off, size_t len)
{
	char tmp[16];

	memcpy(tmp, h + off, len);
	tmp[len] = '\0';
	return strtoul(tmp, NULL, 8);
}

/* The ustar checksum of a header as a reader computes it. */
static unsigned long checksum(const unsigned char *h)
{
	unsigned long sum = 0;
	size_t i;

	for (i = 0; i < 512; i++)
		sum += (i >= 148 && i < 156) ? ' ' : h[i];
	return sum;
}

#define OID "0123456789012345678901234567890123456789"

KILN_TEST(tar_entries_and_records)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct sources_tar t;
	struct memsink m;
	const unsigned char *h;

	sink_init(&m);
	sources_tar_init(&t, &m.base, 1700000000);
	assert_ok(sources_tar_global(&t, OID, &err), &err);
	assert_ok(sources_tar_entry(&t, "p", 040000, OID, NULL, 0, &err), &err);
	assert_ok(sources_tar_entry(&t, "p/run", 0100755, OID, "#!/bin/sh\n", 10, &err), &err);
	assert_ok(sources_tar_entry(&t, "p/l", 0120000, OID, "run", 3, &err), &err);
	assert_ok(sources_tar_finish(&t, &err), &err);
	/* 5 blocks of content (global header + its data, dir, file + data, link) => 1 record */
	assert_int_equal(m.out.len % 10240, 0);
	assert_int_equal(m.out.len, 10240);
	h = (const unsigned char *)m.out.ptr;
	assert_string_equal((const char *)h, "pax_global_header");
	assert_int_equal(h[156], 'g');
	assert_int_equal(octal(h, 124, 11), 52); /* "52 comment=<40 hex>\n" */
	assert_memory_equal(h + 512, "52 comment=" OID "\n", 52);
	h += 1024;
	assert_string_equal((const char *)h, "p/");
	assert_int_equal(h[156], '5');
	assert_int_equal(octal(h, 100, 7), 0775);
	assert_int_equal(octal(h, 136, 11), 1700000000);
	assert_int_equal(octal(h, 148, 7), checksum(h));
	assert_memory_equal(h + 257,
	                    "ustar\0"
	                    "00",
	                    8);
	assert_string_equal((const char *)h + 265, "root");
	h += 512;
	assert_string_equal((const char *)h, "p/run");
	assert_int_equal(octal(h, 100, 7), 0775);
	assert_int_equal(octal(h, 124, 11), 10);
	assert_memory_equal(h + 512, "#!/bin/sh\n\0", 11);
	h += 1024;
	assert_int_equal(h[156], '2');
	assert_int_equal(octal(h, 100, 7), 0777);
	assert_int_equal(octal(h, 124, 11), 0);
	assert_string_equal((const char *)h + 157, "run");
	kiln_buf_release(&m.out);
}

KILN_TEST(tar_long_names)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct sources_tar t;
	struct memsink m;
	char path[400], target[200];
	const unsigned char *h;
	unsigned long len;

	sink_init(&m);
	sources_tar_init(&t, &m.base, 0);
	/* 50 + '/' + 80: split into prefix and name */
	memset(path, 'a', 50);
	path[50] = '/';
	memset(path + 51, 'b', 80);
	path[131] = '\0';
	assert_ok(sources_tar_entry(&t, path, 0100644, OID, "", 0, &err), &err);
	h = (const unsigned char *)m.out.ptr;
	assert_int_equal(t.off, 512);
	h = t.block;
	assert_int_equal(strnlen((const char *)h + 345, 155), 50);
	assert_int_equal(strnlen((const char *)h, 100), 80);
	/* 120 bytes without a '/': a pax "path" record, the name says <oid>.data */
	memset(path, 'n', 120);
	path[120] = '\0';
	memset(target, 't', 150);
	target[150] = '\0';
	sources_tar_init(&t, &m.base, 0);
	assert_ok(sources_tar_entry(&t, path, 0120000, OID, target, 150, &err), &err);
	h = t.block;
	assert_int_equal(h[156], 'x');
	assert_string_equal((const char *)h, OID ".paxheader");
	len = strtoul((const char *)h + 512, NULL, 10);
	assert_memory_equal(h + 512, "130 path=", 9); /* the length counts its own digits */
	assert_int_equal(h[512 + len - 1], '\n');
	assert_memory_equal(h + 512 + len, "164 linkpath=", 13);
	h += 1024;
	assert_string_equal((const char *)h, OID ".data");
	assert_string_equal((const char *)h + 157, "see " OID ".paxheader");
	kiln_buf_release(&m.out);
}

KILN_TEST(tar_bad_mode)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct sources_tar t;
	struct memsink m;

	sink_init(&m);
	sources_tar_init(&t, &m.base, 0);
	assert_int_equal(sources_tar_entry(&t, "dev", 0020644, OID, NULL, 0, &err), KILN_EFORMAT);
	kiln_buf_release(&m.out);
}

KILN_TEST(tar_trailer_adds_a_record_when_short)
{
	struct kiln_err err = KILN_ERR_INIT;
	char data[9216];
	struct sources_tar t;
	struct memsink m;

	/* header + 9216 bytes = 9728: only 512 bytes left in the record, less than the two
	 * zero blocks, so the archive ends one record later. */
	memset(data, 'z', sizeof(data));
	sink_init(&m);
	sources_tar_init(&t, &m.base, 0);
	assert_ok(sources_tar_entry(&t, "f", 0100644, OID, data, sizeof(data), &err), &err);
	assert_ok(sources_tar_finish(&t, &err), &err);
	assert_int_equal(m.out.len, 20480);
	kiln_buf_release(&m.out);
}
