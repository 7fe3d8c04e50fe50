/*
 * replay.c - run a fuzz target over files without libFuzzer.
 *
 * make check links each fuzz/fuzz_<target>.c with this main() and the normal compiler, then
 * feeds it every file of fuzz/corpus/<target>/ and fuzz/regressions/<target>/, so crashes
 * found once stay fixed. usage: replay-<target> FILE|DIR...
 */
#include "util/util.h"

#include <dirent.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay_file(const char *path, size_t *count)
{
	struct kiln_buf b = KILN_BUF_INIT(KILN_LIMIT_TEXT_FILE);
	struct kiln_err err = KILN_ERR_INIT;
	char msg[1024];

	if (util_read_file(path, KILN_LIMIT_TEXT_FILE, &b, &err)) {
		fprintf(stderr, "replay: %s\n", kiln_err_format(&err, msg, sizeof(msg)));
		kiln_buf_release(&b);
		return 1;
	}
	LLVMFuzzerTestOneInput((const uint8_t *)b.ptr, b.len);
	kiln_buf_release(&b);
	(*count)++;
	return 0;
}

static int replay_path(const char *path, size_t *count)
{
	struct dirent *de;
	char child[4096];
	int rc = 0;
	DIR *d;

	if (!util_is_dir(path))
		return replay_file(path, count);
	d = opendir(path);
	if (!d)
		return 1;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		if (snprintf(child, sizeof(child), "%s/%s", path, de->d_name) >= (int)sizeof(child))
			continue;
		rc |= replay_path(child, count);
	}
	closedir(d);
	return rc;
}

int main(int argc, char **argv)
{
	size_t count = 0;
	int rc = 0;
	int i;

	for (i = 1; i < argc; i++) {
		if (util_exists(argv[i]))
			rc |= replay_path(argv[i], &count);
	}
	printf("%s: replayed %zu inputs\n", util_path_basename(argv[0]), count);
	return rc;
}
