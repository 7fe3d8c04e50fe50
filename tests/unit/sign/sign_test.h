/*
 * sign_test.h - helpers shared by sign/'s unit tests: test vectors from tests/data/sign
 * (made by GnuPG, see make-vectors.sh there) and small builders.
 */
#ifndef KILN_TESTS_SIGN_TEST_H
#define KILN_TESTS_SIGN_TEST_H

#include "util/util.h"

#include "sign/sign_int.h"
#include "tests/unit/harness.h"

/* Read tests/data/sign/<name> into b (which the caller releases). */
static inline void vec_load(const char *name, struct kiln_buf *b)
{
	struct kiln_err err = KILN_ERR_INIT;
	char path[512];

	kiln_buf_init(b, KILN_LIMIT_PGP_FILE);
	snprintf(path, sizeof(path), "tests/data/sign/%s", name);
	assert_ok(util_read_file(path, KILN_LIMIT_PGP_FILE, b, &err), &err);
}

/* Parse the key in tests/data/sign/<name>. */
static inline struct sign_key *vec_key(const char *name)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct sign_key *key = NULL;
	struct kiln_buf b;

	vec_load(name, &b);
	assert_ok(sign_key_from_mem(b.ptr, b.len, &key, &err), &err);
	kiln_buf_release(&b);
	return key;
}

/* A keyring holding the public keys named (NULL-terminated list). */
static inline struct sign_keyring *vec_keyring(const char *first, ...)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct sign_keyring *kr = NULL;
	const char *name;
	va_list ap;

	assert_ok(sign_keyring_new(&kr, &err), &err);
	va_start(ap, first);
	for (name = first; name; name = va_arg(ap, const char *))
		assert_ok(sign_keyring_add_take(kr, vec_key(name), &err), &err);
	va_end(ap);
	return kr;
}

/* The fingerprints gpg reported for key name: [0] primary, then subkeys (lowercase hex).
 * Returns how many. */
static inline size_t vec_fingerprints(const char *name, char fpr[][41], size_t max)
{
	struct kiln_str rest;
	struct kiln_str line;
	struct kiln_str word;
	struct kiln_buf b;
	bool found;
	size_t n = 0;
	size_t i;

	vec_load("fingerprints.txt", &b);
	rest = kiln_str_make(b.ptr, b.len);
	while (rest.len) {
		rest = kiln_str_split(rest, '\n', &line, &found);
		line = kiln_str_split(line, ' ', &word, &found);
		if (!kiln_str_eq_cstr(word, name))
			continue;
		while (line.len && n < max) {
			line = kiln_str_split(line, ' ', &word, &found);
			if (word.len != 40)
				continue;
			for (i = 0; i < 40; i++)
				fpr[n][i] = (char)(word.ptr[i] >= 'A' && word.ptr[i] <= 'F'
				                       ? word.ptr[i] - 'A' + 'a'
				                       : word.ptr[i]);
			fpr[n++][40] = '\0';
		}
	}
	kiln_buf_release(&b);
	return n;
}

#endif
