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

/* Run argv (argv[0] found in PATH) with its stdout into out (NUL-terminated, the rest
 * dropped), stderr passed through; its exit status (128 + signal; -1 when it could not be
 * run). */
int kiln_test_run(const char *const argv[], char *out, size_t size);

/* A fresh database on a PostgreSQL server the harness starts on first use (initdb and
 * pg_ctl as an unprivileged user, tests/pg/pg-harness.sh) and stops at exit: its URL into
 * url. KILN_ENOTFOUND when PostgreSQL is not installed (the reason is on stderr: skip),
 * KILN_EIO when the harness failed (fail). */
kiln_rc kiln_test_pg_database(char *url, size_t size);
/* Restart that server (after kiln_test_pg_database): every connection to it breaks. */
kiln_rc kiln_test_pg_restart(void);

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
