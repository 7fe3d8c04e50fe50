/*
 * fldump.c - a test-only helper that runs worker_filelist_collect() over a spec and a
 * buildroot and prints each package's files, for the integration test that compares them
 * with what Debian's rpmbuild packaged (never installed).
 *
 *   fldump [-D 'NAME VALUE']... [-c EPOCH] SPEC BUILDROOT BUILDDIR
 *
 * Loads kiln's configuration, applies the -D definitions, parses SPEC and prints for every
 * package with a %files section one line per file, fields separated by TABs, in the order
 * of rpm --qf '[%{NAME}\t%{FILENAMES}\t%{FILESIZES}\t%{FILEMODES:octal}\t%{FILEUSERNAME}
 * \t%{FILEGROUPNAME}\t%{FILEFLAGS}\t%{FILEVERIFYFLAGS}\t%{FILELANGS}\t%{FILECOLORS}
 * \t%{FILECLASS}\t%{FILELINKTOS}\t%{FILEMTIMES}\t%{FILERDEVS}\t%{FILECAPS}\n]', then a
 * "hardlinks" line per hard-link set. -c clamps mtimes to EPOCH. Warnings and errors go to
 * stderr; the unpackaged-files check runs last. Exit status 1 on any error.
 */
#include "util/util.h"

#include <sys/stat.h>

#include "macro/macro.h"
#include "spec/spec.h"
#include "pack/pack.h"
#include "worker/worker.h"

static void diag(void *data, enum kiln_log_level level, const char *msg)
{
	(void)data;
	fprintf(stderr, "%s: %s\n", level == KILN_LOG_ERROR ? "error" : "warning", msg);
}

static int fail(const struct kiln_err *err)
{
	char msg[1024];

	fprintf(stderr, "error: %s\n", kiln_err_format(err, msg, sizeof(msg)));
	return 1;
}

static uint64_t file_size(const struct pack_file *f)
{
	struct stat st;

	if (S_ISLNK(f->mode))
		return f->link ? strlen(f->link) : 0;
	if (f->src && !lstat(f->src, &st))
		return (uint64_t)st.st_size;
	return f->size;
}

static void dump(const char *pkg, const struct worker_filelist *fl)
{
	size_t i, j;

	for (i = 0; i < fl->n; i++) {
		const struct pack_file *f = &fl->files[i];

		printf("%s\t%s\t%llu\t%o\t%s\t%s\t%u\t%u\t%s\t%u\t%s\t%s\t%u\t%u\t%s\n", pkg,
		       f->path, (unsigned long long)file_size(f), (unsigned)f->mode,
		       f->user ? f->user : "root", f->group ? f->group : "root", f->flags,
		       f->verify, f->lang ? f->lang : "", f->color, f->fclass ? f->fclass : "",
		       f->link ? f->link : "", f->mtime, f->rdev, f->caps ? f->caps : "");
	}
	for (i = 0; i < fl->n; i++) {
		bool first = true;

		if (!fl->files[i].hardlink)
			continue;
		for (j = 0; j < i && fl->files[j].hardlink != fl->files[i].hardlink; j++)
			;
		if (j < i)
			continue;
		printf("hardlinks\t%s", pkg);
		for (j = i; j < fl->n; j++) {
			if (fl->files[j].hardlink == fl->files[i].hardlink)
				printf("%s%s", first ? "\t" : " ", fl->files[j].path);
			first = false;
		}
		printf("\n");
	}
}

static kiln_rc ctx_open(char **defs, size_t ndefs, struct macro_ctx **out, struct kiln_err *err)
{
	struct kiln_buf confdir = KILN_BUF_INIT(KILN_LIMIT_PATH);
	struct macro_config cfg = {0};
	struct macro_ctx *ctx = macro_ctx_new(err);
	kiln_rc rc = ctx ? util_configdir_find(&confdir, err) : KILN_ENOMEM;
	size_t i;

	cfg.confdir = confdir.ptr;
	if (!rc)
		rc = macro_config_load(ctx, &cfg, err);
	for (i = 0; !rc && i < ndefs; i++)
		rc = macro_define_line(ctx, defs[i], MACRO_LEVEL_CMDLINE, err);
	if (ctx)
		macro_ctx_set_diag(ctx, diag, NULL);
	kiln_buf_release(&confdir);
	*out = ctx;
	return rc;
}

static int run(struct spec *spec, struct worker_filelist_opts *o)
{
	const struct worker_filelist **lists = kiln_calloc(spec->npackages + 1, sizeof(*lists));
	struct worker_filelist *fls = kiln_calloc(spec->npackages + 1, sizeof(*fls));
	struct kiln_err err = KILN_ERR_INIT;
	size_t i, n = 0;
	int status = 0;

	for (i = 0; lists && fls && i < spec->npackages; i++) {
		struct spec_package *pkg = spec->packages[i];

		if (!pkg->has_files)
			continue;
		kiln_err_clear(&err);
		if (worker_filelist_collect(&fls[n], spec, pkg, o, &err))
			status = fail(&err);
		else
			dump(pkg->name, &fls[n]);
		lists[n] = &fls[n];
		n++;
	}
	kiln_err_clear(&err);
	if (!status &&
	    worker_filelist_check_unpackaged(o->buildroot, lists, n, o->macros, NULL, &err))
		status = fail(&err);
	for (i = 0; fls && i < n; i++)
		worker_filelist_release(&fls[i]);
	free(fls);
	free(lists);
	return status;
}

int main(int argc, char **argv)
{
	struct worker_filelist_opts o = {0};
	struct kiln_err err = KILN_ERR_INIT;
	struct macro_ctx *ctx = NULL;
	struct spec *spec = NULL;
	char *defs[64];
	size_t ndefs = 0;
	int i, status;

	for (i = 1; i + 1 < argc && argv[i][0] == '-'; i += 2) {
		if (!strcmp(argv[i], "-D") && ndefs < 64)
			defs[ndefs++] = argv[i + 1];
		else if (!strcmp(argv[i], "-c")) {
			o.clamp_mtime = true;
			o.clamp_to = (uint32_t)strtoul(argv[i + 1], NULL, 10);
		} else
			break;
	}
	if (argc - i != 3) {
		fprintf(stderr, "usage: fldump [-D 'NAME VALUE']... [-c EPOCH] SPEC BUILDROOT "
		                "BUILDDIR\n");
		return 2;
	}
	if (ctx_open(defs, ndefs, &ctx, &err) ||
	    spec_parse_file(argv[i], ctx, SPEC_PARSE_ANYARCH, &spec, &err)) {
		status = fail(&err);
		goto out;
	}
	o.buildroot = argv[i + 1];
	o.builddir = argv[i + 2];
	o.macros = ctx;
	o.now = o.clamp_to;
	status = run(spec, &o);
out:
	spec_free(spec);
	macro_ctx_free(ctx);
	return status;
}
