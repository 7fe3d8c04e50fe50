/*
 * runner.c - main() for a unit-test binary: runs every KILN_TEST registered in it.
 */
#include "util/util.h"

#include <fnmatch.h>
#include <sys/stat.h>
#include <sys/wait.h>
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

int kiln_test_run(const char *const argv[], char *out, size_t size)
{
	int fd[2], st = -1;
	size_t n = 0;
	ssize_t r;
	pid_t pid;

	if (pipe(fd) < 0)
		return -1;
	pid = fork();
	if (pid == 0) {
		dup2(fd[1], 1);
		close(fd[0]);
		close(fd[1]);
		execvp(argv[0], (char *const *)argv); /* execvp does not write them */
		_exit(127);
	}
	close(fd[1]);
	while (pid > 0 && (r = read(fd[0], out + n, size - 1 - n)) > 0)
		n += (size_t)r;
	out[n] = '\0';
	close(fd[0]);
	if (pid < 0 || waitpid(pid, &st, 0) < 0)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* The PostgreSQL server of tests/pg/pg-harness.sh (run from the source tree, as the tests
 * are), started on first use and stopped at exit. */
#define PG_HARNESS "tests/pg/pg-harness.sh"
static char pg_dir[256];
static bool pg_tried;
static kiln_rc pg_state;

static void pg_stop(void)
{
	const char *argv[] = {PG_HARNESS, "stop", pg_dir, NULL};
	char out[256];

	if (kiln_test_run(argv, out, sizeof(out)))
		fprintf(stderr, "cannot stop the PostgreSQL server in %s\n", pg_dir);
}

static kiln_rc pg_start(void)
{
	const char *argv[] = {PG_HARNESS, "start", NULL};
	char out[1024];
	int st = kiln_test_run(argv, out, sizeof(out));
	size_t len = strcspn(out, "\n");

	if (st == 77)
		return KILN_ENOTFOUND; /* the harness said why on stderr */
	if (st != 0 || !len || len >= sizeof(pg_dir)) {
		fprintf(stderr, "the PostgreSQL harness failed (status %d)\n", st);
		return KILN_EIO;
	}
	memcpy(pg_dir, out, len);
	pg_dir[len] = '\0';
	atexit(pg_stop);
	return KILN_OK;
}

kiln_rc kiln_test_pg_database(char *url, size_t size)
{
	static unsigned counter;
	char name[32], out[256];
	const char *argv[] = {PG_HARNESS, "createdb", pg_dir, name, NULL};

	if (!pg_tried)
		pg_state = pg_start(), pg_tried = true;
	if (pg_state)
		return pg_state;
	snprintf(name, sizeof(name), "t%u", counter++);
	if (kiln_test_run(argv, out, sizeof(out))) {
		fprintf(stderr, "cannot create database %s in %s\n", name, pg_dir);
		return KILN_EIO;
	}
	snprintf(url, size, "postgresql://kiln@/%s?host=%s", name, pg_dir);
	return KILN_OK;
}

kiln_rc kiln_test_pg_restart(void)
{
	const char *argv[] = {PG_HARNESS, "restart", pg_dir, NULL};
	char out[256];

	if (!pg_tried || pg_state)
		return KILN_EIO;
	return kiln_test_run(argv, out, sizeof(out)) ? KILN_EIO : KILN_OK;
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
