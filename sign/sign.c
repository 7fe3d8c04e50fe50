/*
 * sign.c - making detached data signatures, and the header-only RPM signing entry point.
 */
#include "util/util.h"

#include "sign/sign_int.h"

kiln_rc sign_time_pick(const struct sign_key *key, int64_t requested, int64_t *out,
                       struct kiln_err *err)
{
	const struct sign_pubkey *signer = sign_key_signer(key);
	int64_t sde = 0;
	kiln_rc rc;

	if (requested >= 0) {
		*out = requested;
		return KILN_OK;
	}
	rc = util_clock_source_date_epoch(&sde, err);
	if (rc == KILN_ENOTFOUND) {
		*out = util_clock_wall();
		return KILN_OK;
	}
	if (rc)
		return rc;
	/* A signature older than its key is invalid (sq, rpm-sequoia). The key's creation
	 * time is as fixed as SOURCE_DATE_EPOCH, so raising to it keeps signing reproducible. */
	*out = signer && sde < (int64_t)signer->created ? (int64_t)signer->created : sde;
	return KILN_OK;
}

kiln_rc sign_data(const struct sign_key *key, const void *data, size_t len,
                  const struct sign_opts *opts, struct kiln_buf *packet, struct kiln_err *err)
{
	const struct sign_pubkey *signer = sign_key_signer(key);
	struct sign_sig_spec spec = {.type = SIGN_SIG_BINARY};
	struct util_digest d = {0};
	enum util_digest_algo algo;
	char why[96];
	kiln_rc rc;

	if (!signer)
		return kiln_err_set(err, KILN_ESIG, "the key has no secret signing key");
	if (opts->time < 0 || opts->time > UINT32_MAX)
		return kiln_err_set(err, KILN_EINVAL, "signature time %" PRId64 " out of range",
		                    opts->time);
	if (opts->time < signer->created)
		return kiln_err_set(err, KILN_EINVAL,
		                    "signature time %" PRId64
		                    " is before the key's creation time %u",
		                    opts->time, signer->created);
	if (!sign_pubkey_can_sign_at(signer, &key->primary, (uint32_t)opts->time, why, sizeof(why)))
		return kiln_err_set(err, KILN_ESIG, "the key cannot sign: %s", why);
	spec.hash_algo = opts->hash ? (unsigned)opts->hash : SIGN_HASH_SHA256;
	spec.created = (uint32_t)opts->time;
	if (!sign_hash_strong(spec.hash_algo))
		return kiln_err_set(err, KILN_EINVAL, "refusing to sign with a weak digest");
	rc = sign_hash_to_util(spec.hash_algo, &algo, err);
	if (!rc)
		rc = util_digest_init(&d, algo, err);
	if (rc)
		return rc;
	util_digest_update(&d, data, len);
	rc = sign_sig_make(signer, &spec, &d, packet, err);
	util_digest_release(&d);
	return rc;
}

kiln_rc sign_header(const struct sign_key *key, const void *hdr, size_t len,
                    const struct sign_opts *opts, struct kiln_buf *packet, struct kiln_err *err)
{
	static const uint8_t magic[4] = {0x8e, 0xad, 0xe8, 0x01};
	const uint8_t *p = hdr;
	uint32_t il;
	uint32_t dl;

	if (len < 16 || memcmp(p, magic, 4) != 0)
		return kiln_err_set(err, KILN_EFORMAT, "not an RPM header (bad magic)");
	il = sign_get_u32(p + 8);
	dl = sign_get_u32(p + 12);
	if (il > KILN_LIMIT_HEADER_TAGS || dl > KILN_LIMIT_HEADER_DATA ||
	    16 + (uint64_t)il * 16 + dl != len)
		return kiln_err_set(err, KILN_EFORMAT,
		                    "RPM header of %zu bytes does not match its %u entries and %u "
		                    "data bytes",
		                    len, il, dl);
	return sign_data(key, hdr, len, opts, packet, err);
}
