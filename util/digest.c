/*
 * digest.c - message digests through OpenSSL's EVP API (the only OpenSSL use in util/).
 */
#include "util/util.h"

#include <fcntl.h>
#include <strings.h>
#include <unistd.h>

#include <openssl/evp.h>
#include "util/libcrypto_int.h"

/* Filled on first use (see util/libcrypto_int.h). */
static struct util_libcrypto_fns util_libcrypto;
static struct util_dl util_libcrypto_dl =
    UTIL_DL_INIT(UTIL_LIBCRYPTO_SONAME, util_libcrypto_syms, util_libcrypto);

struct digest_info {
	const char *name;  /* kiln's name, lowercase */
	const char *alias; /* accepted too */
	size_t size;
};

static const struct digest_info digests[] = {
    [UTIL_DIGEST_MD5] = {"md5", "md5", 16},
    [UTIL_DIGEST_SHA1] = {"sha1", "sha-1", 20},
    [UTIL_DIGEST_SHA224] = {"sha224", "sha-224", 28},
    [UTIL_DIGEST_SHA256] = {"sha256", "sha-256", 32},
    [UTIL_DIGEST_SHA384] = {"sha384", "sha-384", 48},
    [UTIL_DIGEST_SHA512] = {"sha512", "sha-512", 64},
    [UTIL_DIGEST_SHA3_256] = {"sha3-256", "sha3_256", 32},
    [UTIL_DIGEST_SHA3_512] = {"sha3-512", "sha3_512", 64},
};

static const EVP_MD *digest_md(enum util_digest_algo algo)
{
	switch (algo) {
	case UTIL_DIGEST_MD5:
		return EVP_md5();
	case UTIL_DIGEST_SHA1:
		return EVP_sha1();
	case UTIL_DIGEST_SHA224:
		return EVP_sha224();
	case UTIL_DIGEST_SHA256:
		return EVP_sha256();
	case UTIL_DIGEST_SHA384:
		return EVP_sha384();
	case UTIL_DIGEST_SHA512:
		return EVP_sha512();
	case UTIL_DIGEST_SHA3_256:
		return EVP_sha3_256();
	case UTIL_DIGEST_SHA3_512:
		return EVP_sha3_512();
	}
	return NULL;
}

size_t util_digest_size(enum util_digest_algo algo)
{
	return (size_t)algo < KILN_ARRAY_SIZE(digests) ? digests[algo].size : 0;
}

const char *util_digest_name(enum util_digest_algo algo)
{
	return (size_t)algo < KILN_ARRAY_SIZE(digests) ? digests[algo].name : "unknown";
}

kiln_rc util_digest_by_name(const char *name, enum util_digest_algo *out, struct kiln_err *err)
{
	size_t i;

	for (i = 0; i < KILN_ARRAY_SIZE(digests); i++) {
		if (!strcasecmp(name, digests[i].name) || !strcasecmp(name, digests[i].alias)) {
			*out = (enum util_digest_algo)i;
			return KILN_OK;
		}
	}
	return kiln_err_set(err, KILN_ENOTFOUND, "unknown digest algorithm '%s'", name);
}

kiln_rc util_digest_init(struct util_digest *d, enum util_digest_algo algo, struct kiln_err *err)
{
	const EVP_MD *md;
	EVP_MD_CTX *ctx;

	d->ctx = NULL;
	d->algo = algo;
	if (util_dl_ready(&util_libcrypto_dl, err))
		return KILN_ENOTFOUND;
	md = digest_md(algo);
	if (!md)
		return kiln_err_set(err, KILN_EUNSUPP, "digest algorithm %d not available",
		                    (int)algo);
	ctx = EVP_MD_CTX_new();
	if (!ctx)
		return kiln_err_set(err, KILN_ENOMEM, "out of memory");
	if (EVP_DigestInit_ex(ctx, md, NULL) != 1) {
		EVP_MD_CTX_free(ctx);
		return kiln_err_set(err, KILN_EUNSUPP, "cannot initialise %s",
		                    util_digest_name(algo));
	}
	d->ctx = ctx;
	return KILN_OK;
}

void util_digest_update(struct util_digest *d, const void *data, size_t len)
{
	if (d->ctx && len)
		EVP_DigestUpdate(d->ctx, data, len);
}

kiln_rc util_digest_final(struct util_digest *d, unsigned char *out, struct kiln_err *err)
{
	unsigned int n = 0;

	if (!d->ctx || EVP_DigestFinal_ex(d->ctx, out, &n) != 1 ||
	    EVP_DigestInit_ex(d->ctx, digest_md(d->algo), NULL) != 1)
		return kiln_err_set(err, KILN_EIO, "%s digest failed", util_digest_name(d->algo));
	return KILN_OK;
}

void util_digest_release(struct util_digest *d)
{
	if (!d || !d->ctx) /* (no context: libcrypto may never have been opened) */
		return;
	EVP_MD_CTX_free(d->ctx);
	d->ctx = NULL;
}

kiln_rc util_digest_mem(enum util_digest_algo algo, const void *data, size_t len,
                        unsigned char *out, struct kiln_err *err)
{
	const EVP_MD *md;
	unsigned int n = 0;

	if (util_dl_ready(&util_libcrypto_dl, err))
		return KILN_ENOTFOUND;
	md = digest_md(algo);
	if (!md || EVP_Digest(data, len, out, &n, md, NULL) != 1)
		return kiln_err_set(err, KILN_EIO, "%s digest failed", util_digest_name(algo));
	return KILN_OK;
}

kiln_rc util_digest_mem_hex(enum util_digest_algo algo, const void *data, size_t len, char *hex,
                            struct kiln_err *err)
{
	unsigned char raw[UTIL_DIGEST_MAX];
	kiln_rc rc;

	rc = util_digest_mem(algo, data, len, raw, err);
	if (!rc)
		util_hex_encode(raw, util_digest_size(algo), hex);
	return rc;
}

kiln_rc util_digest_file_hex(enum util_digest_algo algo, const char *path, char *hex,
                             struct kiln_err *err)
{
	unsigned char raw[UTIL_DIGEST_MAX];
	struct util_digest d = {0};
	unsigned char *chunk = NULL;
	kiln_rc rc;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return kiln_err_sys(err, KILN_EIO, "cannot open '%s'", path);
	chunk = kiln_malloc(256 * KILN_KIB);
	if (!chunk) {
		rc = kiln_err_set(err, KILN_ENOMEM, "out of memory");
		goto out;
	}
	rc = util_digest_init(&d, algo, err);
	if (rc)
		goto out;
	for (;;) {
		size_t got = 0;

		rc = util_read_full(fd, chunk, 256 * KILN_KIB, &got, err);
		if (rc)
			goto out;
		if (!got)
			break;
		util_digest_update(&d, chunk, got);
	}
	rc = util_digest_final(&d, raw, err);
	if (!rc)
		util_hex_encode(raw, util_digest_size(algo), hex);
out:
	if (rc)
		kiln_err_wrap(err, "digest of '%s'", path);
	util_digest_release(&d);
	free(chunk);
	util_close(fd);
	return rc;
}

/* RFC 2104 over the streaming digest rather than OpenSSL's HMAC API, so libcrypto needs no
 * further symbols. */
kiln_rc util_hmac_sha256(const void *key, size_t keylen, const void *data, size_t len,
                         unsigned char out[32], struct kiln_err *err)
{
	unsigned char k[64] = {0}, pad[64], inner[UTIL_DIGEST_MAX];
	struct util_digest d;
	size_t i;
	kiln_rc rc;

	if (keylen > sizeof(k)) {
		rc = util_digest_mem(UTIL_DIGEST_SHA256, key, keylen, k, err);
		if (rc)
			return rc;
	} else if (keylen) {
		memcpy(k, key, keylen);
	}
	rc = util_digest_init(&d, UTIL_DIGEST_SHA256, err);
	if (rc)
		return rc;
	for (i = 0; i < sizeof(pad); i++)
		pad[i] = k[i] ^ 0x36;
	util_digest_update(&d, pad, sizeof(pad));
	util_digest_update(&d, data, len);
	rc = util_digest_final(&d, inner, err);
	for (i = 0; !rc && i < sizeof(pad); i++)
		pad[i] = k[i] ^ 0x5c;
	if (!rc) {
		util_digest_update(&d, pad, sizeof(pad));
		util_digest_update(&d, inner, 32);
		rc = util_digest_final(&d, out, err);
	}
	util_digest_release(&d);
	explicit_bzero(k, sizeof(k));
	return rc;
}

bool util_mem_equal_ct(const void *a, const void *b, size_t len)
{
	const volatile unsigned char *x = a, *y = b;
	unsigned char diff = 0;
	size_t i;

	for (i = 0; i < len; i++)
		diff |= x[i] ^ y[i];
	return diff == 0;
}
