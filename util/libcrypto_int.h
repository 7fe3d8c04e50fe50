/*
 * libcrypto_int.h - libcrypto for util/digest.c, opened on first use rather than linked
 * (util_dl_ready).
 *
 * Only util/digest.c includes this, after <openssl/evp.h>. Linking libcrypto costs every kiln
 * command about 1.5 ms at start (its 21,000 relocations, bound immediately), though only
 * the commands that hash or sign use it: `kiln sandbox`, `kiln --version` and the helper
 * processes of a build never do. Calls go through a table filled on first use (sign/ has its
 * own for its calls); a function missing from the list fails to link. Add new ones here.
 */
#ifndef KILN_UTIL_LIBCRYPTO_INT_H
#define KILN_UTIL_LIBCRYPTO_INT_H

#ifndef UTIL_LIBCRYPTO_SONAME
#define UTIL_LIBCRYPTO_SONAME "libcrypto.so" /* the Makefile passes the exact SONAME */
#endif

#define UTIL_LIBCRYPTO_FUNCS(X)                                                                    \
	X(EVP_Digest)                                                                              \
	X(EVP_DigestFinal_ex)                                                                      \
	X(EVP_DigestInit_ex)                                                                       \
	X(EVP_DigestUpdate)                                                                        \
	X(EVP_MD_CTX_free)                                                                         \
	X(EVP_MD_CTX_new)                                                                          \
	X(EVP_md5)                                                                                 \
	X(EVP_sha1)                                                                                \
	X(EVP_sha224)                                                                              \
	X(EVP_sha256)                                                                              \
	X(EVP_sha384)                                                                              \
	X(EVP_sha3_256)                                                                            \
	X(EVP_sha3_512)                                                                            \
	X(EVP_sha512)

/* The entry points (the file's registry of them). */
struct util_libcrypto_fns {
#define UTIL_LIBCRYPTO_FIELD(f) __typeof__(f) *fn_##f;
	UTIL_LIBCRYPTO_FUNCS(UTIL_LIBCRYPTO_FIELD)
#undef UTIL_LIBCRYPTO_FIELD
};

#define UTIL_LIBCRYPTO_SYM(f) {#f, offsetof(struct util_libcrypto_fns, fn_##f)},
static const struct util_dl_sym util_libcrypto_syms[] = {UTIL_LIBCRYPTO_FUNCS(UTIL_LIBCRYPTO_SYM)};
#undef UTIL_LIBCRYPTO_SYM

#define EVP_Digest (util_libcrypto.fn_EVP_Digest)
#define EVP_DigestFinal_ex (util_libcrypto.fn_EVP_DigestFinal_ex)
#define EVP_DigestInit_ex (util_libcrypto.fn_EVP_DigestInit_ex)
#define EVP_DigestUpdate (util_libcrypto.fn_EVP_DigestUpdate)
#define EVP_MD_CTX_free (util_libcrypto.fn_EVP_MD_CTX_free)
#define EVP_MD_CTX_new (util_libcrypto.fn_EVP_MD_CTX_new)
#define EVP_md5 (util_libcrypto.fn_EVP_md5)
#define EVP_sha1 (util_libcrypto.fn_EVP_sha1)
#define EVP_sha224 (util_libcrypto.fn_EVP_sha224)
#define EVP_sha256 (util_libcrypto.fn_EVP_sha256)
#define EVP_sha384 (util_libcrypto.fn_EVP_sha384)
#define EVP_sha3_256 (util_libcrypto.fn_EVP_sha3_256)
#define EVP_sha3_512 (util_libcrypto.fn_EVP_sha3_512)
#define EVP_sha512 (util_libcrypto.fn_EVP_sha512)

#endif
