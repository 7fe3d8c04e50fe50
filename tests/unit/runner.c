/*
 * runner.c - main() for a unit-test binary: runs every KILN_TEST registered in it.
 */
#include "util/util.h"

#include <fnmatch.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/unit/harness.h"

#define MAX_TESTS 4096

/* Test-only registry, filled by constructors before main() runs. */
static struct CMUnitTest tests[MAX_TESTS];
static size_t ntests;
static char tmpdir_path[256];

void kiln_test_register(const char *name, void (*fn)(void **state))
{
	if (ntests >= MAX_TESTS) {
		fprintf(stderr, "too many tests\n");
		abort();
	}
	tests[ntests].name = name;
	tests[ntests].test_func = fn;
	ntests++;
}

const char *kiln_test_tmpdir(void)
{
	static unsigned counter;
	static char path[320];

	if (!tmpdir_path[0]) {
		const char *base = getenv("TMPDIR");

		snprintf(tmpdir_path, sizeof(tmpdir_path), "%s/kiln-unit-XXXXXX",
		         base && *base ? base : "/tmp");
		if (!mkdtemp(tmpdir_path)) {
			perror("mkdtemp");
			abort();
		}
	}
	if (snprintf(path, sizeof(path), "%s/t%u", tmpdir_path, counter++) < 0 ||
	    mkdir(path, 0700) < 0) {
		perror("mkdir");
		abort();
	}
	return path;
}

static void tmpdir_cleanup(void)
{
	struct kiln_err err = KILN_ERR_INIT;

	if (tmpdir_path[0] && util_rm_rf(tmpdir_path, &err))
		fprintf(stderr, "cannot remove %s\n", tmpdir_path);
}

static int by_name(const void *a, const void *b)
{
	const struct CMUnitTest *x = a;
	const struct CMUnitTest *y = b;

	return strcmp(x->name, y->name);
}

int main(int argc, char **argv)
{
	const char *filter = getenv("KILN_TEST_FILTER");
	const char *group = argc > 0 ? strrchr(argv[0], '/') : NULL;
	size_t n = 0;
	size_t i;
	int rc;

	group = group ? group + 1 : (argc > 0 ? argv[0] : "unit");
	/* Constructors run in link order; sorting gives a stable order for TAP output. */
	qsort(tests, ntests, sizeof(tests[0]), by_name);
	for (i = 0; i < ntests; i++) {
		if (filter && *filter && fnmatch(filter, tests[i].name, 0))
			continue;
		tests[n++] = tests[i];
	}
	rc = _cmocka_run_group_tests(group, tests, n, NULL, NULL);
	tmpdir_cleanup();
	return rc ? 1 : 0;
}
