/*
 * ctx.c - macro contexts: creation, settings, and the definition API.
 */
#include "util/util.h"

#include "macro/macro_int.h"

static void diag_default(void *data, enum kiln_log_level level, const char *msg)
{
	(void)data;
	if (level == KILN_LOG_INFO)
		printf("%s\n", msg);
	else if (level == KILN_LOG_DEBUG)
		fprintf(stderr, "%s\n", msg);
	else
		kiln_log(level, "%s", msg);
}

struct macro_ctx *macro_ctx_new(struct kiln_err *err)
{
	const struct macro_builtin *bi;
	struct macro_ctx *ctx;
	size_t n;
	size_t i;

	ctx = kiln_calloc(1, sizeof(*ctx));
	if (!ctx) {
		kiln_err_set(err, KILN_ENOMEM, "out of memory");
		return NULL;
	}
	ctx->diag = diag_default;
	ctx->shell = macro_shell_host;
	ctx->max_expansion = KILN_LIMIT_MACRO_EXPANSION;
	bi = macro_builtins_table(&n);
	for (i = 0; i < n; i++) {
		struct macro_slot *slot;

		if (macro_table_slot(&ctx->table, bi[i].name, strlen(bi[i].name), &slot, err)) {
			macro_ctx_free(ctx);
			return NULL;
		}
		slot->builtin = &bi[i];
	}
	return ctx;
}

struct macro_ctx *macro_ctx_dup(const struct macro_ctx *src, struct kiln_err *err)
{
	struct macro_ctx *ctx = kiln_calloc(1, sizeof(*ctx));

	if (!ctx) {
		kiln_err_set(err, KILN_ENOMEM, "out of memory");
		return NULL;
	}
	ctx->verbose = src->verbose;
	ctx->trace = src->trace;
	ctx->restricted = src->restricted;
	ctx->max_expansion = src->max_expansion;
	ctx->diag = src->diag;
	ctx->diag_data = src->diag_data;
	ctx->shell = src->shell;
	ctx->shell_data = src->shell_data;
	if (macro_table_copy(&ctx->table, &src->table, err))
		goto fail;
	macro_rpmrc_share(ctx, src);
	return ctx;
fail:
	macro_ctx_free(ctx);
	return NULL;
}

void macro_ctx_free(struct macro_ctx *ctx)
{
	if (!ctx)
		return;
	macro_lua_free(ctx->lua);
	macro_lua_arrays_free(ctx->lua_arrays);
	macro_graveyard_empty(ctx);
	macro_table_release(&ctx->table);
	macro_rpmrc_unref(ctx->rpmrc);
	free(ctx->scope);
	free(ctx->map_inside);
	free(ctx->map_host);
	free(ctx);
}

kiln_rc macro_ctx_set_path_map(struct macro_ctx *ctx, const char *inside, const char *host,
                               struct kiln_err *err)
{
	free(ctx->map_inside);
	free(ctx->map_host);
	ctx->map_inside = ctx->map_host = NULL;
	if (!inside || !host)
		return KILN_OK;
	ctx->map_inside = kiln_strdup(inside);
	ctx->map_host = kiln_strdup(host);
	if (!ctx->map_inside || !ctx->map_host)
		return kiln_err_set(err, KILN_ENOMEM, "out of memory");
	return KILN_OK;
}

const char *macro_path_host(const struct macro_ctx *ctx, const char *path, struct kiln_buf *scratch)
{
	size_t n;

	if (!ctx->map_inside || !path)
		return path;
	n = strlen(ctx->map_inside);
	if (strncmp(path, ctx->map_inside, n) != 0 || (path[n] != '/' && path[n] != '\0'))
		return path;
	kiln_buf_reset(scratch);
	kiln_buf_addstr(scratch, ctx->map_host);
	kiln_buf_addstr(scratch, path + n);
	return scratch->err ? path : scratch->ptr;
}

void macro_ctx_set_diag(struct macro_ctx *ctx, macro_diag_fn fn, void *data)
{
	ctx->diag = fn ? fn : diag_default;
	ctx->diag_data = data;
}

void macro_ctx_set_shell(struct macro_ctx *ctx, macro_shell_fn fn, void *data)
{
	ctx->shell = fn ? fn : macro_shell_host;
	ctx->shell_data = data;
}

void macro_ctx_set_restricted(struct macro_ctx *ctx, bool restricted)
{
	ctx->restricted = restricted;
}

void macro_ctx_set_limit(struct macro_ctx *ctx, size_t max_expansion)
{
	ctx->max_expansion = max_expansion ? max_expansion : KILN_LIMIT_MACRO_EXPANSION;
}

void macro_ctx_set_verbose(struct macro_ctx *ctx, bool verbose)
{
	ctx->verbose = verbose;
}

kiln_rc macro_ctx_set_confdir(struct macro_ctx *ctx, const char *dir, struct kiln_err *err)
{
	return macro_define(ctx, "_kiln_confdir", NULL, dir, MACRO_LEVEL_DEFAULT, err);
}

kiln_rc macro_define(struct macro_ctx *ctx, const char *name, const char *opts, const char *body,
                     int level, struct kiln_err *err)
{
	size_t len = strlen(name);
	struct macro_slot *slot;

	if (!macro_name_valid(name, len))
		return kiln_err_set(err, KILN_ESYNTAX, "Macro %%%s has illegal name", name);
	slot = macro_table_find(&ctx->table, name, len);
	if (slot && slot->builtin)
		return kiln_err_set(err, KILN_EPRIV, "Macro %%%s is a built-in", name);
	return macro_push(ctx, name, len, opts, body, strlen(body), level, 0, err);
}

kiln_rc macro_define_line(struct macro_ctx *ctx, const char *line, int level, struct kiln_err *err)
{
	struct kiln_err local = KILN_ERR_INIT;
	struct mbuf mb = {
	    .ctx = ctx, .err = err ? err : &local, .trace = ctx->trace, .depth0 = ctx->trace_base};
	struct kiln_buf sink = KILN_BUF_INIT(ctx->max_expansion);

	mb.out = &sink;
	ctx->active++;
	macro_parse_define(&mb, line, strlen(line), level, false, "%define");
	ctx->active--;
	if (!ctx->active)
		macro_graveyard_empty(ctx);
	kiln_buf_release(&sink);
	return mb.error ? (mb.err->code ? mb.err->code : KILN_ESYNTAX) : KILN_OK;
}

kiln_rc macro_undefine(struct macro_ctx *ctx, const char *name, struct kiln_err *err)
{
	struct macro_slot *slot = macro_table_find(&ctx->table, name, strlen(name));

	if (!slot)
		return KILN_OK;
	if (slot->builtin)
		return kiln_err_set(err, KILN_EPRIV, "Macro %%%s is a built-in (%%undefine)", name);
	macro_pop(ctx, slot);
	if (!ctx->active)
		macro_graveyard_empty(ctx);
	return KILN_OK;
}

bool macro_is_defined(const struct macro_ctx *ctx, const char *name)
{
	struct macro_slot *slot = macro_table_find(&ctx->table, name, strlen(name));

	return slot && (slot->top || slot->builtin);
}

const char *macro_body_get(const struct macro_ctx *ctx, const char *name)
{
	struct macro_slot *slot = macro_table_find(&ctx->table, name, strlen(name));

	return slot && slot->top ? slot->top->body : NULL;
}
