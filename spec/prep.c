/*
 * prep.c - %setup and %patch in %prep: the shell commands they stand for.
 *
 * The text matches rpm's (rpmspec -P shows it): %setup changes to the build directory,
 * removes and recreates the source directory, unpacks with %{__rpmuncompress} -x and
 * fixes permissions; %patch pipes each patch into %{__patch} with rpm's option layout.
 */
#include "util/util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
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

/* One line of %setup's output the way rpm makes it, with rpmExpand(): a macro error (an
 * unterminated %{ in the -n directory) is reported, and the line keeps what came before
 * it; the %setup itself goes on. */
static kiln_rc expand_line(struct spec_parse_priv *p, const char *expr, struct kiln_buf *out)
{
	struct kiln_err e = KILN_ERR_INIT;
	kiln_rc rc = macro_expand_partial(p->ctx, expr, strlen(expr), out, &e);

	if (rc == KILN_ENOMEM || rc == KILN_ELIMIT)
		return kiln_err_set(p->err, rc, "%s", e.msg);
	if (rc)
		macro_diag(p->ctx, KILN_LOG_ERROR, "%s", e.msg);
	kiln_buf_addch(out, '\n');
	return KILN_OK;
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

/* -a N / -b N: rpm looks the source up as it reads the option, so a missing one fails
 * before a bad option later on the line. */
static kiln_rc setup_num(struct spec_parse_priv *p, const char *s, uint32_t *v, size_t *n)
{
	uint64_t num;

	if (*n >= 64 || util_parse_u64(s, strlen(s), 10, UINT32_MAX, &num, NULL))
		return spec_error(p, KILN_ESYNTAX, "line %d: Bad arg to %%setup: %s", p->lineno, s);
	if (!find_source(p->spec, false, (uint32_t)num))
		return spec_error(p, KILN_ENOTFOUND, "No source number %u", (unsigned)num);
	v[(*n)++] = (uint32_t)num;
	return KILN_OK;
}

/* popt-style short options: clusters ("-qcT"), attached or separate arguments; other
 * words are ignored and "--" ends the options, as popt leaves them to rpm, which does not
 * look at them. */
static kiln_rc setup_parse(struct spec_parse_priv *p, char **argv, int argc, struct setup_opts *o)
{
	int i;

	memset(o, 0, sizeof(*o));
	for (i = 1; i < argc && strcmp(argv[i], "--"); i++) {
		const char *s = argv[i];

		if (s[0] != '-' || !s[1])
			continue;
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
				rc = setup_num(p, arg, o->after, &o->nafter);
			else
				rc = setup_num(p, arg, o->before, &o->nbefore);
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
	/* rpm 4.20's -C: rpmuncompress creates the directory and strips the archive's top
	 * one; rpm passes the name unquoted. */
	if (into)
		kiln_buf_addf(out, " -C %s", into);
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
	/* rpm expands %{buildsubdir} (the directory's text, expanded again) in these lines. */
	kiln_buf_addf(out, "cd '%s'\n", builddir);
	if (!o.keep)
		rc = expand_line(p, "rm -rf '%{buildsubdir}'", out);
	kiln_buf_add(out, before.ptr, before.len);
	if (!rc && o.create)
		rc = expand_line(p, "%{__mkdir_p} '%{buildsubdir}'\ncd '%{buildsubdir}'", out);
	if (!rc && !o.no_default)
		rc = unpack(p, 0, o.quiet, o.create_strip ? dir : NULL, out);
	if (!rc && !o.create)
		rc = expand_line(p, "cd '%{buildsubdir}'", out);
	if (!rc)
		kiln_buf_add(out, after.ptr, after.len);
	if (!rc)
		kiln_buf_addf(out, "%s .\n", fixperms);
out:
	kiln_buf_release(&before);
	kiln_buf_release(&after);
	spec_argv_free(argv, argc);
	free(builddir);
	free(fixperms);
	free(defdir);
	return rc;
}

/* ---------------------------------------------------------------------------------------- */
/* %patch. */

struct patch_opts {
	const char *backup, *dir, *output;
	long strip, fuzz; /* fuzz < 0: no --fuzz */
	bool reverse, empty, timestamps;
	uint32_t nums[256];
	size_t nnums;
	const char *words[256]; /* -P values, then the other words, as rpm collects them */
	size_t nwords;
	const char *other[256]; /* the words that are no options */
	size_t nother;
};

static kiln_rc patch_num(struct spec_parse_priv *p, const char *s, const char *line,
                         struct patch_opts *o)
{
	uint64_t n;

	if (o->nnums >= KILN_ARRAY_SIZE(o->nums) ||
	    util_parse_u64(s, strlen(s), 10, UINT32_MAX, &n, NULL))
		return spec_error(p, KILN_ESYNTAX, "Invalid patch number %s: %s", s, line);
	o->nums[o->nnums++] = (uint32_t)n;
	return KILN_OK;
}

/* -p and -F are popt integers: any base strtol() reads, within int. word is what popt
 * names in its message (the value's own word). */
static kiln_rc patch_int(struct spec_parse_priv *p, const char *arg, const char *word,
                         const char *line, long *out)
{
	char *end = NULL;
	long long v;

	errno = 0;
	v = strtoll(arg, &end, 0);
	if (!*arg || *end)
		return spec_error(p, KILN_ESYNTAX, "invalid numeric value: %s: %s", word, line);
	if (errno || v < INT_MIN || v > INT_MAX)
		return spec_error(p, KILN_ESYNTAX, "number too large or too small: %s: %s", word,
		                  line);
	*out = (long)v;
	return KILN_OK;
}

static kiln_rc patch_word(struct spec_parse_priv *p, const char *s, const char *line,
                          struct patch_opts *o)
{
	if (o->nwords >= KILN_ARRAY_SIZE(o->words))
		return spec_error(p, KILN_ESYNTAX, "Invalid patch number %s: %s", s, line);
	o->words[o->nwords++] = s;
	return KILN_OK;
}

/* Errors as rpm words them (popt's message, the option, the line). rpm takes the -P
 * numbers first and the other words after them, and reads them once the options are. */
/* One option word of %patch: flags (-R -E -Z) and at most one option with a value. */
static kiln_rc patch_option(struct spec_parse_priv *p, char **argv, int argc, int *i,
                            const char *line, struct patch_opts *o)
{
	const char *s = argv[*i] + 1;
	const char *arg;

	for (; *s == 'R' || *s == 'E' || *s == 'Z'; s++) {
		o->reverse |= *s == 'R';
		o->empty |= *s == 'E';
		o->timestamps |= *s == 'Z';
	}
	if (!*s)
		return KILN_OK;
	if (!strchr("PpbzFdo", *s))
		return spec_error(p, KILN_ESYNTAX, "unknown option: %s: %s", argv[*i], line);
	arg = s[1] ? s + 1 : (*i + 1 < argc ? argv[++*i] : NULL);
	if (!arg)
		return spec_error(p, KILN_ESYNTAX, "missing argument: %s: %s", argv[*i], line);
	switch (*s) {
	case 'P':
		return patch_word(p, arg, line, o);
	case 'p':
		return patch_int(p, arg, argv[*i], line, &o->strip);
	case 'F':
		return patch_int(p, arg, argv[*i], line, &o->fuzz);
	case 'b':
	case 'z':
		o->backup = arg;
		break;
	case 'd':
		o->dir = arg;
		break;
	default:
		o->output = arg;
		break;
	}
	return KILN_OK;
}

static kiln_rc patch_parse(struct spec_parse_priv *p, char **argv, int argc, const char *line,
                           struct patch_opts *o)
{
	kiln_rc rc = KILN_OK;
	size_t k;
	int i;

	memset(o, 0, sizeof(*o));
	o->fuzz = spec_expand_numeric(p, "%{_default_patch_fuzz}");
	for (i = 1; !rc && i < argc; i++) {
		if (argv[i][0] == '-' && argv[i][1])
			rc = patch_option(p, argv, argc, &i, line, o);
		else if (o->nother < KILN_ARRAY_SIZE(o->other))
			o->other[o->nother++] = argv[i];
		else
			rc = spec_error(p, KILN_ESYNTAX, "Invalid patch number %s: %s", argv[i],
			                line);
	}
	for (k = 0; !rc && k < o->nother; k++)
		rc = patch_word(p, o->other[k], line, o);
	for (k = 0; !rc && k < o->nwords; k++)
		rc = patch_num(p, o->words[k], line, o);
	return rc;
}

static kiln_rc patch_one(struct spec_parse_priv *p, const struct patch_opts *o, uint32_t num,
                         struct kiln_buf *out)
{
	const struct spec_source *src = find_source(p->spec, true, num);
	struct kiln_buf args = KILN_BUF_INIT(KILN_LIMIT_LINE);
	char *patch = NULL;
	char *uncompress = NULL;
	kiln_rc rc;

	if (!src)
		return spec_error(p, KILN_ENOTFOUND, "No patch number %u", num);
	rc = expand_str(p, "%{__patch} %{_default_patch_flags}", &patch);
	if (!rc)
		rc = expand_str(p, "%{__rpmuncompress}", &uncompress);
	if (rc)
		goto out;
	kiln_buf_addf(&args, "%s -p%ld ", patch, o->strip);
	if (o->backup)
		kiln_buf_addf(&args, "-b --suffix %s", o->backup);
	if (o->fuzz >= 0)
		kiln_buf_addf(&args, " --fuzz=%ld", o->fuzz);
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
	free(uncompress);
	return rc;
}

/* The line as rpm 4.20's messages quote it: %patch is a macro there, and its messages show
 * the macro's name and arguments joined by one blank ("patch -P 0 -p1"). */
static void macro_line(const char *line, struct kiln_buf *out)
{
	const char *s;

	for (s = line + 1; *s; s++) {
		bool blank = *s == ' ' || *s == '\t';

		if (!blank)
			kiln_buf_addch(out, *s);
		else if (s[1] && s[1] != ' ' && s[1] != '\t')
			kiln_buf_addch(out, ' ');
	}
}

static kiln_rc do_patch(struct spec_parse_priv *p, const char *raw, struct kiln_buf *out)
{
	struct kiln_buf quoted = KILN_BUF_INIT(KILN_LIMIT_LINE);
	const char *line = raw;
	struct patch_opts o;
	char **argv = NULL;
	int argc = 0;
	kiln_rc rc;
	size_t i;

	/* rpm 4.20: the old %patchN form is gone. Anything else glued to "%patch" is what
	 * rpm 4.18 took for the number. */
	if (raw[6] >= '0' && raw[6] <= '9')
		return spec_error(p, KILN_ESYNTAX,
		                  "%%patchN is obsolete, use %%patch N (or %%patch -P N): %s", raw);
	if (raw[6] && raw[6] != ' ' && raw[6] != '\t')
		return spec_error(p, KILN_ESYNTAX, "Invalid patch number %.*s: %s",
		                  (int)strcspn(raw + 6, " \t"), raw + 6, raw);
	macro_line(raw, &quoted);
	if (!quoted.err)
		line = quoted.ptr;
	rc = spec_split_options(p, raw, &argv, &argc);
	if (!rc)
		rc = patch_parse(p, argv, argc, line, &o);
	/* rpm 4.20 (4.18 warned and applied patch 0). */
	if (!rc && !o.nnums)
		rc = spec_error(p, KILN_ESYNTAX, "Patch number not specified: %s", line);
	for (i = 0; !rc && i < o.nnums; i++)
		rc = patch_one(p, &o, o.nums[i], out);
	spec_argv_free(argv, argc);
	kiln_buf_release(&quoted);
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
		/* rpm 4.20 and 6.0 raise these as macro errors, which end the parse even for
		 * rpmspec (rpm 4.18 reported them and went on; 6.0.2 also made "No source
		 * number" one, rpm commit 4ec66538). */
		if (rc)
			break;
	}
	if (!rc)
		rc = kiln_buf_finish(out, p->err);
	return rc;
}
