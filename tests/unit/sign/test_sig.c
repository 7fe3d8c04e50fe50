#include "util/util.h"

#include "tests/unit/sign/sign_test.h"

static struct sign_pkt sig_packet(const char *name, struct kiln_buf *bin)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct sign_pkt_reader r;
	struct sign_pkt pkt;

	vec_load(name, bin);
	sign_pkt_reader_init(&r, bin->ptr, bin->len);
	assert_ok(sign_pkt_next(&r, &pkt, &err), &err);
	return pkt;
}

KILN_TEST(sig_parses_gpgs_fields)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct kiln_buf bin;
	struct sign_pkt pkt = sig_packet("data.rsa.gpg.sig", &bin);
	struct sign_sig sig;
	char fpr[1][41];
	char hex[65];

	assert_ok(sign_sig_parse(pkt.body, pkt.len, &sig, &err), &err);
	assert_int_equal(sig.version, 4);
	assert_int_equal(sig.type, SIGN_SIG_BINARY);
	assert_int_equal(sig.pk_algo, SIGN_PK_RSA);
	assert_int_equal(sig.hash_algo, SIGN_HASH_SHA256);
	assert_true(sig.has_created);
	assert_int_equal(sig.created, 1704067200);
	assert_true(sig.has_issuer);
	vec_fingerprints("rsa", fpr, 1);
	util_hex_encode(sig.issuer, 8, hex);
	assert_string_equal(hex, fpr[0] + 24);
	assert_int_equal(sig.issuer_fpr_len, 20);
	util_hex_encode(sig.issuer_fpr, 20, hex);
	assert_string_equal(hex, fpr[0]);
	assert_int_equal(sig.m1_len, 256);
	assert_false(sig.critical_unknown);
	kiln_buf_release(&bin);
}

KILN_TEST(sig_malformed_packets_fail)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct kiln_buf bin;
	struct sign_pkt pkt = sig_packet("data.ed.gpg.sig", &bin);
	uint8_t *b = (uint8_t *)pkt.body;
	uint8_t *longer = kiln_malloc(pkt.len + 1);
	struct sign_sig sig;
	size_t cut;

	assert_ok(sign_sig_parse(pkt.body, pkt.len, &sig, &err), &err);
	for (cut = 0; cut < pkt.len; cut++)
		assert_int_not_equal(sign_sig_parse(pkt.body, cut, &sig, NULL), KILN_OK);
	/* one stray octet after the MPIs */
	memcpy(longer, pkt.body, pkt.len);
	longer[pkt.len] = 0;
	assert_int_equal(sign_sig_parse(longer, pkt.len + 1, &sig, &err), KILN_EFORMAT);
	b[0] = 3;
	assert_int_equal(sign_sig_parse(pkt.body, pkt.len, &sig, &err), KILN_EUNSUPP);
	b[0] = 6;
	assert_int_equal(sign_sig_parse(pkt.body, pkt.len, &sig, &err), KILN_EUNSUPP);
	b[0] = 4;
	b[2] = 99; /* unknown public-key algorithm */
	assert_int_equal(sign_sig_parse(pkt.body, pkt.len, &sig, &err), KILN_EUNSUPP);
	free(longer);
	kiln_buf_release(&bin);
}

/* A minimal v4 signature body with the given hashed area and an EdDSA material. */
static size_t build(uint8_t *out, const uint8_t *hashed, size_t hl)
{
	size_t n = 0;

	out[n++] = 4;
	out[n++] = 0;
	out[n++] = SIGN_PK_EDDSA;
	out[n++] = SIGN_HASH_SHA256;
	out[n++] = (uint8_t)(hl >> 8);
	out[n++] = (uint8_t)hl;
	memcpy(out + n, hashed, hl);
	n += hl;
	out[n++] = 0;
	out[n++] = 0; /* no unhashed subpackets */
	out[n++] = 0xab;
	out[n++] = 0xcd;
	memcpy(out + n, "\x00\x01\x01\x00\x01\x01", 6); /* r = 1, s = 1 */
	return n + 6;
}

KILN_TEST(sig_subpackets_decoded_and_checked)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct sign_sig sig;
	uint8_t body[128];
	size_t n;

	n = build(body, (const uint8_t *)"\x05\x02\x65\x92\x00\x80\x02\x9b\x01", 9);
	assert_ok(sign_sig_parse(body, n, &sig, &err), &err);
	assert_int_equal(sig.created, 0x65920080);
	assert_true(sig.has_flags);
	assert_int_equal(sig.flags, 1);
	assert_true(sig.critical_unknown == false);
	/* a critical subpacket kiln does not know is flagged */
	n = build(body, (const uint8_t *)"\x05\x02\x65\x92\x00\x80\x02\xe3\x01", 9);
	assert_ok(sign_sig_parse(body, n, &sig, &err), &err);
	assert_true(sig.critical_unknown);
	assert_int_equal(sig.critical_type, 99);
	/* two creation times, and a creation time of the wrong size */
	n = build(body, (const uint8_t *)"\x05\x02\x00\x00\x00\x01\x05\x02\x00\x00\x00\x02", 12);
	assert_int_equal(sign_sig_parse(body, n, &sig, &err), KILN_EFORMAT);
	n = build(body, (const uint8_t *)"\x04\x02\x00\x00\x00", 5);
	assert_int_equal(sign_sig_parse(body, n, &sig, &err), KILN_EFORMAT);
}

KILN_TEST(sig_hash_names)
{
	struct kiln_err err = KILN_ERR_INIT;
	enum sign_hash_algo h;

	assert_ok(sign_hash_algo_parse("sha256", &h, &err), &err);
	assert_int_equal(h, SIGN_HASH_SHA256);
	assert_ok(sign_hash_algo_parse("SHA-512", &h, &err), &err);
	assert_int_equal(h, SIGN_HASH_SHA512);
	assert_int_equal(sign_hash_algo_parse("sha1", &h, &err), KILN_EINVAL);
	assert_int_equal(sign_hash_algo_parse("md5", &h, &err), KILN_EINVAL);
	assert_string_equal(sign_hash_algo_name(SIGN_HASH_SHA512), "SHA512");
	assert_string_equal(sign_pk_algo_name(SIGN_PK_EDDSA), "EdDSA");
	assert_string_equal(sign_pk_algo_name(SIGN_PK_RSA), "RSA");
	assert_string_equal(sign_pk_algo_name(77), "UNKNOWN");
}
