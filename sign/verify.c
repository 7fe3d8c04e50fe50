/*
 * verify.c - verifying detached data signatures against a keyring.
 *
 * Why verification is safe: the issuer key ID / fingerprint only selects candidate keys
 * (it is not signed in the unhashed area, so it is never trusted); a signature is good only
 * when one candidate key that may sign at the signature's hashed creation time verifies
 * the OpenPGP digest over data ‖ hashed part ‖ trailer. Everything an attacker controls
 * (type, algorithms, subpackets, MPIs) is parsed with bounds checks first, and unknown
 * critical subpackets, weak digests and non-binary signature types are refused.
 */
#include "util/util.h"

#include "sign/sign_int.h"

/* rpm-sequoia's tolerance for clock skew between signer and verifier. */
#define FUTURE_SLACK 300

const char *sign_status_name(enum sign_status st)
{
	switch (st) {
	case SIGN_STATUS_OK:
		return "OK";
	case SIGN_STATUS_NOKEY:
		return "NOKEY";
	case SIGN_STATUS_BAD:
		break;
	}
	return "BAD";
}

static kiln_rc bad(struct sign_result *res, struct kiln_err *err, kiln_rc rc, const char *why)
{
	res->status = rc == KILN_ENOTFOUND ? SIGN_STATUS_NOKEY : SIGN_STATUS_BAD;
	sign_strlcpy(res->reason, why, sizeof(res->reason));
	if (rc == KILN_ENOMEM)
		return kiln_err_set(err, rc, "out of memory");
	return kiln_err_set(err, rc, "%s", why);
}

/* The one Signature packet of sig (binary, or armored "PGP SIGNATURE"). */
static kiln_rc sig_packet(const void *sig, size_t siglen, struct kiln_buf *bin,
                          struct sign_pkt *pkt, struct kiln_err *err)
{
	struct sign_pkt_reader r;
	struct sign_pkt extra;
	enum sign_armor_type type;
	size_t used;
	kiln_rc rc;

	if (sign_armor_detect(sig, siglen)) {
		rc = sign_armor_decode(sig, siglen, &type, &used, bin, err);
		if (!rc && type != SIGN_ARMOR_SIGNATURE)
			rc = kiln_err_set(err, KILN_EFORMAT, "armor block is not a signature");
		if (rc)
			return rc;
		sig = bin->ptr;
		siglen = bin->len;
	}
	sign_pkt_reader_init(&r, sig, siglen);
	rc = sign_pkt_next(&r, pkt, err);
	if (rc == KILN_ENOTFOUND)
		return kiln_err_set(err, KILN_EFORMAT, "empty signature");
	if (!rc && pkt->tag != SIGN_TAG_SIGNATURE)
		return kiln_err_set(err, KILN_EFORMAT, "not a signature packet (type %u)",
		                    pkt->tag);
	if (!rc && sign_pkt_next(&r, &extra, NULL) != KILN_ENOTFOUND)
		return kiln_err_set(err, KILN_EFORMAT, "data after the signature packet");
	return rc;
}

/* Checks that need only the signature itself. */
static const char *sig_policy(const struct sign_sig *sig)
{
	int64_t now = util_clock_wall();

	if (sig->type != SIGN_SIG_BINARY)
		return "not a binary document signature";
	if (!sig->has_created)
		return "signature has no creation time";
	if (sig->critical_unknown)
		return "signature has an unknown critical subpacket";
	if (!sign_hash_strong(sig->hash_algo))
		return "signature uses a weak digest (MD5 or SHA-1)";
	if ((int64_t)sig->created > now + FUTURE_SLACK)
		return "signature was made in the future";
	if (sig->expires && now >= (int64_t)sig->created + sig->expires)
		return "signature has expired";
	if (!sig->has_issuer && !sig->issuer_fpr_len)
		return "signature names no issuer";
	return NULL;
}

static bool fpr_is(const struct sign_pubkey *k, const struct sign_sig *sig)
{
	return k->fpr_len == sig->issuer_fpr_len && !memcmp(k->fpr, sig->issuer_fpr, k->fpr_len);
}

/* The (sub)key of key that the signature names as its issuer, or NULL. */
static const struct sign_pubkey *issuer_in(const struct sign_key *key, const struct sign_sig *sig)
{
	size_t i;

	if (!sig->issuer_fpr_len)
		return sign_key_find(key, sig->issuer);
	if (fpr_is(&key->primary, sig))
		return &key->primary;
	for (i = 0; i < key->nsubkeys; i++) {
		if (fpr_is(&key->subkeys[i], sig))
			return &key->subkeys[i];
	}
	return NULL;
}

/* Try one candidate key: KILN_OK when it verifies, KILN_ESIG (why filled) when not,
 * KILN_ENOMEM / KILN_EIO when the data could not be hashed. */
static kiln_rc try_key(const struct sign_key *key, const struct sign_pubkey *k,
                       const struct sign_sig *sig, const struct sign_feed *feed, char *why,
                       size_t why_size, struct kiln_err *err)
{
	struct util_digest d = {0};
	struct kiln_err e = KILN_ERR_INIT;
	enum util_digest_algo algo;
	char reason[96];
	kiln_rc rc;

	if (!sign_pubkey_can_sign_at(k, &key->primary, sig->created, reason, sizeof(reason))) {
		snprintf(why, why_size, "key %s: %s", key->uid, reason);
		return KILN_ESIG;
	}
	rc = sign_hash_to_util(sig->hash_algo, &algo, &e);
	if (!rc)
		rc = util_digest_init(&d, algo, &e);
	if (!rc)
		rc = feed->fn(feed->ctx, &d, &e);
	if (rc == KILN_ENOMEM || rc == KILN_EIO) {
		util_digest_release(&d);
		kiln_err_merge(err, &e);
		return rc;
	}
	if (!rc)
		rc = sign_sig_check(sig, k, &d, &e);
	util_digest_release(&d);
	if (rc)
		sign_strlcpy(why, e.msg, why_size);
	return rc ? KILN_ESIG : KILN_OK;
}

static void fill_result(struct sign_result *res, const struct sign_sig *sig)
{
	res->version = sig->version;
	res->pk_algo = sig->pk_algo;
	res->hash_algo = sig->hash_algo;
	res->created = sig->created;
	if (sig->has_issuer) {
		res->has_keyid = true;
		memcpy(res->keyid, sig->issuer, 8);
	} else if (sig->issuer_fpr_len >= 20) {
		/* v4 key IDs are the low 64 bits of the fingerprint. */
		res->has_keyid = true;
		memcpy(res->keyid, sig->issuer_fpr + sig->issuer_fpr_len - 8, 8);
	}
}

kiln_rc sign_verify_feed(const struct sign_keyring *kr, const void *sig, size_t siglen,
                         const struct sign_feed *feed, struct sign_result *res,
                         struct kiln_err *err)
{
	struct kiln_buf bin = KILN_BUF_INIT(KILN_LIMIT_PGP_PACKET + 16);
	struct kiln_err e = KILN_ERR_INIT;
	struct sign_pkt pkt;
	struct sign_sig s;
	const char *policy;
	char why[160] = "";
	bool candidate = false;
	size_t i;
	kiln_rc rc;

	memset(res, 0, sizeof(*res));
	res->status = SIGN_STATUS_BAD;
	rc = sig_packet(sig, siglen, &bin, &pkt, &e);
	if (!rc)
		rc = sign_sig_parse(pkt.body, pkt.len, &s, &e);
	if (rc) {
		rc = bad(res, err, rc == KILN_ENOMEM ? rc : KILN_ESIG, e.msg);
		goto out;
	}
	fill_result(res, &s);
	policy = sig_policy(&s);
	if (policy) {
		rc = bad(res, err, KILN_ESIG, policy);
		goto out;
	}
	for (i = 0; i < sign_keyring_count(kr); i++) {
		const struct sign_key *key = sign_keyring_get(kr, i);
		const struct sign_pubkey *k = issuer_in(key, &s);

		if (!k)
			continue;
		candidate = true;
		rc = try_key(key, k, &s, feed, why, sizeof(why), err);
		if (rc == KILN_ENOMEM || rc == KILN_EIO) {
			sign_strlcpy(res->reason, err ? err->msg : "cannot read the data",
			             sizeof(res->reason));
			goto out;
		}
		if (!rc) {
			res->status = SIGN_STATUS_OK;
			res->signer = key;
			goto out;
		}
	}
	rc = candidate ? bad(res, err, KILN_ESIG, why)
	               : bad(res, err, KILN_ENOTFOUND, "no key in the keyring matches the issuer");
out:
	kiln_buf_release(&bin);
	return rc;
}

struct mem {
	const void *data;
	size_t len;
};

static kiln_rc feed_mem(void *ctx, struct util_digest *d, struct kiln_err *err)
{
	const struct mem *m = ctx;

	(void)err;
	util_digest_update(d, m->data, m->len);
	return KILN_OK;
}

kiln_rc sign_verify(const struct sign_keyring *kr, const void *sig, size_t siglen, const void *data,
                    size_t len, struct sign_result *res, struct kiln_err *err)
{
	struct mem m = {data, len};
	struct sign_feed feed = {feed_mem, &m};

	return sign_verify_feed(kr, sig, siglen, &feed, res, err);
}

const char *sign_result_describe(const struct sign_result *res, char *dst, size_t size)
{
	char id[9];

	if (!res->version) {
		snprintf(dst, size, "OpenPGP signature");
		return dst;
	}
	util_hex_encode(res->keyid + 4, 4, id);
	snprintf(dst, size, "V%u %s/%s Signature%s%s", res->version,
	         sign_pk_algo_name(res->pk_algo), sign_hash_algo_name(res->hash_algo),
	         res->has_keyid ? ", key ID " : "", res->has_keyid ? id : "");
	return dst;
}
