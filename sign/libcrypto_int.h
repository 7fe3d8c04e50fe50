/*
 * libcrypto_int.h - libcrypto for sign/openssl.c, opened on first use rather than linked
 * (util_dl_ready; util/digest.c keeps its own table for the digests).
 *
 * Only sign/openssl.c includes this, after the OpenSSL headers. Only commands that handle
 * keys pay for loading libcrypto; the others (`kiln sandbox`, the helpers a build starts)
 * start without it. Every sign_pkey comes from one of the constructors, which open the
 * library, so the other functions can assume it. A function missing from the list fails
 * to link: add new ones here.
 */
#ifndef KILN_SIGN_LIBCRYPTO_INT_H
#define KILN_SIGN_LIBCRYPTO_INT_H

#ifndef SIGN_LIBCRYPTO_SONAME
#define SIGN_LIBCRYPTO_SONAME "libcrypto.so" /* the Makefile passes the exact SONAME */
#endif

#define SIGN_LIBCRYPTO_FUNCS(X)                                                                    \
	X(BN_CTX_free)                                                                             \
	X(BN_CTX_secure_new)                                                                       \
	X(BN_bin2bn)                                                                               \
	X(BN_bn2bin)                                                                               \
	X(BN_clear_free)                                                                           \
	X(BN_cmp)                                                                                  \
	X(BN_div)                                                                                  \
	X(BN_free)                                                                                 \
	X(BN_mod_inverse)                                                                          \
	X(BN_num_bits)                                                                             \
	X(BN_secure_new)                                                                           \
	X(BN_sub)                                                                                  \
	X(BN_value_one)                                                                            \
	X(CRYPTO_memcmp)                                                                           \
	X(ERR_clear_error)                                                                         \
	X(ERR_get_error)                                                                           \
	X(ERR_reason_error_string)                                                                 \
	X(EVP_DigestSign)                                                                          \
	X(EVP_DigestSignInit_ex)                                                                   \
	X(EVP_DigestVerify)                                                                        \
	X(EVP_DigestVerifyInit_ex)                                                                 \
	X(EVP_MD_CTX_free)                                                                         \
	X(EVP_MD_CTX_new)                                                                          \
	X(EVP_MD_fetch)                                                                            \
	X(EVP_MD_free)                                                                             \
	X(EVP_PKEY_CTX_free)                                                                       \
	X(EVP_PKEY_CTX_new_from_name)                                                              \
	X(EVP_PKEY_CTX_new_from_pkey)                                                              \
	X(EVP_PKEY_CTX_set_rsa_padding)                                                            \
	X(EVP_PKEY_CTX_set_signature_md)                                                           \
	X(EVP_PKEY_Q_keygen)                                                                       \
	X(EVP_PKEY_free)                                                                           \
	X(EVP_PKEY_fromdata)                                                                       \
	X(EVP_PKEY_fromdata_init)                                                                  \
	X(EVP_PKEY_get_base_id)                                                                    \
	X(EVP_PKEY_get_bits)                                                                       \
	X(EVP_PKEY_get_bn_param)                                                                   \
	X(EVP_PKEY_get_raw_private_key)                                                            \
	X(EVP_PKEY_get_raw_public_key)                                                             \
	X(EVP_PKEY_get_size)                                                                       \
	X(EVP_PKEY_new_raw_private_key)                                                            \
	X(EVP_PKEY_new_raw_public_key)                                                             \
	X(EVP_PKEY_sign)                                                                           \
	X(EVP_PKEY_sign_init)                                                                      \
	X(EVP_PKEY_verify)                                                                         \
	X(EVP_PKEY_verify_init)                                                                    \
	X(OSSL_PARAM_BLD_free)                                                                     \
	X(OSSL_PARAM_BLD_new)                                                                      \
	X(OSSL_PARAM_BLD_push_BN)                                                                  \
	X(OSSL_PARAM_BLD_to_param)                                                                 \
	X(OSSL_PARAM_free)

/* The entry points (the file's registry of them). */
struct sign_libcrypto_fns {
#define SIGN_LIBCRYPTO_FIELD(f) __typeof__(f) *fn_##f;
	SIGN_LIBCRYPTO_FUNCS(SIGN_LIBCRYPTO_FIELD)
#undef SIGN_LIBCRYPTO_FIELD
};

#define SIGN_LIBCRYPTO_SYM(f) {#f, offsetof(struct sign_libcrypto_fns, fn_##f)},
static const struct util_dl_sym sign_libcrypto_syms[] = {SIGN_LIBCRYPTO_FUNCS(SIGN_LIBCRYPTO_SYM)};
#undef SIGN_LIBCRYPTO_SYM

#define BN_CTX_free (sign_libcrypto.fn_BN_CTX_free)
#define BN_CTX_secure_new (sign_libcrypto.fn_BN_CTX_secure_new)
#define BN_bin2bn (sign_libcrypto.fn_BN_bin2bn)
#define BN_bn2bin (sign_libcrypto.fn_BN_bn2bin)
#define BN_clear_free (sign_libcrypto.fn_BN_clear_free)
#define BN_cmp (sign_libcrypto.fn_BN_cmp)
#define BN_div (sign_libcrypto.fn_BN_div)
#define BN_free (sign_libcrypto.fn_BN_free)
#define BN_mod_inverse (sign_libcrypto.fn_BN_mod_inverse)
#define BN_num_bits (sign_libcrypto.fn_BN_num_bits)
#define BN_secure_new (sign_libcrypto.fn_BN_secure_new)
#define BN_sub (sign_libcrypto.fn_BN_sub)
#define BN_value_one (sign_libcrypto.fn_BN_value_one)
#define CRYPTO_memcmp (sign_libcrypto.fn_CRYPTO_memcmp)
#define ERR_clear_error (sign_libcrypto.fn_ERR_clear_error)
#define ERR_get_error (sign_libcrypto.fn_ERR_get_error)
#define ERR_reason_error_string (sign_libcrypto.fn_ERR_reason_error_string)
#define EVP_DigestSign (sign_libcrypto.fn_EVP_DigestSign)
#define EVP_DigestSignInit_ex (sign_libcrypto.fn_EVP_DigestSignInit_ex)
#define EVP_DigestVerify (sign_libcrypto.fn_EVP_DigestVerify)
#define EVP_DigestVerifyInit_ex (sign_libcrypto.fn_EVP_DigestVerifyInit_ex)
#define EVP_MD_CTX_free (sign_libcrypto.fn_EVP_MD_CTX_free)
#define EVP_MD_CTX_new (sign_libcrypto.fn_EVP_MD_CTX_new)
#define EVP_MD_fetch (sign_libcrypto.fn_EVP_MD_fetch)
#define EVP_MD_free (sign_libcrypto.fn_EVP_MD_free)
#define EVP_PKEY_CTX_free (sign_libcrypto.fn_EVP_PKEY_CTX_free)
#define EVP_PKEY_CTX_new_from_name (sign_libcrypto.fn_EVP_PKEY_CTX_new_from_name)
#define EVP_PKEY_CTX_new_from_pkey (sign_libcrypto.fn_EVP_PKEY_CTX_new_from_pkey)
#define EVP_PKEY_CTX_set_rsa_padding (sign_libcrypto.fn_EVP_PKEY_CTX_set_rsa_padding)
#define EVP_PKEY_CTX_set_signature_md (sign_libcrypto.fn_EVP_PKEY_CTX_set_signature_md)
#define EVP_PKEY_Q_keygen (sign_libcrypto.fn_EVP_PKEY_Q_keygen)
#define EVP_PKEY_free (sign_libcrypto.fn_EVP_PKEY_free)
#define EVP_PKEY_fromdata (sign_libcrypto.fn_EVP_PKEY_fromdata)
#define EVP_PKEY_fromdata_init (sign_libcrypto.fn_EVP_PKEY_fromdata_init)
#define EVP_PKEY_get_base_id (sign_libcrypto.fn_EVP_PKEY_get_base_id)
#define EVP_PKEY_get_bits (sign_libcrypto.fn_EVP_PKEY_get_bits)
#define EVP_PKEY_get_bn_param (sign_libcrypto.fn_EVP_PKEY_get_bn_param)
#define EVP_PKEY_get_raw_private_key (sign_libcrypto.fn_EVP_PKEY_get_raw_private_key)
#define EVP_PKEY_get_raw_public_key (sign_libcrypto.fn_EVP_PKEY_get_raw_public_key)
#define EVP_PKEY_get_size (sign_libcrypto.fn_EVP_PKEY_get_size)
#define EVP_PKEY_new_raw_private_key (sign_libcrypto.fn_EVP_PKEY_new_raw_private_key)
#define EVP_PKEY_new_raw_public_key (sign_libcrypto.fn_EVP_PKEY_new_raw_public_key)
#define EVP_PKEY_sign (sign_libcrypto.fn_EVP_PKEY_sign)
#define EVP_PKEY_sign_init (sign_libcrypto.fn_EVP_PKEY_sign_init)
#define EVP_PKEY_verify (sign_libcrypto.fn_EVP_PKEY_verify)
#define EVP_PKEY_verify_init (sign_libcrypto.fn_EVP_PKEY_verify_init)
#define OSSL_PARAM_BLD_free (sign_libcrypto.fn_OSSL_PARAM_BLD_free)
#define OSSL_PARAM_BLD_new (sign_libcrypto.fn_OSSL_PARAM_BLD_new)
#define OSSL_PARAM_BLD_push_BN (sign_libcrypto.fn_OSSL_PARAM_BLD_push_BN)
#define OSSL_PARAM_BLD_to_param (sign_libcrypto.fn_OSSL_PARAM_BLD_to_param)
#define OSSL_PARAM_free (sign_libcrypto.fn_OSSL_PARAM_free)

#endif
