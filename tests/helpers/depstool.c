/*
 * depstool.c - a test-only helper that runs worker_autodeps_collect() the way rpm's rpmdeps
 * is run, for the integration tests that compare the two (never installed).
 *
 *   depstool [OPTIONS] < FILES
 *     --provides --requires --recommends   which sets to print, in this order (as rpmdeps)
 *     --confdir DIR      kiln's configuration directory (configs/)
 *     --define 'N BODY'  a macro, as rpmdeps --define
 *     --root DIR         the buildroot: stripped from the paths read (RPM_BUILD_ROOT)
 *     --no-autoreq --no-autoprov --name N --evr EVR    worker_autodeps_opts
 *     --flags            print "FLAGS<TAB>" before each dependency
 *
 * FILES is one host path a line, optionally followed by TAB user TAB group TAB fileflags.
 * Each dependency prints as rpm prints it ("name", "name OP version"); warnings go to stderr
 * as "warning: ...". Exit 1 with the error on failure.
 */
#include "util/util.h"

#include <sys/stat.h>
#include <unistd.h>

#include "macro/macro.h"
#include "worker/worker.h"

#define MAX_FILES 100000

struct tool {
	bool show[3], flags;
	const char *confdir, *root;
	const char *defines[64];
	size_t ndefines;
	struct worker_autodeps_opts opts;
	struct pack_file *files;
	size_t n;
	struct kiln_arena arena;
};

static int fail(const struct kiln_err *err)
{
	char msg[1024];

	fprintf(stderr, "depstool: %s\n", kiln_err_format(err, msg, sizeof(msg)));
	return 1;
}

static void diag(void *data, enum kiln_log_level level, const char *msg)
{
	(void)data;
	fprintf(stderr, "%s%s\n", level == KILN_LOG_WARN ? "warning: " : "", msg);
}

static int parse_args(struct tool *t, int argc, char **argv)
{
	int i;

	t->opts.autoreq = t->opts.autoprov = true;
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "--provides"))
			t->show[0] = true;
		else if (!strcmp(a, "--requires"))
			t->show[1] = true;
		else if (!strcmp(a, "--recommends"))
			t->show[2] = true;
		else if (!strcmp(a, "--flags"))
			t->flags = true;
		else if (!strcmp(a, "--no-autoreq"))
			t->opts.autoreq = false;
		else if (!strcmp(a, "--no-autoprov"))
			t->opts.autoprov = false;
		else if (v && !strcmp(a, "--confdir"))
			t->confdir = argv[++i];
		else if (v && !strcmp(a, "--root"))
			t->root = argv[++i];
		else if (v && !strcmp(a, "--name"))
			t->opts.name = argv[++i];
		else if (v && !strcmp(a, "--evr"))
			t->opts.evr = argv[++i];
		else if (v && !strcmp(a, "--define") && t->ndefines < KILN_ARRAY_SIZE(t->defines))
			t->defines[t->ndefines++] = argv[++i];
		else {
			fprintf(stderr, "depstool: bad argument %s\n", a);
			return 1;
		}
	}
	return 0;
}

static kiln_rc macros_open(struct tool *t, struct kiln_err *err)
{
	struct macro_config cfg = {0};
	kiln_rc rc;
	size_t i;

	t->opts.macros = macro_ctx_new(err);
	if (!t->opts.macros)
		return err->code;
	macro_ctx_set_diag(t->opts.macros, diag, NULL);
	cfg.confdir = t->confdir;
	rc = macro_config_load(t->opts.macros, &cfg, err);
	for (i = 0; i < t->ndefines && !rc; i++)
		rc = macro_define_line(t->opts.macros, t->defines[i], MACRO_LEVEL_CMDLINE, err);
	return rc;
}

static kiln_rc file_add(struct tool *t, char *line, struct kiln_err *err)
{
	char *fields[4] = {line, NULL, NULL, NULL};
	struct pack_file *f;
	struct stat st;
	size_t rl = t->root ? strlen(t->root) : 0;
	int k;

	for (k = 1; k < 4 && fields[k - 1]; k++) {
		fields[k] = strchr(fields[k - 1], '\t');
		if (fields[k])
			*fields[k]++ = '\0';
	}
	if (t->n >= MAX_FILES)
		return kiln_err_set(err, KILN_ELIMIT, "too many files");
	if (lstat(line, &st) < 0)
		return kiln_err_sys(err, KILN_EIO, "%s", line);
	f = &t->files[t->n++];
	memset(f, 0, sizeof(*f));
	f->src = kiln_arena_strdup(&t->arena, line);
	f->path = f->src + (rl && !strncmp(line, t->root, rl) ? rl : 0);
	f->mode = st.st_mode;
	f->user = fields[1] ? kiln_arena_strdup(&t->arena, fields[1]) : NULL;
	f->group = fields[2] ? kiln_arena_strdup(&t->arena, fields[2]) : NULL;
	f->flags = fields[3] ? (uint32_t)strtoul(fields[3], NULL, 0) : 0;
	if (S_ISLNK(st.st_mode)) {
		char to[4096];
		ssize_t len = readlink(line, to, sizeof(to) - 1);

		if (len < 0)
			return kiln_err_sys(err, KILN_EIO, "%s", line);
		f->link = kiln_arena_strndup(&t->arena, to, (size_t)len);
	}
	return kiln_arena_finish(&t->arena, err);
}

static kiln_rc files_read(struct tool *t, struct kiln_err *err)
{
	char line[8192];
	kiln_rc rc = KILN_OK;

	t->files = kiln_calloc(MAX_FILES, sizeof(*t->files));
	if (!t->files)
		return kiln_err_set(err, KILN_ENOMEM, "out of memory");
	while (!rc && fgets(line, sizeof(line), stdin)) {
		line[strcspn(line, "\n")] = '\0';
		if (*line)
			rc = file_add(t, line, err);
	}
	return rc;
}

static void print_set(const struct tool *t, const struct worker_deps *d)
{
	struct kiln_buf b = KILN_BUF_INIT(KILN_LIMIT_LINE);
	size_t i;

	for (i = 0; i < d->n; i++) {
		kiln_buf_reset(&b);
		worker_dep_format(&d->v[i], &b);
		if (t->flags)
			printf("%" PRIu32 "\t", d->v[i].flags);
		printf("%s\n", b.ptr);
	}
	kiln_buf_release(&b);
}

int main(int argc, char **argv)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct worker_deps sets[3];
	struct tool t;
	int rc = 1;
	int k;

	memset(&t, 0, sizeof(t));
	kiln_arena_init(&t.arena, KILN_LIMIT_ARENA);
	for (k = 0; k < 3; k++)
		worker_deps_init(&sets[k]);
	if (parse_args(&t, argc, argv))
		goto out;
	if (macros_open(&t, &err) || files_read(&t, &err) ||
	    worker_autodeps_collect(t.files, t.n, &t.opts, &sets[0], &sets[1], &sets[2], &err)) {
		rc = fail(&err);
		goto out;
	}
	for (k = 0; k < 3; k++) {
		if (t.show[k])
			print_set(&t, &sets[k]);
	}
	rc = 0;
out:
	for (k = 0; k < 3; k++)
		worker_deps_release(&sets[k]);
	macro_ctx_free(t.opts.macros);
	free(t.files);
	kiln_arena_release(&t.arena);
	return rc;
}
