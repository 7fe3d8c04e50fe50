#include "util/util.h"

#include "tests/unit/sign/sign_test.h"

static void read_one(const void *data, size_t len, kiln_rc want, struct sign_pkt *pkt)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct sign_pkt_reader r;

	sign_pkt_reader_init(&r, data, len);
	assert_int_equal(sign_pkt_next(&r, pkt, &err), want);
}

/* Every length encoding round-trips through writer and reader, in the octets RFC 9580
 * 4.2.1/4.2.2 give. */
KILN_TEST(packet_lengths_round_trip)
{
	static const size_t lens[] = {0, 1, 191, 192, 255, 256, 8383, 8384, 65535, 65536, 100000};
	struct kiln_buf b = KILN_BUF_INIT(KILN_MIB);
	struct sign_pkt pkt;
	static uint8_t body[100000];
	unsigned tags[] = {SIGN_TAG_SIGNATURE, 17, 60};
	size_t i;
	size_t t;

	for (t = 0; t < KILN_ARRAY_SIZE(tags); t++) {
		for (i = 0; i < KILN_ARRAY_SIZE(lens); i++) {
			kiln_buf_reset(&b);
			sign_pkt_write(&b, tags[t], body, lens[i]);
			read_one(b.ptr, b.len, KILN_OK, &pkt);
			assert_int_equal(pkt.tag, tags[t]);
			assert_int_equal(pkt.len, lens[i]);
			assert_int_equal(pkt.raw_len, b.len);
		}
	}
	/* gpg's shapes: old format, shortest length type. */
	kiln_buf_reset(&b);
	sign_pkt_header_write(&b, SIGN_TAG_SIGNATURE, 0x90);
	assert_memory_equal(b.ptr, "\x88\x90", 2);
	kiln_buf_reset(&b);
	sign_pkt_header_write(&b, SIGN_TAG_PUBLIC_KEY, 0x10d);
	assert_memory_equal(b.ptr, "\x99\x01\x0d", 3);
	kiln_buf_reset(&b);
	sign_pkt_header_write(&b, 20, 200);
	assert_memory_equal(b.ptr, "\xd4\xc0\x08", 3);
	kiln_buf_release(&b);
}

KILN_TEST(packet_malformed_headers_fail)
{
	struct sign_pkt pkt;

	read_one("\x40\x01x", 3, KILN_EFORMAT, &pkt);               /* bit 7 clear */
	read_one("\xc2\xe1xx", 4, KILN_EFORMAT, &pkt);              /* partial length */
	read_one("\x8b", 1, KILN_EFORMAT, &pkt);                    /* indeterminate length */
	read_one("\x89\x01", 2, KILN_EFORMAT, &pkt);                /* length cut short */
	read_one("\x88\x05xx", 4, KILN_EFORMAT, &pkt);              /* body past the end */
	read_one("\xc2\xff\x7f\xff\xff\xff", 6, KILN_ELIMIT, &pkt); /* 2 GiB body */
	read_one("", 0, KILN_ENOTFOUND, &pkt);
}

KILN_TEST(packet_count_is_limited)
{
	size_t n = KILN_LIMIT_PGP_PACKETS + 1;
	uint8_t *many = kiln_malloc(2 * n);
	struct kiln_err err = KILN_ERR_INIT;
	struct sign_pkt_reader r;
	struct sign_pkt pkt;
	size_t i;
	kiln_rc rc;

	assert_non_null(many);
	for (i = 0; i < n; i++) {
		many[2 * i] = 0xb4; /* empty user ID */
		many[2 * i + 1] = 0;
	}
	sign_pkt_reader_init(&r, many, 2 * n);
	for (i = 0; (rc = sign_pkt_next(&r, &pkt, &err)) == KILN_OK; i++)
		;
	assert_int_equal(rc, KILN_ELIMIT);
	assert_int_equal(i, KILN_LIMIT_PGP_PACKETS);
	free(many);
}

KILN_TEST(mpi_strips_leading_zeros_and_counts_bits)
{
	struct kiln_buf b = KILN_BUF_INIT(64);
	struct sign_cur c;
	const uint8_t *p;
	size_t n;

	sign_mpi_write(&b, (const uint8_t *)"\x00\x00\x01\xff", 4);
	assert_int_equal(b.len, 4);
	assert_memory_equal(b.ptr, "\x00\x09\x01\xff", 4);
	sign_cur_init(&c, b.ptr, b.len);
	assert_true(sign_cur_mpi(&c, &p, &n));
	assert_int_equal(n, 2);
	assert_memory_equal(p, "\x01\xff", 2);
	/* the EdDSA point MPI gpg writes: 0x40 prefix, 263 bits */
	kiln_buf_reset(&b);
	{
		uint8_t pt[33] = {0x40};

		sign_mpi_write(&b, pt, 33);
		assert_memory_equal(b.ptr, "\x01\x07\x40", 3);
	}
	/* only the normalised encoding is accepted: 8 bits claimed for the value 1, a leading
	 * zero octet, a bit count below the top set bit */
	sign_cur_init(&c, "\x00\x08\x01", 3);
	assert_false(sign_cur_mpi(&c, &p, &n));
	sign_cur_init(&c, "\x00\x10\x00\xff", 4);
	assert_false(sign_cur_mpi(&c, &p, &n));
	sign_cur_init(&c, "\x00\x07\xff", 3);
	assert_false(sign_cur_mpi(&c, &p, &n));
	sign_cur_init(&c, "\x00\x08\xff\x00\x00", 5);
	assert_true(sign_cur_mpi(&c, &p, &n) && n == 1);
	assert_true(sign_cur_mpi(&c, &p, &n) && n == 0);
	/* an MPI claiming more octets than there are */
	sign_cur_init(&c, "\x00\x20\x01", 3);
	assert_false(sign_cur_mpi(&c, &p, &n));
	assert_int_equal(c.off, 0);
	kiln_buf_release(&b);
}

KILN_TEST(subpackets_round_trip_and_flag_critical)
{
	struct kiln_buf b = KILN_BUF_INIT(KILN_MIB);
	struct kiln_err err = KILN_ERR_INIT;
	static uint8_t data[9000];
	static const size_t lens[] = {0, 190, 191, 8382, 8383, 8999};
	struct sign_subpkt sp;
	struct sign_cur c;
	size_t i;

	for (i = 0; i < KILN_ARRAY_SIZE(lens); i++)
		sign_subpkt_write(&b, SIGN_SUB_NOTATION, data, lens[i]);
	sign_subpkt_write(&b, 0x80 | 99, data, 1);
	sign_cur_init(&c, b.ptr, b.len);
	for (i = 0; i < KILN_ARRAY_SIZE(lens); i++) {
		assert_ok(sign_subpkt_next(&c, &sp, &err), &err);
		assert_int_equal(sp.type, SIGN_SUB_NOTATION);
		assert_false(sp.critical);
		assert_int_equal(sp.len, lens[i]);
	}
	assert_ok(sign_subpkt_next(&c, &sp, &err), &err);
	assert_int_equal(sp.type, 99);
	assert_true(sp.critical);
	assert_int_equal(sign_subpkt_next(&c, &sp, &err), KILN_ENOTFOUND);
	/* zero length (no type octet) and a length past the area are malformed */
	sign_cur_init(&c, "\x00", 1);
	assert_int_equal(sign_subpkt_next(&c, &sp, &err), KILN_EFORMAT);
	sign_cur_init(&c, "\x05\x02\x00", 3);
	assert_int_equal(sign_subpkt_next(&c, &sp, NULL), KILN_EFORMAT);
	kiln_buf_release(&b);
}

KILN_TEST(strlcpy_truncates)
{
	char d[4];

	sign_strlcpy(d, "abcdef", sizeof(d));
	assert_string_equal(d, "abc");
	sign_strlcpy(d, "", sizeof(d));
	assert_string_equal(d, "");
}
