/*
 * prep.c - %setup and %patch in %prep: the shell commands they stand for.
 *
 * The text matches rpm's (rpmspec -P shows it): %setup changes to the build directory,
 * removes and recreates the source directory, unpacks with %{__rpmuncompress} -x and
 * fixes permissions; %patch pipes each patch into %{__patch} with rpm's option layout.
 */
#include "util/util.h"

#include <fcntl.h>
#include <unistd.h>

#include "macro/macro.h"
#include "spec/spec.h"
#include "spec/spec_int.h"

static const struct spec_source *find_source(const struct spec *spec, bool patch, uint32_t num)
{
	size_t i;

	for (i = 0; i < spec->nsources; i++) {
		if (spec->sources[i].is_patch == patch && spec->sources[i].num == num)
			return &spec->sources[i];
	}
	return NULL;
}

static kiln_rc expand_str(struct spec_parse_priv *p, const char *expr, char **out)
{
	return macro_expand_str(p->ctx, expr, out, p->err);
}

/* rpm's rpmFileIsCompressed: by magic; a file that cannot be read counts as compressed
 * (so the command pipes it through the uncompressor, which then reports the problem). */
static bool is_compressed(struct spec_parse_priv *p, const char *path)
{
	unsigned char m[13];
	size_t got = 0;
	struct kiln_err ignored = KILN_ERR_INIT;
	struct kiln_buf scratch = KILN_BUF_INIT(KILN_LIMIT_PATH);
	int fd = open(macro_path_host(p->ctx, path, &scratch), O_RDONLY | O_CLOEXEC);

	kiln_buf_release(&scratch);
	if (fd < 0)
		return true;
	if (util_read_full(fd, m, sizeof(m), &got, &ignored))
		got = 0;
	util_close(fd);
	if (got < sizeof(m)) {
		macro_diag(p->ctx, KILN_LOG_ERROR, "File %s is smaller than %zu bytes", path,
		           sizeof(m));
		return false;
	}
	return (m[0] == 0x1f && (m[1] == 0x8b || m[1] == 0x9d || m[1] == 0x1e || m[1] == 0xa0)) ||
	       !memcmp(m, "BZh", 3) ||
	       !memcmp(m,
	               "\xfd"
	               "7zXZ",
	               6) ||
	       !memcmp(m, "\x28\xb5\x2f\xfd", 4) || !memcmp(m, "LZIP", 4) ||
	       !memcmp(m, "PK\003\004", 4) || !memcmp(m, "7z\xbc\xaf\x27\x1c", 6) ||
	       !memcmp(m, "LRZI", 4) || (m[0] == 0x5d && m[1] == 0 && m[2] == 0);
}

/* ---------------------------------------------------------------------------------------- */
/* %setup. */

struct setup_opts {
	bool quiet, create, create_strip, keep, no_default;
	const char *dir;
	uint32_t before[64], after[64];
	size_t nbefore, nafter;
};

static kiln_rc setup_num(struct spec_parse_priv *p, const char *s, uint32_t *v, size_t *n,
                         const char *opt)
{
	uint64_t num;

	if (*n >= 64 || util_parse_u64(s, strlen(s), 10, UINT32_MAX, &num, NULL))
		return spec_error(p, KILN_ESYNTAX, "line %d: Bad arg to %%setup %s: %s", p->lineno,
		                  opt, s);
	v[(*n)++] = (uint32_t)num;
	return KILN_OK;
}

/* popt-style short options: clusters ("-qcT"), attached or separate arguments. */
static kiln_rc setup_parse(struct spec_parse_priv *p, char **argv, int argc, struct setup_opts *o)
{
	int i;

	memset(o, 0, sizeof(*o));
	for (i = 1; i < argc; i++) {
		const char *s = argv[i];

		if (s[0] != '-' || !s[1])
			return spec_error(p, KILN_ESYNTAX, "line %d: Bad arg to %%setup: %s",
			                  p->lineno, s);
		for (s++; *s; s++) {
			const char *arg;
			char opt[3] = {'-', *s, '\0'};
			kiln_rc rc = KILN_OK;

			switch (*s) {
			case 'q':
				o->quiet = true;
				continue;
			case 'c':
				o->create = true;
				continue;
			case 'C':
				o->create_strip = true;
				continue;
			case 'D':
				o->keep = true;
				continue;
			case 'T':
				o->no_default = true;
				continue;
			case 'a':
			case 'b':
			case 'n':
				break;
			default:
				return spec_error(p, KILN_ESYNTAX,
				                  "line %d: Bad %%setup option %s: unknown option",
				                  p->lineno, argv[i]);
			}
			arg = s[1] ? s + 1 : (i + 1 < argc ? argv[++i] : NULL);
			if (!arg)
				return spec_error(
				    p, KILN_ESYNTAX,
				    "line %d: Bad %%setup option %s: missing argument", p->lineno,
				    opt);
			if (*s == 'n')
				o->dir = arg;
			else if (*s == 'a')
				rc = setup_num(p, arg, o->after, &o->nafter, opt);
			else
				rc = setup_num(p, arg, o->before, &o->nbefore, opt);
			if (rc)
				return rc;
			break;
		}
	}
	return KILN_OK;
}

static kiln_rc unpack(struct spec_parse_priv *p, uint32_t num, bool quiet, const char *into,
                      struct kiln_buf *out)
{
	const struct spec_source *src = find_source(p->spec, false, num);
	char *tool = NULL;
	kiln_rc rc;

	if (!src)
		return spec_error(p, KILN_ENOTFOUND, "No source number %u", num);
	rc = expand_str(p, "%{__rpmuncompress}", &tool);
	if (rc)
		return rc;
	kiln_buf_addf(out, "%s -x%s", tool, quiet ? "" : " -v");
	if (into)
		kiln_buf_addf(out, " -C '%s'", into);
	kiln_buf_addf(out, " %s\nSTATUS=$?\nif [ $STATUS -ne 0 ]; then\n  exit $STATUS\nfi\n",
	              src->path);
	free(tool);
	return KILN_OK;
}

static kiln_rc do_setup(struct spec_parse_priv *p, const char *line, struct kiln_buf *out)
{
	struct setup_opts o = {0};
	char **argv = NULL;
	char *builddir = NULL;
	char *mkdir = NULL;
	char *fixperms = NULL;
	char *defdir = NULL;
	struct kiln_buf before = KILN_BUF_INIT(KILN_LIMIT_MACRO_EXPANSION);
	struct kiln_buf after = KILN_BUF_INIT(KILN_LIMIT_MACRO_EXPANSION);
	const char *dir;
	int argc = 0;
	kiln_rc rc;
	size_t i;

	rc = spec_split_options(p, line, &argv, &argc);
	if (!rc)
		rc = setup_parse(p, argv, argc, &o);
	if (!rc)
		rc = expand_str(p, "%{_builddir}", &builddir);
	if (!rc)
		rc = expand_str(p, "%{__mkdir_p}", &mkdir);
	if (!rc)
		rc = expand_str(p, "%{_fixperms}", &fixperms);
	if (!rc && !o.dir)
		rc = expand_str(p, "%{NAME}-%{VERSION}", &defdir);
	if (rc)
		goto out;
	dir = o.dir ? o.dir : defdir;
	/* rpm looks the -b and -a sources up while reading the options: a missing one
	 * fails the line before it prints anything. */
	for (i = 0; !rc && i < o.nbefore; i++)
		rc = unpack(p, o.before[i], o.quiet, NULL, &before);
	for (i = 0; !rc && i < o.nafter; i++)
		rc = unpack(p, o.after[i], o.quiet, NULL, &after);
	if (!rc)
		rc = macro_define(p->ctx, "buildsubdir", NULL, dir, MACRO_LEVEL_SPEC, p->err);
	if (rc)
		goto out;
	kiln_buf_addf(out, "cd '%s'\n", builddir);
	if (!o.keep)
		kiln_buf_addf(out, "rm -rf '%s'\n", dir);
	kiln_buf_add(out, before.ptr, before.len);
	if (!rc && (o.create || o.create_strip))
		kiln_buf_addf(out, "%s '%s'\n", mkdir, dir);
	if (!rc && o.create)
		kiln_buf_addf(out, "cd '%s'\n", dir);
	if (!rc && !o.no_default)
		rc = unpack(p, 0, o.quiet, o.create_strip ? dir : NULL, out);
	if (!rc && !o.create)
		kiln_buf_addf(out, "cd '%s'\n", dir);
	if (!rc)
		kiln_buf_add(out, after.ptr, after.len);
	if (!rc)
		kiln_buf_addf(out, "%s .\n", fixperms);
out:
	kiln_buf_release(&before);
	kiln_buf_release(&after);
	spec_argv_free(argv, argc);
	free(builddir);
	free(mkdir);
	free(fixperms);
	free(defdir);
	return rc;
}

/* ---------------------------------------------------------------------------------------- */
/* %patch. */

struct patch_opts {
	const char *strip, *backup, *fuzz, *dir, *output;
	bool reverse, empty, timestamps;
	uint32_t nums[256];
	size_t nnums;
};

static kiln_rc patch_num(struct spec_parse_priv *p, const char *s, struct patch_opts *o)
{
	uint64_t n;

	if (o->nnums >= KILN_ARRAY_SIZE(o->nums) ||
	    util_parse_u64(s, strlen(s), 10, UINT32_MAX, &n, NULL))
		return spec_error(p, KILN_ESYNTAX, "line %d: Invalid patch number %s", p->lineno,
		                  s);
	o->nums[o->nnums++] = (uint32_t)n;
	return KILN_OK;
}

/* Errors as rpm 4.18 words them (popt's message, the option, the line). */
static kiln_rc patch_parse(struct spec_parse_priv *p, char **argv, int argc, const char *line,
                           struct patch_opts *o)
{
	int i;

	memset(o, 0, sizeof(*o));
	for (i = 1; i < argc; i++) {
		const char *s = argv[i];
		const char *arg;
		kiln_rc rc = KILN_OK;

		if (s[0] != '-' || !s[1]) {
			rc = patch_num(p, s, o);
			if (rc)
				return rc;
			continue;
		}
		for (s++; *s; s++) {
			if (*s == 'R' || *s == 'E' || *s == 'Z') {
				o->reverse |= *s == 'R';
				o->empty |= *s == 'E';
				o->timestamps |= *s == 'Z';
				continue;
			}
			if (!strchr("PpbzFdo", *s))
				return spec_error(p, KILN_ESYNTAX, "unknown option: %s: %s",
				                  argv[i], line);
			arg = s[1] ? s + 1 : (i + 1 < argc ? argv[++i] : NULL);
			if (!arg)
				return spec_error(p, KILN_ESYNTAX, "missing argument: %s: %s",
				                  argv[i], line);
			switch (*s) {
			case 'P':
				rc = patch_num(p, arg, o);
				break;
			case 'p':
				o->strip = arg;
				break;
			case 'b':
			case 'z':
				o->backup = arg;
				break;
			case 'F':
				o->fuzz = arg;
				break;
			case 'd':
				o->dir = arg;
				break;
			default:
				o->output = arg;
				break;
			}
			if (rc)
				return rc;
			break;
		}
	}
	return KILN_OK;
}

static kiln_rc patch_one(struct spec_parse_priv *p, const struct patch_opts *o, uint32_t num,
                         struct kiln_buf *out)
{
	const struct spec_source *src = find_source(p->spec, true, num);
	struct kiln_buf args = KILN_BUF_INIT(KILN_LIMIT_LINE);
	char *patch = NULL;
	char *fuzz = NULL;
	char *uncompress = NULL;
	kiln_rc rc;

	if (!src)
		return spec_error(p, KILN_ENOTFOUND, "No patch number %u", num);
	rc = expand_str(p, "%{__patch} %{_default_patch_flags}", &patch);
	if (!rc && !o->fuzz)
		rc = expand_str(p, "%{_default_patch_fuzz}", &fuzz);
	if (!rc)
		rc = expand_str(p, "%{__rpmuncompress}", &uncompress);
	if (rc)
		goto out;
	kiln_buf_addf(&args, "%s -p%s ", patch, o->strip ? o->strip : "0");
	if (o->backup)
		kiln_buf_addf(&args, "-b --suffix %s", o->backup);
	kiln_buf_addf(&args, " --fuzz=%s", o->fuzz ? o->fuzz : fuzz);
	if (o->dir)
		kiln_buf_addf(&args, " -d %s", o->dir);
	if (o->output)
		kiln_buf_addf(&args, " -o %s", o->output);
	if (o->reverse)
		kiln_buf_addstr(&args, " -R");
	if (o->empty)
		kiln_buf_addstr(&args, " -E");
	if (o->timestamps)
		kiln_buf_addstr(&args, " -Z");
	kiln_buf_addf(out, "echo \"Patch #%u (%s):\"\n", num, src->file);
	if (is_compressed(p, src->path))
		kiln_buf_addf(out, "{ %s %s || echo patch_fail ; } | %s\n\n", uncompress, src->path,
		              args.ptr);
	else
		kiln_buf_addf(out, "%s < %s\n\n", args.ptr, src->path);
	rc = kiln_buf_finish(&args, p->err);
out:
	kiln_buf_release(&args);
	free(patch);
	free(fuzz);
	free(uncompress);
	return rc;
}

static kiln_rc do_patch(struct spec_parse_priv *p, const char *line, struct kiln_buf *out)
{
	struct patch_opts o;
	char **argv = NULL;
	int argc = 0;
	kiln_rc rc;
	size_t i;

	/* rpm 4.20: the old %patchN form is gone. */
	if (line[6] >= '0' && line[6] <= '9')
		return spec_error(
		    p, KILN_ESYNTAX,
		    "line %d: %%patchN is obsolete, use %%patch N (or %%patch -P N): %s", p->lineno,
		    line);
	rc = spec_split_options(p, line, &argv, &argc);
	if (!rc)
		rc = patch_parse(p, argv, argc, line, &o);
	if (!rc && !o.nnums)
		rc = spec_error(p, KILN_ESYNTAX,
		                "line %d: %%patch without a patch number (use %%patch N or %%patch "
		                "-P N): %s",
		                p->lineno, line);
	for (i = 0; !rc && i < o.nnums; i++)
		rc = patch_one(p, &o, o.nums[i], out);
	spec_argv_free(argv, argc);
	return rc;
}

kiln_rc spec_prep_process(struct spec_parse_priv *p, const struct kiln_buf *raw,
                          struct kiln_buf *out)
{
	const char *s = raw->ptr;
	const char *end = raw->ptr + raw->len;
	kiln_rc rc = KILN_OK;

	while (s < end) {
		const char *nl = memchr(s, '\n', (size_t)(end - s));
		size_t n = nl ? (size_t)(nl - s) + 1 : (size_t)(end - s);
		char *line = kiln_strndup(s, nl ? n - 1 : n);

		if (!line)
			return kiln_err_set(p->err, KILN_ENOMEM, "out of memory");
		if (!strncmp(line, "%setup", 6))
			rc = do_setup(p, line, out);
		else if (!strncmp(line, "%patch", 6))
			rc = do_patch(p, line, out);
		else
			kiln_buf_add(out, s, n);
		free(line);
		s += n;
		/* What the bad line generated before the error stays. rpmspec (FORCE) reports
		 * the error and goes on with the next line; a build stops. */
		if (rc && (p->flags & SPEC_PARSE_FORCE) && rc != KILN_ENOMEM) {
			spec_report(p);
			kiln_err_clear(p->err);
			rc = KILN_OK;
		}
		if (rc)
			break;
	}
	if (!rc)
		rc = kiln_buf_finish(out, p->err);
	return rc;
}
