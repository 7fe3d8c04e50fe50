/*
 * harness.h - self-registering cmocka tests (shared/STYLE.md rule 18).
 *
 *     KILN_TEST(buf_grows) { ... assert_int_equal(...); }
 *
 * Each test registers itself from a constructor, so adding a test is one edit. The runner
 * (tests/unit/runner.c) runs every registered test of the binary as one cmocka group named
 * after the module; KILN_TEST_FILTER=glob selects tests, CMOCKA_MESSAGE_OUTPUT=TAP gives TAP.
 */
#ifndef KILN_TESTS_HARNESS_H
#define KILN_TESTS_HARNESS_H

#include "util/util.h"

#include <setjmp.h>
#include <cmocka.h>

void kiln_test_register(const char *name, void (*fn)(void **state));

#define KILN_TEST(name)                                                                            \
	static void name(void **state);                                                            \
	__attribute__((constructor)) static void name##_register(void)                             \
	{                                                                                          \
		kiln_test_register(#name, name);                                                   \
	}                                                                                          \
	static void name(void **state KILN_UNUSED)

/* A fresh temporary directory for a test (removed by the harness at exit). The returned
 * string is owned by the harness. */
const char *kiln_test_tmpdir(void);

/* Assert that rc is KILN_OK, printing err when it is not. */
#define assert_ok(rc, err)                                                                         \
	do {                                                                                       \
		kiln_rc rc_ = (rc);                                                                \
		if (rc_ != KILN_OK) {                                                              \
			char m_[1024];                                                             \
			print_error("%s\n", kiln_err_format((err), m_, sizeof(m_)));               \
		}                                                                                  \
		assert_int_equal(rc_, KILN_OK);                                                    \
	} while (0)

#endif
