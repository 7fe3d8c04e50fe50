/*
 * builtins.c - rpm's built-in macros (the const registry of built-ins lives here).
 *
 * Each follows rpm 4.20's behaviour, including the odd parts that specs rely on:
 * %{dirname:} and %{basename:} are POSIX dirname(3) and basename(3) (so "dir" has the
 * directory "."), %{quote:} marks its argument's bounds only for argument splitting.
 */
#include "util/util.h"

#include <libgen.h>
#include <sched.h>
#include <sys/stat.h>
#include <unistd.h>

#include "macro/macro_int.h"

static void out_str(struct mbuf *mb, const char *s)
{
	kiln_buf_addstr(mb->out, s);
}

static void bi_source_patch(struct mbuf *mb, const struct macro_builtin *bi, int argc, char **argv)
{
	struct kiln_buf b = KILN_BUF_INIT(mb->ctx->max_expansion);

	(void)argc;
	kiln_buf_addf(&b, "%%%s%s", bi->name[0] == 'S' ? "SOURCE" : "PATCH", argv[1]);
	if (!b.err)
		macro_mb_expand(mb, b.ptr, b.len);
	kiln_buf_release(&b);
}

/* rpm 4.20 calls POSIX basename(3) and dirname(3) (rpm commits 3ad98187 and 9571e3d9):
 * trailing slashes do not count, "/" stays "/", a name without a slash has the directory
 * ".", and "" is ".". Both work on a copy, as POSIX lets them modify their argument. */
static void bi_basename(struct mbuf *mb, const struct macro_builtin *bi, int argc, char **argv)
{
	char *copy = kiln_strdup(argv[1]);

	(void)bi;
	(void)argc;
	if (!copy) {
		macro_mb_error(mb, KILN_ENOMEM, "out of memory");
		return;
	}
	out_str(mb, basename(copy));
	free(copy);
}

static void bi_dirname(struct mbuf *mb, const struct macro_builtin *bi, int argc, char **argv)
{
	char *copy = kiln_strdup(argv[1]);

	(void)bi;
	(void)argc;
	if (!copy) {
		macro_mb_error(mb, KILN_ENOMEM, "out of memory");
		return;
	}
	out_str(mb, dirname(copy));
	free(copy);
}

static void bi_suffix(struct mbuf *mb, const struct macro_builtin *bi, int argc, char **argv)
{
	const char *dot = strrchr(argv[1], '.');

	(void)bi;
	(void)argc;
	if (dot)
		out_str(mb, dot + 1);
}

static void bi_output(struct mbuf *mb, const struct macro_builtin *bi, int argc, char **argv)
{
	(void)argc;
	if (bi->name[0] == 'e' && bi->name[1] == 'c') {
		macro_diag(mb->ctx, KILN_LOG_INFO, "%s", argv[1]);
	} else if (bi->name[0] == 'w') {
		macro_diag(mb->ctx, KILN_LOG_WARN, "%s", argv[1]);
	} else {
		macro_mb_error(mb, KILN_EMACRO, "%s", argv[1]);
	}
}

static void bi_exists(struct mbuf *mb, const struct macro_builtin *bi, int argc, char **argv)
{
	(void)bi;
	(void)argc;
	struct kiln_buf scratch = KILN_BUF_INIT(KILN_LIMIT_PATH);

	out_str(mb, access(macro_path_host(mb->ctx, argv[1], &scratch), F_OK) == 0 ? "1" : "0");
	kiln_buf_release(&scratch);
}

static void bi_expand(struct mbuf *mb, const struct macro_builtin *bi, int argc, char **argv)
{
	(void)bi;
	(void)argc;
	macro_mb_expand(mb, argv[1], strlen(argv[1]));
}

static void bi_expr(struct mbuf *mb, const struct macro_builtin *bi, int argc, char **argv)
{
	(void)bi;
	(void)argc;
	if (macro_expr_eval(mb->ctx, argv[1], strlen(argv[1]), 0, mb->out, mb->err))
		mb->error = true;
}

static void bi_getconfdir(struct mbuf *mb, const struct macro_builtin *bi, int argc, char **argv)
{
	(void)bi;
	(void)argc;
	(void)argv;
	/* rpm's compiled-in configuration directory, which its macro files (and specs) build
	 * %_rpmconfigdir, %_rpmmacrodir, %_fileattrsdir... from. kiln's own is %_kiln_confdir. */
	out_str(mb, MACRO_RPM_CONFIGDIR);
}

static void bi_getenv(struct mbuf *mb, const struct macro_builtin *bi, int argc, char **argv)
{
	const char *v = getenv(argv[1]);

	(void)bi;
	(void)argc;
	if (v)
		out_str(mb, v);
}

static long tasksize_mb(struct mbuf *mb, const char *kind)
{
	char name[64];
	const char *body;
	long v;

	snprintf(name, sizeof(name), "_smp_tasksize_%s", kind);
	body = macro_body_get(mb->ctx, name);
	v = body ? strtol(body, NULL, 10) : 0;
	return v > 0 ? v : 512;
}

static void bi_getncpus(struct mbuf *mb, const struct macro_builtin *bi, int argc, char **argv)
{
	long ncpus = sysconf(_SC_NPROCESSORS_ONLN);
	cpu_set_t set;

	(void)bi;
	if (sched_getaffinity(0, sizeof(set), &set) == 0)
		ncpus = CPU_COUNT(&set);
	if (ncpus < 1)
		ncpus = 1;
	if (argc > 1 && strcmp(argv[1], "total")) {
		long pages = sysconf(_SC_PHYS_PAGES);
		long psize = sysconf(_SC_PAGESIZE);
		long mem_mb;
		long max;

		if (strcmp(argv[1], "proc") && strcmp(argv[1], "thread")) {
			macro_mb_error(mb, KILN_ESYNTAX, "invalid argument: %s", argv[1]);
			return;
		}
		/* 4.19: limit by memory, one task per %_smp_tasksize_KIND megabytes. */
		mem_mb = pages > 0 && psize > 0 ? (long)((double)pages * psize / (1024 * 1024)) : 0;
		max = mem_mb / tasksize_mb(mb, argv[1]);
		if (max < 1)
			max = 1;
		if (ncpus > max)
			ncpus = max;
	}
	kiln_buf_addf(mb->out, "%ld", ncpus);
}

static void bi_load(struct mbuf *mb, const struct macro_builtin *bi, int argc, char **argv)
{
	struct kiln_err err = KILN_ERR_INIT;

	(void)bi;
	(void)argc;
	if (mb->ctx->restricted) {
		macro_mb_error(mb, KILN_EPRIV, "%%{load:} is disabled: %s", argv[1]);
		return;
	}
	if (macro_load_file(mb->ctx, argv[1], MACRO_LEVEL_FILE, &err))
		macro_mb_error(mb, KILN_ENOTFOUND, "failed to load macro file %s", argv[1]);
}

static void bi_macrobody(struct mbuf *mb, const struct macro_builtin *bi, int argc, char **argv)
{
	struct macro_slot *slot = macro_table_find(&mb->ctx->table, argv[1], strlen(argv[1]));

	(void)bi;
	(void)argc;
	if (!slot || (!slot->top && !slot->builtin)) {
		macro_mb_error(mb, KILN_ENOTFOUND, "no such macro: '%s'", argv[1]);
		return;
	}
	if (slot->top)
		kiln_buf_add(mb->out, slot->top->body, slot->top->body_len);
}

/* rpm 4.20: the marks only where the text is being expanded for argument splitting;
 * elsewhere the arguments themselves, joined by blanks. */
static void bi_quote(struct mbuf *mb, const struct macro_builtin *bi, int argc, char **argv)
{
	int i;

	(void)bi;
	for (i = 1; i < argc; i++) {
		if (i > 1)
			kiln_buf_addch(mb->out, ' ');
		if (mb->keep_quoted)
			kiln_buf_addch(mb->out, MACRO_QUOTE_MARK);
		out_str(mb, argv[i]);
		if (mb->keep_quoted)
			kiln_buf_addch(mb->out, MACRO_QUOTE_MARK);
	}
	if (mb->keep_quoted)
		mb->have_quoted = true;
}

static void bi_shescape(struct mbuf *mb, const struct macro_builtin *bi, int argc, char **argv)
{
	(void)bi;
	(void)argc;
	kiln_buf_add_shquoted(mb->out, argv[1]);
}

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

static void bi_shrink(struct mbuf *mb, const struct macro_builtin *bi, int argc, char **argv)
{
	const char *p = argv[1];
	bool pending = false;

	(void)bi;
	(void)argc;
	while (*p && is_space(*p))
		p++;
	for (; *p; p++) {
		if (is_space(*p)) {
			pending = true;
			continue;
		}
		if (pending)
			kiln_buf_addch(mb->out, ' ');
		pending = false;
		kiln_buf_addch(mb->out, *p);
	}
}

/* rpm's urlPath(): the path part of a URL it knows, anything else as is. */
static void bi_url2path(struct mbuf *mb, const struct macro_builtin *bi, int argc, char **argv)
{
	static const char *const schemes[] = {"ftp://", "hkp://", "http://", "https://"};
	const char *u = argv[1];
	const char *p;
	size_t i;

	(void)bi;
	(void)argc;
	if (!strncmp(u, "file://", 7)) {
		p = strchr(u + 7, '/');
		out_str(mb, p ? p : "");
		return;
	}
	for (i = 0; i < KILN_ARRAY_SIZE(schemes); i++) {
		size_t n = strlen(schemes[i]);

		if (!strncmp(u, schemes[i], n)) {
			p = strchr(u + n, '/');
			out_str(mb, p ? p : "/");
			return;
		}
	}
	out_str(mb, u);
}

static void bi_uncompress(struct mbuf *mb, const struct macro_builtin *bi, int argc, char **argv)
{
	struct kiln_buf b = KILN_BUF_INIT(mb->ctx->max_expansion);

	(void)bi;
	(void)argc;
	kiln_buf_addf(&b, "%%{__rpmuncompress} %s", argv[1]);
	if (!b.err)
		macro_mb_expand(mb, b.ptr, b.len);
	kiln_buf_release(&b);
}

static void bi_undefine(struct mbuf *mb, const struct macro_builtin *bi, int argc, char **argv)
{
	struct macro_slot *slot;
	size_t len = strlen(argv[1]);

	(void)bi;
	(void)argc;
	if (!macro_name_valid(argv[1], len)) {
		macro_mb_error(mb, KILN_ESYNTAX, "Macro %%%s has illegal name (%%undefine)",
		               argv[1]);
		return;
	}
	slot = macro_table_find(&mb->ctx->table, argv[1], len);
	if (slot && slot->builtin) {
		macro_mb_error(mb, KILN_EPRIV, "Macro %%%s is a built-in (%%undefine)", argv[1]);
		return;
	}
	if (slot && slot->top && (slot->top->flags & MACRO_DEF_AUTO)) {
		macro_mb_error(mb, KILN_EPRIV, "Macro %%%s is an automatic (%%undefine)", argv[1]);
		return;
	}
	if (slot)
		macro_pop(mb->ctx, slot);
}

static void bi_rpmversion(struct mbuf *mb, const struct macro_builtin *bi, int argc, char **argv)
{
	(void)bi;
	(void)argc;
	(void)argv;
	/* The rpm language level kiln implements (docs/macros.md). */
	out_str(mb, "4.20.1");
}

static int by_name(const void *a, const void *b)
{
	const struct macro_slot *x = *(const struct macro_slot *const *)a;
	const struct macro_slot *y = *(const struct macro_slot *const *)b;

	return strcmp(x->name, y->name);
}

static void bi_dump(struct mbuf *mb, const struct macro_builtin *bi, int argc, char **argv)
{
	struct macro_table *t = &mb->ctx->table;
	struct kiln_buf b = KILN_BUF_INIT(mb->ctx->max_expansion);
	struct macro_slot **v = kiln_calloc(t->used + 1, sizeof(*v));
	size_t n = 0;
	size_t i;

	(void)bi;
	(void)argc;
	(void)argv;
	if (!v)
		return;
	for (i = 0; i < t->cap; i++) {
		if (t->slots[i] && (t->slots[i]->top || t->slots[i]->builtin))
			v[n++] = t->slots[i];
	}
	qsort(v, n, sizeof(*v), by_name);
	kiln_buf_addstr(&b, "========================\n");
	for (i = 0; i < n; i++) {
		const struct macro_def *d = v[i]->top;

		if (!d) {
			kiln_buf_addf(&b, "%3d: %s\t<builtin>\n", MACRO_LEVEL_BUILTIN, v[i]->name);
			continue;
		}
		kiln_buf_addf(&b, "%3d%c %s", d->level, (d->flags & MACRO_DEF_USED) ? '=' : ':',
		              v[i]->name);
		if (d->opts)
			kiln_buf_addf(&b, "(%s)", d->opts);
		kiln_buf_addf(&b, "\t%s\n", d->body);
	}
	kiln_buf_addf(&b, "======================== active %zu empty 0", n);
	/* Whole, past macro_diag()'s message size: the table is long. */
	if (!b.err && mb->ctx->diag)
		mb->ctx->diag(mb->ctx->diag_data, KILN_LOG_DEBUG, b.ptr);
	else if (!b.err)
		fprintf(stderr, "%s\n", b.ptr);
	kiln_buf_release(&b);
	free(v);
}

/* %trace turns the expansion trace on for the rest of the level it is expanded at; at the
 * outermost level for every later expansion too (rpm's doTrace). */
static void bi_trace(struct mbuf *mb, const struct macro_builtin *bi, int argc, char **argv)
{
	(void)bi;
	(void)argc;
	(void)argv;
	mb->trace = true;
	if (mb->ctx->depth - mb->depth0 == 1)
		mb->ctx->trace = true;
}

/* 4.19 string built-ins: thin wrappers over Lua's string library, as in rpm. */
static void bi_string(struct mbuf *mb, const struct macro_builtin *bi, int argc, char **argv)
{
	char fn[32];

	snprintf(fn, sizeof(fn), "string.%s", bi->name);
	if (macro_lua_call(mb->ctx, fn, argc - 1, (const char *const *)argv + 1, mb->out, mb->err))
		mb->error = true;
}

/* ---------------------------------------------------------------------------------------- */
/* Parse-kind built-ins. */

static size_t bp_define(struct mbuf *mb, const struct macro_builtin *bi, const char *text,
                        size_t len, bool braced)
{
	bool global = bi->name[0] == 'g';
	size_t used;

	if (!text) {
		macro_mb_error(mb, KILN_ESYNTAX, "%%%s: argument expected", bi->name);
		return 0;
	}
	used = macro_parse_define(mb, text, len, global ? MACRO_LEVEL_GLOBAL : mb->ctx->level,
	                          global, global ? "%global" : "%define");
	return braced ? len : used;
}

static size_t bp_dnl(struct mbuf *mb, const struct macro_builtin *bi, const char *text, size_t len,
                     bool braced)
{
	const char *nl;

	(void)mb;
	(void)bi;
	if (!text || braced)
		return len;
	nl = memchr(text, '\n', len);
	return nl ? (size_t)(nl - text) + 1 : len;
}

static size_t bp_lua(struct mbuf *mb, const struct macro_builtin *bi, const char *text, size_t len,
                     bool braced)
{
	if (!text) {
		macro_mb_error(mb, KILN_ESYNTAX, "%%%s: argument expected", bi->name);
		return 0;
	}
	if (!braced) {
		/* "%lua code": the rest of the line */
		const char *nl = memchr(text, '\n', len);

		len = nl ? (size_t)(nl - text) : len;
	}
	macro_lua_run(mb, text, len);
	return len;
}

static size_t bp_verbose(struct mbuf *mb, const struct macro_builtin *bi, const char *text,
                         size_t len, bool braced)
{
	(void)bi;
	if (!text || !braced) {
		out_str(mb, mb->ctx->verbose ? "1" : "0");
		return 0;
	}
	if (mb->ctx->verbose)
		macro_mb_expand(mb, text, len);
	return len;
}

static const struct macro_builtin builtins[] = {
    {"P", MACRO_BI_ONE, bi_source_patch, NULL},
    {"S", MACRO_BI_ONE, bi_source_patch, NULL},
    {"basename", MACRO_BI_ONE, bi_basename, NULL},
    {"define", MACRO_BI_ONE, NULL, bp_define},
    {"dirname", MACRO_BI_ONE, bi_dirname, NULL},
    {"dnl", MACRO_BI_ONE, NULL, bp_dnl},
    {"dump", MACRO_BI_NONE, bi_dump, NULL},
    {"echo", MACRO_BI_ONE, bi_output, NULL},
    {"error", MACRO_BI_ONE, bi_output, NULL},
    {"exists", MACRO_BI_ONE, bi_exists, NULL},
    {"expand", MACRO_BI_ONE, bi_expand, NULL},
    {"expr", MACRO_BI_ONE, bi_expr, NULL},
    {"getconfdir", MACRO_BI_NONE, bi_getconfdir, NULL},
    {"getenv", MACRO_BI_ONE, bi_getenv, NULL},
    {"getncpus", MACRO_BI_OPTIONAL, bi_getncpus, NULL},
    {"global", MACRO_BI_ONE, NULL, bp_define},
    {"gsub", MACRO_BI_MANY, bi_string, NULL},
    {"len", MACRO_BI_ONE, bi_string, NULL},
    {"load", MACRO_BI_ONE, bi_load, NULL},
    {"lower", MACRO_BI_ONE, bi_string, NULL},
    {"lua", MACRO_BI_ONE, NULL, bp_lua},
    {"macrobody", MACRO_BI_ONE, bi_macrobody, NULL},
    {"quote", MACRO_BI_ONE, bi_quote, NULL},
    {"rep", MACRO_BI_MANY, bi_string, NULL},
    {"reverse", MACRO_BI_ONE, bi_string, NULL},
    {"rpmversion", MACRO_BI_NONE, bi_rpmversion, NULL},
    {"shescape", MACRO_BI_ONE, bi_shescape, NULL},
    {"shrink", MACRO_BI_ONE, bi_shrink, NULL},
    {"sub", MACRO_BI_MANY, bi_string, NULL},
    {"suffix", MACRO_BI_ONE, bi_suffix, NULL},
    {"trace", MACRO_BI_NONE, bi_trace, NULL},
    {"u2p", MACRO_BI_ONE, bi_url2path, NULL},
    {"uncompress", MACRO_BI_ONE, bi_uncompress, NULL},
    {"undefine", MACRO_BI_ONE, bi_undefine, NULL},
    {"upper", MACRO_BI_ONE, bi_string, NULL},
    {"url2path", MACRO_BI_ONE, bi_url2path, NULL},
    {"verbose", MACRO_BI_OPTIONAL, NULL, bp_verbose},
    {"warn", MACRO_BI_ONE, bi_output, NULL},
};

const struct macro_builtin *macro_builtins_table(size_t *count)
{
	*count = KILN_ARRAY_SIZE(builtins);
	return builtins;
}
