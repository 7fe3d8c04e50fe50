/*
 * rpmrc.c - rpmrc files, target selection and the configuration load sequence.
 *
 * The order matches rpm's rpmReadConfigFiles(): set the target macros from the host (or
 * --target), read the rpmrc files (optflags for the host arch become %optflags), load the
 * macro files, then set the target macros again so they win over the macro files.
 */
#include "util/util.h"

#include <glob.h>
#include <stdatomic.h>
#include <strings.h>
#include <sys/utsname.h>

#include "macro/macro_int.h"

/* One "table: key: value" or "optflags: arch value" line, kept in the context's arena. */
struct rc_entry {
	const char *table;
	const char *key;
	const char *value;
};

/* The tables are written only by macro_config_load; copies of a context share them (the
 * count says how many contexts hold them), and a load into a shared one copies first. */
struct macro_rpmrc {
	atomic_int refs;
	struct kiln_arena arena; /* the entries and their strings */
	struct rc_entry *entries;
	size_t n, cap;
	const char *macrofiles; /* the "macrofiles:" directive, or NULL */
	char host_arch[65];     /* uname, translated by buildarchtranslate */
	char host_os[65];
};

static const char *const machine_tables[] = {
    "arch_canon",  "os_canon",  "buildarchtranslate", "buildostranslate",
    "arch_compat", "os_compat", "buildarch_compat",   "buildos_compat",
};

static const char *const per_arch_options[] = {"optflags", "archcolor"};

static bool in_list(const char *s, const char *const *list, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (!strcmp(s, list[i]))
			return true;
	}
	return false;
}

static const char *rc_lookup(const struct macro_rpmrc *rc, const char *table, const char *key)
{
	size_t i;

	/* The last definition wins, as later rpmrc files override earlier ones. */
	for (i = rc->n; i-- > 0;) {
		if (!strcmp(rc->entries[i].table, table) && !strcmp(rc->entries[i].key, key))
			return rc->entries[i].value;
	}
	return NULL;
}

static kiln_rc rc_add(struct macro_ctx *ctx, const char *table, const char *key, const char *value,
                      struct kiln_err *err)
{
	struct macro_rpmrc *rc = ctx->rpmrc;
	struct kiln_arena *a = &rc->arena;

	if (rc->n == rc->cap) {
		size_t cap = rc->cap ? rc->cap * 2 : 256;
		struct rc_entry *e = kiln_arena_array(a, cap, sizeof(*e));

		if (!e)
			return kiln_arena_finish(a, err);
		if (rc->n)
			memcpy(e, rc->entries, rc->n * sizeof(*e));
		rc->entries = e;
		rc->cap = cap;
	}
	rc->entries[rc->n].table = kiln_arena_strdup(a, table);
	rc->entries[rc->n].key = kiln_arena_strdup(a, key);
	rc->entries[rc->n].value = kiln_arena_strdup(a, value);
	if (a->err)
		return kiln_arena_finish(a, err);
	rc->n++;
	return KILN_OK;
}

static char *trim(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r' || e[-1] == '\n'))
		*--e = '\0';
	return s;
}

/* Split "key: rest" or "key rest" at the first ':' (tables) or blank (options). */
static char *split_key(char *s, char sep)
{
	char *p = strchr(s, sep);

	if (!p)
		return NULL;
	*p = '\0';
	return trim(p + 1);
}

static kiln_rc rc_read_line(struct macro_ctx *ctx, char *line, const char *path, int lineno,
                            struct kiln_err *err)
{
	char *name = trim(line);
	char *rest;
	char *value;

	if (!*name || *name == '#')
		return KILN_OK;
	rest = split_key(name, ':');
	if (!rest)
		return kiln_err_set(err, KILN_ESYNTAX, "missing ':' at %s:%d", path, lineno);
	name = trim(name);
	if (!strcmp(name, "macrofiles")) {
		ctx->rpmrc->macrofiles = kiln_arena_strdup(&ctx->rpmrc->arena, rest);
		return kiln_arena_finish(&ctx->rpmrc->arena, err);
	}
	if (in_list(name, per_arch_options, KILN_ARRAY_SIZE(per_arch_options))) {
		value = rest + strcspn(rest, " \t");
		if (*value)
			*value++ = '\0';
		value = trim(value);
		if (!*rest || !*value)
			return kiln_err_set(err, KILN_ESYNTAX, "missing argument for %s at %s:%d",
			                    name, path, lineno);
		return rc_add(ctx, name, rest, value, err);
	}
	if (in_list(name, machine_tables, KILN_ARRAY_SIZE(machine_tables))) {
		value = split_key(rest, ':');
		if (!value)
			return kiln_err_set(err, KILN_ESYNTAX, "missing second ':' at %s:%d", path,
			                    lineno);
		return rc_add(ctx, name, trim(rest), value, err);
	}
	return kiln_err_set(err, KILN_ESYNTAX, "bad option '%s' at %s:%d", name, path, lineno);
}

static kiln_rc rc_read_file(struct macro_ctx *ctx, const char *path, struct kiln_err *err)
{
	struct kiln_buf text = KILN_BUF_INIT(KILN_LIMIT_TEXT_FILE);
	char *line;
	char *next;
	int lineno = 0;
	kiln_rc rc;

	rc = util_read_file(path, KILN_LIMIT_TEXT_FILE, &text, err);
	for (line = text.ptr; !rc && line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		lineno++;
		rc = rc_read_line(ctx, line, path, lineno, err);
	}
	kiln_buf_release(&text);
	return rc;
}

/* Read a colon list of rpmrc files; the first must exist, later ones are optional. */
static kiln_rc rc_read_list(struct macro_ctx *ctx, const char *list, struct kiln_err *err)
{
	char *copy = kiln_strdup(list);
	char *p = copy;
	bool first = true;
	kiln_rc rc = KILN_OK;

	if (!copy)
		return kiln_err_set(err, KILN_ENOMEM, "out of memory");
	while (!rc && p) {
		char *colon = strchr(p, ':');
		glob_t g = {0};
		size_t i;

		if (colon)
			*colon = '\0';
		if (*p && !glob(p, GLOB_NOCHECK | GLOB_TILDE, NULL, &g)) {
			for (i = 0; !rc && i < g.gl_pathc; i++) {
				if (!util_exists(g.gl_pathv[i])) {
					if (first)
						rc = kiln_err_set(err, KILN_ENOTFOUND,
						                  "Unable to open %s for reading",
						                  g.gl_pathv[i]);
					continue;
				}
				rc = rc_read_file(ctx, g.gl_pathv[i], err);
			}
		}
		globfree(&g);
		first = false;
		p = colon ? colon + 1 : NULL;
	}
	free(copy);
	return rc;
}

/* ---------------------------------------------------------------------------------------- */
/* Target. */

static void lowercase(char *s)
{
	for (; *s; s++) {
		if (*s >= 'A' && *s <= 'Z')
			*s = (char)(*s - 'A' + 'a');
	}
}

static void copy_word(char *dst, size_t size, const char *src, size_t len)
{
	if (len >= size)
		len = size - 1;
	memcpy(dst, src, len);
	dst[len] = '\0';
}

static void host_machine(struct macro_rpmrc *rc)
{
	struct utsname u;
	const char *t;

	if (uname(&u) < 0) {
		snprintf(rc->host_arch, sizeof(rc->host_arch), "(arch)");
		snprintf(rc->host_os, sizeof(rc->host_os), "(os)");
		return;
	}
	snprintf(rc->host_arch, sizeof(rc->host_arch), "%s", u.machine);
	snprintf(rc->host_os, sizeof(rc->host_os), "%s", u.sysname);
	t = rc_lookup(rc, "buildarchtranslate", rc->host_arch);
	if (t)
		copy_word(rc->host_arch, sizeof(rc->host_arch), t, strcspn(t, " \t"));
	t = rc_lookup(rc, "buildostranslate", rc->host_os);
	if (t)
		copy_word(rc->host_os, sizeof(rc->host_os), t, strcspn(t, " \t"));
}

/* The canonical short name from arch_canon/os_canon ("x86_64: x86_64 1"), or name. */
static void canon_name(const struct macro_rpmrc *rc, const char *table, const char *name, char *dst,
                       size_t size)
{
	const char *c = rc_lookup(rc, table, name);

	if (c)
		copy_word(dst, size, c, strcspn(c, " \t"));
	else
		snprintf(dst, size, "%s", name);
}

/* "cpu-vendor-os[-gnu]" or "cpu-os" or "cpu" into cpu and os (os empty when absent). */
static void split_target(const char *target, char *cpu, size_t cs, char *os, size_t os_size)
{
	const char *dash = strchr(target, '-');
	const char *last;
	char rest[256];
	char *gnu;

	os[0] = '\0';
	if (!dash) {
		copy_word(cpu, cs, target, strlen(target));
		return;
	}
	copy_word(cpu, cs, target, (size_t)(dash - target));
	copy_word(rest, sizeof(rest), dash + 1, strlen(dash + 1));
	gnu = strrchr(rest, '-');
	if (gnu && !strcasecmp(gnu, "-gnu"))
		*gnu = '\0';
	last = strrchr(rest, '-');
	last = last ? last + 1 : rest;
	copy_word(os, os_size, last, strlen(last));
}

static kiln_rc repush(struct macro_ctx *ctx, const char *name, const char *value,
                      struct kiln_err *err)
{
	struct macro_slot *slot = macro_table_find(&ctx->table, name, strlen(name));

	if (slot)
		macro_pop(ctx, slot);
	return macro_push(ctx, name, strlen(name), NULL, value, strlen(value), MACRO_LEVEL_RPMRC, 0,
	                  err);
}

static kiln_rc rebuild_target_vars(struct macro_ctx *ctx, const char *target, struct kiln_err *err)
{
	struct macro_rpmrc *rc = ctx->rpmrc;
	char cpu[128];
	char os[128];
	char full[260];
	const char *optflags;
	kiln_rc rc2;

	if (target && *target) {
		split_target(target, cpu, sizeof(cpu), os, sizeof(os));
	} else {
		canon_name(rc, "arch_canon", rc->host_arch, cpu, sizeof(cpu));
		canon_name(rc, "os_canon", rc->host_os, os, sizeof(os));
	}
	if (!os[0])
		canon_name(rc, "os_canon", rc->host_os, os, sizeof(os));
	lowercase(cpu);
	lowercase(os);
	snprintf(full, sizeof(full), "%s-%s", cpu, os);
	rc2 = repush(ctx, "_target", full, err);
	if (!rc2)
		rc2 = repush(ctx, "_target_cpu", cpu, err);
	if (!rc2)
		rc2 = repush(ctx, "_target_os", os, err);
	optflags = rc_lookup(rc, "optflags", cpu);
	if (!rc2 && optflags)
		rc2 = repush(ctx, "optflags", optflags, err);
	return rc2;
}

/* ---------------------------------------------------------------------------------------- */
/* Load sequence. */

void macro_default_macrofiles(const char *confdir, struct kiln_buf *out)
{
	kiln_buf_addf(out,
	              "%s/macros:%s/macros.d/macros.*:%s/platform/%%{_target}/macros:"
	              "/etc/kiln/macros.*:/etc/kiln/macros:/etc/kiln/%%{_target}/macros:"
	              "~/.config/kiln/macros",
	              confdir, confdir, confdir);
}

void macro_default_rcfiles(const char *confdir, struct kiln_buf *out)
{
	kiln_buf_addf(out, "%s/rpmrc:/etc/kiln/rpmrc:~/.config/kiln/rpmrc", confdir);
}

static kiln_rc config_defaults(struct macro_ctx *ctx, const struct macro_config *cfg,
                               struct kiln_buf *rcfiles, struct kiln_buf *macrofiles,
                               struct kiln_err *err)
{
	if (cfg->confdir && macro_ctx_set_confdir(ctx, cfg->confdir, err))
		return err ? err->code : KILN_ENOMEM;
	if (cfg->rcfiles)
		kiln_buf_addstr(rcfiles, cfg->rcfiles);
	else if (cfg->confdir)
		macro_default_rcfiles(cfg->confdir, rcfiles);
	if (cfg->macrofiles)
		kiln_buf_addstr(macrofiles, cfg->macrofiles);
	else if (cfg->confdir)
		macro_default_macrofiles(cfg->confdir, macrofiles);
	if (kiln_buf_finish(rcfiles, err))
		return KILN_ENOMEM;
	return kiln_buf_finish(macrofiles, err);
}

static struct macro_rpmrc *rpmrc_new(void)
{
	struct macro_rpmrc *rc = kiln_calloc(1, sizeof(*rc));

	if (!rc)
		return NULL;
	atomic_init(&rc->refs, 1);
	kiln_arena_init(&rc->arena, 64 * KILN_MIB);
	return rc;
}

/* A private copy of from's tables. */
static struct macro_rpmrc *rpmrc_copy(const struct macro_rpmrc *from, struct kiln_err *err)
{
	struct macro_rpmrc *rc = rpmrc_new();
	struct kiln_arena *a;
	size_t i;

	if (!rc) {
		kiln_err_set(err, KILN_ENOMEM, "out of memory");
		return NULL;
	}
	a = &rc->arena;
	rc->entries = from->n ? kiln_arena_array(a, from->n, sizeof(*rc->entries)) : NULL;
	rc->n = rc->cap = from->n;
	rc->macrofiles = from->macrofiles ? kiln_arena_strdup(a, from->macrofiles) : NULL;
	memcpy(rc->host_arch, from->host_arch, sizeof(rc->host_arch));
	memcpy(rc->host_os, from->host_os, sizeof(rc->host_os));
	for (i = 0; rc->entries && i < from->n; i++) {
		rc->entries[i].table = kiln_arena_strdup(a, from->entries[i].table);
		rc->entries[i].key = kiln_arena_strdup(a, from->entries[i].key);
		rc->entries[i].value = kiln_arena_strdup(a, from->entries[i].value);
	}
	if ((from->n && !rc->entries) || kiln_arena_finish(a, err)) {
		if (err && !err->code)
			kiln_err_set(err, KILN_ENOMEM, "out of memory");
		macro_rpmrc_unref(rc);
		return NULL;
	}
	return rc;
}

/* Make ctx's tables its own before a load writes them. */
static kiln_rc rpmrc_own(struct macro_ctx *ctx, struct kiln_err *err)
{
	struct macro_rpmrc *rc;

	if (ctx->rpmrc && atomic_load(&ctx->rpmrc->refs) == 1)
		return KILN_OK;
	rc = ctx->rpmrc ? rpmrc_copy(ctx->rpmrc, err) : rpmrc_new();
	if (!rc)
		return err && err->code ? err->code
		                        : kiln_err_set(err, KILN_ENOMEM, "out of memory");
	macro_rpmrc_unref(ctx->rpmrc);
	ctx->rpmrc = rc;
	return KILN_OK;
}

/* optflags of the host arch become %optflags while the rpmrc files are read (rpm's
 * "macroize" options); the target's replace them at the end. */
static kiln_rc macroize_host(struct macro_ctx *ctx, struct kiln_err *err)
{
	const char *v = rc_lookup(ctx->rpmrc, "optflags", ctx->rpmrc->host_arch);

	if (!v)
		return KILN_OK;
	return macro_push(ctx, "optflags", 8, NULL, v, strlen(v), MACRO_LEVEL_RPMRC, 0, err);
}

kiln_rc macro_config_load(struct macro_ctx *ctx, const struct macro_config *cfg,
                          struct kiln_err *err)
{
	struct kiln_buf rcfiles = KILN_BUF_INIT(KILN_LIMIT_TEXT_FILE);
	struct kiln_buf macrofiles = KILN_BUF_INIT(KILN_LIMIT_TEXT_FILE);
	kiln_rc rc;

	rc = rpmrc_own(ctx, err);
	if (rc)
		return rc;
	rc = config_defaults(ctx, cfg, &rcfiles, &macrofiles, err);
	if (rc)
		goto out;
	host_machine(ctx->rpmrc);
	rc = rebuild_target_vars(ctx, cfg->target, err);
	if (!rc && rcfiles.len)
		rc = rc_read_list(ctx, rcfiles.ptr, err);
	if (rc)
		goto out;
	host_machine(ctx->rpmrc);
	rc = macroize_host(ctx, err);
	if (!rc && !cfg->macrofiles && ctx->rpmrc->macrofiles) {
		kiln_buf_reset(&macrofiles);
		kiln_buf_addstr(&macrofiles, ctx->rpmrc->macrofiles);
	}
	if (!rc && macrofiles.len)
		rc = macro_load_path(ctx, macrofiles.ptr, err);
	if (!rc)
		rc = rebuild_target_vars(ctx, cfg->target, err);
out:
	kiln_buf_release(&rcfiles);
	kiln_buf_release(&macrofiles);
	return rc;
}

/* ---------------------------------------------------------------------------------------- */
/* Build architecture compatibility (rpm's machine score for the buildarch table). */

static bool compat_reaches(const struct macro_rpmrc *rc, const char *from, const char *arch,
                           int depth)
{
	const char *v;
	char word[65];

	if (!strcmp(from, arch))
		return true;
	/* The tables are a short DAG; the bound only guards against a cycle in a bad rpmrc. */
	if (depth > 32 || !(v = rc_lookup(rc, "buildarch_compat", from)))
		return false;
	while (*v) {
		size_t n;

		v += strspn(v, " \t");
		n = strcspn(v, " \t");
		if (!n)
			break;
		copy_word(word, sizeof(word), v, n);
		if (compat_reaches(rc, word, arch, depth + 1))
			return true;
		v += n;
	}
	return false;
}

bool macro_arch_buildable(struct macro_ctx *ctx, const char *arch)
{
	struct macro_slot *slot;

	if (!strcmp(arch, "noarch"))
		return true;
	slot = macro_table_find(&ctx->table, "_target_cpu", strlen("_target_cpu"));
	if (slot && slot->top && !strcmp(slot->top->body, arch))
		return true;
	return ctx->rpmrc && compat_reaches(ctx->rpmrc, ctx->rpmrc->host_arch, arch, 0);
}

void macro_build_cpu(const struct macro_ctx *ctx, char *dst, size_t size)
{
	if (!ctx->rpmrc) {
		if (size)
			dst[0] = '\0';
		return;
	}
	canon_name(ctx->rpmrc, "arch_canon", ctx->rpmrc->host_arch, dst, size);
	lowercase(dst);
}

void macro_rpmrc_share(struct macro_ctx *dst, const struct macro_ctx *src)
{
	dst->rpmrc = src->rpmrc;
	if (dst->rpmrc)
		atomic_fetch_add(&dst->rpmrc->refs, 1);
}

void macro_rpmrc_unref(struct macro_rpmrc *rc)
{
	if (!rc || atomic_fetch_sub(&rc->refs, 1) != 1)
		return;
	kiln_arena_release(&rc->arena);
	free(rc);
}

kiln_rc macro_ctx_open_config(const struct macro_config *cfg, bool verbose, struct macro_ctx **out,
                              struct kiln_err *err)
{
	struct kiln_buf confdir = KILN_BUF_INIT(KILN_LIMIT_PATH);
	struct macro_config c = *cfg;
	struct macro_ctx *ctx = NULL;
	kiln_rc rc = KILN_OK;

	*out = NULL;
	if (!c.confdir) {
		rc = util_configdir_find(&confdir, err);
		c.confdir = confdir.ptr;
	}
	if (!rc && !(ctx = macro_ctx_new(err)))
		rc = err && err->code ? err->code : KILN_ENOMEM;
	if (!rc) {
		macro_ctx_set_verbose(ctx, verbose);
		rc = macro_config_load(ctx, &c, err);
	}
	kiln_buf_release(&confdir);
	if (rc)
		macro_ctx_free(ctx);
	else
		*out = ctx;
	return rc;
}
